//! `wavepath study install`: the study folders of a returned studies
//! tarball, checked and swapped into results/. Nothing is written to
//! results/ until every check has passed, in this order:
//!
//! 1. every member's header ([`super::tarball::check`]);
//! 2. the members are extracted into a staging folder beside results/;
//! 3. each study folder is checked whole: its name says what made it
//!    ([`StudyFolderName`]) and names an existing `experiments/NAME.toml`,
//!    its manifest is one (`lab::records::Manifest`) of a run of that
//!    config, by the commit a reference run's name says, spread as a
//!    spread's name says, and every study in it has a status. A study not
//!    complete, or a folder without a manifest, was cut short: it is left
//!    out, and the rest installed. The report (`report.md`, `figures/`) is
//!    written afresh from the staged rows by the caller's `write_report`
//!    (what the tarball held of it is dropped first), and a complete
//!    study's `partial/` is dropped with a note;
//! 4. what else results/NAME holds (a reference image the study reads,
//!    renders) is linked into the staged folder, and each staged folder
//!    then replaces results/NAME by a rename.
//!
//! Any refusal leaves results/ as it was.

use super::folder::{FolderRun, SpreadOver, StudyFolderName};
use super::{FIGURES, OWN_FILES, tarball};
use crate::partial::FOLDER as PARTIAL;
use crate::records::Manifest;
use renderer::io::input_file::read_text;
use std::path::{Path, PathBuf};

/// The largest manifest read (a manifest holds its config's text and a
/// line per input: kilobytes).
const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// What an install did.
#[derive(Debug, Default)]
pub struct Installed {
    /// The folders installed under results/, in name order.
    pub folders: Vec<PathBuf>,
    /// Notes on what was left out or dropped, one line each.
    pub notes: Vec<String>,
}

/// Where an install reads and writes.
pub struct InstallPlaces<'a> {
    /// The studies tarball.
    pub archive: &'a Path,
    /// The results folder the studies go into.
    pub results: &'a Path,
    /// The folder of the experiment configs the folders are named for.
    pub experiments: &'a Path,
}

/// Checks, stages and installs the studies of `places.archive`;
/// `write_report` writes a staged folder's report from its rows, or says
/// why it cannot. The error is one line naming the file and what was
/// expected; results/ is then as it was.
pub fn install(
    places: &InstallPlaces<'_>,
    write_report: &dyn Fn(&Path) -> anyhow::Result<()>,
) -> Result<Installed, String> {
    let checked = tarball::check(places.archive)?;
    let stage = Stage::beside(places.results)?;
    let new = stage.path.join("new");
    tarball::extract(places.archive, &checked, &new)?;
    let mut installed = Installed::default();
    let mut accepted = Vec::new();
    for name in folder_names(&new)? {
        let folder = new.join(&name);
        let run = StudyFolderName::parse(&name)
            .filter(|run| places.experiments.join(format!("{}.toml", run.study)).is_file())
            .ok_or_else(|| {
                format!(
                    "{name}: no experiments/{name}.toml (a study folder is named NAME for experiments/NAME.toml, \
                     NAME_COMMIT for its run with a reference binary, or NAME_gpusN and NAME_ranksN for its run \
                     spread over N GPUs or MPI ranks)"
                )
            })?;
        if let Some(why) = cut_short(&name, &folder, &run)? {
            installed.notes.push(format!(
                "{name} was cut short ({why}); left out (run it again with a larger --budget)"
            ));
            continue;
        }
        let partial = folder.join(PARTIAL);
        if partial.is_dir() {
            installed.notes.push(format!(
                "{name}/{PARTIAL} dropped: the study is complete, so no run needs its kept renders"
            ));
            remove(&partial)?;
        }
        for old in ["report.md", FIGURES] {
            remove(&folder.join(old))?;
        }
        write_report(&folder).map_err(|e| format!("{name}: `wavepath report` refuses it: {e:#}"))?;
        let figures = folder.join(FIGURES);
        if std::fs::read_dir(&figures).is_ok_and(|mut d| d.next().is_none()) {
            remove(&figures)?;
        }
        keep_the_rest(&places.results.join(&name), &folder)?;
        accepted.push((name, folder));
    }
    std::fs::create_dir_all(places.results)
        .map_err(|e| format!("{}: cannot make it: {e}", places.results.display()))?;
    for (name, folder) in accepted {
        let target = places.results.join(&name);
        swap_in(&folder, &target, &stage.path.join(format!("replaced-{name}")))?;
        installed.folders.push(target);
    }
    Ok(installed)
}

/// The names of the folders under `dir` (none if the tarball held none),
/// sorted.
fn folder_names(dir: &Path) -> Result<Vec<String>, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut names = entries
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: cannot list it: {e}", dir.display()))?;
    names.sort();
    Ok(names)
}

/// Why the staged study `folder` was cut short (`None` if it finished);
/// refuses a manifest that is not one of `run`.
fn cut_short(name: &str, folder: &Path, run: &StudyFolderName) -> Result<Option<String>, String> {
    let path = folder.join("manifest.toml");
    if !path.exists() {
        return Ok(Some("it has no manifest.toml (the run did not start)".into()));
    }
    let file = format!("{name}/manifest.toml");
    let text = read_text(&path, MAX_MANIFEST_BYTES).map_err(|why| format!("{file}: {why}"))?;
    let manifest: Manifest = toml::from_str(&text).map_err(|e| {
        let line = e.span().map_or(1, |s| text[..s.start].matches('\n').count() + 1);
        format!("{file}:{line}: not a manifest: {}", e.message().trim())
    })?;
    let config = Path::new(&manifest.experiment.config).file_name();
    if config.is_none_or(|c| *c != *format!("{}.toml", run.study)) {
        return Err(format!(
            "{file}: [experiment] config is `{}`, not a run of experiments/{}.toml",
            manifest.experiment.config, run.study
        ));
    }
    if let FolderRun::Reference(commit) = &run.run
        && !manifest.build.commit.starts_with(commit.as_str())
    {
        return Err(format!(
            "{file}: [build] commit is `{}`, not {commit} as the folder's name says",
            manifest.build.commit
        ));
    }
    if manifest.study.is_empty() {
        return Err(format!("{file}: no [[study]]"));
    }
    if let Some(study) = manifest.study.iter().find(|s| !is_complete(&s.status)) {
        return Ok(Some(format!("study `{}` is `{}`", study.name, study.status)));
    }
    if let Some(over) = run.spread() {
        check_spread(&file, &manifest, over)?;
    }
    Ok(None)
}

/// Whether a study's status in its manifest says it finished.
pub fn is_complete(status: &str) -> bool {
    status == "complete" || status.starts_with("complete, ")
}

/// Refuses a manifest whose run was not spread as the folder's name says:
/// over N GPUs, N `[[devices]]`; over N ranks, rows from two ranks or
/// more (`[[rank]]`), each below N.
fn check_spread(file: &str, manifest: &Manifest, over: SpreadOver) -> Result<(), String> {
    match over {
        SpreadOver::Gpus(n) => {
            let opened = manifest.devices.len().max(1);
            if opened != n as usize {
                return Err(format!(
                    "{file}: the run opened {opened} GPU(s) ([[devices]]), not {n} as the folder's name says"
                ));
            }
        }
        SpreadOver::Ranks(n) => {
            let ranks: Vec<usize> = manifest.rank.iter().map(|r| r.rank).collect();
            if ranks.len() < 2 || ranks.iter().any(|&k| k >= n as usize) {
                return Err(format!(
                    "{file}: [[rank]] lists ranks {ranks:?}, not the rows of 2 to {n} MPI ranks numbered below {n} \
                     as the folder's name says"
                ));
            }
        }
    }
    Ok(())
}

/// Links what else `installed` (results/NAME) holds, not the study's own
/// files, into the staged `folder`, so that the swap keeps it.
fn keep_the_rest(installed: &Path, folder: &Path) -> Result<(), String> {
    let Ok(meta) = std::fs::symlink_metadata(installed) else {
        return Ok(());
    };
    if !meta.is_dir() {
        return Err(format!("{}: not a folder; move it away first", installed.display()));
    }
    for entry in folder_names(installed)? {
        if OWN_FILES.contains(&entry.as_str()) || entry == FIGURES {
            continue;
        }
        link_tree(&installed.join(&entry), &folder.join(&entry))?;
    }
    Ok(())
}

/// `to`, a copy of `from` made of hard links to its files, its folders
/// made anew and its symbolic links written again.
fn link_tree(from: &Path, to: &Path) -> Result<(), String> {
    let failed = |e: std::io::Error| format!("{}: cannot keep it: {e}", from.display());
    let meta = std::fs::symlink_metadata(from).map_err(failed)?;
    if meta.is_symlink() {
        let target = std::fs::read_link(from).map_err(failed)?;
        return std::os::unix::fs::symlink(target, to).map_err(failed);
    }
    if !meta.is_dir() {
        return std::fs::hard_link(from, to).map_err(failed);
    }
    std::fs::create_dir(to).map_err(failed)?;
    for entry in folder_names(from)? {
        link_tree(&from.join(&entry), &to.join(&entry))?;
    }
    Ok(())
}

/// Puts the staged `folder` at `target` by a rename, moving what stood
/// there to `replaced` first (and back, should the rename fail).
fn swap_in(folder: &Path, target: &Path, replaced: &Path) -> Result<(), String> {
    let had = std::fs::symlink_metadata(target).is_ok();
    let failed = |e: std::io::Error| format!("{}: cannot install it: {e}", target.display());
    if had {
        std::fs::rename(target, replaced).map_err(failed)?;
    }
    std::fs::rename(folder, target).map_err(|e| {
        if had {
            let _ = std::fs::rename(replaced, target);
        }
        failed(e)
    })
}

/// Removes the file or folder at `path`, if there is one.
fn remove(path: &Path) -> Result<(), String> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let removed = if meta.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    removed.map_err(|e| format!("{}: cannot remove it: {e}", path.display()))
}

/// The staging folder beside results/, removed with what it holds when
/// dropped.
struct Stage {
    path: PathBuf,
}

impl Stage {
    /// A new staging folder in the folder that holds `results`, on the same
    /// file system, so that the swap is a rename.
    fn beside(results: &Path) -> Result<Stage, String> {
        let absolute = std::path::absolute(results).map_err(|e| format!("{}: {e}", results.display()))?;
        let parent = absolute.parent().unwrap_or(Path::new("/"));
        let path = parent.join(format!(".study-install.{}", std::process::id()));
        std::fs::create_dir(&path).map_err(|e| format!("{}: cannot make the staging folder: {e}", path.display()))?;
        Ok(Stage { path })
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
