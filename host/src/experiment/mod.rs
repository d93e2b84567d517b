//! Experiments: configs of studies in, CSV records, manifests, reports and
//! figures out.
//!
//! - `config`: `experiments/*.toml`, studies as scenes × back ends × sweeps;
//! - `runner`: the plan, progress, resume and the identical-film check;
//! - `records`: `runs.csv`, `kernels.csv` and `manifest.toml`;
//! - [`report`]: `report.md` and figures from a finished experiment folder.

pub mod config;
pub mod records;
pub mod report;
pub mod runner;
pub mod scenes;
