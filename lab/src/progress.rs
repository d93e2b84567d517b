//! Progress: a bar over the estimated time of the renders still to make, and
//! the line each configuration prints when its repetitions are timed.

use super::config::{PlannedRun, Study};
use super::output::Resumed;
use super::plan::estimate_s;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

/// The bar, hidden unless asked for.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar over the renders of `plan` that `resumed` did not make, in
    /// estimated milliseconds.
    pub fn new(plan: &[(&Study, Vec<PlannedRun>)], resumed: &Resumed, visible: bool) -> anyhow::Result<Self> {
        let total: f64 = plan
            .iter()
            .flat_map(|(s, runs)| runs.iter().map(move |r| (s, r)))
            .map(|(s, r)| {
                let left = resumed.remaining(s, r).len() as u32;
                estimate_s(&r.spec) * if left > 0 { (left + s.warmup) as f64 } else { 0.0 }
            })
            .sum();
        let bar = if visible {
            ProgressBar::new((total * 1e3) as u64)
        } else {
            ProgressBar::hidden()
        };
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% eta {eta} {msg}")
                .context("progress bar template")?,
        );
        Ok(Progress { bar })
    }

    /// Counts a render estimated at `ms` as made.
    pub fn rendered(&self, ms: u64) {
        self.bar.inc(ms);
    }

    /// Prints `line` above the bar, or to stderr when the bar is hidden.
    pub fn println(&self, line: String) {
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
