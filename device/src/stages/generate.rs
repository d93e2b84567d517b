//! Generate: a camera ray for one sample of one pixel.

use super::PathState;
use crate::features::Feature;
use crate::math::Rgb;
use crate::rng::{Dim, PathRng, Sampler};
use crate::scene::{RenderParams, SceneView};

/// Starts the path for `sample` of `pixel`, jittered within the pixel and
/// over the lens. Pixel 0 is the top-left corner. Code without the Sobol
/// feature draws hashed numbers whatever the sampler asked for.
#[inline(always)]
pub fn generate(scene: &SceneView, params: &RenderParams, pixel: u32, sample: u32) -> PathState {
    let sampler = if scene.features().contains(Feature::Sobol) {
        params.sampler
    } else {
        Sampler::Hash
    };
    let rng = PathRng::new(sampler, params.seed, pixel, sample);
    let x = pixel % params.width;
    let y = pixel / params.width;
    let s = (x as f32 + rng.uniform(0, Dim::PixelX)) / params.width as f32;
    let t = 1.0 - (y as f32 + rng.uniform(0, Dim::PixelY)) / params.height as f32;
    let ray = scene
        .camera
        .ray(s, t, rng.uniform(0, Dim::LensU), rng.uniform(0, Dim::LensV));
    PathState {
        ray,
        throughput: Rgb::WHITE,
        rng,
        pixel,
        bounce: 0,
        bsdf_pdf: 0.0,
    }
}
