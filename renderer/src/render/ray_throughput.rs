//! `wavepath raycast`: traversal throughput alone, in rays per second, for
//! camera rays or incoherent bounce rays (the method of Aila and Laine,
//! "Understanding the Efficiency of Ray Traversal on GPUs", HPG 2009).
//!
//! The rays are made on the CPU by the same stages a render runs: camera
//! rays from `generate`, bounce rays from tracing paths and keeping every
//! segment after the first. The GPU's hits must equal the CPU's, bit for bit,
//! before a time is reported.

use crate::backend::gpu::Gpu;
use crate::backend::gpu::raycast_launch::cast;
use crate::prepared::PreparedScene;
use crate::system::provenance::{Build, Provenance};
use anyhow::bail;
use device::accel::closest_hit;
use device::features::Features;
use device::geometry::{Hit, Interval};
use device::launch::RayHit;
use device::math::Ray;
use device::scene::RenderParams;
use device::stages::PathState;
use device::stages::generate::generate;
use rayon::prelude::*;
use serde::Serialize;

/// The most rays one `raycast` casts (a few GiB of rays and hits on each
/// side; more adds no precision to a throughput).
pub const MAX_RAYS: u64 = 1 << 26;

/// Host memory `count` rays need: the rays, and the GPU's and the CPU's hits.
pub fn host_bytes(count: u64) -> u64 {
    count * (size_of::<Ray>() + 2 * size_of::<RayHit>()) as u64
}

/// Which rays to cast.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RayKind {
    /// First segments from the camera: coherent.
    Camera,
    /// Every segment after the first: incoherent.
    Bounce,
}

/// `count` rays of `kind` from renders of `scene` with `params`, pixel by
/// pixel in scanline order and sample after sample.
pub fn make_rays(scene: &PreparedScene, params: &RenderParams, kind: RayKind, count: usize) -> Vec<Ray> {
    let view = scene.view(scene.scene.camera_for(params.width, params.height), Features::ALL);
    let pixels = params.width * params.height;
    let mut rays = Vec::with_capacity(count);
    let mut sample = 0;
    while rays.len() < count {
        // One pass over the image per sample index, in parallel rows.
        let batch: Vec<Vec<Ray>> = (0..pixels)
            .into_par_iter()
            .map(|pixel| {
                let mut path = generate(&view, params, pixel, sample);
                if kind == RayKind::Camera {
                    return vec![path.ray];
                }
                // Every segment after the camera's, in tracing order.
                let mut out = Vec::new();
                let segment = |p: &PathState, _: Option<&Hit>| {
                    if p.bounce > 0 {
                        out.push(p.ray)
                    }
                };
                super::follow_path(&view, params, &mut path, segment);
                out
            })
            .collect();
        let before = rays.len();
        rays.extend(batch.into_iter().flatten().take(count - before));
        if rays.len() == before {
            break; // no path bounces in this scene
        }
        sample += 1;
    }
    rays
}

/// The CPU's hits for `rays`.
pub fn cpu_hits(scene: &PreparedScene, rays: &[Ray]) -> Vec<RayHit> {
    let view = scene.view(scene.scene.camera_for(1, 1), Features::ALL);
    rays.par_iter()
        .map(|r| RayHit::from_hit(closest_hit(&view.primitives, &view.accel, r, Interval::POSITIVE).as_ref()))
        .collect()
}

/// One timed repetition.
#[derive(Clone, Debug, Serialize)]
pub struct CastRow {
    /// Scene file.
    pub scene: String,
    /// Acceleration structure.
    pub accel: String,
    /// Its build time on the host, ms.
    pub accel_build_ms: f64,
    /// Its bytes.
    pub accel_bytes: usize,
    /// Primitives in the scene.
    pub primitives: usize,
    /// Ray kind.
    pub rays: RayKind,
    /// Rays cast.
    pub count: usize,
    /// Rays that hit something.
    pub hit_count: usize,
    /// Threads per block.
    pub block: u32,
    /// Repetition number.
    pub repetition: u32,
    /// Kernel time, ms.
    pub kernel_ms: f64,
    /// Rays per second.
    pub rays_per_s: f64,
    /// Registers per thread.
    pub registers: u32,
    /// Local memory per thread, bytes.
    pub local_bytes: u32,
    /// Theoretical occupancy.
    pub occupancy: f64,
    /// The device.
    pub device: String,
    /// wavepath commit.
    pub commit: String,
    /// UTC time.
    pub date: String,
}

/// Casts `rays` on the GPU `repeat` times per block size; fails unless the
/// hits equal the CPU's exactly. Each row names `build`.
pub fn gpu_rows(
    build: Build,
    gpu: &Gpu,
    scene: &PreparedScene,
    kind: RayKind,
    rays: &[Ray],
    blocks: &[u32],
    repeat: u32,
) -> anyhow::Result<Vec<CastRow>> {
    let reference = cpu_hits(scene, rays);
    let meta = Provenance::collect(build);
    let mut rows = Vec::new();
    for &block in blocks {
        let timing = cast(gpu, scene, rays, block, repeat)?;
        if let Some(i) = (0..rays.len()).find(|&i| timing.hits[i] != reference[i]) {
            bail!(
                "{}: ray {i} {:?}: GPU hit {:?} differs from the CPU's {:?}",
                scene.scene.path.display(),
                rays[i],
                timing.hits[i],
                reference[i]
            );
        }
        for (repetition, ms) in timing.ms.iter().enumerate() {
            rows.push(CastRow {
                scene: scene.scene.path.display().to_string(),
                accel: scene.accel_settings.choice.label_built(scene.accel.kind),
                accel_build_ms: scene.accel.stats.build_ms,
                accel_bytes: scene.accel.stats.bytes,
                primitives: scene.scene.geometry.primitive_count(),
                rays: kind,
                count: rays.len(),
                hit_count: reference.iter().filter(|h| h.prim != RayHit::MISS).count(),
                block,
                repetition: repetition as u32,
                kernel_ms: *ms,
                rays_per_s: rays.len() as f64 / (ms / 1e3),
                registers: timing.kernel.registers,
                local_bytes: timing.kernel.local_bytes,
                occupancy: timing.kernel.occupancy,
                device: gpu.info().describe(),
                commit: meta.commit.clone(),
                date: meta.date.clone(),
            });
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{Overrides, load_scene, params_for};
    use crate::settings::nee::NeeMode;
    use device::scene::RenderView;
    use std::path::Path;

    #[test]
    fn next_event_estimation_leaves_the_bounce_rays_as_they_are() {
        // What `raycast` refuses `--nee` for: it would change nothing cast.
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/cornell_diffuse.toml"));
        let scene = load_scene(path, &Overrides::default()).unwrap();
        assert!(!scene.lights.lights.is_empty(), "a scene whose paths sample its light");
        let rays = |nee| {
            let overrides = Overrides {
                size: Some((16, 12)),
                nee: Some(nee),
                ..Overrides::default()
            };
            let (params, _) = params_for(&scene.scene, &overrides, RenderView::Radiance);
            make_rays(&scene, &params, RayKind::Bounce, 4000)
        };
        let without = rays(NeeMode::Off);
        assert_eq!(without.len(), 4000);
        assert_eq!(rays(NeeMode::On), without);
    }
}
