//! `wavepath report`: tables and figures from an experiment's folder, or
//! the summary of every folder.

use super::outln;
use crate::cli::ReportArgs;
use ::report::Png;
use std::process::ExitCode;

/// Writes report.md and the figures (or, with `--summary`, SUMMARY.md),
/// and names each file written; with `--currency`, lists the folders'
/// currency instead.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    if args.currency {
        let folders = ::report::currency::check(&args.dir)?;
        for f in &folders {
            outln!("{} ({}): {}", f.folder, f.commit, f.currency);
        }
        let current = folders.iter().filter(|f| f.currency.is_current()).count();
        outln!(
            "{current} of {} experiment folders current for this checkout; a study whose figures are \
             not current is re-run when its question is next asked (docs/results.md, \"Is a figure current?\")",
            folders.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if args.summary {
        let path = ::report::summary::write_summary(&args.dir)?;
        outln!("wrote {}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let png = if args.png { Png::Yes } else { Png::No };
    let written = ::report::write_report(&args.dir, args.allow_mixed, png)?;
    outln!("wrote {}", written.markdown.display());
    for f in &written.figures {
        outln!("wrote {}", f.display());
    }
    Ok(ExitCode::SUCCESS)
}
