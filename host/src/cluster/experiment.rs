//! `experiment` over the ranks of an MPI job (`mpirun -n N wavepath
//! experiment CONFIG`): the configurations split across the ranks in
//! rounds ([`super::rounds`]), each made by the single-process runner's
//! own steps (`measure::Runs::one`), and every row written by rank 0.
//!
//! The protocol meets at fixed points, so no rank waits on one that gave
//! up: every rank plans the same configurations and checks its inputs;
//! rank 0 prepares the output folder (its lock, what a `--resume`
//! continues); the ranks agree that all of this succeeded
//! ([`super::failure::agree`]); rank 0's resumed rows go to every rank
//! (so each makes only the repetitions still missing). Then, round after
//! round, each rank makes its configuration of the round (or none) and
//! the ranks exchange their rows and how they ended (one collective per
//! round): rank 0 appends the round's rows to `runs.csv` and
//! `kernels.csv`, in plan order, and every rank adds them to the film
//! checks; after a round in which a rank failed or was stopped, no rank
//! starts another. At the end rank 0 gathers the skipped runs and parity
//! checks, the ranks agree on their outcomes (rank 0 names each failed
//! rank with its host), and rank 0 writes the manifest.

use super::Cluster;
use super::failure::agree;
use super::layout;
use super::rounds;
use super::wire::{all_gather_text, broadcast_text, gather_text};
use crate::backend::gpu::Gpu;
use crate::experiment::config::{Config, PlannedRun, Study};
use crate::experiment::manifest;
use crate::experiment::measure::{Ending, Parity, Runs, Tally};
use crate::experiment::output::{self, OutFiles, ResumePolicy, Resumed};
use crate::experiment::preflight::{self, Checked};
use crate::experiment::progress::Progress;
use crate::experiment::records::{CsvAppender, KernelRow, Manifest, RunRow, Skipped};
use crate::experiment::rows::Origin;
use crate::experiment::runner::{self, Outcome, RunOptions};
use crate::experiment::scenes::SceneCache;
use crate::experiment::team;
use crate::experiment::writer::{RowWriter, Written};
use crate::settings::backend::BackendChoice;
use crate::system::provenance::Provenance;
use anyhow::{anyhow, bail};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::sync::atomic::Ordering;

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
    let meta = Provenance::collect();
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
        cluster,
        origin: Origin {
            experiment: &config.name,
            meta: &meta,
            gpu: ready.gpus.first(),
        },
        ready: &ready,
        progress: &progress,
        opts,
    };
    let (known, own, stopped) = base.play(&order, share_cores, files.as_mut())?;

    let tallies = gather_text(&cluster.world, &TallyText::of(&own.tally))?;
    let result = agree(cluster, own.failure.map_or(Ok(()), Err), |_| String::new());
    let (Some(tallies), Some(mut manifest)) = (tallies, manifest.take()) else {
        return result.map(|()| None);
    };
    let (ending, tally) = match (result, TallyText::merge(&tallies)) {
        (Err(e), tally) => (Ending::Failed(e), tally.unwrap_or_default()),
        (Ok(()), Err(e)) => (Ending::Failed(e), Tally::default()),
        (Ok(()), Ok(tally)) if stopped => (
            first_unfinished(&order, &known).map_or(Ending::Complete, Ending::Stopped),
            tally,
        ),
        (Ok(()), Ok(tally)) => (Ending::Complete, tally),
    };
    let written = Written::of(known);
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

/// What every rank has before the first round.
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
    if let (gpus, Some(study)) = team::most_gpus(&plan) {
        bail!(
            "study `{study}`: gpus = {gpus} splits one image over the GPUs of one process; under mpirun each \
             rank renders on its own GPU (run such studies without mpirun, with --devices)"
        );
    }
    let checked = preflight::check(&plan)?;
    let resumed = if cluster.is_root() {
        let policy = ResumePolicy {
            resume: opts.resume,
            allow_mixed: opts.allow_mixed,
        };
        let resumed = output::prepare(opts.out.as_deref(), policy, config, meta)?;
        runner::check_clean(meta, opts.allow_dirty)?;
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
) -> anyhow::Result<(Option<Appenders>, Option<Manifest>)> {
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
    let appenders = files
        .map(|f| {
            Ok::<_, anyhow::Error>(Appenders {
                runs: CsvAppender::open::<RunRow>(&f.runs)?,
                kernels: CsvAppender::open::<KernelRow>(&f.kernels)?,
            })
        })
        .transpose()?;
    Ok((appenders, Some(manifest)))
}

/// Rank 0's `runs.csv` and `kernels.csv`.
struct Appenders {
    runs: CsvAppender,
    kernels: CsvAppender,
}

impl Appenders {
    /// Appends a round's rows, each repetition's kernel rows before its run
    /// row (which commits it, as the row writer does).
    fn append(&mut self, rows: &[RunRow], kernels: &[KernelRow]) -> anyhow::Result<()> {
        for row in rows {
            let of_row = kernels
                .iter()
                .filter(|k| (&k.study, k.run, k.repetition) == (&row.study, row.run, row.repetition));
            of_row.into_iter().try_for_each(|k| self.kernels.append(k))?;
            self.runs.append(row)?;
        }
        Ok(())
    }
}

/// How a rank's round ended, as the ranks tell each other: its runs went
/// on, a stop request came, or it failed.
const OK: &str = "ok";
/// See [`OK`].
const STOPPED: &str = "stopped";
/// See [`OK`].
const FAILED: &str = "failed";

/// What a rank keeps over the rounds.
#[derive(Default)]
struct Own {
    scenes: SceneCache,
    tally: Tally,
    /// The error that ended this rank's runs.
    failure: Option<anyhow::Error>,
}

/// A rank's rows of one round, as CSV text.
#[derive(Default)]
struct Made {
    rows: String,
    kernels: String,
}

/// What each configuration a rank makes shares.
struct Base<'a> {
    cluster: &'a Cluster,
    origin: Origin<'a>,
    ready: &'a Ready<'a>,
    progress: &'a Progress,
    opts: &'a RunOptions,
}

impl Base<'_> {
    /// Makes this rank's configurations of `order`, round by round, until
    /// the last round or the one in which a rank failed or was stopped;
    /// rank 0 appends each round's rows to `files`. Returns every row (the
    /// resumed ones first), what this rank kept, and whether a stop ended
    /// the rounds.
    fn play(
        &self,
        order: &[(&Study, &PlannedRun)],
        share_cores: bool,
        mut files: Option<&mut Appenders>,
    ) -> anyhow::Result<(Vec<RunRow>, Own, bool)> {
        let world = &self.cluster.world;
        let locals = all_gather_text(world, &self.cluster.local_rank.to_string())?;
        let locals: Vec<usize> = locals.iter().map(|l| l.parse().unwrap_or(1)).collect();
        let on_gpu: Vec<bool> = order.iter().map(|(_, run)| run.spec.backend.is_gpu()).collect();
        let mut known = self.ready.resumed.rows.clone();
        let mut own = Own::default();
        for round in rounds::assign(&on_gpu, self.cluster.size, &rounds::cpu_ranks(&locals, share_cores)) {
            let mine = round.iter().find(|(rank, _)| *rank == self.cluster.rank);
            let made = match mine {
                Some(&(_, i)) if own.failure.is_none() => self.make(order[i], &known, &mut own),
                _ => Made::default(),
            };
            let status = match (&own.failure, self.opts.stop) {
                (Some(_), _) => FAILED,
                (None, Some(stop)) if stop.load(Ordering::SeqCst) => STOPPED,
                _ => OK,
            };
            let statuses = all_gather_text(world, status)?;
            let rows = all_gather_text(world, &made.rows)?;
            let kernels = all_gather_text(world, &made.kernels)?;
            let appended = decode_round(&rows, &kernels).and_then(|(rows, kernels)| {
                if let Some(f) = files.as_deref_mut() {
                    f.append(&rows, &kernels)?;
                }
                known.extend(rows);
                Ok(())
            });
            if let Err(e) = appended {
                own.failure.get_or_insert(e);
            }
            let stopped = statuses.iter().any(|s| s == STOPPED);
            if stopped || statuses.iter().any(|s| s == FAILED) {
                return Ok((known, own, stopped));
            }
        }
        Ok((known, own, false))
    }

    /// Makes `run` of `study` with the runner's own steps, its film checks
    /// seeded with the rows `known` so far; its rows (those finished before
    /// an error too) name this rank and its host. An error is kept in
    /// `own`.
    fn make(&self, (study, run): (&Study, &PlannedRun), known: &[RunRow], own: &mut Own) -> Made {
        let made = RowWriter::start(None, known).and_then(|writer| {
            let runs = Runs {
                origin: self.origin,
                no_gpu: self.ready.no_gpu.as_deref(),
                resumed: &self.ready.resumed,
                writer: &writer,
                progress: self.progress,
                stop: self.opts.stop,
                keep_profiles: false,
                references: &self.ready.checked.references,
                team: &self.ready.gpus,
            };
            let result = runs.one(study, run, &mut own.scenes, &mut own.tally);
            let mut written = writer.finish()?;
            let mut rows = written.rows.split_off(known.len());
            for r in &mut rows {
                r.rank = Some(self.cluster.rank);
                r.host = self.cluster.host.clone();
            }
            let made = Made {
                rows: encode(&rows)?,
                kernels: encode(&written.kernels)?,
            };
            result.and(written.result).map(|()| made)
        });
        match made {
            Ok(made) => made,
            Err(e) => {
                own.failure = Some(e);
                Made::default()
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

/// Every rank's rows and kernel rows of a round, in rank order, which is
/// plan order ([`rounds::assign`]).
fn decode_round(rows: &[String], kernels: &[String]) -> anyhow::Result<(Vec<RunRow>, Vec<KernelRow>)> {
    let mut all = (Vec::new(), Vec::new());
    for (r, k) in rows.iter().zip(kernels) {
        all.0.extend(decode::<RunRow>(r)?);
        all.1.extend(decode::<KernelRow>(k)?);
    }
    Ok(all)
}

/// The study of the first configuration in plan order with repetitions
/// still missing from `rows`, where a stop ended the rounds.
fn first_unfinished(order: &[(&Study, &PlannedRun)], rows: &[RunRow]) -> Option<String> {
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

impl TallyText {
    /// `tally` as TOML text.
    fn of(tally: &Tally) -> String {
        let text = TallyText {
            skipped: tally.skipped.clone(),
            parity: tally.parity.clone(),
        };
        toml::to_string(&text).unwrap_or_default()
    }

    /// Every rank's texts, merged as the workers of a split are.
    fn merge(texts: &[String]) -> anyhow::Result<Tally> {
        let mut tally = Tally::default();
        for text in texts {
            let t: TallyText =
                toml::from_str(text).map_err(|e| anyhow!("internal: a rank's skips arrived garbled: {e}"))?;
            tally.merge(Tally::of(t.skipped, t.parity));
        }
        Ok(tally)
    }
}
