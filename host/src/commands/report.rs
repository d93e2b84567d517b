//! `wavepath report`: tables and figures from an experiment's folder.

use super::outln;
use crate::cli::ReportArgs;
use std::process::ExitCode;

/// Writes report.md and the figures, and names each file written.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let written = crate::experiment::report::write_report(&args.dir, args.allow_mixed)?;
    outln!("wrote {}", written.markdown.display());
    for f in &written.figures {
        outln!("wrote {}", f.display());
    }
    Ok(ExitCode::SUCCESS)
}
