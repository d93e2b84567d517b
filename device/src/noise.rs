//! Procedural noise for textured materials: value noise on the integer
//! lattice (a hashed value per lattice point, blended with a smoothstep)
//! and its fractal sum over octaves (fBm). Each octave is one more noise
//! evaluation, so the cost of a material that uses it grows linearly with
//! its octave count: the knob of the material-cost experiment.
//!
//! The fractal sum comes in [`BASES`] variants (a [`Basis`]), four
//! independent choices compiled into sixteen separate loops: a GPU warp
//! whose lanes need different bases runs each one's loop in turn. They are
//! the experiment's second knob, the number of distinct shading programs
//! (materials whose code differs, not only their parameters), and
//! what the wavefront's sort by variant makes coherent again.

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

/// Perlin's smootherstep `6t⁵ − 15t⁴ + 10t³` (zero first and second
/// derivatives at the lattice).
#[inline(always)]
fn fade_quintic(t: f32) -> f32 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

/// Value noise at `p`: the lattice values of the cell's eight corners,
/// blended; in `[0, 1]`, equal to the lattice value at lattice points.
#[inline(always)]
pub fn value_noise(p: Vec3) -> f32 {
    value_noise_with(p, false)
}

/// Value noise blended by the smoothstep, or by the smootherstep when
/// `quintic` (a constant wherever it is inlined).
#[inline(always)]
fn value_noise_with(p: Vec3, quintic: bool) -> f32 {
    let blend = if quintic { fade_quintic } else { fade };
    let (fx, fy, fz) = (scalar::floor(p.x), scalar::floor(p.y), scalar::floor(p.z));
    let (x, y, z) = (fx as i32, fy as i32, fz as i32);
    let (u, v, w) = (blend(p.x - fx), blend(p.y - fy), blend(p.z - fz));
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

/// Number of noise bases: distinct fractal-sum programs.
pub const BASES: u32 = 16;

/// Which variant of the fractal sum a material uses, `0..BASES`: each bit
/// is one choice ([`Basis::RIDGED`], [`Basis::QUINTIC`], [`Basis::ROTATED`],
/// [`Basis::BILLOW`]), and basis 0 is plain fBm of value noise.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Basis(pub u32);

impl Basis {
    /// Each octave folded into ridges: `1 − |2n − 1|`.
    pub const RIDGED: u32 = 1;
    /// The lattice blended by the smootherstep instead of the smoothstep.
    pub const QUINTIC: u32 = 2;
    /// Each octave's lattice rotated against the last (no axis-aligned
    /// streaks), instead of only scaled.
    pub const ROTATED: u32 = 4;
    /// Each octave squared (soft, billowy blobs).
    pub const BILLOW: u32 = 8;
}

/// Fractal Brownian motion in basis `basis`: `octaves` layers of value
/// noise, each at twice the frequency and half the amplitude of the last,
/// normalised to `[0, 1]`. No octaves is a constant 0.
#[inline(always)]
pub fn fbm(p: Vec3, octaves: u32, basis: Basis) -> f32 {
    match basis.0 % BASES {
        0 => fbm_in::<0>(p, octaves),
        1 => fbm_in::<1>(p, octaves),
        2 => fbm_in::<2>(p, octaves),
        3 => fbm_in::<3>(p, octaves),
        4 => fbm_in::<4>(p, octaves),
        5 => fbm_in::<5>(p, octaves),
        6 => fbm_in::<6>(p, octaves),
        7 => fbm_in::<7>(p, octaves),
        8 => fbm_in::<8>(p, octaves),
        9 => fbm_in::<9>(p, octaves),
        10 => fbm_in::<10>(p, octaves),
        11 => fbm_in::<11>(p, octaves),
        12 => fbm_in::<12>(p, octaves),
        13 => fbm_in::<13>(p, octaves),
        14 => fbm_in::<14>(p, octaves),
        _ => fbm_in::<15>(p, octaves),
    }
}

/// The fractal sum of basis `B`, one loop compiled per basis.
#[inline(always)]
fn fbm_in<const B: u32>(p: Vec3, octaves: u32) -> f32 {
    let (mut sum, mut norm, mut amplitude) = (0.0, 0.0, 1.0);
    let mut q = p;
    for _ in 0..octaves {
        let mut n = value_noise_with(q, B & Basis::QUINTIC != 0);
        if B & Basis::RIDGED != 0 {
            n = 1.0 - (2.0 * n - 1.0).abs();
        }
        if B & Basis::BILLOW != 0 {
            n *= n;
        }
        sum += amplitude * n;
        norm += amplitude;
        amplitude *= 0.5;
        q = if B & Basis::ROTATED != 0 {
            rotate_octave(q)
        } else {
            q * 2.0
        };
    }
    if norm > 0.0 { sum / norm } else { 0.0 }
}

/// Twice `q`, rotated by a fixed orthonormal matrix (rows of norm 1 in
/// decimal: 0.6² + 0.8² = 1).
#[inline(always)]
fn rotate_octave(q: Vec3) -> Vec3 {
    Vec3::new(
        1.6 * q.y + 1.2 * q.z,
        -1.6 * q.x + 0.72 * q.y - 0.96 * q.z,
        -1.2 * q.x - 0.96 * q.y + 1.28 * q.z,
    )
}

#[cfg(test)]
mod tests {
    extern crate std;
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
        let plain = Basis(0);
        assert_eq!(fbm(p, 1, plain), value_noise(p));
        assert_eq!(fbm(p, 0, plain), 0.0);
        // Two octaves: (n(p) + n(2p)/2) / 1.5, by hand.
        let two = (value_noise(p) + 0.5 * value_noise(p * 2.0)) / 1.5;
        assert!((fbm(p, 2, plain) - two).abs() < 1e-6);
        for basis in 0..BASES {
            for i in 0..200 {
                let q = Vec3::new(i as f32 * 0.173, i as f32 * -0.291, i as f32 * 0.047);
                let v = fbm(q, 8, Basis(basis));
                assert!((0.0..=1.0).contains(&v), "basis {basis}: {v}");
            }
        }
    }

    #[test]
    fn each_basis_bit_changes_one_octave_as_worked_by_hand() {
        let p = Vec3::new(0.37, -1.2, 4.9);
        let n = value_noise(p);
        let one = |b: u32| fbm(p, 1, Basis(b));
        assert_eq!(one(Basis::RIDGED), 1.0 - (2.0 * n - 1.0).abs());
        assert_eq!(one(Basis::BILLOW), n * n);
        let ridged = 1.0 - (2.0 * n - 1.0).abs();
        assert_eq!(one(Basis::RIDGED | Basis::BILLOW), ridged * ridged);
        // The smootherstep at a quarter: 6/1024 − 15/256 + 10/64 = 106/1024.
        let quarter = Vec3::new(0.0, 0.25, 0.0);
        let expected = lattice(0, 0, 0) + (lattice(0, 1, 0) - lattice(0, 0, 0)) * (106.0 / 1024.0);
        assert!((fbm(quarter, 1, Basis(Basis::QUINTIC)) - expected).abs() < 1e-6);
        // Rotation: the second octave samples at the rotated, doubled point.
        let rotated = Vec3::new(
            1.6 * p.y + 1.2 * p.z,
            -1.6 * p.x + 0.72 * p.y - 0.96 * p.z,
            -1.2 * p.x - 0.96 * p.y + 1.28 * p.z,
        );
        assert!(
            (rotated.length() - 2.0 * p.length()).abs() < 1e-4,
            "the rotation keeps lengths"
        );
        let two = (n + 0.5 * value_noise(rotated)) / 1.5;
        assert!((fbm(p, 2, Basis(Basis::ROTATED)) - two).abs() < 1e-6);
        // The sixteen bases are sixteen different textures.
        let values: std::vec::Vec<f32> = (0..BASES).map(|b| fbm(p, 3, Basis(b))).collect();
        for (i, a) in values.iter().enumerate() {
            for b in &values[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
