//! `wavepath study run` and `wavepath study install`: the lab's study
//! runner and installer (`lab::study`), with the report written here.

use super::outln;
use crate::cli::{StudyCommand, StudyInstallArgs, StudyRunArgs};
use lab::study::folder::{FolderRun, StudyFolderName};
use lab::study::install::{InstallPlaces, install};
use lab::study::run::{StudyRunOptions, plan, run as run_studies};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Runs `wavepath study run` or `wavepath study install`.
pub fn run(command: &StudyCommand) -> anyhow::Result<ExitCode> {
    match command {
        StudyCommand::Run(args) => run_command(args),
        StudyCommand::Install(args) => install_command(args),
    }
}

/// The studies on this GPU machine; with `--dry-run`, the folders they
/// would make.
fn run_command(args: &StudyRunArgs) -> anyhow::Result<ExitCode> {
    let binary = match &args.binary {
        Some(binary) => binary.clone(),
        None => std::env::current_exe()?,
    };
    let opts = StudyRunOptions {
        studies: args.studies.clone(),
        budget: Duration::from_secs(args.budget),
        slots: args.slots,
        spread: args.spread.clone(),
        ranks: args.ranks.clone(),
        binary,
        references: args.references.clone(),
        mpi_launcher: args.mpi_launcher.clone(),
        mpi_binary: args.mpi_binary.clone(),
        experiments: PathBuf::from("experiments"),
        scenes: PathBuf::from("scenes"),
        results: args.results.clone(),
        out: args.out.clone(),
    };
    if args.dry_run {
        for study in plan(&opts)? {
            let spreads = study.spreads(&opts).into_iter();
            let folders = std::iter::once(StudyFolderName::own(&study.name))
                .chain(spreads.map(|s| StudyFolderName::of(&study.name, FolderRun::Spread(s))));
            let names: Vec<String> = folders.map(|f| f.to_string()).collect();
            let references = if opts.references.is_empty() {
                ""
            } else {
                ", and NAME_COMMIT of each --reference"
            };
            outln!("{}: {}{references}", study.name, names.join(", "));
        }
        return Ok(ExitCode::SUCCESS);
    }
    run_studies(&opts)?;
    Ok(ExitCode::SUCCESS)
}

/// The complete studies of a returned tarball into results/, then the
/// summary.
fn install_command(args: &StudyInstallArgs) -> anyhow::Result<ExitCode> {
    let places = InstallPlaces {
        archive: &args.tarball,
        results: &args.results,
        experiments: Path::new("experiments"),
    };
    let write_report = |folder: &Path| ::report::write_report(folder, false, ::report::Png::No).map(|_| ());
    let installed = install(&places, &write_report)
        .map_err(|why| anyhow::anyhow!("{why}; nothing installed, {}/ is as it was", args.results.display()))?;
    for note in &installed.notes {
        eprintln!("wavepath: {note}");
    }
    if installed.folders.is_empty() {
        eprintln!(
            "wavepath: no complete study in {}; nothing installed",
            args.tarball.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for folder in &installed.folders {
        outln!("installed {}", folder.display());
    }
    let summary = ::report::summary::write_summary(&args.results)?;
    outln!("wrote {}", summary.display());
    Ok(ExitCode::SUCCESS)
}
