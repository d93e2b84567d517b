//! The Markdown of `report.md`: the experiment header, and per study its
//! status, configuration table, published figures beside ours and figure
//! links, each with a caption naming config, study and command.

use super::builds::{self, RowBuild};
use super::figures::Figure;
use super::markdown::{code, link, text};
use super::scaling;
use super::stats::{ConfigRows, StudyData};
use lab::config::{Published, SeedTime};
use lab::records::{Manifest, RunRow};
use renderer::backend::BackendKind;
use std::fmt::Write as _;
use std::path::Path;

/// The header: experiment, config, command, host, device, build and dates.
/// The build is the manifest's where the rows (of `builds`) are all of it,
/// else every build of the rows.
pub fn header(m: &Manifest, builds: &[RowBuild]) -> String {
    let e = &m.experiment;
    let mut out = format!("# Experiment {}\n\n", code(&e.name));
    if !e.description.is_empty() {
        let _ = writeln!(out, "{}\n", text(e.description.trim()));
    }
    let cpu = host_cpu(m);
    let device = m.device.as_ref().map_or("none (no GPU used)".to_string(), |d| {
        format!(
            "{}, driver {}, compute capability {}, {} multiprocessors, {:.1} GiB",
            text(&d.name),
            text(&d.driver),
            text(&d.compute_capability),
            d.multiprocessors,
            d.memory_gib
        )
    });
    let dirty = match (m.build.dirty, m.build.allow_dirty) {
        (false, _) => "",
        (true, true) => " (**dirty**: uncommitted changes, run with `--allow-dirty`)",
        (true, false) => " (**dirty**: uncommitted changes)",
    };
    let manifests_own = match builds {
        [] => true,
        [b] => b.commit == m.build.commit && b.dirty == m.build.dirty,
        _ => false,
    };
    let build = if manifests_own {
        format!(
            "wavepath {}, commit {}{dirty}",
            text(&m.build.version),
            code(&m.build.commit)
        )
    } else {
        format!(
            "wavepath {}, rows from {} build{}: {}",
            text(&m.build.version),
            builds.len(),
            if builds.len() == 1 { "" } else { "s" },
            builds::list(builds)
        )
    };
    let rows = [
        ("config", code(&e.config)),
        ("command", code(&e.command)),
        ("host CPU", cpu),
        ("device", device),
        ("build", build),
        ("started", text(&e.started)),
        ("finished", text(&e.finished)),
    ];
    out.push_str("| | |\n|---|---|\n");
    for (key, value) in rows {
        out.push_str(&table_row(&[key.to_string(), value]));
    }
    if !m.session.is_empty() {
        out.push_str(
            "\nSessions (the first run, then each `--resume`):\n\n| started | ended | commit |\n|---|---|---|\n",
        );
        for session in &m.session {
            let ended = if session.finished.is_empty() {
                "did not end (stopped at once or killed)".into()
            } else {
                text(&session.finished)
            };
            let dirty = if session.dirty { " (dirty)" } else { "" };
            out.push_str(&table_row(&[
                text(&session.started),
                ended,
                format!("{}{dirty}", code(&session.commit)),
            ]));
        }
    }
    if let Some(o) = &m.overhead {
        let _ = writeln!(
            out,
            "\nRunner overhead per GPU row (the runner's own time against the render call): \
             median {:.2}%, largest {:.2}%, over {} GPU rows.",
            o.median_fraction * 100.0,
            o.max_fraction * 100.0,
            o.gpu_rows
        );
    }
    out
}

/// The caption line under a table or figure of `study`.
pub fn caption(kind: &str, study: &str, m: &Manifest) -> String {
    format!(
        "*{kind}: study {} of config {}, produced by {}.*\n",
        code(study),
        code(&m.experiment.config),
        code(&m.experiment.command)
    )
}

/// The host's CPU and its threads, as Markdown text.
pub fn host_cpu(m: &Manifest) -> String {
    match m.host.cpu_threads {
        0 => text(&m.host.cpu),
        t => format!("{} ({t} threads)", text(&m.host.cpu)),
    }
}

/// The section of one study: status, configurations, published figures and
/// figure links.
pub fn study_section(study: &StudyData, m: &Manifest, figures: &[Figure], report_dir: &Path) -> String {
    let info = study.info;
    let mut out = format!("\n## Study {}\n\n", code(&info.name));
    if !info.description.is_empty() {
        let _ = writeln!(out, "{}\n", text(info.description.trim()));
    }
    out.push_str(&status_list(study, m));
    out.push_str(&config_table(study, m));
    out.push_str(&scaling_table(study, m));
    out.push_str(&published_table(study, m));
    for fig in figures {
        let link = |p: &Path| link(&p.strip_prefix(report_dir).unwrap_or(p).display().to_string());
        let png = if fig.has_png() {
            format!(" ([PNG]({}))", link(&fig.png))
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "\n![{}]({}){png}\n\n{}",
            text(&fig.title),
            link(&fig.svg),
            caption("Figure", &info.name, m)
        );
    }
    out
}

/// Status, film check, runs, sweeps, baseline, note, scaled rows and
/// skipped runs.
fn status_list(study: &StudyData, m: &Manifest) -> String {
    let info = study.info;
    let mut items = vec![format!("status: {}", text(&info.status))];
    if !info.parity.is_empty() {
        items.push(format!("parity with the CPU: {}", text(&info.parity)));
    }
    if !info.film_check.is_empty() {
        items.push(format!("film check: {}", text(&info.film_check)));
    }
    items.push(format!(
        "configurations planned: {}, rows recorded: {}",
        info.runs_planned, info.rows
    ));
    if !info.swept.is_empty() {
        items.push(format!("swept: {}", text(&info.swept.join(", "))));
    }
    items.push(format!(
        "baseline: {}",
        text(info.baseline.as_deref().unwrap_or("none"))
    ));
    if let Some(reference) = &info.reference {
        items.push(format!(
            "reference image: {} (each configuration's error against it: RMSE, relative MSE, FLIP)",
            code(reference)
        ));
    }
    if let Some(note) = &info.note {
        items.push(format!("note: {}", text(note)));
    }
    let scaled = study.scaled_rows();
    if scaled > 0 {
        items.push(format!(
            "rows rendered at fewer spp and scaled: {scaled} (their times are scaled to report_spp)"
        ));
    }
    for s in m.skipped.iter().filter(|s| s.study == info.name) {
        items.push(format!("skipped {}: {}", code(&s.config), text(&s.reason)));
    }
    let mut out: String = items.iter().map(|i| format!("- {i}\n")).collect();
    out.push('\n');
    out
}

/// One line per configuration.
fn config_table(study: &StudyData, m: &Manifest) -> String {
    let baseline = study.info.baseline.as_deref();
    let mut columns = vec![
        "run",
        "config",
        "scene",
        "back end",
        "runs",
        "median ms",
        "total ms",
        "scaled from",
        "min–max ms",
        "spread",
        "Mrays/s",
        "registers",
        "occupancy",
    ];
    let speedup_columns = baseline.map(|b| [format!("speedup vs {b}"), format!("speedup vs {b}, total")]);
    columns.extend(speedup_columns.iter().flatten().map(String::as_str));
    // Every repetition renders the same image, so a configuration's error
    // against the reference is its first row's.
    let errors = study.info.reference.is_some();
    if errors {
        columns.extend(["RMSE", "relMSE", "FLIP"]);
    }
    let mut out = table_head(&columns);
    for c in &study.configs {
        let mut cells = config_cells(c);
        if baseline.is_some() {
            cells.push(study.speedup(c).map_or("–".into(), fmt_speedup));
            cells.push(study.total_speedup(c).map_or("–".into(), fmt_speedup));
        }
        if errors {
            let r = &c.row;
            for e in [r.rmse, r.rel_mse, r.flip] {
                cells.push(e.map_or("–".into(), |e| format!("{e:.4e}")));
            }
        }
        out.push_str(&table_row(&cells));
    }
    if study.configs.is_empty() {
        out.push_str("\n(no timed runs recorded)\n");
    }
    out.push('\n');
    out + &caption("Table", &study.info.name, m)
}

/// The cells of a configuration's line, without the speedup.
fn config_cells(c: &ConfigRows) -> Vec<String> {
    let r = &c.row;
    let scene = match r.scene_overrides.as_str() {
        "" => text(&r.scene_name),
        o => text(&format!("{} ({o})", r.scene_name)),
    };
    let gpu = |v: Option<String>| {
        if c.is_gpu() {
            v.unwrap_or("–".into())
        } else {
            "–".into()
        }
    };
    vec![
        r.run.to_string(),
        code(&r.config),
        scene,
        text(&r.backend),
        c.runs.to_string(),
        format!("{:.2}", c.median_ms),
        c.time(SeedTime::Total).map_or("–".into(), |t| format!("{t:.2}")),
        // A time rendered at fewer spp and scaled linearly (`spp_cap`) is
        // an estimate, never a measurement: say so beside it.
        if !c.is_measured() {
            format!("{} spp", r.spp)
        } else {
            "–".into()
        },
        format!("{:.2}–{:.2}", c.spread.min, c.spread.max),
        format!("{:.1}%", c.spread.relative * 100.0),
        format!("{:.2}", c.mrays_per_s()),
        gpu(r.registers.map(|v| v.to_string())),
        gpu(r.occupancy.map(|v| format!("{:.0}%", v * 100.0))),
    ]
}

/// The scaling table over GPUs ([`scaling`]): per GPU configuration its
/// GPUs, image size, median time, T1/TN beside the ideal, the split's
/// imbalance, and each GPU's samples per pixel and busy time (of the
/// configuration's representative row); nothing unless the study sweeps
/// `gpus`.
fn scaling_table(study: &StudyData, m: &Manifest) -> String {
    if !study.sweeps("gpus") {
        return String::new();
    }
    let weak = scaling::is_weak(study);
    let (what, ideal) = match weak {
        true => ("efficiency T1/TN", "ideal 1"),
        false => ("speedup T1/TN", "ideal N"),
    };
    let mut out = format!(
        "\n{} scaling over GPUs (T1: the same configuration on one GPU{}):\n\n",
        if weak { "Weak" } else { "Strong" },
        if weak { ", its image 1/N as tall" } else { "" }
    );
    out += &table_head(&[
        "config",
        "scene",
        "back end",
        "gpus",
        "size",
        "median ms",
        what,
        ideal,
        "split imbalance",
        "per GPU: spp @ busy ms",
    ]);
    for c in study.configs.iter().filter(|c| c.row.gpus.is_some()) {
        let r = &c.row;
        let n = r.gpus.unwrap_or(1);
        let ideal = if weak { 1.0 } else { f64::from(n) };
        out += &table_row(&[
            code(&r.config),
            text(&r.scene_name),
            text(&r.backend),
            n.to_string(),
            format!("{}x{}", r.width, r.height),
            format!("{:.2}", c.median_ms),
            scaling::ratio(study, c).map_or("–".into(), |v| format!("{v:.3}")),
            format!("{ideal:.0}"),
            r.split_imbalance.map_or("–".into(), |v| format!("{:.1}%", v * 100.0)),
            per_gpu(r),
        ]);
    }
    let _ = write!(out, "\n{}", caption("Table", &study.info.name, m));
    out
}

/// Each GPU's share of a split row, "spp @ busy ms" in the split's
/// order ("–" for a row on one GPU, or from before these columns).
fn per_gpu(r: &RunRow) -> String {
    let shares: Vec<String> = (r.split_spp.split_whitespace())
        .zip(r.split_busy_ms.split_whitespace())
        .map(|(spp, ms)| format!("{spp} @ {ms}"))
        .collect();
    if shares.is_empty() {
        "–".into()
    } else {
        shares.join(", ")
    }
}

/// Published figures beside ours, or nothing when the study has none. Ours
/// is the run the entry names (the seed's settings, measured, against a
/// measured baseline); the study's best stands in a column of its own.
fn published_table(study: &StudyData, m: &Manifest) -> String {
    if study.info.published.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nPublished figures beside ours:\n\n");
    out += &table_head(&[
        "source",
        "their hardware",
        "published",
        "their time",
        "back end",
        "ours, at their settings",
        "ours, the other time",
        "our run",
        "best over the study (other settings)",
        "our hardware",
    ]);
    for p in &study.info.published {
        let time = p.time.unwrap_or(SeedTime::Wall);
        let other = time.other();
        let ours = match &p.run {
            None => "– (the entry names no run: a config from before matching)".into(),
            Some(_) => published_value(study, p, time).map_or(
                "– (its run, or a measured run to divide by, was not made)".into(),
                |v| fmt_value(v, &p.unit),
            ),
        };
        let ours_other = published_value(study, p, other).map_or("–".into(), |v| {
            format!("{} ({} time)", fmt_value(v, &p.unit), other.name())
        });
        let backend = text(&p.backend_label());
        let run = match (&p.run, &p.over_run) {
            (Some(r), Some(o)) => format!("{} over {}", code(r), code(o)),
            (Some(r), None) => code(r),
            _ => "–".into(),
        };
        out += &table_row(&[
            text(&p.source),
            text(&p.hardware),
            fmt_value(p.value, &p.unit),
            p.time_label().to_string(),
            backend,
            ours,
            ours_other,
            run,
            our_value(study, p, time).map_or("– (no measured run: scaled times never stand here)".into(), |v| {
                fmt_value(v, &p.unit)
            }),
            our_hardware(p.backend, m),
        ]);
    }
    out.push('\n');
    out + &caption("Table", &study.info.name, m)
}

/// Our value beside published figure `p`, in `time`: that of the run it
/// names, over the run its `over` names where it has one.
pub fn published_value(study: &StudyData, p: &Published, time: SeedTime) -> Option<f64> {
    let c = study.config_of_run(p.run.as_deref()?)?;
    match &p.over_run {
        Some(over) => Some(study.config_of_run(over)?.time(time)? / c.time(time)?),
        None => value_of(study, c, &p.unit, time),
    }
}

/// Configuration `c`'s measured value in `unit`: its speedup over a
/// measured baseline (`x`), Mrays/s, or its median time, in `time`.
fn value_of(study: &StudyData, c: &ConfigRows, unit: &str, time: SeedTime) -> Option<f64> {
    if !c.is_measured() {
        return None;
    }
    match unit {
        "x" => study.measured_speedup(c, time),
        "Mrays/s" => Some(c.mrays_per_s()),
        "ms" => c.time(time),
        "s" => Some(c.time(time)? / 1e3),
        _ => None,
    }
}

/// Our best measured value over the whole study in the unit of published
/// figure `p`: the largest speedup (`x`) or Mrays/s, or the smallest time
/// (`ms`, `s`). A time scaled from fewer spp never stands beside a
/// published figure.
fn our_value(study: &StudyData, p: &Published, time: SeedTime) -> Option<f64> {
    if p.over_run.is_some() {
        // A gain of one setting over another has no "best" elsewhere.
        return None;
    }
    let values = study
        .configs
        .iter()
        .filter(|c| c.row.backend == p.backend.label() && p.scene.as_ref().is_none_or(|s| *s == c.row.scene_name))
        .filter_map(|c| value_of(study, c, &p.unit, time));
    let largest = matches!(p.unit.as_str(), "x" | "Mrays/s");
    values.reduce(if largest { f64::max } else { f64::min })
}

/// The hardware our runs of `backend` used, as Markdown text.
pub fn our_hardware(backend: BackendKind, m: &Manifest) -> String {
    match (&m.device, backend.is_gpu()) {
        (Some(d), true) => text(&d.name),
        (None, true) => "no GPU".into(),
        (_, false) => text(&m.host.cpu),
    }
}

/// A value with its unit: `4.00x`, `12.50 ms`.
pub fn fmt_value(v: f64, unit: &str) -> String {
    if unit == "x" {
        fmt_speedup(v)
    } else {
        format!("{v:.2} {unit}")
    }
}

/// A speedup: `4.00x`.
pub fn fmt_speedup(v: f64) -> String {
    format!("{v:.2}x")
}

/// A Markdown table's header and rule lines.
pub fn table_head(columns: &[&str]) -> String {
    let rule = vec!["---"; columns.len()];
    format!("| {} |\n|{}|\n", columns.join(" | "), rule.join("|"))
}

/// A Markdown table line of `cells`, each Markdown ([`text`], [`code`]),
/// with its pipes escaped.
pub fn table_row(cells: &[String]) -> String {
    let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
    format!("| {} |\n", cells.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scaling_table_gives_t1_over_tn_beside_the_ideal() {
        use super::super::scaling::tests::{info, rows};
        use crate::stats::group_configs;
        let mut rows = rows();
        rows[1].split_spp = "5 3".into();
        rows[1].split_busy_ms = "400.000 240.000".into();
        let configs = group_configs(&rows);
        let strong = info(false);
        let t = scaling_table(&StudyData::new(&strong, &configs, &[]), &Manifest::default());
        assert!(t.starts_with("\nStrong scaling"), "{t}");
        assert!(
            t.contains("| `cs500 gpu-mega gpus=4` | cs500 | gpu-mega | 4 | 64x256 | 250.00 | 3.200 | 4 | – | – |"),
            "{t}"
        );
        assert!(t.contains("| 2.000 | 2 | – | 5 @ 400.000, 3 @ 240.000 |"), "{t}");
        let weak = info(true);
        let t = scaling_table(&StudyData::new(&weak, &configs, &[]), &Manifest::default());
        assert!(
            t.contains("efficiency T1/TN") && t.contains("| 2 | 64x128 | 400.00 | 2.000 | 1 |"),
            "{t}"
        );
        let unswept = lab::records::ManifestStudy::default();
        assert!(scaling_table(&StudyData::new(&unswept, &configs, &[]), &Manifest::default()).is_empty());
    }

    #[test]
    fn values_carry_their_unit() {
        assert_eq!(fmt_value(3.5, "x"), "3.50x");
        assert_eq!(fmt_value(12.5, "ms"), "12.50 ms");
    }

    #[test]
    fn table_cells_escape_pipes() {
        assert_eq!(table_head(&["a", "b"]), "| a | b |\n|---|---|\n");
        assert_eq!(table_row(&["x|y".into(), "z".into()]), "| x\\|y | z |\n");
    }
}
