//! What a split render produced ([`SplitOutput`]): the merged render, and
//! each device's share of it and where its time went.

use super::join_rule::Join;
use crate::backend::RenderOutput;
use std::time::Duration;

/// One device's part of a split render.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceShare {
    /// The device, e.g. "GPU 1 (NVIDIA H100 80GB HBM3)".
    pub device: String,
    /// Chunks it rendered.
    pub chunks: u32,
    /// Samples per pixel it rendered.
    pub spp: u32,
    /// Ray segments it traced.
    pub rays: u64,
    /// Time it spent in its chunks' renders.
    pub busy: Duration,
    /// Where the rest of its time went, for a device of this process's
    /// split (`None` for an MPI rank's share, whose parts are its own).
    pub times: Option<ShareTimes>,
}

/// Where one device's time in a split went, besides its chunks' renders.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ShareTimes {
    /// Before it could render: binding its context to its worker thread,
    /// uploading the scene (nothing when it was uploaded before the split)
    /// and allocating its film (and the wavefront's path pool).
    pub setup: Duration,
    /// Its first chunk (part of `busy`): one sample while no device's
    /// speed is known.
    pub first_chunk: Duration,
    /// Reading its sum back to the host, once, after its last chunk.
    pub readback: Duration,
    /// From the end of its readback to the end of the last device's:
    /// idle while the others finish.
    pub idle: Duration,
    /// Set when it stayed out of the render: what it would have saved
    /// against what it would have cost ([`Join`]).
    pub left_out: Option<Join>,
}

/// What a render on one or several devices produced.
#[derive(Clone, Debug)]
pub struct SplitOutput {
    /// The merged render. Split over several devices, its `elapsed` is the
    /// split's wall time (from the first chunk to the merge, the scene's
    /// uploads included unless they were made before: [`super::render`]'s `uploads`)
    /// and it has no GPU profile.
    pub output: RenderOutput,
    /// Each device's part, in the order of the devices (empty for a
    /// render on one device).
    pub shares: Vec<DeviceShare>,
    /// Adding the devices' sums into one film, after the last device is
    /// done (zero for a render on one device).
    pub merge: Duration,
}

impl SplitOutput {
    /// A render on one device: no shares, no merge.
    pub fn alone(output: RenderOutput) -> Self {
        SplitOutput {
            output,
            shares: Vec::new(),
            merge: Duration::ZERO,
        }
    }
}
