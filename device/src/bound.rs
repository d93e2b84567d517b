//! The bits of the feature set bound into the running kernel, read through
//! the sentinel literal that the host replaces before the driver compiles
//! the kernel ([`crate::features`] describes the binding). It imports
//! nothing, so that code the feature set's declaration depends on (the
//! random numbers) can read the bound bits without an import circle.

/// The literal a kernel's read of its bound bits leaves in the PTX, for
/// the host to replace. It appears nowhere else: LLVM writes the
/// immediates it emits in decimal.
macro_rules! sentinel_literal {
    () => {
        "0x5EA7F00D"
    };
}

/// [`SENTINEL`] as it appears in the PTX text.
pub const SENTINEL_TEXT: &str = sentinel_literal!();

/// The value of [`SENTINEL_TEXT`]: it sets bits no feature has, so a module
/// whose features were never bound is told apart from one bound to a set.
pub const SENTINEL: u32 = 0x5EA7_F00D;

/// The bound bit that selects the GPU's fast arithmetic (the host's
/// `Arithmetic::Fast`): the hardware's approximate sine, cosine, base-2
/// exponential and logarithm in place of the crate's own. It is no
/// feature ([`crate::features`] declares those): a superset of a scene's
/// features renders the same image, while this bit changes the image. The
/// sentinel leaves it clear, so a module never bound runs exact arithmetic.
pub const FAST_ARITHMETIC: u32 = 1 << 31;

const _: () = assert!(SENTINEL & FAST_ARITHMETIC == 0);

/// Which float arithmetic a GPU kernel is bound to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Arithmetic {
    /// IEEE-strict operations and the crate's own transcendental functions:
    /// the CPU's image, bit for bit.
    #[default]
    Exact,
    /// The hardware's approximate division, square root, sine, cosine,
    /// exponential and logarithm: the same image on every GPU back end,
    /// and the CPU's within a stated error.
    Fast,
}

impl Arithmetic {
    /// Both, exact first.
    pub const ALL: [Arithmetic; 2] = [Arithmetic::Exact, Arithmetic::Fast];

    /// The name settings and reports use.
    pub const fn name(self) -> &'static str {
        match self {
            Arithmetic::Exact => "exact",
            Arithmetic::Fast => "fast",
        }
    }

    /// Its bits in the bound word.
    pub const fn bits(self) -> u32 {
        match self {
            Arithmetic::Exact => 0,
            Arithmetic::Fast => FAST_ARITHMETIC,
        }
    }
}

/// True in a kernel bound to the fast arithmetic: a constant the driver's
/// compiler folds, so the exact code is gone from a fast kernel and the
/// fast code from an exact one. Only the GPU has it; the CPU back ends
/// are the exact reference.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn fast_arithmetic() -> bool {
    bits(0) & FAST_ARITHMETIC != 0
}

/// The bits bound into the running code. On the GPU: those the host bound
/// into this kernel's module (`carried` is not read, so that the compiler
/// sees a constant). On the CPU: `carried`, the bits of the set the caller
/// carries.
#[inline(always)]
pub fn bits(carried: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let _ = carried;
        let bits: u32;
        // SAFETY: moves an immediate into a register; it reads and writes
        // no memory. `pure` lets LLVM keep one per kernel.
        unsafe {
            core::arch::asm!(
                concat!("mov.u32 {bits}, ", sentinel_literal!(), ";"),
                bits = out(reg32) bits,
                options(pure, nomem, nostack),
            )
        };
        bits
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        carried
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentinel_text_is_the_sentinel_and_the_cpu_reads_what_it_carries() {
        assert_eq!(u32::from_str_radix(&SENTINEL_TEXT[2..], 16), Ok(SENTINEL));
        assert_eq!(bits(0b1010), 0b1010);
    }
}
