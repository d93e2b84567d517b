//! Runs an experiment: the plan, progress with an ETA, one GPU context and one
//! scene load and upload per distinct scene, rows appended and flushed as they
//! finish, resume, and the identical-film check.
//!
//! Rows go to a writer thread, which hashes each film, checks it against the
//! other runs that must render the same image, and appends the row. The GPU
//! goes on to the next render meanwhile, so the runner adds almost nothing to
//! a row's time (`runner_ms`, summarised in the manifest).

pub use super::plan::{dry_run, plan};

use super::config::{Config, PlannedRun, Study};
use super::films::{FilmChecks, film_hash};
use super::plan::estimate_s;
use super::records::{
    CsvAppender, KernelRow, Manifest, ManifestBuild, ManifestDevice, ManifestExperiment, ManifestHost, ManifestStudy,
    RunRow, Skipped, read_rows,
};
use super::rows::{Origin, Rendered, driver, kernel_rows, overhead, run_row};
use super::scenes::SceneCache;
use crate::backend::gpu::profile::GpuProfile;
use crate::backend::gpu::{Gpu, GpuError};
use crate::render::{Renderer, params_for};
use crate::system::provenance::{Provenance, now};
use anyhow::{Context, bail};
use device::film::FixedRgb;
use device::scene::RenderView;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// The output folder; `None` keeps the rows in memory only (`bench`).
    pub out: Option<PathBuf>,
    /// Run only this study.
    pub only: Option<String>,
    /// Continue an interrupted run in `out`, skipping its finished rows.
    pub resume: bool,
    /// Let a resumed run mix rows from another config or commit.
    pub allow_mixed: bool,
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

/// The status of a study a stop request cut short.
const INTERRUPTED: &str = "interrupted";

/// One finished render on its way to the files. Its film and profile are
/// moved, not copied: hashing the film and summing a profile of many
/// thousand launches happen on the writer thread, off the GPU's path.
struct Finished {
    row: RunRow,
    profile: Option<GpuProfile>,
    film: Vec<FixedRgb>,
}

/// The writer thread's state.
struct Writer {
    runs: Option<CsvAppender>,
    kernels: Option<CsvAppender>,
    rows: Vec<RunRow>,
    checks: Arc<Mutex<FilmChecks>>,
}

impl Writer {
    fn write(&mut self, mut f: Finished) -> anyhow::Result<()> {
        f.row.film_hash = film_hash(&f.film);
        self.checks.lock().expect("film checks poisoned").check(&f.row);
        if let Some(w) = &mut self.runs {
            w.append(&f.row)?;
        }
        if let Some(w) = &mut self.kernels {
            for k in kernel_rows(&f.row, f.profile.as_ref()) {
                w.append(&k)?;
            }
        }
        self.rows.push(f.row);
        Ok(())
    }
}

/// The experiment's output files.
struct OutFiles {
    runs: PathBuf,
    kernels: PathBuf,
    manifest: PathBuf,
}

impl OutFiles {
    fn in_folder(dir: &Path) -> Self {
        OutFiles {
            runs: dir.join("runs.csv"),
            kernels: dir.join("kernels.csv"),
            manifest: dir.join("manifest.toml"),
        }
    }
}

/// Checks the output folder before the first sample and returns the rows and
/// manifest of an interrupted run to resume.
fn prepare_output(
    config: &Config,
    opts: &RunOptions,
    meta: &Provenance,
) -> anyhow::Result<(Vec<RunRow>, Option<Manifest>)> {
    let Some(dir) = &opts.out else {
        return Ok((Vec::new(), None));
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
        return Ok((Vec::new(), None));
    }
    if !opts.resume {
        bail!(
            "{}: an experiment has written here already; pass --resume to continue it, or choose another --out",
            files.runs.display()
        );
    }
    let manifest = Manifest::read(&files.manifest)?;
    if !opts.allow_mixed {
        if manifest.experiment.config_hash != config.fingerprint() {
            bail!(
                "{}: these rows came from a different config (fingerprint {}, now {}); \
                 resume with the same config, or pass --allow-mixed to mix them",
                files.manifest.display(),
                manifest.experiment.config_hash,
                config.fingerprint()
            );
        }
        if manifest.build.commit != meta.commit_hash() || manifest.build.dirty != meta.dirty() {
            bail!(
                "{}: these rows came from commit {}{}, this binary is {}; pass --allow-mixed to mix them",
                files.manifest.display(),
                manifest.build.commit,
                if manifest.build.dirty { " (dirty)" } else { "" },
                meta.commit
            );
        }
    }
    Ok((read_rows(&files.runs)?, Some(manifest)))
}

/// Runs `config` (all studies, or `--only` one).
pub fn run(config: &Config, opts: &RunOptions) -> anyhow::Result<Outcome> {
    let plan = plan(config, opts.only.as_deref())?;
    let meta = Provenance::collect();
    let (resumed, earlier) = prepare_output(config, opts, &meta)?;
    let done: HashSet<(String, u32, u32)> = resumed.iter().map(|r| (r.study.clone(), r.run, r.repetition)).collect();

    let gpu_runs = plan
        .iter()
        .flat_map(|(_, runs)| runs)
        .filter(|r| r.spec.backend.is_gpu())
        .count();
    let (gpu, no_gpu) = match gpu_runs {
        0 => (None, None),
        n => match Gpu::open(0) {
            Ok(g) => (Some(g), None),
            Err(e) if opts.require_gpu => {
                return Err(anyhow::Error::new(e)
                    .context("the GPU back ends need a GPU; --backends cpu,cpu-serial measures the CPU"));
            }
            Err(e) => {
                let note = format!("no usable GPU ({e}); the {n} GPU configurations are skipped");
                eprintln!("wavepath: {note}; the CPU runs go ahead");
                (None, Some(note))
            }
        },
    };

    let mut manifest = Manifest {
        experiment: ManifestExperiment {
            name: config.name.clone(),
            description: config.description.clone(),
            config: config.path.display().to_string(),
            config_hash: config.fingerprint(),
            command: opts.command.clone(),
            started: now(),
            resumed: Vec::new(),
            finished: String::new(),
        },
        host: ManifestHost {
            cpu: meta.cpu_model.clone(),
            cpu_threads: meta.cpu_threads,
        },
        device: gpu.as_ref().map(|g| {
            let i = g.info();
            ManifestDevice {
                name: i.name.clone(),
                driver: driver(g),
                compute_capability: format!("{}.{}", i.compute_capability.0, i.compute_capability.1),
                multiprocessors: i.multiprocessors,
                memory_gib: i.memory_bytes as f64 / (1u64 << 30) as f64,
            }
        }),
        build: ManifestBuild {
            version: meta.version.clone(),
            commit: meta.commit_hash().to_string(),
            dirty: meta.dirty(),
        },
        study: plan
            .iter()
            .map(|(s, runs)| ManifestStudy {
                name: s.name.clone(),
                description: s.description.clone(),
                note: s.note.clone(),
                baseline: s.baseline.map(|b| b.label().to_string()),
                backends: s.backends.iter().map(|b| b.label().to_string()).collect(),
                scenes: s.scenes.iter().map(|p| p.display().to_string()).collect(),
                swept: s.swept(),
                runs_planned: runs.len(),
                status: "running".into(),
                ..Default::default()
            })
            .collect(),
        config_text: config.text.clone(),
        ..Default::default()
    };
    let files = opts.out.as_deref().map(OutFiles::in_folder);
    if let Some(previous) = earlier {
        // A resumed run keeps the first start and lists each resumption.
        manifest.experiment.resumed = previous.experiment.resumed;
        manifest.experiment.resumed.push(manifest.experiment.started.clone());
        manifest.experiment.started = previous.experiment.started;
    }
    if let Some(f) = &files {
        manifest.write(&f.manifest)?;
    }

    let checks = Arc::new(Mutex::new(FilmChecks::default()));
    for r in &resumed {
        checks.lock().expect("film checks poisoned").check(r);
    }
    let mut writer = Writer {
        runs: files
            .as_ref()
            .map(|f| CsvAppender::open::<RunRow>(&f.runs))
            .transpose()?,
        kernels: files
            .as_ref()
            .map(|f| CsvAppender::open::<KernelRow>(&f.kernels))
            .transpose()?,
        rows: resumed.clone(),
        checks: checks.clone(),
    };
    let (send, receive) = mpsc::channel::<Finished>();
    let writer_thread = std::thread::spawn(move || -> (Writer, anyhow::Result<()>) {
        let result = receive.iter().try_for_each(|f| writer.write(f));
        (writer, result)
    });

    let context = RunContext {
        origin: Origin {
            experiment: &config.name,
            meta: &meta,
            gpu: gpu.as_ref(),
        },
        send,
        checks: checks.clone(),
        stop: opts.stop,
    };
    let mut state = RunState {
        scenes: SceneCache::default(),
        skipped: Vec::new(),
        profiles: Vec::new(),
        keep_profiles: opts.keep_profiles,
        stopped_in: None,
    };
    let bar = progress_bar(&plan, &done, opts.progress)?;
    let result = (|| -> anyhow::Result<()> {
        for (study, runs) in &plan {
            for run in runs {
                context.run_one(study, run, &done, no_gpu.as_deref(), &bar, &mut state)?;
                if context.stop_requested() {
                    state.stopped_in = Some(study.name.clone());
                    return Ok(());
                }
            }
        }
        Ok(())
    })();
    bar.finish_and_clear();
    drop(context);
    let (writer, written) = writer_thread
        .join()
        .map_err(|_| anyhow::anyhow!("the row writer panicked"))?;

    let checks = checks.lock().expect("film checks poisoned");
    let stopped_at = state
        .stopped_in
        .as_ref()
        .and_then(|name| manifest.study.iter().position(|s| &s.name == name));
    for (i, s) in manifest.study.iter_mut().enumerate() {
        let rows: Vec<&RunRow> = writer.rows.iter().filter(|r| r.study == s.name).collect();
        s.rows = rows.len();
        s.resumed_rows = resumed.iter().filter(|r| r.study == s.name).count();
        s.film_check = checks.outcome(&s.name);
        s.status = match (&result, checks.mismatches.get(&s.name)) {
            (_, Some(m)) => format!("failed: film check: {m}"),
            (Err(e), _) => format!("not finished: {e:#}"),
            (Ok(()), None) if stopped_at.is_some_and(|at| i >= at) => {
                format!("{INTERRUPTED} by a stop request; --resume continues it")
            }
            (Ok(()), None) if s.rows == 0 && state.skipped.iter().any(|k| k.study == s.name) => {
                "skipped: none of its runs could be made (see the skipped runs)".into()
            }
            (Ok(()), None) if state.skipped.iter().any(|k| k.study == s.name) => "complete, with skipped runs".into(),
            (Ok(()), None) => "complete".into(),
        };
        s.published = config
            .studies
            .iter()
            .find(|c| c.name == s.name)
            .map(|c| c.published.clone())
            .unwrap_or_default();
    }
    manifest.skipped = state.skipped;
    manifest.overhead = overhead(&writer.rows);
    manifest.experiment.finished = now();
    if let Some(f) = &files {
        manifest.write(&f.manifest)?;
    }
    result?;
    written?;
    Ok(Outcome {
        rows: writer.rows,
        profiles: state.profiles,
        manifest,
    })
}

/// A bar over the estimated time of the renders still to make.
fn progress_bar(
    plan: &[(&Study, Vec<PlannedRun>)],
    done: &HashSet<(String, u32, u32)>,
    visible: bool,
) -> anyhow::Result<ProgressBar> {
    let total: f64 = plan
        .iter()
        .flat_map(|(s, runs)| runs.iter().map(move |r| (s, r)))
        .map(|(s, r)| {
            let left = (0..s.repeat)
                .filter(|&k| !done.contains(&(s.name.clone(), r.index, k)))
                .count() as u32;
            estimate_s(&r.spec) * if left > 0 { (left + s.warmup) as f64 } else { 0.0 }
        })
        .sum();
    let bar = if visible {
        ProgressBar::new((total * 1e3) as u64)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% eta {eta} {msg}")
            .context("progress bar template")?,
    );
    Ok(bar)
}

/// What every run shares.
struct RunContext<'a> {
    origin: Origin<'a>,
    send: mpsc::Sender<Finished>,
    checks: Arc<Mutex<FilmChecks>>,
    stop: Option<&'static AtomicBool>,
}

/// What the runs accumulate.
struct RunState {
    scenes: SceneCache,
    skipped: Vec<Skipped>,
    profiles: Vec<(String, u32, GpuProfile)>,
    keep_profiles: bool,
    /// The study a stop request ended the run in.
    stopped_in: Option<String>,
}

impl RunContext<'_> {
    /// True once a stop was requested.
    fn stop_requested(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst))
    }

    /// Warms up and times one configuration's remaining repetitions.
    fn run_one(
        &self,
        study: &Study,
        run: &PlannedRun,
        done: &HashSet<(String, u32, u32)>,
        no_gpu: Option<&str>,
        bar: &ProgressBar,
        state: &mut RunState,
    ) -> anyhow::Result<()> {
        let reps: Vec<u32> = (0..study.repeat)
            .filter(|&k| !done.contains(&(study.name.clone(), run.index, k)))
            .collect();
        if reps.is_empty() {
            return Ok(());
        }
        let skip = |reason: String| Skipped {
            study: study.name.clone(),
            config: run.label.clone(),
            reason,
        };
        if let Some(m) = self
            .checks
            .lock()
            .expect("film checks poisoned")
            .mismatches
            .get(&study.name)
        {
            state
                .skipped
                .push(skip(format!("the study failed its film check: {m}")));
            return Ok(());
        }
        let spec = &run.spec;
        if let (true, Some(note)) = (spec.backend.is_gpu(), no_gpu) {
            state.skipped.push(skip(note.to_string()));
            return Ok(());
        }
        let estimate = (estimate_s(spec) * 1e3) as u64;
        let what = || format!("study `{}`, run {} ({})", study.name, run.index, run.label);
        let loaded = state
            .scenes
            .get(&spec.scene, &spec.scene_fields, spec.overrides.accel)
            .with_context(what)?;
        let mut loaded = loaded.borrow_mut();
        if let (true, Some(gpu)) = (spec.backend.is_gpu(), self.origin.gpu) {
            loaded.upload(gpu).with_context(what)?;
        }
        let (params, asked_spp) = params_for(&loaded.scene, &spec.overrides, RenderView::Radiance);
        let spp = spec.spp_cap.map_or(asked_spp, |cap| cap.min(asked_spp));
        let renderer = Renderer::on(spec.backend, spec.options, self.origin.gpu)?;
        let uploaded = loaded.device.as_ref().filter(|_| spec.backend.is_gpu());
        // A configuration the GPU cannot launch (a block too large for the
        // kernel's registers) or hold (a pool too large for its memory) is
        // skipped with the reason; the GPU still works for the next one.
        let render = || match renderer.render_uploaded(&loaded.scene, uploaded, params, spp, &|_| {}) {
            Err(e) => match e.downcast_ref::<GpuError>() {
                Some(GpuError::Config { .. } | GpuError::OutOfMemory { .. }) => Ok(Err(e.to_string())),
                _ => Err(e).with_context(what),
            },
            Ok(out) => Ok(Ok(out)),
        };
        for _ in 0..study.warmup {
            if self.stop_requested() {
                return Ok(());
            }
            if let Err(reason) = render()? {
                state.skipped.push(skip(reason));
                return Ok(());
            }
            bar.inc(estimate);
        }
        let mut times = Vec::new();
        for repetition in reps {
            if self.stop_requested() {
                break;
            }
            let start = Instant::now();
            let out = match render()? {
                Ok(out) => out,
                Err(reason) => {
                    state.skipped.push(skip(reason));
                    return Ok(());
                }
            };
            let total_ms = start.elapsed().as_secs_f64() * 1e3;
            let recorded = Instant::now();
            times.push(out.elapsed.as_secs_f64() * 1e3);
            let rendered = Rendered {
                study,
                run,
                repetition,
                scene: &loaded.scene,
                params,
                spp,
                report_spp: asked_spp,
                total_ms,
            };
            let mut row = run_row(&self.origin, &rendered, &out);
            if state.keep_profiles
                && let Some(p) = &out.gpu
            {
                state
                    .profiles
                    .retain(|(s, r, _)| !(*s == study.name && *r == run.index));
                state.profiles.push((study.name.clone(), run.index, p.clone()));
            }
            row.runner_ms = recorded.elapsed().as_secs_f64() * 1e3;
            self.send
                .send(Finished {
                    row,
                    profile: out.gpu,
                    film: out.film,
                })
                .map_err(|_| anyhow::anyhow!("the row writer stopped (see the error after this one)"))?;
            bar.inc(estimate);
        }
        let Some(median) = super::report::stats::median(&times) else {
            return Ok(());
        };
        let line = format!(
            "{} | {}: median {median:.3} ms over {} runs",
            study.name,
            run.label,
            times.len()
        );
        if bar.is_hidden() {
            eprintln!("{line}");
        } else {
            bar.println(line);
        }
        Ok(())
    }
}
