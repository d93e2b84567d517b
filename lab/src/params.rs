//! The settings a run can fix or sweep, each declared once, as one entry of
//! the table at the end of this file ([`SETTINGS`]). An entry carries the
//! setting's name in configs and reports, the columns of `runs.csv` that
//! hold its value (which a report checks with its parser), the kind of
//! [`Value`] it takes and the parser of that value, the back ends it
//! concerns and the field of a run ([`RunSpec`]) it sets. Its default is
//! the value `RunSpec::new` starts from, which comes from the constants in
//! [`renderer::settings`]; how it prints is its kind's ([`describe`]).
//! An entry also declares its launch flag on the command line of `render`
//! and `verify` ([`CliForm`]): the command line builds its arguments from
//! the table and reads their values with the entries' own parsers; and,
//! for a number that figures plot, its axis ([`Axis`]): the columns a
//! report reads the number from and the unit the axis names.
//! docs/architecture.md, "Adding a setting", walks through a new one.
//!
//! Scene fields (`scene.PATH`) are the one open-ended kind of setting: any
//! path into the scene file, checked when the scene loads.

use clap::ValueEnum;
use clap::builder::PossibleValue;
use device::launch::{Compaction, MaterialSort};
use renderer::accel::AccelChoice;
use renderer::backend::{BackendKind, BackendOptions};
use renderer::io::document_path::{self, PathStep};
use renderer::render::Overrides;
use renderer::settings::arithmetic::{Arithmetic, parse_arithmetic};
use renderer::settings::capacity::{Capacity, parse_capacity};
use renderer::settings::choice::choice;
use renderer::settings::cpu::{CpuSchedule, DEFAULT_THREADS, MAX_THREADS, check_threads};
use renderer::settings::devices::{MAX_GPUS, SplitRule};
use renderer::settings::echo::shorten_for_error;
use renderer::settings::kernels::KernelFeatures;
use renderer::settings::mega_config::{DEFAULT_BLOCK, DEFAULT_SAMPLES_PER_LAUNCH, check_register_cap};
use renderer::settings::nee::NeeMode;
use renderer::settings::sampler::SamplerKind;
use renderer::settings::scope::Scope;
use renderer::settings::size::{MAX_DEPTH, MAX_SPP, parse_size, size_label};
use renderer::settings::wave_config::{
    CompactionArg, DEFAULT_CAPACITY, DEFAULT_COMPACTION, DEFAULT_DRAIN_BELOW, DEFAULT_MATERIAL_SORT, DEFAULT_REFILL,
    DEFAULT_SCHEDULE, DEFAULT_WAVE_BLOCK, MaterialSortArg, WaveSchedule, compaction_label, material_sort_label,
};
use std::path::PathBuf;
use std::sync::LazyLock;

/// One setting that runs can fix or sweep (an entry of [`SETTINGS`]).
pub struct SettingDecl {
    /// The name in configs and reports.
    pub name: &'static str,
    /// The columns of `runs.csv` whose cells are values of the setting as
    /// a config gives them: its name, unless the entry names others (none
    /// where the row records something else, e.g. `threads`, the threads
    /// that ran).
    pub columns: &'static [&'static str],
    /// The back ends where the setting changes what they do (elsewhere it
    /// is left at its default, and it does not label the run).
    pub scope: Scope,
    /// Parses a config value.
    pub parse: fn(&toml::Value) -> Result<Value, String>,
    /// Puts a value that `parse` gave into a run.
    pub apply: fn(&mut RunSpec, Value),
    /// Its launch flag, if it has one.
    pub cli: CliForm,
    /// How reports plot its values, where they are numbers on an axis.
    pub axis: Option<Axis>,
    /// The flag as typed and the name of its value in the help
    /// ([`SettingDecl::flag`], [`SettingDecl::value_name`]), worked out once.
    cli_names: LazyLock<(String, String)>,
}

/// How reports plot a setting whose values are numbers: the speedup
/// against it, or a heat map over it and another.
pub struct Axis {
    /// The columns of `runs.csv` whose first filled cell is the number
    /// plotted (`2^K` reads as the power); none: the setting's own.
    pub columns: &'static [&'static str],
    /// The unit the axis names after the setting, e.g. `drain_below (paths)`.
    pub unit: Option<&'static str>,
    /// Whether the axis is logarithmic; it is then titled by its unit alone.
    pub log: bool,
}

impl Axis {
    /// A linear axis of the setting's own column, in `unit`.
    const fn of(unit: &'static str) -> Axis {
        Axis {
            columns: &[],
            unit: Some(unit),
            log: false,
        }
    }

    /// A linear axis without a unit, of `columns` (none: the setting's own).
    const fn count(columns: &'static [&'static str]) -> Axis {
        Axis {
            columns,
            unit: None,
            log: false,
        }
    }
}

/// How a setting is given on the command line of `render` and `verify`.
pub enum CliForm {
    /// No launch flag (the scene's overrides have flags of their own).
    None,
    /// `--NAME VALUE`, the setting's name with `_` written `-`; the value
    /// is read as the same value in a config would be ([`cli_value`]).
    Valued {
        /// The flag's help.
        help: &'static str,
        /// The default the help ends with, where it names one.
        default: Option<fn() -> Value>,
        /// The names the value may take, with their help, where it is one
        /// of a value enum's.
        choices: Option<fn() -> Vec<PossibleValue>>,
    },
    /// A switch: given, it sets the setting to `sets`.
    Switch {
        /// The flag as typed, e.g. `--untimed-launches`.
        flag: &'static str,
        /// The flag's help.
        help: &'static str,
        /// The value the switch gives the setting.
        sets: bool,
    },
}

impl CliForm {
    /// A valued flag whose help ends in its default.
    const fn valued(help: &'static str, default: fn() -> Value) -> CliForm {
        CliForm::Valued {
            help,
            default: Some(default),
            choices: None,
        }
    }

    /// A valued flag taking one of `T`'s names, its help ending in its default.
    const fn choice_of<T: ValueEnum>(help: &'static str, default: fn() -> Value) -> CliForm {
        CliForm::Valued {
            help,
            default: Some(default),
            choices: Some(choices::<T>),
        }
    }

    /// A valued flag whose help names no default.
    const fn plain(help: &'static str) -> CliForm {
        CliForm::Valued {
            help,
            default: None,
            choices: None,
        }
    }

    /// The flag as typed for the setting `name` (empty where none).
    fn flag_text(&self, name: &str) -> String {
        match self {
            CliForm::None => String::new(),
            CliForm::Valued { .. } => format!("--{}", name.replace('_', "-")),
            CliForm::Switch { flag, .. } => flag.to_string(),
        }
    }

    /// The help as the command line shows it: a valued flag's ends in its
    /// default, as clap writes one.
    pub fn help(&self) -> String {
        match self {
            CliForm::None => String::new(),
            CliForm::Valued {
                help, default: None, ..
            } => help.to_string(),
            CliForm::Valued {
                help,
                default: Some(default),
                ..
            } => with_default(help, describe(&default())),
            CliForm::Switch { help, .. } => help.to_string(),
        }
    }
}

/// A help text ending in the default of its flag, as clap shows one.
pub fn with_default(help: &str, default: impl std::fmt::Display) -> String {
    format!("{help} [default: {default}]")
}

/// The names of `T`'s values with their help.
fn choices<T: ValueEnum>() -> Vec<PossibleValue> {
    T::value_variants()
        .iter()
        .filter_map(ValueEnum::to_possible_value)
        .collect()
}

/// A command-line value as the TOML value a config would give: a whole
/// number, a number, a boolean, else the string itself.
pub fn cli_value(text: &str) -> toml::Value {
    let numeric = text.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.');
    if let Ok(n) = text.parse::<i64>() {
        toml::Value::Integer(n)
    } else if let (true, Ok(x)) = (numeric, text.parse::<f64>()) {
        toml::Value::Float(x)
    } else if let Ok(b) = text.parse::<bool>() {
        toml::Value::Boolean(b)
    } else {
        toml::Value::String(text.to_string())
    }
}

impl SettingDecl {
    /// The launch flag as typed, e.g. `--drain-below`, if it has one.
    pub fn flag(&'static self) -> Option<&'static str> {
        match self.cli {
            CliForm::None => None,
            _ => Some(self.cli_names.0.as_str()),
        }
    }

    /// The columns of `runs.csv` that hold the number a report plots for
    /// it, first the one to read (none where it has no [`Axis`]).
    pub fn axis_columns(&self) -> &'static [&'static str] {
        match &self.axis {
            None => &[],
            Some(Axis { columns: [], .. }) => self.columns,
            Some(axis) => axis.columns,
        }
    }

    /// The name of the flag's value in the help, e.g. `DRAIN_BELOW`.
    pub fn value_name(&'static self) -> &'static str {
        self.cli_names.1.as_str()
    }

    /// Parses a value given on the command line, as a config's.
    pub fn parse_cli(&self, text: &str) -> Result<Value, String> {
        match self.cli {
            CliForm::Switch { sets, .. } => (self.parse)(&toml::Value::Boolean(sets)),
            _ => (self.parse)(&cli_value(text)),
        }
    }
}

/// The back-end options that `settings` set over the back ends' defaults,
/// whichever back ends they concern (the command line refuses those that
/// none of its back ends use).
pub fn options_with(settings: &[(&'static SettingDecl, Value)]) -> BackendOptions {
    let mut run = RunSpec::new(PathBuf::new(), BackendKind::Cpu);
    for (decl, value) in settings {
        (decl.apply)(&mut run, value.clone());
    }
    run.options
}

impl std::fmt::Debug for SettingDecl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

// Names are unique in the table, so they identify a setting (comparing the
// function pointers would not be reliable).
impl PartialEq for SettingDecl {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for SettingDecl {}

/// A setting that runs can fix or sweep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Param {
    /// One of [`SETTINGS`].
    Plain(&'static SettingDecl),
    /// A field of the scene file by its path, e.g. `scene.generators[0].grid`.
    SceneField(String),
}

/// The plain settings' names, for messages.
pub fn plain_names() -> Vec<&'static str> {
    SETTINGS.iter().map(|d| d.name).collect()
}

/// A parameter's value, parsed and checked.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A whole number.
    Count(u32),
    /// A fraction from 0 to 1.
    Fraction(f32),
    /// A register cap, or none.
    RegisterCap(Option<u32>),
    /// Width × height.
    Size((u32, u32)),
    /// A tile, or the whole image.
    Tile(Option<(u32, u32)>),
    /// An acceleration structure.
    Accel(AccelChoice),
    /// A wavefront schedule.
    WaveSchedule(WaveSchedule),
    /// A compaction mode.
    Compaction(Compaction),
    /// Whether a shading queue is sorted by variant.
    MaterialSort(MaterialSort),
    /// A pool capacity.
    Capacity(Capacity),
    /// A CPU work distribution.
    CpuSchedule(CpuSchedule),
    /// A random-number sampler.
    Sampler(SamplerKind),
    /// Next-event estimation on or off.
    Nee(NeeMode),
    /// A build of the material-dispatching kernels.
    Kernels(KernelFeatures),
    /// The GPU kernels' float arithmetic.
    Arithmetic(Arithmetic),
    /// A flag.
    Flag(bool),
    /// A scene-file value, checked when the scene loads.
    Scene(toml::Value),
}

impl Param {
    /// The parameter called `name`, if there is one.
    pub fn named(name: &str) -> Option<Param> {
        if let Some(&decl) = SETTINGS.iter().find(|d| d.name == name) {
            return Some(Param::Plain(decl));
        }
        let path = name.strip_prefix("scene.")?;
        scene_path(path).ok()?;
        Some(Param::SceneField(path.to_string()))
    }

    /// The name in configs and reports.
    pub fn name(&self) -> String {
        match self {
            Param::Plain(decl) => decl.name.to_string(),
            Param::SceneField(path) => format!("scene.{path}"),
        }
    }

    /// True where the parameter changes what `backend` does.
    pub fn applies_to(&self, backend: BackendKind) -> bool {
        match self {
            Param::Plain(decl) => decl.scope.contains(backend),
            Param::SceneField(_) => true,
        }
    }

    /// Parses a config value for this parameter.
    pub fn parse(&self, v: &toml::Value) -> Result<Value, String> {
        match self {
            Param::Plain(decl) => (decl.parse)(v),
            Param::SceneField(_) => Ok(Value::Scene(v.clone())),
        }
    }
}

/// A TOML value's kind, for error messages.
fn type_of(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("the string \"{}\"", shorten_for_error(s)),
        toml::Value::Integer(n) => format!("the integer {n}"),
        toml::Value::Float(x) => format!("the number {x}"),
        toml::Value::Boolean(b) => format!("{b}"),
        toml::Value::Datetime(_) => "a date".into(),
        toml::Value::Array(_) => "an array".into(),
        toml::Value::Table(_) => "a table".into(),
    }
}

/// Splits a scene-field path such as `generators[0].grid` into steps.
pub fn scene_path(path: &str) -> Result<Vec<PathStep>, String> {
    let bad = || {
        format!(
            "expected a scene field path such as `generators[0].grid`; got `{}`",
            shorten_for_error(path)
        )
    };
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = part.split_once('[').map_or((part, ""), |(k, r)| (k, r));
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(bad());
        }
        steps.push(document_path::key(key));
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
    /// GPUs that render each image together (the first `gpus` of the
    /// experiment's GPU list), splitting its samples; 1 for the CPU back ends.
    pub gpus: u32,
}

impl RunSpec {
    /// The run with default settings.
    pub(crate) fn new(scene: PathBuf, backend: BackendKind) -> Self {
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
            gpus: 1,
        }
    }

    /// Applies `s` where it concerns this run's back end.
    pub(crate) fn apply(&mut self, s: &Setting) {
        if !s.param.applies_to(self.backend) {
            return;
        }
        match &s.param {
            Param::Plain(decl) => (decl.apply)(self, s.value.clone()),
            // `Param::parse` gives a scene field only `Value::Scene`.
            Param::SceneField(path) => {
                if let Value::Scene(v) = &s.value {
                    self.set_scene_field(path, v.clone());
                }
            }
        }
    }

    /// True where `param` changes what this run does: it concerns the run's
    /// back end and, for `split_all`, the run renders on several GPUs.
    pub(crate) fn uses(&self, param: &Param) -> bool {
        param.applies_to(self.backend) && (*param != Param::Plain(&SPLIT_ALL) || self.gpus > 1)
    }

    /// Leaves at its default what this run does not use ([`RunSpec::uses`]):
    /// the split rule of a render on one GPU, which has no split. Runs that
    /// then become identical are made once.
    pub(crate) fn settle(&mut self) {
        if self.gpus <= 1 {
            self.options.split = SplitRule::default();
        }
    }

    /// Replaces the scene file's field at `path` (e.g. `render.seed`) with
    /// `value` before the scene loads; the last setting of a path wins.
    pub(crate) fn set_scene_field(&mut self, path: &str, value: toml::Value) {
        self.scene_fields.retain(|(p, _)| p != path);
        self.scene_fields.push((path.to_string(), value));
    }

    /// Checks the launch configurations (block shapes, capacities).
    pub fn validate(&self) -> Result<(), String> {
        match self.backend {
            BackendKind::GpuMega => self.options.megakernel.validate(),
            BackendKind::GpuWave | BackendKind::CpuWave => self.options.wavefront.validate(),
            BackendKind::Cpu => check_threads(self.options.threads),
            BackendKind::CpuSerial => Ok(()),
        }
    }
}

/// A value as reports print it.
pub fn describe(v: &Value) -> String {
    match v {
        Value::Count(n) => n.to_string(),
        Value::Fraction(f) => f.to_string(),
        Value::RegisterCap(None) => "none".into(),
        Value::RegisterCap(Some(r)) => r.to_string(),
        Value::Size(s) | Value::Tile(Some(s)) => size_label(*s),
        Value::Tile(None) => "full".into(),
        Value::Accel(a) => a.label().into(),
        Value::WaveSchedule(s) => s.label().into(),
        Value::Compaction(c) => compaction_label(*c).into(),
        Value::MaterialSort(s) => material_sort_label(*s).into(),
        Value::Capacity(c) => c.label(),
        Value::CpuSchedule(s) => s.label().into(),
        Value::Sampler(s) => s.name().into(),
        Value::Nee(n) => n.name().into(),
        Value::Kernels(k) => k.to_string(),
        Value::Arithmetic(a) => a.name().into(),
        Value::Flag(f) => f.to_string(),
        Value::Scene(v) => v.to_string(),
    }
}

// ---- the parsers the table's entries name ----

/// A string value.
fn text(v: &toml::Value) -> Result<&str, String> {
    v.as_str()
        .ok_or_else(|| format!("expected a string, got {}", type_of(v)))
}

/// A whole number from `MIN` to `MAX`.
fn count<const MIN: u32, const MAX: u32>(v: &toml::Value) -> Result<u32, String> {
    let n = v
        .as_integer()
        .ok_or_else(|| format!("expected a whole number, got {}", type_of(v)))?;
    u32::try_from(n)
        .ok()
        .filter(|n| (MIN..=MAX).contains(n))
        .ok_or_else(|| format!("expected a whole number from {MIN} to {MAX}, got {n}"))
}

/// `"WxH"`.
fn size(v: &toml::Value) -> Result<(u32, u32), String> {
    parse_size(text(v)?)
}

/// `"WxH"` or `"full"`.
fn tile(v: &toml::Value) -> Result<Option<(u32, u32)>, String> {
    match text(v)? {
        "full" => Ok(None),
        s => parse_size(s).map(Some),
    }
}

/// One of a value enum's names.
fn named<T: ValueEnum>(v: &toml::Value) -> Result<T, String> {
    choice(text(v)?)
}

/// Next-event estimation: `"on"`, `"off"` or a boolean.
fn nee(v: &toml::Value) -> Result<NeeMode, String> {
    match v.as_bool() {
        Some(on) => Ok(on.into()),
        None => named(v),
    }
}

/// A compaction mode by name.
fn compaction(v: &toml::Value) -> Result<Compaction, String> {
    named::<CompactionArg>(v).map(CompactionArg::mode)
}

/// A material sort by name.
fn material_sort(v: &toml::Value) -> Result<MaterialSort, String> {
    named::<MaterialSortArg>(v).map(MaterialSortArg::mode)
}

/// A fraction from 0 to 1 (an integer 0 or 1 too).
fn fraction(v: &toml::Value) -> Result<f32, String> {
    v.as_float()
        .or_else(|| v.as_integer().map(|n| n as f64))
        .filter(|f| (0.0..=1.0).contains(f))
        .map(|f| f as f32)
        .ok_or_else(|| format!("expected a fraction from 0 to 1, got {v}"))
}

/// A pool capacity, as a string or a plain number of slots.
fn capacity(v: &toml::Value) -> Result<Capacity, String> {
    match v {
        toml::Value::Integer(n) => parse_capacity(&n.to_string()),
        _ => parse_capacity(text(v)?),
    }
}

/// A register cap, or `"none"`.
fn register_cap(v: &toml::Value) -> Result<Option<u32>, String> {
    match v {
        toml::Value::String(s) if s == "none" => Ok(None),
        _ => {
            let cap = count::<1, { u32::MAX }>(v)?;
            check_register_cap(Some(cap))?;
            Ok(Some(cap))
        }
    }
}

/// A kernel feature set by name.
fn kernel_features(v: &toml::Value) -> Result<KernelFeatures, String> {
    text(v)?.parse()
}

/// `"exact"` or `"fast"`.
fn arithmetic(v: &toml::Value) -> Result<Arithmetic, String> {
    parse_arithmetic(text(v)?)
}

/// `true` or `false`.
fn flag(v: &toml::Value) -> Result<bool, String> {
    v.as_bool()
        .ok_or_else(|| format!("expected true or false, got {}", type_of(v)))
}

/// Declares the settings, each once: `ID = "name", Kind(parser), for
/// Scope, |run, value| where it goes;` makes a [`SettingDecl`] `ID`
/// whose parser gives `Value::Kind` and whose `apply` takes the same kind,
/// and lists every one in [`SETTINGS`] in table order. Its value's column
/// in `runs.csv` is its name; `ID = "name" ["column", …], …` names the
/// columns instead (`[]`: none). `flag FORM,` before the `apply` closure
/// declares its launch flag ([`CliForm`]; none without), and `axis AXIS,`
/// after it how reports plot it ([`Axis`]; not as a number without).
macro_rules! settings {
    (@columns $name:literal) => { &[$name] };
    (@columns $name:literal [$($column:literal),*]) => { &[$($column),*] };
    (@cli) => { CliForm::None };
    (@cli $cli:expr) => { $cli };
    (@axis) => { None };
    (@axis $axis:expr) => { Some($axis) };
    ($(
        $(#[$doc:meta])*
        $id:ident = $name:literal $([$($column:literal),*])?, $kind:ident($parse:expr), for $scope:ident,
            $(flag $cli:expr,)? $(axis $axis:expr,)? |$run:ident, $v:ident| $apply:expr;
    )*) => {
        $(
            $(#[$doc])*
            pub static $id: SettingDecl = SettingDecl {
                name: $name,
                columns: settings!(@columns $name $([$($column),*])?),
                scope: Scope::$scope,
                parse: |t| $parse(t).map(Value::$kind),
                // `parse` gives only `Value::$kind`, so the pattern matches
                // every value this setting holds.
                apply: |$run, value| {
                    if let Value::$kind($v) = value {
                        $apply
                    }
                },
                cli: settings!(@cli $($cli)?),
                axis: settings!(@axis $($axis)?),
                cli_names: LazyLock::new(|| ($id.cli.flag_text($name), $name.to_uppercase())),
            };
        )*

        /// Every plain setting, in the order reports and messages list them.
        pub static SETTINGS: &[&SettingDecl] = &[$(&$id),*];
    };
}

settings! {
    /// Image size, `"WxH"`.
    SIZE = "size" [], Size(size), for Every, |r, v| r.overrides.size = Some(v);
    /// Samples per pixel (`report_spp` is the spp asked for, `spp` the
    /// spp rendered, at most `spp_cap`: both are values of it).
    SPP = "spp" ["spp", "report_spp"], Count(count::<1, MAX_SPP>), for Every,
        axis Axis::count(&["report_spp"]),
        |r, n| r.overrides.spp = Some(n);
    /// Maximum ray segments per path.
    DEPTH = "depth" ["max_depth"], Count(count::<1, MAX_DEPTH>), for Every, |r, n| r.overrides.max_depth = Some(n);
    /// RNG seed.
    SEED = "seed", Count(count::<0, { u32::MAX }>), for Every, |r, n| r.overrides.seed = Some(n);
    /// Acceleration structure: none, bvh or kdtree (its column names the
    /// structure `auto` chose too).
    ACCEL = "accel" [], Accel(named), for Every, |r, a| r.overrides.accel = Some(a);
    /// Random-number sampler: hash or sobol.
    SAMPLER = "sampler", Sampler(named), for Every, |r, s| r.overrides.sampler = Some(s);
    /// Next-event estimation: on or off (or a boolean).
    NEE = "nee", Nee(nee), for Every, |r, n| r.overrides.nee = Some(n);
    /// Megakernel block shape, `"XxY"`.
    BLOCK = "block", Size(size), for Megakernel,
        flag CliForm::valued(
            "Megakernel block shape as XxY threads (at most 1024; best a multiple of 32)",
            || Value::Size(DEFAULT_BLOCK),
        ),
        |r, b| r.options.megakernel.block = b;
    /// Megakernel samples per launch.
    SAMPLES_PER_LAUNCH = "samples_per_launch", Count(count::<1, { u32::MAX }>), for Megakernel,
        flag CliForm::valued("Samples per pixel per megakernel launch", || Value::Count(DEFAULT_SAMPLES_PER_LAUNCH)),
        axis Axis::of("samples per pixel"),
        |r, n| r.options.megakernel.samples_per_launch = n;
    /// Megakernel tile, `"WxH"` or `"full"`.
    TILE = "tile", Tile(tile), for Megakernel,
        flag CliForm::plain("Megakernel tile size in pixels (default: the whole image per launch)"),
        |r, t| r.options.megakernel.tile = t;
    /// Wavefront schedule.
    SCHEDULE = "schedule", WaveSchedule(named), for Wavefront,
        flag CliForm::choice_of::<WaveSchedule>(
            "Wavefront: when new camera paths enter the pool",
            || Value::WaveSchedule(DEFAULT_SCHEDULE),
        ),
        |r, s| r.options.wavefront.schedule = s;
    /// Wavefront refill threshold, a fraction of the slots.
    REFILL = "refill", Fraction(fraction), for Wavefront,
        flag CliForm::valued(
            "Wavefront, regenerate: refill the pool once at most this fraction of its slots hold paths \
             (1: every iteration)",
            || Value::Fraction(DEFAULT_REFILL),
        ),
        axis Axis::of("fraction of slots"),
        |r, f| r.options.wavefront.refill = Some(f);
    /// Wavefront compaction.
    COMPACTION = "compaction", Compaction(compaction), for Wavefront,
        flag CliForm::choice_of::<CompactionArg>(
            "Wavefront: how survivors are gathered into the next ray queue",
            || Value::Compaction(DEFAULT_COMPACTION.mode()),
        ),
        |r, c| r.options.wavefront.compaction = c;
    /// Wavefront: sort the coated queue by variant, or not.
    MATERIAL_SORT = "material_sort", MaterialSort(material_sort), for Wavefront,
        flag CliForm::choice_of::<MaterialSortArg>(
            "Wavefront: sort the coated materials' shading queue by noise basis before shading it (`variant`), \
             so that each warp runs one program, or shade in queue order (`off`)",
            || Value::MaterialSort(DEFAULT_MATERIAL_SORT.mode()),
        ),
        |r, s| r.options.wavefront.material_sort = s;
    /// Wavefront pool capacity: `"auto"`, `"2^K"`, a budget or a power of two.
    CAPACITY = "capacity", Capacity(capacity), for Wavefront,
        flag CliForm::valued(
            "Wavefront: paths in flight: a power of two (e.g. 2097152 or 2^21), a memory budget for path state \
             and queues (e.g. 512MiB, 2GiB), or `auto` (every path of the render at once, as far as memory allows)",
            || Value::Capacity(DEFAULT_CAPACITY),
        ),
        // The slots in use where recorded (what `auto` resolved to), else
        // the capacity asked for.
        axis Axis {
            columns: &["pool_capacity", "capacity"],
            unit: Some("paths in flight"),
            log: true,
        },
        |r, c| r.options.wavefront.capacity = c;
    /// Wavefront threads per block.
    WAVE_BLOCK = "wave_block", Count(count::<1, { u32::MAX }>), for Wavefront,
        flag CliForm::valued("Wavefront: threads per block of the per-path kernels", || Value::Count(DEFAULT_WAVE_BLOCK)),
        axis Axis::of("threads per block"),
        |r, n| r.options.wavefront.block = n;
    /// Wavefront tail-drain threshold (0: never).
    DRAIN_BELOW = "drain_below", Count(count::<0, { u32::MAX }>), for Wavefront,
        flag CliForm::valued(
            "Wavefront: when no new path joins (all samples issued, or a bounce-synchronous wave running down) \
             and at most this many paths remain, finish them in one drain launch (0: never)",
            || Value::Count(DEFAULT_DRAIN_BELOW),
        ),
        axis Axis::of("paths"),
        |r, n| r.options.wavefront.drain_below = n;
    /// CPU threads of the `cpu` back end (0: one per core; its column holds
    /// the threads that ran).
    THREADS = "threads" [], Count(count::<0, { MAX_THREADS as u32 }>), for Cpu,
        flag CliForm::valued(
            "CPU threads for the `cpu` back end (0: one per core; at most 1024)",
            || Value::Count(DEFAULT_THREADS as u32),
        ),
        axis Axis::count(&["threads"]),
        |r, n| r.options.threads = n as usize;
    /// How `cpu` divides the image.
    CPU_SCHEDULE = "cpu_schedule", CpuSchedule(named), for Cpu,
        flag CliForm::choice_of::<CpuSchedule>(
            "How the `cpu` back end divides the image between its threads",
            || Value::CpuSchedule(CpuSchedule::default()),
        ),
        |r, s| r.options.cpu_schedule = s;
    /// Count active lanes per warp (GPU back ends; a diagnosis setting; its
    /// column holds false for the other back ends).
    COUNT_DIVERGENCE = "count_divergence" [], Flag(flag), for Gpu,
        flag CliForm::Switch {
            flag: "--count-divergence",
            help: "Count active lanes per warp at the material branch (a diagnosis run: the counting atomics cost time)",
            sets: true,
        },
        |r, f| {
        r.options.megakernel.count_divergence = f;
        r.options.wavefront.count_divergence = f;
    };
    /// Time each wavefront launch with CUDA events (off: wall time only).
    TIME_LAUNCHES = "time_launches", Flag(flag), for GpuWave,
        flag CliForm::Switch {
            flag: "--untimed-launches",
            help: "Wavefront: do not time each launch with CUDA events (the events cost GPU time between the many \
                   small launches; only the wall time and no per-kernel profile are then measured)",
            sets: false,
        },
        |r, f| r.options.wavefront.time_launches = f;
    /// Which features the kernels are bound to: `"exact"`, `"all"` or
    /// `"exact+FEATURE+…"`.
    KERNELS = "kernels", Kernels(kernel_features), for Dispatching,
        flag CliForm::valued(
            "Megakernel and wavefronts: the features the kernels hold: `exact` (what the render uses), `all`, \
             or `exact+FEATURE+…`",
            || Value::Kernels(KernelFeatures::EXACT),
        ),
        |r, k| {
        r.options.megakernel.kernels = k;
        r.options.wavefront.kernels = k;
    };
    /// The GPU kernels' float arithmetic: `"exact"` or `"fast"`.
    ARITHMETIC = "arithmetic", Arithmetic(arithmetic), for Gpu,
        flag CliForm::valued(
            "GPU back ends: the kernels' float arithmetic: `exact` (IEEE-strict, the CPU's image bit for bit) or \
             `fast` (the hardware's approximate division, square root and transcendental functions: the GPU back \
             ends agree with each other bit for bit, and with the CPU within half the Monte Carlo noise)",
            || Value::Arithmetic(Arithmetic::Exact),
        ),
        |r, a| {
        r.options.megakernel.arithmetic = a;
        r.options.wavefront.arithmetic = a;
    };
    /// Registers per thread every GPU kernel may use, or `"none"`.
    MAX_REGISTERS = "max_registers", RegisterCap(register_cap), for Gpu,
        flag CliForm::plain(
            "Cap every GPU kernel at this many registers per thread (16 to 255; the driver's JIT spills what does \
             not fit to local memory). Without it the megakernel keeps its tuned default cap and the wavefront is \
             not capped",
        ),
        axis Axis::of("registers per thread"),
        |r, cap| {
        r.options.megakernel.max_registers = cap;
        r.options.wavefront.max_registers = cap;
    };
    /// First bounce at which Russian roulette may end a path (0: never): the
    /// scene's `render.roulette_start`, so film groups and `scene_overrides` show it.
    ROULETTE = "roulette" [], Count(count::<0, { u32::MAX }>), for Every,
        |r, n| r.set_scene_field("render.roulette_start", toml::Value::Integer(n.into()));
    /// GPUs that render one image together, splitting its samples (GPU
    /// back ends; 1: the run's own GPU).
    GPUS = "gpus", Count(count::<1, MAX_GPUS>), for Gpu, axis Axis::count(&[]), |r, n| r.gpus = n;
    /// With `gpus` above 1: every GPU renders a share of each image, even
    /// where joining would not pay for its film (false: only those that
    /// pay; docs/mpi.md, "Several GPUs").
    SPLIT_ALL = "split_all", Flag(flag), for Gpu,
        flag CliForm::Switch {
            flag: "--split-all",
            help: "With `--devices`: every GPU renders a share, even where joining would not pay for its film (by \
                   default a GPU ready after the first joins only when it saves more time than its film costs)",
            sets: true,
        },
        |r, f| r.options.split = if f { SplitRule::Every } else { SplitRule::Paying };
    /// Render at most this many spp and scale the time linearly to the spp
    /// asked for (for serial runs that would take too long at full settings).
    SPP_CAP = "spp_cap" [], Count(count::<1, MAX_SPP>), for Every, |r, n| r.spp_cap = Some(n);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scene_paths_split_into_keys_and_indices() {
        assert_eq!(
            scene_path("generators[0].grid"),
            Ok(vec![
                document_path::key("generators"),
                PathStep::Index(0),
                document_path::key("grid")
            ])
        );
        assert_eq!(
            scene_path("a[1][2]"),
            Ok(vec![document_path::key("a"), PathStep::Index(1), PathStep::Index(2)])
        );
        for bad in ["", "a..b", "a[x]", "a[1", "a[1]b", "a b"] {
            assert!(scene_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_param_name_round_trips() {
        for n in plain_names() {
            assert_eq!(Param::named(n).map(|p| p.name()).as_deref(), Some(n));
        }
        assert_eq!(
            Param::named("scene.render.spp"),
            Some(Param::SceneField("render.spp".into()))
        );
        assert_eq!(Param::named("blocks"), None);
    }

    #[test]
    fn every_column_a_setting_names_is_a_column_of_the_runs_file() {
        let header = crate::records::header::<crate::records::RunRow>().unwrap();
        let mut named: Vec<&str> = Vec::new();
        for decl in SETTINGS {
            for column in decl.columns {
                assert!(header.iter().any(|c| c == column), "{}: `{column}`", decl.name);
                assert!(!named.contains(column), "`{column}` named twice");
                named.push(column);
            }
        }
        // A report reads a setting's number from columns of the file too.
        for decl in SETTINGS {
            for column in decl.axis_columns() {
                assert!(header.iter().any(|c| c == column), "{} axis: `{column}`", decl.name);
            }
        }
        assert_eq!(DRAIN_BELOW.axis_columns(), ["drain_below"]);
        assert_eq!(CAPACITY.axis_columns(), ["pool_capacity", "capacity"]);
        assert!(SEED.axis_columns().is_empty());
        // A setting whose name is a column holds its values there, unless
        // the entry says otherwise.
        assert_eq!(DRAIN_BELOW.columns, ["drain_below"]);
        assert_eq!(SPP.columns, ["spp", "report_spp"]);
        assert!(THREADS.columns.is_empty());
    }

    #[test]
    fn a_command_line_value_reads_as_the_toml_value_a_config_would_give() {
        use toml::Value as T;
        assert_eq!(cli_value("262144"), T::Integer(262144));
        assert_eq!(cli_value("-3"), T::Integer(-3));
        assert_eq!(cli_value("0.5"), T::Float(0.5));
        assert_eq!(cli_value("true"), T::Boolean(true));
        for text in ["8x8", "2^21", "512MiB", "auto", "exact+nee", "nan", "inf", ""] {
            assert_eq!(cli_value(text), T::String(text.into()), "{text}");
        }
        // Through a setting's parser, a flag's value means what the same
        // value in a config means.
        assert_eq!(DRAIN_BELOW.parse_cli("300"), Ok(Value::Count(300)));
        assert_eq!(REFILL.parse_cli("1"), Ok(Value::Fraction(1.0)));
        assert_eq!(TILE.parse_cli("full"), Ok(Value::Tile(None)));
        assert!(DRAIN_BELOW.parse_cli("-1").is_err());
        // A switch sets its declared value.
        assert_eq!(TIME_LAUNCHES.parse_cli(""), Ok(Value::Flag(false)));
        assert_eq!(SPLIT_ALL.parse_cli(""), Ok(Value::Flag(true)));
    }

    #[test]
    fn a_valued_flag_is_the_settings_name_and_a_switch_its_own() {
        assert_eq!(DRAIN_BELOW.flag(), Some("--drain-below"));
        assert_eq!(DRAIN_BELOW.value_name(), "DRAIN_BELOW");
        assert_eq!(SAMPLES_PER_LAUNCH.flag(), Some("--samples-per-launch"));
        assert_eq!(TIME_LAUNCHES.flag(), Some("--untimed-launches"));
        assert_eq!(SEED.flag(), None);
        assert_eq!(
            DRAIN_BELOW.cli.help(),
            format!(
                "{} [default: {DEFAULT_DRAIN_BELOW}]",
                match DRAIN_BELOW.cli {
                    CliForm::Valued { help, .. } => help,
                    _ => unreachable!(),
                }
            )
        );
        // Every flag once.
        let flags: Vec<_> = SETTINGS.iter().filter_map(|d| d.flag()).collect();
        for (i, f) in flags.iter().enumerate() {
            assert!(!flags[..i].contains(f), "{f} twice");
        }
    }

    #[test]
    fn options_with_settings_apply_over_the_back_ends_defaults() {
        assert_eq!(options_with(&[]), BackendOptions::default());
        let options = options_with(&[(&DRAIN_BELOW, Value::Count(7)), (&SPLIT_ALL, Value::Flag(true))]);
        assert_eq!(options.wavefront.drain_below, 7);
        assert_eq!(options.split, SplitRule::Every);
        assert_eq!(options.megakernel, BackendOptions::default().megakernel);
    }

    #[test]
    fn gpus_is_a_count_for_the_gpu_back_ends() {
        let gpus = Param::named("gpus").unwrap();
        assert_eq!(gpus.parse(&toml::Value::Integer(2)), Ok(Value::Count(2)));
        for bad in [toml::Value::Integer(0), toml::Value::Integer(i64::from(MAX_GPUS) + 1)] {
            let e = gpus.parse(&bad).unwrap_err();
            assert!(e.contains(&format!("from 1 to {MAX_GPUS}")), "{e}");
        }
        assert!(gpus.parse(&toml::Value::String("2".into())).is_err());
        assert!(gpus.applies_to(BackendKind::GpuMega) && gpus.applies_to(BackendKind::GpuWave));
        assert!(!gpus.applies_to(BackendKind::Cpu) && !gpus.applies_to(BackendKind::CpuWave));
        let mut run = RunSpec::new(PathBuf::from("a.toml"), BackendKind::GpuWave);
        assert_eq!(run.gpus, 1);
        run.apply(&Setting {
            param: gpus,
            value: Value::Count(2),
        });
        assert_eq!(run.gpus, 2);
    }
}
