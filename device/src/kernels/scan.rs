//! The order-preserving compaction: a three-kernel prefix sum over the
//! alive flags that the shading kernels set per ray-queue position.
//! Survivors go to the next ray queue in their previous order.
//!
//! The sums are written for warps of [`WARP_SIZE`] lanes and blocks of
//! [`SCAN_BLOCK`] threads, so the same code runs on the GPU (warps of 32)
//! and in the host's emulation (warps of one): a block's warp counts are
//! summed by its first thread in a short serial loop.

use super::wave_kernels::{CommonArgs, IterationRecord, QueueKernel};
use crate::kernel::Thread;
use crate::queue::{Queues, SCAN_BLOCK, Slot, WorkQueue};
use crate::warp::{WARP_SIZE, ballot, inclusive_scan, lane_id, lanes_below};

/// Warps per scan block.
const WARPS: u32 = SCAN_BLOCK / WARP_SIZE;

/// Whether ray-queue position `i` holds a continuing path.
///
/// # Safety
/// `n` entries of `alive` are valid.
#[inline(always)]
unsafe fn alive_at(alive: *mut u32, i: u32, n: u32) -> bool {
    // SAFETY: the caller's contract.
    i < n && unsafe { *alive.add(i as usize) } != 0
}

/// This iteration's ray count (the plan's).
///
/// # Safety
/// The control block must be valid.
#[inline(always)]
unsafe fn traced(a: &CommonArgs) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { (*a.control).schedule.trace }
}

/// Step 1, over blocks of [`SCAN_BLOCK`] `alive` flags: each warp's count
/// (in `scan_warps`), then (phase 1) each block's exclusive warp offsets
/// and its total (in `scan_blocks`).
pub struct ScanCount;

impl QueueKernel for ScanCount {
    type Io = (*mut u32, *mut u32, *mut u32);
    const PHASES: u32 = 2;

    fn io(q: &Queues) -> Self::Io {
        (q.alive(), q.scan_warps, q.scan_blocks)
    }

    fn items(r: &IterationRecord) -> u64 {
        r.trace as u64
    }

    #[inline(always)]
    unsafe fn run(thread: Thread, phase: u32, a: &CommonArgs, (alive, scan_warps, scan_blocks): Self::Io) {
        let (block, tid) = (thread.block[0], thread.index[0]);
        // SAFETY: the contract of `WavefrontArgs`; the grid covers the
        // capacity, so every index stays within the queues.
        unsafe {
            let n = traced(a);
            if block * SCAN_BLOCK >= n {
                return;
            }
            let warps = scan_warps.add((block * WARPS) as usize);
            if phase == 0 {
                let votes = ballot(u32::MAX, alive_at(alive, block * SCAN_BLOCK + tid, n));
                if lane_id() == 0 {
                    *warps.add((tid / WARP_SIZE) as usize) = votes.count_ones();
                }
            } else if tid == 0 {
                let mut sum = 0;
                for w in 0..WARPS as usize {
                    let c = *warps.add(w);
                    *warps.add(w) = sum;
                    sum += c;
                }
                *scan_blocks.add(block as usize) = sum;
            }
        }
    }
}

/// Step 2, one block of [`SCAN_BLOCK`] threads: turns the block totals in
/// `scan_blocks` into exclusive offsets and sets the count of `rays_out`
/// (the survivors). Phase 0 sums each thread's share of the blocks per
/// warp, phase 1 scans the warp sums, phase 2 writes offsets.
pub struct ScanBlocks;

impl QueueKernel for ScanBlocks {
    type Io = (*mut u32, WorkQueue<Slot>);
    const PHASES: u32 = 3;

    fn io(q: &Queues) -> Self::Io {
        (q.scan_blocks, q.rays_out)
    }

    /// The block totals it scans, one per [`SCAN_BLOCK`] rays.
    fn items(r: &IterationRecord) -> u64 {
        r.trace.div_ceil(SCAN_BLOCK) as u64
    }

    #[inline(always)]
    unsafe fn run(thread: Thread, phase: u32, a: &CommonArgs, (totals, rays_out): Self::Io) {
        let tid = thread.index[0];
        // SAFETY: the contract of `WavefrontArgs`; `scan_blocks` holds the
        // block totals and `SCAN_BLOCK` words of scratch after them.
        unsafe {
            let n = traced(a);
            let blocks = n.div_ceil(SCAN_BLOCK);
            let per = blocks.div_ceil(SCAN_BLOCK);
            let (start, end) = ((tid * per).min(blocks), ((tid + 1) * per).min(blocks));
            let scratch = totals.add(blocks as usize);
            let warp = tid / WARP_SIZE;
            // Phases 0 and 2 both need the thread's sum and its warp's
            // inclusive scan; locals do not cross barriers, so both compute them.
            let local = (start..end).map(|j| *totals.add(j as usize)).sum::<u32>();
            let inclusive = inclusive_scan(local);
            match phase {
                0 => {
                    if lane_id() == WARP_SIZE - 1 {
                        *scratch.add(warp as usize) = inclusive;
                    }
                }
                1 => {
                    if tid == 0 {
                        let mut sum = 0;
                        for w in 0..WARPS as usize {
                            let c = *scratch.add(w);
                            *scratch.add(w) = sum;
                            sum += c;
                        }
                    }
                }
                _ => {
                    let exclusive = *scratch.add(warp as usize) + inclusive - local;
                    let mut running = exclusive;
                    for j in start..end {
                        let c = *totals.add(j as usize);
                        *totals.add(j as usize) = running;
                        running += c;
                    }
                    if tid == SCAN_BLOCK - 1 {
                        rays_out.set_count(exclusive + local);
                    }
                }
            }
        }
    }
}

/// Step 3: the survivors of `rays_in` (by their `alive` flags and the
/// offsets in `scan_warps` and `scan_blocks`) to `rays_out`, in their
/// previous order.
pub struct ScanScatter;

impl QueueKernel for ScanScatter {
    type Io = (WorkQueue<Slot>, (*mut u32, *mut u32, *mut u32), WorkQueue<Slot>);

    fn io(q: &Queues) -> Self::Io {
        (q.rays_in, (q.alive(), q.scan_warps, q.scan_blocks), q.rays_out)
    }

    fn items(r: &IterationRecord) -> u64 {
        r.trace as u64
    }

    #[inline(always)]
    unsafe fn run(
        thread: Thread,
        _phase: u32,
        a: &CommonArgs,
        (rays_in, (alive, scan_warps, scan_blocks), rays_out): Self::Io,
    ) {
        let (block, tid) = (thread.block[0], thread.index[0]);
        // SAFETY: as for `ScanCount`, after steps 1 and 2.
        unsafe {
            let n = traced(a);
            if block * SCAN_BLOCK >= n {
                return;
            }
            let i = block * SCAN_BLOCK + tid;
            let flag = alive_at(alive, i, n);
            let votes = ballot(u32::MAX, flag);
            let warp_offset = *scan_warps.add((block * WARPS + tid / WARP_SIZE) as usize);
            let alive_pos = *scan_blocks.add(block as usize) + warp_offset + (votes & lanes_below()).count_ones();
            if flag {
                rays_out.set(alive_pos, rays_in.get(i));
            }
        }
    }
}

crate::kernel::entry_points! {
    wf_scan_count => ScanCount,
    wf_scan_blocks => ScanBlocks,
    wf_scan_scatter => ScanScatter,
}
