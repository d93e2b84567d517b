//! The `wavepath` command line (clap): each argument declared here and
//! mapped onto the value types of [`crate::settings`], which hold the
//! parsers, the limits and every default; converted once into validated
//! requests.

use crate::accel::AccelChoice;
use crate::backend::BackendOptions;
use crate::backend::wavefront::WavefrontConfig;
use crate::experiment::bench::BenchPlan;
use crate::io::image::{self, OutputFormat};
use crate::render::raycast::RayKind;
use crate::render::{Overrides, RenderRequest};
use crate::settings::backend::{BackendArg, concrete_backend};
use crate::settings::capacity::{Capacity, parse_capacity};
use crate::settings::cpu::{CpuSchedule, DEFAULT_THREADS, parse_threads};
use crate::settings::devices::{Devices, parse_devices};
use crate::settings::kernels::KernelBuild;
use crate::settings::megakernel::MegakernelConfig;
use crate::settings::megakernel::{DEFAULT_BLOCK, DEFAULT_SAMPLES_PER_LAUNCH};
use crate::settings::nee::NeeMode;
use crate::settings::repetitions::{BENCH_REPEAT, BENCH_WARMUP, MAX_REPEAT, MAX_WARMUP};
use crate::settings::sampler::SamplerKind;
use crate::settings::size::{MAX_DEPTH, MAX_SPP, parse_size, size_label};
use crate::settings::wavefront::{
    CompactionArg, DEFAULT_CAPACITY, DEFAULT_COMPACTION, DEFAULT_DRAIN_BELOW, DEFAULT_MATERIAL_SORT, DEFAULT_REFILL,
    DEFAULT_SCHEDULE, DEFAULT_WAVE_BLOCK, MaterialSortArg, WaveSchedule, parse_fraction,
};
use clap::{Parser, Subcommand, ValueEnum};
use device::scene::RenderView;
use std::path::PathBuf;

/// A default shown as text, for the arguments whose type has no `Display`
/// (a size, a capacity). Clap keeps defaults as `&'static str`; the few
/// bytes are leaked once per parse, as clap's own `default_value_t` does.
fn shown(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

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
    /// Error metrics (RMSE, relative MSE, MAE, FLIP) of an image against a reference.
    Compare(CompareArgs),
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
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=MAX_REPEAT as i64))]
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
    /// out/NAME, NAME the config's file stem).
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
    /// Run with a binary built from uncommitted changes (refused otherwise:
    /// results must name the commit behind them); the manifest and report
    /// say so.
    #[arg(long)]
    pub allow_dirty: bool,
    /// Hide the progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Spread the GPU runs over these GPUs, one run per GPU at a time:
    /// `all`, or ordinals such as 0,1 (default: GPU 0).
    #[arg(long, value_parser = parse_devices)]
    pub devices: Option<Devices>,
    /// Under mpirun: let every rank make CPU runs, also ranks that share a
    /// host's cores (their timings then disturb each other; by default the
    /// first rank of each host makes its CPU runs, one at a time).
    #[cfg(feature = "mpi")]
    #[arg(long)]
    pub share_cores: bool,
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
    /// An experiment's output folder (holding runs.csv and manifest.toml);
    /// with --summary, the folder of experiment folders (results/).
    pub dir: PathBuf,
    /// Report rows from several commits together (refused otherwise).
    #[arg(long, conflicts_with = "summary")]
    pub allow_mixed: bool,
    /// Write DIR/SUMMARY.md, the headline figures of every experiment
    /// folder in DIR, instead of one folder's report.
    #[arg(long)]
    pub summary: bool,
}

/// `wavepath compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The image under test (its formats: [`image::OUTPUT_FORMATS`]).
    #[arg(help = format!(
        "The image under test ({} for linear radiance; {})",
        image::extension_list(OutputFormat::is_linear),
        image::extension_list(OutputFormat::is_display)
    ))]
    pub test: PathBuf,
    /// The reference image, of the same size and kind.
    pub reference: PathBuf,
    /// Write FLIP's per-pixel error as a heat map (an 8-bit format).
    #[arg(long, help = format!(
        "Write FLIP's per-pixel error as a heat map ({})",
        image::extension_list(OutputFormat::is_display)
    ))]
    pub heatmap: Option<PathBuf>,
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
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_SPP as i64))]
    pub spp: Option<u32>,
    /// Maximum ray segments per path (default: the scene's; at most 65536).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_DEPTH as i64))]
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
    /// Random-number sampler (default: the scene's `render.sampler`, else hash).
    #[arg(long, value_enum)]
    pub sampler: Option<SamplerKind>,
    /// Next-event estimation: shadow rays to the lights, weighted against
    /// scattering by MIS (default: the scene's `render.nee`, else off).
    #[arg(long, value_enum)]
    pub nee: Option<NeeMode>,
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
            sampler: self.sampler,
            nee: self.nee,
        }
    }
}

/// Launch configuration of the GPU back ends.
#[derive(Debug, clap::Args)]
pub struct LaunchArgs {
    /// Megakernel block shape as XxY threads (at most 1024; best a multiple of 32).
    #[arg(long, value_parser = parse_size, default_value = shown(size_label(DEFAULT_BLOCK)))]
    pub block: (u32, u32),
    /// Megakernel tile size in pixels (default: the whole image per launch).
    #[arg(long, value_parser = parse_size)]
    pub tile: Option<(u32, u32)>,
    /// Samples per pixel per megakernel launch.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..), default_value_t = DEFAULT_SAMPLES_PER_LAUNCH)]
    pub samples_per_launch: u32,
    /// CPU threads for the `cpu` back end (0: one per core; at most 1024).
    #[arg(long, default_value_t = DEFAULT_THREADS, value_parser = parse_threads)]
    pub threads: usize,
    /// How the `cpu` back end divides the image between its threads.
    #[arg(long, value_enum, default_value_t)]
    pub cpu_schedule: CpuSchedule,
    /// Count active lanes per warp at the material branch (a diagnosis run:
    /// the counting atomics cost time).
    #[arg(long)]
    pub count_divergence: bool,
    /// Cap every GPU kernel at this many registers per thread (16 to 255;
    /// the driver's JIT spills what does not fit to local memory). Without
    /// it the megakernel keeps its tuned default cap and the wavefront is
    /// not capped.
    #[arg(long)]
    pub max_registers: Option<u32>,
    /// GPU megakernel and wavefront drain: which build runs (`auto`: the
    /// smallest that holds what the scene needs).
    #[arg(long, value_enum, default_value_t = KernelBuild::Auto)]
    pub kernels: KernelBuild,
    /// Wavefront: when new camera paths enter the pool.
    #[arg(long, value_enum, default_value_t = DEFAULT_SCHEDULE)]
    pub schedule: WaveSchedule,
    /// Wavefront, regenerate: refill the pool once at most this fraction of
    /// its slots hold paths (1: every iteration).
    #[arg(long, value_parser = parse_fraction, default_value_t = DEFAULT_REFILL)]
    pub refill: f32,
    /// Wavefront: how survivors are gathered into the next ray queue.
    #[arg(long, value_enum, default_value_t = DEFAULT_COMPACTION)]
    pub compaction: CompactionArg,
    /// Wavefront: sort the coated materials' shading queue by noise basis
    /// before shading it (`variant`), so that each warp runs one program,
    /// or shade in queue order (`off`).
    #[arg(long, value_enum, default_value_t = DEFAULT_MATERIAL_SORT)]
    pub material_sort: MaterialSortArg,
    /// Wavefront: paths in flight: a power of two (e.g. 2097152 or 2^21),
    /// a memory budget for path state and queues (e.g. 512MiB, 2GiB), or
    /// `auto` (every path of the render at once, as far as memory allows).
    #[arg(long, value_parser = parse_capacity, default_value = shown(DEFAULT_CAPACITY.label()))]
    pub capacity: Capacity,
    /// Wavefront: do not time each launch with CUDA events (the events
    /// cost GPU time between the many small launches; only the wall time
    /// and no per-kernel profile are then measured).
    #[arg(long)]
    pub untimed_launches: bool,
    /// Wavefront: threads per block of the per-path kernels.
    #[arg(long, default_value_t = DEFAULT_WAVE_BLOCK)]
    pub wave_block: u32,
    /// Wavefront: when no new path joins (all samples issued, or a
    /// bounce-synchronous wave running down) and at most this many paths
    /// remain, finish them in one drain launch (0: never).
    #[arg(long, default_value_t = DEFAULT_DRAIN_BELOW)]
    pub drain_below: u32,
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
            kernels: self.kernels,
        };
        megakernel.validate()?;
        let wavefront = WavefrontConfig {
            capacity: self.capacity,
            schedule: self.schedule,
            refill: self.refill,
            compaction: self.compaction.mode(),
            material_sort: self.material_sort.mode(),
            block: self.wave_block,
            count_divergence: self.count_divergence,
            time_launches: !self.untimed_launches,
            max_registers: self.max_registers,
            kernels: self.kernels,
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
    /// Output image (its formats: [`image::OUTPUT_FORMATS`]); default
    /// `<scene name>.png`.
    #[arg(long, help = format!(
        "Output image ({}; {} for linear radiance as floats); default `<scene name>.png`",
        image::extension_list(OutputFormat::is_display),
        image::extension_list(OutputFormat::is_linear)
    ))]
    pub out: Option<PathBuf>,
    /// Render a debug view instead of radiance.
    #[arg(long, value_enum, default_value_t = ViewArg::Radiance)]
    pub view: ViewArg,
    /// Write one CSV row per GPU kernel launch to this file.
    #[arg(long)]
    pub launch_log: Option<PathBuf>,
    /// Render on these GPUs: `all`, or ordinals such as 0,1 (the samples
    /// split between them, the films merged exactly; default: GPU 0).
    #[arg(long, value_parser = parse_devices)]
    pub devices: Option<Devices>,
    /// Sample the CPU back ends while they render: print the functions that
    /// took the time and write a flame graph (SVG) to this file.
    #[arg(long)]
    pub profile: Option<PathBuf>,
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
    /// Render the checked back end on these GPUs: `all`, or ordinals such
    /// as 0,1 (the samples split between them; default: GPU 0).
    #[arg(long, value_parser = parse_devices)]
    pub devices: Option<Devices>,
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
    #[arg(long, value_delimiter = ',', value_parser = parse_size, default_value = shown(size_label(DEFAULT_BLOCK)))]
    pub blocks: Vec<(u32, u32)>,
    /// Megakernel samples per launch to try, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [DEFAULT_SAMPLES_PER_LAUNCH])]
    pub samples_per_launch: Vec<u32>,
    /// Megakernel tile size (default: whole image).
    #[arg(long, value_parser = parse_size)]
    pub tile: Option<(u32, u32)>,
    /// Wavefront schedules to try (regenerate at the default refill).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [DEFAULT_SCHEDULE])]
    pub schedules: Vec<WaveSchedule>,
    /// Wavefront compaction modes to try.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [DEFAULT_COMPACTION])]
    pub compactions: Vec<CompactionArg>,
    /// Wavefront pool capacities to try (powers of two, budgets such as
    /// 512MiB, or auto).
    #[arg(long, value_delimiter = ',', value_parser = parse_capacity, default_value = shown(DEFAULT_CAPACITY.label()))]
    pub capacities: Vec<Capacity>,
    /// Wavefront threads per block to try.
    #[arg(long, value_delimiter = ',', default_values_t = [DEFAULT_WAVE_BLOCK])]
    pub wave_blocks: Vec<u32>,
    /// Wavefront tail-drain thresholds to try (0: never drain).
    #[arg(long, value_delimiter = ',', default_values_t = [DEFAULT_DRAIN_BELOW])]
    pub drains: Vec<u32>,
    /// Timed repetitions per configuration (at most 1000).
    #[arg(long, default_value_t = BENCH_REPEAT, value_parser = clap::value_parser!(u32).range(1..=MAX_REPEAT as i64))]
    pub repeat: u32,
    /// Untimed warm-up renders per configuration (at most 100).
    #[arg(long, default_value_t = BENCH_WARMUP, value_parser = clap::value_parser!(u32).range(0..=MAX_WARMUP as i64))]
    pub warmup: u32,
    /// CPU threads for the `cpu` back end (0: one per core; at most 1024).
    #[arg(long, default_value_t = DEFAULT_THREADS, value_parser = parse_threads)]
    pub threads: usize,
    /// Write one row per repetition to this CSV file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write the launch records of each back end's best configuration to
    /// this CSV file (one row per kernel launch, with the back end).
    #[arg(long)]
    pub launch_log: Option<PathBuf>,
    /// Spread the GPU configurations over these GPUs, one at a time on
    /// each: `all`, or ordinals such as 0,1 (default: GPU 0).
    #[arg(long, value_parser = parse_devices)]
    pub devices: Option<Devices>,
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
            devices: self.devices.clone(),
            stop: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn the_command_line_defaults_are_the_back_ends_defaults() {
        let cli = Cli::try_parse_from(["wavepath", "render", "s.toml"]).unwrap();
        let Command::Render(args) = cli.command else { panic!() };
        assert_eq!(args.launch.options(), Ok(BackendOptions::default()));
        let cli = Cli::try_parse_from(["wavepath", "bench", "s.toml"]).unwrap();
        let Command::Bench(args) = cli.command else { panic!() };
        let (mega, wave) = (MegakernelConfig::default(), WavefrontConfig::default());
        let plan = args.plan().unwrap();
        assert_eq!(plan.blocks, [mega.block]);
        assert_eq!(plan.samples_per_launch, [mega.samples_per_launch]);
        assert_eq!(plan.schedules, [wave.schedule]);
        assert_eq!(plan.compactions, [wave.compaction]);
        assert_eq!(plan.capacities, [wave.capacity]);
        assert_eq!(plan.wave_blocks, [wave.block]);
        assert_eq!(plan.drains, [wave.drain_below]);
    }
}
