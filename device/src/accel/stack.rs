//! The fixed-size traversal stack every structure shares. Its entries live
//! in a [`StackStorage`] of the caller's and its length in the [`Stack`]
//! itself, so that the length stays in a register: kept in one value with
//! the array, whose entries are indexed at run time, it went to local
//! memory with them (8 bytes beyond the entries in every BVH megakernel,
//! loaded and stored at each push and pop). The storage is not initialised
//! up front: zeroing a 64-entry array cost 5% of a CPU render (a `memset`
//! per ray), and reads only ever see entries already pushed.

use core::mem::MaybeUninit;

/// Room for `N` entries of `T`, uninitialised.
pub struct StackStorage<T: Copy, const N: usize>([MaybeUninit<T>; N]);

impl<T: Copy, const N: usize> StackStorage<T, N> {
    /// Room for `N` entries.
    #[inline(always)]
    pub fn new() -> Self {
        StackStorage([const { MaybeUninit::uninit() }; N])
    }
}

impl<T: Copy, const N: usize> Default for StackStorage<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

/// At most `N` values of `T`, last in first out, in a [`StackStorage`].
pub struct Stack<'a, T: Copy, const N: usize> {
    entries: &'a mut [MaybeUninit<T>; N],
    len: usize,
}

impl<'a, T: Copy, const N: usize> Stack<'a, T, N> {
    /// An empty stack in `storage`.
    #[inline(always)]
    pub fn new(storage: &'a mut StackStorage<T, N>) -> Self {
        Stack {
            entries: &mut storage.0,
            len: 0,
        }
    }

    /// Pushes `value`. The structure's depth limit keeps this within `N`
    /// (bounds-checked all the same).
    #[inline(always)]
    pub fn push(&mut self, value: T) {
        self.entries[self.len].write(value);
        self.len += 1;
    }

    /// The value pushed last, or `None` when empty.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<T> {
        self.len = self.len.checked_sub(1)?;
        // SAFETY: every entry below the old `len` was written by `push`
        // (the only place `len` grows), and `T: Copy` needs no drop.
        Some(unsafe { self.entries[self.len].assume_init() })
    }
}
