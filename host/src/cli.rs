//! The `wavepath` command line (clap), converted once into validated requests.

use crate::accel::AccelChoice;
use crate::backend::cpu::CpuSchedule;
use crate::backend::gpu::megakernel::MegakernelConfig;
use crate::backend::wavefront::{Capacity, Schedule, WavefrontConfig};
use crate::backend::{BackendKind, BackendOptions};
use crate::experiment::bench::BenchPlan;
use crate::render::raycast::RayKind;
use crate::render::{BackendChoice, Overrides, RenderRequest};
use clap::{Parser, Subcommand, ValueEnum};
use device::launch::Compaction;
use device::scene::RenderView;
use std::path::PathBuf;

/// wavepath: megakernel versus wavefront path tracing, measured.
#[derive(Debug, Parser)]
#[command(name = "wavepath", version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("WAVEPATH_COMMIT"), ")"), about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render a scene file to an image.
    Render(RenderArgs),
    /// Check that a GPU back end renders the same bits as the CPU reference.
    Verify(VerifyArgs),
    /// Time a back end over launch configurations and repetitions.
    Bench(BenchArgs),
    /// Run an experiment config: studies of sweeps, with CSV records and a manifest.
    Experiment(ExperimentArgs),
    /// Write report.md and figures (SVG and PNG) from an experiment's folder.
    Report(ReportArgs),
    /// Describe the GPU and the embedded PTX modules.
    GpuInfo,
    /// Write a generated mesh (a subdivided, displaced icosphere) as OBJ.
    GenMesh(GenMeshArgs),
    /// Time traversal alone: closest hits for a buffer of camera or bounce rays.
    Raycast(RaycastArgs),
}

/// `wavepath raycast`.
#[derive(Debug, clap::Args)]
pub struct RaycastArgs {
    /// Scene and overrides (size, seed and depth shape the rays).
    #[command(flatten)]
    pub scene: SceneArgs,
    /// Which rays.
    #[arg(long, value_enum, default_value_t = RayKind::Bounce)]
    pub rays: RayKind,
    /// How many rays (at most 2^26).
    #[arg(long, default_value_t = 4_000_000, value_parser = clap::value_parser!(u64).range(1..=crate::render::raycast::MAX_RAYS))]
    pub count: u64,
    /// Threads per block to try, comma-separated (32 to 1024).
    #[arg(long, value_delimiter = ',', default_value = "64,128,256", value_parser = clap::value_parser!(u32).range(32..=1024))]
    pub blocks: Vec<u32>,
    /// Timed repetitions per block size (at most 1000).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Write one row per repetition to this CSV file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
}

/// `wavepath experiment`.
#[derive(Debug, clap::Args)]
pub struct ExperimentArgs {
    /// The experiment config (TOML), e.g. experiments/smallptcuda.toml.
    pub config: PathBuf,
    /// The folder for runs.csv, kernels.csv and manifest.toml (default:
    /// out/<config name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run only this study.
    #[arg(long)]
    pub only: Option<String>,
    /// Print the plan (runs per study, a rough time) and run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Continue an interrupted run in --out, skipping the rows it finished.
    #[arg(long)]
    pub resume: bool,
    /// With --resume: accept rows from another config or commit.
    #[arg(long, requires = "resume")]
    pub allow_mixed: bool,
    /// Hide the progress bar.
    #[arg(long)]
    pub quiet: bool,
}

impl ExperimentArgs {
    /// The output folder.
    pub fn out_dir(&self) -> PathBuf {
        self.out.clone().unwrap_or_else(|| {
            let stem = self.config.file_stem().unwrap_or_default();
            PathBuf::from("out").join(stem)
        })
    }
}

/// `wavepath report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// An experiment's output folder (holding runs.csv and manifest.toml).
    pub dir: PathBuf,
}

/// `wavepath gen-mesh`.
#[derive(Debug, clap::Args)]
pub struct GenMeshArgs {
    /// Icosahedron subdivisions: 20·4ⁿ triangles (7: 327 680; 8: 1 310 720).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=10))]
    pub subdivisions: u32,
    /// Relative bump height, in [0, 0.5).
    #[arg(long, default_value_t = 0.12)]
    pub amplitude: f32,
    /// Output OBJ file.
    #[arg(long)]
    pub out: PathBuf,
}

/// A back end, or `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// `gpu-mega` when a GPU is usable, otherwise `cpu` (and it says so).
    Auto,
    /// One CPU thread.
    CpuSerial,
    /// All CPU cores.
    Cpu,
    /// The GPU megakernel.
    GpuMega,
    /// The GPU wavefront.
    GpuWave,
    /// The wavefront's kernels emulated on the host (slow; a correctness tool).
    CpuWave,
}

impl BackendArg {
    fn choice(self) -> BackendChoice {
        match self {
            BackendArg::Auto => BackendChoice::Auto,
            BackendArg::CpuSerial => BackendChoice::Exactly(BackendKind::CpuSerial),
            BackendArg::Cpu => BackendChoice::Exactly(BackendKind::Cpu),
            BackendArg::GpuMega => BackendChoice::Exactly(BackendKind::GpuMega),
            BackendArg::GpuWave => BackendChoice::Exactly(BackendKind::GpuWave),
            BackendArg::CpuWave => BackendChoice::Exactly(BackendKind::CpuWave),
        }
    }
}

/// The image a render produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ViewArg {
    /// Path-traced radiance.
    Radiance,
    /// First-hit normals.
    Normals,
    /// First-hit albedo.
    Albedo,
    /// First-hit distance.
    Depth,
}

/// A scene and the settings that may replace its own.
#[derive(Debug, clap::Args)]
pub struct SceneArgs {
    /// The scene file (TOML).
    pub scene: PathBuf,
    /// Samples per pixel (default: the scene's; at most 2^28 - 1, the most
    /// the film sums exactly).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=crate::scene::MAX_SPP as i64))]
    pub spp: Option<u32>,
    /// Maximum ray segments per path (default: the scene's; at most 65536).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=crate::scene::MAX_DEPTH as i64))]
    pub depth: Option<u32>,
    /// Image size as WIDTHxHEIGHT (default: the scene's).
    #[arg(long, value_parser = parse_size)]
    pub size: Option<(u32, u32)>,
    /// RNG seed (default: the scene's).
    #[arg(long)]
    pub seed: Option<u32>,
    /// Acceleration structure (default: the scene's `[accel]`, else auto).
    #[arg(long, value_enum)]
    pub accel: Option<AccelChoice>,
}

impl SceneArgs {
    /// The overrides these arguments set.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            spp: self.spp,
            max_depth: self.depth,
            size: self.size,
            seed: self.seed,
            accel: self.accel,
        }
    }
}

/// Launch configuration of the GPU back ends.
#[derive(Debug, clap::Args)]
pub struct LaunchArgs {
    /// Megakernel block shape as XxY threads (at most 1024; best a multiple of 32).
    #[arg(long, value_parser = parse_size, default_value = "8x8")]
    pub block: (u32, u32),
    /// Megakernel tile size in pixels (default: the whole image per launch).
    #[arg(long, value_parser = parse_size)]
    pub tile: Option<(u32, u32)>,
    /// Samples per pixel per megakernel launch.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..), default_value_t = 16)]
    pub samples_per_launch: u32,
    /// CPU threads for the `cpu` back end (0: one per core; at most 1024).
    #[arg(long, default_value_t = 0, value_parser = parse_threads)]
    pub threads: usize,
    /// How the `cpu` back end divides the image between its threads.
    #[arg(long, value_enum, default_value_t = CpuSchedule::DynamicRows)]
    pub cpu_schedule: CpuSchedule,
    /// Count active lanes per warp at the material branch (a diagnosis run:
    /// the counting atomics cost time).
    #[arg(long)]
    pub count_divergence: bool,
    /// Cap every GPU kernel at this many registers per thread (16 to 255;
    /// the driver's JIT spills what does not fit to local memory). Without
    /// it the megakernel is capped at 80 and the wavefront is not capped.
    #[arg(long)]
    pub max_registers: Option<u32>,
    /// Wavefront: when new camera paths enter the pool.
    #[arg(long, value_enum, default_value_t = Schedule::Regenerate)]
    pub schedule: Schedule,
    /// Wavefront, regenerate: refill the pool once at most this fraction of
    /// its slots hold paths (1: every iteration).
    #[arg(long, value_parser = parse_fraction, default_value_t = 0.5)]
    pub refill: f32,
    /// Wavefront: how survivors are gathered into the next ray queue.
    #[arg(long, value_enum, default_value_t = CompactionArg::PrefixSum)]
    pub compaction: CompactionArg,
    /// Wavefront: paths in flight: a power of two (e.g. 2097152 or 2^21),
    /// a memory budget for path state and queues (e.g. 512MiB, 2GiB), or
    /// `auto` (every path of the render at once, as far as memory allows).
    #[arg(long, value_parser = parse_capacity, default_value = "512MiB")]
    pub capacity: Capacity,
    /// Wavefront: do not time each launch with CUDA events (the events
    /// cost GPU time between the many small launches; only the wall time
    /// and no per-kernel profile are then measured).
    #[arg(long)]
    pub untimed_launches: bool,
    /// Wavefront: threads per block of the per-path kernels.
    #[arg(long, default_value_t = 64)]
    pub wave_block: u32,
    /// Wavefront: when no new path joins (all samples issued, or a
    /// bounce-synchronous wave running down) and at most this many paths
    /// remain, finish them in one drain launch (0: never).
    #[arg(long, default_value_t = 1 << 18)]
    pub drain_below: u32,
}

/// How the wavefront gathers survivors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompactionArg {
    /// Warp-aggregated atomic appends inside the shading kernels.
    AtomicAppend,
    /// Alive flags and a three-kernel prefix sum (order-preserving).
    PrefixSum,
}

impl CompactionArg {
    /// The device's compaction mode.
    pub fn mode(self) -> Compaction {
        match self {
            CompactionArg::AtomicAppend => Compaction::AtomicAppend,
            CompactionArg::PrefixSum => Compaction::PrefixSum,
        }
    }
}

/// Parses a CPU thread count (0: one per core).
pub fn parse_threads(s: &str) -> Result<usize, String> {
    let n = s
        .parse::<usize>()
        .map_err(|_| format!("expected a whole number of threads, got `{s}`"))?;
    crate::backend::cpu::check_threads(n)?;
    Ok(n)
}

/// Parses a fraction from 0 to 1.
pub fn parse_fraction(s: &str) -> Result<f32, String> {
    s.parse::<f32>()
        .ok()
        .filter(|f| (0.0..=1.0).contains(f))
        .ok_or_else(|| format!("expected a fraction from 0 to 1, got `{s}`"))
}

/// Parses a pool capacity: `auto`, a budget in MiB or GiB, `2^K` or a
/// number (a power of two).
pub fn parse_capacity(s: &str) -> Result<Capacity, String> {
    let bad = || {
        format!(
            "expected a power of two such as 2^21 or 2097152, a budget such as 512MiB or 2GiB, or `auto`; got `{s}`"
        )
    };
    if s.eq_ignore_ascii_case("auto") {
        return Ok(Capacity::Auto);
    }
    for (unit, shift) in [("MiB", 20), ("GiB", 30)] {
        if let Some(n) = s.strip_suffix(unit) {
            let n = n.parse::<u64>().map_err(|_| bad())?;
            let c = Capacity::Budget(n.checked_mul(1 << shift).filter(|&b| b <= 1 << 40).ok_or_else(bad)?);
            WavefrontConfig {
                capacity: c,
                ..WavefrontConfig::default()
            }
            .validate()?;
            return Ok(c);
        }
    }
    let n = match s.strip_prefix("2^") {
        Some(k) => 1u64.checked_shl(k.parse::<u32>().map_err(|_| bad())?).ok_or_else(bad)?,
        None => s.parse::<u64>().map_err(|_| bad())?,
    };
    let n = u32::try_from(n).map_err(|_| bad())?;
    let c = Capacity::Slots(n);
    WavefrontConfig {
        capacity: c,
        ..WavefrontConfig::default()
    }
    .validate()?;
    Ok(c)
}

impl LaunchArgs {
    /// The back-end options these arguments set.
    pub fn options(&self) -> Result<BackendOptions, String> {
        let megakernel = MegakernelConfig {
            block: self.block,
            tile: self.tile,
            samples_per_launch: self.samples_per_launch,
            count_divergence: self.count_divergence,
            max_registers: self.max_registers.or(MegakernelConfig::default().max_registers),
        };
        megakernel.validate()?;
        let wavefront = WavefrontConfig {
            capacity: self.capacity,
            schedule: self.schedule,
            refill: self.refill,
            compaction: self.compaction.mode(),
            block: self.wave_block,
            count_divergence: self.count_divergence,
            time_launches: !self.untimed_launches,
            max_registers: self.max_registers,
            drain_below: self.drain_below,
        };
        wavefront.validate()?;
        Ok(BackendOptions {
            threads: self.threads,
            cpu_schedule: self.cpu_schedule,
            megakernel,
            wavefront,
        })
    }
}

/// `wavepath render`.
#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// Scene and overrides.
    #[command(flatten)]
    pub scene: SceneArgs,
    /// Back end.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Launch configuration.
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Output image (.png, .ppm or .bmp); default `<scene name>.png`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Render a debug view instead of radiance.
    #[arg(long, value_enum, default_value_t = ViewArg::Radiance)]
    pub view: ViewArg,
    /// Write one CSV row per GPU kernel launch to this file.
    #[arg(long)]
    pub launch_log: Option<PathBuf>,
    /// Hide the progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// `wavepath verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Scene and overrides.
    #[command(flatten)]
    pub scene: SceneArgs,
    /// The GPU back end to check.
    #[arg(long, value_enum, default_value_t = BackendArg::GpuMega)]
    pub backend: BackendArg,
    /// Launch configuration.
    #[command(flatten)]
    pub launch: LaunchArgs,
}

/// `wavepath bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Scene and overrides.
    #[command(flatten)]
    pub scene: SceneArgs,
    /// Back ends to measure in one run, comma-separated (every one must
    /// render the same image).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "gpu-mega")]
    pub backends: Vec<BackendArg>,
    /// Megakernel block shapes to try, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = parse_size, default_value = "8x8")]
    pub blocks: Vec<(u32, u32)>,
    /// Megakernel samples per launch to try, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16")]
    pub samples_per_launch: Vec<u32>,
    /// Megakernel tile size (default: whole image).
    #[arg(long, value_parser = parse_size)]
    pub tile: Option<(u32, u32)>,
    /// Wavefront schedules to try (regenerate at the default refill).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "regenerate")]
    pub schedules: Vec<Schedule>,
    /// Wavefront compaction modes to try.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "prefix-sum")]
    pub compactions: Vec<CompactionArg>,
    /// Wavefront pool capacities to try (powers of two, budgets such as
    /// 512MiB, or auto).
    #[arg(long, value_delimiter = ',', value_parser = parse_capacity, default_value = "512MiB")]
    pub capacities: Vec<Capacity>,
    /// Wavefront threads per block to try.
    #[arg(long, value_delimiter = ',', default_value = "64")]
    pub wave_blocks: Vec<u32>,
    /// Wavefront tail-drain thresholds to try (0: never drain).
    #[arg(long, value_delimiter = ',', default_value = "262144")]
    pub drains: Vec<u32>,
    /// Timed repetitions per configuration (at most 1000).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=crate::experiment::config::MAX_REPEAT as i64))]
    pub repeat: u32,
    /// Untimed warm-up renders per configuration (at most 100).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=crate::experiment::config::MAX_WARMUP as i64))]
    pub warmup: u32,
    /// CPU threads for the `cpu` back end (0: one per core; at most 1024).
    #[arg(long, default_value_t = 0, value_parser = parse_threads)]
    pub threads: usize,
    /// Write one row per repetition to this CSV file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write the launch records of each back end's best configuration to
    /// this CSV file (one row per kernel launch, with the back end).
    #[arg(long)]
    pub launch_log: Option<PathBuf>,
}

impl BenchArgs {
    /// The validated plan.
    pub fn plan(&self) -> Result<BenchPlan, String> {
        let backends = self
            .backends
            .iter()
            .map(|&b| concrete_backend(b))
            .collect::<Result<_, _>>()?;
        Ok(BenchPlan {
            scene: self.scene.scene.clone(),
            overrides: self.scene.overrides(),
            backends,
            blocks: self.blocks.clone(),
            samples_per_launch: self.samples_per_launch.clone(),
            tile: self.tile,
            schedules: self.schedules.clone(),
            compactions: self.compactions.iter().map(|c| c.mode()).collect(),
            capacities: self.capacities.clone(),
            wave_blocks: self.wave_blocks.clone(),
            drains: self.drains.clone(),
            repeat: self.repeat,
            warmup: self.warmup,
            threads: self.threads,
        })
    }
}

/// Parses `WIDTHxHEIGHT`.
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("expected WIDTHxHEIGHT with sides from 1 to 32768, e.g. 1200x800; got `{s}`");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    let ok = |v: u32| (1..=crate::scene::MAX_IMAGE_SIDE).contains(&v);
    if ok(w) && ok(h) { Ok((w, h)) } else { Err(bad()) }
}

impl RenderArgs {
    /// The validated request.
    pub fn to_request(&self) -> Result<RenderRequest, String> {
        Ok(RenderRequest {
            scene: self.scene.scene.clone(),
            backend: self.backend.choice(),
            overrides: self.scene.overrides(),
            view: match self.view {
                ViewArg::Radiance => RenderView::Radiance,
                ViewArg::Normals => RenderView::Normals,
                ViewArg::Albedo => RenderView::Albedo,
                ViewArg::Depth => RenderView::Depth,
            },
            options: self.launch.options()?,
            out: self.out.clone(),
            progress: !self.quiet,
            launch_log: self.launch_log.clone(),
            stop: None,
        })
    }
}

/// The concrete back end of a `verify` or `bench` argument (`auto` is not a
/// back end to measure).
pub fn concrete_backend(arg: BackendArg) -> Result<BackendKind, String> {
    match arg.choice() {
        BackendChoice::Exactly(kind) => Ok(kind),
        BackendChoice::Auto => Err("name a back end (cpu, cpu-serial, gpu-mega, gpu-wave), not auto".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_parses_and_rejects() {
        assert_eq!(parse_size("1200x800"), Ok((1200, 800)));
        assert_eq!(parse_size("64X32"), Ok((64, 32)));
        for bad in ["1200", "0x10", "axb", "10x", "40000x10"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn launch_arguments_are_validated() {
        let cli = Cli::try_parse_from(["wavepath", "render", "s.toml", "--block", "64x32"]).unwrap();
        let Command::Render(args) = cli.command else { panic!() };
        assert!(
            args.to_request()
                .unwrap_err()
                .contains("a block needs 1 to 1024 threads")
        );
        let cli = Cli::try_parse_from(["wavepath", "bench", "s.toml", "--blocks", "8x8,32x4,256x1"]).unwrap();
        let Command::Bench(args) = cli.command else { panic!() };
        assert_eq!(args.blocks, [(8, 8), (32, 4), (256, 1)]);
        assert_eq!(parse_capacity("2^21"), Ok(Capacity::Slots(1 << 21)));
        assert_eq!(parse_capacity("auto"), Ok(Capacity::Auto));
        assert!(parse_capacity("3000").is_err());
        assert!(parse_capacity("2^40").is_err());
        assert!(parse_capacity("2^29").is_err());
    }
}
