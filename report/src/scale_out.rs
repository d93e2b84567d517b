//! The summary's section on experiments spread over several GPUs of one
//! process (`experiment --devices`) or over MPI ranks of one GPU each
//! (`mpiexec -n N wavepath experiment`), each beside the same experiment
//! on one GPU: the wall time of the whole experiment against one GPU's.
//!
//! `wavepath study run --spread N --ranks N` runs them into folders
//! `NAME_gpusN` and `NAME_ranksN` beside `NAME`, the one-GPU run, and a
//! folder pairs with it by that name (`lab::study::folder`). Every timed row of a spread ran
//! alone on its GPU, so its figures repeat the one-GPU run's: such a
//! folder stands in this section (and among the sources), never in the
//! answer or the other tables.

use super::markdown::{code, folder_link, text};
use super::tables::{fmt_speedup, table_head, table_row};
use super::written::timestamp;
use anyhow::bail;
use lab::records::{Manifest, RunRow};
use lab::spread::loads;
use lab::study::folder::{SpreadOver, StudyFolderName};
use renderer::render::split::imbalance;
use std::path::Path;

/// The shortest wall time the section compares, in seconds: a manifest's
/// times are to the second, so a shorter one (a start and an end within
/// one second) sets no ratio, or an infinite one. (The shortest study
/// committed, `regression_check_nee`, took 4 s.)
const MIN_WALL_S: f64 = 1.0;

/// How far apart the wall times of a spread over N GPUs or ranks and of
/// what it is set beside may be: its speedup over one GPU (ideally N), and
/// MPI ÷ `--devices` (ideally 1), lie from 1 / (`MAX_OFF_IDEAL` × N) to
/// `MAX_OFF_IDEAL` × N. Beyond, the folders set side by side did not run
/// the same work, whatever their names say, and the section refuses them.
const MAX_OFF_IDEAL: f64 = 8.0;

/// The table cell of a spread.
fn cell(over: SpreadOver) -> String {
    match over {
        SpreadOver::Gpus(n) => format!("{n} GPUs (`--devices`)"),
        SpreadOver::Ranks(n) => format!("{n} MPI ranks, a GPU each"),
    }
}

/// A spread folder as read: its one-GPU run's folder, the spread, and the
/// load of the GPUs or ranks that made its rows.
#[derive(Clone, Debug, PartialEq)]
pub struct SpreadFolder {
    /// The one-GPU run's folder name.
    pub base: String,
    /// How the runs were spread.
    pub over: SpreadOver,
    /// How many GPUs (by ordinal) or ranks made rows.
    pub workers: usize,
    /// The busiest worker's render time over the mean, less one (with two
    /// workers or more).
    pub imbalance: Option<f64>,
}

impl SpreadFolder {
    /// The spread of the folder `name` with `rows`; `None` for a folder
    /// whose name names none ([`StudyFolderName::parse`]).
    pub fn of_folder(name: &str, rows: &[RunRow]) -> Option<SpreadFolder> {
        let folder = StudyFolderName::parse(name)?;
        let (base, over) = (folder.study.as_str(), folder.spread()?);
        let load = match over {
            SpreadOver::Gpus(_) => loads(rows, |r| r.gpu_ordinal.map(|o| (o, r.gpu.as_str()))),
            SpreadOver::Ranks(_) => loads(rows, |r| r.rank.map(|k| (k, r.host.as_str()))),
        };
        let busy: Vec<f64> = load.iter().map(|l| l.seconds).collect();
        Some(SpreadFolder {
            base: base.to_string(),
            over,
            workers: load.len(),
            imbalance: (busy.len() > 1).then(|| imbalance(&busy)),
        })
    }
}

/// An experiment folder as the section reads it.
pub struct Entry<'a> {
    /// Its name under the results folder.
    pub name: &'a str,
    /// Its manifest.
    pub manifest: &'a Manifest,
    /// The manifest's file, as refusals name it.
    pub path: &'a Path,
    /// Its spread, for a folder named for one.
    pub spread: Option<&'a SpreadFolder>,
    /// Its measured-source cell.
    pub measured: String,
    /// Its commit cell.
    pub commit: String,
}

/// The wall time of the whole experiment in seconds: each session's end
/// less its start (a resumed run is the sum of its sessions), or why there
/// is none.
pub fn wall_seconds(m: &Manifest) -> Result<f64, String> {
    let parse = |what: &str, stamp: &str| {
        if stamp.is_empty() {
            return Err(format!("its {what} is not recorded (the run did not finish)"));
        }
        timestamp(stamp).map_err(|e| format!("its {what}: {e}"))
    };
    let spans: Vec<(&str, &str)> = if m.session.is_empty() {
        vec![(&m.experiment.started, &m.experiment.finished)]
    } else {
        m.session
            .iter()
            .map(|s| (s.started.as_str(), s.finished.as_str()))
            .collect()
    };
    let mut total = 0.0;
    for (started, finished) in spans {
        let (from, to) = (parse("start", started)?, parse("end", finished)?);
        total += to
            .duration_since(from)
            .map_err(|_| format!("it ends ({finished}) before it starts ({started})"))?
            .as_secs_f64();
    }
    Ok(total)
}

/// The fields of `m` its wall time is made of, as refusals name them.
fn wall_fields(m: &Manifest) -> &'static str {
    if m.session.is_empty() {
        "fields `experiment.started` and `experiment.finished`"
    } else {
        "field `session`"
    }
}

/// The wall time of `e` ([`wall_seconds`]), or why there is none; one
/// under [`MIN_WALL_S`] is refused, naming the manifest and its field.
fn wall(e: &Entry) -> anyhow::Result<Result<f64, String>> {
    let wall = wall_seconds(e.manifest);
    if let Ok(t) = wall
        && t < MIN_WALL_S
    {
        bail!(
            "{}: {}: {t} s in all, under the {MIN_WALL_S} s that a wall time set beside another needs (the \
             manifest's times are to the second)",
            e.path.display(),
            wall_fields(e.manifest)
        );
    }
    Ok(wall)
}

/// `ratio`, the wall time of `e` against another's (`what` it is), checked
/// to lie from `1 / within` to `within`; outside, it is refused, naming
/// the manifest and its field.
fn sane(e: &Entry, ratio: f64, within: f64, what: &str) -> anyhow::Result<f64> {
    if (1.0 / within..=within).contains(&ratio) {
        return Ok(ratio);
    }
    bail!(
        "{}: {}: {what} is {ratio:.3}, outside the 1/{within} to {within} that a spread of the same work can make",
        e.path.display(),
        wall_fields(e.manifest)
    )
}

/// What makes the spread `s` of folder `e` unlike its one-GPU run `base`,
/// joined; "yes" where nothing does.
fn like_for_like(e: &Entry, s: &SpreadFolder, base: &Manifest) -> String {
    let m = e.manifest;
    let mut unlike = Vec::new();
    if m.experiment.config_hash != base.experiment.config_hash {
        unlike.push("another config".to_string());
    }
    // The measured source where both record it, else the commit.
    let build = |m: &Manifest| m.build.source.clone().unwrap_or_else(|| m.build.commit.clone());
    if build(m) != build(base) {
        unlike.push("another build".to_string());
    }
    let gpu = |m: &Manifest| m.device.as_ref().map(|d| d.name.clone());
    if gpu(m) != gpu(base) {
        unlike.push("another GPU".to_string());
    }
    if m.host.cpu != base.host.cpu || m.host.cpu_threads != base.host.cpu_threads {
        unlike.push("another host CPU".to_string());
    }
    if let SpreadOver::Gpus(n) = s.over
        && m.devices.len() != n as usize
    {
        unlike.push(format!("{} GPUs opened", m.devices.len().max(1)));
    }
    if s.workers != s.over.count() as usize {
        unlike.push(format!(
            "{} of {} {} made rows",
            s.workers,
            s.over.count(),
            s.over.noun()
        ));
    }
    if unlike.is_empty() {
        "yes".into()
    } else {
        unlike.join("; ")
    }
}

/// The section: one row per spread folder of `entries`, ordered by
/// experiment, GPUs before ranks, then by count; empty where there is
/// none, so that a results folder without spreads reads as before. A wall
/// time too short to compare ([`MIN_WALL_S`]), or a spread's speedup over
/// one GPU (or MPI's over `--devices`) too far from its ideal
/// ([`MAX_OFF_IDEAL`]), is refused.
pub fn section(entries: &[Entry]) -> anyhow::Result<String> {
    let mut spreads: Vec<(&Entry, &SpreadFolder)> = entries.iter().filter_map(|e| Some((e, e.spread?))).collect();
    if spreads.is_empty() {
        return Ok(String::new());
    }
    spreads.sort_by(|(_, a), (_, b)| (&a.base, a.over).cmp(&(&b.base, b.over)));
    let find = |name: &str| entries.iter().find(|e| e.name == name && e.spread.is_none());
    let mut out = String::from(
        "\n## Over several GPUs\n\n\
         Each experiment spread over several GPUs of one process (`experiment --devices`) \
         or over MPI ranks of one GPU each (`mpiexec -n N wavepath experiment`), against \
         the same experiment on one GPU: the wall time of the whole experiment, to the \
         second, from its manifest (each session's start to its end: CPU runs, parity \
         checks, warm-ups and timed repetitions), and the speedup (above 1: the spread is faster). Every timed \
         row ran alone on its GPU, so a spread's rows repeat the one-GPU run's and stand \
         here only. The driver compiles each kernel on its first use (seconds for a \
         megakernel) and caches it, so the runs compared must all find their kernels \
         compiled: `scripts/gpu-study` runs such a study once, unpacked, before them. \
         MPI ÷ `--devices`: the ranks' wall time over that of as many GPUs in one process \
         (1: MPI costs nothing). Imbalance: the busiest GPU's or rank's render time over \
         the mean, less one.\n\n",
    );
    out += &table_head(&[
        "experiment",
        "over",
        "its folder",
        "wall s",
        "on one GPU, s",
        "speedup",
        "MPI ÷ `--devices`",
        "imbalance",
        "like for like?",
        "commit",
        "measured source",
    ]);
    for (e, s) in spreads {
        let this = wall(e)?;
        let base = find(&s.base);
        let one_gpu = base.map(wall).transpose()?;
        let within = f64::from(s.over.count()) * MAX_OFF_IDEAL;
        let speedup = match (&one_gpu, &this) {
            (Some(Ok(one)), Ok(t)) => {
                let what = format!("the speedup over one GPU ({one} s over {t} s)");
                fmt_speedup(sane(e, one / t, within, &what)?)
            }
            _ => "–".into(),
        };
        let mpi = match s.over {
            SpreadOver::Ranks(n) => match (
                find_spread(entries, &s.base, SpreadOver::Gpus(n))
                    .map(wall)
                    .transpose()?,
                &this,
            ) {
                (Some(Ok(gpus)), Ok(t)) => {
                    let what = format!("MPI ÷ `--devices` ({t} s over {gpus} s)");
                    format!("{:.3}", sane(e, t / gpus, within, &what)?)
                }
                _ => "–".into(),
            },
            SpreadOver::Gpus(_) => "–".into(),
        };
        out += &table_row(&[
            match base {
                Some(_) => folder_link(&s.base),
                None => code(&s.base),
            },
            cell(s.over),
            folder_link(e.name),
            seconds(this),
            one_gpu.map_or_else(|| format!("– (no folder {})", code(&s.base)), seconds),
            speedup,
            mpi,
            s.imbalance.map_or("–".into(), |v| format!("{:.1}%", v * 100.0)),
            base.map_or("–".into(), |b| like_for_like(e, s, b.manifest)),
            e.commit.clone(),
            e.measured.clone(),
        ]);
    }
    Ok(out)
}

/// A wall time's cell: whole seconds, or why there is none.
fn seconds(wall: Result<f64, String>) -> String {
    wall.map_or_else(|why| format!("– ({})", text(&why)), |t| format!("{t:.0}"))
}

/// The spread folder of the experiment `base` over `over`.
fn find_spread<'e, 'a>(entries: &'e [Entry<'a>], base: &str, over: SpreadOver) -> Option<&'e Entry<'a>> {
    entries
        .iter()
        .find(|e| e.spread.is_some_and(|s| s.base == base && s.over == over))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab::records::{ManifestDevice, ManifestSession};

    fn row(gpu: Option<usize>, rank: Option<usize>, total_ms: f64) -> RunRow {
        RunRow {
            gpu_ordinal: gpu,
            rank,
            total_ms,
            width: 1,
            height: 1,
            spp: 1,
            ..Default::default()
        }
    }

    #[test]
    fn a_spread_counts_its_workers_and_their_imbalance() {
        let rows = [
            row(Some(0), None, 3000.0),
            row(Some(1), None, 1000.0),
            row(None, None, 50.0),
        ];
        let s = SpreadFolder::of_folder("e_gpus2", &rows).unwrap();
        assert_eq!((s.base.as_str(), s.over, s.workers), ("e", SpreadOver::Gpus(2), 2));
        // Busiest 3 s over a mean of 2 s.
        assert!((s.imbalance.unwrap() - 0.5).abs() < 1e-12);
        let s = SpreadFolder::of_folder("e_ranks2", &rows).unwrap();
        assert_eq!((s.workers, s.imbalance), (0, None));
        assert_eq!(SpreadFolder::of_folder("e", &rows), None);
    }

    fn manifest(sessions: &[(&str, &str)], gpus: usize) -> Manifest {
        let device = ManifestDevice {
            name: "GPU".into(),
            ..Default::default()
        };
        let mut m = Manifest {
            device: Some(device.clone()),
            devices: if gpus > 1 { vec![device; gpus] } else { Vec::new() },
            ..Default::default()
        };
        m.experiment.config_hash = "config".into();
        m.session = sessions
            .iter()
            .map(|(started, finished)| ManifestSession {
                started: started.to_string(),
                finished: finished.to_string(),
                ..Default::default()
            })
            .collect();
        m
    }

    #[test]
    fn wall_time_sums_the_sessions_and_says_why_it_has_none() {
        let m = manifest(
            &[
                ("2026-11-29T05:00:00Z", "2026-11-29T05:01:40Z"),
                ("2026-11-29T06:00:00Z", "2026-11-29T06:00:20Z"),
            ],
            1,
        );
        assert_eq!(wall_seconds(&m), Ok(120.0));
        let unfinished = manifest(&[("2026-11-29T05:00:00Z", "")], 1);
        assert!(wall_seconds(&unfinished).unwrap_err().contains("did not finish"));
        let backwards = manifest(&[("2026-11-29T05:00:00Z", "2026-11-29T04:00:00Z")], 1);
        assert!(wall_seconds(&backwards).unwrap_err().contains("before it starts"));
        let garbled = manifest(&[("yesterday", "2026-11-29T04:00:00Z")], 1);
        assert!(
            wall_seconds(&garbled)
                .unwrap_err()
                .contains("`yesterday` is not a time")
        );
    }

    #[test]
    fn the_section_sets_each_spread_against_one_gpu_and_mpi_against_devices() {
        let one = manifest(&[("2026-11-29T05:00:00Z", "2026-11-29T05:08:00Z")], 1);
        let gpus = manifest(&[("2026-11-29T06:00:00Z", "2026-11-29T06:02:00Z")], 4);
        let ranks = manifest(&[("2026-11-29T07:00:00Z", "2026-11-29T07:02:06Z")], 1);
        let mut other = manifest(&[("2026-11-29T08:00:00Z", "2026-11-29T08:04:00Z")], 1);
        other.experiment.config_hash = "edited".into();
        let spread = |name: &str, workers: usize| SpreadFolder {
            workers,
            imbalance: Some(0.05),
            ..SpreadFolder::of_folder(name, &[]).unwrap()
        };
        let (s_gpus, s_ranks, s_two) = (spread("e_gpus4", 4), spread("e_ranks4", 4), spread("e_ranks2", 1));
        let entry = |name, manifest, spread| Entry {
            name,
            manifest,
            path: Path::new("m.toml"),
            spread,
            measured: "`0123456789abcdef`".into(),
            commit: "`abc`".into(),
        };
        // Out of order on purpose: ranks after GPUs, 2 before 4.
        let entries = [
            entry("e_ranks4", &ranks, Some(&s_ranks)),
            entry("e_ranks2", &other, Some(&s_two)),
            entry("e", &one, None),
            entry("e_gpus4", &gpus, Some(&s_gpus)),
        ];
        let t = section(&entries).unwrap();
        let lines: Vec<&str> = t.lines().filter(|l| l.starts_with("| [`e`]")).collect();
        assert_eq!(lines.len(), 3, "{t}");
        assert_eq!(
            lines[0],
            "| [`e`](e/report.md) | 4 GPUs (`--devices`) | [`e_gpus4`](e_gpus4/report.md) | 120 | 480 | 4.00x | – | 5.0% | yes | `abc` | `0123456789abcdef` |"
        );
        assert!(
            lines[1].starts_with("| [`e`](e/report.md) | 2 MPI ranks, a GPU each | [`e_ranks2`](e_ranks2/report.md) | 240 | 480 | 2.00x | – | 5.0% | another config; 1 of 2 ranks made rows |"),
            "{t}"
        );
        // 126 s over the 120 s of four GPUs in one process.
        assert!(lines[2].contains("| 126 | 480 | 3.81x | 1.050 |"), "{t}");
        // Without its one-GPU run, a spread says so.
        let alone = section(&entries[..1]).unwrap();
        assert!(alone.contains("| `e` | 4 MPI ranks, a GPU each |"), "{alone}");
        assert!(alone.contains("| 126 | – (no folder `e`) | – | – |"), "{alone}");
        assert!(section(&entries[2..3]).unwrap().is_empty());
    }

    #[test]
    fn a_wall_time_too_short_or_a_speedup_far_from_its_ideal_is_refused() {
        let at = |start: &str, end: &str| manifest(&[(start, end)], 1);
        let one = at("2026-11-29T05:00:00Z", "2026-11-29T05:01:40Z");
        let short = at("2026-11-29T06:00:00Z", "2026-11-29T06:00:00Z");
        let second = at("2026-11-29T06:00:00Z", "2026-11-29T06:00:01Z");
        let hours = at("2026-11-29T06:00:00Z", "2026-11-29T08:00:00Z");
        let ten = at("2026-11-29T06:00:00Z", "2026-11-29T06:00:10Z");
        let spread = |name: &str| SpreadFolder::of_folder(name, &[]).unwrap();
        let (gpus, ranks) = (spread("e_gpus2"), spread("e_ranks2"));
        let entry = |name, manifest, spread| Entry {
            name,
            manifest,
            path: Path::new("results/x/manifest.toml"),
            spread,
            measured: "`0123456789abcdef`".into(),
            commit: "`abc`".into(),
        };
        let refusal = |entries: &[Entry]| section(entries).unwrap_err().to_string();
        // 0 s is too short to compare; 1 s is not.
        let e = refusal(&[entry("e", &second, None), entry("e_gpus2", &short, Some(&gpus))]);
        assert!(
            e.starts_with("results/x/manifest.toml: field `session`: 0 s in all, under the 1 s"),
            "{e}"
        );
        assert!(section(&[entry("e", &second, None), entry("e_gpus2", &second, Some(&gpus))]).is_ok());
        // 100 s over 2 h: 72 times slower than one GPU, past 1/16.
        let e = refusal(&[entry("e", &one, None), entry("e_gpus2", &hours, Some(&gpus))]);
        assert!(
            e.contains("the speedup over one GPU (100 s over 7200 s) is 0.014, outside the 1/16 to 16"),
            "{e}"
        );
        // 2 h over 10 s: 720 times faster on 2 GPUs, past 8 times 2.
        let e = refusal(&[entry("e", &hours, None), entry("e_gpus2", &ten, Some(&gpus))]);
        assert!(e.contains("is 720.000, outside the 1/16 to 16"), "{e}");
        // No one-GPU run: MPI against `--devices` alone, past 8 times 2.
        let e = refusal(&[
            entry("e_gpus2", &ten, Some(&gpus)),
            entry("e_ranks2", &hours, Some(&ranks)),
        ]);
        assert!(
            e.contains("MPI ÷ `--devices` (7200 s over 10 s) is 720.000, outside the 1/16 to 16"),
            "{e}"
        );
    }
}
