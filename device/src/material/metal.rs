//! Metals: mirror reflection perturbed inside a roughness ball.

use super::{Material, Scatter, ScatterInput, offset_origin};
use crate::geometry::sampling::uniform_in_ball;
use crate::math::Ray;
use crate::rng::Dim;

/// Reflects about the facing normal, then moves the direction by a random
/// point in a ball of radius `roughness` (RTIOW's "fuzz"). A direction pushed
/// below the surface is absorbed.
#[inline(always)]
pub fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
    let n = input.hit.facing_normal(input.ray);
    let mirror = input.ray.dir.reflect(n);
    let fuzz = uniform_in_ball(
        input.rng.uniform(input.bounce, Dim::ScatterU),
        input.rng.uniform(input.bounce, Dim::ScatterV),
        input.rng.uniform(input.bounce, Dim::ScatterW),
    );
    let dir = (mirror + fuzz * material.roughness).normalized();
    if dir.dot(n) <= 0.0 {
        return Scatter::Absorbed;
    }
    Scatter::Continue {
        ray: Ray::new(offset_origin(input.hit.point, n), dir),
        weight: input.colour(&material.albedo),
        delta: true,
    }
}
