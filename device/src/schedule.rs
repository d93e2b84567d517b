//! The wavefront's scheduler: a pure state machine over the pool's slots
//! and the work still to issue. One GPU thread runs [`Schedule::plan`] at
//! the start of every iteration (the `wf_plan` kernel), so the host never
//! waits for queue lengths: it enqueues iterations and reads the schedule
//! back only to learn when the render is done. The host's unit tests drive
//! the same function directly.
//!
//! Each iteration:
//!
//! 1. The survivors of the last iteration (`rays_out`) are the start of
//!    this iteration's ray queue.
//! 2. If work remains and the survivors are at most `refill_below`, new
//!    camera paths start, appended after the survivors in work order
//!    (contiguous pixels, so coherent rays). Survivors in slots at or above
//!    the survivor count first move down into the free slots below it
//!    (`compact`), so that the new paths take the contiguous slots after
//!    them and every later access to them coalesces (as Cycles compacts
//!    its path states before it refills them).
//! 3. When no new path joins the queue (every work item is issued, or a
//!    bounce-synchronous wave is running down) and at most `drain_below`
//!    paths remain, they are finished by the drain kernel, one thread per
//!    path, instead of one nearly empty iteration per bounce.
//! 4. Otherwise every queued ray is traced and shaded.

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
    /// Ray segments traced by the extend and shadow kernels so far (the
    /// drain counts its own).
    pub rays: u64,
    /// Path slots.
    pub capacity: u32,
    /// Refill the pool when at most this many paths survive an iteration:
    /// 0 is bounce-synchronous, `capacity` refills every iteration.
    pub refill_below: u32,
    /// Drain the rest when no new path joins and at most this many paths
    /// remain (0: never).
    pub drain_below: u32,
    /// Plan: survivors at the start of the ray queue, in slots `0..` once
    /// compacted; new paths take the slots and queue places after them.
    pub survivors: u32,
    /// Plan: new paths to generate.
    pub generate: u32,
    /// Plan: 1 when survivors must move down into free slots before the
    /// new paths arrive.
    pub compact: u32,
    /// Plan: rays to trace and shade.
    pub trace: u32,
    /// Plan: paths to finish in the drain kernel.
    pub drain: u32,
    /// Iterations planned so far.
    pub iteration: u32,
    /// Padding.
    pub _pad: u32,
}

// The host reads the schedule back as plain bytes (see `Control`).
const _: () = assert!(core::mem::size_of::<Schedule>() == 4 * 8 + 10 * 4);

impl Schedule {
    /// A schedule for `total_work` items over `capacity` slots, before its
    /// first plan.
    pub fn new(total_work: u64, capacity: u32, refill_below: u32, drain_below: u32) -> Self {
        Schedule {
            total_work,
            capacity,
            refill_below: refill_below.min(capacity),
            drain_below,
            ..Schedule::default()
        }
    }

    /// The mark that the refill of this iteration writes into the slots
    /// of survivors (never a queue position, never an earlier mark).
    #[inline(always)]
    pub fn survivor_mark(&self) -> u32 {
        u32::MAX - self.iteration
    }

    /// Takes in what the last iteration left: its `survivors` (the length
    /// of the ray queue they were pushed into) and the `shadow_rays` it
    /// traced; plans the next iteration (the caller then resets the queue
    /// counters, [`crate::queue::Control::plan`]).
    #[inline(always)]
    pub fn plan(&mut self, survivors: u32, shadow_rays: u32) {
        self.finished += (self.trace + self.drain - survivors) as u64;
        let remaining = self.total_work - self.next_work;
        // Every slot but the survivors' is free: finished paths leave
        // theirs behind, and a drain empties the pool.
        self.generate = if remaining > 0 && survivors <= self.refill_below {
            ((self.capacity - survivors) as u64).min(remaining) as u32
        } else {
            0
        };
        self.compact = (self.generate > 0 && survivors > 0) as u32;
        self.next_work += self.generate as u64;
        self.survivors = survivors;
        let queued = survivors + self.generate;
        // Drain when no new path joins this iteration and few remain: at the
        // end of the render, or at the end of a bounce-synchronous wave,
        // whose tail would otherwise cost one nearly empty iteration per
        // bounce; the next wave then starts in an empty pool.
        let drain = queued <= self.drain_below && (self.next_work == self.total_work || self.generate == 0);
        (self.trace, self.drain) = if drain { (0, queued) } else { (queued, 0) };
        self.rays += self.trace as u64 + shadow_rays as u64;
        self.iteration += 1;
    }

    /// The survivors the refill kernels go over this iteration: all of
    /// them when the plan compacts, none otherwise.
    #[inline(always)]
    pub fn compacting(&self) -> u32 {
        if self.compact != 0 { self.survivors } else { 0 }
    }

    /// True once a plan has nothing left to do.
    pub fn done(&self) -> bool {
        self.iteration > 0 && self.trace == 0 && self.drain == 0
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    /// Runs the schedule to its end, letting each traced path survive
    /// while `survives(iteration, queue position)` says so, as the shading
    /// kernels and the compaction would. Returns the plans and checks the
    /// invariants of every one.
    fn simulate(
        total: u64,
        capacity: u32,
        refill_below: u32,
        drain_below: u32,
        survives: impl Fn(u32, u32) -> bool,
    ) -> Vec<Schedule> {
        let mut s = Schedule::new(total, capacity, refill_below, drain_below);
        let mut plans = Vec::new();
        let mut in_flight = 0u32;
        loop {
            s.plan(in_flight, 0);
            assert!(s.survivors + s.generate <= capacity, "more paths than slots: {s:?}");
            assert_eq!(s.survivors, in_flight, "survivors are what the last iteration kept");
            assert!(s.trace == 0 || s.drain == 0, "an iteration traces or drains");
            assert_eq!(
                s.compact == 1,
                s.generate > 0 && s.survivors > 0,
                "survivors move down before a refill"
            );
            plans.push(s);
            if s.done() {
                break;
            }
            assert!(plans.len() < 10_000, "the schedule does not end");
            // What the kernels do: survivors to the next queue, the rest
            // finish; a drain finishes everything.
            in_flight = (0..s.trace).filter(|&i| survives(s.iteration, i)).count() as u32;
        }
        plans
    }

    #[test]
    fn every_work_item_is_issued_once_and_every_path_finishes() {
        for (refill, drain) in [(0, 0), (0, 100), (512, 0), (1024, 200), (300, 300)] {
            let plans = simulate(10_000, 1024, refill, drain, |it, i| (it * 7 + i) % 3 != 0);
            let last = plans.last().unwrap();
            let issued: u64 = plans.iter().map(|p| p.generate as u64).sum();
            assert_eq!(issued, 10_000, "refill {refill}, drain {drain}");
            assert_eq!(last.next_work, 10_000);
            assert_eq!(last.finished, 10_000, "refill {refill}, drain {drain}");
            let traced: u64 = plans.iter().map(|p| p.trace as u64).sum();
            assert_eq!(last.rays, traced);
        }
    }

    #[test]
    fn bounce_synchronous_waves_start_fresh_only_in_an_empty_pool() {
        let plans = simulate(5000, 1024, 0, 0, |it, i| i % 2 == 0 && it % 16 != 0);
        for p in plans.iter().filter(|p| p.generate > 0) {
            assert_eq!(p.survivors, 0, "a wave starts in an empty pool");
            assert_eq!(p.compact, 0, "nothing to move in an empty pool");
            assert_eq!(
                p.generate,
                1024.min((p.total_work - (p.next_work - p.generate as u64)) as u32)
            );
        }
        // 5000 items in waves of 1024: five waves.
        assert_eq!(plans.iter().filter(|p| p.generate > 0).count(), 5);
    }

    #[test]
    fn regeneration_refills_every_free_slot_once_the_pool_runs_low() {
        // Half of each iteration's paths finish; refill at half the slots.
        let plans = simulate(100_000, 1024, 512, 0, |_, i| i % 2 == 1);
        let refills: Vec<&Schedule> = plans.iter().filter(|p| p.generate > 0 && p.survivors > 0).collect();
        assert!(!refills.is_empty());
        for p in refills {
            assert!(p.survivors <= 512 && p.compact == 1);
            // Every slot not in flight is refilled while work remains.
            assert_eq!(
                p.generate as u64,
                (1024 - p.survivors as u64).min(p.total_work - p.next_work + p.generate as u64)
            );
        }
    }

    #[test]
    fn the_tail_of_each_wave_is_drained_in_one_step() {
        // Paths never end on their own: only the drain can finish them.
        let plans = simulate(3000, 1024, 0, 1024, |_, _| true);
        let drains: Vec<&Schedule> = plans.iter().filter(|p| p.drain > 0).collect();
        assert_eq!(drains.len(), 3, "one drain per wave of 1024, 1024 and 952");
        assert_eq!(drains.iter().map(|p| p.drain as u64).sum::<u64>(), 3000);
        // With a small threshold the wave is traced down to it first.
        let plans = simulate(1000, 1024, 0, 100, |it, i| i < 1000 >> it);
        let first_drain = plans.iter().position(|p| p.drain > 0).unwrap();
        assert!(plans[first_drain].drain <= 100);
        assert!(plans[..first_drain].iter().all(|p| p.drain == 0 && p.trace > 100));
    }

    #[test]
    fn an_empty_render_is_done_at_once() {
        let plans = simulate(0, 1024, 512, 100, |_, _| false);
        assert_eq!(plans.len(), 1);
        assert!(plans[0].done());
    }
}
