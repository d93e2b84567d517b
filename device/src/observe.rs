//! Observing the material branch: how many lanes of a warp run each
//! material's code together. The CPU back ends use [`Unobserved`]; GPU
//! kernels pass [`WarpDivergence`] when asked to count.

/// The shading classes a path can branch into, in the order of the
/// wavefront's shading queues.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShadeClass {
    /// Lambertian surfaces.
    Diffuse = 0,
    /// Metals.
    Metal = 1,
    /// Dielectrics.
    Dielectric = 2,
    /// Pure emitters.
    Emissive = 3,
    /// Rays that escaped to the background.
    Escaped = 4,
}

/// Number of [`ShadeClass`]es.
pub const SHADE_CLASSES: usize = 5;

impl ShadeClass {
    /// Every class, in queue order.
    pub const ALL: [ShadeClass; SHADE_CLASSES] = [
        ShadeClass::Diffuse,
        ShadeClass::Metal,
        ShadeClass::Dielectric,
        ShadeClass::Emissive,
        ShadeClass::Escaped,
    ];
}

/// Called where a path branches on its shading class.
pub trait BranchObserver {
    /// The calling path is about to run the code of `class`.
    fn material_branch(&self, class: ShadeClass);
}

/// Observes nothing (free).
pub struct Unobserved;

impl BranchObserver for Unobserved {
    #[inline(always)]
    fn material_branch(&self, _: ShadeClass) {}
}

/// Sums of lanes and branch executions: `lanes / groups` is the average
/// number of lanes of a warp that execute a shading class's code together.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DivergenceCounters {
    /// Lanes, summed over every (warp, class) group that ran.
    pub lanes: u64,
    /// (warp, class) groups that ran.
    pub groups: u64,
}

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

/// Counts lane groups at the material branch into device memory.
#[cfg(target_arch = "nvptx64")]
pub struct WarpDivergence(pub *mut DivergenceCounters);

#[cfg(target_arch = "nvptx64")]
impl BranchObserver for WarpDivergence {
    #[inline(always)]
    fn material_branch(&self, class: ShadeClass) {
        use crate::warp::{active_mask, lane_id, match_any};
        use core::sync::atomic::{AtomicU64, Ordering};
        if self.0.is_null() {
            return;
        }
        let group = match_any(active_mask(), class as u32);
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
