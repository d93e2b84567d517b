//! The wavefront's state: the path pool (structure of arrays, declared once
//! by [`path_pool!`]), the queues of path slots (index lists, declared once
//! by [`queues!`]), the typed [`WorkQueue`]s whose entries carry their own
//! payload (the shadow rays), and the [`Control`] block of counters and
//! schedule that the kernels share. There is no list of free slots: the paths in flight
//! always occupy slots `0..n` after a refill ([`crate::schedule`]). Sizes,
//! offsets and the bytes per path all derive from the two declarations; the
//! host never counts fields itself.
//!
//! Bytes per in-flight path: [`PathPool::BYTES_PER_PATH`] for path state,
//! [`Queues::BYTES_PER_PATH`] for slot-queue entries and
//! [`WorkQueue::BYTES_PER_PATH`] for each typed queue.

use crate::geometry::{Hit, PrimRef};
use crate::kernel::Plain;
use crate::math::{Ray, Rgb, Vec3};
use crate::rng::PathRng;
use crate::schedule::{QueueCounters, Schedule};
use crate::shading::{ShadeClass, VARIANTS};
use crate::stages::PathState;
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
    pub unsafe fn load(&self, slot: u32) -> PathState {
        let i = slot as usize;
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
    pub unsafe fn store(&self, slot: u32, p: &PathState) {
        let i = slot as usize;
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
    pub unsafe fn store_shaded(&self, slot: u32, p: &PathState) {
        let i = slot as usize;
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
    pub unsafe fn ray(&self, slot: u32) -> Ray {
        // SAFETY: the caller guarantees `slot < capacity`.
        unsafe { Ray::new(*self.origin.add(slot as usize), *self.dir.add(slot as usize)) }
    }

    /// Records what shading needs of the hit of `slot`'s current ray.
    ///
    /// # Safety
    /// As for [`PathPool::load`].
    #[inline(always)]
    pub unsafe fn store_hit(&self, slot: u32, h: &Hit) {
        let i = slot as usize;
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
    pub unsafe fn hit(&self, slot: u32, ray: &Ray) -> Hit {
        let i = slot as usize;
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

/// Declares the queues once: each is a list of `u32` entries, one per path
/// slot, or an array of such lists (`name[N]`). Derives the pointer struct,
/// the bytes per path and the layout inside one allocation; the prefix-sum
/// block totals follow the lists.
macro_rules! queues {
    ($($(#[$doc:meta])* $field:ident $([$n:expr])?),* $(,)?) => {
        /// Every queue of the wavefront, as pointers.
        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        pub struct Queues {
            $($(#[$doc])* pub $field: queues!(@ty $([$n])?),)*
            /// Prefix-sum compaction: per-block totals, then offsets, then
            /// [`SCAN_BLOCK`] words of scratch.
            pub scan_blocks: *mut u32,
            /// Path slots.
            pub capacity: u32,
        }

        impl Queues {
            /// Number of per-slot lists.
            pub const LISTS: usize = 0 $(+ queues!(@count $([$n])?))*;

            /// Bytes of queue entries per path slot.
            pub const BYTES_PER_PATH: usize = 4 * Self::LISTS;

            /// Bytes of one allocation holding queues for `capacity` slots.
            pub const fn bytes(capacity: usize) -> usize {
                aligned(4 * capacity) * Self::LISTS + aligned(4 * (scan_blocks(capacity) + SCAN_BLOCK as usize))
            }

            /// Lays the queues out in one allocation.
            ///
            /// # Safety
            /// `base` must point to [`Queues::bytes`]`(capacity)` bytes,
            /// aligned to 256, that outlive every use.
            pub unsafe fn from_base(base: *mut u8, capacity: usize) -> Self {
                let list = aligned(4 * capacity);
                let mut next = 0;
                let mut take = || {
                    // SAFETY: `LISTS` lists of `list` bytes fit in `bytes(capacity)`.
                    let p = unsafe { base.add(next * list) } as *mut u32;
                    next += 1;
                    p
                };
                $(let $field = queues!(@take take $([$n])?);)*
                Queues {
                    $($field,)*
                    // SAFETY: the block totals follow the lists.
                    scan_blocks: unsafe { base.add(Self::LISTS * list) } as *mut u32,
                    capacity: capacity as u32,
                }
            }
        }
    };
    (@ty) => { *mut u32 };
    (@ty [$n:expr]) => { [*mut u32; $n] };
    (@count) => { 1 };
    (@count [$n:expr]) => { $n };
    (@take $take:ident) => { $take() };
    (@take $take:ident [$n:expr]) => { core::array::from_fn::<_, { $n }, _>(|_| $take()) };
}

queues! {
    /// Slots whose ray is traced this iteration.
    rays_in,
    /// Slots whose path continues (built by compaction).
    rays_out,
    /// One queue per shading class.
    shade[ShadeClass::COUNT],
    /// Prefix-sum compaction: 1 at each ray-queue position whose path
    /// continues. During a refill, before any path is shaded: the free
    /// slots below the survivor count (the holes survivors move into).
    alive,
    /// Prefix-sum compaction: per-warp counts, then offsets. One word per
    /// slot, enough for warps of one lane (the host's emulation). Before
    /// the compaction, while paths are shaded, the sorted class's queue
    /// ([`Queues::sorted`]).
    scan_warps,
}

// One pointer per field and per list, then `scan_blocks` and the capacity:
// the same layout on both targets.
const _: () = assert!(core::mem::size_of::<PathPool>() == PathPool::FIELDS * 8);
const _: () = assert!(core::mem::size_of::<Queues>() == (Queues::LISTS + 1) * 8 + 8);

/// Threads per block of the prefix-sum kernels.
pub const SCAN_BLOCK: u32 = 1024;

/// Blocks of the prefix-sum kernels over `capacity` entries.
pub const fn scan_blocks(capacity: usize) -> usize {
    capacity.div_ceil(SCAN_BLOCK as usize)
}

impl Queues {
    /// The queue of [`crate::shading::SORTED_CLASS`] sorted by variant,
    /// when the render sorts. It lives in `scan_warps`: the prefix-sum
    /// compaction writes that only after every shading kernel has run, and
    /// it holds one word per slot, as a queue needs. (A list of its own
    /// would take the 4 bytes per path that keep 2^22 paths within the
    /// default 512 MiB.)
    #[inline(always)]
    pub fn sorted(&self) -> *mut u32 {
        self.scan_warps
    }

    /// The same queues with the two ray queues exchanged (between iterations).
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
    /// Bytes of entries per path slot.
    pub const BYTES_PER_PATH: usize = core::mem::size_of::<T>();

    /// Bytes of one allocation holding entries for `capacity` slots.
    pub const fn bytes(capacity: usize) -> usize {
        aligned(Self::BYTES_PER_PATH * capacity)
    }

    /// The queue over `entries` with its counter at `len`.
    ///
    /// # Safety
    /// `entries` must point to [`WorkQueue::bytes`]`(capacity)` bytes,
    /// aligned for `T`, and `len` to a counter, both outliving every use;
    /// no iteration may push more than `capacity` entries.
    pub unsafe fn new(entries: *mut u8, len: *mut u32) -> Self {
        WorkQueue {
            entries: entries.cast(),
            len,
        }
    }

    /// Appends `entry` for every lane of `group` that calls this (all of
    /// them must), with one atomic add per warp.
    ///
    /// # Safety
    /// The contract of [`WorkQueue::new`]; `group` holds the calling lane.
    #[inline(always)]
    pub unsafe fn push(&self, group: u32, entry: T) {
        // SAFETY: the caller's contract.
        unsafe { append(self.len, group, entry, self.entries) }
    }

    /// Entry `i`.
    ///
    /// # Safety
    /// `i` must be below the entries pushed this iteration.
    #[inline(always)]
    pub unsafe fn get(&self, i: u32) -> T {
        // SAFETY: the caller's contract.
        unsafe { *self.entries.add(i as usize) }
    }
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
}

// SAFETY: both are `#[repr(C)]` integers only; the assertion checks that
// there is no padding.
unsafe impl Plain for Control {}
const _: () = assert!(
    core::mem::size_of::<Control>()
        == core::mem::size_of::<Schedule>() + 4 * (ShadeClass::COUNT + 7 + 2 * VARIANTS + (ShadeClass::COUNT + 7) % 2)
);
