//! Shade: the light a path finds at its hit (emission, or the background),
//! the light arriving there directly (next-event estimation, as a shadow
//! ray), then scatter or end the path. Light found goes to the pixel at
//! once, each contribution on its own, so a path carries no radiance.
//!
//! [`surface`] takes the material's functions as a type parameter so that
//! the wavefront back end can instantiate it once per material class (one
//! kernel each, no divergence on the material) while the megakernel passes
//! the dispatching [`crate::material::AnyMaterial`].
//!
//! With next-event estimation on, light reaches a path by two strategies:
//! a shadow ray towards a point chosen on a light, and a scattered ray
//! that happens to hit an emitter. Each is weighted by the power heuristic
//! against the other's density (multiple importance sampling), so their
//! sum is unbiased and neither's noise dominates.

use super::{PathState, PathStatus, ShadowRay};
use crate::features::Feature;
use crate::geometry::Hit;
use crate::light::power_heuristic;
use crate::material::{Bsdf, Material, Scatter, ScatterInput, offset_origin};
use crate::math::{Ray, Rgb};
use crate::observe::BranchObserver;
use crate::rng::Dim;
use crate::scene::{Nee, RenderParams, SceneView};
use crate::shading::ShadeClass;

/// The smallest Russian-roulette survival probability, so that a dim path is
/// never weighted up by more than 20×.
pub const MIN_SURVIVAL: f32 = 0.05;

/// What shading did to a path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shaded {
    /// Whether the path goes on.
    pub status: PathStatus,
    /// Light the path found here, for its pixel (black: none).
    pub light: Rgb,
    /// The shadow ray of its next-event estimate, if one was made.
    pub shadow: Option<ShadowRay>,
}

/// A path whose ray escaped: it gathers the background and ends.
#[inline(always)]
pub fn escaped(scene: &SceneView, path: &PathState) -> Shaded {
    Shaded {
        status: PathStatus::Finished,
        light: path.throughput * scene.background.radiance(path.ray.dir),
        shadow: None,
    }
}

/// A path that hit `hit` on a surface of `material`: emission, the
/// next-event estimate, scattering by `B`, then the depth limit and Russian
/// roulette.
#[inline(always)]
pub fn surface<B: Bsdf>(
    scene: &SceneView,
    params: &RenderParams,
    path: &mut PathState,
    hit: &Hit,
    material: &Material,
) -> Shaded {
    let features = scene.features();
    let sample_lights = features.contains(Feature::Nee) && params.nee == Nee::On && !scene.lights.is_empty();
    let input = ScatterInput {
        ray: &path.ray,
        hit,
        rng: path.rng,
        bounce: path.bounce,
        primitives: &scene.primitives,
        textures: &scene.textures,
        materials: features.materials(),
        textured: features.contains(Feature::Textures),
    };
    let mut light = Rgb::BLACK;
    if hit.front_face(&path.ray) && !material.emission.is_black() {
        light = path.throughput * input.colour(&material.emission);
        if sample_lights && path.bsdf_pdf > 0.0 {
            let pdf = scene.lights.pdf(
                (&scene.primitives, features.lights()),
                &path.ray,
                hit,
                material.emission.rgb,
            );
            light = light * power_heuristic(path.bsdf_pdf, pdf);
        }
    }
    // A shadow ray is one segment longer than the path: only where the
    // path itself may still go on.
    let shadow = if sample_lights && path.bounce + 1 < params.max_depth {
        next_event::<B>(scene, path, &input, material)
    } else {
        None
    };
    let Scatter::Continue { ray, weight, delta } = B::scatter(material, &input) else {
        return Shaded {
            status: PathStatus::Finished,
            light,
            shadow,
        };
    };
    path.bsdf_pdf = if sample_lights && !delta {
        B::evaluate(material, &input, ray.dir).map_or(0.0, |e| e.pdf)
    } else {
        0.0
    };
    path.throughput = path.throughput * weight;
    path.ray = ray;
    path.bounce += 1;
    let finished = Shaded {
        status: PathStatus::Finished,
        light,
        shadow,
    };
    if path.bounce >= params.max_depth || path.throughput.is_black() {
        return finished;
    }
    if params.roulette_start != 0 && path.bounce >= params.roulette_start {
        let survive = path.throughput.max_channel().clamp(MIN_SURVIVAL, 1.0);
        if path.rng.uniform(path.bounce, Dim::Roulette) >= survive {
            return finished;
        }
        path.throughput = path.throughput * (1.0 / survive);
    }
    Shaded {
        status: PathStatus::Continue,
        light,
        shadow,
    }
}

/// The next-event estimate at the hit of `input`: a point chosen on a
/// light, weighted against the material's own sampling, as a shadow ray.
/// `None` where the material has no density to weigh (mirrors, glass) or
/// the chosen point cannot light the surface.
#[inline(always)]
fn next_event<B: Bsdf>(
    scene: &SceneView,
    path: &PathState,
    input: &ScatterInput,
    material: &Material,
) -> Option<ShadowRay> {
    // From where a scattered ray would start, so that both strategies see
    // the lights from the same point.
    let origin = offset_origin(input.hit.point, input.hit.facing_normal(input.ray));
    let (rng, b) = (path.rng, path.bounce);
    let numbers = (
        rng.uniform(b, Dim::LightPick),
        rng.uniform(b, Dim::LightU),
        rng.uniform(b, Dim::LightV),
    );
    let light = scene.lights.sample(
        (&scene.primitives, scene.features().lights()),
        scene.materials.as_slice(),
        input.textured.then_some(&scene.textures),
        origin,
        numbers,
    )?;
    let bsdf = B::evaluate(material, input, light.dir)?;
    let weight = power_heuristic(light.pdf, bsdf.pdf) / light.pdf;
    Some(ShadowRay {
        ray: Ray::new(origin, light.dir),
        t_max: light.distance,
        light: light.prim,
        contribution: path.throughput * bsdf.f_cos * light.radiance * weight,
        pixel: path.pixel,
    })
}

/// Shades one path after [`super::extend::extend`], whatever it hit,
/// telling `observer` which class's code it runs.
#[inline(always)]
pub fn shade<B: Bsdf>(
    scene: &SceneView,
    params: &RenderParams,
    path: &mut PathState,
    hit: Option<Hit>,
    observer: &impl BranchObserver,
) -> Shaded {
    match hit {
        None => {
            observer.material_branch(ShadeClass::Escaped, 0);
            escaped(scene, path)
        }
        Some(hit) => {
            let material = &scene.materials.as_slice()[hit.material as usize];
            observer.material_branch(material.kind.class(), material.variant());
            surface::<B>(scene, params, path, &hit, material)
        }
    }
}
