//! The `wavepath` binary: parse the command line, run, print the error chain.

use clap::Parser;
use std::process::ExitCode;
use wavepath::cli::{Cli, Command};

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wavepath: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Render(args) => {
            let summary = wavepath::render::run(&args.to_request())?;
            println!("{}", summary.line());
        }
    }
    Ok(())
}
