//! Runs an experiment, step by step: check what every run needs (its scene
//! loads, its film fits), prepare the output folder (its lock, its files
//! checked, and what an interrupted run left there, repaired), open the GPU
//! (or the GPUs of `--devices`) if a GPU run is planned, write the
//! manifest, start the row writer, make the planned runs (spread over the
//! GPUs of `--devices`, [`super::spread`], where there are several; runs
//! whose image several GPUs render together last, [`super::team`]), and
//! write the manifest again with how each study ended.

pub use super::plan::{dry_run, plan};

use super::config::{Config, PlannedRun, Study};
use super::manifest::{self, INTERRUPTED};
use super::measure::{Ending, Runs};
use super::output::{self, OutFiles, ResumePolicy};
use super::partial::KeptRenders;
use super::preflight;
use super::progress::Progress;
use super::records::{Manifest, ManifestInput, RunRow};
use super::rows::Origin;
use super::spread;
use super::team;
use super::writer::RowWriter;
use anyhow::Context;
use renderer::backend::gpu::Gpu;
use renderer::backend::gpu::profile::GpuProfile;
use renderer::io::atomic_file::Output;
use renderer::settings::backend::BackendKind;
use renderer::settings::devices::Devices;
use renderer::settings::scope::{BackendFlag, check_flags};
use renderer::system::provenance::{Build, Provenance};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The build running the experiment, stamped on every row.
    pub build: Build,
    /// The output folder; `None` keeps the rows in memory only (`bench`).
    pub out: Option<PathBuf>,
    /// Files the command writes besides the folder's (`bench --csv` and
    /// `--launch-log`), checked with them before the first run.
    pub outputs: Vec<Output>,
    /// Run only this study.
    pub only: Option<String>,
    /// Continue an interrupted run in `out`, skipping its finished rows.
    pub resume: bool,
    /// Let a resumed run mix rows from another config or commit.
    pub allow_mixed: bool,
    /// Run with a binary built from uncommitted changes (the manifest and
    /// report say so); otherwise such a binary is refused.
    pub allow_dirty: bool,
    /// Show a progress bar.
    pub progress: bool,
    /// The command line, for the manifest.
    pub command: String,
    /// Keep the last GPU profile of each configuration (`bench` prints them).
    pub keep_profiles: bool,
    /// Fail when GPU runs are planned and no GPU opens, instead of skipping
    /// them (`bench`, which measures only what it was asked for).
    pub require_gpu: bool,
    /// Set (by a Ctrl-C handler) to stop after the render in flight; the
    /// rows so far are written and the run can be resumed.
    pub stop: Option<&'static AtomicBool>,
    /// The GPUs the GPU runs spread over (`--devices`; `None`: GPU 0).
    pub devices: Option<Devices>,
    /// The flags given that concern only some back ends: each must concern
    /// a back end the plan runs.
    pub flags: Vec<BackendFlag>,
}

impl RunOptions {
    /// A run by `build` that keeps its rows in memory, with no progress bar,
    /// no resume and nothing allowed that is refused by default.
    pub fn new(build: Build) -> Self {
        RunOptions {
            build,
            out: None,
            outputs: Vec::new(),
            only: None,
            resume: false,
            allow_mixed: false,
            allow_dirty: false,
            progress: false,
            command: String::new(),
            keep_profiles: false,
            require_gpu: false,
            stop: None,
            devices: None,
            flags: Vec::new(),
        }
    }
}

/// What a finished experiment produced.
pub struct Outcome {
    /// Every row of the output, resumed ones included.
    pub rows: Vec<RunRow>,
    /// The last profile of each GPU configuration, as (study, run, profile),
    /// when asked for.
    pub profiles: Vec<(String, u32, GpuProfile)>,
    /// The manifest as written.
    pub manifest: Manifest,
}

impl Outcome {
    /// True when a study failed its film check.
    pub fn failed(&self) -> bool {
        self.manifest.study.iter().any(|s| s.status.starts_with("failed"))
    }

    /// True when the run was stopped before its end (`--resume` continues it).
    pub fn interrupted(&self) -> bool {
        self.manifest.study.iter().any(|s| s.status.starts_with(INTERRUPTED))
    }
}

/// Runs `config` (all studies, or `--only` one). The manifest is written
/// whatever ends the runs; an error that ended them is returned after it.
pub fn run(config: &Config, opts: &RunOptions) -> anyhow::Result<Outcome> {
    let meta = Provenance::collect(opts.build);
    let (plan, checked) = check(config, opts, &meta)?;
    let mut resumed = output::prepare(
        opts.out.as_deref(),
        &opts.outputs,
        resume_policy(opts),
        config,
        &checked,
        &meta,
    )?;
    let (gpus, no_gpu) = open_gpus(&plan, opts.require_gpu, opts.devices.as_ref())?;
    let gpu = gpus.first();
    let files = opts.out.as_deref().map(OutFiles::in_folder);
    let mut manifest = start_manifest(config, opts, &meta, &gpus, &plan, &checked, resumed.manifest.take())?;
    write_manifest(&manifest, files.as_ref())?;

    let writer = RowWriter::start(files.as_ref(), &resumed.rows)?;
    let progress = Progress::new(&plan, &resumed, opts.progress)?;
    let kept_renders = opts.out.as_deref().map(KeptRenders::in_folder);
    let runs = Runs {
        origin: Origin {
            experiment: &config.name,
            meta: &meta,
            gpu,
        },
        no_gpu: no_gpu.as_deref(),
        resumed: &resumed,
        writer: &writer,
        progress: &progress,
        stop: opts.stop,
        kept_renders: kept_renders.as_ref(),
        keep_profiles: opts.keep_profiles,
        references: &checked.references,
        team: &gpus,
    };
    let (alone, together) = team::phases(&plan);
    let (ending, mut tally) = match (gpus.len(), &opts.devices) {
        (2.., Some(_)) => spread::all(&runs, &alone, &gpus),
        _ => runs.all(&alone),
    };
    let ending = match ending {
        Ending::Complete => {
            let (ending, more) = runs.all(&together);
            tally.merge(more);
            ending
        }
        cut => cut,
    };
    progress.finish();
    let written = writer.finish()?;

    manifest::finish(&mut manifest, config, &ending, &tally, &written, &resumed.rows);
    write_manifest(&manifest, files.as_ref())?;
    if let Ending::Failed(e) = ending {
        return Err(e);
    }
    written.result?;
    Ok(Outcome {
        rows: written.rows,
        profiles: tally.profiles,
        manifest,
    })
}

/// The studies to run, with their planned configurations.
pub type StudiesPlanned<'c> = Vec<(&'c Study, Vec<PlannedRun>)>;

/// Every check a run of `config` makes before its first render, changing
/// nothing, in the order the run makes them: the study asked for exists,
/// the flags given concern a planned back end, the GPUs `--devices` names
/// are there (`gpu_ordinals`), every scene loads and every film fits
/// (`preflight::check`), the output folder takes the run
/// ([`output::check`]) and the binary may make results ([`check_clean`]).
/// [`run`] and `--dry-run` both go through here, so that a dry run passes
/// exactly the plans a run starts.
pub fn check<'c>(
    config: &'c Config,
    opts: &RunOptions,
    meta: &Provenance,
) -> anyhow::Result<(StudiesPlanned<'c>, preflight::Checked)> {
    let plan = plan(config, opts.only.as_deref())?;
    check_plan_flags(&plan, opts)?;
    gpu_ordinals(&plan, opts.devices.as_ref())?;
    let checked = preflight::check(&plan)?;
    output::check(
        opts.out.as_deref(),
        &opts.outputs,
        resume_policy(opts),
        config,
        &checked,
        meta,
    )?;
    check_clean(meta, opts.allow_dirty)?;
    if opts.out.is_some() {
        check_own_kernels()?;
    }
    Ok((plan, checked))
}

/// Refuses a flag of `opts` that every back end `plan` runs would ignore
/// (MPI ranks plan and check through here too).
pub fn check_plan_flags(plan: &StudiesPlanned, opts: &RunOptions) -> anyhow::Result<()> {
    check_flags(&opts.flags, &planned_backends(plan)).map_err(anyhow::Error::msg)
}

/// How `opts` treats an output folder written to already.
pub fn resume_policy(opts: &RunOptions) -> ResumePolicy {
    ResumePolicy {
        resume: opts.resume,
        allow_mixed: opts.allow_mixed,
    }
}

/// The back ends `plan` runs, each once, in the order they first appear.
fn planned_backends(plan: &[(&Study, Vec<PlannedRun>)]) -> Vec<BackendKind> {
    let mut backends = Vec::new();
    for run in plan.iter().flat_map(|(_, runs)| runs) {
        if !backends.contains(&run.spec.backend) {
            backends.push(run.spec.backend);
        }
    }
    backends
}

/// The manifest of a run starting now ([`manifest::begin`]), with the
/// fingerprint of every file its runs read.
pub(crate) fn start_manifest(
    config: &Config,
    opts: &RunOptions,
    meta: &Provenance,
    gpus: &[Gpu],
    plan: &[(&Study, Vec<PlannedRun>)],
    checked: &preflight::Checked,
    earlier: Option<Manifest>,
) -> anyhow::Result<Manifest> {
    let mut manifest = manifest::begin(config, &opts.command, meta, gpus, plan, earlier, opts.allow_dirty);
    manifest.input = checked
        .inputs
        .iter()
        .map(|p| ManifestInput::of(p))
        .collect::<anyhow::Result<_>>()?;
    Ok(manifest)
}

/// The ordinals of the GPUs to open when a GPU run is planned (`None`
/// when none is): those `devices` names, or GPU 0 (GPUs 0 to N−1 where a
/// run renders on N together). `--devices` naming a GPU that is not there,
/// or with none usable, and too few GPUs for a run of several are errors.
/// The run and `--dry-run` both make this check ([`check`]), before
/// anything is written.
pub(crate) fn gpu_ordinals(
    plan: &[(&Study, Vec<PlannedRun>)],
    devices: Option<&Devices>,
) -> anyhow::Result<Option<Vec<usize>>> {
    if !plan.iter().flat_map(|(_, runs)| runs).any(|r| r.spec.backend.is_gpu()) {
        return Ok(None);
    }
    let ordinals = match (devices, team::most_gpus(plan).0) {
        (None, 1) => vec![0],
        // Without a usable GPU, opening GPU 0 says why.
        (None, n) => match Gpu::count() {
            Ok(present) => {
                team::check_enough(plan, present, "this host")?;
                (0..n as usize).collect()
            }
            Err(_) => vec![0],
        },
        (Some(devices), _) => {
            let present =
                Gpu::count().context("--devices picks the GPUs of the GPU runs, and none can be used here")?;
            let ordinals = devices.ordinals(present).map_err(anyhow::Error::msg)?;
            team::check_enough(plan, ordinals.len(), "--devices")?;
            ordinals
        }
    };
    Ok(Some(ordinals))
}

/// The GPUs when a GPU run is planned ([`gpu_ordinals`]), or why the GPU
/// runs are skipped (an error instead with `require_gpu`, or where
/// `--devices` named GPUs).
pub(crate) fn open_gpus(
    plan: &[(&Study, Vec<PlannedRun>)],
    require_gpu: bool,
    devices: Option<&Devices>,
) -> anyhow::Result<(Vec<Gpu>, Option<String>)> {
    let Some(ordinals) = gpu_ordinals(plan, devices)? else {
        return Ok((Vec::new(), None));
    };
    match ordinals.into_iter().map(Gpu::open).collect::<Result<Vec<_>, _>>() {
        Ok(gpus) => Ok((gpus, None)),
        Err(e) if require_gpu => {
            Err(anyhow::Error::new(e)
                .context("the GPU back ends need a GPU; --backends cpu,cpu-serial measures the CPU"))
        }
        Err(e) if devices.is_some() => Err(anyhow::Error::new(e).context("--devices: opening the GPUs")),
        Err(e) => {
            let gpu_runs = plan
                .iter()
                .flat_map(|(_, runs)| runs)
                .filter(|r| r.spec.backend.is_gpu())
                .count();
            let note = format!("no usable GPU ({e}); the {gpu_runs} GPU configurations are skipped");
            eprintln!("wavepath: {note}; the CPU runs go ahead");
            Ok((Vec::new(), Some(note)))
        }
    }
}

/// Writes the manifest into the output folder, if there is one.
pub(crate) fn write_manifest(manifest: &Manifest, files: Option<&OutFiles>) -> anyhow::Result<()> {
    match files {
        Some(f) => manifest.write(&f.manifest),
        None => Ok(()),
    }
}

/// Refuses kernels from outside the binary (`WAVEPATH_PTX`) for a run that
/// writes a results folder: its rows must name the commit that produced
/// them. (`render`, `verify` and `bench` take such kernels, for probes.)
pub fn check_own_kernels() -> anyhow::Result<()> {
    if let Some(file) = std::env::var_os("WAVEPATH_PTX").filter(|v| !v.is_empty()) {
        anyhow::bail!(
            "WAVEPATH_PTX={} replaces the binary's kernels, so an experiment's results could not be traced to \
             a commit: unset it (`render`, `verify` and `bench` take it, for probes)",
            std::path::Path::new(&file).display()
        );
    }
    Ok(())
}

/// Refuses a binary built from uncommitted changes unless `allow_dirty`:
/// results must name the commit that produced them.
pub fn check_clean(meta: &Provenance, allow_dirty: bool) -> anyhow::Result<()> {
    if meta.dirty() && !allow_dirty {
        anyhow::bail!(
            "this binary was built from commit {} with uncommitted changes, so its results could not be \
             traced to a commit: commit first, or pass --allow-dirty (the manifest and report then say so)",
            meta.commit_hash()
        );
    }
    Ok(())
}
