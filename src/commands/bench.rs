//! `wavepath bench`: a one-study experiment over launch configurations,
//! with a summary of each back end's best.

use super::{command_line, out};
use crate::cli::BenchArgs;
use anyhow::Context;
use lab::bench;
use lab::runner::{self, RunOptions};
use lab::spread;
use renderer::io::atomic_file::Output;
use renderer::io::csv;
use std::process::ExitCode;

/// Times the plan (its CSV and launch log checked with the runner's other
/// checks, before the first run), prints the summary, writes the CSV and
/// launch log.
pub fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    let plan = args.plan();
    let config = plan.config(&command_line());
    let outputs = [
        args.csv.as_ref().map(|p| Output::new(p, "the bench CSV")),
        args.launch_log.as_ref().map(|p| Output::new(p, "the launch log")),
    ];
    let options = RunOptions {
        outputs: outputs.into_iter().flatten().collect(),
        command: command_line(),
        keep_profiles: true,
        require_gpu: true,
        // A bench is a measurement at the command line, not a result set:
        // its CSV rows carry the commit and the dirty flag.
        allow_dirty: true,
        progress: false,
        devices: args.devices.clone(),
        flags: args.given(),
        ..RunOptions::new(crate::BUILD)
    };
    let result = runner::run(&config, &options)?;
    if result.failed() {
        for s in &result.manifest.study {
            eprintln!("wavepath: {}: {}", plan.scene.display(), s.film_check);
        }
        return Ok(ExitCode::FAILURE);
    }
    out!("{}", bench::summary(&result));
    out!("{}", spread::per_gpu(&result.rows));
    if let Some(path) = &args.csv {
        csv::write_csv(path, &result.rows).with_context(|| format!("{}: writing the bench CSV", path.display()))?;
    }
    if let Some(path) = &args.launch_log {
        bench::write_best_launches(&result, path)?;
    }
    Ok(ExitCode::SUCCESS)
}
