//! Spheres.

use super::{Interval, SurfaceHit};
use crate::math::{Ray, Vec3, scalar};

/// A sphere with a material, padded to 32 bytes so that the GPU reads it
/// in two 16-byte loads ([`crate::slice::DeviceSlice::fetch`]).
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    /// Centre.
    pub center: Vec3,
    /// Radius (positive).
    pub radius: f32,
    /// Index into the scene's materials.
    pub material: u32,
    /// Zero.
    pad: [u32; 3],
}

const _: () = assert!(core::mem::size_of::<Sphere>() == 32);
// SAFETY: `#[repr(C)]`, a `Vec3`, an `f32`, a `u32` and three `u32` of
// padding made explicit: the size asserted above is the sum of the fields,
// so there is no implicit padding.
unsafe impl crate::kernel::AsBytes for Sphere {}

impl Sphere {
    /// The sphere of `radius` about `center`.
    pub fn new(center: Vec3, radius: f32, material: u32) -> Self {
        Sphere {
            center,
            radius,
            material,
            pad: [0; 3],
        }
    }

    /// Closest intersection inside `range`. Uses the numerically careful form
    /// of Haines et al. (Ray Tracing Gems, ch. 7): the discriminant comes from
    /// the ray's perpendicular offset, and the smaller root from `c / q`, so
    /// large spheres and distant rays keep their precision in single floats.
    #[inline(always)]
    pub fn intersect(&self, ray: &Ray, range: Interval) -> Option<SurfaceHit> {
        self.distance(ray, range).map(|t| SurfaceHit {
            t,
            normal: self.normal(ray, t),
        })
    }

    /// The distance of [`Sphere::intersect`]'s hit, without its normal: a
    /// search that offers many spheres completes only the closest with
    /// [`Sphere::normal`], which divides three times.
    ///
    /// Every ray takes the same instructions, hit or miss, each choice a
    /// select: on the GPU the lanes of a warp that test a sphere together
    /// stay together (a miss that left before the square root parted them).
    /// A miss (a negative or NaN discriminant) is refused at the end.
    #[inline(always)]
    pub fn distance(&self, ray: &Ray, range: Interval) -> Option<f32> {
        let f = ray.origin - self.center;
        let b = f.dot(ray.dir);
        let perp = f - ray.dir * b;
        let r2 = self.radius * self.radius;
        let disc = r2 - perp.length_squared();
        let c = f.length_squared() - r2;
        let root = scalar::sqrt(disc);
        let q = -b - if b >= 0.0 { root } else { -root };
        let (r0, r1) = (c / q, q);
        let (near, far) = if r0 <= r1 { (r0, r1) } else { (r1, r0) };
        let t = if range.contains(near) { near } else { far };
        (disc >= 0.0 && range.contains(t)).then_some(t)
    }

    /// The outward unit normal where `ray` meets the sphere at distance `t`.
    #[inline(always)]
    pub fn normal(&self, ray: &Ray, t: f32) -> Vec3 {
        (ray.at(t) - self.center) / self.radius
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_sphere_at_origin() -> Sphere {
        Sphere::new(Vec3::ZERO, 1.0, 0)
    }

    #[test]
    fn head_on_hit_from_outside() {
        let ray = Ray::new(Vec3::new(0.0, 0.0, 5.0), Vec3::new(0.0, 0.0, -1.0));
        let hit = unit_sphere_at_origin().intersect(&ray, Interval::POSITIVE).unwrap();
        assert_eq!(hit.t, 4.0);
        assert_eq!(hit.normal, Vec3::new(0.0, 0.0, 1.0));
    }

    #[test]
    fn miss_beside_the_sphere() {
        let ray = Ray::new(Vec3::new(1.5, 0.0, 5.0), Vec3::new(0.0, 0.0, -1.0));
        assert!(unit_sphere_at_origin().intersect(&ray, Interval::POSITIVE).is_none());
    }

    #[test]
    fn grazing_ray_touches_at_the_tangent_point() {
        let ray = Ray::new(Vec3::new(1.0, 0.0, 5.0), Vec3::new(0.0, 0.0, -1.0));
        let hit = unit_sphere_at_origin().intersect(&ray, Interval::POSITIVE).unwrap();
        assert!((hit.t - 5.0).abs() < 1e-6);
        assert!((hit.normal - Vec3::new(1.0, 0.0, 0.0)).length() < 1e-6);
    }

    #[test]
    fn ray_from_inside_hits_the_far_side_with_outward_normal() {
        let ray = Ray::new(Vec3::new(0.0, 0.5, 0.0), Vec3::new(0.0, 1.0, 0.0));
        let hit = unit_sphere_at_origin().intersect(&ray, Interval::POSITIVE).unwrap();
        assert_eq!(hit.t, 0.5);
        assert_eq!(hit.normal, Vec3::new(0.0, 1.0, 0.0));
        assert!(ray.dir.dot(hit.normal) > 0.0, "back face seen from inside");
    }

    #[test]
    fn sphere_behind_the_origin_is_not_hit() {
        let ray = Ray::new(Vec3::new(0.0, 0.0, 5.0), Vec3::new(0.0, 0.0, 1.0));
        assert!(unit_sphere_at_origin().intersect(&ray, Interval::POSITIVE).is_none());
    }

    #[test]
    fn respects_the_interval() {
        let ray = Ray::new(Vec3::new(0.0, 0.0, 5.0), Vec3::new(0.0, 0.0, -1.0));
        let s = unit_sphere_at_origin();
        assert!(s.intersect(&ray, Interval { min: 0.0, max: 3.9 }).is_none());
        let far = s.intersect(&ray, Interval { min: 4.5, max: 100.0 }).unwrap();
        assert_eq!(far.t, 6.0);
        assert_eq!(far.normal, Vec3::new(0.0, 0.0, -1.0));
    }

    #[test]
    fn huge_sphere_keeps_single_precision() {
        // A smallpt-style wall: radius 1e5 with its surface at x = 1.
        let wall = Sphere::new(Vec3::new(-1e5 + 1.0, 40.8, 81.6), 1e5, 0);
        let toward = Ray::new(Vec3::new(50.0, 40.8, 81.6), Vec3::new(-1.0, 0.0, 0.0));
        let hit = wall.intersect(&toward, Interval::POSITIVE).unwrap();
        // One ulp at 1e5 is 0.0078: the careful form stays within it.
        assert!((hit.t - 49.0).abs() < 0.008, "t = {}", hit.t);
        assert!((hit.normal - Vec3::new(1.0, 0.0, 0.0)).length() < 1e-4);
        let away = Ray::new(Vec3::new(50.0, 40.8, 81.6), Vec3::new(1.0, 0.0, 0.0));
        assert!(wall.intersect(&away, Interval::POSITIVE).is_none());
    }
}
