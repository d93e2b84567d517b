//! Convex planar polygons (area lights, walls, floors).

use super::{Interval, SurfaceHit};
use crate::math::{Ray, Vec3};

/// A convex polygon: its plane plus a run of counter-clockwise vertices in
/// the scene's shared polygon-vertex array.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Polygon {
    /// Unit normal; the vertices wind counter-clockwise around it.
    pub normal: Vec3,
    /// `normal · p` for every point `p` of the plane.
    pub offset: f32,
    /// Index of the first vertex in the vertex array.
    pub first_vertex: u32,
    /// Number of vertices (at least 3).
    pub vertex_count: u32,
    /// Index into the scene's materials.
    pub material: u32,
}

const _: () = assert!(core::mem::size_of::<Polygon>() == 28);
// SAFETY: `#[repr(C)]`, four-byte fields only: the size asserted above is the sum of
// the fields, so there is no padding.
unsafe impl crate::kernel::AsBytes for Polygon {}

impl Polygon {
    /// The polygon over `vertices[first_vertex..first_vertex + count]`, with
    /// its normal from Newell's method (robust for any convex polygon).
    pub fn new(vertices: &[Vec3], first_vertex: u32, material: u32) -> Self {
        let mut normal = Vec3::ZERO;
        for (i, a) in vertices.iter().enumerate() {
            let b = vertices[(i + 1) % vertices.len()];
            normal += Vec3::new(
                (a.y - b.y) * (a.z + b.z),
                (a.z - b.z) * (a.x + b.x),
                (a.x - b.x) * (a.y + b.y),
            );
        }
        let normal = normal.normalized();
        Polygon {
            normal,
            offset: normal.dot(vertices[0]),
            first_vertex,
            vertex_count: vertices.len() as u32,
            material,
        }
    }

    /// Intersection inside `range`; `vertices` is the scene's whole polygon
    /// vertex array. Points on an edge count as inside.
    #[inline(always)]
    pub fn intersect(&self, ray: &Ray, range: Interval, vertices: &[Vec3]) -> Option<SurfaceHit> {
        let dn = self.normal.dot(ray.dir);
        if dn == 0.0 {
            return None;
        }
        let t = (self.offset - self.normal.dot(ray.origin)) / dn;
        if !range.contains(t) {
            return None;
        }
        let p = ray.at(t);
        let first = self.first_vertex as usize;
        let count = self.vertex_count as usize;
        let own = &vertices[first..first + count];
        let mut prev = own[count - 1];
        for &v in own {
            if (v - prev).cross(p - prev).dot(self.normal) < 0.0 {
                return None;
            }
            prev = v;
        }
        Some(SurfaceHit { t, normal: self.normal })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A regular hexagon of circumradius 1 in the plane z = 1, facing +z,
    /// stored after two unrelated vertices.
    fn hexagon() -> ([Vec3; 8], Polygon) {
        let mut verts = [Vec3::new(9.0, 9.0, 9.0); 8];
        for k in 0..6 {
            let a = k as f32 * core::f32::consts::PI / 3.0;
            verts[2 + k] = Vec3::new(crate::math::scalar::cos(a), crate::math::scalar::sin(a), 1.0);
        }
        let poly = Polygon::new(&verts[2..], 2, 0);
        (verts, poly)
    }

    #[test]
    fn normal_and_offset_from_the_vertices() {
        let (_, p) = hexagon();
        assert!((p.normal - Vec3::new(0.0, 0.0, 1.0)).length() < 1e-6);
        assert!((p.offset - 1.0).abs() < 1e-6);
    }

    #[test]
    fn hit_near_a_corner_and_miss_just_outside_an_edge() {
        let (v, p) = hexagon();
        let down = Vec3::new(0.0, 0.0, -1.0);
        let hit = p
            .intersect(&Ray::new(Vec3::new(0.9, 0.05, 3.0), down), Interval::POSITIVE, &v)
            .unwrap();
        assert!((hit.t - 2.0).abs() < 1e-6);
        // The edge between the corners at 0° and 60° lies at the apothem
        // √3/2 ≈ 0.866 along the 30° direction (0.866, 0.5).
        let along = |d: f32| Ray::new(Vec3::new(0.866_025_4 * d, 0.5 * d, 3.0), down);
        assert!(p.intersect(&along(0.85), Interval::POSITIVE, &v).is_some());
        assert!(p.intersect(&along(0.88), Interval::POSITIVE, &v).is_none());
    }

    #[test]
    fn grazing_ray_parallel_to_the_plane_misses() {
        let (v, p) = hexagon();
        let ray = Ray::new(Vec3::new(-3.0, 0.0, 1.0), Vec3::new(1.0, 0.0, 0.0));
        assert!(p.intersect(&ray, Interval::POSITIVE, &v).is_none());
    }

    #[test]
    fn hit_from_below_and_not_from_behind_the_origin() {
        let (v, p) = hexagon();
        let up = Ray::new(Vec3::new(0.0, 0.0, -1.0), Vec3::new(0.0, 0.0, 1.0));
        let hit = p.intersect(&up, Interval::POSITIVE, &v).unwrap();
        assert_eq!(hit.t, 2.0);
        assert!(up.dir.dot(hit.normal) > 0.0);
        let away = Ray::new(Vec3::new(0.0, 0.0, 3.0), Vec3::new(0.0, 0.0, 1.0));
        assert!(p.intersect(&away, Interval::POSITIVE, &v).is_none());
    }
}
