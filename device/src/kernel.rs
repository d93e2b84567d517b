//! How a kernel is declared, once for both sides: a [`Kernel`] is a body
//! over one `#[repr(C)]` argument struct, and `entry_points!` gives it its
//! name in the PTX. On the GPU the name is an `extern "ptx-kernel"` entry
//! point that takes the struct by value; on the host the same body runs in
//! the serial emulation (`wavepath`'s `backend::wave_driver::emulated`), block after
//! block, phase after phase, thread after thread, in warps of one lane
//! ([`crate::warp`]).
//!
//! The host launches any kernel through one typed call, so the argument
//! struct is the whole contract between the two sides: no argument lists
//! kept in step by hand, no names typed twice.

/// The calling thread's place in its launch (x and y; launches are 1D
/// except the megakernel's 2D tiles).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thread {
    /// Block index.
    pub block: [u32; 2],
    /// Thread index within the block.
    pub index: [u32; 2],
    /// Threads per block.
    pub block_dim: [u32; 2],
    /// Blocks in the grid.
    pub grid_dim: [u32; 2],
}

impl Thread {
    /// The thread's index along x over the whole grid.
    #[inline(always)]
    pub fn global_x(&self) -> u32 {
        self.block[0] * self.block_dim[0] + self.index[0]
    }

    /// The thread's index along y over the whole grid.
    #[inline(always)]
    pub fn global_y(&self) -> u32 {
        self.block[1] * self.block_dim[1] + self.index[1]
    }

    /// Threads in the grid along x: the stride of a grid-stride loop.
    #[inline(always)]
    pub fn grid_threads_x(&self) -> u32 {
        self.grid_dim[0] * self.block_dim[0]
    }

    /// The calling GPU thread, from the special registers.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn current() -> Self {
        use core::arch::nvptx::*;
        // SAFETY: reading the special registers has no preconditions.
        unsafe {
            Thread {
                block: [_block_idx_x(), _block_idx_y()],
                index: [_thread_idx_x(), _thread_idx_y()],
                block_dim: [_block_dim_x(), _block_dim_y()],
                grid_dim: [_grid_dim_x(), _grid_dim_y()],
            }
        }
    }
}

/// A kernel body over one argument struct.
pub trait Kernel {
    /// The kernel's one argument, passed by value (`#[repr(C)]`, laid out
    /// identically on both targets).
    type Args: Copy;

    /// Phases separated by block-wide barriers. A thread's locals do not
    /// survive a barrier: what a later phase needs goes through memory.
    const PHASES: u32 = 1;

    /// Runs `thread`'s part of `phase`.
    ///
    /// # Safety
    /// `args` must satisfy the kernel's documented contract (buffer sizes,
    /// address space), and every thread of a block must run every phase.
    unsafe fn run(thread: Thread, phase: u32, args: &Self::Args);
}

/// A kernel with an entry point in the PTX.
pub trait EntryPoint: Kernel {
    /// The entry point's name.
    const NAME: &'static str;
}

/// Runs kernel `K` for the calling GPU thread: every phase, with a block
/// barrier between phases.
///
/// # Safety
/// As for [`Kernel::run`].
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub unsafe fn run_on_gpu<K: Kernel>(args: &K::Args) {
    let thread = Thread::current();
    for phase in 0..K::PHASES {
        if phase > 0 {
            // SAFETY: every thread of the block reaches every phase.
            unsafe { core::arch::nvptx::_syncthreads() };
        }
        // SAFETY: the caller's contract.
        unsafe { K::run(thread, phase, args) };
    }
}

/// Data the host copies to device memory as bytes: `#[repr(C)]` (or
/// `#[repr(transparent)]`) with no padding, so every byte of a value is
/// initialised. Unlike [`Plain`], it may hold fields (enums) that not every
/// bit pattern is a value of, so it is never read back.
///
/// # Safety
/// Implement only for types that meet the description above.
pub unsafe trait AsBytes: Copy + 'static {
    /// The value's bytes (it has no padding, so every byte is initialised).
    fn as_bytes(&self) -> &[u8] {
        // SAFETY: by the trait's contract `Self` has no padding bytes.
        unsafe { core::slice::from_raw_parts((self as *const Self).cast::<u8>(), core::mem::size_of::<Self>()) }
    }

    /// The bytes of `values`, one value after another.
    fn slice_as_bytes(values: &[Self]) -> &[u8] {
        // SAFETY: as for `as_bytes`; the values of a slice follow one another
        // with no gap (a type's size is a multiple of its alignment).
        unsafe { core::slice::from_raw_parts(values.as_ptr().cast::<u8>(), core::mem::size_of_val(values)) }
    }
}

/// Plain data the host reads back from device memory as bytes:
/// `#[repr(C)]`, made of integers only, with no padding, so every bit
/// pattern is a valid value.
///
/// # Safety
/// Implement only for types that meet the description above.
pub unsafe trait Plain: Copy + 'static {
    /// The value stored in `bytes` (its exact size), or `None` on a size mismatch.
    fn from_bytes(bytes: &[u8]) -> Option<Self> {
        (bytes.len() == core::mem::size_of::<Self>())
            // SAFETY: the size matches and, by the trait's contract, every
            // bit pattern is a valid `Self`; the read tolerates any alignment.
            .then(|| unsafe { core::ptr::read_unaligned(bytes.as_ptr().cast::<Self>()) })
    }
}

// SAFETY: `Plain` asks for no padding, as `AsBytes` does (and more).
unsafe impl<T: Plain> AsBytes for T {}

/// Declares entry points: for each `name => KernelType`, the kernel's name
/// and, on the GPU, an exported function of that name taking the kernel's
/// argument struct. Also lists the names in `ENTRY_POINTS`.
macro_rules! entry_points {
    ($($name:ident => $kernel:ty),* $(,)?) => {
        $(
            impl $crate::kernel::EntryPoint for $kernel {
                const NAME: &'static str = stringify!($name);
            }

            /// Entry point of the kernel type it is declared with.
            ///
            /// # Safety
            /// As for the kernel's [`Kernel::run`](crate::kernel::Kernel::run).
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $name(args: <$kernel as $crate::kernel::Kernel>::Args) {
                // SAFETY: forwarded unchanged; the launcher upholds the contract.
                unsafe { $crate::kernel::run_on_gpu::<$kernel>(&args) }
            }
        )*

        /// The entry points declared in this module.
        pub const ENTRY_POINTS: &[&str] = &[$(stringify!($name)),*];
    };
}
pub(crate) use entry_points;

// SAFETY: integers have no padding and no invalid bit patterns.
unsafe impl Plain for u8 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}
// SAFETY: four bytes, no padding; every bit pattern is some float (NaNs
// included).
unsafe impl Plain for f32 {}
