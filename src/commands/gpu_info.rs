//! `wavepath gpu-info`: the embedded PTX, the GPUs (by the ordinals
//! `--devices` takes), and every kernel's registers, local memory and
//! occupancy on GPU 0, bound to every feature (the most a kernel holds; a
//! render binds only what its scene uses, and `kernels.csv` records what
//! each run's kernels took).

use super::outln;
use device::features::Features;
use device::kernels::all_entry_points;
use renderer::backend::gpu::Gpu;
use renderer::system::ptx;
use std::process::ExitCode;

/// Block sizes at which each kernel's occupancy is shown.
const SHOWN_BLOCKS: [u32; 3] = [64, 128, 256];

/// Describes the PTX modules, the GPUs and GPU 0's kernels.
pub fn run() -> anyhow::Result<ExitCode> {
    for (arch, text) in ptx::PTX_MODULES {
        outln!("embedded PTX: sm_{arch} ({} bytes)", text.len());
    }
    if ptx::PTX_MODULES.is_empty() {
        outln!("embedded PTX: none (built with WAVEPATH_CUDA_ARCHS=none)");
    }
    let gpu = Gpu::open(0)?;
    outln!("GPU: {}", gpu.info().describe());
    let gpu = gpu.with_features(Features::ALL);
    for ordinal in 1..Gpu::count()? {
        outln!("GPU {ordinal}: {}", Gpu::open(ordinal)?.info().describe());
    }
    outln!("kernels bound to every feature ({}):", Features::ALL);
    for (name, threads) in all_entry_points().flat_map(|n| SHOWN_BLOCKS.map(|t| (n, t))) {
        let f = gpu.function(name)?;
        let k = gpu.kernel_info(name, &f, threads)?;
        let test_only = if device::kernels::fault::ENTRY_POINTS.contains(&name) {
            " (test only: traps on purpose)"
        } else {
            ""
        };
        outln!(
            "{}{test_only}: {} registers, {} B local, {} threads/block -> {} blocks/SM, occupancy {:.0}%",
            k.name,
            k.registers,
            k.local_bytes,
            threads,
            k.blocks_per_multiprocessor,
            100.0 * k.occupancy
        );
    }
    Ok(ExitCode::SUCCESS)
}
