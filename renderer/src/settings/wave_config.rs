//! The wavefront's configuration ([`WavefrontConfig`]) and its settings:
//! when new paths enter the pool ([`WaveSchedule`]), how survivors are
//! gathered ([`CompactionArg`]), whether a shading queue is sorted by
//! variant ([`MaterialSortArg`]), the refill threshold, and the defaults of
//! all of them (the pool's capacity is in [`super::capacity`]).

use super::arithmetic::{Arithmetic, arithmetic_label};
use super::capacity::Capacity;
use super::kernels::KernelFeatures;
use super::mega_config::check_register_cap;
use crate::settings::echo::shorten_for_error;
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
        .ok_or_else(|| format!("expected a fraction from 0 to 1, got `{}`", shorten_for_error(s)))
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

/// The wavefront's launch configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WavefrontConfig {
    /// Path-pool capacity.
    pub capacity: Capacity,
    /// When new paths enter.
    pub schedule: WaveSchedule,
    /// With [`WaveSchedule::Regenerate`]: refill once at most this fraction of
    /// the slots hold paths (1 refills every iteration); `None` where not
    /// given, [`DEFAULT_REFILL`] then. Given to [`WaveSchedule::BounceSync`],
    /// which never refills, it is refused ([`WavefrontConfig::validate`]).
    pub refill: Option<f32>,
    /// How survivors are gathered.
    pub compaction: Compaction,
    /// Whether the coated queue is sorted by variant before shading (only
    /// where the scene's coated materials use two or more).
    pub material_sort: MaterialSort,
    /// Threads per block of the per-path kernels.
    pub block: u32,
    /// Count active lanes at the material branch (diagnosis; costs time).
    pub count_divergence: bool,
    /// Time every launch with a pair of CUDA events (the per-kernel
    /// profile). The events cost GPU time between the many small launches;
    /// off, only the wall time is measured.
    pub time_launches: bool,
    /// Registers per thread the kernels may use (`None`: as compiled).
    pub max_registers: Option<u32>,
    /// Which build of the drain runs.
    pub kernels: KernelFeatures,
    /// The float arithmetic the kernels are bound to.
    pub arithmetic: Arithmetic,
    /// When no new path joins (every sample is issued, or a bounce-
    /// synchronous wave runs down) and at most this many paths remain,
    /// finish them with one drain launch (one thread per path) instead of
    /// more iterations; 0 never drains.
    pub drain_below: u32,
}

impl Default for WavefrontConfig {
    fn default() -> Self {
        WavefrontConfig {
            capacity: DEFAULT_CAPACITY,
            schedule: DEFAULT_SCHEDULE,
            refill: None,
            compaction: DEFAULT_COMPACTION.mode(),
            material_sort: DEFAULT_MATERIAL_SORT.mode(),
            block: DEFAULT_WAVE_BLOCK,
            count_divergence: false,
            time_launches: true,
            max_registers: None,
            kernels: KernelFeatures::EXACT,
            arithmetic: Arithmetic::Exact,
            drain_below: DEFAULT_DRAIN_BELOW,
        }
    }
}

impl WavefrontConfig {
    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), String> {
        self.capacity.check()?;
        if self.block == 0 || self.block > 1024 || !self.block.is_multiple_of(32) {
            return Err(format!("block {}: must be a multiple of 32 up to 1024", self.block));
        }
        check_register_cap(self.max_registers)?;
        match (self.refill, self.schedule) {
            (Some(refill), _) if !(0.0..=1.0).contains(&refill) => {
                Err(format!("refill {refill}: must be a fraction from 0 to 1"))
            }
            (Some(_), WaveSchedule::BounceSync) => Err(format!(
                "refill applies to the {} schedule; {} never refills the pool and would ignore it: \
                 leave refill out or choose the {} schedule",
                WaveSchedule::Regenerate.label(),
                WaveSchedule::BounceSync.label(),
                WaveSchedule::Regenerate.label()
            )),
            _ => Ok(()),
        }
    }

    /// The refill threshold in effect: the one given, else the default.
    pub fn refill_fraction(&self) -> f32 {
        self.refill.unwrap_or(DEFAULT_REFILL)
    }

    /// The schedule's refill threshold for `capacity` slots.
    pub fn refill_below(&self, capacity: u32) -> u32 {
        match self.schedule {
            WaveSchedule::BounceSync => 0,
            WaveSchedule::Regenerate => (self.refill_fraction() as f64 * capacity as f64) as u32,
        }
    }

    /// A short description for reports, e.g. "regenerate0.5/prefix-sum/512MiB/64/drain262144".
    pub fn label(&self) -> String {
        let schedule = match self.schedule {
            WaveSchedule::BounceSync => self.schedule.label().to_string(),
            WaveSchedule::Regenerate => format!("{}{}", self.schedule.label(), self.refill_fraction()),
        };
        let drain = if self.drain_below > 0 {
            format!("/drain{}", self.drain_below)
        } else {
            String::new()
        };
        let cap = self.max_registers.map(|r| format!("/reg{r}")).unwrap_or_default();
        let unsorted = if self.material_sort == MaterialSort::Off {
            "/unsorted"
        } else {
            ""
        };
        format!(
            "{schedule}/{}/{}/{}{drain}{cap}{unsorted}{}{}",
            compaction_label(self.compaction),
            self.capacity.label(),
            self.block,
            self.kernels.label(),
            arithmetic_label(self.arithmetic)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_are_checked_and_labelled() {
        let ok = WavefrontConfig::default();
        assert!(ok.validate().is_ok());
        assert_eq!(ok.label(), "regenerate0.5/prefix-sum/512MiB/64/drain262144");
        let bad = [
            WavefrontConfig {
                capacity: Capacity::Slots(3000),
                ..ok
            },
            WavefrontConfig {
                capacity: Capacity::Budget(1000),
                ..ok
            },
            WavefrontConfig { block: 48, ..ok },
            WavefrontConfig {
                refill: Some(1.5),
                ..ok
            },
        ];
        for config in bad {
            assert!(config.validate().is_err(), "{config:?}");
        }
    }

    #[test]
    fn a_refill_threshold_is_refused_where_the_schedule_never_refills() {
        let regenerate = WavefrontConfig {
            refill: Some(0.25),
            ..WavefrontConfig::default()
        };
        assert_eq!(regenerate.validate(), Ok(()));
        assert_eq!(regenerate.label(), "regenerate0.25/prefix-sum/512MiB/64/drain262144");
        let bounce = WavefrontConfig {
            schedule: WaveSchedule::BounceSync,
            ..regenerate
        };
        let e = bounce.validate().unwrap_err();
        assert!(
            e.contains("refill applies to the regenerate schedule") && e.contains("bounce-sync never refills"),
            "{e}"
        );
        // Not given, nothing to refuse.
        let bounce = WavefrontConfig { refill: None, ..bounce };
        assert_eq!(bounce.validate(), Ok(()));
    }
}
