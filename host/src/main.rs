//! The `wavepath` binary: parse the command line, run, print the error chain.

use clap::Parser;
use std::process::ExitCode;
use wavepath::cli::Cli;

fn main() -> ExitCode {
    match wavepath::commands::run(Cli::parse()) {
        Ok(code) => code,
        // A reader that stops early (`| head`) is not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("wavepath: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
