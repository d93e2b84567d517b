//! Procedural noise for textured materials: value noise on the integer
//! lattice (a hashed value per lattice point, blended with a smoothstep)
//! and its fractal sum over octaves (fBm). Each octave is one more noise
//! evaluation, so the cost of a material that uses it grows linearly with
//! its octave count: the knob of the material-cost experiment.

use crate::math::{Vec3, scalar};
use crate::rng::pcg_hash;

/// The most octaves a material may ask for.
pub const MAX_OCTAVES: u32 = 64;

/// The value in `[0, 1]` hashed onto lattice point `(x, y, z)`.
#[inline(always)]
pub fn lattice(x: i32, y: i32, z: i32) -> f32 {
    let h = pcg_hash(x as u32 ^ pcg_hash(y as u32 ^ pcg_hash(z as u32)));
    (h >> 8) as f32 * (1.0 / 16_777_215.0)
}

/// The smoothstep `3t² − 2t³` that blends neighbouring lattice values.
#[inline(always)]
fn fade(t: f32) -> f32 {
    t * t * (3.0 - 2.0 * t)
}

/// Value noise at `p`: the lattice values of the cell's eight corners,
/// blended; in `[0, 1]`, equal to the lattice value at lattice points.
#[inline(always)]
pub fn value_noise(p: Vec3) -> f32 {
    let (fx, fy, fz) = (scalar::floor(p.x), scalar::floor(p.y), scalar::floor(p.z));
    let (x, y, z) = (fx as i32, fy as i32, fz as i32);
    let (u, v, w) = (fade(p.x - fx), fade(p.y - fy), fade(p.z - fz));
    let lerp = |a: f32, b: f32, t: f32| a + (b - a) * t;
    let plane = |z: i32| {
        lerp(
            lerp(lattice(x, y, z), lattice(x + 1, y, z), u),
            lerp(lattice(x, y + 1, z), lattice(x + 1, y + 1, z), u),
            v,
        )
    };
    lerp(plane(z), plane(z + 1), w)
}

/// Fractal Brownian motion: `octaves` layers of value noise, each at twice
/// the frequency and half the amplitude of the last, normalised to
/// `[0, 1]`. No octaves is a constant 0.
#[inline(always)]
pub fn fbm(p: Vec3, octaves: u32) -> f32 {
    let (mut sum, mut norm, mut amplitude, mut scale) = (0.0, 0.0, 1.0, 1.0);
    for _ in 0..octaves {
        sum += amplitude * value_noise(p * scale);
        norm += amplitude;
        amplitude *= 0.5;
        scale *= 2.0;
    }
    if norm > 0.0 { sum / norm } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_takes_the_lattice_values_at_lattice_points_and_blends_between() {
        for (x, y, z) in [(0, 0, 0), (3, -2, 7), (-5, 4, -1)] {
            let at = value_noise(Vec3::new(x as f32, y as f32, z as f32));
            assert_eq!(at, lattice(x, y, z));
        }
        // Half way along x, the fade is 1/2: the mean of the two corners.
        let mid = value_noise(Vec3::new(2.5, 1.0, 1.0));
        let expected = 0.5 * (lattice(2, 1, 1) + lattice(3, 1, 1));
        assert!((mid - expected).abs() < 1e-6, "{mid} vs {expected}");
        // A quarter of the way, the fade is 3/16 − 2/64 = 5/32.
        let quarter = value_noise(Vec3::new(0.0, 0.25, 0.0));
        let expected = lattice(0, 0, 0) + (lattice(0, 1, 0) - lattice(0, 0, 0)) * (5.0 / 32.0);
        assert!((quarter - expected).abs() < 1e-6);
    }

    #[test]
    fn fbm_stays_in_the_unit_interval_and_one_octave_is_the_noise() {
        let p = Vec3::new(0.37, -1.2, 4.9);
        assert_eq!(fbm(p, 1), value_noise(p));
        assert_eq!(fbm(p, 0), 0.0);
        // Two octaves: (n(p) + n(2p)/2) / 1.5, by hand.
        let two = (value_noise(p) + 0.5 * value_noise(p * 2.0)) / 1.5;
        assert!((fbm(p, 2) - two).abs() < 1e-6);
        for i in 0..200 {
            let q = Vec3::new(i as f32 * 0.173, i as f32 * -0.291, i as f32 * 0.047);
            let v = fbm(q, 8);
            assert!((0.0..=1.0).contains(&v), "{v}");
        }
    }
}
