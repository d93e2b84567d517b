//! BVH traversal over 64-byte nodes that hold both children's boxes (Aila
//! and Laine 2009): one fetch per visit tests both children, the nearer is
//! visited next and the farther waits on a short stack with its entry
//! distance, so it is skipped if a closer hit turns up first. Leaf
//! children's primitives are tested as soon as their box is entered.

use super::stack::{Stack, StackStorage};
use super::{AccelView, Closest, Query, TestOrder};
use crate::geometry::{Aabb, Hit, Interval, PrimKinds, Primitives, RayBoxTest};
use crate::math::Ray;

/// Deepest tree the traversal stack holds; the builder never exceeds it.
pub const MAX_DEPTH: usize = 32;

/// A stack entry: a node to visit and its box's entry distance.
type NodeToVisit = (u32, f32);

/// Bytes of the traversal stack: on the GPU, the local memory a kernel
/// that traces through this structure holds (and nothing else should).
pub const STACK_BYTES: usize = MAX_DEPTH * core::mem::size_of::<NodeToVisit>();

/// One interior node of the binary tree: its two children's boxes and
/// what each child is. Node 0 is the root; a tree of one leaf is a root
/// whose second child is unused.
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BvhNode {
    /// Each child's bounds; an unused child has [`Aabb::EMPTY`], which no
    /// ray enters.
    pub bounds: [Aabb; 2],
    /// Per child: the index of an interior node, or of a leaf's first
    /// primitive reference.
    pub child: [u32; 2],
    /// Per child: the leaf's primitive count, or 0 for an interior node.
    pub count: [u32; 2],
}

const _: () = assert!(core::mem::size_of::<BvhNode>() == 64);
// SAFETY: `#[repr(C)]`, two `Aabb`s (48 bytes) then four `u32`: the size asserted above is the sum of
// the fields, so there is no padding.
unsafe impl crate::kernel::AsBytes for BvhNode {}

/// Closest hit (or, for an any-hit query, the first hit) by BVH traversal. The unit of work is a child slot, `2 ·
/// node + k`: the nearer entered child is visited next, the farther waits
/// on the stack, leaves included, so primitives are tested near to far.
#[inline(always)]
pub fn search(
    primitives: &Primitives,
    accel: &AccelView,
    kinds: PrimKinds,
    ray: &Ray,
    range: Interval,
    query: Query,
) -> Option<Hit> {
    let nodes = accel.bvh_nodes.as_slice();
    let prims = accel.prims.as_slice();
    let boxes = RayBoxTest::new(ray);
    let mut c = Closest::new(range, query, TestOrder::Unordered, kinds);
    let enter = |b: &Aabb, c: &Closest| boxes.enter(b, c.range.min, c.range.max);
    if nodes.is_empty() || enter(&accel.bounds, &c).is_none() {
        return None;
    }
    let mut storage = StackStorage::<NodeToVisit, MAX_DEPTH>::new();
    let mut stack = Stack::new(&mut storage);
    let mut node = 0usize;
    loop {
        // Test both children of `node`; take the nearer, keep the farther.
        // The node is read whole, on the GPU in 16-byte loads through the
        // read-only cache, so the nearer child's index and count come with
        // its box: only a child taken from the stack reads them again.
        let n = accel.bvh_nodes.fetch(node);
        let mut next = match (enter(&n.bounds[0], &c), enter(&n.bounds[1], &c)) {
            (Some(a), Some(b)) => {
                let (near, far, t_far) = if b < a { (1, 0, a) } else { (0, 1, b) };
                stack.push((2 * node as u32 + far, t_far));
                Some((n.child[near], n.count[near]))
            }
            (Some(_), None) => Some((n.child[0], n.count[0])),
            (None, Some(_)) => Some((n.child[1], n.count[1])),
            (None, None) => None,
        };
        // Visit children until one is an interior node.
        loop {
            let (child, count) = match next {
                Some(visit) => visit,
                None => match stack.pop() {
                    None => return c.finish(primitives, ray),
                    // Skip what a closer hit has ruled out.
                    Some((_, t_enter)) if t_enter > c.range.max => continue,
                    Some((s, _)) => {
                        let (parent, k) = (&nodes[(s / 2) as usize], (s % 2) as usize);
                        (parent.child[k], parent.count[k])
                    }
                },
            };
            if count == 0 {
                node = child as usize;
                break;
            }
            let first = child as usize;
            for &p in &prims[first..first + count as usize] {
                c.test(primitives, ray, p);
            }
            if c.done() {
                return c.finish(primitives, ray);
            }
            next = None;
        }
    }
}
