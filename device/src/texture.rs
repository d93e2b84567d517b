//! Textures: colours that vary over a surface. A material's colour is a
//! [`Colour`], a constant or a reference to one of the scene's
//! [`Texture`]s, looked up where a path meets the surface:
//!
//! * a **checker** of two colours, in cells of `1 / frequency`;
//! * **fBm noise** of `octaves` octaves (the value noise of
//!   [`crate::noise`]), blending its two colours;
//! * an **image**, filtered bilinearly and repeated `frequency` times
//!   over the unit square of texture coordinates.
//!
//! Checker and noise are evaluated in world space (solid textures, as
//! RTIOW's checker) or over the surface's texture coordinates; images
//! always over the texture coordinates. Those come from the primitive
//! ([`surface_uv`]): the sphere's spherical mapping, a mesh's OBJ `vt`
//! (or the triangle's barycentrics without them), the polygon's and the
//! box face's own edges. Every lookup is plain `+ - * /`, `floor` and the
//! crate's own [`scalar`] functions, so all back ends read the same bits.

use crate::geometry::{Hit, PrimKind, PrimRef, Primitives};
use crate::math::{Rgb, Vec3, scalar};
use crate::noise::{Basis, fbm};
use crate::slice::DeviceSlice;

/// A point in texture space: `u` across, `v` up, the unit square holding
/// one copy of an image (its bottom-left corner at `(0, 0)`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Uv {
    /// Across (an image's columns, left to right).
    pub u: f32,
    /// Up (an image's rows, bottom to top).
    pub v: f32,
}

/// The texture coordinates of a mesh triangle's three corners (from the
/// OBJ file's `vt`), in the order of the triangle's vertices.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TriangleUvs {
    /// Corners `v0`, `v1`, `v2`.
    pub corners: [Uv; 3],
}

impl TriangleUvs {
    /// The corners that reproduce a triangle's own barycentric coordinates
    /// (what a triangle without `vt` uses).
    pub const BARYCENTRIC: TriangleUvs = TriangleUvs {
        corners: [Uv { u: 0.0, v: 0.0 }, Uv { u: 1.0, v: 0.0 }, Uv { u: 0.0, v: 1.0 }],
    };
}

/// What a texture computes.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextureKind {
    /// Cells of `colours[0]` and `colours[1]` alternating along each axis.
    Checker = 0,
    /// fBm noise of `octaves` octaves from `colours[0]` (0) to `colours[1]` (1).
    Noise = 1,
    /// The image of `width × height` texels from `first_texel`, each texel
    /// times `colours[0]`.
    Image = 2,
}

/// The space a checker or a noise is laid out in.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextureSpace {
    /// World coordinates: a solid texture, continuous across primitives.
    World = 0,
    /// The surface's texture coordinates (as `(u, v, 0)`).
    Uv = 1,
}

/// One texture as the device reads it. Fields a kind does not use are zero.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Texture {
    /// What it computes.
    pub kind: TextureKind,
    /// Where a checker or noise is laid out (images: always over `(u, v)`).
    pub space: TextureSpace,
    /// The two colours (an image uses the first as its tint).
    pub colours: [Rgb; 2],
    /// Checker cells or noise lattice cells per unit of its space; an
    /// image's repeats over the unit square.
    pub frequency: f32,
    /// Noise: octaves (at most [`crate::noise::MAX_OCTAVES`]).
    pub octaves: u32,
    /// Image: its first texel in [`Textures::texels`] (rows bottom to top).
    pub first_texel: u32,
    /// Image: texels per row.
    pub width: u32,
    /// Image: rows.
    pub height: u32,
}

const _: () = assert!(core::mem::size_of::<Texture>() == 52);
// SAFETY: `#[repr(C)]`, four-byte fields only (its enums are `#[repr(u32)]`): the
// size asserted above is the sum of the fields, so there is no padding.
unsafe impl crate::kernel::AsBytes for Texture {}
// SAFETY: `#[repr(C)]`, two `f32`, no padding.
unsafe impl crate::kernel::AsBytes for Uv {}
// SAFETY: `#[repr(C)]`, three `Uv`, no padding.
unsafe impl crate::kernel::AsBytes for TriangleUvs {}

/// Which texture a colour reads, or none.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureRef(u32);

impl TextureRef {
    /// No texture: the colour is its constant.
    pub const NONE: TextureRef = TextureRef(u32::MAX);

    /// Texture `index` of the scene's table.
    pub const fn new(index: u32) -> Self {
        TextureRef(index)
    }

    /// The texture's index, if there is one.
    #[inline(always)]
    pub fn index(self) -> Option<usize> {
        if self == Self::NONE {
            None
        } else {
            Some(self.0 as usize)
        }
    }
}

/// A material's colour: a constant, or a texture. A textured colour keeps
/// the texture's mean in `rgb`, which is what decides whether it is black
/// and weighs an emitter's power when lights are picked.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Colour {
    /// The constant (a textured colour: the texture's mean).
    pub rgb: Rgb,
    /// The texture, or [`TextureRef::NONE`].
    pub texture: TextureRef,
}

const _: () = assert!(core::mem::size_of::<Colour>() == 16);

impl Colour {
    /// Black, untextured.
    pub const BLACK: Colour = Colour::constant(Rgb::BLACK);

    /// An untextured colour.
    pub const fn constant(rgb: Rgb) -> Self {
        Colour {
            rgb,
            texture: TextureRef::NONE,
        }
    }

    /// True when the colour is black everywhere (a texture: its mean).
    #[inline(always)]
    pub fn is_black(&self) -> bool {
        self.rgb.is_black()
    }
}

/// Where on a surface a colour is looked up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfacePoint {
    /// The primitive.
    pub prim: PrimRef,
    /// The point, in world space.
    pub point: Vec3,
    /// The primitive's outward unit normal there.
    pub normal: Vec3,
}

impl SurfacePoint {
    /// Where `hit` lies.
    #[inline(always)]
    pub fn of(hit: &Hit) -> Self {
        SurfacePoint {
            prim: hit.prim,
            point: hit.point,
            normal: hit.normal,
        }
    }
}

/// The scene's textures as the stages read them.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Textures<'a> {
    /// Every texture, indexed by [`TextureRef`].
    pub textures: DeviceSlice<'a, Texture>,
    /// The texels of every image, one run each, linear radiance.
    pub texels: DeviceSlice<'a, Rgb>,
    /// Per triangle, its corners' texture coordinates; empty when no mesh
    /// has `vt` (triangles then use their barycentrics).
    pub triangle_uvs: DeviceSlice<'a, TriangleUvs>,
}

impl Textures<'static> {
    /// No textures (a scene whose colours are all constants).
    pub fn none() -> Self {
        Textures {
            textures: DeviceSlice::empty(),
            texels: DeviceSlice::empty(),
            triangle_uvs: DeviceSlice::empty(),
        }
    }
}

impl Textures<'_> {
    /// The value of `colour` at `at` on one of `primitives`.
    ///
    /// Where the texture is read, it is laid out here (inlined), and
    /// evaluated by `evaluate`, which is called with values only: were a
    /// reference into the scene passed to a called function, every kernel
    /// would copy all its parameters to local memory on entry.
    #[inline(always)]
    pub fn colour(&self, colour: &Colour, primitives: &Primitives, at: &SurfacePoint) -> Rgb {
        match colour.texture.index() {
            None => colour.rgb,
            Some(i) => {
                let t = &self.textures.as_slice()[i];
                let on_surface = t.kind == TextureKind::Image || t.space == TextureSpace::Uv;
                let p = if on_surface {
                    let uv = surface_uv(primitives, self.triangle_uvs, at);
                    Vec3::new(uv.u, uv.v, 0.0)
                } else {
                    at.point
                };
                evaluate(t, self.texels, p * t.frequency)
            }
        }
    }
}

/// Texture `t` at `p`, its point in texture space: the world point or the
/// texture coordinates `(u, v, 0)`, scaled by its frequency. Called, not
/// inlined: a colour is read at several places in every material class,
/// and inlining the noise loop and the filter into each of them made every
/// megakernel ten times as large (21 MB of PTX per architecture, against
/// 2 MB). A constant colour never gets here.
///
/// Its ABI is C's so that, on the GPU, `p`, `texels` and the colour
/// returned travel in registers: under Rust's ABI they went through local
/// memory (an address taken at each call site, 40 bytes a thread in every
/// megakernel, textured or not, since the slots outlive the call the
/// features remove).
#[inline(never)]
extern "C" fn evaluate(t: &Texture, texels: DeviceSlice<'_, Rgb>, p: Vec3) -> Rgb {
    let texels = texels.as_slice();
    match t.kind {
        TextureKind::Checker => {
            let cells = scalar::floor(p.x) + scalar::floor(p.y) + scalar::floor(p.z);
            let odd = cells - 2.0 * scalar::floor(0.5 * cells);
            t.colours[(odd != 0.0) as usize]
        }
        TextureKind::Noise => t.colours[0].lerp(t.colours[1], fbm(p, t.octaves, Basis(0))),
        TextureKind::Image => t.colours[0] * bilinear(t, texels, p.x, p.y),
    }
}

/// Image `t` filtered bilinearly at `(u, v)`, repeating: texel centres
/// sit at half-integer multiples of the texel size.
#[inline(always)]
fn bilinear(t: &Texture, texels: &[Rgb], u: f32, v: f32) -> Rgb {
    let (w, h) = (t.width as f32, t.height as f32);
    // Positions in texels, relative to the texel centres, wrapped into
    // one copy of the image.
    let x = (u - scalar::floor(u)) * w - 0.5;
    let y = (v - scalar::floor(v)) * h - 0.5;
    let (fx, fy) = (scalar::floor(x), scalar::floor(y));
    let (ax, ay) = (x - fx, y - fy);
    let wrap = |i: f32, n: u32| ((i as i32).rem_euclid(n as i32)) as u32;
    let (x0, y0) = (wrap(fx, t.width), wrap(fy, t.height));
    let (x1, y1) = ((x0 + 1) % t.width, (y0 + 1) % t.height);
    let at = |x: u32, y: u32| texels[(t.first_texel + y * t.width + x) as usize];
    let bottom = at(x0, y0).lerp(at(x1, y0), ax);
    let top = at(x0, y1).lerp(at(x1, y1), ax);
    bottom.lerp(top, ay)
}

/// The coordinates of `p` in the plane of `origin + s·a + t·b`, as `(s, t)`
/// (the parallelogram spanned by `a` and `b` is the unit square).
#[inline(always)]
fn plane_coordinates(p: Vec3, origin: Vec3, a: Vec3, b: Vec3) -> (f32, f32) {
    let d = p - origin;
    let (aa, ab, bb) = (a.dot(a), a.dot(b), b.dot(b));
    let (da, db) = (d.dot(a), d.dot(b));
    let det = aa * bb - ab * ab;
    ((bb * da - ab * db) / det, (aa * db - ab * da) / det)
}

/// The texture coordinates of `at`:
///
/// * a sphere: longitude and latitude of the normal, `u = 0.5 + φ/2π` with
///   `φ = atan2(−z, x)` and `v = θ/π` up from the south pole (RTIOW's);
/// * a triangle: its corners' `vt` blended by the barycentrics of the
///   point, or the barycentrics themselves;
/// * a polygon: its first vertex is the origin, the edges to its second and
///   its last vertex are the axes (a rectangle maps to the unit square);
/// * a box face: the box's two other edge directions, each from 0 to 1.
#[inline(always)]
pub fn surface_uv(primitives: &Primitives, triangle_uvs: DeviceSlice<'_, TriangleUvs>, at: &SurfacePoint) -> Uv {
    let i = at.prim.index() as usize;
    let n = at.normal;
    match at.prim.kind() {
        PrimKind::Sphere => Uv {
            u: 0.5 + scalar::atan2(-n.z, n.x) * (0.5 / scalar::PI),
            v: scalar::atan2(scalar::sqrt(n.x * n.x + n.z * n.z), -n.y) * (1.0 / scalar::PI),
        },
        PrimKind::Triangle => {
            let t = &primitives.triangles.as_slice()[i];
            let (b1, b2) = plane_coordinates(at.point, t.v0, t.e1, t.e2);
            match triangle_uvs.as_slice().get(i) {
                None => Uv { u: b1, v: b2 },
                Some(c) => {
                    let [c0, c1, c2] = c.corners;
                    let b0 = 1.0 - b1 - b2;
                    Uv {
                        u: c0.u * b0 + c1.u * b1 + c2.u * b2,
                        v: c0.v * b0 + c1.v * b1 + c2.v * b2,
                    }
                }
            }
        }
        PrimKind::Polygon => {
            let p = &primitives.polygons.as_slice()[i];
            let v = primitives.polygon_vertices.as_slice();
            let first = p.first_vertex as usize;
            let origin = v[first];
            let last = v[first + p.vertex_count as usize - 1];
            let (u, v) = plane_coordinates(at.point, origin, v[first + 1] - origin, last - origin);
            Uv { u, v }
        }
        PrimKind::Parallelepiped => {
            let b = &primitives.boxes.as_slice()[i];
            // The face's slab is the one whose normal lies along the hit's.
            let along = |k: usize| {
                let c = b.normals[k].dot(n);
                if c < 0.0 { -c } else { c }
            };
            let face = if along(0) >= along(1) && along(0) >= along(2) {
                0
            } else if along(1) >= along(2) {
                1
            } else {
                2
            };
            let across = |k: usize| (b.normals[k].dot(at.point) - b.lo[k]) / (b.hi[k] - b.lo[k]);
            Uv {
                u: across((face + 1) % 3),
                v: across((face + 2) % 3),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::geometry::{Parallelepiped, Polygon, Sphere, Triangle};
    use std::vec;
    use std::vec::Vec;

    fn slice<T>(v: &[T]) -> DeviceSlice<'_, T> {
        DeviceSlice::from_slice(v).unwrap()
    }

    fn near(a: f32, b: f32) -> bool {
        (a - b).abs() < 1e-5
    }

    struct TestShapes {
        spheres: Vec<Sphere>,
        boxes: Vec<Parallelepiped>,
        polygons: Vec<Polygon>,
        vertices: Vec<Vec3>,
        triangles: Vec<Triangle>,
    }

    impl TestShapes {
        fn new() -> Self {
            let vertices = vec![
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(5.0, 0.0, 0.0),
                Vec3::new(5.0, 2.0, 0.0),
                Vec3::new(1.0, 2.0, 0.0),
            ];
            TestShapes {
                spheres: vec![Sphere::new(Vec3::new(0.0, 0.0, 0.0), 2.0, 0)],
                boxes: vec![Parallelepiped::new(
                    Vec3::new(0.0, 0.0, 0.0),
                    [
                        Vec3::new(2.0, 0.0, 0.0),
                        Vec3::new(0.0, 4.0, 0.0),
                        Vec3::new(0.0, 0.0, 8.0),
                    ],
                    0,
                )],
                polygons: vec![Polygon::new(&vertices, 0, 0)],
                vertices,
                triangles: vec![Triangle::new(
                    Vec3::new(0.0, 0.0, 0.0),
                    Vec3::new(2.0, 0.0, 0.0),
                    Vec3::new(0.0, 4.0, 0.0),
                    0,
                )],
            }
        }

        fn view(&self) -> Primitives<'_> {
            Primitives {
                spheres: slice(&self.spheres),
                boxes: slice(&self.boxes),
                polygons: slice(&self.polygons),
                polygon_vertices: slice(&self.vertices),
                triangles: slice(&self.triangles),
            }
        }
    }

    fn at(kind: PrimKind, point: Vec3, normal: Vec3) -> SurfacePoint {
        SurfacePoint {
            prim: PrimRef::new(kind, 0),
            point,
            normal,
        }
    }

    fn uv(scene: &TestShapes, uvs: &[TriangleUvs], p: SurfacePoint) -> (f32, f32) {
        let uv = surface_uv(&scene.view(), slice(uvs), &p);
        (uv.u, uv.v)
    }

    #[test]
    fn sphere_uv_is_longitude_and_latitude() {
        let s = TestShapes::new();
        let cases = [
            // +x: φ = 0, on the equator.
            (Vec3::new(1.0, 0.0, 0.0), (0.5, 0.5)),
            // −z: φ = π/2.
            (Vec3::new(0.0, 0.0, -1.0), (0.75, 0.5)),
            // +z: φ = −π/2.
            (Vec3::new(0.0, 0.0, 1.0), (0.25, 0.5)),
            // The poles.
            (Vec3::new(0.0, 1.0, 0.0), (0.5, 1.0)),
            (Vec3::new(0.0, -1.0, 0.0), (0.5, 0.0)),
            // 45° north of +x: v = 3/4.
            (Vec3::new(0.5f32.sqrt(), 0.5f32.sqrt(), 0.0), (0.5, 0.75)),
        ];
        for (n, (u, v)) in cases {
            let got = uv(&s, &[], at(PrimKind::Sphere, n * 2.0, n));
            assert!(near(got.0, u) && near(got.1, v), "{n:?}: {got:?}, want ({u}, {v})");
        }
    }

    #[test]
    fn triangle_uv_blends_its_corners_or_is_barycentric() {
        let s = TestShapes::new();
        // (1, 1) = v0 + ½ e1 + ¼ e2.
        let p = at(PrimKind::Triangle, Vec3::new(1.0, 1.0, 0.0), Vec3::new(0.0, 0.0, 1.0));
        let got = uv(&s, &[], p);
        assert!(near(got.0, 0.5) && near(got.1, 0.25), "{got:?}");
        let corners = TriangleUvs {
            corners: [Uv { u: 0.2, v: 0.4 }, Uv { u: 1.0, v: 0.0 }, Uv { u: 0.0, v: 1.0 }],
        };
        // ¼·(0.2, 0.4) + ½·(1, 0) + ¼·(0, 1).
        let got = uv(&s, &[corners], p);
        assert!(near(got.0, 0.55) && near(got.1, 0.35), "{got:?}");
        assert_eq!(uv(&s, &[TriangleUvs::BARYCENTRIC], p), uv(&s, &[], p));
    }

    #[test]
    fn polygon_and_box_faces_map_to_the_unit_square() {
        let s = TestShapes::new();
        // The 4 × 2 rectangle from (1, 0): (4, 1.5) is ¾ across, ¾ up.
        let got = uv(
            &s,
            &[],
            at(PrimKind::Polygon, Vec3::new(4.0, 1.5, 0.0), Vec3::new(0.0, 0.0, 1.0)),
        );
        assert!(near(got.0, 0.75) && near(got.1, 0.75), "{got:?}");
        // The box's face x = 2 (slab 0): u along y (of 4), v along z (of 8).
        let got = uv(
            &s,
            &[],
            at(
                PrimKind::Parallelepiped,
                Vec3::new(2.0, 1.0, 6.0),
                Vec3::new(1.0, 0.0, 0.0),
            ),
        );
        assert!(near(got.0, 0.25) && near(got.1, 0.75), "{got:?}");
        // Its face y = 0 (slab 1): u along z, v along x.
        let got = uv(
            &s,
            &[],
            at(
                PrimKind::Parallelepiped,
                Vec3::new(0.5, 0.0, 2.0),
                Vec3::new(0.0, -1.0, 0.0),
            ),
        );
        assert!(near(got.0, 0.25) && near(got.1, 0.25), "{got:?}");
    }

    fn texture(kind: TextureKind, space: TextureSpace) -> Texture {
        Texture {
            kind,
            space,
            colours: [Rgb::new(0.1, 0.2, 0.3), Rgb::new(0.9, 0.8, 0.7)],
            frequency: 1.0,
            octaves: 0,
            first_texel: 0,
            width: 0,
            height: 0,
        }
    }

    fn look(textures: &[Texture], texels: &[Rgb], p: SurfacePoint) -> Rgb {
        let s = TestShapes::new();
        let view = Textures {
            textures: slice(textures),
            texels: slice(texels),
            triangle_uvs: slice(&[]),
        };
        let colour = Colour {
            rgb: Rgb::BLACK,
            texture: TextureRef::new(0),
        };
        view.colour(&colour, &s.view(), &p)
    }

    fn world(p: Vec3) -> SurfacePoint {
        at(PrimKind::Sphere, p, Vec3::new(0.0, 1.0, 0.0))
    }

    #[test]
    fn checker_alternates_per_cell_in_world_space() {
        let mut t = texture(TextureKind::Checker, TextureSpace::World);
        t.frequency = 2.0;
        let [even, odd] = t.colours;
        // Cells of ½: (0.1, 0.1, 0.1) is cell (0, 0, 0); (0.6, 0.1, 0.1) is (1, 0, 0);
        // (−0.1, 0.1, 0.1) is (−1, 0, 0); (0.6, 0.6, 0.1) is (1, 1, 0).
        assert_eq!(look(&[t], &[], world(Vec3::new(0.1, 0.1, 0.1))), even);
        assert_eq!(look(&[t], &[], world(Vec3::new(0.6, 0.1, 0.1))), odd);
        assert_eq!(look(&[t], &[], world(Vec3::new(-0.1, 0.1, 0.1))), odd);
        assert_eq!(look(&[t], &[], world(Vec3::new(0.6, 0.6, 0.1))), even);
        assert_eq!(look(&[t], &[], world(Vec3::new(-0.6, -0.6, 0.1))), even);
    }

    #[test]
    fn checker_over_uv_follows_the_surface() {
        let mut t = texture(TextureKind::Checker, TextureSpace::Uv);
        t.frequency = 4.0;
        // The sphere at +x has (u, v) = (½, ½): cell (2, 2), even; at −z
        // (¾, ½): cell (3, 2), odd.
        let n = Vec3::new(1.0, 0.0, 0.0);
        assert_eq!(look(&[t], &[], at(PrimKind::Sphere, n, n)), t.colours[0]);
        let n = Vec3::new(0.0, 0.0, -1.0);
        assert_eq!(look(&[t], &[], at(PrimKind::Sphere, n, n)), t.colours[1]);
    }

    #[test]
    fn noise_blends_between_its_colours_at_lattice_values() {
        let mut t = texture(TextureKind::Noise, TextureSpace::World);
        t.octaves = 1;
        let p = Vec3::new(3.0, -2.0, 5.0);
        let value = fbm(p, 1, Basis(0));
        assert!(value > 0.0 && value < 1.0);
        assert_eq!(look(&[t], &[], world(p)), t.colours[0].lerp(t.colours[1], value));
        // No octaves: the first colour.
        t.octaves = 0;
        assert_eq!(look(&[t], &[], world(p)), t.colours[0]);
    }

    #[test]
    fn image_is_bilinear_between_texel_centres_and_repeats() {
        // 2 × 2 texels, rows bottom to top: bottom (0, 1), top (2, 3) in red.
        let texels: Vec<Rgb> = (0..4).map(|i| Rgb::new(i as f32, 0.0, 0.0)).collect();
        let mut t = texture(TextureKind::Image, TextureSpace::Uv);
        t.colours[0] = Rgb::WHITE;
        t.width = 2;
        t.height = 2;
        let red = |t: Texture, u: f32, v: f32| {
            // A triangle's barycentrics are its (u, v): the point v0 + u e1 + v e2.
            let p = Vec3::new(2.0 * u, 4.0 * v, 0.0);
            look(&[t], &texels, at(PrimKind::Triangle, p, Vec3::new(0.0, 0.0, 1.0))).r
        };
        // Texel centres.
        assert!(near(red(t, 0.25, 0.25), 0.0));
        assert!(near(red(t, 0.75, 0.25), 1.0));
        assert!(near(red(t, 0.25, 0.75), 2.0));
        assert!(near(red(t, 0.75, 0.75), 3.0));
        // Halfway between the centres: the mean of the four.
        assert!(near(red(t, 0.5, 0.5), 1.5));
        // At u = 0 the filter wraps: half texel 0 (left) and half texel 1.
        assert!(near(red(t, 0.0, 0.25), 0.5));
        // Repeating: u = 1.25 reads as u = 0.25 (frequency 2 doubles u).
        t.frequency = 2.0;
        assert!(near(red(t, 0.375, 0.125), 1.0));
        // The tint multiplies.
        t.frequency = 1.0;
        t.colours[0] = Rgb::new(0.5, 1.0, 1.0);
        assert!(near(red(t, 0.75, 0.75), 1.5));
    }

    #[test]
    fn an_untextured_colour_is_its_constant() {
        let s = TestShapes::new();
        let view = Textures::none();
        let c = Colour::constant(Rgb::new(0.25, 0.5, 0.75));
        assert_eq!(view.colour(&c, &s.view(), &world(Vec3::ZERO)), c.rgb);
        assert!(Colour::BLACK.is_black() && !c.is_black());
    }
}
