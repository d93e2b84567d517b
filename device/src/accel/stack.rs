//! The fixed-size traversal stack every structure shares. It is not
//! initialised up front: zeroing a 64-entry array cost 5% of a CPU render
//! (a `memset` per ray), and reads only ever see entries already pushed.

use core::mem::MaybeUninit;

/// At most `N` values of `T`, last in first out.
pub struct Stack<T: Copy, const N: usize> {
    entries: [MaybeUninit<T>; N],
    len: usize,
}

impl<T: Copy, const N: usize> Stack<T, N> {
    /// An empty stack.
    #[inline(always)]
    pub fn new() -> Self {
        Stack {
            entries: [const { MaybeUninit::uninit() }; N],
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

impl<T: Copy, const N: usize> Default for Stack<T, N> {
    fn default() -> Self {
        Self::new()
    }
}
