//! OBJ meshes, through `tobj`, placed by a transform, with their texture
//! coordinates.
//!
//! tobj 4.0.5 resolves a face's indices itself and computes `2 * vt + 1`
//! and `3 * vn + 2` unchecked for its texture and normal indices, which
//! overflows (a panic where overflow checks are on) for indices such as
//! `f 1//6148914691236517207` or, with one `vt`, `f 1/-3` (found by the
//! `obj_import` fuzz target). So tobj reads the text through a `Checker`,
//! line by line, which hands it:
//!
//! - no `vn` lines, and faces without normal indices: normals are unused,
//!   and without them tobj never touches a normal index;
//! - each `vt` line checked (finite `u [v]`, `v` 0 when left out, as in
//!   OBJ), counted and written as `vt u v`;
//! - each face (`f`, and `l`, which tobj also reads as a face) with its
//!   texture indices resolved here: negative ones against the `vt` lines
//!   counted so far (-1 is the last one before the face), each checked to
//!   name one of those lines, and written as that absolute index. So every
//!   texture index tobj sees is at least 1 and at most the number of `vt`
//!   lines before the face, and it cannot overflow.
//!
//! Vertex indices pass unchanged: tobj bounds them itself with saturating
//! arithmetic. tobj then keeps each corner's texture coordinates with its
//! triangle through its own triangulation (fans), so nothing here has to
//! mirror its order. Every face has texture indices on every corner or none
//! has; errors name the file and the line.

use super::fields::{FieldResult, point, positive, vec3};
use super::schema::TransformDef;
use crate::settings::echo::shorten_for_error;
use device::math::{Vec3, scalar};
use std::io::{BufRead, Read, Write};
use std::num::IntErrorKind;
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

/// A mesh's triangles in world space, with their texture coordinates when
/// the file has them.
pub struct LoadedMesh {
    /// Triangle corners, counter-clockwise as in the file.
    pub triangles: Vec<[Vec3; 3]>,
    /// The texture coordinates (u, v) of each triangle's corners, parallel
    /// to `triangles`: `Some` when every face of the file gives every corner
    /// a texture index, `None` when no face gives any.
    pub uvs: Option<Vec<[[f32; 2]; 3]>>,
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
/// nothing but `bytes` is read, and so are normals. Texture coordinates are
/// kept when every face has them; faces with and without them in one file,
/// a texture index that names no earlier `vt` line, or a non-finite `vt`
/// are errors naming the line (see the module's documentation). A UTF-8
/// byte-order mark at the start is skipped.
pub fn parse_obj(path: &Path, bytes: &[u8], transform: &Transform) -> Result<LoadedMesh, String> {
    // A UTF-8 byte-order mark (as some editors write) would glue itself to
    // the first statement and turn its first vertex into an unknown one.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = CheckedObjText::new(path, bytes);
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: false,
        ..Default::default()
    };
    let loaded = tobj::load_obj_buf(&mut reader, &options, |_| Ok(Default::default()));
    // The checks stop tobj at the first bad line, as a read error.
    if let Some(e) = reader.error {
        return Err(e);
    }
    let (models, _materials) = loaded.map_err(|e| format!("cannot load OBJ file {}: {e}", path.display()))?;
    let mut out = LoadedMesh {
        triangles: Vec::new(),
        uvs: reader.checker.textured().then(Vec::new),
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
                    shorten_for_error(&model.name)
                )
            })?;
            let v = Vec3::new(p[0], p[1], p[2]);
            if !v.is_finite() {
                return Err(format!(
                    "{}: model `{}` has a non-finite vertex {v:?}",
                    path.display(),
                    shorten_for_error(&model.name)
                ));
            }
            Ok(transform.apply(v))
        };
        // The texture coordinates of the `corner`th entry of `m.indices`.
        let uv = |corner: usize| -> Result<[f32; 2], String> {
            m.texcoord_indices
                .get(corner)
                .and_then(|&t| m.texcoords.get(t as usize * 2..t as usize * 2 + 2))
                .map(|t| [t[0], t[1]])
                .ok_or_else(|| {
                    format!(
                        "{}: model `{}` has a corner without texture coordinates",
                        path.display(),
                        shorten_for_error(&model.name)
                    )
                })
        };
        for (k, face) in m.indices.chunks_exact(3).enumerate() {
            let t = [vertex(face[0])?, vertex(face[1])?, vertex(face[2])?];
            if (t[1] - t[0]).cross(t[2] - t[0]).length() == 0.0 {
                out.degenerate += 1;
                continue;
            }
            out.triangles.push(t);
            if let Some(uvs) = &mut out.uvs {
                uvs.push([uv(3 * k)?, uv(3 * k + 1)?, uv(3 * k + 2)?]);
            }
        }
    }
    if out.triangles.is_empty() {
        return Err(format!("OBJ file {} holds no triangles", path.display()));
    }
    Ok(out)
}

/// The OBJ text as tobj gets it: each line checked by a [`Checker`] and
/// replaced by what it writes. The first error stops the text (tobj sees a
/// read error) and is kept in `error`.
struct CheckedObjText<'a> {
    inner: &'a [u8],
    checker: Checker<'a>,
    /// The current line as read.
    raw: Vec<u8>,
    /// What tobj gets for it, and how much of that has been consumed.
    line: Vec<u8>,
    at: usize,
    error: Option<String>,
}

impl<'a> CheckedObjText<'a> {
    fn new(path: &'a Path, inner: &'a [u8]) -> Self {
        CheckedObjText {
            inner,
            checker: Checker {
                path,
                number: 0,
                texcoords: 0,
                first_face: None,
            },
            raw: Vec::new(),
            line: Vec::new(),
            at: 0,
            error: None,
        }
    }
}

impl Read for CheckedObjText<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.fill_buf()?.read(out)?;
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for CheckedObjText<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.at == self.line.len() && self.error.is_none() {
            self.line.clear();
            self.at = 0;
            self.raw.clear();
            if self.inner.read_until(b'\n', &mut self.raw)? == 0 {
                break;
            }
            if let Err(e) = self.checker.line(&self.raw, &mut self.line) {
                self.line.clear();
                self.error = Some(e);
            }
        }
        match &self.error {
            Some(e) => Err(std::io::Error::other(e.clone())),
            None => Ok(&self.line[self.at..]),
        }
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.line.len());
    }
}

/// Checks an OBJ text line by line, in order, and rewrites the lines that
/// carry indices tobj must not resolve itself.
struct Checker<'a> {
    /// Names the text in errors.
    path: &'a Path,
    /// The 1-based number of the line last checked.
    number: usize,
    /// How many `vt` lines have been checked.
    texcoords: u64,
    /// The first face's line and whether it has texture indices.
    first_face: Option<(usize, bool)>,
}

impl Checker<'_> {
    /// Whether the faces have texture indices (all of them, once every line
    /// has been checked).
    fn textured(&self) -> bool {
        self.first_face.is_some_and(|(_, textured)| textured)
    }

    /// An error at line `number`.
    fn error(&self, number: usize, message: impl std::fmt::Display) -> String {
        format!("OBJ file {} line {number}: {message}", self.path.display())
    }

    /// Checks the next line, `raw`, and writes what tobj gets for it to
    /// `out`: the line itself, nothing (`vn`), or a rewritten `vt`, `f` or
    /// `l` statement. Lines that are not UTF-8 pass, for tobj to reject.
    fn line(&mut self, raw: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        self.number += 1;
        let Ok(text) = std::str::from_utf8(raw) else {
            out.extend_from_slice(raw);
            return Ok(());
        };
        // Split as tobj splits.
        let mut words = text.split_whitespace();
        match words.next() {
            Some("vn") => Ok(()),
            Some("vt") => self.texcoord(words, out),
            Some(keyword @ ("f" | "l")) => self.face(keyword, words, out),
            _ => {
                out.extend_from_slice(raw);
                Ok(())
            }
        }
    }

    /// A `vt` statement, `u [v [w]]` (`v` is 0 when left out, `w` unused):
    /// rewritten as `vt u v`.
    fn texcoord<'w>(&mut self, mut words: impl Iterator<Item = &'w str>, out: &mut Vec<u8>) -> Result<(), String> {
        let mut number = |default: Option<f32>| match words.next() {
            Some(word) => word.parse::<f32>().ok(),
            None => default,
        };
        let (Some(u), Some(v)) = (number(None), number(Some(0.0))) else {
            return Err(self.error(self.number, "`vt` needs one or two numbers, u [v]"));
        };
        if !(u.is_finite() && v.is_finite()) {
            return Err(self.error(self.number, format!("texture coordinate ({u}, {v}) is not finite")));
        }
        self.texcoords += 1;
        // Writing into a `Vec` cannot fail.
        let _ = writeln!(out, "vt {u} {v}");
        Ok(())
    }

    /// An `f` or `l` statement (tobj reads both as faces): each corner
    /// `v[/[vt][/vn]]` rewritten as `v/vt`, with `vt` the absolute index of
    /// a `vt` line before this one, or as `v` when it has no texture index.
    /// Either every corner of every face has a texture index or none has.
    fn face<'w>(
        &mut self,
        keyword: &str,
        corners: impl Iterator<Item = &'w str>,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        out.extend_from_slice(keyword.as_bytes());
        let mut textured = None;
        for (k, corner) in (1..).zip(corners) {
            let mut fields = corner.split('/');
            // `split` yields at least one field; an empty vertex index is
            // tobj's to reject.
            let vertex = fields.next().unwrap_or_default();
            let texture = fields.next().unwrap_or_default();
            // The normal index, `fields.next()`, is dropped: normals are
            // unused and their `vn` lines never reach tobj.
            if fields.nth(1).is_some() {
                return Err(self.error(
                    self.number,
                    format!(
                        "face corner {k} `{}` has more than three `/`-separated indices",
                        shorten_for_error(corner)
                    ),
                ));
            }
            out.push(b' ');
            out.extend_from_slice(vertex.as_bytes());
            let has_texture = !texture.is_empty();
            if has_texture {
                let index = self.texture_index(texture, k)?;
                let _ = write!(out, "/{index}");
            }
            match textured {
                None => textured = Some(has_texture),
                Some(first) if first != has_texture => {
                    let (this, that) = if has_texture {
                        ("has a", "has none")
                    } else {
                        ("has no", "has one")
                    };
                    return Err(self.error(
                        self.number,
                        format!("face corner {k} {this} texture index, while corner 1 {that}"),
                    ));
                }
                Some(_) => {}
            }
        }
        out.push(b'\n');
        // A face without corners is tobj's to reject.
        let Some(textured) = textured else {
            return Ok(());
        };
        match self.first_face {
            None => self.first_face = Some((self.number, textured)),
            Some((_, first)) if first == textured => {}
            Some((first, true)) => {
                return Err(self.error(
                    self.number,
                    format!("face has no texture coordinates, while earlier faces do (from line {first})"),
                ));
            }
            Some((first, false)) => {
                return Err(self.error(
                    first,
                    format!(
                        "face has no texture coordinates, while a later face (line {}) does",
                        self.number
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Resolves the texture index `field` of face corner `k`, 1-based or
    /// negative (-1 is the last `vt` line so far), to a 1-based index of a
    /// `vt` line before this one.
    fn texture_index(&self, field: &str, k: usize) -> Result<u64, String> {
        let count = self.texcoords;
        let out_of_range = || {
            let before = match count {
                0 => "no `vt` line precedes it".to_string(),
                1 => "only 1 `vt` line precedes it".to_string(),
                n => format!("only {n} `vt` lines precede it"),
            };
            self.error(
                self.number,
                format!(
                    "texture index {} of face corner {k} is out of range: {before}",
                    shorten_for_error(field)
                ),
            )
        };
        let index: i64 = match field.parse() {
            Ok(index) => index,
            Err(e) if matches!(e.kind(), IntErrorKind::PosOverflow | IntErrorKind::NegOverflow) => {
                return Err(out_of_range());
            }
            Err(_) => {
                return Err(self.error(
                    self.number,
                    format!(
                        "texture index `{}` of face corner {k} is not an integer",
                        shorten_for_error(field)
                    ),
                ));
            }
        };
        let back = index.unsigned_abs();
        let resolved = match index.signum() {
            1 => back,
            -1 => (count + 1).saturating_sub(back),
            _ => {
                return Err(self.error(
                    self.number,
                    format!(
                        "texture index 0 of face corner {k}: indices start at 1 (or count back from -1, \
                         the last `vt` line before the face)"
                    ),
                ));
            }
        };
        if (1..=count).contains(&resolved) {
            Ok(resolved)
        } else {
            Err(out_of_range())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::echo::ECHOED_CHARS;

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

    fn parse(text: &str) -> Result<LoadedMesh, String> {
        parse_obj(Path::new("t.obj"), text.as_bytes(), &Transform::IDENTITY)
    }

    /// The unit square's corners, numbered counter-clockwise from the origin.
    const SQUARE: &str = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n";

    #[test]
    fn a_textured_quad_becomes_two_fan_triangles_with_their_uvs() {
        // Texture indices reversed against the vertex indices (corner 1 has
        // vt 4), with normals, which are dropped.
        let text =
            format!("{SQUARE}vt 0.1 0.2\nvt 0.3 0.4\nvt 0.5 0.6\nvt 0.7 0.8\nvn 0 0 1\nf 1/4/1 2/3/1 3/2/1 4/1/1\n");
        let mesh = parse(&text).unwrap();
        // The fan (1, 2, 3), (1, 3, 4).
        let p = |x: f32, y: f32| Vec3::new(x, y, 0.0);
        assert_eq!(
            mesh.triangles,
            [
                [p(0.0, 0.0), p(1.0, 0.0), p(1.0, 1.0)],
                [p(0.0, 0.0), p(1.0, 1.0), p(0.0, 1.0)]
            ]
        );
        assert_eq!(
            mesh.uvs.unwrap(),
            [
                [[0.7, 0.8], [0.5, 0.6], [0.3, 0.4]],
                [[0.7, 0.8], [0.3, 0.4], [0.1, 0.2]]
            ]
        );
        assert_eq!(mesh.degenerate, 0);
    }

    #[test]
    fn a_textured_polygon_is_a_fan_across_models_and_degenerate_faces_drop_their_uvs() {
        // A pentagon (x, y) = (0,0) (2,0) (3,1) (1,3) (-1,1) in model `a`,
        // then in model `b` a zero-area face and a triangle.
        let text = "o a\nv 0 0 0\nv 2 0 0\nv 3 1 0\nv 1 3 0\nv -1 1 0\n\
                    vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvt 0.5 0.5\n\
                    f 1/1 2/2 3/3 4/4 5/5\n\
                    o b\nf 1/2 2/2 1/2\nf 2/5 3/4 4/1\n";
        let mesh = parse(text).unwrap();
        let p = |x: f32, y: f32| Vec3::new(x, y, 0.0);
        let (v1, v2, v3, v4, v5) = (p(0.0, 0.0), p(2.0, 0.0), p(3.0, 1.0), p(1.0, 3.0), p(-1.0, 1.0));
        assert_eq!(mesh.triangles, [[v1, v2, v3], [v1, v3, v4], [v1, v4, v5], [v2, v3, v4]]);
        assert_eq!(
            mesh.uvs.unwrap(),
            [
                [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]],
                [[0.0, 0.0], [1.0, 1.0], [0.0, 1.0]],
                [[0.0, 0.0], [0.0, 1.0], [0.5, 0.5]],
                [[0.5, 0.5], [0.0, 1.0], [0.0, 0.0]],
            ]
        );
        assert_eq!(mesh.degenerate, 1);
    }

    #[test]
    fn negative_texture_indices_count_back_from_the_last_vt_before_the_face() {
        // Two `vt` lines, a face, then a third `vt` and a second face: -1 is
        // vt 2 for the first face and vt 3 for the second.
        let text = format!("{SQUARE}vt 0.1 0.1\nvt 0.2 0.2\nf 1/-1 2/-2 3/-1\nvt 0.3 0.3\nf 1/-1 3/-2 4/-3\n");
        let mesh = parse(&text).unwrap();
        assert_eq!(
            mesh.uvs.unwrap(),
            [
                [[0.2, 0.2], [0.1, 0.1], [0.2, 0.2]],
                [[0.3, 0.3], [0.2, 0.2], [0.1, 0.1]]
            ]
        );
    }

    #[test]
    fn faces_without_texture_indices_give_no_uvs() {
        // Without `vt` lines, and with `vt` lines that no face uses.
        for extra in ["", "vt 0 0\nvt 1 1\n"] {
            let text = format!("{SQUARE}{extra}f 1 2 3\nf 1//1 3//1 4//1\n");
            let mesh = parse(&text).unwrap();
            assert_eq!(mesh.triangles.len(), 2, "{text:?}");
            assert!(mesh.uvs.is_none(), "{text:?}");
        }
    }

    #[test]
    fn a_vt_without_v_has_v_zero() {
        let mesh = parse(&format!("{SQUARE}vt 0.25\nvt 0.5 0.75 0.9\nf 1/1 2/2 3/1\n")).unwrap();
        assert_eq!(mesh.uvs.unwrap(), [[[0.25, 0.0], [0.5, 0.75], [0.25, 0.0]]]);
    }

    #[test]
    fn faces_with_and_without_texture_indices_are_an_error_at_the_first_face_without() {
        let vt = "vt 0 0\n";
        // SQUARE is lines 1 to 4, `vt` line 5; faces from line 6.
        for (faces, message) in [
            (
                "f 1/1 2/1 3/1\nf 1/1 3/1 4/1\nf 1 3 4\n",
                "OBJ file t.obj line 8: face has no texture coordinates, while earlier faces do (from line 6)",
            ),
            (
                "f 1 2 3\nf 1/1 3/1 4/1\n",
                "OBJ file t.obj line 6: face has no texture coordinates, while a later face (line 7) does",
            ),
            (
                "f 1/1 2/1 3//1\n",
                "OBJ file t.obj line 6: face corner 3 has no texture index, while corner 1 has one",
            ),
            (
                "f 1 2/1 3/1\n",
                "OBJ file t.obj line 6: face corner 2 has a texture index, while corner 1 has none",
            ),
            // tobj reads `l` statements as faces too.
            (
                "f 1/1 2/1 3/1\nl 1 3 4\n",
                "OBJ file t.obj line 7: face has no texture coordinates, while earlier faces do (from line 6)",
            ),
        ] {
            let text = format!("{SQUARE}{vt}{faces}");
            assert_eq!(parse(&text).err().as_deref(), Some(message), "{text:?}");
        }
    }

    #[test]
    fn bad_texture_indices_are_errors_naming_line_and_corner() {
        // One `vt` (line 5); the face is line 6, the bad index on its second
        // corner.
        let range = "of face corner 2 is out of range: only 1 `vt` line precedes it";
        for (corner, message) in [
            ("1/-3", format!("texture index -3 {range}")),
            ("1/-2", format!("texture index -2 {range}")),
            ("1/2", format!("texture index 2 {range}")),
            (
                "1/0",
                "texture index 0 of face corner 2: indices start at 1 (or count back from -1, \
                 the last `vt` line before the face)"
                    .to_string(),
            ),
            (
                "1/6148914691236517207",
                format!("texture index 6148914691236517207 {range}"),
            ),
            (
                "1/-9223372036854775808",
                format!("texture index -9223372036854775808 {range}"),
            ),
            (
                "1/99999999999999999999999",
                format!("texture index 99999999999999999999999 {range}"),
            ),
            (
                "1/x",
                "texture index `x` of face corner 2 is not an integer".to_string(),
            ),
            // Long indices are cut short in the message.
            (
                &format!("1/{}", "9".repeat(1000)),
                format!("texture index {}… (1000 bytes) {range}", "9".repeat(ECHOED_CHARS)),
            ),
            (
                "1/1/1/1",
                "face corner 2 `1/1/1/1` has more than three `/`-separated indices".to_string(),
            ),
        ] {
            let text = format!("{SQUARE}vt 0 0\nf 2/1 {corner} 3/1\n");
            let err = parse(&text).err();
            assert_eq!(err, Some(format!("OBJ file t.obj line 6: {message}")), "{text:?}");
        }
        // A texture index before any `vt` line, though one follows.
        let err = parse(&format!("{SQUARE}f 1/1 2/1 3/1\nvt 0 0\n")).err();
        assert_eq!(
            err.as_deref(),
            Some("OBJ file t.obj line 5: texture index 1 of face corner 1 is out of range: no `vt` line precedes it")
        );
    }

    #[test]
    fn huge_normal_indices_are_ignored() {
        // Overflowed inside tobj when `vn` lines reached it; normal indices
        // never do now.
        let text = format!("{SQUARE}vn 0 0 1\nf 1//6148914691236517207 2//1 3//-99999999999999999999\n");
        let mesh = parse(&text).unwrap();
        assert_eq!(mesh.triangles.len(), 1);
        assert!(mesh.uvs.is_none());
    }

    #[test]
    fn bad_texture_coordinates_are_errors_naming_the_line() {
        for (vt, message) in [
            ("vt nan 0", "texture coordinate (NaN, 0) is not finite"),
            ("vt 0 inf", "texture coordinate (0, inf) is not finite"),
            ("vt 0 1e39", "texture coordinate (0, inf) is not finite"),
            ("vt", "`vt` needs one or two numbers, u [v]"),
            ("vt 0 x", "`vt` needs one or two numbers, u [v]"),
        ] {
            // Line 6, after a good `vt`: an error even where no face uses it.
            let text = format!("{SQUARE}vt 0 0\n{vt}\nf 1 2 3\n");
            let err = parse(&text).err();
            assert_eq!(err, Some(format!("OBJ file t.obj line 6: {message}")), "{text:?}");
        }
    }

    #[test]
    fn tobj_gets_absolute_texture_indices_and_no_normals() {
        let text = "v 0 0 0\r\n vt 0 0.5\nv 1 0 0\nvn 0 0 1\nvtx\nv 0 1 0\nf 1/1/1 2/-1/1 3/1\r\nl 1/1/1 2/-1\n";
        let mut reader = CheckedObjText::new(Path::new("t.obj"), text.as_bytes());
        let mut out = String::new();
        reader.read_to_string(&mut out).unwrap();
        assert_eq!(
            out,
            "v 0 0 0\r\nvt 0 0.5\nv 1 0 0\nvtx\nv 0 1 0\nf 1/1 2/1 3/1\nl 1/1 2/1\n"
        );
        assert!(reader.error.is_none());
    }
}
