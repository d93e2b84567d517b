//! What the process's signal handlers share ([`super::interrupt`]'s and the
//! CPU profile's): installing one, and keeping the interrupted code's
//! `errno` as it was.

use std::ffi::c_int;

#[cfg(target_os = "linux")]
pub(crate) use libc::__errno_location as errno_location;
#[cfg(not(target_os = "linux"))]
pub(crate) use libc::__error as errno_location;

/// Installs `handler` (the address of an `extern "C"` function of the
/// shape `flags` says: one argument, or three with `SA_SIGINFO`) for
/// `signal`, blocking no other signal while it runs. The handler must be
/// async-signal-safe: it may not allocate, lock, or call anything a
/// signal handler may not.
pub(crate) fn set_handler(signal: c_int, handler: usize, flags: c_int) -> std::io::Result<()> {
    // SAFETY: a zeroed sigaction is valid, and its mask is then emptied;
    // the caller vouches for the handler.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler;
        action.sa_flags = flags;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(signal, &action, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Runs `f`, then gives the interrupted code back the `errno` it had: for
/// a signal handler whose calls may set it.
pub(crate) fn keeping_errno(f: impl FnOnce()) {
    // SAFETY: errno is this thread's; the interrupted code finds it as it left it.
    let errno = unsafe { *errno_location() };
    f();
    unsafe { *errno_location() = errno };
}
