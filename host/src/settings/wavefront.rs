//! The wavefront's settings: when new paths enter the pool
//! ([`WaveSchedule`]), how survivors are gathered ([`CompactionArg`]),
//! whether a shading queue is sorted by variant ([`MaterialSortArg`]), the
//! refill threshold, and the defaults of all of them (the pool's capacity is
//! in [`super::capacity`]).

use super::capacity::Capacity;
use device::launch::{Compaction, MaterialSort};

/// When new camera paths enter the wavefront's pool (not to be confused with
/// the device's scheduler, `device::schedule::Schedule`, which carries out
/// this choice).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaveSchedule {
    /// All paths advance one bounce per iteration; new paths start only when
    /// the queue has drained.
    BounceSync,
    /// Freed slots are refilled with new camera paths once the paths in
    /// flight fall to the refill threshold (Laine et al. 2013; Cycles).
    Regenerate,
}

impl WaveSchedule {
    /// The name on the command line and in reports.
    pub fn label(self) -> &'static str {
        match self {
            WaveSchedule::BounceSync => "bounce-sync",
            WaveSchedule::Regenerate => "regenerate",
        }
    }
}

/// How the wavefront gathers survivors, by the names the command line and
/// configs use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CompactionArg {
    /// Warp-aggregated atomic appends inside the shading kernels.
    AtomicAppend,
    /// Alive flags and a three-kernel prefix sum (order-preserving).
    PrefixSum,
}

impl CompactionArg {
    /// The device's compaction mode.
    pub const fn mode(self) -> Compaction {
        match self {
            CompactionArg::AtomicAppend => Compaction::AtomicAppend,
            CompactionArg::PrefixSum => Compaction::PrefixSum,
        }
    }
}

/// A compaction mode's name on the command line and in reports.
pub fn compaction_label(c: Compaction) -> &'static str {
    match c {
        Compaction::AtomicAppend => "atomic-append",
        Compaction::PrefixSum => "prefix-sum",
    }
}

/// Whether the wavefront sorts the coated materials' shading queue by noise
/// basis before shading it, by the names the command line and configs use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MaterialSortArg {
    /// Shade in the order paths were queued.
    Off,
    /// A counting sort by variant (noise basis) first, so that each warp
    /// runs one program.
    Variant,
}

impl MaterialSortArg {
    /// The device's setting.
    pub const fn mode(self) -> MaterialSort {
        match self {
            MaterialSortArg::Off => MaterialSort::Off,
            MaterialSortArg::Variant => MaterialSort::ByVariant,
        }
    }
}

/// A material sort's name on the command line and in reports.
pub fn material_sort_label(s: MaterialSort) -> &'static str {
    match s {
        MaterialSort::Off => "off",
        MaterialSort::ByVariant => "variant",
    }
}

/// Parses a fraction from 0 to 1.
pub fn parse_fraction(s: &str) -> Result<f32, String> {
    s.parse::<f32>()
        .ok()
        .filter(|f| (0.0..=1.0).contains(f))
        .ok_or_else(|| format!("expected a fraction from 0 to 1, got `{s}`"))
}

// The defaults bound memory (results/wavefront_tuning/,
// results/mega_vs_wave/): 2^22 paths, refilled in contiguous slots once half
// of them are free, survivors kept in order by the prefix sum, and the last
// 2^18 paths finished in one drain launch.

/// Pool capacity: path state and queues within 512 MiB.
pub const DEFAULT_CAPACITY: Capacity = Capacity::DEFAULT;

/// When new paths enter.
pub const DEFAULT_SCHEDULE: WaveSchedule = WaveSchedule::Regenerate;

/// With [`WaveSchedule::Regenerate`]: refill once at most this fraction of
/// the slots hold paths.
pub const DEFAULT_REFILL: f32 = 0.5;

/// How survivors are gathered.
pub const DEFAULT_COMPACTION: CompactionArg = CompactionArg::PrefixSum;

/// Sort the coated queue by variant (it costs two small launches per
/// iteration, and only scenes whose coated materials use two or more
/// noise bases pay them: results/material_cost/).
pub const DEFAULT_MATERIAL_SORT: MaterialSortArg = MaterialSortArg::Variant;

/// Threads per block of the per-path kernels.
pub const DEFAULT_WAVE_BLOCK: u32 = 64;

/// Finish the last paths in one drain launch once at most this many remain.
pub const DEFAULT_DRAIN_BELOW: u32 = 1 << 18;
