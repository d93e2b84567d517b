//! Lambertian reflection.

use super::{Material, Scatter, ScatterInput, offset_origin};
use crate::geometry::sampling::cosine_hemisphere;
use crate::math::Ray;
use crate::rng::Dim;

/// Cosine-weighted sampling: the BSDF (albedo/π) times the cosine over the
/// pdf (cos/π) leaves exactly the albedo as the path weight.
#[inline(always)]
pub fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
    let n = input.hit.facing_normal(input.ray);
    let u = input.rng.uniform(input.bounce, Dim::ScatterU);
    let v = input.rng.uniform(input.bounce, Dim::ScatterV);
    Scatter::Continue {
        ray: Ray::new(offset_origin(input.hit.point, n), cosine_hemisphere(n, u, v)),
        weight: material.albedo,
    }
}
