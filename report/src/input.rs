//! Reading an experiment folder: `runs.csv`, `kernels.csv` and
//! `manifest.toml`, into the types of [`lab::records`] that
//! wrote them. Each is read as a resume reads the runner's records: a
//! regular file (a FIFO would block, a device never end) of at most
//! [`MAX_RECORDS_BYTES`]. A CSV must have every column of its row type, and
//! every value one the runner writes ([`super::written`]); errors name the
//! file and what was expected.

use super::written::{self, SettingCells, WrittenRow, setting_columns};
use anyhow::{Context, bail};
use lab::records::{KernelRow, MAX_RECORDS_BYTES, Manifest, RunRow, header, unreadable};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::Path;

/// The text of the file at `path`, `what` it holds, read as
/// [`renderer::io::input_file::read_text`] reads (regular, at most
/// [`MAX_RECORDS_BYTES`]).
fn read(path: &Path, what: &str) -> anyhow::Result<String> {
    renderer::io::input_file::read_text(path, MAX_RECORDS_BYTES)
        .map_err(|reason| anyhow::anyhow!("{}: cannot read {what}: {reason}", path.display()))
}

/// Reads an experiment folder's `manifest.toml` (at `manifest_path`) and
/// `runs.csv` (at `runs_path`), each checked as the runner writes it, and
/// the manifest's account of the rows (each study's count, the MPI ranks
/// that made them) against the rows ([`written::check_manifest_rows`]).
pub fn read_experiment(manifest_path: &Path, runs_path: &Path) -> anyhow::Result<(Manifest, Vec<RunRow>)> {
    let (manifest, text) = read_manifest(manifest_path)?;
    let runs = read_runs(runs_path, &manifest)?;
    written::check_manifest_rows(manifest_path, &text, &manifest, runs_path, &runs)?;
    Ok((manifest, runs))
}

/// Reads `runs.csv`; it must exist, and every row must be one the runner
/// could have written for `manifest`.
fn read_runs(path: &Path, manifest: &Manifest) -> anyhow::Result<Vec<RunRow>> {
    let text = read(path, "the runs file (expected a CSV of timed runs)")?;
    let rows = parse_csv(path, &text, manifest)?;
    if let Err((line, problem)) = written::film_checks(&rows, manifest) {
        bail!(
            "{}: line {line}, column `film_hash`: {problem}; this is not a file `wavepath experiment` wrote",
            path.display()
        );
    }
    Ok(unlined(rows))
}

/// Rows without their line numbers.
fn unlined<T>(rows: Vec<(u64, T)>) -> Vec<T> {
    rows.into_iter().map(|(_, row)| row).collect()
}

/// Reads `kernels.csv`; an absent or empty file means no kernel profiles.
pub fn read_kernels(path: &Path, manifest: &Manifest) -> anyhow::Result<Vec<KernelRow>> {
    if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Ok(Vec::new());
    }
    let text = read(path, "the kernel profiles")?;
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    parse_csv(path, &text, manifest).map(unlined)
}

/// Reads `manifest.toml`; returns it with its text (for the lines of
/// what is refused later).
pub(super) fn read_manifest(path: &Path) -> anyhow::Result<(Manifest, String)> {
    let text = read(path, "the experiment manifest")?;
    let manifest = toml::from_str(&text).with_context(|| {
        format!(
            "{}: not a valid experiment manifest (expected the manifest.toml that `wavepath experiment` writes)",
            path.display()
        )
    })?;
    written::check_manifest(path, &text, &manifest)?;
    Ok((manifest, text))
}

/// Parses CSV `text` (from `path`) into rows of `T`, each with its line,
/// by header name, after checking that every column of `T` is present,
/// and checks each row against what the runner
/// writes for `manifest`.
fn parse_csv<T: DeserializeOwned + Serialize + Default + WrittenRow>(
    path: &Path,
    text: &str,
    manifest: &Manifest,
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
        .filter(|c| !headers.iter().any(|h| h == c.as_str()))
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
    let columns = setting_columns(&headers);
    reader
        .records()
        .map(|record| {
            let record = record.with_context(|| format!("{}: bad row", path.display()))?;
            let line = record.position().map_or(0, |p| p.line());
            let row: T = record.deserialize(Some(&headers)).map_err(|e| {
                anyhow::anyhow!(
                    "{}: line {line}, {}; this is not a file `wavepath experiment` wrote",
                    path.display(),
                    unreadable(&e, &headers, &record)
                )
            })?;
            let settings = SettingCells {
                columns: &columns,
                record: &record,
            };
            if let Err((column, problem)) = row.check(manifest, &settings) {
                bail!(
                    "{}: line {line}, column `{column}`: {problem}; this is not a file `wavepath experiment` wrote",
                    path.display()
                );
            }
            Ok((line, row))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab::records::ManifestStudy;

    /// The manifest of experiment `e` with study `s` on `gpu-wave`.
    fn manifest() -> Manifest {
        let mut m = Manifest::default();
        m.experiment.name = "e".into();
        m.study.push(ManifestStudy {
            name: "s".into(),
            backends: vec!["gpu-wave".into()],
            ..ManifestStudy::default()
        });
        m
    }

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
        let err = parse_csv::<KernelRow>(Path::new("dir/kernels.csv"), &text, &manifest()).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("dir/kernels.csv") && msg.contains("missing column `total_ms`"),
            "{msg}"
        );
    }

    #[test]
    fn empty_cells_are_none_and_extra_columns_ignored() {
        let row = KernelRow {
            experiment: "e".into(),
            study: "s".into(),
            run: 1,
            backend: "gpu-wave".into(),
            kernel: "extend".into(),
            launches: 1,
            total_ms: 2.5,
            ..KernelRow::default()
        };
        let mut lines = csv_of(&row).lines().map(str::to_string).collect::<Vec<_>>();
        lines[0].insert_str(0, "extra,");
        lines[1].insert_str(0, "x,");
        let text = lines.join("\n");
        let rows = unlined(parse_csv::<KernelRow>(Path::new("k.csv"), &text, &manifest()).unwrap());
        assert_eq!(rows, [row]);
        assert_eq!(rows[0].active_lanes, None);
    }
}
