//! The wavefront's pool capacity: how many paths are in flight, as a number
//! of slots, a memory budget or `auto`, with its parser and limits.

use crate::settings::echo::shorten_for_error;
use device::queue::{PathPool, Queues};

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

/// The smallest capacity accepted (one prefix-sum block).
pub const MIN_CAPACITY: u32 = 1 << 10;
/// The largest capacity accepted (2^28 slots, 33 GB of state).
pub const MAX_CAPACITY: u32 = 1 << 28;

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

    /// Checks a slot count (a power of two within the limits) or a budget
    /// (room for the fewest slots).
    pub fn check(self) -> Result<(), String> {
        match self {
            Capacity::Slots(n) if !n.is_power_of_two() || !(MIN_CAPACITY..=MAX_CAPACITY).contains(&n) => Err(format!(
                "capacity {n}: must be a power of two from {MIN_CAPACITY} to {MAX_CAPACITY}"
            )),
            Capacity::Budget(b) if b < state_bytes(MIN_CAPACITY as usize, true) as u64 => Err(format!(
                "memory budget {b} bytes: {MIN_CAPACITY} paths, the fewest, need {}",
                state_bytes(MIN_CAPACITY as usize, true)
            )),
            _ => Ok(()),
        }
    }
}

/// Total bytes of path state and queues for `capacity` slots, with the
/// shadow-ray queue when the render traces shadow rays (`shadow_rays`).
pub fn state_bytes(capacity: usize, shadow_rays: bool) -> usize {
    PathPool::bytes(capacity) + Queues::bytes(capacity, shadow_rays)
}

/// Parses a pool capacity: `auto`, a budget in MiB or GiB, `2^K` or a
/// number (a power of two).
pub fn parse_capacity(s: &str) -> Result<Capacity, String> {
    let bad = || {
        format!(
            "expected a power of two such as 2^21 or 2097152, a budget such as 512MiB or 2GiB, or `auto`; got `{}`",
            shorten_for_error(s)
        )
    };
    if s.eq_ignore_ascii_case("auto") {
        return Ok(Capacity::Auto);
    }
    for (unit, shift) in [("MiB", 20), ("GiB", 30)] {
        if let Some(n) = s.strip_suffix(unit) {
            let n = n.parse::<u64>().map_err(|_| bad())?;
            let c = Capacity::Budget(n.checked_mul(1 << shift).filter(|&b| b <= 1 << 40).ok_or_else(bad)?);
            c.check()?;
            return Ok(c);
        }
    }
    let n = match s.strip_prefix("2^") {
        Some(k) => 1u64.checked_shl(k.parse::<u32>().map_err(|_| bad())?).ok_or_else(bad)?,
        None => s.parse::<u64>().map_err(|_| bad())?,
    };
    let c = Capacity::Slots(u32::try_from(n).map_err(|_| bad())?);
    c.check()?;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacities_parse_and_are_checked() {
        assert_eq!(parse_capacity("2^21"), Ok(Capacity::Slots(1 << 21)));
        assert_eq!(parse_capacity("auto"), Ok(Capacity::Auto));
        assert_eq!(parse_capacity("512MiB"), Ok(Capacity::DEFAULT));
        assert_eq!(parse_capacity(&Capacity::DEFAULT.label()), Ok(Capacity::DEFAULT));
        assert!(parse_capacity("3000").is_err());
        assert!(parse_capacity("2^40").is_err());
        assert!(parse_capacity("2^29").is_err());
        assert!(parse_capacity("0MiB").is_err());
    }

    #[test]
    fn state_bytes_are_the_per_path_sizes_times_the_capacity() {
        // 12 pool fields: 4 of 12 bytes, the 8-byte random key and 7 of 4
        // bytes; slots of 4 bytes in 4 queues and lists (rays in and out,
        // holes, warp counts) and one queue per class; one shadow ray of
        // 48 bytes when the render traces them.
        assert_eq!(PathPool::BYTES_PER_PATH, 4 * 12 + 9 * 4);
        assert_eq!(
            Queues::bytes_per_path(false),
            4 * (4 + device::shading::ShadeClass::COUNT)
        );
        assert_eq!(Queues::bytes_per_path(true), Queues::bytes_per_path(false) + 48);
        let c = 1 << 20;
        let per_path = state_bytes(c, true) as f64 / c as f64;
        let expected = (PathPool::BYTES_PER_PATH + Queues::bytes_per_path(true)) as f64;
        // The prefix-sum block totals and alignment add well under 1%.
        assert!(
            per_path >= expected && per_path < expected * 1.01,
            "{per_path} vs {expected}"
        );
    }

    #[test]
    fn the_default_budget_holds_2_to_the_22_paths_or_2_to_the_21_with_shadow_rays() {
        let resolve = |shadows| {
            Capacity::DEFAULT
                .resolve(1 << 30, shadows, || Err::<usize, ()>(()))
                .unwrap()
        };
        assert_eq!(resolve(false), 1 << 22);
        assert_eq!(resolve(true), 1 << 21);
    }
}
