//! BVH traversal over 64-byte nodes that hold both children's boxes (Aila
//! and Laine 2009): one fetch per visit tests both children, the nearer is
//! visited next and the farther waits on a short stack with its entry
//! distance, so it is skipped if a closer hit turns up first. Leaves are
//! tested speculatively, as in Aila and Laine's "while-while" kernel: a
//! lane that reaches a leaf postpones it and goes on through interior
//! nodes until every lane of its warp holds one, so that the lanes test
//! their primitives together rather than one at a time.

use super::stack::{Stack, StackStorage};
use super::{AccelView, Closest, Query, TestOrder};
use crate::geometry::{Aabb, Hit, Interval, PrimKinds, Primitives, RayBoxTest};
use crate::math::Ray;
use crate::warp::{active_mask, ballot};

/// Deepest tree the traversal stack holds; the builder never exceeds it.
pub const MAX_DEPTH: usize = 32;

/// A stack entry: a node to visit and its box's entry distance.
type Entry = (u32, f32);

/// Bytes of the traversal stack: on the GPU, the local memory a kernel
/// that traces through this structure holds (and nothing else should).
pub const STACK_BYTES: usize = MAX_DEPTH * core::mem::size_of::<Entry>();

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

/// What a child slot holds: a node's index and 0, or a leaf's first
/// primitive reference and its count.
type Child = (u32, u32);

/// Closest hit (or, for an any-hit query, the first hit) by BVH traversal.
/// The unit of work is a child slot, `2 · node + k`: the nearer entered
/// child is visited next, the farther waits on the stack.
///
/// A lane that reaches a leaf keeps it (one leaf, in registers: the stack
/// is the same as without it) and descends on from the stack; it tests the
/// leaf once a warp vote finds a leaf held by every lane still descending,
/// so that the warp's lanes test their leaves together (on RTIOW, lanes that
/// each tested a leaf as soon as they reached it did so 9 of 32 at a time).
/// A lane that meets a second leaf, or runs out of nodes, stops descending
/// and waits for the others. After its leaf a lane tests every leaf that
/// comes next before it descends again. Testing a leaf later, or one that
/// a closer hit would have ruled out, finds the same hit, since the closest
/// hit is a total order ([`Closest`]). On the host a warp is one lane,
/// whose vote passes as soon as it holds a leaf: each leaf is tested as it
/// is reached, near to far.
#[inline(always)]
pub fn search(
    primitives: &Primitives,
    accel: &AccelView,
    kinds: PrimKinds,
    ray: &Ray,
    range: Interval,
    query: Query,
) -> Option<Hit> {
    search_with_vote(primitives, accel, kinds, ray, range, query, |holds| {
        ballot(active_mask(), !holds) == 0
    })
}

/// [`search`] with the warp vote `all_hold`, which a lane calls with
/// whether it holds a leaf and which says whether every lane still
/// descending does. Any vote finds the same hit; on the host, where a warp
/// is one lane, a test can put one in that never passes, so that each leaf
/// waits as long as it can.
#[inline(always)]
pub fn search_with_vote(
    primitives: &Primitives,
    accel: &AccelView,
    kinds: PrimKinds,
    ray: &Ray,
    range: Interval,
    query: Query,
    all_hold: impl Fn(bool) -> bool,
) -> Option<Hit> {
    let nodes = accel.bvh_nodes.as_slice();
    let prims = accel.prims.as_slice();
    let boxes = RayBoxTest::new(ray);
    let mut c = Closest::new(range, query, TestOrder::Unordered, kinds);
    let enter = |b: &Aabb, c: &Closest| boxes.enter(b, c.range.min, c.range.max);
    if nodes.is_empty() || enter(&accel.bounds, &c).is_none() {
        return None;
    }
    let mut storage = StackStorage::<Entry, MAX_DEPTH>::new();
    let mut stack = Stack::new(&mut storage);
    // The child to visit next (`None`: the stack's top), and the leaf held.
    let mut next: Option<Child> = Some((0, 0));
    let mut held: Option<Child> = None;
    loop {
        // Descend until this lane holds a leaf and so does every lane of
        // the warp still descending.
        while let Some((child, count)) = next.take().or_else(|| pop(&mut stack, nodes, c.range.max)) {
            if count != 0 {
                if held.is_some() {
                    next = Some((child, count));
                    break;
                }
                held = Some((child, count));
            } else {
                // Test both children of the node; take the nearer, keep
                // the farther. The node is read whole, on the GPU in
                // 16-byte loads through the read-only cache, so the nearer
                // child's index and count come with its box: only a child
                // taken from the stack reads them again.
                let node = child as usize;
                let n = accel.bvh_nodes.fetch(node);
                next = match (enter(&n.bounds[0], &c), enter(&n.bounds[1], &c)) {
                    (Some(a), Some(b)) => {
                        let (near, far, t_far) = if b < a { (1, 0, a) } else { (0, 1, b) };
                        stack.push((2 * node as u32 + far, t_far));
                        Some((n.child[near], n.count[near]))
                    }
                    (Some(_), None) => Some((n.child[0], n.count[0])),
                    (None, Some(_)) => Some((n.child[1], n.count[1])),
                    (None, None) => None,
                };
            }
            if all_hold(held.is_some()) {
                break;
            }
        }
        // A lane that holds no leaf has run out of nodes.
        if held.is_none() {
            return c.finish(primitives, ray);
        }
        // Test the leaf held, then each leaf that comes next.
        while let Some((first, count)) = held.take() {
            let first = first as usize;
            for &p in &prims[first..first + count as usize] {
                c.test(primitives, ray, p);
            }
            if c.done() {
                return c.finish(primitives, ray);
            }
            // Taken from the stack after the test, so that its hit rules
            // out what it can.
            let after = next.take().or_else(|| pop(&mut stack, nodes, c.range.max));
            match after {
                Some((_, count)) if count != 0 => held = after,
                Some(_) => next = after,
                None => return c.finish(primitives, ray),
            }
        }
    }
}

/// The child of the topmost slot on `stack` that a hit closer than `max`
/// has not ruled out, or `None` once the stack is empty.
#[inline(always)]
fn pop(stack: &mut Stack<Entry, MAX_DEPTH>, nodes: &[BvhNode], max: f32) -> Option<Child> {
    loop {
        let (s, t_enter) = stack.pop()?;
        if t_enter > max {
            continue;
        }
        let (parent, k) = (&nodes[(s / 2) as usize], (s % 2) as usize);
        return Some((parent.child[k], parent.count[k]));
    }
}
