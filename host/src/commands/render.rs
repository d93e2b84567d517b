//! `wavepath render`: one scene to one image, keeping the finished samples
//! on Ctrl-C.

use super::{out, outln};
use crate::cli::RenderArgs;
use crate::system::interrupt;
use anyhow::anyhow;
use std::process::ExitCode;

/// Renders, prints the summary and the GPU profile.
pub fn run(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    let mut request = args.to_request().map_err(|e| anyhow!(e))?;
    request.stop = Some(interrupt::graceful(
        "stopping after the samples in flight; the image of the finished samples will be written",
    ));
    let summary = crate::render::run(&request)?;
    outln!("{}", summary.line());
    if let Some(profile) = &summary.output.gpu {
        out!("{}", profile.table());
    }
    if interrupt::requested() {
        eprintln!(
            "wavepath: stopped by Ctrl-C after {} of {} samples per pixel; {} holds them",
            summary.output.spp,
            summary.spp,
            summary.image.display()
        );
        return Ok(ExitCode::from(interrupt::EXIT_STATUS));
    }
    Ok(ExitCode::SUCCESS)
}
