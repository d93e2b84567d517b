//! The scene as the path stages see it: flat arrays plus the camera,
//! background and render settings. All `#[repr(C)]` so the same values can be
//! passed to a GPU kernel by value.

use crate::accel::AccelView;
use crate::camera::Camera;
use crate::features::Features;
use crate::geometry::{Hit, Primitives};
use crate::light::LightView;
use crate::material::Material;
use crate::math::{Rgb, Vec3};
use crate::rng::Sampler;
use crate::slice::DeviceSlice;
use crate::texture::{Colour, SurfacePoint, Textures};

/// What a ray sees when it escapes the scene.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Background {
    /// The same radiance in every direction.
    Constant(Rgb),
    /// RTIOW's sky: a vertical blend from `horizon` (looking down) to
    /// `zenith` (looking up).
    Sky {
        /// Radiance straight down (and blended towards the horizon).
        horizon: Rgb,
        /// Radiance straight up.
        zenith: Rgb,
    },
}

impl Background {
    /// Radiance arriving along `dir` (unit) from outside the scene.
    #[inline(always)]
    pub fn radiance(&self, dir: Vec3) -> Rgb {
        match *self {
            Background::Constant(c) => c,
            Background::Sky { horizon, zenith } => horizon.lerp(zenith, 0.5 * (dir.y + 1.0)),
        }
    }
}

/// Which image a render produces.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderView {
    /// Path-traced radiance.
    Radiance = 0,
    /// First-hit outward normal, mapped from [-1, 1] to [0, 1].
    Normals = 1,
    /// First-hit reflectance (emission for emitters).
    Albedo = 2,
    /// First-hit distance (the host normalises it for display).
    Depth = 3,
}

/// Whether paths also sample the lights directly (next-event estimation,
/// weighted against scattering by multiple importance sampling).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nee {
    /// Light is found only by scattered rays.
    Off = 0,
    /// Every diffuse hit also sends a shadow ray towards a light.
    On = 1,
}

/// Per-render settings shared by every back end.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RenderParams {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Maximum ray segments per path (RTIOW's "depth").
    pub max_depth: u32,
    /// Seed of the counter-based RNG.
    pub seed: u32,
    /// How the RNG computes its numbers.
    pub sampler: Sampler,
    /// First bounce at which Russian roulette may end a path; 0 disables it.
    pub roulette_start: u32,
    /// Which image to produce.
    pub view: RenderView,
    /// Next-event estimation.
    pub nee: Nee,
}

// Crosses to the GPU inside kernel arguments: eight four-byte fields, a
// multiple of 8 bytes, so the structs that hold it have no implicit padding.
const _: () = assert!(core::mem::size_of::<RenderParams>() == 32);

/// Everything the stages read: geometry, materials, camera and background.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SceneView<'a> {
    /// Every primitive, by type.
    pub primitives: Primitives<'a>,
    /// Materials, indexed by the primitives.
    pub materials: DeviceSlice<'a, Material>,
    /// The camera.
    pub camera: Camera,
    /// Radiance of escaped rays.
    pub background: Background,
    /// What the kernels that read this view are bound to hold: a superset
    /// of the render's features (in what would
    /// be the padding after the background). Read it through [`SceneView::features`].
    pub features: Features,
    /// The acceleration structure over all primitives.
    pub accel: AccelView<'a>,
    /// The emissive primitives, for next-event estimation.
    pub lights: LightView<'a>,
    /// The textures the materials' colours may read.
    pub textures: Textures<'a>,
}

impl SceneView<'_> {
    /// The features the running code holds ([`Features::bound`]): on the
    /// GPU the constant bound into the kernel, on the CPU [`Self::features`]'s
    /// field.
    #[inline(always)]
    pub fn features(&self) -> Features {
        self.features.bound()
    }

    /// The value of `colour` at `hit`.
    #[inline(always)]
    pub fn colour_at(&self, colour: &Colour, hit: &Hit) -> Rgb {
        self.textures.colour(colour, &self.primitives, &SurfacePoint::of(hit))
    }

    /// The same view with its borrow's lifetime erased, for a kernel's
    /// argument struct (which cannot carry a lifetime).
    ///
    /// # Safety
    /// The arrays must outlive every kernel that reads the returned view.
    pub unsafe fn detached(self) -> SceneView<'static> {
        // SAFETY: only the lifetime changes; the caller keeps the arrays alive.
        unsafe { core::mem::transmute::<SceneView<'_>, SceneView<'static>>(self) }
    }
}
