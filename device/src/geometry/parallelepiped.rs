//! Boxes: parallelepipeds given by a corner and three edge vectors, intersected
//! as the intersection of three slabs (six half-spaces). They need not be
//! axis-aligned or even rectangular.

use super::{Interval, SurfaceHit};
use crate::math::{Ray, Vec3};

/// A box as three slabs: for each axis `i`, `lo[i] <= normals[i] · p <= hi[i]`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Parallelepiped {
    /// Unit normal of each slab, pointing out through its `hi` face.
    pub normals: [Vec3; 3],
    /// Plane offsets of the faces through the corner.
    pub lo: [f32; 3],
    /// Plane offsets of the opposite faces.
    pub hi: [f32; 3],
    /// Index into the scene's materials.
    pub material: u32,
}

const _: () = assert!(core::mem::size_of::<Parallelepiped>() == 64);
// SAFETY: `#[repr(C)]`, four-byte fields only: the size asserted above is the sum of
// the fields, so there is no padding.
unsafe impl crate::kernel::AsBytes for Parallelepiped {}

impl Parallelepiped {
    /// The box spanned from `corner` by edge vectors `edges` (linearly
    /// independent; the host's scene validation checks this).
    pub fn new(corner: Vec3, edges: [Vec3; 3], material: u32) -> Self {
        let mut normals = [Vec3::ZERO; 3];
        let mut lo = [0.0; 3];
        let mut hi = [0.0; 3];
        for i in 0..3 {
            let n = edges[(i + 1) % 3].cross(edges[(i + 2) % 3]).normalized();
            let n = if n.dot(edges[i]) < 0.0 { -n } else { n };
            normals[i] = n;
            lo[i] = n.dot(corner);
            hi[i] = n.dot(corner + edges[i]);
        }
        Parallelepiped {
            normals,
            lo,
            hi,
            material,
        }
    }

    /// Closest intersection inside `range`, with the normal of the face hit.
    #[inline(always)]
    pub fn intersect(&self, ray: &Ray, range: Interval) -> Option<SurfaceHit> {
        let mut t_enter = f32::NEG_INFINITY;
        let mut t_exit = f32::INFINITY;
        let mut n_enter = Vec3::ZERO;
        let mut n_exit = Vec3::ZERO;
        for i in 0..3 {
            let n = self.normals[i];
            let dn = n.dot(ray.dir);
            let on = n.dot(ray.origin);
            if dn == 0.0 {
                // Parallel to this slab: inside it everywhere or nowhere.
                if on < self.lo[i] || on > self.hi[i] {
                    return None;
                }
                continue;
            }
            let t_lo = (self.lo[i] - on) / dn;
            let t_hi = (self.hi[i] - on) / dn;
            // Moving along +n the ray enters through the lo face (outward
            // normal -n) and leaves through the hi face (+n); along -n the reverse.
            let (t_near, t_far, n_near, n_far) = if dn > 0.0 {
                (t_lo, t_hi, -n, n)
            } else {
                (t_hi, t_lo, n, -n)
            };
            if t_near > t_enter {
                t_enter = t_near;
                n_enter = n_near;
            }
            if t_far < t_exit {
                t_exit = t_far;
                n_exit = n_far;
            }
        }
        if t_enter > t_exit {
            return None;
        }
        if range.contains(t_enter) {
            Some(SurfaceHit {
                t: t_enter,
                normal: n_enter,
            })
        } else if range.contains(t_exit) {
            Some(SurfaceHit {
                t: t_exit,
                normal: n_exit,
            })
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unit cube [0,1]^3.
    fn cube() -> Parallelepiped {
        Parallelepiped::new(
            Vec3::ZERO,
            [
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(0.0, 1.0, 0.0),
                Vec3::new(0.0, 0.0, 1.0),
            ],
            0,
        )
    }

    #[test]
    fn hit_front_face_from_outside() {
        let ray = Ray::new(Vec3::new(0.5, 0.5, 3.0), Vec3::new(0.0, 0.0, -1.0));
        let hit = cube().intersect(&ray, Interval::POSITIVE).unwrap();
        assert_eq!(hit.t, 2.0);
        assert_eq!(hit.normal, Vec3::new(0.0, 0.0, 1.0));
    }

    #[test]
    fn miss_passing_beside() {
        let ray = Ray::new(Vec3::new(1.5, 0.5, 3.0), Vec3::new(0.0, 0.0, -1.0));
        assert!(cube().intersect(&ray, Interval::POSITIVE).is_none());
    }

    #[test]
    fn grazing_along_a_face_plane_counts_as_inside_the_slab() {
        // The ray runs in the plane x = 1 (the +x face), parallel to it.
        let ray = Ray::new(Vec3::new(1.0, 0.5, 3.0), Vec3::new(0.0, 0.0, -1.0));
        let hit = cube().intersect(&ray, Interval::POSITIVE).unwrap();
        assert_eq!(hit.t, 2.0);
        assert_eq!(hit.normal, Vec3::new(0.0, 0.0, 1.0));
    }

    #[test]
    fn from_inside_exits_with_outward_normal() {
        let ray = Ray::new(Vec3::new(0.5, 0.25, 0.5), Vec3::new(0.0, -1.0, 0.0));
        let hit = cube().intersect(&ray, Interval::POSITIVE).unwrap();
        assert_eq!(hit.t, 0.25);
        assert_eq!(hit.normal, Vec3::new(0.0, -1.0, 0.0));
    }

    #[test]
    fn box_behind_the_origin_is_not_hit() {
        let ray = Ray::new(Vec3::new(0.5, 0.5, 3.0), Vec3::new(0.0, 0.0, 1.0));
        assert!(cube().intersect(&ray, Interval::POSITIVE).is_none());
    }

    #[test]
    fn rotated_sheared_box_hits_the_slanted_face() {
        // Edges (1,1,0), (-1,1,0), (0,0,2) from the origin: a square rotated 45°
        // about z, extruded 2 up in z. Its nearest face to a ray going -x from
        // (5, 1.5, 1) is the one with outward normal (1,1,0)/√2 through x + y = 2,
        // reached at x = 0.5.
        let b = Parallelepiped::new(
            Vec3::ZERO,
            [
                Vec3::new(1.0, 1.0, 0.0),
                Vec3::new(-1.0, 1.0, 0.0),
                Vec3::new(0.0, 0.0, 2.0),
            ],
            0,
        );
        let ray = Ray::new(Vec3::new(5.0, 1.5, 1.0), Vec3::new(-1.0, 0.0, 0.0));
        let hit = b.intersect(&ray, Interval::POSITIVE).unwrap();
        assert!((hit.t - 4.5).abs() < 1e-5, "{}", hit.t);
        let s = core::f32::consts::FRAC_1_SQRT_2;
        assert!((hit.normal - Vec3::new(s, s, 0.0)).length() < 1e-5);
    }
}
