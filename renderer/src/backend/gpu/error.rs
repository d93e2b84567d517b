//! Why a GPU back end could not run: [`GpuError`], with the messages that
//! say what to change, and the driver's description of an error.

use super::launch_site::LaunchSite;
use crate::backend::SizedBy;
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
    /// The binary embeds no PTX at all (built with `WAVEPATH_CUDA_ARCHS=none`,
    /// as `scripts/run` builds it where `nvidia-smi` finds no GPU).
    #[error(
        "{name} (compute capability {major}.{minor}) cannot run a GPU back end of this binary: it was \
         built without PTX (WAVEPATH_CUDA_ARCHS=none); rebuild with `WAVEPATH_CUDA_ARCHS=sm_{major}{minor} \
         cargo build --release` for this GPU, or `cargo build --release` for every default architecture"
    )]
    NoPtx {
        /// Device name.
        name: String,
        /// Compute capability, major part.
        major: u32,
        /// Compute capability, minor part.
        minor: u32,
    },
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
        earlier_text(.earlier)
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
    #[error("{}; {error}, reported while {action}: {CONTEXT_LOST}", lost_text(.fault))]
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

/// What a kernel-fault message adds when launches before the reported one
/// were unfinished too.
fn earlier_text(earlier: &Option<Box<(usize, LaunchSite)>>) -> String {
    match earlier.as_deref() {
        None => String::new(),
        Some((count, first)) => {
            let which = if *count == 1 {
                format!("the launch before it, unfinished then: {first}")
            } else {
                format!("one of the {count} launches before it, unfinished then, from {first} on")
            };
            format!(
                ". The fault may also have come from {which}; with CUDA_LAUNCH_BLOCKING=1 every launch \
                 waits for its kernel, and a fault names its own"
            )
        }
    }
}

/// The start of a context-lost message.
fn lost_text(fault: &Option<String>) -> String {
    match fault {
        Some(f) => format!("the GPU context was lost by an earlier kernel fault ({f})"),
        None => "the GPU context was lost by an earlier kernel fault".into(),
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

    #[test]
    fn earlier_launches_read_well() {
        let site = LaunchSite {
            kernel: "wf_extend_bvh",
            launch: 12,
            iteration: 2,
            grid: (4, 1, 1),
            block: (64, 1, 1),
        };
        assert_eq!(earlier_text(&None), "");
        let text = earlier_text(&Some(Box::new((5, site))));
        assert!(
            text.starts_with(
                ". The fault may also have come from one of the 5 launches before it, unfinished then, \
                 from kernel `wf_extend_bvh` (launch 12"
            ),
            "{text}"
        );
    }
}
