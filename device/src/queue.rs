//! The wavefront's state: the path pool (structure of arrays, declared once
//! by `path_pool!`), the queues (typed [`WorkQueue`]s after pbrt-v4's,
//! each declared once by `queues!` with its entry type, its room and its
//! length counter), and the [`Control`] block of counters and schedule that
//! the kernels share. There is no list of free slots: the paths in flight
//! always occupy slots `0..n` after a refill ([`crate::schedule`]). Sizes,
//! offsets, counters and the bytes per path all derive from the two
//! declarations; the host never counts fields itself.
//!
//! Bytes per in-flight path: [`PathPool::BYTES_PER_PATH`] for path state,
//! [`Queues::bytes_per_path`] for queue entries and scratch words.

use crate::geometry::{Hit, PrimRef};
use crate::kernel::Plain;
use crate::math::{Ray, Rgb, Vec3};
use crate::rng::PathRng;
use crate::schedule::Schedule;
use crate::shading::{SORTED_CLASS, ShadeClass, VARIANTS};
use crate::stages::{PathState, ShadowRay};
use crate::warp::append;

/// Every field array starts on this boundary.
const FIELD_ALIGN: usize = 256;

const fn aligned(bytes: usize) -> usize {
    bytes.div_ceil(FIELD_ALIGN) * FIELD_ALIGN
}

/// Declares the path pool's fields once; derives the pointer struct, its
/// per-path size and its layout inside one allocation.
macro_rules! path_pool {
    ($($(#[$doc:meta])* $field:ident: $ty:ty),* $(,)?) => {
        /// Per-path state, one array per field, indexed by path slot.
        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        pub struct PathPool {
            $($(#[$doc])* pub $field: *mut $ty,)*
        }

        impl PathPool {
            /// Number of fields (one array each).
            pub const FIELDS: usize = [$(stringify!($field)),*].len();

            /// Bytes of state per path slot.
            pub const BYTES_PER_PATH: usize = 0 $(+ core::mem::size_of::<$ty>())*;

            /// Bytes of one allocation holding `capacity` slots.
            pub const fn bytes(capacity: usize) -> usize {
                0 $(+ aligned(core::mem::size_of::<$ty>() * capacity))*
            }

            /// Lays the fields out consecutively in one allocation.
            ///
            /// # Safety
            /// `base` must point to [`PathPool::bytes`]`(capacity)` bytes,
            /// aligned to 256, that outlive every use of the pool.
            pub unsafe fn from_base(base: *mut u8, capacity: usize) -> Self {
                let mut offset = 0;
                $(
                    // SAFETY: within the allocation by construction of `bytes`.
                    let $field = unsafe { base.add(offset) } as *mut $ty;
                    offset += aligned(core::mem::size_of::<$ty>() * capacity);
                )*
                let _ = offset;
                PathPool { $($field,)* }
            }
        }
    };
}

path_pool! {
    /// Current ray origin.
    origin: Vec3,
    /// Current ray direction.
    dir: Vec3,
    /// Path throughput.
    throughput: Rgb,
    /// Random stream key.
    rng: PathRng,
    /// Pixel index.
    pixel: u32,
    /// Segments traced before the current one.
    bounce: u32,
    /// Density of the scattering that chose the current ray (for MIS).
    bsdf_pdf: f32,
    /// Hit distance of the current segment.
    hit_t: f32,
    /// Outward normal at the hit.
    hit_normal: Vec3,
    /// Material at the hit.
    hit_material: u32,
    /// Primitive hit.
    hit_prim: PrimRef,
    /// The path's position in the ray queue of this iteration (for the
    /// order-preserving prefix-sum compaction); during a refill, a mark
    /// that the slot holds a survivor.
    queue_pos: u32,
}

impl PathPool {
    /// Reads the path in `slot`.
    ///
    /// # Safety
    /// `slot` must be below the capacity, in memory of the side that runs.
    #[inline(always)]
    pub unsafe fn load(&self, slot: Slot) -> PathState {
        let i = slot.index();
        // SAFETY: the caller guarantees `slot < capacity`.
        unsafe {
            PathState {
                ray: Ray::new(*self.origin.add(i), *self.dir.add(i)),
                throughput: *self.throughput.add(i),
                rng: *self.rng.add(i),
                pixel: *self.pixel.add(i),
                bounce: *self.bounce.add(i),
                bsdf_pdf: *self.bsdf_pdf.add(i),
            }
        }
    }

    /// Writes the path in `slot`.
    ///
    /// # Safety
    /// As for [`PathPool::load`].
    #[inline(always)]
    pub unsafe fn store(&self, slot: Slot, p: &PathState) {
        let i = slot.index();
        // SAFETY: the caller guarantees `slot < capacity`.
        unsafe {
            *self.rng.add(i) = p.rng;
            *self.pixel.add(i) = p.pixel;
            self.store_shaded(slot, p);
        }
    }

    /// Writes only what shading can change (ray, throughput, bounce,
    /// scattering density); the random key and pixel stay as
    /// generated.
    ///
    /// # Safety
    /// As for [`PathPool::load`].
    #[inline(always)]
    pub unsafe fn store_shaded(&self, slot: Slot, p: &PathState) {
        let i = slot.index();
        // SAFETY: the caller guarantees `slot < capacity`.
        unsafe {
            *self.origin.add(i) = p.ray.origin;
            *self.dir.add(i) = p.ray.dir;
            *self.throughput.add(i) = p.throughput;
            *self.bounce.add(i) = p.bounce;
            *self.bsdf_pdf.add(i) = p.bsdf_pdf;
        }
    }

    /// The current ray of `slot`.
    ///
    /// # Safety
    /// As for [`PathPool::load`].
    #[inline(always)]
    pub unsafe fn ray(&self, slot: Slot) -> Ray {
        // SAFETY: the caller guarantees `slot < capacity`.
        unsafe { Ray::new(*self.origin.add(slot.index()), *self.dir.add(slot.index())) }
    }

    /// Records what shading needs of the hit of `slot`'s current ray.
    ///
    /// # Safety
    /// As for [`PathPool::load`].
    #[inline(always)]
    pub unsafe fn store_hit(&self, slot: Slot, h: &Hit) {
        let i = slot.index();
        // SAFETY: the caller guarantees `slot < capacity`.
        unsafe {
            *self.hit_t.add(i) = h.t;
            *self.hit_normal.add(i) = h.normal;
            *self.hit_material.add(i) = h.material;
            *self.hit_prim.add(i) = h.prim;
        }
    }

    /// The hit recorded for `slot`, completed exactly as [`Hit::new`]
    /// completes it for `ray`.
    ///
    /// # Safety
    /// As for [`PathPool::load`].
    #[inline(always)]
    pub unsafe fn hit(&self, slot: Slot, ray: &Ray) -> Hit {
        let i = slot.index();
        // SAFETY: the caller guarantees `slot < capacity`.
        unsafe {
            let t = *self.hit_t.add(i);
            Hit {
                t,
                point: ray.at(t),
                normal: *self.hit_normal.add(i),
                material: *self.hit_material.add(i),
                prim: *self.hit_prim.add(i),
            }
        }
    }
}

/// A path's slot in the [`PathPool`]: the entry of every queue of paths.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot(pub u32);

impl Slot {
    /// The slot as an index into the pool's arrays.
    #[inline(always)]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Declares the queues once: each is a [`WorkQueue`] of its entry type, or
/// an array of them (`name[N]`), with room for one entry per path slot
/// (only when the render traces shadow rays, for one marked
/// `where shadow_rays`) and one length counter in [`QueueLengths`]. Then
/// the scratch lists of the compaction, one `u32` per slot, no counter.
/// Derives the pointer struct, the counters, the bytes per path and the
/// layout inside one allocation; the prefix-sum block totals follow.
macro_rules! queues {
    (
        queues {
            $($(#[$doc:meta])* $queue:ident $([$n:expr])?: $ty:ty $(where $when:ident)?,)*
        }
        lists {
            $($(#[$list_doc:meta])* $list:ident,)*
        }
    ) => {
        /// Every queue of the wavefront and the compaction's scratch lists.
        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        pub struct Queues {
            $($(#[$doc])* pub $queue: queues!(@queue $ty $(, $n)?),)*
            $($(#[$list_doc])* pub $list: *mut u32,)*
            /// Prefix-sum compaction: per-block totals, then offsets, then
            /// [`SCAN_BLOCK`] words of scratch.
            pub scan_blocks: *mut u32,
            /// Path slots.
            pub capacity: u32,
        }

        /// The length of every queue, in queue order (inside [`Control`]).
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct QueueLengths {
            $($(#[$doc])* pub $queue: queues!(@len $($n)?),)*
        }

        impl Queues {
            /// Number of queues (an array counts each of its queues).
            pub const QUEUES: usize = 0 $(+ queues!(@count $($n)?))*;

            /// Number of scratch lists.
            pub const LISTS: usize = [$(stringify!($list)),*].len();

            /// Bytes of queue entries and scratch words per path slot, with
            /// the queues only shadow rays need when `shadow_rays`.
            pub const fn bytes_per_path(shadow_rays: bool) -> usize {
                0 $(+ queues!(@count $($n)?) * queues!(@rows 1, shadow_rays $(, $when)?) * size_of::<$ty>())*
                    + 4 * Self::LISTS
            }

            /// Bytes of one allocation holding the queues of `capacity`
            /// slots (with those only shadow rays need when `shadow_rays`).
            pub const fn bytes(capacity: usize, shadow_rays: bool) -> usize {
                0 $(+ queues!(@count $($n)?) * aligned(size_of::<$ty>() * queues!(@rows capacity, shadow_rays $(, $when)?)))*
                    + Self::LISTS * aligned(4 * capacity)
                    + aligned(4 * (scan_blocks(capacity) + SCAN_BLOCK as usize))
            }

            /// Lays the queues out in one allocation, their counters in
            /// `lengths`.
            ///
            /// # Safety
            /// `base` must point to [`Queues::bytes`]`(capacity,
            /// shadow_rays)` bytes, aligned to 256, and `lengths` to one
            /// value, both outliving every use; a queue that only shadow
            /// rays need has no room unless `shadow_rays`.
            pub unsafe fn from_base(base: *mut u8, capacity: usize, shadow_rays: bool, lengths: *mut QueueLengths) -> Self {
                let mut offset = 0;
                let mut take = |bytes: usize| {
                    // SAFETY: the pieces taken add up to `bytes(capacity, shadow_rays)`.
                    let p = unsafe { base.add(offset) };
                    offset += aligned(bytes);
                    p
                };
                $(
                    let rows = queues!(@rows capacity, shadow_rays $(, $when)?);
                    // SAFETY: room for `rows` entries each, and one counter
                    // each in `lengths` (the caller's contract).
                    let $queue = unsafe {
                        queues!(@take take, (&raw mut (*lengths).$queue).cast::<u32>(), size_of::<$ty>() * rows $(, $n)?)
                    };
                )*
                $(let $list = take(4 * capacity).cast::<u32>();)*
                Queues {
                    $($queue,)*
                    $($list,)*
                    // The block totals follow the lists.
                    scan_blocks: take(0).cast::<u32>(),
                    capacity: capacity as u32,
                }
            }
        }

        // One queue (two pointers) per queue and one pointer per list, then
        // `scan_blocks` and the capacity: the same layout on both targets.
        const _: () = assert!(core::mem::size_of::<Queues>() == Queues::QUEUES * 16 + (Queues::LISTS + 1) * 8 + 8);
    };
    (@queue $ty:ty) => { WorkQueue<$ty> };
    (@queue $ty:ty, $n:expr) => { [WorkQueue<$ty>; $n] };
    (@len) => { u32 };
    (@len $n:expr) => { [u32; $n] };
    (@count) => { 1 };
    (@count $n:expr) => { $n };
    (@rows $rows:expr, $shadow_rays:expr) => { $rows };
    (@rows $rows:expr, $shadow_rays:expr, shadow_rays) => { if $shadow_rays { $rows } else { 0 } };
    (@take $take:ident, $len:expr, $bytes:expr) => { WorkQueue::new($take($bytes), $len) };
    (@take $take:ident, $len:expr, $bytes:expr, $n:expr) => {
        core::array::from_fn::<_, { $n }, _>(|k| WorkQueue::new($take($bytes), $len.add(k)))
    };
}

queues! {
    queues {
        /// Slots whose ray is traced this iteration. Its length is the
        /// plan's; its counter holds the survivors pushed into it as the
        /// last iteration's `rays_out` until the plan takes them in.
        rays_in: Slot,
        /// Slots whose path continues (built by compaction).
        rays_out: Slot,
        /// One queue per shading class.
        shade[ShadeClass::COUNT]: Slot,
        /// During a refill: the free slots below the survivor count (the
        /// holes survivors move into). Its storage then holds the
        /// prefix-sum flags ([`Queues::alive`]).
        holes: Slot,
        /// Shadow rays of next-event estimation, from the shading kernels
        /// to the shadow kernel (room only when the render traces them).
        shadow: ShadowRay where shadow_rays,
    }
    lists {
        /// Prefix-sum compaction: per-warp counts, then offsets. One word per
        /// slot, enough for warps of one lane (the host's emulation). Before
        /// the compaction, while paths are shaded, the sorted class's queue
        /// ([`Queues::sorted`]).
        scan_warps,
    }
}

// One pointer per field: the same layout on both targets.
const _: () = assert!(core::mem::size_of::<PathPool>() == PathPool::FIELDS * 8);

/// Threads per block of the prefix-sum kernels.
pub const SCAN_BLOCK: u32 = 1024;

/// Blocks of the prefix-sum kernels over `capacity` entries.
pub const fn scan_blocks(capacity: usize) -> usize {
    capacity.div_ceil(SCAN_BLOCK as usize)
}

impl Queues {
    /// The queue of [`SORTED_CLASS`] sorted by variant, when the render
    /// sorts, with that class's length. It lives in `scan_warps`: the
    /// prefix-sum compaction writes that only after every shading kernel
    /// has run, and it holds one word per slot, as a queue needs. (A queue
    /// of its own would take the 4 bytes per path that keep 2^22 paths
    /// within the default 512 MiB.)
    #[inline(always)]
    pub fn sorted(&self) -> WorkQueue<Slot> {
        WorkQueue {
            entries: self.scan_warps.cast(),
            len: self.shade[SORTED_CLASS as usize].len,
        }
    }

    /// Prefix-sum compaction: 1 at each ray-queue position whose path
    /// continues. They live in the storage of `holes`, whose entries are
    /// spent once the refill is over, before any path is shaded.
    #[inline(always)]
    pub fn alive(&self) -> *mut u32 {
        self.holes.entries.cast()
    }

    /// The same queues with the two ray queues (and their counters)
    /// exchanged (between iterations).
    pub fn swapped(self) -> Self {
        Queues {
            rays_in: self.rays_out,
            rays_out: self.rays_in,
            ..self
        }
    }
}

/// A queue whose entries are values of `T` (pbrt-v4's `WorkQueue<T>`):
/// room for one entry per path slot, and a length counter that lives in
/// the [`Control`] block (so the plan reads and resets it with the others).
/// Producers push with one atomic per warp; a later kernel reads entries
/// `0..len`.
#[repr(C)]
#[derive(Debug)]
pub struct WorkQueue<T> {
    /// The entries, one per path slot.
    entries: *mut T,
    /// Entries pushed this iteration.
    len: *mut u32,
}

impl<T> Clone for WorkQueue<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for WorkQueue<T> {}

impl<T: Copy> WorkQueue<T> {
    /// The queue over `entries` with its counter at `len`.
    ///
    /// # Safety
    /// `entries` must point to room for one `T` per path slot, aligned for
    /// `T`, and `len` to a counter, both outliving every use; no iteration
    /// may push more entries than there is room for.
    unsafe fn new(entries: *mut u8, len: *mut u32) -> Self {
        WorkQueue {
            entries: entries.cast(),
            len,
        }
    }

    /// Appends `entry` for every lane of `group` that calls this (all of
    /// them must), with one atomic add per warp.
    ///
    /// # Safety
    /// The contract of [`Queues::from_base`]; `group` holds the calling lane.
    #[inline(always)]
    pub unsafe fn push(&self, group: u32, entry: T) {
        // SAFETY: the caller's contract.
        unsafe { append(self.len, group, entry, self.entries) }
    }

    /// Entry `i`.
    ///
    /// # Safety
    /// `i` must be below the entries written this iteration.
    #[inline(always)]
    pub unsafe fn get(&self, i: u32) -> T {
        // SAFETY: the caller's contract.
        unsafe { *self.entries.add(i as usize) }
    }

    /// Writes entry `i` (a place the plan or a count reserved).
    ///
    /// # Safety
    /// `i` must be below the room of the queue; no other thread writes it
    /// now.
    #[inline(always)]
    pub unsafe fn set(&self, i: u32, entry: T) {
        // SAFETY: the caller's contract.
        unsafe { *self.entries.add(i as usize) = entry }
    }

    /// The entries pushed (or counted) this iteration so far.
    ///
    /// # Safety
    /// The counter must not be written concurrently.
    #[inline(always)]
    pub unsafe fn count(&self) -> u32 {
        // SAFETY: the caller's contract.
        unsafe { *self.len }
    }

    /// Sets the count (a compaction that counts its entries itself).
    ///
    /// # Safety
    /// No other thread reads or writes the counter now.
    #[inline(always)]
    pub unsafe fn set_count(&self, count: u32) {
        // SAFETY: the caller's contract.
        unsafe { *self.len = count }
    }
}

/// What the kernels count during an iteration: the length of every queue
/// and the entries each consuming stage has handed out so far.
/// [`Schedule::plan`] takes them in and resets them for the next iteration.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounters {
    /// Entries in each queue (declared with the queues).
    pub len: QueueLengths,
    /// During a refill: holes taken by survivors moving down.
    pub holes_taken: u32,
    /// Ray-queue entries handed out to the extend kernel's warps so far.
    pub extend_taken: u32,
    /// Ray-queue entries handed out to the drain kernel's warps so far.
    pub drain_taken: u32,
    /// Shadow-queue entries handed out to the shadow kernel's warps so far.
    pub shadow_taken: u32,
    /// Sorting by variant: entries of the sorted class's queue per variant.
    pub variants: [u32; VARIANTS],
    /// Sorting by variant: entries placed so far per variant.
    pub variants_placed: [u32; VARIANTS],
}

/// Everything the wavefront's kernels share besides the pool and queues:
/// the schedule and the queue counters. One allocation, read back by the
/// host as one value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Control {
    /// Settings, progress and the plan of the current iteration.
    pub schedule: Schedule,
    /// Queue lengths and the entries handed out so far.
    pub counters: QueueCounters,
    /// Keeps the size a multiple of 8 (no padding after `counters`).
    _pad: [u32; COUNTER_PAD],
}

/// Words after the counters that round the block up to 8 bytes.
const COUNTER_PAD: usize = size_of::<QueueCounters>() / 4 % 2;

impl Control {
    /// The block at the start of a render.
    pub fn new(schedule: Schedule) -> Self {
        Control {
            schedule,
            counters: QueueCounters::default(),
            _pad: [0; COUNTER_PAD],
        }
    }

    /// Plans the next iteration ([`Schedule::plan`]) from what the last
    /// one left: its `survivors` and the shadow rays queued; then resets
    /// the counters the next iteration fills.
    #[inline(always)]
    pub fn plan(&mut self, survivors: u32) {
        self.schedule.plan(survivors, self.counters.len.shadow);
        self.counters = QueueCounters::default();
    }
}

// SAFETY: `#[repr(C)]` integers only: the schedule is asserted free of
// padding, the counters are `u32`s and arrays of them (align 4, so none
// inside), and `_pad` rounds the whole to the schedule's alignment; the
// assertions check that there is no padding.
unsafe impl Plain for Control {}
const _: () = assert!(align_of::<QueueCounters>() == 4);
const _: () = assert!(size_of::<Control>() == size_of::<Schedule>() + size_of::<QueueCounters>() + 4 * COUNTER_PAD);
