//! Scenes: TOML files (with OBJ meshes and procedural generators) loaded into
//! flat arrays of device primitives.
//!
//! [`load`] reads and validates a file; every error names the file, the line
//! and the field at fault ([`SceneError`]). A [`Scene`] holds the geometry
//! and the acceleration structure its file declares, as settings only: this
//! module uses `accel`'s vocabulary ([`AccelSettings`], and
//! `accel::bounds` for the primitives' boxes) but never builds a structure.
//! `prepared::PreparedScene` builds it once, with any override known.

mod build;
mod builder;
mod error;
mod fields;
mod generators;
mod geometry;
mod lights;
mod locate;
mod mesh;
pub mod meshgen;
pub mod mitsuba;
mod parse;
mod schema;
mod sections;
mod textures;

pub use error::{SceneError, line_col};
pub use fields::MAX_COORDINATE;
pub use geometry::{Geometry, host_slice};
pub use lights::Lights;
pub use mesh::LoadedMesh;
pub use mesh::MAX_OBJ_FILE_BYTES;
pub use schema::ToneCurve;
pub use sections::blank_material;
pub use textures::{MAX_IMAGE_FILE_BYTES, MAX_IMAGE_SIDE, MAX_TEXELS, SceneTextures};

use crate::accel::AccelSettings;
use crate::settings::nee::NeeMode;
use crate::settings::sampler::SamplerKind;
use device::camera::{Camera, CameraSpec};
use device::material::Material;
use device::scene::Background;
use device::texture::Textures;
use std::path::{Path, PathBuf};

/// The largest scene file accepted (scenes are short; meshes live in OBJ
/// files).
pub const MAX_SCENE_FILE_BYTES: u64 = crate::io::input_file::MAX_TEXT_FILE_BYTES;

/// How a finished image is turned into display values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToneMapping {
    /// Multiplier applied to radiance first.
    pub exposure: f32,
    /// The curve from scaled radiance to [0, 1].
    pub curve: ToneCurve,
    /// Display gamma (2.2 for smallpt, 2.0 for RTIOW, 1.0 for linear).
    pub gamma: f32,
}

/// Render settings a scene file states; the command line may override them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SceneSettings {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Samples per pixel.
    pub spp: u32,
    /// Maximum ray segments per path.
    pub max_depth: u32,
    /// RNG seed.
    pub seed: u32,
    /// First bounce at which Russian roulette applies (0: never).
    pub roulette_start: u32,
    /// The random-number sampler.
    pub sampler: SamplerKind,
    /// Next-event estimation.
    pub nee: NeeMode,
    /// Display transform.
    pub tone: ToneMapping,
}

/// A loaded, validated scene.
#[derive(Clone, Debug)]
pub struct Scene {
    /// The file it came from.
    pub path: PathBuf,
    /// Every file it was read from: the scene file and its meshes.
    pub files: Vec<PathBuf>,
    /// Settings from the file.
    pub settings: SceneSettings,
    /// Camera placement (its aspect ratio follows the image size at render time).
    pub camera: CameraSpec,
    /// What escaped rays see.
    pub background: Background,
    /// Materials, indexed by the primitives.
    pub materials: Vec<Material>,
    /// Material names, parallel to `materials`.
    pub material_names: Vec<String>,
    /// All primitives.
    pub geometry: Geometry,
    /// The textures the materials' colours may name.
    pub textures: SceneTextures,
    /// The acceleration structure the file's `[accel]` table asks for
    /// (the defaults without one). Nothing is built here: see
    /// `prepared::PreparedScene`.
    pub declared_accel: AccelSettings,
}

impl Scene {
    /// A device view of the scene's textures (and its triangles' texture
    /// coordinates).
    pub fn textures_view(&self) -> Textures<'_> {
        Textures {
            textures: host_slice(&self.textures.textures),
            texels: host_slice(&self.textures.texels),
            triangle_uvs: host_slice(&self.geometry.triangle_uvs),
        }
    }

    /// The scene's name: its file stem.
    pub fn name(&self) -> String {
        self.path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The camera for an image of `width × height` pixels.
    pub fn camera_for(&self, width: u32, height: u32) -> Camera {
        Camera::new(&CameraSpec {
            aspect: width as f32 / height as f32,
            ..self.camera
        })
    }
}

/// Reads, parses and validates the scene file at `path`.
pub fn load(path: &Path) -> Result<Scene, SceneError> {
    load_str(path, &read_text(path)?)
}

/// The text of the scene file at `path` (at most [`MAX_SCENE_FILE_BYTES`]).
pub fn read_text(path: &Path) -> Result<String, SceneError> {
    crate::io::input_file::read_text(path, MAX_SCENE_FILE_BYTES).map_err(|message| SceneError::File {
        path: path.to_path_buf(),
        message,
    })
}

/// Parses and validates scene text; `path` names it in errors and anchors
/// relative mesh paths.
pub fn load_str(path: &Path, text: &str) -> Result<Scene, SceneError> {
    build::build(path, text, parse::scene_file(path, text)?)
}

/// Parses OBJ text as a scene's `kind = "mesh"` object loads its file (the
/// same code path), with the identity transform: every model, polygons
/// triangulated as fans, zero-area faces counted and dropped. `name` only
/// labels errors; `mtllib` statements are ignored, so nothing is read from
/// disk. The OBJ fuzz target and its corpus replay call this.
pub fn import_obj(name: &Path, bytes: &[u8]) -> Result<LoadedMesh, String> {
    mesh::parse_obj(name, bytes, &mesh::Transform::IDENTITY)
}
