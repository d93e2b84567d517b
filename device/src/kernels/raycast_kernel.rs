//! The ray-casting kernel: the closest hit of every ray in a buffer, one
//! thread per ray. It measures traversal alone (Aila and Laine's method),
//! separate from shading and path state.

use crate::accel::Traversal;
use crate::geometry::Interval;
use crate::kernel::{Kernel, Thread};
use crate::launch::RayHit;
use crate::math::Ray;
use crate::scene::SceneView;
use core::marker::PhantomData;

/// The ray-casting kernel's argument.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RaycastKernelArgs {
    /// The scene (device pointers).
    pub scene: SceneView<'static>,
    /// `count` rays.
    pub rays: *const Ray,
    /// Number of rays.
    pub count: u32,
    /// `count` results.
    pub hits: *mut RayHit,
}

/// Writes `hits[i]` for `rays[i]`, `i < count`.
///
/// Contract: `rays` and `hits` hold `count` values, and every pointer is
/// memory of the side that runs the kernel.
pub struct Raycast<T>(PhantomData<T>);

impl<T: Traversal> Kernel for Raycast<T> {
    type Args = RaycastKernelArgs;

    #[inline(always)]
    unsafe fn run(thread: Thread, _phase: u32, a: &RaycastKernelArgs) {
        let i = thread.global_x();
        if i >= a.count {
            return;
        }
        // SAFETY: `i < count`, and the caller guarantees both buffers hold `count` values.
        unsafe {
            let ray = &*a.rays.add(i as usize);
            let kinds = a.scene.features().primitives();
            let hit = T::closest_hit(&a.scene.primitives, &a.scene.accel, kinds, ray, Interval::POSITIVE);
            *a.hits.add(i as usize) = RayHit::from_hit(hit.as_ref());
        }
    }
}
