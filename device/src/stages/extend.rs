//! Extend: the closest hit of a path's current ray.

use crate::accel;
use crate::geometry::{Hit, Interval};
use crate::math::Ray;
use crate::scene::SceneView;

/// The nearest surface along `ray`, or `None` when it escapes. New rays are
/// offset from their surface at spawn time, so every positive distance counts.
#[inline(always)]
pub fn extend(scene: &SceneView, ray: &Ray) -> Option<Hit> {
    accel::closest_hit(scene, ray, Interval::POSITIVE)
}
