//! The ray-casting kernel: the closest hit of every ray in a buffer, one
//! thread per ray. It measures traversal alone (Aila and Laine's method),
//! separate from shading and path state.

use crate::accel::{BruteForce, Bvh, KdTree, Traversal};
use crate::geometry::Interval;
use crate::launch::RayHit;
use crate::math::Ray;
use crate::scene::SceneView;
use core::arch::nvptx::{_block_dim_x, _block_idx_x, _thread_idx_x};

/// Writes `hits[i]` for `rays[i]`, `i < count`.
///
/// # Safety
/// `rays` and `hits` must hold `count` values in device memory, and the
/// scene's slices must point to device memory.
#[inline(always)]
pub unsafe fn raycast<T: Traversal>(scene: SceneView<'static>, rays: *const Ray, count: u32, hits: *mut RayHit) {
    // SAFETY: reading the special registers has no preconditions.
    let i = unsafe { _block_idx_x() * _block_dim_x() + _thread_idx_x() };
    if i >= count {
        return;
    }
    // SAFETY: `i < count`, and the caller guarantees both buffers hold `count` values.
    unsafe {
        let hit = T::closest_hit(&scene, &*rays.add(i as usize), Interval::POSITIVE);
        *hits.add(i as usize) = RayHit::from_hit(hit.as_ref());
    }
}

super::export_kernels!(
    raycast,
    (scene: SceneView<'static>, rays: *const Ray, count: u32, hits: *mut RayHit),
    [raycast_brute => BruteForce, raycast_bvh => Bvh, raycast_kdtree => KdTree]
);
