//! The wavefront's settings: pool capacity, schedule, compaction, block
//! size and drain, with their labels for reports.

use device::launch::Compaction;
use device::queue::{PathPool, Queues};

/// When new camera paths enter the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Schedule {
    /// All paths advance one bounce per iteration; new paths start only when
    /// the queue has drained.
    BounceSync,
    /// Freed slots are refilled with new camera paths once the paths in
    /// flight fall to the refill threshold (Laine et al. 2013; Cycles).
    Regenerate,
}

impl Schedule {
    /// The name on the command line and in reports.
    pub fn label(self) -> &'static str {
        match self {
            Schedule::BounceSync => "bounce-sync",
            Schedule::Regenerate => "regenerate",
        }
    }
}

/// How many paths are in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capacity {
    /// Exactly this many slots (a power of two).
    Slots(u32),
    /// The largest power of two whose state and queues fit in this many
    /// bytes, no larger than the render needs.
    Budget(u64),
    /// The largest power of two whose state fits in 80% of free memory, no
    /// larger than the render needs.
    Auto,
}

impl Capacity {
    /// The default: path state and queues within 512 MiB (2^22 paths),
    /// what a 12 GB GPU can spare beside a large scene.
    pub const DEFAULT: Capacity = Capacity::Budget(512 << 20);

    /// The name in reports: `2^K`, `512MiB` or `auto`.
    pub fn label(self) -> String {
        match self {
            Capacity::Slots(n) => format!("2^{}", n.trailing_zeros()),
            Capacity::Budget(b) => format!("{}MiB", b >> 20),
            Capacity::Auto => "auto".into(),
        }
    }

    /// The slots for a render of `work` items, given the free memory
    /// (asked only for `Auto`).
    pub fn resolve<E>(self, work: u64, free_bytes: impl FnOnce() -> Result<usize, E>) -> Result<u32, E> {
        let needed = work
            .checked_next_power_of_two()
            .unwrap_or(u64::MAX)
            .clamp(MIN_CAPACITY as u64, MAX_CAPACITY as u64) as u32;
        let largest_within = |budget: f64| {
            let mut c = needed;
            while c > MIN_CAPACITY && state_bytes(c as usize) as f64 > budget {
                c /= 2;
            }
            c
        };
        Ok(match self {
            Capacity::Slots(n) => n,
            Capacity::Budget(bytes) => largest_within(bytes as f64),
            Capacity::Auto => largest_within(0.8 * free_bytes()? as f64),
        })
    }
}

/// A compaction mode's name on the command line and in reports.
pub fn compaction_label(c: Compaction) -> &'static str {
    match c {
        Compaction::AtomicAppend => "atomic-append",
        Compaction::PrefixSum => "prefix-sum",
    }
}

/// The wavefront's launch configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WavefrontConfig {
    /// Path-pool capacity.
    pub capacity: Capacity,
    /// When new paths enter.
    pub schedule: Schedule,
    /// With [`Schedule::Regenerate`]: refill once at most this fraction of
    /// the slots hold paths (1 refills every iteration).
    pub refill: f32,
    /// How survivors are gathered.
    pub compaction: Compaction,
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
    /// When no new path joins (every sample is issued, or a bounce-
    /// synchronous wave runs down) and at most this many paths remain,
    /// finish them with one drain launch (one thread per path) instead of
    /// more iterations; 0 never drains.
    pub drain_below: u32,
}

impl Default for WavefrontConfig {
    fn default() -> Self {
        // Bounded memory (results/wavefront_tuning/, results/mega_vs_wave/):
        // 2^22 paths, refilled in contiguous slots once half of them are
        // free, survivors kept in order by the prefix sum, and the last
        // 2^18 paths finished in one drain launch.
        WavefrontConfig {
            capacity: Capacity::DEFAULT,
            schedule: Schedule::Regenerate,
            refill: 0.5,
            compaction: Compaction::PrefixSum,
            block: 64,
            count_divergence: false,
            time_launches: true,
            max_registers: None,
            drain_below: 1 << 18,
        }
    }
}

/// The smallest capacity accepted (one prefix-sum block).
pub const MIN_CAPACITY: u32 = 1 << 10;
/// The largest capacity accepted (2^28 slots, 33 GB of state).
pub const MAX_CAPACITY: u32 = 1 << 28;

impl WavefrontConfig {
    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), String> {
        if let Capacity::Slots(n) = self.capacity
            && (!n.is_power_of_two() || !(MIN_CAPACITY..=MAX_CAPACITY).contains(&n))
        {
            return Err(format!(
                "capacity {n}: must be a power of two from {MIN_CAPACITY} to {MAX_CAPACITY}"
            ));
        }
        if let Capacity::Budget(b) = self.capacity
            && b < state_bytes(MIN_CAPACITY as usize) as u64
        {
            return Err(format!(
                "memory budget {b} bytes: {MIN_CAPACITY} paths, the fewest, need {}",
                state_bytes(MIN_CAPACITY as usize)
            ));
        }
        if self.block == 0 || self.block > 1024 || !self.block.is_multiple_of(32) {
            return Err(format!("block {}: must be a multiple of 32 up to 1024", self.block));
        }
        crate::backend::gpu::megakernel::check_register_cap(self.max_registers)?;
        if !(0.0..=1.0).contains(&self.refill) {
            return Err(format!("refill {}: must be a fraction from 0 to 1", self.refill));
        }
        Ok(())
    }

    /// The schedule's refill threshold for `capacity` slots.
    pub fn refill_below(&self, capacity: u32) -> u32 {
        match self.schedule {
            Schedule::BounceSync => 0,
            Schedule::Regenerate => (self.refill as f64 * capacity as f64) as u32,
        }
    }

    /// A short description for reports, e.g. "regenerate0.5/prefix-sum/512MiB/64/drain262144".
    pub fn label(&self) -> String {
        let schedule = match self.schedule {
            Schedule::BounceSync => self.schedule.label().to_string(),
            Schedule::Regenerate => format!("{}{}", self.schedule.label(), self.refill),
        };
        let drain = if self.drain_below > 0 {
            format!("/drain{}", self.drain_below)
        } else {
            String::new()
        };
        let cap = self.max_registers.map(|r| format!("/reg{r}")).unwrap_or_default();
        format!(
            "{schedule}/{}/{}/{}{drain}{cap}",
            compaction_label(self.compaction),
            self.capacity.label(),
            self.block
        )
    }
}

/// Total bytes of path state and queues for `capacity` slots.
pub fn state_bytes(capacity: usize) -> usize {
    PathPool::bytes(capacity) + Queues::bytes(capacity)
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
            WavefrontConfig { refill: 1.5, ..ok },
        ];
        for config in bad {
            assert!(config.validate().is_err(), "{config:?}");
        }
    }

    #[test]
    fn the_default_budget_holds_2_to_the_22_paths_within_512_mib() {
        let slots = Capacity::DEFAULT.resolve::<()>(u64::MAX, || unreachable!()).unwrap();
        assert_eq!(slots, 1 << 22);
        assert!(state_bytes(slots as usize) <= 512 << 20);
        assert!(state_bytes(2 * slots as usize) > 512 << 20);
        // A small render takes no more slots than it has work items.
        assert_eq!(Capacity::DEFAULT.resolve::<()>(5000, || unreachable!()).unwrap(), 8192);
        assert_eq!(
            Capacity::Slots(1024).resolve::<()>(1 << 30, || unreachable!()).unwrap(),
            1024
        );
    }

    #[test]
    fn state_bytes_are_the_per_path_sizes_times_the_capacity() {
        // 11 pool fields: 5 of 12 bytes and 6 of 4 bytes; 4 queue lists of 4
        // (rays in and out, alive flags, warp counts) and one per class.
        assert_eq!(PathPool::BYTES_PER_PATH, 5 * 12 + 6 * 4);
        assert_eq!(Queues::BYTES_PER_PATH, 4 * (4 + device::shading::ShadeClass::COUNT));
        let c = 1 << 20;
        let per_path = state_bytes(c) as f64 / c as f64;
        let expected = (PathPool::BYTES_PER_PATH + Queues::BYTES_PER_PATH) as f64;
        // The prefix-sum block totals and alignment add well under 1%.
        assert!(
            per_path >= expected && per_path < expected * 1.01,
            "{per_path} vs {expected}"
        );
    }
}
