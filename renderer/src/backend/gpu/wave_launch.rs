//! `gpu-wave`: the wavefront ([`crate::backend::wave_driver`]) on a GPU. The
//! GPU is a [`Machine`]: device allocations, launches timed with CUDA
//! events, and a lagged readback of the schedule through a small ring of
//! pinned buffers, so the host keeps a few iterations queued and never
//! waits for the one it just enqueued.

use super::buffers::{DeviceBuffer, DeviceScene, PinnedCopy, SceneOnDevice};
use super::device::{Gpu, KernelInfo};
use super::error::GpuError;
use super::profile::{GpuProfile, LaunchRecord};
use super::timeline::{Timeline, linear};
use crate::backend::wave_driver::launches::WaveMemory;
use crate::backend::wave_driver::{Grid, Machine, WavefrontError, resolve};
use crate::backend::{ProgressCallback, RenderJob, RenderOutput, SizedBy};
use crate::settings::wave_config::WavefrontConfig;
use device::kernel::{EntryPoint, Plain};
use device::kernels::shade::kernel_of;
use device::kernels::wave_kernels::{IterationRecord, QueueKernel, WavefrontArgs, WorkItems};
use device::queue::Control;
use device::scene::SceneView;
use std::time::Instant;

/// Iterations the host may run ahead of the GPU.
const LAG: usize = 3;

/// A kernel's count of the items of its launches in an iteration
/// ([`QueueKernel::items`]).
type ItemCount = fn(&IterationRecord) -> u64;

/// A GPU as a machine for the wavefront, for one render loop.
pub struct GpuMachine<'g> {
    gpu: &'g Gpu,
    timeline: Timeline<'g>,
    kept: &'g mut LaunchCache,
    /// Per launch, in launch order: how its kernel counts its items.
    item_counts: Vec<ItemCount>,
    /// Per snapshot: the GPU's launch mark when its copy was queued.
    marks: [u64; LAG],
    polls: usize,
}

/// What a [`GpuMachine`] keeps from one render loop to the next (the
/// chunks of a split render): the kernels it looked up, their resident
/// grids and the pinned snapshots of the schedule.
pub struct LaunchCache {
    kernels: Vec<KernelInfo>,
    /// Resident grids found so far, by kernel and block size.
    grids: Vec<((&'static str, u32), Grid)>,
    snapshots: Vec<PinnedCopy>,
}

impl LaunchCache {
    /// Nothing looked up yet, and the snapshots allocated on `gpu`.
    fn new(gpu: &Gpu) -> Result<Self, GpuError> {
        Ok(LaunchCache {
            kernels: Vec::new(),
            grids: Vec::new(),
            snapshots: (0..LAG)
                .map(|_| PinnedCopy::new(gpu, size_of::<Control>()))
                .collect::<Result<_, _>>()?,
        })
    }
}

impl<'g> GpuMachine<'g> {
    /// A machine on `gpu` with what earlier ones `kept`, timing each
    /// launch or not.
    fn resume(gpu: &'g Gpu, kept: &'g mut LaunchCache, time_launches: bool) -> Self {
        GpuMachine {
            gpu,
            timeline: Timeline::with_timing(gpu, time_launches),
            kept,
            item_counts: Vec::new(),
            marks: [0; LAG],
            polls: 0,
        }
    }
}

impl Machine for GpuMachine<'_> {
    type Buffer = DeviceBuffer<u8>;
    type Error = GpuError;

    fn alloc(&mut self, what: &str, sized_by: SizedBy, bytes: usize) -> Result<DeviceBuffer<u8>, GpuError> {
        DeviceBuffer::zeroed(self.gpu, what, sized_by, bytes)
    }

    fn address(&self, buffer: &DeviceBuffer<u8>) -> *mut u8 {
        buffer.ptr(self.gpu)
    }

    fn zero(&mut self, buffer: &mut DeviceBuffer<u8>) -> Result<(), GpuError> {
        buffer.zero(self.gpu, "the wavefront's state")
    }

    fn write(&mut self, buffer: &mut DeviceBuffer<u8>, bytes: &[u8]) -> Result<(), GpuError> {
        buffer.write(self.gpu, "the wavefront's state", bytes)
    }

    fn read(&mut self, buffer: &DeviceBuffer<u8>, bytes: usize) -> Result<Vec<u8>, GpuError> {
        buffer.read_first(self.gpu, "the wavefront's results", bytes)
    }

    fn resident_grid<K: EntryPoint>(&mut self, block: u32) -> Result<Grid, GpuError> {
        let key = (K::NAME, block);
        if let Some((_, grid)) = self.kept.grids.iter().find(|(k, _)| *k == key) {
            return Ok(*grid);
        }
        let function = self.timeline.function::<K>()?.clone();
        let info = self.gpu.kernel_info(K::NAME, &function, block)?;
        let threads = info.blocks_per_multiprocessor.max(1) * self.gpu.info().multiprocessors * block;
        let grid = Grid {
            blocks: threads.div_ceil(block),
            block,
        };
        self.kept.kernels.push(info);
        self.kept.grids.push((key, grid));
        Ok(grid)
    }

    fn launch<K: EntryPoint<Args = WavefrontArgs> + QueueKernel>(
        &mut self,
        grid: Grid,
        args: &WavefrontArgs,
        iteration: u32,
    ) -> Result<(), GpuError> {
        let record = LaunchRecord {
            iteration,
            ..LaunchRecord::default()
        };
        let index = self
            .timeline
            .launch::<K>(linear(grid.blocks * grid.block, grid.block), args, record)?;
        debug_assert_eq!(index, self.item_counts.len(), "one item count per launch");
        self.item_counts.push(K::items);
        Ok(())
    }

    fn poll(&mut self, control: &DeviceBuffer<u8>) -> Result<Option<Control>, GpuError> {
        let slot = self.polls % LAG;
        self.polls += 1;
        self.marks[slot] = self.gpu.launch_mark();
        self.kept.snapshots[slot].copy_from(self.gpu, control, "the schedule")?;
        if self.polls < LAG {
            return Ok(None);
        }
        // The oldest snapshot: LAG - 1 iterations behind the newest. Once
        // its copy is done, so are the launches queued before it.
        let oldest = self.polls % LAG;
        let bytes = self.kept.snapshots[oldest].read(self.gpu, "the schedule")?;
        self.gpu.finished_through(self.marks[oldest]);
        Ok(Control::from_bytes(bytes))
    }
}

/// The GPU back ends report one error type: a configuration the wavefront
/// refuses reads as the megakernel's does ("invalid wavefront
/// configuration: ...").
impl From<WavefrontError<GpuError>> for GpuError {
    fn from(e: WavefrontError<GpuError>) -> Self {
        match e {
            WavefrontError::Config(error) => GpuError::Config {
                what: "wavefront",
                error,
            },
            WavefrontError::Machine(e) => e,
        }
    }
}

/// Renders `job` with the wavefront on `gpu`.
pub fn render(
    gpu: &Gpu,
    job: &RenderJob,
    config: &WavefrontConfig,
    progress: ProgressCallback,
) -> Result<RenderOutput, GpuError> {
    render_items(gpu, job, config, job.work_items(), progress)
}

/// Renders the work items `work` (pixel-samples, see [`WorkItems`]) of
/// `job` with the wavefront on `gpu`; pixels outside them stay zero.
pub fn render_items(
    gpu: &Gpu,
    job: &RenderJob,
    config: &WavefrontConfig,
    work: (WorkItems, u64),
    progress: ProgressCallback,
) -> Result<RenderOutput, GpuError> {
    let mut session = WaveSession::open(gpu, job, config, work.1)?;
    session.render(job, work, progress)?;
    session.read_back(job)
}

/// The wavefront on one GPU over one or more render loops (the chunks of
/// a split render, [`crate::render::split`]): the scene, the path pool and
/// the film allocated once, each loop's film and counters added to the
/// film and counters in the GPU's memory, read back once.
pub struct WaveSession<'a> {
    /// The handle with the render's register cap, features and arithmetic.
    gpu: Gpu,
    config: WavefrontConfig,
    scene: SceneOnDevice<'a>,
    /// The scene as the kernels read it (valid while `scene` lives).
    view: SceneView<'static>,
    memory: WaveMemory<DeviceBuffer<u8>>,
    /// The machine's lookups and snapshots between loops.
    kept: LaunchCache,
    upload_ms: f64,
    /// The last loop's launches and how each counts its items.
    last: (Vec<LaunchRecord>, Vec<ItemCount>),
}

impl<'a> WaveSession<'a> {
    /// Uploads `job`'s scene to `gpu` (unless the job's was uploaded before)
    /// and allocates the memory of renders of its image, the pool sized for
    /// `work` items: the most that one loop will render.
    pub fn open(gpu: &Gpu, job: &RenderJob<'a>, config: &WavefrontConfig, work: u64) -> Result<Self, GpuError> {
        let resolved = resolve(config, (job, work), || {
            gpu.memory().map(|(free, _)| free).map_err(WavefrontError::Machine)
        })?;
        let gpu = gpu
            .with_register_cap(config.max_registers)
            .with_features(resolved.features)
            .with_arithmetic(config.arithmetic);
        let upload_start = Instant::now();
        let scene = DeviceScene::for_job(&gpu, job)?;
        let mut kept = LaunchCache::new(&gpu)?;
        let memory = WaveMemory::alloc(&mut GpuMachine::resume(&gpu, &mut kept, false), job, resolved)?;
        gpu.synchronize("uploading the scene")?;
        let upload_ms = upload_start.elapsed().as_secs_f64() * 1e3;
        // SAFETY: the scene stays uploaded while the session can launch
        // (`scene` is dropped with the session, after `view`'s last use).
        let view = unsafe { scene.view(&gpu, job.scene, job.camera, resolved.features).detached() };
        Ok(WaveSession {
            config: *config,
            scene,
            view,
            memory,
            kept,
            upload_ms,
            last: (Vec::new(), Vec::new()),
            gpu,
        })
    }

    /// Renders the work items `work` of `job` (the image and scene the
    /// session was opened for) and adds them to the session's film.
    /// Returns the samples per pixel rendered.
    pub fn render(
        &mut self,
        job: &RenderJob,
        work: (WorkItems, u64),
        progress: ProgressCallback,
    ) -> Result<u32, GpuError> {
        let mut machine = GpuMachine::resume(&self.gpu, &mut self.kept, self.config.time_launches);
        let spp = self
            .memory
            .run(&mut machine, job, self.view, &self.config, work, progress)?;
        self.last = (machine.timeline.finish()?, machine.item_counts);
        Ok(spp)
    }

    /// The session's film and counters, read back (as often as asked: the
    /// sum stays), with the last loop's profile; its time is the loops' sum.
    pub fn read_back(&mut self, job: &RenderJob) -> Result<RenderOutput, GpuError> {
        let gpu = &self.gpu;
        let out = self.memory.read_back(
            &mut GpuMachine::resume(gpu, &mut self.kept, false),
            job.pixel_count(),
            self.config.count_divergence,
        )?;
        let (launches, item_counts) = &self.last;
        let mut launches = launches.clone();
        fill_items(&mut launches, item_counts, &out.log);
        let profile = GpuProfile {
            device: gpu.info().clone(),
            kernels: self.kept.kernels.clone(),
            launches,
            upload_ms: self.upload_ms,
            readback_ms: out.readback_time.as_secs_f64() * 1e3,
            loop_ms: out.loop_time.as_secs_f64() * 1e3,
            scene_bytes: self.scene.byte_len(),
            film_bytes: out.film.len() * size_of::<device::film::FixedRgb>(),
            divergence: out
                .divergence
                .iter()
                .map(|(class, d)| (kernel_of(*class).to_string(), *d))
                .collect(),
            state_bytes: out.state_bytes,
            pool_capacity: out.capacity as usize,
        };
        Ok(RenderOutput {
            gpu: Some(profile),
            ..out.into_render_output(&gpu.info().name, &self.config)
        })
    }
}

/// Gives each launch the number of items its kernel counts
/// (`item_counts`, in launch order) in its iteration's record of `log`
/// (launches of iterations beyond the log keep 0).
fn fill_items(launches: &mut [LaunchRecord], item_counts: &[ItemCount], log: &[IterationRecord]) {
    debug_assert_eq!(launches.len(), item_counts.len(), "one item count per launch");
    for (l, count) in launches.iter_mut().zip(item_counts) {
        if let Some(r) = log.get(l.iteration as usize) {
            l.items = count(r);
        }
    }
}
