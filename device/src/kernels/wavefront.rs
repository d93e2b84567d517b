//! The wavefront kernels: generate, extend, one shading kernel per class,
//! and the prefix-sum compaction. Each runs one stage of
//! [`crate::stages`] for every entry of its queue; paths live in the
//! [`PathPool`] between launches.

use crate::accel::{BruteForce, Bvh, KdTree, Traversal};
use crate::film::{FixedRgb, is_invalid_sample};
use crate::integrator::finish_path;
use crate::launch::{Compaction, LaunchCounters};
use crate::material::{self, Material, Scatter, ScatterInput};
use crate::observe::{BranchObserver, DivergenceCounters, ShadeClass, Unobserved, WarpDivergence};
use crate::queue::{PathPool, Queues, SCAN_BLOCK};
use crate::scene::{RenderParams, SceneView};
use crate::stages::shade::{class_of, escaped, surface};
use crate::stages::{PathStatus, generate::generate};
use crate::warp::{active_mask, append, ballot, inclusive_scan, lane_id, lanes_below, match_any};
use core::arch::nvptx::{_block_dim_x, _block_idx_x, _grid_dim_x, _syncthreads, _thread_idx_x};
use core::sync::atomic::{AtomicU64, Ordering};

/// The calling thread's index in a 1D grid.
#[inline(always)]
fn global_index() -> u32 {
    // SAFETY: reading the special registers has no preconditions.
    unsafe { _block_idx_x() * _block_dim_x() + _thread_idx_x() }
}

/// Starts `count` new paths for work items `work_base..` and puts them in
/// the ray queue from position `out_offset` (after the survivors). Their
/// slots come from the free ring at `free_head`, or, when `fresh` is set
/// (the pool is empty), are simply `0..count`: consecutive work items then
/// sit in consecutive slots and every later access coalesces.
///
/// # Safety
/// The pool and queues must be device memory of the pool's capacity; the
/// ring must hold `count` free slots from `free_head`, or, with `fresh`,
/// every slot must be free.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn wf_generate(
    scene: SceneView<'static>,
    params: RenderParams,
    pool: PathPool,
    queues: Queues,
    count: u32,
    free_head: u32,
    work_base: u64,
    out_offset: u32,
    fresh: u32,
) {
    let i = global_index();
    if i >= count {
        return;
    }
    let pixels = params.width as u64 * params.height as u64;
    let work = work_base + i as u64;
    // SAFETY: the caller's contract.
    unsafe {
        let slot = if fresh != 0 {
            i
        } else {
            *queues
                .free_ring
                .add((free_head.wrapping_add(i) & queues.ring_mask) as usize)
        };
        let path = generate(&scene, &params, (work % pixels) as u32, (work / pixels) as u32);
        pool.store(slot, &path);
        *queues.rays_in.add((out_offset + i) as usize) = slot;
    }
}

/// Traces the ray of every path in the ray queue and routes each into the
/// queue of its shading class (warp-aggregated atomics).
///
/// # Safety
/// As for [`wf_generate`]; `count` entries of `rays_in` are valid.
#[inline(always)]
unsafe fn wf_extend<T: Traversal>(scene: SceneView<'static>, pool: PathPool, queues: Queues, count: u32) {
    let i = global_index();
    if i >= count {
        return;
    }
    // SAFETY: the caller's contract.
    unsafe {
        let slot = *queues.rays_in.add(i as usize);
        let ray = pool.ray(slot);
        let hit = T::closest_hit(&scene, &ray, crate::geometry::Interval::POSITIVE);
        let class = match &hit {
            None => ShadeClass::Escaped,
            Some(h) => {
                pool.store_hit(slot, h);
                class_of(&scene.materials.as_slice()[h.material as usize])
            }
        };
        *pool.queue_pos.add(slot as usize) = i;
        let group = match_any(active_mask(), class as u32);
        let k = class as usize;
        append(
            &raw mut (*queues.counters).shade[k],
            group,
            slot,
            queues.shade[k],
            u32::MAX,
        );
    }
}

crate::kernels::export_kernels!(
    wf_extend,
    (scene: SceneView<'static>, pool: PathPool, queues: Queues, count: u32),
    [wf_extend_brute => BruteForce, wf_extend_bvh => Bvh, wf_extend_kdtree => KdTree]
);

/// One shading class: which queue it drains and how it scatters.
pub trait Shader {
    /// The class (and queue).
    const CLASS: ShadeClass;
    /// The scattering function of the class (unused for escaped paths).
    fn scatter(material: &Material, input: &ScatterInput) -> Scatter;
}

/// Lambertian surfaces.
pub struct DiffuseShader;
/// Metals.
pub struct MetalShader;
/// Dielectrics.
pub struct DielectricShader;
/// Pure emitters.
pub struct EmissiveShader;
/// Escaped rays.
pub struct EscapedShader;

macro_rules! shader {
    ($t:ty, $class:expr, $f:path) => {
        impl Shader for $t {
            const CLASS: ShadeClass = $class;
            #[inline(always)]
            fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
                $f(material, input)
            }
        }
    };
}
shader!(DiffuseShader, ShadeClass::Diffuse, material::diffuse::scatter);
shader!(MetalShader, ShadeClass::Metal, material::metal::scatter);
shader!(DielectricShader, ShadeClass::Dielectric, material::dielectric::scatter);
shader!(EmissiveShader, ShadeClass::Emissive, material::absorb);
shader!(EscapedShader, ShadeClass::Escaped, material::absorb);

/// Shades every path in class `S`'s queue, then either passes it on
/// (atomic append or an alive flag, by `compaction`) or finishes it: its
/// radiance goes into the film and its slot back to the free ring.
///
/// # Safety
/// As for [`wf_generate`]; `film` holds one value per pixel, `counters` one
/// value; `divergence` is null or one value.
#[inline(always)]
// NOTE: the parameters are the kernel's launch arguments, one for one.
#[allow(clippy::too_many_arguments)]
unsafe fn wf_shade<S: Shader>(
    scene: SceneView<'static>,
    params: RenderParams,
    pool: PathPool,
    queues: Queues,
    compaction: Compaction,
    film: *mut FixedRgb,
    counters: *mut LaunchCounters,
    divergence: *mut DivergenceCounters,
) {
    // SAFETY: the caller's contract.
    unsafe {
        let k = S::CLASS as usize;
        // The queue's length is only known on the device: a grid sized for
        // the resident threads strides over it, so an empty queue costs one
        // short launch.
        let count = (*queues.counters).shade[k];
        let stride = _grid_dim_x() * _block_dim_x();
        let mut i = global_index();
        while i < count {
            shade_one::<S>(
                &scene, &params, &pool, &queues, compaction, film, counters, divergence, i,
            );
            i += stride;
        }
    }
}

/// Shades entry `i` of class `S`'s queue.
///
/// # Safety
/// As for [`wf_shade`], with `i` below the queue's length.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn shade_one<S: Shader>(
    scene: &SceneView<'static>,
    params: &RenderParams,
    pool: &PathPool,
    queues: &Queues,
    compaction: Compaction,
    film: *mut FixedRgb,
    counters: *mut LaunchCounters,
    divergence: *mut DivergenceCounters,
    i: u32,
) {
    // SAFETY: the caller's contract.
    unsafe {
        let k = S::CLASS as usize;
        let slot = *queues.shade[k].add(i as usize);
        let mut path = pool.load(slot);
        WarpDivergence(divergence).material_branch(S::CLASS);
        let status = if S::CLASS == ShadeClass::Escaped {
            escaped(scene, &mut path)
        } else {
            let hit = pool.hit(slot, &path.ray);
            let m = &scene.materials.as_slice()[hit.material as usize];
            surface(params, &mut path, &hit, m, S::scatter)
        };
        let keep = status == PathStatus::Continue;
        if keep {
            pool.store_shaded(slot, &path);
        } else {
            deposit(&path, film, counters);
        }
        match compaction {
            Compaction::PrefixSum => *queues.alive.add(*pool.queue_pos.add(slot as usize) as usize) = keep as u32,
            Compaction::AtomicAppend => {
                let active = active_mask();
                let keepers = ballot(active, keep);
                if keep {
                    append(
                        &raw mut (*queues.counters).rays_out,
                        keepers,
                        slot,
                        queues.rays_out,
                        u32::MAX,
                    );
                } else {
                    let ring = &raw mut (*queues.counters).free_tail;
                    append(ring, active & !keepers, slot, queues.free_ring, queues.ring_mask);
                }
            }
        }
    }
}

/// Adds a finished path's radiance to its pixel with the megakernel's rule
/// (invalid samples are counted, not added), in order-independent fixed point.
///
/// # Safety
/// `film` holds the path's pixel; `counters` is one value.
#[inline(always)]
unsafe fn deposit(path: &crate::stages::PathState, film: *mut FixedRgb, counters: *mut LaunchCounters) {
    // SAFETY: the caller's contract.
    unsafe {
        if is_invalid_sample(path.radiance) {
            AtomicU64::from_ptr(&raw mut (*counters).invalid_samples).fetch_add(1, Ordering::Relaxed);
            return;
        }
        let f = FixedRgb::from_radiance(path.radiance);
        let px = film.add(path.pixel as usize);
        AtomicU64::from_ptr(&raw mut (*px).r).fetch_add(f.r, Ordering::Relaxed);
        AtomicU64::from_ptr(&raw mut (*px).g).fetch_add(f.g, Ordering::Relaxed);
        AtomicU64::from_ptr(&raw mut (*px).b).fetch_add(f.b, Ordering::Relaxed);
    }
}

crate::kernels::export_kernels!(
    wf_shade,
    (
        scene: SceneView<'static>,
        params: RenderParams,
        pool: PathPool,
        queues: Queues,
        compaction: Compaction,
        film: *mut FixedRgb,
        counters: *mut LaunchCounters,
        divergence: *mut DivergenceCounters
    ),
    [
        wf_shade_diffuse => DiffuseShader,
        wf_shade_metal => MetalShader,
        wf_shade_dielectric => DielectricShader,
        wf_shade_emissive => EmissiveShader,
        wf_shade_escaped => EscapedShader
    ]
);

/// The tail drain: once every sample has been issued and few paths remain,
/// each remaining path is traced to its end by one thread (extend and shade
/// in a loop, as the megakernel does), instead of paying a full iteration of
/// launches and a host synchronisation per remaining bounce.
///
/// # Safety
/// As for [`wf_shade`]; `count` entries of `rays_in` are valid.
#[inline(always)]
unsafe fn wf_drain<T: Traversal>(
    scene: SceneView<'static>,
    params: RenderParams,
    pool: PathPool,
    queues: Queues,
    count: u32,
    film: *mut FixedRgb,
    counters: *mut LaunchCounters,
) {
    let i = global_index();
    if i >= count {
        return;
    }
    // SAFETY: the caller's contract.
    unsafe {
        let slot = *queues.rays_in.add(i as usize);
        let mut path = pool.load(slot);
        let rays = finish_path::<T>(&scene, &params, &mut path, &Unobserved, |_, _| {});
        deposit(&path, film, counters);
        AtomicU64::from_ptr(&raw mut (*counters).rays).fetch_add(rays as u64, Ordering::Relaxed);
    }
}

crate::kernels::export_kernels!(
    wf_drain,
    (
        scene: SceneView<'static>,
        params: RenderParams,
        pool: PathPool,
        queues: Queues,
        count: u32,
        film: *mut FixedRgb,
        counters: *mut LaunchCounters
    ),
    [wf_drain_brute => BruteForce, wf_drain_bvh => Bvh, wf_drain_kdtree => KdTree]
);

/// Whether ray-queue position `i` holds a continuing path.
#[inline(always)]
unsafe fn alive_at(queues: &Queues, i: u32, n: u32) -> bool {
    // SAFETY: `i < n` entries of `alive` are valid.
    i < n && unsafe { *queues.alive.add(i as usize) } != 0
}

/// Prefix sum, step 1 (blocks of [`SCAN_BLOCK`] threads over `n` flags):
/// per-warp exclusive offsets within each block and per-block totals.
///
/// # Safety
/// The queues must be device memory sized for at least `n` entries.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn wf_scan_count(queues: Queues, n: u32) {
    // SAFETY: the caller's contract; every thread reaches the barrier.
    unsafe {
        let (block, tid) = (_block_idx_x(), _thread_idx_x());
        let flag = alive_at(&queues, block * SCAN_BLOCK + tid, n);
        let votes = ballot(u32::MAX, flag);
        let (warp, lane) = (tid / 32, lane_id());
        let warps = queues.scan_warps.add((block * 32) as usize);
        if lane == 0 {
            *warps.add(warp as usize) = votes.count_ones();
        }
        _syncthreads();
        if warp == 0 {
            let c = *warps.add(lane as usize);
            let inclusive = inclusive_scan(c);
            *warps.add(lane as usize) = inclusive - c;
            if lane == 31 {
                *queues.scan_blocks.add(block as usize) = inclusive;
            }
        }
    }
}

/// Prefix sum, step 2 (one block of [`SCAN_BLOCK`] threads): turns the
/// `blocks` block totals into exclusive offsets, sets the survivor count and
/// reserves the dead paths' places in the free ring.
///
/// # Safety
/// As for [`wf_scan_count`], after it ran over the same `n`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn wf_scan_blocks(queues: Queues, blocks: u32, n: u32) {
    // SAFETY: the caller's contract; every thread reaches the barriers.
    unsafe {
        let tid = _thread_idx_x();
        let per = blocks.div_ceil(SCAN_BLOCK);
        let (start, end) = ((tid * per).min(blocks), ((tid + 1) * per).min(blocks));
        let mut local = 0;
        for j in start..end {
            local += *queues.scan_blocks.add(j as usize);
        }
        let inclusive = inclusive_scan(local);
        let (warp, lane) = (tid / 32, lane_id());
        let scratch = queues.scan_blocks.add(blocks as usize);
        if lane == 31 {
            *scratch.add(warp as usize) = inclusive;
        }
        _syncthreads();
        if warp == 0 {
            let v = *scratch.add(lane as usize);
            *scratch.add(lane as usize) = inclusive_scan(v) - v;
        }
        _syncthreads();
        let exclusive = *scratch.add(warp as usize) + inclusive - local;
        let mut running = exclusive;
        for j in start..end {
            let c = *queues.scan_blocks.add(j as usize);
            *queues.scan_blocks.add(j as usize) = running;
            running += c;
        }
        if tid == SCAN_BLOCK - 1 {
            let total = exclusive + local;
            let c = &mut *queues.counters;
            c.rays_out = total;
            c.free_base = c.free_tail;
            c.free_tail = c.free_tail.wrapping_add(n - total);
        }
    }
}

/// Prefix sum, step 3: survivors to the next ray queue in their previous
/// order, finished paths' slots to the free ring.
///
/// # Safety
/// As for [`wf_scan_count`], after steps 1 and 2 ran over the same `n`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn wf_scan_scatter(queues: Queues, n: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        let (block, tid) = (_block_idx_x(), _thread_idx_x());
        let i = block * SCAN_BLOCK + tid;
        let flag = alive_at(&queues, i, n);
        let votes = ballot(u32::MAX, flag);
        let warp_offset = *queues.scan_warps.add((block * 32 + tid / 32) as usize);
        let alive_pos = *queues.scan_blocks.add(block as usize) + warp_offset + (votes & lanes_below()).count_ones();
        if i < n {
            let slot = *queues.rays_in.add(i as usize);
            if flag {
                *queues.rays_out.add(alive_pos as usize) = slot;
            } else {
                let dead_pos = (*queues.counters).free_base.wrapping_add(i - alive_pos);
                *queues.free_ring.add((dead_pos & queues.ring_mask) as usize) = slot;
            }
        }
    }
}
