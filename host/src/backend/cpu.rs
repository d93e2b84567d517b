//! The CPU back ends: the device crate's per-path schedule, run on the host.

use super::{Progress, RenderJob, RenderOutput};
use device::accel::{AccelKind, BruteForce, Bvh, KdTree, Traversal};
use device::film::FixedRgb;
use device::integrator::{SampleRange, render_pixel};
use device::observe::Unobserved;
use rayon::prelude::*;
use std::time::Instant;

/// How many threads render.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// The calling thread only.
    Serial,
    /// A rayon pool of this many threads (0: one per core).
    Pool(usize),
}

/// Per-row tallies, summed over the image.
#[derive(Clone, Copy, Default)]
struct Tally {
    rays: u64,
    invalid: u64,
}

impl Tally {
    fn plus(self, o: Tally) -> Tally {
        Tally {
            rays: self.rays + o.rays,
            invalid: self.invalid + o.invalid,
        }
    }
}

/// Renders `job` on the CPU with the traversal code of the scene's structure.
pub fn render(job: &RenderJob, threads: Threads, progress: Progress) -> anyhow::Result<RenderOutput> {
    match job.scene.accel.kind {
        AccelKind::None => render_with::<BruteForce>(job, threads, progress),
        AccelKind::Bvh => render_with::<Bvh>(job, threads, progress),
        AccelKind::KdTree => render_with::<KdTree>(job, threads, progress),
    }
}

/// Renders `job` with traversal `T`. Rows are the unit of work: rayon steals
/// them, which balances cheap sky rows against expensive glass rows.
fn render_with<T: Traversal>(job: &RenderJob, threads: Threads, progress: Progress) -> anyhow::Result<RenderOutput> {
    let view = job.scene.view(job.camera);
    let width = job.params.width as usize;
    let samples = SampleRange { begin: 0, end: job.spp };
    let mut film = vec![FixedRgb::default(); job.pixel_count()];
    let render_row = |(y, row): (usize, &mut [FixedRgb])| {
        let mut tally = Tally::default();
        for (x, out) in row.iter_mut().enumerate() {
            let r = render_pixel::<T>(&view, &job.params, (y * width + x) as u32, samples, &Unobserved);
            *out = r.sum;
            tally = tally.plus(Tally {
                rays: r.rays as u64,
                invalid: r.invalid_samples as u64,
            });
        }
        progress(width as u64 * job.spp as u64);
        tally
    };
    let start = Instant::now();
    let (tally, device) = match threads {
        Threads::Serial => {
            let t = film
                .chunks_mut(width)
                .enumerate()
                .map(render_row)
                .fold(Tally::default(), Tally::plus);
            (t, "cpu (1 thread)".to_string())
        }
        Threads::Pool(n) => {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(n).build()?;
            let t = pool.install(|| {
                film.par_chunks_mut(width)
                    .enumerate()
                    .map(render_row)
                    .reduce(Tally::default, Tally::plus)
            });
            (t, format!("cpu ({} threads)", pool.current_num_threads()))
        }
    };
    Ok(RenderOutput {
        film,
        rays: tally.rays,
        invalid_samples: tally.invalid,
        elapsed: start.elapsed(),
        device,
        gpu: None,
    })
}
