//! One image over several devices (`--devices`): one worker thread per
//! device, each with its own context and stream and a [`Session`] that
//! keeps its sum where it renders (the scene uploaded, the film and path
//! pool allocated once per device), takes chunks of samples from the shared
//! cursor of [`super::chunks`]; the sums are read back once each and merged
//! at the end. A device ready after the first joins only when that saves
//! more than its film costs ([`Join`]), so a short render stays on one.
//!
//! The merge is exact: films are 64-bit fixed point ([`FixedRgb`](device::film::FixedRgb)), so
//! adding them is integer addition, associative and commutative, and the
//! counters (rays, invalid samples) are sums as well. Whatever the number
//! of devices, their speeds and the order chunks finish in, the merged
//! film, its rays and its invalid samples equal the one-device render's,
//! bit for bit.
//!
//! A stop request (Ctrl-C) is seen between chunks: no device takes a new
//! chunk, the chunks in flight finish, and every finished sample of every
//! device is kept. The chunks were handed out in order, so the finished
//! samples are `0..n` and the image equals a render asked for `n` samples,
//! as a stopped one-device render does.
//!
//! The devices need not be GPUs: [`render`] takes any [`DeviceSum`], which
//! is how the tests run the split over several emulated devices on the CPU
//! (sessions of the `cpu` and `cpu-wave` back ends).

use super::Renderer;
use super::chunks::{SampleCursor, chunk_samples};
use super::session::{Session, added};
use crate::backend::gpu::Gpu;
use crate::backend::gpu::buffers::DeviceScene;
use crate::backend::{BackendKind, BackendOptions, Progress, RenderOutput};
use crate::prepared::PreparedScene;
use crate::settings::backend::BackendChoice;
use crate::settings::devices::{Devices, SplitRule};
use anyhow::{Context, anyhow};
use device::integrator::SampleRange;
use device::scene::RenderParams;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One device's part of a split render.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceShare {
    /// The device, e.g. "GPU 1 (NVIDIA H100 80GB HBM3)".
    pub device: String,
    /// Chunks it rendered.
    pub chunks: u32,
    /// Samples per pixel it rendered.
    pub spp: u32,
    /// Ray segments it traced.
    pub rays: u64,
    /// Time it spent in its chunks' renders.
    pub busy: Duration,
    /// Where the rest of its time went, for a device of this process's
    /// split (`None` for an MPI rank's share, whose parts are its own).
    pub times: Option<ShareTimes>,
}

/// Where one device's time in a split went, besides its chunks' renders.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ShareTimes {
    /// Before it could render: binding its context to its worker thread,
    /// uploading the scene (nothing when it was uploaded before the split)
    /// and allocating its film (and the wavefront's path pool).
    pub setup: Duration,
    /// Its first chunk (part of `busy`): one sample while no device's
    /// speed is known.
    pub first_chunk: Duration,
    /// Reading its sum back to the host, once, after its last chunk.
    pub readback: Duration,
    /// From the end of its readback to the end of the last device's:
    /// idle while the others finish.
    pub idle: Duration,
    /// Set when it stayed out of the render: what it would have saved
    /// against what it would have cost ([`Join`]).
    pub left_out: Option<Join>,
}

/// A device's estimate, once its setup is done and other devices are
/// rendering, of what joining them would bring: it joins when `gain`
/// exceeds `cost`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Join {
    /// The render's time saved: the work left, `W` (the samples left times
    /// the time per sample measured so far), over `k` devices against
    /// `k + 1`: `W / k − W / (k + 1)`.
    pub gain: Duration,
    /// Its film's way into the merged one, measured on its own empty sum:
    /// reading it back and adding it to another.
    pub cost: Duration,
}

/// What a render on one or several devices produced.
#[derive(Clone, Debug)]
pub struct SplitOutput {
    /// The merged render. Split over several devices, its `elapsed` is the
    /// split's wall time (from the first chunk to the merge, the scene's
    /// uploads included unless they were made before, [`render_uploaded`])
    /// and it has no GPU profile.
    pub output: RenderOutput,
    /// Each device's part, in the order of the devices (empty for a
    /// render on one device).
    pub shares: Vec<DeviceShare>,
    /// Adding the devices' sums into one film, after the last device is
    /// done (zero for a render on one device).
    pub merge: Duration,
}

impl SplitOutput {
    /// A render on one device: no shares, no merge.
    pub fn alone(output: RenderOutput) -> Self {
        SplitOutput {
            output,
            shares: Vec::new(),
            merge: Duration::ZERO,
        }
    }
}

/// The load imbalance of work spread over devices busy `busy` seconds
/// each: the busiest device's time over the mean, less one (0 when every
/// device was busy equally long).
pub fn imbalance(busy: &[f64]) -> f64 {
    let busiest = busy.iter().copied().fold(0.0, f64::max);
    let mean = busy.iter().sum::<f64>() / busy.len().max(1) as f64;
    if mean > 0.0 { busiest / mean - 1.0 } else { 0.0 }
}

/// One line per device (and where its time went), one for the final merge
/// and one for the imbalance (nothing for a render on one device).
pub fn describe(shares: &[DeviceShare], merge: Duration) -> String {
    let mut s = String::new();
    if shares.is_empty() {
        return s;
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for share in shares {
        let _ = writeln!(
            s,
            "  {}: {} spp in {} chunks, {:.3} s busy, {:.3} M rays",
            share.device,
            share.spp,
            share.chunks,
            share.busy.as_secs_f64(),
            share.rays as f64 / 1e6
        );
        let Some(t) = share.times else { continue };
        let _ = match (t.left_out, share.chunks) {
            (Some(join), _) => writeln!(
                s,
                "    stayed out after a setup of {:.3} ms: joining would have saved about {:.3} ms, \
                 and reading back and merging its film costs {:.3} ms",
                ms(t.setup),
                ms(join.gain),
                ms(join.cost)
            ),
            (None, 0) => writeln!(
                s,
                "    setup {:.3} ms; nothing was left to render (or the render was stopping) when it was ready",
                ms(t.setup)
            ),
            (None, _) => writeln!(
                s,
                "    setup {:.3} ms, first chunk {:.3} ms, readback {:.3} ms, idle at the end {:.3} ms",
                ms(t.setup),
                ms(t.first_chunk),
                ms(t.readback),
                ms(t.idle)
            ),
        };
    }
    let rendering = shares.iter().filter(|s| s.chunks > 0).count();
    let stayed_out = shares.iter().any(|s| s.times.is_some_and(|t| t.left_out.is_some()));
    if rendering == 1 && stayed_out {
        let _ = writeln!(s, "  kept on one device: splitting would not have paid for itself");
    }
    let _ = writeln!(s, "  merge of the devices' films: {:.3} ms", ms(merge));
    let _ = writeln!(
        s,
        "  load imbalance: {:.1} % (the busiest device's time over the mean)",
        100.0 * imbalance(&shares.iter().map(|s| s.busy.as_secs_f64()).collect::<Vec<_>>())
    );
    s
}

/// Films a render on `devices` devices holds in host memory at once, at
/// most: the one film, or per device its sum read back and, for a sum kept
/// on the host, the chunk it just rendered (the merge adds into one of
/// the sums).
pub fn host_films(devices: usize) -> u64 {
    match devices {
        0 | 1 => 1,
        n => 2 * n as u64,
    }
}

/// Opens the back end `choice` on each GPU that `devices` names.
/// `--devices` picks GPUs: `auto` is the megakernel, and a machine without
/// a usable GPU is an error that says so (a back end that renders on the
/// host is refused `--devices` before: `settings::scope::check_flags`).
pub fn open(choice: BackendChoice, options: BackendOptions, devices: &Devices) -> anyhow::Result<Vec<Renderer>> {
    let kind = match choice {
        BackendChoice::Auto => BackendKind::GpuMega,
        BackendChoice::Exactly(kind) => kind,
    };
    let present = Gpu::count().with_context(|| {
        format!(
            "--devices picks GPUs for the {} back end, and none can be used here; \
             `--backend cpu` without --devices renders on the host",
            kind.label()
        )
    })?;
    let ordinals = devices.ordinals(present).map_err(|e| anyhow!(e))?;
    // Each GPU's context and first module load at once, on threads of
    // their own: the opening takes the slowest GPU's time, not their sum.
    let opened: Vec<anyhow::Result<Renderer>> = std::thread::scope(|s| {
        let openings: Vec<_> = ordinals
            .iter()
            .map(|&d| {
                s.spawn(move || {
                    let gpu = Gpu::open(d).with_context(|| format!("opening GPU {d}"))?;
                    Renderer::on(kind, options, Some(&gpu))
                })
            })
            .collect();
        openings
            .into_iter()
            .map(|o| o.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    opened.into_iter().collect()
}

/// Renders the sample indices `samples` of `scene` on `renderers`: on one
/// in a single render, as it renders alone (stopping on `stop` as it does),
/// whether the range starts at 0 or, an MPI rank's share, further on;
/// otherwise split ([`render`]), each GPU with the scene uploaded once.
/// A share of no samples (an MPI rank's, when there are more ranks than
/// samples) is a film of zeros.
pub fn render_on(
    renderers: &[Renderer],
    scene: &PreparedScene,
    (params, samples): (RenderParams, SampleRange),
    stop: Option<&'static AtomicBool>,
    progress: Progress,
) -> anyhow::Result<SplitOutput> {
    if samples.end <= samples.begin {
        let pixels = params.width as usize * params.height as usize;
        return Ok(SplitOutput::alone(RenderOutput::nothing(
            pixels,
            "no device (no samples to render)".into(),
        )));
    }
    if let [one] = renderers {
        let output = one
            .clone()
            .stopping_on(stop)
            .render_samples(scene, None, params, samples, progress)?;
        return Ok(SplitOutput::alone(output));
    }
    // Each chunk runs to its end: the split sees the stop between chunks.
    let workers: Vec<Renderer> = renderers.iter().map(|r| r.clone().stopping_on(None)).collect();
    let rule = workers[0].options().split;
    render(&device_names(&workers), samples, stop, progress, rule, |d| {
        let renderer = &workers[d];
        if let Some(gpu) = renderer.gpu() {
            gpu.bind_to_thread()?;
        }
        renderer.session(scene, None, params, samples)
    })
}

/// Renders `spp` samples per pixel of `scene` split over the GPU back ends
/// `renderers`, GPU `d` reading the scene that `uploads[d]` holds there:
/// uploaded beforehand, so that the render's time leaves the upload out,
/// as a one-GPU render's does in an experiment. It is never stopped early.
pub fn render_uploaded(
    renderers: &[Renderer],
    uploads: &[DeviceScene],
    scene: &PreparedScene,
    params: RenderParams,
    spp: u32,
) -> anyhow::Result<SplitOutput> {
    anyhow::ensure!(
        uploads.len() == renderers.len(),
        "internal: {} uploads for {} devices",
        uploads.len(),
        renderers.len()
    );
    let samples = SampleRange { begin: 0, end: spp };
    let rule = renderers.first().map(|r| r.options().split).unwrap_or_default();
    render(&device_names(renderers), samples, None, &|_| {}, rule, |d| {
        let (renderer, uploaded) = (&renderers[d], &uploads[d]);
        if let Some(gpu) = renderer.gpu() {
            gpu.bind_to_thread()?;
        }
        renderer.session(scene, Some(uploaded), params, samples)
    })
}

/// One device's chunks of a split render, summed where it renders them: a
/// [`Session`], or a test's stand-in for a device.
pub trait DeviceSum {
    /// Renders the sample indices `samples` of every pixel, whole, into the
    /// sum; returns the samples per pixel rendered.
    fn render(&mut self, samples: SampleRange, progress: Progress) -> anyhow::Result<u32>;

    /// The sum so far, in host memory.
    fn read_back(&mut self) -> anyhow::Result<RenderOutput>;

    /// The sum, in host memory, after the device's last chunk.
    fn finish(self) -> anyhow::Result<RenderOutput>;
}

impl DeviceSum for Session<'_> {
    fn render(&mut self, samples: SampleRange, progress: Progress) -> anyhow::Result<u32> {
        Session::render(self, samples, progress)
    }

    fn read_back(&mut self) -> anyhow::Result<RenderOutput> {
        Session::read_back(self)
    }

    fn finish(self) -> anyhow::Result<RenderOutput> {
        Session::finish(self)
    }
}

/// The devices' names in summaries: `GPU 1 (NVIDIA H200)`; a host back
/// end alone as its name (`cpu`: an MPI rank's share then reads `rank 1
/// on node7 (cpu)`), several numbered (`host worker 2 (cpu)`).
fn device_names(renderers: &[Renderer]) -> Vec<String> {
    renderers
        .iter()
        .enumerate()
        .map(|(i, r)| match r.gpu() {
            Some(gpu) => format!("GPU {} ({})", gpu.info().ordinal, gpu.info().name),
            None if renderers.len() == 1 => r.kind().label().to_string(),
            None => format!("host worker {i} ({})", r.kind().label()),
        })
        .collect()
}

/// What rendered a split over the devices `names`: the device itself when
/// there is one, else how many and which.
fn devices_label(names: &[String]) -> String {
    match names {
        [one] => one.clone(),
        _ => format!("{} devices: {}", names.len(), names.join(", ")),
    }
}

/// Renders the sample indices `samples` over the devices `names`, one worker
/// thread each: `open(d)`, on device `d`'s thread, sets it up and returns
/// its sum ([`DeviceSum`]), which renders whole samples of every pixel and
/// never stops early. The first device ready renders; each later one joins
/// only when that saves more than its film costs to bring back ([`Join`]),
/// or at once when `rule` is [`SplitRule::Every`].
/// A set `stop` ends the split once the chunks in flight are done. The
/// first error of any device ends it too and is returned.
pub fn render<S: DeviceSum>(
    names: &[String],
    samples: SampleRange,
    stop: Option<&AtomicBool>,
    progress: Progress,
    rule: SplitRule,
    open: impl Fn(usize) -> anyhow::Result<S> + Sync,
) -> anyhow::Result<SplitOutput> {
    anyhow::ensure!(
        samples.end > samples.begin && !names.is_empty(),
        "internal: a split of no samples or over no device"
    );
    let cursor = SampleCursor::new(samples);
    let board = Board::new(names.len());
    let failed = AtomicBool::new(false);
    let halt = || failed.load(Ordering::SeqCst) || stop.is_some_and(|s| s.load(Ordering::SeqCst));
    let start = Instant::now();
    let parts: Vec<anyhow::Result<Finished>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..names.len())
            .map(|d| {
                let (cursor, board, open, halt, failed) = (&cursor, &board, &open, &halt, &failed);
                s.spawn(move || {
                    let opened = Instant::now();
                    let finished = open(d).and_then(|sum| {
                        let device = Device {
                            cursor,
                            board,
                            halt,
                            progress,
                            rule,
                        };
                        device.work(sum, opened.elapsed(), start)
                    });
                    if finished.is_err() {
                        failed.store(true, Ordering::SeqCst);
                    }
                    finished
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
    for (name, finished) in names.iter().zip(parts) {
        let Finished { part, mut share, done } = finished.with_context(|| format!("rendering on {name}"))?;
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

/// What the devices of a split share besides the cursor: how many render,
/// how many may (those that have not stayed out), and the time per sample
/// the first chunk to finish measured.
struct Board {
    rendering: AtomicUsize,
    may_render: AtomicUsize,
    /// Nanoseconds per sample; 0 until measured.
    per_sample_ns: AtomicU64,
}

impl Board {
    /// The board of a split over `devices` devices.
    fn new(devices: usize) -> Self {
        Board {
            rendering: AtomicUsize::new(0),
            may_render: AtomicUsize::new(devices),
            per_sample_ns: AtomicU64::new(0),
        }
    }

    /// The time per sample measured so far, if any.
    fn per_sample(&self) -> Option<Duration> {
        match self.per_sample_ns.load(Ordering::SeqCst) {
            0 => None,
            ns => Some(Duration::from_nanos(ns)),
        }
    }

    /// Records a chunk's time per sample, if none is known yet.
    fn measured(&self, per_sample: Duration) {
        let ns = (per_sample.as_nanos() as u64).max(1);
        let _ = self
            .per_sample_ns
            .compare_exchange(0, ns, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// What one device's worker left: its sum (none if it rendered no chunk),
/// its share (unnamed, its idle time not yet known), and when it was done,
/// from the split's start.
struct Finished {
    part: Option<RenderOutput>,
    share: DeviceShare,
    done: Duration,
}

/// One device's worker: what it shares with the others.
struct Device<'a> {
    cursor: &'a SampleCursor,
    board: &'a Board,
    halt: &'a (dyn Fn() -> bool + Sync),
    progress: Progress<'a>,
    rule: SplitRule,
}

impl Device<'_> {
    /// Once set up (in `setup`), joins the render if it pays ([`Join`])
    /// and renders its chunks; otherwise says why it stayed out.
    fn work<S: DeviceSum>(&self, mut sum: S, setup: Duration, start: Instant) -> anyhow::Result<Finished> {
        let times = ShareTimes {
            setup,
            ..ShareTimes::default()
        };
        let left_out = match self.join(&mut sum)? {
            Joining::Joins => return self.render_chunks(sum, times, start),
            Joining::StaysOut(join) => Some(join),
            Joining::TooLate => None,
        };
        self.board.may_render.fetch_sub(1, Ordering::SeqCst);
        Ok(Finished {
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
    fn render_chunks<S: DeviceSum>(
        &self,
        mut sum: S,
        mut times: ShareTimes,
        start: Instant,
    ) -> anyhow::Result<Finished> {
        let mut share = DeviceShare::default();
        let mut own = None;
        loop {
            // Its own speed sizes its chunks (another device's may differ),
            // shared with every device that renders or may yet join.
            let devices = self.board.may_render.load(Ordering::SeqCst);
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
        Ok(Finished {
            part,
            share: DeviceShare {
                times: Some(times),
                ..share
            },
            done: start.elapsed(),
        })
    }

    /// Whether this device joins. The first ready always does, so that a
    /// split renders at least one chunk. A later one finding the samples
    /// gone or the split halting stays out, under either rule: a stop
    /// request starts no device. Otherwise every one joins under
    /// [`SplitRule::Every`]; under [`SplitRule::Paying`] it waits for a
    /// time per sample, then joins when the time it would save exceeds its
    /// film's cost ([`Join`], counted against the devices rendering then).
    fn join<S: DeviceSum>(&self, sum: &mut S) -> anyhow::Result<Joining> {
        let board = self.board;
        if board
            .rendering
            .compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return Ok(Joining::Joins);
        }
        let too_late = || self.cursor.remaining() == 0 || (self.halt)();
        if self.rule == SplitRule::Every {
            if too_late() {
                return Ok(Joining::TooLate);
            }
            board.rendering.fetch_add(1, Ordering::SeqCst);
            return Ok(Joining::Joins);
        }
        let per_sample = loop {
            if too_late() {
                return Ok(Joining::TooLate);
            }
            if let Some(t) = board.per_sample() {
                break t;
            }
            std::thread::sleep(Duration::from_micros(100));
        };
        let cost = film_cost(sum)?;
        let rendering = board.rendering.load(Ordering::SeqCst).max(1) as u32;
        let left = per_sample * self.cursor.remaining();
        let gain = left / rendering - left / (rendering + 1);
        if gain > cost {
            board.rendering.fetch_add(1, Ordering::SeqCst);
            Ok(Joining::Joins)
        } else {
            Ok(Joining::StaysOut(Join { gain, cost }))
        }
    }
}

/// A device's decision ([`Device::join`]).
enum Joining {
    /// It renders.
    Joins,
    /// Joining would not pay.
    StaysOut(Join),
    /// The samples were gone, or the split halting, when it was ready.
    TooLate,
}

/// What bringing `sum`'s film into the merged one costs: reading it back,
/// and adding it to another film (measured on the sum before any chunk).
fn film_cost<S: DeviceSum>(sum: &mut S) -> anyhow::Result<Duration> {
    let reading = Instant::now();
    let out = sum.read_back()?;
    let read = reading.elapsed();
    let other = out.clone();
    let adding = Instant::now();
    std::hint::black_box(added(other, out));
    Ok(read + adding.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_devices_read_naturally_alone_and_numbered_together() {
        let cpu = Renderer::new(BackendKind::Cpu, BackendOptions::default()).unwrap();
        let one = device_names(std::slice::from_ref(&cpu));
        assert_eq!(one, ["cpu"]);
        assert_eq!(devices_label(&one), "cpu");
        let two = device_names(&[cpu.clone(), cpu]);
        assert_eq!(two, ["host worker 0 (cpu)", "host worker 1 (cpu)"]);
        assert_eq!(
            devices_label(&two),
            "2 devices: host worker 0 (cpu), host worker 1 (cpu)"
        );
    }
}
