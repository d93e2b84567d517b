//! `wavepath compare-seeds`: two renderers' images of two seeds each
//! (`renderer::render::seed_compare`).

use super::out;
use crate::cli::CompareSeedsArgs;
use renderer::render::seed_compare::compare_seeds;
use std::process::ExitCode;

/// Prints the table of regions.
pub fn run(args: &CompareSeedsArgs) -> anyhow::Result<ExitCode> {
    out!("{}", compare_seeds([&args.a0, &args.a1], [&args.b0, &args.b1])?);
    Ok(ExitCode::SUCCESS)
}
