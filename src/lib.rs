//! wavepath: a GPU path-tracing research engine. This crate is its command
//! line; the work is done by the crates below it, each depending only on
//! those before it:
//!
//! - `device`: the render code, `no_std`, built for the CPU and to PTX;
//! - [`renderer`]: scenes, acceleration structures, the back ends and one
//!   render end to end;
//! - [`lab`]: experiment configs, plans, the runner and its records, and
//!   MPI;
//! - [`report`]: tables, figures and the summary from experiment folders;
//! - here, [`cli`]: the clap definitions, mapped onto settings, and
//!   [`commands`]: one thin `run` per subcommand.

#![warn(missing_docs)]

pub mod cli;
pub mod commands;

use renderer::system::provenance::Build;

/// The build this binary is: its commit, the fingerprint of its measured
/// source (both stamped by `build.rs`) and its version, on every record it
/// writes.
pub const BUILD: Build = Build {
    commit: env!("WAVEPATH_COMMIT"),
    source: env!("WAVEPATH_SOURCE"),
    version: env!("CARGO_PKG_VERSION"),
};
