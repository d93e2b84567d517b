//! Reports: CSV files of serialisable rows, written atomically.

use crate::io::atomic_file;
use serde::Serialize;
use std::path::Path;

/// Writes `rows` (with a header line) to the CSV file `path`.
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    atomic_file::write(path, &bytes)
}
