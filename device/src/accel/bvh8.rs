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

use super::stack::{Stack, StackStorage};
use super::{AccelView, Closest, Query, TestOrder};
#[cfg(not(target_arch = "nvptx64"))]
use crate::geometry::aabb::{F32x8, SlabLanes};
use crate::geometry::{Aabb, Hit, Interval, PrimKinds, Primitives, RayBoxTest};
use crate::math::{Ray, Vec3};

/// Deepest tree the traversal stack holds (one group per level); the
/// builder never exceeds it.
pub const MAX_DEPTH: usize = 64;

/// Bytes of the traversal stack: on the GPU, the local memory a kernel
/// that traces through this structure holds (and nothing else should).
pub const STACK_BYTES: usize = MAX_DEPTH * core::mem::size_of::<ChildrenToVisit>();

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
    ///
    /// The GPU tests the children one after another
    /// ([`Bvh8Node::hits_each`]); the host tests all eight at once
    /// ([`Bvh8Node::hits_all`]), with the same result bit for bit.
    #[inline(always)]
    fn hits(&self, boxes: &RayBoxTest, range: Interval, octant: u32) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        return self.hits_each(boxes, range, octant);
        #[cfg(not(target_arch = "nvptx64"))]
        return self.hits_all(boxes, range, octant);
    }

    /// The node's frame as seen along the ray, per axis: the distance one
    /// quantisation step spans (`scale · inv_dir`, exact) and the distance
    /// to the frame's origin. Shared by every child's test.
    #[inline(always)]
    fn frame(&self, boxes: &RayBoxTest) -> (Vec3, Vec3) {
        let unit = Vec3::new(
            scale(self.exponents[0]),
            scale(self.exponents[1]),
            scale(self.exponents[2]),
        );
        (unit.mul_elem(boxes.inv_dir()), boxes.frame_distances(self.origin))
    }

    /// The ray's entry distance into slot `slot`'s box when it overlaps
    /// `range` (whether or not the slot is used), given [`Bvh8Node::frame`]:
    /// one fused multiply-add per plane, then the slab test.
    #[inline(always)]
    fn enter_one(&self, boxes: &RayBoxTest, (step, frame): (Vec3, Vec3), slot: u32, range: Interval) -> Option<f32> {
        let shift = 8 * slot;
        let plane = |planes: &[u64; 3], k: usize| ((planes[k] >> shift) & 0xff) as u32 as f32;
        let q = |planes: &[u64; 3]| Vec3::new(plane(planes, 0), plane(planes, 1), plane(planes, 2));
        let t0 = q(&self.lo).mul_add(step, frame);
        let t1 = q(&self.hi).mul_add(step, frame);
        boxes.enter_between(t0, t1, (range.min, range.max))
    }

    /// The children whose boxes the ray enters within `range`, as a mask
    /// over visiting ranks (bit `slot ^ octant`), one child after another:
    /// the GPU's traversal, and on the host the reference for
    /// [`Bvh8Node::hits_all`].
    #[inline(always)]
    pub fn hits_each(&self, boxes: &RayBoxTest, range: Interval, octant: u32) -> u32 {
        let frame = self.frame(boxes);
        let mut ranks = 0;
        for slot in 0..WIDTH as u32 {
            if self.child_mask as u32 & (1 << slot) == 0 {
                continue;
            }
            if self.enter_one(boxes, frame, slot, range).is_some() {
                ranks |= 1 << (slot ^ octant);
            }
        }
        ranks
    }

    /// Every slot's entry distance at once, lane `s` for slot `s`: the
    /// mask of the slots (used or not) whose box the ray enters within
    /// `range`, and the entry distances (meaningful in those lanes).
    ///
    /// Lane `s` equals `enter_one` (the one-child test of
    /// [`Bvh8Node::hits_each`]) for slot `s` bit for bit:
    /// byte `s` of a plane word becomes the same exact float (`u8` to
    /// `f32`, as `enter_one`'s `as u32 as f32`); each plane's distance is
    /// the same fused multiply-add of the same operands (`mul_add` per
    /// lane, as `Vec3::mul_add` per axis); and [`RayBoxTest::slab`] is the
    /// code of [`RayBoxTest::enter_between`], run on lanes.
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub fn enter_all(&self, boxes: &RayBoxTest, range: Interval) -> (u32, [f32; WIDTH]) {
        use core::simd::cmp::SimdPartialOrd;
        use core::simd::num::SimdUint;
        let (step, frame) = self.frame(boxes);
        let lanes = |word: u64| core::simd::u8x8::from_array(word.to_le_bytes()).cast::<f32>();
        let q = |planes: &[u64; 3]| [lanes(planes[0]), lanes(planes[1]), lanes(planes[2])];
        let mul_add = |q: [F32x8; 3]| {
            [
                q[0].mul_add(F32x8::splat(step.x), F32x8::splat(frame.x)),
                q[1].mul_add(F32x8::splat(step.y), F32x8::splat(frame.y)),
                q[2].mul_add(F32x8::splat(step.z), F32x8::splat(frame.z)),
            ]
        };
        let t0 = mul_add(q(&self.lo));
        let t1 = mul_add(q(&self.hi));
        let (enter, exit) = boxes.slab(t0, t1, (range.min, range.max));
        (enter.simd_le(exit).to_bitmask() as u32, enter.to_array())
    }

    /// [`Bvh8Node::hits_each`], all eight children at once in the host's
    /// vector lanes ([`Bvh8Node::enter_all`]): the used slots entered,
    /// moved to their ranks.
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub fn hits_all(&self, boxes: &RayBoxTest, range: Interval, octant: u32) -> u32 {
        let (entered, _) = self.enter_all(boxes, range);
        by_rank(entered & self.child_mask as u32, octant)
    }
}

/// A mask over slots moved to a mask over ranks: bit `s` to bit
/// `s ^ octant`, by swapping bits, pairs and nibbles where `octant` has
/// bit 0, 1 and 2.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
fn by_rank(mut mask: u32, octant: u32) -> u32 {
    if octant & 1 != 0 {
        mask = ((mask & 0x55) << 1) | ((mask >> 1) & 0x55);
    }
    if octant & 2 != 0 {
        mask = ((mask & 0x33) << 2) | ((mask >> 2) & 0x33);
    }
    if octant & 4 != 0 {
        mask = ((mask & 0x0f) << 4) | ((mask >> 4) & 0x0f);
    }
    mask
}

/// A node's children still to visit, in rank order.
#[derive(Clone, Copy)]
struct ChildrenToVisit {
    node: u32,
    ranks: u32,
}

/// Closest hit (or, for an any-hit query, the first hit) by wide-BVH
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
    let nodes = accel.bvh8_nodes.as_slice();
    let prims = accel.prims.as_slice();
    if nodes.is_empty() {
        return None;
    }
    let boxes = RayBoxTest::new(ray);
    let octant = octant(ray.dir);
    let mut c = Closest::new(range, query, TestOrder::Unordered, kinds);
    let mut storage = StackStorage::<ChildrenToVisit, MAX_DEPTH>::new();
    let mut stack = Stack::new(&mut storage);
    let mut group = ChildrenToVisit {
        node: 0,
        ranks: accel.bvh8_nodes.fetch(0).hits(&boxes, c.range, octant),
    };
    loop {
        if group.ranks == 0 {
            let Some(waiting) = stack.pop() else {
                return c.finish(primitives, ray);
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
                group = ChildrenToVisit {
                    node: index,
                    // The node is read whole to test its children (on the GPU
                    // in 16-byte loads through the read-only cache).
                    ranks: accel.bvh8_nodes.fetch(index as usize).hits(&boxes, c.range, octant),
                };
            }
            Child::Leaf { first, count } => {
                for &p in &prims[first as usize..(first + count) as usize] {
                    c.test(primitives, ray, p);
                }
                if c.done() {
                    return c.finish(primitives, ray);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SplitMix64: a seeded stream of test values.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        /// Uniform in `[lo, hi)`.
        fn range(&mut self, lo: f32, hi: f32) -> f32 {
            lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
        }

        /// One in `n`.
        fn one_in(&mut self, n: u64) -> bool {
            self.next().is_multiple_of(n)
        }

        /// A coordinate or direction component, now and then an awkward
        /// one: zero of either sign, tiny, or far out.
        fn component(&mut self, scale: f32) -> f32 {
            match self.next() % 16 {
                0 => 0.0,
                1 => -0.0,
                2 => self.range(-1.0, 1.0) * 1e-25,
                3 => self.range(-1.0, 1.0) * 1e25,
                _ => self.range(-scale, scale),
            }
        }
    }

    /// A node of random planes (lower above upper now and then, empty
    /// slots holding any bytes) in a frame that is now and then extreme.
    fn random_node(rng: &mut Rng) -> Bvh8Node {
        let exponent = |rng: &mut Rng| {
            if rng.one_in(8) {
                1 + (rng.next() % 254) as u8
            } else {
                120 + (rng.next() % 12) as u8
            }
        };
        let mut lo = [rng.next(), rng.next(), rng.next()];
        let mut hi = [rng.next(), rng.next(), rng.next()];
        if !rng.one_in(4) {
            // Mostly proper boxes: per byte, lower at most upper.
            for k in 0..3 {
                let (a, b) = (lo[k].to_le_bytes(), hi[k].to_le_bytes());
                let (mut l, mut h) = ([0u8; 8], [0u8; 8]);
                for s in 0..8 {
                    (l[s], h[s]) = (a[s].min(b[s]), a[s].max(b[s]));
                }
                (lo[k], hi[k]) = (u64::from_le_bytes(l), u64::from_le_bytes(h));
            }
        }
        Bvh8Node {
            origin: Vec3::new(rng.component(8.0), rng.component(8.0), rng.component(8.0)),
            exponents: [exponent(rng), exponent(rng), exponent(rng)],
            interior_mask: 0,
            child_base: 0,
            prim_base: 0,
            leaves: [0; WIDTH],
            lo,
            hi,
            child_mask: rng.next() as u8,
            pad: [0; 7],
        }
    }

    #[test]
    fn all_at_once_equals_one_by_one_bit_for_bit() {
        let mut rng = Rng(22);
        let mut entered = 0;
        for _ in 0..200_000 {
            let node = random_node(&mut rng);
            let origin = Vec3::new(rng.component(10.0), rng.component(10.0), rng.component(10.0));
            let mut dir = Vec3::new(rng.component(1.0), rng.component(1.0), rng.component(1.0));
            if rng.one_in(2) {
                // Aimed at a child, so that many rays enter boxes.
                let to = node.child_box((rng.next() % 8) as u32).center() - origin;
                if to.x.is_finite() && to.y.is_finite() && to.z.is_finite() {
                    dir = to;
                }
            }
            let ray = Ray::new(origin, dir);
            let boxes = RayBoxTest::new(&ray);
            let min = if rng.one_in(2) { 0.0 } else { rng.range(0.0, 4.0) };
            let max = if rng.one_in(2) {
                f32::INFINITY
            } else {
                min + rng.range(0.0, 20.0)
            };
            let range = Interval { min, max };
            let (mask, enter) = node.enter_all(&boxes, range);
            for slot in 0..WIDTH as u32 {
                let one = node.enter_one(&boxes, node.frame(&boxes), slot, range);
                assert_eq!(
                    one.is_some(),
                    mask & (1 << slot) != 0,
                    "slot {slot} of {node:?}, {ray:?}"
                );
                if let Some(t) = one {
                    assert_eq!(
                        t.to_bits(),
                        enter[slot as usize].to_bits(),
                        "slot {slot} of {node:?}, {ray:?}"
                    );
                    entered += 1;
                }
            }
            for o in 0..8 {
                assert_eq!(node.hits_all(&boxes, range, o), node.hits_each(&boxes, range, o));
            }
        }
        // The rays do enter boxes, often.
        assert!(entered > 100_000, "{entered}");
    }
}
