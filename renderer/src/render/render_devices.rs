//! What a render runs on ([`RenderDevices`]): one device, which renders
//! the image alone, or several GPUs, which split it ([`super::split`]).

use super::Renderer;
use super::split::{self, SplitOutput};
use crate::backend::{BackendKind, BackendOptions, ProgressCallback, RenderOutput};
use crate::prepared::PreparedScene;
use crate::settings::backend::BackendChoice;
use crate::settings::devices::Devices;
use device::integrator::SampleRange;
use device::scene::RenderParams;
use std::sync::atomic::AtomicBool;

/// The devices of one render.
pub enum RenderDevices {
    /// One device (the host, or one GPU): it renders the image itself
    /// (boxed: a renderer is large beside a list of them).
    One(Box<Renderer>),
    /// Several GPUs, which split the image's samples.
    Split(Vec<Renderer>),
}

impl RenderDevices {
    /// The back end `choice` on each GPU that `devices` names
    /// ([`split::open`]); one GPU renders alone.
    pub fn open(choice: BackendChoice, options: BackendOptions, devices: &Devices) -> anyhow::Result<Self> {
        let mut renderers = split::open(choice, options, devices)?;
        Ok(match renderers.len() {
            1 => RenderDevices::One(Box::new(renderers.remove(0))),
            _ => RenderDevices::Split(renderers),
        })
    }

    /// The back end they run.
    pub fn kind(&self) -> BackendKind {
        self.first().kind()
    }

    /// How many devices render.
    pub fn count(&self) -> usize {
        match self {
            RenderDevices::One(_) => 1,
            RenderDevices::Split(renderers) => renderers.len(),
        }
    }

    /// The first device: the only one, or the first of the split.
    pub fn first(&self) -> &Renderer {
        match self {
            RenderDevices::One(renderer) => renderer,
            RenderDevices::Split(renderers) => &renderers[0],
        }
    }

    /// Films the render holds in host memory at once, at most
    /// ([`split::host_films`]).
    pub fn host_films(&self) -> u64 {
        split::host_films(self.count())
    }

    /// Renders the sample indices `samples` of `scene`: on one device in a
    /// single render (stopping on `stop` as it does alone), whether the
    /// range starts at 0 or, an MPI rank's share, further on; otherwise
    /// split, each GPU uploading the scene once. A share of no samples (an
    /// MPI rank's, when there are more ranks than samples) is a film of
    /// zeros.
    pub fn render(
        &self,
        scene: &PreparedScene,
        (params, samples): (RenderParams, SampleRange),
        stop: Option<&'static AtomicBool>,
        progress: ProgressCallback,
    ) -> anyhow::Result<SplitOutput> {
        if samples.end <= samples.begin {
            let pixels = params.width as usize * params.height as usize;
            return Ok(SplitOutput::alone(RenderOutput::nothing(
                pixels,
                "no device (no samples to render)".into(),
            )));
        }
        match self {
            RenderDevices::One(renderer) => renderer
                .clone()
                .stopping_on(stop)
                .render_samples(scene, None, params, samples, progress)
                .map(SplitOutput::alone),
            RenderDevices::Split(renderers) => split::render(renderers, None, scene, (params, samples), stop, progress),
        }
    }
}
