//! kd-tree traversal as in the CS500 report and pbrt: 8-byte nodes, and a
//! front-to-back walk that carries each cell's `[t_min, t_max]` and cuts it
//! at the split plane, so a hit inside the current cell ends the search.

use super::stack::{Stack, StackStorage};
use super::{AccelView, Closest, Query, TestOrder};
use crate::geometry::{Hit, Interval, PrimKinds, Primitives, RayBoxTest};
use crate::math::Ray;
use crate::math::scalar::fma;

/// Deepest tree the traversal stack holds; the builder never exceeds it.
pub const MAX_DEPTH: usize = 48;

/// Bytes of the traversal stack: on the GPU, the local memory a kernel
/// that traces through this structure holds (and nothing else should).
pub const STACK_BYTES: usize = MAX_DEPTH * core::mem::size_of::<Todo>();

const LEAF: u32 = 3;

/// One kd-tree node in 8 bytes.
///
/// Interior: `split` is the plane position (f32 bits), `packed` holds the
/// above child's index shifted left by 2 and the axis (0–2) in the low bits;
/// the below child is the next node. Leaf: `split` is the first index in the
/// scene's reference list, `packed` the count shifted left by 2, low bits 3.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KdNode {
    split: u32,
    packed: u32,
}

const _: () = assert!(core::mem::size_of::<KdNode>() == 8);
// SAFETY: `#[repr(C)]`, two `u32`: the size asserted above is the sum of
// the fields, so there is no padding.
unsafe impl crate::kernel::AsBytes for KdNode {}

impl KdNode {
    /// Largest child index or primitive count a node can hold.
    pub const MAX_FIELD: u32 = u32::MAX >> 2;

    /// An interior node splitting `axis` at `position`.
    pub fn interior(axis: u32, position: f32, above_child: u32) -> Self {
        KdNode {
            split: position.to_bits(),
            packed: (above_child << 2) | axis,
        }
    }

    /// A leaf over `count` references starting at `first`.
    pub fn leaf(first: u32, count: u32) -> Self {
        KdNode {
            split: first,
            packed: (count << 2) | LEAF,
        }
    }

    /// True for leaves.
    #[inline(always)]
    pub fn is_leaf(&self) -> bool {
        self.packed & 3 == LEAF
    }

    /// Split axis of an interior node.
    #[inline(always)]
    pub fn axis(&self) -> usize {
        (self.packed & 3) as usize
    }

    /// Split plane position of an interior node.
    #[inline(always)]
    pub fn position(&self) -> f32 {
        f32::from_bits(self.split)
    }

    /// Index of the child above the plane (interior), or the primitive count (leaf).
    #[inline(always)]
    pub fn above_or_count(&self) -> u32 {
        self.packed >> 2
    }

    /// First reference of a leaf.
    #[inline(always)]
    pub fn first(&self) -> u32 {
        self.split
    }
}

/// A cell still to visit, with the ray's span through it.
#[derive(Clone, Copy)]
struct Todo {
    node: u32,
    t_min: f32,
    t_max: f32,
}

/// Closest hit (or, for an any-hit query, the first hit) by kd-tree
/// traversal.
#[inline(always)]
pub fn search(
    primitives: &Primitives,
    accel: &AccelView,
    kinds: PrimKinds,
    ray: &Ray,
    range: Interval,
    query: Query,
) -> Option<Hit> {
    let nodes = accel.kd_nodes.as_slice();
    let prims = accel.prims.as_slice();
    let boxes = RayBoxTest::new(ray);
    let t_enter = boxes.enter(&accel.bounds, range.min, range.max)?;
    if nodes.is_empty() {
        return None;
    }
    // The exit distance of the root cell (same slab test, reversed roles).
    let t_exit = root_exit(accel, &boxes, range);
    let (inv_dir, shift) = (boxes.inv_dir(), boxes.neg_origin_inv());
    let origin = [ray.origin.x, ray.origin.y, ray.origin.z];
    let dir = [ray.dir.x, ray.dir.y, ray.dir.z];
    let inv = [inv_dir.x, inv_dir.y, inv_dir.z];
    let shift = [shift.x, shift.y, shift.z];
    let mut c = Closest::new(range, query, TestOrder::Unordered, kinds);
    let mut storage = StackStorage::<Todo, MAX_DEPTH>::new();
    let mut stack = Stack::new(&mut storage);
    let mut cell = Todo {
        node: 0,
        t_min: t_enter,
        t_max: t_exit,
    };
    loop {
        // Everything left is beyond the closest hit found so far.
        if c.range.max < cell.t_min {
            break;
        }
        let n = &nodes[cell.node as usize];
        if !n.is_leaf() {
            let axis = n.axis();
            let t_split = fma(n.position(), inv[axis], shift[axis]);
            // Which child the ray starts in: below unless it starts above the
            // plane, or on it while heading up.
            let below_first = origin[axis] < n.position() || (origin[axis] == n.position() && dir[axis] <= 0.0);
            let (first, second) = if below_first {
                (cell.node + 1, n.above_or_count())
            } else {
                (n.above_or_count(), cell.node + 1)
            };
            if t_split > cell.t_max || t_split <= 0.0 || t_split.is_nan() {
                cell.node = first;
            } else if t_split < cell.t_min {
                cell.node = second;
            } else {
                stack.push(Todo {
                    node: second,
                    t_min: t_split,
                    t_max: cell.t_max,
                });
                cell = Todo {
                    node: first,
                    t_min: cell.t_min,
                    t_max: t_split,
                };
            }
            continue;
        }
        let first = n.first() as usize;
        for &p in &prims[first..first + n.above_or_count() as usize] {
            c.test(primitives, ray, p);
        }
        if c.done() {
            break;
        }
        match stack.pop() {
            Some(waiting) => cell = waiting,
            None => break,
        }
    }
    c.finish(primitives, ray)
}

/// Where the ray leaves the root cell (or `range.max` if sooner).
#[inline(always)]
fn root_exit(accel: &AccelView, boxes: &RayBoxTest, range: Interval) -> f32 {
    let b = &accel.bounds;
    let inv = boxes.inv_dir();
    let (lo, hi) = (boxes.distances(b.min), boxes.distances(b.max));
    // Distance to the far plane on each axis.
    let far = |lo: f32, hi: f32, i: f32| if i >= 0.0 { hi } else { lo };
    range
        .max
        .min(far(lo.x, hi.x, inv.x))
        .min(far(lo.y, hi.y, inv.y))
        .min(far(lo.z, hi.z, inv.z))
}
