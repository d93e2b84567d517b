//! The scenes of an experiment: each distinct (file, replaced fields,
//! structure) is loaded and built once, and uploaded to the GPU once (to
//! each GPU once, for runs that split an image over several).
//!
//! A replaced field is written into the scene text with `toml_edit`, which
//! keeps the file's layout, so a scene error still points at the file's
//! own lines.

use super::params::scene_path;
use anyhow::Context;
use renderer::accel::AccelChoice;
use renderer::backend::gpu::Gpu;
use renderer::backend::gpu::buffers::DeviceScene;
use renderer::io::document_path::PathStep;
use renderer::prepared::PreparedScene;
use renderer::scene::{self, Scene};
use renderer::settings::echo::shorten_for_error;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use toml_edit::{DocumentMut, Item, TableLike};

/// A loaded scene with its structure and, once a GPU run needed it, its
/// device copy.
pub struct LoadedScene {
    /// The scene with its structure.
    pub scene: PreparedScene,
    /// Its arrays on the GPU.
    pub device: Option<DeviceScene>,
    /// Its arrays on each GPU of a run of several, in the order of the
    /// experiment's GPUs.
    pub on_each: Vec<DeviceScene>,
}

/// What identifies a distinct scene.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct SceneKey {
    file: PathBuf,
    fields: String,
    accel: Option<AccelChoice>,
}

/// Scenes loaded so far.
#[derive(Default)]
pub struct SceneCache {
    scenes: HashMap<SceneKey, Rc<std::cell::RefCell<LoadedScene>>>,
}

/// `path=value` pairs as the CSV records them.
pub fn describe_fields(fields: &[(String, toml::Value)]) -> String {
    fields
        .iter()
        .map(|(p, v)| format!("{p}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

impl SceneCache {
    /// The scene `file` with `fields` replaced and structure `accel`, loaded
    /// and built on first use.
    pub fn get(
        &mut self,
        file: &Path,
        fields: &[(String, toml::Value)],
        accel: Option<AccelChoice>,
    ) -> anyhow::Result<Rc<std::cell::RefCell<LoadedScene>>> {
        let key = SceneKey {
            file: file.to_path_buf(),
            fields: describe_fields(fields),
            accel,
        };
        if let Some(s) = self.scenes.get(&key) {
            return Ok(s.clone());
        }
        let scene = PreparedScene::new(load_with_fields(file, fields)?, accel);
        let loaded = Rc::new(std::cell::RefCell::new(LoadedScene {
            scene,
            device: None,
            on_each: Vec::new(),
        }));
        self.scenes.insert(key, loaded.clone());
        Ok(loaded)
    }
}

impl LoadedScene {
    /// Uploads the scene to `gpu` unless it is there already.
    pub fn upload(&mut self, gpu: &Gpu) -> anyhow::Result<()> {
        if self.device.is_none() {
            self.device = Some(DeviceScene::upload(gpu, &self.scene)?);
        }
        Ok(())
    }

    /// Uploads the scene to each of `gpus` (the first GPUs of the
    /// experiment's list) that it is not on yet.
    pub fn upload_to_each(&mut self, gpus: &[Gpu]) -> anyhow::Result<()> {
        for gpu in gpus.iter().skip(self.on_each.len()) {
            gpu.bind_to_thread()?;
            self.on_each.push(DeviceScene::upload(gpu, &self.scene)?);
        }
        Ok(())
    }
}

/// Loads `file` with each `(path, value)` written into its text first.
pub fn load_with_fields(file: &Path, fields: &[(String, toml::Value)]) -> anyhow::Result<Scene> {
    if fields.is_empty() {
        return Ok(scene::load(file)?);
    }
    let text = scene::read_text(file)?;
    let edited = with_fields(&text, fields).with_context(|| format!("{}: replacing scene fields", file.display()))?;
    Ok(scene::load_str(file, &edited)?)
}

/// `text` with every field replaced (or added to an existing table).
pub fn with_fields(text: &str, fields: &[(String, toml::Value)]) -> anyhow::Result<String> {
    let mut doc: DocumentMut = text.parse().context("the scene is not valid TOML")?;
    for (path, value) in fields {
        let steps = scene_path(path).map_err(anyhow::Error::msg)?;
        let shown = shorten_for_error(path);
        let value: toml_edit::Value = value.to_string().parse().with_context(|| {
            format!(
                "scene.{shown}: the value {} cannot be written as TOML",
                shorten_for_error(&value.to_string())
            )
        })?;
        set(doc.as_table_mut(), &steps, value).map_err(|m| anyhow::anyhow!("scene.{shown}: {m}"))?;
    }
    Ok(doc.to_string())
}

/// Writes `value` at `steps` below `table`, which must start with a key.
fn set(table: &mut dyn TableLike, steps: &[PathStep], value: toml_edit::Value) -> Result<(), String> {
    let Some((PathStep::Key(key), rest)) = steps.split_first() else {
        return Err("a path goes from a key".into());
    };
    // The key as the messages quote it.
    let shown = shorten_for_error(key);
    match rest.split_first() {
        None => {
            if table.get(key).is_some_and(|i| !i.is_value()) {
                return Err(format!("`{shown}` is a table or an array of tables, not a value"));
            }
            table.insert(key, Item::Value(value));
            Ok(())
        }
        Some((PathStep::Key(_), _)) => {
            if table.get(key).is_none() {
                table.insert(key, Item::Table(toml_edit::Table::new()));
            }
            let inner = table
                .get_mut(key)
                .and_then(Item::as_table_like_mut)
                .ok_or_else(|| format!("`{shown}` is not a table"))?;
            set(inner, rest, value)
        }
        Some((&PathStep::Index(i), after)) => {
            let item = table
                .get_mut(key)
                .ok_or_else(|| format!("the scene has no `{shown}`"))?;
            let missing = |n: usize| format!("`{shown}` has {n} entries; there is no `{shown}[{i}]`");
            if let Some(tables) = item.as_array_of_tables_mut() {
                let n = tables.len();
                let entry = tables.get_mut(i).ok_or_else(|| missing(n))?;
                if after.is_empty() {
                    return Err(format!("`{shown}[{i}]` is a whole table; name one of its fields"));
                }
                return set(entry, after, value);
            }
            let array = item
                .as_array_mut()
                .ok_or_else(|| format!("`{shown}` is not an array"))?;
            let n = array.len();
            if after.is_empty() {
                if i >= n {
                    return Err(missing(n));
                }
                array.replace(i, value);
                return Ok(());
            }
            let entry = array
                .get_mut(i)
                .ok_or_else(|| missing(n))?
                .as_inline_table_mut()
                .ok_or_else(|| format!("`{shown}[{i}]` is not a table"))?;
            set(entry, after, value)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "[render]\nwidth = 8 # pixels\nspp = 1\n\n[[generators]]\nkind = \"rtiow_final\"\n\n[[generators]]\nkind = \"smallpt_cornell\"\nsizes = [1, 2, 3]\n";

    fn int(n: i64) -> toml::Value {
        toml::Value::Integer(n)
    }

    #[test]
    fn fields_are_replaced_in_place_and_added_to_tables() {
        let out = with_fields(
            TEXT,
            &[
                ("render.spp".into(), int(64)),
                ("generators[0].grid".into(), int(44)),
                ("generators[1].sizes[2]".into(), int(9)),
                ("accel.bvh_bins".into(), int(8)),
            ],
        )
        .unwrap();
        let v: toml::Table = out.parse().unwrap();
        assert_eq!(v["render"]["spp"], int(64));
        assert_eq!(v["render"]["width"], int(8));
        assert_eq!(v["generators"][0]["grid"], int(44));
        assert_eq!(
            v["generators"][1]["sizes"],
            toml::Value::Array(vec![int(1), int(2), int(9)])
        );
        assert_eq!(v["accel"]["bvh_bins"], int(8));
        // The layout is kept: the width line and its comment stay where they were.
        assert_eq!(out.lines().nth(1), TEXT.lines().nth(1));
    }

    #[test]
    fn missing_entries_are_errors_that_say_what_exists() {
        let e = with_fields(TEXT, &[("generators[5].grid".into(), int(1))]).unwrap_err();
        assert!(format!("{e:#}").contains("`generators` has 2 entries"), "{e:#}");
        let e = with_fields(TEXT, &[("objects[0].radius".into(), int(1))]).unwrap_err();
        assert!(format!("{e:#}").contains("no `objects`"), "{e:#}");
        let e = with_fields(TEXT, &[("generators".into(), int(1))]).unwrap_err();
        assert!(format!("{e:#}").contains("not a value"), "{e:#}");
    }
}
