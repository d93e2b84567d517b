//! `wavepath report`: tables and figures from an experiment's folder, or
//! the summary of every folder.

use super::outln;
use crate::cli::ReportArgs;
use std::process::ExitCode;

/// Writes report.md and the figures (or, with `--summary`, SUMMARY.md),
/// and names each file written.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    if args.summary {
        let path = crate::experiment::report::summary::write_summary(&args.dir)?;
        outln!("wrote {}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let written = crate::experiment::report::write_report(&args.dir, args.allow_mixed)?;
    outln!("wrote {}", written.markdown.display());
    for f in &written.figures {
        outln!("wrote {}", f.display());
    }
    Ok(ExitCode::SUCCESS)
}
