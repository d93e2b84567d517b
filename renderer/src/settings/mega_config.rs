//! How the megakernel is launched ([`MegakernelConfig`]) and its defaults,
//! and the register cap every GPU kernel may be given.

use crate::settings::arithmetic::{Arithmetic, arithmetic_label};
use crate::settings::kernels::KernelFeatures;
use crate::system::ptx::{MAX_REGISTER_CAP, MIN_REGISTER_CAP};

/// Block shape in threads: within 3% of the best of 8x8, 16x8 and 32x4 on
/// every seed scene on an H100 (`results/mega_vs_wave`, study `default`).
pub const DEFAULT_BLOCK: (u32, u32) = (8, 8);

/// Samples per pixel per megakernel launch.
pub const DEFAULT_SAMPLES_PER_LAUNCH: u32 = 16;

/// The megakernel's register cap unless a run sets one: one budget for
/// every build, chosen by measurement. On an H200 (driver 580.159.04) the
/// caps none, 128, 96, 80, 64 and 56 were timed on the build of every
/// seed workload (RTIOW with and without roulette, smallpt's box and CS500
/// with next-event estimation on and off, exact and fast arithmetic): 64
/// was the fastest or within 2 % of it on each (`results/megakernel_goals`),
/// where 80 was up to 8 % slower (RTIOW) and no cap up to 24 % (smallpt's
/// box with next-event estimation). A build's best cap spills a little
/// (RTIOW: 72 bytes beyond its traversal stack): at 64 registers a
/// multiprocessor holds 50 % more warps than at 80, which hides the spills.
pub const DEFAULT_MAX_REGISTERS: u32 = 64;

/// Checks a register cap against what `ptxas` accepts.
pub fn check_register_cap(cap: Option<u32>) -> Result<(), String> {
    match cap {
        Some(r) if !(MIN_REGISTER_CAP..=MAX_REGISTER_CAP).contains(&r) => Err(format!(
            "max registers {r}: must be from {MIN_REGISTER_CAP} to {MAX_REGISTER_CAP}"
        )),
        _ => Ok(()),
    }
}

/// How the megakernel is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MegakernelConfig {
    /// Block shape in threads (x, y), e.g. (16, 16) or (256, 1).
    pub block: (u32, u32),
    /// Tile size in pixels; `None` launches the whole image at once.
    pub tile: Option<(u32, u32)>,
    /// Samples per pixel per launch.
    pub samples_per_launch: u32,
    /// Count active lanes at the material branch (adds atomics: for
    /// diagnosis runs, not for timing).
    pub count_divergence: bool,
    /// Registers per thread the kernels may use (`None`: as compiled).
    pub max_registers: Option<u32>,
    /// Which build of the megakernel runs.
    pub kernels: KernelFeatures,
    /// The float arithmetic it is bound to.
    pub arithmetic: Arithmetic,
}

impl Default for MegakernelConfig {
    fn default() -> Self {
        MegakernelConfig {
            block: DEFAULT_BLOCK,
            tile: None,
            samples_per_launch: DEFAULT_SAMPLES_PER_LAUNCH,
            count_divergence: false,
            max_registers: Some(DEFAULT_MAX_REGISTERS),
            kernels: KernelFeatures::EXACT,
            arithmetic: Arithmetic::Exact,
        }
    }
}

impl MegakernelConfig {
    /// A short description for reports, e.g. "8x8/spl16" or "8x8/spl16/reg64/fast".
    pub fn label(&self) -> String {
        let cap = self.max_registers.map(|r| format!("/reg{r}")).unwrap_or_default();
        format!(
            "{}x{}/spl{}{cap}{}{}",
            self.block.0,
            self.block.1,
            self.samples_per_launch,
            self.kernels.label(),
            arithmetic_label(self.arithmetic)
        )
    }

    /// Checks the block shape against CUDA's limits.
    pub fn validate(&self) -> Result<(), String> {
        let (bx, by) = self.block;
        // NOTE: a block that is not a whole number of 32-thread warps is
        // legal (its last warp runs with idle lanes); the parallel-RTIOW
        // study measures 4x4 blocks, so only CUDA's own limit applies.
        if bx == 0 || by == 0 || bx * by > 1024 {
            return Err(format!("block {bx}x{by}: a block needs 1 to 1024 threads"));
        }
        check_register_cap(self.max_registers)?;
        if self.samples_per_launch == 0 {
            return Err("samples per launch must be at least 1".into());
        }
        if let Some((tw, th)) = self.tile
            && (tw == 0 || th == 0)
        {
            return Err(format!("tile {tw}x{th}: sides must be positive"));
        }
        Ok(())
    }
}
