//! `wavepath verify`: a GPU back end against the CPU, bit for bit.

use super::outln;
use crate::cli::VerifyArgs;
use anyhow::anyhow;
use renderer::render::verify;
use renderer::settings::backend::BackendKind;
use renderer::settings::scope::check_flags;
use std::process::ExitCode;

/// Verifies and prints the report; fails on a mismatch.
pub fn run(args: &VerifyArgs) -> anyhow::Result<ExitCode> {
    let backend = args.backend;
    let options = args.options().map_err(|e| anyhow!(e))?;
    // The checked back end and the `cpu` reference both take the options.
    check_flags(&args.given(), &[backend, BackendKind::Cpu]).map_err(|e| anyhow!(e))?;
    let report = verify::verify_on(
        &args.scene.scene,
        &args.scene.overrides(),
        (backend, args.devices.as_ref()),
        options,
    )?;
    outln!("{}", report.describe());
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
