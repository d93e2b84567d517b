//! Back ends: different schedules of the same device stages.
//!
//! | back end     | schedule                                              |
//! |--------------|-------------------------------------------------------|
//! | `cpu-serial` | one thread, pixel after pixel                         |
//! | `cpu`        | rows spread over all cores by rayon (work stealing)   |
//! | `gpu-mega`   | one GPU thread per pixel traces whole paths           |
//! | `gpu-wave`   | one kernel per stage over queues; the device schedules |
//! | `cpu-wave`   | the same wavefront kernels emulated on the host, serially |
//!
//! Every back end returns the fixed-point film ([`device::film::FixedRgb`]
//! per pixel), so their images can be compared bit for bit.

pub mod cpu;
pub mod gpu;
pub mod opened;
pub mod sized_by;
pub mod wave_driver;

pub use opened::OpenedBackend;
pub use sized_by::SizedBy;

use crate::prepared::PreparedScene;
use crate::settings::arithmetic::Arithmetic;
pub use crate::settings::backend::BackendKind;
use crate::settings::cpu::CpuSchedule;
use crate::settings::devices::SplitRule;
use crate::settings::mega_config::MegakernelConfig;
use crate::settings::wave_config::WavefrontConfig;
use device::camera::Camera;
use device::features::{Feature, Features};
use device::film::FixedRgb;
use device::integrator::SampleRange;
use device::kernels::wave_kernels::WorkItems;
use device::rng::Sampler;
use device::scene::RenderParams;
use gpu::profile::GpuProfile;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Tuning knobs of the back ends; each uses its own.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BackendOptions {
    /// CPU threads for `cpu` (0: one per core).
    pub threads: usize,
    /// How `cpu` divides the image between its threads.
    pub cpu_schedule: CpuSchedule,
    /// Launch configuration for `gpu-mega`.
    pub megakernel: MegakernelConfig,
    /// Configuration for `gpu-wave` and `cpu-wave`.
    pub wavefront: WavefrontConfig,
    /// Which GPUs of a render split over several take part.
    pub split: SplitRule,
}

impl BackendOptions {
    /// The float arithmetic `backend` renders with: the one its GPU
    /// configuration binds, exact on the host.
    pub fn arithmetic(&self, backend: BackendKind) -> Arithmetic {
        match backend {
            BackendKind::GpuMega => self.megakernel.arithmetic,
            BackendKind::GpuWave => self.wavefront.arithmetic,
            _ => Arithmetic::Exact,
        }
    }
}

/// One render: a scene, the settings every stage reads, and the samples
/// of every pixel to render.
#[derive(Clone, Copy)]
pub struct RenderJob<'a> {
    /// The scene.
    pub scene: &'a PreparedScene,
    /// Size, depth, seed, roulette and view.
    pub params: RenderParams,
    /// The camera for this image size.
    pub camera: Camera,
    /// The sample indices rendered in every pixel: `0..spp` for a whole
    /// render, a later range for one chunk of a split render
    /// ([`crate::render::split`]). Samples are keyed by their index, so a
    /// range renders exactly its share of the whole render's film.
    pub samples: SampleRange,
    /// The scene already in device memory, for a caller that renders it many
    /// times (GPU back ends; `None`: the render uploads it).
    pub uploaded: Option<&'a gpu::buffers::DeviceScene>,
    /// Set (by Ctrl-C) to stop early: the back end finishes the samples in
    /// flight and returns the film of the whole samples per pixel done.
    pub stop: Option<&'a AtomicBool>,
}

impl RenderJob<'_> {
    /// True when the render traces next-event shadow rays: estimation on,
    /// and a light to sample.
    pub fn traces_shadow_rays(&self) -> bool {
        self.params.nee == device::scene::Nee::On && !self.scene.lights.lights.is_empty()
    }

    /// The features this render uses ([`device::features`]): its scene's
    /// ([`PreparedScene::features`]); where it traces shadow rays,
    /// next-event estimation and the kinds of its lights; and the Sobol
    /// sampler where it draws Sobol points. Kernels are bound to these, or
    /// to more where `--kernels` names more.
    pub fn features(&self) -> Features {
        let nee = self.traces_shadow_rays();
        let lights = (self.scene.lights.lights.iter()).map(|light| Feature::Light(light.prim.kind()));
        let settings = [
            (nee, Feature::Nee),
            (self.params.sampler == Sampler::Sobol, Feature::Sobol),
        ];
        let used = (settings.into_iter())
            .filter_map(|(used, feature)| used.then_some(feature))
            .chain(lights.filter(|_| nee));
        used.fold(self.scene.features(), Features::with)
    }

    /// Samples per pixel this job renders.
    pub fn spp(&self) -> u32 {
        self.samples.end - self.samples.begin
    }

    /// The job's pixel-samples as wavefront work items, and their number.
    pub fn work_items(&self) -> (WorkItems, u64) {
        let pixels = self.pixel_count() as u32;
        let items = WorkItems {
            first_sample: self.samples.begin,
            ..WorkItems::whole_image(pixels)
        };
        (items, pixels as u64 * self.spp() as u64)
    }

    /// Pixels in the image.
    pub fn pixel_count(&self) -> usize {
        self.params.width as usize * self.params.height as usize
    }

    /// True once a stop was requested.
    pub fn stopping(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::SeqCst))
    }
}

/// What a render produced.
#[derive(Clone, Debug)]
pub struct RenderOutput {
    /// Per-pixel fixed-point radiance sums, row-major from the top-left.
    pub film: Vec<FixedRgb>,
    /// Samples per pixel in the film: the job's, or fewer when it stopped
    /// early.
    pub spp: u32,
    /// Ray segments traced.
    pub rays: u64,
    /// Samples dropped for being NaN or infinite.
    pub invalid_samples: u64,
    /// Wall time of the render itself (no loading, upload or output).
    pub elapsed: Duration,
    /// Human-readable description of the device that rendered, e.g.
    /// "cpu (16 threads)".
    pub device: String,
    /// Per-launch timings and kernel resources, for GPU back ends.
    pub gpu: Option<GpuProfile>,
}

impl RenderOutput {
    /// No samples yet: a film of `pixels` zeros, rendered by `device`.
    pub fn nothing(pixels: usize, device: String) -> Self {
        RenderOutput {
            film: vec![FixedRgb::default(); pixels],
            spp: 0,
            rays: 0,
            invalid_samples: 0,
            elapsed: Duration::ZERO,
            device,
            gpu: None,
        }
    }
}

/// Reports progress in samples (pixel-samples) completed.
pub type ProgressCallback<'a> = &'a (dyn Fn(u64) + Sync);
