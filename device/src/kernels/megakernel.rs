//! The megakernel: one thread traces every sample of one pixel, start to end.

use crate::accel::Traversal;
use crate::film::FixedRgb;
use crate::integrator::{SampleRange, render_pixel};
use crate::kernel::{Kernel, Thread};
use crate::launch::{LaunchCounters, Tile};
use crate::material::AnyMaterial;
use crate::observe::{DivergenceCounters, Unobserved, WarpDivergence};
use crate::scene::{RenderParams, SceneView};
use crate::warp::{Synchronised, active_mask, ballot};
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU64, Ordering};

/// The megakernel's argument.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MegakernelArgs {
    /// The scene (device pointers).
    pub scene: SceneView<'static>,
    /// Size, depth, seed, roulette and view.
    pub params: RenderParams,
    /// The samples of this launch.
    pub samples: SampleRange,
    /// The pixels of this launch.
    pub tile: Tile,
    /// One sum per image pixel.
    pub film: *mut FixedRgb,
    /// One set of counters.
    pub counters: *mut LaunchCounters,
    /// One set of divergence counters, or null; only the counting
    /// megakernel reads it.
    pub divergence: *mut DivergenceCounters,
}

// Crosses to the GPU by value: the layout must not depend on the target.
const _: () = assert!(core::mem::size_of::<MegakernelArgs>() == 392 + 32 + 8 + 16 + 3 * 8);

/// Renders `samples` of every pixel in `tile`, adding into `film`. A 2D
/// grid of 2D blocks covers the tile, one thread per pixel.
///
/// Contract: `film` holds `width * height` values and `counters` one;
/// `divergence` is null or one value (one value when `COUNTED`); every
/// pointer, the scene's included, is memory of the side that runs the kernel.
///
/// `COUNTED` compiles the divergence counting in. The kernel that does not
/// count is a separate entry point without it: even behind a null check that
/// never passes, the counting code made the brute-force megakernel 36%
/// slower (the diffuse Cornell box at 512x384 and 1024 spp on an H100:
/// 78.6 ms at 471ea48, 106.8 ms once ff77390 added it; the workload of
/// `experiments/regression_check.toml`, study `brute_cornell`). What else
/// it holds is bound when its module is loaded ([`crate::features`]).
pub struct Megakernel<T, const COUNTED: bool>(PhantomData<T>);

impl<T: Traversal, const COUNTED: bool> Kernel for Megakernel<T, COUNTED> {
    type Args = MegakernelArgs;

    #[inline(always)]
    unsafe fn run(thread: Thread, _phase: u32, a: &MegakernelArgs) {
        let (tx, ty) = (thread.global_x(), thread.global_y());
        let in_tile = tx < a.tile.width && ty < a.tile.height;
        // The lanes of this warp with a pixel, taken while the warp is
        // still converged at entry. Each traces its pixel's samples one
        // after the other, starting the next as soon as a path ends, and
        // the lanes still tracing rejoin after every segment: left to the
        // compiler, the lanes of a warp that parted in one path stayed
        // apart for the rest of the pixel in the builds with textures and
        // next-event estimation, running 1.8 lanes per warp instruction
        // instead of 8.5, in 4.8x the warp instructions (Nsight Compute,
        // RTIOW on an H100 at 134123c).
        let lanes = ballot(active_mask(), in_tile);
        if !in_tile {
            return;
        }
        let rejoin = Synchronised::new(lanes);
        let pixel = (a.tile.y0 + ty) * a.params.width + a.tile.x0 + tx;
        let result = if COUNTED {
            render_pixel::<T, AnyMaterial>(
                &a.scene,
                &a.params,
                pixel,
                a.samples,
                &WarpDivergence(a.divergence),
                rejoin,
            )
        } else {
            render_pixel::<T, AnyMaterial>(&a.scene, &a.params, pixel, a.samples, &Unobserved, rejoin)
        };
        // SAFETY: each pixel belongs to exactly one thread of this launch, and
        // the caller guarantees the buffers' sizes.
        unsafe {
            (*a.film.add(pixel as usize)).add(result.sum);
            AtomicU64::from_ptr(&raw mut (*a.counters).rays).fetch_add(result.rays as u64, Ordering::Relaxed);
            AtomicU64::from_ptr(&raw mut (*a.counters).invalid_samples)
                .fetch_add(result.invalid_samples as u64, Ordering::Relaxed);
        }
    }
}
