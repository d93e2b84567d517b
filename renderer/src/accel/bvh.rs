//! Binned-SAH BVH construction (Wald 2007): at each node, centroids are
//! binned along every axis and the split with the lowest surface-area cost
//! wins; large subtrees are built in parallel (rayon), then the tree is
//! flattened depth-first into 64-byte nodes that hold both children's
//! boxes. The 8-wide BVH
//! ([`super::bvh8`]) collapses the same tree.
//!
//! Every leaf holds at most [`MAX_FORCED_LEAF`] primitives: where the depth
//! limit would otherwise force a larger leaf, the split halves by count.

use super::{AccelStats, BuiltAccel};
use device::accel::bvh::MAX_DEPTH;
use device::accel::{AccelKind, BvhNode};
use device::geometry::{Aabb, PrimRef};
use device::math::Vec3;

/// BVH build parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BvhSettings {
    /// Centroid bins per axis.
    pub bins: usize,
    /// Leaves stop splitting at this many primitives.
    pub max_leaf: usize,
    /// SAH cost of visiting a node, relative to testing a primitive.
    pub traversal_cost: f32,
}

impl Default for BvhSettings {
    fn default() -> Self {
        BvhSettings {
            bins: 16,
            max_leaf: 4,
            traversal_cost: 1.0,
        }
    }
}

/// Subtrees with more primitives than this are built on another thread.
const PARALLEL_THRESHOLD: usize = 4096;

/// Largest leaf made when splitting is impossible or not worth it, and so
/// the largest leaf of any tree.
pub const MAX_FORCED_LEAF: usize = 64;

#[derive(Clone, Copy)]
struct Item {
    prim: PrimRef,
    bounds: Aabb,
    centroid: Vec3,
}

/// A node of the binary tree before flattening.
pub(super) enum BvhBuildNode {
    /// `count` primitives from `first` in the tree's primitive order.
    Leaf { bounds: Aabb, first: usize, count: usize },
    /// Two subtrees.
    Interior {
        bounds: Aabb,
        children: Box<(BvhBuildNode, BvhBuildNode)>,
    },
}

impl BvhBuildNode {
    /// Bounds of everything below.
    pub(super) fn bounds(&self) -> Aabb {
        match self {
            BvhBuildNode::Leaf { bounds, .. } | BvhBuildNode::Interior { bounds, .. } => *bounds,
        }
    }

    /// The two subtrees of an interior node.
    pub(super) fn children(&self) -> Option<(&BvhBuildNode, &BvhBuildNode)> {
        match self {
            BvhBuildNode::Leaf { .. } => None,
            BvhBuildNode::Interior { children, .. } => Some((&children.0, &children.1)),
        }
    }
}

/// The binary tree over `prims` and the primitive order its leaves index
/// into, or `None` when there are no primitives.
pub(super) fn tree(prims: &[(PrimRef, Aabb)], settings: &BvhSettings) -> Option<(BvhBuildNode, Vec<PrimRef>)> {
    let mut items: Vec<Item> = prims
        .iter()
        .map(|&(prim, bounds)| Item {
            prim,
            bounds,
            centroid: bounds.center(),
        })
        .collect();
    if items.is_empty() {
        return None;
    }
    let root = split(&mut items, 0, 0, settings);
    Some((root, items.iter().map(|i| i.prim).collect()))
}

/// Builds a BVH over `prims` (references with their bounds).
pub fn build(prims: &[(PrimRef, Aabb)], settings: &BvhSettings) -> BuiltAccel {
    let mut built = BuiltAccel::empty(AccelKind::Bvh);
    let Some((root, order)) = tree(prims, settings) else {
        return built;
    };
    built.prims = order;
    flatten(&root, 0, &mut built.bvh_nodes, &mut built.stats);
    built.stats.nodes = built.bvh_nodes.len();
    built
}

fn bounds_of(items: &[Item]) -> (Aabb, Aabb) {
    items.iter().fold((Aabb::EMPTY, Aabb::EMPTY), |(b, c), i| {
        (b.union(i.bounds), c.grow(i.centroid))
    })
}

/// Builds the subtree over `items`, which start at `offset` in the final order.
fn split(items: &mut [Item], offset: usize, depth: usize, s: &BvhSettings) -> BvhBuildNode {
    let (bounds, centroids) = bounds_of(items);
    let n = items.len();
    let leaf = BvhBuildNode::Leaf {
        bounds,
        first: offset,
        count: n,
    };
    // Splits still possible below this node.
    let levels_left = MAX_DEPTH - 1 - depth;
    if n <= s.max_leaf || levels_left == 0 {
        return leaf;
    }
    // Halving by count from here on still ends in leaves of at most
    // MAX_FORCED_LEAF; a lopsided split might not.
    let must_halve = levels_left <= 32 && n > MAX_FORCED_LEAF << (levels_left - 1);
    let split_at = if must_halve {
        None
    } else {
        best_split(items, bounds, centroids, s)
    };
    let mid = match split_at {
        // Split when it beats testing every primitive, or the leaf would be huge.
        Some((axis, bin, cost)) if cost < n as f32 || n > MAX_FORCED_LEAF => {
            let k = bin_index(centroids, axis, s.bins);
            partition(items, |i| k(i.centroid) <= bin)
        }
        _ if n <= MAX_FORCED_LEAF => return leaf,
        // Too deep for anything else: halve by count along the longest axis.
        _ if must_halve => {
            let axis = centroids.longest_axis();
            items.select_nth_unstable_by(n / 2, |a, b| a.centroid[axis].total_cmp(&b.centroid[axis]));
            n / 2
        }
        // Centroids coincide: no plane separates them, so halve by count.
        _ => n / 2,
    };
    let mid = if mid == 0 || mid == n { n / 2 } else { mid };
    let (left, right) = items.split_at_mut(mid);
    let (a, b) = if n > PARALLEL_THRESHOLD {
        rayon::join(
            || split(left, offset, depth + 1, s),
            || split(right, offset + mid, depth + 1, s),
        )
    } else {
        (
            split(left, offset, depth + 1, s),
            split(right, offset + mid, depth + 1, s),
        )
    };
    BvhBuildNode::Interior {
        bounds,
        children: Box::new((a, b)),
    }
}

/// Maps a centroid to its bin along `axis`.
fn bin_index(centroids: Aabb, axis: usize, bins: usize) -> impl Fn(Vec3) -> usize {
    let lo = centroids.min[axis];
    let extent = centroids.extent()[axis];
    let scale = if extent > 0.0 { bins as f32 / extent } else { 0.0 };
    move |c: Vec3| (((c[axis] - lo) * scale) as usize).min(bins - 1)
}

/// The cheapest (axis, last bin on the left, SAH cost in units of one
/// primitive test), or `None` when no axis has any centroid spread.
fn best_split(items: &[Item], bounds: Aabb, centroids: Aabb, s: &BvhSettings) -> Option<(usize, usize, f32)> {
    let mut best: Option<(usize, usize, f32)> = None;
    let area = bounds.surface_area().max(f32::MIN_POSITIVE);
    for axis in 0..3 {
        if centroids.extent()[axis] <= 0.0 {
            continue;
        }
        let k = bin_index(centroids, axis, s.bins);
        let mut bin_bounds = vec![Aabb::EMPTY; s.bins];
        let mut bin_counts = vec![0usize; s.bins];
        for i in items {
            let b = k(i.centroid);
            bin_bounds[b] = bin_bounds[b].union(i.bounds);
            bin_counts[b] += 1;
        }
        // Sweep from the right to get suffix areas and counts.
        let mut right_area = vec![0.0f32; s.bins];
        let mut right_count = vec![0usize; s.bins];
        let (mut acc, mut cnt) = (Aabb::EMPTY, 0);
        for b in (1..s.bins).rev() {
            acc = acc.union(bin_bounds[b]);
            cnt += bin_counts[b];
            right_area[b] = acc.surface_area();
            right_count[b] = cnt;
        }
        let (mut acc, mut cnt) = (Aabb::EMPTY, 0);
        for b in 0..s.bins - 1 {
            acc = acc.union(bin_bounds[b]);
            cnt += bin_counts[b];
            if cnt == 0 || right_count[b + 1] == 0 {
                continue;
            }
            let cost = s.traversal_cost
                + (acc.surface_area() * cnt as f32 + right_area[b + 1] * right_count[b + 1] as f32) / area;
            if best.is_none_or(|(_, _, c)| cost < c) {
                best = Some((axis, b, cost));
            }
        }
    }
    best
}

/// Moves the items satisfying `left` to the front; returns how many there are.
fn partition(items: &mut [Item], left: impl Fn(&Item) -> bool) -> usize {
    let mut first = 0;
    for i in 0..items.len() {
        if left(&items[i]) {
            items.swap(first, i);
            first += 1;
        }
    }
    first
}

/// Appends the interior nodes of the tree under `node` depth-first (a
/// leaf root becomes a root with one used child); returns `node`'s index.
fn flatten(node: &BvhBuildNode, depth: usize, out: &mut Vec<BvhNode>, stats: &mut AccelStats) -> u32 {
    let at = out.len();
    out.push(BvhNode {
        bounds: [Aabb::EMPTY; 2],
        child: [0; 2],
        count: [0; 2],
    });
    let children = match node.children() {
        Some((a, b)) => [Some(a), Some(b)],
        None => [Some(node), None],
    };
    for (k, child) in children.into_iter().enumerate() {
        let Some(child) = child else { continue };
        let (index, count) = match child {
            BvhBuildNode::Leaf { first, count, .. } => {
                stats.leaves += 1;
                stats.max_depth = stats.max_depth.max(depth + usize::from(node.children().is_some()));
                (*first as u32, *count as u32)
            }
            BvhBuildNode::Interior { .. } => (flatten(child, depth + 1, out, stats), 0),
        };
        out[at].bounds[k] = child.bounds();
        out[at].child[k] = index;
        out[at].count[k] = count;
    }
    at as u32
}
