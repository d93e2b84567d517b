//! OBJ meshes, through `tobj`, placed by a transform.

use super::build::{FieldResult, positive, vec3};
use super::schema::TransformDef;
use device::math::{Vec3, scalar};
use std::io::BufRead;
use std::path::Path;

/// The largest OBJ file accepted (about 50 million triangles written
/// compactly; the BVH build needs several times the file's size).
pub const MAX_OBJ_FILE_BYTES: u64 = 2 << 30;

/// Scale, then rotate about x, y and z in turn, then translate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    scale: f32,
    /// Rotation angles in radians about x, y and z.
    rotate: Vec3,
    translate: Vec3,
}

impl Transform {
    /// No scaling, rotation or translation.
    pub const IDENTITY: Transform = Transform {
        scale: 1.0,
        rotate: Vec3::new(0.0, 0.0, 0.0),
        translate: Vec3::new(0.0, 0.0, 0.0),
    };

    /// Validates a scene file's transform.
    pub fn from_def(def: &TransformDef) -> FieldResult<Self> {
        let rotate = vec3("transform.rotate", def.rotate.unwrap_or([0.0; 3]))?;
        Ok(Transform {
            scale: positive("transform.scale", def.scale.unwrap_or(1.0))?,
            rotate: rotate * (scalar::PI / 180.0),
            translate: vec3("transform.translate", def.translate.unwrap_or([0.0; 3]))?,
        })
    }

    /// Applies the transform to a point.
    pub fn apply(&self, p: Vec3) -> Vec3 {
        let p = p * self.scale;
        let (sx, cx) = scalar::sin_cos(self.rotate.x);
        let p = Vec3::new(p.x, cx * p.y - sx * p.z, sx * p.y + cx * p.z);
        let (sy, cy) = scalar::sin_cos(self.rotate.y);
        let p = Vec3::new(cy * p.x + sy * p.z, p.y, -sy * p.x + cy * p.z);
        let (sz, cz) = scalar::sin_cos(self.rotate.z);
        let p = Vec3::new(cz * p.x - sz * p.y, sz * p.x + cz * p.y, p.z);
        p + self.translate
    }
}

/// A mesh's triangles in world space.
pub struct LoadedMesh {
    /// Triangle corners, counter-clockwise as in the file.
    pub triangles: Vec<[Vec3; 3]>,
    /// Faces dropped because they have no area.
    pub degenerate: usize,
}

/// Loads every model in the OBJ at `path`, triangulating polygons (as fans).
/// Errors name the OBJ file.
pub fn load_obj(path: &Path, transform: &Transform) -> Result<LoadedMesh, String> {
    let bytes = super::read_limited(path, MAX_OBJ_FILE_BYTES).map_err(|e| format!("OBJ file {} {e}", path.display()))?;
    parse_obj(path, &bytes, transform)
}

/// Parses OBJ text held in memory exactly as [`load_obj`] parses a file.
/// `path` only names the text in errors.
pub fn parse_obj(path: &Path, bytes: &[u8], transform: &Transform) -> Result<LoadedMesh, String> {
    read_obj(path, &mut &*bytes, transform)
}

/// The OBJ import behind [`load_obj`] and [`parse_obj`]: every model, placed
/// by `transform`. `mtllib` statements are ignored (materials come from the
/// scene file), so nothing but `reader` is read.
fn read_obj(path: &Path, reader: &mut impl BufRead, transform: &Transform) -> Result<LoadedMesh, String> {
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: false,
        ..Default::default()
    };
    let (models, _materials) = tobj::load_obj_buf(reader, &options, |_| Ok(Default::default()))
        .map_err(|e| format!("cannot load OBJ file {}: {e}", path.display()))?;
    let mut out = LoadedMesh {
        triangles: Vec::new(),
        degenerate: 0,
    };
    for model in &models {
        let m = &model.mesh;
        let vertex = |i: u32| -> Result<Vec3, String> {
            let i = i as usize * 3;
            let p = m.positions.get(i..i + 3).ok_or_else(|| {
                format!(
                    "{}: model `{}` indexes a vertex that does not exist",
                    path.display(),
                    model.name
                )
            })?;
            let v = Vec3::new(p[0], p[1], p[2]);
            if !v.is_finite() {
                return Err(format!(
                    "{}: model `{}` has a non-finite vertex {v:?}",
                    path.display(),
                    model.name
                ));
            }
            Ok(transform.apply(v))
        };
        for face in m.indices.chunks_exact(3) {
            let t = [vertex(face[0])?, vertex(face[1])?, vertex(face[2])?];
            if (t[1] - t[0]).cross(t[2] - t[0]).length() == 0.0 {
                out.degenerate += 1;
            } else {
                out.triangles.push(t);
            }
        }
    }
    if out.triangles.is_empty() {
        return Err(format!("OBJ file {} holds no triangles", path.display()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transform_scales_rotates_then_translates() {
        let t = Transform {
            scale: 2.0,
            rotate: Vec3::new(0.0, scalar::PI / 2.0, 0.0),
            translate: Vec3::new(0.0, 0.0, 5.0),
        };
        // (1,0,0) → scaled (2,0,0) → 90° about y → (0,0,-2) → translated (0,0,3).
        let p = t.apply(Vec3::new(1.0, 0.0, 0.0));
        assert!((p - Vec3::new(0.0, 0.0, 3.0)).length() < 1e-5, "{p:?}");
    }
}
