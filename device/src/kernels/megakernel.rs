//! The megakernel: one thread traces every sample of one pixel, start to end.

use crate::accel::{BruteForce, Bvh, KdTree, Traversal};
use crate::film::FixedRgb;
use crate::integrator::{SampleRange, render_pixel};
use crate::launch::{LaunchCounters, Tile};
use crate::observe::{DivergenceCounters, WarpDivergence};
use crate::scene::{RenderParams, SceneView};
use core::arch::nvptx::{_block_dim_x, _block_dim_y, _block_idx_x, _block_idx_y, _thread_idx_x, _thread_idx_y};
use core::sync::atomic::{AtomicU64, Ordering};

/// Renders `samples` of every pixel in `tile`, adding into `film` (one
/// `FixedRgb` per image pixel). A 2D grid of 2D blocks covers the tile.
///
/// # Safety
/// `film` must hold `width * height` values and `counters` one value, in
/// device memory; `divergence` is null or one value there; the scene's
/// slices must point to device memory.
#[inline(always)]
pub unsafe fn megakernel<T: Traversal>(
    scene: SceneView<'static>,
    params: RenderParams,
    samples: SampleRange,
    tile: Tile,
    film: *mut FixedRgb,
    counters: *mut LaunchCounters,
    divergence: *mut DivergenceCounters,
) {
    // SAFETY: reading the special registers has no preconditions.
    let (tx, ty) = unsafe {
        (
            _block_idx_x() * _block_dim_x() + _thread_idx_x(),
            _block_idx_y() * _block_dim_y() + _thread_idx_y(),
        )
    };
    if tx >= tile.width || ty >= tile.height {
        return;
    }
    let pixel = (tile.y0 + ty) * params.width + tile.x0 + tx;
    let result = render_pixel::<T>(&scene, &params, pixel, samples, &WarpDivergence(divergence));
    // SAFETY: each pixel belongs to exactly one thread of this launch, and the
    // caller guarantees the buffers' sizes.
    unsafe {
        (*film.add(pixel as usize)).add(result.sum);
        AtomicU64::from_ptr(&raw mut (*counters).rays).fetch_add(result.rays as u64, Ordering::Relaxed);
        AtomicU64::from_ptr(&raw mut (*counters).invalid_samples)
            .fetch_add(result.invalid_samples as u64, Ordering::Relaxed);
    }
}

super::export_kernels!(
    megakernel,
    (
        scene: SceneView<'static>,
        params: RenderParams,
        samples: SampleRange,
        tile: Tile,
        film: *mut FixedRgb,
        counters: *mut LaunchCounters,
        divergence: *mut DivergenceCounters
    ),
    [megakernel_brute => BruteForce, megakernel_bvh => Bvh, megakernel_kdtree => KdTree]
);
