//! The ray-casting kernel on the GPU: upload a ray buffer once, time the
//! closest-hit kernel over it several times, read the hits back.

use super::buffers::{DeviceArray, DeviceScene, KernelArg, alloc_zeros, device_address};
use super::device::KernelInfo;
use super::profile::{LaunchRecord, Timeline, linear};
use super::{Gpu, GpuError, driver_error, kernel_error};
use crate::scene::Scene;
use cudarc::driver::PushKernelArg;
use device::launch::{RayHit, raycast_name};
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
pub fn cast(gpu: &Gpu, scene: &Scene, rays: &[Ray], block: u32, repeat: u32) -> Result<CastTiming, GpuError> {
    let stream = gpu.stream();
    let device_scene = DeviceScene::upload(gpu, scene)?;
    let device_rays = DeviceArray::upload(gpu, "rays", rays)?;
    let hits = alloc_zeros::<u32>(gpu, "ray hits", rays.len() * 2)?;
    let hits_arg = KernelArg(device_address(gpu, &hits));
    let name = raycast_name(scene.accel.kind);
    let function = gpu.function(name)?;
    let kernel = gpu.kernel_info(name, &function, block)?;
    let view = KernelArg(device_scene.view(gpu, scene, scene.camera_for(1, 1)));
    let rays_arg = KernelArg(device_rays.device_ptr(gpu));
    let count = rays.len() as u32;
    let mut timeline = Timeline::new(gpu);
    for _ in 0..repeat.max(1) {
        let record = LaunchRecord {
            items: count as u64,
            ..LaunchRecord::default()
        };
        // SAFETY: matches device::kernels::raycast: the ray buffer holds
        // `count` rays and the hit buffer `count` RayHits (two u32 each).
        unsafe {
            timeline.launch(name, &function, linear(count, block), record, |b| {
                b.arg(&view).arg(&rays_arg).arg(&count).arg(&hits_arg);
            })
        }?;
        stream
            .synchronize()
            .map_err(kernel_error(name, "running the ray-casting kernel"))?;
    }
    let ms = timeline.finish()?.iter().map(|r| r.ms).collect();
    let raw = stream
        .clone_dtoh(&hits)
        .map_err(driver_error("reading back the hits"))?;
    let hits = raw
        .chunks_exact(2)
        .map(|c| RayHit {
            t_bits: c[0],
            prim: c[1],
        })
        .collect();
    Ok(CastTiming { ms, hits, kernel })
}
