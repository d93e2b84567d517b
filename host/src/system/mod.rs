//! The machine a run happens on: host memory, provenance (commit, CPU,
//! time), the embedded PTX modules, and Ctrl-C/SIGTERM handling.
//!
//! Nothing here knows about scenes or back ends; every layer above may use
//! it.

pub mod interrupt;
pub mod memory;
pub mod provenance;
pub mod ptx;
