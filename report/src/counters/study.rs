//! The study beside the counters: from an experiment's `runs.csv`, the
//! fastest configuration of a back end on a profile's scene, as the
//! summary takes each back end (the least median of `scaled_wall_ms` over
//! a configuration's repetitions), and why.csv's `study_*` columns of it.

use super::cells::{Cell, CsvRow, csv_rows, number, read_text, whole};
use indexmap::IndexMap;
use std::path::Path;

/// The columns of runs.csv that are read.
const RUNS_COLUMNS: [&str; 11] = [
    "study",
    "run",
    "scene_name",
    "scene_overrides",
    "backend",
    "scaled_wall_ms",
    "launches",
    "spp",
    "registers",
    "occupancy",
    "state_bytes",
];

/// why.csv's columns of the study's fastest configuration.
pub const STUDY_COLUMNS: [&str; 6] = [
    "study_run",
    "study_wall_ms",
    "study_launches_per_sample",
    "study_registers",
    "study_occupancy",
    "study_state_bytes",
];

/// The rows of `results/<experiment>/runs.csv`, or none where the study
/// has not run.
pub fn study_runs(results: &Path, experiment: &str) -> anyhow::Result<Vec<CsvRow>> {
    let path = results.join(experiment).join("runs.csv");
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(Vec::new());
    }
    let expected = "runs.csv as `wavepath experiment` writes it";
    csv_rows(&path, &read_text(&path, expected)?, 0, &RUNS_COLUMNS, expected)
}

/// What a profile's render is matched with: the study, the scene's name,
/// the back end and the generator fields it sets (`FIELD=VALUE`).
pub struct StudyKey<'a> {
    /// The study.
    pub study: &'a str,
    /// The scene's name.
    pub scene: &'a str,
    /// The back end.
    pub backend: &'a str,
    /// The generator fields set.
    pub fields: &'a [String],
}

/// why.csv's `study_*` columns for `key`: the study's fastest
/// configuration of its back end on its scene (with its fields), or
/// empty (the launches per sample `nan`) where the study has none.
pub fn study_columns(runs: &[CsvRow], key: &StudyKey) -> anyhow::Result<Vec<(String, Cell)>> {
    let mut by_run: IndexMap<&str, Vec<&CsvRow>> = IndexMap::new();
    for r in runs {
        let overrides: Vec<&str> = r.get("scene_overrides").split(';').collect();
        if r.get("study") == key.study
            && r.get("scene_name") == key.scene
            && r.get("backend") == key.backend
            && !r.get("scaled_wall_ms").is_empty()
            && key
                .fields
                .iter()
                .all(|f| overrides.contains(&format!("generators[0].{f}").as_str()))
        {
            by_run.entry(r.get("run")).or_default().push(r);
        }
    }
    let mut fastest: Option<(&CsvRow, f64)> = None;
    for rows in by_run.values() {
        let times = rows
            .iter()
            .map(|r| number(r.get("scaled_wall_ms"), &r.at, "scaled_wall_ms"))
            .collect::<anyhow::Result<Vec<f64>>>()?;
        let median = lab::statistics::median(&times).expect("a run has a row");
        if fastest.is_none_or(|(_, least)| median < least) {
            fastest = Some((rows[0], median));
        }
    }
    let columns: [Cell; 6] = match fastest {
        None => ["".into(), "".into(), f64::NAN.into(), "".into(), "".into(), "".into()],
        Some((row, median)) => {
            let launches = whole(row.get("launches"), &row.at, "launches", 0)?;
            let spp = whole(row.get("spp"), &row.at, "spp", 1)?;
            [
                row.get("run").into(),
                median.into(),
                (launches as f64 / spp as f64).into(),
                row.get("registers").into(),
                row.get("occupancy").into(),
                row.get("state_bytes").into(),
            ]
        }
    };
    Ok(STUDY_COLUMNS.iter().map(|c| c.to_string()).zip(columns).collect())
}
