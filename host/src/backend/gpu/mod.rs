//! The GPU back ends, through the CUDA driver API (`cudarc`, with libcuda
//! loaded at run time: the binary builds and runs without CUDA, and a missing
//! driver is an error, not a crash).
//!
//! * [`device`]: opening a GPU and loading the embedded PTX that fits it;
//! * [`buffers`]: the scene in device memory (every allocation, checked
//!   against free memory first);
//! * [`fault`]: which launches are in flight, so that a kernel fault names
//!   its kernel, and a test hook that provokes one;
//! * [`megakernel`]: the `gpu-mega` back end (one thread per pixel, whole paths);
//! * [`profile`]: per-launch timing records and kernel resource figures;
//! * [`raycast`]: the traversal-only kernel over a ray buffer;
//! * [`wavefront`]: the `gpu-wave` back end (generate, extend, shade, compact
//!   over queues, the host running the bounce loop).
//!
//! Every failure is a [`GpuError`]; none of them touches the CPU back ends,
//! which keep working in the same process (after a kernel fault, too: that
//! loses the CUDA context, not the process).

pub mod buffers;
pub mod device;
pub mod fault;
pub mod megakernel;
pub mod profile;
pub mod raycast;
pub mod wavefront;

pub use device::{Gpu, GpuInfo};
pub use fault::LaunchSite;

use cudarc::driver::DriverError;
use cudarc::driver::sys::cudaError_enum as Code;

/// What is left after a kernel fault.
const CONTEXT_LOST: &str = "GPU work needs a new process (the CPU back ends still work in this one)";

/// Why a GPU back end could not run.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// libcuda is not there.
    #[error(
        "no CUDA driver: libcuda.so could not be loaded; install the NVIDIA driver \
         (or add its folder to LD_LIBRARY_PATH)"
    )]
    NoDriver,
    /// The driver sees no device, or not the one asked for.
    #[error("no CUDA device is available ({0}); check `nvidia-smi` and CUDA_VISIBLE_DEVICES")]
    NoDevice(String),
    /// Every embedded PTX module targets a newer architecture than the GPU.
    #[error(
        "{name} has compute capability {major}.{minor} (sm_{major}{minor}), older than every PTX \
         module embedded in this binary ({}): the driver compiles PTX forward to newer GPUs, \
         never back; rebuild for it with `WAVEPATH_CUDA_ARCHS=sm_{major}{minor} cargo build --release`",
        arch_list(.embedded)
    )]
    NoPtxForDevice {
        /// Device name.
        name: String,
        /// Compute capability, major part.
        major: u32,
        /// Compute capability, minor part.
        minor: u32,
        /// The embedded architectures (e.g. 75 for sm_75), ascending.
        embedded: Vec<u32>,
    },
    /// A launch configuration is invalid.
    #[error("invalid {what} configuration: {error}")]
    Config {
        /// Which back end's configuration.
        what: &'static str,
        /// What is wrong with it.
        error: String,
    },
    /// An allocation did not fit (refused before the driver was asked when
    /// it exceeds the free memory).
    #[error("out of GPU memory allocating {what}: {}", out_of_memory_text(.bytes, .free, .total, .sized_by))]
    OutOfMemory {
        /// What was being allocated.
        what: String,
        /// Bytes requested.
        bytes: usize,
        /// Free device memory at the time.
        free: usize,
        /// Total device memory.
        total: usize,
        /// What the allocation's size follows (which setting shrinks it).
        sized_by: SizedBy,
    },
    /// A kernel faulted (illegal address, trap, timeout, ...): the launch
    /// that faulted is `site`, or one of the unfinished launches before it.
    #[error(
        "{site} failed: {error}, reported while {action}{}. The GPU context is lost: {CONTEXT_LOST}",
        fault::earlier_text(.earlier)
    )]
    KernelFault {
        /// The last launch before the fault was reported (the faulting one
        /// when `earlier` is `None`).
        site: LaunchSite,
        /// When other launches had not been seen to finish: how many, and
        /// the first of them (one of these, or `site`, faulted).
        earlier: Option<Box<(usize, LaunchSite)>>,
        /// The driver's name and description of the error.
        error: String,
        /// What wavepath was doing when the driver reported it.
        action: String,
    },
    /// A driver call failed because an earlier kernel fault lost the context.
    #[error("{}; {error}, reported while {action}: {CONTEXT_LOST}", fault::lost_text(.fault))]
    ContextLost {
        /// The fault that lost it, when this process saw it.
        fault: Option<String>,
        /// The driver's name and description of the error.
        error: String,
        /// What wavepath was doing.
        action: String,
    },
    /// Any other driver call failed.
    #[error("CUDA driver error while {action}: {error}")]
    Driver {
        /// What wavepath was doing.
        action: String,
        /// The driver's name and description of the error.
        error: String,
    },
}

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

/// The rest of an out-of-memory message: what is free and what to change.
fn out_of_memory_text(bytes: &usize, free: &usize, total: &usize, sized_by: &SizedBy) -> String {
    use crate::system::memory::bytes_text;
    let (asked, free, total_text) = (bytes_text(*bytes), bytes_text(*free), bytes_text(*total));
    let suggestion = sized_by.suggestion();
    if bytes > total {
        format!("{asked} asked, more than the GPU's {total_text} in all; {free} are free; {suggestion}")
    } else {
        format!("{asked} asked, but only {free} of the GPU's {total_text} are free; {suggestion}")
    }
}

/// `[75, 90]` → `sm_75, sm_90`.
fn arch_list(archs: &[u32]) -> String {
    archs.iter().map(|a| format!("sm_{a}")).collect::<Vec<_>>().join(", ")
}

/// The driver's name and description of an error, e.g.
/// `CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)`;
/// the code's name alone where libcuda cannot be loaded to describe it.
pub fn describe(e: &DriverError) -> String {
    static DRIVER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    // SAFETY: only probes whether the shared library can be opened.
    if !*DRIVER.get_or_init(|| unsafe { cudarc::driver::sys::is_culib_present() }) {
        return format!("{:?}", e.0);
    }
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    match e.error_string() {
        Ok(s) => format!("{name} ({})", s.to_string_lossy()),
        Err(_) => name,
    }
}

/// True for the errors a faulting kernel leaves behind: sticky errors,
/// reported by the next call that synchronises (or by any call after it),
/// after which the context cannot be used again.
pub fn is_kernel_fault(e: &DriverError) -> bool {
    matches!(
        e.0,
        Code::CUDA_ERROR_ILLEGAL_ADDRESS
            | Code::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | Code::CUDA_ERROR_MISALIGNED_ADDRESS
            | Code::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | Code::CUDA_ERROR_INVALID_PC
            | Code::CUDA_ERROR_LAUNCH_FAILED
            | Code::CUDA_ERROR_LAUNCH_TIMEOUT
            | Code::CUDA_ERROR_HARDWARE_STACK_ERROR
            | Code::CUDA_ERROR_ASSERT
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_memory_says_what_was_asked_what_is_free_and_what_to_shrink() {
        let e = GpuError::OutOfMemory {
            what: "the path pool".into(),
            bytes: 3 << 30,
            free: 512 << 20,
            total: 80 << 30,
            sized_by: SizedBy::PathPool,
        };
        assert_eq!(
            e.to_string(),
            "out of GPU memory allocating the path pool: 3221225472 bytes (3.00 GiB) asked, but only \
             536870912 bytes (512.0 MiB) of the GPU's 85899345920 bytes (80.00 GiB) are free; give the \
             wavefront a smaller path pool (--capacity: a smaller budget such as 256MiB, a smaller power \
             of two, or `auto`, which fits the pool to free memory)"
        );
        let e = GpuError::OutOfMemory {
            what: "the film".into(),
            bytes: 100 << 30,
            free: 70 << 30,
            total: 80 << 30,
            sized_by: SizedBy::Image,
        };
        assert_eq!(
            e.to_string(),
            "out of GPU memory allocating the film: 107374182400 bytes (100.00 GiB) asked, more than the \
             GPU's 85899345920 bytes (80.00 GiB) in all; 75161927680 bytes (70.00 GiB) are free; render a \
             smaller image (--size WIDTHxHEIGHT), or on the CPU (the `cpu` back end)"
        );
    }
}
