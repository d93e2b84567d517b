//! The plan of an experiment: the studies to run with their configurations,
//! and the rough time `--dry-run` prints and the progress bar counts down.

use super::config::{Config, PlannedRun, Study};
use super::params::RunSpec;
use anyhow::bail;
use renderer::backend::BackendKind;
use renderer::settings::echo::shorten_for_error;

/// The studies to run, with their planned configurations.
pub fn plan<'c>(config: &'c Config, only: Option<&str>) -> anyhow::Result<Vec<(&'c Study, Vec<PlannedRun>)>> {
    if let Some(name) = only
        && !config.studies.iter().any(|s| s.name == name)
    {
        let names: Vec<&str> = config.studies.iter().map(|s| s.name.as_str()).collect();
        bail!(
            "{}: no study `{}`; the studies are {}",
            config.path.display(),
            shorten_for_error(name),
            names.join(", ")
        );
    }
    Ok(config
        .studies
        .iter()
        .filter(|s| only.is_none_or(|n| n == s.name))
        .map(|s| (s, s.runs()))
        .collect())
}

/// The time estimate's nominal CPU throughput, rays per second per thread.
const CPU_RAYS_PER_S_PER_THREAD: f64 = 5e6;
/// The time estimate's nominal GPU throughput, rays per second.
const GPU_RAYS_PER_S: f64 = 1.5e9;
/// Assumed ray segments per sample, at most the depth.
const RAYS_PER_SAMPLE: u32 = 4;

/// A rough time for one render of `spec`, in seconds, from the scene file's
/// `[render]` table and nominal throughputs (brute force is not modelled).
pub fn estimate_s(spec: &RunSpec) -> f64 {
    let render = std::fs::read_to_string(&spec.scene)
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| t.get("render").and_then(|r| r.as_table()).cloned())
        .unwrap_or_default();
    let get = |k: &str| render.get(k).and_then(|v| v.as_integer()).unwrap_or(1) as f64;
    let (w, h) = spec
        .overrides
        .size
        .map_or((get("width"), get("height")), |(w, h)| (w as f64, h as f64));
    let spp = spec.overrides.spp.map_or(get("spp"), f64::from);
    let spp = spec.spp_cap.map_or(spp, |cap| spp.min(cap as f64));
    let depth = spec.overrides.max_depth.map_or(get("max_depth"), f64::from);
    let rays = w * h * spp * depth.min(RAYS_PER_SAMPLE as f64);
    let threads = match spec.options.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    rays / match spec.backend {
        BackendKind::CpuSerial => CPU_RAYS_PER_S_PER_THREAD,
        BackendKind::Cpu => CPU_RAYS_PER_S_PER_THREAD * threads as f64,
        BackendKind::GpuMega | BackendKind::GpuWave => GPU_RAYS_PER_S * f64::from(spec.gpus),
        // Serial, and every thread of every launch, empty or not.
        BackendKind::CpuWave => CPU_RAYS_PER_S_PER_THREAD / 4.0,
    }
}

/// The `--dry-run` text of `plan`, checked ([`super::runner::check`]):
/// runs per study and a rough time.
pub fn dry_run(config: &Config, plan: &[(&Study, Vec<PlannedRun>)]) -> String {
    let mut s = format!(
        "experiment `{}` ({}): {}\n",
        config.name,
        config.path.display(),
        config.description
    );
    let mut total = 0.0;
    for (study, runs) in plan {
        let renders = (study.warmup + study.repeat) as f64;
        let time: f64 = runs.iter().map(|r| estimate_s(&r.spec) * renders).sum();
        total += time;
        s += &format!(
            "study `{}`: {} configurations × ({} warm-up + {} timed) = {} renders, about {}\n",
            study.name,
            runs.len(),
            study.warmup,
            study.repeat,
            runs.len() as u32 * (study.warmup + study.repeat),
            duration(time)
        );
        for r in runs {
            s += &format!(
                "  {:>4}  {}  (about {})\n",
                r.index,
                r.label,
                duration(estimate_s(&r.spec) * renders)
            );
        }
    }
    s += &format!(
        "total: about {} (rough: {:.0} M rays/s per CPU thread, {:.1} G rays/s on a GPU, {RAYS_PER_SAMPLE} rays per sample; brute force not modelled)\n",
        duration(total),
        CPU_RAYS_PER_S_PER_THREAD / 1e6,
        GPU_RAYS_PER_S / 1e9
    );
    s
}

fn duration(s: f64) -> String {
    match s {
        s if s < 60.0 => format!("{s:.1} s"),
        s if s < 3600.0 => format!("{:.1} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}
