//! A sampling profile of a command on the CPU: the render code's functions
//! by the share of samples they were on the stack in, and a flame graph of
//! every sample.
//!
//! Each sample keeps the addresses of its own stack (`sampler`), and each
//! address is resolved to every function there, inlined or not
//! (`symbols`). A function's share is then the samples whose stack holds
//! it, counted once per sample: gprof's "total". The device code is
//! inlined into a few large functions, so the inlined functions are what
//! name the work.
//!
//! The GPU back ends have their per-kernel profile instead; this is the CPU
//! back ends' counterpart (the seed's gprof table of the serial renderer).

mod sampler;
mod symbols;

use anyhow::{Context, bail};
pub use sampler::FREQUENCY;
use sampler::{ProfileSampler, Samples};
use std::collections::{HashMap, HashSet};
use std::time::Duration;
use symbols::{Function, Symbols};

/// The fewest samples a profile is drawn from: at 100, a share's
/// standard error is at most 5 points.
pub const MIN_SAMPLES: u64 = 100;

/// A running profiler; [`CpuProfiler::finish`] ends it.
pub struct CpuProfiler(ProfileSampler);

/// One function's share of the samples.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionShare {
    /// The function's name (see `symbols`).
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
    /// Samples lost on the way (the sampler's pipe was full).
    pub dropped: u64,
    /// How long the profiler ran.
    pub elapsed: Duration,
    /// The render code's functions (the `device` crate's) by their samples,
    /// most first.
    pub functions: Vec<FunctionShare>,
    /// Every distinct stack of function names, outermost first and joined
    /// by `;`, with its samples: the flame graph's input.
    folded: HashMap<String, u64>,
}

impl CpuProfiler {
    /// Starts sampling every thread of the process.
    pub fn start() -> anyhow::Result<Self> {
        Ok(CpuProfiler(
            ProfileSampler::start().context("starting the CPU profiler")?,
        ))
    }

    /// Stops sampling, resolves the sampled addresses and counts, per
    /// function of the render code, the samples it was on the stack in.
    pub fn finish(self) -> anyhow::Result<CpuProfile> {
        let samples = self.0.finish()?;
        Ok(CpuProfile::new(samples, &mut Symbols::default()))
    }
}

impl CpuProfile {
    /// The profile of `samples`, their addresses resolved by `symbols`.
    fn new(samples: Samples, symbols: &mut Symbols) -> Self {
        let stacks: Vec<(Vec<Function>, u64)> = samples
            .stacks
            .iter()
            .map(|(addresses, &count)| {
                let mut functions = Vec::new();
                for &address in addresses.iter().rev() {
                    functions.extend(symbols.at(address).iter().rev().cloned());
                }
                (functions, count)
            })
            .collect();
        let mut folded: HashMap<String, u64> = HashMap::new();
        for (functions, count) in &stacks {
            *folded.entry(fold(functions)).or_default() += count;
        }
        CpuProfile {
            samples: stacks.iter().map(|(_, count)| count).sum(),
            dropped: samples.dropped,
            elapsed: samples.elapsed,
            functions: shares(&stacks),
            folded,
        }
    }

    /// Refuses a profile of fewer than [`MIN_SAMPLES`] samples, which
    /// would say nothing.
    pub fn check_samples(&self) -> anyhow::Result<()> {
        if self.samples < MIN_SAMPLES {
            bail!(
                "the profiled render was too short to measure: {} of the {MIN_SAMPLES} samples a profile needs \
                 in {:.3} s (the sampler takes up to {FREQUENCY} a second of CPU time); render more samples per \
                 pixel or a larger image",
                self.samples,
                self.elapsed.as_secs_f64()
            );
        }
        Ok(())
    }

    /// The `top` functions of the render code by their share, as a table.
    pub fn table(&self, top: usize) -> String {
        let dropped = match self.dropped {
            0 => String::new(),
            n => format!(", {n} more lost (the sampler's pipe was full)"),
        };
        let mut out = format!(
            "CPU profile: {} samples in {:.1} s{dropped} (asked for {FREQUENCY} Hz of CPU time; the kernel's timer \
             may give fewer); the render code's functions by the share of samples they were on the stack in \
             (inlined or called)\n{:>7}  function\n",
            self.samples,
            self.elapsed.as_secs_f64(),
            "share %"
        );
        for f in self.functions.iter().take(top) {
            let share = 100.0 * f.samples as f64 / self.samples.max(1) as f64;
            out.push_str(&format!("{share:>7.1}  {}\n", f.name));
        }
        out
    }

    /// The flame graph of every sample, as SVG.
    pub fn flamegraph(&self) -> anyhow::Result<Vec<u8>> {
        let lines: Vec<String> = self
            .folded
            .iter()
            .map(|(stack, count)| format!("{stack} {count}"))
            .collect();
        let mut options = inferno::flamegraph::Options::default();
        options.title = "wavepath CPU profile".to_string();
        options.count_name = "samples".to_string();
        let mut svg = Vec::new();
        inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut svg)
            .context("drawing the flame graph")?;
        Ok(svg)
    }
}

/// The render code's functions by the samples whose stack holds them, most
/// first: each stack's functions (inlined or called) counted once per
/// sample, however often they occur on it.
fn shares(stacks: &[(Vec<Function>, u64)]) -> Vec<FunctionShare> {
    let mut counts: HashMap<&str, u64> = HashMap::new();
    for (functions, count) in stacks {
        let names: HashSet<&str> = functions
            .iter()
            .filter(|f| f.render_code)
            .map(|f| f.name.as_str())
            .collect();
        for name in names {
            *counts.entry(name).or_default() += count;
        }
    }
    let mut shares: Vec<FunctionShare> = counts
        .into_iter()
        .map(|(name, samples)| FunctionShare {
            name: name.to_string(),
            samples,
        })
        .collect();
    shares.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.name.cmp(&b.name)));
    shares
}

/// A stack as a flame graph's line: its functions' names, outermost first,
/// joined by `;` (which a name may not hold: a Rust array type's is a `,`
/// here).
fn fold(functions: &[Function]) -> String {
    if functions.is_empty() {
        return "[unknown]".to_string();
    }
    let names: Vec<String> = functions.iter().map(|f| f.name.replace(';', ",")).collect();
    names.join(";")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(name: &str, render_code: bool) -> Function {
        Function {
            name: name.to_string(),
            render_code,
        }
    }

    #[test]
    fn a_function_counts_the_samples_whose_stack_holds_it_once_each() {
        let pixel = function("device::integrator::render_pixel", true);
        let hit = function("device::accel::closest_hit", true);
        let dot = function("device::math::vec3::dot", true);
        let main = function("main", false);
        let stacks = vec![
            // `dot` twice on one stack: one sample.
            (
                vec![main.clone(), pixel.clone(), dot.clone(), hit.clone(), dot.clone()],
                3,
            ),
            (vec![main.clone(), pixel.clone(), hit.clone()], 2),
            (vec![main.clone(), pixel.clone()], 1),
            (vec![main], 4),
        ];
        let shares: Vec<(String, u64)> = shares(&stacks).into_iter().map(|f| (f.name, f.samples)).collect();
        assert_eq!(
            shares,
            [
                ("device::integrator::render_pixel".to_string(), 6),
                ("device::accel::closest_hit".to_string(), 5),
                ("device::math::vec3::dot".to_string(), 3),
            ]
        );
    }
}
