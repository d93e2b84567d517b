//! Extend: the closest hit of a path's current ray.

use crate::accel::Traversal;
use crate::geometry::{Hit, Interval};
use crate::math::Ray;
use crate::scene::SceneView;

/// The nearest surface along `ray` found by traversal `T`, or `None` when it
/// escapes. New rays are offset from their surface at spawn time, so every
/// positive distance counts.
#[inline(always)]
pub fn extend<T: Traversal>(scene: &SceneView, ray: &Ray) -> Option<Hit> {
    T::closest_hit(
        &scene.primitives,
        &scene.accel,
        scene.features().primitives(),
        ray,
        Interval::POSITIVE,
    )
}
