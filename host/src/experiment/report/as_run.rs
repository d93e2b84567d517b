//! Whether an experiment folder's figures are still as run, for the
//! summary's "as run?" column: the config that produced them, every scene,
//! mesh and reference image its runs read, and the renderer's measured
//! source, against their fingerprints in the manifest (for runs from before
//! manifests recorded the source, the fingerprint of their commit's source
//! in [`SOURCE_TABLE`]). Where no source is beside the results (a copy
//! outside a checkout) whether it is as run is unknown, never assumed.

use super::markdown::code;
use crate::experiment::records::Manifest;
use crate::io::input_file::{MAX_TEXT_FILE_BYTES, open_sized, read_text};
use crate::system::fingerprint::{fingerprint, source_fingerprint};
use anyhow::Context;
use std::path::Path;

/// A table in the results folder, `"commit" = "fingerprint"`: the measured
/// source of each commit that ran a committed folder before manifests
/// recorded it (written by `scripts/source-fingerprints` from the
/// repository's history).
pub(super) const SOURCE_TABLE: &str = "source_fingerprints.toml";

/// Whether an experiment folder's inputs are still the ones that ran.
pub enum Current {
    /// The config file's text, every input the manifest fingerprints and
    /// the measured source read as they did.
    Yes,
    /// The config was edited since the run.
    Edited,
    /// The config is not in the repository any more.
    Missing,
    /// An input (a scene, a mesh, a reference image) changed or went away.
    Input(String),
    /// The renderer's measured source changed since the run.
    Source,
    /// Config and inputs as run, but which source ran is not recorded.
    SourceUnknown,
    /// Config and inputs as run, but no measured source is beside the
    /// results to compare with (not a checkout).
    NoSourceHere,
}

/// What the summary knows of the measured source: the checkout's own
/// (`None` outside a checkout, where it cannot tell) and the table of
/// earlier commits' ([`SOURCE_TABLE`]).
pub struct Sources {
    now: Option<String>,
    by_commit: std::collections::BTreeMap<String, String>,
}

impl Sources {
    /// Reads them for results folder `results` in the checkout `root`; the
    /// table may be absent.
    pub fn read(results: &Path, root: &Path) -> anyhow::Result<Self> {
        let table = results.join(SOURCE_TABLE);
        let absent = std::fs::symlink_metadata(&table).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
        let by_commit = if absent {
            Default::default()
        } else {
            let text = read_text(&table, MAX_TEXT_FILE_BYTES)
                .map_err(|reason| anyhow::anyhow!("{}: cannot read the table of commits: {reason}", table.display()))?;
            toml::from_str(&text).with_context(|| format!("{}: not a table of commits", table.display()))?
        };
        Ok(Sources {
            now: source_fingerprint(root),
            by_commit,
        })
    }

    /// Whether the source that built `manifest`'s binary is the checkout's.
    fn compare(&self, manifest: &Manifest) -> Current {
        let Some(now) = &self.now else {
            return Current::NoSourceHere;
        };
        let then = manifest
            .build
            .source
            .as_ref()
            .or_else(|| self.by_commit.get(&manifest.build.commit));
        match then {
            None => Current::SourceUnknown,
            Some(then) if then != now => Current::Source,
            Some(_) => Current::Yes,
        }
    }
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

impl Current {
    /// Compares the config the manifest names (relative to the repository
    /// root, the results folder's parent) with its fingerprint as run, then
    /// each input the manifest lists (manifests from before inputs were
    /// listed have none), then the measured source. A file that stands
    /// there but cannot be read is an error.
    pub fn of(manifest: &Manifest, root: &Path, sources: &Sources) -> anyhow::Result<Current> {
        match fingerprint_file(&root.join(&manifest.experiment.config))? {
            None => return Ok(Current::Missing),
            Some(print) if print != manifest.experiment.config_hash => return Ok(Current::Edited),
            Some(_) => {}
        }
        for input in &manifest.input {
            match fingerprint_file(&root.join(&input.path))? {
                None => return Ok(Current::Input(format!("{} is gone", code(&input.path)))),
                Some(print) if print != input.fingerprint => {
                    return Ok(Current::Input(format!("{} has changed since", code(&input.path))));
                }
                Some(_) => {}
            }
        }
        Ok(sources.compare(manifest))
    }

    /// The table cell.
    pub fn cell(&self) -> String {
        match self {
            Current::Yes => "yes".into(),
            Current::Edited => "**no**: its config has changed since; re-run it".into(),
            Current::Missing => "**no**: its config is gone".into(),
            Current::Input(what) => format!("**no**: its input {what}; re-run it"),
            Current::Source => "**no**: the renderer's source has changed since; re-run it".into(),
            Current::SourceUnknown => "config and inputs yes; the source it ran is not recorded".into(),
            Current::NoSourceHere => {
                "unknown: config and inputs yes; no renderer source beside the results to compare with".into()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::records::ManifestBuild;

    fn manifest(commit: &str, source: Option<&str>) -> Manifest {
        Manifest {
            build: ManifestBuild {
                commit: commit.into(),
                source: source.map(String::from),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_run_is_current_only_while_the_checkout_holds_the_source_it_ran() {
        let sources = Sources {
            now: Some("aaaa".into()),
            by_commit: [
                ("old".to_string(), "bbbb".to_string()),
                ("same".to_string(), "aaaa".to_string()),
            ]
            .into(),
        };
        let cell = |m: &Manifest| sources.compare(m).cell();
        // Recorded in the manifest.
        assert_eq!(cell(&manifest("x", Some("aaaa"))), "yes");
        assert!(cell(&manifest("x", Some("cccc"))).contains("source has changed since"));
        // From the table, for manifests that do not record it.
        assert_eq!(cell(&manifest("same", None)), "yes");
        assert!(cell(&manifest("old", None)).contains("source has changed since"));
        assert!(cell(&manifest("unlisted", None)).contains("not recorded"));
        // Outside a checkout nothing can be told, the same source or not.
        let outside = Sources {
            now: None,
            by_commit: [("same".to_string(), "aaaa".to_string())].into(),
        };
        for m in [
            manifest("x", Some("cccc")),
            manifest("x", Some("aaaa")),
            manifest("same", None),
        ] {
            assert!(outside.compare(&m).cell().starts_with("unknown: "));
        }
    }

    #[test]
    fn a_file_is_fingerprinted_as_its_bytes_and_only_a_regular_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scene.toml");
        std::fs::write(&path, "a scene").unwrap();
        assert_eq!(
            fingerprint_file(&path).unwrap(),
            Some(crate::system::fingerprint::fingerprint_bytes(b"a scene"))
        );
        assert_eq!(fingerprint_file(&dir.path().join("gone")).unwrap(), None);
        let e = fingerprint_file(Path::new("/dev/zero")).unwrap_err().to_string();
        assert_eq!(e, "/dev/zero: is a device, not a regular file");
    }
}
