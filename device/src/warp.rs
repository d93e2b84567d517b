//! Warp-level primitives: the active mask, reconvergence, ballots, shuffles
//! and matching.
//! They serve the wavefront's queue appends, its prefix-sum compaction and
//! the divergence counters, and the megakernel reconverges its warps after
//! each path segment.
//!
//! On the GPU they are inline PTX over warps of [`WARP_SIZE`] lanes. On the
//! host, where the emulation runs one thread at a time, a warp is one lane
//! ([`serial`]): every primitive keeps its meaning for a warp of one, so the
//! kernels built on them run unchanged.

#[cfg(not(target_arch = "nvptx64"))]
pub use serial::*;

/// Lanes per warp on this target.
#[cfg(target_arch = "nvptx64")]
pub const WARP_SIZE: u32 = 32;

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

/// Lanes of the calling warp that are executing this instruction.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn active_mask() -> u32 {
    let m: u32;
    // SAFETY: `activemask` has no preconditions.
    unsafe { asm!("activemask.b32 {m};", m = out(reg32) m) };
    m
}

/// The calling thread's lane (0–31).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn lane_id() -> u32 {
    let l: u32;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u32 {l}, %laneid;", l = out(reg32) l) };
    l
}

/// Lanes below the calling one, as a mask.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn lanes_below() -> u32 {
    let m: u32;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u32 {m}, %lanemask_lt;", m = out(reg32) m) };
    m
}

/// Waits until every lane of `mask` has arrived here (or at another
/// `sync` with the same mask), and reconverges them: the lanes then run
/// together again, whatever branches they took since they parted.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn sync(mask: u32) {
    // SAFETY: `bar.warp.sync` only waits; the caller's lanes in `mask`
    // must all arrive at a `sync` with this mask, or the warp hangs.
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask) };
}

/// One bit per lane of `mask` whose `flag` is true. Every lane in `mask`
/// must execute it.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn ballot(mask: u32, flag: bool) -> u32 {
    let r: u32;
    // SAFETY: the caller's lanes in `mask` all arrive here (warp-synchronous).
    unsafe {
        asm!(
            "{{ .reg .pred p; setp.ne.u32 p, {f}, 0; vote.sync.ballot.b32 {r}, p, {m}; }}",
            r = out(reg32) r,
            f = in(reg32) flag as u32,
            m = in(reg32) mask,
        )
    };
    r
}

/// The lanes of `mask` holding the same `value` as the calling lane.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn match_any(mask: u32, value: u32) -> u32 {
    let r: u32;
    // SAFETY: as for `ballot`.
    unsafe { asm!("match.any.sync.b32 {r}, {v}, {m};", r = out(reg32) r, v = in(reg32) value, m = in(reg32) mask) };
    r
}

/// `value` from the lane `delta` below (its own value for lanes < `delta`).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn shuffle_up(value: u32, delta: u32) -> u32 {
    let r: u32;
    // SAFETY: every lane of the full warp must arrive here.
    unsafe {
        asm!(
            "shfl.sync.up.b32 {r}, {v}, {d}, 0, 0xffffffff;",
            r = out(reg32) r,
            v = in(reg32) value,
            d = in(reg32) delta,
        )
    };
    r
}

/// `value` from lane `src`, among the lanes of `mask` (every one of which
/// must call it; `src` must be in `mask`).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn shuffle_index(value: u32, src: u32, mask: u32) -> u32 {
    let r: u32;
    // SAFETY: the caller's contract above.
    unsafe {
        asm!(
            "shfl.sync.idx.b32 {r}, {v}, {s}, 31, {m};",
            r = out(reg32) r,
            v = in(reg32) value,
            s = in(reg32) src,
            m = in(reg32) mask,
        )
    };
    r
}

/// Reserves one position per lane of `group` with one atomic add on
/// `counter` (the lanes of `group` must all call this) and returns the
/// calling lane's.
///
/// # Safety
/// `counter` must be valid memory of the side that runs, and `group` must
/// contain the calling lane.
#[inline(always)]
pub unsafe fn reserve(counter: *mut u32, group: u32) -> u32 {
    use core::sync::atomic::{AtomicU32, Ordering};
    let leader = group.trailing_zeros();
    let mut base = 0;
    if lane_id() == leader {
        // SAFETY: the caller's contract.
        base = unsafe { AtomicU32::from_ptr(counter) }.fetch_add(group.count_ones(), Ordering::Relaxed);
    }
    let base = shuffle_index(base, leader, group);
    base + (group & lanes_below()).count_ones()
}

/// Appends `value` to `queue` at a position reserved by [`reserve`].
///
/// # Safety
/// As for [`reserve`], and `queue` must have room at every position the
/// counter can reach.
#[inline(always)]
pub unsafe fn append<T>(counter: *mut u32, group: u32, value: T, queue: *mut T) {
    // SAFETY: the caller's contract.
    unsafe { *queue.add(reserve(counter, group) as usize) = value };
}

/// Inclusive prefix sum of `value` across the full warp (every lane must
/// call it).
#[inline(always)]
pub fn inclusive_scan(value: u32) -> u32 {
    let lane = lane_id();
    let mut v = value;
    let mut d = 1;
    while d < WARP_SIZE {
        let up = shuffle_up(v, d);
        if lane >= d {
            v += up;
        }
        d <<= 1;
    }
    v
}

/// Where the lanes of a warp that trace paths side by side (the
/// megakernel's, one pixel each) meet again. Lanes part within a path (one
/// refracts, one is absorbed, one sends a shadow ray) and, left to the
/// compiler, may not meet again for the rest of the pixel: the megakernel
/// then runs each lane's path on its own (CS500 with next-event estimation
/// at 512x512 and 16 spp under Nsight Compute on an H100: 1.8 lanes per
/// warp instruction and 210 ms before dc2428b rejoined them after each
/// bounce, 5.0 and 70 ms after).
pub trait Rejoin {
    /// Called after each segment by every lane that traced it: rejoins
    /// those that `go_on` (to another segment of their path, or to their
    /// next sample's first), the lanes the next segment's call expects.
    fn bounce(&mut self, go_on: bool);
}

/// Lanes left to the compiler: the CPU's, which has none to rejoin, and
/// kernels whose lanes trace unrelated paths (the wavefront's drain).
#[derive(Clone, Copy, Debug)]
pub struct Unsynchronised;

impl Rejoin for Unsynchronised {
    #[inline(always)]
    fn bounce(&mut self, _go_on: bool) {}
}

/// The lanes of a warp with a pixel (a ballot taken while the warp was
/// converged), rejoined after every segment while they have work.
#[derive(Clone, Copy, Debug)]
pub struct Synchronised {
    /// The lanes still tracing.
    tracing: u32,
}

impl Synchronised {
    /// The lanes `lanes` of the calling warp, each with a pixel.
    #[inline(always)]
    pub fn new(lanes: u32) -> Self {
        Synchronised { tracing: lanes }
    }
}

impl Rejoin for Synchronised {
    #[inline(always)]
    fn bounce(&mut self, go_on: bool) {
        self.tracing = ballot(self.tracing, go_on);
        if go_on {
            sync(self.tracing);
        }
    }
}

/// The primitives for a warp of one lane (the host's serial emulation).
#[cfg(not(target_arch = "nvptx64"))]
pub mod serial {
    /// Lanes per warp on this target.
    pub const WARP_SIZE: u32 = 1;

    /// The only lane is active.
    #[inline(always)]
    pub fn active_mask() -> u32 {
        1
    }

    /// The only lane is lane 0.
    #[inline(always)]
    pub fn lane_id() -> u32 {
        0
    }

    /// No lane is below lane 0.
    #[inline(always)]
    pub fn lanes_below() -> u32 {
        0
    }

    /// A warp of one lane is always converged.
    #[inline(always)]
    pub fn sync(_mask: u32) {}

    /// The one lane's vote, if it is in `mask`.
    #[inline(always)]
    pub fn ballot(mask: u32, flag: bool) -> u32 {
        flag as u32 & mask
    }

    /// The one lane matches itself.
    #[inline(always)]
    pub fn match_any(mask: u32, _value: u32) -> u32 {
        mask & 1
    }

    /// No lane is `delta` below: the lane's own value.
    #[inline(always)]
    pub fn shuffle_up(value: u32, _delta: u32) -> u32 {
        value
    }

    /// Lane `src` is the calling lane.
    #[inline(always)]
    pub fn shuffle_index(value: u32, _src: u32, _mask: u32) -> u32 {
        value
    }
}
