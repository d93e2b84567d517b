//! The wavefront path tracer (Laine, Karras and Aila 2013; the wavefront
//! integrator of pbrt-v4), independent of where it runs. Paths live in a
//! pool; every iteration is a fixed sequence of small kernels over queues:
//!
//! ```text
//! plan          one thread: the scheduler (device::schedule) decides how many
//!               new paths start, how many rays are traced or drained
//! refill        (when the schedule refills a pool that still has paths)
//!               three kernels move the survivors into the slots below
//!               their count
//! generate      new camera paths into the free slots after the survivors
//! extend        closest hit per queued ray; route to a shading queue
//! drain         (at the tail) finish the last paths one thread each
//! sort          (when the scene's coated materials use two or more
//!               variants) two kernels group the coated queue by variant
//! shade × k     one kernel per shading class the scene has; each queues
//!               its paths' shadow rays
//! shadow        (with next-event estimation) any hit per shadow ray; the
//!               unblocked ones add their light
//! compact       survivors into the next ray queue (atomic append inside
//!               the shading kernels, or three prefix-sum kernels)
//! ```
//!
//! Every queue length is read on the device, so the host enqueues
//! iterations without waiting and reads the schedule back only to see when
//! the render is done ([`launches`]). A [`Machine`] runs the kernels: the
//! GPU (`backend::gpu::wave_launch`) or the host's serial emulation
//! ([`emulated`]), which runs the same kernel code in warps of one lane so
//! that the whole schedule is tested bit for bit without a GPU. [`resolved`]
//! checks a configuration and resolves it for one render.
//!
//! Nothing here knows the GPU: a failure is a [`WavefrontError`], either
//! of the configuration or the machine's own error ([`Machine::Error`]).

pub mod emulated;
pub mod launches;
pub mod resolved;

pub use resolved::{Resolved, resolve};

use crate::backend::SizedBy;
use device::kernel::EntryPoint;
use device::kernels::wave_kernels::{QueueKernel, WavefrontArgs};
use device::queue::Control;

/// Why a wavefront render could not run, wherever it runs.
#[derive(Debug, thiserror::Error)]
pub enum WavefrontError<E> {
    /// The configuration is invalid, or asks for what the machine cannot give.
    #[error("invalid wavefront configuration: {0}")]
    Config(String),
    /// The machine failed (`E`: its own error, e.g. the GPU's).
    #[error(transparent)]
    Machine(E),
}

/// A 1D launch: blocks and threads per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Blocks.
    pub blocks: u32,
    /// Threads per block.
    pub block: u32,
}

/// Where the wavefront's kernels run and its memory lives.
pub trait Machine {
    /// An allocation the kernels read and write.
    type Buffer;
    /// Why an allocation, copy or launch failed.
    type Error;

    /// A zeroed allocation of `bytes`, aligned to 256; `what` names it in
    /// errors, and `sized_by` says what to shrink when it does not fit.
    fn alloc(&mut self, what: &str, sized_by: SizedBy, bytes: usize) -> Result<Self::Buffer, Self::Error>;

    /// The allocation's address as the kernels see it.
    fn address(&self, buffer: &Self::Buffer) -> *mut u8;

    /// Sets every byte of `buffer` to zero, after the work queued before.
    fn zero(&mut self, buffer: &mut Self::Buffer) -> Result<(), Self::Error>;

    /// Copies `bytes` to the start of `buffer`.
    fn write(&mut self, buffer: &mut Self::Buffer, bytes: &[u8]) -> Result<(), Self::Error>;

    /// Copies the first `bytes` of `buffer` back, once every launch before
    /// it has finished.
    fn read(&mut self, buffer: &Self::Buffer, bytes: usize) -> Result<Vec<u8>, Self::Error>;

    /// The grid of a grid-stride launch of kernel `K`: as many threads as
    /// fit on the machine at once, in blocks of `block` (a machine may keep
    /// it per kernel and block size).
    fn resident_grid<K: EntryPoint>(&mut self, block: u32) -> Result<Grid, Self::Error>;

    /// Launches kernel `K` over `grid` with `args`, as part of `iteration`.
    fn launch<K: EntryPoint<Args = WavefrontArgs> + QueueKernel>(
        &mut self,
        grid: Grid,
        args: &WavefrontArgs,
        iteration: u32,
    ) -> Result<(), Self::Error>;

    /// Called once per enqueued iteration with the control block: returns
    /// the control block as it stood after some earlier iteration (the GPU
    /// lags a few iterations behind, so the host never waits for the one it
    /// just enqueued), or `None` while nothing is known yet.
    fn poll(&mut self, control: &Self::Buffer) -> Result<Option<Control>, Self::Error>;
}
