//! `wavepath bench`: back ends over launch configurations and repetitions,
//! as a one-study experiment through the same runner as `wavepath
//! experiment`. Every configuration of every back end must produce the same
//! film (a schedule may change speed, never the image); a run that does not
//! is an error. The summary gives medians per configuration, the best
//! configuration of each back end, their speedup, and the per-kernel profile
//! of each best.

use crate::config::{Config, Study};
use crate::params::{
    ACCEL, BLOCK, CAPACITY, COMPACTION, DEPTH, DRAIN_BELOW, NEE, Param, SAMPLER, SAMPLES_PER_LAUNCH, SCHEDULE, SEED,
    SIZE, SPP, Setting, SettingDecl, Sweep, THREADS, TILE, Value, WAVE_BLOCK,
};
use crate::records::RunRow;
use crate::runner::Outcome;
use crate::statistics;
use device::launch::Compaction;
use renderer::render::Overrides;
use renderer::settings::backend::BackendKind;
use renderer::settings::capacity::Capacity;
use renderer::settings::wave_config::WaveSchedule;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchPlan {
    /// The scene file.
    pub scene: PathBuf,
    /// Settings replacing the file's.
    pub overrides: Overrides,
    /// Back ends, measured in this order.
    pub backends: Vec<BackendKind>,
    /// Megakernel block shapes.
    pub blocks: Vec<(u32, u32)>,
    /// Megakernel samples per launch.
    pub samples_per_launch: Vec<u32>,
    /// Megakernel tile (all configurations).
    pub tile: Option<(u32, u32)>,
    /// Wavefront schedules.
    pub schedules: Vec<WaveSchedule>,
    /// Wavefront compaction modes.
    pub compactions: Vec<Compaction>,
    /// Wavefront pool capacities.
    pub capacities: Vec<Capacity>,
    /// Wavefront threads per block.
    pub wave_blocks: Vec<u32>,
    /// Wavefront tail-drain thresholds.
    pub drains: Vec<u32>,
    /// Timed repetitions per configuration.
    pub repeat: u32,
    /// Untimed renders first.
    pub warmup: u32,
    /// CPU threads.
    pub threads: usize,
}

impl BenchPlan {
    /// The plan as a one-study experiment config.
    pub fn config(&self, command: &str) -> Config {
        // Every override, named field by field: one added to `Overrides`
        // cannot be left out of the runs.
        let Overrides {
            spp,
            max_depth,
            size,
            seed,
            accel,
            sampler,
            nee,
        } = self.overrides;
        let fixed: Vec<Setting> = [
            size.map(|s| (&SIZE, Value::Size(s))),
            spp.map(|n| (&SPP, Value::Count(n))),
            max_depth.map(|n| (&DEPTH, Value::Count(n))),
            seed.map(|n| (&SEED, Value::Count(n))),
            accel.map(|a| (&ACCEL, Value::Accel(a))),
            sampler.map(|s| (&SAMPLER, Value::Sampler(s))),
            nee.map(|n| (&NEE, Value::Nee(n))),
            Some((&TILE, Value::Tile(self.tile))),
            Some((&THREADS, Value::Count(self.threads as u32))),
        ]
        .into_iter()
        .flatten()
        .map(|(decl, value)| Setting {
            param: Param::Plain(decl),
            value,
        })
        .collect();
        let sweeps = vec![
            sweep(&BLOCK, &self.blocks, Value::Size),
            sweep(&SAMPLES_PER_LAUNCH, &self.samples_per_launch, Value::Count),
            sweep(&SCHEDULE, &self.schedules, Value::WaveSchedule),
            sweep(&COMPACTION, &self.compactions, Value::Compaction),
            sweep(&CAPACITY, &self.capacities, Value::Capacity),
            sweep(&WAVE_BLOCK, &self.wave_blocks, Value::Count),
            sweep(&DRAIN_BELOW, &self.drains, Value::Count),
        ];
        Config {
            path: self.scene.clone(),
            text: command.to_string(),
            name: "bench".into(),
            description: format!("wavepath bench {}", self.scene.display()),
            studies: vec![Study {
                name: "bench".into(),
                description: String::new(),
                note: None,
                scenes: vec![self.scene.clone()],
                backends: self.backends.clone(),
                baseline: None,
                warmup: self.warmup,
                repeat: self.repeat,
                fixed,
                per_backend: Vec::new(),
                sweep: sweeps,
                published: Vec::new(),
                reference: None,
                scaling: Default::default(),
            }],
        }
    }
}

/// A sweep of `decl` over `values`, each made a [`Value`] by `value`.
fn sweep<T: Copy>(decl: &'static SettingDecl, values: &[T], value: fn(T) -> Value) -> Sweep {
    Sweep {
        param: Param::Plain(decl),
        values: values.iter().map(|&v| value(v)).collect(),
    }
}

/// The median of a configuration's values (every group has at least one row).
fn median(values: Vec<f64>) -> f64 {
    statistics::median(&values).unwrap_or(f64::NAN)
}

/// One configuration's rows.
struct Group<'a> {
    rows: Vec<&'a RunRow>,
    median_ms: f64,
}

/// The rows grouped by configuration, in run order.
fn groups(rows: &[RunRow]) -> Vec<Group<'_>> {
    let mut runs: Vec<u32> = Vec::new();
    for r in rows {
        if !runs.contains(&r.run) {
            runs.push(r.run);
        }
    }
    runs.into_iter()
        .map(|run| {
            let rows: Vec<&RunRow> = rows.iter().filter(|r| r.run == run).collect();
            let median_ms = median(rows.iter().map(|r| r.wall_ms).collect());
            Group { rows, median_ms }
        })
        .collect()
}

/// The fastest configuration of each back end, in first-seen order.
fn best<'a>(groups: &'a [Group<'a>]) -> Vec<&'a Group<'a>> {
    let mut best: Vec<&Group> = Vec::new();
    for g in groups {
        match best.iter_mut().find(|b| b.rows[0].backend == g.rows[0].backend) {
            Some(b) if g.median_ms < b.median_ms => *b = g,
            Some(_) => {}
            None => best.push(g),
        }
    }
    best
}

/// The printed summary: medians, best per back end, speedups, and the
/// per-kernel profile of each back end's best configuration.
pub fn summary(outcome: &Outcome) -> String {
    let groups = groups(&outcome.rows);
    let mut s = format!(
        "{:<10} {:<40} {:>5} {:>10} {:>10} {:>10} {:>10} {:>9} {:>5}\n",
        "backend", "config", "runs", "median ms", "min ms", "kernel ms", "overhead", "Mrays/s", "regs"
    );
    for g in &groups {
        let first = g.rows[0];
        let min = g.rows.iter().map(|r| r.wall_ms).fold(f64::MAX, f64::min);
        let kernel = median(g.rows.iter().map(|r| r.kernel_ms).collect());
        let overhead = median(g.rows.iter().map(|r| r.overhead_ms).collect());
        let _ = writeln!(
            s,
            "{:<10} {:<40} {:>5} {:>10.3} {min:>10.3} {kernel:>10.3} {overhead:>10.3} {:>9.1} {:>5}",
            first.backend,
            first.config,
            g.rows.len(),
            g.median_ms,
            first.rays as f64 / g.median_ms / 1e3,
            first.registers.map_or_else(|| "-".into(), |r| r.to_string())
        );
    }
    let best = best(&groups);
    for b in &best {
        let _ = writeln!(
            s,
            "best {}: {}, {:.3} ms",
            b.rows[0].backend, b.rows[0].config, b.median_ms
        );
    }
    let of = |backend: &str| best.iter().find(|b| b.rows[0].backend == backend);
    if let (Some(mega), Some(wave)) = (of("gpu-mega"), of("gpu-wave")) {
        let _ = writeln!(
            s,
            "speedup of gpu-wave over gpu-mega (best against best): {:.3}x",
            mega.median_ms / wave.median_ms
        );
    }
    for b in &best {
        if let Some((_, _, p)) = outcome.profiles.iter().find(|(_, run, _)| *run == b.rows[0].run) {
            let _ = writeln!(
                s,
                "\nper-kernel profile of {} {} (last repetition):\n{}",
                b.rows[0].backend,
                b.rows[0].config,
                p.table()
            );
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
pub fn write_best_launches(outcome: &Outcome, path: &std::path::Path) -> anyhow::Result<()> {
    let groups = groups(&outcome.rows);
    let mut rows = Vec::new();
    for b in best(&groups) {
        let first = b.rows[0];
        if let Some((_, _, p)) = outcome.profiles.iter().find(|(_, run, _)| *run == first.run) {
            rows.extend(p.launches.iter().map(|l| BestLaunch {
                backend: &first.backend,
                config: &first.config,
                kernel: l.kernel,
                launch: l.launch,
                iteration: l.iteration,
                threads: l.threads,
                items: l.items,
                ms: l.ms,
            }));
        }
    }
    renderer::io::csv::write_csv(path, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_study_sweeps_each_back_end_over_its_own_settings_only() {
        let plan = BenchPlan {
            scene: PathBuf::from("scenes/cornell_diffuse.toml"),
            overrides: Overrides::default(),
            backends: vec![BackendKind::Cpu, BackendKind::GpuMega, BackendKind::GpuWave],
            blocks: vec![(8, 8), (32, 4)],
            samples_per_launch: vec![1, 16],
            tile: None,
            schedules: vec![WaveSchedule::BounceSync, WaveSchedule::Regenerate],
            compactions: vec![Compaction::PrefixSum],
            capacities: vec![Capacity::Slots(1 << 20), Capacity::Auto],
            wave_blocks: vec![64],
            drains: vec![0, 1 << 18],
            repeat: 1,
            warmup: 0,
            threads: 0,
        };
        let runs = plan.config("bench").studies[0].runs();
        let labels: Vec<&str> = runs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels[0], "cpu");
        assert_eq!(
            labels[1..5],
            [
                "gpu-mega block=8x8 samples_per_launch=1",
                "gpu-mega block=8x8 samples_per_launch=16",
                "gpu-mega block=32x4 samples_per_launch=1",
                "gpu-mega block=32x4 samples_per_launch=16"
            ]
        );
        assert_eq!(runs.len(), 1 + 4 + 8);
        assert_eq!(
            labels[5],
            "gpu-wave schedule=bounce-sync compaction=prefix-sum capacity=2^20 wave_block=64 drain_below=0"
        );
        assert!(runs.iter().all(|r| !r.spec.options.wavefront.count_divergence));
    }

    #[test]
    fn every_override_reaches_every_run() {
        let overrides = Overrides {
            spp: Some(3),
            max_depth: Some(2),
            size: Some((12, 8)),
            seed: Some(7),
            accel: Some(renderer::accel::AccelChoice::Bvh),
            sampler: Some(renderer::settings::sampler::SamplerKind::Sobol),
            nee: Some(renderer::settings::nee::NeeMode::On),
        };
        let plan = BenchPlan {
            scene: PathBuf::from("scenes/cornell_diffuse.toml"),
            overrides,
            backends: vec![BackendKind::Cpu, BackendKind::CpuWave],
            blocks: vec![(8, 8)],
            samples_per_launch: vec![16],
            tile: None,
            schedules: vec![WaveSchedule::Regenerate],
            compactions: vec![Compaction::PrefixSum],
            capacities: vec![Capacity::DEFAULT],
            wave_blocks: vec![64],
            drains: vec![0],
            repeat: 1,
            warmup: 0,
            threads: 0,
        };
        let runs = plan.config("bench").studies[0].runs();
        assert_eq!(runs.len(), 2);
        for run in runs {
            assert_eq!(run.spec.overrides, overrides, "{}", run.label);
        }
    }
}
