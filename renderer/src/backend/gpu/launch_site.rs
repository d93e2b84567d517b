//! A kernel launch as errors name it: the bottom of the GPU layer, which
//! every other part of it may use.

use std::fmt;

/// One kernel launch, as an error names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchSite {
    /// Entry-point name.
    pub kernel: &'static str,
    /// Launch number within its render (the launch log's `launch`), from 0.
    pub launch: u32,
    /// The launch log's `iteration`: sample pass or bounce-loop iteration.
    pub iteration: u32,
    /// Blocks in the grid (x, y, z).
    pub grid: (u32, u32, u32),
    /// Threads per block (x, y, z).
    pub block: (u32, u32, u32),
}

impl fmt::Display for LaunchSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ((gx, gy, gz), (bx, by, bz)) = (self.grid, self.block);
        write!(
            f,
            "kernel `{}` (launch {} of the render, iteration {}, {gx}x{gy}x{gz} blocks of {bx}x{by}x{bz} threads)",
            self.kernel, self.launch, self.iteration
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_sites_read_well() {
        let site = LaunchSite {
            kernel: "wf_shade_diffuse",
            launch: 17,
            iteration: 2,
            grid: (4, 1, 1),
            block: (64, 1, 1),
        };
        assert_eq!(
            site.to_string(),
            "kernel `wf_shade_diffuse` (launch 17 of the render, iteration 2, 4x1x1 blocks of 64x1x1 threads)"
        );
    }
}
