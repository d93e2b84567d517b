//! A back end ready to render ([`Renderer`]): the back end chosen, its
//! options, and for a GPU back end the open GPU; it renders whole images
//! or chunks of samples of one.

use super::session::Session;
use crate::backend::gpu::Gpu;
use crate::backend::gpu::buffers::DeviceScene;
use crate::backend::{BackendKind, BackendOptions, RenderJob, RenderOutput};
use crate::prepared::PreparedScene;
use crate::settings::backend::BackendChoice;
use anyhow::Context;
use device::integrator::SampleRange;
use device::scene::RenderParams;
use std::sync::atomic::AtomicBool;

/// A back end ready to render: for GPU back ends, an open device with the
/// module loaded (opened once, reused across renders).
#[derive(Clone)]
pub struct Renderer {
    kind: BackendKind,
    options: BackendOptions,
    gpu: Option<Gpu>,
    stop: Option<&'static AtomicBool>,
}

impl Renderer {
    /// Prepares `kind`; for a GPU back end this opens device 0.
    pub fn new(kind: BackendKind, options: BackendOptions) -> anyhow::Result<Self> {
        let gpu = if kind.is_gpu() {
            Some(Gpu::open(0).with_context(|| format!("the {} back end needs a GPU", kind.label()))?)
        } else {
            None
        };
        Ok(Renderer {
            kind,
            options,
            gpu,
            stop: None,
        })
    }

    /// Prepares `kind` on a GPU opened earlier (shared by many renderers);
    /// a GPU back end without one is an error.
    pub fn on(kind: BackendKind, options: BackendOptions, gpu: Option<&Gpu>) -> anyhow::Result<Self> {
        if kind.is_gpu() && gpu.is_none() {
            anyhow::bail!("the {} back end needs a GPU", kind.label());
        }
        Ok(Renderer {
            kind,
            options,
            gpu: gpu.filter(|_| kind.is_gpu()).cloned(),
            stop: None,
        })
    }

    /// Resolves `choice`: `auto` takes the GPU megakernel when a GPU opens and
    /// otherwise the `cpu` back end, with a note saying why.
    pub fn choose(choice: BackendChoice, options: BackendOptions) -> anyhow::Result<(Self, Option<String>)> {
        match choice {
            BackendChoice::Exactly(kind) => Ok((Renderer::new(kind, options)?, None)),
            BackendChoice::Auto => match Gpu::open(0) {
                Ok(gpu) => {
                    let note = format!("using the gpu-mega back end on {}", gpu.info().describe());
                    Ok((
                        Renderer {
                            kind: BackendKind::GpuMega,
                            options,
                            gpu: Some(gpu),
                            stop: None,
                        },
                        Some(note),
                    ))
                }
                Err(e) => {
                    let note = format!("no usable GPU ({e}); rendering on the cpu back end");
                    Ok((Renderer::new(BackendKind::Cpu, options)?, Some(note)))
                }
            },
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

    /// The back end this renderer runs.
    pub fn kind(&self) -> BackendKind {
        self.kind
    }

    /// The open GPU, for GPU back ends.
    pub fn gpu(&self) -> Option<&Gpu> {
        self.gpu.as_ref()
    }

    /// Renders `scene` with `params` and `spp`, reporting progress in pixel-samples.
    pub fn render(
        &self,
        scene: &PreparedScene,
        params: RenderParams,
        spp: u32,
        progress: &(dyn Fn(u64) + Sync),
    ) -> anyhow::Result<RenderOutput> {
        self.render_uploaded(scene, None, params, spp, progress)
    }

    /// [`Renderer::render`] with the scene already in device memory (GPU
    /// back ends; `None` uploads it for this render).
    pub fn render_uploaded(
        &self,
        scene: &PreparedScene,
        uploaded: Option<&DeviceScene>,
        params: RenderParams,
        spp: u32,
        progress: &(dyn Fn(u64) + Sync),
    ) -> anyhow::Result<RenderOutput> {
        self.render_samples(scene, uploaded, params, SampleRange { begin: 0, end: spp }, progress)
    }

    /// Renders the sample indices `samples` of every pixel (one chunk of a
    /// split render, [`super::split`]); the film holds those samples' sums, and
    /// its `spp` counts them.
    pub fn render_samples(
        &self,
        scene: &PreparedScene,
        uploaded: Option<&DeviceScene>,
        params: RenderParams,
        samples: SampleRange,
        progress: &(dyn Fn(u64) + Sync),
    ) -> anyhow::Result<RenderOutput> {
        let mut session = self.session(scene, uploaded, params, samples)?;
        session.render(samples, progress)?;
        session.finish()
    }

    /// A session of renders of `scene` with `params`, each of one part of
    /// the sample indices `samples`, summed where they run ([`Session`]);
    /// the scene is uploaded to the GPU unless `uploaded` holds it there.
    pub fn session<'a>(
        &'a self,
        scene: &'a PreparedScene,
        uploaded: Option<&'a DeviceScene>,
        params: RenderParams,
        samples: SampleRange,
    ) -> anyhow::Result<Session<'a>> {
        let job = RenderJob {
            scene,
            params,
            camera: scene.scene.camera_for(params.width, params.height),
            samples,
            uploaded,
            stop: self.stop,
        };
        Session::open(self.kind, self.options, self.gpu.as_ref(), job)
    }
}
