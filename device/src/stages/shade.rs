//! Shade: add emitted light, then scatter or end the path.
//!
//! [`surface`] takes the scattering function as a parameter so that the
//! wavefront back end can instantiate it once per material class (one kernel
//! each, no divergence on the material) while the megakernel passes the
//! dispatching [`material::scatter`].

use super::{PathState, PathStatus};
use crate::geometry::{Hit, ShadingHit};
use crate::material::{self, Material, Scatter, ScatterInput};
use crate::observe::BranchObserver;
use crate::rng::Dim;
use crate::scene::{RenderParams, SceneView};
use crate::shading::ShadeClass;

/// The smallest Russian-roulette survival probability, so that a dim path is
/// never weighted up by more than 20×.
pub const MIN_SURVIVAL: f32 = 0.05;

/// A path whose ray escaped: it gathers the background and ends.
#[inline(always)]
pub fn escaped(scene: &SceneView, path: &mut PathState) -> PathStatus {
    path.radiance += path.throughput * scene.background.radiance(path.ray.dir);
    PathStatus::Finished
}

/// A path that hit `hit` on a surface of `material`: emission, scattering by
/// `scatter`, then the depth limit and Russian roulette.
#[inline(always)]
pub fn surface(
    params: &RenderParams,
    path: &mut PathState,
    hit: &ShadingHit,
    material: &Material,
    scatter: impl Fn(&Material, &ScatterInput) -> Scatter,
) -> PathStatus {
    if hit.front_face(&path.ray) {
        path.radiance += path.throughput * material.emission;
    }
    let input = ScatterInput {
        ray: &path.ray,
        hit,
        rng: path.rng,
        bounce: path.bounce,
    };
    let Scatter::Continue { ray, weight } = scatter(material, &input) else {
        return PathStatus::Finished;
    };
    path.throughput = path.throughput * weight;
    path.ray = ray;
    path.bounce += 1;
    if path.bounce >= params.max_depth || path.throughput.is_black() {
        return PathStatus::Finished;
    }
    if params.roulette_start != 0 && path.bounce >= params.roulette_start {
        let survive = path.throughput.max_channel().clamp(MIN_SURVIVAL, 1.0);
        if path.rng.uniform(path.bounce, Dim::Roulette) >= survive {
            return PathStatus::Finished;
        }
        path.throughput = path.throughput * (1.0 / survive);
    }
    PathStatus::Continue
}

/// Shades one path after [`super::extend::extend`], whatever it hit,
/// telling `observer` which class's code it runs.
#[inline(always)]
pub fn shade(
    scene: &SceneView,
    params: &RenderParams,
    path: &mut PathState,
    hit: Option<Hit>,
    observer: &impl BranchObserver,
) -> PathStatus {
    match hit {
        None => {
            observer.material_branch(ShadeClass::Escaped);
            escaped(scene, path)
        }
        Some(hit) => {
            let material = &scene.materials.as_slice()[hit.material as usize];
            observer.material_branch(material.kind.class());
            surface(params, path, &hit.shading(), material, material::scatter)
        }
    }
}
