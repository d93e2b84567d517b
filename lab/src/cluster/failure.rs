//! Every rank's outcome, agreed: after its work each rank tells every
//! other whether it succeeded (one collective, so no rank waits on one
//! that gave up), and rank 0 reports each rank that failed, by rank and
//! host, with its error. The job then exits non-zero on every rank.

use super::Cluster;
use super::wire::all_gather_text;
use anyhow::anyhow;
use std::fmt;
use std::process::ExitCode;

/// The error of a rank other than 0 when the job failed: rank 0 reports
/// it, so this rank prints nothing and exits non-zero ([`quiet`]).
#[derive(Debug)]
pub struct ReportedByRoot;

impl fmt::Display for ReportedByRoot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the job failed; rank 0 reports why")
    }
}

impl std::error::Error for ReportedByRoot {}

/// Agrees on every rank's `result`, whose success is described by
/// `what(&value)` (what the rank made: it must be the same on every rank,
/// or the ranks were given different commands). Every rank gets its value
/// back when every rank succeeded alike; otherwise rank 0 gets the report
/// of who failed and the others [`ReportedByRoot`].
pub fn agree<T>(cluster: &Cluster, result: anyhow::Result<T>, what: impl Fn(&T) -> String) -> anyhow::Result<T> {
    let mine = match &result {
        Ok(value) => format!("ok {}", what(value)),
        Err(e) => format!("failed {e:#}"),
    };
    let all = all_gather_text(&cluster.world, &mine)?;
    let hosts = all_gather_text(&cluster.world, &cluster.host)?;
    match report(&all, &hosts) {
        None => result,
        Some(_) if !cluster.is_root() => Err(ReportedByRoot.into()),
        Some(report) => Err(anyhow!(report)),
    }
}

/// What rank 0 says when some ranks failed (or made something other than
/// rank 0 made), given every rank's status and host; `None` when all
/// succeeded alike.
fn report(statuses: &[String], hosts: &[String]) -> Option<String> {
    let host = |rank: usize| hosts.get(rank).map_or("an unknown host", String::as_str);
    let first = statuses.first().and_then(|s| s.strip_prefix("ok "));
    let mut lines = Vec::new();
    for (rank, status) in statuses.iter().enumerate() {
        match (status.strip_prefix("ok "), first) {
            (Some(made), Some(expected)) if made != expected => lines.push(format!(
                "rank {rank} on {} made {made}, rank 0 {expected} (were the ranks given different commands?)",
                host(rank)
            )),
            (Some(_), _) => {}
            (None, _) => lines.push(format!(
                "rank {rank} on {}: {}",
                host(rank),
                status.strip_prefix("failed ").unwrap_or(status)
            )),
        }
    }
    (!lines.is_empty()).then(|| {
        format!(
            "{} of {} MPI ranks failed:\n  {}",
            lines.len(),
            statuses.len(),
            lines.join("\n  ")
        )
    })
}

/// A command's result with [`ReportedByRoot`] turned into a plain
/// non-zero exit (nothing printed).
pub fn quiet(result: anyhow::Result<ExitCode>) -> anyhow::Result<ExitCode> {
    match result {
        Err(e) if e.is::<ReportedByRoot>() => Ok(ExitCode::FAILURE),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_names_each_failed_rank_and_its_host() {
        let hosts = ["a".to_string(), "b".into(), "c".into()];
        let ok = |s: &str| format!("ok {s}");
        assert_eq!(report(&[ok("8 spp"), ok("8 spp"), ok("8 spp")], &hosts), None);
        let text = report(&[ok("8 spp"), "failed no such file".into(), ok("8 spp")], &hosts).unwrap();
        assert!(text.starts_with("1 of 3 MPI ranks failed"), "{text}");
        assert!(text.contains("rank 1 on b: no such file"), "{text}");
        let text = report(&["failed x".into(), ok("4 spp"), ok("8 spp")], &hosts).unwrap();
        assert!(text.contains("rank 0 on a: x") && !text.contains("rank 2"), "{text}");
        let text = report(&[ok("8 spp"), ok("4 spp"), ok("8 spp")], &hosts).unwrap();
        assert!(text.contains("rank 1 on b made 4 spp, rank 0 8 spp"), "{text}");
    }
}
