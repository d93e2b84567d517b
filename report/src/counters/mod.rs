//! The counters behind docs/results.md "Why, counted": what each back
//! end's kernels did, for one representative scene of every study that
//! sets the megakernel against the wavefront. Nsight Compute counts every
//! kernel launch of one render per back end (`wavepath counters plan`
//! lists the renders, `scripts/why-counters` runs them under `ncu` on a
//! GPU machine); here the rows are summed per back end and per kernel,
//! divided by the rays the render's summary record gives, beside the
//! runner's own counters of the study's fastest configuration, into
//! `results/<experiment>/counters/`.
//!
//! - `profiles`: the profiled renders, the plan and the files each leaves;
//! - `ncu_log`: Nsight Compute's rows of one render, summed;
//! - `study`: the study's fastest configuration from its runs.csv;
//! - `why`: why.csv and why_kernels.csv, written or set afresh, and the
//!   table;
//! - `cells`: the CSV cells, read with where each is and written as `%g`.

mod cells;
mod ncu_log;
pub mod profiles;
mod study;
pub mod why;

pub use profiles::{METRICS, PlannedRender, Profile, failed_renders, plan, read_profiles};
pub use why::{CountersWritten, restudy, sum};
