//! GPU entry points (NVPTX only). Each is thin: compute the thread's index,
//! check bounds, call the same function the CPU back ends call.
//!
//! Generic kernels are exported once per type argument: per acceleration
//! structure (`<kernel>_brute`, `<kernel>_bvh`, `<kernel>_kdtree`) so that
//! each holds one traversal's code, and per shading class for the
//! wavefront's shading kernels. [`crate::launch`] names them.

pub mod megakernel;
pub mod raycast;
pub mod wavefront;

/// Exports the generic kernel `$kernel::<T>` under one name per type `T`.
macro_rules! export_kernels {
    ($kernel:ident, $args:tt, [$($name:ident => $t:ty),*]) => {
        $( $crate::kernels::export_kernels!(@one $kernel, $name, $t, $args); )*
    };
    (@one $kernel:ident, $name:ident, $t:ty, ($($arg:ident: $ty:ty),*)) => {
        /// Entry point (see the generic function it instantiates).
        ///
        /// # Safety
        /// As for the generic kernel function.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($arg: $ty),*) {
            // SAFETY: forwarded unchanged; the caller upholds the contract.
            unsafe { $kernel::<$t>($($arg),*) }
        }
    };
}
pub(crate) use export_kernels;
