//! The wavefront's scheduler: a pure state machine over the free-slot ring
//! and the work still to issue. One GPU thread runs [`Schedule::plan`] at
//! the start of every iteration (the `wf_schedule` kernel), so the host
//! never waits for queue lengths: it enqueues iterations and reads the
//! schedule back only to learn when the render is done. The host's unit
//! tests drive the same function directly.
//!
//! Each iteration:
//!
//! 1. The survivors of the last iteration (`rays_out`) are the start of
//!    this iteration's ray queue.
//! 2. If work remains and the survivors are at most `refill_below`, new
//!    camera paths fill free slots, appended after the survivors in work
//!    order (contiguous pixels, so coherent rays). An empty pool is a
//!    *fresh* start: the new paths take slots `0..n` in order, whatever
//!    order the ring holds them in.
//! 3. Once every work item is issued and at most `drain_below` paths
//!    remain, they are finished by the drain kernel, one thread per path,
//!    instead of one iteration per bounce.
//! 4. Otherwise every queued ray is traced and shaded.

use crate::queue::QueueCounters;

/// The schedule's settings, state and current plan (in device memory,
/// inside [`crate::queue::Control`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    /// Work items of the render (pixel-samples).
    pub total_work: u64,
    /// Work items issued so far.
    pub next_work: u64,
    /// Paths finished so far (for progress).
    pub finished: u64,
    /// Ray segments traced by the extend kernel so far (the drain counts
    /// its own).
    pub rays: u64,
    /// Path slots (a power of two).
    pub capacity: u32,
    /// Refill the pool when at most this many paths survive an iteration:
    /// 0 is bounce-synchronous, `capacity` refills every iteration.
    pub refill_below: u32,
    /// Drain the rest once all work is issued and at most this many paths
    /// remain (0: never).
    pub drain_below: u32,
    /// Next entry of the free ring to take.
    pub free_head: u32,
    /// Plan: survivors at the start of the ray queue (new paths follow).
    pub survivors: u32,
    /// Plan: new paths to generate.
    pub generate: u32,
    /// Plan: 1 when the pool was empty, so new paths take slots `0..generate`.
    pub fresh: u32,
    /// Plan: rays to trace and shade.
    pub trace: u32,
    /// Plan: paths to finish in the drain kernel.
    pub drain: u32,
    /// Iterations planned so far.
    pub iteration: u32,
}

// The host reads the schedule back as plain bytes (see `Control`).
const _: () = assert!(core::mem::size_of::<Schedule>() == 4 * 8 + 10 * 4);

impl Schedule {
    /// A schedule for `total_work` items over `capacity` slots, before its
    /// first plan; `counters` is the matching initial counter state (every
    /// slot free).
    pub fn new(total_work: u64, capacity: u32, refill_below: u32, drain_below: u32) -> (Self, QueueCounters) {
        let schedule = Schedule {
            total_work,
            capacity,
            refill_below: refill_below.min(capacity),
            drain_below,
            ..Schedule::default()
        };
        let counters = QueueCounters {
            free_tail: capacity,
            ..QueueCounters::default()
        };
        (schedule, counters)
    }

    /// Takes in what the last iteration left in `counters`, plans the next
    /// iteration and resets the counters it will fill.
    #[inline(always)]
    pub fn plan(&mut self, counters: &mut QueueCounters) {
        let survivors = counters.rays_out;
        self.finished += (self.trace + self.drain - survivors) as u64;
        let remaining = self.total_work - self.next_work;
        let free = counters.free_tail.wrapping_sub(self.free_head);
        self.generate = if remaining > 0 && survivors <= self.refill_below {
            (free as u64).min(remaining) as u32
        } else {
            0
        };
        self.fresh = (survivors == 0) as u32;
        if self.generate > 0 {
            // A fresh start takes slots in order and so uses up the whole
            // ring: every slot was free, and any left over stay unused
            // only because no work remains for them.
            self.free_head = if self.fresh != 0 {
                counters.free_tail
            } else {
                self.free_head.wrapping_add(self.generate)
            };
        }
        self.next_work += self.generate as u64;
        self.survivors = survivors;
        let queued = survivors + self.generate;
        let drain = self.next_work == self.total_work && queued <= self.drain_below;
        (self.trace, self.drain) = if drain { (0, queued) } else { (queued, 0) };
        self.rays += self.trace as u64;
        self.iteration += 1;
        counters.shade = [0; crate::shading::ShadeClass::COUNT];
        counters.rays_out = 0;
    }

    /// True once a plan has nothing left to do.
    pub fn done(&self) -> bool {
        self.iteration > 0 && self.trace == 0 && self.drain == 0
    }
}
