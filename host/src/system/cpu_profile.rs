//! A sampling profile of a command on the CPU (the `pprof` crate: SIGPROF
//! samples of every thread's stack): the render code's functions by the
//! share of samples they were on the stack in, and a flame graph of all.
//!
//! The GPU back ends have their per-kernel profile instead; this is the CPU
//! back ends' counterpart (the seed's gprof table of the serial renderer).

use anyhow::Context;
use std::collections::{HashMap, HashSet};

/// Samples per second of the profiler.
pub const FREQUENCY: i32 = 997;

/// Libraries whose frames are not sampled (the signal handling itself).
const BLOCKLIST: [&str; 4] = ["libc", "libgcc", "pthread", "vdso"];

/// A running profiler; [`CpuProfiler::finish`] ends it.
pub struct CpuProfiler(pprof::ProfilerGuard<'static>);

/// One function's share of the samples.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionShare {
    /// The function's name, without its hash.
    pub name: String,
    /// Samples in which it was on the stack, inlined or called.
    pub samples: u64,
}

/// A finished profile.
pub struct CpuProfile {
    /// Every sample.
    pub samples: u64,
    /// The render code's functions (the `device` crate's) by their samples,
    /// most first.
    pub functions: Vec<FunctionShare>,
    report: pprof::Report,
}

impl CpuProfiler {
    /// Starts sampling every thread of the process.
    pub fn start() -> anyhow::Result<Self> {
        let guard = pprof::ProfilerGuardBuilder::default()
            .frequency(FREQUENCY)
            .blocklist(&BLOCKLIST)
            .build()
            .context("starting the CPU profiler")?;
        Ok(CpuProfiler(guard))
    }

    /// Stops sampling and counts, per function of the render code, the
    /// samples it was on the stack in. The device code is inlined into a
    /// few large functions, so the unwinder's inlined frames are what name
    /// the work (which instruction's innermost helper a sample lands in is
    /// chance; which functions enclose it is not).
    pub fn finish(self) -> anyhow::Result<CpuProfile> {
        let report = self.0.report().build().context("reading the CPU profile")?;
        let mut counts: HashMap<String, u64> = HashMap::new();
        let mut samples = 0;
        for (frames, &count) in &report.data {
            let count = count.max(0) as u64;
            samples += count;
            let names: HashSet<String> = frames
                .frames
                .iter()
                .flatten()
                .map(|symbol| without_hash(&symbol.name()))
                .filter(|name| is_render_code(name))
                .collect();
            for name in names {
                *counts.entry(name).or_default() += count;
            }
        }
        let mut functions: Vec<FunctionShare> = counts
            .into_iter()
            .map(|(name, samples)| FunctionShare { name, samples })
            .collect();
        functions.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.name.cmp(&b.name)));
        Ok(CpuProfile {
            samples,
            functions,
            report,
        })
    }
}

impl CpuProfile {
    /// The `top` functions of the render code by their share, as a table.
    pub fn table(&self, top: usize) -> String {
        let mut out = format!(
            "CPU profile: {} samples at {FREQUENCY} Hz; the render code's functions by the share of samples \
             they were on the stack in (inlined or called)\n{:>7}  function\n",
            self.samples, "share %"
        );
        for f in self.functions.iter().take(top) {
            let share = 100.0 * f.samples as f64 / self.samples.max(1) as f64;
            out.push_str(&format!("{share:>7.1}  {}\n", f.name));
        }
        out
    }

    /// The flame graph of every sample, as SVG.
    pub fn flamegraph(&self) -> anyhow::Result<Vec<u8>> {
        let mut svg = Vec::new();
        self.report.flamegraph(&mut svg).context("drawing the flame graph")?;
        Ok(svg)
    }
}

/// Whether `name` is a function of the render code (the `device` crate),
/// the code whose profile the seeds' tables show.
fn is_render_code(name: &str) -> bool {
    name.starts_with("device::") || name.starts_with("<device::")
}

/// A demangled name without the trailing `::h0123456789abcdef`.
fn without_hash(name: &str) -> String {
    match name.rsplit_once("::h") {
        Some((head, hash)) if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) => head.to_string(),
        _ => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_dropped_and_other_names_kept() {
        assert_eq!(
            without_hash("device::accel::bvh::closest_hit::h0123456789abcdef"),
            "device::accel::bvh::closest_hit"
        );
        assert_eq!(without_hash("main"), "main");
        assert_eq!(without_hash("a::hash_it"), "a::hash_it");
    }
}
