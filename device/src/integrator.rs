//! The per-path schedule: generate, then extend and shade until the path
//! ends. The CPU back ends call [`render_pixel`] per pixel and the megakernel
//! per GPU thread, so both run exactly this code. The traversal `T` is a
//! type parameter so that each GPU kernel holds one structure's code only.

use crate::accel::Traversal;
use crate::film::{FixedRgb, is_invalid_sample};
use crate::geometry::Hit;
use crate::math::{Rgb, Vec3};
use crate::observe::BranchObserver;
use crate::scene::{RenderParams, RenderView, SceneView};
use crate::stages::{PathState, PathStatus, extend::extend, generate::generate, shade::shade};

/// A half-open range of sample indices.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleRange {
    /// First sample index.
    pub begin: u32,
    /// One past the last sample index.
    pub end: u32,
}

/// The result of one path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleResult {
    /// The sample's radiance (or debug value).
    pub radiance: Rgb,
    /// Ray segments traced.
    pub rays: u32,
}

/// One pixel's samples, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PixelResult {
    /// Fixed-point radiance sum.
    pub sum: FixedRgb,
    /// Ray segments traced.
    pub rays: u32,
    /// Samples whose radiance was NaN or infinite (they add nothing).
    pub invalid_samples: u32,
}

/// Traces one full path (or, for a debug view, its first hit).
#[inline(always)]
pub fn trace_path<T: Traversal>(
    scene: &SceneView,
    params: &RenderParams,
    pixel: u32,
    sample: u32,
    observer: &impl BranchObserver,
) -> SampleResult {
    let mut path = generate(scene, params, pixel, sample);
    if params.view != RenderView::Radiance {
        let hit = extend::<T>(scene, &path.ray);
        return SampleResult {
            radiance: debug_value(scene, params.view, hit.as_ref()),
            rays: 1,
        };
    }
    let rays = finish_path::<T>(scene, params, &mut path, observer, |_, _| {});
    SampleResult {
        radiance: path.radiance,
        rays,
    }
}

/// Extends and shades `path` from its current ray until it ends, and
/// returns the segments traced. `on_segment` sees each path state with the
/// hit of its ray, before shading (for recording; a no-op compiles away).
/// The megakernel, the CPU back ends, the wavefront's tail drain and the
/// host's diagnostics all trace through this one loop.
#[inline(always)]
pub fn finish_path<T: Traversal>(
    scene: &SceneView,
    params: &RenderParams,
    path: &mut PathState,
    observer: &impl BranchObserver,
    mut on_segment: impl FnMut(&PathState, Option<&Hit>),
) -> u32 {
    let mut rays = 0;
    loop {
        let hit = extend::<T>(scene, &path.ray);
        rays += 1;
        on_segment(path, hit.as_ref());
        if shade(scene, params, path, hit, observer) == PathStatus::Finished {
            return rays;
        }
    }
}

/// The value a debug view shows for a first hit (black where nothing is hit).
#[inline(always)]
fn debug_value(scene: &SceneView, view: RenderView, hit: Option<&Hit>) -> Rgb {
    let Some(hit) = hit else { return Rgb::BLACK };
    match view {
        RenderView::Normals => {
            let n = (hit.normal + Vec3::splat(1.0)) * 0.5;
            Rgb::new(n.x, n.y, n.z)
        }
        RenderView::Albedo => {
            let m = &scene.materials.as_slice()[hit.material as usize];
            if m.emission.is_black() { m.albedo } else { m.emission }
        }
        RenderView::Depth => Rgb::new(hit.t, hit.t, hit.t),
        RenderView::Radiance => Rgb::BLACK,
    }
}

/// Traces `samples` of `pixel` in order and sums them in fixed point.
#[inline(always)]
pub fn render_pixel<T: Traversal>(
    scene: &SceneView,
    params: &RenderParams,
    pixel: u32,
    samples: SampleRange,
    observer: &impl BranchObserver,
) -> PixelResult {
    let mut out = PixelResult::default();
    for sample in samples.begin..samples.end {
        let r = trace_path::<T>(scene, params, pixel, sample, observer);
        out.rays += r.rays;
        if is_invalid_sample(r.radiance) {
            out.invalid_samples += 1;
        } else {
            out.sum.add(FixedRgb::from_radiance(r.radiance));
        }
    }
    out
}
