//! How often a configuration is rendered: untimed warm-ups, then timed
//! repetitions, with their limits and the defaults of `bench` and of a
//! config's study.

/// The most timed repetitions of one configuration (`repeat`, `--repeat`).
pub const MAX_REPEAT: u32 = 1000;

/// The most untimed warm-up renders of one configuration.
pub const MAX_WARMUP: u32 = 100;

/// `wavepath bench`'s timed repetitions per configuration.
pub const BENCH_REPEAT: u32 = 5;

/// `wavepath bench`'s warm-up renders per configuration.
pub const BENCH_WARMUP: u32 = 1;

/// A study's timed repetitions per configuration unless it sets `repeat`.
pub const STUDY_REPEAT: u32 = 3;

/// A study's warm-up renders per configuration unless it sets `warmup`.
pub const STUDY_WARMUP: u32 = 1;
