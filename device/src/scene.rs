//! The scene as the path stages see it: flat arrays plus the camera,
//! background and render settings. All `#[repr(C)]` so the same values can be
//! passed to a GPU kernel by value.

use crate::accel::AccelView;
use crate::camera::Camera;
use crate::geometry::{Parallelepiped, Polygon, Sphere, Triangle};
use crate::material::Material;
use crate::math::{Rgb, Vec3};
use core::marker::PhantomData;

/// A read-only array that may live in host or device memory: a raw pointer
/// and a length, laid out for FFI, borrowed for `'a`.
#[repr(C)]
pub struct DeviceSlice<'a, T> {
    ptr: *const T,
    len: u32,
    _pad: u32,
    _borrow: PhantomData<&'a [T]>,
}

const _: () = assert!(core::mem::size_of::<DeviceSlice<'static, u32>>() == 16);

impl<T> Clone for DeviceSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DeviceSlice<'_, T> {}

impl<'a, T> DeviceSlice<'a, T> {
    /// Borrows a host slice. Fails (`None`) beyond `u32::MAX` elements.
    pub fn from_slice(slice: &'a [T]) -> Option<Self> {
        Some(DeviceSlice {
            ptr: slice.as_ptr(),
            len: u32::try_from(slice.len()).ok()?,
            _pad: 0,
            _borrow: PhantomData,
        })
    }

    /// Wraps memory owned elsewhere (a device allocation).
    ///
    /// # Safety
    /// `ptr` must be non-null, aligned, and point to `len` initialised values
    /// that stay valid and unmodified for `'a` in the address space where the
    /// slice is read.
    pub unsafe fn from_raw(ptr: *const T, len: u32) -> Self {
        DeviceSlice {
            ptr,
            len,
            _pad: 0,
            _borrow: PhantomData,
        }
    }

    /// The elements.
    #[inline(always)]
    pub fn as_slice(&self) -> &'a [T] {
        // SAFETY: the constructors guarantee `len` valid elements at `ptr`.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len as usize) }
    }

    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// True when there are no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

// SAFETY: the slice is only ever read, never written, through this type.
unsafe impl<T: Sync> Sync for DeviceSlice<'_, T> {}
// SAFETY: as above; sending a shared read-only borrow is sound for `T: Sync`.
unsafe impl<T: Sync> Send for DeviceSlice<'_, T> {}

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
    /// First bounce at which Russian roulette may end a path; 0 disables it.
    pub roulette_start: u32,
    /// Which image to produce.
    pub view: RenderView,
}

/// Everything the stages read: geometry, materials, camera and background.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SceneView<'a> {
    /// Spheres.
    pub spheres: DeviceSlice<'a, Sphere>,
    /// Boxes.
    pub boxes: DeviceSlice<'a, Parallelepiped>,
    /// Convex polygons.
    pub polygons: DeviceSlice<'a, Polygon>,
    /// Vertices of all polygons, each polygon a contiguous run.
    pub polygon_vertices: DeviceSlice<'a, Vec3>,
    /// Triangles (mesh faces).
    pub triangles: DeviceSlice<'a, Triangle>,
    /// Materials, indexed by the primitives.
    pub materials: DeviceSlice<'a, Material>,
    /// The camera.
    pub camera: Camera,
    /// Radiance of escaped rays.
    pub background: Background,
    /// The acceleration structure over all primitives.
    pub accel: AccelView<'a>,
}

impl SceneView<'_> {
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
