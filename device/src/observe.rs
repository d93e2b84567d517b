//! Observing the material branch: how many lanes of a warp run each
//! material's code together (one program: a shading class, and within it a
//! variant, [`crate::material::Material::variant`]). The CPU back ends use [`Unobserved`]; the
//! kernels pass [`WarpDivergence`], which counts when given a buffer.

use crate::shading::ShadeClass;

/// Called where a path branches on its shading class.
pub trait BranchObserver {
    /// The calling path is about to run the code of `class`, in its
    /// variant `variant`.
    fn material_branch(&self, class: ShadeClass, variant: u32);
}

/// Observes nothing (free).
pub struct Unobserved;

impl BranchObserver for Unobserved {
    #[inline(always)]
    fn material_branch(&self, _: ShadeClass, _: u32) {}
}

/// Sums of lanes and branch executions: `lanes / groups` is the average
/// number of lanes of a warp that execute one program (a shading class in
/// one variant) together.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DivergenceCounters {
    /// Lanes, summed over every (warp, program) group that ran.
    pub lanes: u64,
    /// (warp, program) groups that ran.
    pub groups: u64,
}

// SAFETY: two u64, `#[repr(C)]`, no padding.
unsafe impl crate::kernel::Plain for DivergenceCounters {}

impl DivergenceCounters {
    /// Average active lanes per warp at the material branch (0 if none ran).
    pub fn average_lanes(&self) -> f64 {
        if self.groups == 0 {
            0.0
        } else {
            self.lanes as f64 / self.groups as f64
        }
    }
}

/// Counts lane groups at the material branch into device memory (on the
/// host's emulation, warps of one lane). A null pointer counts nothing.
pub struct WarpDivergence(pub *mut DivergenceCounters);

impl BranchObserver for WarpDivergence {
    #[inline(always)]
    fn material_branch(&self, class: ShadeClass, variant: u32) {
        use crate::shading::VARIANTS;
        use crate::warp::{active_mask, lane_id, match_any};
        use core::sync::atomic::{AtomicU64, Ordering};
        if self.0.is_null() {
            return;
        }
        let group = match_any(active_mask(), class as u32 * VARIANTS as u32 + variant);
        // The lowest lane of each group counts it once.
        if lane_id() == group.trailing_zeros() {
            // SAFETY: a non-null pointer is a device allocation of one
            // DivergenceCounters (the launch contract).
            unsafe {
                AtomicU64::from_ptr(&raw mut (*self.0).lanes).fetch_add(group.count_ones() as u64, Ordering::Relaxed);
                AtomicU64::from_ptr(&raw mut (*self.0).groups).fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}
