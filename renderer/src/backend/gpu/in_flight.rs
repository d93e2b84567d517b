//! Kernel faults: which launches are in flight, so that the error a fault
//! leaves behind names its kernel and launch.
//!
//! A kernel that faults (illegal address, `trap`, watchdog timeout) does not
//! fail its launch call: the launch returns at once, and the fault is
//! reported by a later call that waits for the GPU (a synchronisation, a
//! readback, an event time) and by every call after it, since the CUDA
//! context is then lost for good. So each GPU handle keeps the launches it has
//! queued and not yet seen to finish ([`InFlight`]); when a fault surfaces,
//! the error names the last of them, and how many earlier ones were still
//! unfinished. With `CUDA_LAUNCH_BLOCKING=1` every launch waits for its
//! kernel, so a fault is reported by the launch that caused it.

use super::error::{GpuError, describe, is_kernel_fault};
use super::launch_site::LaunchSite;
use cudarc::driver::DriverError;
use std::collections::VecDeque;

/// The launches a GPU handle has queued and not yet seen to finish, and the
/// fault that lost its context, once one has.
#[derive(Debug, Default)]
pub struct InFlight {
    /// Unfinished launches, oldest first, each with its sequence number.
    unfinished: VecDeque<(u64, LaunchSite)>,
    /// Launches queued so far (the next one's sequence number).
    queued: u64,
    /// The first fault reported, as its error named it.
    fault: Option<String>,
}

impl InFlight {
    /// Records a launch just queued. `waited`: the launch call returned
    /// only once its kernel had finished (`CUDA_LAUNCH_BLOCKING=1`), so the
    /// launches before it have finished too.
    pub fn launched(&mut self, site: LaunchSite, waited: bool) {
        if waited {
            self.unfinished.clear();
        }
        self.unfinished.push_back((self.queued, site));
        self.queued += 1;
    }

    /// A mark after every launch queued so far, for [`InFlight::finished_through`].
    pub fn mark(&self) -> u64 {
        self.queued
    }

    /// The launches queued before `mark` have finished (a wait on work
    /// queued after them returned without error).
    pub fn finished_through(&mut self, mark: u64) {
        while self.unfinished.front().is_some_and(|(seq, _)| *seq < mark) {
            self.unfinished.pop_front();
        }
    }

    /// Every launch queued so far has finished.
    pub fn all_finished(&mut self) {
        self.finished_through(self.queued);
    }

    /// The error for driver error `e`, met while doing `action`: a kernel
    /// fault names the unfinished launches (the first fault is kept, and
    /// later errors of the lost context refer to it); anything else is a
    /// plain driver error.
    pub fn error(&mut self, action: String, e: &DriverError) -> GpuError {
        let error = describe(e);
        if !is_kernel_fault(e) {
            return GpuError::Driver { action, error };
        }
        if self.fault.is_some() {
            return GpuError::ContextLost {
                fault: self.fault.clone(),
                error,
                action,
            };
        }
        let Some((_, site)) = self.unfinished.back().cloned() else {
            // Not one of ours: another handle on the device's context faulted.
            return GpuError::ContextLost {
                fault: None,
                error,
                action,
            };
        };
        let earlier =
            (self.unfinished.len() > 1).then(|| Box::new((self.unfinished.len() - 1, self.unfinished[0].1.clone())));
        self.fault = Some(format!("{site} failed with {error}"));
        self.unfinished.clear();
        GpuError::KernelFault {
            site,
            earlier,
            error,
            action,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::driver::sys::cudaError_enum as Code;

    fn site(kernel: &'static str, launch: u32) -> LaunchSite {
        LaunchSite {
            kernel,
            launch,
            iteration: 2,
            grid: (4, 1, 1),
            block: (64, 1, 1),
        }
    }

    #[test]
    fn a_fault_names_the_last_unfinished_launch_and_how_many_came_before() {
        let mut f = InFlight::default();
        f.launched(site("a", 0), false);
        let mark = f.mark();
        f.launched(site("b", 1), false);
        f.launched(site("c", 2), false);
        f.finished_through(mark);
        let fault = DriverError(Code::CUDA_ERROR_ILLEGAL_ADDRESS);
        let e = f.error("reading back the film".into(), &fault);
        match &e {
            GpuError::KernelFault { site, earlier, .. } => {
                assert_eq!(site.kernel, "c");
                assert_eq!(earlier.as_deref().map(|(n, s)| (*n, s.kernel)), Some((1, "b")));
            }
            other => panic!("{other:?}"),
        }
        let text = e.to_string();
        eprintln!("{text}");
        let expected = [
            "kernel `c` (launch 2 of the render, iteration 2, 4x1x1 blocks of 64x1x1 threads) failed: \
             CUDA_ERROR_ILLEGAL_ADDRESS",
            ", reported while reading back the film. The fault may also have come from the launch before it, \
             unfinished then: kernel `b` (launch 1 of the render",
            "; with CUDA_LAUNCH_BLOCKING=1 every launch waits for its kernel, and a fault names its own. \
             The GPU context is lost: GPU work needs a new process (the CPU back ends still work in this one)",
        ];
        for part in expected {
            assert!(text.contains(part), "{text}\nlacks\n{part}");
        }
        // Every later error refers to the fault.
        f.launched(site("d", 3), false);
        let later = f.error("uploading the scene".into(), &fault);
        assert!(
            matches!(later, GpuError::ContextLost { fault: Some(_), .. }),
            "{later:?}"
        );
        let text = later.to_string();
        eprintln!("{text}");
        let expected = [
            "the GPU context was lost by an earlier kernel fault (kernel `c` (launch 2 of the render",
            "threads) failed with CUDA_ERROR_ILLEGAL_ADDRESS); CUDA_ERROR_ILLEGAL_ADDRESS, reported while \
             uploading the scene: GPU work needs a new process",
        ];
        for part in expected {
            assert!(text.contains(part), "{text}\nlacks\n{part}");
        }
        // Other errors stay driver errors.
        let other = f.error("allocating".into(), &DriverError(Code::CUDA_ERROR_INVALID_VALUE));
        assert!(matches!(other, GpuError::Driver { .. }), "{other:?}");
    }

    #[test]
    fn a_fault_with_no_launch_of_ours_in_flight_says_the_context_is_lost() {
        let e = InFlight::default().error(
            "reading free memory".into(),
            &DriverError(Code::CUDA_ERROR_LAUNCH_FAILED),
        );
        let text = e.to_string();
        assert!(matches!(e, GpuError::ContextLost { fault: None, .. }), "{e:?}");
        assert!(
            text.starts_with("the GPU context was lost by an earlier kernel fault; CUDA_ERROR_LAUNCH_FAILED"),
            "{text}"
        );
    }

    #[test]
    fn a_waited_launch_is_the_only_one_in_flight() {
        let mut f = InFlight::default();
        f.launched(site("a", 0), false);
        f.launched(site("b", 1), true);
        assert_eq!(f.unfinished.len(), 1);
        f.all_finished();
        assert!(f.unfinished.is_empty());
    }
}
