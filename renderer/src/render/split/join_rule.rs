//! The join rule: whether a device ready after the first joins a split
//! render. It joins when the time it would save exceeds what its film
//! costs to bring into the merged one ([`Join`]), or at once under
//! [`SplitRule::Every`]; so a short render stays on one device.

use super::split_device::SplitDevice;
use crate::render::chunks::SampleCursor;
use crate::render::film_sum::added;
use crate::settings::devices::SplitRule;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A device's estimate, once its setup is done and other devices are
/// rendering, of what joining them would bring: it joins when `gain`
/// exceeds `cost`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Join {
    /// The render's time saved: the work left, `W` (the samples left times
    /// the time per sample measured so far), over `k` devices against
    /// `k + 1`: `W / k − W / (k + 1)`.
    pub gain: Duration,
    /// Its film's way into the merged one, measured on its own empty sum:
    /// reading it back and adding it to another.
    pub cost: Duration,
}

/// What the devices of a split share besides the cursor: how many render,
/// how many may (those that have not stayed out), and the time per sample
/// the first chunk to finish measured.
pub(super) struct JoinBoard {
    rendering: AtomicUsize,
    may_render: AtomicUsize,
    /// Nanoseconds per sample; 0 until measured.
    per_sample_ns: AtomicU64,
}

impl JoinBoard {
    /// The board of a split over `devices` devices.
    pub(super) fn new(devices: usize) -> Self {
        JoinBoard {
            rendering: AtomicUsize::new(0),
            may_render: AtomicUsize::new(devices),
            per_sample_ns: AtomicU64::new(0),
        }
    }

    /// The devices that render or may yet join.
    pub(super) fn may_render(&self) -> usize {
        self.may_render.load(Ordering::SeqCst)
    }

    /// Counts out a device that stayed out.
    pub(super) fn stayed_out(&self) {
        self.may_render.fetch_sub(1, Ordering::SeqCst);
    }

    /// The time per sample measured so far, if any.
    fn per_sample(&self) -> Option<Duration> {
        match self.per_sample_ns.load(Ordering::SeqCst) {
            0 => None,
            ns => Some(Duration::from_nanos(ns)),
        }
    }

    /// Records a chunk's time per sample, if none is known yet.
    pub(super) fn measured(&self, per_sample: Duration) {
        let ns = (per_sample.as_nanos() as u64).max(1);
        let _ = self
            .per_sample_ns
            .compare_exchange(0, ns, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// A device's decision ([`decide`]).
pub(super) enum Joining {
    /// It renders.
    Joins,
    /// Joining would not pay.
    StaysOut(Join),
    /// The samples were gone, or the split halting, when it was ready.
    TooLate,
}

/// Whether the device of `sum` joins. The first ready always does, so that
/// a split renders at least one chunk. A later one finding the samples of
/// `cursor` gone or the split halting (`halt`) stays out, under either
/// rule: a stop request starts no device. Otherwise every one joins under
/// [`SplitRule::Every`]; under [`SplitRule::Paying`] it waits for a time
/// per sample, then joins when the time it would save exceeds its film's
/// cost ([`Join`], counted against the devices rendering then).
pub(super) fn decide<S: SplitDevice>(
    board: &JoinBoard,
    cursor: &SampleCursor,
    halt: &dyn Fn() -> bool,
    rule: SplitRule,
    sum: &mut S,
) -> anyhow::Result<Joining> {
    if board
        .rendering
        .compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        return Ok(Joining::Joins);
    }
    let too_late = || cursor.remaining() == 0 || halt();
    if rule == SplitRule::Every {
        if too_late() {
            return Ok(Joining::TooLate);
        }
        board.rendering.fetch_add(1, Ordering::SeqCst);
        return Ok(Joining::Joins);
    }
    let per_sample = loop {
        if too_late() {
            return Ok(Joining::TooLate);
        }
        if let Some(t) = board.per_sample() {
            break t;
        }
        std::thread::sleep(Duration::from_micros(100));
    };
    let cost = film_cost(sum)?;
    let rendering = board.rendering.load(Ordering::SeqCst).max(1) as u32;
    let left = per_sample * cursor.remaining();
    let gain = left / rendering - left / (rendering + 1);
    if gain > cost {
        board.rendering.fetch_add(1, Ordering::SeqCst);
        Ok(Joining::Joins)
    } else {
        Ok(Joining::StaysOut(Join { gain, cost }))
    }
}

/// What bringing `sum`'s film into the merged one costs: reading it back,
/// and adding it to another film (measured on the sum before any chunk).
fn film_cost<S: SplitDevice>(sum: &mut S) -> anyhow::Result<Duration> {
    let reading = Instant::now();
    let out = sum.read_back()?;
    let read = reading.elapsed();
    let other = out.clone();
    let adding = Instant::now();
    std::hint::black_box(added(other, out));
    Ok(read + adding.elapsed())
}
