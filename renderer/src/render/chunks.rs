//! The work scheduler of a split render ([`super::split`]): chunks of
//! sample indices, handed out in order to whichever device asks next.
//!
//! A chunk is a range of sample indices over the *whole* image, not a tile.
//! Every sample is keyed by its pixel and index (`device::rng`), so a chunk
//! renders exactly its share of the one-device film, and the fixed-point
//! sums of all chunks add up to that film bit for bit, in any order. Whole
//! images keep each launch as large as a one-device render's (a GPU stays
//! full however thin the slice of samples), and every pixel always holds
//! the same number of samples. Handing the chunks out in order from one
//! cursor keeps the finished samples a prefix `0..n`: a render stopped by
//! Ctrl-C, whose chunks in flight finish, equals a render asked for `n`
//! samples.
//!
//! The balance is dynamic: each device asks for its next chunk when it has
//! finished the last, and sizes it by its own measured time per sample
//! ([`chunk_samples`]): about [`CHUNK_TIME`] of work, never more than a
//! share of what is left (so the last chunks shrink and the devices finish
//! together), one sample for its first chunk. A slower or busier device
//! therefore takes fewer samples.

use device::integrator::SampleRange;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// The work a device aims to take per chunk: long enough that a chunk's
/// fixed cost (launch setup, a film read back and added) is small, short
/// enough that a stop request is answered promptly.
pub const CHUNK_TIME: Duration = Duration::from_millis(500);

/// The samples of a render (`0..spp`, or one MPI rank's share of them),
/// handed out in order.
#[derive(Debug)]
pub struct SampleCursor {
    next: AtomicU32,
    begin: u32,
    end: u32,
}

impl SampleCursor {
    /// A cursor over the sample indices `samples`.
    pub fn new(samples: SampleRange) -> Self {
        SampleCursor {
            next: AtomicU32::new(samples.begin),
            begin: samples.begin,
            end: samples.end.max(samples.begin),
        }
    }

    /// The next `want` samples (at least one, fewer at the end), or `None`
    /// once every sample is taken.
    pub fn take(&self, want: u32) -> Option<SampleRange> {
        let want = want.max(1);
        let end = self.end;
        self.next
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |next| {
                if next < end {
                    Some(next + want.min(end - next))
                } else {
                    None
                }
            })
            .ok()
            .map(|begin| SampleRange {
                begin,
                end: begin + want.min(end - begin),
            })
    }

    /// Samples not yet taken.
    pub fn remaining(&self) -> u32 {
        self.end - self.next.load(Ordering::SeqCst).min(self.end)
    }

    /// Samples taken so far.
    pub fn taken(&self) -> u32 {
        self.end - self.begin - self.remaining()
    }
}

/// How many samples a device asks for next: one while its speed is
/// unknown (`per_sample` is `None`); then as many as it renders in
/// [`CHUNK_TIME`], at most a `1 / 2N` share of the `remaining` samples
/// among `devices` (guided self-scheduling), and at least one.
pub fn chunk_samples(per_sample: Option<Duration>, remaining: u32, devices: usize) -> u32 {
    let Some(per_sample) = per_sample else {
        return 1;
    };
    let by_time = CHUNK_TIME.as_nanos() / per_sample.as_nanos().max(1);
    let share = remaining.div_ceil(2 * devices.max(1) as u32);
    (by_time.min(share as u128) as u32).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_hands_out_every_sample_once_in_order() {
        let cursor = SampleCursor::new(SampleRange { begin: 0, end: 10 });
        let taken: Vec<_> = std::iter::from_fn(|| cursor.take(4))
            .map(|r| (r.begin, r.end))
            .collect();
        assert_eq!(taken, [(0, 4), (4, 8), (8, 10)]);
        assert_eq!((cursor.remaining(), cursor.taken()), (0, 10));
        assert!(
            SampleCursor::new(SampleRange { begin: 0, end: 3 })
                .take(0)
                .is_some_and(|r| r.end - r.begin == 1)
        );
        let share = SampleCursor::new(SampleRange { begin: 5, end: 8 });
        assert_eq!(share.take(2), Some(SampleRange { begin: 5, end: 7 }), "a rank's share");
        assert_eq!((share.remaining(), share.taken()), (1, 2));
    }

    #[test]
    fn threads_taking_at_once_cover_the_samples_without_overlap() {
        let cursor = SampleCursor::new(SampleRange { begin: 0, end: 1000 });
        let mut ranges: Vec<SampleRange> = std::thread::scope(|s| {
            let workers: Vec<_> = (1..=4)
                .map(|want| {
                    let cursor = &cursor;
                    s.spawn(move || std::iter::from_fn(|| cursor.take(want)).collect::<Vec<_>>())
                })
                .collect();
            workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
        });
        ranges.sort_by_key(|r| r.begin);
        assert_eq!(ranges[0].begin, 0);
        assert_eq!(ranges.last().unwrap().end, 1000);
        assert!(ranges.windows(2).all(|w| w[0].end == w[1].begin));
    }

    #[test]
    fn chunks_are_sized_by_speed_and_shrink_towards_the_end() {
        assert_eq!(chunk_samples(None, 1000, 2), 1, "the first chunk measures");
        let ms = Duration::from_millis(1);
        assert_eq!(chunk_samples(Some(ms), 100_000, 2), 500, "half a second of work");
        assert_eq!(chunk_samples(Some(ms), 1000, 2), 250, "a quarter of what is left");
        assert_eq!(chunk_samples(Some(ms), 3, 2), 1);
        assert_eq!(chunk_samples(Some(Duration::from_secs(2)), 1000, 2), 1, "at least one");
        assert_eq!(chunk_samples(Some(Duration::ZERO), 1000, 1), 500);
    }
}
