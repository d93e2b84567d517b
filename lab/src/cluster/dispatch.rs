//! Which rank makes which configuration of an experiment: handed out one
//! at a time as the ranks ask for them, so that a rank whose
//! configurations are quick makes more of them and no rank waits on a
//! slower one while work is left, as the GPUs of one process take theirs
//! ([`crate::spread`]).
//!
//! The configurations are made in two phases, as in one process: first
//! those of the CPU back ends, then those of the GPUs. A CPU configuration
//! goes only to a rank that may use its host's cores (the first rank of
//! each host, so that no timed CPU row shares its cores with another
//! rank's render, or every rank with `--share-cores`); a GPU configuration
//! to any rank, each on its own GPU. No GPU run starts before every CPU run
//! has finished, so CPU and GPU runs of a host never overlap.
//!
//! Rank 0 hands the configurations out ([`Cursor`]) and makes its own share
//! on a thread of its own; every other rank, when it has finished a
//! configuration, sends its rows and how it went ([`Report`]) and gets the
//! next configuration back ([`Reply`]). After a rank failed or was stopped,
//! no configuration is handed out; the ranks finish the one they are
//! making, and each phase ends with rank 0 telling every rank how it ended
//! ([`Halt`]).

use super::wire::Message;
use serde::{Deserialize, Serialize};

/// How the runs of a rank, or of a phase, went on: on, stopped by a stop
/// request, or ended by a failure (the worst of several wins).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Halt {
    /// Nothing stopped them.
    #[default]
    No,
    /// A stop request (Ctrl-C) came.
    Stopped,
    /// A rank failed.
    Failed,
}

/// Rank 0's record of the configurations of a phase: the next one to hand
/// out, and whether the phase was halted.
#[derive(Debug)]
pub struct Cursor {
    next: usize,
    len: usize,
    halt: Halt,
}

impl Cursor {
    /// A phase of `len` configurations, none handed out.
    pub fn new(len: usize) -> Self {
        Cursor {
            next: 0,
            len,
            halt: Halt::No,
        }
    }

    /// The index of the next configuration, or `None` when every one has
    /// been handed out or the phase was halted.
    pub fn take(&mut self) -> Option<usize> {
        if self.halt != Halt::No || self.next >= self.len {
            return None;
        }
        self.next += 1;
        Some(self.next - 1)
    }

    /// Records how a rank's runs went: after a stop or a failure, nothing
    /// more is handed out.
    pub fn halt(&mut self, how: Halt) {
        self.halt = self.halt.max(how);
    }

    /// How the phase went.
    pub fn halted(&self) -> Halt {
        self.halt
    }
}

/// What a rank sends rank 0 when it is ready for a configuration: the rows
/// of the one it finished (CSV text with a header; empty at first) and how
/// its runs went.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Whether it failed or was stopped.
    pub halt: Halt,
    /// Its run rows.
    pub rows: String,
    /// Its kernel rows.
    pub kernels: String,
}

impl Message for Report {
    const WHAT: &'static str = "a rank's rows";
}

impl Report {
    /// The report of a rank that failed, with no rows: rank 0 then hands
    /// out nothing more.
    pub fn failed() -> Report {
        Report {
            halt: Halt::Failed,
            ..Report::default()
        }
    }
}

/// Rank 0's answer to a [`Report`]: the index of the next configuration,
/// or none (the phase is over for that rank).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// The configuration's index in the phase.
    pub next: Option<usize>,
}

impl Message for Reply {
    const WHAT: &'static str = "rank 0's reply";
}

/// Rank 0's word to every rank at the end of a phase: how it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct End {
    /// Whether a rank failed or was stopped.
    pub halt: Halt,
}

impl Message for End {
    const WHAT: &'static str = "a phase's end";
}

/// The ranks that may make CPU configurations, given each rank's rank
/// within its host (`local_ranks`, in rank order): the first rank of each
/// host, or every rank when `share_cores`.
pub fn cpu_ranks(local_ranks: &[usize], share_cores: bool) -> Vec<usize> {
    (0..local_ranks.len())
        .filter(|&r| share_cores || local_ranks[r] == 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_hands_out_each_configuration_once_until_halted() {
        let mut cursor = Cursor::new(3);
        assert_eq!([cursor.take(), cursor.take()], [Some(0), Some(1)]);
        cursor.halt(Halt::No);
        assert_eq!(cursor.take(), Some(2));
        assert_eq!(cursor.take(), None, "all handed out");
        assert_eq!(cursor.halted(), Halt::No);

        let mut cursor = Cursor::new(5);
        assert_eq!(cursor.take(), Some(0));
        cursor.halt(Halt::Failed);
        cursor.halt(Halt::Stopped);
        assert_eq!(cursor.halted(), Halt::Failed, "the worst halt wins");
        assert_eq!(cursor.take(), None, "nothing after a halt");
    }

    #[test]
    fn messages_survive_the_trip() {
        let report = Report {
            halt: Halt::Stopped,
            rows: "study,run\n\"a,b\",3\n".into(),
            kernels: String::new(),
        };
        assert_eq!(Report::decode(&report.encode()).unwrap(), report);
        for next in [None, Some(0), Some(41)] {
            assert_eq!(Reply::decode(&Reply { next }.encode()).unwrap(), Reply { next });
        }
        for halt in [Halt::No, Halt::Stopped, Halt::Failed] {
            assert_eq!(End::decode(&End { halt }.encode()).unwrap(), End { halt });
        }
        assert!(Reply::decode("next = -1").is_err());
        assert!(End::decode("halt = \"ok\"").is_err() && End::decode("").is_err());
        assert!(Report::decode("x").is_err());
    }

    #[test]
    fn one_host_makes_its_cpu_runs_one_at_a_time_unless_told_to_share() {
        let locals = [0, 1, 2, 0];
        assert_eq!(cpu_ranks(&locals, false), [0, 3], "the first rank of each host");
        assert_eq!(cpu_ranks(&locals, true), [0, 1, 2, 3]);
    }
}
