//! The machine a run happens on: host memory, provenance (commit, source
//! fingerprint, CPU, time), a sampling profile of the CPU, the embedded PTX modules, Ctrl-C/SIGTERM handling and the
//! temporary files an immediate exit must remove.
//!
//! Nothing here knows about scenes or back ends; every layer above may use
//! it.

pub mod cpu_profile;
pub mod fingerprint;
pub mod interrupt;
pub mod memory;
pub mod provenance;
pub mod ptx;
pub(crate) mod signal;
pub mod unfinished;
