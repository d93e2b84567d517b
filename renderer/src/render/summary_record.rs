//! A finished render's summary as a record (`render --summary-json FILE`):
//! what the summary line says, as figures a program reads back instead of
//! parsing the line (`wavepath counters sum` takes each profiled render's
//! ray count from it).

use super::RenderSummary;
use crate::io::input_file;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The most bytes of a summary record read back: a record is a few hundred
/// bytes; the limit keeps a wrong path (a log, an image) from being read
/// whole.
pub const MAX_SUMMARY_RECORD_BYTES: u64 = 1 << 20;

/// What a finished render reports, in figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryRecord {
    /// The scene file, as given.
    pub scene: String,
    /// The back end that rendered (its command-line name).
    pub backend: String,
    /// The device that rendered, described.
    pub device: String,
    /// The acceleration structure, described.
    pub accel: String,
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Maximum ray segments per path.
    pub max_depth: u32,
    /// Samples per pixel asked for.
    pub spp: u32,
    /// Samples per pixel in the image (fewer than `spp` after a stop).
    pub spp_done: u32,
    /// Wall time of the render itself, in seconds.
    pub seconds: f64,
    /// Samples traced: width × height × `spp_done`.
    pub samples: u64,
    /// Ray segments traced.
    pub rays: u64,
    /// Samples dropped for being NaN or infinite.
    pub invalid_samples: u64,
    /// The image written.
    pub image: String,
}

impl SummaryRecord {
    /// The record of `summary`.
    pub fn of(summary: &RenderSummary) -> SummaryRecord {
        let p = &summary.params;
        SummaryRecord {
            scene: summary.scene.display().to_string(),
            backend: summary.backend.label().to_string(),
            device: summary.output.device.clone(),
            accel: summary.accel.clone(),
            width: p.width,
            height: p.height,
            max_depth: p.max_depth,
            spp: summary.spp,
            spp_done: summary.output.spp,
            seconds: summary.output.elapsed.as_secs_f64(),
            samples: p.width as u64 * p.height as u64 * summary.output.spp as u64,
            rays: summary.output.rays,
            invalid_samples: summary.output.invalid_samples,
            image: summary.image.display().to_string(),
        }
    }

    /// Writes the record to `path` as JSON, whole or not at all.
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        crate::io::atomic_file::write(path, text.as_bytes())
    }

    /// The record in the JSON file `path`; the error names the file and,
    /// for a field missing or of the wrong kind, its line.
    pub fn read(path: &Path) -> anyhow::Result<SummaryRecord> {
        let text = input_file::read_text(path, MAX_SUMMARY_RECORD_BYTES).map_err(|e| {
            anyhow::anyhow!(
                "{}: {e}; expected a render's summary (render --summary-json)",
                path.display()
            )
        })?;
        serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}:{}: {}; expected a render's summary as `render --summary-json` writes it",
                path.display(),
                e.line(),
                strip_position(&e)
            )
        })
    }
}

/// serde_json's message without its own " at line L column C" (the file's
/// line leads the message instead).
fn strip_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> SummaryRecord {
        SummaryRecord {
            scene: "scenes/box.toml".into(),
            backend: "gpu-mega".into(),
            device: "a GPU".into(),
            accel: "brute force".into(),
            width: 10,
            height: 10,
            max_depth: 8,
            spp: 4,
            spp_done: 4,
            seconds: 0.001,
            samples: 400,
            rays: 1000,
            invalid_samples: 0,
            image: "x.png".into(),
        }
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.json");
        record().write(&path).unwrap();
        assert_eq!(SummaryRecord::read(&path).unwrap(), record());
    }

    #[test]
    fn a_record_without_a_field_is_refused_naming_the_file_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.json");
        let text = serde_json::to_string_pretty(&record())
            .unwrap()
            .replace("  \"rays\": 1000,\n", "");
        std::fs::write(&path, text).unwrap();
        let e = SummaryRecord::read(&path).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:", path.display())), "{e}");
        assert!(e.contains("missing field `rays`"), "{e}");
        std::fs::write(&path, "").unwrap();
        let e = SummaryRecord::read(&path).unwrap_err().to_string();
        assert!(e.contains("summary.json:1: EOF while parsing"), "{e}");
    }
}
