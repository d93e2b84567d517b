//! Ctrl-C and SIGTERM.
//!
//! A command that can stop early and keep its finished work (`render`,
//! `experiment`) asks for a [`graceful`] stop: the first signal sets a flag
//! that it polls at its next boundary (a sample pass, a finished row). Any
//! other command, and a second signal, removes the temporary files being
//! written ([`super::unfinished::remove_all`]) and exits at once.
//! Either way the exit status is [`EXIT_STATUS`].

use anyhow::Context;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// The exit status of a command stopped by a signal (128 + SIGINT, as
/// shells report Ctrl-C).
pub const EXIT_STATUS: u8 = 130;

/// Set by the first signal.
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// What the first signal prints when the command stops gracefully.
static GRACEFUL: OnceLock<&'static str> = OnceLock::new();

/// Installs the handler; every command calls this first.
pub fn install() -> anyhow::Result<()> {
    ctrlc::set_handler(|| {
        let first = !REQUESTED.swap(true, Ordering::SeqCst);
        match GRACEFUL.get() {
            Some(message) if first => eprintln!("\nwavepath: {message} (Ctrl-C again to stop at once)"),
            _ => {
                super::unfinished::remove_all();
                eprintln!("\nwavepath: stopped");
                std::process::exit(EXIT_STATUS.into());
            }
        }
    })
    .context("installing the Ctrl-C handler")
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
    REQUESTED.load(Ordering::SeqCst)
}
