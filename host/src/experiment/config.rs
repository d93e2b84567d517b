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
//! Every setting is one [`Param`]; a setting that does not apply to a back
//! end (a block shape for the CPU) is left at its default there, and runs that
//! end up identical are made once. Errors name the file, the line, the field
//! and what was expected, like scene errors.

use crate::accel::AccelChoice;
use crate::backend::cpu::CpuSchedule;
use crate::backend::gpu::wavefront::{Capacity, Schedule, compaction_label};
use crate::backend::{BackendKind, BackendOptions};
use crate::render::Overrides;
use crate::scene::line_col;
use clap::ValueEnum;
use device::launch::Compaction;
use indexmap::IndexMap;
use serde::Deserialize;
use serde_spanned::Spanned;
use std::path::{Component, Path, PathBuf};

/// Why a config could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{}: cannot read the experiment config: {source}", path.display())]
    Io {
        /// The config file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
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

/// A setting that runs can fix or sweep. Each is declared here once: its
/// name, the values it takes, the back ends it applies to and where it goes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Param {
    /// Image size, `"WxH"`.
    Size,
    /// Samples per pixel.
    Spp,
    /// Maximum ray segments per path.
    Depth,
    /// RNG seed.
    Seed,
    /// Acceleration structure: none, bvh or kdtree.
    Accel,
    /// Megakernel block shape, `"XxY"`.
    Block,
    /// Megakernel samples per launch.
    SamplesPerLaunch,
    /// Megakernel tile, `"WxH"` or `"full"`.
    Tile,
    /// Wavefront schedule.
    Schedule,
    /// Wavefront compaction.
    Compaction,
    /// Wavefront pool capacity: `"auto"`, `"2^K"` or a power of two.
    Capacity,
    /// Wavefront threads per block.
    WaveBlock,
    /// Wavefront tail-drain threshold (0: never).
    DrainBelow,
    /// CPU threads of the `cpu` back end (0: one per core).
    Threads,
    /// How `cpu` divides the image.
    CpuSchedule,
    /// Count active lanes per warp (GPU back ends; a diagnosis setting).
    CountDivergence,
    /// Render at most this many spp and scale the time linearly to the spp
    /// asked for (for serial runs that would take too long at full settings).
    SppCap,
    /// A field of the scene file by its path, e.g. `scene.generators[0].grid`.
    SceneField(String),
}

/// The plain parameter names, in the order reports list them.
pub const PARAM_NAMES: [&str; 17] = [
    "size",
    "spp",
    "depth",
    "seed",
    "accel",
    "block",
    "samples_per_launch",
    "tile",
    "schedule",
    "compaction",
    "capacity",
    "wave_block",
    "drain_below",
    "threads",
    "cpu_schedule",
    "count_divergence",
    "spp_cap",
];

/// A parameter's value, parsed and checked.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A whole number.
    Count(u32),
    /// Width × height.
    Size((u32, u32)),
    /// A tile, or the whole image.
    Tile(Option<(u32, u32)>),
    /// An acceleration structure.
    Accel(AccelChoice),
    /// A wavefront schedule.
    Schedule(Schedule),
    /// A compaction mode.
    Compaction(Compaction),
    /// A pool capacity.
    Capacity(Capacity),
    /// A CPU work distribution.
    CpuSchedule(CpuSchedule),
    /// A flag.
    Flag(bool),
    /// A scene-file value, checked when the scene loads.
    Scene(toml::Value),
}

impl Param {
    /// The parameter called `name`, if there is one.
    pub fn named(name: &str) -> Option<Param> {
        Some(match name {
            "size" => Param::Size,
            "spp" => Param::Spp,
            "depth" => Param::Depth,
            "seed" => Param::Seed,
            "accel" => Param::Accel,
            "block" => Param::Block,
            "samples_per_launch" => Param::SamplesPerLaunch,
            "tile" => Param::Tile,
            "schedule" => Param::Schedule,
            "compaction" => Param::Compaction,
            "capacity" => Param::Capacity,
            "wave_block" => Param::WaveBlock,
            "drain_below" => Param::DrainBelow,
            "threads" => Param::Threads,
            "cpu_schedule" => Param::CpuSchedule,
            "count_divergence" => Param::CountDivergence,
            "spp_cap" => Param::SppCap,
            _ => {
                let path = name.strip_prefix("scene.")?;
                scene_path(path).ok()?;
                Param::SceneField(path.to_string())
            }
        })
    }

    /// The name in configs and reports.
    pub fn name(&self) -> String {
        match self {
            Param::SceneField(path) => format!("scene.{path}"),
            p => PARAM_NAMES
                .iter()
                .find(|n| Param::named(n).as_ref() == Some(p))
                .map_or_else(String::new, |n| n.to_string()),
        }
    }

    /// True where the parameter changes what `backend` does.
    pub fn applies_to(&self, backend: BackendKind) -> bool {
        use BackendKind::*;
        match self {
            Param::Block | Param::SamplesPerLaunch | Param::Tile => backend == GpuMega,
            Param::Schedule | Param::Compaction | Param::Capacity | Param::WaveBlock | Param::DrainBelow => {
                backend == GpuWave
            }
            Param::Threads | Param::CpuSchedule => backend == Cpu,
            Param::CountDivergence => backend.is_gpu(),
            _ => true,
        }
    }

    /// Parses a config value for this parameter.
    pub fn parse(&self, v: &toml::Value) -> Result<Value, String> {
        let text = || {
            v.as_str()
                .ok_or_else(|| format!("expected a string, got {}", type_of(v)))
        };
        let count = |min: u32| -> Result<u32, String> {
            let n = v
                .as_integer()
                .ok_or_else(|| format!("expected a whole number, got {}", type_of(v)))?;
            u32::try_from(n)
                .ok()
                .filter(|&n| n >= min)
                .ok_or_else(|| format!("expected a whole number from {min} to {}, got {n}", u32::MAX))
        };
        Ok(match self {
            Param::Size | Param::Block => Value::Size(crate::cli::parse_size(text()?)?),
            Param::Tile => Value::Tile(match text()? {
                "full" => None,
                s => Some(crate::cli::parse_size(s)?),
            }),
            Param::Spp | Param::Depth | Param::SamplesPerLaunch | Param::WaveBlock | Param::SppCap => {
                Value::Count(count(1)?)
            }
            Param::Seed | Param::DrainBelow | Param::Threads => Value::Count(count(0)?),
            Param::Accel => Value::Accel(choice(text()?)?),
            Param::Schedule => Value::Schedule(choice(text()?)?),
            Param::Compaction => Value::Compaction(choice::<crate::cli::CompactionArg>(text()?)?.mode()),
            Param::Capacity => Value::Capacity(match v {
                toml::Value::Integer(n) => crate::cli::parse_capacity(&n.to_string())?,
                _ => crate::cli::parse_capacity(text()?)?,
            }),
            Param::CpuSchedule => Value::CpuSchedule(choice(text()?)?),
            Param::CountDivergence => Value::Flag(
                v.as_bool()
                    .ok_or_else(|| format!("expected true or false, got {}", type_of(v)))?,
            ),
            Param::SceneField(_) => Value::Scene(v.clone()),
        })
    }
}

/// One of a `clap::ValueEnum`'s names.
fn choice<T: ValueEnum>(s: &str) -> Result<T, String> {
    T::from_str(s, false).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
            .collect();
        format!("expected one of {}; got `{s}`", names.join(", "))
    })
}

/// A TOML value's kind, for error messages.
fn type_of(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("the string \"{s}\""),
        toml::Value::Integer(n) => format!("the integer {n}"),
        toml::Value::Float(x) => format!("the number {x}"),
        toml::Value::Boolean(b) => format!("{b}"),
        toml::Value::Datetime(_) => "a date".into(),
        toml::Value::Array(_) => "an array".into(),
        toml::Value::Table(_) => "a table".into(),
    }
}

/// One step of a scene-field path: a key, or an index into an array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// A table key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// Splits a scene-field path such as `generators[0].grid` into steps.
pub fn scene_path(path: &str) -> Result<Vec<PathStep>, String> {
    let bad = || format!("expected a scene field path such as `generators[0].grid`; got `{path}`");
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = part.split_once('[').map_or((part, ""), |(k, r)| (k, r));
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(bad());
        }
        steps.push(PathStep::Key(key.to_string()));
        while !rest.is_empty() {
            let (index, after) = rest.split_once(']').ok_or_else(bad)?;
            steps.push(PathStep::Index(index.parse().map_err(|_| bad())?));
            rest = match after.strip_prefix('[') {
                Some(r) => r,
                None if after.is_empty() => "",
                None => return Err(bad()),
            };
        }
    }
    Ok(steps)
}

/// One setting: a parameter and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    /// The parameter.
    pub param: Param,
    /// Its value.
    pub value: Value,
}

/// A swept parameter and its values, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// The parameter.
    pub param: Param,
    /// Its values.
    pub values: Vec<Value>,
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
        format!("{:016x}", fnv1a(self.text.as_bytes()))
    }
}

/// 64-bit FNV-1a.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Everything one run sets, with the effective values of the settings the
/// config left alone.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// The scene file.
    pub scene: PathBuf,
    /// Scene fields replaced before loading, by path.
    pub scene_fields: Vec<(String, toml::Value)>,
    /// The back end.
    pub backend: BackendKind,
    /// Size, spp, depth, seed and structure over the scene's own.
    pub overrides: Overrides,
    /// Back-end tuning.
    pub options: BackendOptions,
    /// Render at most this many spp, scaling the time to the spp asked for.
    pub spp_cap: Option<u32>,
}

impl RunSpec {
    /// The run with default settings.
    fn new(scene: PathBuf, backend: BackendKind) -> Self {
        let mut options = BackendOptions::default();
        options.megakernel.count_divergence = false;
        options.wavefront.count_divergence = false;
        RunSpec {
            scene,
            scene_fields: Vec::new(),
            backend,
            overrides: Overrides::default(),
            options,
            spp_cap: None,
        }
    }

    /// Applies `s` where it concerns this run's back end.
    fn apply(&mut self, s: &Setting) {
        if !s.param.applies_to(self.backend) {
            return;
        }
        let (o, m, w) = (
            &mut self.overrides,
            &mut self.options.megakernel,
            &mut self.options.wavefront,
        );
        match (&s.param, s.value.clone()) {
            (Param::Size, Value::Size(v)) => o.size = Some(v),
            (Param::Spp, Value::Count(n)) => o.spp = Some(n),
            (Param::Depth, Value::Count(n)) => o.max_depth = Some(n),
            (Param::Seed, Value::Count(n)) => o.seed = Some(n),
            (Param::Accel, Value::Accel(a)) => o.accel = Some(a),
            (Param::Block, Value::Size(b)) => m.block = b,
            (Param::SamplesPerLaunch, Value::Count(n)) => m.samples_per_launch = n,
            (Param::Tile, Value::Tile(t)) => m.tile = t,
            (Param::Schedule, Value::Schedule(v)) => w.schedule = v,
            (Param::Compaction, Value::Compaction(v)) => w.compaction = v,
            (Param::Capacity, Value::Capacity(v)) => w.capacity = v,
            (Param::WaveBlock, Value::Count(n)) => w.block = n,
            (Param::DrainBelow, Value::Count(n)) => w.drain_below = n,
            (Param::Threads, Value::Count(n)) => self.options.threads = n as usize,
            (Param::CpuSchedule, Value::CpuSchedule(v)) => self.options.cpu_schedule = v,
            (Param::CountDivergence, Value::Flag(f)) => {
                m.count_divergence = f;
                w.count_divergence = f;
            }
            (Param::SppCap, Value::Count(n)) => self.spp_cap = Some(n),
            (Param::SceneField(path), Value::Scene(v)) => {
                self.scene_fields.retain(|(p, _)| p != path);
                self.scene_fields.push((path.clone(), v));
            }
            (p, v) => unreachable!("Param::parse gives {p:?} no {v:?}"),
        }
    }

    /// Checks the launch configurations (block shapes, capacities).
    pub fn validate(&self) -> Result<(), String> {
        match self.backend {
            BackendKind::GpuMega => self.options.megakernel.validate(),
            BackendKind::GpuWave => self.options.wavefront.validate(),
            BackendKind::Cpu => match self.options.threads {
                0..=MAX_CPU_THREADS => Ok(()),
                n => Err(format!("threads: at most {MAX_CPU_THREADS}, got {n}")),
            },
            BackendKind::CpuSerial => Ok(()),
        }
    }
}

/// The most CPU threads a run may ask for.
pub const MAX_CPU_THREADS: usize = 1024;

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

/// A value as reports print it.
pub fn describe(v: &Value) -> String {
    match v {
        Value::Count(n) => n.to_string(),
        Value::Size((w, h)) => format!("{w}x{h}"),
        Value::Tile(None) => "full".into(),
        Value::Tile(Some((w, h))) => format!("{w}x{h}"),
        Value::Accel(a) => a.label().into(),
        Value::Schedule(s) => s.label().into(),
        Value::Compaction(c) => compaction_label(*c).into(),
        Value::Capacity(c) => c.label(),
        Value::CpuSchedule(s) => s.label().into(),
        Value::Flag(f) => f.to_string(),
        Value::Scene(v) => v.to_string(),
    }
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
    warmup: u32,
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

fn one() -> u32 {
    1
}

fn three() -> Spanned<u32> {
    Spanned::new(0..0, 3)
}

/// Reads and validates the config at `path`.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
        path: path.to_path_buf(),
        source,
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
        if *s.repeat.get_ref() == 0 {
            return Err(at(
                s.repeat.span(),
                &item("field `repeat`"),
                "expected at least 1".into(),
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
            warmup: s.warmup,
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
            PARAM_NAMES.join(", ")
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
    fn scene_paths_split_into_keys_and_indices() {
        assert_eq!(
            scene_path("generators[0].grid"),
            Ok(vec![
                PathStep::Key("generators".into()),
                PathStep::Index(0),
                PathStep::Key("grid".into())
            ])
        );
        assert_eq!(
            scene_path("a[1][2]"),
            Ok(vec![PathStep::Key("a".into()), PathStep::Index(1), PathStep::Index(2)])
        );
        for bad in ["", "a..b", "a[x]", "a[1", "a[1]b", "a b"] {
            assert!(scene_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_param_name_round_trips() {
        for n in PARAM_NAMES {
            assert_eq!(Param::named(n).map(|p| p.name()).as_deref(), Some(n));
        }
        assert_eq!(
            Param::named("scene.render.spp"),
            Some(Param::SceneField("render.spp".into()))
        );
        assert_eq!(Param::named("blocks"), None);
    }

    #[test]
    fn normalize_removes_dot_dot() {
        assert_eq!(
            normalize(Path::new("experiments/../scenes/a.toml")),
            Path::new("scenes/a.toml")
        );
        assert_eq!(normalize(Path::new("../x/./y")), Path::new("../x/y"));
    }
}
