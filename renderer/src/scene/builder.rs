//! The scene under construction: materials by name and primitives, with
//! the checks every addition goes through (the primitive limit, the memory
//! it needs, coordinates in range). The file's entries (`build`) and the
//! procedural generators (`generators`) both add through it.

use super::Geometry;
use super::fields::{FieldResult, MAX_COORDINATE, field_error};
use crate::settings::echo::shorten_for_error;
use device::geometry::{Polygon, PrimRef, Sphere};
use device::material::Material;
use device::math::Vec3;
use std::collections::HashMap;

/// Host memory a primitive needs with its share of the acceleration
/// structure and its build (a generous estimate, for the check before a
/// generator runs).
const BYTES_PER_PRIMITIVE: u64 = 256;

/// Collects validated content: materials by name, and primitives.
#[derive(Default)]
pub struct SceneBuilder {
    /// The materials, in file order.
    pub materials: Vec<Material>,
    /// Their names, by index.
    pub material_names: Vec<String>,
    by_name: HashMap<String, u32>,
    /// The primitives so far.
    pub geometry: Geometry,
    /// Mesh triangles dropped for having no area.
    pub degenerate_triangles: usize,
}

impl SceneBuilder {
    /// Adds a named material and returns its index.
    pub fn add_material(&mut self, name: &str, material: Material) -> u32 {
        let index = self.materials.len() as u32;
        self.materials.push(material);
        self.material_names.push(name.to_string());
        self.by_name.insert(name.to_string(), index);
        index
    }

    /// The index of a material named in the file.
    pub fn material(&self, name: &str) -> FieldResult<u32> {
        self.by_name.get(name).copied().ok_or_else(|| {
            let mut known: Vec<_> = self.material_names.iter().map(|n| shorten_for_error(n)).collect();
            known.sort_unstable();
            field_error(
                "material",
                format!("unknown material `{name}` (defined: {})", known.join(", ")),
            )
        })
    }

    /// Checks, before `count` more primitives are made, that the scene
    /// stays within the primitive limit and the memory it would need is
    /// available.
    pub fn make_room(&self, count: u64, field: &str) -> FieldResult<()> {
        let total = self.geometry.primitive_count() as u64 + count;
        if total > PrimRef::MAX_INDEX as u64 {
            return Err(field_error(
                field,
                format!(
                    "the scene would hold {total} primitives; the limit is {}",
                    PrimRef::MAX_INDEX
                ),
            ));
        }
        crate::system::memory::check_available("the scene", total * BYTES_PER_PRIMITIVE, "generate fewer primitives")
            .map_err(|e| field_error(field, e.to_string()))
    }

    /// Checks that every primitive added since `before` lies within
    /// [`MAX_COORDINATE`] (after transforms and generation); the error
    /// names `field`.
    pub fn check_extent(&self, before: [usize; 4], field: &str) -> FieldResult<()> {
        let g = &self.geometry;
        for ((kind, from), to) in device::geometry::PrimKind::ALL.into_iter().zip(before).zip(g.counts()) {
            for i in from..to {
                let b = g.bounds(PrimRef::new(kind, i as u32));
                let extent = b.min.max_abs_component().max(b.max.max_abs_component());
                if !extent.is_finite() || extent > MAX_COORDINATE {
                    return Err(field_error(
                        field,
                        format!(
                            "the geometry reaches {extent:e} (primitive {} of this entry); coordinates must be within ±{MAX_COORDINATE:e} after transforms",
                            i - from
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Adds a sphere.
    pub fn add_sphere(&mut self, center: Vec3, radius: f32, material: u32) {
        self.geometry.spheres.push(Sphere::new(center, radius, material));
    }

    /// Adds a convex polygon (vertices counter-clockwise about its front).
    pub fn add_polygon(&mut self, vertices: &[Vec3], material: u32) {
        let first = self.geometry.polygon_vertices.len() as u32;
        self.geometry.polygons.push(Polygon::new(vertices, first, material));
        self.geometry.polygon_vertices.extend_from_slice(vertices);
    }
}
