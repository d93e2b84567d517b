//! The kernel interface: names and argument types shared by the host driver
//! and the NVPTX entry points. Everything here is `#[repr(C)]` and laid out
//! identically on x86-64 and NVPTX64 (checked by the size asserts below,
//! which both targets compile).

use crate::camera::Camera;
use crate::film::FixedRgb;
use crate::integrator::SampleRange;
use crate::scene::{Background, RenderParams, SceneView};

/// Entry-point name of the megakernel.
pub const MEGAKERNEL: &str = "megakernel";

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
    assert!(size_of::<SceneView<'static>>() == 200);
    assert!(size_of::<FixedRgb>() == 24);
    assert!(size_of::<LaunchCounters>() == 16);
};
