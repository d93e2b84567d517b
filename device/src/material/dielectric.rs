//! Dielectrics: Fresnel-weighted reflection or Snell refraction, with
//! Beer–Lambert absorption over the distance travelled inside.

use super::fresnel::{self, Refraction};
use super::{Material, Scatter, ScatterInput, offset_origin};
use crate::math::Ray;
use crate::rng::Dim;

/// Picks reflection with probability equal to the Fresnel reflectance and
/// refraction otherwise, so the weight is the surface's tint (`albedo`,
/// white for clear glass; smallpt's glass is 0.999) up to absorption. A hit
/// on the back face means the segment that just ended ran inside the medium,
/// so its length is charged to the throughput as `transmittance^t`.
#[inline(always)]
pub fn scatter(material: &Material, input: &ScatterInput) -> Scatter {
    let ray = input.ray;
    let hit = input.hit;
    let entering = hit.front_face(ray);
    let n = hit.facing_normal(ray);
    let (eta_i, eta_t) = if entering {
        (1.0, material.ior)
    } else {
        (material.ior, 1.0)
    };
    let cos_i = (-ray.dir.dot(n)).min(1.0);
    let tint = input.colour(&material.albedo);
    let weight = if entering {
        tint
    } else {
        tint * material.transmittance.powf(hit.t)
    };
    let reflect_p = fresnel::reflectance(material.fresnel, cos_i, eta_i, eta_t);
    let refraction = fresnel::refraction(cos_i, eta_i, eta_t);
    let u = input.rng.uniform(input.bounce, Dim::Lobe);
    let ray = match refraction {
        Refraction::Transmits { cos_t } if u >= reflect_p => {
            let ratio = eta_i / eta_t;
            let dir = (ray.dir * ratio + n * (ratio * cos_i - cos_t)).normalized();
            Ray::new(offset_origin(hit.point, -n), dir)
        }
        _ => Ray::new(offset_origin(hit.point, n), ray.dir.reflect(n)),
    };
    Scatter::Continue {
        ray,
        weight,
        delta: true,
    }
}
