//! Validation of a parsed scene file and its conversion to device types.

use super::error::{SceneError, line_col};
use super::schema::AccelDef;
use super::schema::{BackgroundDef, FresnelDef, GeneratorDef, MaterialDef, ObjectDef, SceneFile, Triple};
use super::{Geometry, Scene, SceneSettings, ToneMapping, generators, mesh, meshgen};
use crate::accel::AccelSettings;
use device::camera::CameraSpec;
use device::geometry::{Parallelepiped, Polygon, PrimKind, PrimRef, Sphere, Triangle};
use device::material::{FresnelModel, Material, MaterialKind};
use device::math::{Rgb, Vec3};
use device::scene::Background;
use serde::de::DeserializeOwned;
use serde_spanned::Spanned;
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

pub use crate::settings::size::{MAX_DEPTH, MAX_IMAGE_SIDE, MAX_SPP};

/// The largest coordinate accepted anywhere in a scene, after transforms.
/// Beyond it `f32` keeps fewer than 64 steps per unit, and the squared
/// distances of box and sphere tests approach the overflow at 3.4e38.
pub const MAX_COORDINATE: f32 = 1.0e9;

/// Host memory a primitive needs with its share of the acceleration
/// structure and its build (a generous estimate, for the check before a
/// generator runs).
const BYTES_PER_PRIMITIVE: u64 = 256;

/// A problem found in one field, before it is placed in the file.
pub struct FieldError {
    field: String,
    message: String,
}

/// Shorthand for a field check.
pub type FieldResult<T> = Result<T, FieldError>;

fn field_error(field: &str, message: impl Into<String>) -> FieldError {
    FieldError {
        field: field.to_string(),
        message: message.into(),
    }
}

/// A finite number.
pub fn finite(field: &str, v: f32) -> FieldResult<f32> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(field_error(field, format!("expected a finite number, got {v}")))
    }
}

/// A finite, strictly positive number.
pub fn positive(field: &str, v: f32) -> FieldResult<f32> {
    if finite(field, v)? > 0.0 {
        Ok(v)
    } else {
        Err(field_error(field, format!("must be positive, got {v}")))
    }
}

/// A point in the scene: finite and within [`MAX_COORDINATE`].
pub fn point(field: &str, v: Triple) -> FieldResult<Vec3> {
    let p = vec3(field, v)?;
    if p.max_abs_component() > MAX_COORDINATE {
        return Err(field_error(
            field,
            format!("coordinates must be within ±{MAX_COORDINATE:e}, got {v:?}"),
        ));
    }
    Ok(p)
}

/// A length in the scene: positive and at most [`MAX_COORDINATE`].
pub fn length(field: &str, v: f32) -> FieldResult<f32> {
    if positive(field, v)? > MAX_COORDINATE {
        return Err(field_error(
            field,
            format!("must be at most {MAX_COORDINATE:e}, got {v}"),
        ));
    }
    Ok(v)
}

/// A finite vector.
pub fn vec3(field: &str, v: Triple) -> FieldResult<Vec3> {
    for c in v {
        if !c.is_finite() {
            return Err(field_error(field, format!("expected three finite numbers, got {v:?}")));
        }
    }
    Ok(Vec3::new(v[0], v[1], v[2]))
}

/// A colour with finite, non-negative channels, at most `max` each.
fn rgb(field: &str, v: Triple, max: f32) -> FieldResult<Rgb> {
    vec3(field, v)?;
    if v.iter().any(|&c| !(0.0..=max).contains(&c)) {
        let range = if max.is_finite() {
            format!("in [0, {max}]")
        } else {
            "non-negative".to_string()
        };
        return Err(field_error(field, format!("channels must be {range}, got {v:?}")));
    }
    Ok(Rgb::new(v[0], v[1], v[2]))
}

/// Collects validated content: materials by name, and primitives.
pub struct SceneBuilder {
    pub materials: Vec<Material>,
    pub material_names: Vec<String>,
    by_name: HashMap<String, u32>,
    pub geometry: Geometry,
    /// Mesh triangles dropped for having no area.
    pub degenerate_triangles: usize,
}

impl SceneBuilder {
    fn new() -> Self {
        SceneBuilder {
            materials: Vec::new(),
            material_names: Vec::new(),
            by_name: HashMap::new(),
            geometry: Geometry::default(),
            degenerate_triangles: 0,
        }
    }

    /// Adds a named material and returns its index.
    pub fn add_material(&mut self, name: &str, material: Material) -> u32 {
        let index = self.materials.len() as u32;
        self.materials.push(material);
        self.material_names.push(name.to_string());
        self.by_name.insert(name.to_string(), index);
        index
    }

    /// The index of a material named in the file.
    fn material(&self, name: &str) -> FieldResult<u32> {
        self.by_name.get(name).copied().ok_or_else(|| {
            let mut known: Vec<_> = self.material_names.iter().map(String::as_str).collect();
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
    fn make_room(&self, count: u64, field: &str) -> FieldResult<()> {
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

    /// How many primitives of each kind there are so far.
    fn counts(&self) -> [usize; 4] {
        let g = &self.geometry;
        [g.spheres.len(), g.boxes.len(), g.polygons.len(), g.triangles.len()]
    }

    /// Checks that every primitive added since `before` lies within
    /// [`MAX_COORDINATE`] (after transforms and generation); the error
    /// names `field`.
    fn check_extent(&self, before: [usize; 4], field: &str) -> FieldResult<()> {
        let g = &self.geometry;
        let kinds = [
            PrimKind::Sphere,
            PrimKind::Parallelepiped,
            PrimKind::Polygon,
            PrimKind::Triangle,
        ];
        for ((kind, from), to) in kinds.into_iter().zip(before).zip(self.counts()) {
            for i in from..to {
                let b = crate::accel::bounds::of(g, PrimRef::new(kind, i as u32));
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
        self.geometry.spheres.push(Sphere {
            center,
            radius,
            material,
        });
    }

    /// Adds a convex polygon (vertices counter-clockwise about its front).
    pub fn add_polygon(&mut self, vertices: &[Vec3], material: u32) {
        let first = self.geometry.polygon_vertices.len() as u32;
        self.geometry.polygons.push(Polygon::new(vertices, first, material));
        self.geometry.polygon_vertices.extend_from_slice(vertices);
    }
}

/// Where in the file an entry is, for error messages.
struct Locator<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Locator<'_> {
    /// An error in field `e.field` of the entry spanning `span`, placed on
    /// the field's own line when the entry writes it as `field = ...`, else on
    /// the entry's first line.
    fn error(&self, span: Range<usize>, entry: &str, e: FieldError) -> SceneError {
        let key = e.field.split('.').next().unwrap_or_default();
        // A table's span covers only its header; its fields run to the next header.
        let span = span.start..entry_end(self.text, span.end);
        let entry_text = self.text.get(span.clone()).unwrap_or_default();
        let mut offset = span.start;
        for l in entry_text.split_inclusive('\n') {
            let rest = l.trim_start();
            if rest.strip_prefix(key).is_some_and(|r| r.trim_start().starts_with('=')) {
                offset += l.len() - rest.len();
                break;
            }
            offset += l.len();
        }
        let at = if offset >= span.end { span.start } else { offset };
        let (line, _) = line_col(self.text, at);
        SceneError::Invalid {
            path: self.path.to_path_buf(),
            line,
            item: if e.field.is_empty() {
                entry.to_string()
            } else {
                format!("{entry}, field `{}`", e.field)
            },
            message: e.message,
        }
    }

    /// Deserialises entry `index` of the array of tables `array` on its
    /// own, so that an error names the entry and its line (TOML's own
    /// positions inside arrays of tables point at the first entry).
    fn entry<T: DeserializeOwned>(
        &self,
        array: &str,
        index: usize,
        table: &Spanned<toml::Table>,
    ) -> Result<(T, String), SceneError> {
        let kind = table
            .get_ref()
            .get("kind")
            .and_then(|k| k.as_str())
            .unwrap_or("no kind");
        let name = format!("{array}[{index}] ({kind})");
        match toml::Value::Table(table.get_ref().clone()).try_into::<T>() {
            Ok(def) => Ok((def, name)),
            Err(e) => {
                let message = e.message().trim().to_string();
                let field = culprit::<T>(table.get_ref(), &message).unwrap_or_default();
                Err(self.error(table.span(), &name, FieldError { field, message }))
            }
        }
    }
}

/// The key of `table` that `message` (its deserialisation error) is about:
/// named in the message, or else the one key whose removal changes the
/// error.
fn culprit<T: DeserializeOwned>(table: &toml::Table, message: &str) -> Option<String> {
    let quoted = |prefix: &str| {
        let rest = message.strip_prefix(prefix)?;
        Some(rest.split('`').nth(1)?.to_string())
    };
    if message.starts_with("unknown variant") {
        return Some("kind".into());
    }
    if let Some(k) = quoted("unknown field").or_else(|| quoted("missing field")) {
        return Some(k);
    }
    table.keys().filter(|k| *k != "kind").find_map(|k| {
        let mut without = table.clone();
        without.remove(k);
        let changed = match toml::Value::Table(without).try_into::<T>() {
            Ok(_) => true,
            Err(e) => e.message().trim() != message,
        };
        changed.then(|| k.clone())
    })
}

/// Where the entry whose header or inline table ends at `from` ends: at the
/// next `[table]` or `[[array]]` header line, or the end of the text.
fn entry_end(text: &str, from: usize) -> usize {
    let mut at = from;
    for (i, line) in text.get(from..).unwrap_or_default().split_inclusive('\n').enumerate() {
        let l = line.split('#').next().unwrap_or_default().trim();
        let is_header = l.starts_with('[')
            && l.ends_with(']')
            && l.trim_matches(['[', ']'])
                .chars()
                .all(|c| c.is_alphanumeric() || "_-.\"".contains(c));
        if i > 0 && is_header {
            return at;
        }
        at += line.len();
    }
    text.len()
}

/// Validates `file` (parsed from `text` at `path`) into a [`Scene`].
pub fn build(path: &Path, text: &str, file: SceneFile) -> Result<Scene, SceneError> {
    let at = Locator { path, text };
    let render_span = file.render.span();
    let settings = settings(file.render.get_ref()).map_err(|e| at.error(render_span, "[render]", e))?;
    let camera_span = file.camera.span();
    let camera = camera(file.camera.get_ref(), &settings).map_err(|e| at.error(camera_span, "[camera]", e))?;
    let background = match &file.background {
        None => Background::Constant(Rgb::BLACK),
        Some(b) => background(b.get_ref()).map_err(|e| at.error(b.span(), "[background]", e))?,
    };

    let mut builder = SceneBuilder::new();
    for (name, def) in &file.materials {
        let m = material(def.get_ref()).map_err(|e| at.error(def.span(), &format!("[materials.{name}]"), e))?;
        builder.add_material(name, m);
    }
    for (i, g) in file.generators.iter().enumerate() {
        let (def, entry) = at.entry::<GeneratorDef>("generators", i, g)?;
        let before = builder.counts();
        generate(&mut builder, &def)
            .and_then(|()| builder.check_extent(before, "center"))
            .map_err(|e| at.error(g.span(), &entry, e))?;
    }
    let scene_dir = path.parent().unwrap_or(Path::new("."));
    let mut files = vec![path.to_path_buf()];
    for (i, o) in file.objects.iter().enumerate() {
        let (def, entry) = at.entry::<ObjectDef>("objects", i, o)?;
        let before = builder.counts();
        object(&mut builder, scene_dir, &def, &mut files)
            .and_then(|()| builder.check_extent(before, extent_field(&def)))
            .map_err(|e| at.error(o.span(), &entry, e))?;
    }
    let accel_settings = match &file.accel {
        None => AccelSettings::default(),
        Some(a) => accel(a.get_ref()).map_err(|e| at.error(a.span(), "[accel]", e))?,
    };
    if builder.geometry.primitive_count() == 0 {
        return Err(at.error(0..0, "scene", field_error("objects", "the scene has no objects")));
    }
    if builder.geometry.primitive_count() > PrimRef::MAX_INDEX as usize {
        let msg = format!(
            "{} primitives exceed the limit of {}",
            builder.geometry.primitive_count(),
            PrimRef::MAX_INDEX
        );
        return Err(at.error(0..0, "scene", field_error("objects", msg)));
    }
    let accel = crate::accel::build(&builder.geometry, &accel_settings);
    Ok(Scene {
        path: path.to_path_buf(),
        files,
        settings,
        camera,
        background,
        materials: builder.materials,
        material_names: builder.material_names,
        geometry: builder.geometry,
        accel_settings,
        accel,
    })
}

fn accel(a: &AccelDef) -> FieldResult<AccelSettings> {
    let mut out = AccelSettings {
        choice: a.kind,
        ..AccelSettings::default()
    };
    if let Some(b) = a.bvh_bins {
        if !(2..=256).contains(&b) {
            return Err(field_error("bvh_bins", format!("must be between 2 and 256, got {b}")));
        }
        out.bvh.bins = b as usize;
    }
    if let Some(m) = a.bvh_max_leaf {
        if !(1..=64).contains(&m) {
            return Err(field_error(
                "bvh_max_leaf",
                format!("must be between 1 and 64, got {m}"),
            ));
        }
        out.bvh.max_leaf = m as usize;
    }
    if let Some(c) = a.bvh_traversal_cost {
        out.bvh.traversal_cost = positive("bvh_traversal_cost", c)?;
    }
    if let Some(c) = a.kd_traversal_cost {
        out.kd.traversal_cost = positive("kd_traversal_cost", c)?;
    }
    if let Some(c) = a.kd_intersection_cost {
        out.kd.intersection_cost = positive("kd_intersection_cost", c)?;
    }
    if let Some(b) = a.kd_empty_bonus {
        if !(0.0..=1.0).contains(&finite("kd_empty_bonus", b)?) {
            return Err(field_error(
                "kd_empty_bonus",
                format!("must be between 0 and 1, got {b}"),
            ));
        }
        out.kd.empty_bonus = b;
    }
    if let Some(m) = a.kd_max_leaf {
        if m == 0 {
            return Err(field_error("kd_max_leaf", "must be at least 1"));
        }
        out.kd.max_leaf = m as usize;
    }
    if let Some(d) = a.kd_max_depth {
        let limit = device::accel::kdtree::MAX_DEPTH as u32 - 1;
        if d == 0 || d > limit {
            return Err(field_error(
                "kd_max_depth",
                format!("must be between 1 and {limit}, got {d}"),
            ));
        }
        out.kd.max_depth = Some(d as usize);
    }
    Ok(out)
}

fn settings(r: &super::schema::RenderDef) -> FieldResult<SceneSettings> {
    for (field, v) in [("width", r.width), ("height", r.height)] {
        if v == 0 || v > MAX_IMAGE_SIDE {
            return Err(field_error(
                field,
                format!("must be between 1 and {MAX_IMAGE_SIDE} pixels, got {v}"),
            ));
        }
    }
    if !(1..=MAX_SPP).contains(&r.spp) {
        return Err(field_error(
            "spp",
            format!(
                "must be between 1 and {MAX_SPP} (the most the film sums exactly), got {}",
                r.spp
            ),
        ));
    }
    if !(1..=MAX_DEPTH).contains(&r.max_depth) {
        return Err(field_error(
            "max_depth",
            format!(
                "must be between 1 (the camera ray) and {MAX_DEPTH}, got {}",
                r.max_depth
            ),
        ));
    }
    Ok(SceneSettings {
        width: r.width,
        height: r.height,
        spp: r.spp,
        max_depth: r.max_depth,
        seed: r.seed,
        roulette_start: r.roulette_start,
        tone: ToneMapping {
            exposure: positive("exposure", r.exposure)?,
            curve: r.tone_curve,
            gamma: positive("gamma", r.gamma)?,
        },
    })
}

fn camera(c: &super::schema::CameraDef, s: &SceneSettings) -> FieldResult<CameraSpec> {
    let look_from = point("look_from", c.look_from)?;
    let look_at = point("look_at", c.look_at)?;
    let up = vec3("up", c.up)?;
    let view = look_at - look_from;
    if view.length() == 0.0 {
        return Err(field_error("look_at", "must differ from look_from"));
    }
    if up.cross(view).length() <= 1e-6 * up.length() * view.length() {
        return Err(field_error("up", "must not be parallel to the viewing direction"));
    }
    let vfov = finite("vfov", c.vfov)?;
    if !(vfov > 0.0 && vfov < 180.0) {
        return Err(field_error(
            "vfov",
            format!("must be between 0 and 180 degrees, got {vfov}"),
        ));
    }
    if finite("aperture", c.aperture)? < 0.0 {
        return Err(field_error(
            "aperture",
            format!("must not be negative, got {}", c.aperture),
        ));
    }
    let focus_distance = match c.focus_distance {
        Some(d) => positive("focus_distance", d)?,
        None => view.length(),
    };
    Ok(CameraSpec {
        look_from,
        look_at,
        up,
        vfov_degrees: vfov,
        aspect: s.width as f32 / s.height as f32,
        aperture: c.aperture,
        focus_distance,
    })
}

fn background(b: &BackgroundDef) -> FieldResult<Background> {
    Ok(match b {
        BackgroundDef::Constant { color } => Background::Constant(rgb("color", *color, f32::INFINITY)?),
        BackgroundDef::Sky { horizon, zenith } => Background::Sky {
            horizon: rgb("horizon", *horizon, f32::INFINITY)?,
            zenith: rgb("zenith", *zenith, f32::INFINITY)?,
        },
    })
}

/// A material with every field zeroed but the class.
pub fn blank_material(kind: MaterialKind) -> Material {
    Material {
        kind,
        albedo: Rgb::BLACK,
        emission: Rgb::BLACK,
        roughness: 0.0,
        ior: 1.0,
        fresnel: FresnelModel::Exact,
        transmittance: Rgb::WHITE,
    }
}

fn material(def: &MaterialDef) -> FieldResult<Material> {
    Ok(match def {
        MaterialDef::Diffuse { albedo, emission } => Material {
            albedo: rgb("albedo", *albedo, 1.0)?,
            emission: rgb("emission", *emission, f32::INFINITY)?,
            ..blank_material(MaterialKind::Diffuse)
        },
        MaterialDef::Metal {
            albedo,
            roughness,
            emission,
        } => {
            if finite("roughness", *roughness)? < 0.0 {
                return Err(field_error(
                    "roughness",
                    format!("must not be negative, got {roughness}"),
                ));
            }
            Material {
                albedo: rgb("albedo", *albedo, 1.0)?,
                emission: rgb("emission", *emission, f32::INFINITY)?,
                roughness: *roughness,
                ..blank_material(MaterialKind::Metal)
            }
        }
        MaterialDef::Dielectric {
            ior,
            fresnel,
            transmittance,
        } => Material {
            ior: positive("ior", *ior)?,
            fresnel: match fresnel {
                FresnelDef::Exact => FresnelModel::Exact,
                FresnelDef::Schlick => FresnelModel::Schlick,
            },
            transmittance: rgb("transmittance", *transmittance, 1.0)?,
            ..blank_material(MaterialKind::Dielectric)
        },
        MaterialDef::Emissive { emission } => Material {
            emission: rgb("emission", *emission, f32::INFINITY)?,
            ..blank_material(MaterialKind::Emissive)
        },
    })
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
            let corner = point("corner", *corner)?;
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
            b.geometry.boxes.push(Parallelepiped::new(corner, e, m));
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
            let loaded = mesh::load_obj(&obj_path, &transform).map_err(|e| field_error("file", e))?;
            files.push(obj_path);
            b.degenerate_triangles += loaded.degenerate;
            b.geometry
                .triangles
                .extend(loaded.triangles.iter().map(|t| Triangle::new(t[0], t[1], t[2], m)));
            b.make_room(0, "file")?;
        }
    }
    Ok(())
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
