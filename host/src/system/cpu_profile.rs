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
    /// Samples in which it was on the stack, inlined or called (gprof's
    /// "total"; its "self", the innermost function, is left out: in
    /// optimised code the debug information charges most instructions to
    /// whichever small helper was inlined last).
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
            let names: HashSet<String> = frames.frames.iter().flatten().filter_map(render_code_name).collect();
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
            "CPU profile: {} samples (asked for {FREQUENCY} Hz of CPU time; the kernel's timer may give fewer); \
             the render code's functions by the share of samples they were on the stack in (inlined or \
             called)\n{:>7}  function\n",
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

/// The name of a frame of the render code (the `device` crate, the code
/// whose profile the seeds' tables show), or `None` for other code. The
/// module comes from the frame's source file (`device/src/accel/bvh.rs`:
/// `device::accel::bvh`), because the debug information of an optimised
/// build names inlined functions without their path; the function is the
/// symbol's last path segment without generic arguments.
fn render_code_name(symbol: &pprof::Symbol) -> Option<String> {
    let module = device_module(symbol.filename.as_deref()?)?;
    Some(format!("{module}::{}", short_name(&without_hash(&symbol.name()))))
}

/// `device::a::b` for a file `…/device/src/a/b.rs` (or `…/a/b/mod.rs`;
/// `lib.rs` is `device`), `None` for a file outside the device crate.
fn device_module(file: &std::path::Path) -> Option<String> {
    let parts: Vec<&str> = file.iter().filter_map(|p| p.to_str()).collect();
    let src = parts.windows(2).rposition(|w| w == ["device", "src"])? + 2;
    let mut module = vec!["device"];
    for (i, part) in parts[src..].iter().enumerate() {
        let last = src + i + 1 == parts.len();
        match (last, part.strip_suffix(".rs")) {
            (false, _) => module.push(part),
            (true, Some("mod" | "lib")) => {}
            (true, Some(stem)) => module.push(stem),
            (true, None) => return None,
        }
    }
    Some(module.join("::"))
}

/// A function's name without generic arguments or path:
/// `<device::accel::Bvh as device::accel::Accel>::closest_hit` and
/// `closest_hit<device::accel::Bvh>` are both `closest_hit`.
fn short_name(name: &str) -> String {
    let mut depth = 0usize;
    let plain: String = name
        .chars()
        .filter(|&c| {
            match c {
                '<' => depth += 1,
                '>' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect();
    let plain = plain.trim_end_matches("::");
    plain.rsplit("::").next().unwrap_or(plain).to_string()
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

    #[test]
    fn frames_are_named_by_their_device_module_and_short_name() {
        use std::path::Path;
        assert_eq!(
            device_module(Path::new("/work/x/device/src/accel/bvh.rs")).as_deref(),
            Some("device::accel::bvh")
        );
        assert_eq!(
            device_module(Path::new("device/src/material/mod.rs")).as_deref(),
            Some("device::material")
        );
        assert_eq!(device_module(Path::new("device/src/lib.rs")).as_deref(), Some("device"));
        assert_eq!(device_module(Path::new("/rustc/abc/library/core/src/f32.rs")), None);
        assert_eq!(device_module(Path::new("host/src/render/mod.rs")), None);
        assert_eq!(
            short_name("<device::accel::Bvh as device::accel::Accel>::closest_hit"),
            "closest_hit"
        );
        assert_eq!(
            short_name("trace_path<device::accel::Bvh, device::observe::Unobserved>"),
            "trace_path"
        );
        assert_eq!(short_name("device::integrator::trace_path"), "trace_path");
        assert_eq!(
            short_name("device::integrator::trace_path::<device::accel::Bvh, device::observe::Unobserved>"),
            "trace_path"
        );
        assert_eq!(short_name("{closure#0}<device::accel::Bvh>"), "{closure#0}");
    }
}
