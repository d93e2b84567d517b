//! An experiment over several GPUs (`experiment --devices`): its
//! independent runs spread over them, one configuration per GPU at a time.
//!
//! The runs of the CPU back ends go first, one after another, with nothing
//! else running (they use every core). Then one worker thread per GPU takes
//! the next GPU configuration from a shared cursor whenever it has finished
//! its last, so a faster GPU makes more of them. Each worker has its own
//! scenes (loaded, and uploaded to its GPU, once), its own context and
//! stream, and makes a configuration's warm-up, parity step and timed
//! repetitions alone on its GPU: no timed row shares its GPU with another
//! run. Each row names the GPU it ran on (`gpu`, `gpu_ordinal`), and rows
//! are keyed by study, run and repetition, so `--resume` continues however
//! the configurations were spread.

use super::config::{PlannedRun, Study};
use super::measure::{Ending, RunExtras, Runs};
use super::records::RunRow;
use super::rows::Origin;
use super::scenes::SceneCache;
use super::team::PlanStep;
use super::worker_loop::{self, WorkerEnd};
use renderer::backend::gpu::Gpu;
use renderer::render::split::imbalance;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Makes the configurations of `plan` (runs of one GPU or of the host):
/// the CPU back ends' one after another, then the GPU back ends' spread
/// over `gpus`. A stop request
/// ends every worker after the render it has in flight; the first error
/// of any worker ends the others after theirs and is returned.
pub fn all(runs: &Runs, plan: &[(&Study, &PlannedRun)], gpus: &[Gpu]) -> (Ending, RunExtras) {
    let (on_gpus, on_host): (Vec<_>, Vec<_>) = plan.iter().partition(|(_, run)| run.spec.backend.is_gpu());
    let (ending, mut tally) = runs.all(&on_host);
    if !matches!(ending, Ending::Complete) {
        return (ending, tally);
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let workers: Vec<(WorkerEnd, RunExtras)> = std::thread::scope(|s| {
        let handles: Vec<_> = gpus
            .iter()
            .map(|gpu| {
                let (next, failed, on_gpus) = (&next, &failed, &on_gpus);
                let on_this = Runs {
                    origin: Origin {
                        gpu: Some(gpu),
                        ..runs.origin
                    },
                    ..*runs
                };
                s.spawn(move || work(&on_this, gpu, on_gpus, (next, failed)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    let mut ends = Vec::new();
    for (end, worker_tally) in workers {
        tally.merge(worker_tally);
        ends.push(end);
    }
    (Ending::of(&on_gpus, &next, ends, runs.stop_requested()), tally)
}

/// One GPU's worker: bound to its GPU, the loop of
/// [`worker_loop::make_each`] over `plan` with scenes of its own (they
/// hold its GPU's uploads), until none is left, a stop is requested, or a
/// worker fails. Returns how it ended and what its runs left.
fn work(
    runs: &Runs,
    gpu: &Gpu,
    plan: &[PlanStep],
    (next, failed): (&AtomicUsize, &AtomicBool),
) -> (WorkerEnd, RunExtras) {
    let mut tally = RunExtras::default();
    let mut scenes = SceneCache::default();
    let end = match gpu.bind_to_thread() {
        Err(e) => WorkerEnd {
            error: Some(e.into()),
            cut: None,
        },
        Ok(()) => {
            let halted = || failed.load(Ordering::SeqCst) || runs.stop_requested();
            worker_loop::make_each(
                next,
                plan.len(),
                halted,
                || runs.stop_requested(),
                |i| {
                    let (study, run) = plan[i];
                    runs.one(study, run, &mut scenes, &mut tally)
                },
            )
        }
    };
    if end.error.is_some() {
        failed.store(true, Ordering::SeqCst);
    }
    (end, tally)
}

/// What one worker (a GPU, or an MPI rank) made of an experiment's rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Load {
    /// Its number: the GPU's ordinal, or the rank.
    pub number: usize,
    /// Its name: the GPU's, or the rank's host.
    pub name: String,
    /// Its rows.
    pub rows: usize,
    /// The time of their render calls, seconds.
    pub seconds: f64,
    /// Their pixel-samples.
    pub samples: f64,
}

/// The load of each worker that `rows` name, by number: `worker` gives a
/// row's worker (number and name), or `None` for rows no worker made.
pub fn loads<'r>(rows: &'r [RunRow], worker: impl Fn(&'r RunRow) -> Option<(usize, &'r str)>) -> Vec<Load> {
    let mut loads: BTreeMap<usize, Load> = BTreeMap::new();
    for r in rows {
        if let Some((number, name)) = worker(r) {
            let l = loads.entry(number).or_insert_with(|| Load {
                number,
                name: name.to_string(),
                rows: 0,
                seconds: 0.0,
                samples: 0.0,
            });
            l.rows += 1;
            l.seconds += r.total_ms / 1e3;
            l.samples += r.width as f64 * r.height as f64 * r.spp as f64;
        }
    }
    loads.into_values().collect()
}

/// One line per worker of `loads`, each called `noun` (`GPU`, `rank`),
/// and the load imbalance (the busiest worker's time over the mean, less
/// one); empty for fewer than two workers.
pub fn describe(loads: &[Load], noun: &str) -> String {
    let mut s = String::new();
    if loads.len() < 2 {
        return s;
    }
    for l in loads {
        let _ = writeln!(
            s,
            "{noun} {} ({}): {} rows, {:.3} s of render calls, {:.3} G samples",
            l.number,
            l.name,
            l.rows,
            l.seconds,
            l.samples / 1e9
        );
    }
    let busy: Vec<f64> = loads.iter().map(|l| l.seconds).collect();
    let _ = writeln!(
        s,
        "load imbalance over the {noun}s: {:.1} % (the busiest {noun}'s time over the mean)",
        100.0 * imbalance(&busy)
    );
    s
}

/// Per GPU that `rows` ran on, when they ran on several: its rows, the
/// time of their render calls and their samples, and the load imbalance;
/// empty otherwise. Rows an MPI rank made are left to [`per_rank`]: ranks
/// on several hosts each have a GPU 0.
pub fn per_gpu(rows: &[RunRow]) -> String {
    let gpu = |r: &RunRow| r.gpu_ordinal.filter(|_| r.rank.is_none());
    describe(&loads(rows, |r| gpu(r).map(|o| (o, r.gpu.as_str()))), "GPU")
}

/// Per MPI rank that made `rows`, when several did (`mpirun … experiment`):
/// its host, rows, render time and samples, and the load imbalance; empty
/// otherwise.
pub fn per_rank(rows: &[RunRow]) -> String {
    describe(&loads(rows, |r| r.rank.map(|k| (k, r.host.as_str()))), "rank")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_gpu_sums_its_rows_and_the_imbalance_compares_them() {
        let row = |ordinal: Option<usize>, total_ms| RunRow {
            gpu: "H".into(),
            gpu_ordinal: ordinal,
            total_ms,
            width: 10,
            height: 10,
            spp: 10,
            ..RunRow::default()
        };
        assert!(per_gpu(&[row(Some(0), 1000.0), row(None, 50.0)]).is_empty(), "one GPU");
        let text = per_gpu(&[
            row(Some(1), 3000.0),
            row(Some(0), 500.0),
            row(Some(0), 500.0),
            row(None, 9000.0),
        ]);
        assert!(text.contains("GPU 0 (H): 2 rows, 1.000 s of render calls"), "{text}");
        assert!(text.contains("GPU 1 (H): 1 rows, 3.000 s"), "{text}");
        assert!(text.contains("load imbalance over the GPUs: 50.0 %"), "{text}");
    }

    #[test]
    fn each_rank_sums_its_rows_with_its_host() {
        let row = |rank: Option<usize>, host: &str, total_ms| RunRow {
            rank,
            host: host.into(),
            total_ms,
            width: 10,
            height: 10,
            spp: 10,
            ..RunRow::default()
        };
        assert!(per_rank(&[row(None, "", 10.0)]).is_empty(), "no MPI");
        let text = per_rank(&[row(Some(0), "a", 1000.0), row(Some(2), "b", 3000.0)]);
        assert!(text.contains("rank 0 (a): 1 rows, 1.000 s"), "{text}");
        assert!(text.contains("rank 2 (b): 1 rows, 3.000 s"), "{text}");
        assert!(text.contains("load imbalance over the ranks: 50.0 %"), "{text}");
    }
}
