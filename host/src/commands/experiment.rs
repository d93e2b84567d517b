//! `wavepath experiment`: run a config of studies into a folder, keeping
//! every finished row on Ctrl-C.

use super::{command_line, out, outln};
use crate::cli::ExperimentArgs;
use crate::experiment::config;
use crate::experiment::runner::{self, Outcome, RunOptions};
use crate::experiment::spread;
use crate::system::interrupt;
use std::path::Path;
use std::process::ExitCode;

/// Runs the config (or prints its plan) and summarises each study.
pub fn run(args: &ExperimentArgs) -> anyhow::Result<ExitCode> {
    let config = config::load(&args.config)?;
    if args.dry_run {
        out!("{}", runner::dry_run(&config, args.only.as_deref())?);
        return Ok(ExitCode::SUCCESS);
    }
    let dir = args.out_dir();
    let stop = interrupt::graceful("stopping after the render in flight; every finished row is kept");
    let options = RunOptions {
        out: Some(dir.clone()),
        only: args.only.clone(),
        resume: args.resume,
        allow_mixed: args.allow_mixed,
        allow_dirty: args.allow_dirty,
        progress: !args.quiet,
        command: command_line(),
        stop: Some(stop),
        devices: args.devices.clone(),
        ..RunOptions::default()
    };
    let outcome = runner::run(&config, &options)?;
    print_summary(&outcome, &dir)?;
    if outcome.failed() {
        return Ok(ExitCode::FAILURE);
    }
    if outcome.interrupted() {
        eprintln!("wavepath: stopped by Ctrl-C; every finished row is kept; --resume continues");
        return Ok(ExitCode::from(interrupt::EXIT_STATUS));
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
    outln!(
        "wrote {}/runs.csv, kernels.csv and manifest.toml; `wavepath report {}` makes the tables and figures",
        dir.display(),
        dir.display()
    );
    Ok(())
}
