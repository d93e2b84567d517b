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
}

// SAFETY: the slice is only ever read, never written, through this type.
unsafe impl<T: Sync> Sync for DeviceSlice<'_, T> {}
// SAFETY: as above; sending a shared read-only borrow is sound for `T: Sync`.
unsafe impl<T: Sync> Send for DeviceSlice<'_, T> {}
