//! The sampler: a SIGPROF every 1/[`FREQUENCY`] s of the process's CPU
//! time (`setitimer(ITIMER_PROF)`, taken by the thread that was running),
//! whose handler records where that thread was: the address of the
//! interrupted instruction and of each call on the stack above it (the
//! `backtrace` crate's unwinder). The handler sends each sample's addresses
//! through a pipe to a thread that counts every distinct stack; nothing is
//! merged before that, so each sample keeps its own addresses.
//!
//! The handler neither allocates nor locks: a write of under `PIPE_BUF`
//! bytes to a pipe is atomic and safe in a signal handler, and a sample
//! that finds the pipe full is counted as dropped. A sample that lands in
//! the unwinder's own library (libgcc) keeps the interrupted address
//! alone: unwinding from there could wait on a lock that the interrupted
//! code holds.

use crate::system::signal;
use anyhow::{Context, anyhow, bail};
use findshlibs::{Segment, SharedLibrary, TargetSharedLibrary};
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::io::{PipeWriter, Read};
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Samples per second of CPU time asked of the kernel's timer (a prime,
/// so that the samples do not beat with periodic work; the timer's tick
/// may give fewer).
pub const FREQUENCY: u32 = 997;

/// Frames kept per sample: a record of `1 + MAX_DEPTH` words stays under
/// `PIPE_BUF` (4096 bytes), so that its write is atomic.
const MAX_DEPTH: usize = 126;

/// The pipe's capacity asked for (Linux; the default is 64 KiB): room for
/// thousands of samples while the counting thread waits for a core.
#[cfg(target_os = "linux")]
const PIPE_BYTES: c_int = 1 << 20;

/// Whether this platform's signal context is read here (the interrupted
/// instruction's address).
const SUPPORTED: bool = cfg!(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
));

/// Libraries whose code is not unwound from (the unwinder's own).
const NOT_UNWOUND: [&str; 1] = ["libgcc"];

/// A sample's call stack: the address of the instruction each frame was
/// on, the interrupted one first, then each caller's call instruction
/// (the return address less one byte, which lies inside the call).
pub type CallStack = Vec<usize>;

/// The write end of the pipe while sampling, -1 otherwise.
static PIPE: AtomicI32 = AtomicI32::new(-1);

/// Handlers running now.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// Samples that found the pipe full.
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Whether a sampler is running (one at a time per process).
static RUNNING: AtomicBool = AtomicBool::new(false);

/// The address ranges of the [`NOT_UNWOUND`] libraries.
static NOT_UNWOUND_RANGES: OnceLock<Vec<Range<usize>>> = OnceLock::new();

/// A running sampler; [`ProfileSampler::finish`] ends it (as does dropping it).
pub struct ProfileSampler {
    /// The pipe's write end while the timer runs.
    armed: Armed,
    /// The thread that counts the stacks.
    counter: JoinHandle<std::io::Result<HashMap<CallStack, u64>>>,
    /// When sampling began.
    started: Instant,
}

/// The pipe's write end while the timer runs: dropping it stops the timer,
/// waits for the handlers in flight and closes the pipe (the counting
/// thread then sees its end). The handler stays installed, doing nothing:
/// a signal still pending would otherwise end the process.
struct Armed(PipeWriter);

impl Armed {
    /// Makes the handler send samples to `pipe`.
    fn new(pipe: PipeWriter) -> Self {
        PIPE.store(pipe.as_raw_fd(), SeqCst);
        Armed(pipe)
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        let _ = set_timer(Duration::ZERO);
        let _ = PIPE.compare_exchange(self.0.as_raw_fd(), -1, SeqCst, SeqCst);
        while IN_FLIGHT.load(SeqCst) > 0 {
            std::thread::yield_now();
        }
        RUNNING.store(false, SeqCst);
    }
}

/// What a sampler collected.
pub struct Samples {
    /// Every distinct stack and the samples that had it.
    pub stacks: HashMap<CallStack, u64>,
    /// Samples lost because the pipe was full.
    pub dropped: u64,
    /// How long the sampler ran (wall-clock time).
    pub elapsed: Duration,
}

impl ProfileSampler {
    /// Starts sampling every thread of the process.
    pub fn start() -> anyhow::Result<Self> {
        if !SUPPORTED {
            bail!("the CPU profile samples on Linux (x86-64 or AArch64) only");
        }
        if RUNNING.swap(true, SeqCst) {
            bail!("a CPU profile is already being taken in this process");
        }
        Self::arm().inspect_err(|_| RUNNING.store(false, SeqCst))
    }

    /// Opens the pipe, starts the counting thread, installs the handler and
    /// starts the timer.
    fn arm() -> anyhow::Result<Self> {
        NOT_UNWOUND_RANGES.get_or_init(not_unwound_ranges);
        // The unwinder's first use initialises its caches; not in a handler.
        backtrace::trace(|_| true);
        let (reader, writer) = std::io::pipe().context("opening the CPU profile's pipe")?;
        set_nonblocking(&writer)?;
        let counter = std::thread::Builder::new()
            .name("cpu-profile".into())
            .spawn(move || count_stacks(reader))
            .context("starting the CPU profile's counting thread")?;
        DROPPED.store(0, SeqCst);
        let armed = Armed::new(writer);
        install_handler()?;
        set_timer(Duration::from_secs(1) / FREQUENCY)?;
        Ok(ProfileSampler {
            armed,
            counter,
            started: Instant::now(),
        })
    }

    /// Stops sampling and returns every stack with its count.
    pub fn finish(self) -> anyhow::Result<Samples> {
        let ProfileSampler {
            armed,
            counter,
            started,
        } = self;
        drop(armed);
        let elapsed = started.elapsed();
        let stacks = counter
            .join()
            .map_err(|_| anyhow!("the CPU profile's counting thread panicked"))?
            .context("reading the CPU profile's samples")?;
        Ok(Samples {
            stacks,
            dropped: DROPPED.load(SeqCst),
            elapsed,
        })
    }
}

/// Makes writes to `pipe` fail rather than wait when it is full (and asks
/// for a larger pipe, where the platform allows).
fn set_nonblocking(pipe: &PipeWriter) -> anyhow::Result<()> {
    let fd = pipe.as_raw_fd();
    // SAFETY: fcntl on an open descriptor.
    unsafe {
        #[cfg(target_os = "linux")]
        libc::fcntl(fd, libc::F_SETPIPE_SZ, PIPE_BYTES); // best effort: drops are counted
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error()).context("setting up the CPU profile's pipe");
        }
    }
    Ok(())
}

/// Reads the samples' records until the pipe closes, counting each stack.
fn count_stacks(mut pipe: impl Read) -> std::io::Result<HashMap<CallStack, u64>> {
    let mut stacks: HashMap<CallStack, u64> = HashMap::new();
    let mut word = [0u8; size_of::<usize>()];
    loop {
        match pipe.read_exact(&mut word) {
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(stacks),
            other => other?,
        }
        let depth = usize::from_ne_bytes(word);
        let mut stack = Vec::with_capacity(depth);
        for _ in 0..depth {
            pipe.read_exact(&mut word)?;
            stack.push(usize::from_ne_bytes(word));
        }
        *stacks.entry(stack).or_default() += 1;
    }
}

/// Installs [`on_sample`] (async-signal-safe) as the SIGPROF handler.
fn install_handler() -> anyhow::Result<()> {
    let handler = on_sample as extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) as usize;
    // SA_RESTART: the system calls a sample interrupts carry on.
    signal::set_handler(libc::SIGPROF, handler, libc::SA_SIGINFO | libc::SA_RESTART)
        .context("installing the CPU profile's signal handler")
}

/// Sets the CPU-time timer to fire every `period` (zero stops it).
fn set_timer(period: Duration) -> anyhow::Result<()> {
    let period = libc::timeval {
        tv_sec: period.as_secs() as libc::time_t,
        tv_usec: period.subsec_micros() as libc::suseconds_t,
    };
    let timer = libc::itimerval {
        it_interval: period,
        it_value: period,
    };
    // SAFETY: setitimer reads a valid itimerval.
    if unsafe { libc::setitimer(libc::ITIMER_PROF, &timer, std::ptr::null_mut()) } != 0 {
        return Err(std::io::Error::last_os_error()).context("setting the CPU profile's timer");
    }
    Ok(())
}

/// The SIGPROF handler: sends the interrupted thread's stack to the pipe.
extern "C" fn on_sample(_signal: c_int, _info: *mut libc::siginfo_t, context: *mut c_void) {
    IN_FLIGHT.fetch_add(1, SeqCst);
    let fd = PIPE.load(SeqCst);
    if fd >= 0
        && let Some(pc) = interrupted_address(context)
    {
        signal::keeping_errno(|| send(fd, &record_of(pc)));
    }
    IN_FLIGHT.fetch_sub(1, SeqCst);
}

/// A sample as the pipe carries it: the depth, then the [`CallStack`]'s
/// addresses (a fixed array: nothing is allocated in the handler).
type Record = [usize; 1 + MAX_DEPTH];

/// The record of the interrupted code at `pc` and its callers.
fn record_of(pc: usize) -> Record {
    let mut record = [0usize; 1 + MAX_DEPTH];
    record[1] = pc;
    let mut depth = 1;
    let not_unwound = NOT_UNWOUND_RANGES
        .get()
        .is_some_and(|r| r.iter().any(|r| r.contains(&pc)));
    if !not_unwound {
        // The unwinder starts in this handler; the frames up to the
        // interrupted one (the frame whose address is `pc`) are skipped.
        let mut reached = false;
        // SAFETY: the unwinder reads this thread's stack; no lock of
        // `backtrace`'s own is taken in a signal handler.
        unsafe {
            backtrace::trace_unsynchronized(|frame| {
                let ip = frame.ip() as usize;
                if !reached {
                    reached = ip == pc;
                    return true;
                }
                if ip == 0 || depth == MAX_DEPTH {
                    return false;
                }
                depth += 1;
                record[depth] = ip - 1;
                true
            })
        };
    }
    record[0] = depth;
    record
}

/// Writes a record to the pipe whole, or counts it as dropped.
fn send(fd: c_int, record: &Record) {
    let bytes = (1 + record[0]) * size_of::<usize>();
    // SAFETY: `bytes` lie within `record`; write(2) is async-signal-safe.
    let written = unsafe { libc::write(fd, record.as_ptr().cast(), bytes) };
    if written != bytes as isize {
        DROPPED.fetch_add(1, SeqCst);
    }
}

/// The address of the instruction a signal interrupted.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn interrupted_address(context: *mut c_void) -> Option<usize> {
    let context = context.cast::<libc::ucontext_t>();
    // SAFETY: the kernel passes the interrupted thread's context.
    (!context.is_null()).then(|| unsafe { (*context).uc_mcontext.gregs[libc::REG_RIP as usize] as usize })
}

/// The address of the instruction a signal interrupted.
#[cfg(all(target_os = "linux", target_arch = "aarch64"))]
fn interrupted_address(context: *mut c_void) -> Option<usize> {
    let context = context.cast::<libc::ucontext_t>();
    // SAFETY: the kernel passes the interrupted thread's context.
    (!context.is_null()).then(|| unsafe { (*context).uc_mcontext.pc as usize })
}

/// The address of the instruction a signal interrupted (not read on this
/// platform: see [`SUPPORTED`]).
#[cfg(not(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64"))))]
fn interrupted_address(_context: *mut c_void) -> Option<usize> {
    None
}

/// The address ranges of the loaded [`NOT_UNWOUND`] libraries.
fn not_unwound_ranges() -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    TargetSharedLibrary::each(|library| {
        let name = library.name().to_string_lossy();
        if NOT_UNWOUND.iter().any(|n| name.contains(n)) {
            for segment in library.segments() {
                let start = segment.actual_virtual_memory_address(library).0;
                ranges.push(start..start + segment.len());
            }
        }
    });
    ranges
}
