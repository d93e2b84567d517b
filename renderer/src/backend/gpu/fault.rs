//! A hook that provokes a kernel fault, for the tests of fault handling:
//! it launches through a [`Timeline`], so it sits above the launch wrapper.

use super::device::Gpu;
use super::error::GpuError;
use super::timeline::{Timeline, linear};
use device::kernels::fault::{FaultArgs, FaultTrap};

/// Launches the kernel that traps on purpose ([`FaultTrap`]) and waits for
/// it: the result is the kernel-fault error, naming `fault_trap`. For tests
/// of fault handling only: afterwards this process can do no more GPU work
/// on this device (every GPU call fails with [`GpuError::ContextLost`]),
/// whichever [`Gpu`] handle makes it, so run it in a process of its own.
#[doc(hidden)]
pub fn provoke_kernel_fault(gpu: &Gpu) -> Result<(), GpuError> {
    let mut timeline = Timeline::with_timing(gpu, false);
    timeline.launch::<FaultTrap>(linear(32, 32), &FaultArgs::default(), Default::default())?;
    gpu.synchronize("waiting for the fault-trap kernel")
}
