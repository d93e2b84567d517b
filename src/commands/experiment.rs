//! `wavepath experiment`: run a config of studies into a folder, keeping
//! every finished row on Ctrl-C; under an MPI launcher (`--features mpi`),
//! over its ranks.

use super::{command_line, out, outln};
use crate::cli::ExperimentArgs;
use lab::config;
use lab::runner::{self, Outcome, RunOptions};
use lab::spread;
use renderer::system::interrupt;
use renderer::system::provenance::Provenance;
use std::path::Path;
use std::process::ExitCode;

/// Runs the config (or prints its plan) and summarises each study.
pub fn run(args: &ExperimentArgs) -> anyhow::Result<ExitCode> {
    #[cfg(feature = "mpi")]
    let cluster = lab::cluster::Cluster::join()?;
    let config = config::load(&args.config).map_err(anyhow::Error::from);
    // Under a launcher the ranks agree on the config first, so that none
    // waits on one that could not read it.
    #[cfg(feature = "mpi")]
    let config = match &cluster {
        Some(cluster) => lab::cluster::failure::agree(cluster, config, |c| format!("config {}", c.fingerprint())),
        None => config,
    };
    let config = config?;
    #[cfg(feature = "mpi")]
    if cluster.as_ref().is_some_and(|c| !c.is_root()) && args.dry_run {
        return Ok(ExitCode::SUCCESS);
    }
    let dir = args.out_dir();
    let mut options = RunOptions {
        out: Some(dir.clone()),
        only: args.only.clone(),
        resume: args.resume,
        allow_mixed: args.allow_mixed,
        allow_dirty: args.allow_dirty,
        progress: !args.quiet,
        command: command_line(),
        devices: args.devices.clone(),
        flags: args.given(),
        ..RunOptions::new(crate::BUILD)
    };
    if args.dry_run {
        // The checks a run makes before its first render, then the plan.
        let (plan, _) = runner::check(&config, &options, &Provenance::collect(crate::BUILD))?;
        out!("{}", runner::dry_run(&config, &plan));
        return Ok(ExitCode::SUCCESS);
    }
    options.stop = Some(interrupt::graceful(
        "stopping after the render in flight (a CPU render at its next whole sample, kept for --resume); every finished row is kept",
    ));
    #[cfg(feature = "mpi")]
    if let Some(cluster) = &cluster {
        return match lab::cluster::experiment::run(cluster, &config, &options, args.share_cores)? {
            Some(outcome) => finish(&outcome, &dir),
            None if interrupt::requested() => Ok(ExitCode::from(interrupt::exit_status())),
            None => Ok(ExitCode::SUCCESS),
        };
    }
    finish(&runner::run(&config, &options)?, &dir)
}

/// Prints the summary and chooses the exit status: failure when a study
/// failed its film check, 128 + the signal's number (130 after Ctrl-C)
/// when a stop request ended the runs.
fn finish(outcome: &Outcome, dir: &Path) -> anyhow::Result<ExitCode> {
    print_summary(outcome, dir)?;
    if outcome.failed() {
        return Ok(ExitCode::FAILURE);
    }
    if outcome.interrupted() {
        eprintln!(
            "wavepath: stopped by {}; every finished row is kept; --resume continues",
            interrupt::stopped_by()
        );
        return Ok(ExitCode::from(interrupt::exit_status()));
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per study, the runner's overhead, and where the files are.
fn print_summary(outcome: &Outcome, dir: &Path) -> anyhow::Result<()> {
    for s in &outcome.manifest.study {
        outln!(
            "study {}: {} rows, {}; films {}",
            s.name,
            s.rows,
            s.status,
            s.film_check
        );
    }
    if let Some(o) = &outcome.manifest.overhead {
        outln!(
            "runner overhead per GPU row: median {:.2}%, at most {:.2}% of the render call ({} rows)",
            100.0 * o.median_fraction,
            100.0 * o.max_fraction,
            o.gpu_rows
        );
    }
    out!("{}", spread::per_gpu(&outcome.rows));
    out!("{}", spread::per_rank(&outcome.rows));
    outln!(
        "wrote {}/runs.csv, kernels.csv and manifest.toml; `wavepath report {}` makes the tables and figures",
        dir.display(),
        dir.display()
    );
    Ok(())
}
