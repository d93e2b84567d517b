//! The ray-casting kernel on the GPU: upload a ray buffer once, time the
//! closest-hit kernel over it several times, read the hits back.

use super::buffers::{DeviceArray, DeviceScene, KernelArg, alloc_zeros};
use super::device::KernelInfo;
use super::{Gpu, GpuError, driver_error, kernel_error};
use crate::scene::Scene;
use cudarc::driver::{LaunchConfig, PushKernelArg};
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
    let mut hits = alloc_zeros::<u32>(gpu, "ray hits", rays.len() * 2)?;
    let name = raycast_name(scene.accel.kind);
    let function = gpu.function(name)?;
    let kernel = gpu.kernel_info(name, &function, block)?;
    let view = KernelArg(device_scene.view(gpu, scene, scene.camera_for(1, 1)));
    let rays_arg = KernelArg(device_rays.device_ptr(gpu));
    let count = rays.len() as u32;
    let cfg = LaunchConfig {
        grid_dim: (count.div_ceil(block), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    };
    let fault = || kernel_error(name, "running the ray-casting kernel");
    let mut ms = Vec::new();
    for _ in 0..repeat.max(1) {
        let event = || gpu.timing_event();
        let start = event()?;
        let mut launch = stream.launch_builder(&function);
        launch.arg(&view).arg(&rays_arg).arg(&count).arg(&mut hits);
        // SAFETY: matches device::kernels::raycast: the ray buffer holds
        // `count` rays and the hit buffer `count` RayHits (two u32 each).
        unsafe { launch.launch(cfg) }.map_err(fault())?;
        let end = event()?;
        stream.synchronize().map_err(fault())?;
        ms.push(start.elapsed_ms(&end).map_err(driver_error("reading event times"))? as f64);
    }
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
