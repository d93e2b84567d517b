//! A kernel that faults on purpose: every thread executes PTX `trap`, which
//! ends the launch with an error and leaves the CUDA context unusable. It
//! is always in the PTX, so that the host's handling of a kernel fault
//! (the error names the kernel and its launch; the CPU back ends still
//! work) can be tested on the real module; nothing launches it but that
//! test (`wavepath::backend::gpu::fault::provoke_kernel_fault`).

use crate::kernel::{Kernel, Thread};

/// The fault kernel's argument (every kernel takes one struct; this one
/// reads nothing).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct FaultArgs {
    /// Unused.
    pub unused: u32,
}

/// Traps in every thread.
///
/// Contract: none; the launch always fails, and the context that ran it is
/// lost for the rest of the process.
pub struct FaultTrap;

impl Kernel for FaultTrap {
    type Args = FaultArgs;

    #[inline(always)]
    unsafe fn run(_thread: Thread, _phase: u32, _args: &FaultArgs) {
        fault()
    }
}

/// Ends the GPU thread with `trap`.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn fault() -> ! {
    // SAFETY: `trap` has no preconditions; aborting the launch is the point.
    unsafe { core::arch::nvptx::trap() }
}

/// The host never runs the fault kernel (no back end launches it there).
#[cfg(not(target_arch = "nvptx64"))]
fn fault() -> ! {
    panic!("`fault_trap` faults on purpose; it is meant for the GPU only")
}

crate::kernel::entry_points! {
    fault_trap => FaultTrap,
}
