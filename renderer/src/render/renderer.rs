//! A back end ready to render ([`Renderer`]): the back end opened (a GPU
//! back end with its GPU, [`OpenedBackend`]) and its options; it renders
//! whole images or chunks of samples of one, on its one device.

use super::film_sum::DeviceFilmSum;
use crate::backend::gpu::Gpu;
use crate::backend::gpu::buffers::DeviceScene;
use crate::backend::{BackendKind, BackendOptions, OpenedBackend, RenderJob, RenderOutput};
use crate::prepared::PreparedScene;
use crate::settings::backend::BackendChoice;
use device::integrator::SampleRange;
use device::scene::RenderParams;
use std::sync::atomic::AtomicBool;

/// A back end ready to render on one device: for GPU back ends, an open
/// device with the module loaded (opened once, reused across renders).
#[derive(Clone)]
pub struct Renderer {
    backend: OpenedBackend,
    options: BackendOptions,
    stop: Option<&'static AtomicBool>,
}

impl Renderer {
    /// Prepares `kind`; for a GPU back end this opens device 0.
    pub fn new(kind: BackendKind, options: BackendOptions) -> anyhow::Result<Self> {
        Ok(Renderer::of(OpenedBackend::open(kind)?, options))
    }

    /// Prepares `kind` on a GPU opened earlier (shared by many renderers);
    /// a GPU back end without one is an error ([`OpenedBackend::on`]).
    pub fn on(kind: BackendKind, options: BackendOptions, gpu: Option<&Gpu>) -> anyhow::Result<Self> {
        Ok(Renderer::of(OpenedBackend::on(kind, gpu)?, options))
    }

    /// Resolves `choice`: `auto` takes the GPU megakernel when a GPU opens and
    /// otherwise the `cpu` back end, with a note saying why.
    pub fn choose(choice: BackendChoice, options: BackendOptions) -> anyhow::Result<(Self, Option<String>)> {
        match choice {
            BackendChoice::Exactly(kind) => Ok((Renderer::new(kind, options)?, None)),
            BackendChoice::Auto => match Gpu::open(0) {
                Ok(gpu) => {
                    let note = format!("using the gpu-mega back end on {}", gpu.info().describe());
                    Ok((Renderer::of(OpenedBackend::GpuMega(gpu), options), Some(note)))
                }
                Err(e) => {
                    let note = format!("no usable GPU ({e}); rendering on the cpu back end");
                    Ok((Renderer::of(OpenedBackend::Cpu, options), Some(note)))
                }
            },
        }
    }

    /// `backend` with `options`, never stopped early.
    fn of(backend: OpenedBackend, options: BackendOptions) -> Self {
        Renderer {
            backend,
            options,
            stop: None,
        }
    }

    /// Makes renders stop early once `flag` is set (by Ctrl-C), keeping
    /// the whole samples per pixel finished.
    pub fn stopping_on(self, flag: Option<&'static AtomicBool>) -> Self {
        Renderer { stop: flag, ..self }
    }

    /// The back end's options.
    pub fn options(&self) -> BackendOptions {
        self.options
    }

    /// The back end, opened.
    pub fn backend(&self) -> &OpenedBackend {
        &self.backend
    }

    /// The back end this renderer runs.
    pub fn kind(&self) -> BackendKind {
        self.backend.kind()
    }

    /// The open GPU, for GPU back ends.
    pub fn gpu(&self) -> Option<&Gpu> {
        self.backend.gpu()
    }

    /// Renders `scene` with `params` and `spp` samples per pixel, the
    /// scene uploaded for this render, reporting progress in pixel-samples.
    pub fn render(
        &self,
        scene: &PreparedScene,
        params: RenderParams,
        spp: u32,
        progress: &(dyn Fn(u64) + Sync),
    ) -> anyhow::Result<RenderOutput> {
        self.render_samples(scene, None, params, SampleRange { begin: 0, end: spp }, progress)
    }

    /// Renders the sample indices `samples` of every pixel (all of them,
    /// `0..spp`, or a later part: an MPI rank's share, or the rest of a
    /// kept render); the film holds those samples' sums, and its `spp`
    /// counts them. A GPU back end reads the scene from `uploaded` where
    /// it is in device memory already (`None` uploads it for this render).
    pub fn render_samples(
        &self,
        scene: &PreparedScene,
        uploaded: Option<&DeviceScene>,
        params: RenderParams,
        samples: SampleRange,
        progress: &(dyn Fn(u64) + Sync),
    ) -> anyhow::Result<RenderOutput> {
        let mut sum = self.open_sum(scene, uploaded, params, samples)?;
        sum.render(samples, progress)?;
        sum.finish()
    }

    /// A sum of renders of `scene` with `params`, each of one part of the
    /// sample indices `samples`, kept where they run ([`DeviceFilmSum`]):
    /// one device's part of a split render; the scene is uploaded to the
    /// GPU unless `uploaded` holds it there.
    pub fn open_sum<'a>(
        &'a self,
        scene: &'a PreparedScene,
        uploaded: Option<&'a DeviceScene>,
        params: RenderParams,
        samples: SampleRange,
    ) -> anyhow::Result<DeviceFilmSum<'a>> {
        let job = RenderJob {
            scene,
            params,
            camera: scene.scene.camera_for(params.width, params.height),
            samples,
            uploaded,
            stop: self.stop,
        };
        DeviceFilmSum::open(&self.backend, self.options, job)
    }
}
