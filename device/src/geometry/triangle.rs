//! Triangles (mesh faces).

use super::{Interval, SurfaceHit};
use crate::math::{Ray, Vec3};

/// A triangle stored for Möller–Trumbore: one vertex and two edges, plus its
/// winding normal, padded to 64 bytes so that the GPU reads it in four
/// 16-byte loads ([`crate::slice::DeviceSlice::fetch`]).
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Triangle {
    /// First vertex.
    pub v0: Vec3,
    /// `v1 - v0`.
    pub e1: Vec3,
    /// `v2 - v0`.
    pub e2: Vec3,
    /// Index into the scene's materials.
    pub material: u32,
    /// Unit normal `e1 × e2` (counter-clockwise winding faces outward).
    pub normal: Vec3,
    /// Zero.
    pad: [u32; 3],
}

const _: () = assert!(core::mem::size_of::<Triangle>() == 64);
// SAFETY: `#[repr(C)]`, four-byte fields only, the padding made explicit:
// the size asserted above is the sum of the fields, so there is no
// implicit padding.
unsafe impl crate::kernel::AsBytes for Triangle {}

impl Triangle {
    /// The triangle `(v0, v1, v2)`; the host rejects degenerate ones.
    pub fn new(v0: Vec3, v1: Vec3, v2: Vec3, material: u32) -> Self {
        let e1 = v1 - v0;
        let e2 = v2 - v0;
        Triangle {
            v0,
            e1,
            e2,
            material,
            normal: e1.cross(e2).normalized(),
            pad: [0; 3],
        }
    }

    /// Möller–Trumbore intersection inside `range`; edges count as inside.
    #[inline(always)]
    pub fn intersect(&self, ray: &Ray, range: Interval) -> Option<SurfaceHit> {
        let p = ray.dir.cross(self.e2);
        let det = self.e1.dot(p);
        if det == 0.0 {
            return None;
        }
        let inv_det = 1.0 / det;
        let s = ray.origin - self.v0;
        let u = s.dot(p) * inv_det;
        if !(0.0..=1.0).contains(&u) {
            return None;
        }
        let q = s.cross(self.e1);
        let v = ray.dir.dot(q) * inv_det;
        if v < 0.0 || u + v > 1.0 {
            return None;
        }
        let t = self.e2.dot(q) * inv_det;
        range.contains(t).then_some(SurfaceHit { t, normal: self.normal })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The triangle (0,0,0), (1,0,0), (0,1,0), facing +z.
    fn tri() -> Triangle {
        Triangle::new(Vec3::ZERO, Vec3::new(1.0, 0.0, 0.0), Vec3::new(0.0, 1.0, 0.0), 0)
    }

    #[test]
    fn hit_from_the_front() {
        let ray = Ray::new(Vec3::new(0.25, 0.25, 2.0), Vec3::new(0.0, 0.0, -1.0));
        let hit = tri().intersect(&ray, Interval::POSITIVE).unwrap();
        assert_eq!(hit.t, 2.0);
        assert_eq!(hit.normal, Vec3::new(0.0, 0.0, 1.0));
    }

    #[test]
    fn hit_from_behind_keeps_the_winding_normal() {
        let ray = Ray::new(Vec3::new(0.25, 0.25, -2.0), Vec3::new(0.0, 0.0, 1.0));
        let hit = tri().intersect(&ray, Interval::POSITIVE).unwrap();
        assert_eq!(hit.t, 2.0);
        assert_eq!(hit.normal, Vec3::new(0.0, 0.0, 1.0));
    }

    #[test]
    fn miss_outside_the_hypotenuse() {
        let ray = Ray::new(Vec3::new(0.6, 0.6, 2.0), Vec3::new(0.0, 0.0, -1.0));
        assert!(tri().intersect(&ray, Interval::POSITIVE).is_none());
    }

    #[test]
    fn grazing_ray_in_the_plane_misses() {
        let ray = Ray::new(Vec3::new(-1.0, 0.25, 0.0), Vec3::new(1.0, 0.0, 0.0));
        assert!(tri().intersect(&ray, Interval::POSITIVE).is_none());
    }

    #[test]
    fn edge_point_is_a_hit() {
        let ray = Ray::new(Vec3::new(0.5, 0.0, 1.0), Vec3::new(0.0, 0.0, -1.0));
        assert_eq!(tri().intersect(&ray, Interval::POSITIVE).unwrap().t, 1.0);
    }

    #[test]
    fn triangle_behind_the_origin_is_not_hit() {
        let ray = Ray::new(Vec3::new(0.25, 0.25, 2.0), Vec3::new(0.0, 0.0, 1.0));
        assert!(tri().intersect(&ray, Interval::POSITIVE).is_none());
    }
}
