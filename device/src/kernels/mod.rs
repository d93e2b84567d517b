//! GPU entry points (NVPTX only). Each is thin: compute the thread's index,
//! check bounds, call the same function the CPU back ends call.
//!
//! Every kernel is exported once per acceleration structure
//! (`<kernel>_brute`, `<kernel>_bvh`, `<kernel>_kdtree`, named by
//! [`crate::launch`]) so that each holds one traversal's code.

pub mod megakernel;
pub mod raycast;
pub mod wavefront;

/// Exports `$kernel::<T>` under one name per traversal type.
macro_rules! per_traversal {
    ($kernel:ident, $args:tt, [$($name:ident => $t:ty),*]) => {
        $( $crate::kernels::per_traversal!(@one $kernel, $name, $t, $args); )*
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
pub(crate) use per_traversal;
