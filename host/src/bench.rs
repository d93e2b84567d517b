//! `wavepath bench`: one back end over launch configurations and
//! repetitions, one CSV row per timed render, with the metadata a reader
//! needs to reproduce it. Every configuration must produce the same film
//! (the launch shape may change speed, never the image); a run that does not
//! is an error.

use crate::backend::gpu::megakernel::MegakernelConfig;
use crate::backend::{BackendKind, BackendOptions};
use crate::provenance;
use crate::render::{Overrides, Renderer, load_scene, params_for};
use anyhow::bail;
use device::film::FixedRgb;
use device::scene::RenderView;
use serde::Serialize;
use std::path::PathBuf;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchPlan {
    /// The scene file.
    pub scene: PathBuf,
    /// Settings replacing the file's.
    pub overrides: Overrides,
    /// The back end.
    pub backend: BackendKind,
    /// Megakernel block shapes.
    pub blocks: Vec<(u32, u32)>,
    /// Megakernel samples per launch.
    pub samples_per_launch: Vec<u32>,
    /// Megakernel tile.
    pub tile: Option<(u32, u32)>,
    /// Timed repetitions per configuration.
    pub repeat: u32,
    /// Untimed renders first.
    pub warmup: u32,
    /// CPU threads.
    pub threads: usize,
}

/// One timed render.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    /// Scene file.
    pub scene: String,
    /// Back end.
    pub backend: String,
    /// Block shape, e.g. "16x16" (empty for CPU back ends).
    pub block: String,
    /// Samples per launch (0 for CPU back ends).
    pub samples_per_launch: u32,
    /// Tile, e.g. "512x512", or "full".
    pub tile: String,
    /// Acceleration structure.
    pub accel: String,
    /// Its build time, ms.
    pub accel_build_ms: f64,
    /// Its nodes and references, bytes.
    pub accel_bytes: usize,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Samples per pixel.
    pub spp: u32,
    /// Maximum depth.
    pub max_depth: u32,
    /// Seed.
    pub seed: u32,
    /// Repetition number from 0.
    pub repetition: u32,
    /// Render wall time (launch loop for GPUs), ms.
    pub wall_ms: f64,
    /// Sum of kernel event times, ms (GPU).
    pub kernel_ms: f64,
    /// Scene upload, ms (GPU).
    pub upload_ms: f64,
    /// Film readback, ms (GPU).
    pub readback_ms: f64,
    /// Launches.
    pub launches: usize,
    /// Ray segments traced.
    pub rays: u64,
    /// Rays per second over the wall time.
    pub rays_per_s: f64,
    /// Pixel-samples per second over the wall time.
    pub samples_per_s: f64,
    /// Registers per thread (GPU).
    pub registers: u32,
    /// Local memory per thread, bytes (GPU).
    pub local_bytes: u32,
    /// Theoretical occupancy (GPU).
    pub occupancy: f64,
    /// The device.
    pub device: String,
    /// The host CPU.
    pub cpu: String,
    /// wavepath commit.
    pub commit: String,
    /// When it ran (UTC, RFC 3339).
    pub date: String,
}

fn size_label(s: Option<(u32, u32)>) -> String {
    s.map_or("full".into(), |(w, h)| format!("{w}x{h}"))
}

/// Runs the plan; returns every row after checking all films agree.
pub fn run(plan: &BenchPlan, mut on_row: impl FnMut(&BenchRow)) -> anyhow::Result<Vec<BenchRow>> {
    let scene = load_scene(&plan.scene, &plan.overrides)?;
    let (params, spp) = params_for(&scene, &plan.overrides, RenderView::Radiance);
    let configs: Vec<MegakernelConfig> = if plan.backend.is_gpu() {
        let mut v = Vec::new();
        for &block in &plan.blocks {
            for &samples_per_launch in &plan.samples_per_launch {
                v.push(MegakernelConfig {
                    block,
                    tile: plan.tile,
                    samples_per_launch,
                });
            }
        }
        v
    } else {
        vec![MegakernelConfig::default()]
    };
    let meta = provenance::Provenance::collect();
    let mut reference: Option<Vec<FixedRgb>> = None;
    let mut rows = Vec::new();
    for config in configs {
        config.validate().map_err(anyhow::Error::msg)?;
        let renderer = Renderer::new(
            plan.backend,
            BackendOptions {
                threads: plan.threads,
                megakernel: config,
            },
        )?;
        for _ in 0..plan.warmup {
            renderer.render(&scene, params, spp, &|_| {})?;
        }
        for repetition in 0..plan.repeat {
            let out = renderer.render(&scene, params, spp, &|_| {})?;
            match &reference {
                None => reference = Some(out.film.clone()),
                Some(r) if *r != out.film => bail!(
                    "{}: block {:?}, {} samples per launch rendered a different image than the first configuration",
                    plan.scene.display(),
                    config.block,
                    config.samples_per_launch
                ),
                Some(_) => {}
            }
            let wall_s = out.elapsed.as_secs_f64();
            let gpu = out.gpu.as_ref();
            let kernel = gpu.and_then(|g| g.kernels.first());
            let row = BenchRow {
                scene: plan.scene.display().to_string(),
                backend: plan.backend.label().into(),
                block: if plan.backend.is_gpu() {
                    format!("{}x{}", config.block.0, config.block.1)
                } else {
                    String::new()
                },
                samples_per_launch: if plan.backend.is_gpu() {
                    config.samples_per_launch
                } else {
                    0
                },
                tile: size_label(config.tile),
                accel: scene.accel_settings.choice.label().into(),
                accel_build_ms: scene.accel.stats.build_ms,
                accel_bytes: scene.accel.stats.bytes,
                width: params.width,
                height: params.height,
                spp,
                max_depth: params.max_depth,
                seed: params.seed,
                repetition,
                wall_ms: wall_s * 1e3,
                kernel_ms: gpu.map_or(0.0, |g| g.kernel_ms()),
                upload_ms: gpu.map_or(0.0, |g| g.upload_ms),
                readback_ms: gpu.map_or(0.0, |g| g.readback_ms),
                launches: gpu.map_or(0, |g| g.launches.len()),
                rays: out.rays,
                rays_per_s: out.rays as f64 / wall_s,
                samples_per_s: params.width as f64 * params.height as f64 * spp as f64 / wall_s,
                registers: kernel.map_or(0, |k| k.registers),
                local_bytes: kernel.map_or(0, |k| k.local_bytes),
                occupancy: kernel.map_or(0.0, |k| k.occupancy),
                device: gpu.map_or(out.device.clone(), |g| g.device.describe()),
                cpu: meta.cpu.clone(),
                commit: meta.commit.clone(),
                date: meta.date.clone(),
            };
            on_row(&row);
            rows.push(row);
        }
    }
    Ok(rows)
}

/// The median of the wall times of each configuration, as a printed table.
pub fn summary(rows: &[BenchRow]) -> String {
    use std::fmt::Write as _;
    let mut s = format!(
        "{:<10} {:>7} {:>6} {:>11} {:>11} {:>11} {:>12} {:>5} {:>6}\n",
        "block", "spl", "runs", "median ms", "min ms", "kernel ms", "Mrays/s", "regs", "occ"
    );
    let mut keys: Vec<(String, u32)> = rows.iter().map(|r| (r.block.clone(), r.samples_per_launch)).collect();
    keys.dedup();
    for (block, spl) in keys {
        let group: Vec<&BenchRow> = rows
            .iter()
            .filter(|r| r.block == block && r.samples_per_launch == spl)
            .collect();
        let mut walls: Vec<f64> = group.iter().map(|r| r.wall_ms).collect();
        walls.sort_by(f64::total_cmp);
        let mut kernels: Vec<f64> = group.iter().map(|r| r.kernel_ms).collect();
        kernels.sort_by(f64::total_cmp);
        let median = walls[walls.len() / 2];
        let r = group[0];
        let _ = writeln!(
            s,
            "{:<10} {:>7} {:>6} {:>11.3} {:>11.3} {:>11.3} {:>12.1} {:>5} {:>5.0}%",
            if block.is_empty() { "-" } else { &block },
            spl,
            group.len(),
            median,
            walls[0],
            kernels[kernels.len() / 2],
            r.rays as f64 / median / 1e3,
            r.registers,
            100.0 * r.occupancy
        );
    }
    s
}
