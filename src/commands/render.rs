//! `wavepath render`: one scene to one image, keeping the finished samples
//! on Ctrl-C.

use super::{out, outln};
use crate::cli::RenderArgs;
use anyhow::{Context, anyhow};
use renderer::io::atomic_file;
use renderer::render::summary_record::SummaryRecord;
use renderer::render::{RenderSummary, split};
use renderer::system::cpu_profile::CpuProfiler;
use renderer::system::interrupt;
use std::path::Path;
use std::process::ExitCode;

/// Renders, prints the summary and the GPU profile.
pub fn run(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    let mut request = args.to_request().map_err(|e| anyhow!(e))?;
    request.stop = Some(interrupt::graceful(
        "stopping after the samples in flight; the image of the finished samples will be written",
    ));
    let profiler = args
        .profile
        .as_deref()
        .map(|path| start_profile().map(|p| (p, path)))
        .transpose()?;
    #[cfg(feature = "mpi")]
    if let Some(cluster) = lab::cluster::Cluster::join()? {
        return match lab::cluster::render::run(&cluster, &request)? {
            Some(summary) => finish(&summary, args, profiler),
            None => Ok(exit_status()),
        };
    }
    let summary = renderer::render::run(&request)?;
    finish(&summary, args, profiler)
}

/// Writes the summary record if asked for, prints the summary (and the
/// profile), and chooses the exit status.
fn finish(
    summary: &RenderSummary,
    args: &RenderArgs,
    profiler: Option<(CpuProfiler, &Path)>,
) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.summary_json {
        SummaryRecord::of(summary).write(path)?;
    }
    print_summary(summary).with_context(|| {
        format!(
            "{} was written, but printing the summary to standard output failed",
            summary.image.display()
        )
    })?;
    if let Some((profiler, path)) = profiler {
        finish_profile(profiler, path)?;
    }
    if interrupt::requested() {
        eprintln!(
            "wavepath: stopped by {} after {} of {} samples per pixel; {} holds them",
            interrupt::stopped_by(),
            summary.output.spp,
            summary.spp,
            summary.image.display()
        );
    }
    Ok(exit_status())
}

/// 128 + the signal's number after a stop (130 after Ctrl-C; the finished
/// samples were kept), 0 otherwise.
fn exit_status() -> ExitCode {
    if interrupt::requested() {
        ExitCode::from(interrupt::exit_status())
    } else {
        ExitCode::SUCCESS
    }
}

/// Starts sampling. The file is checked with the render's other outputs,
/// and the render refuses `--profile` on a GPU back end, which prints its
/// per-kernel profile instead.
fn start_profile() -> anyhow::Result<CpuProfiler> {
    CpuProfiler::start()
}

/// Ends the profile: prints its table and writes the flame graph, or
/// refuses a profile too short to measure (writing nothing).
fn finish_profile(profiler: CpuProfiler, path: &Path) -> anyhow::Result<()> {
    let profile = profiler.finish()?;
    profile.check_samples().with_context(|| path.display().to_string())?;
    out!("{}", profile.table(PROFILE_ROWS));
    atomic_file::write(path, &profile.flamegraph()?)?;
    outln!("flame graph: {}", path.display());
    Ok(())
}

/// Functions the profile table lists.
const PROFILE_ROWS: usize = 15;

/// The summary line and, for a GPU back end, the per-kernel profile.
fn print_summary(summary: &RenderSummary) -> anyhow::Result<()> {
    outln!("{}", summary.line());
    out!("{}", split::describe(&summary.shares, summary.merge));
    if let Some(profile) = &summary.output.gpu {
        out!("{}", profile.table());
    }
    Ok(())
}
