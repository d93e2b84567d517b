//! The ray-casting kernel on the GPU: upload a ray buffer once, time the
//! closest-hit kernel over it several times, read the hits back.

use super::buffers::{DeviceArray, DeviceBuffer, DeviceScene};
use super::device::{Gpu, KernelInfo};
use super::error::GpuError;
use super::profile::LaunchRecord;
use super::timeline::{Timeline, linear};
use crate::backend::SizedBy;
use crate::prepared::PreparedScene;
use device::features::Features;
use device::kernel::EntryPoint;
use device::kernels::raycast_kernel::RaycastKernelArgs;
use device::kernels::{AccelKernels, AccelVisitor, visit_accel};
use device::launch::RayHit;
use device::math::Ray;

/// What a timed ray cast measured.
#[derive(Clone, Debug)]
pub struct CastTiming {
    /// Kernel time of each repetition, ms.
    pub ms: Vec<f64>,
    /// The hits of the last repetition.
    pub hits: Vec<RayHit>,
    /// Kernel resources at the block size used.
    pub kernel: KernelInfo,
}

/// Casts `rays` against `scene` `repeat` times with `block` threads per block.
pub fn cast(gpu: &Gpu, scene: &PreparedScene, rays: &[Ray], block: u32, repeat: u32) -> Result<CastTiming, GpuError> {
    // The scene's primitive kinds (the rest of its features are not read).
    let features = scene.features();
    let gpu = &gpu.with_features(features);
    visit_accel(
        scene.accel.kind,
        Cast {
            gpu,
            scene,
            features,
            rays,
            block,
            repeat,
        },
    )
}

/// The cast, once the structure's kernel is known.
struct Cast<'a> {
    gpu: &'a Gpu,
    scene: &'a PreparedScene,
    features: Features,
    rays: &'a [Ray],
    block: u32,
    repeat: u32,
}

impl AccelVisitor for Cast<'_> {
    type Output = Result<CastTiming, GpuError>;

    fn visit<A: AccelKernels>(self) -> Result<CastTiming, GpuError> {
        let Cast {
            gpu,
            scene,
            features,
            rays,
            block,
            repeat,
        } = self;
        let device_scene = DeviceScene::upload(gpu, scene)?;
        let device_rays = DeviceArray::upload(gpu, "the rays", SizedBy::Rays, rays)?;
        let hits = DeviceBuffer::<RayHit>::zeroed(gpu, "the hits", SizedBy::Rays, rays.len())?;
        let mut timeline = Timeline::new(gpu);
        let function = timeline.function::<A::Raycast>()?.clone();
        let kernel = gpu.kernel_info(A::Raycast::NAME, &function, block)?;
        let count = rays.len() as u32;
        let args = RaycastKernelArgs {
            // SAFETY: the scene stays uploaded until the launches are done.
            scene: unsafe {
                device_scene
                    .view(gpu, scene, scene.scene.camera_for(1, 1), features)
                    .detached()
            },
            rays: device_rays.device_ptr(gpu),
            count,
            hits: hits.ptr(gpu),
        };
        for _ in 0..repeat.max(1) {
            let record = LaunchRecord {
                items: count as u64,
                ..LaunchRecord::default()
            };
            timeline.launch::<A::Raycast>(linear(count, block), &args, record)?;
            gpu.synchronize("running the ray-casting kernel")?;
        }
        let ms = timeline.finish()?.iter().map(|r| r.ms).collect();
        let hits = hits.read(gpu, "the hits")?;
        Ok(CastTiming { ms, hits, kernel })
    }
}
