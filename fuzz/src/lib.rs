//! The fuzz targets' per-input functions. `tests/fuzz_corpus.rs` in the main
//! crate includes this file as a module, so CI replays the kept corpus
//! through exactly the calls that the fuzzer makes.
//!
//! Each function runs one input and checks what must hold whatever the
//! input: no panic, and on success a few invariants of the result (a panic
//! here is a finding, like any other). Errors are formatted, since users
//! read them.

use lab::config::{self, Config, ConfigError, MAX_STUDY_RUNS};
use renderer::prepared::PreparedScene;
use renderer::scene::mitsuba::{self, MitsubaScene};
use renderer::scene::{self, LoadedMesh, Scene, SceneError};
use std::path::Path;

/// The most primitives that the generators of one fuzzed scene may ask for;
/// larger scenes are skipped. Generators turn a few bytes into many
/// primitives (`displaced_sphere` up to 20·4¹⁰ ≈ 21 M triangles each), and
/// scenes that big take seconds and gigabytes to build by design, which
/// would only slow the fuzzer down.
pub const GENERATED_PRIMITIVE_BUDGET: u64 = 25_000;

/// An upper bound on the primitives that `text`'s `[[generators]]` entries
/// would make (0 where the text is not TOML, or a generator's parameters are
/// not numbers: the loader rejects those before generating anything).
pub fn generated_primitives(text: &str) -> u64 {
    let Ok(table) = toml::from_str::<toml::Table>(text) else {
        return 0;
    };
    let Some(generators) = table.get("generators").and_then(toml::Value::as_array) else {
        return 0;
    };
    let mut total = 0u64;
    for g in generators {
        let int = |key: &str, default: i64| g.get(key).map_or(Some(default), toml::Value::as_integer);
        total += match g.get("kind").and_then(toml::Value::as_str) {
            Some("rtiow_final") => int("grid", 11).map_or(0, |n| {
                let n = n.clamp(0, 200) as u64;
                4 * n * n + 4
            }),
            Some("displaced_sphere") => int("subdivisions", 0).map_or(0, |s| 20 << (2 * s.clamp(0, 10))),
            Some("smallpt_cornell") => 8,
            _ => 0,
        };
    }
    total
}

/// The scene loader target: `data` as the text of a scene file named
/// `fuzz.toml`. `None` when the input is skipped: not UTF-8, or generators
/// over [`GENERATED_PRIMITIVE_BUDGET`].
pub fn scene_loader(data: &[u8]) -> Option<Result<Scene, SceneError>> {
    let text = std::str::from_utf8(data).ok()?;
    if generated_primitives(text) > GENERATED_PRIMITIVE_BUDGET {
        return None;
    }
    let result = scene::load_str(Path::new("fuzz.toml"), text);
    match &result {
        Ok(scene) => {
            let count = scene.geometry.primitive_count();
            assert!(count > 0, "a loaded scene has no primitives");
            assert_eq!(scene.materials.len(), scene.material_names.len());
            let s = &scene.settings;
            // Builds the declared structure as every render would, and
            // borrows every array for the device, checking their lengths.
            let prepared = PreparedScene::new(scene.clone(), None);
            let view = prepared.view(scene.camera_for(s.width, s.height), prepared.features());
            assert_eq!(view.primitives.spheres.len() as usize, scene.geometry.spheres.len());
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with("fuzz.toml"), "{message}");
        }
    }
    Some(result)
}

/// The OBJ import target: `data` as the bytes of an OBJ file, imported as
/// a scene mesh is (identity transform).
pub fn obj_import(data: &[u8]) -> Result<LoadedMesh, String> {
    let result = scene::import_obj(Path::new("fuzz.obj"), data);
    if let Ok(mesh) = &result {
        assert!(!mesh.triangles.is_empty(), "an imported mesh has no triangles");
        for t in &mesh.triangles {
            assert!(t.iter().all(|v| v.is_finite()), "non-finite corner in {t:?}");
        }
        if let Some(uvs) = &mesh.uvs {
            assert_eq!(
                uvs.len(),
                mesh.triangles.len(),
                "texture coordinates not one per triangle"
            );
            assert!(
                uvs.iter().flatten().flatten().all(|c| c.is_finite()),
                "non-finite texture coordinate"
            );
        }
    }
    result
}

/// Where the experiment config target's text claims to live: scene paths
/// in it resolve from `experiments/`, as the repository's own configs do
/// (`../scenes/...` finds the scenes when run from the repository root).
pub const CONFIG_PATH: &str = "experiments/fuzz.toml";

/// The experiment config target: `data` as the text of an experiment
/// config. On success every study plans at least one run and at most
/// [`MAX_STUDY_RUNS`], each a valid configuration with a distinct label;
/// on failure the message names the file. `None` when not UTF-8.
pub fn experiment_config(data: &[u8]) -> Option<Result<Config, ConfigError>> {
    let text = std::str::from_utf8(data).ok()?;
    let result = config::parse(Path::new(CONFIG_PATH), text);
    match &result {
        Ok(config) => {
            assert!(!config.studies.is_empty(), "a config without studies loaded");
            for study in &config.studies {
                let runs = study.runs();
                assert!(!runs.is_empty(), "study `{}` plans no run", study.name);
                assert!(
                    runs.len() as u64 <= MAX_STUDY_RUNS,
                    "study `{}` plans {}",
                    study.name,
                    runs.len()
                );
                let mut labels: Vec<&str> = runs.iter().map(|r| r.label.as_str()).collect();
                labels.sort_unstable();
                labels.dedup();
                assert_eq!(labels.len(), runs.len(), "study `{}` repeats a run label", study.name);
                for run in &runs {
                    assert_eq!(run.spec.validate(), Ok(()), "{}", run.label);
                }
            }
            assert_eq!(config.fingerprint().len(), 16);
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with(CONFIG_PATH), "{message}");
        }
    }
    Some(result)
}

/// The Mitsuba reader target: `data` as the text of a Mitsuba scene file
/// named `fuzz/scene.xml` (nothing is read from disk: the reader only names
/// the files a scene refers to). `None` when the input is not UTF-8.
pub fn mitsuba_xml(data: &[u8]) -> Option<Result<MitsubaScene, SceneError>> {
    let text = std::str::from_utf8(data).ok()?;
    let result = mitsuba::parse(Path::new("fuzz/scene.xml"), text);
    match &result {
        Ok(scene) => {
            let sensor = &scene.sensor;
            assert!(sensor.width >= 1 && sensor.height >= 1, "a film without pixels");
            assert!(sensor.sample_count >= 1, "a sensor without samples");
            assert!(
                sensor.fov_degrees > 0.0 && sensor.fov_degrees < 180.0,
                "a field of view out of range"
            );
            assert!(sensor.to_world.is_affine(), "a camera placed by a projection");
            assert!(
                scene.shapes.iter().all(|s| s.to_world.is_affine()),
                "a shape placed by a projection"
            );
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    Some(result)
}
