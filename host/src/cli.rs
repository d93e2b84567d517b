//! The `wavepath` command line (clap), converted once into validated requests.

use crate::accel::AccelChoice;
use crate::backend::gpu::megakernel::MegakernelConfig;
use crate::backend::{BackendKind, BackendOptions};
use crate::raycast::RayKind;
use crate::render::{BackendChoice, Overrides, RenderRequest};
use clap::{Parser, Subcommand, ValueEnum};
use device::scene::RenderView;
use std::path::PathBuf;

/// wavepath: megakernel versus wavefront path tracing, measured.
#[derive(Debug, Parser)]
#[command(name = "wavepath", version, about)]
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
    /// How many rays.
    #[arg(long, default_value_t = 4_000_000)]
    pub count: usize,
    /// Threads per block to try, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "64,128,256")]
    pub blocks: Vec<u32>,
    /// Timed repetitions per block size.
    #[arg(long, default_value_t = 5)]
    pub repeat: u32,
    /// Write one row per repetition to this CSV file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
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
}

impl BackendArg {
    fn choice(self) -> BackendChoice {
        match self {
            BackendArg::Auto => BackendChoice::Auto,
            BackendArg::CpuSerial => BackendChoice::Exactly(BackendKind::CpuSerial),
            BackendArg::Cpu => BackendChoice::Exactly(BackendKind::Cpu),
            BackendArg::GpuMega => BackendChoice::Exactly(BackendKind::GpuMega),
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
    /// Samples per pixel (default: the scene's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub spp: Option<u32>,
    /// Maximum ray segments per path (default: the scene's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub depth: Option<u32>,
    /// Image size as WIDTHxHEIGHT (default: the scene's).
    #[arg(long, value_parser = parse_size)]
    pub size: Option<(u32, u32)>,
    /// RNG seed (default: the scene's).
    #[arg(long)]
    pub seed: Option<u32>,
    /// Acceleration structure (default: the scene's `[accel]`, else bvh).
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
    /// Megakernel block shape as XxY threads (X*Y a multiple of 32, at most 1024).
    #[arg(long, value_parser = parse_size, default_value = "8x8")]
    pub block: (u32, u32),
    /// Megakernel tile size in pixels (default: the whole image per launch).
    #[arg(long, value_parser = parse_size)]
    pub tile: Option<(u32, u32)>,
    /// Samples per pixel per megakernel launch.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..), default_value_t = 16)]
    pub samples_per_launch: u32,
    /// CPU threads for the `cpu` back end (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

impl LaunchArgs {
    /// The back-end options these arguments set.
    pub fn options(&self) -> Result<BackendOptions, String> {
        let megakernel = MegakernelConfig {
            block: self.block,
            tile: self.tile,
            samples_per_launch: self.samples_per_launch,
        };
        megakernel.validate()?;
        Ok(BackendOptions {
            threads: self.threads,
            megakernel,
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
    /// Back end.
    #[arg(long, value_enum, default_value_t = BackendArg::GpuMega)]
    pub backend: BackendArg,
    /// Megakernel block shapes to try, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = parse_size, default_value = "8x8")]
    pub blocks: Vec<(u32, u32)>,
    /// Samples per launch to try, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16")]
    pub samples_per_launch: Vec<u32>,
    /// Megakernel tile size (default: whole image).
    #[arg(long, value_parser = parse_size)]
    pub tile: Option<(u32, u32)>,
    /// Timed repetitions per configuration.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Untimed warm-up renders per configuration.
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// CPU threads for the `cpu` back end (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Write one row per repetition to this CSV file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
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
        })
    }
}

/// The concrete back end of a `verify` or `bench` argument (`auto` is not a
/// back end to measure).
pub fn concrete_backend(arg: BackendArg) -> Result<BackendKind, String> {
    match arg.choice() {
        BackendChoice::Exactly(kind) => Ok(kind),
        BackendChoice::Auto => Err("name a back end (cpu, cpu-serial, gpu-mega), not auto".into()),
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
        let cli = Cli::try_parse_from(["wavepath", "render", "s.toml", "--block", "7x3"]).unwrap();
        let Command::Render(args) = cli.command else { panic!() };
        assert!(
            args.to_request()
                .unwrap_err()
                .contains("multiple of the 32-thread warp")
        );
        let cli = Cli::try_parse_from(["wavepath", "bench", "s.toml", "--blocks", "8x8,32x4,256x1"]).unwrap();
        let Command::Bench(args) = cli.command else { panic!() };
        assert_eq!(args.blocks, [(8, 8), (32, 4), (256, 1)]);
    }
}
