//! wavepath's renderer: one image from a scene file, on any back end.
//!
//! In layers from the bottom up (each may use the ones below it, never one
//! above):
//!
//! - [`system`]: memory, source fingerprints, embedded PTX, interrupts, the
//!   CPU profiler;
//! - [`io`]: input files, atomic output files, images, CSV;
//! - [`settings`]: the domain's value types (back end, size, capacity,
//!   schedule, …), their parsers and every default, declared once;
//! - [`accel`]: acceleration structures built over primitives' bounds;
//!   [`scene`]: scene files to host geometry, naming the structure they
//!   want in `accel`'s terms;
//! - [`prepared`]: a scene with its structure, built once at load;
//! - [`backend`]: the CPU, megakernel, wavefront and emulated-wavefront
//!   back ends that schedule the shared device stages;
//! - [`render`]: one render from scene file to image, with `verify` and
//!   `ray_throughput` (the `raycast` command's rays per second) built on it.
//!
//! The render code itself lives in the `device` crate, which the same source
//! builds for the CPU and, through this crate's `build.rs`, to PTX.

#![warn(missing_docs)]

pub mod accel;
pub mod backend;
pub mod io;
pub mod prepared;
pub mod render;
pub mod scene;
pub mod settings;
pub mod system;
