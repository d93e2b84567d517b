//! The GPU back ends, through the CUDA driver API (`cudarc`, with libcuda
//! loaded at run time: the binary builds and runs without CUDA, and a missing
//! driver is an error, not a crash).
//!
//! * [`device`]: opening a GPU and loading the embedded PTX that fits it;
//! * [`buffers`]: the scene in device memory;
//! * [`megakernel`]: the `gpu-mega` back end (one thread per pixel, whole paths);
//! * [`profile`]: per-launch timing records and kernel resource figures;
//! * [`raycast`]: the traversal-only kernel over a ray buffer;
//! * [`wavefront`]: the `gpu-wave` back end (generate, extend, shade, compact
//!   over queues, the host running the bounce loop).

pub mod buffers;
pub mod device;
pub mod megakernel;
pub mod profile;
pub mod raycast;
pub mod wavefront;

pub use device::{Gpu, GpuInfo};

use cudarc::driver::DriverError;
use cudarc::driver::sys::cudaError_enum as Code;

/// Why a GPU back end could not run.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// libcuda is not there.
    #[error("no CUDA driver: libcuda could not be loaded (is the NVIDIA driver installed?)")]
    NoDriver,
    /// The driver sees no device.
    #[error("no CUDA device is available ({0})")]
    NoDevice(String),
    /// Every embedded PTX module targets a newer architecture than the GPU.
    #[error(
        "{name} has compute capability {major}.{minor}, older than every embedded PTX module \
         (oldest: sm_{oldest}); rebuild with WAVEPATH_CUDA_ARCHS=sm_{major}{minor},..."
    )]
    NoPtxForDevice {
        /// Device name.
        name: String,
        /// Compute capability, major part.
        major: u32,
        /// Compute capability, minor part.
        minor: u32,
        /// Oldest embedded architecture.
        oldest: u32,
    },
    /// A launch configuration is invalid.
    #[error("invalid {what} configuration: {error}")]
    Config {
        /// Which back end's configuration.
        what: &'static str,
        /// What is wrong with it.
        error: String,
    },
    /// An allocation did not fit.
    #[error("out of GPU memory: {what} needs {bytes} bytes, {free} of {total} bytes are free")]
    OutOfMemory {
        /// What was being allocated.
        what: String,
        /// Bytes requested.
        bytes: usize,
        /// Free device memory at the time.
        free: usize,
        /// Total device memory.
        total: usize,
    },
    /// A kernel faulted (illegal address, trap, timeout, ...).
    #[error("kernel `{kernel}` failed: {error}")]
    KernelFault {
        /// The kernel.
        kernel: String,
        /// The driver's name and description of the error.
        error: String,
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

/// The driver's name and description of an error, e.g.
/// `CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)`.
pub fn describe(e: &DriverError) -> String {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    match e.error_string() {
        Ok(s) => format!("{name} ({})", s.to_string_lossy()),
        Err(_) => name,
    }
}

/// Wraps a driver error with what wavepath was doing.
pub fn driver_error(action: impl Into<String>) -> impl FnOnce(DriverError) -> GpuError {
    move |e| GpuError::Driver {
        action: action.into(),
        error: describe(&e),
    }
}

/// Maps a driver error met while `kernel` ran: a fault names the kernel,
/// anything else says what wavepath was doing.
pub fn kernel_error<'a>(kernel: &'a str, action: &'a str) -> impl FnOnce(DriverError) -> GpuError + 'a {
    move |e| {
        if is_kernel_fault(&e) {
            GpuError::KernelFault {
                kernel: kernel.into(),
                error: describe(&e),
            }
        } else {
            driver_error(action)(e)
        }
    }
}

/// True for the errors a faulting kernel leaves behind (sticky errors that
/// surface at the next synchronisation).
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
            | Code::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
            | Code::CUDA_ERROR_HARDWARE_STACK_ERROR
            | Code::CUDA_ERROR_ASSERT
    )
}
