//! wavepath's lab: experiments, configs of studies in, CSV records and
//! manifests out (the `report` crate reads them into tables and figures).
//!
//! - `bench`: `wavepath bench` as a one-study experiment, and its summary;
//! - `config`: `experiments/*.toml`, studies as scenes × back ends × sweeps;
//! - `params`: every setting a run can fix or sweep, declared once;
//! - `plan`: the studies' configurations and a rough time for `--dry-run`;
//! - `runner`: an experiment run as a sequence of steps, and its outcome;
//! - `output`: the output folder, its checks and what a resumed run left;
//! - `manifest`: the manifest as a run starts and as it ends;
//! - `writer`: the thread that hashes films, checks them and appends rows;
//! - `progress`: the progress bar and each configuration's median line;
//! - `measure`: the planned runs in turn: warm-up, timed repetitions, skips;
//! - `partial`: CPU renders a stop cut short, kept for `--resume` to finish;
//! - `spread`: the GPU runs spread over several GPUs (`--devices`), and
//!   the load of each GPU or MPI rank;
//! - `scaling`: strong and weak scaling over a run's `gpus`;
//! - `team`: runs whose image several GPUs render together (`gpus`), in a
//!   phase of their own;
//! - `preflight`: every scene loads and every film fits, before the first run;
//! - `films`: the identical-film check;
//! - `fingerprint`: short hashes of films and config texts;
//! - `rows`: from a finished render to its records;
//! - `scenes`: scene fields replaced by path, scenes loaded once;
//! - `records`: `runs.csv`, `kernels.csv` and `manifest.toml`;
//! - `statistics`: medians and spreads of repeated measurements;
//! - `study`: studies run on a GPU machine, and installed into results/;
//! - `worker_loop`: the one loop of every worker that makes
//!   configurations (the host's, each GPU's), and how their runs ended;
//! - `cluster` (with `--features mpi`): `render` and `experiment` over the
//!   ranks of an MPI launch.

#![warn(missing_docs)]

pub mod bench;
#[cfg(feature = "mpi")]
pub mod cluster;
pub mod config;
pub mod films;
pub mod manifest;
pub(crate) mod measure;
pub mod output;
pub mod params;
pub mod partial;
pub mod plan;
pub(crate) mod preflight;
pub(crate) mod progress;
pub mod records;
pub mod rows;
pub mod runner;
pub mod scaling;
pub mod scenes;
pub mod spread;
pub mod statistics;
pub mod study;
pub mod team;
pub(crate) mod worker_loop;
pub(crate) mod writer;
