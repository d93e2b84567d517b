//! Exact, order-independent accumulation of samples into pixels.
//!
//! Float addition is not associative, and wavefront paths finish in any
//! order, so pixels are summed in 64-bit fixed point instead: each sample's
//! radiance is rounded once to a multiple of 2⁻²⁰, after which the sum is an
//! integer sum and every back end (and every schedule) gets the same bits.

use crate::math::Rgb;

/// Fixed-point units per unit of radiance (2²⁰).
pub const FIXED_POINT_SCALE: f32 = 1_048_576.0;

/// Largest radiance one sample may contribute per channel (2¹⁶); brighter
/// samples are clamped so that [`MAX_SAMPLES_PER_PIXEL`] samples fit in a
/// pixel's 64-bit sum.
pub const MAX_SAMPLE_RADIANCE: f32 = 65_536.0;

/// The most samples one pixel may sum: at [`MAX_SAMPLE_RADIANCE`] each,
/// 2²⁸ samples would reach 2⁶⁴ and wrap, so one fewer is the limit up to
/// which every film is exact.
pub const MAX_SAMPLES_PER_PIXEL: u32 = (1 << 28) - 1;

const _: () = assert!(
    (MAX_SAMPLE_RADIANCE as u128) * (FIXED_POINT_SCALE as u128) * (MAX_SAMPLES_PER_PIXEL as u128) <= u64::MAX as u128
);

/// One pixel's (or one sample's) radiance in fixed point.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FixedRgb {
    /// Red sum.
    pub r: u64,
    /// Green sum.
    pub g: u64,
    /// Blue sum.
    pub b: u64,
}

/// One channel in fixed point. NaN and negative values contribute zero.
#[inline(always)]
fn channel_to_fixed(v: f32) -> u64 {
    if v > 0.0 {
        (v.min(MAX_SAMPLE_RADIANCE) * FIXED_POINT_SCALE) as u64
    } else {
        0
    }
}

impl FixedRgb {
    /// A sample's radiance, rounded towards zero to fixed point.
    #[inline(always)]
    pub fn from_radiance(c: Rgb) -> Self {
        FixedRgb {
            r: channel_to_fixed(c.r),
            g: channel_to_fixed(c.g),
            b: channel_to_fixed(c.b),
        }
    }

    /// Adds another sum (wrapping never happens within the documented limits).
    #[inline(always)]
    pub fn add(&mut self, o: FixedRgb) {
        self.r = self.r.wrapping_add(o.r);
        self.g = self.g.wrapping_add(o.g);
        self.b = self.b.wrapping_add(o.b);
    }

    /// The mean radiance of `samples` samples summed here.
    pub fn mean(&self, samples: u32) -> Rgb {
        let k = 1.0 / (FIXED_POINT_SCALE as f64 * samples.max(1) as f64);
        Rgb::new(
            (self.r as f64 * k) as f32,
            (self.g as f64 * k) as f32,
            (self.b as f64 * k) as f32,
        )
    }
}

/// True when a sample's radiance is unusable (NaN or infinite in a channel);
/// the back ends count these so that a broken material shows up in reports.
#[inline(always)]
pub fn is_invalid_sample(c: Rgb) -> bool {
    !(c.r.is_finite() && c.g.is_finite() && c.b.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_are_order_independent_and_exact() {
        let samples = [
            Rgb::new(0.1, 3.7, 1e-3),
            Rgb::new(1e4, 0.2, 0.3),
            Rgb::new(0.33, 0.0, 7.0),
        ];
        let mut forward = FixedRgb::default();
        let mut backward = FixedRgb::default();
        for s in samples {
            forward.add(FixedRgb::from_radiance(s));
        }
        for s in samples.iter().rev() {
            backward.add(FixedRgb::from_radiance(*s));
        }
        assert_eq!(forward, backward);
        let mean = forward.mean(3);
        assert!((mean.g - (3.7 + 0.2) / 3.0).abs() < 1e-5);
    }

    #[test]
    fn nan_negative_and_huge_samples_are_tamed() {
        let f = FixedRgb::from_radiance(Rgb::new(f32::NAN, -1.0, f32::INFINITY));
        assert_eq!(f.r, 0);
        assert_eq!(f.g, 0);
        assert_eq!(f.b, (MAX_SAMPLE_RADIANCE * FIXED_POINT_SCALE) as u64);
        assert!(is_invalid_sample(Rgb::new(0.0, f32::NAN, 0.0)));
        assert!(!is_invalid_sample(Rgb::new(0.0, 1.0, 0.0)));
    }
}
