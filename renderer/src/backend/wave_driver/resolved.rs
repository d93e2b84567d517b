//! What a wavefront configuration comes to for one render, once checked
//! ([`resolve`]): the pool's capacity in slots, by how a [`Capacity`]
//! becomes a slot count for one render's work and the machine's free
//! memory, and the features its kernels are bound to.

use super::WavefrontError;
use crate::backend::RenderJob;
use crate::settings::capacity::{Capacity, MAX_CAPACITY, MIN_CAPACITY, state_bytes};
use crate::settings::wave_config::WavefrontConfig;
use device::features::Features;

/// What a wavefront configuration comes to for one render, once checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The pool's slots.
    pub capacity: u32,
    /// The features its kernels are bound to.
    pub features: Features,
}

/// Checks `config` and resolves it for `work` items of `job`; `free_bytes`
/// is asked for the machine's free memory only for an `auto` capacity.
pub fn resolve<E>(
    config: &WavefrontConfig,
    (job, work): (&RenderJob, u64),
    free_bytes: impl FnOnce() -> Result<usize, WavefrontError<E>>,
) -> Result<Resolved, WavefrontError<E>> {
    config.validate().map_err(WavefrontError::Config)?;
    let features = config.kernels.bind(job.features());
    let capacity = config.capacity.resolve(work, job.traces_shadow_rays(), free_bytes)?;
    Ok(Resolved { capacity, features })
}

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

#[cfg(test)]
mod tests {
    use super::*;

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
