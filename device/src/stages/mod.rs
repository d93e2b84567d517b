//! The path-tracing stages, one pure function each over one path. Nothing
//! here knows which back end calls it: the CPU back ends and the megakernel
//! run them in a loop per path ([`crate::integrator`]); the wavefront back end
//! runs each as its own kernel over a queue of paths.

pub mod extend;
pub mod generate;
pub mod shade;
pub mod shadow;

use crate::geometry::PrimRef;
use crate::math::{Ray, Rgb};
use crate::rng::PathRng;

/// The state of one path between stages.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathState {
    /// The segment to trace next.
    pub ray: Ray,
    /// Product of the path weights so far. (The light a path finds goes
    /// to its pixel as soon as it is found, so a path carries no radiance.)
    pub throughput: Rgb,
    /// The path's random stream.
    pub rng: PathRng,
    /// Linear pixel index (`y * width + x`).
    pub pixel: u32,
    /// Segments traced before the current one.
    pub bounce: u32,
    /// Density with which the last scattering chose the current ray, for
    /// the weight of the light it finds against next-event estimation; 0
    /// when nothing else could have found that light (the camera ray, a
    /// mirror, glass, or next-event estimation off).
    pub bsdf_pdf: f32,
}

/// A shadow ray of next-event estimation: the light's contribution to a
/// pixel, added if nothing blocks the segment.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShadowRay {
    /// From the shaded point towards the point on the light.
    pub ray: Ray,
    /// Where the segment ends: at the point on the light.
    pub t_max: f32,
    /// The light's primitive, which does not block its own shadow ray
    /// (so the segment can reach it without an epsilon: a shortened one
    /// lets light leak through surfaces just in front of it, such as
    /// smallpt's ceiling, which its light pokes through by 0.27 units).
    pub light: PrimRef,
    /// Radiance to add to the pixel if the segment is unblocked.
    pub contribution: Rgb,
    /// Linear pixel index.
    pub pixel: u32,
}

/// Whether a path goes on after a stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathStatus {
    /// Trace `ray` next.
    Continue,
    /// The path's radiance is final.
    Finished,
}
