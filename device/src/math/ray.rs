//! Rays.

use super::Vec3;

/// A ray `origin + t * dir` with a unit-length `dir`, so that `t` is a distance.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ray {
    /// Where the ray starts.
    pub origin: Vec3,
    /// Unit direction.
    pub dir: Vec3,
}

const _: () = assert!(core::mem::size_of::<Ray>() == 24);
// SAFETY: `#[repr(C)]`, two `Vec3` (12 bytes each, no padding between).
unsafe impl crate::kernel::AsBytes for Ray {}

impl Ray {
    /// Builds a ray; `dir` must already be unit length.
    #[inline(always)]
    pub fn new(origin: Vec3, dir: Vec3) -> Self {
        Ray { origin, dir }
    }

    /// The point at distance `t` along the ray.
    #[inline(always)]
    pub fn at(&self, t: f32) -> Vec3 {
        self.dir.mul_add(Vec3::splat(t), self.origin)
    }
}
