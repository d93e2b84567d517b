//! `wavepath study run`: studies on a GPU machine, each
//! `experiments/NAME.toml` into a folder of the results (`NAME`, and
//! `NAME_COMMIT`, `NAME_gpusN`, `NAME_ranksN` beside it:
//! [`StudyFolderName`]).
//!
//! Each slot (one, or with `slots` above 1, GPU i alone and the i-th share
//! of the host's CPUs for slot i) first verifies every scene on both GPU
//! back ends against the CPU (`verify`): nothing is timed unless
//! every image is identical. Then it takes the next study no slot has
//! taken, runs it within what is left of the budget (a run cut short is
//! stopped as Ctrl-C stops it, and a later call resumes every folder that
//! has a manifest), then with each reference binary, then spread over GPUs
//! and MPI ranks, and packs the folders it made into its `studies.tgz`
//! after each run.

use super::folder::{FolderRun, SpreadOver, StudyFolderName, is_study_name};
use super::install::is_complete;
use super::{child, host, tarball, verify};
use crate::config;
use crate::records::Manifest;
use anyhow::{Context, bail};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The least budget a study run is given, in seconds: a study starts only
/// with 30 s of it left, after the scenes are verified.
pub const MIN_BUDGET_S: u64 = 60;

/// The budget unless one is given, in seconds (nine minutes).
pub const DEFAULT_BUDGET_S: u64 = 540;

/// The most budget, in seconds: a day is more than any study takes.
pub const MAX_BUDGET_S: u64 = 86_400;

/// The most slots, GPUs of a spread or MPI ranks.
pub const MAX_GPUS: u32 = 16;

/// The least of the budget left with which a run starts.
const MIN_START: Duration = Duration::from_secs(30);

/// The kernel cache the driver may fill (compiled kernels are reused by
/// every later run on the machine).
const CUDA_CACHE_BYTES: &str = "4294967296";

/// What a study run runs, and where.
#[derive(Clone, Debug)]
pub struct StudyRunOptions {
    /// `NAME` of each `experiments/NAME.toml` to run, in order.
    pub studies: Vec<String>,
    /// The time every run together may take.
    pub budget: Duration,
    /// Studies run this many at a time, each slot on a GPU of its own.
    pub slots: u32,
    /// Each study again over the first N GPUs, for each N.
    pub spread: Vec<u32>,
    /// Each study again over N MPI ranks of one GPU each, for each N.
    pub ranks: Vec<u32>,
    /// The binary that verifies, runs and reports the studies.
    pub binary: PathBuf,
    /// Binaries of other commits that run each study beside.
    pub references: Vec<PathBuf>,
    /// The MPI launcher (`LAUNCHER -n N BINARY ...`), for `ranks`.
    pub mpi_launcher: PathBuf,
    /// The binary built with MPI, for `ranks`.
    pub mpi_binary: PathBuf,
    /// The folder of the experiment configs.
    pub experiments: PathBuf,
    /// The folder of the scenes verified.
    pub scenes: PathBuf,
    /// The folder the study folders are written in.
    pub results: PathBuf,
    /// The folder of what the run returns: `studies.tgz`, `device.txt`,
    /// `verify.txt`, `studies.log` (per slot in `slotI/` with several).
    pub out: PathBuf,
}

/// A study as planned: its name and whether its runs split images over
/// GPUs themselves (a `gpus` above 1: it runs once, unspread).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedStudy {
    /// `NAME` of `experiments/NAME.toml`.
    pub name: String,
    /// A run of it renders one image on several GPUs.
    pub splits_images: bool,
}

impl PlannedStudy {
    /// The spreads the study runs in besides its own run: each of
    /// `--spread` and `--ranks`, or none where its runs split images
    /// themselves.
    pub fn spreads(&self, opts: &StudyRunOptions) -> Vec<SpreadOver> {
        if self.splits_images {
            return Vec::new();
        }
        let gpus = opts.spread.iter().map(|&n| SpreadOver::Gpus(n));
        gpus.chain(opts.ranks.iter().map(|&n| SpreadOver::Ranks(n))).collect()
    }
}

/// Checks every option and reads every config (with the lab's config
/// reader) before anything runs; the error names the option or the file.
pub fn plan(opts: &StudyRunOptions) -> anyhow::Result<Vec<PlannedStudy>> {
    if opts.studies.is_empty() {
        bail!("name at least one study (experiments/NAME.toml)");
    }
    if !(MIN_BUDGET_S..=MAX_BUDGET_S).contains(&opts.budget.as_secs()) {
        bail!(
            "--budget: {} s is not from {MIN_BUDGET_S} to {MAX_BUDGET_S}",
            opts.budget.as_secs()
        );
    }
    if !(1..=MAX_GPUS).contains(&opts.slots) {
        bail!("--slots: {} is not a number of GPUs from 1 to {MAX_GPUS}", opts.slots);
    }
    for (flag, counts) in [("--spread", &opts.spread), ("--ranks", &opts.ranks)] {
        for (i, &n) in counts.iter().enumerate() {
            if !(2..=MAX_GPUS).contains(&n) {
                bail!("{flag}: {n} is not a count from 2 to {MAX_GPUS}");
            }
            if counts[..i].contains(&n) {
                bail!("{flag}: {n} is named twice");
            }
        }
    }
    if spreads(opts) && opts.slots != 1 {
        bail!("--spread and --ranks spread a study over several GPUs of the host: they need --slots 1");
    }
    for reference in &opts.references {
        if !reference.is_file() {
            bail!("--reference: no file {}", reference.display());
        }
    }
    let mut planned: Vec<PlannedStudy> = Vec::new();
    for name in &opts.studies {
        if !is_study_name(name) {
            bail!("`{name}` is not a study's name (NAME of experiments/NAME.toml: letters, digits, `_` and `-`)");
        }
        if planned.iter().any(|p| p.name == *name) {
            bail!("{name} is named twice");
        }
        let path = opts.experiments.join(format!("{name}.toml"));
        if !path.is_file() {
            bail!("no {}", path.display());
        }
        let config = config::load(&path)?;
        planned.push(PlannedStudy {
            name: name.clone(),
            splits_images: config.studies.iter().any(|s| s.runs().iter().any(|r| r.spec.gpus > 1)),
        });
    }
    Ok(planned)
}

/// Whether the studies are run spread as well.
fn spreads(opts: &StudyRunOptions) -> bool {
    !opts.spread.is_empty() || !opts.ranks.is_empty()
}

/// The most GPUs a spread or the ranks need.
fn most_gpus_needed(opts: &StudyRunOptions) -> u32 {
    opts.spread.iter().chain(&opts.ranks).copied().max().unwrap_or(1)
}

/// Runs the studies; the error says why none could run (a host without the
/// GPUs asked for, a scene that does not verify).
pub fn run(opts: &StudyRunOptions) -> anyhow::Result<()> {
    let start = Instant::now();
    let planned = plan(opts)?;
    let need = most_gpus_needed(opts);
    if need > 1 {
        let gpus = host::gpu_count();
        if gpus < need as usize {
            bail!("spreading a study over {need} GPUs (--spread, --ranks) needs {need}; this host has {gpus}");
        }
    }
    for dir in [&opts.out, &opts.results] {
        std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot make it", dir.display()))?;
    }
    let next = AtomicUsize::new(0);
    let deadline = start + opts.budget;
    if opts.slots == 1 {
        let slot = StudySlot {
            out: opts.out.clone(),
            gpu: None,
            cpus: None,
        };
        return slot.run(opts, &planned, &next, deadline);
    }
    let slots = opts.slots as usize;
    let gpus = host::gpu_count();
    if gpus < slots {
        bail!("{slots} slots need {slots} GPUs; this host has {gpus}");
    }
    let cpus = child::allowed_cpus();
    let Some(shares) = host::cpu_shares(&cpus, slots) else {
        bail!("{slots} slots need {slots} CPUs; this host has {}", cpus.len());
    };
    let mut listing = String::new();
    for (i, share) in shares.iter().enumerate() {
        listing += &format!("slot {i}: GPU {i}, CPUs {}\n", comma_list(share));
    }
    let slots_txt = opts.out.join("slots.txt");
    std::fs::write(&slots_txt, listing).with_context(|| format!("{}: cannot write it", slots_txt.display()))?;
    let failed: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .into_iter()
            .enumerate()
            .map(|(i, share)| {
                let slot = StudySlot {
                    out: opts.out.join(format!("slot{i}")),
                    gpu: Some(i),
                    cpus: Some(share),
                };
                let (planned, next) = (&planned, &next);
                scope.spawn(move || {
                    slot.run(opts, planned, next, deadline)
                        .map_err(|e| format!("slot {i}: {e:#}"))
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().unwrap_or_else(|_| Err("a slot panicked".into())).err())
            .collect()
    });
    if !failed.is_empty() {
        bail!("{}", failed.join("; "));
    }
    Ok(())
}

/// Numbers written `0,1,2`.
fn comma_list<T: ToString>(items: &[T]) -> String {
    items.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

/// One slot: where its output goes, its GPU and its CPUs (`None`: the
/// host's, all of them).
struct StudySlot {
    out: PathBuf,
    gpu: Option<usize>,
    cpus: Option<Vec<usize>>,
}

impl StudySlot {
    /// Verifies, then runs each study not yet taken.
    fn run(
        &self,
        opts: &StudyRunOptions,
        planned: &[PlannedStudy],
        next: &AtomicUsize,
        deadline: Instant,
    ) -> anyhow::Result<()> {
        std::fs::create_dir_all(&self.out).with_context(|| format!("{}: cannot make it", self.out.display()))?;
        let device = format!(
            "{}{}",
            host::gpu_line(self.gpu.unwrap_or(0)),
            self.output_of(self.command(&opts.binary).arg("--version"))
        );
        let device_txt = self.out.join("device.txt");
        std::fs::write(&device_txt, device).with_context(|| format!("{}: cannot write it", device_txt.display()))?;
        let split = self.gpu.is_none() && host::gpu_count() > 1;
        let checks = verify::Checks {
            binary: &opts.binary,
            scenes: &opts.scenes,
            split_over_all: split,
            ranks: opts.ranks.iter().copied().max().map(|most| verify::OverRanks {
                launcher: &opts.mpi_launcher,
                binary: &opts.mpi_binary,
                ranks: most,
            }),
        };
        let verify_txt = self.out.join("verify.txt");
        if !checks.run(&verify_txt, &self.out, &|cmd: &mut Command| self.place(cmd))? {
            bail!(
                "a scene did not verify identical to the CPU's image (see {}); no study run",
                verify_txt.display()
            );
        }
        let mut runs = SlotRuns {
            slot: self,
            opts,
            deadline,
            ran: Vec::new(),
            log: self.out.join("studies.log"),
        };
        while let Some(study) = planned.get(next.fetch_add(1, Ordering::SeqCst)) {
            runs.study(study)?;
        }
        Ok(())
    }

    /// A command of `program` as this slot runs it: on its GPU and CPUs.
    fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        self.place(&mut cmd);
        cmd
    }

    /// Puts `cmd` on this slot's GPU and CPUs, with the driver's kernel
    /// cache large enough to keep every kernel a study compiles.
    fn place(&self, cmd: &mut Command) {
        cmd.env("CUDA_CACHE_MAXSIZE", CUDA_CACHE_BYTES);
        if let Some(gpu) = self.gpu {
            cmd.env("CUDA_VISIBLE_DEVICES", gpu.to_string());
        }
        if let Some(cpus) = &self.cpus {
            child::pin_to(cmd, cpus);
        }
    }

    /// What `cmd` writes, or why it could not run.
    fn output_of(&self, cmd: &mut Command) -> String {
        match cmd.output() {
            Ok(o) => format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => format!("{}: {e}\n", cmd.get_program().to_string_lossy()),
        }
    }
}

/// A slot's studies as they run: the folders it made, which it alone packs.
struct SlotRuns<'a> {
    slot: &'a StudySlot,
    opts: &'a StudyRunOptions,
    deadline: Instant,
    ran: Vec<String>,
    log: PathBuf,
}

/// What runs a study's experiment: a binary, or the MPI launcher over N
/// ranks of the MPI build.
enum Runner<'a> {
    Binary(&'a Path),
    Ranks(u32),
}

impl SlotRuns<'_> {
    /// Appends a line to the slot's log, and says it.
    fn note(&self, line: &str) -> anyhow::Result<()> {
        let mut log = std::fs::File::options()
            .create(true)
            .append(true)
            .open(&self.log)
            .with_context(|| format!("{}: cannot write it", self.log.display()))?;
        writeln!(log, "{line}")?;
        println!("{line}");
        Ok(())
    }

    /// The budget left.
    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// The study's runs: warmed where spread, its own, each reference's,
    /// then each spread.
    fn study(&mut self, study: &PlannedStudy) -> anyhow::Result<()> {
        let opts = self.opts;
        let name = &study.name;
        if spreads(opts) && study.splits_images {
            self.note(&format!(
                "== {name}: not spread: its runs split images over GPUs themselves (gpus)"
            ))?;
        }
        let spreads = study.spreads(opts);
        if !spreads.is_empty()
            && !std::iter::once(StudyFolderName::own(name))
                .chain(spreads.iter().map(|&s| StudyFolderName::of(name, FolderRun::Spread(s))))
                .all(|f| self.finished(&f))
        {
            self.warm(name, most_gpus_needed(opts))?;
        }
        self.run(name, StudyFolderName::own(name), Runner::Binary(&opts.binary), &[])?;
        for reference in &opts.references {
            let version = self.slot.output_of(Command::new(reference).arg("--version"));
            let Some(commit) = commit_of(&version) else {
                self.note(&format!(
                    "== {name}: {} names no commit in its --version (`{}`); not run",
                    reference.display(),
                    version.trim()
                ))?;
                continue;
            };
            let folder = StudyFolderName::of(name, FolderRun::Reference(commit));
            self.run(name, folder, Runner::Binary(reference), &[])?;
        }
        for over in spreads {
            let folder = StudyFolderName::of(name, FolderRun::Spread(over));
            match over {
                SpreadOver::Gpus(n) => {
                    let devices = first_gpus(n);
                    self.run(
                        name,
                        folder,
                        Runner::Binary(&opts.binary),
                        &["--devices", devices.as_str()],
                    )?
                }
                SpreadOver::Ranks(n) => self.run(name, folder, Runner::Ranks(n), &[])?,
            }
        }
        Ok(())
    }

    /// Whether the run into `folder` has finished: every study of its
    /// manifest complete.
    fn finished(&self, folder: &StudyFolderName) -> bool {
        let manifest = self.opts.results.join(folder.to_string()).join("manifest.toml");
        manifest.is_file() && Manifest::read(&manifest).is_ok_and(|m| m.study.iter().all(|s| is_complete(&s.status)))
    }

    /// The study once, not packed, over the first `n` GPUs: the driver
    /// compiles each kernel on its first use (seconds for a megakernel)
    /// and caches it, so that every run whose wall time is set against
    /// another's finds its kernels compiled.
    fn warm(&self, name: &str, n: u32) -> anyhow::Result<()> {
        if self.left() < MIN_START {
            return Ok(());
        }
        self.note(&format!(
            "== {name}: warming the driver's kernel cache over {n} GPUs (not packed)"
        ))?;
        let warm = self.opts.results.with_file_name("warm").join(name);
        let _ = std::fs::remove_dir_all(&warm);
        let devices = first_gpus(n);
        let mut cmd = self.slot.command(&self.opts.binary);
        cmd.arg("experiment")
            .arg(self.opts.experiments.join(format!("{name}.toml")))
            .arg("--out")
            .arg(&warm)
            .args(["--quiet", "--devices", devices.as_str()]);
        child::run_logged(&mut cmd, &self.log, Some(self.deadline))?;
        let _ = std::fs::remove_dir_all(&warm);
        Ok(())
    }

    /// One run of the study `name` into `folder` (resumed where its
    /// manifest is), within the budget left, then its report and the
    /// slot's tarball.
    fn run(&mut self, name: &str, folder: StudyFolderName, runner: Runner<'_>, options: &[&str]) -> anyhow::Result<()> {
        let left = self.left();
        if left < MIN_START {
            return self.note(&format!("== {name}: skipped, {}s of the budget left", left.as_secs()));
        }
        let opts = self.opts;
        let folder = folder.to_string();
        let dir = opts.results.join(&folder);
        let (mut cmd, with) = match runner {
            Runner::Binary(binary) => (self.slot.command(binary), binary.display().to_string()),
            Runner::Ranks(n) => {
                let mut cmd = self.slot.command(&opts.mpi_launcher);
                cmd.arg("-n").arg(n.to_string()).arg(&opts.mpi_binary);
                let with = format!("{} -n {n} {}", opts.mpi_launcher.display(), opts.mpi_binary.display());
                (cmd, with)
            }
        };
        let resume = dir.join("manifest.toml").exists();
        let shown: String = options.iter().map(|o| format!(" {o}")).collect();
        self.note(&format!(
            "== {name} with {with}{shown} into {folder} ({}s left)",
            left.as_secs()
        ))?;
        cmd.arg("experiment")
            .arg(opts.experiments.join(format!("{name}.toml")))
            .arg("--out")
            .arg(&dir)
            .arg("--quiet");
        if resume {
            cmd.arg("--resume");
        }
        cmd.args(options);
        child::run_logged(&mut cmd, &self.log, Some(self.deadline))?;
        // A run refused before it wrote anything (a GPU of --devices
        // missing) leaves no folder, and the tarball holds the others.
        if !dir.is_dir() {
            return self.note(&format!("== {name}: no {folder}: the run did not start"));
        }
        if !self.ran.contains(&folder) {
            self.ran.push(folder);
        }
        let mut report = self.slot.command(&opts.binary);
        report.arg("report").arg(&dir);
        child::run_logged(&mut report, &self.log, None)?;
        remove_locks(&dir)?;
        let tarball = self.slot.out.join("studies.tgz");
        tarball::pack(&opts.results, &self.ran, &tarball)
            .with_context(|| format!("{}: cannot write it", tarball.display()))
    }
}

/// The ordinals of the first `n` GPUs as `--devices` takes them: `0,1,...`.
fn first_gpus(n: u32) -> String {
    comma_list(&(0..n).collect::<Vec<_>>())
}

/// The commit a binary's `--version` names (`... (commit 1234567...)`),
/// cut to 7 hex digits.
fn commit_of(version: &str) -> Option<String> {
    let (_, after) = version.split_once("commit ")?;
    let hex: String = after.chars().take_while(char::is_ascii_hexdigit).collect();
    (hex.len() >= 7).then(|| hex[..7].to_ascii_lowercase())
}

/// Removes the runner's lock files under `dir` (a folder the run ended in
/// is no longer in use, and the tarball carries no lock).
fn remove_locks(dir: &Path) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}: cannot list it", dir.display()))? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            remove_locks(&path)?;
        } else if entry.file_name() == crate::output::LOCK_FILE {
            std::fs::remove_file(&path).with_context(|| format!("{}: cannot remove it", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_names_its_commit_in_its_version() {
        assert_eq!(
            commit_of("wavepath 0.1.0 (commit 1234567abcde)\n").as_deref(),
            Some("1234567")
        );
        assert_eq!(commit_of("wavepath 0.1.0 (commit 12345)"), None);
        assert_eq!(commit_of("wavepath 0.1.0"), None);
        assert_eq!(first_gpus(3), "0,1,2");
    }
}
