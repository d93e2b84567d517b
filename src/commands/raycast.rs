//! `wavepath raycast`: traversal alone, timed per block size on the GPU.

use super::outln;
use crate::cli::{RaycastArgs, SceneArgs};
use anyhow::Context;
use device::scene::RenderView;
use renderer::backend::gpu::Gpu;
use renderer::io::atomic_file::{self, Output};
use renderer::io::csv;
use renderer::render::{self, ray_throughput};
use renderer::system::memory;
use std::process::ExitCode;

/// Makes the rays on the CPU, casts them on the GPU, prints one line per
/// block size and writes the CSV.
pub fn run(args: &RaycastArgs) -> anyhow::Result<ExitCode> {
    refuse_unused(&args.scene)?;
    let gpu = Gpu::open(0).context("raycast times the GPU kernel; it needs a GPU")?;
    let overrides = args.scene.overrides();
    let scene = render::load_scene(&args.scene.scene, &overrides)?;
    let outputs: Vec<Output> = args.csv.iter().map(|p| Output::new(p, "the raycast CSV")).collect();
    atomic_file::check_outputs(&outputs, &scene.scene.files)?;
    memory::check_available(
        &format!("{} rays", args.count),
        ray_throughput::host_bytes(args.count),
        "cast fewer rays (--count)",
    )?;
    let (params, _) = render::params_for(&scene.scene, &overrides, RenderView::Radiance);
    let rays = ray_throughput::make_rays(&scene, &params, args.rays, args.count as usize);
    let rows = ray_throughput::gpu_rows(crate::BUILD, &gpu, &scene, args.rays, &rays, &args.blocks, args.repeat)?;
    for r in &rows {
        outln!(
            "{} {} {:?} rays, block {}: {:.3} ms, {:.3} G rays/s ({} regs, {} B local, occupancy {:.0}%)",
            r.scene,
            r.accel,
            r.rays,
            r.block,
            r.kernel_ms,
            r.rays_per_s / 1e9,
            r.registers,
            r.local_bytes,
            100.0 * r.occupancy
        );
    }
    if let Some(path) = &args.csv {
        csv::write_csv(path, &rows).with_context(|| format!("{}: writing the raycast CSV", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses the scene flags that do not shape the rays raycast casts.
fn refuse_unused(scene: &SceneArgs) -> anyhow::Result<()> {
    let unused = [
        (
            scene.spp.is_some(),
            "--spp",
            "raycast casts --count rays, however many samples per pixel they take",
        ),
        (
            scene.nee.is_some(),
            "--nee",
            "raycast casts camera or bounce rays, which next-event estimation leaves as they are",
        ),
    ];
    match unused.into_iter().find(|(given, ..)| *given) {
        Some((_, flag, why)) => anyhow::bail!("{flag}: {why}; leave {flag} out"),
        None => Ok(()),
    }
}
