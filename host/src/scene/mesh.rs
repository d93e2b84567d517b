//! OBJ meshes, through `tobj`, placed by a transform.

use super::fields::{FieldResult, point, positive, vec3};
use super::schema::TransformDef;
use device::math::{Vec3, scalar};
use std::io::{BufRead, Read};
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
            translate: point("transform.translate", def.translate.unwrap_or([0.0; 3]))?,
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
    let bytes = crate::io::input_file::read_limited(path, MAX_OBJ_FILE_BYTES)
        .map_err(|e| format!("OBJ file {} {e}", path.display()))?;
    parse_obj(path, &bytes, transform)
}

/// Parses OBJ text held in memory, as [`load_obj`] parses a file: every
/// model, placed by `transform`. `path` only names the text in errors.
/// `mtllib` statements are ignored (materials come from the scene file), so
/// nothing but `bytes` is read, and so are texture coordinates and normals
/// (see [`WithoutVtVn`]). A UTF-8 byte-order mark at the start is skipped.
pub fn parse_obj(path: &Path, bytes: &[u8], transform: &Transform) -> Result<LoadedMesh, String> {
    // A UTF-8 byte-order mark (as some editors write) would glue itself to
    // the first statement and turn its first vertex into an unknown one.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let reader = &mut WithoutVtVn {
        inner: bytes,
        line: Vec::new(),
        at: 0,
    };
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

/// An OBJ text less its `vt` and `vn` lines. Meshes use neither, and tobj
/// 4.0.5 computes `3 * vn + 2` (`2 * vt + 1`) unchecked for a face's normal
/// (texture) index, which overflows, panicking where overflow checks are on,
/// for indices such as `f 1//6148914691236517207` or, with one `vt`, `f 1/-3`
/// (found by the `obj_import` fuzz target). Without normals and texture
/// coordinates tobj never uses those indices.
struct WithoutVtVn<R> {
    inner: R,
    /// The current line, and how much of it has been consumed.
    line: Vec<u8>,
    at: usize,
}

impl<R: BufRead> Read for WithoutVtVn<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.fill_buf()?.read(out)?;
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for WithoutVtVn<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.at == self.line.len() {
            self.line.clear();
            self.at = 0;
            if self.inner.read_until(b'\n', &mut self.line)? == 0 {
                break;
            }
            // The keyword as tobj reads it; lines that are not UTF-8 pass, for
            // tobj to reject.
            let keyword = std::str::from_utf8(&self.line)
                .ok()
                .and_then(|l| l.split_whitespace().next());
            if matches!(keyword, Some("vt" | "vn")) {
                self.line.clear();
            }
        }
        Ok(&self.line[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.line.len());
    }
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

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let text = "\u{FEFF}v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
        let mesh = parse_obj(Path::new("t.obj"), text.as_bytes(), &Transform::IDENTITY).unwrap();
        assert_eq!(mesh.triangles.len(), 1);
        assert_eq!(mesh.triangles[0][0], Vec3::new(0.0, 0.0, 0.0));
    }

    #[test]
    fn huge_normal_and_texcoord_indices_are_ignored() {
        // Both overflowed inside tobj before `vt` and `vn` lines were dropped.
        let corners = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";
        for rest in [
            "vn 0 0 1\nvn 0 0 1\nf 1//6148914691236517207 2//1 3//1\n",
            "vt 0 0\nf 1/-3 2/1 3/1\n",
        ] {
            let text = format!("{corners}{rest}");
            let mesh = parse_obj(Path::new("t.obj"), text.as_bytes(), &Transform::IDENTITY).unwrap();
            assert_eq!(mesh.triangles.len(), 1, "{text:?}");
        }
    }

    #[test]
    fn dropping_vt_and_vn_keeps_every_other_line() {
        let text = "v 0 0 0\r\n vt 0 0\nv 1 0 0\nvn 0 0 1\nvtx\nv 0 1 0\nf 1/1/1 2/1/1 3/1/1";
        let mut out = String::new();
        let mut reader = WithoutVtVn {
            inner: text.as_bytes(),
            line: Vec::new(),
            at: 0,
        };
        reader.read_to_string(&mut out).unwrap();
        assert_eq!(out, "v 0 0 0\r\nv 1 0 0\nvtx\nv 0 1 0\nf 1/1/1 2/1/1 3/1/1");
    }
}
