//! BVH traversal: 32-byte binary nodes in depth-first order, visited
//! nearer child first (by entry distance), with a short fixed stack.

use super::Closest;
use super::stack::Stack;
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

/// Closest hit by BVH traversal. Both children's boxes are tested at their
/// parent: the nearer is visited next and the farther waits on the stack
/// with its entry distance, so it is skipped if a closer hit turns up first.
#[inline(always)]
pub fn closest_hit(scene: &SceneView, ray: &Ray, range: Interval) -> Option<Hit> {
    let nodes = scene.accel.bvh_nodes.as_slice();
    let prims = scene.accel.prims.as_slice();
    let boxes = RayBoxTest::new(ray);
    let mut c = Closest::new(range);
    let enter = |b: &Aabb, c: &Closest| boxes.enter(b, c.range.min, c.range.max);
    if nodes.is_empty() || enter(&nodes[0].bounds, &c).is_none() {
        return None;
    }
    let mut stack = Stack::<(u32, f32), MAX_DEPTH>::new();
    let mut node = 0usize;
    loop {
        let n = &nodes[node];
        if n.is_leaf() {
            let first = n.index as usize;
            for &p in &prims[first..first + n.meta as usize] {
                c.test(scene, ray, p);
            }
        } else {
            let (a, b) = (node + 1, n.index as usize);
            match (enter(&nodes[a].bounds, &c), enter(&nodes[b].bounds, &c)) {
                (Some(ta), Some(tb)) => {
                    let (near, far, t_far) = if tb < ta { (b, a, ta) } else { (a, b, tb) };
                    stack.push((far as u32, t_far));
                    node = near;
                    continue;
                }
                (Some(_), None) => {
                    node = a;
                    continue;
                }
                (None, Some(_)) => {
                    node = b;
                    continue;
                }
                (None, None) => {}
            }
        }
        // The next waiting node that a closer hit has not ruled out.
        loop {
            let Some((next, t_enter)) = stack.pop() else {
                return c.finish(ray);
            };
            if t_enter <= c.range.max {
                node = next as usize;
                break;
            }
        }
    }
}
