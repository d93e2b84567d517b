//! Reading an experiment folder: `runs.csv`, `kernels.csv` and
//! `manifest.toml`, into the types of [`crate::experiment::records`] that
//! wrote them. A CSV must have every column of its row type; errors name the
//! file and what was expected.

use crate::experiment::records::{KernelRow, Manifest, RunRow};
use anyhow::{Context, bail};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::Path;

/// Reads `runs.csv`; it must exist.
pub fn read_runs(path: &Path) -> anyhow::Result<Vec<RunRow>> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "{}: cannot read the runs file (expected a CSV of timed runs)",
            path.display()
        )
    })?;
    parse_csv(path, &text)
}

/// Reads `kernels.csv`; an absent or empty file means no kernel profiles.
pub fn read_kernels(path: &Path) -> anyhow::Result<Vec<KernelRow>> {
    match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("{}: cannot read the kernel profiles", path.display())),
        Ok(text) if text.trim().is_empty() => Ok(Vec::new()),
        Ok(text) => parse_csv(path, &text),
    }
}

/// Reads `manifest.toml`.
pub fn read_manifest(path: &Path) -> anyhow::Result<Manifest> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the experiment manifest", path.display()))?;
    toml::from_str(&text).with_context(|| {
        format!(
            "{}: not a valid experiment manifest (expected the manifest.toml that `wavepath experiment` writes)",
            path.display()
        )
    })
}

/// Columns added after results were first committed: older files may lack
/// them (the rows then read them as empty).
const ADDED_LATER: [&str; 2] = ["refill", "max_registers"];

/// Parses CSV `text` (from `path`) into rows of `T`, by header name, after
/// checking that every column of `T` is present (but [`ADDED_LATER`]).
fn parse_csv<T: DeserializeOwned + Serialize + Default>(path: &Path, text: &str) -> anyhow::Result<Vec<T>> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::Headers)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .with_context(|| format!("{}: cannot read the header line", path.display()))?
        .clone();
    let needed = columns::<T>();
    let missing: Vec<String> = needed
        .iter()
        .filter(|c| !headers.iter().any(|h| h == c.as_str()) && !ADDED_LATER.contains(&c.as_str()))
        .map(|c| format!("`{c}`"))
        .collect();
    if !missing.is_empty() {
        bail!(
            "{}: missing column{} {} (the report needs the columns {})",
            path.display(),
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            needed.join(", ")
        );
    }
    reader
        .deserialize()
        .map(|row| row.with_context(|| format!("{}: bad row", path.display())))
        .collect()
}

/// The columns a CSV of `T` has: the header line the runner writes.
fn columns<T: Serialize + Default>() -> Vec<String> {
    crate::experiment::records::header::<T>().expect("a row type serializes to CSV")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `row` written as CSV with its header, as the experiment runner does.
    fn csv_of<T: Serialize>(row: &T) -> String {
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer.serialize(row).unwrap();
        String::from_utf8(writer.into_inner().unwrap()).unwrap()
    }

    #[test]
    fn columns_are_the_record_fields_in_order() {
        let kernel = columns::<KernelRow>();
        assert_eq!(kernel.len(), 19, "{kernel:?}");
        assert_eq!(kernel[..3], ["experiment", "study", "run"]);
        assert_eq!(kernel.last().map(String::as_str), Some("active_lanes"));
        assert!(columns::<RunRow>().iter().any(|c| c == "scaled_wall_ms"));
    }

    #[test]
    fn missing_column_is_named_with_the_file() {
        let text = csv_of(&KernelRow::default()).replacen("total_ms", "total", 1);
        let err = parse_csv::<KernelRow>(Path::new("dir/kernels.csv"), &text).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("dir/kernels.csv") && msg.contains("missing column `total_ms`"),
            "{msg}"
        );
    }

    #[test]
    fn empty_cells_are_none_and_extra_columns_ignored() {
        let row = KernelRow {
            study: "s".into(),
            run: 1,
            kernel: "extend".into(),
            total_ms: 2.5,
            ..KernelRow::default()
        };
        let mut lines = csv_of(&row).lines().map(str::to_string).collect::<Vec<_>>();
        lines[0].insert_str(0, "extra,");
        lines[1].insert_str(0, "x,");
        let text = lines.join("\n");
        let rows = parse_csv::<KernelRow>(Path::new("k.csv"), &text).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].active_lanes, None);
        assert_eq!(rows[0].total_ms, 2.5);
        assert_eq!(rows[0], row);
    }
}
