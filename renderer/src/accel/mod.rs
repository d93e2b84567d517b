//! Acceleration-structure builders (host side). Traversal lives in
//! `device::accel`, shared by every back end.
//!
//! [`build`] turns a list of primitive references with their bounds into the
//! flat arrays the device reads, and reports build time and memory
//! ([`AccelStats`]). This module knows nothing of scenes: the scene lists
//! its primitives (`scene::Geometry::primitives`, using [`bounds`]) and
//! states what to build in this module's terms ([`AccelSettings`]);
//! `prepared::PreparedScene` calls [`build`], once per loaded scene.

pub mod bounds;
pub mod bvh;
pub mod bvh8;
pub mod kdtree;

use device::accel::{AccelKind, Bvh8Node, BvhNode, KdNode};
use device::geometry::{Aabb, PrimRef};
use std::time::Instant;

pub use bvh::BvhSettings;
pub use kdtree::KdSettings;

/// The structure to build, as scene files and the command line name it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum AccelChoice {
    /// Brute force: no structure.
    None,
    /// Binned-SAH bounding volume hierarchy.
    Bvh,
    /// SAH kd-tree.
    Kdtree,
    /// Compressed 8-wide BVH, collapsed from the binned-SAH BVH.
    Bvh8,
    /// Brute force for at most 32 primitives, where a structure costs more
    /// than it saves; the BVH above. The default.
    #[default]
    Auto,
}

/// The most primitives `auto` traces by brute force. On an H100 the
/// megakernel renders parallel RTIOW's 20-sphere scene in 2.74 ms by brute
/// force against 3.57 ms with the BVH, and the 67-sphere one in 6.12 ms
/// against 5.52 ms (`results/rtiow_parallel/`, study `objects`).
pub const AUTO_BRUTE_FORCE_MAX: usize = 32;
const _: () = assert!(
    AUTO_BRUTE_FORCE_MAX == 32,
    "the doc of `AccelChoice::Auto` gives the number"
);

impl AccelChoice {
    /// The name in reports.
    pub fn label(self) -> &'static str {
        match self {
            AccelChoice::None => "none",
            AccelChoice::Bvh => "bvh",
            AccelChoice::Kdtree => "kdtree",
            AccelChoice::Bvh8 => "bvh8",
            AccelChoice::Auto => "auto",
        }
    }

    /// The structure to build for `primitives` primitives (`auto` picks).
    pub fn resolve(self, primitives: usize) -> AccelKind {
        match self {
            AccelChoice::None => AccelKind::None,
            AccelChoice::Bvh => AccelKind::Bvh,
            AccelChoice::Kdtree => AccelKind::KdTree,
            AccelChoice::Bvh8 => AccelKind::Bvh8,
            AccelChoice::Auto if primitives <= AUTO_BRUTE_FORCE_MAX => AccelKind::None,
            AccelChoice::Auto => AccelKind::Bvh,
        }
    }

    /// The name in reports of what was built: `auto` adds its pick, e.g.
    /// `auto (none)`.
    pub fn label_built(self, built: AccelKind) -> String {
        match self {
            AccelChoice::Auto => format!("auto ({})", kind_label(built)),
            _ => self.label().into(),
        }
    }
}

/// The name of a built structure.
pub fn kind_label(kind: AccelKind) -> &'static str {
    match kind {
        AccelKind::None => "none",
        AccelKind::Bvh => "bvh",
        AccelKind::KdTree => "kdtree",
        AccelKind::Bvh8 => "bvh8",
    }
}

/// What to build and how.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AccelSettings {
    /// Which structure.
    pub choice: AccelChoice,
    /// BVH build parameters.
    pub bvh: BvhSettings,
    /// kd-tree build parameters.
    pub kd: KdSettings,
}

/// Build figures for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AccelStats {
    /// Wall time of the build, ms.
    pub build_ms: f64,
    /// Nodes in the flat array.
    pub nodes: usize,
    /// Leaves among them.
    pub leaves: usize,
    /// Depth of the deepest leaf (root = 0).
    pub max_depth: usize,
    /// Primitive references in leaves (a kd-tree may list a primitive twice).
    pub prim_refs: usize,
    /// Bytes of nodes plus references.
    pub bytes: usize,
}

/// A built structure: the arrays `device::accel::AccelView` points to.
#[derive(Clone, Debug)]
pub struct BuiltAccel {
    /// Which structure.
    pub kind: AccelKind,
    /// BVH nodes (empty unless `kind` is `Bvh`).
    pub bvh_nodes: Vec<BvhNode>,
    /// kd-tree nodes (empty unless `kind` is `KdTree`).
    pub kd_nodes: Vec<KdNode>,
    /// 8-wide BVH nodes (empty unless `kind` is `Bvh8`).
    pub bvh8_nodes: Vec<Bvh8Node>,
    /// References the leaves index into.
    pub prims: Vec<PrimRef>,
    /// Bounds of the whole scene.
    pub bounds: Aabb,
    /// Build figures.
    pub stats: AccelStats,
}

impl BuiltAccel {
    /// No nodes and no references yet.
    pub fn empty(kind: AccelKind) -> Self {
        BuiltAccel {
            kind,
            bvh_nodes: Vec::new(),
            kd_nodes: Vec::new(),
            bvh8_nodes: Vec::new(),
            prims: Vec::new(),
            bounds: Aabb::EMPTY,
            stats: AccelStats::default(),
        }
    }

    /// A summary for the render line, e.g. "bvh: 977 nodes, depth 14, 31 KiB, built in 0.4 ms".
    pub fn describe(&self) -> String {
        if self.kind == AccelKind::None {
            return "no acceleration structure".into();
        }
        let name = kind_label(self.kind);
        let s = &self.stats;
        format!(
            "{name}: {} nodes, {} leaves, depth {}, {} refs, {:.1} KiB, built in {:.1} ms",
            s.nodes,
            s.leaves,
            s.max_depth,
            s.prim_refs,
            s.bytes as f64 / 1024.0,
            s.build_ms
        )
    }
}

/// Builds the structure `settings` asks for over `prims`, each primitive
/// with its padded bounds ([`bounds`]). The build time covers the whole
/// build from that list.
pub fn build(prims: &[(PrimRef, Aabb)], settings: &AccelSettings) -> BuiltAccel {
    let start = Instant::now();
    let bounds = prims.iter().fold(Aabb::EMPTY, |b, (_, pb)| b.union(*pb));
    let mut built = match settings.choice.resolve(prims.len()) {
        AccelKind::None => BuiltAccel::empty(AccelKind::None),
        AccelKind::Bvh => bvh::build(prims, &settings.bvh),
        AccelKind::KdTree => kdtree::build(prims, bounds, &settings.kd),
        AccelKind::Bvh8 => bvh8::build(prims, &settings.bvh),
    };
    built.bounds = bounds;
    built.stats.build_ms = start.elapsed().as_secs_f64() * 1e3;
    built.stats.prim_refs = built.prims.len();
    built.stats.bytes = built.bvh_nodes.len() * size_of::<BvhNode>()
        + built.kd_nodes.len() * size_of::<KdNode>()
        + built.bvh8_nodes.len() * size_of::<Bvh8Node>()
        + built.prims.len() * size_of::<PrimRef>();
    built
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_traces_small_scenes_by_brute_force_and_larger_ones_with_the_bvh() {
        assert_eq!(AccelChoice::Auto.resolve(9), AccelKind::None);
        assert_eq!(AccelChoice::Auto.resolve(AUTO_BRUTE_FORCE_MAX), AccelKind::None);
        assert_eq!(AccelChoice::Auto.resolve(AUTO_BRUTE_FORCE_MAX + 1), AccelKind::Bvh);
        assert_eq!(AccelChoice::Kdtree.resolve(3), AccelKind::KdTree);
        assert_eq!(AccelChoice::Auto.label_built(AccelKind::None), "auto (none)");
        assert_eq!(AccelChoice::Bvh.label_built(AccelKind::Bvh), "bvh");
    }
}
