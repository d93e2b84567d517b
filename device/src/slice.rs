//! [`DeviceSlice`]: a borrowed array that the same code reads on the host
//! and on the GPU. Every array a kernel reads through its argument struct
//! (the primitives, the materials, the acceleration structure's nodes) is
//! one of these.

use core::marker::PhantomData;

/// A read-only array that may live in host or device memory: a raw pointer
/// and a length, laid out for FFI, borrowed for `'a`.
#[repr(C)]
pub struct DeviceSlice<'a, T> {
    ptr: *const T,
    len: u32,
    _pad: u32,
    _borrow: PhantomData<&'a [T]>,
}

const _: () = assert!(core::mem::size_of::<DeviceSlice<'static, u32>>() == 16);

impl<T> Clone for DeviceSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DeviceSlice<'_, T> {}

impl<'a, T> DeviceSlice<'a, T> {
    /// Borrows a host slice. Fails (`None`) beyond `u32::MAX` elements.
    pub fn from_slice(slice: &'a [T]) -> Option<Self> {
        Some(DeviceSlice {
            ptr: slice.as_ptr(),
            len: u32::try_from(slice.len()).ok()?,
            _pad: 0,
            _borrow: PhantomData,
        })
    }

    /// No elements.
    pub const fn empty() -> Self {
        DeviceSlice {
            ptr: core::ptr::NonNull::dangling().as_ptr(),
            len: 0,
            _pad: 0,
            _borrow: PhantomData,
        }
    }

    /// Wraps memory owned elsewhere (a device allocation).
    ///
    /// # Safety
    /// `ptr` must be non-null, aligned, and point to `len` initialised values
    /// that stay valid and unmodified for `'a` in the address space where the
    /// slice is read.
    pub unsafe fn from_raw(ptr: *const T, len: u32) -> Self {
        DeviceSlice {
            ptr,
            len,
            _pad: 0,
            _borrow: PhantomData,
        }
    }

    /// The elements.
    #[inline(always)]
    pub fn as_slice(&self) -> &'a [T] {
        // SAFETY: the constructors guarantee `len` valid elements at `ptr`.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len as usize) }
    }

    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// True when there are no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `index` by value; beyond the end it panics, as indexing
    /// does. On the GPU the whole element is read at once, in 16-byte
    /// vector loads through the read-only data cache, where indexing loads
    /// each field with its own 4-byte load where it is used; on the host it
    /// is a plain copy. For elements whose size is a multiple of 16 bytes
    /// and whose alignment is at least 16 (checked where it is compiled).
    #[inline(always)]
    pub fn fetch(&self, index: usize) -> T
    where
        T: Copy,
    {
        const { assert!(size_of::<T>().is_multiple_of(16) && align_of::<T>() >= 16) };
        let item = &self.as_slice()[index];
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: `item` is an element of the slice, so it is aligned (to
        // 16 or more), initialised, in global memory and, by the slice's
        // contract, unmodified while it is borrowed: what the read-only
        // cache may assume.
        return unsafe { load_read_only(item) };
        #[cfg(not(target_arch = "nvptx64"))]
        *item
    }
}

/// A copy of `*item` read in 16-byte vector loads through the read-only
/// data cache (`ld.global.nc.v4.u32`).
///
/// # Safety
/// `item` must point to an initialised `T` in global memory, aligned to 16
/// bytes, whose size is a multiple of 16, that no thread writes during the
/// kernel.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn load_read_only<T: Copy>(item: &T) -> T {
    use core::mem::MaybeUninit;
    let mut out = MaybeUninit::<T>::uninit();
    let words = out.as_mut_ptr().cast::<[u32; 4]>();
    let from = core::ptr::from_ref(item).cast::<[u32; 4]>();
    for k in 0..size_of::<T>() / 16 {
        let (a, b, c, d): (u32, u32, u32, u32);
        // SAFETY: the caller's contract; chunk `k` lies within `*item`.
        unsafe {
            core::arch::asm!(
                "{{ .reg .u64 g; cvta.to.global.u64 g, {p}; ld.global.nc.v4.u32 {{{a}, {b}, {c}, {d}}}, [g]; }}",
                p = in(reg64) from.add(k),
                a = out(reg32) a,
                b = out(reg32) b,
                c = out(reg32) c,
                d = out(reg32) d,
                options(pure, readonly, nostack),
            );
            words.add(k).write([a, b, c, d]);
        }
    }
    // SAFETY: every byte of `out` was copied from the initialised `*item`.
    unsafe { out.assume_init() }
}

// SAFETY: the slice is only ever read, never written, through this type.
unsafe impl<T: Sync> Sync for DeviceSlice<'_, T> {}
// SAFETY: as above; sending a shared read-only borrow is sound for `T: Sync`.
unsafe impl<T: Sync> Send for DeviceSlice<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accel::BvhNode;
    use crate::geometry::Aabb;
    use crate::math::Vec3;

    fn node(k: u32) -> BvhNode {
        let corner = Vec3::splat(k as f32);
        BvhNode {
            bounds: [Aabb::point(corner), Aabb::point(-corner)],
            child: [k, k + 1],
            count: [0, k],
        }
    }

    #[test]
    fn fetch_copies_the_element_it_names() {
        let nodes = [node(1), node(2), node(3)];
        let slice = DeviceSlice::from_slice(&nodes).unwrap();
        for (k, n) in nodes.iter().enumerate() {
            assert_eq!(slice.fetch(k), *n);
        }
    }

    #[test]
    #[should_panic]
    fn fetch_beyond_the_end_panics() {
        let nodes = [node(1)];
        DeviceSlice::from_slice(&nodes).unwrap().fetch(1);
    }
}
