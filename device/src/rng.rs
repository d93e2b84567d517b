//! Counter-based random numbers.
//!
//! There is no generator state: every number is a function of
//! (seed, pixel, sample, bounce, dimension). A path therefore draws the same
//! numbers whichever back end, thread, kernel or iteration runs it, which is
//! what lets the CPU, megakernel and wavefront back ends agree bit for bit.
//! Each use of randomness has its own named [`Dim`], so adding a new use never
//! shifts the numbers another use sees.
//!
//! Two samplers ([`Sampler`]) compute the numbers: a hash of the whole key
//! (independent numbers), or Owen-scrambled Sobol points (Burley, "Practical
//! Hash-based Owen Scrambling", JCGT 2020), low-discrepancy across the
//! samples of a pixel. The Sobol sampler pads four-dimensional Sobol points:
//! each group of four consecutive slots of a bounce is one 4D point with a
//! seed of its own, and the sample index is shuffled per pixel.

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
    /// Next-event estimation: which light (its own 4D Sobol group with
    /// the two below).
    LightPick = 12,
    /// Next-event estimation: first coordinate of the point on the light.
    LightU = 13,
    /// Next-event estimation: second coordinate of the point on the light.
    LightV = 14,
}

/// Slots reserved per bounce; `Dim` values must stay below this.
pub const DIMS_PER_BOUNCE: u32 = 16;

/// How a path's numbers are computed from its key.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampler {
    /// A hash of (seed, pixel, sample, bounce, dimension): independent
    /// uniform numbers.
    Hash = 0,
    /// Owen-scrambled Sobol points over the samples of a pixel, padded in
    /// groups of four dimensions.
    Sobol = 1,
}

/// The bit of the Sobol sampler's feature in a kernel's bound feature
/// set: a kernel bound without it holds no Sobol code (the feature set's
/// declaration checks that its bit is this one).
pub const SOBOL_FEATURE_BIT: u32 = 1 << 18;

/// The bit of [`PathRng`]'s sample word that marks a Sobol stream (sample
/// indices stay below 2^28, the film's limit).
const SOBOL_BIT: u32 = 1 << 31;

/// Sobol direction numbers of the first four dimensions (Joe and Kuo's
/// primitive polynomials and initial numbers; dimension 0 is the van der
/// Corput sequence), one 32-bit column per bit of the index.
const SOBOL_DIRECTIONS: [[u32; 32]; 4] = [
    sobol_directions(0, 0, &[]),
    sobol_directions(1, 0, &[1]),
    sobol_directions(2, 1, &[1, 3]),
    sobol_directions(3, 1, &[1, 3, 1]),
];

/// The 32 direction numbers of a Sobol dimension with a primitive
/// polynomial of degree `degree`, inner coefficients `a` and initial
/// numbers `m` (degree 0: van der Corput).
const fn sobol_directions(degree: usize, a: u32, m: &[u32]) -> [u32; 32] {
    let mut v = [0u32; 32];
    let mut k = 0;
    while k < 32 {
        v[k] = if degree == 0 {
            1 << (31 - k)
        } else if k < degree {
            m[k] << (31 - k)
        } else {
            let mut x = v[k - degree] ^ (v[k - degree] >> degree);
            let mut j = 1;
            while j < degree {
                if (a >> (degree - 1 - j)) & 1 == 1 {
                    x ^= v[k - j];
                }
                j += 1;
            }
            x
        };
        k += 1;
    }
    v
}

/// For each Sobol dimension and each byte of the index, the XOR of the
/// direction numbers of the bits set in every byte value: four lookups
/// give a point (16 KiB, built at compile time).
static SOBOL_BYTES: [[[u32; 256]; 4]; 4] = sobol_byte_tables();

/// Builds [`SOBOL_BYTES`] from [`SOBOL_DIRECTIONS`].
const fn sobol_byte_tables() -> [[[u32; 256]; 4]; 4] {
    let mut tables = [[[0u32; 256]; 4]; 4];
    let mut dim = 0;
    while dim < 4 {
        let mut byte = 0;
        while byte < 4 {
            let mut value = 0;
            while value < 256 {
                let mut x = 0;
                let mut bit = 0;
                while bit < 8 {
                    if (value >> bit) & 1 == 1 {
                        x ^= SOBOL_DIRECTIONS[dim][byte * 8 + bit];
                    }
                    bit += 1;
                }
                tables[dim][byte][value] = x;
                value += 1;
            }
            byte += 1;
        }
        dim += 1;
    }
    tables
}

/// Point `index` of Sobol dimension `dim` (below 4), as 32 bits: the XOR of
/// the direction numbers of the bits set in `index`, a byte at a time.
#[inline(always)]
fn sobol(index: u32, dim: usize) -> u32 {
    let t = &SOBOL_BYTES[dim];
    t[0][(index & 0xff) as usize]
        ^ t[1][((index >> 8) & 0xff) as usize]
        ^ t[2][((index >> 16) & 0xff) as usize]
        ^ t[3][(index >> 24) as usize]
}

/// A nested uniform (Owen) scramble of the bits of `x` under `seed`, by the
/// Laine–Karras permutation on the reversed bits (Burley 2020): each bit is
/// flipped by a hash of the bits above it.
#[inline(always)]
fn owen_scramble(x: u32, seed: u32) -> u32 {
    let mut v = x.reverse_bits().wrapping_add(seed);
    v ^= v.wrapping_mul(0x6c50_b47c);
    v ^= v.wrapping_mul(0xb82f_1e52);
    v ^= v.wrapping_mul(0xc7af_e638);
    v ^= v.wrapping_mul(0x8d22_f6e6);
    v.reverse_bits()
}

/// 24 random bits of `bits` as a uniform number in `[0, 1)`.
#[inline(always)]
fn unit_float(bits: u32) -> f32 {
    (bits >> 8) as f32 * (1.0 / 16_777_216.0)
}

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
    /// Hash: of (seed, pixel, sample). Sobol: of (seed, pixel).
    key: u32,
    /// Hash: 0. Sobol: the sample index with [`SOBOL_BIT`] set.
    sample: u32,
}

impl PathRng {
    /// The stream for `sample` of `pixel` under `seed`, computed by
    /// `sampler`.
    #[inline(always)]
    pub fn new(sampler: Sampler, seed: u32, pixel: u32, sample: u32) -> Self {
        let pixel_key = pcg_hash(pcg_hash(seed) ^ pixel);
        match sampler {
            Sampler::Hash => PathRng {
                key: pcg_hash(pixel_key ^ sample),
                sample: 0,
            },
            Sampler::Sobol => PathRng {
                key: pixel_key,
                sample: sample | SOBOL_BIT,
            },
        }
    }

    /// A uniform number in `[0, 1)` with 24 random bits.
    #[inline(always)]
    pub fn uniform(self, bounce: u32, dim: Dim) -> f32 {
        let counter = bounce.wrapping_mul(DIMS_PER_BOUNCE).wrapping_add(dim as u32);
        // A stream is Sobol only where code holds the feature (generate),
        // so on the GPU a kernel bound without it holds no Sobol code.
        if self.sample & SOBOL_BIT == 0 || crate::bound::bits(u32::MAX) & SOBOL_FEATURE_BIT == 0 {
            return unit_float(pcg_hash(self.key ^ pcg_hash(counter)));
        }
        // One padded 4D Sobol point per group of four slots: its own seed,
        // the pixel's samples in a shuffled order, each coordinate scrambled.
        let group_seed = pcg_hash(self.key ^ pcg_hash(counter >> 2));
        let index = owen_scramble(self.sample & !SOBOL_BIT, group_seed);
        let dim = (counter & 3) as usize;
        unit_float(owen_scramble(
            sobol(index, dim),
            pcg_hash(group_seed ^ (dim as u32 + 1)),
        ))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    const HASH: Sampler = Sampler::Hash;

    #[test]
    fn same_key_same_number_and_keys_differ() {
        for sampler in [Sampler::Hash, Sampler::Sobol] {
            let a = PathRng::new(sampler, 7, 1234, 5);
            let key = |seed, pixel, sample| PathRng::new(sampler, seed, pixel, sample).uniform(3, Dim::ScatterU);
            assert_eq!(a.uniform(3, Dim::ScatterU), key(7, 1234, 5));
            assert_ne!(a.uniform(3, Dim::ScatterU), a.uniform(3, Dim::ScatterV));
            assert_ne!(a.uniform(3, Dim::ScatterU), a.uniform(4, Dim::ScatterU));
            assert_ne!(a.uniform(3, Dim::ScatterU), key(8, 1234, 5));
            assert_ne!(a.uniform(3, Dim::ScatterU), key(7, 1235, 5));
            assert_ne!(a.uniform(3, Dim::ScatterU), key(7, 1234, 6));
        }
    }

    #[test]
    fn hash_numbers_are_the_ones_before_samplers_existed() {
        // The hash of the whole key, as every committed image used it.
        let key = pcg_hash(pcg_hash(pcg_hash(7) ^ 1234) ^ 5);
        let bits = pcg_hash(key ^ pcg_hash(3 * DIMS_PER_BOUNCE + Dim::ScatterU as u32));
        assert_eq!(
            PathRng::new(HASH, 7, 1234, 5).uniform(3, Dim::ScatterU),
            (bits >> 8) as f32 / 16_777_216.0
        );
    }

    #[test]
    fn sobol_directions_are_joe_and_kuos() {
        // The first eight points (index order, not Gray-code order), worked
        // by hand from the direction numbers v0, v1, v2 of each dimension:
        // 0: van der Corput (1/2, 1/4, 1/8); 1: x + 1, m = 1
        // (1/2, 3/4, 5/8); 2: x² + x + 1, m = 1, 3 (1/2, 3/4, 3/8);
        // 3: x³ + x + 1, m = 1, 3, 1 (1/2, 3/4, 1/8). Point i is the XOR of
        // the v_k of the bits k set in i.
        let first = |dim| -> [f64; 8] { core::array::from_fn(|i| sobol(i as u32, dim) as f64 / 4_294_967_296.0) };
        assert_eq!(first(0), [0.0, 0.5, 0.25, 0.75, 0.125, 0.625, 0.375, 0.875]);
        assert_eq!(first(1), [0.0, 0.5, 0.75, 0.25, 0.625, 0.125, 0.375, 0.875]);
        assert_eq!(first(2), [0.0, 0.5, 0.75, 0.25, 0.375, 0.875, 0.625, 0.125]);
        assert_eq!(first(3), [0.0, 0.5, 0.75, 0.25, 0.125, 0.625, 0.875, 0.375]);
        // The recurrence beyond the initial numbers, dimension 3:
        // v3 = v0 ⊕ v0/8 ⊕ v1 = 1/2 ⊕ 1/16 ⊕ 3/4 = 5/16.
        assert_eq!(SOBOL_DIRECTIONS[3][3] as f64 / 4_294_967_296.0, 0.3125);
        // The byte tables agree with the bit-by-bit definition everywhere.
        for (dim, directions) in SOBOL_DIRECTIONS.iter().enumerate() {
            for index in [1u32 << 31, 0xdead_beef, 0x0102_0304, u32::MAX, 12345] {
                let direct = (0..32)
                    .filter(|k| (index >> k) & 1 == 1)
                    .fold(0, |x, k| x ^ directions[k]);
                assert_eq!(sobol(index, dim), direct, "dim {dim}, index {index:#x}");
            }
        }
    }

    #[test]
    fn the_first_power_of_two_samples_of_a_pixel_are_stratified_in_each_group() {
        // Owen-scrambled Sobol keeps the net property: 16 samples put one
        // point in each 1/16 of every dimension, and one in each 4x4 cell of
        // a pair of dimensions of one group, for any pixel and bounce.
        for pixel in [0, 17, 99_999] {
            for (bounce, a, b) in [(0, Dim::PixelX, Dim::PixelY), (2, Dim::ScatterU, Dim::ScatterV)] {
                let points: [(f32, f32); 16] = core::array::from_fn(|s| {
                    let rng = PathRng::new(Sampler::Sobol, 3, pixel, s as u32);
                    (rng.uniform(bounce, a), rng.uniform(bounce, b))
                });
                let mut cells = [[0u32; 16]; 3];
                for (u, v) in points {
                    cells[0][(u * 16.0) as usize] += 1;
                    cells[1][(v * 16.0) as usize] += 1;
                    cells[2][(u * 4.0) as usize * 4 + (v * 4.0) as usize] += 1;
                }
                assert!(
                    cells.iter().all(|c| c.iter().all(|&n| n == 1)),
                    "{pixel} {bounce}: {points:?}"
                );
            }
        }
    }

    #[test]
    fn sobol_integrates_a_smooth_function_far_better_than_the_hash() {
        // The mean over 256 pixels of the squared error of a 64-sample
        // estimate of the integral of u·v over the unit square (1/4).
        let error = |sampler| {
            (0..256u32)
                .map(|pixel| {
                    let estimate: f64 = (0..64)
                        .map(|s| {
                            let rng = PathRng::new(sampler, 1, pixel, s);
                            f64::from(rng.uniform(1, Dim::ScatterU)) * f64::from(rng.uniform(1, Dim::ScatterV))
                        })
                        .sum::<f64>()
                        / 64.0;
                    (estimate - 0.25).powi(2)
                })
                .sum::<f64>()
                / 256.0
        };
        let (hash, sobol) = (error(Sampler::Hash), error(Sampler::Sobol));
        assert!(sobol * 20.0 < hash, "hash {hash:e}, sobol {sobol:e}");
    }

    #[test]
    fn uniform_is_in_range_with_sane_moments() {
        let n = 200_000u32;
        let (mut sum, mut sum_sq) = (0.0f64, 0.0f64);
        let mut buckets = [0u32; 16];
        for i in 0..n {
            let u = PathRng::new(HASH, 1, i, 0).uniform(0, Dim::ScatterU);
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
