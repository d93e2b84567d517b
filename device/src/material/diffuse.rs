//! Lambertian reflection.

use super::{Evaluated, Material, Scatter, ScatterInput, offset_origin};
use crate::geometry::sampling::cosine_hemisphere;
use crate::math::{Ray, Vec3, scalar};
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
        weight: input.colour(&material.albedo),
        delta: false,
    }
}

/// The BSDF (albedo/π) times the cosine towards `dir`, and the density with
/// which [`scatter`] would choose `dir` (cos/π); `None` below the surface.
#[inline(always)]
pub fn evaluate(material: &Material, input: &ScatterInput, dir: Vec3) -> Option<Evaluated> {
    let cos = input.hit.facing_normal(input.ray).dot(dir);
    if cos <= 0.0 {
        return None;
    }
    let pdf = cos * (1.0 / scalar::PI);
    Some(Evaluated {
        f_cos: input.colour(&material.albedo) * pdf,
        pdf,
    })
}
