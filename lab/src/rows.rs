//! From a finished render to its records: the `runs.csv` row with every
//! effective setting, the per-kernel rows, and the figures the manifest sums
//! up (the driver, the runner's overhead).

use super::config::{PlannedRun, Study, scene_stem};
use super::params::{RunSpec, Value, describe};
use super::records::{KernelRow, Overhead, RenderParts, RunRow};
use super::scenes::describe_fields;
use renderer::backend::gpu::Gpu;
use renderer::backend::gpu::profile::GpuProfile;
use renderer::backend::{BackendKind, RenderOutput};
use renderer::settings::devices::SplitRule;
use renderer::settings::nee::NeeMode;
use renderer::settings::sampler::SamplerKind;
use renderer::settings::wave_config::{WaveSchedule, compaction_label, material_sort_label};
use renderer::system::provenance::{Provenance, now};

/// Where rows come from: the experiment, the build and host, the GPU.
#[derive(Clone, Copy)]
pub struct Origin<'a> {
    /// The experiment's name.
    pub experiment: &'a str,
    /// Build, host and clock.
    pub meta: &'a Provenance,
    /// The session's GPU, if one opened (with several, the one the rows'
    /// GPU runs render on).
    pub gpu: Option<&'a Gpu>,
}

/// The runner's time per GPU row against the render call's.
pub fn overhead(rows: &[RunRow]) -> Option<Overhead> {
    let mut f: Vec<f64> = rows
        .iter()
        .filter(|r| r.backend.starts_with("gpu") && r.total_ms > 0.0)
        .map(|r| r.runner_ms / r.total_ms)
        .collect();
    if f.is_empty() {
        return None;
    }
    f.sort_by(f64::total_cmp);
    Some(Overhead {
        gpu_rows: f.len(),
        median_fraction: f[f.len() / 2],
        max_fraction: f[f.len() - 1],
    })
}

/// The driver: the kernel module's version where Linux shows it (as
/// `nvidia-smi` prints it), and the CUDA version the driver supports.
pub fn driver(gpu: &Gpu) -> String {
    let (major, minor) = gpu.info().driver_version;
    let module = std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|t| kernel_module_version(&t));
    match module {
        Some(v) => format!("{v} (CUDA {major}.{minor})"),
        None => format!("CUDA {major}.{minor}"),
    }
}

/// The version in the first line of `/proc/driver/nvidia/version`, e.g.
/// `580.159.04` from `NVRM version: NVIDIA UNIX Open Kernel Module for x86_64
/// 580.159.04  Release Build ...`: the first word after `Module` made of
/// digits and dots.
fn kernel_module_version(text: &str) -> Option<String> {
    let line = text.lines().next()?;
    let after = &line[line.find("Module")?..];
    after
        .split_whitespace()
        .find(|w| w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(String::from)
}

/// The row of one timed render: what ran, with which settings, how long it
/// took, and where.
pub fn run_row(origin: &Origin, r: &Rendered, out: &RenderOutput) -> RunRow {
    let spec = &r.run.spec;
    let accel = &r.scene.accel_settings;
    let row = RunRow {
        experiment: origin.experiment.to_string(),
        study: r.study.name.clone(),
        run: r.run.index,
        config: r.run.label.clone(),
        config_key: r.run.key.clone(),
        repetition: r.repetition,
        scene: spec.scene.display().to_string(),
        scene_name: scene_stem(&spec.scene),
        scene_overrides: describe_fields(&spec.scene_fields),
        primitives: r.scene.scene.geometry.primitive_count() as u64,
        backend: spec.backend.label().into(),
        width: r.params.width,
        height: r.params.height,
        spp: r.spp,
        max_depth: r.params.max_depth,
        seed: r.params.seed,
        sampler: SamplerKind::from(r.params.sampler).name().into(),
        nee: NeeMode::from(r.params.nee).name().into(),
        report_spp: r.report_spp,
        accel: accel.choice.label_built(r.scene.accel.kind),
        accel_settings: match r.scene.accel.kind {
            device::accel::AccelKind::None => String::new(),
            device::accel::AccelKind::Bvh | device::accel::AccelKind::Bvh8 => format!("{:?}", accel.bvh),
            device::accel::AccelKind::KdTree => format!("{:?}", accel.kd),
        },
        accel_build_ms: r.scene.accel.stats.build_ms,
        accel_nodes: r.scene.accel.stats.nodes,
        accel_bytes: r.scene.accel.stats.bytes,
        // A run over several GPUs has no one ordinal: `device` names them.
        gpu_ordinal: origin
            .gpu
            .filter(|_| spec.backend.is_gpu() && spec.gpus == 1)
            .map(|g| g.info().ordinal),
        gpus: spec.backend.is_gpu().then_some(spec.gpus),
        split_all: (spec.backend.is_gpu() && spec.gpus > 1).then_some(spec.options.split == SplitRule::Every),
        ..RunRow::default()
    };
    with_origin(origin, out, with_measures(r, out, with_settings(&r.run.spec, row)))
}

/// `row` with the back end's settings, each empty where the back end has no
/// such setting.
fn with_settings(spec: &RunSpec, row: RunRow) -> RunRow {
    let (mega, wave) = (&spec.options.megakernel, &spec.options.wavefront);
    let is = |b: BackendKind| spec.backend == b;
    let waves = spec.backend.is_wavefront();
    RunRow {
        block: is(BackendKind::GpuMega).then(|| describe(&Value::Size(mega.block))),
        samples_per_launch: is(BackendKind::GpuMega).then_some(mega.samples_per_launch),
        tile: is(BackendKind::GpuMega).then(|| describe(&Value::Tile(mega.tile))),
        schedule: waves.then(|| wave.schedule.label().into()),
        refill: (waves && wave.schedule == WaveSchedule::Regenerate).then_some(wave.refill_fraction()),
        compaction: waves.then(|| compaction_label(wave.compaction).into()),
        material_sort: waves.then(|| material_sort_label(wave.material_sort).into()),
        capacity: waves.then(|| wave.capacity.label()),
        wave_block: waves.then_some(wave.block),
        drain_below: waves.then_some(wave.drain_below),
        threads: match spec.backend {
            BackendKind::CpuSerial => Some(1),
            BackendKind::Cpu => Some(renderer::backend::cpu::Threads::Pool(spec.options.threads).count()),
            _ => None,
        },
        cpu_schedule: is(BackendKind::Cpu).then(|| spec.options.cpu_schedule.label().into()),
        max_registers: match spec.backend {
            BackendKind::GpuMega => mega.max_registers,
            BackendKind::GpuWave => wave.max_registers,
            _ => None,
        },
        kernels: match spec.backend {
            BackendKind::GpuMega => Some(mega.kernels.to_string()),
            b if b.is_wavefront() => Some(wave.kernels.to_string()),
            _ => None,
        },
        arithmetic: match spec.backend {
            BackendKind::GpuMega => Some(mega.arithmetic.name().into()),
            BackendKind::GpuWave => Some(wave.arithmetic.name().into()),
            _ => None,
        },
        count_divergence: spec.backend.is_gpu() && (mega.count_divergence || wave.count_divergence),
        time_launches: is(BackendKind::GpuWave).then_some(wave.time_launches),
        ..row
    }
}

/// `row` with the render's times, counts and GPU profile figures.
fn with_measures(r: &Rendered, out: &RenderOutput, row: RunRow) -> RunRow {
    let waves = r.run.spec.backend.is_wavefront();
    let gpu = out.gpu.as_ref();
    // The tracing kernel: the megakernel, or the wavefront's extend.
    let kernel = gpu.and_then(|g| {
        g.kernels
            .iter()
            .find(|k| k.name.contains("mega") || k.name.contains("extend"))
    });
    let wall_ms = out.elapsed.as_secs_f64() * 1e3;
    let wall_s = out.elapsed.as_secs_f64().max(1e-9);
    RunRow {
        wall_ms,
        scaled_wall_ms: wall_ms * r.report_spp as f64 / r.spp as f64,
        kernel_ms: gpu.map_or(0.0, |g| g.kernel_ms()),
        overhead_ms: gpu.map_or(0.0, |g| g.overhead_ms()),
        upload_ms: gpu.map_or(0.0, |g| g.upload_ms),
        readback_ms: gpu.map_or(0.0, |g| g.readback_ms),
        total_ms: r.total_ms,
        parts: RenderParts(r.parts),
        launches: gpu.map_or(0, |g| g.launches.len()),
        rays: out.rays,
        rays_per_s: out.rays as f64 / wall_s,
        samples_per_s: r.params.width as f64 * r.params.height as f64 * r.spp as f64 / wall_s,
        registers: kernel.map(|k| k.registers),
        local_bytes: kernel.map(|k| k.local_bytes),
        occupancy: kernel.map(|k| k.occupancy),
        state_bytes: gpu.filter(|_| waves).map(|g| g.state_bytes),
        pool_capacity: gpu.filter(|_| waves).map(|g| g.pool_capacity),
        invalid_samples: out.invalid_samples,
        ..row
    }
}

/// `row` with what rendered it: the device, the GPU, the host and the build.
fn with_origin(origin: &Origin, out: &RenderOutput, row: RunRow) -> RunRow {
    let info = origin.gpu.map(|g| g.info());
    RunRow {
        device: out.device.clone(),
        gpu: info.map_or_else(String::new, |i| i.name.clone()),
        driver: origin.gpu.map_or_else(String::new, driver),
        compute_capability: info.map_or_else(String::new, |i| {
            format!("{}.{}", i.compute_capability.0, i.compute_capability.1)
        }),
        cpu: origin.meta.cpu_model.clone(),
        cpu_threads: origin.meta.cpu_threads,
        version: origin.meta.version.clone(),
        commit: origin.meta.commit_hash().to_string(),
        dirty: origin.meta.dirty(),
        date: now(),
        ..row
    }
}

/// One timed render, for its row.
pub struct Rendered<'a> {
    /// The study.
    pub study: &'a Study,
    /// The configuration.
    pub run: &'a PlannedRun,
    /// Repetition from 0.
    pub repetition: u32,
    /// The scene as loaded, with its structure.
    pub scene: &'a renderer::prepared::PreparedScene,
    /// Size, depth and seed.
    pub params: device::scene::RenderParams,
    /// Samples per pixel rendered.
    pub spp: u32,
    /// Samples per pixel asked for (the time is scaled to these).
    pub report_spp: u32,
    /// The whole render call, ms (the parts' sum).
    pub total_ms: f64,
    /// The processes whose renders make it up (1 unless a stop cut it and
    /// `--resume` finished it).
    pub parts: u32,
}

/// The per-kernel rows of a GPU render.
pub fn kernel_rows(row: &RunRow, profile: Option<&GpuProfile>) -> Vec<KernelRow> {
    // Untimed launches have no per-kernel times to report.
    let profile = profile.filter(|p| p.launches.iter().all(|l| !l.ms.is_nan()));
    let Some(p) = profile else { return Vec::new() };
    p.totals()
        .into_iter()
        .map(|t| {
            let info = p.kernels.iter().find(|k| k.name == t.kernel);
            let lanes = p
                .divergence
                .iter()
                .find(|(k, _)| *k == t.kernel)
                .map(|(_, d)| d.average_lanes());
            KernelRow {
                experiment: row.experiment.clone(),
                study: row.study.clone(),
                run: row.run,
                config: row.config.clone(),
                repetition: row.repetition,
                backend: row.backend.clone(),
                scene_name: row.scene_name.clone(),
                mean_ms: t.total_ms / t.launches as f64,
                items_per_s: t.items as f64 / (t.total_ms / 1e3).max(1e-12),
                kernel: t.kernel.into(),
                launches: t.launches,
                total_ms: t.total_ms,
                min_ms: t.min_ms,
                max_ms: t.max_ms,
                items: t.items,
                registers: info.map(|k| k.registers),
                local_bytes: info.map(|k| k.local_bytes),
                occupancy: info.map(|k| k.occupancy),
                active_lanes: lanes,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_version_is_read_from_the_kernel_module_line() {
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jul 10 2025\nGCC version:  gcc version 12.2.0\n";
        assert_eq!(kernel_module_version(open).as_deref(), Some("580.159.04"));
        let closed = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.54.03  Tue Jun  6 22:20:39 UTC 2023\n";
        assert_eq!(kernel_module_version(closed).as_deref(), Some("535.54.03"));
        assert_eq!(kernel_module_version("no driver here"), None);
    }

    #[test]
    fn the_overhead_is_taken_over_gpu_rows_only() {
        let row = |backend: &str, runner_ms, total_ms| RunRow {
            backend: backend.into(),
            runner_ms,
            total_ms,
            ..RunRow::default()
        };
        assert!(overhead(&[row("cpu", 5.0, 10.0)]).is_none());
        let o = overhead(&[
            row("cpu", 5.0, 10.0),
            row("gpu-mega", 0.1, 100.0),
            row("gpu-wave", 1.0, 100.0),
            row("gpu-wave", 0.2, 100.0),
        ])
        .unwrap();
        assert_eq!(o.gpu_rows, 3);
        assert_eq!((o.median_fraction, o.max_fraction), (0.002, 0.01));
    }
}
