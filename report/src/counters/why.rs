//! why.csv (per back end) and why_kernels.csv (per kernel): the counters
//! of every profile summed per ray, per launch and per sample beside the
//! study's fastest configuration; written from the profiled renders
//! (`counters sum`), or their study columns set afresh from a re-run
//! study (`counters restudy`); and docs/results.md's table of them.

use super::cells::{Cell, CsvRow, csv_rows, csv_text, number, read_text, whole};
use super::ncu_log::{Average, Launch, Sum, Totals, read_ncu_log};
use super::profiles::{BACKENDS, Profile};
use super::study::{STUDY_COLUMNS, StudyKey, study_columns, study_runs};
use anyhow::bail;
use indexmap::IndexMap;
use renderer::io::atomic_file;
use renderer::render::summary_record::SummaryRecord;
use std::collections::HashMap;
use std::path::Path;

/// why.csv's columns of the counters, before the study's.
const COUNTER_COLUMNS: [&str; 19] = [
    "study",
    "scene",
    "overrides",
    "backend",
    "size",
    "spp",
    "rays",
    "launches",
    "launches_per_sample",
    "warp_inst",
    "lanes",
    "warp_inst_per_ray",
    "registers",
    "achieved_occupancy",
    "theoretical_occupancy",
    "dram_bytes_per_ray",
    "l2_bytes_per_ray",
    "local_accesses_per_ray",
    "kernel_ms",
];

/// why.csv's columns: the counters', then the study's fastest
/// configuration's (declared where they are read, in the study module).
pub const WHY_COLUMNS: [&str; 25] = concat(COUNTER_COLUMNS, STUDY_COLUMNS);

/// `a` then `b`, as one array (a constant's columns from two others).
const fn concat<const A: usize, const B: usize, const N: usize>(
    a: [&'static str; A],
    b: [&'static str; B],
) -> [&'static str; N] {
    assert!(A + B == N, "the joined array's length is the sum of its parts'");
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < A { a[i] } else { b[i - A] };
        i += 1;
    }
    out
}

/// why_kernels.csv's columns.
pub const KERNEL_COLUMNS: [&str; 13] = [
    "study",
    "scene",
    "overrides",
    "backend",
    "kernel",
    "launches",
    "warp_inst",
    "lanes",
    "warp_inst_per_ray",
    "registers",
    "achieved_occupancy",
    "dram_bytes_per_ray",
    "kernel_ms",
];

/// The figures of why.csv that the table prints, read back as numbers.
const TABLE_FIGURES: [&str; 5] = [
    "lanes",
    "warp_inst_per_ray",
    "l2_bytes_per_ray",
    "local_accesses_per_ray",
    "achieved_occupancy",
];

/// One row of why.csv or why_kernels.csv: each column's cell.
pub type WhyRow = Vec<(String, Cell)>;

/// The cell of `column` in `row` (empty text where it has none).
fn cell<'a>(row: &'a WhyRow, column: &str) -> &'a Cell {
    static EMPTY: Cell = Cell::Text(String::new());
    row.iter().find(|(c, _)| c == column).map_or(&EMPTY, |(_, cell)| cell)
}

/// What `counters sum` or `counters restudy` wrote: docs/results.md's
/// table rows of every experiment.
pub struct CountersWritten {
    /// The table's rows, one per back end of each profile.
    pub table: Vec<String>,
}

/// Sums every profile's renders from `outdir` (Nsight Compute's rows in
/// `.csv`, the summary record in `.json`) beside each study's runs.csv
/// under `results`, and writes each experiment's `counters/` there: the
/// raw rows compressed (`ncu_<label>_<backend>.csv.xz`), why.csv and
/// why_kernels.csv. Every input is read and summed before anything is
/// written.
pub fn sum(profiles: &[Profile], outdir: &Path, results: &Path) -> anyhow::Result<CountersWritten> {
    let mut tables: IndexMap<&str, (Vec<WhyRow>, Vec<WhyRow>)> = IndexMap::new();
    let mut raw = Vec::new();
    let mut runs_of = HashMap::new();
    for profile in profiles {
        if !runs_of.contains_key(&profile.experiment) {
            runs_of.insert(profile.experiment.clone(), study_runs(results, &profile.experiment)?);
        }
        for backend in BACKENDS {
            let stem = profile.stem(outdir, backend);
            let (row, kernel_rows, text) = profile_rows(profile, backend, &stem, &runs_of[&profile.experiment])?;
            let (why, kernels) = tables.entry(profile.experiment.as_str()).or_default();
            why.push(row);
            kernels.extend(kernel_rows);
            let name = format!("ncu_{}_{backend}.csv.xz", profile.label());
            raw.push((results.join(&profile.experiment).join("counters").join(name), text));
        }
    }
    for (path, text) in raw {
        create_parent(&path)?;
        let mut packed = Vec::new();
        lzma_rs::xz_compress(&mut text.as_bytes(), &mut packed)?;
        atomic_file::write(&path, &packed)?;
    }
    let mut table = Vec::new();
    for (experiment, (why, kernels)) in &tables {
        let folder = results.join(experiment).join("counters");
        for (name, columns, rows) in [
            ("why.csv", &WHY_COLUMNS[..], why),
            ("why_kernels.csv", &KERNEL_COLUMNS[..], kernels),
        ] {
            atomic_file::write(&folder.join(name), csv_text(columns, rows)?.as_bytes())?;
        }
        table.extend(why.iter().map(|r| table_row(experiment, r)));
    }
    Ok(CountersWritten { table })
}

/// Makes the folder `path` goes in.
fn create_parent(path: &Path) -> anyhow::Result<()> {
    let folder = path.parent().expect("a file in a folder");
    std::fs::create_dir_all(folder).map_err(|e| anyhow::anyhow!("{}: cannot create the folder: {e}", folder.display()))
}

/// why.csv's row and why_kernels.csv's rows of `profile` on `backend`,
/// from Nsight Compute's rows `stem`.csv and the summary record
/// `stem`.json, with the log's text.
fn profile_rows(
    profile: &Profile,
    backend: &str,
    stem: &Path,
    runs: &[CsvRow],
) -> anyhow::Result<(WhyRow, Vec<WhyRow>, String)> {
    let log_path = stem.with_extension("csv");
    let log = read_ncu_log(&log_path)?;
    let summary_path = stem.with_extension("json");
    let summary = SummaryRecord::read(&summary_path)?;
    for (what, value) in [("rays", summary.rays), ("spp_done", summary.spp_done as u64)] {
        if value == 0 {
            bail!(
                "{}: the summary's {what} is 0; expected a render that traced rays",
                summary_path.display()
            );
        }
    }
    let rays = summary.rays as f64;
    let spp = summary.spp_done as u64;
    let t = Totals::of(log.launches.values(), &log_path)?;
    let common = |row: &mut WhyRow| {
        row.extend([
            ("study".to_string(), Cell::from(profile.study.as_str())),
            ("scene".into(), profile.scene.as_str().into()),
            ("overrides".into(), profile.overrides().into()),
            ("backend".into(), backend.into()),
        ])
    };
    let mut row = WhyRow::new();
    common(&mut row);
    row.extend(named([
        ("size", profile.size.as_str().into()),
        ("spp", spp.into()),
        ("rays", summary.rays.into()),
        ("launches", t.launches.into()),
        ("launches_per_sample", (t.launches as f64 / spp as f64).into()),
        ("warp_inst", (t.sum(Sum::WarpInst).round() as u64).into()),
        ("lanes", t.lanes().into()),
        ("warp_inst_per_ray", (t.sum(Sum::WarpInst) / rays).into()),
        ("registers", t.registers.as_str().into()),
        ("achieved_occupancy", t.occupancy(Average::Achieved).into()),
        ("theoretical_occupancy", t.occupancy(Average::Theoretical).into()),
        ("dram_bytes_per_ray", (t.sum(Sum::DramBytes) / rays).into()),
        ("l2_bytes_per_ray", (t.sum(Sum::L2Bytes) / rays).into()),
        (
            "local_accesses_per_ray",
            ((t.sum(Sum::LocalLoads) + t.sum(Sum::LocalStores)) / rays).into(),
        ),
        ("kernel_ms", (t.sum(Sum::KernelNs) / 1e6).into()),
    ]));
    let key = StudyKey {
        study: &profile.study,
        scene: &profile.scene,
        backend,
        fields: &profile.fields,
    };
    row.extend(study_columns(runs, &key)?);
    let mut per_kernel: IndexMap<&str, Vec<&Launch>> = IndexMap::new();
    for launch in log.launches.values() {
        per_kernel.entry(&launch.kernel).or_default().push(launch);
    }
    per_kernel.sort_keys();
    let mut kernel_rows = Vec::new();
    for (kernel, launches) in per_kernel {
        let k = Totals::of(launches, &log_path)?;
        let mut row = WhyRow::new();
        common(&mut row);
        row.extend(named([
            ("kernel", kernel.into()),
            ("launches", k.launches.into()),
            ("warp_inst", (k.sum(Sum::WarpInst).round() as u64).into()),
            ("lanes", k.lanes().into()),
            ("warp_inst_per_ray", (k.sum(Sum::WarpInst) / rays).into()),
            ("registers", k.registers.as_str().into()),
            ("achieved_occupancy", k.occupancy(Average::Achieved).into()),
            ("dram_bytes_per_ray", (k.sum(Sum::DramBytes) / rays).into()),
            ("kernel_ms", (k.sum(Sum::KernelNs) / 1e6).into()),
        ]));
        kernel_rows.push(row);
    }
    Ok((row, kernel_rows, log.text))
}

/// `cells` with their columns' names owned.
fn named<const N: usize>(cells: [(&str, Cell); N]) -> impl Iterator<Item = (String, Cell)> {
    cells.into_iter().map(|(c, v)| (c.to_string(), v))
}

/// The rows of the committed why.csv `path`, each figure the table prints
/// checked.
fn read_why(path: &Path) -> anyhow::Result<Vec<WhyRow>> {
    let expected = "why.csv as `wavepath counters sum` writes it";
    if std::fs::symlink_metadata(path).is_err() {
        bail!(
            "{}: no counters to set beside the study (profile the renders of `wavepath counters plan` and run `wavepath counters sum` first)",
            path.display()
        );
    }
    let rows = csv_rows(path, &read_text(path, expected)?, 0, &WHY_COLUMNS, expected)?;
    if rows.is_empty() {
        bail!("{}: no rows; expected {expected}", path.display());
    }
    let mut why = Vec::new();
    for r in rows {
        for field in TABLE_FIGURES {
            number(r.get(field), &r.at, field)?;
        }
        for registers in r.get("registers").split('/') {
            whole(registers, &r.at, "registers", 1)?;
        }
        why.push(r.cells().map(|(c, v)| (c.to_string(), Cell::from(v))).collect());
    }
    Ok(why)
}

/// Sets the `study_*` columns of every profiled experiment's committed
/// why.csv under `results` afresh from its runs.csv, keeping the
/// counters; every file is read before the first is written.
pub fn restudy(profiles: &[Profile], results: &Path) -> anyhow::Result<CountersWritten> {
    let mut experiments: Vec<&str> = Vec::new();
    for p in profiles {
        if !experiments.contains(&p.experiment.as_str()) {
            experiments.push(&p.experiment);
        }
    }
    let mut done = Vec::new();
    for experiment in experiments {
        let path = results.join(experiment).join("counters").join("why.csv");
        let mut rows = read_why(&path)?;
        let runs = study_runs(results, experiment)?;
        for row in &mut rows {
            let text = |c: &str| cell(row, c).written();
            let fields: Vec<String> = text("overrides")
                .split(';')
                .filter(|o| !o.is_empty())
                .map(String::from)
                .collect();
            let (study, scene, backend) = (text("study"), text("scene"), text("backend"));
            let key = StudyKey {
                study: &study,
                scene: &scene,
                backend: &backend,
                fields: &fields,
            };
            for (column, value) in study_columns(&runs, &key)? {
                if let Some((_, old)) = row.iter_mut().find(|(c, _)| *c == column) {
                    *old = value;
                }
            }
        }
        done.push((experiment, path, rows));
    }
    let mut table = Vec::new();
    for (experiment, path, rows) in done {
        atomic_file::write(&path, csv_text(&WHY_COLUMNS, &rows)?.as_bytes())?;
        table.extend(rows.iter().map(|r| table_row(experiment, r)));
    }
    Ok(CountersWritten { table })
}

/// The row of docs/results.md's "Why, counted" table for one why.csv row
/// of `experiment`.
fn table_row(experiment: &str, r: &WhyRow) -> String {
    let text = |c: &str| cell(r, c).written();
    let value = |c: &str| cell(r, c).value();
    let overrides = text("overrides");
    let label = if overrides.is_empty() {
        text("scene")
    } else {
        format!("{} ({})", text("scene"), overrides.replace(';', ", "))
    };
    let wall = match text("study_wall_ms").as_str() {
        "" => "not run".to_string(),
        _ => format!("{:.2}", value("study_wall_ms")),
    };
    let registers = text("registers")
        .split('/')
        .filter_map(|r| r.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    format!(
        "| `{experiment}` / `{}`: {label} | {} | {wall} | {:.1} | {:.0} | {:.0} | {:.1} | {registers} | {:.0} % | {} |",
        text("study"),
        text("backend"),
        value("lanes"),
        value("warp_inst_per_ray"),
        value("l2_bytes_per_ray"),
        value("local_accesses_per_ray"),
        100.0 * value("achieved_occupancy"),
        super::cells::significant(value("study_launches_per_sample"), 3),
    )
}
