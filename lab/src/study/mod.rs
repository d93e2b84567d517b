//! Studies on a GPU machine and back: `wavepath study run` (each named
//! experiment verified, timed within a budget, spread, resumed, packed)
//! and `wavepath study install` (a returned tarball of study folders,
//! checked and swapped into results/).
//!
//! - `folder`: a study folder's name (`NAME`, `NAME_COMMIT`, `NAME_gpusN`,
//!   `NAME_ranksN`), its parse and its format;
//! - `run`: the studies run in slots within a budget, spread and resumed;
//! - `verify`: the checks before anything is timed (GPU against CPU, MPI
//!   ranks against one process);
//! - `child`: the commands a run starts, their deadline and their CPUs;
//! - `host`: the machine's GPUs and its CPUs shared among slots;
//! - `tarball`: the studies tarball, packed, and its members checked
//!   before any is written;
//! - `install`: the checked study folders swapped into results/.

pub(crate) mod child;
pub mod folder;
pub(crate) mod host;
pub mod install;
pub mod run;
pub mod tarball;
pub(crate) mod verify;

/// The files a study writes in its folder; what else it holds stays.
pub const OWN_FILES: [&str; 4] = ["runs.csv", "kernels.csv", "manifest.toml", "report.md"];

/// A study's figures' folder (in results/, the summary's: no study's name).
pub const FIGURES: &str = "figures";
