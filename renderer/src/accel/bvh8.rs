//! Compressed 8-wide BVH construction (Ylitie, Karras and Laine 2017): the
//! binned-SAH binary tree of [`super::bvh`] is collapsed top-down, each
//! wide node taking up to eight descendants by opening the largest interior
//! child first. Children go into slots by their position along each
//! octant's diagonal, and their boxes are quantised to 8 bits per plane,
//! rounded outwards until the device's own decoding holds them.

use super::bvh::{self, BvhBuildNode, BvhSettings};
use super::{AccelStats, BuiltAccel};
use device::accel::AccelKind;
use device::accel::bvh8::{self, Bvh8Node, MAX_LEAF_OFFSET, MAX_LEAF_PRIMS, WIDTH, dequantise, leaf_word, scale};
use device::geometry::{Aabb, PrimRef};
use device::math::Vec3;

const _: () = assert!(bvh::MAX_FORCED_LEAF <= MAX_LEAF_PRIMS && (WIDTH - 1) * MAX_LEAF_PRIMS <= MAX_LEAF_OFFSET);

/// Builds an 8-wide BVH over `prims` (references with their bounds).
pub fn build(prims: &[(PrimRef, Aabb)], settings: &BvhSettings) -> BuiltAccel {
    let mut built = BuiltAccel::empty(AccelKind::Bvh8);
    let Some((root, order)) = bvh::tree(prims, settings) else {
        return built;
    };
    let mut writer = Writer {
        order: &order,
        nodes: vec![PLACEHOLDER],
        prims: Vec::with_capacity(order.len()),
        stats: AccelStats::default(),
    };
    writer.write(0, &root, 0);
    debug_assert!(writer.stats.max_depth <= bvh8::MAX_DEPTH);
    built.bvh8_nodes = writer.nodes;
    built.prims = writer.prims;
    built.stats = writer.stats;
    built.stats.nodes = built.bvh8_nodes.len();
    built
}

/// A node's slot until it is written.
const PLACEHOLDER: Bvh8Node = Bvh8Node {
    origin: Vec3::ZERO,
    exponents: [0; 3],
    interior_mask: 0,
    child_base: 0,
    prim_base: 0,
    leaves: [0; WIDTH],
    lo: [0; 3],
    hi: [0; 3],
    child_mask: 0,
    pad: [0; 7],
};

/// Emits wide nodes depth-first; each node's interior children are
/// contiguous, and so are the references of its leaf children.
struct Writer<'a> {
    order: &'a [PrimRef],
    nodes: Vec<Bvh8Node>,
    prims: Vec<PrimRef>,
    stats: AccelStats,
}

impl Writer<'_> {
    /// Writes `node` (binary) as wide node `index` at `depth`, then its
    /// interior children.
    fn write(&mut self, index: usize, node: &BvhBuildNode, depth: usize) {
        let slots = assign_slots(node.bounds(), &collapse(node));
        let child_base = self.nodes.len();
        let interior: Vec<&BvhBuildNode> = slots
            .iter()
            .flatten()
            .filter(|c| c.children().is_some())
            .copied()
            .collect();
        self.nodes.resize(child_base + interior.len(), PLACEHOLDER);
        let prim_base = self.prims.len();
        let mut out = Bvh8Node {
            child_base: child_base as u32,
            prim_base: prim_base as u32,
            ..PLACEHOLDER
        };
        for (slot, child) in slots.iter().enumerate() {
            let Some(child) = child else { continue };
            out.child_mask |= 1 << slot;
            match child {
                BvhBuildNode::Interior { .. } => out.interior_mask |= 1 << slot,
                BvhBuildNode::Leaf { first, count, .. } => {
                    out.leaves[slot] = leaf_word(self.prims.len() - prim_base, *count);
                    self.prims.extend_from_slice(&self.order[*first..first + count]);
                    self.stats.leaves += 1;
                    self.stats.max_depth = self.stats.max_depth.max(depth + 1);
                }
            }
        }
        quantise(&mut out, node.bounds(), &slots);
        self.nodes[index] = out;
        for (k, child) in interior.into_iter().enumerate() {
            self.write(child_base + k, child, depth + 1);
        }
    }
}

/// Up to [`WIDTH`] descendants of `node` that together cover its
/// primitives: the interior child of largest surface area is opened until
/// there are eight or only leaves. A leaf root stays one leaf child.
fn collapse(node: &BvhBuildNode) -> Vec<&BvhBuildNode> {
    let mut children = match node.children() {
        Some((a, b)) => vec![a, b],
        None => return vec![node],
    };
    while children.len() < WIDTH {
        let largest = children
            .iter()
            .enumerate()
            .filter(|(_, c)| c.children().is_some())
            .max_by(|a, b| a.1.bounds().surface_area().total_cmp(&b.1.bounds().surface_area()));
        let Some((i, (a, b))) = largest.and_then(|(i, c)| Some((i, c.children()?))) else {
            break;
        };
        children[i] = a;
        children.push(b);
    }
    children
}

/// Places children in slots: slot `s` takes the child met first by rays
/// travelling along octant `s`'s diagonal (greedily, cheapest pair first).
fn assign_slots<'a>(parent: Aabb, children: &[&'a BvhBuildNode]) -> [Option<&'a BvhBuildNode>; WIDTH] {
    let centre = parent.center();
    let mut pairs = Vec::with_capacity(children.len() * WIDTH);
    for (i, child) in children.iter().enumerate() {
        let offset = child.bounds().center() - centre;
        for slot in 0..WIDTH {
            let diagonal = Vec3::new(sign(slot, 0), sign(slot, 1), sign(slot, 2));
            pairs.push((offset.dot(diagonal), i, slot));
        }
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut slots = [None; WIDTH];
    let mut placed = vec![false; children.len()];
    for (_, i, slot) in pairs {
        if !placed[i] && slots[slot].is_none() {
            slots[slot] = Some(children[i]);
            placed[i] = true;
        }
    }
    slots
}

/// The component along `axis` of octant `octant`'s diagonal: -1 where its bit is set.
fn sign(octant: usize, axis: usize) -> f32 {
    if octant >> axis & 1 == 1 { -1.0 } else { 1.0 }
}

/// Sets `out`'s frame and quantised child boxes. Per axis the scale is the
/// smallest power of two at which every child's planes, rounded outwards,
/// fit in 8 bits as the device decodes them.
fn quantise(out: &mut Bvh8Node, bounds: Aabb, slots: &[Option<&BvhBuildNode>; WIDTH]) {
    out.origin = bounds.min;
    for axis in 0..3 {
        let origin = bounds.min[axis];
        let needed = (f64::from(bounds.max[axis]) - f64::from(origin)) / 255.0;
        let first = if needed > 0.0 {
            needed.log2().ceil() as i32 + 127
        } else {
            1
        };
        let mut exponent = first.clamp(1, 254) as u8;
        let planes = loop {
            match quantised_planes(origin, exponent, axis, slots) {
                Some(planes) => break planes,
                // The widest scale spans every finite box (255 · 2^127
                // decodes to infinity), so this ends.
                None => exponent += 1,
            }
        };
        out.exponents[axis] = exponent;
        out.lo[axis] = u64::from_le_bytes(planes.map(|p| p.0));
        out.hi[axis] = u64::from_le_bytes(planes.map(|p| p.1));
    }
}

/// Each slot's quantised (lower, upper) plane along `axis` at `exponent`,
/// or `None` when some upper plane needs more than 8 bits. Empty slots get
/// (0, 0); the child mask keeps them out of traversal.
fn quantised_planes(
    origin: f32,
    exponent: u8,
    axis: usize,
    slots: &[Option<&BvhBuildNode>; WIDTH],
) -> Option<[(u8, u8); WIDTH]> {
    let s = scale(exponent);
    let decode = |q: u32| dequantise(origin, q, s);
    let mut out = [(0u8, 0u8); WIDTH];
    for (slot, child) in slots.iter().enumerate() {
        let Some(child) = child else { continue };
        let b = child.bounds();
        let (lo, hi) = (b.min[axis], b.max[axis]);
        let estimate = |v: f32| (f64::from(v) - f64::from(origin)) / f64::from(s);
        // decode(0) is the origin, at or below every lower plane.
        let mut q_lo = estimate(lo).floor().clamp(0.0, 255.0) as u32;
        while q_lo > 0 && decode(q_lo) > lo {
            q_lo -= 1;
        }
        let mut q_hi = estimate(hi).ceil().clamp(0.0, 256.0) as u32;
        while q_hi <= 255 && decode(q_hi) < hi {
            q_hi += 1;
        }
        if q_hi > 255 {
            if exponent < 254 {
                return None;
            }
            q_hi = 255;
        }
        out[slot] = (q_lo as u8, q_hi as u8);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use device::geometry::PrimKind;

    fn boxed(min: Vec3, max: Vec3) -> Aabb {
        Aabb { min, max }
    }

    /// True when `inner` lies inside `outer`.
    fn holds(outer: Aabb, inner: Aabb) -> bool {
        (0..3).all(|k| outer.min[k] <= inner.min[k] && inner.max[k] <= outer.max[k])
    }

    /// Primitives on a line of `n` unit boxes spread over `span`, offset far
    /// from the origin so that f32 rounding matters.
    fn line(n: usize, offset: f32, span: f32) -> Vec<(PrimRef, Aabb)> {
        (0..n)
            .map(|i| {
                let x = offset + span * i as f32 / n as f32;
                let min = Vec3::new(x, -1.0 - i as f32 * 0.37, 2.0);
                (
                    PrimRef::new(PrimKind::Sphere, i as u32),
                    boxed(min, min + Vec3::new(0.75, 1.5, 1e-3)),
                )
            })
            .collect()
    }

    /// Checks that every primitive below `node` lies inside `within` (the
    /// decoded boxes of all its ancestors) and inside its own slot's box;
    /// marks each primitive seen.
    fn check(built: &BuiltAccel, prims: &[(PrimRef, Aabb)], node: usize, within: &[Aabb], seen: &mut [bool]) {
        let n = &built.bvh8_nodes[node];
        for slot in 0..WIDTH as u32 {
            if n.child_mask & (1 << slot) == 0 {
                continue;
            }
            let mut boxes = within.to_vec();
            boxes.push(n.child_box(slot));
            match n.child(slot) {
                bvh8::Child::Node(i) => check(built, prims, i as usize, &boxes, seen),
                bvh8::Child::Leaf { first, count } => {
                    for p in &built.prims[first as usize..(first + count) as usize] {
                        let b = prims[p.index() as usize].1;
                        for decoded in &boxes {
                            assert!(holds(*decoded, b), "primitive box {b:?} outside {decoded:?}");
                        }
                        assert!(!std::mem::replace(&mut seen[p.index() as usize], true), "listed twice");
                    }
                }
            }
        }
    }

    #[test]
    fn decoded_child_boxes_hold_their_primitives() {
        for (n, offset, span) in [(1, 0.0, 1.0), (9, 1e5, 3.0), (300, -7.5e3, 1e4), (2000, 3.3, 0.01)] {
            let prims = line(n, offset, span);
            let built = build(&prims, &BvhSettings::default());
            assert_eq!(built.prims.len(), n, "every primitive is referenced once");
            let mut seen = vec![false; n];
            check(&built, &prims, 0, &[], &mut seen);
            assert!(seen.iter().all(|&s| s), "n={n}: every primitive sits in some leaf");
        }
    }

    #[test]
    fn nodes_open_interior_children_until_full() {
        let prims = line(4096, 0.0, 100.0);
        let built = build(&prims, &BvhSettings::default());
        let nodes = &built.bvh8_nodes;
        let children: u32 = nodes.iter().map(|n| n.child_mask.count_ones()).sum();
        assert_eq!(
            children as usize,
            nodes.len() - 1 + built.stats.leaves,
            "each child is a node or a leaf"
        );
        for n in nodes.iter().filter(|n| n.child_mask != 0xff) {
            assert_eq!(
                n.interior_mask, 0,
                "a node with a free slot has opened every interior child"
            );
        }
        let binary = bvh::build(&prims, &BvhSettings::default());
        assert!(
            built.stats.max_depth * 2 < binary.stats.max_depth,
            "collapsing makes the tree shallower"
        );
    }

    #[test]
    fn children_are_slotted_by_the_octant_diagonal() {
        // Two leaves apart along x: rays going +x (octant 0) meet the low
        // one first, so it takes slot 0; the high one takes slot 1 (-x).
        let prims: Vec<_> = [0.0, 10.0]
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let min = Vec3::new(x, 0.0, 0.0);
                (
                    PrimRef::new(PrimKind::Sphere, i as u32),
                    boxed(min, min + Vec3::splat(1.0)),
                )
            })
            .collect();
        let built = build(
            &prims,
            &BvhSettings {
                max_leaf: 1,
                ..BvhSettings::default()
            },
        );
        let root = &built.bvh8_nodes[0];
        assert_eq!(root.child_mask, 0b11);
        let first_prim = |slot| match root.child(slot) {
            bvh8::Child::Leaf { first, .. } => built.prims[first as usize].index(),
            other => panic!("expected a leaf, got {other:?}"),
        };
        assert_eq!((first_prim(0), first_prim(1)), (0, 1));
    }

    #[test]
    fn built_nodes_test_their_children_at_once_as_one_by_one() {
        // Every node of real trees, rays from around them in every
        // direction: the host's wide box test enters the same children as
        // the GPU's one-child test (the device crate's test compares entry
        // distances too, bit for bit, on random nodes).
        use device::geometry::{Interval, RayBoxTest};
        use device::math::Ray;
        let mut state = 0x2222_u64;
        let mut unit = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        };
        for (n, offset, span) in [(9, 1e5, 3.0), (300, -7.5e3, 1e4), (2000, 3.3, 0.01)] {
            let built = build(&line(n, offset, span), &BvhSettings::default());
            for node in &built.bvh8_nodes {
                let centre = node.child_box(node.child_mask.trailing_zeros()).center();
                for _ in 0..64 {
                    let jitter = Vec3::new(unit(), unit(), unit()) * span.max(1.0);
                    let dir = Vec3::new(unit(), unit(), unit());
                    let ray = Ray::new(centre + jitter, dir);
                    let boxes = RayBoxTest::new(&ray);
                    let range = Interval {
                        min: 0.0,
                        max: if unit() < 0.0 {
                            f32::INFINITY
                        } else {
                            span * (unit() + 1.0)
                        },
                    };
                    let octant = bvh8::octant(dir);
                    assert_eq!(
                        node.hits_all(&boxes, range, octant),
                        node.hits_each(&boxes, range, octant),
                        "{node:?} {ray:?}"
                    );
                }
            }
        }
    }
}
