//! BVH traversal: 32-byte binary nodes in depth-first order, visited near
//! child first (by the ray's direction along the node's split axis), with a
//! short fixed stack.

use super::Closest;
use crate::geometry::{Aabb, Hit, Interval, RayBoxTest};
use crate::math::Ray;
use crate::scene::SceneView;

/// Deepest tree the traversal stack holds; the builder never exceeds it.
pub const MAX_DEPTH: usize = 64;

/// Marks an interior node in [`BvhNode::meta`].
const INTERIOR: u32 = 1 << 31;

/// One BVH node: its bounds plus either two children or a run of primitives.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BvhNode {
    /// Bounds of everything below.
    pub bounds: Aabb,
    /// Interior: index of the second child (the first is the next node).
    /// Leaf: index of the first primitive in the scene's reference list.
    pub index: u32,
    /// Interior: `INTERIOR | split axis`. Leaf: primitive count (≥ 1).
    pub meta: u32,
}

const _: () = assert!(core::mem::size_of::<BvhNode>() == 32);

impl BvhNode {
    /// An interior node whose second child is at `second_child`.
    pub fn interior(bounds: Aabb, second_child: u32, axis: u32) -> Self {
        BvhNode {
            bounds,
            index: second_child,
            meta: INTERIOR | axis,
        }
    }

    /// A leaf over `count` references starting at `first`.
    pub fn leaf(bounds: Aabb, first: u32, count: u32) -> Self {
        BvhNode {
            bounds,
            index: first,
            meta: count,
        }
    }

    /// True for leaves.
    #[inline(always)]
    pub fn is_leaf(&self) -> bool {
        self.meta & INTERIOR == 0
    }

    /// Split axis of an interior node.
    #[inline(always)]
    pub fn axis(&self) -> usize {
        (self.meta & 3) as usize
    }
}

/// Closest hit by BVH traversal.
#[inline(always)]
pub fn closest_hit(scene: &SceneView, ray: &Ray, range: Interval) -> Option<Hit> {
    let nodes = scene.accel.bvh_nodes.as_slice();
    let prims = scene.accel.prims.as_slice();
    let boxes = RayBoxTest::new(ray);
    let negative = [ray.dir.x < 0.0, ray.dir.y < 0.0, ray.dir.z < 0.0];
    let mut c = Closest::new(range);
    let mut stack = [0u32; MAX_DEPTH];
    let mut top = 0usize;
    let mut node = 0usize;
    if nodes.is_empty() {
        return None;
    }
    loop {
        let n = &nodes[node];
        let visit = boxes.enter(&n.bounds, c.range.min, c.range.max).is_some();
        if visit && !n.is_leaf() {
            // Near child next, far child on the stack.
            let (near, far) = if negative[n.axis()] {
                (n.index, node as u32 + 1)
            } else {
                (node as u32 + 1, n.index)
            };
            stack[top] = far;
            top += 1;
            node = near as usize;
            continue;
        }
        if visit {
            let first = n.index as usize;
            for &p in &prims[first..first + n.meta as usize] {
                c.test(scene, ray, p);
            }
        }
        if top == 0 {
            return c.finish(ray);
        }
        top -= 1;
        node = stack[top] as usize;
    }
}
