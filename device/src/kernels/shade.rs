//! The wavefront's shading kernels: [`Shade`], declared from the table in
//! [`crate::shading`] (the table names the entry points; this module gives
//! them their kernel type), and [`visit_shade`], which picks a class's
//! kernel at run time.
//!
//! Each class's kernel holds one class's code; next-event estimation,
//! textures and the primitive kinds it reads are bound when its module is
//! loaded ([`crate::features`]), as for every kernel.

use super::wave_kernels::{CommonArgs, IterationRecord, QueueKernel, WavefrontArgs, deposit, grid_stride};
use crate::kernel::{EntryPoint, Thread};
use crate::launch::{Compaction, MaterialSort};
use crate::material::Shader;
use crate::observe::{BranchObserver, WarpDivergence};
use crate::queue::{Queues, Slot, WorkQueue};
use crate::shading::{SORTED_CLASS, ShadeClass, class};
use crate::stages::shade::{escaped, surface};
use crate::stages::{PathStatus, ShadowRay};
use crate::warp::{active_mask, ballot};
use core::marker::PhantomData;

/// Shades every path in class `S`'s queue: adds the light it found to its
/// pixel, queues its shadow ray (if it made one), then passes it on (atomic
/// append, or an alive flag for the prefix sum) or finishes it (its slot is
/// simply no longer in a queue).
pub struct Shade<S>(PhantomData<S>);

impl<S: Shader> QueueKernel for Shade<S> {
    /// The class's queue, the sorted queue (read instead when the class
    /// is sorted by variant), the next ray queue, the prefix sum's alive
    /// flags and the shadow rays.
    type Io = (
        WorkQueue<Slot>,
        WorkQueue<Slot>,
        WorkQueue<Slot>,
        *mut u32,
        WorkQueue<ShadowRay>,
    );

    fn io(q: &Queues) -> Self::Io {
        (q.shade[S::CLASS as usize], q.sorted(), q.rays_out, q.alive(), q.shadow)
    }

    fn items(r: &IterationRecord) -> u64 {
        r.shade[S::CLASS as usize] as u64
    }

    #[inline(always)]
    unsafe fn run(thread: Thread, _phase: u32, a: &CommonArgs, (queue, sorted, rays_out, alive, shadow): Self::Io) {
        let k = S::CLASS as usize;
        let divergence = WarpDivergence(if a.divergence.is_null() {
            a.divergence
        } else {
            // SAFETY: a non-null buffer holds one value per class.
            unsafe { a.divergence.add(k) }
        });
        // SAFETY: the contract of `WavefrontArgs`; queue entries are slots
        // and every slot's `queue_pos` is within this iteration's ray queue.
        unsafe {
            let queue = if S::CLASS == SORTED_CLASS && a.material_sort == MaterialSort::ByVariant {
                sorted
            } else {
                queue
            };
            // The loop's body, with the attributes given. The coated
            // programs' shading is large enough that LLVM left it a called
            // function, and the kernel copied its whole argument (880 bytes
            // a thread) to local memory for the call: there it is inlined
            // by force, and nothing goes to local memory. Forced on the
            // other classes it raised their registers (the diffuse kernel
            // with next-event estimation from 91 to 118, sm_90), so they
            // keep LLVM's choice.
            macro_rules! shade_one {
                ($(#[$attribute:meta])?) => {
                    $(#[$attribute])?
                    |i: u32| {
                        let slot = queue.get(i);
                        let mut path = a.pool.load(slot);
                        let shaded = if S::CLASS == ShadeClass::Escaped {
                            divergence.material_branch(S::CLASS, 0);
                            escaped(&a.scene, &path)
                        } else {
                            let hit = a.pool.hit(slot, &path.ray);
                            let m = &a.scene.materials.as_slice()[hit.material as usize];
                            divergence.material_branch(S::CLASS, m.variant());
                            surface::<S>(&a.scene, &a.params, &mut path, &hit, m)
                        };
                        let casters = ballot(active_mask(), shaded.shadow.is_some());
                        if let Some(ray) = shaded.shadow {
                            shadow.push(casters, ray);
                    }
                    if !shaded.light.is_black() {
                        deposit(shaded.light, path.pixel, a.film, a.counters);
                    }
                    let keep = shaded.status == PathStatus::Continue;
                    if keep {
                        a.pool.store_shaded(slot, &path);
                    }
                    pass_on(a, slot, keep, (rays_out, alive));
                    }
                };
            }
            if S::CLASS == ShadeClass::Coated {
                grid_stride(&thread, queue.count(), shade_one!(#[inline(always)]));
            } else {
                grid_stride(&thread, queue.count(), shade_one!());
            }
        }
    }
}

/// Hands a shaded path to the compaction: survivors to `rays_out`, or
/// their flags to `alive` for the prefix sum.
///
/// # Safety
/// As for [`Shade`]'s run, for `slot` of this iteration's ray queue.
#[inline(always)]
unsafe fn pass_on(a: &CommonArgs, slot: Slot, keep: bool, (rays_out, alive): (WorkQueue<Slot>, *mut u32)) {
    // SAFETY: the caller's contract.
    unsafe {
        match a.compaction {
            Compaction::PrefixSum => *alive.add(*a.pool.queue_pos.add(slot.index()) as usize) = keep as u32,
            Compaction::AtomicAppend => {
                let keepers = ballot(active_mask(), keep);
                if keep {
                    rays_out.push(keepers, slot);
                }
            }
        }
    }
}

/// Something done with one class's shading kernel, chosen at
/// run time with [`visit_shade`] (launching it, naming it).
pub trait ShadeVisitor {
    /// What the visit returns.
    type Output;
    /// Does it for kernel `K`.
    fn visit<K: EntryPoint<Args = WavefrontArgs> + QueueKernel>(self) -> Self::Output;
}

/// Declares [`Shade`]'s entry points and [`visit_shade`] from the class
/// table ([`crate::shading`]'s `classes!`).
macro_rules! shade_kernels {
    (
        surfaces {
            $($(#[$doc:meta])* $surface:ident $name:literal => $kernel:ident;)*
        }
        $(#[$escaped_doc:meta])* escaped => $escaped_kernel:ident;
    ) => {
        crate::kernel::entry_points! {
            $(
                $kernel => Shade<class::$surface>,
            )*
            $escaped_kernel => Shade<class::Escaped>,
        }

        /// Runs `visitor` with the shading kernel of `class`.
        #[inline(always)]
        pub fn visit_shade<V: ShadeVisitor>(class: ShadeClass, visitor: V) -> V::Output {
            match class {
                $(ShadeClass::$surface => visitor.visit::<Shade<class::$surface>>(),)*
                ShadeClass::Escaped => visitor.visit::<Shade<class::Escaped>>(),
            }
        }
    };
}

crate::shading::classes!(shade_kernels);

/// The name of class `class`'s shading kernel.
pub fn kernel_of(class: ShadeClass) -> &'static str {
    struct Name;
    impl ShadeVisitor for Name {
        type Output = &'static str;
        fn visit<K: EntryPoint<Args = WavefrontArgs> + QueueKernel>(self) -> &'static str {
            K::NAME
        }
    }
    visit_shade(class, Name)
}
