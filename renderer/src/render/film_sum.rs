//! One device's renders of one image, summed where they run
//! ([`DeviceFilmSum`]): the chunks a device renders in a split render
//! ([`super::split`]), or a whole render on its own.
//!
//! A GPU keeps the scene, the film, the counters and (for the wavefront)
//! the path pool in its memory from the sum's opening to its reading
//! back: each chunk adds its samples to the film there, and the film
//! crosses to the host once, however many chunks the device rendered. The
//! emulated wavefront (`cpu-wave`) keeps its memory the same way, so that
//! the reuse is tested without a GPU; the CPU back ends add each chunk's
//! film into a sum on the host.

use crate::backend::cpu::{self, Threads};
use crate::backend::gpu::mega_launch::MegaSession;
use crate::backend::gpu::wave_launch::WaveSession;
use crate::backend::wave_driver::emulated::EmulatedSession;
use crate::backend::{BackendKind, BackendOptions, OpenedBackend, ProgressCallback, RenderJob, RenderOutput};
use device::integrator::SampleRange;
use device::scene::RenderView;

/// A device's renders of one image so far, summed where they ran
/// (opened by [`super::Renderer::open_sum`]).
pub struct DeviceFilmSum<'a> {
    kind: BackendKind,
    options: BackendOptions,
    /// The image: the job of every render but for its samples.
    job: RenderJob<'a>,
    storage: SumStorage<'a>,
}

/// Where a device's renders are summed, and by which back end.
enum SumStorage<'a> {
    /// In host memory: the CPU back ends' films, each rendered on
    /// `threads`, added (`None` before the first render).
    Host {
        threads: Threads,
        sum: Option<RenderOutput>,
    },
    /// In the emulated wavefront's memory.
    Emulated(EmulatedSession),
    /// In the GPU's memory, by the megakernel (boxed, as the wavefront's:
    /// a sum is opened once per device).
    Mega(Box<MegaSession<'a>>),
    /// In the GPU's memory, by the wavefront.
    Wave(Box<WaveSession<'a>>),
}

impl<'a> DeviceFilmSum<'a> {
    /// Opens `backend` with `options` for renders of `job`'s image, each
    /// of one part of `job`'s samples, uploading the scene to its GPU
    /// unless the job's is there already; the wavefront's pool is sized for
    /// all of the job's samples, as one render of them would be.
    pub fn open(backend: &'a OpenedBackend, options: BackendOptions, job: RenderJob<'a>) -> anyhow::Result<Self> {
        let params = job.params;
        let wavefront_only = || {
            anyhow::ensure!(
                params.view == RenderView::Radiance,
                "debug views render on the cpu and gpu-mega back ends; the wavefront traces radiance only"
            );
            Ok(())
        };
        let storage = match backend {
            OpenedBackend::CpuSerial => SumStorage::Host {
                threads: Threads::Serial,
                sum: None,
            },
            OpenedBackend::Cpu => SumStorage::Host {
                threads: Threads::Pool(options.threads),
                sum: None,
            },
            OpenedBackend::CpuWave => {
                wavefront_only()?;
                SumStorage::Emulated(EmulatedSession::open(&job, &options.wavefront, job.work_items().1)?)
            }
            OpenedBackend::GpuMega(gpu) => {
                SumStorage::Mega(Box::new(MegaSession::open(gpu, &job, &options.megakernel)?))
            }
            OpenedBackend::GpuWave(gpu) => {
                wavefront_only()?;
                SumStorage::Wave(Box::new(WaveSession::open(
                    gpu,
                    &job,
                    &options.wavefront,
                    job.work_items().1,
                )?))
            }
        };
        Ok(DeviceFilmSum {
            kind: backend.kind(),
            options,
            job,
            storage,
        })
    }

    /// Renders the sample indices `samples` of every pixel and adds them to
    /// the sum. Returns the samples per pixel rendered: all of
    /// them, or the whole samples finished when the renderer's stop flag
    /// ended the render early.
    pub fn render(&mut self, samples: SampleRange, progress: ProgressCallback) -> anyhow::Result<u32> {
        let job = RenderJob { samples, ..self.job };
        let options = self.options;
        Ok(match &mut self.storage {
            SumStorage::Host { threads, sum } => {
                let out = cpu::render(&job, *threads, options.cpu_schedule, progress)?;
                let spp = out.spp;
                *sum = Some(match sum.take() {
                    Some(before) => added(before, out),
                    None => out,
                });
                spp
            }
            SumStorage::Emulated(session) => session.render(&job, job.work_items(), progress),
            SumStorage::Mega(session) => session.render(&job, progress)?,
            SumStorage::Wave(session) => session.render(&job, job.work_items(), progress)?,
        })
    }

    /// The sum of the renders, in host memory, the device done: what
    /// [`DeviceFilmSum::read_back`] gives, without a copy of a host sum's film.
    pub fn finish(mut self) -> anyhow::Result<RenderOutput> {
        match &mut self.storage {
            SumStorage::Host { sum, .. } => Ok(sum.take().unwrap_or_else(|| self.nothing())),
            _ => self.read_back(),
        }
    }

    /// The sum of the renders so far, in host memory: their film, samples
    /// per pixel and counters, their times added (a GPU's profile is its
    /// last render's).
    pub fn read_back(&mut self) -> anyhow::Result<RenderOutput> {
        let job = &self.job;
        Ok(match &mut self.storage {
            SumStorage::Host { sum, .. } => sum.clone().unwrap_or_else(|| self.nothing()),
            SumStorage::Emulated(session) => session
                .read_back(job)
                .into_render_output("the host, emulating the wavefront", &self.options.wavefront),
            SumStorage::Mega(session) => session.read_back()?,
            SumStorage::Wave(session) => session.read_back(job)?,
        })
    }
}

impl DeviceFilmSum<'_> {
    /// The sum before any render.
    fn nothing(&self) -> RenderOutput {
        RenderOutput::nothing(self.job.pixel_count(), self.kind.label().to_string())
    }
}

/// Two renders of the same image as one: every pixel and counter added
/// exactly (the films are fixed point), their times added; the device is
/// the first's.
pub fn added(mut a: RenderOutput, b: RenderOutput) -> RenderOutput {
    for (sum, add) in a.film.iter_mut().zip(&b.film) {
        sum.add(*add);
    }
    RenderOutput {
        spp: a.spp + b.spp,
        rays: a.rays + b.rays,
        invalid_samples: a.invalid_samples + b.invalid_samples,
        elapsed: a.elapsed + b.elapsed,
        ..a
    }
}
