//! The output folder: its files, the checks made before the first sample, and
//! what an interrupted experiment there left to resume.

use super::config::{Config, PlannedRun, Study};
use super::preflight::Checked;
use super::records::{KernelRow, Manifest, Recovered, RunRow, header, recover_rows};
use anyhow::{Context, bail};
use renderer::io::atomic_file::{self, Output};
use renderer::system::provenance::Provenance;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
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

    /// The three, as outputs to check.
    fn outputs(&self) -> [Output; 3] {
        [
            Output::new(&self.runs, "the run records"),
            Output::new(&self.kernels, "the kernel records"),
            Output::new(&self.manifest, "the manifest"),
        ]
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

/// What an interrupted run left (nothing for a fresh folder), and the
/// folder's lock, held until this is dropped.
#[derive(Default)]
pub struct Resumed {
    /// Its rows.
    pub rows: Vec<RunRow>,
    /// Its manifest.
    pub manifest: Option<Manifest>,
    /// Its (study, run, repetition) triples.
    done: HashSet<(String, u32, u32)>,
    /// The output folder's lock: one writer per folder.
    _lock: Option<FolderLock>,
}

impl Resumed {
    /// What rank 0 of an MPI job resumed, at another rank: its `rows`
    /// (rank 0 holds the folder and its lock).
    pub fn from_rows(rows: Vec<RunRow>) -> Self {
        let done = rows.iter().map(|r| (r.study.clone(), r.run, r.repetition)).collect();
        Resumed {
            rows,
            done,
            ..Resumed::default()
        }
    }

    /// The repetitions of `run` still to make.
    pub fn remaining(&self, study: &Study, run: &PlannedRun) -> Vec<u32> {
        (0..study.repeat)
            .filter(|&k| !self.done.contains(&(study.name.clone(), run.index, k)))
            .collect()
    }
}

/// The lock file's name in an output folder.
pub const LOCK_FILE: &str = ".wavepath.lock";

/// An advisory lock on an output folder, held while an experiment writes
/// there; the system releases it when the process ends, however it ends.
pub struct FolderLock {
    /// The open lock file: the lock lasts as long as it is open.
    _file: std::fs::File,
}

impl FolderLock {
    /// Takes the lock of `dir`, or says who holds it.
    pub fn take(dir: &Path) -> anyhow::Result<Self> {
        let path = dir.join(LOCK_FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("{}: cannot open the folder's lock file", path.display()))?;
        match file.try_lock() {
            Ok(()) => Ok(FolderLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => bail!(
                "{}: another wavepath experiment is writing to this folder (it holds {LOCK_FILE}); \
                 wait for it to end, or choose another --out",
                dir.display()
            ),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(e).with_context(|| format!("{}: cannot lock the output folder", path.display()))
            }
        }
    }
}

/// Checks the output folder `dir` (none: the rows stay in memory) and
/// every file the command writes as [`prepare`] does, changing nothing: the
/// folder is a folder or absent, its files and `outputs` besides (`bench
/// --csv`) can be written and are none of the files the runs read
/// (`checked` lists them), and what a run there left is continued only as
/// `policy` allows. `--dry-run` makes this check; a run makes it again in
/// [`prepare`], under the folder's lock.
pub fn check(
    dir: Option<&Path>,
    outputs: &[Output],
    policy: ResumePolicy,
    config: &Config,
    checked: &Checked,
    meta: &Provenance,
) -> anyhow::Result<()> {
    if let Some(dir) = dir {
        check_folder(dir)?;
    }
    // A folder not made yet has no files to check.
    let existing = dir.filter(|d| d.is_dir());
    check_written(existing, outputs, config, checked)?;
    if let Some(dir) = existing {
        earlier_run(dir, policy, config, meta)?;
    }
    Ok(())
}

/// Checks, before the first sample, the output folder `dir` (none: the
/// rows stay in memory) and every file the command writes, as [`check`]
/// does; takes the folder's lock, and returns what an interrupted run
/// there left to resume, its files repaired and its rows numbered as
/// `config` plans their configurations (`number_as_planned`).
pub fn prepare(
    dir: Option<&Path>,
    outputs: &[Output],
    policy: ResumePolicy,
    config: &Config,
    checked: &Checked,
    meta: &Provenance,
) -> anyhow::Result<Resumed> {
    if let Some(dir) = dir {
        check_folder(dir)?;
        std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create the output folder", dir.display()))?;
    }
    check_written(dir, outputs, config, checked)?;
    let Some(dir) = dir else {
        return Ok(Resumed::default());
    };
    let lock = FolderLock::take(dir)?;
    let Some(manifest) = earlier_run(dir, policy, config, meta)? else {
        return Ok(Resumed {
            _lock: Some(lock),
            ..Resumed::default()
        });
    };
    let files = OutFiles::in_folder(dir);
    let rows = repair_records(&files)?;
    let rows = number_as_planned(&files, rows, config, policy.allow_mixed)?;
    Ok(Resumed {
        manifest: Some(manifest),
        _lock: Some(lock),
        ..Resumed::from_rows(rows)
    })
}

/// Refuses an output path that names something other than a folder.
fn check_folder(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() && !dir.is_dir() {
        bail!(
            "{}: is not a folder; --out names the folder for the results",
            dir.display()
        );
    }
    Ok(())
}

/// Checks every file the command writes, the folder `dir`'s and
/// `outputs`, against every file the runs read and one another.
fn check_written(dir: Option<&Path>, outputs: &[Output], config: &Config, checked: &Checked) -> anyhow::Result<()> {
    let files = dir.map(OutFiles::in_folder);
    let written: Vec<Output> = outputs
        .iter()
        .cloned()
        .chain(files.iter().flat_map(OutFiles::outputs))
        .collect();
    atomic_file::check_outputs(&written, &inputs(config, checked))
}

/// What a run in the existing output folder `dir` left: nothing (`None`),
/// or a run that `policy` lets this one continue, whose manifest is
/// returned.
fn earlier_run(
    dir: &Path,
    policy: ResumePolicy,
    config: &Config,
    meta: &Provenance,
) -> anyhow::Result<Option<Manifest>> {
    let files = OutFiles::in_folder(dir);
    let started = std::fs::metadata(&files.runs).is_ok_and(|m| m.len() > 0);
    if !started {
        return Ok(None);
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
    Ok(Some(manifest))
}

/// Every file an experiment reads: its config, every study's scenes, and
/// the meshes, textures and reference images of the runs planned.
fn inputs<'a>(config: &'a Config, checked: &'a Checked) -> Vec<&'a Path> {
    std::iter::once(config.path.as_path())
        .chain(config.studies.iter().flat_map(|s| &s.scenes).map(PathBuf::as_path))
        .chain(checked.inputs.iter().map(PathBuf::as_path))
        .collect()
}

/// Makes `runs.csv` and `kernels.csv` whole again after an interruption
/// and returns the finished rows. A record cut short at the end of either
/// file is dropped (and said); kernel rows of a repetition that has no row
/// in `runs.csv` (the writer appends a run's kernel rows first and its run
/// row last, as the commit) are dropped too, so that the repetition is made
/// again without duplicates.
fn repair_records(files: &OutFiles) -> anyhow::Result<Vec<RunRow>> {
    let runs = recover_rows::<RunRow>(&files.runs)?;
    cut_incomplete(&files.runs, &runs)?;
    let done: HashSet<_> = runs
        .rows
        .iter()
        .map(|r| (r.study.as_str(), r.run, r.repetition))
        .collect();
    if std::fs::metadata(&files.kernels).is_ok_and(|m| m.len() > 0) {
        let kernels = recover_rows::<KernelRow>(&files.kernels)?;
        let kept: Vec<&KernelRow> = kernels
            .rows
            .iter()
            .filter(|k| done.contains(&(k.study.as_str(), k.run, k.repetition)))
            .collect();
        if kept.len() < kernels.rows.len() || kernels.incomplete.is_some() {
            eprintln!(
                "wavepath: {}: dropped {} kernel rows of repetitions that did not finish; they are made again",
                files.kernels.display(),
                kernels.rows.len() - kept.len() + usize::from(kernels.incomplete.is_some())
            );
            rewrite(&files.kernels, kept)?;
        }
    }
    Ok(runs.rows)
}

/// Gives the rows of an earlier run (and their kernel rows) the run
/// numbers `config` plans their configurations under, matched by their
/// settings (`config_key`), not by their numbers: a resumed config may
/// order or change its sweeps (`--allow-mixed`), and a row's number then
/// names another configuration. Rows of a configuration the config no
/// longer plans (or from before `config_key`, which match none) are kept,
/// each configuration under a number of its own past the planned ones, in
/// order of appearance; rows of a study it no longer has are left as they
/// are. The files are rewritten only where a
/// number changes, which resuming the same config never does. Without
/// `allow_mixed` a row of a configuration the config no longer plans (its
/// settings or its scene file changed since) refuses the resume.
fn number_as_planned(
    files: &OutFiles,
    mut rows: Vec<RunRow>,
    config: &Config,
    allow_mixed: bool,
) -> anyhow::Result<Vec<RunRow>> {
    // Each study's planned run of each configuration, and its first free
    // number past them.
    let mut planned: HashMap<(&str, &str), u32> = HashMap::new();
    let mut free: HashMap<&str, u32> = HashMap::new();
    let studies: Vec<(&Study, Vec<PlannedRun>)> = config.studies.iter().map(|s| (s, s.runs())).collect();
    for (study, runs) in &studies {
        free.insert(&study.name, runs.len() as u32);
        for run in runs {
            planned.insert((&study.name, &run.key), run.index);
        }
    }
    // Each earlier configuration (study, number, key) and its number now.
    let mut numbers: HashMap<(String, u32, String), u32> = HashMap::new();
    for row in &rows {
        let Some(next) = free.get_mut(row.study.as_str()) else {
            continue;
        };
        let earlier = (row.study.clone(), row.run, row.config_key.clone());
        if numbers.contains_key(&earlier) {
            continue;
        }
        let now = match planned.get(&(row.study.as_str(), row.config_key.as_str())) {
            Some(&index) if !row.config_key.is_empty() => index,
            _ if !allow_mixed && !row.config_key.is_empty() => bail!(
                "{}: the rows of run {} of study `{}` ({}) were made under settings or a scene file that \
                 this config no longer has (the scene file changed since, or the config); pass --allow-mixed \
                 to keep them beside the new runs, or choose another --out",
                files.runs.display(),
                row.run,
                row.study,
                row.config
            ),
            _ => {
                let fresh = *next;
                *next += 1;
                fresh
            }
        };
        numbers.insert(earlier, now);
    }
    let moved = numbers.iter().filter(|((_, run, _), now)| run != *now).count();
    if moved == 0 {
        return Ok(rows);
    }
    eprintln!(
        "wavepath: {}: {moved} configurations of the earlier rows are numbered as this config plans them \
         (matched by their settings)",
        files.runs.display()
    );
    // Kernel rows name their run by number alone: the first configuration
    // of that number in the earlier rows.
    let mut by_number: HashMap<(String, u32), u32> = HashMap::new();
    for row in &rows {
        if let Some(&now) = numbers.get(&(row.study.clone(), row.run, row.config_key.clone())) {
            by_number.entry((row.study.clone(), row.run)).or_insert(now);
        }
    }
    for row in &mut rows {
        if let Some(&now) = numbers.get(&(row.study.clone(), row.run, row.config_key.clone())) {
            row.run = now;
        }
    }
    rewrite(&files.runs, &rows)?;
    if std::fs::metadata(&files.kernels).is_ok_and(|m| m.len() > 0) {
        let mut kernels = recover_rows::<KernelRow>(&files.kernels)?.rows;
        for k in &mut kernels {
            if let Some(&now) = by_number.get(&(k.study.clone(), k.run)) {
                k.run = now;
            }
        }
        rewrite(&files.kernels, &kernels)?;
    }
    Ok(rows)
}

/// Replaces the CSV file at `path` with this version's header and `rows`.
fn rewrite<'a, T: Serialize + Default + 'a>(path: &Path, rows: impl IntoIterator<Item = &'a T>) -> anyhow::Result<()> {
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    w.write_record(header::<T>()?)?;
    for row in rows {
        w.serialize(row)?;
    }
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    atomic_file::write(path, &bytes)
}

/// Cuts an incomplete final record off `path`, saying so.
fn cut_incomplete<T>(path: &Path, recovered: &Recovered<T>) -> anyhow::Result<()> {
    let Some((line, bytes)) = recovered.incomplete else {
        return Ok(());
    };
    eprintln!(
        "wavepath: {}: dropped an incomplete final record (line {line}, {bytes} bytes) left by an interrupted write; \
         its repetition is made again",
        path.display()
    );
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.set_len(recovered.whole_bytes))
        .with_context(|| format!("{}: cannot cut the incomplete record", path.display()))
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
