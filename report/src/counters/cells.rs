//! The counters' CSV files cell by cell: figures read with the file and
//! line of each, rows read against their header, and rows written with
//! floats to a given number of significant digits (`%g`).

use anyhow::bail;
use renderer::io::input_file;
use std::path::Path;

/// The most bytes of one input read: 64 MiB, a hundred times the largest
/// read (Nsight Compute's rows of a wavefront render, under 1 MB).
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// The UTF-8 text of the regular file `path`; the error names the file and
/// says what was `expected` there.
pub fn read_text(path: &Path, expected: &str) -> anyhow::Result<String> {
    input_file::read_text(path, MAX_INPUT_BYTES)
        .map_err(|e| anyhow::anyhow!("{}: {e}; expected {expected}", path.display()))
}

/// `text` as a finite number, 0 or more (Nsight Compute writes thousands
/// with commas); `at` and `what` name it in the refusal.
pub fn number(text: &str, at: &str, what: &str) -> anyhow::Result<f64> {
    match text.replace(',', "").trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => bail!("{at}: {what} is `{text}`; expected a finite number, 0 or more"),
    }
}

/// `text` as a whole number of at least `least`.
pub fn whole(text: &str, at: &str, what: &str, least: u64) -> anyhow::Result<u64> {
    match text.parse::<u64>() {
        Ok(v) if text.bytes().all(|b| b.is_ascii_digit()) && v >= least => Ok(v),
        _ => bail!("{at}: {what} is `{text}`; expected a whole number, {least} or more"),
    }
}

/// One row of a CSV file: where it is (`path:line`) and its cells by the
/// header's columns.
pub struct CsvRow {
    /// `path:line`, for messages.
    pub at: String,
    /// The header's columns.
    columns: std::rc::Rc<[String]>,
    /// The row's cells, one per column.
    cells: Vec<String>,
}

impl CsvRow {
    /// The cell of `column` (one the reader checked the header for).
    pub fn get(&self, column: &str) -> &str {
        let i = self
            .columns
            .iter()
            .position(|c| c == column)
            .expect("a column the header was checked for");
        &self.cells[i]
    }

    /// Every (column, cell), in the header's order.
    pub fn cells(&self) -> impl Iterator<Item = (&str, &str)> {
        self.columns
            .iter()
            .map(String::as_str)
            .zip(self.cells.iter().map(String::as_str))
    }
}

/// The rows of the CSV `text` of the file `path` from its line `start`
/// (0-based; the header), refusing a header without one of `columns` or a
/// row whose fields do not match the header's; `expected` says what the
/// file should be.
pub fn csv_rows(
    path: &Path,
    text: &str,
    start: usize,
    columns: &[&str],
    expected: &str,
) -> anyhow::Result<Vec<CsvRow>> {
    let body: String = text.lines().skip(start).flat_map(|l| [l, "\n"]).collect();
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(body.as_bytes());
    let header: std::rc::Rc<[String]> = match reader.headers() {
        Ok(h) => h.iter().map(str::to_string).collect(),
        Err(e) => bail!("{}:{}: {e}; expected {expected}", path.display(), start + 1),
    };
    let missing: Vec<&str> = columns
        .iter()
        .copied()
        .filter(|c| !header.iter().any(|h| h == c))
        .collect();
    if !missing.is_empty() {
        bail!(
            "{}:{}: no column {}; expected {expected}",
            path.display(),
            start + 1,
            missing.join(", ")
        );
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| anyhow::anyhow!("{}: {e}; expected {expected}", path.display()))?;
        let line = start as u64 + record.position().map_or(0, |p| p.line());
        let at = format!("{}:{line}", path.display());
        if record.len() != header.len() {
            bail!(
                "{at}: not {} fields as the header has; expected {expected}",
                header.len()
            );
        }
        rows.push(CsvRow {
            at,
            columns: header.clone(),
            cells: record.iter().map(str::to_string).collect(),
        });
    }
    Ok(rows)
}

/// A cell as written: text (a name, a whole number, a cell read back)
/// as it is, a float to six significant digits.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Written as it is.
    Text(String),
    /// Written to six significant digits (`%.6g`; `nan` for none).
    Float(f64),
}

impl Cell {
    /// The cell as written.
    pub fn written(&self) -> String {
        match self {
            Cell::Text(t) => t.clone(),
            Cell::Float(v) => significant(*v, 6),
        }
    }

    /// The cell as a number: a float as it is, text read back as one.
    pub fn value(&self) -> f64 {
        match self {
            Cell::Text(t) => t.parse().unwrap_or(f64::NAN),
            Cell::Float(v) => *v,
        }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::Text(text.to_string())
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell::Text(text)
    }
}

impl From<u64> for Cell {
    fn from(n: u64) -> Cell {
        Cell::Text(n.to_string())
    }
}

impl From<f64> for Cell {
    fn from(v: f64) -> Cell {
        Cell::Float(v)
    }
}

/// `v` to `digits` significant digits as C's `%g` writes it: fixed
/// notation for exponents from -4 to below `digits`, scientific otherwise
/// (`e+09`), trailing zeros dropped; `nan`, `inf` and `-inf` as such.
pub fn significant(v: f64, digits: usize) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    let digits = digits.max(1);
    let scientific = format!("{:.*e}", digits - 1, v);
    let (mantissa, exponent) = scientific.split_once('e').expect("`{:e}` writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes a whole exponent");
    if exponent < -4 || exponent >= digits as i32 {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim_zeros(mantissa), exponent.abs())
    } else {
        let decimals = (digits as i32 - 1 - exponent).max(0) as usize;
        trim_zeros(&format!("{v:.decimals$}")).to_string()
    }
}

/// `text` without the zeros after its decimal point, nor the point.
fn trim_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// `rows` (each a list of (column, cell)) as CSV text under the header
/// `columns`, quoted where a cell needs it.
pub fn csv_text(columns: &[&str], rows: &[Vec<(String, Cell)>]) -> anyhow::Result<String> {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer.write_record(columns)?;
    for row in rows {
        writer.write_record(columns.iter().map(|c| {
            row.iter()
                .find(|(name, _)| name == c)
                .map_or_else(String::new, |(_, cell)| cell.written())
        }))?;
    }
    Ok(String::from_utf8(
        writer.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_written_as_percent_g_writes_them() {
        for (v, digits, want) in [
            (0.0, 6, "0"),
            (16.0, 6, "16"),
            (0.0625, 6, "0.0625"),
            (16.193_149, 6, "16.1931"),
            (3_238_016_200.0, 6, "3.23802e+09"),
            (123_456.4, 6, "123456"),
            (1_234_567.0, 6, "1.23457e+06"),
            (0.000_012_345_67, 6, "1.23457e-05"),
            (0.000_123_456_7, 6, "0.000123457"),
            (2.285_16, 3, "2.29"),
            (0.0625, 3, "0.0625"),
            (f64::NAN, 3, "nan"),
        ] {
            assert_eq!(significant(v, digits), want, "{v} to {digits} digits");
        }
    }

    #[test]
    fn figures_are_refused_naming_where_they_are() {
        assert_eq!(number("1,000", "f:2", "x").unwrap(), 1000.0);
        assert!(
            number("-1", "f:2", "x")
                .unwrap_err()
                .to_string()
                .starts_with("f:2: x is `-1`; expected a finite")
        );
        assert!(number("nan", "f:2", "x").is_err());
        assert_eq!(whole("16", "f:3", "spp", 1).unwrap(), 16);
        for bad in ["0", "+1", "1.5", ""] {
            let e = whole(bad, "f:3", "spp", 1).unwrap_err().to_string();
            assert_eq!(e, format!("f:3: spp is `{bad}`; expected a whole number, 1 or more"));
        }
    }

    #[test]
    fn a_row_not_as_long_as_the_header_is_refused_at_its_line() {
        let path = Path::new("r.csv");
        let rows = csv_rows(path, "note\na,b\n1,2\n3,4\n", 1, &["a"], "two columns").unwrap();
        assert_eq!(rows[1].at, "r.csv:4");
        assert_eq!(rows[1].get("b"), "4");
        let e = csv_rows(path, "a,b\n1,2\n3\n", 0, &["a"], "two columns")
            .err()
            .unwrap()
            .to_string();
        assert_eq!(e, "r.csv:3: not 2 fields as the header has; expected two columns");
        let e = csv_rows(path, "a,b\n", 0, &["c", "d"], "c and d")
            .err()
            .unwrap()
            .to_string();
        assert_eq!(e, "r.csv:1: no column c, d; expected c and d");
    }
}
