//! Runs an experiment: the plan, progress with an ETA, one GPU context and one
//! scene load and upload per distinct scene, rows appended and flushed as they
//! finish, resume, and the identical-film check.
//!
//! Rows go to a writer thread, which hashes each film, checks it against the
//! other runs that must render the same image, and appends the row. The GPU
//! goes on to the next render meanwhile, so the runner adds almost nothing to
//! a row's time (`runner_ms`, summarised in the manifest).

use super::config::{Config, PlannedRun, RunSpec, Study, describe, scene_stem};
use super::records::{
    CsvAppender, KernelRow, Manifest, ManifestBuild, ManifestDevice, ManifestExperiment, ManifestHost, ManifestStudy,
    Overhead, RunRow, Skipped, read_rows,
};
use super::scenes::{SceneCache, describe_fields};
use crate::backend::gpu::profile::GpuProfile;
use crate::backend::gpu::wavefront::compaction_label;
use crate::backend::gpu::{Gpu, GpuError};
use crate::backend::{BackendKind, RenderOutput};
use crate::provenance::{Provenance, now};
use crate::render::{Renderer, params_for};
use anyhow::{Context, bail};
use device::film::FixedRgb;
use device::scene::RenderView;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
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
}

/// The studies to run, with their planned configurations.
pub fn plan<'c>(config: &'c Config, only: Option<&str>) -> anyhow::Result<Vec<(&'c Study, Vec<PlannedRun>)>> {
    if let Some(name) = only
        && !config.studies.iter().any(|s| s.name == name)
    {
        let names: Vec<&str> = config.studies.iter().map(|s| s.name.as_str()).collect();
        bail!(
            "{}: no study `{name}`; the studies are {}",
            config.path.display(),
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

/// Nominal throughputs of the time estimate: rays per second.
const CPU_RAYS_PER_S_PER_THREAD: f64 = 5e6;
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
        BackendKind::GpuMega | BackendKind::GpuWave => GPU_RAYS_PER_S,
    }
}

/// The `--dry-run` text: runs per study and a rough time.
pub fn dry_run(config: &Config, only: Option<&str>) -> anyhow::Result<String> {
    let mut s = format!(
        "experiment `{}` ({}): {}\n",
        config.name,
        config.path.display(),
        config.description
    );
    let mut total = 0.0;
    for (study, runs) in plan(config, only)? {
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
        for r in &runs {
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
    Ok(s)
}

fn duration(s: f64) -> String {
    match s {
        s if s < 60.0 => format!("{s:.1} s"),
        s if s < 3600.0 => format!("{:.1} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

/// Which runs must render the same image: same study, scene, replaced
/// fields, size, spp, depth, seed and structure.
fn film_group(r: &RunRow) -> String {
    format!(
        "{}|{}|{}|{}x{}|{}|{}|{}|{}",
        r.study, r.scene, r.scene_overrides, r.width, r.height, r.spp, r.max_depth, r.seed, r.accel
    )
}

/// A film's fingerprint: FNV-1a over its 64-bit words.
fn film_hash(film: &[FixedRgb]) -> String {
    let h = film
        .iter()
        .flat_map(|p| [p.r, p.g, p.b])
        .fold(0xcbf2_9ce4_8422_2325u64, |h, w| (h ^ w).wrapping_mul(0x0100_0000_01b3));
    format!("{h:016x}")
}

/// Film groups: the first hash of each, its label, and how many rows agreed.
#[derive(Default)]
struct FilmChecks {
    groups: HashMap<String, (String, String, usize)>,
    mismatches: HashMap<String, String>,
}

impl FilmChecks {
    fn check(&mut self, row: &RunRow) {
        let who = format!("{} (run {} rep {})", row.config, row.run, row.repetition);
        match self.groups.get_mut(&film_group(row)) {
            None => {
                self.groups.insert(film_group(row), (row.film_hash.clone(), who, 1));
            }
            Some((hash, _, n)) if *hash == row.film_hash => *n += 1,
            Some((_, first, _)) => {
                let msg = format!("{who} rendered a different image than {first}");
                self.mismatches.entry(row.study.clone()).or_insert(msg);
            }
        }
    }

    fn outcome(&self, study: &str) -> String {
        if let Some(m) = self.mismatches.get(study) {
            return format!("MISMATCH: {m}");
        }
        let prefix = format!("{study}|");
        let compared = self
            .groups
            .iter()
            .filter(|(k, (_, _, n))| k.starts_with(&prefix) && *n > 1)
            .count();
        match compared {
            0 => "not checked: no two runs render the same image".into(),
            1 => "identical: 1 group of runs that render the same image".into(),
            n => format!("identical: {n} groups of runs that render the same image"),
        }
    }
}

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
        config,
        meta: &meta,
        gpu: gpu.as_ref(),
        send,
        checks: checks.clone(),
    };
    let mut state = RunState {
        scenes: SceneCache::default(),
        skipped: Vec::new(),
        profiles: Vec::new(),
        keep_profiles: opts.keep_profiles,
    };
    let bar = progress_bar(&plan, &done, opts.progress)?;
    let result = (|| -> anyhow::Result<()> {
        for (study, runs) in &plan {
            for run in runs {
                context.run_one(study, run, &done, no_gpu.as_deref(), &bar, &mut state)?;
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
    for s in &mut manifest.study {
        let rows: Vec<&RunRow> = writer.rows.iter().filter(|r| r.study == s.name).collect();
        s.rows = rows.len();
        s.resumed_rows = resumed.iter().filter(|r| r.study == s.name).count();
        s.film_check = checks.outcome(&s.name);
        s.status = match (&result, checks.mismatches.get(&s.name)) {
            (_, Some(m)) => format!("failed: film check: {m}"),
            (Err(e), _) => format!("not finished: {e:#}"),
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

/// The runner's time per GPU row against the render call's.
fn overhead(rows: &[RunRow]) -> Option<Overhead> {
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
fn driver(gpu: &Gpu) -> String {
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
    config: &'a Config,
    meta: &'a Provenance,
    gpu: Option<&'a Gpu>,
    send: mpsc::Sender<Finished>,
    checks: Arc<Mutex<FilmChecks>>,
}

/// What the runs accumulate.
struct RunState {
    scenes: SceneCache,
    skipped: Vec<Skipped>,
    profiles: Vec<(String, u32, GpuProfile)>,
    keep_profiles: bool,
}

impl RunContext<'_> {
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
        if let (true, Some(gpu)) = (spec.backend.is_gpu(), self.gpu) {
            loaded.upload(gpu).with_context(what)?;
        }
        let (params, asked_spp) = params_for(&loaded.scene, &spec.overrides, RenderView::Radiance);
        let spp = spec.spp_cap.map_or(asked_spp, |cap| cap.min(asked_spp));
        let renderer = Renderer::on(spec.backend, spec.options, self.gpu)?;
        let uploaded = loaded.device.as_ref().filter(|_| spec.backend.is_gpu());
        // A configuration the GPU cannot launch (a block too large for the
        // kernel's registers) is skipped with the driver's reason.
        let render = || match renderer.render_uploaded(&loaded.scene, uploaded, params, spp, &|_| {}) {
            Err(e) => match e.downcast_ref::<GpuError>() {
                Some(GpuError::Config { .. }) => Ok(Err(e.to_string())),
                _ => Err(e).with_context(what),
            },
            Ok(out) => Ok(Ok(out)),
        };
        for _ in 0..study.warmup {
            if let Err(reason) = render()? {
                state.skipped.push(skip(reason));
                return Ok(());
            }
            bar.inc(estimate);
        }
        let mut times = Vec::new();
        for repetition in reps {
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
            let mut row = self.row(&rendered, &out);
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
        times.sort_by(f64::total_cmp);
        let line = format!(
            "{} | {}: median {:.3} ms over {} runs",
            study.name,
            run.label,
            times[times.len() / 2],
            times.len()
        );
        if bar.is_hidden() {
            eprintln!("{line}");
        } else {
            bar.println(line);
        }
        Ok(())
    }

    /// The row of one timed render.
    fn row(&self, r: &Rendered, out: &RenderOutput) -> RunRow {
        let spec = &r.run.spec;
        let (mega, wave) = (&spec.options.megakernel, &spec.options.wavefront);
        let is = |b: BackendKind| spec.backend == b;
        let gpu = out.gpu.as_ref();
        // The tracing kernel: the megakernel, or the wavefront's extend.
        let kernel = gpu.and_then(|g| {
            g.kernels
                .iter()
                .find(|k| k.name.contains("mega") || k.name.contains("extend"))
        });
        let wall_ms = out.elapsed.as_secs_f64() * 1e3;
        let wall_s = out.elapsed.as_secs_f64().max(1e-9);
        let report_spp = r.report_spp;
        let accel = &r.scene.accel_settings;
        let info = self.gpu.map(|g| g.info());
        RunRow {
            experiment: self.config.name.clone(),
            study: r.study.name.clone(),
            run: r.run.index,
            config: r.run.label.clone(),
            repetition: r.repetition,
            scene: spec.scene.display().to_string(),
            scene_name: scene_stem(&spec.scene),
            scene_overrides: describe_fields(&spec.scene_fields),
            primitives: r.scene.geometry.primitive_count() as u64,
            backend: spec.backend.label().into(),
            width: r.params.width,
            height: r.params.height,
            spp: r.spp,
            max_depth: r.params.max_depth,
            seed: r.params.seed,
            report_spp,
            accel: accel.choice.label().into(),
            accel_settings: match accel.choice {
                crate::accel::AccelChoice::None => String::new(),
                crate::accel::AccelChoice::Bvh => format!("{:?}", accel.bvh),
                crate::accel::AccelChoice::Kdtree => format!("{:?}", accel.kd),
            },
            accel_build_ms: r.scene.accel.stats.build_ms,
            accel_nodes: r.scene.accel.stats.nodes,
            accel_bytes: r.scene.accel.stats.bytes,
            block: is(BackendKind::GpuMega).then(|| describe(&super::config::Value::Size(mega.block))),
            samples_per_launch: is(BackendKind::GpuMega).then_some(mega.samples_per_launch),
            tile: is(BackendKind::GpuMega).then(|| describe(&super::config::Value::Tile(mega.tile))),
            schedule: is(BackendKind::GpuWave).then(|| wave.schedule.label().into()),
            compaction: is(BackendKind::GpuWave).then(|| compaction_label(wave.compaction).into()),
            capacity: is(BackendKind::GpuWave).then(|| wave.capacity.label()),
            wave_block: is(BackendKind::GpuWave).then_some(wave.block),
            drain_below: is(BackendKind::GpuWave).then_some(wave.drain_below),
            threads: match spec.backend {
                BackendKind::CpuSerial => Some(1),
                BackendKind::Cpu => Some(crate::backend::cpu::Threads::Pool(spec.options.threads).count()),
                _ => None,
            },
            cpu_schedule: is(BackendKind::Cpu).then(|| spec.options.cpu_schedule.label().into()),
            count_divergence: spec.backend.is_gpu() && (mega.count_divergence || wave.count_divergence),
            wall_ms,
            scaled_wall_ms: wall_ms * report_spp as f64 / r.spp as f64,
            kernel_ms: gpu.map_or(0.0, |g| g.kernel_ms()),
            overhead_ms: gpu.map_or(0.0, |g| g.overhead_ms()),
            upload_ms: gpu.map_or(0.0, |g| g.upload_ms),
            readback_ms: gpu.map_or(0.0, |g| g.readback_ms),
            total_ms: r.total_ms,
            runner_ms: 0.0,
            launches: gpu.map_or(0, |g| g.launches.len()),
            rays: out.rays,
            rays_per_s: out.rays as f64 / wall_s,
            samples_per_s: r.params.width as f64 * r.params.height as f64 * r.spp as f64 / wall_s,
            registers: kernel.map(|k| k.registers),
            local_bytes: kernel.map(|k| k.local_bytes),
            occupancy: kernel.map(|k| k.occupancy),
            state_bytes: gpu.filter(|_| is(BackendKind::GpuWave)).map(|g| g.state_bytes),
            pool_capacity: gpu.filter(|_| is(BackendKind::GpuWave)).map(|g| g.pool_capacity),
            invalid_samples: out.invalid_samples,
            film_hash: String::new(),
            device: out.device.clone(),
            gpu: info.map_or_else(String::new, |i| i.name.clone()),
            driver: self.gpu.map_or_else(String::new, driver),
            compute_capability: info.map_or_else(String::new, |i| {
                format!("{}.{}", i.compute_capability.0, i.compute_capability.1)
            }),
            cpu: self.meta.cpu_model.clone(),
            cpu_threads: self.meta.cpu_threads,
            version: self.meta.version.clone(),
            commit: self.meta.commit_hash().to_string(),
            dirty: self.meta.dirty(),
            date: now(),
        }
    }
}

/// One timed render, for its row.
struct Rendered<'a> {
    study: &'a Study,
    run: &'a PlannedRun,
    repetition: u32,
    scene: &'a crate::scene::Scene,
    params: device::scene::RenderParams,
    spp: u32,
    report_spp: u32,
    total_ms: f64,
}

/// The per-kernel rows of a GPU render.
fn kernel_rows(row: &RunRow, profile: Option<&GpuProfile>) -> Vec<KernelRow> {
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
                kernel: t.kernel,
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
