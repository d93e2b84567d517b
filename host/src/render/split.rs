//! One image over several devices (`--devices`): one worker thread per
//! device, each with its own context and stream (a [`Renderer`] on its own
//! [`Gpu`], the scene uploaded once per device), takes chunks of samples
//! from the shared cursor of [`super::chunks`] and adds each chunk's film
//! to its own sum; the sums are merged at the end.
//!
//! The merge is exact: films are 64-bit fixed point ([`FixedRgb`]), so
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
//! The devices need not be GPUs: [`render`] takes any function that renders
//! a chunk on a device, which is how the tests run the split over several
//! emulated devices on the CPU ([`Renderer`]s of the `cpu` and `cpu-wave`
//! back ends).

use super::Renderer;
use super::chunks::{SampleCursor, chunk_samples};
use crate::backend::gpu::Gpu;
use crate::backend::gpu::buffers::DeviceScene;
use crate::backend::gpu::profile::GpuProfile;
use crate::backend::{BackendKind, BackendOptions, Progress, RenderOutput};
use crate::prepared::PreparedScene;
use crate::settings::backend::BackendChoice;
use crate::settings::devices::Devices;
use anyhow::{Context, anyhow};
use device::film::FixedRgb;
use device::integrator::SampleRange;
use device::scene::RenderParams;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// Before its first chunk: binding its context to its worker thread and
    /// uploading the scene (nothing when it was uploaded before the split).
    pub setup: Duration,
    /// Its first chunk, of one sample while its speed is unknown (part of
    /// `busy`).
    pub first_chunk: Duration,
    /// Within its chunks: path-state allocation and the scene's upload, as
    /// a GPU back end's profile counts them (part of `busy`).
    pub alloc: Duration,
    /// Within its chunks: reading each chunk's film back (part of `busy`).
    pub readback: Duration,
    /// Adding each chunk's film to its sum.
    pub film_add: Duration,
    /// From the end of its last chunk to the end of the last device's:
    /// idle while the others finish.
    pub idle: Duration,
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
        if let Some(t) = share.times {
            let _ = writeln!(
                s,
                "    setup {:.3} s; in its chunks: the first {:.3} s, state allocation and upload {:.3} s, \
                 readback {:.3} s; film adds {:.3} s; idle at the end {:.3} s",
                t.setup.as_secs_f64(),
                t.first_chunk.as_secs_f64(),
                t.alloc.as_secs_f64(),
                t.readback.as_secs_f64(),
                t.film_add.as_secs_f64(),
                t.idle.as_secs_f64()
            );
        }
    }
    let _ = writeln!(s, "  merge of the devices' films: {:.3} s", merge.as_secs_f64());
    let _ = writeln!(
        s,
        "  load imbalance: {:.1} % (the busiest device's time over the mean)",
        100.0 * imbalance(&shares.iter().map(|s| s.busy.as_secs_f64()).collect::<Vec<_>>())
    );
    s
}

/// Films a render on `devices` devices holds in host memory at once: the
/// one film, or per device its sum and the chunk it just rendered (the
/// merge adds into one of the sums).
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
    ordinals
        .into_iter()
        .map(|d| {
            let gpu = Gpu::open(d).with_context(|| format!("opening GPU {d}"))?;
            Renderer::on(kind, options, Some(&gpu))
        })
        .collect()
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
        return Ok(SplitOutput {
            output: RenderOutput {
                film: vec![FixedRgb::default(); pixels],
                spp: 0,
                rays: 0,
                invalid_samples: 0,
                elapsed: Duration::ZERO,
                device: "no device (no samples to render)".into(),
                gpu: None,
            },
            shares: Vec::new(),
            merge: Duration::ZERO,
        });
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
    render(&device_names(&workers), samples, stop, progress, |d| {
        let renderer = &workers[d];
        let uploaded = renderer
            .gpu()
            .map(|gpu| {
                gpu.bind_to_thread()?;
                DeviceScene::upload(gpu, scene)
            })
            .transpose()?;
        Ok(move |samples: SampleRange, progress: Progress| {
            renderer.render_samples(scene, uploaded.as_ref(), params, samples, progress)
        })
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
    render(&device_names(renderers), samples, None, &|_| {}, |d| {
        let (renderer, uploaded) = (&renderers[d], &uploads[d]);
        if let Some(gpu) = renderer.gpu() {
            gpu.bind_to_thread()?;
        }
        Ok(move |samples: SampleRange, progress: Progress| {
            renderer.render_samples(scene, Some(uploaded), params, samples, progress)
        })
    })
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
/// thread each: `open(d)`, on device `d`'s thread, prepares it and returns
/// the function that renders a chunk of samples there (whole samples of
/// every pixel, never stopping early). Each device renders at least one
/// chunk; after that, a set `stop` ends the split once the chunks in
/// flight are done. The first error of any device ends it too and is
/// returned.
pub fn render<W>(
    names: &[String],
    samples: SampleRange,
    stop: Option<&AtomicBool>,
    progress: Progress,
    open: impl Fn(usize) -> anyhow::Result<W> + Sync,
) -> anyhow::Result<SplitOutput>
where
    W: FnMut(SampleRange, Progress) -> anyhow::Result<RenderOutput>,
{
    anyhow::ensure!(
        samples.end > samples.begin && !names.is_empty(),
        "internal: a split of no samples or over no device"
    );
    let cursor = SampleCursor::new(samples);
    let failed = AtomicBool::new(false);
    let halt = || failed.load(Ordering::SeqCst) || stop.is_some_and(|s| s.load(Ordering::SeqCst));
    let start = Instant::now();
    // Each device's sum (none if the samples ran out before it took a
    // chunk), with its setup and when it was done.
    let parts: Vec<anyhow::Result<(Option<Part>, Duration, Duration)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..names.len())
            .map(|d| {
                let (cursor, open, halt, failed) = (&cursor, &open, &halt, &failed);
                s.spawn(move || {
                    let opened = Instant::now();
                    let part = open(d).and_then(|chunk| {
                        let setup = opened.elapsed();
                        let part = work(chunk, cursor, names.len(), halt, progress)?;
                        Ok((part, setup, start.elapsed()))
                    });
                    if part.is_err() {
                        failed.store(true, Ordering::SeqCst);
                    }
                    part
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    let all_done = start.elapsed();
    let mut merged: Option<Part> = None;
    let mut shares = Vec::new();
    let mut merge = Duration::ZERO;
    for (name, part) in names.iter().zip(parts) {
        let (part, setup, done) = part.with_context(|| format!("rendering on {name}"))?;
        let own = part.as_ref().map(|p| p.share.clone()).unwrap_or_default();
        shares.push(DeviceShare {
            device: name.clone(),
            times: Some(ShareTimes {
                setup,
                idle: all_done.saturating_sub(done),
                ..own.times.unwrap_or_default()
            }),
            ..own
        });
        let adding = Instant::now();
        merged = match (merged, part) {
            (Some(sum), Some(part)) => Some(sum.plus(part)),
            (sum, part) => sum.or(part),
        };
        merge += adding.elapsed();
    }
    let merged = merged.ok_or_else(|| anyhow!("internal: the split rendered no chunk"))?;
    let done: u32 = shares.iter().map(|s| s.spp).sum();
    anyhow::ensure!(
        done == cursor.taken(),
        "internal: {} samples were handed out and {done} rendered",
        cursor.taken()
    );
    Ok(SplitOutput {
        output: RenderOutput {
            film: merged.film,
            spp: done,
            rays: merged.share.rays,
            invalid_samples: merged.invalid_samples,
            elapsed: start.elapsed(),
            device: devices_label(names),
            gpu: None,
        },
        shares,
        merge,
    })
}

/// A sum of chunks: one device's, or the merge of several.
struct Part {
    film: Vec<FixedRgb>,
    invalid_samples: u64,
    share: DeviceShare,
}

impl Part {
    /// One chunk's render, which took `busy`.
    fn chunk(out: RenderOutput, busy: Duration) -> Part {
        let profile = |ms: fn(&GpuProfile) -> f64| {
            Duration::from_secs_f64(out.gpu.as_ref().map_or(0.0, |g| ms(g).max(0.0)) / 1e3)
        };
        Part {
            share: DeviceShare {
                chunks: 1,
                spp: out.spp,
                rays: out.rays,
                busy,
                times: Some(ShareTimes {
                    first_chunk: busy,
                    alloc: profile(|g| g.upload_ms),
                    readback: profile(|g| g.readback_ms),
                    ..ShareTimes::default()
                }),
                ..DeviceShare::default()
            },
            film: out.film,
            invalid_samples: out.invalid_samples,
        }
    }

    /// This sum and `other`'s, a later chunk of the same device or another
    /// device's sum: every pixel and counter added exactly, the times of
    /// the chunks added (the first chunk's stays this sum's).
    fn plus(mut self, other: Part) -> Part {
        for (sum, add) in self.film.iter_mut().zip(&other.film) {
            sum.add(*add);
        }
        self.invalid_samples += other.invalid_samples;
        let (a, b) = (&mut self.share, &other.share);
        a.chunks += b.chunks;
        a.spp += b.spp;
        a.rays += b.rays;
        a.busy += b.busy;
        a.times = match (a.times, b.times) {
            (Some(x), Some(y)) => Some(ShareTimes {
                alloc: x.alloc + y.alloc,
                readback: x.readback + y.readback,
                film_add: x.film_add + y.film_add,
                ..x
            }),
            (x, y) => x.or(y),
        };
        self
    }
}

/// One device's loop: take a chunk sized by its speed, render it, add it
/// to the device's sum; until the samples run out or `halt` says to stop
/// (checked after each chunk, so every device renders at least one).
fn work<W>(
    mut render_chunk: W,
    cursor: &SampleCursor,
    devices: usize,
    halt: &dyn Fn() -> bool,
    progress: Progress,
) -> anyhow::Result<Option<Part>>
where
    W: FnMut(SampleRange, Progress) -> anyhow::Result<RenderOutput>,
{
    let mut sum: Option<Part> = None;
    let mut per_sample = None;
    while let Some(samples) = cursor.take(chunk_samples(per_sample, cursor.remaining(), devices)) {
        let started = Instant::now();
        let out = render_chunk(samples, progress)?;
        let busy = started.elapsed();
        let asked = samples.end - samples.begin;
        anyhow::ensure!(
            out.spp == asked,
            "internal: a chunk of {asked} samples per pixel came back with {}",
            out.spp
        );
        per_sample = Some(busy / asked);
        let chunk = Part::chunk(out, busy);
        let adding = Instant::now();
        let mut added = match sum {
            Some(sum) => sum.plus(chunk),
            None => chunk,
        };
        if let Some(t) = added.share.times.as_mut() {
            t.film_add += adding.elapsed();
        }
        sum = Some(added);
        if halt() {
            break;
        }
    }
    Ok(sum)
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
