//! Bounding boxes of the device primitives, padded so that a hit the
//! intersection code reports can never fall outside its primitive's box
//! through rounding. They take one primitive each: the scene walks its own
//! arrays (`scene::Geometry::bounds`) and hands the builders the results.

use device::geometry::{Aabb, Parallelepiped, Sphere, Triangle};
use device::math::Vec3;

/// Relative padding of every box (a few ulps of the largest coordinate).
const PAD: f32 = 1.0 / 262_144.0;

fn padded(b: Aabb) -> Aabb {
    let scale = b
        .min
        .max_abs_component()
        .max(b.max.max_abs_component())
        .max(b.extent().max_abs_component());
    let pad = Vec3::splat(scale * PAD + f32::MIN_POSITIVE);
    Aabb {
        min: b.min - pad,
        max: b.max + pad,
    }
}

/// The eight corners of a box given as three slabs: each corner is the
/// intersection of one plane from every slab (Cramer's rule).
pub fn box_corners(b: &Parallelepiped) -> [Vec3; 8] {
    let [n0, n1, n2] = b.normals;
    let (c12, c20, c01) = (n1.cross(n2), n2.cross(n0), n0.cross(n1));
    let det = n0.dot(c12);
    let mut out = [Vec3::ZERO; 8];
    for (k, corner) in out.iter_mut().enumerate() {
        let pick = |i: usize| if k >> i & 1 == 0 { b.lo[i] } else { b.hi[i] };
        *corner = (c12 * pick(0) + c20 * pick(1) + c01 * pick(2)) / det;
    }
    out
}

/// The padded bounds of a sphere.
pub fn sphere(s: &Sphere) -> Aabb {
    padded(Aabb {
        min: s.center - Vec3::splat(s.radius),
        max: s.center + Vec3::splat(s.radius),
    })
}

/// The padded bounds of a box.
pub fn parallelepiped(b: &Parallelepiped) -> Aabb {
    padded(box_corners(b).iter().fold(Aabb::EMPTY, |b, &c| b.grow(c)))
}

/// The padded bounds of a polygon with corners `vertices`.
pub fn polygon(vertices: &[Vec3]) -> Aabb {
    padded(vertices.iter().fold(Aabb::EMPTY, |b, &v| b.grow(v)))
}

/// The padded bounds of a triangle.
pub fn triangle(t: &Triangle) -> Aabb {
    padded(Aabb::point(t.v0).grow(t.v0 + t.e1).grow(t.v0 + t.e2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corners_of_a_sheared_box_are_recovered() {
        let corner = Vec3::new(1.0, 2.0, 3.0);
        let edges = [
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(0.0, 0.5, 3.0),
        ];
        let b = Parallelepiped::new(corner, edges, 0);
        let corners = box_corners(&b);
        for k in 0..8 {
            let want = (0..3).fold(corner, |p, i| if k >> i & 1 == 1 { p + edges[i] } else { p });
            assert!(
                corners.iter().any(|c| (*c - want).length() < 1e-5),
                "corner {want:?} missing"
            );
        }
    }
}
