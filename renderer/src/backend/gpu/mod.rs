//! The GPU back ends, through the CUDA driver API (`cudarc`, with libcuda
//! loaded at run time: the binary builds and runs without CUDA, and a missing
//! driver is an error, not a crash).
//!
//! The modules, bottom up; each uses only those listed before it:
//!
//! * [`launch_site`]: a kernel launch as errors name it;
//! * [`error`]: [`GpuError`], every failure of a GPU back end, and the
//!   messages that say what to change;
//! * [`in_flight`]: which launches are in flight, so that a kernel fault
//!   names its kernel;
//! * [`device`]: opening a GPU, loading the embedded PTX that fits it, and
//!   the calls that wait for it;
//! * [`profile`]: per-launch timing records, kernel resource figures and
//!   the profile computed from them;
//! * [`buffers`]: the scene in device memory (every allocation, checked
//!   against free memory first);
//! * [`timeline`]: the one place kernels are launched
//!   ([`timeline::Timeline`]), each timed and recorded;
//! * [`fault`]: a test hook that provokes a kernel fault;
//! * [`mega_launch`]: the `gpu-mega` back end (one thread per pixel, whole paths);
//! * [`raycast_launch`]: the traversal-only kernel over a ray buffer;
//! * [`wave_launch`]: the `gpu-wave` back end (the machine-neutral
//!   [`crate::backend::wave_driver`] driver on a GPU).
//!
//! No failure touches the CPU back ends, which keep working in the same
//! process (after a kernel fault, too: that loses the CUDA context, not the
//! process).

pub mod buffers;
pub mod device;
pub mod error;
pub mod fault;
pub mod in_flight;
pub mod launch_site;
pub mod mega_launch;
pub mod profile;
pub mod raycast_launch;
pub mod timeline;
pub mod wave_launch;

pub use device::{Gpu, GpuInfo};
pub use error::GpuError;
pub use launch_site::LaunchSite;
