//! The settings a run can fix or sweep, declared once ([`Param`]): their
//! names, the values they take, the back ends they concern and where each
//! goes in a run ([`RunSpec`]).

use crate::accel::AccelChoice;
use crate::backend::cpu::CpuSchedule;
use crate::backend::wavefront::{Capacity, Schedule, compaction_label};
use crate::backend::{BackendKind, BackendOptions};
use crate::render::Overrides;
use clap::ValueEnum;
use device::launch::Compaction;
use std::path::PathBuf;

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
    /// Wavefront refill threshold, a fraction of the slots.
    Refill,
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
    /// Time each wavefront launch with CUDA events (off: wall time only).
    TimeLaunches,
    /// Registers per thread every GPU kernel may use, or `"none"`.
    MaxRegisters,
    /// Render at most this many spp and scale the time linearly to the spp
    /// asked for (for serial runs that would take too long at full settings).
    SppCap,
    /// A field of the scene file by its path, e.g. `scene.generators[0].grid`.
    SceneField(String),
}

/// The plain parameters and their names in configs and reports, in the
/// order reports list them.
pub const PLAIN_PARAMS: [(&str, Param); 20] = [
    ("size", Param::Size),
    ("spp", Param::Spp),
    ("depth", Param::Depth),
    ("seed", Param::Seed),
    ("accel", Param::Accel),
    ("block", Param::Block),
    ("samples_per_launch", Param::SamplesPerLaunch),
    ("tile", Param::Tile),
    ("schedule", Param::Schedule),
    ("refill", Param::Refill),
    ("compaction", Param::Compaction),
    ("capacity", Param::Capacity),
    ("wave_block", Param::WaveBlock),
    ("drain_below", Param::DrainBelow),
    ("threads", Param::Threads),
    ("cpu_schedule", Param::CpuSchedule),
    ("count_divergence", Param::CountDivergence),
    ("time_launches", Param::TimeLaunches),
    ("max_registers", Param::MaxRegisters),
    ("spp_cap", Param::SppCap),
];

/// The plain parameters' names, for messages.
pub fn plain_names() -> Vec<&'static str> {
    PLAIN_PARAMS.iter().map(|(n, _)| *n).collect()
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
        if let Some((_, p)) = PLAIN_PARAMS.iter().find(|(n, _)| *n == name) {
            return Some(p.clone());
        }
        let path = name.strip_prefix("scene.")?;
        scene_path(path).ok()?;
        Some(Param::SceneField(path.to_string()))
    }

    /// The name in configs and reports.
    pub fn name(&self) -> String {
        match self {
            Param::SceneField(path) => format!("scene.{path}"),
            p => PLAIN_PARAMS
                .iter()
                .find(|(_, q)| q == p)
                .map_or_else(String::new, |(n, _)| n.to_string()),
        }
    }

    /// True where the parameter changes what `backend` does.
    pub fn applies_to(&self, backend: BackendKind) -> bool {
        use BackendKind::*;
        match self {
            Param::Block | Param::SamplesPerLaunch | Param::Tile => backend == GpuMega,
            Param::Schedule
            | Param::Refill
            | Param::Compaction
            | Param::Capacity
            | Param::WaveBlock
            | Param::DrainBelow => backend.is_wavefront(),
            Param::Threads | Param::CpuSchedule => backend == Cpu,
            Param::CountDivergence => backend.is_gpu(),
            Param::TimeLaunches => backend == BackendKind::GpuWave,
            Param::MaxRegisters => backend.is_gpu(),
            _ => true,
        }
    }

    /// Parses a config value for this parameter.
    pub fn parse(&self, v: &toml::Value) -> Result<Value, String> {
        let text = || {
            v.as_str()
                .ok_or_else(|| format!("expected a string, got {}", type_of(v)))
        };
        let count_in = |range: std::ops::RangeInclusive<u32>| -> Result<u32, String> {
            let n = v
                .as_integer()
                .ok_or_else(|| format!("expected a whole number, got {}", type_of(v)))?;
            u32::try_from(n).ok().filter(|n| range.contains(n)).ok_or_else(|| {
                format!(
                    "expected a whole number from {} to {}, got {n}",
                    range.start(),
                    range.end()
                )
            })
        };
        let count = |min: u32| count_in(min..=u32::MAX);
        Ok(match self {
            Param::Size | Param::Block => Value::Size(crate::cli::parse_size(text()?)?),
            Param::Tile => Value::Tile(match text()? {
                "full" => None,
                s => Some(crate::cli::parse_size(s)?),
            }),
            Param::Spp | Param::SppCap => Value::Count(count_in(1..=crate::scene::MAX_SPP)?),
            Param::Depth => Value::Count(count_in(1..=crate::scene::MAX_DEPTH)?),
            Param::SamplesPerLaunch | Param::WaveBlock => Value::Count(count(1)?),
            Param::Threads => Value::Count(count_in(0..=crate::backend::cpu::MAX_THREADS as u32)?),
            Param::Seed | Param::DrainBelow => Value::Count(count(0)?),
            Param::Accel => Value::Accel(choice(text()?)?),
            Param::Schedule => Value::Schedule(choice(text()?)?),
            Param::MaxRegisters => Value::RegisterCap(match v {
                toml::Value::String(s) if s == "none" => None,
                _ => {
                    let cap = count(1)?;
                    crate::backend::gpu::megakernel::check_register_cap(Some(cap))?;
                    Some(cap)
                }
            }),
            Param::Refill => Value::Fraction(
                v.as_float()
                    .or_else(|| v.as_integer().map(|n| n as f64))
                    .filter(|f| (0.0..=1.0).contains(f))
                    .ok_or_else(|| format!("expected a fraction from 0 to 1, got {v}"))? as f32,
            ),
            Param::Compaction => Value::Compaction(choice::<crate::cli::CompactionArg>(text()?)?.mode()),
            Param::Capacity => Value::Capacity(match v {
                toml::Value::Integer(n) => crate::cli::parse_capacity(&n.to_string())?,
                _ => crate::cli::parse_capacity(text()?)?,
            }),
            Param::CpuSchedule => Value::CpuSchedule(choice(text()?)?),
            Param::CountDivergence | Param::TimeLaunches => Value::Flag(
                v.as_bool()
                    .ok_or_else(|| format!("expected true or false, got {}", type_of(v)))?,
            ),
            Param::SceneField(_) => Value::Scene(v.clone()),
        })
    }
}

/// One of a `clap::ValueEnum`'s names.
pub fn choice<T: ValueEnum>(s: &str) -> Result<T, String> {
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
        }
    }

    /// Applies `s` where it concerns this run's back end.
    pub(crate) fn apply(&mut self, s: &Setting) {
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
            (Param::Refill, Value::Fraction(f)) => w.refill = f,
            (Param::MaxRegisters, Value::RegisterCap(cap)) => {
                m.max_registers = cap;
                w.max_registers = cap;
            }
            (Param::Compaction, Value::Compaction(v)) => w.compaction = v,
            (Param::Capacity, Value::Capacity(v)) => w.capacity = v,
            (Param::WaveBlock, Value::Count(n)) => w.block = n,
            (Param::DrainBelow, Value::Count(n)) => w.drain_below = n,
            (Param::Threads, Value::Count(n)) => self.options.threads = n as usize,
            (Param::CpuSchedule, Value::CpuSchedule(v)) => self.options.cpu_schedule = v,
            (Param::TimeLaunches, Value::Flag(f)) => w.time_launches = f,
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
            BackendKind::GpuWave | BackendKind::CpuWave => self.options.wavefront.validate(),
            BackendKind::Cpu => crate::backend::cpu::check_threads(self.options.threads),
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
        for n in plain_names() {
            assert_eq!(Param::named(n).map(|p| p.name()).as_deref(), Some(n));
        }
        assert_eq!(
            Param::named("scene.render.spp"),
            Some(Param::SceneField("render.spp".into()))
        );
        assert_eq!(Param::named("blocks"), None);
    }
}
