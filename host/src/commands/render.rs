//! `wavepath render`: one scene to one image, keeping the finished samples
//! on Ctrl-C.

use super::{out, outln};
use crate::cli::RenderArgs;
use crate::render::RenderSummary;
use crate::system::interrupt;
use anyhow::{Context, anyhow};
use std::process::ExitCode;

/// Renders, prints the summary and the GPU profile.
pub fn run(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    let mut request = args.to_request().map_err(|e| anyhow!(e))?;
    request.stop = Some(interrupt::graceful(
        "stopping after the samples in flight; the image of the finished samples will be written",
    ));
    let summary = crate::render::run(&request)?;
    print_summary(&summary).with_context(|| {
        format!(
            "{} was written, but printing the summary to standard output failed",
            summary.image.display()
        )
    })?;
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

/// The summary line and, for a GPU back end, the per-kernel profile.
fn print_summary(summary: &RenderSummary) -> anyhow::Result<()> {
    outln!("{}", summary.line());
    if let Some(profile) = &summary.output.gpu {
        out!("{}", profile.table());
    }
    Ok(())
}
