//! One thin `run` per subcommand: take the validated arguments, call the
//! layer that does the work, print what it returns, choose the exit status.
//!
//! Output to stdout goes through `out!` and `outln!`, which return a
//! write error (a closed pipe) instead of panicking as `print!` does.

mod bench;
mod compare;
mod compare_seeds;
mod counters;
mod experiment;
mod gen_mesh;
mod gpu_info;
mod profile_parts;
mod raycast;
mod render;
mod report;
mod study;
mod verify;

use crate::cli::{Cli, Command};
use renderer::system::interrupt;
use std::process::ExitCode;

/// Writes to stdout, returning write errors (a closed pipe) instead of
/// panicking as `print!` does.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        write!(stdout, $($arg)*).and_then(|_| stdout.flush())?
    }};
}

/// `out!` with a newline.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, $($arg)*).and_then(|_| stdout.flush())?
    }};
}

pub(crate) use {out, outln};

/// Runs one parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    interrupt::install()?;
    #[cfg(feature = "mpi")]
    if lab::cluster::launch::launched() && !matches!(cli.command, Command::Render(_) | Command::Experiment(_)) {
        anyhow::bail!(
            "started by an MPI launcher: only `render` and `experiment` split their work over the ranks; \
             run this command without mpirun"
        );
    }
    let result = match cli.command {
        Command::Render(args) => render::run(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Experiment(args) => experiment::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::GpuInfo => gpu_info::run(),
        Command::Raycast(args) => raycast::run(&args),
        Command::GenMesh(args) => gen_mesh::run(&args),
        Command::Study(command) => study::run(&command),
        Command::Counters(command) => counters::run(&command),
        Command::ProfileParts(args) => profile_parts::run(&args),
        Command::CompareSeeds(args) => compare_seeds::run(&args),
    };
    #[cfg(feature = "mpi")]
    let result = lab::cluster::failure::quiet(result);
    result
}

/// The command line as typed, for manifests.
fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}
