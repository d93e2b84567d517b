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
//! match = { size = "512x384", spp = 1024 }      # the seed's setup: one measured run
//! time = "total"                                # the seed timed its whole program
//! ```
//!
//! A published figure stands beside exactly one run: of its back end (and
//! scene), with every setting of its `match` table, measured rather than
//! scaled from fewer spp, and, for a speedup, with a measured baseline run of
//! the same work. `time` says which of our times the seed's corresponds to
//! (`wall`, the render loop, or `total`, the whole render call). A speedup
//! of one setting over another of the same back end (a load-balancing gain)
//! names the other run with `over`, settings that replace the `match`
//! table's. An entry that names no such run, or several, is an error when
//! the config loads.
//!
//! Every setting is one [`Param`] (see `params`), its values the types of
//! [`renderer::settings`]; a setting that does not apply to a back end (a block
//! shape for the CPU) or to a run (`split_all` on one GPU) is left at its
//! default there, and runs that end up identical are made once; one that
//! no run of its study uses is refused. Errors name the file, the line, the field and
//! what was expected, like scene errors. Reading a study is a series of
//! named checks (`StudySource`), one per field.

use super::params::{GPUS, Param, RunSpec, SPLIT_ALL, Setting, Sweep, describe, plain_names, scene_path};
use super::scaling::Scaling;
use indexmap::IndexMap;
use renderer::io::image::{self, OutputFormat};
use renderer::scene::line_col;
use renderer::settings::backend::BackendKind;
use renderer::settings::choice::choice;
use renderer::settings::echo::shorten_for_error;
use renderer::settings::repetitions::{MAX_REPEAT, MAX_WARMUP, STUDY_REPEAT, STUDY_WARMUP};
use renderer::settings::scope::{BackendFlag, check_flags};
use renderer::system::fingerprint::fingerprint_bytes;
use serde::Deserialize;
use serde_spanned::Spanned;
use std::path::{Component, Path, PathBuf};

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
    /// The seed's setup: settings that, with `backend` and `scene`, pick
    /// exactly one measured run of the study; our figure is that run's.
    #[serde(default, rename = "match", skip_serializing_if = "IndexMap::is_empty")]
    pub settings: Settings,
    /// The label of that run, found when the config loads (a manifest
    /// keeps it for the report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// Which of our times stands beside the seed's: required in a config
    /// (manifests from before it was asked for lack it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<SeedTime>,
    /// For a speedup of one setting over another (`x` only): the settings,
    /// replacing those of `match`, of the run it is a speedup over, in
    /// place of the study's baseline.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub over: Settings,
    /// The label of that run, found when the config loads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_run: Option<String>,
}

impl Published {
    /// Its back end, and scene where it names one: `gpu-mega on cs500`.
    pub fn backend_label(&self) -> String {
        match &self.scene {
            Some(scene) => format!("{} on {scene}", self.backend.label()),
            None => self.backend.label().to_string(),
        }
    }

    /// The seed's time as tables name it (`not stated` in manifests from
    /// before it was asked for).
    pub fn time_label(&self) -> &'static str {
        self.time.map_or("not stated", SeedTime::label)
    }
}

/// Which time a seed measured, so that ours is the same one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SeedTime {
    /// The render loop alone (`wall_ms`): launches and kernels on a GPU.
    Wall,
    /// The whole render call (`total_ms`): on a GPU also the state's
    /// allocation, the scene's upload and the film's readback.
    Total,
}

impl SeedTime {
    /// Its name in a config: `wall` or `total`.
    pub fn name(self) -> &'static str {
        match self {
            SeedTime::Wall => "wall",
            SeedTime::Total => "total",
        }
    }

    /// The other of the two.
    pub fn other(self) -> SeedTime {
        match self {
            SeedTime::Wall => SeedTime::Total,
            SeedTime::Total => SeedTime::Wall,
        }
    }

    /// How a table names it.
    pub fn label(self) -> &'static str {
        match self {
            SeedTime::Wall => "wall (render loop)",
            SeedTime::Total => "total (whole render call)",
        }
    }
}

/// The most configurations one study may plan (scenes × back ends × each
/// sweep's values, before identical ones are merged): far more than a study
/// can time, and few enough to plan in well under a second.
pub const MAX_STUDY_RUNS: u64 = 10_000;

/// The most configurations a whole config may plan, its studies together
/// (each counted as for [`MAX_STUDY_RUNS`]): planning and a dry run stay
/// within seconds and tens of megabytes.
pub const MAX_CONFIG_RUNS: u64 = 20_000;

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
    /// A converged image of the study's scene (linear radiance, `.exr` or
    /// `.pfm`, resolved against the config's folder): each timed row gets
    /// its error against it.
    pub reference: Option<PathBuf>,
    /// How the runs grow with their `gpus` (weak: the image height too).
    pub scaling: Scaling,
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
        fingerprint_bytes(self.text.as_bytes())
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
    /// A fingerprint of its every setting ([`RunSpec`], its scene file as
    /// the file system resolves it, and that file's contents): its rows
    /// carry it (`config_key`), and `--resume` matches rows to planned
    /// runs by it, so a row rendered from an earlier version of the scene
    /// file matches none.
    pub key: String,
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
        // Settings that do not concern a back end leave some points equal:
        // each distinct run once, found by its description in linear time.
        let mut seen = std::collections::HashSet::new();
        for scene in &self.scenes {
            // The same file whatever the working folder and config path.
            let resolved = std::fs::canonicalize(scene).unwrap_or_else(|_| scene.clone());
            // A file that cannot be read fails when the run loads it.
            let contents = std::fs::read(&resolved).unwrap_or_default();
            for &backend in &self.backends {
                for point in &points {
                    let mut spec = RunSpec::new(scene.clone(), backend);
                    let own = self.per_backend.iter().filter(|(b, _)| *b == backend);
                    let settings = self.fixed.iter().chain(own.flat_map(|(_, s)| s)).chain(point);
                    settings.for_each(|s| spec.apply(s));
                    self.scaling.apply(&mut spec);
                    spec.settle();
                    if !seen.insert(format!("{spec:?}")) {
                        continue;
                    }
                    let key = config_key(&spec, &resolved, &contents);
                    let mut label = backend.label().to_string();
                    if self.scenes.len() > 1 {
                        label = format!("{} {label}", scene_stem(scene));
                    }
                    for s in point.iter().filter(|s| spec.uses(&s.param)) {
                        label.push_str(&format!(" {}={}", s.param.name(), describe(&s.value)));
                    }
                    runs.push(PlannedRun {
                        index: runs.len() as u32,
                        spec,
                        label,
                        key,
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

/// The fingerprint of `spec`'s every setting, its scene file named by
/// `resolved` (the path the file system resolves it to, so that the key
/// is the same whatever the working folder or the config's path) and
/// read as `contents`.
fn config_key(spec: &RunSpec, resolved: &Path, contents: &[u8]) -> String {
    let spec = RunSpec {
        scene: resolved.to_path_buf(),
        ..spec.clone()
    };
    let mut bytes = format!("{spec:?}").into_bytes();
    bytes.push(0);
    bytes.extend_from_slice(contents);
    fingerprint_bytes(&bytes)
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

/// A table of settings as a config writes it, with the spans of its keys
/// and values for errors.
pub type Settings = IndexMap<Spanned<String>, Spanned<toml::Value>>;

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
    #[serde(default = "study_warmup")]
    warmup: Spanned<u32>,
    #[serde(default = "study_repeat")]
    repeat: Spanned<u32>,
    #[serde(default)]
    fixed: Settings,
    #[serde(default)]
    per_backend: IndexMap<Spanned<String>, Settings>,
    #[serde(default)]
    sweep: IndexMap<Spanned<String>, Spanned<Vec<Spanned<toml::Value>>>>,
    #[serde(default)]
    published: Vec<Spanned<Published>>,
    #[serde(default)]
    reference: Option<Spanned<String>>,
    #[serde(default)]
    scaling: Option<Spanned<String>>,
}

fn study_warmup() -> Spanned<u32> {
    Spanned::new(0..0, STUDY_WARMUP)
}

fn study_repeat() -> Spanned<u32> {
    Spanned::new(0..0, STUDY_REPEAT)
}

/// Reads and validates the config at `path`.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = renderer::io::input_file::read_text(path, renderer::io::input_file::MAX_TEXT_FILE_BYTES).map_err(
        |message| ConfigError::File {
            path: path.to_path_buf(),
            message,
        },
    )?;
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
    let source = Source { path, text };
    if file.study.is_empty() {
        return Err(source.at(
            file.experiment.span(),
            "experiment",
            "no studies: add at least one [[study]] with scenes and backends".into(),
        ));
    }
    let mut studies: Vec<Study> = Vec::new();
    let mut planned = 0;
    for def in &file.study {
        let study = source.study(def, &studies, &mut planned)?;
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

/// The config being read: where errors point.
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

/// One study's definition being read: errors name the study.
struct StudySource<'a> {
    source: &'a Source<'a>,
    name: &'a str,
}

impl Source<'_> {
    /// An error at `span`, about `item`.
    fn at(&self, span: std::ops::Range<usize>, item: &str, message: String) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.to_path_buf(),
            line: line_col(self.text, span.start).0,
            item: item.to_string(),
            message,
        }
    }

    /// Validates one study; `earlier` are the studies before it, which plan
    /// `planned` configurations (this study's are added).
    fn study(&self, def: &Spanned<StudyDef>, earlier: &[Study], planned: &mut u64) -> Result<Study, ConfigError> {
        let s = def.get_ref();
        let name = s.name.get_ref().clone();
        let st = StudySource {
            source: self,
            name: &name,
        };
        st.check_name(&s.name, earlier)?;
        let scenes = st.scenes(&s.scenes, self.path.parent().unwrap_or(Path::new("")))?;
        let backends = st.backends(&s.backends)?;
        let baseline = s.baseline.as_ref().map(|b| st.baseline(b, &backends)).transpose()?;
        st.check_repetitions(&s.repeat, &s.warmup)?;
        let fixed = st.settings(&s.fixed, "fixed", &backends)?;
        let mut per_backend = Vec::new();
        for (b, table) in &s.per_backend {
            let kind = st.backend(b, "per_backend")?;
            if !backends.contains(&kind) {
                return Err(st.at(
                    b.span(),
                    &format!("per_backend.{}", b.get_ref()),
                    format!(
                        "`{}` is not one of the study's backends ({}); its settings would apply to nothing",
                        kind.label(),
                        backends.iter().map(|b| b.label()).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            per_backend.push((
                kind,
                st.settings(table, &format!("per_backend.{}", b.get_ref()), &[kind])?,
            ));
        }
        let sweep = s
            .sweep
            .iter()
            .map(|(key, values)| st.sweep(key, values, &backends))
            .collect::<Result<Vec<_>, _>>()?;
        *planned = st.check_run_count(def.span(), (scenes.len(), backends.len(), &sweep), *planned)?;
        let scaling = s
            .scaling
            .as_ref()
            .map(|v| st.scaling(v, &sweep))
            .transpose()?
            .unwrap_or_default();
        let published = s
            .published
            .iter()
            .map(|p| st.published(p, &backends, baseline))
            .collect::<Result<Vec<_>, _>>()?;
        let reference = s
            .reference
            .as_ref()
            .map(|r| st.reference(r, self.path.parent().unwrap_or(Path::new(""))))
            .transpose()?;
        let mut study = Study {
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
            reference,
            scaling,
        };
        let runs = study.runs();
        st.check_split_all(s, &runs)?;
        for run in &runs {
            run.spec
                .validate()
                .and_then(|()| scaling.check(&run.spec))
                .map_err(|m| st.at(def.span(), &format!("run `{}`", shorten_for_error(&run.label)), m))?;
        }
        for (p, def) in study.published.iter_mut().zip(&s.published) {
            let (run, over) = st.matched_runs(def, &runs, study.baseline)?;
            (p.run, p.over_run) = (Some(run), over);
        }
        Ok(study)
    }
}

impl StudySource<'_> {
    /// An error at `span`, about `field` of this study.
    fn at(&self, span: std::ops::Range<usize>, field: &str, message: String) -> ConfigError {
        self.source.at(
            span,
            &format!("study `{}`, {field}", shorten_for_error(self.name)),
            message,
        )
    }

    /// Checks the study's name: a plain word, unique in the config.
    fn check_name(&self, name: &Spanned<String>, earlier: &[Study]) -> Result<(), ConfigError> {
        let n = name.get_ref();
        if n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(self.at(
                name.span(),
                "field `name`",
                "expected letters, digits, `_` and `-` only".into(),
            ));
        }
        if earlier.iter().any(|o| &o.name == n) {
            return Err(self.at(
                name.span(),
                "field `name`",
                "a study of this name exists already".into(),
            ));
        }
        Ok(())
    }

    /// The reference image, resolved against `folder`: an existing `.exr`
    /// or `.pfm` file (linear radiance; it is read, and its size checked
    /// against every run, before the first run).
    fn reference(&self, reference: &Spanned<String>, folder: &Path) -> Result<PathBuf, ConfigError> {
        let file = normalize(&folder.join(reference.get_ref()));
        let linear = image::format_for(&file).is_ok_and(|f| f.is_linear());
        let problem = if !linear {
            format!(
                "{} is not linear radiance: name a {} file (`wavepath render SCENE --spp N --out FILE.exr` makes one)",
                file.display(),
                image::extension_list(OutputFormat::is_linear)
            )
        } else if !file.is_file() {
            format!(
                "no image {} (paths are relative to the config's folder)",
                file.display()
            )
        } else {
            return Ok(file);
        };
        Err(self.at(reference.span(), "field `reference`", problem))
    }

    /// The scene files, resolved against `folder`; each must exist.
    fn scenes(&self, scenes: &Spanned<Vec<Spanned<String>>>, folder: &Path) -> Result<Vec<PathBuf>, ConfigError> {
        if scenes.get_ref().is_empty() {
            return Err(self.at(
                scenes.span(),
                "field `scenes`",
                "expected at least one scene file".into(),
            ));
        }
        scenes
            .get_ref()
            .iter()
            .map(|scene| {
                let file = normalize(&folder.join(scene.get_ref()));
                if file.is_file() {
                    Ok(file)
                } else {
                    Err(self.at(
                        scene.span(),
                        "field `scenes`",
                        format!(
                            "no scene file {} (paths are relative to the config's folder)",
                            file.display()
                        ),
                    ))
                }
            })
            .collect()
    }

    /// A concrete back end named in `field`.
    fn backend(&self, v: &Spanned<String>, field: &str) -> Result<BackendKind, ConfigError> {
        choice::<BackendKind>(v.get_ref()).map_err(|m| self.at(v.span(), field, m))
    }

    /// The study's back ends, at least one.
    fn backends(&self, backends: &Spanned<Vec<Spanned<String>>>) -> Result<Vec<BackendKind>, ConfigError> {
        if backends.get_ref().is_empty() {
            return Err(self.at(
                backends.span(),
                "field `backends`",
                "expected at least one back end".into(),
            ));
        }
        backends
            .get_ref()
            .iter()
            .map(|b| self.backend(b, "field `backends`"))
            .collect()
    }

    /// The baseline: one of the study's back ends.
    fn baseline(&self, b: &Spanned<String>, backends: &[BackendKind]) -> Result<BackendKind, ConfigError> {
        let kind = self.backend(b, "field `baseline`")?;
        if !backends.contains(&kind) {
            return Err(self.at(
                b.span(),
                "field `baseline`",
                format!("`{}` is not one of the study's backends", kind.label()),
            ));
        }
        Ok(kind)
    }

    /// The study's `scaling`: weak scaling needs a sweep of `gpus`.
    fn scaling(&self, v: &Spanned<String>, sweep: &[Sweep]) -> Result<Scaling, ConfigError> {
        let scaling = Scaling::parse(v.get_ref()).map_err(|m| self.at(v.span(), "field `scaling`", m))?;
        let gpus = Param::Plain(&GPUS);
        if scaling == Scaling::Weak && !sweep.iter().any(|s| s.param == gpus) {
            return Err(self.at(
                v.span(),
                "field `scaling`",
                "weak scaling grows the image with the GPU count, and the study sweeps no `gpus`: \
                 add e.g. `sweep = { gpus = [1, 2] }`"
                    .into(),
            ));
        }
        Ok(scaling)
    }

    /// Refuses a `split_all` (fixed, of a back end or swept) that no run of
    /// the study uses: where every run renders on one GPU (`gpus` 1, the
    /// default), there is no split for it to change, and a sweep of it
    /// would make the same run under two labels.
    fn check_split_all(&self, s: &StudyDef, runs: &[PlannedRun]) -> Result<(), ConfigError> {
        let split_all = Param::Plain(&SPLIT_ALL);
        if runs.iter().any(|r| r.spec.uses(&split_all)) {
            return Ok(());
        }
        let fixed = s.fixed.keys().map(|k| ("fixed".to_string(), k));
        let own = (s.per_backend.iter())
            .flat_map(|(b, table)| table.keys().map(move |k| (format!("per_backend.{}", b.get_ref()), k)));
        let swept = s.sweep.keys().map(|k| ("sweep".to_string(), k));
        let Some((table, key)) = fixed
            .chain(own)
            .chain(swept)
            .find(|(_, k)| k.get_ref() == SPLIT_ALL.name)
        else {
            return Ok(());
        };
        Err(self.at(
            key.span(),
            &format!("{table} `{}`", SPLIT_ALL.name),
            format!(
                "every run of the study renders on one GPU (`{gpus}` is 1, the default), where there is no split \
                 for `{split}` to change: sweep `{gpus}` above 1 (e.g. `sweep = {{ {gpus} = [1, 2] }}`) or leave `{split}` out",
                gpus = GPUS.name,
                split = SPLIT_ALL.name
            ),
        ))
    }

    /// Checks `repeat` and `warmup` against their limits.
    fn check_repetitions(&self, repeat: &Spanned<u32>, warmup: &Spanned<u32>) -> Result<(), ConfigError> {
        if !(1..=MAX_REPEAT).contains(repeat.get_ref()) {
            return Err(self.at(
                repeat.span(),
                "field `repeat`",
                format!("expected 1 to {MAX_REPEAT}, got {}", repeat.get_ref()),
            ));
        }
        if *warmup.get_ref() > MAX_WARMUP {
            return Err(self.at(
                warmup.span(),
                "field `warmup`",
                format!("expected 0 to {MAX_WARMUP}, got {}", warmup.get_ref()),
            ));
        }
        Ok(())
    }

    /// The settings of a table (`fixed` or a `per_backend` entry) for
    /// `backends`.
    fn settings(&self, table: &Settings, name: &str, backends: &[BackendKind]) -> Result<Vec<Setting>, ConfigError> {
        table
            .iter()
            .map(|(key, value)| {
                let field = format!("{name} `{}`", shorten_for_error(key.get_ref()));
                let param = param_named(key).map_err(|m| self.at(key.span(), &field, m))?;
                check_concerns(&param, backends).map_err(|m| self.at(key.span(), &field, m))?;
                let value = param
                    .parse(value.get_ref())
                    .map_err(|m| self.at(value.span(), &field, m))?;
                Ok(Setting { param, value })
            })
            .collect()
    }

    /// One swept parameter of a study of `backends`, and its values, at
    /// least one.
    fn sweep(
        &self,
        key: &Spanned<String>,
        values: &Spanned<Vec<Spanned<toml::Value>>>,
        backends: &[BackendKind],
    ) -> Result<Sweep, ConfigError> {
        let field = format!("sweep `{}`", shorten_for_error(key.get_ref()));
        let param = param_named(key).map_err(|m| self.at(key.span(), &field, m))?;
        check_concerns(&param, backends).map_err(|m| self.at(key.span(), &field, m))?;
        if values.get_ref().is_empty() {
            return Err(self.at(values.span(), &field, "empty sweep: list at least one value".into()));
        }
        let values = values
            .get_ref()
            .iter()
            .map(|v| param.parse(v.get_ref()).map_err(|m| self.at(v.span(), &field, m)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Sweep { param, values })
    }

    /// Refuses a study whose configurations (scenes × back ends × every
    /// sweep's values) would pass [`MAX_STUDY_RUNS`], or that with the
    /// `planned` configurations of the studies before it would pass
    /// [`MAX_CONFIG_RUNS`], before any is made; returns the config's
    /// configurations so far, this study's included.
    fn check_run_count(
        &self,
        span: std::ops::Range<usize>,
        (scenes, backends, sweep): (usize, usize, &[Sweep]),
        planned: u64,
    ) -> Result<u64, ConfigError> {
        let factors: Vec<usize> = [scenes, backends]
            .into_iter()
            .chain(sweep.iter().map(|s| s.values.len()))
            .collect();
        let count = factors
            .iter()
            .try_fold(1u64, |n, &f| n.checked_mul(f as u64))
            .unwrap_or(u64::MAX);
        if count > MAX_STUDY_RUNS {
            let product: Vec<String> = factors.iter().map(usize::to_string).collect();
            return Err(self.at(
                span,
                "sweep",
                format!(
                    "the study plans {count} configurations (scenes × back ends × each sweep's values: {}); \
                     the limit is {MAX_STUDY_RUNS}: split it into studies or sweep fewer values",
                    product.join(" × ")
                ),
            ));
        }
        let total = planned + count;
        if total > MAX_CONFIG_RUNS {
            return Err(self.at(
                span,
                "sweep",
                format!(
                    "the config plans {total} configurations with this study's {count} ({planned} in the studies \
                     before it); the limit for a whole config is {MAX_CONFIG_RUNS}: split it into several configs"
                ),
            ));
        }
        Ok(total)
    }

    /// The one run a published figure stands beside: of its back end (and
    /// scene), with every setting of its `match` table, measured (not scaled
    /// from fewer spp) and, for a speedup, with a measured run to divide by:
    /// the one its `over` settings name, or else a baseline run of the same
    /// work. Returns the run's label and that of its `over` run. Anything
    /// else is an error naming the entry.
    fn matched_runs(
        &self,
        def: &Spanned<Published>,
        runs: &[PlannedRun],
        baseline: Option<BackendKind>,
    ) -> Result<(String, Option<String>), ConfigError> {
        let p = def.get_ref();
        let entry = format!(
            "published figure `{} {}` of {}",
            p.value,
            shorten_for_error(&p.unit),
            shorten_for_error(&p.source)
        );
        let at = |m: String| self.at(def.span(), &entry, m);
        let settings = self.settings(&p.settings, "published figure, `match`", &[p.backend])?;
        let run = self.one_run(p, runs, &settings, "its run").map_err(at)?;
        if !p.over.is_empty() {
            let mut over_settings = settings.clone();
            for s in self.settings(&p.over, "published figure, `over`", &[p.backend])? {
                over_settings.retain(|o| o.param != s.param);
                over_settings.push(s);
            }
            let over = self
                .one_run(p, runs, &over_settings, "the run it is a speedup over (`over`)")
                .map_err(at)?;
            if over.label == run.label {
                return Err(at(format!(
                    "`over` names run `{}` itself: name settings that differ from `match`",
                    run.label
                )));
            }
            return Ok((run.label.clone(), Some(over.label.clone())));
        }
        let same_work = |b: &PlannedRun| {
            b.spec.scene == run.spec.scene
                && b.spec.scene_fields == run.spec.scene_fields
                && b.spec.overrides == run.spec.overrides
        };
        if p.unit == "x"
            && !runs
                .iter()
                .any(|b| Some(b.spec.backend) == baseline && b.spec.spp_cap.is_none() && same_work(b))
        {
            return Err(at(format!(
                "no measured run of the baseline renders the work of `{}` (a scaled baseline never stands beside a seed's figure)",
                run.label
            )));
        }
        Ok((run.label.clone(), None))
    }

    /// The one measured run of `p`'s back end (and scene) with `settings`;
    /// `what` names it in errors.
    fn one_run<'r>(
        &self,
        p: &Published,
        runs: &'r [PlannedRun],
        settings: &[Setting],
        what: &str,
    ) -> Result<&'r PlannedRun, String> {
        let asked = || {
            let named: Vec<String> = settings
                .iter()
                .map(|s| format!("{}={}", s.param.name(), describe(&s.value)))
                .collect();
            let scene = p.scene.as_deref().map_or(String::new(), |s| format!(" on {s}"));
            format!("{}{scene} with {{{}}}", p.backend.label(), named.join(", "))
        };
        let matching: Vec<&PlannedRun> = runs
            .iter()
            .filter(|r| {
                let mut probe = r.spec.clone();
                settings.iter().for_each(|s| probe.apply(s));
                probe.settle();
                r.spec.backend == p.backend
                    && p.scene.as_ref().is_none_or(|s| scene_stem(&r.spec.scene) == *s)
                    && probe == r.spec
            })
            .collect();
        let run = match matching.as_slice() {
            [] => return Err(format!("{what}: no run of the study is {}", asked())),
            [one] => *one,
            many => {
                let labels: Vec<&str> = many.iter().take(4).map(|r| r.label.as_str()).collect();
                return Err(format!(
                    "{what}: {} runs are {} ({}, …): name the settings of the seed's setup until one is left",
                    many.len(),
                    asked(),
                    labels.join("; ")
                ));
            }
        };
        if run.spec.spp_cap.is_some() {
            return Err(format!(
                "{what}: run `{}` is scaled from fewer spp (spp_cap); a seed's figure stands beside measured runs",
                run.label
            ));
        }
        Ok(run)
    }

    /// A published figure: a known unit, a finite value, one of the study's
    /// back ends, and a baseline for a speedup.
    fn published(
        &self,
        p: &Spanned<Published>,
        backends: &[BackendKind],
        baseline: Option<BackendKind>,
    ) -> Result<Published, ConfigError> {
        let f = p.get_ref();
        if !(f.value.is_finite() && f.value > 0.0) {
            return Err(self.at(
                p.span(),
                "published figure, field `value`",
                format!("expected a finite value above 0, got {}", f.value),
            ));
        }
        if !PUBLISHED_UNITS.contains(&f.unit.as_str()) {
            return Err(self.at(
                p.span(),
                "published figure, field `unit`",
                format!(
                    "expected one of {}; got `{}`",
                    PUBLISHED_UNITS.join(", "),
                    shorten_for_error(&f.unit)
                ),
            ));
        }
        if !backends.contains(&f.backend) {
            return Err(self.at(
                p.span(),
                "published figure, field `backend`",
                format!("`{}` is not one of the study's backends", f.backend.label()),
            ));
        }
        if f.unit == "x" && baseline.is_none() && f.over.is_empty() {
            return Err(self.at(
                p.span(),
                "published figure, field `unit`",
                "a speedup (`x`) needs the study's `baseline`, or `over` naming the run it is a speedup over".into(),
            ));
        }
        if f.unit != "x" && !f.over.is_empty() {
            return Err(self.at(
                p.span(),
                "published figure, field `over`",
                format!("`over` names the run a speedup is over; this figure is in `{}`", f.unit),
            ));
        }
        if f.time.is_none() {
            return Err(self.at(
                p.span(),
                "published figure, field `time`",
                "missing: say which time the seed measured, `wall` (the render loop) or `total` (the whole render call, with allocation, upload and readback)".into(),
            ));
        }
        Ok(f.clone())
    }
}

/// Refuses a setting that none of `backends` would use (a block shape for
/// a study of CPU back ends): as a flag would be, by the one check.
fn check_concerns(param: &Param, backends: &[BackendKind]) -> Result<(), String> {
    match param {
        Param::Plain(decl) => check_flags(
            &[BackendFlag {
                flag: decl.name,
                scope: decl.scope,
            }],
            backends,
        ),
        Param::SceneField(_) => Ok(()),
    }
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
            plain_names().join(", ")
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
