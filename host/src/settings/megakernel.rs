//! The megakernel's defaults, and the register cap every GPU kernel may be
//! given.

use crate::system::ptx::{MAX_REGISTER_CAP, MIN_REGISTER_CAP};

/// Block shape in threads: the best shape measured for RTIOW's final scene
/// on an H200 (`results/megakernel/README.md`).
pub const DEFAULT_BLOCK: (u32, u32) = (8, 8);

/// Samples per pixel per megakernel launch.
pub const DEFAULT_SAMPLES_PER_LAUNCH: u32 = 16;

/// The megakernel's register cap unless a run sets one. On an H100 it is
/// within 8% of the best cap measured on every seed scene, where no cap is
/// up to 56% slower (CS500: 547 against 792 ms;
/// `results/traversal/`, study `register_caps`, and `results/register_cap/`).
pub const DEFAULT_MAX_REGISTERS: u32 = 80;

/// Checks a register cap against what `ptxas` accepts.
pub fn check_register_cap(cap: Option<u32>) -> Result<(), String> {
    match cap {
        Some(r) if !(MIN_REGISTER_CAP..=MAX_REGISTER_CAP).contains(&r) => Err(format!(
            "max registers {r}: must be from {MIN_REGISTER_CAP} to {MAX_REGISTER_CAP}"
        )),
        _ => Ok(()),
    }
}
