//! The output folder: its files, the checks made before the first sample, and
//! what an interrupted experiment there left to resume.

use super::config::{Config, PlannedRun, Study};
use super::records::{Manifest, RunRow, read_rows};
use crate::system::provenance::Provenance;
use anyhow::{Context, bail};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The experiment's output files.
pub struct OutFiles {
    /// `runs.csv`.
    pub runs: PathBuf,
    /// `kernels.csv`.
    pub kernels: PathBuf,
    /// `manifest.toml`.
    pub manifest: PathBuf,
}

impl OutFiles {
    /// The files in `dir`.
    pub fn in_folder(dir: &Path) -> Self {
        OutFiles {
            runs: dir.join("runs.csv"),
            kernels: dir.join("kernels.csv"),
            manifest: dir.join("manifest.toml"),
        }
    }
}

/// How to treat a folder an experiment has written to already.
#[derive(Clone, Copy)]
pub struct ResumePolicy {
    /// Continue it, skipping its finished rows (otherwise it is an error).
    pub resume: bool,
    /// Let its rows come from another config or commit.
    pub allow_mixed: bool,
}

/// What an interrupted run left: nothing for a fresh folder.
#[derive(Default)]
pub struct Resumed {
    /// Its rows.
    pub rows: Vec<RunRow>,
    /// Its manifest.
    pub manifest: Option<Manifest>,
    /// Its (study, run, repetition) triples.
    done: HashSet<(String, u32, u32)>,
}

impl Resumed {
    /// The repetitions of `run` still to make.
    pub fn remaining(&self, study: &Study, run: &PlannedRun) -> Vec<u32> {
        (0..study.repeat)
            .filter(|&k| !self.done.contains(&(study.name.clone(), run.index, k)))
            .collect()
    }
}

/// Checks the output folder `dir` before the first sample (none: the rows
/// stay in memory) and returns what an interrupted run there left to resume.
pub fn prepare(
    dir: Option<&Path>,
    policy: ResumePolicy,
    config: &Config,
    meta: &Provenance,
) -> anyhow::Result<Resumed> {
    let Some(dir) = dir else {
        return Ok(Resumed::default());
    };
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!(
            "{}: is not a folder; --out names the folder for the results",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create the output folder", dir.display()))?;
    tempfile::tempfile_in(dir).with_context(|| format!("{}: cannot write in the output folder", dir.display()))?;
    let files = OutFiles::in_folder(dir);
    let started = std::fs::metadata(&files.runs).is_ok_and(|m| m.len() > 0);
    if !started {
        return Ok(Resumed::default());
    }
    if !policy.resume {
        bail!(
            "{}: an experiment has written here already; pass --resume to continue it, or choose another --out",
            files.runs.display()
        );
    }
    let manifest = Manifest::read(&files.manifest)?;
    if !policy.allow_mixed {
        same_origin(&manifest, &files.manifest, config, meta)?;
    }
    let rows = read_rows(&files.runs)?;
    let done = rows
        .iter()
        .map(|r: &RunRow| (r.study.clone(), r.run, r.repetition))
        .collect();
    Ok(Resumed {
        rows,
        manifest: Some(manifest),
        done,
    })
}

/// Refuses to resume rows from another config or another build.
fn same_origin(manifest: &Manifest, path: &Path, config: &Config, meta: &Provenance) -> anyhow::Result<()> {
    if manifest.experiment.config_hash != config.fingerprint() {
        bail!(
            "{}: these rows came from a different config (fingerprint {}, now {}); \
             resume with the same config, or pass --allow-mixed to mix them",
            path.display(),
            manifest.experiment.config_hash,
            config.fingerprint()
        );
    }
    if manifest.build.commit != meta.commit_hash() || manifest.build.dirty != meta.dirty() {
        bail!(
            "{}: these rows came from commit {}{}, this binary is {}; pass --allow-mixed to mix them",
            path.display(),
            manifest.build.commit,
            if manifest.build.dirty { " (dirty)" } else { "" },
            meta.commit
        );
    }
    Ok(())
}
