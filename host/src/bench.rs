//! `wavepath bench`: back ends over launch configurations and repetitions,
//! in one run, one CSV row per timed render with the metadata a reader needs
//! to reproduce it. Every configuration of every back end must produce the
//! same film (a schedule may change speed, never the image); a run that does
//! not is an error. The summary gives medians per configuration, the best
//! configuration of each back end, their speedup, and the per-kernel profile
//! of each best.

use crate::backend::gpu::megakernel::MegakernelConfig;
use crate::backend::gpu::profile::GpuProfile;
use crate::backend::gpu::wavefront::{Capacity, Schedule, WavefrontConfig};
use crate::backend::{BackendKind, BackendOptions};
use crate::provenance;
use crate::render::{Overrides, Renderer, load_scene, params_for};
use anyhow::bail;
use device::film::FixedRgb;
use device::launch::Compaction;
use device::scene::RenderView;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The megakernel configurations to try.
#[derive(Clone, Debug, PartialEq)]
pub struct MegaSweep {
    /// Block shapes.
    pub blocks: Vec<(u32, u32)>,
    /// Samples per launch.
    pub samples_per_launch: Vec<u32>,
    /// Tile (all configurations).
    pub tile: Option<(u32, u32)>,
}

/// The wavefront configurations to try.
#[derive(Clone, Debug, PartialEq)]
pub struct WaveSweep {
    /// Schedules.
    pub schedules: Vec<Schedule>,
    /// Compaction modes.
    pub compactions: Vec<Compaction>,
    /// Pool capacities.
    pub capacities: Vec<Capacity>,
    /// Threads per block.
    pub blocks: Vec<u32>,
    /// Tail-drain thresholds.
    pub drains: Vec<u32>,
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchPlan {
    /// The scene file.
    pub scene: PathBuf,
    /// Settings replacing the file's.
    pub overrides: Overrides,
    /// Back ends, measured in this order.
    pub backends: Vec<BackendKind>,
    /// Megakernel sweep.
    pub mega: MegaSweep,
    /// Wavefront sweep.
    pub wave: WaveSweep,
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
    /// The configuration, e.g. "8x8/spl16" or "regenerate/atomic-append/2^21/128".
    pub config: String,
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
    /// Render wall time (the launch loop for GPUs), ms.
    pub wall_ms: f64,
    /// Sum of kernel event times, ms (GPU).
    pub kernel_ms: f64,
    /// Loop time outside kernels: launch gaps and host synchronisation, ms (GPU).
    pub overhead_ms: f64,
    /// Scene upload and state allocation, ms (GPU).
    pub upload_ms: f64,
    /// Film readback, ms (GPU).
    pub readback_ms: f64,
    /// Kernel launches.
    pub launches: usize,
    /// Ray segments traced.
    pub rays: u64,
    /// Rays per second over the wall time.
    pub rays_per_s: f64,
    /// Pixel-samples per second over the wall time.
    pub samples_per_s: f64,
    /// Path state and queue bytes (wavefront).
    pub state_bytes: usize,
    /// Registers per thread of the tracing kernel (megakernel, or extend).
    pub registers: u32,
    /// Its local memory per thread, bytes.
    pub local_bytes: u32,
    /// Its theoretical occupancy.
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

/// Every combination of `configs` with one of `values` (set by `set`),
/// existing configurations outermost.
fn expand<C: Copy, V>(configs: Vec<C>, values: &[V], set: impl Fn(C, &V) -> C) -> Vec<C> {
    configs
        .into_iter()
        .flat_map(|c| values.iter().map(|v| set(c, v)).collect::<Vec<_>>())
        .collect()
}

impl MegaSweep {
    /// The megakernel configurations of the sweep.
    pub fn configs(&self) -> Vec<MegakernelConfig> {
        let base = vec![MegakernelConfig {
            tile: self.tile,
            count_divergence: false,
            ..MegakernelConfig::default()
        }];
        let c = expand(base, &self.blocks, |c, &block| MegakernelConfig { block, ..c });
        expand(c, &self.samples_per_launch, |c, &samples_per_launch| MegakernelConfig {
            samples_per_launch,
            ..c
        })
    }
}

impl WaveSweep {
    /// The wavefront configurations of the sweep.
    pub fn configs(&self) -> Vec<WavefrontConfig> {
        let base = vec![WavefrontConfig {
            count_divergence: false,
            ..WavefrontConfig::default()
        }];
        let c = expand(base, &self.schedules, |c, &schedule| WavefrontConfig { schedule, ..c });
        let c = expand(c, &self.compactions, |c, &compaction| WavefrontConfig {
            compaction,
            ..c
        });
        let c = expand(c, &self.capacities, |c, &capacity| WavefrontConfig { capacity, ..c });
        let c = expand(c, &self.blocks, |c, &block| WavefrontConfig { block, ..c });
        expand(c, &self.drains, |c, &drain_below| WavefrontConfig { drain_below, ..c })
    }
}

/// Every (back end, options, label) the plan asks for.
fn configurations(plan: &BenchPlan) -> Vec<(BackendKind, BackendOptions, String)> {
    let base = BackendOptions {
        threads: plan.threads,
        ..BackendOptions::default()
    };
    let mut out = Vec::new();
    for &kind in &plan.backends {
        match kind {
            BackendKind::Cpu | BackendKind::CpuSerial => out.push((kind, base, String::from("-"))),
            BackendKind::GpuMega => out.extend(
                plan.mega
                    .configs()
                    .into_iter()
                    .map(|m| (kind, BackendOptions { megakernel: m, ..base }, m.label())),
            ),
            BackendKind::GpuWave => out.extend(
                plan.wave
                    .configs()
                    .into_iter()
                    .map(|w| (kind, BackendOptions { wavefront: w, ..base }, w.label())),
            ),
        }
    }
    out
}

/// The outcome: every row, and the last profile of each configuration.
pub struct BenchResult {
    /// One per timed render.
    pub rows: Vec<BenchRow>,
    /// (back end, configuration, profile of its last repetition).
    pub profiles: Vec<(String, String, GpuProfile)>,
}

/// Runs the plan; every configuration's film must equal the first's.
pub fn run(plan: &BenchPlan, mut on_row: impl FnMut(&BenchRow)) -> anyhow::Result<BenchResult> {
    let scene = load_scene(&plan.scene, &plan.overrides)?;
    let (params, spp) = params_for(&scene, &plan.overrides, RenderView::Radiance);
    let meta = provenance::Provenance::collect();
    let mut reference: Option<(Vec<FixedRgb>, String)> = None;
    let mut result = BenchResult {
        rows: Vec::new(),
        profiles: Vec::new(),
    };
    for (kind, options, label) in configurations(plan) {
        options.megakernel.validate().map_err(anyhow::Error::msg)?;
        options.wavefront.validate().map_err(anyhow::Error::msg)?;
        let renderer = Renderer::new(kind, options)?;
        for _ in 0..plan.warmup {
            renderer.render(&scene, params, spp, &|_| {})?;
        }
        let mut last_profile = None;
        for repetition in 0..plan.repeat {
            let out = renderer.render(&scene, params, spp, &|_| {})?;
            let who = format!("{} {label}", kind.label());
            match &reference {
                None => reference = Some((out.film.clone(), who)),
                Some((film, first)) if *film != out.film => bail!(
                    "{}: {who} rendered a different image than {first}: the back ends disagree",
                    plan.scene.display()
                ),
                Some(_) => {}
            }
            let wall_s = out.elapsed.as_secs_f64();
            let gpu = out.gpu.as_ref();
            // The tracing kernel: the megakernel, or the wavefront's extend.
            let kernel = gpu.and_then(|g| {
                g.kernels
                    .iter()
                    .find(|k| k.name.contains("mega") || k.name.contains("extend"))
            });
            let row = BenchRow {
                scene: plan.scene.display().to_string(),
                backend: kind.label().into(),
                config: label.clone(),
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
                overhead_ms: gpu.map_or(0.0, |g| g.overhead_ms()),
                upload_ms: gpu.map_or(0.0, |g| g.upload_ms),
                readback_ms: gpu.map_or(0.0, |g| g.readback_ms),
                launches: gpu.map_or(0, |g| g.launches.len()),
                rays: out.rays,
                rays_per_s: out.rays as f64 / wall_s,
                samples_per_s: params.width as f64 * params.height as f64 * spp as f64 / wall_s,
                state_bytes: gpu.map_or(0, |g| g.state_bytes),
                registers: kernel.map_or(0, |k| k.registers),
                local_bytes: kernel.map_or(0, |k| k.local_bytes),
                occupancy: kernel.map_or(0.0, |k| k.occupancy),
                device: gpu.map_or(out.device.clone(), |g| g.device.describe()),
                cpu: meta.cpu.clone(),
                commit: meta.commit.clone(),
                date: meta.date.clone(),
            };
            on_row(&row);
            result.rows.push(row);
            last_profile = out.gpu;
        }
        if let Some(p) = last_profile {
            result.profiles.push((kind.label().into(), label, p));
        }
    }
    Ok(result)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median wall time per (back end, configuration), in first-seen order.
pub fn medians(rows: &[BenchRow]) -> Vec<(String, String, f64, &BenchRow)> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in rows {
        let k = (r.backend.clone(), r.config.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(b, c)| {
            let group: Vec<&BenchRow> = rows.iter().filter(|r| r.backend == b && r.config == c).collect();
            let m = median(group.iter().map(|r| r.wall_ms).collect());
            (b, c, m, group[0])
        })
        .collect()
}

/// The printed summary: medians, best per back end, speedups, and the
/// per-kernel profile of each back end's best configuration.
pub fn summary(result: &BenchResult) -> String {
    let rows = &result.rows;
    let mut s = format!(
        "{:<10} {:<36} {:>5} {:>10} {:>10} {:>10} {:>10} {:>9} {:>5}\n",
        "backend", "config", "runs", "median ms", "min ms", "kernel ms", "overhead", "Mrays/s", "regs"
    );
    let meds = medians(rows);
    for (b, c, m, first) in &meds {
        let group: Vec<&BenchRow> = rows.iter().filter(|r| &r.backend == b && &r.config == c).collect();
        let min = group.iter().map(|r| r.wall_ms).fold(f64::MAX, f64::min);
        let kernel = median(group.iter().map(|r| r.kernel_ms).collect());
        let overhead = median(group.iter().map(|r| r.overhead_ms).collect());
        let _ = writeln!(
            s,
            "{b:<10} {c:<36} {:>5} {m:>10.3} {min:>10.3} {kernel:>10.3} {overhead:>10.3} {:>9.1} {:>5}",
            group.len(),
            first.rays as f64 / m / 1e3,
            first.registers
        );
    }
    let mut best: Vec<(String, String, f64)> = Vec::new();
    for (b, c, m, _) in &meds {
        match best.iter_mut().find(|(bb, _, _)| bb == b) {
            Some(e) if *m < e.2 => *e = (b.clone(), c.clone(), *m),
            Some(_) => {}
            None => best.push((b.clone(), c.clone(), *m)),
        }
    }
    for (b, c, m) in &best {
        let _ = writeln!(s, "best {b}: {c}, {m:.3} ms");
    }
    if let (Some(mega), Some(wave)) = (
        best.iter().find(|e| e.0 == "gpu-mega"),
        best.iter().find(|e| e.0 == "gpu-wave"),
    ) {
        let _ = writeln!(
            s,
            "speedup of gpu-wave over gpu-mega (best against best): {:.3}x",
            mega.2 / wave.2
        );
    }
    for (b, c, _) in &best {
        if let Some((_, _, p)) = result.profiles.iter().find(|(pb, pc, _)| pb == b && pc == c) {
            let _ = writeln!(s, "\nper-kernel profile of {b} {c} (last repetition):\n{}", p.table());
        }
    }
    s
}

/// One launch of a best configuration, for the launch log.
#[derive(Serialize)]
struct BestLaunch<'a> {
    backend: &'a str,
    config: &'a str,
    kernel: &'a str,
    launch: u32,
    iteration: u32,
    threads: u64,
    items: u64,
    ms: f64,
}

/// Writes the launch records of each back end's best configuration.
pub fn write_best_launches(result: &BenchResult, path: &std::path::Path) -> anyhow::Result<()> {
    let meds = medians(&result.rows);
    let mut rows = Vec::new();
    for (backend, _, _) in &result.profiles {
        let best = meds
            .iter()
            .filter(|(b, ..)| b == backend)
            .min_by(|a, b| a.2.total_cmp(&b.2));
        if let Some((b, c, ..)) = best
            && let Some((_, _, p)) = result.profiles.iter().find(|(pb, pc, _)| pb == b && pc == c)
            && !rows.iter().any(|r: &BestLaunch| r.backend == b)
        {
            rows.extend(p.launches.iter().map(|l| BestLaunch {
                backend: b,
                config: c,
                kernel: &l.kernel,
                launch: l.launch,
                iteration: l.iteration,
                threads: l.threads,
                items: l.items,
                ms: l.ms,
            }));
        }
    }
    crate::report::write_csv(path, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_are_the_full_product_in_argument_order() {
        let mega = MegaSweep {
            blocks: vec![(8, 8), (32, 4)],
            samples_per_launch: vec![1, 16],
            tile: None,
        };
        let labels: Vec<String> = mega.configs().iter().map(|c| c.label()).collect();
        assert_eq!(labels, ["8x8/spl1", "8x8/spl16", "32x4/spl1", "32x4/spl16"]);
        let wave = WaveSweep {
            schedules: vec![Schedule::BounceSync, Schedule::Regenerate],
            compactions: vec![Compaction::PrefixSum],
            capacities: vec![Capacity::Slots(1 << 20), Capacity::Auto],
            blocks: vec![64],
            drains: vec![0, 1 << 18],
        };
        let labels: Vec<String> = wave.configs().iter().map(|c| c.label()).collect();
        assert_eq!(labels.len(), 8);
        assert_eq!(labels[0], "bounce-sync/prefix-sum/2^20/64");
        assert_eq!(labels[7], "regenerate/prefix-sum/auto/64/drain262144");
        assert!(wave.configs().iter().all(|c| !c.count_divergence));
    }
}
