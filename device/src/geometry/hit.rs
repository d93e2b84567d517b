//! Hit records.

use super::PrimRef;
use crate::math::{Ray, Vec3};

/// What a primitive's intersection test returns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceHit {
    /// Distance along the (unit-direction) ray.
    pub t: f32,
    /// Outward unit normal at the hit point.
    pub normal: Vec3,
}

/// The closest hit of a ray against the scene.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Distance along the ray.
    pub t: f32,
    /// World-space hit point.
    pub point: Vec3,
    /// Outward unit normal of the surface.
    pub normal: Vec3,
    /// Index into the scene's materials.
    pub material: u32,
    /// Which primitive was hit (next-event estimation weighs the light it
    /// may be).
    pub prim: PrimRef,
}

impl Hit {
    /// Completes a primitive's [`SurfaceHit`] into a scene hit.
    #[inline(always)]
    pub fn new(ray: &Ray, surface: SurfaceHit, material: u32, prim: PrimRef) -> Self {
        Hit {
            t: surface.t,
            point: ray.at(surface.t),
            normal: surface.normal,
            material,
            prim,
        }
    }

    /// True when the ray arrived from the outside (against the outward normal).
    #[inline(always)]
    pub fn front_face(&self, ray: &Ray) -> bool {
        ray.dir.dot(self.normal) < 0.0
    }

    /// The normal on the side the ray came from.
    #[inline(always)]
    pub fn facing_normal(&self, ray: &Ray) -> Vec3 {
        if self.front_face(ray) {
            self.normal
        } else {
            -self.normal
        }
    }
}
