//! wavepath: a GPU path-tracing research engine.
//!
//! The host side: scene loading ([`scene`]), the back ends that schedule the
//! shared device stages ([`backend`]), image output ([`image_out`]) and the
//! command line ([`cli`]). The render code itself lives in the `device`
//! crate, which the same source builds for the CPU and, through `build.rs`,
//! to PTX.

#![warn(missing_docs)]

pub mod accel;
pub mod atomic_file;
pub mod backend;
pub mod bench;
pub mod cli;
pub mod experiment;
pub mod image_out;
pub mod input_file;
pub mod interrupt;
pub mod memory;
pub mod provenance;
pub mod ptx;
pub mod raycast;
pub mod render;
pub mod report;
pub mod scene;
pub mod verify;
