//! `wavepath counters`: the renders to profile under Nsight Compute, the
//! check that each left its files, and their sums per back end and per
//! kernel beside the studies (`report::counters`).

use super::outln;
use crate::cli::{CountersCommand, CountersProfilesArgs};
use report::counters::{self, CountersWritten, Profile};
use std::process::ExitCode;

/// Runs one `counters` subcommand.
pub fn run(command: &CountersCommand) -> anyhow::Result<ExitCode> {
    match command {
        CountersCommand::Plan(args) => {
            for render in counters::plan(&profiles(&args.profiles)?, &args.outdir)? {
                outln!("{}", render.line());
            }
        }
        CountersCommand::Metrics => outln!("{}", counters::METRICS),
        CountersCommand::Check(args) => {
            let (failed, renders) = counters::failed_renders(&profiles(&args.profiles)?, &args.outdir);
            if !failed.is_empty() {
                eprintln!(
                    "wavepath: error: {} of {renders} profiled renders failed ({}); `counters sum` needs every one \
                     (each one's .txt holds what the render printed)",
                    failed.len(),
                    failed.join(" ")
                );
                return Ok(ExitCode::FAILURE);
            }
            outln!(
                "{}: every one of {renders} profiled renders left its rows",
                args.outdir.display()
            );
        }
        CountersCommand::Sum(args) => {
            print(&counters::sum(&profiles(&args.profiles)?, &args.outdir, &args.results)?)?;
        }
        CountersCommand::Restudy(args) => print(&counters::restudy(&profiles(&args.profiles)?, &args.results)?)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The profiles named, or the built-in ones.
fn profiles(args: &CountersProfilesArgs) -> anyhow::Result<Vec<Profile>> {
    counters::read_profiles(args.profiles.as_deref())
}

/// The table docs/results.md holds, row by row.
fn print(written: &CountersWritten) -> anyhow::Result<()> {
    for row in &written.table {
        outln!("{row}");
    }
    Ok(())
}
