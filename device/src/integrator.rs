//! The per-path schedule: generate, then extend and shade until the path
//! ends. The CPU back ends call [`render_pixel`] per pixel and the megakernel
//! per GPU thread, so both run exactly this code. The traversal `T` is a
//! type parameter so that each GPU kernel holds one structure's code only.

use crate::accel::Traversal;
use crate::film::{FixedRgb, is_invalid_sample};
use crate::geometry::Hit;
use crate::material::Bsdf;
use crate::math::{Rgb, Vec3};
use crate::observe::BranchObserver;
use crate::scene::{RenderParams, RenderView, SceneView};
use crate::stages::{PathState, PathStatus, extend::extend, generate::generate, shade::shade};
use crate::warp::Rejoin;

/// A half-open range of sample indices.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleRange {
    /// First sample index.
    pub begin: u32,
    /// One past the last sample index.
    pub end: u32,
}

/// One pixel's samples, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PixelResult {
    /// Fixed-point radiance sum.
    pub sum: FixedRgb,
    /// Ray segments traced, shadow rays included.
    pub rays: u32,
    /// Contributions (light a path found, or a shadow ray brought) that
    /// were NaN or infinite: they add nothing.
    pub invalid_samples: u32,
}

impl PixelResult {
    /// Adds one contribution to the sum in fixed point, or counts it as
    /// invalid: the rule every back end's film follows, so that the sum
    /// does not depend on the order contributions arrive in.
    #[inline(always)]
    pub fn deposit(&mut self, radiance: Rgb) {
        if is_invalid_sample(radiance) {
            self.invalid_samples += 1;
        } else {
            self.sum.add(FixedRgb::from_radiance(radiance));
        }
    }
}

/// Traces one full path (or, for a debug view, its first hit), hands
/// `deposit` each contribution to the pixel (or the debug value) and
/// returns the rays traced.
#[inline(always)]
pub fn trace_path<T: Traversal, B: Bsdf>(
    scene: &SceneView,
    params: &RenderParams,
    (pixel, sample): (u32, u32),
    observer: &impl BranchObserver,
    rejoin: &mut impl Rejoin,
    mut deposit: impl FnMut(Rgb),
) -> u32 {
    let mut path = generate(scene, params, pixel, sample);
    if params.view != RenderView::Radiance {
        let hit = extend::<T>(scene, &path.ray);
        deposit(debug_value(scene, params.view, hit.as_ref()));
        return 1;
    }
    finish_path::<T, B>(scene, params, &mut path, observer, rejoin, |_, _| {}, deposit)
}

/// Extends and shades `path` from its current ray until it ends, and
/// returns the segments traced (shadow rays included). `on_segment` sees
/// each path state with the hit of its ray, before shading (for recording;
/// a no-op compiles away); `deposit` gets each contribution to the pixel
/// as it is found. After each bounce the lanes whose paths go on rejoin
/// (`rejoin`, [`Rejoin::bounce`]). The wavefront's tail drain and the
/// host's diagnostics trace whole paths through this loop; the megakernel
/// and the CPU back ends through [`render_pixel`], which runs the same
/// [`segment`] in a loop that starts each next sample at once.
#[inline(always)]
pub fn finish_path<T: Traversal, B: Bsdf>(
    scene: &SceneView,
    params: &RenderParams,
    path: &mut PathState,
    observer: &impl BranchObserver,
    rejoin: &mut impl Rejoin,
    mut on_segment: impl FnMut(&PathState, Option<&Hit>),
    mut deposit: impl FnMut(Rgb),
) -> u32 {
    let mut rays = 0;
    loop {
        let (traced, go_on) = segment::<T, B>(scene, params, path, observer, &mut on_segment, &mut deposit);
        rays += traced;
        rejoin.bounce(go_on);
        if !go_on {
            return rays;
        }
    }
}

/// Traces one segment of `path`: its closest hit, shading there, and the
/// shadow ray of its next-event estimate. Hands `deposit` each
/// contribution (the light the path found, the shadow ray's if unblocked)
/// and returns the rays traced and whether the path goes on.
#[inline(always)]
pub fn segment<T: Traversal, B: Bsdf>(
    scene: &SceneView,
    params: &RenderParams,
    path: &mut PathState,
    observer: &impl BranchObserver,
    on_segment: &mut impl FnMut(&PathState, Option<&Hit>),
    deposit: &mut impl FnMut(Rgb),
) -> (u32, bool) {
    let hit = extend::<T>(scene, &path.ray);
    let mut rays = 1;
    on_segment(path, hit.as_ref());
    let shaded = shade::<B>(scene, params, path, hit, observer);
    if !shaded.light.is_black() {
        deposit(shaded.light);
    }
    if let Some(shadow) = shaded.shadow {
        rays += 1;
        if let Some(light) = shadow.unblocked::<T>(scene) {
            deposit(light);
        }
    }
    (rays, shaded.status != PathStatus::Finished)
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
            scene.colour_at(if m.emission.is_black() { &m.albedo } else { &m.emission }, hit)
        }
        RenderView::Depth => Rgb::new(hit.t, hit.t, hit.t),
        RenderView::Radiance => Rgb::BLACK,
    }
}

/// Traces `samples` of `pixel` in order and sums their contributions in
/// fixed point.
///
/// A path regenerates: once a sample's path ends, the next sample's starts
/// in the same step, so that in the megakernel a lane whose path ended
/// early traces its pixel's next sample while the other lanes of its warp
/// finish theirs, rather than waiting for the warp's longest path before
/// every sample. The lanes still tracing rejoin after every segment
/// (`rejoin`: [`crate::warp::Synchronised`] in the megakernel, nowhere on
/// the CPU). Each sample's numbers are keyed by its pixel and index, and
/// the fixed-point sum does not depend on the order of its terms, so the
/// pixel's value is the same whatever the order.
#[inline(always)]
pub fn render_pixel<T: Traversal, B: Bsdf>(
    scene: &SceneView,
    params: &RenderParams,
    pixel: u32,
    samples: SampleRange,
    observer: &impl BranchObserver,
    mut rejoin: impl Rejoin,
) -> PixelResult {
    let mut out = PixelResult::default();
    if params.view != RenderView::Radiance {
        for sample in samples.begin..samples.end {
            out.rays += trace_path::<T, B>(scene, params, (pixel, sample), observer, &mut rejoin, |c| {
                out.deposit(c)
            });
        }
        return out;
    }
    let mut sample = samples.begin;
    if sample >= samples.end {
        return out;
    }
    let mut path = generate(scene, params, pixel, sample);
    let mut rays = 0;
    loop {
        let (traced, go_on) = segment::<T, B>(scene, params, &mut path, observer, &mut |_, _| {}, &mut |c| {
            out.deposit(c)
        });
        rays += traced;
        let more = go_on || sample + 1 < samples.end;
        if !go_on && more {
            sample += 1;
            path = generate(scene, params, pixel, sample);
        }
        rejoin.bounce(more);
        if !more {
            break;
        }
    }
    out.rays = rays;
    out
}
