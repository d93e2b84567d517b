//! The workers of a split render: one thread per device, which sets its
//! device up, joins the render if the join rule says so
//! (`super::join_rule`), takes chunks of samples from the shared cursor
//! ([`crate::render::chunks`]) until none is left, and reads its sum back
//! once; the sums are then merged, exactly, into one film.

use super::description::devices_label;
use super::join_rule::{self, JoinBoard, Joining};
use super::output::{DeviceShare, ShareTimes, SplitOutput};
use super::split_device::SplitDevice;
use crate::backend::{ProgressCallback, RenderOutput};
use crate::render::chunks::{SampleCursor, chunk_samples};
use crate::render::film_sum::added;
use crate::settings::devices::SplitRule;
use anyhow::{Context, anyhow};
use device::integrator::SampleRange;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Renders the sample indices `samples` over the devices `names`, one worker
/// thread each: `open(d)`, on device `d`'s thread, sets it up and returns
/// its sum ([`SplitDevice`]), which renders whole samples of every pixel and
/// never stops early. The first device ready renders; each later one joins
/// only when that saves more than its film costs to bring back
/// ([`super::Join`]), or at once when `rule` is [`SplitRule::Every`].
/// A set `stop` ends the split once the chunks in flight are done. The
/// first error of any device ends it too and is returned.
pub fn render_devices<S: SplitDevice>(
    names: &[String],
    samples: SampleRange,
    stop: Option<&AtomicBool>,
    progress: ProgressCallback,
    rule: SplitRule,
    open: impl Fn(usize) -> anyhow::Result<S> + Sync,
) -> anyhow::Result<SplitOutput> {
    anyhow::ensure!(
        samples.end > samples.begin && !names.is_empty(),
        "internal: a split of no samples or over no device"
    );
    let cursor = SampleCursor::new(samples);
    let board = JoinBoard::new(names.len());
    let failed = AtomicBool::new(false);
    let halt = || failed.load(Ordering::SeqCst) || stop.is_some_and(|s| s.load(Ordering::SeqCst));
    let start = Instant::now();
    let outcomes: Vec<anyhow::Result<WorkerOutcome>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..names.len())
            .map(|d| {
                let (cursor, board, open, halt, failed) = (&cursor, &board, &open, &halt, &failed);
                s.spawn(move || {
                    let opened = Instant::now();
                    let outcome = open(d).and_then(|sum| {
                        let worker = SplitWorker {
                            cursor,
                            board,
                            halt,
                            progress,
                            rule,
                        };
                        worker.work(sum, opened.elapsed(), start)
                    });
                    if outcome.is_err() {
                        failed.store(true, Ordering::SeqCst);
                    }
                    outcome
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    let all_done = start.elapsed();
    let mut merged: Option<RenderOutput> = None;
    let mut shares = Vec::new();
    let mut merge = Duration::ZERO;
    for (name, outcome) in names.iter().zip(outcomes) {
        let WorkerOutcome { part, mut share, done } = outcome.with_context(|| format!("rendering on {name}"))?;
        share.device = name.clone();
        if let Some(t) = share.times.as_mut() {
            t.idle = all_done.saturating_sub(done);
        }
        shares.push(share);
        let adding = Instant::now();
        merged = match (merged, part) {
            (Some(sum), Some(part)) => Some(added(sum, part)),
            (sum, part) => sum.or(part),
        };
        merge += adding.elapsed();
    }
    let merged = merged.ok_or_else(|| anyhow!("internal: the split rendered no chunk"))?;
    let done: u32 = shares.iter().map(|s| s.spp).sum();
    anyhow::ensure!(
        done == cursor.taken() && merged.spp == done,
        "internal: {} samples were handed out, {done} rendered and {} read back",
        cursor.taken(),
        merged.spp
    );
    Ok(SplitOutput {
        output: RenderOutput {
            elapsed: start.elapsed(),
            device: devices_label(names),
            gpu: None,
            ..merged
        },
        shares,
        merge,
    })
}

/// What one device's worker left: its sum (none if it rendered no chunk),
/// its share (unnamed, its idle time not yet known), and when it was done,
/// from the split's start.
struct WorkerOutcome {
    part: Option<RenderOutput>,
    share: DeviceShare,
    done: Duration,
}

/// One device's worker: what it shares with the others.
struct SplitWorker<'a> {
    cursor: &'a SampleCursor,
    board: &'a JoinBoard,
    halt: &'a (dyn Fn() -> bool + Sync),
    progress: ProgressCallback<'a>,
    rule: SplitRule,
}

impl SplitWorker<'_> {
    /// Once set up (in `setup`), joins the render if it pays
    /// ([`join_rule::decide`]) and renders its chunks; otherwise says why it
    /// stayed out.
    fn work<S: SplitDevice>(&self, mut sum: S, setup: Duration, start: Instant) -> anyhow::Result<WorkerOutcome> {
        let times = ShareTimes {
            setup,
            ..ShareTimes::default()
        };
        let left_out = match join_rule::decide(self.board, self.cursor, self.halt, self.rule, &mut sum)? {
            Joining::Joins => return self.render_chunks(sum, times, start),
            Joining::StaysOut(join) => Some(join),
            Joining::TooLate => None,
        };
        self.board.stayed_out();
        Ok(WorkerOutcome {
            part: None,
            share: DeviceShare {
                times: Some(ShareTimes { left_out, ..times }),
                ..DeviceShare::default()
            },
            done: start.elapsed(),
        })
    }

    /// Takes chunks sized by its own time per sample (one sample while it
    /// has measured none) until the samples run out or `halt` says to stop
    /// (checked after each chunk), and reads its sum back.
    fn render_chunks<S: SplitDevice>(
        &self,
        mut sum: S,
        mut times: ShareTimes,
        start: Instant,
    ) -> anyhow::Result<WorkerOutcome> {
        let mut share = DeviceShare::default();
        let mut own = None;
        loop {
            // Its own speed sizes its chunks (another device's may differ),
            // shared with every device that renders or may yet join.
            let devices = self.board.may_render();
            let want = chunk_samples(own, self.cursor.remaining(), devices);
            let Some(samples) = self.cursor.take(want) else { break };
            let started = Instant::now();
            let rendered = sum.render(samples, self.progress)?;
            let took = started.elapsed();
            let asked = samples.end - samples.begin;
            anyhow::ensure!(
                rendered == asked,
                "internal: a chunk of {asked} samples per pixel came back with {rendered}"
            );
            if share.chunks == 0 {
                times.first_chunk = took;
            }
            own = Some(took / asked);
            self.board.measured(took / asked);
            share.chunks += 1;
            share.spp += asked;
            share.busy += took;
            if (self.halt)() {
                break;
            }
        }
        let part = if share.chunks > 0 {
            let reading = Instant::now();
            let out = sum.finish()?;
            times.readback = reading.elapsed();
            share.rays = out.rays;
            Some(out)
        } else {
            None
        };
        Ok(WorkerOutcome {
            part,
            share: DeviceShare {
                times: Some(times),
                ..share
            },
            done: start.elapsed(),
        })
    }
}
