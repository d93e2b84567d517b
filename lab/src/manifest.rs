//! The manifest over a run (its format is in `records`): what was planned,
//! written before the first sample, and how each study ended, written when
//! the run stops for any reason.

use super::config::{Config, PlannedRun, Study};
use super::measure::{Ending, RunExtras};
use super::records::{
    Manifest, ManifestBuild, ManifestDevice, ManifestExperiment, ManifestHost, ManifestRank, ManifestSession,
    ManifestStudy, RunRow,
};
use super::rows::{driver, overhead};
use super::scaling::Scaling;
use super::spread::loads;
use super::writer::WriterOutcome;
use renderer::backend::gpu::Gpu;
use renderer::render::split::imbalance;
use renderer::system::provenance::{Provenance, now};

/// The status of a study a stop request cut short.
pub const INTERRUPTED: &str = "interrupted";

/// The manifest of a run starting now, on the `gpus` that opened; a
/// resumed run keeps the `earlier` run's first start and its sessions, and
/// adds its own.
pub fn begin(
    config: &Config,
    command: &str,
    meta: &Provenance,
    gpus: &[Gpu],
    plan: &[(&Study, Vec<PlannedRun>)],
    earlier: Option<Manifest>,
    allow_dirty: bool,
) -> Manifest {
    let mut manifest = Manifest {
        experiment: ManifestExperiment {
            name: config.name.clone(),
            description: config.description.clone(),
            config: config.path.display().to_string(),
            config_hash: config.fingerprint(),
            command: command.to_string(),
            started: now(),
            finished: String::new(),
        },
        host: ManifestHost {
            cpu: meta.cpu_model.clone(),
            cpu_threads: meta.cpu_threads,
        },
        device: gpus.first().map(device),
        devices: if gpus.len() > 1 {
            gpus.iter().map(device).collect()
        } else {
            Vec::new()
        },
        build: ManifestBuild {
            version: meta.version.clone(),
            commit: meta.commit_hash().to_string(),
            dirty: meta.dirty(),
            allow_dirty,
            source: Some(meta.source.clone()),
        },
        study: plan.iter().map(|(s, runs)| planned(s, runs)).collect(),
        config_text: config.text.clone(),
        ..Default::default()
    };
    let this = ManifestSession {
        started: manifest.experiment.started.clone(),
        finished: String::new(),
        commit: meta.commit_hash().to_string(),
        dirty: meta.dirty(),
    };
    if let Some(previous) = earlier {
        manifest.session = previous.session;
        manifest.experiment.started = previous.experiment.started;
    }
    manifest.session.push(this);
    manifest
}

/// `[device]`: the GPU.
fn device(gpu: &Gpu) -> ManifestDevice {
    let i = gpu.info();
    ManifestDevice {
        ordinal: i.ordinal,
        name: i.name.clone(),
        driver: driver(gpu),
        compute_capability: format!("{}.{}", i.compute_capability.0, i.compute_capability.1),
        multiprocessors: i.multiprocessors,
        memory_gib: i.memory_bytes as f64 / (1u64 << 30) as f64,
    }
}

/// A `[[study]]` about to run.
fn planned(s: &Study, runs: &[PlannedRun]) -> ManifestStudy {
    ManifestStudy {
        name: s.name.clone(),
        description: s.description.clone(),
        note: s.note.clone(),
        baseline: s.baseline.map(|b| b.label().to_string()),
        backends: s.backends.iter().map(|b| b.label().to_string()).collect(),
        scenes: s.scenes.iter().map(|p| p.display().to_string()).collect(),
        swept: s.swept(),
        runs_planned: runs.len(),
        status: "running".into(),
        scaling: (s.scaling == Scaling::Weak).then(|| s.scaling.name().to_string()),
        ..Default::default()
    }
}

/// Fills in how each study ended, what was skipped, the runner's overhead,
/// what each MPI rank made (when several made rows) and the end time.
pub fn finish(
    manifest: &mut Manifest,
    config: &Config,
    ending: &Ending,
    tally: &RunExtras,
    written: &WriterOutcome,
    resumed: &[RunRow],
) {
    let checks = written.checks();
    let stopped_at = match ending {
        Ending::Stopped(name) => manifest.study.iter().position(|s| &s.name == name),
        _ => None,
    };
    for (i, s) in manifest.study.iter_mut().enumerate() {
        s.rows = written.rows.iter().filter(|r| r.study == s.name).count();
        s.resumed_rows = resumed.iter().filter(|r| r.study == s.name).count();
        s.film_check = checks.outcome(&s.name);
        let parity = tally.parity.iter().find(|p| p.study == s.name);
        s.parity = parity.map_or(
            "no configuration needed it (CPU back ends only, or none made)".into(),
            |p| p.outcome(),
        );
        let skipped = tally.skipped.iter().any(|k| k.study == s.name);
        s.status = match (ending, checks.mismatches.get(&s.name)) {
            (_, Some(m)) => format!("failed: film check: {m}"),
            _ if let Some(m) = parity.and_then(|p| p.mismatch.as_ref()) => format!("failed: parity: {m}"),
            (Ending::Failed(e), _) => format!("not finished: {e:#}"),
            _ if stopped_at.is_some_and(|at| i >= at) => {
                format!("{INTERRUPTED} by a stop request; --resume continues it")
            }
            _ if s.rows == 0 && skipped => "skipped: none of its runs could be made (see the skipped runs)".into(),
            _ if skipped => "complete, with skipped runs".into(),
            _ => "complete".into(),
        };
        let study = config.studies.iter().find(|c| c.name == s.name);
        s.published = study.map(|c| c.published.clone()).unwrap_or_default();
        s.reference = study
            .and_then(|c| c.reference.as_ref())
            .map(|r| r.display().to_string());
    }
    manifest.skipped = tally.skipped.clone();
    manifest.overhead = overhead(&written.rows);
    let ranks = loads(&written.rows, |r| r.rank.map(|k| (k, r.host.as_str())));
    if ranks.len() > 1 {
        let busy: Vec<f64> = ranks.iter().map(|l| l.seconds).collect();
        manifest.rank_imbalance = Some(imbalance(&busy));
        manifest.rank = ranks
            .into_iter()
            .map(|l| ManifestRank {
                rank: l.number,
                host: l.name,
                rows: l.rows,
                render_s: l.seconds,
            })
            .collect();
    }
    manifest.experiment.finished = now();
    if let Some(this) = manifest.session.last_mut() {
        this.finished = manifest.experiment.finished.clone();
    }
}
