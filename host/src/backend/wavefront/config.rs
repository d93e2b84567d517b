//! The wavefront's launch configuration ([`WavefrontConfig`]), built from
//! the value types and defaults in [`crate::settings`], and how a
//! [`Capacity`] becomes a slot count for one render.

pub use crate::settings::capacity::{Capacity, state_bytes};
use crate::settings::capacity::{MAX_CAPACITY, MIN_CAPACITY};
use crate::settings::kernels::KernelFeatures;
use crate::settings::megakernel::check_register_cap;
use crate::settings::wavefront::{
    DEFAULT_CAPACITY, DEFAULT_COMPACTION, DEFAULT_DRAIN_BELOW, DEFAULT_MATERIAL_SORT, DEFAULT_REFILL, DEFAULT_SCHEDULE,
    DEFAULT_WAVE_BLOCK,
};
pub use crate::settings::wavefront::{WaveSchedule, compaction_label, material_sort_label};
use device::launch::{Compaction, MaterialSort};

// The capacity is a setting (`crate::settings`); resolving it against a
// render's work and the GPU's free memory belongs to the back end.
impl Capacity {
    /// The slots for a render of `work` items, with or without shadow rays,
    /// given the free memory (asked only for `Auto`).
    pub fn resolve<E>(
        self,
        work: u64,
        shadow_rays: bool,
        free_bytes: impl FnOnce() -> Result<usize, E>,
    ) -> Result<u32, E> {
        let needed = work
            .checked_next_power_of_two()
            .unwrap_or(u64::MAX)
            .clamp(MIN_CAPACITY as u64, MAX_CAPACITY as u64) as u32;
        let largest_within = |budget: f64| {
            let mut c = needed;
            while c > MIN_CAPACITY && state_bytes(c as usize, shadow_rays) as f64 > budget {
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

/// The wavefront's launch configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WavefrontConfig {
    /// Path-pool capacity.
    pub capacity: Capacity,
    /// When new paths enter.
    pub schedule: WaveSchedule,
    /// With [`WaveSchedule::Regenerate`]: refill once at most this fraction of
    /// the slots hold paths (1 refills every iteration).
    pub refill: f32,
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
            refill: DEFAULT_REFILL,
            compaction: DEFAULT_COMPACTION.mode(),
            material_sort: DEFAULT_MATERIAL_SORT.mode(),
            block: DEFAULT_WAVE_BLOCK,
            count_divergence: false,
            time_launches: true,
            max_registers: None,
            kernels: KernelFeatures::EXACT,
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
        if !(0.0..=1.0).contains(&self.refill) {
            return Err(format!("refill {}: must be a fraction from 0 to 1", self.refill));
        }
        Ok(())
    }

    /// The schedule's refill threshold for `capacity` slots.
    pub fn refill_below(&self, capacity: u32) -> u32 {
        match self.schedule {
            WaveSchedule::BounceSync => 0,
            WaveSchedule::Regenerate => (self.refill as f64 * capacity as f64) as u32,
        }
    }

    /// A short description for reports, e.g. "regenerate0.5/prefix-sum/512MiB/64/drain262144".
    pub fn label(&self) -> String {
        let schedule = match self.schedule {
            WaveSchedule::BounceSync => self.schedule.label().to_string(),
            WaveSchedule::Regenerate => format!("{}{}", self.schedule.label(), self.refill),
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
            "{schedule}/{}/{}/{}{drain}{cap}{unsorted}{}",
            compaction_label(self.compaction),
            self.capacity.label(),
            self.block,
            self.kernels.label()
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
            WavefrontConfig { refill: 1.5, ..ok },
        ];
        for config in bad {
            assert!(config.validate().is_err(), "{config:?}");
        }
    }

    #[test]
    fn the_default_budget_holds_2_to_the_22_paths_within_512_mib() {
        let slots = Capacity::DEFAULT
            .resolve::<()>(u64::MAX, false, || unreachable!())
            .unwrap();
        assert_eq!(slots, 1 << 22);
        assert!(state_bytes(slots as usize, false) <= 512 << 20);
        assert!(state_bytes(2 * slots as usize, false) > 512 << 20);
        // Shadow rays take room: half the paths fit beside their queue.
        let with_shadows = Capacity::DEFAULT
            .resolve::<()>(u64::MAX, true, || unreachable!())
            .unwrap();
        assert_eq!(with_shadows, 1 << 21);
        assert!(state_bytes(1 << 22, true) > 512 << 20);
        // A small render takes no more slots than it has work items.
        assert_eq!(
            Capacity::DEFAULT.resolve::<()>(5000, false, || unreachable!()).unwrap(),
            8192
        );
        assert_eq!(
            Capacity::Slots(1024)
                .resolve::<()>(1 << 30, true, || unreachable!())
                .unwrap(),
            1024
        );
    }
}
