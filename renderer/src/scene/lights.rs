//! The scene's lights for next-event estimation: every emissive sphere,
//! triangle and polygon (each polygon as the triangles of its fan), with
//! the table that picks one by power. Emissive boxes are left out: the
//! device weighs the light they give as found by scattering alone.

use super::Geometry;
use super::geometry::host_slice;
use device::geometry::{PrimKind, PrimRef};
use device::light::{self, Light, LightView};
use device::material::Material;

/// The lights of a scene and their pick table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lights {
    /// Every light with a positive power, in primitive order.
    pub lights: Vec<Light>,
    /// Cumulative pick probabilities by power; the last is exactly 1.
    pub cdf: Vec<f32>,
    /// One over the summed power (0 without lights).
    pub inv_total_power: f32,
}

impl Lights {
    /// The lights of `geometry` whose material in `materials` emits.
    pub fn collect(geometry: &Geometry, materials: &[Material]) -> Self {
        let primitives = geometry.view();
        let mut candidates = Vec::new();
        for (i, s) in geometry.spheres.iter().enumerate() {
            candidates.push((s.material, PrimRef::new(PrimKind::Sphere, i as u32), 0));
        }
        for (i, t) in geometry.triangles.iter().enumerate() {
            candidates.push((t.material, PrimRef::new(PrimKind::Triangle, i as u32), 0));
        }
        for (i, p) in geometry.polygons.iter().enumerate() {
            for part in 0..p.vertex_count.saturating_sub(2) {
                candidates.push((p.material, PrimRef::new(PrimKind::Polygon, i as u32), part));
            }
        }
        let mut lights = Vec::new();
        let mut powers = Vec::new();
        for (material, prim, part) in candidates {
            if materials[material as usize].emission.is_black() {
                continue;
            }
            let l = Light { prim, part };
            let power = light::power(&primitives, materials, l);
            if power > 0.0 && power.is_finite() {
                lights.push(l);
                powers.push(power as f64);
            }
        }
        let total: f64 = powers.iter().sum();
        let mut running = 0.0;
        let mut cdf: Vec<f32> = powers
            .iter()
            .map(|p| {
                running += p;
                (running / total) as f32
            })
            .collect();
        if let Some(last) = cdf.last_mut() {
            *last = 1.0;
        }
        Lights {
            lights,
            cdf,
            inv_total_power: if total > 0.0 { (1.0 / total) as f32 } else { 0.0 },
        }
    }

    /// A device view of these host arrays.
    pub fn view(&self) -> LightView<'_> {
        LightView {
            lights: host_slice(&self.lights),
            cdf: host_slice(&self.cdf),
            inv_total_power: self.inv_total_power,
            _pad: 0,
        }
    }
}
