//! Every kernel, as a [`Kernel`](crate::kernel::Kernel) over one argument
//! struct. Each body is thin: find the thread's work item, call the same
//! stage functions the CPU back ends call.
//!
//! The kernels that traverse the scene are compiled once per acceleration
//! structure, so that each holds one traversal's code; [`AccelKernels`]
//! names those of one structure, and [`visit_accel`] picks them for a
//! structure chosen at run time. The shading kernels ([`shade`]) are
//! compiled once per class, declared from the table of classes in
//! [`crate::shading`], and [`shade::visit_shade`] picks one at run time.
//!
//! **Local memory.** A kernel's arguments live in the parameter space, and
//! a reference into them may not leave the kernel: passed to a function
//! that is called rather than inlined (a closure too large to inline, or a
//! function kept out of line), it makes the kernel copy all its arguments
//! (up to a kilobyte) to local memory on entry, in every thread. So what is
//! kept out of line ([`crate::texture`]'s evaluation) takes values only, and
//! the drain's per-item closure is `#[inline(always)]`. The shading
//! kernels' closures are left to the compiler: forced inline, they raised
//! every class's registers by about a third, so the coated class's, too
//! large to inline, keeps its copy. `ptxas -v` shows the stack frame each
//! kernel is left with.

pub mod fault;
pub mod megakernel;
pub mod raycast_kernel;
pub mod scan;
pub mod shade;
pub mod sort;
pub mod wave_kernels;

use crate::accel::{AccelKind, BruteForce, Bvh, Bvh8, KdTree, Traversal};
use crate::kernel::EntryPoint;
use megakernel::{Megakernel, MegakernelArgs};
use raycast_kernel::{Raycast, RaycastKernelArgs};
use wave_kernels::{Drain, Extend, QueueKernel, Shadow, WavefrontArgs};

/// The kernels compiled for one acceleration structure. Each is one entry
/// point, whatever the scene: the features it holds are bound when its
/// module is loaded ([`crate::features`]).
pub trait AccelKernels: Traversal {
    /// The megakernel.
    type Megakernel: EntryPoint<Args = MegakernelArgs>;
    /// The megakernel that counts divergence at the material branch.
    type CountingMegakernel: EntryPoint<Args = MegakernelArgs>;
    /// The ray-casting kernel.
    type Raycast: EntryPoint<Args = RaycastKernelArgs>;
    /// The wavefront's extend kernel.
    type Extend: EntryPoint<Args = WavefrontArgs> + QueueKernel;
    /// The wavefront's tail drain.
    type Drain: EntryPoint<Args = WavefrontArgs> + QueueKernel;
    /// The wavefront's shadow-ray kernel (any hit).
    type Shadow: EntryPoint<Args = WavefrontArgs> + QueueKernel;
}

/// Something done with an acceleration structure's kernels, chosen at run
/// time with [`visit_accel`].
pub trait AccelVisitor {
    /// What the visit returns.
    type Output;
    /// Does it for structure `A`.
    fn visit<A: AccelKernels>(self) -> Self::Output;
}

macro_rules! accel_kernels {
    ($($kind:ident => $t:ty: $mega:ident, $counting:ident, $cast:ident, $extend:ident, $drain:ident, $shadow:ident;)*) => {
        $(
            impl AccelKernels for $t {
                type Megakernel = Megakernel<$t, false>;
                type CountingMegakernel = Megakernel<$t, true>;
                type Raycast = Raycast<$t>;
                type Extend = Extend<$t>;
                type Drain = Drain<$t>;
                type Shadow = Shadow<$t>;
            }
        )*

        /// Runs `visitor` with the kernels of structure `kind`.
        #[inline(always)]
        pub fn visit_accel<V: AccelVisitor>(kind: AccelKind, visitor: V) -> V::Output {
            match kind {
                $(AccelKind::$kind => visitor.visit::<$t>(),)*
            }
        }

        crate::kernel::entry_points! {
            $(
                $mega => Megakernel<$t, false>,
                $counting => Megakernel<$t, true>,
                $cast => Raycast<$t>,
                $extend => Extend<$t>,
                $drain => Drain<$t>,
                $shadow => Shadow<$t>,
            )*
        }
    };
}

accel_kernels! {
    None => BruteForce: megakernel_brute, megakernel_counting_brute, raycast_brute, wf_extend_brute, wf_drain_brute, wf_shadow_brute;
    Bvh => Bvh: megakernel_bvh, megakernel_counting_bvh, raycast_bvh, wf_extend_bvh, wf_drain_bvh, wf_shadow_bvh;
    KdTree => KdTree: megakernel_kdtree, megakernel_counting_kdtree, raycast_kdtree, wf_extend_kdtree, wf_drain_kdtree, wf_shadow_kdtree;
    Bvh8 => Bvh8: megakernel_bvh8, megakernel_counting_bvh8, raycast_bvh8, wf_extend_bvh8, wf_drain_bvh8, wf_shadow_bvh8;
}

/// Every entry point in the PTX, for listings and checks (the last,
/// [`fault::FaultTrap`], faults on purpose: list it, never launch it but to
/// test fault handling).
pub fn all_entry_points() -> impl Iterator<Item = &'static str> {
    ENTRY_POINTS
        .iter()
        .chain(wave_kernels::ENTRY_POINTS)
        .chain(scan::ENTRY_POINTS)
        .chain(shade::ENTRY_POINTS)
        .chain(sort::ENTRY_POINTS)
        .chain(fault::ENTRY_POINTS)
        .copied()
}
