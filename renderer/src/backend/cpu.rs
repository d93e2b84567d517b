//! The CPU back ends: the device crate's per-path schedule, run on the host.
//!
//! `cpu-serial` renders pixel after pixel on the calling thread. `cpu`
//! spreads the image over a number of threads in one of four ways
//! ([`CpuSchedule`]), the work distributions the parallel-RTIOW report
//! compares. Each pixel is rendered by the same function whichever thread
//! takes it, so every distribution renders the same film. The samples run
//! in passes over the image, so that Ctrl-C can stop at a whole sample.

use super::{ProgressCallback, RenderJob, RenderOutput};
use crate::settings::cpu::CpuSchedule;
use device::accel::Traversal;
use device::film::FixedRgb;
use device::integrator::{SampleRange, render_pixel};
use device::kernels::{AccelKernels, AccelVisitor, visit_accel};
use device::material::{AnyMaterial, Bsdf};
use device::observe::Unobserved;
use device::warp::Unsynchronised;
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// How many threads render.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// The calling thread only.
    Serial,
    /// This many threads (0: one per core).
    Pool(usize),
}

impl Threads {
    /// The number of threads that will run.
    pub fn count(self) -> usize {
        match self {
            Threads::Serial => 1,
            Threads::Pool(0) => std::thread::available_parallelism().map_or(1, |n| n.get()),
            Threads::Pool(n) => n,
        }
    }
}

/// Per-span tallies, summed over the image.
#[derive(Clone, Copy, Default)]
struct SpanCounts {
    rays: u64,
    invalid: u64,
}

impl SpanCounts {
    fn plus(self, o: SpanCounts) -> SpanCounts {
        SpanCounts {
            rays: self.rays + o.rays,
            invalid: self.invalid + o.invalid,
        }
    }
}

/// A run of consecutive pixels: the index of its first pixel and its film.
type Span<'f> = (usize, &'f mut [FixedRgb]);

/// Renders `job` on the CPU with the traversal code of the scene's structure.
pub fn render(
    job: &RenderJob,
    threads: Threads,
    schedule: CpuSchedule,
    progress: ProgressCallback,
) -> anyhow::Result<RenderOutput> {
    /// The render, for whichever structure the scene carries.
    struct WithTraversal<'j, 's> {
        job: &'j RenderJob<'s>,
        threads: Threads,
        schedule: CpuSchedule,
        progress: ProgressCallback<'j>,
    }
    impl AccelVisitor for WithTraversal<'_, '_> {
        type Output = anyhow::Result<RenderOutput>;
        fn visit<A: AccelKernels>(self) -> Self::Output {
            let (job, threads, schedule, progress) = (self.job, self.threads, self.schedule, self.progress);
            render_with::<A, AnyMaterial>(job, threads, schedule, progress)
        }
    }
    let kind = job.scene.accel.kind;
    visit_accel(
        kind,
        WithTraversal {
            job,
            threads,
            schedule,
            progress,
        },
    )
}

/// How long one pass of samples over the image should take: long enough
/// that the barrier between passes costs nothing, short enough that a stop
/// request is answered promptly.
const PASS_TIME: Duration = Duration::from_millis(500);

/// Renders `job` with traversal `T` and material dispatch `B` in passes of whole samples per pixel
/// (one sample first, then as many as fit in [`PASS_TIME`]), distributing
/// spans of pixels as `schedule` says. A stop request ends the render after
/// the pass in flight. Samples are summed exactly, so the passes do not
/// change the film.
fn render_with<T: Traversal, B: Bsdf>(
    job: &RenderJob,
    threads: Threads,
    schedule: CpuSchedule,
    progress: ProgressCallback,
) -> anyhow::Result<RenderOutput> {
    let view = job.scene.view(job.camera, job.features());
    let width = job.params.width as usize;
    let mut film = crate::system::memory::zeroed_vec::<FixedRgb>("the film", job.pixel_count())?;
    let n = threads.count();
    let pool = match threads {
        Threads::Serial => None,
        Threads::Pool(_) => Some(rayon::ThreadPoolBuilder::new().num_threads(n).build()?),
    };
    let start = Instant::now();
    let mut tally = SpanCounts::default();
    let mut samples = SampleRange {
        begin: job.samples.begin,
        end: job.samples.end.min(job.samples.begin.saturating_add(1)),
    };
    while samples.begin < samples.end {
        let pass_start = Instant::now();
        let render_span = |(first, span): Span| {
            let mut tally = SpanCounts::default();
            for (i, out) in span.iter_mut().enumerate() {
                let r = render_pixel::<T, B>(
                    &view,
                    &job.params,
                    (first + i) as u32,
                    samples,
                    &Unobserved,
                    Unsynchronised,
                );
                out.add(r.sum);
                tally = tally.plus(SpanCounts {
                    rays: r.rays as u64,
                    invalid: r.invalid_samples as u64,
                });
            }
            progress(span.len() as u64 * (samples.end - samples.begin) as u64);
            tally
        };
        tally = tally.plus(run_pass(&mut film, width, n, schedule, pool.as_ref(), &render_span));
        if job.stopping() {
            break;
        }
        let per_sample = pass_start.elapsed() / (samples.end - samples.begin);
        let next = (PASS_TIME.as_nanos() / per_sample.as_nanos().max(1)).clamp(1, u32::MAX as u128) as u32;
        samples = SampleRange {
            begin: samples.end,
            end: samples.end.saturating_add(next).min(job.samples.end),
        };
    }
    let device = match threads {
        Threads::Serial => "cpu (1 thread)".to_string(),
        Threads::Pool(_) => format!("cpu ({n} threads, {})", schedule.label()),
    };
    Ok(RenderOutput {
        film,
        spp: samples.end - job.samples.begin,
        rays: tally.rays,
        invalid_samples: tally.invalid,
        elapsed: start.elapsed(),
        device,
        gpu: None,
    })
}

/// One pass over the image: on the calling thread (no pool), or spread
/// over `n` threads as `schedule` says.
fn run_pass(
    film: &mut [FixedRgb],
    width: usize,
    n: usize,
    schedule: CpuSchedule,
    pool: Option<&rayon::ThreadPool>,
    render_span: &(impl Fn(Span) -> SpanCounts + Sync),
) -> SpanCounts {
    let Some(pool) = pool else {
        return film_rows(film, width)
            .into_iter()
            .map(render_span)
            .fold(SpanCounts::default(), SpanCounts::plus);
    };
    match schedule {
        CpuSchedule::DynamicRows => pool.install(|| {
            film_rows(film, width)
                .into_par_iter()
                .map(render_span)
                .reduce(SpanCounts::default, SpanCounts::plus)
        }),
        CpuSchedule::Collapsed => {
            let per_thread = film.len().div_ceil(n).max(1);
            let spans = film
                .chunks_mut(per_thread)
                .enumerate()
                .map(|(t, s)| vec![(t * per_thread, s)]);
            run_static(spans.collect(), render_span)
        }
        CpuSchedule::StaticRows => {
            let rows = film_rows(film, width);
            let per_thread = rows.len().div_ceil(n).max(1);
            let mut lists: Vec<Vec<Span>> = Vec::new();
            for (i, row) in rows.into_iter().enumerate() {
                if i % per_thread == 0 {
                    lists.push(Vec::new());
                }
                lists.last_mut().expect("pushed above").push(row);
            }
            run_static(lists, render_span)
        }
        CpuSchedule::CyclicRows => {
            let mut lists: Vec<Vec<Span>> = (0..n).map(|_| Vec::new()).collect();
            for (i, row) in film_rows(film, width).into_iter().enumerate() {
                lists[i % n].push(row);
            }
            run_static(lists, render_span)
        }
    }
}

/// The film's rows as spans.
fn film_rows(film: &mut [FixedRgb], width: usize) -> Vec<Span<'_>> {
    film.chunks_mut(width)
        .enumerate()
        .map(|(y, row)| (y * width, row))
        .collect()
}

/// Runs one scoped thread per list of spans (a static distribution: each
/// thread renders exactly the spans it was given, in order).
fn run_static(lists: Vec<Vec<Span>>, render_span: &(impl Fn(Span) -> SpanCounts + Sync)) -> SpanCounts {
    std::thread::scope(|s| {
        let handles: Vec<_> = lists
            .into_iter()
            .map(|spans| {
                s.spawn(move || {
                    spans
                        .into_iter()
                        .map(render_span)
                        .fold(SpanCounts::default(), SpanCounts::plus)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .fold(SpanCounts::default(), SpanCounts::plus)
    })
}
