//! `wavepath profile-parts`: a kernel's instructions by part of a path
//! (`report::path_parts`).

use super::out;
use crate::cli::ProfilePartsArgs;
use report::path_parts::PathParts;
use std::process::ExitCode;

/// Prints the table, and how many instructions had no line.
pub fn run(args: &ProfilePartsArgs) -> anyhow::Result<ExitCode> {
    let parts = PathParts::read(&args.source_page, &args.disassembly, args.depth as usize)?;
    out!("{}", parts.table(args.title.as_deref()));
    if parts.unmatched > 0 {
        eprintln!("({} instructions had no line in the disassembly)", parts.unmatched);
    }
    Ok(ExitCode::SUCCESS)
}
