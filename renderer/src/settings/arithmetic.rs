//! Which float arithmetic the GPU kernels run ([`Arithmetic`]):
//! `--arithmetic` and the experiment setting `arithmetic`.
//!
//! `exact` (the default) is IEEE-strict with the crate's own transcendental
//! functions: every GPU image is the CPU's, bit for bit. `fast` binds the
//! kernels to the hardware's approximate division, square root, sine,
//! cosine, exponential and logarithm ([`crate::system::ptx::with_features`]):
//! the megakernel and the wavefront still run the same instructions and
//! render the same image as each other, and that image is held to the
//! CPU's exact one statistically, within [`FAST_NOISE_FRACTION`] of the
//! Monte Carlo noise (`render::compare::FastAgreement` measures it).

use crate::settings::echo::shorten_for_error;
pub use device::bound::Arithmetic;

/// How far a fast-arithmetic image may be from the CPU's exact image of
/// the same samples, as a fraction of how far two exact images of
/// different seeds are from each other, both in relative MSE (`verify` and
/// an experiment's parity step check it). The fast and the exact image
/// trace the same random numbers, so a path differs only where a rounding
/// sends it another way, and from there on it is one more Monte Carlo
/// sample of the same integral: the fraction of paths sent another way.
/// A fixed bound on the relative MSE alone would not do: at 2 samples per
/// pixel one path of smallpt's box that reaches the light another way is
/// a firefly that a bound tight enough to mean anything refuses
/// (relative MSE 1.6·10⁻² at 640×480 and 2 spp, where two seeds differ by
/// 72).
pub const FAST_NOISE_FRACTION: f64 = 0.5;

/// Reads `exact` or `fast`.
pub fn parse_arithmetic(text: &str) -> Result<Arithmetic, String> {
    Arithmetic::ALL.into_iter().find(|a| a.name() == text).ok_or_else(|| {
        format!(
            "`{}` is no arithmetic: expected `exact` or `fast`",
            shorten_for_error(text)
        )
    })
}

/// The suffix a back end's label carries: none for exact, `/fast` for fast.
pub fn arithmetic_label(arithmetic: Arithmetic) -> &'static str {
    match arithmetic {
        Arithmetic::Exact => "",
        Arithmetic::Fast => "/fast",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_arithmetic_reads_back_by_its_name_and_nothing_else_is_one() {
        for a in Arithmetic::ALL {
            assert_eq!(parse_arithmetic(a.name()), Ok(a));
        }
        assert_eq!(arithmetic_label(Arithmetic::Exact), "");
        assert_eq!(arithmetic_label(Arithmetic::Fast), "/fast");
        let e = parse_arithmetic("Fast").unwrap_err();
        assert!(e.contains("`Fast`") && e.contains("`exact` or `fast`"), "{e}");
    }
}
