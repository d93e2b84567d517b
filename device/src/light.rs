//! Lights for next-event estimation. Every emissive sphere, triangle and
//! polygon is a light (a polygon is split into the triangles of its fan).
//! A light is chosen by its power from a cumulative table the host builds
//! ([`LightView::cdf`]), then a point on it: spheres by the cone of
//! directions they subtend (smallpt's light is a sphere of radius 600,
//! mostly hidden behind the ceiling: area sampling would waste most
//! samples on its far side), triangles uniformly by area.
//!
//! [`LightView::pdf`] gives the density with which [`LightView::sample`]
//! would have chosen a direction that a scattered ray happened to take, for
//! the multiple-importance weights (Veach's power heuristic). Both go
//! through the same functions, so the two strategies agree exactly on what
//! the light strategy's density is. Emissive boxes are not lights: their
//! light is found by scattering alone, with weight one.

use crate::geometry::sampling::Onb;
use crate::geometry::{Hit, Interval, PrimKind, PrimKinds, PrimRef, Primitives, Sphere};
use crate::material::Material;
use crate::math::{Ray, Rgb, Vec3, scalar};
use crate::slice::DeviceSlice;
use crate::texture::{SurfacePoint, Textures};

/// One light: an emissive primitive, or one triangle of an emissive
/// polygon's fan.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Light {
    /// The emitting primitive (a sphere, triangle or polygon).
    pub prim: PrimRef,
    /// For a polygon, which fan triangle: vertices 0, `part + 1` and
    /// `part + 2`; 0 otherwise.
    pub part: u32,
}

// SAFETY: `#[repr(C)]`, two four-byte fields: no padding.
unsafe impl crate::kernel::AsBytes for Light {}

/// The scene's lights as the stages read them.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct LightView<'a> {
    /// Every light.
    pub lights: DeviceSlice<'a, Light>,
    /// Cumulative pick probabilities, by power; the last is exactly 1.
    pub cdf: DeviceSlice<'a, f32>,
    /// One over the summed power of every light (0 without lights).
    pub inv_total_power: f32,
    /// Padding.
    pub _pad: u32,
}

/// A point chosen on a light, as seen from the point that asked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LightSample {
    /// Unit direction towards the point.
    pub dir: Vec3,
    /// Distance to the point.
    pub distance: f32,
    /// The light's primitive.
    pub prim: PrimRef,
    /// Radiance the light emits towards the asking point.
    pub radiance: Rgb,
    /// Density of choosing this direction (solid angle, the light's pick
    /// probability included).
    pub pdf: f32,
}

/// Below this squared sine of the cone's half-angle, `1 − cos` is computed
/// from its Taylor series (as pbrt-v4 does), so tiny distant spheres keep
/// their precision.
const SMALL_CONE: f32 = 0.000_685_23;

/// A sphere's cone of directions seen from a point outside it.
#[derive(Clone, Copy, Debug)]
struct Cone {
    /// Unit direction to the centre.
    axis: Vec3,
    /// Squared sine of the half-angle.
    sin2_max: f32,
    /// `1 − cos` of the half-angle (the solid angle over 2π).
    one_minus_cos_max: f32,
}

impl Cone {
    /// The cone `sphere` subtends from `origin`; `None` from inside or on it.
    #[inline(always)]
    fn of(sphere: &Sphere, origin: Vec3) -> Option<Cone> {
        let to_center = sphere.center - origin;
        let d2 = to_center.length_squared();
        let r2 = sphere.radius * sphere.radius;
        if d2 <= r2 {
            return None;
        }
        let sin2_max = r2 / d2;
        let one_minus_cos_max = if sin2_max < SMALL_CONE {
            0.5 * sin2_max
        } else {
            1.0 - scalar::sqrt(1.0 - sin2_max)
        };
        Some(Cone {
            axis: to_center / scalar::sqrt(d2),
            sin2_max,
            one_minus_cos_max,
        })
    }

    /// A direction uniform in the cone.
    #[inline(always)]
    fn sample(&self, u: f32, v: f32) -> Vec3 {
        let (sin2, cos) = if self.sin2_max < SMALL_CONE {
            let sin2 = self.sin2_max * u;
            (sin2, scalar::sqrt(1.0 - sin2))
        } else {
            let cos = 1.0 - u * self.one_minus_cos_max;
            (1.0 - cos * cos, cos)
        };
        let sin = scalar::sqrt(sin2.max(0.0));
        let (s, c) = scalar::sin_cos(scalar::TAU * v);
        Onb::from_normal(self.axis).to_world(Vec3::new(sin * c, sin * s, cos))
    }

    /// The density of [`Cone::sample`]: one over the cone's solid angle.
    #[inline(always)]
    fn pdf(&self) -> f32 {
        1.0 / (scalar::TAU * self.one_minus_cos_max)
    }
}

/// A triangle as a vertex, two edges and the unit normal of its front face.
#[derive(Clone, Copy, Debug)]
struct Flat {
    v0: Vec3,
    e1: Vec3,
    e2: Vec3,
    normal: Vec3,
}

impl Flat {
    /// A point uniform over the triangle.
    #[inline(always)]
    fn sample(&self, u: f32, v: f32) -> Vec3 {
        let su = scalar::sqrt(u);
        self.v0 + self.e1 * (su * (1.0 - v)) + self.e2 * (su * v)
    }

    /// Its area.
    #[inline(always)]
    fn area(&self) -> f32 {
        0.5 * self.e1.cross(self.e2).length()
    }
}

/// The material index of any primitive.
#[inline(always)]
fn material_of(primitives: &Primitives, prim: PrimRef) -> u32 {
    let i = prim.index() as usize;
    match prim.kind() {
        PrimKind::Sphere => primitives.spheres.as_slice()[i].material,
        PrimKind::Parallelepiped => primitives.boxes.as_slice()[i].material,
        PrimKind::Polygon => primitives.polygons.as_slice()[i].material,
        PrimKind::Triangle => primitives.triangles.as_slice()[i].material,
    }
}

/// The triangle of an area light (`None` for a sphere or a box, or a kind
/// the kernel does not hold).
#[inline(always)]
fn flat(primitives: &Primitives, kinds: PrimKinds, light: Light) -> Option<Flat> {
    let i = light.prim.index() as usize;
    match light.prim.kind() {
        PrimKind::Triangle if kinds.contains(PrimKind::Triangle) => {
            let t = &primitives.triangles.as_slice()[i];
            Some(Flat {
                v0: t.v0,
                e1: t.e1,
                e2: t.e2,
                normal: t.normal,
            })
        }
        PrimKind::Polygon if kinds.contains(PrimKind::Polygon) => {
            let p = &primitives.polygons.as_slice()[i];
            let v = primitives.polygon_vertices.as_slice();
            let first = p.first_vertex as usize;
            let v0 = v[first];
            Some(Flat {
                v0,
                e1: v[first + light.part as usize + 1] - v0,
                e2: v[first + light.part as usize + 2] - v0,
                normal: p.normal,
            })
        }
        _ => None,
    }
}

/// Emitted power of `light` up to the constant factor π that every light
/// shares: luminance of its emission times its area. The host builds the
/// pick table from it; 0 for a box, which is never a light.
pub fn power(primitives: &Primitives, materials: &[Material], light: Light) -> f32 {
    let luminance = materials[material_of(primitives, light.prim) as usize]
        .emission
        .rgb
        .luminance();
    let area = match light.prim.kind() {
        PrimKind::Sphere => {
            let r = primitives.spheres.as_slice()[light.prim.index() as usize].radius;
            2.0 * scalar::TAU * r * r
        }
        PrimKind::Parallelepiped => 0.0,
        PrimKind::Triangle | PrimKind::Polygon => flat(primitives, PrimKinds::ALL, light).map_or(0.0, |f| f.area()),
    };
    luminance * area
}

/// Veach's power heuristic (β = 2): the weight of a strategy of density
/// `pdf` against another of density `other`.
#[inline(always)]
pub fn power_heuristic(pdf: f32, other: f32) -> f32 {
    let (a, b) = (pdf * pdf, other * other);
    a / (a + b)
}

impl LightView<'_> {
    /// True when the scene has no lights to sample.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.lights.as_slice().is_empty()
    }

    /// Density per unit area of choosing a point of an area light of
    /// emission `emission` (pick probability over area: the same for
    /// every triangle of that emission).
    #[inline(always)]
    fn area_density(&self, emission: Rgb) -> f32 {
        emission.luminance() * self.inv_total_power
    }

    /// Density of choosing a direction towards sphere `sphere` of emission
    /// `emission` from `origin`: its pick probability over its cone's solid
    /// angle (0 from inside it).
    #[inline(always)]
    fn sphere_density(&self, sphere: &Sphere, emission: Rgb, origin: Vec3) -> (Option<Cone>, f32) {
        let Some(cone) = Cone::of(sphere, origin) else {
            return (None, 0.0);
        };
        let pick = emission.luminance() * 2.0 * scalar::TAU * sphere.radius * sphere.radius * self.inv_total_power;
        (Some(cone), pick * cone.pdf())
    }

    /// Picks a light by power with `pick` and a point on it with `(u, v)`,
    /// as seen from `origin`. `None` when the point turns its back on
    /// `origin` (or `origin` is inside the sphere chosen), or the light is
    /// of a kind outside `kinds` (the light kinds the kernel holds).
    /// Its radiance reads `textures` where given (kernels that hold
    /// textures), else the emission's constant.
    #[inline(always)]
    pub fn sample(
        &self,
        (primitives, kinds): (&Primitives, PrimKinds),
        materials: &[Material],
        textures: Option<&Textures>,
        origin: Vec3,
        (pick, u, v): (f32, f32, f32),
    ) -> Option<LightSample> {
        let cdf = self.cdf.as_slice();
        // The first entry whose cumulative probability exceeds `pick`.
        let (mut lo, mut hi) = (0, cdf.len() - 1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if cdf[mid] <= pick { lo = mid + 1 } else { hi = mid }
        }
        let light = self.lights.as_slice()[lo];
        let colour = &materials[material_of(primitives, light.prim) as usize].emission;
        // The pick weighs the emission's constant (a texture's mean); the
        // radiance is the emission where the chosen point lies.
        let emission = colour.rgb;
        let radiance = |point, normal| match textures {
            Some(textures) => {
                let at = SurfacePoint {
                    prim: light.prim,
                    point,
                    normal,
                };
                textures.colour(colour, primitives, &at)
            }
            None => colour.rgb,
        };
        if kinds.contains(PrimKind::Sphere) && light.prim.kind() == PrimKind::Sphere {
            let sphere = &primitives.spheres.as_slice()[light.prim.index() as usize];
            let (Some(cone), pdf) = self.sphere_density(sphere, emission, origin) else {
                return None;
            };
            let dir = cone.sample(u, v);
            let hit = sphere.intersect(&Ray::new(origin, dir), Interval::POSITIVE)?;
            return Some(LightSample {
                dir,
                distance: hit.t,
                prim: light.prim,
                radiance: radiance(origin + dir * hit.t, hit.normal),
                pdf,
            });
        }
        let f = flat(primitives, kinds, light)?;
        let point = f.sample(u, v);
        let to_point = point - origin;
        let d2 = to_point.length_squared();
        let distance = scalar::sqrt(d2);
        let dir = to_point / distance;
        let cos_light = -f.normal.dot(dir);
        if cos_light <= 0.0 || d2 == 0.0 {
            return None;
        }
        Some(LightSample {
            dir,
            distance,
            prim: light.prim,
            radiance: radiance(point, f.normal),
            pdf: self.area_density(emission) * d2 / cos_light,
        })
    }

    /// The density with which [`LightView::sample`] from `ray.origin` would
    /// have chosen the direction of `ray`, which hit the front face of
    /// `hit` (an emitter). 0 for what is not a light, or is a light of a
    /// kind outside `kinds` (the light kinds the kernel holds), which
    /// [`LightView::sample`] passes by.
    #[inline(always)]
    pub fn pdf(&self, (primitives, kinds): (&Primitives, PrimKinds), ray: &Ray, hit: &Hit, emission: Rgb) -> f32 {
        match hit.prim.kind() {
            PrimKind::Sphere if kinds.contains(PrimKind::Sphere) => {
                let sphere = &primitives.spheres.as_slice()[hit.prim.index() as usize];
                self.sphere_density(sphere, emission, ray.origin).1
            }
            kind @ (PrimKind::Triangle | PrimKind::Polygon) if kinds.contains(kind) => {
                self.area_density(emission) * (hit.t * hit.t) / -hit.normal.dot(ray.dir)
            }
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::geometry::{Polygon, Triangle};
    use crate::material::{FresnelModel, MaterialKind};
    use crate::rng::{Dim, PathRng, Sampler};
    use crate::texture::Colour;
    use std::vec::Vec;

    fn emitter(emission: Rgb) -> Material {
        Material {
            kind: MaterialKind::Emissive,
            albedo: Colour::BLACK,
            emission: Colour::constant(emission),
            roughness: 0.0,
            ior: 1.0,
            fresnel: FresnelModel::Schlick,
            transmittance: Rgb::WHITE,
            pattern: Colour::BLACK,
            octaves: 0,
            basis: crate::noise::Basis(0),
            _pad: 0,
            frequency: 1.0,
        }
    }

    fn numbers(i: u32) -> (f32, f32, f32) {
        let rng = PathRng::new(Sampler::Hash, 5, i, 0);
        (
            rng.uniform(0, Dim::LightPick),
            rng.uniform(0, Dim::LightU),
            rng.uniform(0, Dim::LightV),
        )
    }

    /// Solid angle of triangle `(a, b, c)` seen from the origin (Van
    /// Oosterom and Strackee 1983).
    fn solid_angle(a: Vec3, b: Vec3, c: Vec3) -> f64 {
        let (la, lb, lc) = (a.length() as f64, b.length() as f64, c.length() as f64);
        let num = a.dot(b.cross(c)) as f64;
        let den = la * lb * lc + a.dot(b) as f64 * lc + a.dot(c) as f64 * lb + b.dot(c) as f64 * la;
        2.0 * num.abs().atan2(den)
    }

    #[test]
    fn a_sphere_light_is_sampled_by_its_cone_with_the_pdf_of_its_solid_angle() {
        let spheres = [Sphere::new(Vec3::new(0.0, 3.0, 0.0), 1.2, 0)];
        let materials = [emitter(Rgb::new(2.0, 2.0, 2.0))];
        let lights = [Light {
            prim: PrimRef::new(PrimKind::Sphere, 0),
            part: 0,
        }];
        let cdf = [1.0f32];
        let primitives = Primitives {
            spheres: DeviceSlice::from_slice(&spheres).unwrap(),
            ..empty()
        };
        let power = power(&primitives, &materials, lights[0]);
        let view = LightView {
            lights: DeviceSlice::from_slice(&lights).unwrap(),
            cdf: DeviceSlice::from_slice(&cdf).unwrap(),
            inv_total_power: 1.0 / power,
            _pad: 0,
        };
        let origin = Vec3::ZERO;
        // The cone's solid angle, counted independently: the fraction of
        // uniform directions that hit the sphere, times 4π.
        let n = 200_000;
        let mut hits = 0;
        for i in 0..n {
            let (_, u, v) = numbers(i);
            let z = 1.0 - 2.0 * u;
            let r = scalar::sqrt(1.0 - z * z);
            let (s, c) = scalar::sin_cos(scalar::TAU * v);
            let dir = Vec3::new(r * c, z, r * s);
            hits += spheres[0]
                .intersect(&Ray::new(origin, dir), Interval::POSITIVE)
                .is_some() as u32;
        }
        let counted = 4.0 * core::f64::consts::PI * hits as f64 / n as f64;
        let mut inverse_pdfs = 0.0f64;
        let samples: Vec<LightSample> = (0..10_000)
            .map(|i| {
                view.sample((&primitives, PrimKinds::ALL), &materials, None, origin, numbers(i))
                    .expect("visible")
            })
            .collect();
        for s in &samples {
            inverse_pdfs += 1.0 / s.pdf as f64;
            // The point is on the sphere, and the MIS density agrees.
            let hit_point = origin + s.dir * s.distance;
            assert!(((hit_point - spheres[0].center).length() - 1.2).abs() < 1e-4);
            let ray = Ray::new(origin, s.dir);
            let hit = Hit::new(
                &ray,
                spheres[0].intersect(&ray, Interval::POSITIVE).unwrap(),
                0,
                lights[0].prim,
            );
            assert!(
                (view.pdf((&primitives, PrimKinds::ALL), &ray, &hit, materials[0].emission.rgb) - s.pdf).abs()
                    < 1e-6 * s.pdf
            );
        }
        let integrated = inverse_pdfs / samples.len() as f64;
        assert!(
            (integrated - counted).abs() < 0.01 * counted,
            "{integrated} vs {counted}"
        );
        // From inside the sphere there is nothing to sample.
        assert!(
            view.sample(
                (&primitives, PrimKinds::ALL),
                &materials,
                None,
                spheres[0].center,
                numbers(1)
            )
            .is_none()
        );
    }

    #[test]
    fn polygon_and_triangle_lights_are_sampled_by_area_with_the_pdf_of_their_solid_angle() {
        let quad = [
            Vec3::new(-1.0, 2.0, -1.0),
            Vec3::new(1.0, 2.0, -1.0),
            Vec3::new(1.5, 2.0, 1.0),
            Vec3::new(-1.0, 2.0, 1.0),
        ];
        // Winding seen from below: the front face looks down at the origin.
        let polygons = [Polygon::new(&[quad[0], quad[1], quad[2], quad[3]], 0, 0)];
        let polygons = if polygons[0].normal.y > 0.0 {
            [Polygon::new(&[quad[3], quad[2], quad[1], quad[0]], 4, 0)]
        } else {
            polygons
        };
        let vertices = [quad[0], quad[1], quad[2], quad[3], quad[3], quad[2], quad[1], quad[0]];
        let tri = Triangle::new(
            Vec3::new(-2.0, 0.0, 1.0),
            Vec3::new(-2.0, 0.0, -1.0),
            Vec3::new(-2.0, 1.5, 0.0),
            1,
        );
        let triangles = [if tri.normal.x > 0.0 {
            tri
        } else {
            Triangle::new(
                Vec3::new(-2.0, 0.0, -1.0),
                Vec3::new(-2.0, 0.0, 1.0),
                Vec3::new(-2.0, 1.5, 0.0),
                1,
            )
        }];
        let materials = [emitter(Rgb::new(1.0, 1.0, 1.0)), emitter(Rgb::new(4.0, 0.5, 0.5))];
        let primitives = Primitives {
            polygons: DeviceSlice::from_slice(&polygons).unwrap(),
            polygon_vertices: DeviceSlice::from_slice(&vertices).unwrap(),
            triangles: DeviceSlice::from_slice(&triangles).unwrap(),
            ..empty()
        };
        let lights = [
            Light {
                prim: PrimRef::new(PrimKind::Polygon, 0),
                part: 0,
            },
            Light {
                prim: PrimRef::new(PrimKind::Polygon, 0),
                part: 1,
            },
            Light {
                prim: PrimRef::new(PrimKind::Triangle, 0),
                part: 0,
            },
        ];
        let powers: Vec<f32> = lights.iter().map(|&l| power(&primitives, &materials, l)).collect();
        let total: f32 = powers.iter().sum();
        let cdf = [powers[0] / total, (powers[0] + powers[1]) / total, 1.0];
        let view = LightView {
            lights: DeviceSlice::from_slice(&lights).unwrap(),
            cdf: DeviceSlice::from_slice(&cdf).unwrap(),
            inv_total_power: 1.0 / total,
            _pad: 0,
        };
        let origin = Vec3::new(0.0, 0.5, 0.0);
        // Each light's solid angle weighted by its pick probability is what
        // the mean of 1/pdf over the samples that chose it converges to;
        // summed, E[1/pdf] is the total solid angle.
        let rel = |v: Vec3| v - origin;
        let expected = solid_angle(rel(quad[0]), rel(quad[1]), rel(quad[2]))
            + solid_angle(rel(quad[0]), rel(quad[2]), rel(quad[3]))
            + solid_angle(
                rel(triangles[0].v0),
                rel(triangles[0].v0 + triangles[0].e1),
                rel(triangles[0].v0 + triangles[0].e2),
            );
        let n = 100_000;
        let mut sum = 0.0f64;
        for i in 0..n {
            let s = view
                .sample((&primitives, PrimKinds::ALL), &materials, None, origin, numbers(i))
                .expect("front faces");
            sum += 1.0 / s.pdf as f64;
            // The MIS density of the same direction agrees.
            let ray = Ray::new(origin, s.dir);
            let prim = s.prim;
            let normal = match prim.kind() {
                PrimKind::Polygon => polygons[0].normal,
                _ => triangles[0].normal,
            };
            let hit = Hit {
                t: s.distance,
                point: ray.at(s.distance),
                normal,
                material: 0,
                prim,
            };
            let emission = materials[if prim.kind() == PrimKind::Polygon { 0 } else { 1 }]
                .emission
                .rgb;
            assert!((view.pdf((&primitives, PrimKinds::ALL), &ray, &hit, emission) - s.pdf).abs() < 1e-4 * s.pdf);
        }
        let integrated = sum / n as f64;
        assert!(
            (integrated - expected).abs() < 0.01 * expected,
            "{integrated} vs {expected}"
        );
    }

    fn empty() -> Primitives<'static> {
        Primitives {
            spheres: DeviceSlice::from_slice(&[]).unwrap(),
            boxes: DeviceSlice::from_slice(&[]).unwrap(),
            polygons: DeviceSlice::from_slice(&[]).unwrap(),
            polygon_vertices: DeviceSlice::from_slice(&[]).unwrap(),
            triangles: DeviceSlice::from_slice(&[]).unwrap(),
        }
    }
}
