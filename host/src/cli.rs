//! The `wavepath` command line (clap), converted once into validated requests.

use crate::backend::BackendKind;
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
}

/// A back end, or `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// A GPU back end when a GPU is usable, otherwise `cpu` (and it says so).
    Auto,
    /// One CPU thread.
    CpuSerial,
    /// All CPU cores.
    Cpu,
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

/// `wavepath render`.
#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// The scene file (TOML).
    pub scene: PathBuf,
    /// Back end.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
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
    /// Output image (.png, .ppm or .bmp); default `<scene name>.png`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Render a debug view instead of radiance.
    #[arg(long, value_enum, default_value_t = ViewArg::Radiance)]
    pub view: ViewArg,
    /// CPU threads for the `cpu` back end (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Hide the progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// Parses `WIDTHxHEIGHT`.
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad =
        || format!("expected WIDTHxHEIGHT with sides from 1 to 32768, e.g. 1200x800; got `{s}`");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    let ok = |v: u32| (1..=crate::scene::MAX_IMAGE_SIDE).contains(&v);
    if ok(w) && ok(h) {
        Ok((w, h))
    } else {
        Err(bad())
    }
}

impl RenderArgs {
    /// The validated request.
    pub fn to_request(&self) -> RenderRequest {
        RenderRequest {
            scene: self.scene.clone(),
            backend: match self.backend {
                BackendArg::Auto => BackendChoice::Auto,
                BackendArg::CpuSerial => BackendChoice::Exactly(BackendKind::CpuSerial),
                BackendArg::Cpu => BackendChoice::Exactly(BackendKind::Cpu),
            },
            overrides: Overrides {
                spp: self.spp,
                max_depth: self.depth,
                size: self.size,
                seed: self.seed,
            },
            view: match self.view {
                ViewArg::Radiance => RenderView::Radiance,
                ViewArg::Normals => RenderView::Normals,
                ViewArg::Albedo => RenderView::Albedo,
                ViewArg::Depth => RenderView::Depth,
            },
            threads: self.threads,
            out: self.out.clone(),
            progress: !self.quiet,
        }
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
}
