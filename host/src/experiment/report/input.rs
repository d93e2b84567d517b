//! Reading an experiment folder: `runs.csv`, `kernels.csv` and
//! `manifest.toml`, into the types of [`crate::experiment::records`] that
//! wrote them. Each is read as a resume reads the runner's records: a
//! regular file (a FIFO would block, a device never end) of at most
//! [`MAX_RECORDS_BYTES`]. A CSV must have every column of its row type;
//! errors name the file and what was expected.

use crate::experiment::records::{ADDED_LATER, KernelRow, MAX_RECORDS_BYTES, Manifest, RunRow, header};
use anyhow::{Context, bail};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::Path;

/// The text of the file at `path`, `what` it holds, read as
/// [`crate::io::input_file::read_text`] reads (regular, at most
/// [`MAX_RECORDS_BYTES`]).
fn read(path: &Path, what: &str) -> anyhow::Result<String> {
    crate::io::input_file::read_text(path, MAX_RECORDS_BYTES)
        .map_err(|reason| anyhow::anyhow!("{}: cannot read {what}: {reason}", path.display()))
}

/// Reads `runs.csv`; it must exist, and every row must belong to a study
/// of `manifest`.
pub fn read_runs(path: &Path, manifest: &Manifest) -> anyhow::Result<Vec<RunRow>> {
    let text = read(path, "the runs file (expected a CSV of timed runs)")?;
    let rows: Vec<(u64, RunRow)> = parse_csv(path, &text)?;
    for (line, row) in &rows {
        if !manifest.study.iter().any(|s| s.name == row.study) {
            bail!(
                "{}: line {line}: study `{}` is not one of the manifest's studies ({})",
                path.display(),
                row.study,
                manifest
                    .study
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    Ok(rows.into_iter().map(|(_, r)| r).collect())
}

/// Reads `kernels.csv`; an absent or empty file means no kernel profiles.
pub fn read_kernels(path: &Path) -> anyhow::Result<Vec<KernelRow>> {
    if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Ok(Vec::new());
    }
    let text = read(path, "the kernel profiles")?;
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    Ok(parse_csv(path, &text)?.into_iter().map(|(_, r)| r).collect())
}

/// Reads `manifest.toml`.
pub fn read_manifest(path: &Path) -> anyhow::Result<Manifest> {
    let text = read(path, "the experiment manifest")?;
    toml::from_str(&text).with_context(|| {
        format!(
            "{}: not a valid experiment manifest (expected the manifest.toml that `wavepath experiment` writes)",
            path.display()
        )
    })
}

/// Parses CSV `text` (from `path`) into rows of `T` with their line
/// numbers, by header name, after checking that every column of `T` is
/// present (but [`ADDED_LATER`]) and every measured value in range.
fn parse_csv<T: DeserializeOwned + Serialize + Default + Measured>(
    path: &Path,
    text: &str,
) -> anyhow::Result<Vec<(u64, T)>> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::Headers)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .with_context(|| format!("{}: cannot read the header line", path.display()))?
        .clone();
    let needed = header::<T>()?;
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
        .records()
        .map(|record| {
            let record = record.with_context(|| format!("{}: bad row", path.display()))?;
            let line = record.position().map_or(0, |p| p.line());
            let row: T = record
                .deserialize(Some(&headers))
                .with_context(|| format!("{}: line {line}: bad row", path.display()))?;
            if let Err((column, problem)) = row.check() {
                bail!(
                    "{}: line {line}, column `{column}`: {problem}; this is not a file `wavepath experiment` wrote",
                    path.display()
                );
            }
            Ok((line, row))
        })
        .collect()
}

/// A row whose measured values have a range: times are finite and not
/// negative (NaN where the run did not measure them), a render's own time
/// is more than zero.
pub trait Measured {
    /// The first value out of range: its column and what is wrong.
    fn check(&self) -> Result<(), (&'static str, String)>;
}

/// `value` of `column` as a time: finite and at least `min` (`> 0` when
/// `positive`), or NaN where `unmeasured` allows it.
fn time(column: &'static str, value: f64, positive: bool, unmeasured: bool) -> Result<(), (&'static str, String)> {
    let ok = if value.is_nan() {
        unmeasured
    } else {
        value.is_finite() && if positive { value > 0.0 } else { value >= 0.0 }
    };
    let expected = match (positive, unmeasured) {
        (true, _) => "a finite value above 0",
        (false, true) => "a finite value of at least 0, or NaN (not measured)",
        (false, false) => "a finite value of at least 0",
    };
    if ok {
        Ok(())
    } else {
        Err((column, format!("{value} is out of range (expected {expected})")))
    }
}

impl Measured for RunRow {
    fn check(&self) -> Result<(), (&'static str, String)> {
        time("wall_ms", self.wall_ms, true, false)?;
        time("scaled_wall_ms", self.scaled_wall_ms, true, false)?;
        time("total_ms", self.total_ms, true, false)?;
        time("kernel_ms", self.kernel_ms, false, true)?;
        time("overhead_ms", self.overhead_ms, false, true)?;
        time("accel_build_ms", self.accel_build_ms, false, false)?;
        time("upload_ms", self.upload_ms, false, false)?;
        time("readback_ms", self.readback_ms, false, false)?;
        time("runner_ms", self.runner_ms, false, false)?;
        time("rays_per_s", self.rays_per_s, false, false)?;
        time("samples_per_s", self.samples_per_s, false, false)?;
        for (name, error) in [
            ("rmse", self.rmse),
            ("rel_mse", self.rel_mse),
            ("mae", self.mae),
            ("flip", self.flip),
        ] {
            if let Some(e) = error {
                time(name, e, false, false)?;
            }
        }
        Ok(())
    }
}

impl Measured for KernelRow {
    fn check(&self) -> Result<(), (&'static str, String)> {
        time("total_ms", self.total_ms, false, true)?;
        time("mean_ms", self.mean_ms, false, true)?;
        time("min_ms", self.min_ms, false, true)?;
        time("max_ms", self.max_ms, false, true)?;
        time("items_per_s", self.items_per_s, false, true)
    }
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
        let kernel = header::<KernelRow>().unwrap();
        assert_eq!(kernel.len(), 19, "{kernel:?}");
        assert_eq!(kernel[..3], ["experiment", "study", "run"]);
        assert_eq!(kernel.last().map(String::as_str), Some("active_lanes"));
        assert!(header::<RunRow>().unwrap().iter().any(|c| c == "scaled_wall_ms"));
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
        assert_eq!(rows[0].0, 2);
        assert_eq!(rows[0].1.active_lanes, None);
        assert_eq!(rows[0].1.total_ms, 2.5);
        assert_eq!(rows[0].1, row);
    }
}
