//! Reading an experiment folder: `runs.csv`, `kernels.csv` and
//! `manifest.toml`, each into serde structs of only the columns and keys the
//! report uses. A CSV must name every column its struct reads; errors name
//! the file and what was expected.

use anyhow::{Context, bail};
use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Visitor};
use std::path::Path;

/// One timed run: a row of `runs.csv` (columns the report reads).
#[derive(Debug, Clone, Deserialize)]
pub struct RunRow {
    /// Study the run belongs to.
    pub study: String,
    /// Configuration index within the study.
    pub run: u32,
    /// Configuration label.
    pub config: String,
    /// Scene path.
    pub scene: String,
    /// Scene file stem.
    pub scene_name: String,
    /// Scene field overrides, e.g. `generators[0].grid=44`.
    pub scene_overrides: Option<String>,
    /// Primitive count of the scene.
    pub primitives: u64,
    /// Back end name.
    pub backend: String,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Samples per pixel actually rendered.
    pub spp: u32,
    /// Path depth limit.
    pub max_depth: u32,
    /// Random seed.
    pub seed: u64,
    /// Samples per pixel the time is reported at.
    pub report_spp: u32,
    /// Acceleration structure.
    pub accel: String,
    /// Megakernel samples per launch.
    pub samples_per_launch: Option<u32>,
    /// Wavefront pool capacity (`2^K` or `auto`).
    pub capacity: Option<String>,
    /// Wavefront block size.
    pub wave_block: Option<u32>,
    /// Wavefront tail-drain threshold.
    pub drain_below: Option<u64>,
    /// Effective CPU threads.
    pub threads: Option<u32>,
    /// CPU schedule.
    pub cpu_schedule: Option<String>,
    /// Wall time scaled to `report_spp`, in ms.
    pub scaled_wall_ms: f64,
    /// Rays traced at `spp`.
    pub rays: u64,
    /// Registers per GPU thread.
    pub registers: Option<u32>,
    /// Theoretical occupancy, 0..1.
    pub occupancy: Option<f64>,
}

/// One kernel's profile in one GPU run: a row of `kernels.csv`.
#[derive(Debug, Clone, Deserialize)]
pub struct KernelRow {
    /// Study the run belongs to.
    pub study: String,
    /// Configuration index within the study.
    pub run: u32,
    /// Kernel name.
    pub kernel: String,
    /// Total time of the kernel's launches, in ms.
    pub total_ms: f64,
    /// Mean active lanes per warp at the material branch.
    pub active_lanes: Option<f64>,
}

/// `manifest.toml`: what was run, where and how it went.
#[derive(Debug, Deserialize)]
pub struct Manifest {
    /// The experiment itself.
    pub experiment: Experiment,
    /// The host machine.
    #[serde(default)]
    pub host: Host,
    /// The GPU, when one was used.
    pub device: Option<Device>,
    /// The build that ran it.
    #[serde(default)]
    pub build: Build,
    /// The studies, in file order.
    #[serde(default, rename = "study")]
    pub studies: Vec<Study>,
    /// Configurations that were not run.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// Launch overhead of the GPU rows.
    pub overhead: Option<Overhead>,
}

/// `[experiment]`.
#[derive(Debug, Deserialize)]
pub struct Experiment {
    /// Experiment name.
    pub name: String,
    /// What it measures.
    #[serde(default)]
    pub description: String,
    /// Config file path.
    pub config: String,
    /// Command line that ran it.
    pub command: String,
    /// Start time.
    #[serde(default)]
    pub started: String,
    /// End time.
    #[serde(default)]
    pub finished: String,
}

/// `[host]`.
#[derive(Debug, Default, Deserialize)]
pub struct Host {
    /// CPU model.
    #[serde(default)]
    pub cpu: String,
    /// Hardware threads.
    pub cpu_threads: Option<u32>,
}

/// `[device]`.
#[derive(Debug, Deserialize)]
pub struct Device {
    /// GPU name.
    pub name: String,
    /// Driver version.
    #[serde(default)]
    pub driver: String,
    /// Compute capability.
    #[serde(default)]
    pub compute_capability: String,
}

/// `[build]`.
#[derive(Debug, Default, Deserialize)]
pub struct Build {
    /// Crate version.
    #[serde(default)]
    pub version: String,
    /// Commit hash.
    #[serde(default)]
    pub commit: String,
    /// Whether tracked files differed from the commit.
    #[serde(default)]
    pub dirty: bool,
}

/// One `[[study]]`.
#[derive(Debug, Deserialize)]
pub struct Study {
    /// Study name.
    pub name: String,
    /// What it measures.
    #[serde(default)]
    pub description: String,
    /// Back end the speedups are against.
    pub baseline: Option<String>,
    /// Swept parameter names, in file order.
    #[serde(default)]
    pub swept: Vec<String>,
    /// Configurations planned.
    pub runs_planned: Option<u32>,
    /// Rows written.
    pub rows: Option<u32>,
    /// `complete`, `failed: ...` or `skipped: ...`.
    #[serde(default)]
    pub status: String,
    /// Outcome of the identical-film check.
    pub film_check: Option<String>,
    /// A remark, e.g. on scaled rows.
    pub note: Option<String>,
    /// Published figures to compare with.
    #[serde(default)]
    pub published: Vec<Published>,
}

/// One `[[study.published]]` figure.
#[derive(Debug, Deserialize)]
pub struct Published {
    /// Where it was published.
    pub source: String,
    /// The hardware it was measured on.
    #[serde(default)]
    pub hardware: String,
    /// The published number.
    pub value: f64,
    /// `x`, `ms`, `s` or `Mrays/s`.
    pub unit: String,
    /// Our back end it corresponds to.
    pub backend: String,
    /// Scene name it belongs to, if any.
    pub scene: Option<String>,
}

/// One `[[skipped]]` configuration.
#[derive(Debug, Deserialize)]
pub struct Skipped {
    /// Study it belongs to.
    pub study: String,
    /// Configuration label.
    pub config: String,
    /// Why it was not run.
    pub reason: String,
}

/// `[overhead]`: launch overhead as a fraction of GPU time.
#[derive(Debug, Deserialize)]
pub struct Overhead {
    /// GPU rows measured.
    pub gpu_rows: u32,
    /// Median fraction.
    pub median_fraction: f64,
    /// Largest fraction.
    pub max_fraction: f64,
}

/// Reads `runs.csv`; it must exist.
pub fn read_runs(path: &Path) -> anyhow::Result<Vec<RunRow>> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "{}: cannot read the runs file (expected a CSV of timed runs)",
            path.display()
        )
    })?;
    parse_csv(path, &text)
}

/// Reads `kernels.csv`; an absent or empty file means no kernel profiles.
pub fn read_kernels(path: &Path) -> anyhow::Result<Vec<KernelRow>> {
    match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("{}: cannot read the kernel profiles", path.display())),
        Ok(text) if text.trim().is_empty() => Ok(Vec::new()),
        Ok(text) => parse_csv(path, &text),
    }
}

/// Reads `manifest.toml`.
pub fn read_manifest(path: &Path) -> anyhow::Result<Manifest> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the experiment manifest", path.display()))?;
    toml::from_str(&text).with_context(|| {
        format!(
            "{}: not a valid experiment manifest (expected [experiment] with name, config and command)",
            path.display()
        )
    })
}

/// Parses CSV `text` (from `path`) into rows of `T`, by header name.
fn parse_csv<T: DeserializeOwned>(path: &Path, text: &str) -> anyhow::Result<Vec<T>> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::Headers)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .with_context(|| format!("{}: cannot read the header line", path.display()))?
        .clone();
    let needed = struct_fields::<T>();
    if let Some(missing) = needed.iter().find(|f| !headers.iter().any(|h| h == **f)) {
        bail!(
            "{}: missing column `{missing}` (the report needs the columns {})",
            path.display(),
            needed.join(", ")
        );
    }
    reader
        .deserialize()
        .map(|row| row.with_context(|| format!("{}: bad row", path.display())))
        .collect()
}

/// The field names serde's derived `Deserialize` of `T` asks for, i.e. the
/// columns a CSV must have for `T`.
fn struct_fields<T: DeserializeOwned>() -> &'static [&'static str] {
    let mut capture = FieldCapture(&[]);
    // The capture always fails once it has the names; only they matter.
    let _ = T::deserialize(&mut capture);
    capture.0
}

/// A deserializer that only records the field names of the struct asked for.
struct FieldCapture(&'static [&'static str]);

impl<'de> de::Deserializer<'de> for &mut FieldCapture {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0 = fields;
        Err(de::Error::custom("field names captured"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_fields_lists_the_columns() {
        let fields = struct_fields::<KernelRow>();
        assert_eq!(fields, ["study", "run", "kernel", "total_ms", "active_lanes"]);
    }

    #[test]
    fn missing_column_is_named_with_the_file() {
        let text = "study,run,kernel,active_lanes\ns,0,extend,\n";
        let err = parse_csv::<KernelRow>(Path::new("dir/kernels.csv"), text).unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("dir/kernels.csv") && msg.contains("`total_ms`"), "{msg}");
    }

    #[test]
    fn empty_cells_are_none_and_extra_columns_ignored() {
        let text = "experiment,study,run,kernel,total_ms,active_lanes\ne,s,1,extend,2.5,\n";
        let rows = parse_csv::<KernelRow>(Path::new("k.csv"), text).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].active_lanes, None);
        assert_eq!(rows[0].total_ms, 2.5);
    }
}
