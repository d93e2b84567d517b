//! Experiments: configs of studies in, CSV records, manifests, reports and
//! figures out.
//!
//! - `bench`: `wavepath bench` as a one-study experiment, and its summary;
//! - `config`: `experiments/*.toml`, studies as scenes × back ends × sweeps;
//! - `params`: every setting a run can fix or sweep, declared once;
//! - `plan`: the studies' configurations and a rough time for `--dry-run`;
//! - `runner`: progress, one scene load and GPU upload each, resume;
//! - `films`: the identical-film check;
//! - `rows`: from a finished render to its records;
//! - `scenes`: scene fields replaced by path, scenes loaded once;
//! - `records`: `runs.csv`, `kernels.csv` and `manifest.toml`;
//! - [`report`]: `report.md` and figures from a finished experiment folder.

pub mod bench;
pub mod config;
pub mod films;
pub mod params;
pub mod plan;
pub mod records;
pub mod report;
pub mod rows;
pub mod runner;
pub mod scenes;
