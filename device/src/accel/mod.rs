//! Closest-hit queries against the whole scene. Builders live on the host;
//! only traversal lives here, shared by every back end.

pub mod brute;

use crate::geometry::{Hit, Interval};
use crate::math::Ray;
use crate::scene::SceneView;

/// The closest hit of `ray` in `range`, or `None` when it escapes.
#[inline(always)]
pub fn closest_hit(scene: &SceneView, ray: &Ray, range: Interval) -> Option<Hit> {
    brute::closest_hit(scene, ray, range)
}
