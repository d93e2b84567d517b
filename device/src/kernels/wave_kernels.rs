//! The wavefront's queue kernels and their one argument struct: plan,
//! refill, generate, extend, shadow and the tail drain (the shading kernels, one per class,
//! are in [`super::shade`]; the prefix-sum compaction is in
//! [`super::scan`]; the sort by variant in [`super::sort`]). Each is a
//! [`QueueKernel`]: it names the queues it reads and writes in its `Io`
//! type, its body sees those and no other, and it says how many entries
//! an iteration's launches of it go over. Each runs one stage of
//! [`crate::stages`] for every entry of its queue; paths live in the
//! [`PathPool`] between launches.
//!
//! Every queue length is read on the device, from the plan that
//! [`Schedule`] wrote at the start of the iteration or from the queue
//! counters: the host launches grids of the threads that fit on the GPU at
//! once, and each thread strides over the queue (persistent threads).
//! An iteration is therefore a fixed sequence of launches that the host
//! enqueues without waiting.
//!
//! [`Schedule`]: crate::schedule::Schedule

use crate::accel::Traversal;
use crate::film::{FixedRgb, is_invalid_sample};
use crate::integrator::finish_path;
use crate::kernel::{Kernel, Thread};
use crate::launch::{Compaction, LaunchCounters, MaterialSort};
use crate::material::AnyMaterial;
use crate::math::Rgb;
use crate::observe::{DivergenceCounters, Unobserved};
use crate::queue::{Control, PathPool, Queues, Slot, WorkQueue};
use crate::scene::{RenderParams, SceneView};
use crate::shading::ShadeClass;
use crate::stages::{ShadowRay, extend::extend, generate::generate};
use crate::warp::{Unsynchronised, WARP_SIZE, active_mask, ballot, lane_id, match_any, reserve, shuffle_index};
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Which pixel-samples the work items are: item `w` is sample
/// `first_sample + w / pixels` of pixel `first_pixel + w % pixels`. A whole
/// render is `(0, width × height, 0)`; `wavepath verify` traces single
/// pixel-samples with `(pixel, 1, sample)`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkItems {
    /// Pixel of item 0.
    pub first_pixel: u32,
    /// Pixels per sample round.
    pub pixels: u32,
    /// Sample of item 0.
    pub first_sample: u32,
}

impl WorkItems {
    /// Every sample of every one of `pixels` pixels.
    pub fn whole_image(pixels: u32) -> Self {
        WorkItems {
            first_pixel: 0,
            pixels,
            first_sample: 0,
        }
    }

    /// The pixel and sample of work item `w`.
    #[inline(always)]
    pub fn item(&self, w: u64) -> (u32, u32) {
        let pixels = self.pixels as u64;
        (
            self.first_pixel + (w % pixels) as u32,
            self.first_sample + (w / pixels) as u32,
        )
    }
}

/// The one argument of every wavefront kernel: what every queue kernel
/// sees ([`CommonArgs`]) and the queues, which each gets only by name
/// ([`QueueKernel::Io`]). Between iterations the host only exchanges the two
/// ray queues ([`Queues::swapped`]).
///
/// Contract: every pointer is memory of the side that runs the kernels;
/// the pool and queues were laid out for the same capacity as the
/// schedule's, the queues' counters in the control block; `film` holds
/// one value per image pixel, `counters` and `control` one value;
/// `divergence` is null or [`ShadeClass::COUNT`] values.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct WavefrontArgs {
    /// The render, the pool, the control block and the outputs.
    pub common: CommonArgs,
    /// Every queue, and the compaction's scratch.
    pub queues: Queues,
}

/// What every queue kernel sees: everything but the queues.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CommonArgs {
    /// The scene.
    pub scene: SceneView<'static>,
    /// Size, depth, seed, roulette and view.
    pub params: RenderParams,
    /// Path state.
    pub pool: PathPool,
    /// Schedule and queue counters.
    pub control: *mut Control,
    /// One fixed-point sum per pixel.
    pub film: *mut FixedRgb,
    /// Rays traced by the drain, and invalid samples.
    pub counters: *mut LaunchCounters,
    /// Per shading class, lanes at the material branch; null: not counted.
    pub divergence: *mut DivergenceCounters,
    /// Which pixel-samples the work items are.
    pub work: WorkItems,
    /// How survivors are gathered.
    pub compaction: Compaction,
    /// One record per iteration, for the launch profile ([`Plan`] writes it).
    pub log: *mut IterationRecord,
    /// Records `log` holds; later iterations are not recorded.
    pub log_len: u32,
    /// Whether the sorted class's queue is sorted by variant.
    pub material_sort: MaterialSort,
}

// Crosses to the GPU by value: the layout must not depend on the target.
const _: () = {
    use core::mem::size_of;
    let fields = size_of::<SceneView>() + size_of::<RenderParams>() + size_of::<PathPool>();
    assert!(size_of::<CommonArgs>() == fields + 5 * 8 + size_of::<WorkItems>() + 3 * 4);
    assert!(size_of::<WavefrontArgs>() == size_of::<CommonArgs>() + size_of::<Queues>());
};

/// A kernel that runs one step of the wavefront over its queues: a kernel
/// over [`WavefrontArgs`] whose body sees the queues it reads and writes,
/// picked by [`QueueKernel::io`], and no other; the data flow reads from
/// `Io` and `io`. Every queue kernel is a [`Kernel`] (the queues are
/// picked at the entry point), and declares the items of its launches
/// ([`QueueKernel::items`]).
pub trait QueueKernel {
    /// The queues it reads and writes: a queue, or a tuple of them.
    type Io: Copy;

    /// Phases separated by block-wide barriers ([`Kernel::PHASES`]).
    const PHASES: u32 = 1;

    /// Its queues, out of every queue.
    fn io(queues: &Queues) -> Self::Io;

    /// The entries its launches go over in the iteration that `record`
    /// logs: the items the launch profile gives each of those launches.
    fn items(record: &IterationRecord) -> u64;

    /// Runs `thread`'s part of `phase` over the queues `io`.
    ///
    /// # Safety
    /// The contract of [`WavefrontArgs`], for `a` and the queues `io` were
    /// picked from; every thread of a block must run every phase.
    unsafe fn run(thread: Thread, phase: u32, a: &CommonArgs, io: Self::Io);
}

impl<K: QueueKernel> Kernel for K {
    type Args = WavefrontArgs;
    const PHASES: u32 = K::PHASES;

    #[inline(always)]
    unsafe fn run(thread: Thread, phase: u32, a: &WavefrontArgs) {
        // SAFETY: the caller's contract, passed on.
        unsafe { <K as QueueKernel>::run(thread, phase, &a.common, K::io(&a.queues)) }
    }
}

/// What one iteration did: the plan's counts and the shading queues'
/// lengths. The host reads these back after the render to give each
/// launch of its profile the number of items it processed
/// ([`QueueKernel::items`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IterationRecord {
    /// New paths generated.
    pub generate: u32,
    /// Rays traced and shaded.
    pub trace: u32,
    /// Paths finished by the drain.
    pub drain: u32,
    /// Survivors the refill kernels went over (0 when the plan did not
    /// compact).
    pub compacted: u32,
    /// Entries of each shading queue.
    pub shade: [u32; ShadeClass::COUNT],
    /// Shadow rays traced.
    pub shadow: u32,
}

// SAFETY: `#[repr(C)]`, u32 fields only, hence no padding.
unsafe impl crate::kernel::Plain for IterationRecord {}

impl CommonArgs {
    /// The schedule's plan and the counters.
    ///
    /// # Safety
    /// `control` must be valid (the contract) and not written concurrently.
    #[inline(always)]
    pub(super) unsafe fn control(&self) -> &Control {
        // SAFETY: the caller's contract.
        unsafe { &*self.control }
    }
}

/// Calls `f` for every `i < count`, warp by warp, each warp taking the
/// next [`WARP_SIZE`] entries from `taken` until none are left: persistent
/// threads (Aila and Laine 2009), which balance the load of queues whose
/// entries cost very different times (traversal, whole paths).
///
/// # Safety
/// `taken` must be valid and start at 0 for this queue; every lane of the
/// calling warp must call this.
#[inline(always)]
unsafe fn fetch_by_warp(taken: *mut u32, count: u32, mut f: impl FnMut(u32)) {
    loop {
        let mut base = 0;
        if lane_id() == 0 {
            // SAFETY: the caller's contract.
            base = unsafe { AtomicU32::from_ptr(taken) }.fetch_add(WARP_SIZE, Ordering::Relaxed);
        }
        let base = shuffle_index(base, 0, u32::MAX);
        if base >= count {
            return;
        }
        let i = base + lane_id();
        if i < count {
            f(i);
        }
    }
}

/// Calls `f` for every `i < count`, strided over the grid.
#[inline(always)]
pub(super) fn grid_stride(thread: &Thread, count: u32, mut f: impl FnMut(u32)) {
    let stride = thread.grid_threads_x();
    let mut i = thread.global_x();
    while i < count {
        f(i);
        i += stride;
    }
}

/// Plans the iteration (one thread): [`crate::schedule::Schedule::plan`]
/// over the survivors in `rays_in`, and logs the plan and the last
/// iteration's shading-queue lengths.
pub struct Plan;

impl QueueKernel for Plan {
    type Io = WorkQueue<Slot>;

    fn io(q: &Queues) -> Self::Io {
        q.rays_in
    }

    /// The plan is one item: the iteration it plans.
    fn items(_: &IterationRecord) -> u64 {
        1
    }

    #[inline(always)]
    unsafe fn run(thread: Thread, _phase: u32, a: &CommonArgs, rays_in: Self::Io) {
        if thread.global_x() != 0 {
            return;
        }
        // SAFETY: the only thread touching the control block and the log
        // now; records are written below `log_len` only.
        unsafe {
            let control = &mut *a.control;
            let it = control.schedule.iteration;
            if it > 0 && it - 1 < a.log_len {
                let last = &mut *a.log.add(it as usize - 1);
                last.shade = control.counters.len.shade;
                last.shadow = control.counters.len.shadow;
            }
            control.plan(rays_in.count());
            if it < a.log_len {
                let s = &control.schedule;
                *a.log.add(it as usize) = IterationRecord {
                    generate: s.generate,
                    trace: s.trace,
                    drain: s.drain,
                    compacted: s.compacting(),
                    shade: [0; ShadeClass::COUNT],
                    shadow: 0,
                };
            }
        }
    }
}

/// Refill, step 1: marks the slots of the survivors in `rays_in` (in
/// `queue_pos`).
pub struct MarkSurvivors;

impl QueueKernel for MarkSurvivors {
    type Io = WorkQueue<Slot>;

    fn io(q: &Queues) -> Self::Io {
        q.rays_in
    }

    fn items(r: &IterationRecord) -> u64 {
        r.compacted as u64
    }

    #[inline(always)]
    unsafe fn run(thread: Thread, _phase: u32, a: &CommonArgs, rays_in: Self::Io) {
        // SAFETY: the contract of `WavefrontArgs`; queue entries are slots.
        unsafe {
            let s = a.control().schedule;
            grid_stride(&thread, s.compacting(), |i| {
                *a.pool.queue_pos.add(rays_in.get(i).index()) = s.survivor_mark();
            });
        }
    }
}

/// Refill, step 2: pushes the unmarked (free) slots below the survivor
/// count to `holes`: as many as there are survivors above it.
pub struct FindHoles;

impl QueueKernel for FindHoles {
    type Io = WorkQueue<Slot>;

    fn io(q: &Queues) -> Self::Io {
        q.holes
    }

    fn items(r: &IterationRecord) -> u64 {
        r.compacted as u64
    }

    #[inline(always)]
    unsafe fn run(thread: Thread, _phase: u32, a: &CommonArgs, holes: Self::Io) {
        // SAFETY: the contract of `WavefrontArgs`; slots stay below the
        // survivor count, itself below the capacity.
        unsafe {
            let s = a.control().schedule;
            grid_stride(&thread, s.compacting(), |slot| {
                let free = *a.pool.queue_pos.add(slot as usize) != s.survivor_mark();
                let group = ballot(active_mask(), free);
                if free {
                    holes.push(group, Slot(slot));
                }
            });
        }
    }
}

/// Refill, step 3: moves every survivor in `rays_in` whose slot is at or
/// above the survivor count into one of the `holes` below it, so that the
/// survivors occupy slots `0..survivors` and the new paths the contiguous
/// slots after them.
pub struct MoveSurvivors;

impl QueueKernel for MoveSurvivors {
    type Io = (WorkQueue<Slot>, WorkQueue<Slot>);

    fn io(q: &Queues) -> Self::Io {
        (q.rays_in, q.holes)
    }

    fn items(r: &IterationRecord) -> u64 {
        r.compacted as u64
    }

    #[inline(always)]
    unsafe fn run(thread: Thread, _phase: u32, a: &CommonArgs, (rays_in, holes): Self::Io) {
        // SAFETY: the contract of `WavefrontArgs`; each mover takes its own
        // hole (one atomic each), and holes are free slots.
        unsafe {
            let s = a.control().schedule;
            grid_stride(&thread, s.compacting(), |i| {
                let slot = rays_in.get(i);
                let moves = slot.0 >= s.survivors;
                let group = ballot(active_mask(), moves);
                if moves {
                    let taken = &raw mut (*a.control).counters.holes_taken;
                    let hole = holes.get(reserve(taken, group));
                    a.pool.store(hole, &a.pool.load(slot));
                    rays_in.set(i, hole);
                }
            });
        }
    }
}

/// Starts the planned new paths: work items `next_work - generate ..` go to
/// the slots and `rays_in` places after the survivors.
pub struct Generate;

impl QueueKernel for Generate {
    type Io = WorkQueue<Slot>;

    fn io(q: &Queues) -> Self::Io {
        q.rays_in
    }

    fn items(r: &IterationRecord) -> u64 {
        r.generate as u64
    }

    #[inline(always)]
    unsafe fn run(thread: Thread, _phase: u32, a: &CommonArgs, rays_in: Self::Io) {
        // SAFETY: the contract of `WavefrontArgs`; the plan keeps every
        // index below the capacity.
        unsafe {
            let s = a.control().schedule;
            let base = s.next_work - s.generate as u64;
            grid_stride(&thread, s.generate, |i| {
                let slot = Slot(s.survivors + i);
                let (pixel, sample) = a.work.item(base + i as u64);
                a.pool.store(slot, &generate(&a.scene, &a.params, pixel, sample));
                rays_in.set(s.survivors + i, slot);
            });
        }
    }
}

/// Traces the ray of every path in `rays_in` and pushes each to the `shade`
/// queue of its class (warp-aggregated atomics). Warps fetch rays as they
/// finish (persistent threads).
pub struct Extend<T>(PhantomData<T>);

impl<T: Traversal> QueueKernel for Extend<T> {
    // NOTE: `shade` is indexed at run time, so it is copied out of the
    // kernel parameter: indexing the parameter itself would copy all of it
    // to local memory.
    type Io = (WorkQueue<Slot>, [WorkQueue<Slot>; ShadeClass::COUNT]);

    fn io(q: &Queues) -> Self::Io {
        (q.rays_in, q.shade)
    }

    fn items(r: &IterationRecord) -> u64 {
        r.trace as u64
    }

    #[inline(always)]
    unsafe fn run(_thread: Thread, _phase: u32, a: &CommonArgs, (rays_in, shade): Self::Io) {
        // SAFETY: the contract of `WavefrontArgs`; queue entries are slots.
        unsafe {
            let count = a.control().schedule.trace;
            fetch_by_warp(&raw mut (*a.control).counters.extend_taken, count, |i| {
                let slot = rays_in.get(i);
                let ray = a.pool.ray(slot);
                let hit = extend::<T>(&a.scene, &ray);
                let class = match &hit {
                    None => ShadeClass::Escaped,
                    Some(h) => {
                        a.pool.store_hit(slot, h);
                        a.scene.materials.as_slice()[h.material as usize].kind.class()
                    }
                };
                *a.pool.queue_pos.add(slot.index()) = i;
                let group = match_any(active_mask(), class as u32);
                shade[class as usize].push(group, slot);
            });
        }
    }
}

/// Adds a contribution (light a path found, or an unblocked shadow ray's) to pixel `pixel` with the megakernel's rule (invalid
/// contributions are counted, not added), in order-independent fixed point.
///
/// # Safety
/// `film` holds `pixel`; `counters` is one value.
#[inline(always)]
pub(super) unsafe fn deposit(radiance: Rgb, pixel: u32, film: *mut FixedRgb, counters: *mut LaunchCounters) {
    // SAFETY: the caller's contract.
    unsafe {
        if is_invalid_sample(radiance) {
            AtomicU64::from_ptr(&raw mut (*counters).invalid_samples).fetch_add(1, Ordering::Relaxed);
            return;
        }
        let f = FixedRgb::from_radiance(radiance);
        let px = film.add(pixel as usize);
        AtomicU64::from_ptr(&raw mut (*px).r).fetch_add(f.r, Ordering::Relaxed);
        AtomicU64::from_ptr(&raw mut (*px).g).fetch_add(f.g, Ordering::Relaxed);
        AtomicU64::from_ptr(&raw mut (*px).b).fetch_add(f.b, Ordering::Relaxed);
    }
}

/// The tail drain: once every sample has been issued and few paths remain,
/// each remaining path of `rays_in` is traced to its end by one thread
/// (extend and shade in a loop, as the megakernel does), instead of paying
/// a full iteration of launches per remaining bounce. It holds the
/// features bound when its module is loaded, as the megakernel does.
pub struct Drain<T>(PhantomData<T>);

impl<T: Traversal> QueueKernel for Drain<T> {
    type Io = WorkQueue<Slot>;

    fn io(q: &Queues) -> Self::Io {
        q.rays_in
    }

    fn items(r: &IterationRecord) -> u64 {
        r.drain as u64
    }

    #[inline(always)]
    unsafe fn run(_thread: Thread, _phase: u32, a: &CommonArgs, rays_in: Self::Io) {
        // SAFETY: the contract of `WavefrontArgs`; queue entries are slots.
        unsafe {
            let count = a.control().schedule.drain;
            fetch_by_warp(
                &raw mut (*a.control).counters.drain_taken,
                count,
                // Inlined: see `kernels` on closures and local memory.
                #[inline(always)]
                |i| {
                    let mut path = a.pool.load(rays_in.get(i));
                    let pixel = path.pixel;
                    let light = |c| deposit(c, pixel, a.film, a.counters);
                    let rays = finish_path::<T, AnyMaterial>(
                        &a.scene,
                        &a.params,
                        &mut path,
                        &Unobserved,
                        &mut Unsynchronised,
                        |_, _| {},
                        light,
                    );
                    AtomicU64::from_ptr(&raw mut (*a.counters).rays).fetch_add(rays as u64, Ordering::Relaxed);
                },
            );
        }
    }
}

/// Traces every ray in `shadow` (any hit) and adds the contribution of
/// each unblocked one to its pixel. Warps fetch rays as they finish
/// (persistent threads).
pub struct Shadow<T>(PhantomData<T>);

impl<T: Traversal> QueueKernel for Shadow<T> {
    type Io = WorkQueue<ShadowRay>;

    fn io(q: &Queues) -> Self::Io {
        q.shadow
    }

    fn items(r: &IterationRecord) -> u64 {
        r.shadow as u64
    }

    #[inline(always)]
    unsafe fn run(_thread: Thread, _phase: u32, a: &CommonArgs, shadow: Self::Io) {
        // SAFETY: the contract of `WavefrontArgs`; entries below the
        // queue's count were pushed this iteration.
        unsafe {
            fetch_by_warp(&raw mut (*a.control).counters.shadow_taken, shadow.count(), |i| {
                let ray = shadow.get(i);
                if let Some(light) = ray.unblocked::<T>(&a.scene) {
                    deposit(light, ray.pixel, a.film, a.counters);
                }
            });
        }
    }
}

crate::kernel::entry_points! {
    wf_plan => Plan,
    wf_mark_survivors => MarkSurvivors,
    wf_find_holes => FindHoles,
    wf_move_survivors => MoveSurvivors,
    wf_generate => Generate,
}
