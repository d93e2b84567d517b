//! Warping uniform numbers into disks, spheres and hemispheres.

use crate::math::{Vec3, scalar};

/// Shirley–Chiu concentric map from `[0, 1)²` to the unit disk.
#[inline(always)]
pub fn concentric_disk(u: f32, v: f32) -> (f32, f32) {
    let a = 2.0 * u - 1.0;
    let b = 2.0 * v - 1.0;
    if a == 0.0 && b == 0.0 {
        return (0.0, 0.0);
    }
    let (r, phi) = if a.abs() > b.abs() {
        (a, (scalar::PI / 4.0) * (b / a))
    } else {
        (b, scalar::PI / 2.0 - (scalar::PI / 4.0) * (a / b))
    };
    let (s, c) = scalar::sin_cos(phi);
    (r * c, r * s)
}

/// A uniformly distributed point inside the unit ball (three numbers, no
/// rejection loop, so the number of random dimensions is fixed).
#[inline(always)]
pub fn uniform_in_ball(u: f32, v: f32, w: f32) -> Vec3 {
    let z = 1.0 - 2.0 * u;
    let r_xy = scalar::sqrt((1.0 - z * z).max(0.0));
    let (s, c) = scalar::sin_cos(scalar::TAU * v);
    Vec3::new(r_xy * c, r_xy * s, z) * scalar::cbrt(w)
}

/// An orthonormal basis around a unit normal (Duff et al., JCGT 2017).
#[derive(Clone, Copy, Debug)]
pub struct Onb {
    tangent: Vec3,
    bitangent: Vec3,
    normal: Vec3,
}

impl Onb {
    /// A basis whose third axis is `normal` (unit length).
    #[inline(always)]
    pub fn from_normal(normal: Vec3) -> Self {
        let sign = if normal.z >= 0.0 { 1.0 } else { -1.0 };
        let a = -1.0 / (sign + normal.z);
        let b = normal.x * normal.y * a;
        Onb {
            tangent: Vec3::new(1.0 + sign * normal.x * normal.x * a, sign * b, -sign * normal.x),
            bitangent: Vec3::new(b, sign + normal.y * normal.y * a, -normal.y),
            normal,
        }
    }

    /// Transforms local coordinates (z along the normal) to world space.
    #[inline(always)]
    pub fn to_world(&self, local: Vec3) -> Vec3 {
        self.tangent * local.x + self.bitangent * local.y + self.normal * local.z
    }
}

/// A cosine-weighted direction in the hemisphere around `normal`
/// (Malley's method on the concentric disk).
#[inline(always)]
pub fn cosine_hemisphere(normal: Vec3, u: f32, v: f32) -> Vec3 {
    let (x, y) = concentric_disk(u, v);
    let z = scalar::sqrt((1.0 - x * x - y * y).max(0.0));
    Onb::from_normal(normal).to_world(Vec3::new(x, y, z))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::rng::{Dim, PathRng, Sampler};

    #[test]
    fn onb_is_orthonormal_for_awkward_normals() {
        for n in [
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(0.0, 0.0, -1.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.3, -0.4, -0.866_025_4).normalized(),
        ] {
            let b = Onb::from_normal(n);
            for (p, q) in [(b.tangent, b.bitangent), (b.tangent, n), (b.bitangent, n)] {
                assert!(p.dot(q).abs() < 1e-6);
            }
            assert!((b.tangent.length() - 1.0).abs() < 1e-6);
            assert!((b.bitangent.length() - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn cosine_hemisphere_has_mean_cosine_two_thirds() {
        let n = Vec3::new(0.0, 1.0, 0.0);
        let count = 100_000;
        let mut sum = 0.0f64;
        for i in 0..count {
            let rng = PathRng::new(Sampler::Hash, 3, i, 0);
            let d = cosine_hemisphere(n, rng.uniform(0, Dim::ScatterU), rng.uniform(0, Dim::ScatterV));
            assert!((d.length() - 1.0).abs() < 1e-5);
            assert!(d.dot(n) >= 0.0);
            sum += d.dot(n) as f64;
        }
        // E[cos] under a cos/π density is 2/3.
        assert!((sum / count as f64 - 2.0 / 3.0).abs() < 0.005);
    }

    #[test]
    fn ball_points_are_inside_with_uniform_radius_law() {
        let count = 50_000;
        let mut inside_half = 0;
        for i in 0..count {
            let rng = PathRng::new(Sampler::Hash, 9, i, 0);
            let p = uniform_in_ball(
                rng.uniform(0, Dim::ScatterU),
                rng.uniform(0, Dim::ScatterV),
                rng.uniform(0, Dim::ScatterW),
            );
            assert!(p.length() <= 1.0 + 1e-6);
            if p.length() < 0.5 {
                inside_half += 1;
            }
        }
        // A uniform ball puts (1/2)^3 = 1/8 of its points inside radius 1/2.
        let frac = inside_half as f64 / count as f64;
        assert!((frac - 0.125).abs() < 0.006, "{frac}");
    }
}
