//! The wavefront's sort of one shading queue by variant
//! ([`crate::launch::MaterialSort`]): materials of
//! [`SORTED_CLASS`] run one of [`VARIANTS`] programs, and a warp whose lanes
//! need different ones runs each in turn. A counting sort between the
//! extend and shading kernels groups the queue by variant, so that warps
//! shade one program each (as Cycles sorts its paths by shader, and as
//! Laine, Karras and Aila give each material its own queue).
//!
//! Two kernels over the class's queue: [`CountVariants`] counts the
//! entries of each variant; [`SortByVariant`] places each entry after the
//! entries of every lower variant (the prefix of the counts, which each
//! thread sums for itself: there are only [`VARIANTS`]). The order within
//! a variant depends on the atomics, which no image does: each path's
//! numbers are keyed by its pixel and sample, and the film sums in fixed
//! point.

use super::wave_kernels::{CommonArgs, IterationRecord, QueueKernel, grid_stride};
use crate::kernel::Thread;
use crate::queue::{Queues, Slot, WorkQueue};
use crate::shading::{SORTED_CLASS, VARIANTS};
use crate::warp::{active_mask, match_any, reserve};

/// The variant of the material that `slot`'s path hit.
///
/// # Safety
/// The contract of [`WavefrontArgs`](super::wave_kernels::WavefrontArgs), for a slot of the sorted class's
/// queue this iteration (its hit is recorded).
#[inline(always)]
unsafe fn variant_of(a: &CommonArgs, slot: Slot) -> u32 {
    // SAFETY: the caller's contract.
    let material = unsafe { *a.pool.hit_material.add(slot.index()) };
    a.scene.materials.as_slice()[material as usize].variant()
}

/// Counts the entries of the sorted class's queue per variant.
pub struct CountVariants;

impl QueueKernel for CountVariants {
    type Io = WorkQueue<Slot>;

    fn io(q: &Queues) -> Self::Io {
        q.shade[SORTED_CLASS as usize]
    }

    fn items(r: &IterationRecord) -> u64 {
        r.shade[SORTED_CLASS as usize] as u64
    }

    #[inline(always)]
    unsafe fn run(thread: Thread, _phase: u32, a: &CommonArgs, queue: Self::Io) {
        // SAFETY: the contract of `WavefrontArgs`; queue entries are slots
        // whose hit the extend kernel recorded; variants are below
        // `VARIANTS`.
        unsafe {
            grid_stride(&thread, queue.count(), |i| {
                let v = variant_of(a, queue.get(i)) as usize;
                let group = match_any(active_mask(), v as u32);
                reserve(&raw mut (*a.control).counters.variants[v], group);
            });
        }
    }
}

/// Writes the sorted class's queue, grouped by variant, into the sorted
/// queue that its shading kernel then reads.
pub struct SortByVariant;

impl QueueKernel for SortByVariant {
    type Io = (WorkQueue<Slot>, WorkQueue<Slot>);

    fn io(q: &Queues) -> Self::Io {
        (q.shade[SORTED_CLASS as usize], q.sorted())
    }

    fn items(r: &IterationRecord) -> u64 {
        r.shade[SORTED_CLASS as usize] as u64
    }

    #[inline(always)]
    unsafe fn run(thread: Thread, _phase: u32, a: &CommonArgs, (queue, sorted): Self::Io) {
        // SAFETY: as for `CountVariants`, which finished counting before
        // this launch; each entry takes its own place (one atomic per
        // group), below the queue's length.
        unsafe {
            let counters = &raw mut (*a.control).counters;
            let counts: [u32; VARIANTS] = (*counters).variants;
            grid_stride(&thread, queue.count(), |i| {
                let slot = queue.get(i);
                let v = variant_of(a, slot) as usize;
                // NOTE: summed over every variant with a mask, so that the
                // loop unrolls over constant indices and `counts` stays in
                // registers (a slice up to `v` would index it at run time).
                let start: u32 = (0..VARIANTS).map(|u| if u < v { counts[u] } else { 0 }).sum();
                let group = match_any(active_mask(), v as u32);
                let at = reserve(&raw mut (*counters).variants_placed[v], group);
                sorted.set(start + at, slot);
            });
        }
    }
}

crate::kernel::entry_points! {
    wf_count_variants => CountVariants,
    wf_sort_by_variant => SortByVariant,
}
