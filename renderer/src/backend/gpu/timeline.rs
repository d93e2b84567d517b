//! The one place the host launches a kernel: a [`Timeline`] types each
//! launch by its kernel, times it with CUDA events, marks it in flight (so a
//! fault names it) and records it as a [`LaunchRecord`].

use super::buffers::KernelArg;
use super::device::Gpu;
use super::error::GpuError;
use super::launch_site::LaunchSite;
use super::profile::LaunchRecord;
use cudarc::driver::{CudaEvent, CudaFunction, LaunchConfig, PushKernelArg};
use device::kernel::EntryPoint;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// Every launch of a render goes through here: it is typed by the kernel,
/// timed with CUDA events and recorded, and the times are read once the
/// work is done.
pub struct Timeline<'g> {
    gpu: &'g Gpu,
    timed: bool,
    functions: HashMap<&'static str, CudaFunction>,
    pending: Vec<(LaunchRecord, Option<(CudaEvent, CudaEvent)>)>,
}

impl<'g> Timeline<'g> {
    /// An empty timeline on `gpu`'s stream.
    pub fn new(gpu: &'g Gpu) -> Self {
        Self::with_timing(gpu, true)
    }

    /// An empty timeline that times each launch with CUDA events, or (when
    /// `timed` is false) only records the launches: their times are then NaN.
    pub fn with_timing(gpu: &'g Gpu, timed: bool) -> Self {
        Timeline {
            gpu,
            timed,
            functions: HashMap::new(),
            pending: Vec::new(),
        }
    }

    /// Kernel `K`'s function in the loaded module (looked up once).
    pub fn function<K: EntryPoint>(&mut self) -> Result<&CudaFunction, GpuError> {
        Ok(match self.functions.entry(K::NAME) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(self.gpu.function(K::NAME)?),
        })
    }

    /// Launches kernel `K` with `cfg` and its one argument `args`, and
    /// records it with the iteration, items and sample/tile fields of
    /// `record`. Returns the record's index.
    ///
    /// This is the one place where the host launches a kernel. The argument
    /// struct is the device crate's own type for `K`, so its layout is the
    /// kernel's by construction; the pointers in it come from the
    /// allocations of the render that builds it (`buffers`), sized for it.
    /// The launch is recorded on the GPU as in flight, so that a fault
    /// reported later names it.
    pub fn launch<K: EntryPoint>(
        &mut self,
        cfg: LaunchConfig,
        args: &K::Args,
        record: LaunchRecord,
    ) -> Result<usize, GpuError> {
        let gpu: &'g Gpu = self.gpu;
        let timed = self.timed;
        let start = timed.then(|| gpu.timing_event()).transpose()?;
        let index = self.pending.len();
        let function = self.function::<K>()?;
        let arg = KernelArg(*args);
        let mut builder = gpu.stream().launch_builder(function);
        builder.arg(&arg);
        let site = LaunchSite {
            kernel: K::NAME,
            launch: index as u32,
            iteration: record.iteration,
            grid: cfg.grid_dim,
            block: cfg.block_dim,
        };
        // SAFETY: `arg` is the kernel's one parameter, of the type the
        // entry point declares (`K::Args`, `#[repr(C)]`, the same layout on
        // both targets); what its pointers address is the caller's
        // allocation, as described above.
        let launched = unsafe { builder.launch(cfg) };
        gpu.launched(site.clone(), launched.is_err());
        launched.map_err(|e| gpu.error(format!("launching {site}"))(e))?;
        let end = timed.then(|| gpu.timing_event()).transpose()?;
        let (g, b) = (cfg.grid_dim, cfg.block_dim);
        let threads = (g.0 * g.1 * g.2) as u64 * (b.0 * b.1 * b.2) as u64;
        let record = LaunchRecord {
            kernel: K::NAME,
            launch: index as u32,
            threads,
            ..record
        };
        self.pending.push((record, start.zip(end)));
        Ok(index)
    }

    /// Every record with its event time, NaN when untimed (waits for the
    /// launches).
    pub fn finish(self) -> Result<Vec<LaunchRecord>, GpuError> {
        let gpu = self.gpu;
        self.pending
            .into_iter()
            .map(|(r, events)| {
                let ms = match events {
                    Some((start, end)) => start.elapsed_ms(&end).map_err(gpu.error("reading event times"))? as f64,
                    None => f64::NAN,
                };
                Ok(LaunchRecord { ms, ..r })
            })
            .collect()
    }
}

/// A 1D launch of `threads` threads in blocks of `block`.
pub fn linear(threads: u32, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (threads.div_ceil(block), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}
