//! The `wavepath` command line (clap): each argument declared here and
//! mapped onto the value types of [`renderer::settings`], which hold the
//! parsers, the limits and every default; converted once into validated
//! requests. A flag that only some back ends use is `None` (or false)
//! unless given, and each command's `given()` lists those given with the
//! back ends they concern ([`BackendFlag`], the scope of the setting they
//! set): the command refuses them where the back ends it runs would ignore
//! them (`settings::scope::check_flags`).

use clap::builder::TypedValueParser as _;
use clap::{Parser, Subcommand, ValueEnum};
use device::scene::RenderView;
use lab::bench::BenchPlan;
use lab::params::{
    BLOCK, CAPACITY, COMPACTION, CliForm, DRAIN_BELOW, SAMPLES_PER_LAUNCH, SCHEDULE, SETTINGS, SPLIT_ALL, SettingDecl,
    THREADS, TILE, Value, WAVE_BLOCK, options_with, with_default,
};
use renderer::accel::AccelChoice;
use renderer::backend::BackendOptions;
use renderer::io::image::{self, OutputFormat};
use renderer::render::ray_throughput::RayKind;
use renderer::render::{Overrides, RenderRequest};
use renderer::settings::backend::{BackendArg, BackendKind};
use renderer::settings::capacity::{Capacity, parse_capacity};
use renderer::settings::cpu::{DEFAULT_THREADS, parse_threads};
use renderer::settings::devices::{Devices, parse_devices};
use renderer::settings::echo::shorten_for_error;
use renderer::settings::mega_config::{DEFAULT_BLOCK, DEFAULT_SAMPLES_PER_LAUNCH};
use renderer::settings::nee::NeeMode;
use renderer::settings::repetitions::{BENCH_REPEAT, BENCH_WARMUP, MAX_REPEAT, MAX_WARMUP};
use renderer::settings::sampler::SamplerKind;
use renderer::settings::scope::{BackendFlag, Scope};
use renderer::settings::size::{MAX_DEPTH, MAX_SPP, parse_size, size_label};
use renderer::settings::wave_config::{
    CompactionArg, DEFAULT_CAPACITY, DEFAULT_COMPACTION, DEFAULT_DRAIN_BELOW, DEFAULT_SCHEDULE, DEFAULT_WAVE_BLOCK,
    WaveSchedule, compaction_label,
};
use std::path::PathBuf;

/// wavepath: megakernel versus wavefront path tracing, measured.
#[derive(Debug, Parser)]
#[command(name = "wavepath", version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("WAVEPATH_COMMIT"), ")"), about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// The process's command line, parsed; on an error clap prints it, each
    /// value it quotes cut to a readable length ([`shorten_for_error`]),
    /// and exits.
    pub fn parse_args() -> Cli {
        Cli::try_parse().unwrap_or_else(|e| shortened(e).exit())
    }
}

/// Clap's error `e` with every value it quotes (the value refused, an
/// unknown argument) cut to a readable length.
fn shortened(mut e: clap::Error) -> clap::Error {
    use clap::error::ContextValue;
    let long: Vec<_> = e
        .context()
        .filter_map(|(kind, value)| match value {
            ContextValue::String(s) => match shorten_for_error(s) {
                std::borrow::Cow::Owned(short) => Some((kind, short)),
                std::borrow::Cow::Borrowed(_) => None,
            },
            _ => None,
        })
        .collect();
    for (kind, short) in long {
        e.insert(kind, ContextValue::String(short));
    }
    e
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
    /// Write report.md and its figures (SVG; PNG too with --png) from an experiment's folder.
    Report(ReportArgs),
    /// Error metrics (RMSE, relative MSE, MAE, FLIP) of an image against a reference.
    Compare(CompareArgs),
    /// Describe the GPU and the embedded PTX modules.
    GpuInfo,
    /// Write a generated mesh (a subdivided, displaced icosphere) as OBJ.
    GenMesh(GenMeshArgs),
    /// Time traversal alone: closest hits for a buffer of camera or bounce rays.
    Raycast(RaycastArgs),
    /// Run studies on a GPU machine (verified, within a budget, spread), or install their results.
    #[command(subcommand)]
    Study(StudyCommand),
    /// Nsight Compute's counters of profiled renders, per back end and per kernel, beside the studies.
    #[command(subcommand)]
    Counters(CountersCommand),
    /// Where a kernel's instructions go, by part of a path (module of the device crate).
    ProfileParts(ProfilePartsArgs),
    /// Two renderers' images of two seeds each, compared against their noise.
    CompareSeeds(CompareSeedsArgs),
}

/// `wavepath raycast`.
#[derive(Debug, clap::Args)]
pub struct RaycastArgs {
    /// Scene and overrides (size, seed, depth, sampler and accel shape the
    /// rays; --spp and --nee do not, and are refused).
    #[command(flatten)]
    pub scene: SceneArgs,
    /// Which rays.
    #[arg(long, value_enum, default_value_t = RayKind::Bounce)]
    pub rays: RayKind,
    /// How many rays (at most 2^26).
    #[arg(long, default_value_t = 4_000_000, value_parser = clap::value_parser!(u64).range(1..=renderer::render::ray_throughput::MAX_RAYS))]
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
    /// Make every check a run makes before its first render (scenes, films,
    /// the output folder), print the plan (runs per study, a rough time)
    /// and run nothing.
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
    /// The flags given that concern only some back ends, with those back
    /// ends.
    pub fn given(&self) -> Vec<BackendFlag> {
        flags_given([(self.devices.is_some(), DEVICES)])
    }

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
    #[arg(long, conflicts_with_all = ["summary", "currency"])]
    pub allow_mixed: bool,
    /// Draw each figure as a PNG too, beside the SVG that report.md
    /// embeds (for slides and viewers without SVG).
    #[arg(long, conflicts_with_all = ["summary", "currency"])]
    pub png: bool,
    /// Write DIR/SUMMARY.md, the headline figures of every experiment
    /// folder in DIR, instead of one folder's report.
    #[arg(long, conflicts_with = "currency")]
    pub summary: bool,
    /// Write nothing; list each experiment folder in DIR as current or
    /// not for the checkout around DIR (DIR/..), and why not: its config,
    /// an input or the renderer's measured source changed since it ran.
    #[arg(long)]
    pub currency: bool,
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

// The profiling commands: counters, profile-parts, compare-seeds.

/// `wavepath counters`: the figures behind docs/results.md "Why, counted".
#[derive(Debug, Subcommand)]
pub enum CountersCommand {
    /// List the renders to profile (Nsight Compute's log file, then the
    /// `wavepath` arguments), writing the scenes whose fields a profile sets.
    Plan(CountersOutArgs),
    /// Print the metrics Nsight Compute collects of every launch (for `ncu --metrics`).
    Metrics,
    /// Check that every profiled render left its rows and summary; exit 1 listing those that did not.
    Check(CountersOutArgs),
    /// Sum the profiled renders into RESULTS/EXPERIMENT/counters/ and print the table.
    Sum(CountersSumArgs),
    /// Set why.csv's study columns afresh from re-run studies' runs.csv and print the table.
    Restudy(CountersRestudyArgs),
}

/// The profiles of `wavepath counters`.
#[derive(Debug, clap::Args)]
pub struct CountersProfilesArgs {
    /// A file of profiles, one a line: EXPERIMENT STUDY SCENE WxH SPP
    /// [FLAGS...] (default: the built-in profiles of docs/results.md).
    #[arg(long)]
    pub profiles: Option<PathBuf>,
}

/// `wavepath counters plan|check`.
#[derive(Debug, clap::Args)]
pub struct CountersOutArgs {
    /// The folder of the profiled renders' files.
    pub outdir: PathBuf,
    /// The profiles.
    #[command(flatten)]
    pub profiles: CountersProfilesArgs,
}

/// `wavepath counters sum`.
#[derive(Debug, clap::Args)]
pub struct CountersSumArgs {
    /// The folder of the profiled renders' files.
    pub outdir: PathBuf,
    /// The profiles.
    #[command(flatten)]
    pub profiles: CountersProfilesArgs,
    /// The results folder, with each study's EXPERIMENT/runs.csv.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
}

/// `wavepath counters restudy`.
#[derive(Debug, clap::Args)]
pub struct CountersRestudyArgs {
    /// The profiles.
    #[command(flatten)]
    pub profiles: CountersProfilesArgs,
    /// The results folder, with each study's EXPERIMENT/runs.csv and counters/why.csv.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
}

/// `wavepath profile-parts`.
#[derive(Debug, clap::Args)]
pub struct ProfilePartsArgs {
    /// Nsight Compute's per-instruction counters of one kernel (the CSV of
    /// `ncu -i REPORT --page source --csv --print-source sass`).
    pub source_page: PathBuf,
    /// The line table of the same machine code (`nvdisasm -g -c KERNEL.cubin`).
    pub disassembly: PathBuf,
    /// Module steps a part keeps: 1 for `accel`, 2 for `accel::bvh`.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=8))]
    pub depth: u32,
    /// A line of totals above the table, led by this title.
    #[arg(long)]
    pub title: Option<String>,
}

/// `wavepath compare-seeds`.
#[derive(Debug, clap::Args)]
pub struct CompareSeedsArgs {
    /// Renderer A's image of the first seed (linear: PFM or EXR).
    pub a0: PathBuf,
    /// Renderer A's image of the second seed.
    pub a1: PathBuf,
    /// Renderer B's image of the first seed.
    pub b0: PathBuf,
    /// Renderer B's image of the second seed.
    pub b1: PathBuf,
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

/// Launch configuration of the back ends: the launch flags, one for each
/// setting of [`SETTINGS`] that declares one ([`CliForm`]), built and read
/// from the table. Each is unset unless given: the back ends' own defaults
/// apply then, and a flag given to a back end that would ignore it is
/// refused ([`LaunchArgs::given`]).
#[derive(Debug, Default)]
pub struct LaunchArgs {
    /// The settings given, in table order, with their values.
    settings: Vec<(&'static SettingDecl, Value)>,
}

/// The settings of [`SETTINGS`] that have a launch flag.
fn launch_settings() -> impl Iterator<Item = &'static SettingDecl> {
    SETTINGS.iter().copied().filter(|d| !matches!(d.cli, CliForm::None))
}

/// The argument of `decl`'s launch flag, its id the setting's name.
fn launch_arg(decl: &'static SettingDecl) -> clap::Arg {
    // `launch_settings` leaves out the settings without a flag.
    let long = decl.flag().map_or("", |f| f.trim_start_matches('-'));
    let arg = clap::Arg::new(decl.name).long(long).help(decl.cli.help());
    let parse = move |text: String| decl.parse_cli(&text);
    match decl.cli {
        CliForm::Switch { .. } => arg.action(clap::ArgAction::SetTrue),
        CliForm::Valued {
            choices: Some(choices), ..
        } => arg
            .value_name(decl.value_name())
            .action(clap::ArgAction::Set)
            .value_parser(clap::builder::PossibleValuesParser::new(choices()).try_map(parse)),
        _ => arg
            .value_name(decl.value_name())
            .action(clap::ArgAction::Set)
            .value_parser(clap::builder::StringValueParser::new().try_map(parse)),
    }
}

impl clap::Args for LaunchArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.args(launch_settings().map(launch_arg))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for LaunchArgs {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut args = LaunchArgs::default();
        args.update_from_arg_matches(matches)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        for decl in launch_settings() {
            let value = match decl.cli {
                CliForm::Switch { .. } if matches.get_flag(decl.name) => Some(
                    decl.parse_cli("")
                        .map_err(|e| clap::Error::raw(clap::error::ErrorKind::ValueValidation, e))?,
                ),
                CliForm::Switch { .. } => None,
                _ => matches.get_one::<Value>(decl.name).cloned(),
            };
            if let Some(value) = value {
                self.settings.retain(|(d, _)| *d != decl);
                self.settings.push((decl, value));
            }
        }
        Ok(())
    }
}

/// The flag `flag` of `setting`: it concerns the back ends the setting does.
fn flag_of(flag: &'static str, setting: &SettingDecl) -> BackendFlag {
    BackendFlag {
        flag,
        scope: setting.scope,
    }
}

/// `--devices`: the GPUs of the GPU back ends.
pub const DEVICES: BackendFlag = BackendFlag {
    flag: "--devices",
    scope: Scope::Gpu,
};

/// `--launch-log`: the kernel launches of the GPU back ends.
pub const LAUNCH_LOG: BackendFlag = BackendFlag {
    flag: "--launch-log",
    scope: Scope::Gpu,
};

/// `--profile`: samples of the back ends that render on the host.
pub const PROFILE: BackendFlag = BackendFlag {
    flag: "--profile",
    scope: Scope::Host,
};

/// The flags of `flags` whose `given` is true.
fn flags_given(flags: impl IntoIterator<Item = (bool, BackendFlag)>) -> Vec<BackendFlag> {
    flags.into_iter().filter(|(given, _)| *given).map(|(_, f)| f).collect()
}

impl LaunchArgs {
    /// Whether the flag of `setting` was given.
    pub fn is_given(&self, setting: &SettingDecl) -> bool {
        self.settings.iter().any(|(d, _)| *d == setting)
    }

    /// The flags given, each with the back ends it concerns (the setting
    /// it sets declares them).
    pub fn given(&self) -> Vec<BackendFlag> {
        self.settings
            .iter()
            .filter_map(|(decl, _)| Some(flag_of(decl.flag()?, decl)))
            .collect()
    }

    /// The back-end options these arguments set, over the back ends'
    /// defaults.
    pub fn options(&self) -> Result<BackendOptions, String> {
        let options = options_with(&self.settings);
        options.megakernel.validate()?;
        options.wavefront.validate()?;
        Ok(options)
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
    /// Write the summary (what the summary line says: size, samples, rays,
    /// seconds, device) as a JSON record to this file.
    #[arg(long)]
    pub summary_json: Option<PathBuf>,
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
    /// The back end to check against the `cpu` reference.
    #[arg(long, value_enum, default_value_t = BackendKind::GpuMega)]
    pub backend: BackendKind,
    /// Launch configuration.
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Render the checked back end on these GPUs: `all`, or ordinals such
    /// as 0,1 (the samples split between them; default: GPU 0).
    #[arg(long, value_parser = parse_devices)]
    pub devices: Option<Devices>,
}

/// `wavepath bench`. Each sweep and setting is `None` unless given: the
/// back ends' default then, and one given that none of `--backends` uses
/// is refused ([`BenchArgs::given`]).
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Scene and overrides.
    #[command(flatten)]
    pub scene: SceneArgs,
    /// Back ends to measure in one run, comma-separated (every one must
    /// render the same image).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "gpu-mega")]
    pub backends: Vec<BackendKind>,
    /// Megakernel block shapes to try ([`DEFAULT_BLOCK`] unless given).
    #[arg(long, value_delimiter = ',', value_parser = parse_size, help = with_default(
        "Megakernel block shapes to try, comma-separated",
        size_label(DEFAULT_BLOCK)
    ))]
    pub blocks: Option<Vec<(u32, u32)>>,
    /// Megakernel samples per launch to try ([`DEFAULT_SAMPLES_PER_LAUNCH`]
    /// unless given).
    #[arg(long, value_delimiter = ',', help = with_default(
        "Megakernel samples per launch to try, comma-separated",
        DEFAULT_SAMPLES_PER_LAUNCH
    ))]
    pub samples_per_launch: Option<Vec<u32>>,
    /// Megakernel tile size (default: whole image).
    #[arg(long, value_parser = parse_size)]
    pub tile: Option<(u32, u32)>,
    /// Wavefront schedules to try ([`DEFAULT_SCHEDULE`] unless given).
    #[arg(long, value_enum, value_delimiter = ',', help = with_default(
        "Wavefront schedules to try (regenerate at the default refill)",
        DEFAULT_SCHEDULE.label()
    ))]
    pub schedules: Option<Vec<WaveSchedule>>,
    /// Wavefront compaction modes to try ([`DEFAULT_COMPACTION`] unless
    /// given).
    #[arg(long, value_enum, value_delimiter = ',', help = with_default(
        "Wavefront compaction modes to try",
        compaction_label(DEFAULT_COMPACTION.mode())
    ))]
    pub compactions: Option<Vec<CompactionArg>>,
    /// Wavefront pool capacities to try ([`DEFAULT_CAPACITY`] unless given).
    #[arg(long, value_delimiter = ',', value_parser = parse_capacity, help = with_default(
        "Wavefront pool capacities to try (powers of two, budgets such as 512MiB, or auto)",
        DEFAULT_CAPACITY.label()
    ))]
    pub capacities: Option<Vec<Capacity>>,
    /// Wavefront threads per block to try ([`DEFAULT_WAVE_BLOCK`] unless
    /// given).
    #[arg(long, value_delimiter = ',', help = with_default(
        "Wavefront threads per block to try",
        DEFAULT_WAVE_BLOCK
    ))]
    pub wave_blocks: Option<Vec<u32>>,
    /// Wavefront tail-drain thresholds to try ([`DEFAULT_DRAIN_BELOW`]
    /// unless given).
    #[arg(long, value_delimiter = ',', help = with_default(
        "Wavefront tail-drain thresholds to try (0: never drain)",
        DEFAULT_DRAIN_BELOW
    ))]
    pub drains: Option<Vec<u32>>,
    /// Timed repetitions per configuration (at most 1000).
    #[arg(long, default_value_t = BENCH_REPEAT, value_parser = clap::value_parser!(u32).range(1..=MAX_REPEAT as i64))]
    pub repeat: u32,
    /// Untimed warm-up renders per configuration (at most 100).
    #[arg(long, default_value_t = BENCH_WARMUP, value_parser = clap::value_parser!(u32).range(0..=MAX_WARMUP as i64))]
    pub warmup: u32,
    /// CPU threads for the `cpu` back end ([`DEFAULT_THREADS`] unless given).
    #[arg(long, value_parser = parse_threads, help = with_default(
        "CPU threads for the `cpu` back end (0: one per core; at most 1024)",
        DEFAULT_THREADS
    ))]
    pub threads: Option<usize>,
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

/// The values of a list flag, or `default` alone where it was not given.
fn values_or<T: Clone>(given: &Option<Vec<T>>, default: T) -> Vec<T> {
    given.clone().unwrap_or_else(|| vec![default])
}

impl BenchArgs {
    /// The flags given that concern only some back ends, each with those
    /// back ends (the setting it sweeps declares them).
    pub fn given(&self) -> Vec<BackendFlag> {
        flags_given([
            (self.blocks.is_some(), flag_of("--blocks", &BLOCK)),
            (
                self.samples_per_launch.is_some(),
                flag_of("--samples-per-launch", &SAMPLES_PER_LAUNCH),
            ),
            (self.tile.is_some(), flag_of("--tile", &TILE)),
            (self.schedules.is_some(), flag_of("--schedules", &SCHEDULE)),
            (self.compactions.is_some(), flag_of("--compactions", &COMPACTION)),
            (self.capacities.is_some(), flag_of("--capacities", &CAPACITY)),
            (self.wave_blocks.is_some(), flag_of("--wave-blocks", &WAVE_BLOCK)),
            (self.drains.is_some(), flag_of("--drains", &DRAIN_BELOW)),
            (self.threads.is_some(), flag_of("--threads", &THREADS)),
            (self.launch_log.is_some(), LAUNCH_LOG),
            (self.devices.is_some(), DEVICES),
        ])
    }

    /// The plan, over the back ends' defaults.
    pub fn plan(&self) -> BenchPlan {
        let defaults = BackendOptions::default();
        let (mega, wave) = (defaults.megakernel, defaults.wavefront);
        BenchPlan {
            scene: self.scene.scene.clone(),
            overrides: self.scene.overrides(),
            backends: self.backends.clone(),
            blocks: values_or(&self.blocks, mega.block),
            samples_per_launch: values_or(&self.samples_per_launch, mega.samples_per_launch),
            tile: self.tile,
            schedules: values_or(&self.schedules, wave.schedule),
            compactions: match &self.compactions {
                Some(given) => given.iter().map(|c| c.mode()).collect(),
                None => vec![wave.compaction],
            },
            capacities: values_or(&self.capacities, wave.capacity),
            wave_blocks: values_or(&self.wave_blocks, wave.block),
            drains: values_or(&self.drains, wave.drain_below),
            repeat: self.repeat,
            warmup: self.warmup,
            threads: self.threads.unwrap_or(defaults.threads),
        }
    }
}

/// Refuses `--split-all` without `--devices`: a render on one GPU has no
/// split for it to change.
fn check_split_all(launch: &LaunchArgs, devices: Option<&Devices>) -> Result<(), String> {
    if launch.is_given(&SPLIT_ALL) && devices.is_none() {
        return Err("--split-all applies to a render split over --devices; add --devices or leave it out".into());
    }
    Ok(())
}

impl RenderArgs {
    /// The validated request.
    pub fn to_request(&self) -> Result<RenderRequest, String> {
        check_split_all(&self.launch, self.devices.as_ref())?;
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
            flags: self.given(),
            out: self.out.clone(),
            progress: !self.quiet,
            launch_log: self.launch_log.clone(),
            profile: self.profile.clone(),
            summary_json: self.summary_json.clone(),
            devices: self.devices.clone(),
            stop: None,
        })
    }

    /// The flags given that concern only some back ends, with those back
    /// ends.
    pub fn given(&self) -> Vec<BackendFlag> {
        let mut flags = self.launch.given();
        flags.extend(flags_given([
            (self.devices.is_some(), DEVICES),
            (self.launch_log.is_some(), LAUNCH_LOG),
            (self.profile.is_some(), PROFILE),
        ]));
        flags
    }
}

impl VerifyArgs {
    /// The back-end options, checked (`--split-all` needs `--devices`).
    pub fn options(&self) -> Result<BackendOptions, String> {
        check_split_all(&self.launch, self.devices.as_ref())?;
        self.launch.options()
    }

    /// The flags given that concern only some back ends, with those back
    /// ends.
    pub fn given(&self) -> Vec<BackendFlag> {
        let mut flags = self.launch.given();
        flags.extend(flags_given([(self.devices.is_some(), DEVICES)]));
        flags
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args as _, CommandFactory as _};
    use renderer::settings::mega_config::MegakernelConfig;
    use renderer::settings::wave_config::WavefrontConfig;

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
        assert_eq!(args.blocks, Some(vec![(8, 8), (32, 4), (256, 1)]));
    }

    /// The long names of `args`' arguments, as typed.
    fn flags_of(args: &clap::Command) -> Vec<String> {
        args.get_arguments()
            .filter_map(|a| a.get_long())
            .map(|l| format!("--{l}"))
            .collect()
    }

    #[test]
    fn every_launch_flag_is_declared_with_the_back_ends_it_concerns() {
        let line = concat!(
            "wavepath render s.toml --block 8x8 --tile 8x8 --samples-per-launch 2 --threads 2 ",
            "--cpu-schedule static-rows --count-divergence --max-registers 64 --kernels all --arithmetic fast --schedule ",
            "bounce-sync --refill 0.5 --compaction prefix-sum --material-sort off --capacity 2^20 ",
            "--untimed-launches --wave-block 64 --drain-below 0 --split-all --devices 0 --launch-log l.csv ",
            "--profile p.svg",
        );
        let cli = Cli::try_parse_from(line.split_whitespace()).unwrap();
        let Command::Render(args) = cli.command else { panic!() };
        // Every launch flag, by its own name, in the order it is declared.
        let launch = flags_of(&LaunchArgs::augment_args(clap::Command::new("launch")));
        let given: Vec<&str> = args.launch.given().iter().map(|f| f.flag).collect();
        assert_eq!(given, launch);
        assert!(args.given().iter().all(|f| f.scope != Scope::Every));
        assert_eq!(args.given().len(), launch.len() + 3);
        let render = flags_of(Cli::command().find_subcommand("render").unwrap());
        assert!(args.given().iter().all(|f| render.iter().any(|r| r == f.flag)));
        // Nothing given, nothing to refuse.
        let cli = Cli::try_parse_from(["wavepath", "render", "s.toml", "--backend", "cpu"]).unwrap();
        let Command::Render(args) = cli.command else { panic!() };
        assert_eq!(args.given(), []);
    }

    #[test]
    fn every_setting_with_a_launch_flag_has_it_on_render_and_verify() {
        let declared: Vec<&str> = SETTINGS.iter().filter_map(|d| d.flag()).collect();
        assert!(declared.contains(&"--drain-below") && declared.contains(&"--untimed-launches"));
        for command in ["render", "verify"] {
            let flags = flags_of(Cli::command().find_subcommand(command).unwrap());
            for flag in &declared {
                assert!(flags.iter().any(|f| f == flag), "{command} lacks {flag}");
            }
        }
        assert_eq!(
            flags_of(&LaunchArgs::augment_args(clap::Command::new("launch"))),
            declared
        );
    }

    #[test]
    fn launch_flags_read_their_values_as_a_config_does() {
        let line = concat!(
            "wavepath render s.toml --refill 1 --capacity 2^20 --untimed-launches --max-registers 64 ",
            "--tile 16x8 --schedule regenerate --drain-below 0",
        );
        let cli = Cli::try_parse_from(line.split_whitespace()).unwrap();
        let Command::Render(args) = cli.command else { panic!() };
        let options = args.launch.options().unwrap();
        let (mega, wave) = (&options.megakernel, &options.wavefront);
        assert_eq!(wave.refill, Some(1.0));
        assert_eq!(Ok(wave.capacity), parse_capacity("2^20"));
        assert!(!wave.time_launches);
        assert_eq!((mega.max_registers, wave.max_registers), (Some(64), Some(64)));
        assert_eq!(mega.tile, Some((16, 8)));
        assert_eq!(wave.schedule, WaveSchedule::Regenerate);
        assert_eq!(wave.drain_below, 0);
        // A bad value: clap names the flag, the setting's parser what it expected.
        for (flag, value, expected) in [
            ("--drain-below", "1.5", "expected a whole number, got the number 1.5"),
            ("--refill", "2", "expected a fraction from 0 to 1, got 2"),
            ("--wave-block", "0", "expected a whole number from 1 to"),
            ("--schedule", "sideways", "[possible values: bounce-sync, regenerate]"),
        ] {
            let e = Cli::try_parse_from(["wavepath", "render", "s.toml", flag, value])
                .unwrap_err()
                .to_string();
            assert!(e.contains(flag) && e.contains(expected), "{e}");
        }
    }

    #[test]
    fn every_bench_flag_of_some_back_ends_is_declared_with_them() {
        let line = concat!(
            "wavepath bench s.toml --blocks 8x8 --samples-per-launch 2 --tile 8x8 --schedules ",
            "regenerate --compactions prefix-sum --capacities auto --wave-blocks 64 --drains 0 ",
            "--threads 2 --launch-log l.csv --devices 0",
        );
        let cli = Cli::try_parse_from(line.split_whitespace()).unwrap();
        let Command::Bench(args) = cli.command else { panic!() };
        let bench = flags_of(Cli::command().find_subcommand("bench").unwrap());
        let given = args.given();
        assert_eq!(given.len(), 11);
        assert!(given.iter().all(|f| bench.iter().any(|b| b == f.flag)), "{given:?}");
        let cli = Cli::try_parse_from(["wavepath", "bench", "s.toml", "--backends", "cpu"]).unwrap();
        let Command::Bench(args) = cli.command else { panic!() };
        assert_eq!(args.given(), []);
    }

    #[test]
    fn an_error_quotes_a_long_value_cut_short() {
        let long = format!("exact+{}", "x".repeat(100_000));
        let e = Cli::try_parse_from(["wavepath", "render", "s.toml", "--kernels", &long]).unwrap_err();
        assert!(e.to_string().len() > 100_000, "clap quotes it whole");
        let shown = shortened(e).to_string();
        assert!(shown.len() < 1000, "{} bytes", shown.len());
        assert!(
            shown.contains("(100006 bytes)") && shown.contains("is no feature"),
            "{shown}"
        );
    }

    #[test]
    fn the_command_line_defaults_are_the_back_ends_defaults() {
        let cli = Cli::try_parse_from(["wavepath", "render", "s.toml"]).unwrap();
        let Command::Render(args) = cli.command else { panic!() };
        assert_eq!(args.launch.options(), Ok(BackendOptions::default()));
        let cli = Cli::try_parse_from(["wavepath", "bench", "s.toml"]).unwrap();
        let Command::Bench(args) = cli.command else { panic!() };
        let (mega, wave) = (MegakernelConfig::default(), WavefrontConfig::default());
        let plan = args.plan();
        assert_eq!(plan.blocks, [mega.block]);
        assert_eq!(plan.samples_per_launch, [mega.samples_per_launch]);
        assert_eq!(plan.schedules, [wave.schedule]);
        assert_eq!(plan.compactions, [wave.compaction]);
        assert_eq!(plan.capacities, [wave.capacity]);
        assert_eq!(plan.wave_blocks, [wave.block]);
        assert_eq!(plan.drains, [wave.drain_below]);
    }
}

// ---- `wavepath study` ----

use lab::study::run::{DEFAULT_BUDGET_S, MAX_BUDGET_S, MAX_GPUS, MIN_BUDGET_S};

/// `wavepath study`: the studies behind results/, run on a GPU machine and
/// installed here.
#[derive(Debug, Subcommand)]
pub enum StudyCommand {
    /// On a GPU machine: verify every scene, then run each study (experiments/NAME.toml) within a budget.
    Run(StudyRunArgs),
    /// Here: install the complete studies of a returned studies.tgz into results/, checked first.
    Install(StudyInstallArgs),
}

/// `wavepath study run`.
#[derive(Debug, clap::Args)]
pub struct StudyRunArgs {
    /// The studies, in order: NAME of each experiments/NAME.toml.
    #[arg(required = true)]
    pub studies: Vec<String>,
    /// Seconds every run together may take; a run cut short is stopped as
    /// Ctrl-C stops it, and running again resumes it.
    #[arg(long, default_value_t = DEFAULT_BUDGET_S, value_parser = clap::value_parser!(u64).range(MIN_BUDGET_S..=MAX_BUDGET_S))]
    pub budget: u64,
    /// Run the studies N at a time on a host of N GPUs or more, slot i on
    /// GPU i alone and the i-th of N equal shares of the host's CPUs.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_GPUS)))]
    pub slots: u32,
    /// Run each study again over the first N GPUs (`experiment --devices`),
    /// into NAME_gpusN, for each N (2 to 16).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(2..=i64::from(MAX_GPUS)))]
    pub spread: Vec<u32>,
    /// Run each study again over N MPI ranks of one GPU each, into
    /// NAME_ranksN, for each N (2 to 16), after the image of the most ranks
    /// is checked against one process's.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(2..=i64::from(MAX_GPUS)))]
    pub ranks: Vec<u32>,
    /// A binary of another commit that runs each study too, into
    /// NAME_COMMIT (repeatable).
    #[arg(long = "reference")]
    pub references: Vec<PathBuf>,
    /// The binary that verifies, runs and reports the studies (default:
    /// this one).
    #[arg(long)]
    pub binary: Option<PathBuf>,
    /// The MPI launcher, run as `LAUNCHER -n N MPI_BINARY ...` (--ranks).
    #[arg(long, default_value = "gpu-run/mpi/run")]
    pub mpi_launcher: PathBuf,
    /// The binary built with MPI (--ranks).
    #[arg(long, default_value = "gpu-run/wavepath-mpi")]
    pub mpi_binary: PathBuf,
    /// The folder the study folders are written in (and resumed from).
    #[arg(long, default_value = "gpu-run/results")]
    pub results: PathBuf,
    /// The folder of what comes back: studies.tgz, device.txt, verify.txt,
    /// studies.log (in slotI/ for each slot with several).
    #[arg(long, default_value = "gpu-run/out")]
    pub out: PathBuf,
    /// Check the options and the configs, name each folder the run would
    /// make, and run nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `wavepath study install`.
#[derive(Debug, clap::Args)]
pub struct StudyInstallArgs {
    /// The studies.tgz a `study run` wrote.
    pub tarball: PathBuf,
    /// The results folder the studies go into; its SUMMARY.md is written
    /// afresh.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
}
