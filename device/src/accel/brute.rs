//! Brute force: test every primitive. The baseline the accelerators beat.

use super::{AccelView, Closest, Query, TestOrder};
use crate::geometry::{Hit, Interval, PrimKind, PrimKinds, PrimRef, Primitives};
use crate::math::Ray;

/// Bytes of the traversal stack: brute force keeps none.
pub const STACK_BYTES: usize = 0;

/// Tests every primitive of every type in `kinds` (the structure is not
/// read) and keeps the nearest hit (or,
/// for an any-hit query, stops at the first).
#[inline(always)]
pub fn search(
    primitives: &Primitives,
    _: &AccelView,
    kinds: PrimKinds,
    ray: &Ray,
    range: Interval,
    query: Query,
) -> Option<Hit> {
    let mut c = Closest::new(range, query, TestOrder::Ascending, kinds);
    if kinds.contains(PrimKind::Sphere) {
        // Read whole, through the read-only cache on the GPU.
        for i in 0..primitives.spheres.len() as usize {
            let s = primitives.spheres.fetch(i);
            c.offer_sphere(
                s.distance(ray, c.range),
                s.material,
                PrimRef::new(PrimKind::Sphere, i as u32),
            );
            if c.done() {
                return c.finish(primitives, ray);
            }
        }
    }
    if kinds.contains(PrimKind::Parallelepiped) {
        for (i, b) in primitives.boxes.as_slice().iter().enumerate() {
            let h = b.intersect(ray, c.range);
            c.offer(h, b.material, PrimRef::new(PrimKind::Parallelepiped, i as u32));
            if c.done() {
                return c.finish(primitives, ray);
            }
        }
    }
    if kinds.contains(PrimKind::Polygon) {
        let vertices = primitives.polygon_vertices.as_slice();
        for (i, p) in primitives.polygons.as_slice().iter().enumerate() {
            let h = p.intersect(ray, c.range, vertices);
            c.offer(h, p.material, PrimRef::new(PrimKind::Polygon, i as u32));
            if c.done() {
                return c.finish(primitives, ray);
            }
        }
    }
    if kinds.contains(PrimKind::Triangle) {
        for (i, t) in primitives.triangles.as_slice().iter().enumerate() {
            let h = t.intersect(ray, c.range);
            c.offer(h, t.material, PrimRef::new(PrimKind::Triangle, i as u32));
            if c.done() {
                return c.finish(primitives, ray);
            }
        }
    }
    c.finish(primitives, ray)
}
