//! [`Primitives`]: every primitive of a scene, one array per type. It is
//! what traversal reads of the scene besides the acceleration structure, so
//! traversal takes this view, not the whole scene view (which holds it).

use super::{Parallelepiped, Polygon, Sphere, Triangle};
use crate::math::Vec3;
use crate::slice::DeviceSlice;

/// The scene's primitives, by type. A [`super::PrimRef`] names one of them
/// by type and index.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Primitives<'a> {
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
}

const _: () = assert!(core::mem::size_of::<Primitives<'static>>() == 5 * 16);
