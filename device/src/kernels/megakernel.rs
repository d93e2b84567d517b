//! The megakernel: one thread traces every sample of one pixel, start to end.

use crate::accel::{BruteForce, Bvh, KdTree, Traversal};
use crate::film::FixedRgb;
use crate::integrator::{SampleRange, render_pixel};
use crate::launch::{LaunchCounters, Tile};
use crate::observe::{BranchObserver, DivergenceCounters, Unobserved, WarpDivergence};
use crate::scene::{RenderParams, SceneView};
use core::arch::nvptx::{_block_dim_x, _block_dim_y, _block_idx_x, _block_idx_y, _thread_idx_x, _thread_idx_y};
use core::sync::atomic::{AtomicU64, Ordering};

/// Renders `samples` of every pixel in `tile`, adding into `film` (one
/// `FixedRgb` per image pixel), telling `observer` each material branch. A
/// 2D grid of 2D blocks covers the tile.
///
/// # Safety
/// `film` must hold `width * height` values and `counters` one value, in
/// device memory; the scene's slices must point to device memory.
#[inline(always)]
unsafe fn trace_tile<T: Traversal>(
    scene: SceneView<'static>,
    params: RenderParams,
    samples: SampleRange,
    tile: Tile,
    film: *mut FixedRgb,
    counters: *mut LaunchCounters,
    observer: &impl BranchObserver,
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
    let result = render_pixel::<T>(&scene, &params, pixel, samples, observer);
    // SAFETY: each pixel belongs to exactly one thread of this launch, and the
    // caller guarantees the buffers' sizes.
    unsafe {
        (*film.add(pixel as usize)).add(result.sum);
        AtomicU64::from_ptr(&raw mut (*counters).rays).fetch_add(result.rays as u64, Ordering::Relaxed);
        AtomicU64::from_ptr(&raw mut (*counters).invalid_samples)
            .fetch_add(result.invalid_samples as u64, Ordering::Relaxed);
    }
}

/// The megakernel for timing: nothing observes the material branch.
///
/// NOTE: a kernel of its own, not a null check inside the counting one: the
/// counting code's warp intrinsics (inline PTX) cost the diffuse Cornell box
/// 36% (78 ms against 107 ms on an H100, `results/regression/`) even when
/// never executed.
///
/// # Safety
/// As for `trace_tile`; `_divergence` is not read.
#[inline(always)]
pub unsafe fn megakernel<T: Traversal>(
    scene: SceneView<'static>,
    params: RenderParams,
    samples: SampleRange,
    tile: Tile,
    film: *mut FixedRgb,
    counters: *mut LaunchCounters,
    _divergence: *mut DivergenceCounters,
) {
    // SAFETY: forwarded; the caller upholds the contract.
    unsafe { trace_tile::<T>(scene, params, samples, tile, film, counters, &Unobserved) }
}

/// The megakernel for diagnosis: counts active lanes per warp at the
/// material branch into `divergence`.
///
/// # Safety
/// As for `trace_tile`; `divergence` is one value in device memory.
#[inline(always)]
pub unsafe fn megakernel_counted<T: Traversal>(
    scene: SceneView<'static>,
    params: RenderParams,
    samples: SampleRange,
    tile: Tile,
    film: *mut FixedRgb,
    counters: *mut LaunchCounters,
    divergence: *mut DivergenceCounters,
) {
    let observer = WarpDivergence(divergence);
    // SAFETY: forwarded; the caller upholds the contract.
    unsafe { trace_tile::<T>(scene, params, samples, tile, film, counters, &observer) }
}

/// Both families, with the same arguments, once per traversal.
macro_rules! export_megakernels {
    ($($kernel:ident => [$($name:ident => $t:ty),*]);*) => {
        $(super::export_kernels!(
            $kernel,
            (
                scene: SceneView<'static>,
                params: RenderParams,
                samples: SampleRange,
                tile: Tile,
                film: *mut FixedRgb,
                counters: *mut LaunchCounters,
                divergence: *mut DivergenceCounters
            ),
            [$($name => $t),*]
        );)*
    };
}

export_megakernels!(
    megakernel => [megakernel_brute => BruteForce, megakernel_bvh => Bvh, megakernel_kdtree => KdTree];
    megakernel_counted => [
        megakernel_counted_brute => BruteForce,
        megakernel_counted_bvh => Bvh,
        megakernel_counted_kdtree => KdTree
    ]
);
