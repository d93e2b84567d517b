//! Experiment configs (`experiments/*.toml`): studies of scenes × back ends ×
//! sweeps, with fixed settings, a baseline and published figures.
//!
//! ```toml
//! [experiment]
//! name = "smallptcuda"
//! description = "the diffuse Cornell box, GPU against every CPU thread"
//!
//! [[study]]
//! name = "speedup"
//! scenes = ["../scenes/cornell_diffuse.toml"]   # relative to this file
//! backends = ["cpu", "gpu-mega", "gpu-wave"]
//! baseline = "cpu"
//! warmup = 1
//! repeat = 3
//! fixed = { size = "512x384", spp = 1024, depth = 4 }
//! sweep = { block = ["8x8", "16x16"] }          # the cartesian product
//! per_backend.cpu = { spp_cap = 64 }            # render 64 spp, time scaled to 1024
//!
//! [[study.published]]
//! source = "smallptCUDA (2013)"
//! hardware = "GTX 680 against a 4-core i7"
//! value = 40
//! unit = "x"
//! backend = "gpu-mega"
//! ```
//!
//! Every setting is one [`Param`] (see `params`); a setting that does not apply to a back
//! end (a block shape for the CPU) is left at its default there, and runs that
//! end up identical are made once. Errors name the file, the line, the field
//! and what was expected, like scene errors.

use super::films::fnv1a;
use super::params::{Param, RunSpec, Setting, Sweep, choice, describe, scene_path};
use crate::backend::BackendKind;
use crate::scene::line_col;
use indexmap::IndexMap;
use serde::Deserialize;
use serde_spanned::Spanned;
use std::path::{Component, Path, PathBuf};

/// The most timed repetitions of one configuration (`repeat`, `--repeat`).
pub const MAX_REPEAT: u32 = 1000;

/// The most untimed warm-up renders of one configuration.
pub const MAX_WARMUP: u32 = 100;

/// Why a config could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read, or is not a config file at all.
    #[error("{}: {message}", path.display())]
    File {
        /// The config file.
        path: PathBuf,
        /// What is wrong, e.g. "does not exist".
        message: String,
    },
    /// A field is missing, unknown, of the wrong type or out of range.
    #[error("{}:{line}: {item}: {message}", path.display())]
    Invalid {
        /// The config file.
        path: PathBuf,
        /// 1-based line of the entry at fault.
        line: usize,
        /// The entry and field, e.g. "study `speedup`, sweep `spp`".
        item: String,
        /// What was wrong and what was expected.
        message: String,
    },
}

/// A figure from the literature, printed beside the measured one.
#[derive(Clone, Debug, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// Where it was published.
    pub source: String,
    /// The hardware it was measured on.
    pub hardware: String,
    /// The value.
    pub value: f64,
    /// `x` (speedup of `backend` over the study's baseline), `ms`, `s` or `Mrays/s`.
    pub unit: String,
    /// The back end whose measurement it stands beside.
    pub backend: BackendKind,
    /// The scene (file stem) it belongs to, where the study has several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<String>,
    /// Anything a reader should know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The units a published figure may have.
pub const PUBLISHED_UNITS: [&str; 4] = ["x", "ms", "s", "Mrays/s"];

/// A set of runs: scenes × back ends × the product of the sweeps.
#[derive(Clone, Debug, PartialEq)]
pub struct Study {
    /// Its name (unique in the config).
    pub name: String,
    /// What it shows.
    pub description: String,
    /// A note for the report (how rows were scaled, what is left out).
    pub note: Option<String>,
    /// Scene files, resolved against the config's folder.
    pub scenes: Vec<PathBuf>,
    /// Back ends, in report order.
    pub backends: Vec<BackendKind>,
    /// The back end speedups are measured against.
    pub baseline: Option<BackendKind>,
    /// Untimed renders before each configuration's first timed one.
    pub warmup: u32,
    /// Timed renders per configuration.
    pub repeat: u32,
    /// Settings of every run.
    pub fixed: Vec<Setting>,
    /// Settings of one back end's runs, over `fixed`.
    pub per_backend: Vec<(BackendKind, Vec<Setting>)>,
    /// The swept parameters.
    pub sweep: Vec<Sweep>,
    /// Published figures.
    pub published: Vec<Published>,
}

/// A whole experiment config.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The file.
    pub path: PathBuf,
    /// Its text, as run.
    pub text: String,
    /// The experiment's name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// The studies, in file order.
    pub studies: Vec<Study>,
}

impl Config {
    /// A short fingerprint of the config text (FNV-1a, hex): resumed runs
    /// must come from the same config.
    pub fn fingerprint(&self) -> String {
        format!("{:016x}", fnv1a(self.text.bytes().map(u64::from)))
    }
}

/// One planned configuration of a study.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedRun {
    /// Its index within the study, from 0 (stable across resumes).
    pub index: u32,
    /// Its settings.
    pub spec: RunSpec,
    /// A label naming what varies within the study, e.g. `gpu-mega block=8x8`.
    pub label: String,
}

impl Study {
    /// Every distinct run of the study: scenes outermost, then back ends,
    /// then the sweep's product in file order.
    pub fn runs(&self) -> Vec<PlannedRun> {
        let mut points: Vec<Vec<Setting>> = vec![Vec::new()];
        for sweep in &self.sweep {
            points = points
                .into_iter()
                .flat_map(|p| {
                    sweep.values.iter().map(move |v| {
                        let mut p = p.clone();
                        p.push(Setting {
                            param: sweep.param.clone(),
                            value: v.clone(),
                        });
                        p
                    })
                })
                .collect();
        }
        let mut runs: Vec<PlannedRun> = Vec::new();
        for scene in &self.scenes {
            for &backend in &self.backends {
                for point in &points {
                    let mut spec = RunSpec::new(scene.clone(), backend);
                    let own = self.per_backend.iter().filter(|(b, _)| *b == backend);
                    let settings = self.fixed.iter().chain(own.flat_map(|(_, s)| s)).chain(point);
                    settings.for_each(|s| spec.apply(s));
                    if runs.iter().any(|r| r.spec == spec) {
                        continue;
                    }
                    let mut label = backend.label().to_string();
                    if self.scenes.len() > 1 {
                        label = format!("{} {label}", scene_stem(scene));
                    }
                    for s in point.iter().filter(|s| s.param.applies_to(backend)) {
                        label.push_str(&format!(" {}={}", s.param.name(), describe(&s.value)));
                    }
                    runs.push(PlannedRun {
                        index: runs.len() as u32,
                        spec,
                        label,
                    });
                }
            }
        }
        runs
    }

    /// The swept parameters' names, in file order.
    pub fn swept(&self) -> Vec<String> {
        self.sweep.iter().map(|s| s.param.name()).collect()
    }
}

/// A scene file's stem.
pub fn scene_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

// ---- the file format (serde), then validation into the types above ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    experiment: Spanned<ExperimentDef>,
    #[serde(default)]
    study: Vec<Spanned<StudyDef>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExperimentDef {
    name: String,
    #[serde(default)]
    description: String,
}

type Settings = IndexMap<Spanned<String>, Spanned<toml::Value>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StudyDef {
    name: Spanned<String>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    note: Option<String>,
    scenes: Spanned<Vec<Spanned<String>>>,
    backends: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    baseline: Option<Spanned<String>>,
    #[serde(default = "one")]
    warmup: Spanned<u32>,
    #[serde(default = "three")]
    repeat: Spanned<u32>,
    #[serde(default)]
    fixed: Settings,
    #[serde(default)]
    per_backend: IndexMap<Spanned<String>, Settings>,
    #[serde(default)]
    sweep: IndexMap<Spanned<String>, Spanned<Vec<Spanned<toml::Value>>>>,
    #[serde(default)]
    published: Vec<Spanned<Published>>,
}

fn one() -> Spanned<u32> {
    Spanned::new(0..0, 1)
}

fn three() -> Spanned<u32> {
    Spanned::new(0..0, 3)
}

/// Reads and validates the config at `path`.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text =
        crate::io::input_file::read_text(path, crate::io::input_file::MAX_TEXT_FILE_BYTES).map_err(|message| {
            ConfigError::File {
                path: path.to_path_buf(),
                message,
            }
        })?;
    parse(path, &text)
}

/// Validates config text; `path` names it in errors and anchors scene paths.
pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
    let file: ConfigFile = toml::from_str(text).map_err(|e| {
        let (line, _) = e.span().map_or((1, 1), |s| line_col(text, s.start));
        ConfigError::Invalid {
            path: path.to_path_buf(),
            line,
            item: "config".into(),
            message: e.message().trim().to_string(),
        }
    })?;
    let at = |span: std::ops::Range<usize>, item: &str, message: String| ConfigError::Invalid {
        path: path.to_path_buf(),
        line: line_col(text, span.start).0,
        item: item.to_string(),
        message,
    };
    if file.study.is_empty() {
        return Err(at(
            file.experiment.span(),
            "experiment",
            "no studies: add at least one [[study]] with scenes and backends".into(),
        ));
    }
    let folder = path.parent().unwrap_or(Path::new(""));
    let mut studies: Vec<Study> = Vec::new();
    for def in &file.study {
        let s = def.get_ref();
        let name = s.name.get_ref().clone();
        let item = |field: &str| format!("study `{name}`, {field}");
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(at(
                s.name.span(),
                &item("field `name`"),
                "expected letters, digits, `_` and `-` only".into(),
            ));
        }
        if studies.iter().any(|o| o.name == name) {
            return Err(at(
                s.name.span(),
                &item("field `name`"),
                "a study of this name exists already".into(),
            ));
        }
        if s.scenes.get_ref().is_empty() {
            return Err(at(
                s.scenes.span(),
                &item("field `scenes`"),
                "expected at least one scene file".into(),
            ));
        }
        let mut scenes = Vec::new();
        for scene in s.scenes.get_ref() {
            let file = normalize(&folder.join(scene.get_ref()));
            if !file.is_file() {
                return Err(at(
                    scene.span(),
                    &item("field `scenes`"),
                    format!(
                        "no scene file {} (paths are relative to the config's folder)",
                        file.display()
                    ),
                ));
            }
            scenes.push(file);
        }
        let backend = |v: &Spanned<String>, field: &str| {
            choice::<crate::cli::BackendArg>(v.get_ref())
                .and_then(crate::cli::concrete_backend)
                .map_err(|m| at(v.span(), &item(field), m))
        };
        if s.backends.get_ref().is_empty() {
            return Err(at(
                s.backends.span(),
                &item("field `backends`"),
                "expected at least one back end".into(),
            ));
        }
        let backends = s
            .backends
            .get_ref()
            .iter()
            .map(|b| backend(b, "field `backends`"))
            .collect::<Result<Vec<_>, _>>()?;
        let baseline = match &s.baseline {
            None => None,
            Some(b) => {
                let kind = backend(b, "field `baseline`")?;
                if !backends.contains(&kind) {
                    return Err(at(
                        b.span(),
                        &item("field `baseline`"),
                        format!("`{}` is not one of the study's backends", kind.label()),
                    ));
                }
                Some(kind)
            }
        };
        if !(1..=MAX_REPEAT).contains(s.repeat.get_ref()) {
            return Err(at(
                s.repeat.span(),
                &item("field `repeat`"),
                format!("expected 1 to {MAX_REPEAT}, got {}", s.repeat.get_ref()),
            ));
        }
        if *s.warmup.get_ref() > MAX_WARMUP {
            return Err(at(
                s.warmup.span(),
                &item("field `warmup`"),
                format!("expected 0 to {MAX_WARMUP}, got {}", s.warmup.get_ref()),
            ));
        }
        let setting = |key: &Spanned<String>, value: &Spanned<toml::Value>, table: &str| {
            let param =
                param_named(key).map_err(|m| at(key.span(), &item(&format!("{table} `{}`", key.get_ref())), m))?;
            let value = param
                .parse(value.get_ref())
                .map_err(|m| at(value.span(), &item(&format!("{table} `{}`", key.get_ref())), m))?;
            Ok(Setting { param, value })
        };
        let fixed = s
            .fixed
            .iter()
            .map(|(k, v)| setting(k, v, "fixed"))
            .collect::<Result<Vec<_>, ConfigError>>()?;
        let mut per_backend = Vec::new();
        for (b, table) in &s.per_backend {
            let kind = backend(b, "per_backend")?;
            let settings = table
                .iter()
                .map(|(k, v)| setting(k, v, &format!("per_backend.{}", b.get_ref())))
                .collect::<Result<Vec<_>, ConfigError>>()?;
            per_backend.push((kind, settings));
        }
        let mut sweep = Vec::new();
        for (key, values) in &s.sweep {
            let field = format!("sweep `{}`", key.get_ref());
            let param = param_named(key).map_err(|m| at(key.span(), &item(&field), m))?;
            if values.get_ref().is_empty() {
                return Err(at(
                    values.span(),
                    &item(&field),
                    "empty sweep: list at least one value".into(),
                ));
            }
            let values = values
                .get_ref()
                .iter()
                .map(|v| param.parse(v.get_ref()).map_err(|m| at(v.span(), &item(&field), m)))
                .collect::<Result<Vec<_>, _>>()?;
            sweep.push(Sweep { param, values });
        }
        let mut published = Vec::new();
        for p in &s.published {
            let f = p.get_ref();
            if !PUBLISHED_UNITS.contains(&f.unit.as_str()) {
                return Err(at(
                    p.span(),
                    &item("published figure, field `unit`"),
                    format!("expected one of {}; got `{}`", PUBLISHED_UNITS.join(", "), f.unit),
                ));
            }
            if !backends.contains(&f.backend) {
                return Err(at(
                    p.span(),
                    &item("published figure, field `backend`"),
                    format!("`{}` is not one of the study's backends", f.backend.label()),
                ));
            }
            if f.unit == "x" && baseline.is_none() {
                return Err(at(
                    p.span(),
                    &item("published figure, field `unit`"),
                    "a speedup (`x`) needs the study's `baseline`".into(),
                ));
            }
            published.push(f.clone());
        }
        let study = Study {
            name: name.clone(),
            description: s.description.clone(),
            note: s.note.clone(),
            scenes,
            backends,
            baseline,
            warmup: *s.warmup.get_ref(),
            repeat: *s.repeat.get_ref(),
            fixed,
            per_backend,
            sweep,
            published,
        };
        for run in study.runs() {
            run.spec
                .validate()
                .map_err(|m| at(def.span(), &item(&format!("run `{}`", run.label)), m))?;
        }
        studies.push(study);
    }
    Ok(Config {
        path: path.to_path_buf(),
        text: text.to_string(),
        name: file.experiment.get_ref().name.clone(),
        description: file.experiment.get_ref().description.clone(),
        studies,
    })
}

/// The parameter a config key names, or what the known names are.
fn param_named(key: &Spanned<String>) -> Result<Param, String> {
    let name = key.get_ref();
    if name == "backend" {
        return Err("the back ends are the study's `backends` list".into());
    }
    if let Some(path) = name.strip_prefix("scene.") {
        scene_path(path)?;
    }
    Param::named(name).ok_or_else(|| {
        format!(
            "unknown parameter; expected one of {} or a scene field as `scene.PATH`",
            super::params::plain_names().join(", ")
        )
    })
}

/// `a/b/../c` as `a/c`, without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_removes_dot_dot() {
        assert_eq!(
            normalize(Path::new("experiments/../scenes/a.toml")),
            Path::new("scenes/a.toml")
        );
        assert_eq!(normalize(Path::new("../x/./y")), Path::new("../x/y"));
    }
}
