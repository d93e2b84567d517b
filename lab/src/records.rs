//! What an experiment writes: `runs.csv` (one row per timed run),
//! `kernels.csv` (the per-kernel profile of every GPU run) and
//! `manifest.toml` (the config as run, the host, the device, times, skips and
//! the film checks). Rows are appended and flushed one by one, so an
//! interrupted experiment keeps every finished row.

use crate::config::Published;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// One timed run: every parameter with its effective value (empty where it
/// does not apply to the back end), the timings, and where it ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    /// The experiment's name.
    pub experiment: String,
    /// The study.
    pub study: String,
    /// The configuration's index within the study.
    pub run: u32,
    /// What varies within the study, e.g. `gpu-mega block=8x8`.
    pub config: String,
    /// A fingerprint of the configuration's every setting (the planned
    /// run's `key`): `--resume` matches rows to the runs a config plans by
    /// it (empty where it was not recorded: such a row matches none).
    pub config_key: String,
    /// Repetition from 0.
    pub repetition: u32,
    /// The scene file.
    pub scene: String,
    /// Its stem.
    pub scene_name: String,
    /// Scene fields replaced, `path=value` separated by `;`.
    pub scene_overrides: String,
    /// Primitives in the scene.
    pub primitives: u64,
    /// The back end.
    pub backend: String,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Samples per pixel rendered.
    pub spp: u32,
    /// Maximum ray segments per path.
    pub max_depth: u32,
    /// RNG seed.
    pub seed: u32,
    /// Random-number sampler, `hash` or `sobol`.
    pub sampler: String,
    /// Next-event estimation, `on` or `off`.
    pub nee: String,
    /// The spp the time is reported at (`spp` unless scaled).
    pub report_spp: u32,
    /// Acceleration structure.
    pub accel: String,
    /// Its build settings.
    pub accel_settings: String,
    /// Its build time, ms.
    pub accel_build_ms: f64,
    /// Its nodes.
    pub accel_nodes: usize,
    /// Its bytes.
    pub accel_bytes: usize,
    /// Megakernel block shape.
    pub block: Option<String>,
    /// Megakernel samples per launch.
    pub samples_per_launch: Option<u32>,
    /// Megakernel tile.
    pub tile: Option<String>,
    /// Wavefront schedule.
    pub schedule: Option<String>,
    /// Wavefront refill threshold (regenerate), a fraction of the slots.
    pub refill: Option<f32>,
    /// Wavefront compaction.
    pub compaction: Option<String>,
    /// Wavefront: whether the coated queue was sorted by variant (`off`,
    /// `variant`), as asked for (only scenes with two or more variants sort).
    pub material_sort: Option<String>,
    /// Wavefront pool capacity as asked for (`auto` or `2^K`).
    pub capacity: Option<String>,
    /// Wavefront threads per block.
    pub wave_block: Option<u32>,
    /// Wavefront tail-drain threshold.
    pub drain_below: Option<u32>,
    /// CPU threads that ran.
    pub threads: Option<usize>,
    /// CPU work distribution.
    pub cpu_schedule: Option<String>,
    /// Registers per thread the GPU kernels were capped at (empty: none).
    pub max_registers: Option<u32>,
    /// GPU megakernel and wavefronts: the features the kernels were bound
    /// to, as asked for (`exact`, `all` or `exact+FEATURE+…`).
    pub kernels: Option<String>,
    /// GPU back ends: the kernels' float arithmetic, `exact` or `fast`.
    pub arithmetic: Option<String>,
    /// Whether divergence was counted (timings then include the counting).
    pub count_divergence: bool,
    /// GPU wavefront: whether each launch was timed with CUDA events (the
    /// events cost time between small launches; off, only the wall time is
    /// measured and the kernel times are NaN). Empty for other back ends.
    pub time_launches: Option<bool>,
    /// Render wall time (the launch loop for GPUs), ms.
    pub wall_ms: f64,
    /// `wall_ms × report_spp / spp`.
    pub scaled_wall_ms: f64,
    /// Sum of kernel times, ms (GPU).
    pub kernel_ms: f64,
    /// Loop time outside kernels, ms (GPU).
    pub overhead_ms: f64,
    /// Scene upload (0 once the scene is on the device) and state allocation, ms (GPU).
    pub upload_ms: f64,
    /// Film readback, ms (GPU).
    pub readback_ms: f64,
    /// The whole render call: allocation, upload, loop, readback, ms.
    pub total_ms: f64,
    /// The runner's own time for the row (record, check, write), ms.
    pub runner_ms: f64,
    /// The processes whose renders make up this one: 1, or more for a CPU
    /// render a stop request cut short and `--resume` finished
    /// ([`super::partial`]); its times and counts are then the parts' sums.
    pub parts: RenderParts,
    /// Kernel launches.
    pub launches: usize,
    /// Ray segments traced.
    pub rays: u64,
    /// Rays per second over the wall time.
    pub rays_per_s: f64,
    /// Pixel-samples per second over the wall time.
    pub samples_per_s: f64,
    /// Registers per thread of the tracing kernel (megakernel or extend).
    pub registers: Option<u32>,
    /// Its local memory per thread, bytes.
    pub local_bytes: Option<u32>,
    /// Its theoretical occupancy.
    pub occupancy: Option<f64>,
    /// Path state and queue bytes (wavefront).
    pub state_bytes: Option<usize>,
    /// Path slots in flight (wavefront).
    pub pool_capacity: Option<usize>,
    /// NaN or infinite samples dropped.
    pub invalid_samples: u64,
    /// FNV-1a of the film: equal films, equal hashes.
    pub film_hash: String,
    /// Error against the study's reference image (empty without one):
    /// root mean squared error over every channel.
    pub rmse: Option<f64>,
    /// Relative MSE against the reference (ε = 0.01).
    pub rel_mse: Option<f64>,
    /// Mean absolute error against the reference.
    pub mae: Option<f64>,
    /// Mean FLIP error against the reference, the images as displayed.
    pub flip: Option<f64>,
    /// What rendered, e.g. `cpu (16 threads, dynamic-rows)` or the GPU.
    pub device: String,
    /// The GPU of the session, if one was opened; with several
    /// (`--devices`), the one that rendered a GPU run.
    pub gpu: String,
    /// The ordinal of the GPU that rendered a GPU run (empty for the CPU
    /// back ends, and for runs over several GPUs, whose `device` names
    /// them).
    pub gpu_ordinal: Option<usize>,
    /// GPUs that rendered the image together (GPU back ends; empty for the
    /// CPU's).
    pub gpus: Option<u32>,
    /// With `gpus` above 1: whether every GPU rendered a share (`split_all`)
    /// or only those whose share paid for their film (empty otherwise).
    pub split_all: Option<bool>,
    /// For an image split over several GPUs: the busiest GPU's time over
    /// the mean, less one (0: perfectly balanced).
    pub split_imbalance: Option<f64>,
    /// For an image split over several GPUs: each GPU's samples per pixel,
    /// in the order of the split's GPUs, space-separated (empty otherwise).
    pub split_spp: String,
    /// Each such GPU's busy time in its renders, ms, in the same order.
    pub split_busy_ms: String,
    /// Each such GPU's setup before it could render (binding its context,
    /// the scene's upload when it was not made before, allocating its film
    /// and path state), ms, in the same order (empty for MPI ranks).
    pub split_setup_ms: String,
    /// Each such GPU's first chunk, ms (part of its busy time; 0 for a GPU
    /// that stayed out).
    pub split_first_ms: String,
    /// Each such GPU's readback of its film, once after its last chunk, ms.
    pub split_readback_ms: String,
    /// Each such GPU's idle time at the end, while the others finished, ms.
    pub split_idle_ms: String,
    /// The merge of the GPUs' films after the last finished, ms.
    pub split_merge_ms: Option<f64>,
    /// The MPI rank that made the row (`mpirun … experiment`; empty for
    /// one process).
    pub rank: Option<usize>,
    /// The host of that rank, as MPI names it (empty for one process).
    pub host: String,
    /// Its CUDA driver version.
    pub driver: String,
    /// Its compute capability.
    pub compute_capability: String,
    /// The host CPU model.
    pub cpu: String,
    /// The host's hardware threads.
    pub cpu_threads: usize,
    /// wavepath's version.
    pub version: String,
    /// The commit it was built from.
    pub commit: String,
    /// Whether the build had uncommitted changes.
    pub dirty: bool,
    /// When the run finished (UTC, RFC 3339).
    pub date: String,
}

/// The renders one row's render was made in: 1 (the default), or more for
/// a CPU render a stop cut short and `--resume` finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RenderParts(pub u32);

impl Default for RenderParts {
    fn default() -> Self {
        RenderParts(1)
    }
}

/// One kernel's totals in one GPU run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelRow {
    /// The experiment's name.
    pub experiment: String,
    /// The study.
    pub study: String,
    /// The configuration's index within the study.
    pub run: u32,
    /// The configuration's label.
    pub config: String,
    /// Repetition from 0.
    pub repetition: u32,
    /// The back end.
    pub backend: String,
    /// The scene's stem.
    pub scene_name: String,
    /// Kernel name.
    pub kernel: String,
    /// Launches.
    pub launches: usize,
    /// Sum of launch times, ms.
    pub total_ms: f64,
    /// Mean launch time, ms.
    pub mean_ms: f64,
    /// Shortest launch, ms.
    pub min_ms: f64,
    /// Longest launch, ms.
    pub max_ms: f64,
    /// Work items over all launches.
    pub items: u64,
    /// Items per second of kernel time.
    pub items_per_s: f64,
    /// Registers per thread.
    pub registers: Option<u32>,
    /// Local memory per thread, bytes.
    pub local_bytes: Option<u32>,
    /// Theoretical occupancy.
    pub occupancy: Option<f64>,
    /// Mean active lanes per warp at the material branch (when counted).
    pub active_lanes: Option<f64>,
}

/// A CSV file that rows are appended to and flushed one at a time.
pub struct CsvAppender {
    writer: csv::Writer<File>,
    path: PathBuf,
}

impl CsvAppender {
    /// Opens `path` for appending rows of `T`; a new or empty file gets
    /// `T`'s header line at once, so even a run with no rows names every column.
    pub fn open<T: Serialize + Default>(path: &Path) -> anyhow::Result<Self> {
        let fresh = std::fs::metadata(path).map_or(true, |m| m.len() == 0);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| anyhow::anyhow!("{}: cannot open for appending: {e}", path.display()))?;
        let mut appender = CsvAppender {
            writer: csv::WriterBuilder::new().has_headers(false).from_writer(file),
            path: path.to_path_buf(),
        };
        if fresh {
            appender.append(&header::<T>()?)?;
        }
        Ok(appender)
    }

    /// Appends `row` and flushes it to the file.
    pub fn append<T: Serialize>(&mut self, row: &T) -> anyhow::Result<()> {
        self.writer
            .serialize(row)
            .and_then(|()| Ok(self.writer.flush()?))
            .map_err(|e| anyhow::anyhow!("{}: cannot append a row: {e}", self.path.display()))
    }
}

/// The column names of rows of `T`, in file order.
pub fn header<T: Serialize + Default>() -> anyhow::Result<Vec<String>> {
    let mut header = csv::Writer::from_writer(Vec::new());
    header.serialize(T::default())?;
    let bytes = header.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    let names = csv::Reader::from_reader(bytes.as_slice()).headers()?.clone();
    Ok(names.iter().map(String::from).collect())
}

/// The cell of `row` in the column `column`, as the row's file holds it
/// (empty where the row has no value there; `None`: no such column).
pub fn cell<T: Serialize>(row: &T, column: &str) -> anyhow::Result<Option<String>> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.serialize(row)?;
    let bytes = writer.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let at = reader.headers()?.iter().position(|c| c == column);
    let record = reader.records().next().transpose()?.unwrap_or_default();
    Ok(at.and_then(|at| record.get(at)).map(String::from))
}

/// Why `record` (of a file whose header is `headers`) could not be read
/// as a row, `e` being the reader's error: the column at fault, by name,
/// its cell and what is wrong with it, e.g. ``column `registers`: `9x`
/// cannot be read (invalid digit found in string)``.
pub fn unreadable(e: &csv::Error, headers: &csv::StringRecord, record: &csv::StringRecord) -> String {
    let csv::ErrorKind::Deserialize { err, .. } = e.kind() else {
        return e.to_string();
    };
    let Some(at) = err.field().and_then(|f| usize::try_from(f).ok()) else {
        return err.kind().to_string();
    };
    let column = headers.get(at).unwrap_or("?");
    let cell = record.get(at).unwrap_or_default();
    format!("column `{column}`: `{cell}` cannot be read ({})", err.kind())
}

/// The rows of an appended CSV file that an interrupted experiment left,
/// and how much of the file holds them.
pub struct Recovered<T> {
    /// Every whole row, in file order.
    pub rows: Vec<T>,
    /// The length of the file up to the end of its last whole record.
    pub whole_bytes: u64,
    /// A record cut short at the end (a crash mid-write, a full disk): its
    /// line number, and the bytes it took.
    pub incomplete: Option<(u64, u64)>,
}

/// Reads a CSV file that [`CsvAppender`] wrote to, for resuming: its header
/// must be `T`'s, and every record whole and well-formed, except that a last record without its closing newline (cut short by a crash or
/// a full disk; the appender ends every record with one and flushes it) is
/// set aside as [`Recovered::incomplete`], whatever it parses to. Anything
/// else wrong is an error naming the file and the line.
pub fn recover_rows<T: Serialize + Default + for<'de> Deserialize<'de>>(path: &Path) -> anyhow::Result<Recovered<T>> {
    let bytes = renderer::io::input_file::read_limited(path, MAX_RECORDS_BYTES)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let whole_bytes = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let (whole, cut) = bytes.split_at(whole_bytes);
    let incomplete = (!cut.is_empty()).then(|| {
        (
            whole.iter().filter(|&&b| b == b'\n').count() as u64 + 1,
            cut.len() as u64,
        )
    });
    let expected = header::<T>()?;
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(whole);
    let found: Vec<String> = match reader.headers() {
        Ok(h) if !whole.is_empty() => h.iter().map(String::from).collect(),
        _ => Vec::new(),
    };
    if found != expected {
        anyhow::bail!(
            "{}: line 1: the header is not this version's ({} columns, starting `{}`); \
             these records cannot be resumed: choose another --out",
            path.display(),
            expected.len(),
            expected.iter().take(4).cloned().collect::<Vec<_>>().join(",")
        );
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let line = record.position().map_or(0, |p| p.line());
        if record.len() != found.len() {
            anyhow::bail!(
                "{}: line {line}: {} fields, expected {}; the file is damaged: choose another --out",
                path.display(),
                record.len(),
                found.len()
            );
        }
        let headers = csv::StringRecord::from(found.clone());
        let row = record.deserialize(Some(&headers)).map_err(|e| {
            anyhow::anyhow!(
                "{}: line {line}, {}; the file is damaged: choose another --out",
                path.display(),
                unreadable(&e, &headers, &record)
            )
        })?;
        rows.push(row);
    }
    Ok(Recovered {
        rows,
        whole_bytes: whole_bytes as u64,
        incomplete,
    })
}

/// The largest `runs.csv` or `kernels.csv` resumed (about a million rows).
pub const MAX_RECORDS_BYTES: u64 = 1 << 30;

/// `manifest.toml`: what ran, where, when, and how each study ended.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    /// The experiment.
    pub experiment: ManifestExperiment,
    /// The host.
    pub host: ManifestHost,
    /// The GPU, when one was opened (with several, the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<ManifestDevice>,
    /// Every GPU the GPU runs were spread over (`--devices`), when there
    /// were several.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<ManifestDevice>,
    /// The build.
    pub build: ManifestBuild,
    /// Each study's outcome.
    #[serde(default)]
    pub study: Vec<ManifestStudy>,
    /// Runs not made, and why.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// Each MPI rank that made rows (`mpirun … experiment`), when several
    /// did: its host, rows and render time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rank: Vec<ManifestRank>,
    /// The load imbalance over those ranks: the busiest rank's render time
    /// over the mean, less one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank_imbalance: Option<f64>,
    /// The runner's own time per GPU row against the row's render call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<Overhead>,
    /// The config file's text as run.
    pub config_text: String,
    /// Each start of the experiment: the first, then every `--resume`.
    #[serde(default)]
    pub session: Vec<ManifestSession>,
    /// Every file the runs read (scenes, their meshes, reference images),
    /// with its fingerprint when the experiment started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input: Vec<ManifestInput>,
}

/// One `[[rank]]` of the manifest: what one MPI rank made.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ManifestRank {
    /// The rank.
    pub rank: usize,
    /// Its host.
    pub host: String,
    /// Its rows.
    pub rows: usize,
    /// The time of their render calls, seconds.
    pub render_s: f64,
}

/// One `[[input]]` of the manifest: a file the runs read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ManifestInput {
    /// Its path as the runs named it.
    pub path: String,
    /// The fingerprint of its bytes.
    pub fingerprint: String,
}

impl ManifestInput {
    /// The record of the file at `path`, read now.
    pub fn of(path: &std::path::Path) -> anyhow::Result<Self> {
        let bytes = std::fs::read(path)
            .map_err(|e| anyhow::anyhow!("{}: cannot read an input to fingerprint it: {e}", path.display()))?;
        Ok(ManifestInput {
            path: path.display().to_string(),
            fingerprint: renderer::system::fingerprint::fingerprint_bytes(&bytes),
        })
    }
}

/// One `[[session]]` of the manifest: a start of the experiment (the first
/// or a `--resume`), when it ended and the build that ran it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ManifestSession {
    /// When it started (UTC).
    pub started: String,
    /// When it ended (empty while running, or if it was killed).
    pub finished: String,
    /// The commit its binary was built from.
    pub commit: String,
    /// Its binary had uncommitted changes (run with `--allow-dirty`).
    pub dirty: bool,
}

/// `[experiment]` of the manifest.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ManifestExperiment {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// The config file.
    pub config: String,
    /// The fingerprint of the config text.
    pub config_hash: String,
    /// The command line.
    pub command: String,
    /// When it first started (UTC).
    pub started: String,
    /// When it finished (empty while running).
    pub finished: String,
}

/// `[host]` of the manifest.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ManifestHost {
    /// CPU model.
    pub cpu: String,
    /// Hardware threads.
    pub cpu_threads: usize,
}

/// `[device]` of the manifest.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ManifestDevice {
    /// The driver's ordinal of the GPU (0 in manifests from before
    /// `--devices`, which used GPU 0).
    #[serde(default)]
    pub ordinal: usize,
    /// The GPU's name.
    pub name: String,
    /// Its CUDA driver version.
    pub driver: String,
    /// Compute capability.
    pub compute_capability: String,
    /// Multiprocessors.
    pub multiprocessors: u32,
    /// Memory, GiB.
    pub memory_gib: f64,
}

/// `[build]` of the manifest.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ManifestBuild {
    /// wavepath's version.
    pub version: String,
    /// The commit.
    pub commit: String,
    /// Uncommitted changes in the build.
    pub dirty: bool,
    /// The run was told to accept a dirty build (`--allow-dirty`).
    #[serde(default)]
    pub allow_dirty: bool,
    /// The fingerprint of the measured source it was built from
    /// (`system::fingerprint::source_fingerprint`); manifests from before
    /// it was recorded have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// One `[[study]]` of the manifest.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ManifestStudy {
    /// Its name.
    pub name: String,
    /// What it shows.
    pub description: String,
    /// A note for the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The baseline back end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// Back ends.
    pub backends: Vec<String>,
    /// Scene files.
    pub scenes: Vec<String>,
    /// Swept parameters in file order.
    pub swept: Vec<String>,
    /// Configurations planned.
    pub runs_planned: usize,
    /// Rows in runs.csv for this study.
    pub rows: usize,
    /// Rows kept from an earlier, interrupted run.
    pub resumed_rows: usize,
    /// `complete`, `failed: …`, `skipped: …` or `not run: …`.
    pub status: String,
    /// `identical: N groups`, `MISMATCH: …` or `not checked`.
    pub film_check: String,
    /// The parity step: how many configurations rendered the CPU's film
    /// before they were timed, or the first that did not.
    #[serde(default)]
    pub parity: String,
    /// Published figures.
    #[serde(default)]
    pub published: Vec<Published>,
    /// The reference image each row's error is measured against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// `weak` where the study's images grow with their `gpus` (absent:
    /// strong, the same image on more GPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<String>,
}

/// One run not made.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    /// The study.
    pub study: String,
    /// The configuration.
    pub config: String,
    /// Why.
    pub reason: String,
}

/// The runner's overhead per GPU row, as a fraction of the render call.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Overhead {
    /// GPU rows measured.
    pub gpu_rows: usize,
    /// Median of runner_ms / total_ms.
    pub median_fraction: f64,
    /// Largest runner_ms / total_ms.
    pub max_fraction: f64,
}

impl Manifest {
    /// Writes the manifest atomically.
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        let text = toml::to_string(self)?;
        renderer::io::atomic_file::write(path, text.as_bytes())
    }

    /// Reads a manifest.
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text =
            std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: not a wavepath manifest: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_rows_read_back_with_one_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.csv");
        let row = |run| RunRow {
            study: "s".into(),
            run,
            block: Some("8x8".into()),
            ..RunRow::default()
        };
        CsvAppender::open::<RunRow>(&path).unwrap().append(&row(0)).unwrap();
        let mut again = CsvAppender::open::<RunRow>(&path).unwrap();
        again.append(&row(1)).unwrap();
        again.append(&row(2)).unwrap();
        let back = recover_rows::<RunRow>(&path).unwrap();
        assert_eq!(back.rows, [row(0), row(1), row(2)]);
        assert!(back.incomplete.is_none());
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches("experiment,study,run").count(), 1);
    }

    #[test]
    fn manifest_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.toml");
        let m = Manifest {
            experiment: ManifestExperiment {
                name: "e".into(),
                ..Default::default()
            },
            skipped: vec![Skipped {
                study: "s".into(),
                config: "gpu-mega".into(),
                reason: "no GPU".into(),
            }],
            config_text: "[experiment]\nname = \"e\"\n".into(),
            ..Default::default()
        };
        m.write(&path).unwrap();
        let back = Manifest::read(&path).unwrap();
        assert_eq!(back.experiment.name, "e");
        assert_eq!(back.skipped, m.skipped);
        assert_eq!(back.config_text, m.config_text);
    }
}
