//! The wavefront's driver: allocation, the launches of one iteration, the
//! loop that enqueues iterations until the schedule says the render is
//! done, and the readback. It runs on any [`Machine`].

use super::{Grid, Machine, Resolved};
use crate::backend::{ProgressCallback, RenderJob, RenderOutput, SizedBy};
use crate::settings::capacity::state_bytes;
use crate::settings::wave_config::WavefrontConfig;
use device::film::FixedRgb;
use device::kernel::{AsBytes, EntryPoint, Plain};
use device::kernels::scan::{ScanBlocks, ScanCount, ScanScatter};
use device::kernels::shade::{ShadeVisitor, visit_shade};
use device::kernels::sort::{CountVariants, SortByVariant};
use device::kernels::wave_kernels::{
    CommonArgs, FindHoles, Generate, IterationRecord, MarkSurvivors, MoveSurvivors, Plan, QueueKernel, WavefrontArgs,
    WorkItems,
};
use device::kernels::{AccelKernels, AccelVisitor, visit_accel};
use device::launch::{Compaction, LaunchCounters, MaterialSort};
use device::material::Material;
use device::observe::DivergenceCounters;
use device::queue::{Control, PathPool, Queues, SCAN_BLOCK, scan_blocks};
use device::scene::SceneView;
use device::schedule::Schedule;
use device::shading::{SORTED_CLASS, ShadeClass};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Iterations whose counts are logged for the launch profile (later
/// iterations are timed but not counted).
pub const LOG_ITERATIONS: u32 = 1 << 18;

/// What a wavefront render produced, wherever it ran.
#[derive(Clone, Debug)]
pub struct WavefrontOutput {
    /// The render loop, from the first launch to the schedule's end (the
    /// allocations before it and the readback after it excluded).
    pub loop_time: Duration,
    /// Reading back the film, counters and log.
    pub readback_time: Duration,
    /// Per-pixel fixed-point sums.
    pub film: Vec<FixedRgb>,
    /// Ray segments traced.
    pub rays: u64,
    /// Samples dropped for being NaN or infinite.
    pub invalid_samples: u64,
    /// Lanes at the material branch per shading class (when counted).
    pub divergence: Vec<(ShadeClass, DivergenceCounters)>,
    /// What each logged iteration of the (last) render loop did.
    pub log: Vec<IterationRecord>,
    /// Path slots.
    pub capacity: u32,
    /// Bytes of path state and queues.
    pub state_bytes: usize,
    /// Samples per pixel in the film: the jobs', or the whole sample
    /// rounds finished when a stop request ended a render early.
    pub spp: u32,
}

impl WavefrontOutput {
    /// The render's output, rendered `on` (the GPU's name, or the host
    /// emulating it) with `config`: the device named with the schedule and
    /// the paths in flight, and no GPU profile.
    pub fn into_render_output(self, on: &str, config: &WavefrontConfig) -> RenderOutput {
        RenderOutput {
            spp: self.spp,
            film: self.film,
            rays: self.rays,
            invalid_samples: self.invalid_samples,
            elapsed: self.loop_time,
            device: format!("{on} ({}, {} paths in flight)", config.label(), self.capacity),
            gpu: None,
        }
    }
}

/// The memory of a wavefront render, in buffers of type `B`: allocated
/// once, and kept across the chunks of a split render
/// ([`crate::render::split`]), whose films and counters it sums.
pub struct WaveMemory<B> {
    capacity: u32,
    shadows: bool,
    pool: B,
    queues: B,
    control: B,
    film: B,
    counters: B,
    divergence: B,
    log: B,
    /// Set once a render has started in it: the pool and queues hold its
    /// leftovers until they are zeroed again.
    used: bool,
    /// What the render loops run in it did, summed.
    done: LoopTotals,
}

/// What the render loops run in a [`WaveMemory`] did (their films and
/// counters are in its buffers).
#[derive(Clone, Copy, Debug, Default)]
struct LoopTotals {
    /// From each loop's first launch to its schedule's end, summed.
    loop_time: Duration,
    /// Samples per pixel rendered.
    spp: u32,
    /// Ray segments the schedules counted (the rest are in the counters).
    scheduled_rays: u64,
    /// Iterations of the last loop (its log's length).
    last_iterations: u32,
}

/// One render in progress: the kernels' arguments for even and odd
/// iterations (the ray queues swap), and what the launches need to know.
struct Wavefront<'m, M: Machine> {
    machine: &'m mut M,
    args: [WavefrontArgs; 2],
    block: u32,
    scan_grid: Grid,
    classes: Vec<ShadeClass>,
    compaction: Compaction,
    sorts: bool,
    drain: bool,
    refills: bool,
    shadows: bool,
    iteration: u32,
}

impl<B> WaveMemory<B> {
    /// Zeroed memory for renders of `job`'s image with the pool that
    /// `resolved` sizes, with room for shadow rays when `job` traces them.
    pub fn alloc<M: Machine<Buffer = B>>(
        machine: &mut M,
        job: &RenderJob,
        resolved: Resolved,
    ) -> Result<Self, M::Error> {
        let (capacity, shadows) = (resolved.capacity, job.traces_shadow_rays());
        let cap = capacity as usize;
        Ok(WaveMemory {
            capacity,
            shadows,
            pool: machine.alloc("the path pool", SizedBy::PathPool, PathPool::bytes(cap))?,
            queues: machine.alloc("the queues", SizedBy::PathPool, Queues::bytes(cap, shadows))?,
            control: machine.alloc("the schedule", SizedBy::Fixed, size_of::<Control>())?,
            film: machine.alloc("the film", SizedBy::Image, job.pixel_count() * size_of::<FixedRgb>())?,
            counters: machine.alloc("the counters", SizedBy::Fixed, size_of::<LaunchCounters>())?,
            divergence: machine.alloc(
                "the divergence counters",
                SizedBy::Fixed,
                ShadeClass::COUNT * size_of::<DivergenceCounters>(),
            )?,
            log: machine.alloc(
                "the iteration log",
                SizedBy::Fixed,
                LOG_ITERATIONS as usize * size_of::<IterationRecord>(),
            )?,
            used: false,
            done: LoopTotals::default(),
        })
    }

    /// Path slots.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Renders `work` of `job` (whose image and shadow rays must be those
    /// the memory was allocated for) and adds its film and counters to the
    /// memory's. The pool and queues start as a fresh allocation's: zeroed
    /// again after an earlier render. Returns the samples per pixel
    /// rendered: the job's, or the whole sample rounds finished when a stop
    /// request ended it early.
    pub fn run<M: Machine<Buffer = B>>(
        &mut self,
        machine: &mut M,
        job: &RenderJob,
        scene: SceneView<'static>,
        config: &WavefrontConfig,
        (items, total_work): (WorkItems, u64),
        progress: ProgressCallback,
    ) -> Result<u32, M::Error> {
        debug_assert_eq!(self.shadows, job.traces_shadow_rays(), "memory for another render");
        if std::mem::replace(&mut self.used, true) {
            machine.zero(&mut self.pool)?;
            machine.zero(&mut self.queues)?;
        }
        let capacity = self.capacity;
        let schedule = Schedule::new(total_work, capacity, config.refill_below(capacity), config.drain_below);
        machine.write(&mut self.control, Control::new(schedule).as_bytes())?;
        let sort = material_sort(&job.scene.scene.materials, config.material_sort);
        let args = self.args(machine, job, scene, (config, sort), items);
        let loop_start = Instant::now();
        let work_done = visit_accel(
            job.scene.accel.kind,
            RenderLoop {
                machine,
                total_work,
                args,
                config,
                classes: shade_classes(job),
                shadows: self.shadows,
                control: &mut self.control,
                stop: job.stop,
                progress,
            },
        )?;
        let loop_time = loop_start.elapsed();
        let control = read_values::<M, Control>(machine, &self.control, 1)?[0];
        let spp = if job.stopping() {
            (work_done / job.pixel_count().max(1) as u64) as u32
        } else {
            job.spp()
        };
        let done = &mut self.done;
        done.loop_time += loop_time;
        done.spp += spp;
        done.scheduled_rays += control.schedule.rays;
        done.last_iterations = control.schedule.iteration;
        Ok(spp)
    }
}

/// The sort a render of a scene with `materials` does: `asked`, where its
/// materials of the sorted class use two or more variants; none otherwise
/// (sorting one variant would only cost launches).
fn material_sort(materials: &[Material], asked: MaterialSort) -> MaterialSort {
    let mut variants = materials
        .iter()
        .filter(|m| m.kind.class() == SORTED_CLASS)
        .map(|m| m.variant());
    match variants.next() {
        Some(first) if variants.any(|v| v != first) => asked,
        _ => MaterialSort::Off,
    }
}

/// The shading classes the scene's materials need, and escaped rays, in
/// queue order.
fn shade_classes(job: &RenderJob) -> Vec<ShadeClass> {
    let mut classes = vec![ShadeClass::Escaped];
    for m in &job.scene.scene.materials {
        if !classes.contains(&m.kind.class()) {
            classes.push(m.kind.class());
        }
    }
    classes.sort_by_key(|c| *c as u32);
    classes
}

impl<B> WaveMemory<B> {
    /// The kernels' arguments (for even iterations) over these buffers.
    fn args<M: Machine<Buffer = B>>(
        &self,
        machine: &M,
        job: &RenderJob,
        scene: SceneView<'static>,
        (config, material_sort): (&WavefrontConfig, MaterialSort),
        items: WorkItems,
    ) -> WavefrontArgs {
        let cap = self.capacity as usize;
        let control: *mut Control = machine.address(&self.control).cast();
        // SAFETY: the allocations were made by `alloc` with the sizes these
        // layouts need for `capacity` slots (and shadow rays when the render
        // traces them) and outlive the render; the queues' counters are a
        // field of the control block, and each path enters each queue at
        // most once per iteration.
        let (pool, queues) = unsafe {
            (
                PathPool::from_base(machine.address(&self.pool), cap),
                Queues::from_base(
                    machine.address(&self.queues),
                    cap,
                    self.shadows,
                    &raw mut (*control).counters.len,
                ),
            )
        };
        let common = CommonArgs {
            scene,
            params: job.params,
            pool,
            control,
            film: machine.address(&self.film).cast(),
            counters: machine.address(&self.counters).cast(),
            divergence: if config.count_divergence {
                machine.address(&self.divergence).cast()
            } else {
                std::ptr::null_mut()
            },
            work: items,
            compaction: config.compaction,
            log: machine.address(&self.log).cast(),
            log_len: LOG_ITERATIONS,
            material_sort,
        };
        WavefrontArgs { common, queues }
    }

    /// Reads back what the renders made in this memory: the film of
    /// `pixels` and the counters (their sums), the divergence counts (when
    /// `count_divergence`) and the last render's log.
    pub fn read_back<M: Machine<Buffer = B>>(
        &self,
        machine: &mut M,
        pixels: usize,
        count_divergence: bool,
    ) -> Result<WavefrontOutput, M::Error> {
        let readback_start = Instant::now();
        let film = read_values::<M, FixedRgb>(machine, &self.film, pixels)?;
        let counters = read_values::<M, LaunchCounters>(machine, &self.counters, 1)?[0];
        let divergence = if count_divergence {
            let d = read_values::<M, DivergenceCounters>(machine, &self.divergence, ShadeClass::COUNT)?;
            ShadeClass::ALL.into_iter().zip(d).collect()
        } else {
            Vec::new()
        };
        let done = self.done;
        let logged = done.last_iterations.min(LOG_ITERATIONS) as usize;
        let log = read_values::<M, IterationRecord>(machine, &self.log, logged)?;
        Ok(WavefrontOutput {
            loop_time: done.loop_time,
            readback_time: readback_start.elapsed(),
            film,
            rays: done.scheduled_rays + counters.rays,
            invalid_samples: counters.invalid_samples,
            divergence,
            log,
            capacity: self.capacity,
            state_bytes: state_bytes(self.capacity as usize, self.shadows),
            spp: done.spp,
        })
    }
}

/// Reads back the first `count` values of `T` in `buffer`.
fn read_values<M: Machine, T: Plain>(machine: &mut M, buffer: &M::Buffer, count: usize) -> Result<Vec<T>, M::Error> {
    let bytes = machine.read(buffer, count * size_of::<T>())?;
    Ok(bytes
        .chunks_exact(size_of::<T>())
        .map(|c| T::from_bytes(c).expect("chunks have the value's size"))
        .collect())
}

/// The render loop, once the acceleration structure's kernels are known.
struct RenderLoop<'a, 'm, M: Machine> {
    machine: &'m mut M,
    total_work: u64,
    args: WavefrontArgs,
    config: &'a WavefrontConfig,
    classes: Vec<ShadeClass>,
    shadows: bool,
    control: &'a mut M::Buffer,
    stop: Option<&'a AtomicBool>,
    progress: ProgressCallback<'a>,
}

impl<M: Machine> AccelVisitor for RenderLoop<'_, '_, M> {
    /// The work items rendered.
    type Output = Result<u64, M::Error>;

    fn visit<A: AccelKernels>(self) -> Result<u64, M::Error> {
        let capacity = self.args.queues.capacity;
        let scan_grid = Grid {
            blocks: scan_blocks(capacity as usize) as u32,
            block: SCAN_BLOCK,
        };
        let mut w = Wavefront {
            machine: self.machine,
            args: [
                self.args,
                WavefrontArgs {
                    queues: self.args.queues.swapped(),
                    ..self.args
                },
            ],
            block: self.config.block,
            scan_grid,
            classes: self.classes,
            compaction: self.config.compaction,
            sorts: self.args.common.material_sort == MaterialSort::ByVariant,
            drain: self.config.drain_below > 0,
            // Bounce-synchronous waves start only in an empty pool, and a
            // pool that holds every path of the render is never refilled.
            refills: self.config.refill_below(capacity) > 0 && (capacity as u64) < self.total_work,
            shadows: self.shadows,
            iteration: 0,
        };
        let mut reported = 0;
        let mut total_work = self.total_work;
        let mut stopped = false;
        loop {
            w.iteration::<A>()?;
            if !stopped && self.stop.is_some_and(|s| s.load(Ordering::SeqCst)) {
                total_work = stop_after_round(w.machine, self.control, self.args.common.work.pixels)?;
                stopped = true;
            }
            if let Some(control) = w.machine.poll(self.control)? {
                let s = control.schedule;
                (self.progress)(s.finished - reported);
                reported = s.finished;
                if s.done() {
                    return Ok(total_work);
                }
            }
        }
    }
}

/// Ends the render at the end of the sample round in flight: the work left
/// to issue shrinks to the next multiple of `pixels` (work items run
/// sample-major, so the film then holds whole samples per pixel). The
/// machine finishes the launches queued so far first, so that the schedule
/// read and written back is the device's own. Returns the new total.
fn stop_after_round<M: Machine>(machine: &mut M, control: &mut M::Buffer, pixels: u32) -> Result<u64, M::Error> {
    let mut c = read_values::<M, Control>(machine, control, 1)?[0];
    let rounds = c.schedule.next_work.div_ceil(pixels.max(1) as u64);
    c.schedule.total_work = c.schedule.total_work.min(rounds * pixels as u64);
    machine.write(control, c.as_bytes())?;
    Ok(c.schedule.total_work)
}

impl<M: Machine> Wavefront<'_, M> {
    /// The arguments of the current iteration.
    fn args(&self) -> &WavefrontArgs {
        &self.args[(self.iteration % 2) as usize]
    }

    /// Launches `K` over `grid` in the current iteration.
    fn launch<K: EntryPoint<Args = WavefrontArgs> + QueueKernel>(&mut self, grid: Grid) -> Result<(), M::Error> {
        let args = *self.args();
        self.machine.launch::<K>(grid, &args, self.iteration)
    }

    /// Launches `K` over the threads that fit at once; they stride over
    /// the queue whose length the device knows.
    fn launch_resident<K: EntryPoint<Args = WavefrontArgs> + QueueKernel>(&mut self) -> Result<(), M::Error> {
        let grid = self.machine.resident_grid::<K>(self.block)?;
        self.launch::<K>(grid)
    }

    /// One iteration: plan, refill (survivors down, new paths after them),
    /// extend (or drain), shade, shadow rays, compact.
    fn iteration<A: AccelKernels>(&mut self) -> Result<(), M::Error> {
        self.plan()?;
        if self.refills {
            self.move_survivors_down()?;
        }
        self.generate()?;
        self.extend::<A>()?;
        if self.drain {
            self.drain::<A>()?;
        }
        self.shade()?;
        if self.shadows {
            self.shadow::<A>()?;
        }
        self.compact()?;
        self.iteration += 1;
        Ok(())
    }

    /// The scheduler's one thread.
    fn plan(&mut self) -> Result<(), M::Error> {
        self.launch::<Plan>(Grid { blocks: 1, block: 32 })
    }

    /// Survivors in slots at or above their count move into the free slots
    /// below it (no-ops unless the plan refills a pool that still has paths).
    fn move_survivors_down(&mut self) -> Result<(), M::Error> {
        // A quarter of the resident threads: enough to stream the moves,
        // and a quarter of the cost in the iterations where they do nothing.
        let quarter = |g: Grid| Grid {
            blocks: g.blocks.div_ceil(4),
            ..g
        };
        let grid = quarter(self.machine.resident_grid::<MarkSurvivors>(self.block)?);
        self.launch::<MarkSurvivors>(grid)?;
        let grid = quarter(self.machine.resident_grid::<FindHoles>(self.block)?);
        self.launch::<FindHoles>(grid)?;
        let grid = quarter(self.machine.resident_grid::<MoveSurvivors>(self.block)?);
        self.launch::<MoveSurvivors>(grid)
    }

    /// New camera paths into the slots after the survivors.
    fn generate(&mut self) -> Result<(), M::Error> {
        self.launch_resident::<Generate>()
    }

    /// Closest hits of the queued rays, routed to the shading queues.
    fn extend<A: AccelKernels>(&mut self) -> Result<(), M::Error> {
        self.launch_resident::<A::Extend>()
    }

    /// The last paths, one thread each (a no-op until the plan drains).
    fn drain<A: AccelKernels>(&mut self) -> Result<(), M::Error> {
        self.launch_resident::<A::Drain>()
    }

    /// One shading kernel per class the scene has, the sorted class's queue first
    /// sorted by variant when the render sorts.
    fn shade(&mut self) -> Result<(), M::Error> {
        if self.sorts {
            self.launch_resident::<CountVariants>()?;
            self.launch_resident::<SortByVariant>()?;
        }
        struct LaunchShade<'w, 'm, M: Machine>(&'w mut Wavefront<'m, M>);
        impl<M: Machine> ShadeVisitor for LaunchShade<'_, '_, M> {
            type Output = Result<(), M::Error>;
            fn visit<K: EntryPoint<Args = WavefrontArgs> + QueueKernel>(self) -> Result<(), M::Error> {
                self.0.launch_resident::<K>()
            }
        }
        for k in 0..self.classes.len() {
            let class = self.classes[k];
            visit_shade(class, LaunchShade(self))?;
        }
        Ok(())
    }

    /// The shadow rays the shading kernels queued (any hit).
    fn shadow<A: AccelKernels>(&mut self) -> Result<(), M::Error> {
        self.launch_resident::<A::Shadow>()
    }

    /// Survivors into the next ray queue (the prefix sum; atomic appends
    /// happened inside the shading kernels).
    fn compact(&mut self) -> Result<(), M::Error> {
        if self.compaction == Compaction::PrefixSum {
            let grid = self.scan_grid;
            self.launch::<ScanCount>(grid)?;
            self.launch::<ScanBlocks>(Grid {
                blocks: 1,
                block: SCAN_BLOCK,
            })?;
            self.launch::<ScanScatter>(grid)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::blank_material;
    use device::material::MaterialKind;
    use device::noise::Basis;

    #[test]
    fn only_coated_materials_of_two_or_more_bases_are_sorted() {
        let coated = |b| Material {
            basis: Basis(b),
            ..blank_material(MaterialKind::Coated)
        };
        let diffuse = blank_material(MaterialKind::Diffuse);
        let sort = MaterialSort::ByVariant;
        assert_eq!(material_sort(&[diffuse, diffuse], sort), MaterialSort::Off);
        assert_eq!(material_sort(&[coated(3), diffuse, coated(3)], sort), MaterialSort::Off);
        assert_eq!(material_sort(&[coated(3), diffuse, coated(5)], sort), sort);
        assert_eq!(
            material_sort(&[coated(3), coated(5)], MaterialSort::Off),
            MaterialSort::Off
        );
    }
}
