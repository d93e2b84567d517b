//! Shadow: the any-hit test of a next-event shadow ray. The CPU back ends
//! and the megakernel run it inline after shading; the wavefront runs it
//! as its own kernel over the shadow queue.

use super::ShadowRay;
use crate::accel::Traversal;
use crate::geometry::Interval;
use crate::math::Rgb;
use crate::scene::SceneView;

impl ShadowRay {
    /// The contribution to add, or `None` when traversal `T` finds
    /// anything between the shaded point and the light (the light itself
    /// excepted).
    #[inline(always)]
    pub fn unblocked<T: Traversal>(&self, scene: &SceneView) -> Option<Rgb> {
        let range = Interval {
            min: 0.0,
            max: self.t_max,
        };
        let kinds = scene.features().primitives();
        (!T::occluded(&scene.primitives, &scene.accel, kinds, &self.ray, range, self.light))
            .then_some(self.contribution)
    }
}
