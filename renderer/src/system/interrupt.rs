//! Ctrl-C, SIGTERM and SIGHUP.
//!
//! A command that can stop early and keep its finished work (`render`,
//! `experiment`, `gen-mesh`) asks for a [`graceful`] stop: the first signal
//! sets a flag that it polls at its next boundary (a sample pass, a
//! finished row), and it then exits with [`exit_status`]. Any other
//! command, and a second signal, removes the temporary files being written
//! ([`super::unfinished::remove_all`]) and ends the process at once. Either
//! way the exit status is the conventional one, 128 + the signal's number
//! (130 for Ctrl-C, 143 for SIGTERM): the first signal's for a graceful
//! stop, the ending signal's otherwise.
//!
//! The handler itself only sends the signal's number through a socket to
//! a thread of its own, which does the rest. That thread waits on nothing
//! that the rest of the process may hold: it writes its messages to stderr
//! only while stderr takes them at once, and leaves them out otherwise (a
//! full pipe nobody reads). So a second signal ends the process whatever
//! the other threads are waiting on.

use super::signal;
use anyhow::Context;
use std::ffi::c_int;
use std::io::Read;
use std::os::fd::IntoRawFd;
use std::os::unix::net::UnixStream;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering::SeqCst};

/// The signals that stop a command.
const STOPPING: [c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Set by the first signal.
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// The first signal's number; 0 until one comes.
static FIRST: AtomicI32 = AtomicI32::new(0);

/// The socket end the handler sends each signal's number to; -1 until
/// [`install`].
static WAKE: AtomicI32 = AtomicI32::new(-1);

/// What the first signal prints when the command stops gracefully.
static GRACEFUL: OnceLock<&'static str> = OnceLock::new();

/// Installs the handler; every command calls this first.
pub fn install() -> anyhow::Result<()> {
    let (wake, watch) = UnixStream::pair().context("making the signal handler's socket")?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || watch_signals(watch))
        .context("starting the signal handler's thread")?;
    // Open for the rest of the process: the handler sends to it.
    WAKE.store(wake.into_raw_fd(), SeqCst);
    let handler = on_signal as extern "C" fn(c_int) as usize;
    for s in STOPPING {
        // SA_RESTART: the system calls a signal interrupts carry on; the
        // command sees the stop at its next boundary.
        signal::set_handler(s, handler, libc::SA_RESTART).context("installing the Ctrl-C handler")?;
    }
    Ok(())
}

/// Makes the first signal set the returned flag (and print `message`)
/// instead of exiting; the command polls the flag and stops at its next
/// boundary.
pub fn graceful(message: &'static str) -> &'static AtomicBool {
    let _ = GRACEFUL.set(message);
    &REQUESTED
}

/// True once a signal asked the command to stop.
pub fn requested() -> bool {
    REQUESTED.load(SeqCst)
}

/// The exit status of a command that the first signal stopped: 128 + its
/// number (130 after Ctrl-C).
pub fn exit_status() -> u8 {
    status_of(FIRST.load(SeqCst))
}

/// How messages name the first signal: `Ctrl-C` for SIGINT, `a stop
/// request` where no signal came (a stop asked for by the program).
pub fn stopped_by() -> &'static str {
    name_of(FIRST.load(SeqCst))
}

/// The exit status of a command that `signal` stopped.
fn status_of(signal: c_int) -> u8 {
    // The stopping signals are numbered below 128: the sum fits a byte.
    (128 + signal) as u8
}

/// How messages name `signal`.
fn name_of(signal: c_int) -> &'static str {
    match signal {
        0 => "a stop request",
        libc::SIGINT => "Ctrl-C",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// The handler of every stopping signal: sends its number to the signals'
/// thread ([`watch_signals`]).
extern "C" fn on_signal(s: c_int) {
    let number = s as u8;
    signal::keeping_errno(|| {
        // SAFETY: send(2) is async-signal-safe; it reads the one byte of
        // `number`, and fails rather than waits (MSG_DONTWAIT) where the
        // socket is full or was never made.
        unsafe {
            libc::send(
                WAKE.load(SeqCst),
                (&raw const number).cast(),
                1,
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
    });
}

/// The signals' thread: acts on each signal the handler sends, in order.
fn watch_signals(mut socket: UnixStream) {
    let mut number = [0u8];
    while socket.read_exact(&mut number).is_ok() {
        on_stop(c_int::from(number[0]));
    }
}

/// What a stopping signal does: the first asks a command that stops
/// gracefully to stop; any other ends the process now.
fn on_stop(s: c_int) {
    let first = FIRST.compare_exchange(0, s, SeqCst, SeqCst).is_ok();
    match GRACEFUL.get() {
        Some(message) if first => {
            REQUESTED.store(true, SeqCst);
            say(&format!(
                "\nwavepath: {message} ({} again to stop at once)\n",
                name_of(s)
            ));
        }
        _ => {
            super::unfinished::remove_all();
            say(&format!("\nwavepath: stopped by {}\n", name_of(s)));
            // SAFETY: ends the process at once: no other thread's work,
            // exit handler or buffered output is waited for (a thread may
            // be blocked in any of them).
            unsafe { libc::_exit(status_of(s).into()) }
        }
    }
}

/// Writes `message` to stderr if it takes it now, without waiting for
/// stderr's lock (another thread may hold it while it waits on a full
/// pipe) or for room in a pipe.
fn say(message: &str) {
    let mut stderr = libc::pollfd {
        fd: libc::STDERR_FILENO,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: poll reads and writes the one pollfd given; a zero timeout
    // returns at once.
    let ready = unsafe { libc::poll(&mut stderr, 1, 0) } == 1 && stderr.revents & libc::POLLOUT != 0;
    if ready {
        // SAFETY: writes the bytes of `message`, which lives across the call.
        unsafe { libc::write(libc::STDERR_FILENO, message.as_ptr().cast(), message.len()) };
    }
}
