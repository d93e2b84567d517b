//! `experiment` over the ranks of an MPI job (`mpirun -n N wavepath
//! experiment CONFIG`): the configurations handed out to the ranks as they
//! ask for them ([`super::dispatch`]), each made by the single-process
//! runner's own steps (`measure::Runs::one`), and every row written by
//! rank 0 as it arrives.
//!
//! Every rank plans the same configurations and checks its inputs; rank 0
//! prepares the output folder (its lock, what a `--resume` continues); the
//! ranks agree that all of this succeeded ([`super::failure::agree`]), so
//! that no rank waits on one that gave up; rank 0's resumed rows go to
//! every rank (so each makes only the repetitions still missing). Then,
//! phase by phase, rank 0 hands the configurations out and makes its own
//! share on a thread of its own, while the other ranks send it the rows of
//! each configuration they finish and get the next: rank 0 appends them to
//! `runs.csv` and `kernels.csv` in the order they finish, as the GPUs of
//! one process do. After a rank failed or was stopped, nothing more is
//! handed out. At the end rank 0 gathers the skipped runs and parity
//! checks, the ranks agree on their outcomes (rank 0 names each failed
//! rank with its host), and rank 0 writes the manifest, whose film checks
//! cover every rank's rows.

use super::Cluster;
use super::dispatch::{self, Cursor, End, Halt, Reply, Report};
use super::failure::agree;
use super::layout;
use super::wire::{
    Message, POLL, all_gather_text, broadcast_text, gather_text, send_text, try_receive_text, wait_text,
};
use crate::config::{Config, PlannedRun, Study};
use crate::manifest;
use crate::measure::{Ending, Parity, RunExtras, Runs};
use crate::output::{self, OutFiles, Resumed};
use crate::preflight::{self, Checked};
use crate::progress::Progress;
use crate::records::{KernelRow, Manifest, RunRow, Skipped};
use crate::rows::Origin;
use crate::runner::{self, Outcome, RunOptions};
use crate::scenes::SceneCache;
use crate::team;
use crate::team::PlanStep;
use crate::writer::{RowFiles, RowWriter, WriterOutcome};
use anyhow::{anyhow, bail};
use mpi::Tag;
use renderer::backend::gpu::Gpu;
use renderer::settings::backend::BackendChoice;
use renderer::system::provenance::Provenance;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Runs `config` over the ranks of `cluster`; `share_cores` lets every
/// rank make CPU configurations (otherwise one rank per host does). The
/// outcome at rank 0 (`runs.csv`, `kernels.csv` and the manifest
/// written), `None` at the others.
pub fn run(
    cluster: &Cluster,
    config: &Config,
    opts: &RunOptions,
    share_cores: bool,
) -> anyhow::Result<Option<Outcome>> {
    let meta = Provenance::collect(opts.build);
    let ready = prepare(cluster, config, opts, &meta);
    let mut ready = agree(cluster, ready, |r| {
        let count: usize = r.plan.iter().map(|(_, runs)| runs.len()).sum();
        format!("{count} configurations of config {}", config.fingerprint())
    })?;
    let started = start(cluster, config, opts, &meta, &mut ready);
    let (mut files, mut manifest) = agree(cluster, started, |_| String::new())?;

    // No run of several GPUs is planned (refused in `prepare`), so the
    // first phase is every run.
    let (order, _) = team::phases(&ready.plan);
    let progress = Progress::new(&ready.plan, &ready.resumed, false)?;
    let base = Base {
        rank: cluster.rank,
        host: &cluster.host,
        origin: Origin {
            experiment: &config.name,
            meta: &meta,
            gpu: ready.gpus.first(),
        },
        ready: &ready,
        progress: &progress,
        opts,
    };
    let (known, own, stopped) = base.play(cluster, &order, share_cores, files.as_mut());

    // From here on every rank makes the same collective calls whatever
    // failed: an error is carried to the end, never returned early.
    let tallies = gather_text(&cluster.world, &TallyText::of(&own.tally).encode()).transpose();
    let result = agree(cluster, own.failure.map_or(Ok(()), Err), |_| String::new());
    let (Some(tallies), Some(mut manifest)) = (tallies, manifest.take()) else {
        return result.map(|()| None);
    };
    let (ending, tally) = match (result, tallies.and_then(|t| TallyText::merge(&t))) {
        (Err(e), tally) => (Ending::Failed(e), tally.unwrap_or_default()),
        (Ok(()), Err(e)) => (Ending::Failed(e), RunExtras::default()),
        (Ok(()), Ok(tally)) if stopped => (
            first_unfinished(&order, &known).map_or(Ending::Complete, Ending::Stopped),
            tally,
        ),
        (Ok(()), Ok(tally)) => (Ending::Complete, tally),
    };
    let written = WriterOutcome::of(known);
    manifest::finish(&mut manifest, config, &ending, &tally, &written, &ready.resumed.rows);
    let out = opts.out.as_deref().map(OutFiles::in_folder);
    runner::write_manifest(&manifest, out.as_ref())?;
    if let Ending::Failed(e) = ending {
        return Err(e);
    }
    Ok(Some(Outcome {
        rows: written.rows,
        profiles: Vec::new(),
        manifest,
    }))
}

/// What every rank has before the first phase.
struct Ready<'c> {
    plan: Vec<(&'c Study, Vec<PlannedRun>)>,
    checked: Checked,
    /// What a `--resume` continues: rank 0's, from the folder; the other
    /// ranks', its rows as rank 0 sent them.
    resumed: Resumed,
    /// This rank's GPU, if a GPU run is planned and it opened.
    gpus: Vec<Gpu>,
    /// Why this rank's GPU runs are skipped, when they are.
    no_gpu: Option<String>,
}

/// Plans the configurations and checks their inputs (every rank), prepares
/// the output folder (rank 0), and opens the GPU this rank's rank within
/// its host picks, if a GPU run is planned.
fn prepare<'c>(
    cluster: &Cluster,
    config: &'c Config,
    opts: &RunOptions,
    meta: &Provenance,
) -> anyhow::Result<Ready<'c>> {
    if opts.devices.is_some() {
        bail!(
            "--devices under mpirun: each rank makes its GPU runs on the GPU its rank within its host picks; \
             launch one rank per GPU instead"
        );
    }
    let plan = runner::plan(config, opts.only.as_deref())?;
    runner::check_plan_flags(&plan, opts)?;
    if let (gpus, Some(study)) = team::most_gpus(&plan) {
        bail!(
            "study `{study}`: gpus = {gpus} splits one image over the GPUs of one process; under mpirun each \
             rank renders on its own GPU (run such studies without mpirun, with --devices)"
        );
    }
    let checked = preflight::check(&plan)?;
    let resumed = if cluster.is_root() {
        let policy = runner::resume_policy(opts);
        let resumed = output::prepare(opts.out.as_deref(), &opts.outputs, policy, config, &checked, meta)?;
        runner::check_clean(meta, opts.allow_dirty)?;
        runner::check_own_kernels()?;
        resumed
    } else {
        Resumed::default()
    };
    let picked = layout::devices(None, BackendChoice::Auto, cluster.local_rank);
    let (gpus, no_gpu) = runner::open_gpus(&plan, false, picked.as_ref())?;
    Ok(Ready {
        plan,
        checked,
        resumed,
        gpus,
        no_gpu,
    })
}

/// Sends rank 0's resumed rows to every rank; rank 0 writes the manifest
/// and opens `runs.csv` and `kernels.csv` for appending.
fn start(
    cluster: &Cluster,
    config: &Config,
    opts: &RunOptions,
    meta: &Provenance,
    ready: &mut Ready,
) -> anyhow::Result<(Option<RowFiles>, Option<Manifest>)> {
    let sent = encode(&ready.resumed.rows);
    let text = broadcast_text(&cluster.world, sent.as_deref().unwrap_or_default())?;
    sent?;
    if !cluster.is_root() {
        ready.resumed = Resumed::from_rows(decode(&text)?);
        return Ok((None, None));
    }
    let earlier = ready.resumed.manifest.take();
    let manifest = runner::start_manifest(config, opts, meta, &ready.gpus, &ready.plan, &ready.checked, earlier)?;
    let files = opts.out.as_deref().map(OutFiles::in_folder);
    runner::write_manifest(&manifest, files.as_ref())?;
    let appenders = files.as_ref().map(RowFiles::open).transpose()?;
    Ok((appenders, Some(manifest)))
}

/// What a rank keeps over its configurations.
#[derive(Default)]
struct RankState {
    scenes: SceneCache,
    tally: RunExtras,
    /// The error that ended this rank's runs.
    failure: Option<anyhow::Error>,
}

impl RankState {
    /// How this rank's runs went on: failed, stopped by `stop`, or on.
    fn halt(&self, stop: Option<&AtomicBool>) -> Halt {
        halt_of(self.failure.is_some(), stop)
    }
}

/// How a rank's runs went on: `failed`, stopped by `stop`, or on.
fn halt_of(failed: bool, stop: Option<&AtomicBool>) -> Halt {
    match stop {
        _ if failed => Halt::Failed,
        Some(stop) if stop.load(Ordering::SeqCst) => Halt::Stopped,
        _ => Halt::No,
    }
}

/// What rank 0's worker thread leaves of its [`RankState`] (its scenes stay
/// on the thread).
struct WorkerLeftovers {
    tally: RunExtras,
    failure: Option<anyhow::Error>,
}

/// The rows one configuration made.
#[derive(Default)]
struct ConfigurationRows {
    rows: Vec<RunRow>,
    kernels: Vec<KernelRow>,
}

/// Rank 0's rows: every row so far (the resumed ones first), and the
/// files they are appended to.
struct RankZeroRows<'f> {
    known: Vec<RunRow>,
    files: Option<&'f mut RowFiles>,
}

impl RankZeroRows<'_> {
    /// Appends a configuration's rows, each repetition with its kernel rows.
    fn add(&mut self, made: ConfigurationRows) -> anyhow::Result<()> {
        if let Some(files) = self.files.as_deref_mut() {
            for row in &made.rows {
                let of_row = (made.kernels.iter())
                    .filter(|k| (&k.study, k.run, k.repetition) == (&row.study, row.run, row.repetition));
                files.append(row, of_row)?;
            }
        }
        self.known.extend(made.rows);
        Ok(())
    }
}

/// Locks `m`: a thread that panicked while holding it has taken the whole
/// process down with it ([`std::thread::scope`] resumes its panic), so a
/// poisoned lock is never seen.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The tags of one phase's messages: reports to rank 0, its replies, and
/// the phase's end.
#[derive(Clone, Copy)]
struct Tags {
    report: Tag,
    reply: Tag,
    end: Tag,
}

impl Tags {
    /// Phase `phase`'s (0, 1): its own, so that no message is taken for
    /// another phase's.
    fn of(phase: usize) -> Tags {
        let base = 10 * (phase as Tag + 1);
        Tags {
            report: base,
            reply: base + 1,
            end: base + 2,
        }
    }
}

/// One phase of the configurations (those of the CPU back ends, or those
/// of the GPUs), as each rank plays it.
struct Phase<'p, 'f> {
    /// Its messages' tags.
    tags: Tags,
    /// Its configurations, in plan order.
    steps: &'p [&'p PlanStep<'p>],
    /// The ranks that make them.
    takers: &'p [usize],
    /// The rows so far: every rank's at rank 0; this rank's and the
    /// resumed ones elsewhere.
    sink: &'p Mutex<RankZeroRows<'f>>,
}

/// What each configuration a rank makes shares; everything here may be
/// used from rank 0's worker thread (no MPI handle).
struct Base<'a> {
    rank: usize,
    host: &'a str,
    origin: Origin<'a>,
    ready: &'a Ready<'a>,
    progress: &'a Progress,
    opts: &'a RunOptions,
}

impl Base<'_> {
    /// Makes the configurations of `order` over the ranks of `cluster`:
    /// those of the CPU back ends, then those of the GPUs, each phase
    /// handed out by rank 0 ([`dispatch`]), until every one is made or a
    /// rank failed or was stopped. Rank 0 appends the rows to `files` as
    /// they come. Returns every row at rank 0 (the resumed ones first;
    /// only this rank's and the resumed ones elsewhere), what this rank
    /// kept (its error among it), and whether a stop ended the runs.
    fn play(
        &self,
        cluster: &Cluster,
        order: &[PlanStep],
        share_cores: bool,
        files: Option<&mut RowFiles>,
    ) -> (Vec<RunRow>, RankState, bool) {
        let mut own = RankState::default();
        // Every rank gathers the same bytes, so a garbled gather fails on
        // every rank alike, and every rank skips both phases.
        let locals: Vec<usize> = match all_gather_text(&cluster.world, &cluster.local_rank.to_string()) {
            Ok(locals) => locals.iter().map(|l| l.parse().unwrap_or(1)).collect(),
            Err(e) => {
                own.failure = Some(e);
                Vec::new()
            }
        };
        let mut halt = own.halt(None);
        let every: Vec<usize> = (0..cluster.size).collect();
        let on_cpus = dispatch::cpu_ranks(&locals, share_cores);
        let (on_gpus, on_host): (Vec<_>, Vec<_>) = order.iter().partition(|(_, run)| run.spec.backend.is_gpu());
        let sink = Mutex::new(RankZeroRows {
            known: self.ready.resumed.rows.clone(),
            files,
        });
        let phases = [(&on_host, &on_cpus), (&on_gpus, &every)];
        for (index, (steps, takers)) in phases.into_iter().enumerate() {
            if steps.is_empty() || halt != Halt::No {
                continue;
            }
            let phase = Phase {
                tags: Tags::of(index),
                steps,
                takers,
                sink: &sink,
            };
            halt = if cluster.is_root() {
                self.hand_out(cluster, &phase, &mut own)
            } else {
                self.ask(cluster, &phase, &mut own)
            };
        }
        let known = sink.into_inner().unwrap_or_else(|e| e.into_inner()).known;
        (known, own, halt == Halt::Stopped)
    }

    /// Rank 0's side of a phase: hands out its configurations to its
    /// takers as they report, making its own share on a thread of its own
    /// when it is one of them, and adds every rank's rows to the sink.
    /// When every taker has been told there is nothing more, tells every
    /// rank how the phase ended, and returns that.
    fn hand_out(&self, cluster: &Cluster, phase: &Phase, own: &mut RankState) -> Halt {
        let cursor = Mutex::new(Cursor::new(phase.steps.len()));
        let mut waiting = phase.takers.iter().filter(|&&r| r != 0).count();
        let mut trouble: Option<anyhow::Error> = None;
        let made_here = std::thread::scope(|s| {
            let cursor = &cursor;
            let worker = (phase.takers)
                .contains(&0)
                .then(|| s.spawn(move || self.make_own(phase, cursor)));
            while waiting > 0 {
                lock(cursor).halt(halt_of(false, self.opts.stop));
                let Some((from, text)) = try_receive_text(&cluster.world, phase.tags.report) else {
                    std::thread::sleep(POLL);
                    continue;
                };
                let reported = text.and_then(|text| {
                    let report = Report::decode(&text)?;
                    let made = ConfigurationRows {
                        rows: decode(&report.rows)?,
                        kernels: decode(&report.kernels)?,
                    };
                    lock(phase.sink).add(made)?;
                    Ok(report.halt)
                });
                match reported {
                    Ok(halt) => lock(cursor).halt(halt),
                    Err(e) => {
                        lock(cursor).halt(Halt::Failed);
                        trouble.get_or_insert(e);
                    }
                }
                let next = lock(cursor).take();
                send_text(&cluster.world, from, phase.tags.reply, &Reply { next }.encode());
                if next.is_none() {
                    waiting -= 1;
                }
            }
            worker.map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        });
        if let Some(made) = made_here {
            own.tally.merge(made.tally);
            if let Some(e) = made.failure {
                own.failure.get_or_insert(e);
            }
        }
        if let Some(e) = trouble {
            own.failure.get_or_insert(e);
        }
        let halt = lock(&cursor).halted().max(own.halt(self.opts.stop));
        for rank in 1..cluster.size {
            send_text(&cluster.world, rank, phase.tags.end, &End { halt }.encode());
        }
        halt
    }

    /// Rank 0's own share of a phase, on its worker thread (with scenes
    /// of its own: they hold the thread's GPU uploads): the next
    /// configuration from `cursor`, until none is left. Returns its tally
    /// and its error.
    fn make_own(&self, phase: &Phase, cursor: &Mutex<Cursor>) -> WorkerLeftovers {
        let mut own = RankState::default();
        if let Some(gpu) = self.origin.gpu
            && let Err(e) = gpu.bind_to_thread()
        {
            own.failure = Some(e.into());
        }
        loop {
            lock(cursor).halt(own.halt(self.opts.stop));
            let Some(i) = lock(cursor).take() else {
                break;
            };
            let known = lock(phase.sink).known.clone();
            let made = self.make(*phase.steps[i], &known, &mut own);
            if let Err(e) = lock(phase.sink).add(made) {
                own.failure.get_or_insert(e);
            }
        }
        WorkerLeftovers {
            tally: own.tally,
            failure: own.failure,
        }
    }

    /// Another rank's side of a phase: when it is one of the takers, asks
    /// rank 0 for configurations, sending the rows of each it made (kept
    /// in the sink too), until none is left; then waits to hear how the
    /// phase ended. Whatever goes wrong here is kept in `own` and reported
    /// to rank 0 as a failure, and the rank goes on asking (rank 0 then
    /// answers that nothing is left), so that rank 0 never waits on it.
    fn ask(&self, cluster: &Cluster, phase: &Phase, own: &mut RankState) -> Halt {
        if phase.takers.contains(&self.rank) {
            let mut report = Report {
                halt: own.halt(self.opts.stop),
                ..Report::default()
            };
            loop {
                send_text(&cluster.world, 0, phase.tags.report, &report.encode());
                let step = wait_text(&cluster.world, 0, phase.tags.reply)
                    .and_then(|text| Reply::decode(&text))
                    .and_then(|reply| match reply.next {
                        None => Ok(None),
                        Some(i) => phase.steps.get(i).map(Some).ok_or_else(|| {
                            anyhow!("internal: rank 0 handed out configuration {i} of {}", phase.steps.len())
                        }),
                    });
                let step = match step {
                    Ok(Some(step)) => step,
                    Ok(None) => break,
                    Err(e) => {
                        own.failure.get_or_insert(e);
                        report = Report::failed();
                        continue;
                    }
                };
                let known = lock(phase.sink).known.clone();
                let made = self.make(**step, &known, own);
                report = match (encode(&made.rows), encode(&made.kernels)) {
                    (Ok(rows), Ok(kernels)) => Report {
                        halt: own.halt(self.opts.stop),
                        rows,
                        kernels,
                    },
                    (Err(e), _) | (_, Err(e)) => {
                        own.failure.get_or_insert(e);
                        Report::failed()
                    }
                };
                lock(phase.sink).known.extend(made.rows);
            }
        }
        // Rank 0 sent the end as `End::encode` wrote it; one that does not
        // decode means a broken transport, and this rank stops as failed.
        match wait_text(&cluster.world, 0, phase.tags.end).and_then(|text| End::decode(&text)) {
            Ok(end) => end.halt,
            Err(e) => {
                own.failure.get_or_insert(e);
                Halt::Failed
            }
        }
    }

    /// Makes `run` of `study` with the runner's own steps, its film checks
    /// seeded with the rows `known` so far; its rows, those finished before
    /// an error too, name this rank and its host. An error is kept in
    /// `own`.
    fn make(&self, (study, run): PlanStep, known: &[RunRow], own: &mut RankState) -> ConfigurationRows {
        let writer = match RowWriter::start(None, known) {
            Ok(writer) => writer,
            Err(e) => {
                own.failure.get_or_insert(e);
                return ConfigurationRows::default();
            }
        };
        let runs = Runs {
            origin: self.origin,
            no_gpu: self.ready.no_gpu.as_deref(),
            resumed: &self.ready.resumed,
            writer: &writer,
            progress: self.progress,
            stop: self.opts.stop,
            kept_renders: None,
            keep_profiles: false,
            references: &self.ready.checked.references,
            team: &self.ready.gpus,
        };
        let result = runs.one(study, run, &mut own.scenes, &mut own.tally);
        let made = writer.finish().map(|mut written| {
            let mut rows = written.rows.split_off(known.len());
            for r in &mut rows {
                r.rank = Some(self.rank);
                r.host = self.host.to_string();
            }
            (
                ConfigurationRows {
                    rows,
                    kernels: written.kernels,
                },
                written.result,
            )
        });
        match made {
            Ok((made, written)) => {
                if let Err(e) = result.and(written) {
                    own.failure.get_or_insert(e);
                }
                made
            }
            Err(e) => {
                own.failure.get_or_insert(result.err().unwrap_or(e));
                ConfigurationRows::default()
            }
        }
    }
}

/// Rows as CSV text, with a header (empty for no rows).
fn encode<T: Serialize>(rows: &[T]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        w.serialize(row)?;
    }
    let bytes = w.into_inner().map_err(|e| anyhow!("{e}"))?;
    Ok(String::from_utf8(bytes)?)
}

/// The rows [`encode`] wrote.
fn decode<T: DeserializeOwned>(text: &str) -> anyhow::Result<Vec<T>> {
    csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow!("internal: rows from another rank arrived garbled: {e}"))
}

/// The study of the first configuration in plan order with repetitions
/// still missing from `rows`, where a stop ended the runs.
fn first_unfinished(order: &[PlanStep], rows: &[RunRow]) -> Option<String> {
    let made = Resumed::from_rows(rows.to_vec());
    order
        .iter()
        .find(|(study, run)| !made.remaining(study, run).is_empty())
        .map(|(study, _)| study.name.clone())
}

/// A rank's skipped runs and parity checks, on their way to rank 0.
#[derive(Default, Serialize, Deserialize)]
struct TallyText {
    #[serde(default)]
    skipped: Vec<Skipped>,
    #[serde(default)]
    parity: Vec<Parity>,
}

impl Message for TallyText {
    const WHAT: &'static str = "a rank's skips";
}

impl TallyText {
    /// `tally`'s skips and checks.
    fn of(tally: &RunExtras) -> TallyText {
        TallyText {
            skipped: tally.skipped.clone(),
            parity: tally.parity.clone(),
        }
    }

    /// Every rank's texts, merged as the workers of a split are.
    fn merge(texts: &[String]) -> anyhow::Result<RunExtras> {
        let mut tally = RunExtras::default();
        for text in texts {
            let t = TallyText::decode(text)?;
            tally.merge(RunExtras::of(t.skipped, t.parity));
        }
        Ok(tally)
    }
}
