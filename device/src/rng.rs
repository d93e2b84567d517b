//! Counter-based random numbers.
//!
//! There is no generator state: every number is a hash of
//! (seed, pixel, sample, bounce, dimension). A path therefore draws the same
//! numbers whichever back end, thread, kernel or iteration runs it, which is
//! what lets the CPU, megakernel and wavefront back ends agree bit for bit.
//! Each use of randomness has its own named [`Dim`], so adding a new use never
//! shifts the numbers another use sees.

/// The random dimensions a path consumes at one bounce. Fixed slots, never
/// "the next number from a stream".
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// Sub-pixel jitter along x (bounce 0 only).
    PixelX = 0,
    /// Sub-pixel jitter along y (bounce 0 only).
    PixelY = 1,
    /// Thin-lens sample, first coordinate (bounce 0 only).
    LensU = 2,
    /// Thin-lens sample, second coordinate (bounce 0 only).
    LensV = 3,
    /// First coordinate of a direction sample.
    ScatterU = 4,
    /// Second coordinate of a direction sample.
    ScatterV = 5,
    /// Third coordinate (radius of a metal's roughness ball).
    ScatterW = 6,
    /// Reflect-or-refract choice at a dielectric.
    Lobe = 7,
    /// Russian roulette survival test.
    Roulette = 8,
}

/// Slots reserved per bounce; `Dim` values must stay below this.
pub const DIMS_PER_BOUNCE: u32 = 16;

/// The PCG-based integer hash of Jarzynski and Olano (JCGT 2020): a cheap,
/// well-mixed 32-bit permutation.
#[inline(always)]
pub fn pcg_hash(v: u32) -> u32 {
    let state = v.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
    let word = ((state >> ((state >> 28) + 4)) ^ state).wrapping_mul(277_803_737);
    (word >> 22) ^ word
}

/// The random stream of one path (one sample of one pixel), already keyed by
/// seed, pixel and sample; numbers are drawn by bounce and dimension.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathRng {
    key: u32,
}

impl PathRng {
    /// The stream for `sample` of `pixel` under `seed`.
    #[inline(always)]
    pub fn new(seed: u32, pixel: u32, sample: u32) -> Self {
        PathRng {
            key: pcg_hash(pcg_hash(pcg_hash(seed) ^ pixel) ^ sample),
        }
    }

    /// A uniform number in `[0, 1)` with 24 random bits.
    #[inline(always)]
    pub fn uniform(self, bounce: u32, dim: Dim) -> f32 {
        let counter = bounce.wrapping_mul(DIMS_PER_BOUNCE).wrapping_add(dim as u32);
        let bits = pcg_hash(self.key ^ pcg_hash(counter));
        (bits >> 8) as f32 * (1.0 / 16_777_216.0)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    #[test]
    fn same_key_same_number_and_keys_differ() {
        let a = PathRng::new(7, 1234, 5);
        assert_eq!(
            a.uniform(3, Dim::ScatterU),
            PathRng::new(7, 1234, 5).uniform(3, Dim::ScatterU)
        );
        assert_ne!(a.uniform(3, Dim::ScatterU), a.uniform(3, Dim::ScatterV));
        assert_ne!(a.uniform(3, Dim::ScatterU), a.uniform(4, Dim::ScatterU));
        assert_ne!(
            a.uniform(3, Dim::ScatterU),
            PathRng::new(8, 1234, 5).uniform(3, Dim::ScatterU)
        );
        assert_ne!(
            a.uniform(3, Dim::ScatterU),
            PathRng::new(7, 1235, 5).uniform(3, Dim::ScatterU)
        );
        assert_ne!(
            a.uniform(3, Dim::ScatterU),
            PathRng::new(7, 1234, 6).uniform(3, Dim::ScatterU)
        );
    }

    #[test]
    fn uniform_is_in_range_with_sane_moments() {
        let n = 200_000u32;
        let (mut sum, mut sum_sq) = (0.0f64, 0.0f64);
        let mut buckets = [0u32; 16];
        for i in 0..n {
            let u = PathRng::new(1, i, 0).uniform(0, Dim::ScatterU);
            assert!((0.0..1.0).contains(&u));
            sum += u as f64;
            sum_sq += (u as f64) * (u as f64);
            buckets[(u * 16.0) as usize] += 1;
        }
        let mean = sum / n as f64;
        let var = sum_sq / n as f64 - mean * mean;
        assert!((mean - 0.5).abs() < 0.003, "mean {mean}");
        assert!((var - 1.0 / 12.0).abs() < 0.002, "variance {var}");
        let expected = n as f64 / 16.0;
        let chi2: f64 = buckets.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum();
        // 15 degrees of freedom: the 99.9th percentile is 37.7.
        assert!(chi2 < 37.7, "chi2 {chi2}");
    }
}
