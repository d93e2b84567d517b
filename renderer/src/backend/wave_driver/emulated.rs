//! `cpu-wave`: the wavefront's kernels run on the host, one thread at a
//! time. Each launch runs its blocks in order and, within a block, every
//! thread through one phase before any thread starts the next (the block
//! barriers); warps are one lane wide ([`device::warp`]). The schedule, the
//! queues, both compactions and the drain therefore run exactly the code
//! the GPU runs, and the film must equal the `cpu` back end's bit for bit.
//! It is a correctness tool, not a fast renderer.

use super::launches::{WaveMemory, WavefrontOutput};
use super::{Grid, Machine, WavefrontError, resolve};
use crate::backend::{ProgressCallback, RenderJob, SizedBy};
use crate::settings::wave_config::WavefrontConfig;
use device::features::Features;
use device::kernel::{EntryPoint, Kernel, Plain, Thread};
use device::kernels::wave_kernels::{QueueKernel, WavefrontArgs, WorkItems};
use device::queue::Control;
use std::convert::Infallible;

/// Threads the emulation strides with per launch: two blocks, so that the
/// grid-stride loops and per-block work are exercised.
const RESIDENT_BLOCKS: u32 = 2;

/// One 256-byte-aligned unit of emulated memory.
#[derive(Clone, Copy)]
#[repr(C, align(256))]
struct Chunk([u8; 256]);

/// A zeroed host allocation, reached only through its address.
pub struct HostBuffer {
    /// Owns the memory; never touched except through `address`.
    _memory: Vec<Chunk>,
    address: *mut u8,
    bytes: usize,
}

/// The host as a machine for the wavefront.
pub struct Emulator;

impl Machine for Emulator {
    type Buffer = HostBuffer;
    /// Host memory is allocated like any other (a failure aborts), and the
    /// kernels run as plain calls: nothing can fail.
    type Error = Infallible;

    fn alloc(&mut self, _what: &str, _sized_by: SizedBy, bytes: usize) -> Result<HostBuffer, Infallible> {
        let mut memory = vec![Chunk([0; 256]); bytes.div_ceil(256).max(1)];
        let address = memory.as_mut_ptr().cast::<u8>();
        Ok(HostBuffer {
            _memory: memory,
            address,
            bytes,
        })
    }

    fn address(&self, buffer: &HostBuffer) -> *mut u8 {
        buffer.address
    }

    fn zero(&mut self, buffer: &mut HostBuffer) -> Result<(), Infallible> {
        // SAFETY: the buffer holds `bytes` bytes, and no kernel runs while
        // the host writes.
        unsafe { std::ptr::write_bytes(buffer.address, 0, buffer.bytes) };
        Ok(())
    }

    fn write(&mut self, buffer: &mut HostBuffer, bytes: &[u8]) -> Result<(), Infallible> {
        assert!(
            bytes.len() <= buffer.bytes,
            "a write past the end of an emulated buffer"
        );
        // SAFETY: the buffer holds at least `bytes.len()` bytes, and no
        // kernel runs while the host writes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer.address, bytes.len()) };
        Ok(())
    }

    fn read(&mut self, buffer: &HostBuffer, bytes: usize) -> Result<Vec<u8>, Infallible> {
        assert!(bytes <= buffer.bytes, "a read past the end of an emulated buffer");
        let mut out = vec![0; bytes];
        // SAFETY: as for `write`.
        unsafe { std::ptr::copy_nonoverlapping(buffer.address, out.as_mut_ptr(), bytes) };
        Ok(out)
    }

    fn resident_grid<K: EntryPoint>(&mut self, block: u32) -> Result<Grid, Infallible> {
        Ok(Grid {
            blocks: RESIDENT_BLOCKS,
            block,
        })
    }

    fn launch<K: EntryPoint<Args = WavefrontArgs> + QueueKernel>(
        &mut self,
        grid: Grid,
        args: &WavefrontArgs,
        _iteration: u32,
    ) -> Result<(), Infallible> {
        for block in 0..grid.blocks {
            for phase in 0..<K as Kernel>::PHASES {
                for index in 0..grid.block {
                    let thread = Thread {
                        block: [block, 0],
                        index: [index, 0],
                        block_dim: [grid.block, 1],
                        grid_dim: [grid.blocks, 1],
                    };
                    // SAFETY: the wavefront driver builds `args` from
                    // allocations of this emulator sized for the render,
                    // and runs every thread of every block through every
                    // phase, as the kernels' contracts require.
                    unsafe { <K as Kernel>::run(thread, phase, args) };
                }
            }
        }
        Ok(())
    }

    fn poll(&mut self, control: &HostBuffer) -> Result<Option<Control>, Infallible> {
        let bytes = self.read(control, size_of::<Control>())?;
        Ok(Control::from_bytes(&bytes))
    }
}

/// Why the emulated wavefront could not run: only its configuration.
pub type EmulatorError = WavefrontError<Infallible>;

/// Renders `job` with the wavefront emulated on the host.
pub fn render(
    job: &RenderJob,
    config: &WavefrontConfig,
    progress: ProgressCallback,
) -> Result<WavefrontOutput, EmulatorError> {
    render_items(job, config, job.work_items(), progress)
}

/// Renders the work items `work` (pixel-samples, see [`WorkItems`]) of
/// `job`, emulated on the host; pixels outside them stay zero.
pub fn render_items(
    job: &RenderJob,
    config: &WavefrontConfig,
    work: (WorkItems, u64),
    progress: ProgressCallback,
) -> Result<WavefrontOutput, EmulatorError> {
    let mut session = EmulatedSession::open(job, config, work.1)?;
    session.render(job, work, progress);
    Ok(session.read_back(job))
}

/// The emulated wavefront over one or more render loops (the chunks of a
/// split render, [`crate::render::split`]), as the GPU's
/// ([`crate::backend::gpu::wave_launch::WaveSession`]): its memory
/// allocated once, each loop's film and counters added to it.
pub struct EmulatedSession {
    config: WavefrontConfig,
    features: Features,
    memory: WaveMemory<HostBuffer>,
}

impl EmulatedSession {
    /// Allocates the memory of renders of `job`'s image, the pool sized
    /// for `work` items: the most that one loop will render.
    pub fn open(job: &RenderJob, config: &WavefrontConfig, work: u64) -> Result<Self, EmulatorError> {
        let resolved = resolve(config, (job, work), || {
            Err(WavefrontError::Config(
                "`auto` capacity needs a GPU's free memory; give a number of slots or a budget".into(),
            ))
        })?;
        let Ok(memory) = WaveMemory::alloc(&mut Emulator, job, resolved);
        Ok(EmulatedSession {
            config: *config,
            features: resolved.features,
            memory,
        })
    }

    /// Renders the work items `work` of `job` (the image and scene the
    /// session was opened for) and adds them to the session's film.
    /// Returns the samples per pixel rendered.
    pub fn render(&mut self, job: &RenderJob, work: (WorkItems, u64), progress: ProgressCallback) -> u32 {
        let view = job.scene.view(job.camera, self.features);
        // SAFETY: the scene outlives the render loop, which ends before
        // this returns.
        let scene = unsafe { view.detached() };
        let Ok(spp) = self.memory.run(&mut Emulator, job, scene, &self.config, work, progress);
        spp
    }

    /// The session's film and counters, with the last loop's log; its time
    /// is the loops' sum.
    pub fn read_back(&self, job: &RenderJob) -> WavefrontOutput {
        let Ok(out) = self
            .memory
            .read_back(&mut Emulator, job.pixel_count(), self.config.count_divergence);
        out
    }
}
