//! `wavepath report --currency RESULTS`: whether each experiment folder's
//! figures are still current for the checkout around `RESULTS` (its
//! parent folder): the config that produced them, every scene, mesh and
//! reference image its runs read, and the renderer's measured source
//! (`system::fingerprint`), against their fingerprints in the folder's
//! manifest. Where the measured source changed, git names the files that
//! changed since the folder's commit, where it knows that commit.
//!
//! Currency is a question a reader asks of a checkout, never part of the
//! summary: the summary states the build behind each figure and is a
//! function of the results alone, so that an edit of the renderer changes
//! no committed page.

use super::input;
use super::summary::experiment_folders;
use anyhow::Context;
use lab::records::Manifest;
use renderer::io::input_file::open_sized;
use renderer::system::fingerprint::{MEASURED_SOURCES, fingerprint, source_fingerprint};
use std::fmt;
use std::path::Path;

/// Files named, at most, where the measured source changed; the rest are
/// counted.
const CHANGED_FILES_SHOWN: usize = 12;

/// Whether an experiment folder's inputs are still the ones that ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Currency {
    /// The config file's text, every input the manifest fingerprints and
    /// the measured source read as they did.
    Current,
    /// The config was edited since the run.
    ConfigEdited,
    /// The config is not in the checkout any more.
    ConfigMissing,
    /// An input (a scene, a mesh, a reference image) changed or went away:
    /// which, and how.
    Input(String),
    /// The renderer's measured source changed since the run.
    Source(SourceChange),
    /// Config and inputs as run, but the manifest does not record which
    /// source ran.
    SourceUnknown,
}

/// How the measured source moved on since a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceChange {
    /// Its fingerprint when the folder ran.
    pub then: String,
    /// Its fingerprint in the checkout.
    pub now: String,
    /// The measured files that differ from the folder's commit, as git
    /// lists them (`None` where git cannot tell: no repository, or a commit
    /// it does not hold).
    pub files: Option<Vec<String>>,
}

/// One experiment folder's currency.
#[derive(Clone, Debug)]
pub struct FolderCurrency {
    /// Its name under the results folder.
    pub folder: String,
    /// The commit that ran it.
    pub commit: String,
    /// Whether it is current, or why not.
    pub currency: Currency,
}

/// The currency of every experiment folder of `results`, against the
/// checkout that holds it (`results/..`), which must hold wavepath's
/// source.
pub fn check(results: &Path) -> anyhow::Result<Vec<FolderCurrency>> {
    let root = results.parent().unwrap_or(Path::new("."));
    let root = if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    };
    let now = source_fingerprint(root).with_context(|| {
        format!(
            "{}: no wavepath source here to compare with (expected a checkout holding device/src, \
             with the results folder {} inside it)",
            root.display(),
            results.display()
        )
    })?;
    experiment_folders(results)?
        .into_iter()
        .map(|(folder, dir)| {
            let (manifest, _) = input::read_manifest(&dir.join("manifest.toml"))?;
            Ok(FolderCurrency {
                currency: Currency::of(&manifest, root, &now)?,
                commit: manifest.build.commit,
                folder,
            })
        })
        .collect()
}

/// The fingerprint of the file at `path`, `None` where none is there. What
/// stands there must be a regular file (a FIFO would block, a device never
/// end); it is read in pieces, so that a large mesh or image takes no
/// memory.
fn fingerprint_file(path: &Path) -> anyhow::Result<Option<String>> {
    use std::io::Read;
    if std::fs::metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Ok(None);
    }
    let (file, len) = open_sized(path).map_err(|reason| anyhow::anyhow!("{}: {reason}", path.display()))?;
    let mut failed = None;
    let bytes = std::io::BufReader::new(file)
        .take(len)
        .bytes()
        .map_while(|b| b.map_err(|e| failed = Some(e)).ok());
    let print = fingerprint(bytes.map(u64::from));
    match failed {
        Some(e) => Err(e).with_context(|| format!("{}: cannot read", path.display())),
        None => Ok(Some(print)),
    }
}

/// The measured files of the checkout `root` that differ from `commit`
/// (committed since, or edited in the work tree), as git lists them;
/// `None` where git cannot tell.
fn changed_files(root: &Path, commit: &str) -> Option<Vec<String>> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["diff", "--name-only", commit, "--"])
        .args(MEASURED_SOURCES)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect())
}

impl Currency {
    /// Compares the config the manifest names (relative to the checkout
    /// `root`) with its fingerprint as run, then each input the manifest
    /// lists (manifests from before inputs were listed have none), then
    /// the measured source against the checkout's, `now`. A file that
    /// stands there but cannot be read is an error.
    pub fn of(manifest: &Manifest, root: &Path, now: &str) -> anyhow::Result<Currency> {
        match fingerprint_file(&root.join(&manifest.experiment.config))? {
            None => return Ok(Currency::ConfigMissing),
            Some(print) if print != manifest.experiment.config_hash => return Ok(Currency::ConfigEdited),
            Some(_) => {}
        }
        for input in &manifest.input {
            match fingerprint_file(&root.join(&input.path))? {
                None => return Ok(Currency::Input(format!("{} is gone", input.path))),
                Some(print) if print != input.fingerprint => {
                    return Ok(Currency::Input(format!("{} has changed since", input.path)));
                }
                Some(_) => {}
            }
        }
        Ok(match &manifest.build.source {
            None => Currency::SourceUnknown,
            Some(then) if then == now => Currency::Current,
            Some(then) => Currency::Source(SourceChange {
                then: then.clone(),
                now: now.to_string(),
                files: changed_files(root, &manifest.build.commit),
            }),
        })
    }

    /// Whether the folder's figures hold for the checkout.
    pub fn is_current(&self) -> bool {
        *self == Currency::Current
    }
}

/// `current`, or `not current: WHY`.
impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Currency::Current => write!(f, "current"),
            Currency::ConfigEdited => write!(f, "not current: its config has changed since it ran"),
            Currency::ConfigMissing => write!(f, "not current: its config is gone"),
            Currency::Input(what) => write!(f, "not current: its input {what}"),
            Currency::SourceUnknown => write!(
                f,
                "unknown: config and inputs as run; its manifest does not record the source it ran"
            ),
            Currency::Source(change) => {
                write!(
                    f,
                    "not current: the renderer's measured source has changed since it ran ({} then, {} now)",
                    change.then, change.now
                )?;
                match change.files.as_deref() {
                    None => write!(f, "; git cannot list the files"),
                    Some([]) => write!(f, "; git lists no measured file changed since its commit"),
                    Some(files) => {
                        let shown = files.len().min(CHANGED_FILES_SHOWN);
                        write!(f, "; changed since its commit: {}", files[..shown].join(", "))?;
                        match files.len() - shown {
                            0 => Ok(()),
                            more => write!(f, " and {more} more"),
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab::records::ManifestBuild;

    fn manifest(source: Option<&str>, config: &str, config_hash: &str) -> Manifest {
        let mut m = Manifest {
            build: ManifestBuild {
                commit: "0000000".into(),
                source: source.map(String::from),
                ..Default::default()
            },
            ..Default::default()
        };
        m.experiment.config = config.into();
        m.experiment.config_hash = config_hash.into();
        m
    }

    #[test]
    fn a_run_is_current_only_while_config_and_source_read_as_they_did() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("study.toml"), "a study").unwrap();
        let hash = renderer::system::fingerprint::fingerprint_bytes(b"a study");
        let of = |m: &Manifest| Currency::of(m, dir.path(), "aaaa").unwrap();
        assert_eq!(of(&manifest(Some("aaaa"), "study.toml", &hash)), Currency::Current);
        assert_eq!(of(&manifest(None, "study.toml", &hash)), Currency::SourceUnknown);
        assert_eq!(
            of(&manifest(Some("aaaa"), "study.toml", "other")),
            Currency::ConfigEdited
        );
        assert_eq!(of(&manifest(Some("aaaa"), "gone.toml", &hash)), Currency::ConfigMissing);
        // Not a repository: the change is told, the files are not.
        let moved = of(&manifest(Some("bbbb"), "study.toml", &hash));
        assert_eq!(
            moved,
            Currency::Source(SourceChange {
                then: "bbbb".into(),
                now: "aaaa".into(),
                files: None
            })
        );
        assert_eq!(
            moved.to_string(),
            "not current: the renderer's measured source has changed since it ran (bbbb then, aaaa now); \
             git cannot list the files"
        );
        assert!(!moved.is_current());
    }

    #[test]
    fn at_most_a_dozen_changed_files_are_named() {
        let change = |n: usize| {
            Currency::Source(SourceChange {
                then: "b".into(),
                now: "a".into(),
                files: Some((0..n).map(|i| format!("device/src/f{i}.rs")).collect()),
            })
            .to_string()
        };
        assert!(change(1).ends_with("; changed since its commit: device/src/f0.rs"));
        let many = change(CHANGED_FILES_SHOWN + 3);
        assert!(many.ends_with(&format!("device/src/f{}.rs and 3 more", CHANGED_FILES_SHOWN - 1)));
        assert!(change(0).ends_with("git lists no measured file changed since its commit"));
    }

    #[test]
    fn a_file_is_fingerprinted_as_its_bytes_and_only_a_regular_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scene.toml");
        std::fs::write(&path, "a scene").unwrap();
        assert_eq!(
            fingerprint_file(&path).unwrap(),
            Some(renderer::system::fingerprint::fingerprint_bytes(b"a scene"))
        );
        assert_eq!(fingerprint_file(&dir.path().join("gone")).unwrap(), None);
        let e = fingerprint_file(Path::new("/dev/zero")).unwrap_err().to_string();
        assert_eq!(e, "/dev/zero: is a device, not a regular file");
    }
}
