//! The commands a study run starts (the verifying binary, the experiment
//! runner, the MPI launcher): their output appended to a file, a deadline
//! that stops them as Ctrl-C would, and a slot's CPUs.

use std::fs::File;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long a command stopped at its deadline has to finish its stop (a
/// GPU render in flight, a CPU render's samples so far kept) before it is
/// killed.
pub const STOP_GRACE: Duration = Duration::from_secs(30);

/// How often a running command is looked at.
const POLL: Duration = Duration::from_millis(50);

/// Runs `cmd` with its stdout and stderr appended to `log`, in the order
/// written. At `deadline`, if it is still running, it alone gets one
/// SIGINT (the runner then stops after the GPU render in flight and keeps
/// a CPU render's samples for `--resume`; a second SIGINT, or one to its
/// process group, would be an immediate exit that keeps none), and
/// [`STOP_GRACE`] later, SIGKILL. `None` for a command that could not be
/// started, the reason written in `log`.
pub fn run_logged(cmd: &mut Command, log: &Path, deadline: Option<Instant>) -> std::io::Result<Option<ExitStatus>> {
    let out = File::options().create(true).append(true).open(log)?;
    cmd.stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out.try_clone()?);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            use std::io::Write as _;
            writeln!(&out, "cannot start {}: {e}", cmd.get_program().to_string_lossy())?;
            return Ok(None);
        }
    };
    let Some(deadline) = deadline else {
        return child.wait().map(Some);
    };
    let mut stopped: Option<Instant> = None;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let now = Instant::now();
        match stopped {
            None if now >= deadline => {
                interrupt(child.id());
                stopped = Some(now);
            }
            Some(at) if now >= at + STOP_GRACE => {
                child.kill()?;
                return child.wait().map(Some);
            }
            _ => {}
        }
        std::thread::sleep(POLL);
    }
}

/// Sends SIGINT to the process `pid` alone.
fn interrupt(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill takes no pointers; `pid` is our own child, not yet
    // waited for, so the id is not another process's.
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
}

/// Makes `cmd` run on the logical CPUs `cpus` alone.
pub fn pin_to(cmd: &mut Command, cpus: &[usize]) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: a zeroed cpu_set_t is the empty set, and CPU_SET writes
    // within it for a CPU below its size (the larger are left out).
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(cpu, &mut set);
        }
        set
    };
    // SAFETY: between fork and exec the closure calls sched_setaffinity
    // alone, which allocates nothing and takes no lock, on the set built
    // above.
    unsafe {
        cmd.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

/// The logical CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is the empty set; sched_getaffinity
    // writes at most its size into it, and CPU_ISSET reads within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}
