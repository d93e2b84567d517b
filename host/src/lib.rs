//! wavepath: a GPU path-tracing research engine.
//!
//! The host side, in layers from the bottom up (each may use the ones
//! below it, never one above):
//!
//! - [`system`]: memory, provenance, embedded PTX, interrupts;
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
//!   `ray_throughput` (the `raycast` command's rays per second) built on it;
//! - [`experiment`]: configs of studies, the runner, records, `bench` and
//!   reports;
//! - `cluster` (with `--features mpi`): `render` and `experiment` over the
//!   ranks of an MPI launch;
//! - [`cli`]: the clap definitions, mapped onto settings;
//!   [`commands`]: one thin `run` per subcommand.
//!
//! The render code itself lives in the `device` crate, which the same source
//! builds for the CPU and, through `build.rs`, to PTX.

#![warn(missing_docs)]

pub mod accel;
pub mod backend;
pub mod cli;
#[cfg(feature = "mpi")]
pub mod cluster;
pub mod commands;
pub mod experiment;
pub mod io;
pub mod prepared;
pub mod render;
pub mod scene;
pub mod settings;
pub mod system;
