//! SAH kd-tree construction as in the CS500 report and pbrt-v3: at each cell,
//! every primitive-bound plane on every axis is a candidate split, costed by
//! `traversal + intersection · (1 − empty bonus) · (P_below·N_below +
//! P_above·N_above)` with user-set costs. A primitive touching the plane goes
//! to both children, so rays running in the plane miss nothing.

use super::BuiltAccel;
use device::accel::kdtree::MAX_DEPTH;
use device::accel::{AccelKind, KdNode};
use device::geometry::{Aabb, PrimRef};

/// kd-tree build parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KdSettings {
    /// Cost of a traversal step.
    pub traversal_cost: f32,
    /// Cost of a primitive test.
    pub intersection_cost: f32,
    /// Discount (0–1) for a split that leaves one side empty.
    pub empty_bonus: f32,
    /// Cells with at most this many primitives become leaves.
    pub max_leaf: usize,
    /// Depth limit; `None` uses pbrt's `8 + 1.3 log2 N`.
    pub max_depth: Option<usize>,
}

impl Default for KdSettings {
    fn default() -> Self {
        // pbrt-v3's defaults.
        KdSettings {
            traversal_cost: 1.0,
            intersection_cost: 80.0,
            empty_bonus: 0.5,
            max_leaf: 1,
            max_depth: None,
        }
    }
}

/// Cells with more primitives than this build their children in parallel.
const PARALLEL_THRESHOLD: usize = 2048;

enum KdBuildNode {
    Leaf(Vec<u32>),
    Interior {
        axis: u32,
        position: f32,
        children: Box<(KdBuildNode, KdBuildNode)>,
    },
}

/// Builds a kd-tree over `prims` inside `bounds`.
pub fn build(prims: &[(PrimRef, Aabb)], bounds: Aabb, settings: &KdSettings) -> BuiltAccel {
    let mut built = BuiltAccel::empty(AccelKind::KdTree);
    if prims.is_empty() {
        return built;
    }
    let auto_depth = (8.0 + 1.3 * (prims.len() as f64).log2()).round() as usize;
    let max_depth = settings.max_depth.unwrap_or(auto_depth).min(MAX_DEPTH - 1);
    let ids = (0..prims.len() as u32).collect();
    let root = split(prims, ids, bounds, max_depth, 0, settings);
    flatten(prims, &root, 0, &mut built);
    built.stats.nodes = built.kd_nodes.len();
    built
}

/// The best plane for a cell: (axis, position, cost), if any lies inside it.
fn best_plane(prims: &[(PrimRef, Aabb)], ids: &[u32], cell: Aabb, s: &KdSettings) -> Option<(usize, f32, f32)> {
    let n = ids.len();
    let inv_area = 1.0 / cell.surface_area();
    let extent = cell.extent();
    let mut best: Option<(usize, f32, f32)> = None;
    for axis in 0..3 {
        let mut mins: Vec<f32> = ids.iter().map(|&i| prims[i as usize].1.min[axis]).collect();
        let mut maxs: Vec<f32> = ids.iter().map(|&i| prims[i as usize].1.max[axis]).collect();
        mins.sort_unstable_by(f32::total_cmp);
        maxs.sort_unstable_by(f32::total_cmp);
        let mut planes: Vec<f32> = mins.iter().chain(&maxs).copied().collect();
        planes.sort_unstable_by(f32::total_cmp);
        planes.dedup();
        let (o1, o2) = ((axis + 1) % 3, (axis + 2) % 3);
        let cap = extent[o1] * extent[o2];
        let ring = extent[o1] + extent[o2];
        let (mut below, mut ended) = (0usize, 0usize);
        for &t in &planes {
            while below < n && mins[below] <= t {
                below += 1;
            }
            while ended < n && maxs[ended] < t {
                ended += 1;
            }
            if t <= cell.min[axis] || t >= cell.max[axis] {
                continue;
            }
            let above = n - ended;
            let area_below = 2.0 * (cap + (t - cell.min[axis]) * ring);
            let area_above = 2.0 * (cap + (cell.max[axis] - t) * ring);
            let bonus = if below == 0 || above == 0 { s.empty_bonus } else { 0.0 };
            let cost = s.traversal_cost
                + s.intersection_cost
                    * (1.0 - bonus)
                    * (area_below * inv_area * below as f32 + area_above * inv_area * above as f32);
            if best.is_none_or(|(_, _, c)| cost < c) {
                best = Some((axis, t, cost));
            }
        }
    }
    best
}

fn split(
    prims: &[(PrimRef, Aabb)],
    ids: Vec<u32>,
    cell: Aabb,
    depth_left: usize,
    bad: u32,
    s: &KdSettings,
) -> KdBuildNode {
    let n = ids.len();
    if n <= s.max_leaf || depth_left == 0 {
        return KdBuildNode::Leaf(ids);
    }
    let Some((axis, position, cost)) = best_plane(prims, &ids, cell, s) else {
        return KdBuildNode::Leaf(ids);
    };
    let leaf_cost = s.intersection_cost * n as f32;
    let bad = if cost > leaf_cost { bad + 1 } else { bad };
    if (cost > 4.0 * leaf_cost && n < 16) || bad == 3 {
        return KdBuildNode::Leaf(ids);
    }
    let below: Vec<u32> = ids
        .iter()
        .copied()
        .filter(|&i| prims[i as usize].1.min[axis] <= position)
        .collect();
    let above: Vec<u32> = ids
        .iter()
        .copied()
        .filter(|&i| prims[i as usize].1.max[axis] >= position)
        .collect();
    let (mut cell_below, mut cell_above) = (cell, cell);
    match axis {
        0 => (cell_below.max.x, cell_above.min.x) = (position, position),
        1 => (cell_below.max.y, cell_above.min.y) = (position, position),
        _ => (cell_below.max.z, cell_above.min.z) = (position, position),
    }
    let d = depth_left - 1;
    let (b, a) = if n > PARALLEL_THRESHOLD {
        rayon::join(
            || split(prims, below, cell_below, d, bad, s),
            || split(prims, above, cell_above, d, bad, s),
        )
    } else {
        (
            split(prims, below, cell_below, d, bad, s),
            split(prims, above, cell_above, d, bad, s),
        )
    };
    KdBuildNode::Interior {
        axis: axis as u32,
        position,
        children: Box::new((b, a)),
    }
}

/// Appends `node` depth-first (the below child right after its parent).
fn flatten(prims: &[(PrimRef, Aabb)], node: &KdBuildNode, depth: usize, out: &mut BuiltAccel) {
    out.stats.max_depth = out.stats.max_depth.max(depth);
    match node {
        KdBuildNode::Leaf(ids) => {
            out.stats.leaves += 1;
            out.kd_nodes
                .push(KdNode::leaf(out.prims.len() as u32, ids.len() as u32));
            out.prims.extend(ids.iter().map(|&i| prims[i as usize].0));
        }
        KdBuildNode::Interior {
            axis,
            position,
            children,
        } => {
            let at = out.kd_nodes.len();
            out.kd_nodes.push(KdNode::leaf(0, 0)); // placeholder until the above child's index is known
            flatten(prims, &children.0, depth + 1, out);
            out.kd_nodes[at] = KdNode::interior(*axis, *position, out.kd_nodes.len() as u32);
            flatten(prims, &children.1, depth + 1, out);
        }
    }
}
