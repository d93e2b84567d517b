//! The flat primitive arrays of a scene, and the padded bounds of each
//! primitive in them: what the acceleration-structure builders index and
//! what the extent checks of loading measure.

use crate::accel::bounds;
use device::geometry::{Aabb, Parallelepiped, Polygon, PrimKind, PrimRef, Primitives, Sphere, Triangle};
use device::math::Vec3;
use device::slice::DeviceSlice;
use device::texture::TriangleUvs;

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
    /// Texture coordinates of the triangles' corners: empty when no mesh
    /// has any, else one entry per triangle (those without their own get
    /// [`TriangleUvs::BARYCENTRIC`]).
    pub triangle_uvs: Vec<TriangleUvs>,
}

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

    /// Adds triangles with their corners' texture coordinates (from a
    /// mesh's `vt`), keeping [`Geometry::triangle_uvs`] parallel to the
    /// triangles.
    pub fn add_textured_triangles(&mut self, triangles: impl IntoIterator<Item = (Triangle, TriangleUvs)>) {
        self.triangle_uvs.resize(self.triangles.len(), TriangleUvs::BARYCENTRIC);
        for (t, uvs) in triangles {
            self.triangles.push(t);
            self.triangle_uvs.push(uvs);
        }
    }

    /// Gives the triangles added after the last textured ones their
    /// barycentric coordinates, once every primitive is in.
    pub fn finish_triangle_uvs(&mut self) {
        if !self.triangle_uvs.is_empty() {
            self.triangle_uvs.resize(self.triangles.len(), TriangleUvs::BARYCENTRIC);
        }
    }

    /// Total number of primitives of all types.
    pub fn primitive_count(&self) -> usize {
        self.counts().iter().sum()
    }

    /// How many primitives of each kind there are, in [`PrimKind::ALL`]'s order.
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
        for (kind, count) in PrimKind::ALL.into_iter().zip(self.counts()) {
            for i in 0..count {
                let p = PrimRef::new(kind, i as u32);
                out.push((p, self.bounds(p)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use device::texture::Uv;

    fn triangle(x: f32) -> Triangle {
        Triangle::new(
            Vec3::new(x, 0.0, 0.0),
            Vec3::new(x + 1.0, 0.0, 0.0),
            Vec3::new(x, 1.0, 0.0),
            0,
        )
    }

    #[test]
    fn texture_coordinates_stay_parallel_to_the_triangles() {
        let mut g = Geometry::default();
        // Untextured triangles alone need no coordinates.
        g.triangles.push(triangle(0.0));
        g.finish_triangle_uvs();
        assert!(g.triangle_uvs.is_empty());
        // A textured mesh after them: the earlier triangle gets barycentrics.
        let uvs = TriangleUvs {
            corners: [Uv { u: 0.5, v: 0.5 }, Uv { u: 1.0, v: 0.5 }, Uv { u: 0.5, v: 1.0 }],
        };
        g.add_textured_triangles([(triangle(2.0), uvs)]);
        // And an untextured one after it, once loading ends.
        g.triangles.push(triangle(4.0));
        g.finish_triangle_uvs();
        assert_eq!(
            g.triangle_uvs,
            [TriangleUvs::BARYCENTRIC, uvs, TriangleUvs::BARYCENTRIC]
        );
    }
}
