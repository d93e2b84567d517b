//! `gpu-wave`: the wavefront path tracer (Laine, Karras and Aila 2013; the
//! wavefront integrator of pbrt-v4). Paths live in a pool in device memory;
//! the host runs the bounce loop, one small kernel per stage:
//!
//! ```text
//! loop
//!     generate      new camera paths into free slots (every iteration when
//!                   regenerating, only when the queue is empty when
//!                   bounce-synchronous)
//!     extend        closest hit per queued ray; route to a shading queue
//!     shade ×5      diffuse, metal, dielectric, emissive, escaped: each
//!                   drains only its own queue (no divergence on material)
//!     compact       survivors into the next ray queue (atomic append inside
//!                   the shading kernels, or three prefix-sum kernels)
//!     read back     queue lengths (one synchronisation per iteration)
//! ```
//!
//! Every launch is timed with CUDA events and recorded with its queue length.

use super::buffers::{KernelArg, alloc_zeros, device_address, read_divergence, read_film};
use super::profile::{GpuProfile, LaunchRecord, Timeline, linear};
use super::{Gpu, GpuError, driver_error, kernel_error};
use crate::backend::{Progress, RenderJob, RenderOutput};
use cudarc::driver::{CudaFunction, LaunchArgs, PushKernelArg};
use device::launch::{
    Compaction, GENERATE, LaunchCounters, SCAN_BLOCKS, SCAN_COUNT, SCAN_SCATTER, drain_name, extend_name, shade_name,
};
use device::observe::{SHADE_CLASSES, ShadeClass};
use device::queue::{PathPool, QueueCounters, Queues, RESET_COUNTERS, SCAN_BLOCK};
use std::time::Instant;

/// When new camera paths enter the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Schedule {
    /// All paths advance one bounce per iteration; new paths start only when
    /// the queue has drained.
    BounceSync,
    /// Freed slots are refilled with new camera paths every iteration until
    /// every sample has been issued (Laine et al. 2013).
    Regenerate,
}

/// How many paths are in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capacity {
    /// Exactly this many slots (a power of two).
    Slots(u32),
    /// The largest power of two whose state fits in 80% of free memory, no
    /// larger than the render needs.
    Auto,
}

impl Schedule {
    /// The name on the command line and in reports.
    pub fn label(self) -> &'static str {
        match self {
            Schedule::BounceSync => "bounce-sync",
            Schedule::Regenerate => "regenerate",
        }
    }
}

impl Capacity {
    /// The name in reports: `2^K` or `auto`.
    pub fn label(self) -> String {
        match self {
            Capacity::Slots(n) => format!("2^{}", n.trailing_zeros()),
            Capacity::Auto => "auto".into(),
        }
    }
}

/// A compaction mode's name on the command line and in reports.
pub fn compaction_label(c: Compaction) -> &'static str {
    match c {
        Compaction::AtomicAppend => "atomic-append",
        Compaction::PrefixSum => "prefix-sum",
    }
}

/// The wavefront's launch configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WavefrontConfig {
    /// Path-pool capacity.
    pub capacity: Capacity,
    /// When new paths enter.
    pub schedule: Schedule,
    /// How survivors are gathered.
    pub compaction: Compaction,
    /// Threads per block of the per-path kernels.
    pub block: u32,
    /// Count active lanes at the material branch (diagnosis; costs time).
    pub count_divergence: bool,
    /// Once every sample is issued and at most this many paths remain,
    /// finish them with one drain launch (one thread per path) instead of
    /// more iterations; 0 never drains.
    pub drain_below: u32,
}

impl Default for WavefrontConfig {
    fn default() -> Self {
        // The best configuration measured on an H200 (results/wavefront/):
        // every path in flight at once, waves refilling slots in order,
        // survivors kept in slot order, and the last 2^18 paths finished in
        // one drain launch.
        WavefrontConfig {
            capacity: Capacity::Auto,
            schedule: Schedule::BounceSync,
            compaction: Compaction::PrefixSum,
            block: 64,
            count_divergence: false,
            drain_below: 1 << 18,
        }
    }
}

/// The largest capacity accepted (2^28 slots, 34 GB of state).
pub const MAX_CAPACITY: u32 = 1 << 28;

impl WavefrontConfig {
    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), String> {
        if let Capacity::Slots(n) = self.capacity
            && (!n.is_power_of_two() || !(1024..=MAX_CAPACITY).contains(&n))
        {
            return Err(format!(
                "capacity {n}: must be a power of two from 1024 to {MAX_CAPACITY}"
            ));
        }
        if self.block == 0 || self.block > 1024 || !self.block.is_multiple_of(32) {
            return Err(format!("block {}: must be a multiple of 32 up to 1024", self.block));
        }
        Ok(())
    }

    /// A short description for reports, e.g. "regenerate/atomic-append/2^21/128".
    pub fn label(&self) -> String {
        let (schedule, compaction, cap) = (
            self.schedule.label(),
            compaction_label(self.compaction),
            self.capacity.label(),
        );
        let drain = if self.drain_below > 0 {
            format!("/drain{}", self.drain_below)
        } else {
            String::new()
        };
        format!("{schedule}/{compaction}/{cap}/{}{drain}", self.block)
    }
}

/// Total device bytes of path state and queues for `capacity` slots.
pub fn state_bytes(capacity: usize) -> usize {
    PathPool::bytes(capacity) + Queues::bytes(capacity)
}

fn resolve_capacity(gpu: &Gpu, config: &WavefrontConfig, work: u64) -> Result<u32, GpuError> {
    Ok(match config.capacity {
        Capacity::Slots(n) => n,
        Capacity::Auto => {
            let (free, _) = gpu.memory()?;
            let needed = work.next_power_of_two().clamp(1024, MAX_CAPACITY as u64) as u32;
            let mut c = needed;
            while c > 1024 && state_bytes(c as usize) as f64 > 0.8 * free as f64 {
                c /= 2;
            }
            c
        }
    })
}

/// A kernel with its name, for launching and for the profile.
struct Kernel {
    name: &'static str,
    function: CudaFunction,
}

impl Kernel {
    /// A 1D launch over `threads` threads (none: nothing is launched),
    /// recorded on `timeline` with its iteration and work items.
    ///
    /// # Safety
    /// `args` must push this kernel's parameters (device::kernels::wavefront)
    /// in order, over buffers sized for the pool's capacity.
    unsafe fn launch<'a, 'g: 'a>(
        &'a self,
        timeline: &mut Timeline<'g>,
        iteration: u32,
        (threads, block): (u32, u32),
        items: u64,
        args: impl FnOnce(&mut LaunchArgs<'a>),
    ) -> Result<Option<usize>, GpuError> {
        if threads == 0 {
            return Ok(None);
        }
        let record = LaunchRecord {
            iteration,
            items,
            ..LaunchRecord::default()
        };
        // SAFETY: the caller's contract.
        unsafe { timeline.launch(self.name, &self.function, linear(threads, block), record, args) }.map(Some)
    }
}

/// Threads that fit on the whole GPU at once for a kernel at its block
/// size: the grid of the grid-stride shading kernels.
fn resident_threads(gpu: &Gpu, info: &super::device::KernelInfo) -> u32 {
    (info.blocks_per_multiprocessor.max(1) * gpu.info().multiprocessors * info.block_threads).max(32)
}

/// Renders `job` with the wavefront back end on `gpu`.
pub fn render(
    gpu: &Gpu,
    job: &RenderJob,
    config: &WavefrontConfig,
    progress: Progress,
) -> Result<RenderOutput, GpuError> {
    config.validate().map_err(|error| GpuError::Config {
        what: "wavefront",
        error,
    })?;
    let stream = gpu.stream();
    let pixels = job.pixel_count() as u64;
    let total_work = pixels * job.spp as u64;
    let capacity = resolve_capacity(gpu, config, total_work)?;
    let cap = capacity as usize;

    let upload_start = Instant::now();
    let scene = super::buffers::DeviceScene::for_job(gpu, job)?;
    let pool_buffer = alloc_zeros::<u8>(gpu, "the path pool", PathPool::bytes(cap))?;
    let mut queue_buffer = alloc_zeros::<u8>(gpu, "the queues", Queues::bytes(cap))?;
    let film = alloc_zeros::<u64>(gpu, "the film", job.pixel_count() * 3)?;
    let counters = alloc_zeros::<u64>(gpu, "the counters", 2)?;
    let divergence = alloc_zeros::<u64>(gpu, "the divergence counters", 2 * SHADE_CLASSES)?;
    let counters_at = Queues::counters_offset(cap);
    // Every slot starts free. The ring's entries are never read before the
    // pool first frees a slot: an empty pool refills slots 0..n in order.
    let initial = QueueCounters {
        free_tail: capacity,
        ..QueueCounters::default()
    };
    stream
        .memcpy_htod(
            &counter_bytes(&initial),
            &mut queue_buffer.slice_mut(counters_at..counters_at + 32),
        )
        .map_err(driver_error("initialising the queue counters"))?;
    stream.synchronize().map_err(driver_error("uploading the scene"))?;
    let upload_ms = upload_start.elapsed().as_secs_f64() * 1e3;

    // SAFETY: both buffers were allocated with the sizes these layouts need.
    let pool = unsafe { PathPool::from_base(device_address(gpu, &pool_buffer), cap) };
    let mut queues = unsafe { Queues::from_base(device_address(gpu, &queue_buffer), cap) };
    let load = |name: &'static str| gpu.function(name).map(|function| Kernel { name, function });
    let generate = load(GENERATE)?;
    let extend = load(extend_name(job.scene.accel.kind))?;
    let drain = load(drain_name(job.scene.accel.kind))?;
    let classes = ShadeClass::ALL;
    let shaders = classes.map(|c| load(shade_name(c)));
    let shaders: Vec<Kernel> = shaders.into_iter().collect::<Result<_, _>>()?;
    let scans = [load(SCAN_COUNT)?, load(SCAN_BLOCKS)?, load(SCAN_SCATTER)?];
    let mut kernels = vec![gpu.kernel_info(generate.name, &generate.function, config.block)?];
    kernels.push(gpu.kernel_info(extend.name, &extend.function, config.block)?);
    if config.drain_below > 0 {
        kernels.push(gpu.kernel_info(drain.name, &drain.function, config.block)?);
    }
    let mut shade_grid = Vec::new();
    for k in &shaders {
        let info = gpu.kernel_info(k.name, &k.function, config.block)?;
        shade_grid.push(resident_threads(gpu, &info));
        kernels.push(info);
    }
    let mut pinned = gpu.alloc_pinned(32)?;
    if config.compaction == Compaction::PrefixSum {
        for k in &scans {
            kernels.push(gpu.kernel_info(k.name, &k.function, SCAN_BLOCK)?);
        }
    }

    let view = KernelArg(scene.view(gpu, job.scene, job.camera));
    let params = KernelArg(job.params);
    let pool_arg = KernelArg(pool);
    let compaction = KernelArg(config.compaction);
    let film_ptr = KernelArg(device_address(gpu, &film));
    let counters_ptr = KernelArg(device_address(gpu, &counters));
    let divergence_base = device_address(gpu, &divergence);
    let divergence_ptrs: Vec<KernelArg<*mut u64>> = (0..SHADE_CLASSES)
        .map(|k| {
            KernelArg(if config.count_divergence {
                divergence_base.wrapping_add(2 * k)
            } else {
                std::ptr::null_mut()
            })
        })
        .collect();

    let mut timeline = Timeline::new(gpu);
    let (mut free_head, mut free_tail) = (0u32, capacity);
    let (mut next_work, mut ray_count, mut rays, mut iteration) = (0u64, 0u32, 0u64, 0u32);
    let loop_start = Instant::now();
    // SAFETY (every launch below): each pushes its kernel's parameters in the
    // order and layout of device::kernels::wavefront, over the pool, queues,
    // film and counters allocated above for `capacity` slots.
    loop {
        let regenerate = config.schedule == Schedule::Regenerate || ray_count == 0;
        if regenerate && next_work < total_work {
            let free = free_tail.wrapping_sub(free_head);
            let count = (free as u64).min(total_work - next_work) as u32;
            // An empty pool takes slots 0..count in order, whatever order
            // the ring holds them in: the coherence of the first wave again.
            let fresh = KernelArg((ray_count == 0) as u32);
            let (q, c, head, base, offset) = (
                KernelArg(queues),
                KernelArg(count),
                KernelArg(free_head),
                KernelArg(next_work),
                KernelArg(ray_count),
            );
            unsafe {
                generate.launch(&mut timeline, iteration, (count, config.block), count as u64, |b| {
                    b.arg(&view)
                        .arg(&params)
                        .arg(&pool_arg)
                        .arg(&q)
                        .arg(&c)
                        .arg(&head)
                        .arg(&base)
                        .arg(&offset)
                        .arg(&fresh);
                })
            }?;
            // A fresh start consumed the whole ring (every slot was free; the
            // unused ones are only left over once all work is issued).
            free_head = if fresh.0 != 0 {
                free_tail
            } else {
                free_head.wrapping_add(count)
            };
            next_work += count as u64;
            ray_count += count;
        }
        if ray_count == 0 {
            break;
        }
        if next_work == total_work && ray_count <= config.drain_below {
            let (q, n) = (KernelArg(queues), KernelArg(ray_count));
            unsafe {
                drain.launch(
                    &mut timeline,
                    iteration,
                    (ray_count, config.block),
                    ray_count as u64,
                    |b| {
                        b.arg(&view)
                            .arg(&params)
                            .arg(&pool_arg)
                            .arg(&q)
                            .arg(&n)
                            .arg(&film_ptr)
                            .arg(&counters_ptr);
                    },
                )
            }?;
            stream
                .synchronize()
                .map_err(kernel_error(drain.name, "running the drain kernel"))?;
            progress(ray_count as u64);
            break;
        }
        stream
            .memset_zeros(&mut queue_buffer.slice_mut(counters_at..counters_at + 4 * RESET_COUNTERS))
            .map_err(driver_error("resetting the queue counters"))?;
        let (q, n) = (KernelArg(queues), KernelArg(ray_count));
        unsafe {
            extend.launch(
                &mut timeline,
                iteration,
                (ray_count, config.block),
                ray_count as u64,
                |b| {
                    b.arg(&view).arg(&pool_arg).arg(&q).arg(&n);
                },
            )
        }?;
        let mut shade_launches = [None; SHADE_CLASSES];
        for (k, shader) in shaders.iter().enumerate() {
            // The queue length is on the device: the kernel strides over it.
            shade_launches[k] = unsafe {
                shader.launch(
                    &mut timeline,
                    iteration,
                    (ray_count.min(shade_grid[k]), config.block),
                    0,
                    |b| {
                        b.arg(&view)
                            .arg(&params)
                            .arg(&pool_arg)
                            .arg(&q)
                            .arg(&compaction)
                            .arg(&film_ptr)
                            .arg(&counters_ptr)
                            .arg(&divergence_ptrs[k]);
                    },
                )
            }?;
        }
        if config.compaction == Compaction::PrefixSum {
            let blocks = ray_count.div_ceil(SCAN_BLOCK);
            let b_arg = KernelArg(blocks);
            let padded = blocks * SCAN_BLOCK;
            unsafe {
                scans[0].launch(&mut timeline, iteration, (padded, SCAN_BLOCK), ray_count as u64, |b| {
                    b.arg(&q).arg(&n);
                })
            }?;
            unsafe {
                scans[1].launch(&mut timeline, iteration, (SCAN_BLOCK, SCAN_BLOCK), blocks as u64, |b| {
                    b.arg(&q).arg(&b_arg).arg(&n);
                })
            }?;
            unsafe {
                scans[2].launch(&mut timeline, iteration, (padded, SCAN_BLOCK), ray_count as u64, |b| {
                    b.arg(&q).arg(&n);
                })
            }?;
        }
        stream
            .memcpy_dtoh(&queue_buffer.slice(counters_at..counters_at + 32), &mut pinned)
            .map_err(kernel_error("the wavefront kernels", "reading the queue counters"))?;
        stream
            .synchronize()
            .map_err(kernel_error("the wavefront kernels", "reading the queue counters"))?;
        let c = counters_from(pinned.as_slice().map_err(driver_error("reading the queue counters"))?);
        // The shading launches now learn how many entries they had.
        for (k, launch) in shade_launches.iter().enumerate() {
            if let Some(i) = launch {
                timeline.record_mut(*i).items = c.shade[k] as u64;
            }
        }
        rays += ray_count as u64;
        progress((ray_count - c.rays_out) as u64);
        free_tail = c.free_tail;
        ray_count = c.rays_out;
        queues = queues.swapped();
        iteration += 1;
    }
    let loop_time = loop_start.elapsed();

    let readback_start = Instant::now();
    let film = read_film(gpu, &film, job.pixel_count())?;
    let count = stream
        .clone_dtoh(&counters)
        .map_err(driver_error("reading back the counters"))?;
    let divergence = if config.count_divergence {
        read_divergence(gpu, &divergence, &ShadeClass::ALL.map(shade_name))?
    } else {
        Vec::new()
    };
    let readback_ms = readback_start.elapsed().as_secs_f64() * 1e3;
    // The drain kernel counts its own rays on the device.
    let counters = LaunchCounters {
        rays: rays + count[0],
        invalid_samples: count[1],
    };
    let profile = GpuProfile {
        device: gpu.info().clone(),
        kernels,
        launches: timeline.finish()?,
        upload_ms,
        readback_ms,
        loop_ms: loop_time.as_secs_f64() * 1e3,
        scene_bytes: scene.byte_len(),
        film_bytes: (job.pixel_count() * 3 + 2) * 8,
        divergence,
        state_bytes: state_bytes(cap),
        pool_capacity: cap,
    };
    Ok(RenderOutput {
        film,
        rays: counters.rays,
        invalid_samples: counters.invalid_samples,
        elapsed: loop_time,
        device: format!("{} ({}, {capacity} paths in flight)", gpu.info().name, config.label()),
        gpu: Some(profile),
    })
}

fn counter_bytes(c: &QueueCounters) -> Vec<u8> {
    c.shade
        .iter()
        .chain(&[c.rays_out, c.free_tail, c.free_base])
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

fn counters_from(raw: &[u8]) -> QueueCounters {
    let word = |i: usize| u32::from_le_bytes([raw[4 * i], raw[4 * i + 1], raw[4 * i + 2], raw[4 * i + 3]]);
    QueueCounters {
        shade: [word(0), word(1), word(2), word(3), word(4)],
        rays_out: word(5),
        free_tail: word(6),
        free_base: word(7),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_round_trip_through_bytes() {
        let c = QueueCounters {
            shade: [1, 2, 3, 4, 5],
            rays_out: 6,
            free_tail: 7,
            free_base: 8,
        };
        assert_eq!(counters_from(&counter_bytes(&c)), c);
    }

    #[test]
    fn configurations_are_checked_and_labelled() {
        let ok = WavefrontConfig::default();
        assert!(ok.validate().is_ok());
        assert_eq!(ok.label(), "bounce-sync/prefix-sum/auto/64/drain262144");
        assert!(
            WavefrontConfig {
                capacity: Capacity::Slots(3000),
                ..ok
            }
            .validate()
            .is_err()
        );
        assert!(WavefrontConfig { block: 48, ..ok }.validate().is_err());
    }

    #[test]
    fn state_bytes_are_the_per_path_sizes_times_the_capacity() {
        // 13 pool fields: 5 of 12 bytes and 8 of 4 bytes; 9 queue entries of 4.
        assert_eq!(PathPool::BYTES_PER_PATH, 5 * 12 + 8 * 4);
        assert_eq!(Queues::BYTES_PER_PATH, 9 * 4);
        let c = 1 << 20;
        let per_path = state_bytes(c) as f64 / c as f64;
        let expected = (PathPool::BYTES_PER_PATH + Queues::BYTES_PER_PATH) as f64;
        // The prefix-sum scratch and alignment add well under 1%.
        assert!(
            per_path >= expected && per_path < expected * 1.01,
            "{per_path} vs {expected}"
        );
    }
}
