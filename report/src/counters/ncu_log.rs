//! Nsight Compute's rows of one profiled render (`ncu --csv`, one row per
//! launch and metric), read per launch and summed: the summed metrics
//! added up, the occupancies averaged by kernel time, the registers
//! listed.

use super::cells::{csv_rows, number, read_text};
use anyhow::bail;
use indexmap::IndexMap;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// Metrics summed over launches, with their names in the sums.
const SUMMED: [(&str, Sum); 7] = [
    ("smsp__inst_executed.sum", Sum::WarpInst),
    ("smsp__thread_inst_executed.sum", Sum::ThreadInst),
    ("dram__bytes.sum", Sum::DramBytes),
    ("lts__t_bytes.sum", Sum::L2Bytes),
    ("smsp__inst_executed_op_local_ld.sum", Sum::LocalLoads),
    ("smsp__inst_executed_op_local_st.sum", Sum::LocalStores),
    ("gpu__time_duration.sum", Sum::KernelNs),
];

/// Metrics averaged over launches, weighted by kernel time.
const AVERAGED: [(&str, Average); 2] = [
    ("sm__warps_active.avg.pct_of_peak_sustained_active", Average::Achieved),
    ("sm__maximum_warps_per_active_cycle_pct", Average::Theoretical),
];

/// The registers per thread of a launch.
const REGISTERS: &str = "launch__registers_per_thread";

/// The columns of Nsight Compute's rows that are read.
const NCU_COLUMNS: [&str; 4] = ["ID", "Kernel Name", "Metric Name", "Metric Value"];

/// A metric summed over launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sum {
    /// Warp instructions executed.
    WarpInst,
    /// Thread instructions executed (lanes active per warp instruction).
    ThreadInst,
    /// Bytes moved to and from DRAM.
    DramBytes,
    /// Bytes moved through L2.
    L2Bytes,
    /// Local-memory load instructions (register spills among them).
    LocalLoads,
    /// Local-memory store instructions.
    LocalStores,
    /// Kernel time in nanoseconds.
    KernelNs,
}

/// An occupancy averaged over launches by kernel time, in % of the most.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Average {
    /// Warps active, of the most an SM holds.
    Achieved,
    /// The most warps the kernel's resources allow, of the most.
    Theoretical,
}

/// One kernel launch: the kernel's name and its metrics by name.
pub struct Launch {
    /// The kernel's name.
    pub kernel: String,
    /// Each metric's value.
    metrics: HashMap<String, f64>,
}

/// A profiled render's log: its text (kept, compressed, beside the sums)
/// and its launches in the log's order.
pub struct NcuLog {
    /// The log as Nsight Compute wrote it.
    pub text: String,
    /// The launches by Nsight Compute's ID, in the order first met.
    pub launches: IndexMap<String, Launch>,
}

/// Nsight Compute's CSV log `path`.
pub fn read_ncu_log(path: &Path) -> anyhow::Result<NcuLog> {
    let expected = "Nsight Compute's rows (ncu --csv)";
    let text = read_text(path, expected)?;
    let Some(start) = text.lines().position(|l| l.starts_with("\"ID\"")) else {
        bail!(
            "{}: no ncu CSV header (the profile failed: see {})",
            path.display(),
            path.with_extension("txt").display()
        );
    };
    let mut launches: IndexMap<String, Launch> = IndexMap::new();
    for row in csv_rows(path, &text, start, &NCU_COLUMNS, expected)? {
        let launch = launches.entry(row.get("ID").to_string()).or_insert_with(|| Launch {
            kernel: row.get("Kernel Name").to_string(),
            metrics: HashMap::new(),
        });
        let name = row.get("Metric Name");
        launch
            .metrics
            .insert(name.to_string(), number(row.get("Metric Value"), &row.at, name)?);
    }
    if launches.is_empty() {
        bail!("{}: no kernel launch was profiled", path.display());
    }
    Ok(NcuLog { text, launches })
}

/// Every summed and averaged metric over some launches.
#[derive(Debug)]
pub struct Totals {
    /// The summed metrics.
    sums: HashMap<Sum, f64>,
    /// The occupancies, in % averaged by kernel time.
    averages: HashMap<Average, f64>,
    /// Launches counted.
    pub launches: u64,
    /// The registers per thread met, ascending, joined by `/`.
    pub registers: String,
}

impl Totals {
    /// The sums of `launches` (Nsight Compute's rows of the file `path`),
    /// refused where a launch lacks a metric or where the kernel time or
    /// the warp instructions add up to 0 (nothing to divide by).
    pub fn of<'a>(launches: impl IntoIterator<Item = &'a Launch>, path: &Path) -> anyhow::Result<Totals> {
        let mut sums: HashMap<Sum, f64> = SUMMED.iter().map(|&(_, s)| (s, 0.0)).collect();
        let mut weighted: HashMap<Average, f64> = AVERAGED.iter().map(|&(_, a)| (a, 0.0)).collect();
        let mut registers = BTreeSet::new();
        let mut kernels = BTreeSet::new();
        let mut count = 0;
        for launch in launches {
            let names = SUMMED.iter().map(|(m, _)| *m).chain(AVERAGED.iter().map(|(m, _)| *m));
            let missing: Vec<&str> = names
                .chain([REGISTERS])
                .filter(|m| !launch.metrics.contains_key(*m))
                .collect();
            if !missing.is_empty() {
                bail!(
                    "{}: kernel {}: no {} (profiled without the metrics `wavepath counters metrics` lists?)",
                    path.display(),
                    launch.kernel,
                    missing.join(", ")
                );
            }
            let ns = launch.metrics["gpu__time_duration.sum"];
            for (metric, sum) in SUMMED {
                *sums.get_mut(&sum).expect("every sum starts at 0") += launch.metrics[metric];
            }
            for (metric, average) in AVERAGED {
                *weighted.get_mut(&average).expect("every average starts at 0") += launch.metrics[metric] * ns;
            }
            registers.insert(launch.metrics[REGISTERS] as u64);
            kernels.insert(launch.kernel.as_str());
            count += 1;
        }
        let kernels: Vec<&str> = kernels.into_iter().collect();
        for (metric, sum) in [
            ("gpu__time_duration.sum", Sum::KernelNs),
            ("smsp__inst_executed.sum", Sum::WarpInst),
        ] {
            if sums[&sum] == 0.0 {
                bail!(
                    "{}: {metric} of {} adds up to 0; expected kernels that ran",
                    path.display(),
                    kernels.join(", ")
                );
            }
        }
        let ns = sums[&Sum::KernelNs];
        Ok(Totals {
            averages: weighted.into_iter().map(|(a, w)| (a, w / ns)).collect(),
            sums,
            launches: count,
            registers: registers.iter().map(u64::to_string).collect::<Vec<_>>().join("/"),
        })
    }

    /// A summed metric.
    pub fn sum(&self, sum: Sum) -> f64 {
        self.sums[&sum]
    }

    /// An occupancy as a fraction of the most (Nsight Compute's % over
    /// 100).
    pub fn occupancy(&self, average: Average) -> f64 {
        self.averages[&average] / 100.0
    }

    /// Active lanes per warp instruction.
    pub fn lanes(&self) -> f64 {
        self.sum(Sum::ThreadInst) / self.sum(Sum::WarpInst)
    }
}
