//! The flat primitive arrays of a scene, and the padded bounds of each
//! primitive in them: what the acceleration-structure builders index and
//! what the extent checks of loading measure.

use crate::accel::bounds;
use device::geometry::{Aabb, Parallelepiped, Polygon, PrimKind, PrimRef, Primitives, Sphere, Triangle};
use device::math::Vec3;
use device::slice::DeviceSlice;

/// The flat primitive arrays of a scene.
#[derive(Clone, Debug, Default)]
pub struct Geometry {
    /// Spheres.
    pub spheres: Vec<Sphere>,
    /// Boxes.
    pub boxes: Vec<Parallelepiped>,
    /// Convex polygons.
    pub polygons: Vec<Polygon>,
    /// The polygons' vertices, each polygon a contiguous run.
    pub polygon_vertices: Vec<Vec3>,
    /// Triangles from meshes and triangle objects.
    pub triangles: Vec<Triangle>,
}

/// The primitive kinds in the order [`Geometry::counts`] and
/// [`Geometry::primitives`] list them.
pub const KINDS: [PrimKind; 4] = [
    PrimKind::Sphere,
    PrimKind::Parallelepiped,
    PrimKind::Polygon,
    PrimKind::Triangle,
];

/// Borrows a scene array for the device stages.
pub fn host_slice<T>(v: &[T]) -> DeviceSlice<'_, T> {
    // Loading caps every array far below u32::MAX elements.
    DeviceSlice::from_slice(v).expect("scene array lengths are checked at load")
}

impl Geometry {
    /// A device view of these host arrays.
    pub fn view(&self) -> Primitives<'_> {
        Primitives {
            spheres: host_slice(&self.spheres),
            boxes: host_slice(&self.boxes),
            polygons: host_slice(&self.polygons),
            polygon_vertices: host_slice(&self.polygon_vertices),
            triangles: host_slice(&self.triangles),
        }
    }

    /// Total number of primitives of all types.
    pub fn primitive_count(&self) -> usize {
        self.counts().iter().sum()
    }

    /// How many primitives of each kind there are, in the order of [`KINDS`].
    pub fn counts(&self) -> [usize; 4] {
        [
            self.spheres.len(),
            self.boxes.len(),
            self.polygons.len(),
            self.triangles.len(),
        ]
    }

    /// The padded bounds of primitive `p`.
    pub fn bounds(&self, p: PrimRef) -> Aabb {
        let i = p.index() as usize;
        match p.kind() {
            PrimKind::Sphere => bounds::sphere(&self.spheres[i]),
            PrimKind::Parallelepiped => bounds::parallelepiped(&self.boxes[i]),
            PrimKind::Polygon => {
                let poly = &self.polygons[i];
                let first = poly.first_vertex as usize;
                bounds::polygon(&self.polygon_vertices[first..first + poly.vertex_count as usize])
            }
            PrimKind::Triangle => bounds::triangle(&self.triangles[i]),
        }
    }

    /// Every primitive with its bounds, in a fixed order: the input of the
    /// acceleration-structure builders.
    pub fn primitives(&self) -> Vec<(PrimRef, Aabb)> {
        let mut out = Vec::with_capacity(self.primitive_count());
        for (kind, count) in KINDS.into_iter().zip(self.counts()) {
            for i in 0..count {
                let p = PrimRef::new(kind, i as u32);
                out.push((p, self.bounds(p)));
            }
        }
        out
    }
}
