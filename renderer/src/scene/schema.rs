//! The TOML scene format, as serde types. Validation and conversion to
//! device types happen in `build.rs` (this folder's); this file only says what may be written.
//! The tables that name their kind (`kind = "sphere"`) are read as
//! [`Tagged`] values, rewritten for them by `parse.rs`.

use crate::settings::sampler::SamplerKind;
use serde::de::value::SeqAccessDeserializer;
use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_spanned::Spanned;
use std::collections::BTreeMap;
use std::fmt;

/// Three numbers: a point, a direction or a colour.
pub type Triple = [f32; 3];

/// A whole scene file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    pub render: Spanned<RenderDef>,
    pub camera: Spanned<CameraDef>,
    #[serde(default)]
    pub background: Option<Spanned<Tagged<BackgroundDef>>>,
    #[serde(default)]
    pub textures: BTreeMap<String, Spanned<Tagged<TextureDef>>>,
    #[serde(default)]
    pub materials: BTreeMap<String, Spanned<Tagged<MaterialDef>>>,
    #[serde(default)]
    pub objects: Vec<Spanned<Tagged<ObjectDef>>>,
    #[serde(default)]
    pub generators: Vec<Spanned<Tagged<GeneratorDef>>>,
    #[serde(default)]
    pub accel: Option<Spanned<AccelDef>>,
}

/// A table that names its kind (`kind = "noise"` and the fields of a
/// noise): the kind as written, and the table read as that kind. Before
/// serde reads the file, `parse.rs` rewrites such a table as
/// `{ kind = K, def = { K = { fields } } }`, so that `T`, an externally
/// tagged enum, reads the fields in place and an error keeps the position
/// of its value (serde's internally tagged enums buffer the table and lose
/// every position in it). A table without a kind fails here, naming it.
#[derive(Debug, Deserialize)]
pub struct Tagged<T> {
    /// The kind, e.g. `sphere`.
    pub kind: String,
    /// The table, read as that kind.
    pub def: T,
}

/// `[accel]`: the acceleration structure and its build parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccelDef {
    #[serde(default)]
    pub kind: crate::accel::AccelChoice,
    #[serde(default)]
    pub bvh_bins: Option<u32>,
    #[serde(default)]
    pub bvh_max_leaf: Option<u32>,
    #[serde(default)]
    pub bvh_traversal_cost: Option<f32>,
    #[serde(default)]
    pub kd_traversal_cost: Option<f32>,
    #[serde(default)]
    pub kd_intersection_cost: Option<f32>,
    #[serde(default)]
    pub kd_empty_bonus: Option<f32>,
    #[serde(default)]
    pub kd_max_leaf: Option<u32>,
    #[serde(default)]
    pub kd_max_depth: Option<u32>,
}

/// `[render]`: image size, sampling and display.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenderDef {
    pub width: u32,
    pub height: u32,
    pub spp: u32,
    pub max_depth: u32,
    #[serde(default)]
    pub seed: u32,
    /// 0 (the default) disables Russian roulette.
    #[serde(default)]
    pub roulette_start: u32,
    #[serde(default)]
    pub sampler: SamplerKind,
    #[serde(default)]
    pub nee: bool,
    #[serde(default = "one")]
    pub exposure: f32,
    #[serde(default)]
    pub tone_curve: ToneCurve,
    #[serde(default = "default_gamma")]
    pub gamma: f32,
}

fn one() -> f32 {
    1.0
}

fn default_gamma() -> f32 {
    2.2
}

/// The curve that maps scaled radiance into [0, 1] before gamma.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToneCurve {
    /// Clamp to [0, 1] (smallpt, RTIOW).
    #[default]
    Clamp,
    /// `x / (1 + x)`.
    Reinhard,
    /// Narkowicz's fit of the ACES filmic curve.
    Aces,
}

/// `[camera]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CameraDef {
    pub look_from: Triple,
    pub look_at: Triple,
    #[serde(default = "y_up")]
    pub up: Triple,
    /// Vertical field of view in degrees.
    pub vfov: f32,
    #[serde(default)]
    pub aperture: f32,
    /// Defaults to the distance from `look_from` to `look_at`.
    #[serde(default)]
    pub focus_distance: Option<f32>,
    /// Camera rays start this far from the eye along each ray (0: at the
    /// eye); smallpt's start 140 units out.
    #[serde(default)]
    pub near: f32,
}

fn y_up() -> Triple {
    [0.0, 1.0, 0.0]
}

/// `[background]`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum BackgroundDef {
    Constant {
        color: Triple,
    },
    Sky {
        #[serde(default = "white")]
        horizon: Triple,
        #[serde(default = "rtiow_blue")]
        zenith: Triple,
    },
}

fn white() -> Triple {
    [1.0; 3]
}

fn rtiow_blue() -> Triple {
    [0.5, 0.7, 1.0]
}

/// A material's colour: `[r, g, b]`, or the name of a `[textures.NAME]`
/// table.
#[derive(Clone, Debug, PartialEq)]
pub enum ColourDef {
    Rgb(Triple),
    Texture(String),
}

impl Default for ColourDef {
    fn default() -> Self {
        ColourDef::Rgb([0.0; 3])
    }
}

impl<'de> Deserialize<'de> for ColourDef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Either;
        impl<'de> Visitor<'de> for Either {
            type Value = ColourDef;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a colour [r, g, b] or the name of a texture")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<ColourDef, E> {
                Ok(ColourDef::Texture(name.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ColourDef, A::Error> {
                Triple::deserialize(SeqAccessDeserializer::new(seq)).map(ColourDef::Rgb)
            }
        }
        deserializer.deserialize_any(Either)
    }
}

fn white_colour() -> ColourDef {
    ColourDef::Rgb(white())
}

/// `[materials.NAME]`. Every colour but a dielectric's transmittance (an
/// absorption per unit length inside, not a surface's) may name a texture.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum MaterialDef {
    Diffuse {
        albedo: ColourDef,
        #[serde(default)]
        emission: ColourDef,
    },
    Metal {
        albedo: ColourDef,
        #[serde(default)]
        roughness: f32,
        #[serde(default)]
        emission: ColourDef,
    },
    Dielectric {
        ior: f32,
        #[serde(default)]
        fresnel: FresnelDef,
        /// Beer–Lambert transmittance per unit distance.
        #[serde(default = "white")]
        transmittance: Triple,
        /// The colour every reflection and refraction multiplies by
        /// (white: clear glass; smallpt's glass is 0.999).
        #[serde(default = "white_colour")]
        tint: ColourDef,
    },
    /// A clear coat over a noise-textured diffuse base.
    Coated {
        albedo: ColourDef,
        /// The base's second colour (default: `albedo`, no texture).
        #[serde(default)]
        pattern: Option<ColourDef>,
        #[serde(default = "coat_ior")]
        ior: f32,
        /// Octaves of the base's fBm noise (0 to 64; read wide so that a
        /// negative count gets an error naming the field).
        #[serde(default)]
        octaves: i64,
        /// Noise lattice cells per unit length.
        #[serde(default = "one")]
        frequency: f32,
        /// Which of the noise program's 16 variants (0 to 15: ridged,
        /// quintic blend, rotated octaves, billow, one bit each).
        #[serde(default)]
        basis: i64,
        #[serde(default)]
        emission: ColourDef,
    },
    Emissive {
        emission: ColourDef,
    },
}

/// `[textures.NAME]`: a colour that varies over a surface.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TextureDef {
    /// Cells alternating between two colours.
    Checker {
        colors: [Triple; 2],
        /// Cells per unit length (world) or per unit of texture coordinates.
        #[serde(default = "one")]
        frequency: f32,
        #[serde(default)]
        space: TextureSpaceDef,
    },
    /// fBm value noise blending two colours.
    Noise {
        colors: [Triple; 2],
        /// Octaves (0 to 64; read wide so that a negative count gets an
        /// error naming the field).
        octaves: i64,
        /// Lattice cells per unit length (or of texture coordinates).
        #[serde(default = "one")]
        frequency: f32,
        #[serde(default)]
        space: TextureSpaceDef,
    },
    /// An image file (PNG, JPEG, BMP, PPM: sRGB; OpenEXR: linear), over
    /// the surface's texture coordinates.
    Image {
        /// Relative to the scene file.
        file: String,
        /// Multiplies every texel.
        #[serde(default = "white")]
        tint: Triple,
        /// Copies of the image across the unit square of texture coordinates.
        #[serde(default = "one")]
        repeat: f32,
    },
}

/// Where a checker or a noise is laid out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextureSpaceDef {
    /// World coordinates (a solid texture).
    #[default]
    World,
    /// The surface's texture coordinates.
    Uv,
}

/// A coat's default index of refraction (a varnish).
fn coat_ior() -> f32 {
    1.5
}

/// Which Fresnel formula a dielectric uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FresnelDef {
    #[default]
    Exact,
    Schlick,
}

/// One `[[objects]]` entry.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ObjectDef {
    Sphere {
        center: Triple,
        radius: f32,
        material: String,
    },
    Box {
        corner: Triple,
        edges: [Triple; 3],
        material: String,
    },
    Polygon {
        vertices: Vec<Triple>,
        material: String,
    },
    Triangle {
        vertices: [Triple; 3],
        material: String,
    },
    Mesh {
        /// OBJ path, relative to the scene file.
        file: String,
        material: String,
        #[serde(default)]
        transform: TransformDef,
    },
}

/// A mesh placement: scale, then rotations about x, y and z (degrees), then
/// translation.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransformDef {
    #[serde(default)]
    pub scale: Option<f32>,
    #[serde(default)]
    pub rotate: Option<Triple>,
    #[serde(default)]
    pub translate: Option<Triple>,
}

/// One `[[generators]]` entry: procedurally generated content.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum GeneratorDef {
    /// RTIOW's final scene: a `2·grid × 2·grid` field of small random
    /// spheres, a ground sphere and three large spheres.
    RtiowFinal {
        #[serde(default = "eleven")]
        grid: u32,
        #[serde(default)]
        seed: u32,
    },
    /// The material-cost scene: a `grid × grid` field of spheres on a
    /// ground sphere, shaded by `materials` coated materials, each with its
    /// own noise basis (a different program) and `octaves` octaves.
    MaterialGrid {
        materials: u32,
        octaves: u32,
        #[serde(default = "sixteen")]
        grid: u32,
    },
    /// smallpt's Cornell box, its walls as polygons (it takes no fields;
    /// the braces make unknown ones an error).
    SmallptCornell {},
    /// A subdivided, displaced icosphere (20·4ⁿ triangles).
    DisplacedSphere {
        subdivisions: u32,
        #[serde(default)]
        amplitude: f32,
        center: Triple,
        radius: f32,
        material: String,
    },
}

fn eleven() -> u32 {
    11
}

fn sixteen() -> u32 {
    16
}
