//! A coated material of tunable cost: a clear coat (Schlick's Fresnel
//! reflectance at index `ior`) over a diffuse base whose colour is an fBm
//! noise texture of `octaves` octaves, in noise basis `basis`, blending
//! `albedo` into `pattern`.
//! Shading cost grows with the octaves; it stands in for the "expensive
//! materials" of Laine, Karras and Aila (HPG 2013). The coat reflects as a
//! mirror with the Fresnel probability; otherwise the base scatters by
//! the cosine. Next-event estimation weighs the base's lobe only.

use super::fresnel::schlick;
use super::{Evaluated, Material, Scatter, ScatterInput, offset_origin};
use crate::geometry::sampling::cosine_hemisphere;
use crate::math::{Ray, Rgb, Vec3, scalar};
use crate::noise::fbm;
use crate::rng::Dim;

/// The coat's reflectance for the arriving ray (its probability of
/// reflecting as a mirror).
#[inline(always)]
fn coat(material: &Material, input: &ScatterInput) -> f32 {
    let n = input.hit.facing_normal(input.ray);
    let cos = (-input.ray.dir.dot(n)).clamp(0.0, 1.0);
    schlick(cos, cos, 1.0, material.ior)
}

/// The base colour at the hit: the noise texture, evaluated in world
/// space scaled by `frequency`, blending the material's two colours (each
/// may itself be a texture).
#[inline(always)]
pub fn base(material: &Material, input: &ScatterInput) -> Rgb {
    let t = fbm(input.hit.point * material.frequency, material.octaves, material.basis);
    input.colour(&material.albedo).lerp(input.colour(&material.pattern), t)
}

/// Mirror reflection off the coat with its Fresnel probability, else the
/// base's cosine-weighted bounce; each branch's weight is its colour (the
/// branch probabilities cancel).
#[inline(always)]
pub fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
    let n = input.hit.facing_normal(input.ray);
    let origin = offset_origin(input.hit.point, n);
    if input.rng.uniform(input.bounce, Dim::Lobe) < coat(material, input) {
        return Scatter::Continue {
            ray: Ray::new(origin, input.ray.dir.reflect(n)),
            weight: Rgb::WHITE,
            delta: true,
        };
    }
    let u = input.rng.uniform(input.bounce, Dim::ScatterU);
    let v = input.rng.uniform(input.bounce, Dim::ScatterV);
    Scatter::Continue {
        ray: Ray::new(origin, cosine_hemisphere(n, u, v)),
        weight: base(material, input),
        delta: false,
    }
}

/// The base's lobe towards `dir`: (1 − F)·base/π times the cosine, and its
/// density (1 − F)·cos/π; the coat's mirror has no density.
#[inline(always)]
pub fn evaluate(material: &Material, input: &ScatterInput, dir: Vec3) -> Option<Evaluated> {
    let cos = input.hit.facing_normal(input.ray).dot(dir);
    if cos <= 0.0 {
        return None;
    }
    let pdf = (1.0 - coat(material, input)) * cos * (1.0 / scalar::PI);
    Some(Evaluated {
        f_cos: base(material, input) * pdf,
        pdf,
    })
}
