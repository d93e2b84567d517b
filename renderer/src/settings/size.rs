//! `WIDTHxHEIGHT` values (image sizes, block shapes, tiles) and the limits
//! a render is held to.

use crate::settings::echo::shorten_for_error;

/// The largest image side accepted, in pixels (the film of the largest
/// image is 24 GiB; the memory check before a render refuses what does not
/// fit).
pub const MAX_IMAGE_SIDE: u32 = 32_768;

/// The most samples per pixel accepted: the most the fixed-point film sums
/// exactly.
pub const MAX_SPP: u32 = device::film::MAX_SAMPLES_PER_PIXEL;

/// The most ray segments per path accepted (far beyond any converged
/// render; it bounds the work of one path).
pub const MAX_DEPTH: u32 = 65_536;

/// Parses `WIDTHxHEIGHT`.
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad = || {
        format!(
            "expected WIDTHxHEIGHT with sides from 1 to {MAX_IMAGE_SIDE}, e.g. 1200x800; got `{}`",
            shorten_for_error(s)
        )
    };
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    let ok = |v: u32| (1..=MAX_IMAGE_SIDE).contains(&v);
    if ok(w) && ok(h) { Ok((w, h)) } else { Err(bad()) }
}

/// `WIDTHxHEIGHT`, as [`parse_size`] reads it.
pub fn size_label((w, h): (u32, u32)) -> String {
    format!("{w}x{h}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_parses_and_rejects() {
        assert_eq!(parse_size("1200x800"), Ok((1200, 800)));
        assert_eq!(parse_size("64X32"), Ok((64, 32)));
        for bad in ["1200", "0x10", "axb", "10x", "40000x10"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_size(&size_label((8, 8))), Ok((8, 8)));
    }
}
