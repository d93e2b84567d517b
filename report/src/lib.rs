//! wavepath's report: `wavepath report DIR`, tables and figures from an
//! experiment folder, and the summary of a results folder.
//!
//! Reads `DIR/runs.csv`, `DIR/kernels.csv` (optional) and
//! `DIR/manifest.toml`, groups the timed rows into configurations (one per
//! study and run) and writes `DIR/report.md` with per-study tables and
//! `DIR/figures/<study>_<kind>.svg` (and `.png` with `--png`; kernel stacks of a study
//! with several scenes as `<study>_kernels_<scene>`), each with a footer
//! naming config, study and command. Every file is drawn, and checked
//! against the inputs and the other outputs, before the first is written.
//!
//! - `input`: the three files, read into the types of
//!   [`lab::records`] that wrote them;
//! - `written`: what the runner writes, checked of every value read;
//! - `builds`: the builds that made the rows, refused mixed or each named;
//! - `stats`: medians, spreads, configurations and baseline matching;
//! - `tables`: the Markdown;
//! - `markdown`: text from the inputs, escaped for it;
//! - `figures`: the plotters charts;
//! - `scaling`: T1/TN over GPUs and its table, for a study sweeping `gpus`;
//! - `summary`: `RESULTS/SUMMARY.md`, the headline figures of every folder;
//! - `answer`: the summary's first section and its figure, the wavefront
//!   against the megakernel per study;
//! - `currency`: whether a folder's config, inputs and source are still
//!   as they ran, for `report --currency`;
//! - `scale_out`: the summary's section on experiments spread over GPUs
//!   or MPI ranks, against one GPU;
//! - `counters`: Nsight Compute's counters of profiled renders summed per
//!   back end and per kernel beside the studies (`wavepath counters`);
//! - `path_parts`: a kernel's instructions by part of a path
//!   (`wavepath profile-parts`).

#![warn(missing_docs)]

pub mod answer;
mod builds;
pub mod counters;
pub mod currency;
mod figures;
pub use figures::Png;
mod input;
mod markdown;
pub mod path_parts;
pub mod peers;
mod scale_out;
mod scaling;
pub mod stats;
pub mod summary;
mod tables;
mod written;

use anyhow::Context;
use renderer::io::atomic_file::{self, Output};
use std::path::{Path, PathBuf};

/// What `report` wrote.
pub struct ReportOutput {
    /// `DIR/report.md`.
    pub markdown: PathBuf,
    /// Every figure file written: the SVG of each, and its PNG when asked
    /// for.
    pub figures: Vec<PathBuf>,
}

/// Reads DIR/runs.csv, DIR/kernels.csv (may be absent or empty) and
/// DIR/manifest.toml; writes DIR/report.md and `DIR/figures/<name>.svg`
/// (and `.png` with [`Png::Yes`]). Rows of several builds are refused unless `allow_mixed`, and
/// then the report names each build. Every output is drawn first and
/// checked against the three inputs and one another before the first is
/// written.
pub fn write_report(dir: &Path, allow_mixed: bool, png: Png) -> anyhow::Result<ReportOutput> {
    let inputs = [dir.join("manifest.toml"), dir.join("runs.csv"), dir.join("kernels.csv")];
    let [manifest_path, runs_path, kernels_path] = &inputs;
    let (manifest, runs) = input::read_experiment(manifest_path, runs_path)?;
    let builds = builds::of_rows(&runs);
    if !allow_mixed {
        builds::check_one(runs_path, &builds)?;
    }
    let kernels = input::read_kernels(kernels_path, &manifest)?;
    let configs = stats::group_configs(&runs);
    let figure_dir = dir.join("figures");
    std::fs::create_dir_all(&figure_dir)
        .with_context(|| format!("{}: cannot create the figure folder", figure_dir.display()))?;

    let mut markdown = tables::header(&manifest, &builds);
    let mut drawn = Vec::new();
    for info in &manifest.study {
        let study = stats::StudyData::new(info, &configs, &kernels);
        let figures = figures::draw_study_figures(&study, &manifest, &figure_dir, png)?;
        markdown.push_str(&tables::study_section(&study, &manifest, &figures, dir));
        drawn.extend(figures);
    }
    let path = dir.join("report.md");
    let outputs: Vec<Output> = std::iter::once(Output::new(&path, "the report"))
        .chain(drawn.iter().flat_map(figures::Figure::outputs))
        .collect();
    atomic_file::check_outputs(&outputs, &inputs)?;
    for figure in &drawn {
        figure.write()?;
    }
    atomic_file::write(&path, markdown.as_bytes())?;
    Ok(ReportOutput {
        markdown: path,
        figures: drawn.iter().flat_map(|f| f.files().cloned()).collect(),
    })
}
