//! The builds (commit and dirty flag) that made an experiment's rows: a
//! report names every one, and refuses rows of several unless told to mix
//! them (`--allow-mixed`).

use super::markdown::code;
use anyhow::bail;
use lab::records::RunRow;
use std::path::Path;

/// One build that made rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowBuild {
    /// The commit it was built from.
    pub commit: String,
    /// Whether it had uncommitted changes.
    pub dirty: bool,
}

/// `` `commit` ``, with ` (dirty)` after a dirty build's.
impl std::fmt::Display for RowBuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", code(&self.commit), if self.dirty { " (dirty)" } else { "" })
    }
}

/// The distinct builds of `runs`, in the order of their first rows.
pub fn of_rows(runs: &[RunRow]) -> Vec<RowBuild> {
    let mut builds: Vec<RowBuild> = Vec::new();
    for r in runs {
        if !builds.iter().any(|b| b.commit == r.commit && b.dirty == r.dirty) {
            builds.push(RowBuild {
                commit: r.commit.clone(),
                dirty: r.dirty,
            });
        }
    }
    builds
}

/// `builds` as a list: `` `a`, `b` (dirty) ``.
pub fn list(builds: &[RowBuild]) -> String {
    builds.iter().map(RowBuild::to_string).collect::<Vec<_>>().join(", ")
}

/// Refuses rows (of the file at `path`) from more than one build: a report
/// states the one build behind its figures unless told to mix them.
pub fn check_one(path: &Path, builds: &[RowBuild]) -> anyhow::Result<()> {
    if builds.len() > 1 {
        bail!(
            "{}: rows from {} builds ({}); re-run on one commit, or pass --allow-mixed to report them together",
            path.display(),
            builds.len(),
            list(builds)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_build_is_listed_once_in_order() {
        let row = |commit: &str, dirty| RunRow {
            commit: commit.into(),
            dirty,
            ..RunRow::default()
        };
        let builds = of_rows(&[row("b", false), row("a", true), row("b", false), row("b", true)]);
        assert_eq!(list(&builds), "`b`, `a` (dirty), `b` (dirty)");
        assert!(check_one(Path::new("runs.csv"), &builds[..1]).is_ok());
        let e = check_one(Path::new("runs.csv"), &builds).unwrap_err().to_string();
        assert!(
            e.starts_with("runs.csv: rows from 3 builds (`b`, `a` (dirty), `b` (dirty));"),
            "{e}"
        );
    }
}
