//! The path-tracing stages, one pure function each over one path. Nothing
//! here knows which back end calls it: the CPU back ends and the megakernel
//! run them in a loop per path ([`crate::integrator`]); the wavefront back end
//! runs each as its own kernel over a queue of paths.

pub mod extend;
pub mod generate;
pub mod shade;

use crate::math::{Ray, Rgb};
use crate::rng::PathRng;

/// The state of one path between stages.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathState {
    /// The segment to trace next.
    pub ray: Ray,
    /// Product of the path weights so far.
    pub throughput: Rgb,
    /// Radiance gathered so far.
    pub radiance: Rgb,
    /// The path's random stream.
    pub rng: PathRng,
    /// Linear pixel index (`y * width + x`).
    pub pixel: u32,
    /// Segments traced before the current one.
    pub bounce: u32,
}

/// Whether a path goes on after a stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathStatus {
    /// Trace `ray` next.
    Continue,
    /// The path's radiance is final.
    Finished,
}
