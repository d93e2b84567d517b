//! The wavefront's state in device memory: the path pool (structure of
//! arrays, declared once by [`path_pool!`]) and the work queues (index lists
//! with counters, all in one [`Queues`] value).
//!
//! Bytes per in-flight path: [`PathPool::BYTES_PER_PATH`] for path state
//! plus [`Queues::BYTES_PER_PATH`] for queue entries.

use crate::geometry::{Hit, PrimRef};
use crate::math::{Ray, Rgb, Vec3};
use crate::observe::SHADE_CLASSES;
use crate::rng::PathRng;
use crate::stages::PathState;

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
    /// Radiance gathered.
    radiance: Rgb,
    /// Random stream key.
    rng: PathRng,
    /// Pixel index.
    pixel: u32,
    /// Sample index.
    sample: u32,
    /// Segments traced before the current one.
    bounce: u32,
    /// Hit distance of the current segment.
    hit_t: f32,
    /// Outward normal at the hit.
    hit_normal: Vec3,
    /// Material at the hit.
    hit_material: u32,
    /// Primitive hit.
    hit_prim: PrimRef,
    /// The path's position in the ray queue of this iteration (for the
    /// order-preserving prefix-sum compaction).
    queue_pos: u32,
}

impl PathPool {
    /// Reads the path in `slot`.
    ///
    /// # Safety
    /// `slot` must be below the capacity and the pool in device memory.
    #[inline(always)]
    pub unsafe fn load(&self, slot: u32) -> PathState {
        let i = slot as usize;
        // SAFETY: the caller guarantees `slot < capacity`.
        unsafe {
            PathState {
                ray: Ray::new(*self.origin.add(i), *self.dir.add(i)),
                throughput: *self.throughput.add(i),
                radiance: *self.radiance.add(i),
                rng: *self.rng.add(i),
                pixel: *self.pixel.add(i),
                sample: *self.sample.add(i),
                bounce: *self.bounce.add(i),
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
            *self.origin.add(i) = p.ray.origin;
            *self.dir.add(i) = p.ray.dir;
            *self.throughput.add(i) = p.throughput;
            *self.radiance.add(i) = p.radiance;
            *self.rng.add(i) = p.rng;
            *self.pixel.add(i) = p.pixel;
            *self.sample.add(i) = p.sample;
            *self.bounce.add(i) = p.bounce;
        }
    }

    /// Writes only what shading can change (ray, throughput, radiance,
    /// bounce); the random key, pixel and sample stay as generated.
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
            *self.radiance.add(i) = p.radiance;
            *self.bounce.add(i) = p.bounce;
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

    /// Records the hit of `slot`'s current ray.
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

    /// The hit recorded for `slot`, completed exactly as
    /// [`Hit::new`] would complete it for `ray`.
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

/// Queue lengths and ring positions, kept on the device and read back once
/// per iteration.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounters {
    /// Entries in each shading queue (by [`crate::observe::ShadeClass`]).
    pub shade: [u32; SHADE_CLASSES],
    /// Entries in the next ray queue (survivors).
    pub rays_out: u32,
    /// Free-slot ring: end of the filled part (wrapping; masked on use).
    pub free_tail: u32,
    /// Free-slot ring: the tail before this iteration's prefix-sum scatter.
    pub free_base: u32,
}

/// Counters reset at the start of each iteration (`shade` and `rays_out`).
pub const RESET_COUNTERS: usize = SHADE_CLASSES + 1;

const _: () = assert!(core::mem::size_of::<QueueCounters>() == 32);

/// Every queue of the wavefront, as device pointers.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Queues {
    /// Slots whose ray is traced this iteration.
    pub rays_in: *mut u32,
    /// Slots whose path continues (built by compaction).
    pub rays_out: *mut u32,
    /// One queue per shading class.
    pub shade: [*mut u32; SHADE_CLASSES],
    /// Ring of free slots (capacity a power of two).
    pub free_ring: *mut u32,
    /// Prefix-sum compaction: 1 when the path at that ray-queue position continues.
    pub alive: *mut u32,
    /// Prefix-sum compaction: per-warp counts, then offsets, 32 per block.
    pub scan_warps: *mut u32,
    /// Prefix-sum compaction: per-block totals, then offsets (plus 32
    /// words of scratch after the last block).
    pub scan_blocks: *mut u32,
    /// Lengths and ring positions.
    pub counters: *mut QueueCounters,
    /// `capacity - 1`.
    pub ring_mask: u32,
    /// Padding.
    pub _pad: u32,
}

/// Threads per block of the prefix-sum kernels (32 warps).
pub const SCAN_BLOCK: u32 = 1024;

impl Queues {
    /// Bytes of queue entries per path slot: two ray queues, the shading
    /// queues, the free ring and the alive flags.
    pub const BYTES_PER_PATH: usize = 4 * (2 + SHADE_CLASSES + 2);

    /// Bytes of one allocation holding queues for `capacity` slots.
    pub const fn bytes(capacity: usize) -> usize {
        let blocks = capacity.div_ceil(SCAN_BLOCK as usize);
        aligned(4 * capacity) * (2 + SHADE_CLASSES + 2)
            + aligned(4 * 32 * blocks)
            + aligned(4 * (blocks + 32))
            + aligned(core::mem::size_of::<QueueCounters>())
    }

    /// Lays the queues out in one allocation.
    ///
    /// # Safety
    /// `base` must point to [`Queues::bytes`]`(capacity)` bytes, aligned to
    /// 256, that outlive every use; `capacity` must be a power of two.
    pub unsafe fn from_base(base: *mut u8, capacity: usize) -> Self {
        let blocks = capacity.div_ceil(SCAN_BLOCK as usize);
        let list = aligned(4 * capacity);
        // SAFETY: every offset stays within `bytes(capacity)`.
        unsafe {
            let at = |k: usize| base.add(k * list) as *mut u32;
            let mut shade = [core::ptr::null_mut(); SHADE_CLASSES];
            for (k, q) in shade.iter_mut().enumerate() {
                *q = at(2 + k);
            }
            let tail = base.add(list * (2 + SHADE_CLASSES + 2));
            let scan_warps = tail as *mut u32;
            let scan_blocks = tail.add(aligned(4 * 32 * blocks)) as *mut u32;
            let counters = tail.add(aligned(4 * 32 * blocks) + aligned(4 * (blocks + 32))) as *mut QueueCounters;
            Queues {
                rays_in: at(0),
                rays_out: at(1),
                shade,
                free_ring: at(2 + SHADE_CLASSES),
                alive: at(3 + SHADE_CLASSES),
                scan_warps,
                scan_blocks,
                counters,
                ring_mask: capacity as u32 - 1,
                _pad: 0,
            }
        }
    }

    /// Byte offset of the counters within the allocation (for the host's resets and readbacks).
    pub const fn counters_offset(capacity: usize) -> usize {
        let blocks = capacity.div_ceil(SCAN_BLOCK as usize);
        aligned(4 * capacity) * (2 + SHADE_CLASSES + 2) + aligned(4 * 32 * blocks) + aligned(4 * (blocks + 32))
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
