//! The `cpu` back end's settings: how many threads, and how the image is
//! divided between them.

use crate::settings::echo::shorten_for_error;

/// The most threads the `cpu` back end starts (more than any machine's
/// cores; each thread costs a stack and a share of the image).
pub const MAX_THREADS: usize = 1024;

/// Threads unless a run sets them: one per core.
pub const DEFAULT_THREADS: usize = 0;

/// Checks a thread count (0: one per core).
pub fn check_threads(n: usize) -> Result<(), String> {
    if n <= MAX_THREADS {
        Ok(())
    } else {
        Err(format!("threads: at most {MAX_THREADS}, got {n}"))
    }
}

/// Parses a CPU thread count (0: one per core).
pub fn parse_threads(s: &str) -> Result<usize, String> {
    let n = s
        .parse::<usize>()
        .map_err(|_| format!("expected a whole number of threads, got `{}`", shorten_for_error(s)))?;
    check_threads(n)?;
    Ok(n)
}

/// How the `cpu` back end divides the image between its threads (OpenMP's
/// names in brackets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CpuSchedule {
    /// The pixel loop collapsed into one index space, cut into one
    /// contiguous run per thread (`collapse(2) schedule(static)`).
    Collapsed,
    /// Rows in one contiguous block per thread (`schedule(static)`).
    StaticRows,
    /// Row `i` to thread `i mod T` (`schedule(static, 1)`).
    CyclicRows,
    /// Rows taken by whichever thread is free: rayon's work stealing
    /// (`schedule(dynamic)`).
    #[default]
    DynamicRows,
}
impl CpuSchedule {
    /// Every distribution, in the order reports list them.
    pub const ALL: [CpuSchedule; 4] = [
        CpuSchedule::Collapsed,
        CpuSchedule::StaticRows,
        CpuSchedule::CyclicRows,
        CpuSchedule::DynamicRows,
    ];

    /// The name on the command line and in reports.
    pub fn label(self) -> &'static str {
        match self {
            CpuSchedule::Collapsed => "collapsed",
            CpuSchedule::StaticRows => "static-rows",
            CpuSchedule::CyclicRows => "cyclic-rows",
            CpuSchedule::DynamicRows => "dynamic-rows",
        }
    }
}
