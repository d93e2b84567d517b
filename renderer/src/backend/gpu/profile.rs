//! Kernel launch records and the profile computed from them: one row per
//! launch (made by [`super::timeline::Timeline`]), and the summaries computed
//! from those same rows, so the printed table and the CSV never disagree.

use super::device::{GpuInfo, KernelInfo};
use anyhow::Context;
use device::observe::DivergenceCounters;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// One kernel launch, timed with CUDA events around it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LaunchRecord {
    /// Kernel name.
    pub kernel: &'static str,
    /// Launch number within the render, from 0.
    pub launch: u32,
    /// Megakernel: sample pass. Wavefront: bounce-loop iteration.
    pub iteration: u32,
    /// First sample index the launch rendered.
    pub sample_begin: u32,
    /// One past its last sample index.
    pub sample_end: u32,
    /// Tile origin, column (megakernel; 0 for the wavefront).
    pub tile_x: u32,
    /// Tile origin (row).
    pub tile_y: u32,
    /// Tile width.
    pub tile_width: u32,
    /// Tile height.
    pub tile_height: u32,
    /// Threads launched (grid × block).
    pub threads: u64,
    /// Work items processed: pixel-samples for the megakernel, queue
    /// entries for the wavefront kernels.
    pub items: u64,
    /// Kernel time between the events, milliseconds (NaN when the launches
    /// were not timed).
    pub ms: f64,
}

/// What a GPU render measured.
#[derive(Clone, Debug)]
pub struct GpuProfile {
    /// The device.
    pub device: GpuInfo,
    /// Resource use of each kernel at its launch configuration.
    pub kernels: Vec<KernelInfo>,
    /// Every launch.
    pub launches: Vec<LaunchRecord>,
    /// Scene upload and buffer allocation, wall milliseconds.
    pub upload_ms: f64,
    /// Film and counter readback, wall milliseconds.
    pub readback_ms: f64,
    /// The launch loop from first launch to last completion, wall milliseconds.
    pub loop_ms: f64,
    /// Scene bytes on the device.
    pub scene_bytes: usize,
    /// Bytes of the film on the device (24 per pixel, whichever back end):
    /// what its readback copies. Counters and path state are not included.
    pub film_bytes: usize,
    /// Per kernel: lanes and groups at the material branch, when counted.
    pub divergence: Vec<(String, DivergenceCounters)>,
    /// Path state and queue bytes on the device (wavefront only).
    pub state_bytes: usize,
    /// Path slots in flight (wavefront only).
    pub pool_capacity: usize,
}

/// Per-kernel totals over all launches.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelTotals {
    /// Kernel name.
    pub kernel: &'static str,
    /// Launch count.
    pub launches: usize,
    /// Sum of event times, ms.
    pub total_ms: f64,
    /// Shortest launch, ms.
    pub min_ms: f64,
    /// Longest launch, ms.
    pub max_ms: f64,
    /// Work items over all launches.
    pub items: u64,
}

impl GpuProfile {
    /// Sum of all kernel event times, ms.
    pub fn kernel_ms(&self) -> f64 {
        self.launches.iter().map(|l| l.ms).sum()
    }

    /// Loop time not spent inside kernels: launch latency, gaps and host
    /// synchronisation for progress, ms.
    pub fn overhead_ms(&self) -> f64 {
        (self.loop_ms - self.kernel_ms()).max(0.0)
    }

    /// Totals per kernel, in order of first launch.
    pub fn totals(&self) -> Vec<KernelTotals> {
        let mut out: Vec<KernelTotals> = Vec::new();
        for l in &self.launches {
            match out.iter_mut().find(|t| t.kernel == l.kernel) {
                Some(t) => {
                    t.launches += 1;
                    t.total_ms += l.ms;
                    t.min_ms = t.min_ms.min(l.ms);
                    t.max_ms = t.max_ms.max(l.ms);
                    t.items += l.items;
                }
                None => out.push(KernelTotals {
                    kernel: l.kernel,
                    launches: 1,
                    total_ms: l.ms,
                    min_ms: l.ms,
                    max_ms: l.ms,
                    items: l.items,
                }),
            }
        }
        out
    }

    /// The printed profile: where the time went, per kernel, plus resources.
    pub fn table(&self) -> String {
        let kernel_ms = self.kernel_ms();
        let mut s = String::new();
        let _ = writeln!(s, "device: {}", self.device.describe());
        let _ = writeln!(
            s,
            "{:<20} {:>8} {:>11} {:>7} {:>10} {:>10} {:>10} {:>14} {:>13}",
            "kernel", "launches", "total ms", "share", "mean ms", "min ms", "max ms", "items", "items/s"
        );
        for t in self.totals() {
            let _ = writeln!(
                s,
                "{:<20} {:>8} {:>11.3} {:>6.1}% {:>10.3} {:>10.3} {:>10.3} {:>14} {:>13.4e}",
                t.kernel,
                t.launches,
                t.total_ms,
                100.0 * t.total_ms / kernel_ms.max(1e-12),
                t.total_ms / t.launches as f64,
                t.min_ms,
                t.max_ms,
                t.items,
                t.items as f64 / (t.total_ms.max(1e-12) / 1e3),
            );
        }
        let _ = writeln!(
            s,
            "upload {:.3} ms ({} scene bytes), kernels {:.3} ms, launch overhead {:.3} ms, readback {:.3} ms ({} film bytes)",
            self.upload_ms,
            self.scene_bytes,
            kernel_ms,
            self.overhead_ms(),
            self.readback_ms,
            self.film_bytes
        );
        if self.pool_capacity > 0 {
            let _ = writeln!(
                s,
                "path state and queues: {:.1} MiB for {} paths in flight ({:.1} B per path: {} of state, {} of queue entries, {} more with shadow rays)",
                self.state_bytes as f64 / (1 << 20) as f64,
                self.pool_capacity,
                self.state_bytes as f64 / self.pool_capacity as f64,
                device::queue::PathPool::BYTES_PER_PATH,
                device::queue::Queues::bytes_per_path(false),
                device::queue::Queues::bytes_per_path(true) - device::queue::Queues::bytes_per_path(false)
            );
        }
        for (kernel, d) in &self.divergence {
            let _ = writeln!(
                s,
                "{kernel}: {:.2} active lanes per warp at the material branch ({} branch groups)",
                d.average_lanes(),
                d.groups
            );
        }
        for k in &self.kernels {
            let _ = writeln!(
                s,
                "{}: {} registers/thread, {} B local/thread, {} threads/block, {} blocks/SM, occupancy {:.0}%",
                k.name,
                k.registers,
                k.local_bytes,
                k.block_threads,
                k.blocks_per_multiprocessor,
                100.0 * k.occupancy
            );
        }
        s
    }

    /// Writes every launch record as CSV.
    pub fn write_launch_csv(&self, path: &Path) -> anyhow::Result<()> {
        crate::io::csv::write_csv(path, &self.launches)
            .with_context(|| format!("{}: writing the launch log", path.display()))
    }
}
