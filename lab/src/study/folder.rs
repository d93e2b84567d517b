//! The name of a study folder, which says what made its runs: `NAME` for
//! this build's run of `experiments/NAME.toml`, `NAME_COMMIT` for the run
//! of a reference binary built from `COMMIT` (7 to 40 lowercase hex
//! digits), and `NAME_gpusN` or `NAME_ranksN` for the run spread over N
//! GPUs of one process (`experiment --devices`) or N MPI ranks of one GPU
//! each (N from 2, in decimal without a leading zero). `wavepath study run`
//! names its folders so, `wavepath study install` checks each folder's
//! manifest against its name, and the report pairs a spread with its
//! one-GPU run by it.

use std::fmt;

/// How a spread folder's runs were spread, as its name says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SpreadOver {
    /// Over this many GPUs of one process (`--devices`): `NAME_gpusN`.
    Gpus(u32),
    /// Over this many MPI ranks, one GPU each: `NAME_ranksN`.
    Ranks(u32),
}

impl SpreadOver {
    /// How many GPUs or ranks.
    pub fn count(self) -> u32 {
        match self {
            SpreadOver::Gpus(n) | SpreadOver::Ranks(n) => n,
        }
    }

    /// What one worker of the spread is called, in the plural.
    pub fn noun(self) -> &'static str {
        match self {
            SpreadOver::Gpus(_) => "GPUs",
            SpreadOver::Ranks(_) => "ranks",
        }
    }

    /// The suffix's word before the count.
    fn word(self) -> &'static str {
        match self {
            SpreadOver::Gpus(_) => "gpus",
            SpreadOver::Ranks(_) => "ranks",
        }
    }
}

/// What made a study folder's runs, as the folder's name says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FolderRun {
    /// This build, on one GPU: `NAME`.
    Own,
    /// A reference binary built from this commit: `NAME_COMMIT`.
    Reference(String),
    /// This build, spread over several GPUs or ranks.
    Spread(SpreadOver),
}

/// A study folder's name: the config its runs ran (`experiments/NAME.toml`)
/// and what made them. [`StudyFolderName::parse`] reads a name and
/// `Display` writes it back, so the two never disagree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StudyFolderName {
    /// `NAME` of `experiments/NAME.toml`.
    pub study: String,
    /// What made the runs.
    pub run: FolderRun,
}

impl StudyFolderName {
    /// The folder of this build's run of `study`.
    pub fn own(study: &str) -> StudyFolderName {
        StudyFolderName {
            study: study.to_string(),
            run: FolderRun::Own,
        }
    }

    /// The folder of `study`'s run by another binary or spread.
    pub fn of(study: &str, run: FolderRun) -> StudyFolderName {
        StudyFolderName {
            study: study.to_string(),
            run,
        }
    }

    /// What the folder `name` holds. A name whose last `_` part is a count
    /// of GPUs or ranks, or a commit, names a spread or a reference run of
    /// the part before it; any other name (`x_gpus1`, `x_gpus02`) is a
    /// study's own. `None` for a name that cannot be a study's
    /// ([`is_study_name`]).
    pub fn parse(name: &str) -> Option<StudyFolderName> {
        if !is_study_name(name) {
            return None;
        }
        let run = name.rsplit_once('_').and_then(|(base, tail)| {
            let run = spread_of(tail)
                .map(FolderRun::Spread)
                .or_else(|| is_commit(tail).then(|| FolderRun::Reference(tail.to_string())))?;
            is_study_name(base).then(|| StudyFolderName::of(base, run))
        });
        Some(run.unwrap_or_else(|| StudyFolderName::own(name)))
    }

    /// The spread, for a spread folder.
    pub fn spread(&self) -> Option<SpreadOver> {
        match self.run {
            FolderRun::Spread(over) => Some(over),
            _ => None,
        }
    }
}

impl fmt::Display for StudyFolderName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.run {
            FolderRun::Own => write!(f, "{}", self.study),
            FolderRun::Reference(commit) => write!(f, "{}_{commit}", self.study),
            FolderRun::Spread(over) => write!(f, "{}_{}{}", self.study, over.word(), over.count()),
        }
    }
}

/// Whether `name` may name a study (`experiments/NAME.toml`): letters,
/// digits, `_` and `-`, not starting with `-`, and not `figures` (the
/// summary's figures' folder in results/).
pub fn is_study_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name != "figures"
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The spread `tail` (`gpusN`, `ranksN`) names, N from 2 without a
/// leading zero.
fn spread_of(tail: &str) -> Option<SpreadOver> {
    let (over, digits): (fn(u32) -> SpreadOver, &str) = match tail.strip_prefix("gpus") {
        Some(digits) => (SpreadOver::Gpus, digits),
        None => (SpreadOver::Ranks, tail.strip_prefix("ranks")?),
    };
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&n| n >= 2).map(over)
}

/// Whether `tail` is a commit as a binary's `--version` names it: 7 to 40
/// lowercase hex digits.
fn is_commit(tail: &str) -> bool {
    (7..=40).contains(&tail.len()) && tail.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_the_spread_the_reference_or_the_study_alone() {
        let cases = [
            (
                "mega_vs_wave_gpus4",
                StudyFolderName::of("mega_vs_wave", FolderRun::Spread(SpreadOver::Gpus(4))),
            ),
            (
                "a_b_ranks16",
                StudyFolderName::of("a_b", FolderRun::Spread(SpreadOver::Ranks(16))),
            ),
            (
                "regression_check_30955b3",
                StudyFolderName::of("regression_check", FolderRun::Reference("30955b3".into())),
            ),
            ("mega_vs_wave", StudyFolderName::own("mega_vs_wave")),
        ];
        for (name, folder) in cases {
            assert_eq!(StudyFolderName::parse(name), Some(folder.clone()), "{name}");
            assert_eq!(folder.to_string(), name, "written back");
        }
    }

    #[test]
    fn a_tail_that_is_no_spread_or_commit_is_part_of_the_study_name() {
        for own in [
            "x_gpus1",
            "x_gpus02",
            "x_gpus",
            "_gpus2",
            "x_ranks2a",
            "x_cpus2",
            "x_30955B3",
            "x_30955b",
        ] {
            let parsed = StudyFolderName::parse(own);
            assert_eq!(parsed, Some(StudyFolderName::own(own)), "{own}");
            assert_eq!(parsed.and_then(|p| p.spread()), None, "{own}");
        }
    }

    #[test]
    fn names_that_cannot_be_a_study_are_refused() {
        for not in ["", "-x", "figures", "a/b", "..", "a b", "é", "x_gpus+2"] {
            assert_eq!(StudyFolderName::parse(not), None, "{not:?}");
        }
    }
}
