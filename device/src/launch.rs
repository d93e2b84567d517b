//! Values that cross between the host and the kernels besides the argument
//! structs themselves (which live beside their kernels, with their own size
//! asserts). Everything here is `#[repr(C)]` and laid out identically on
//! x86-64 and NVPTX64 (checked by the size asserts below, which both targets
//! compile).

use crate::accel::AccelView;
use crate::camera::Camera;
use crate::film::FixedRgb;
use crate::integrator::SampleRange;
use crate::kernel::Plain;
use crate::scene::{Background, RenderParams, SceneView};

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
    assert!(size_of::<RenderParams>() == 32);
    assert!(size_of::<Camera>() == 80);
    assert!(size_of::<Background>() == 28);
    assert!(size_of::<AccelView<'static>>() == 96);
    assert!(size_of::<crate::light::LightView<'static>>() == 40);
    assert!(size_of::<SceneView<'static>>() == 392);
    assert!(size_of::<FixedRgb>() == 24);
    assert!(size_of::<LaunchCounters>() == 16);
};

// SAFETY: `#[repr(C)]` structs of integers with no padding (sizes above).
unsafe impl Plain for LaunchCounters {}
// SAFETY: as above.
unsafe impl Plain for FixedRgb {}
// SAFETY: as above (two u32).
unsafe impl Plain for RayHit {}

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

/// Whether the wavefront sorts the queue of [`crate::shading::SORTED_CLASS`]
/// by variant before shading it, so that each warp runs one variant's
/// program (Cycles sorts its paths by shader for the same reason).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaterialSort {
    /// Shade in the order the extend kernel queued the paths.
    Off = 0,
    /// A counting sort by variant first.
    ByVariant = 1,
}

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
