//! Compressed 8-wide BVH traversal (after Ylitie, Karras and Laine, HPG
//! 2017). A 96-byte node holds up to eight children, each child's box
//! quantised to 8 bits per plane in a frame shared by the node: an origin
//! and a power-of-two scale per axis. The builder rounds every quantised
//! box outwards and checks it with the same `f32` arithmetic as
//! [`Bvh8Node::child_box`], so a decoded box always holds its child.
//!
//! Children are placed in slots by the builder so that a ray whose
//! direction lies in octant `o` meets them roughly in the order of
//! `slot ^ o`. Traversal keeps the children still to visit as a bit mask
//! in that order (a "node group"), so picking the next child is a
//! `trailing_zeros`, not a sort, and the stack holds one group per level.

use super::stack::Stack;
use super::{AccelView, Closest, Query};
use crate::geometry::{Aabb, Hit, Interval, Primitives, RayBoxTest};
use crate::math::{Ray, Vec3};

/// Deepest tree the traversal stack holds (one group per level); the
/// builder never exceeds it.
pub const MAX_DEPTH: usize = 64;

/// Children per node.
pub const WIDTH: usize = 8;

/// Most primitives one leaf child may hold.
pub const MAX_LEAF_PRIMS: usize = 64;

/// Largest offset of a leaf's first primitive from its node's `prim_base`.
pub const MAX_LEAF_OFFSET: usize = (1 << 9) - 1;

/// Marks a used leaf word in [`Bvh8Node::leaves`].
const LEAF: u16 = 1 << 15;

/// One node: the quantisation frame and up to eight children.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bvh8Node {
    /// The frame's origin: the lower corner of the node's box.
    pub origin: Vec3,
    /// Per axis, the biased `f32` exponent of the scale `2^(e - 127)`
    /// (1 ..= 254, so the scale is a normal number).
    pub exponents: [u8; 3],
    /// Bit `s` set: slot `s` holds an interior node.
    pub interior_mask: u8,
    /// Index of the first interior child; the others follow in slot order.
    pub child_base: u32,
    /// Index of the first primitive reference of the leaf children.
    pub prim_base: u32,
    /// Per slot, a leaf: `LEAF | offset << 6 | (count - 1)`, where `offset`
    /// counts from `prim_base`; 0 for interior and empty slots.
    pub leaves: [u16; WIDTH],
    /// Per axis, the eight children's quantised lower planes (byte `s` is
    /// slot `s`).
    pub lo: [u64; 3],
    /// Per axis, the quantised upper planes.
    pub hi: [u64; 3],
    /// Bit `s` set: slot `s` is used.
    pub child_mask: u8,
    /// Zero.
    pub pad: [u8; 7],
}

const _: () = assert!(core::mem::size_of::<Bvh8Node>() == 96);
// SAFETY: `#[repr(C)]`, and the size asserted above is the sum of the
// fields' (with the explicit `pad`), so there is no padding.
unsafe impl crate::kernel::AsBytes for Bvh8Node {}

/// What a slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Child {
    /// An interior node, by index.
    Node(u32),
    /// A run of `count` primitive references from `first`.
    Leaf {
        /// Index of the first reference.
        first: u32,
        /// How many.
        count: u32,
    },
}

/// The scale `2^(e - 127)` of a biased exponent `e` in 1 ..= 254.
#[inline(always)]
pub fn scale(exponent: u8) -> f32 {
    f32::from_bits((exponent as u32) << 23)
}

/// The plane `origin + q · scale` of a quantised coordinate (one rounding,
/// in the add; the product is exact).
#[inline(always)]
pub fn dequantise(origin: f32, q: u32, scale: f32) -> f32 {
    origin + q as f32 * scale
}

/// The leaf word for `count` references at `offset` from the node's base.
pub fn leaf_word(offset: usize, count: usize) -> u16 {
    debug_assert!((1..=MAX_LEAF_PRIMS).contains(&count) && offset <= MAX_LEAF_OFFSET);
    LEAF | (offset as u16) << 6 | (count - 1) as u16
}

/// The ray's direction octant: bit `k` set when its component `k` is negative.
#[inline(always)]
pub fn octant(dir: Vec3) -> u32 {
    (dir.x < 0.0) as u32 | ((dir.y < 0.0) as u32) << 1 | ((dir.z < 0.0) as u32) << 2
}

impl Bvh8Node {
    /// The decoded box of slot `slot`: conservative, it holds the child.
    #[inline(always)]
    pub fn child_box(&self, slot: u32) -> Aabb {
        let shift = 8 * slot;
        let axis = |k: usize| {
            let s = scale(self.exponents[k]);
            let lo = ((self.lo[k] >> shift) & 0xff) as u32;
            let hi = ((self.hi[k] >> shift) & 0xff) as u32;
            (dequantise(self.origin[k], lo, s), dequantise(self.origin[k], hi, s))
        };
        let (x, y, z) = (axis(0), axis(1), axis(2));
        Aabb {
            min: Vec3::new(x.0, y.0, z.0),
            max: Vec3::new(x.1, y.1, z.1),
        }
    }

    /// What slot `slot` (used) holds.
    #[inline(always)]
    pub fn child(&self, slot: u32) -> Child {
        let bit = 1u32 << slot;
        if self.interior_mask as u32 & bit != 0 {
            let before = self.interior_mask as u32 & (bit - 1);
            Child::Node(self.child_base + before.count_ones())
        } else {
            let word = self.leaves[slot as usize] as u32;
            Child::Leaf {
                first: self.prim_base + ((word >> 6) & MAX_LEAF_OFFSET as u32),
                count: (word & 63) + 1,
            }
        }
    }

    /// The children whose boxes the ray enters within `range`, as a mask
    /// over visiting ranks (bit `slot ^ octant`).
    ///
    /// The distance to a quantised plane `origin + q · scale` is one fused
    /// multiply-add per plane, `q · (scale · inv) + dist(origin)`, in the
    /// node's frame: `scale` is a power of two, so `scale · inv` is exact,
    /// and the result lies within a few ulps of the distance to the decoded
    /// plane of [`Bvh8Node::child_box`], as the binary BVH's slab test lies
    /// within a few ulps of the exact one. Where `scale · inv` overflows, a
    /// plane at `q > 0` is ±∞ away with the right sign and one at `q = 0`
    /// is NaN (ignored): never a box culled by mistake.
    #[inline(always)]
    fn hits(&self, boxes: &RayBoxTest, range: Interval, octant: u32) -> u32 {
        let unit = Vec3::new(
            scale(self.exponents[0]),
            scale(self.exponents[1]),
            scale(self.exponents[2]),
        );
        let step = unit.mul_elem(boxes.inv_dir());
        let frame = boxes.frame_distances(self.origin);
        let mut ranks = 0;
        for slot in 0..WIDTH as u32 {
            if self.child_mask as u32 & (1 << slot) == 0 {
                continue;
            }
            let shift = 8 * slot;
            let plane = |planes: &[u64; 3], k: usize| ((planes[k] >> shift) & 0xff) as u32 as f32;
            let q = |planes: &[u64; 3]| Vec3::new(plane(planes, 0), plane(planes, 1), plane(planes, 2));
            let t0 = q(&self.lo).mul_add(step, frame);
            let t1 = q(&self.hi).mul_add(step, frame);
            if boxes.enter_between(t0, t1, (range.min, range.max)).is_some() {
                ranks |= 1 << (slot ^ octant);
            }
        }
        ranks
    }
}

/// A node's children still to visit, in rank order.
#[derive(Clone, Copy)]
struct Group {
    node: u32,
    ranks: u32,
}

/// Closest hit (or, for an any-hit query, the first hit) by wide-BVH
/// traversal.
#[inline(always)]
pub fn search(primitives: &Primitives, accel: &AccelView, ray: &Ray, range: Interval, query: Query) -> Option<Hit> {
    let nodes = accel.bvh8_nodes.as_slice();
    let prims = accel.prims.as_slice();
    if nodes.is_empty() {
        return None;
    }
    let boxes = RayBoxTest::new(ray);
    let octant = octant(ray.dir);
    let mut c = Closest::new(range, query);
    let mut stack = Stack::<Group, MAX_DEPTH>::new();
    let mut group = Group {
        node: 0,
        ranks: nodes[0].hits(&boxes, c.range, octant),
    };
    loop {
        if group.ranks == 0 {
            let Some(waiting) = stack.pop() else {
                return c.finish(ray);
            };
            group = waiting;
        }
        let slot = group.ranks.trailing_zeros() ^ octant;
        group.ranks &= group.ranks - 1;
        match nodes[group.node as usize].child(slot) {
            Child::Node(index) => {
                if group.ranks != 0 {
                    stack.push(group);
                }
                group = Group {
                    node: index,
                    ranks: nodes[index as usize].hits(&boxes, c.range, octant),
                };
            }
            Child::Leaf { first, count } => {
                for &p in &prims[first as usize..(first + count) as usize] {
                    c.test(primitives, ray, p);
                }
                if c.done() {
                    return c.finish(ray);
                }
            }
        }
    }
}
