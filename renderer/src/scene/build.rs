//! Validation of a parsed scene file and its conversion to device types:
//! the materials, generators and objects in file order, each entry's errors
//! placed on its own lines.

use super::builder::SceneBuilder;
use super::error::SceneError;
use super::fields::{FieldResult, field_error, finite, length, point};
use super::locate::{Locator, listed_entry, named_entry, table_entry};
use super::schema::{GeneratorDef, ObjectDef, SceneFile, Tagged, Triple};
use super::textures::SceneTextures;
use super::{Geometry, Scene, generators, mesh, meshgen, sections};
use crate::accel::AccelSettings;
use device::geometry::{Parallelepiped, Polygon, PrimRef, Triangle};
use device::math::{Rgb, Vec3};
use device::noise::{BASES, MAX_OCTAVES};
use device::scene::Background;
use device::texture::{TriangleUvs, Uv};
use std::path::{Path, PathBuf};

/// Validates `file` (parsed from `text` at `path`) into a [`Scene`]. The
/// steps follow the file's sections in a fixed order, so a file with several
/// faults always reports the same one.
pub fn build(path: &Path, text: &str, file: SceneFile) -> Result<Scene, SceneError> {
    let at = Locator { path, text };
    let render_span = file.render.span();
    let settings =
        sections::settings(file.render.get_ref()).map_err(|e| at.error(render_span, &table_entry("render"), e))?;
    let camera_span = file.camera.span();
    let camera = sections::camera(file.camera.get_ref(), &settings)
        .map_err(|e| at.error(camera_span, &table_entry("camera"), e))?;
    let background = match &file.background {
        None => Background::Constant(Rgb::BLACK),
        Some(b) => {
            sections::background(&b.get_ref().def).map_err(|e| at.error(b.span(), &table_entry("background"), e))?
        }
    };
    let textures = add_textures(&at, &file)?;
    let mut builder = SceneBuilder::default();
    add_materials(&at, &file, &textures, &mut builder)?;
    add_generated(&at, &file, &mut builder)?;
    let mut files = add_objects(&at, &file, &mut builder)?;
    files.extend(textures.files.iter().cloned());
    builder.geometry.finish_triangle_uvs();
    let declared_accel = match &file.accel {
        None => AccelSettings::default(),
        Some(a) => sections::accel(a.get_ref()).map_err(|e| at.error(a.span(), &table_entry("accel"), e))?,
    };
    check_primitive_count(&at, &builder.geometry)?;
    Ok(Scene {
        path: path.to_path_buf(),
        files,
        settings,
        camera,
        background,
        materials: builder.materials,
        material_names: builder.material_names,
        geometry: builder.geometry,
        textures,
        declared_accel,
    })
}

/// Reads every `[textures.*]` table (and its image file).
fn add_textures(at: &Locator, file: &SceneFile) -> Result<SceneTextures, SceneError> {
    let scene_dir = at.path.parent().unwrap_or(Path::new("."));
    let mut textures = SceneTextures::default();
    for (name, def) in &file.textures {
        textures
            .add(name, &def.get_ref().def, scene_dir)
            .map_err(|e| at.error(def.span(), &named_entry("textures", name), e))?;
    }
    Ok(textures)
}

/// Adds every `[materials.*]` table under its name.
fn add_materials(
    at: &Locator,
    file: &SceneFile,
    textures: &SceneTextures,
    builder: &mut SceneBuilder,
) -> Result<(), SceneError> {
    for (name, def) in &file.materials {
        let m = sections::material(&def.get_ref().def, textures)
            .map_err(|e| at.error(def.span(), &named_entry("materials", name), e))?;
        builder.add_material(name, m);
    }
    Ok(())
}

/// Runs every `[[generators]]` entry, checking the extent of what it made.
fn add_generated(at: &Locator, file: &SceneFile, builder: &mut SceneBuilder) -> Result<(), SceneError> {
    for (i, g) in file.generators.iter().enumerate() {
        let Tagged { kind, def } = g.get_ref();
        let entry = listed_entry("generators", i, kind);
        let before = builder.geometry.counts();
        generate(builder, def)
            .and_then(|()| builder.check_extent(before, "center"))
            .map_err(|e| at.error(g.span(), &entry, e))?;
    }
    Ok(())
}

/// Adds every `[[objects]]` entry, checking its extent; returns the files
/// the scene was read from (the scene file, then each mesh).
fn add_objects(at: &Locator, file: &SceneFile, builder: &mut SceneBuilder) -> Result<Vec<PathBuf>, SceneError> {
    let scene_dir = at.path.parent().unwrap_or(Path::new("."));
    let mut files = vec![at.path.to_path_buf()];
    for (i, o) in file.objects.iter().enumerate() {
        let Tagged { kind, def } = o.get_ref();
        let entry = listed_entry("objects", i, kind);
        let before = builder.geometry.counts();
        object(builder, scene_dir, def, &mut files)
            .and_then(|()| builder.check_extent(before, extent_field(def)))
            .map_err(|e| at.error(o.span(), &entry, e))?;
    }
    Ok(files)
}

/// Checks that the scene has at least one primitive and no more than a
/// primitive reference can index.
fn check_primitive_count(at: &Locator, g: &Geometry) -> Result<(), SceneError> {
    let count = g.primitive_count();
    if count == 0 {
        return Err(at.error(0..0, "scene", field_error("objects", "the scene has no objects")));
    }
    if count > PrimRef::MAX_INDEX as usize {
        let msg = format!("{count} primitives exceed the limit of {}", PrimRef::MAX_INDEX);
        return Err(at.error(0..0, "scene", field_error("objects", msg)));
    }
    Ok(())
}

fn generate(b: &mut SceneBuilder, g: &GeneratorDef) -> FieldResult<()> {
    match *g {
        GeneratorDef::RtiowFinal { grid, seed } => {
            if grid == 0 || grid > generators::MAX_RTIOW_GRID {
                let msg = format!("must be between 1 and {}, got {grid}", generators::MAX_RTIOW_GRID);
                return Err(field_error("grid", msg));
            }
            b.make_room(4 * grid as u64 * grid as u64 + 4, "grid")?;
            generators::rtiow_final(b, grid, seed);
        }
        GeneratorDef::MaterialGrid {
            materials,
            octaves,
            grid,
        } => {
            if materials == 0 || materials > BASES {
                return Err(field_error(
                    "materials",
                    format!("must be from 1 to {BASES} (one noise basis each), got {materials}"),
                ));
            }
            if octaves > MAX_OCTAVES {
                return Err(field_error(
                    "octaves",
                    format!("must be at most {MAX_OCTAVES}, got {octaves}"),
                ));
            }
            if grid == 0 || grid > generators::MAX_MATERIAL_GRID {
                let msg = format!("must be between 1 and {}, got {grid}", generators::MAX_MATERIAL_GRID);
                return Err(field_error("grid", msg));
            }
            generators::material_grid(b, materials, octaves, grid);
        }
        GeneratorDef::SmallptCornell {} => generators::smallpt_cornell(b),
        GeneratorDef::DisplacedSphere {
            subdivisions,
            amplitude,
            center,
            radius,
            ref material,
        } => {
            let m = b.material(material)?;
            if subdivisions > meshgen::MAX_SUBDIVISIONS {
                let msg = format!("must be at most {}, got {subdivisions}", meshgen::MAX_SUBDIVISIONS);
                return Err(field_error("subdivisions", msg));
            }
            if !(0.0..0.5).contains(&finite("amplitude", amplitude)?) {
                return Err(field_error(
                    "amplitude",
                    format!("must be in [0, 0.5), got {amplitude}"),
                ));
            }
            let center = point("center", center)?;
            let radius = length("radius", radius)?;
            b.make_room(20 << (2 * subdivisions as u64), "subdivisions")?;
            let mesh = meshgen::DisplacedSphere {
                subdivisions,
                amplitude,
            }
            .mesh();
            for [i, j, k] in &mesh.faces {
                let p = |i: &u32| center + mesh.positions[*i as usize] * radius;
                b.geometry.triangles.push(Triangle::new(p(i), p(j), p(k), m));
            }
        }
    }
    Ok(())
}

/// The field an object's extent follows from, for an error when the
/// extent leaves [`MAX_COORDINATE`].
fn extent_field(o: &ObjectDef) -> &'static str {
    match o {
        ObjectDef::Sphere { .. } => "radius",
        ObjectDef::Box { .. } => "edges",
        ObjectDef::Polygon { .. } | ObjectDef::Triangle { .. } => "vertices",
        ObjectDef::Mesh { .. } => "transform",
    }
}

/// Adds object `o`; a mesh's file joins `files`.
fn object(b: &mut SceneBuilder, scene_dir: &Path, o: &ObjectDef, files: &mut Vec<PathBuf>) -> FieldResult<()> {
    match o {
        ObjectDef::Sphere {
            center,
            radius,
            material,
        } => {
            let m = b.material(material)?;
            b.add_sphere(point("center", *center)?, length("radius", *radius)?, m);
        }
        ObjectDef::Box {
            corner,
            edges,
            material,
        } => {
            let m = b.material(material)?;
            b.geometry.boxes.push(parallelepiped(*corner, edges, m)?);
        }
        ObjectDef::Polygon { vertices, material } => {
            let m = b.material(material)?;
            let v = vertices
                .iter()
                .map(|&p| point("vertices", p))
                .collect::<FieldResult<Vec<_>>>()?;
            check_convex_polygon(&v)?;
            b.add_polygon(&v, m);
        }
        ObjectDef::Triangle { vertices, material } => {
            let m = b.material(material)?;
            let v = [
                point("vertices", vertices[0])?,
                point("vertices", vertices[1])?,
                point("vertices", vertices[2])?,
            ];
            if (v[1] - v[0]).cross(v[2] - v[0]).length() == 0.0 {
                return Err(field_error("vertices", "the triangle has no area"));
            }
            b.geometry.triangles.push(Triangle::new(v[0], v[1], v[2], m));
        }
        ObjectDef::Mesh {
            file,
            material,
            transform,
        } => {
            let m = b.material(material)?;
            let transform = mesh::Transform::from_def(transform)?;
            let obj_path = scene_dir.join(file);
            add_mesh(b, &obj_path, &transform, m)?;
            files.push(obj_path);
        }
    }
    Ok(())
}

/// A box from its corner and three edges, which must span a volume.
fn parallelepiped(corner: Triple, edges: &[Triple; 3], material: u32) -> FieldResult<Parallelepiped> {
    let corner = point("corner", corner)?;
    let e = [
        point("edges", edges[0])?,
        point("edges", edges[1])?,
        point("edges", edges[2])?,
    ];
    let volume = e[0].dot(e[1].cross(e[2])).abs();
    if volume <= 1e-9 * e[0].length() * e[1].length() * e[2].length() || volume == 0.0 {
        return Err(field_error(
            "edges",
            "the three edges must span a volume (they are coplanar or zero)",
        ));
    }
    Ok(Parallelepiped::new(corner, e, material))
}

/// Adds the triangles of the OBJ file at `path`, placed by `transform`.
fn add_mesh(b: &mut SceneBuilder, path: &Path, transform: &mesh::Transform, material: u32) -> FieldResult<()> {
    let loaded = mesh::load_obj(path, transform).map_err(|e| field_error("file", e))?;
    b.degenerate_triangles += loaded.degenerate;
    let triangles = loaded
        .triangles
        .iter()
        .map(|t| Triangle::new(t[0], t[1], t[2], material));
    match &loaded.uvs {
        None => b.geometry.triangles.extend(triangles),
        Some(uvs) => b
            .geometry
            .add_textured_triangles(triangles.zip(uvs.iter().map(|c| TriangleUvs {
                corners: c.map(|[u, v]| Uv { u, v }),
            }))),
    }
    b.make_room(0, "file")
}

/// Checks that `v` is a planar, convex polygon with at least three corners.
fn check_convex_polygon(v: &[Vec3]) -> FieldResult<()> {
    if v.len() < 3 {
        return Err(field_error(
            "vertices",
            format!("a polygon needs at least 3 vertices, got {}", v.len()),
        ));
    }
    let poly = Polygon::new(v, 0, 0);
    if !poly.normal.is_finite() {
        return Err(field_error("vertices", "the polygon has no area"));
    }
    let size = v.iter().fold(0.0f32, |m, p| m.max((*p - v[0]).length()));
    for (i, p) in v.iter().enumerate() {
        if (poly.normal.dot(*p) - poly.offset).abs() > 1e-4 * size {
            return Err(field_error(
                "vertices",
                format!("vertex {i} is off the polygon's plane"),
            ));
        }
        let next = v[(i + 1) % v.len()];
        let after = v[(i + 2) % v.len()];
        if (next - *p).cross(after - next).dot(poly.normal) < -1e-6 * size * size {
            return Err(field_error(
                "vertices",
                format!("the polygon is not convex at vertex {}", (i + 1) % v.len()),
            ));
        }
    }
    Ok(())
}
