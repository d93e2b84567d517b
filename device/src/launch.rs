//! The kernel interface: names and argument types shared by the host driver
//! and the NVPTX entry points. Everything here is `#[repr(C)]` and laid out
//! identically on x86-64 and NVPTX64 (checked by the size asserts below,
//! which both targets compile).

use crate::accel::{AccelKind, AccelView};
use crate::camera::Camera;
use crate::film::FixedRgb;
use crate::integrator::SampleRange;
use crate::scene::{Background, RenderParams, SceneView};

/// Entry-point name of the megakernel compiled for the structure `kind`.
pub fn megakernel_name(kind: AccelKind) -> &'static str {
    match kind {
        AccelKind::None => "megakernel_brute",
        AccelKind::Bvh => "megakernel_bvh",
        AccelKind::KdTree => "megakernel_kdtree",
    }
}

/// A rectangle of the image covered by one launch.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    /// Left column.
    pub x0: u32,
    /// Top row.
    pub y0: u32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// Counters a launch adds to with atomics.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchCounters {
    /// Ray segments traced.
    pub rays: u64,
    /// Samples dropped for being NaN or infinite.
    pub invalid_samples: u64,
}

// Kernel arguments cross the host/device boundary by value: their layout
// must not depend on the target.
const _: () = {
    use core::mem::size_of;
    assert!(size_of::<Tile>() == 16);
    assert!(size_of::<SampleRange>() == 8);
    assert!(size_of::<RenderParams>() == 24);
    assert!(size_of::<Camera>() == 76);
    assert!(size_of::<Background>() == 28);
    assert!(size_of::<AccelView<'static>>() == 80);
    assert!(size_of::<SceneView<'static>>() == 280);
    assert!(size_of::<FixedRgb>() == 24);
    assert!(size_of::<LaunchCounters>() == 16);
};

/// Entry-point name of the ray-casting kernel (closest hit for a ray
/// buffer) compiled for the structure `kind`.
pub fn raycast_name(kind: AccelKind) -> &'static str {
    match kind {
        AccelKind::None => "raycast_brute",
        AccelKind::Bvh => "raycast_bvh",
        AccelKind::KdTree => "raycast_kdtree",
    }
}

/// The closest hit of one ray, compactly: what the ray-casting kernel writes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RayHit {
    /// Hit distance as f32 bits (`f32::INFINITY` bits for a miss).
    pub t_bits: u32,
    /// The primitive hit (`RayHit::MISS` for none).
    pub prim: u32,
}

impl RayHit {
    /// `prim` of a ray that hit nothing.
    pub const MISS: u32 = u32::MAX;

    /// The compact form of a closest-hit result.
    #[inline(always)]
    pub fn from_hit(hit: Option<&crate::geometry::Hit>) -> Self {
        match hit {
            Some(h) => RayHit {
                t_bits: h.t.to_bits(),
                prim: h.prim.raw(),
            },
            None => RayHit {
                t_bits: f32::INFINITY.to_bits(),
                prim: Self::MISS,
            },
        }
    }
}

const _: () = assert!(core::mem::size_of::<RayHit>() == 8);
const _: () = assert!(core::mem::size_of::<crate::math::Ray>() == 24);

/// How surviving paths are gathered into the next ray queue.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compaction {
    /// Each shading kernel appends its survivors with warp-aggregated atomics
    /// (the queue order changes from run to run; the image does not).
    AtomicAppend = 0,
    /// Shading kernels set a flag per ray-queue position; three scan kernels
    /// compute a prefix sum and scatter survivors in their previous order.
    PrefixSum = 1,
}

/// Entry-point name of the wavefront's extend kernel for the structure `kind`.
pub fn extend_name(kind: AccelKind) -> &'static str {
    match kind {
        AccelKind::None => "wf_extend_brute",
        AccelKind::Bvh => "wf_extend_bvh",
        AccelKind::KdTree => "wf_extend_kdtree",
    }
}

/// Entry-point name of the wavefront's tail-drain kernel for the structure `kind`.
pub fn drain_name(kind: AccelKind) -> &'static str {
    match kind {
        AccelKind::None => "wf_drain_brute",
        AccelKind::Bvh => "wf_drain_bvh",
        AccelKind::KdTree => "wf_drain_kdtree",
    }
}

/// Entry-point name of the wavefront's shading kernel for `class`.
pub fn shade_name(class: crate::observe::ShadeClass) -> &'static str {
    use crate::observe::ShadeClass;
    match class {
        ShadeClass::Diffuse => "wf_shade_diffuse",
        ShadeClass::Metal => "wf_shade_metal",
        ShadeClass::Dielectric => "wf_shade_dielectric",
        ShadeClass::Emissive => "wf_shade_emissive",
        ShadeClass::Escaped => "wf_shade_escaped",
    }
}

/// The wavefront's generate kernel.
pub const GENERATE: &str = "wf_generate";
/// Prefix-sum compaction, step 1: per-warp and per-block counts.
pub const SCAN_COUNT: &str = "wf_scan_count";
/// Prefix-sum compaction, step 2: block offsets (one block).
pub const SCAN_BLOCKS: &str = "wf_scan_blocks";
/// Prefix-sum compaction, step 3: scatter survivors and freed slots.
pub const SCAN_SCATTER: &str = "wf_scan_scatter";

const _: () = assert!(core::mem::size_of::<crate::queue::Queues>() == 104);
const _: () = assert!(core::mem::size_of::<crate::queue::PathPool>() == 13 * 8);

/// Every kernel entry point of the module, for listings and checks.
pub fn all_kernel_names() -> impl Iterator<Item = &'static str> {
    use crate::observe::ShadeClass;
    let kinds = [AccelKind::None, AccelKind::Bvh, AccelKind::KdTree];
    let classes = ShadeClass::ALL;
    kinds
        .into_iter()
        .flat_map(|k| [megakernel_name(k), raycast_name(k), extend_name(k), drain_name(k)])
        .chain(classes.into_iter().map(shade_name))
        .chain([GENERATE, SCAN_COUNT, SCAN_BLOCKS, SCAN_SCATTER])
}
