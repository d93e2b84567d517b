//! What the size of a device allocation follows, shared by every machine
//! that allocates (the GPU, the wavefront's emulator) so that an
//! out-of-memory error can say which setting to shrink.

/// What the size of a device allocation follows: the setting to shrink
/// when it does not fit, named in the out-of-memory error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizedBy {
    /// The image (film: 24 bytes per pixel).
    Image,
    /// The wavefront's path pool and queues (`--capacity`).
    PathPool,
    /// The scene's geometry and acceleration structure.
    Scene,
    /// A ray-casting batch (`raycast --count`).
    Rays,
    /// A small, fixed size: the GPU is all but full.
    Fixed,
}

impl SizedBy {
    /// What to change so that it fits.
    pub fn suggestion(self) -> &'static str {
        match self {
            SizedBy::Image => "render a smaller image (--size WIDTHxHEIGHT), or on the CPU (the `cpu` back end)",
            SizedBy::PathPool => {
                "give the wavefront a smaller path pool (--capacity: a smaller budget such as 256MiB, a \
                 smaller power of two, or `auto`, which fits the pool to free memory)"
            }
            SizedBy::Scene => {
                "the scene does not fit on this GPU: simplify it, or render it on the CPU (the `cpu` back end)"
            }
            SizedBy::Rays => "cast fewer rays at once (raycast --count)",
            SizedBy::Fixed => {
                "the GPU is all but full: free memory held by other processes (`nvidia-smi` lists them), \
                 or shrink the large buffers (--size, and --capacity for gpu-wave)"
            }
        }
    }
}
