//! Files being written now, which an immediate exit (a second Ctrl-C) must
//! delete because it skips the destructors that would.
//!
//! A writer holds a [`Registered`] for each temporary file while it writes;
//! [`remove_all`] deletes whatever is still registered.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Temporary files being written now.
static UNFINISHED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Records a temporary file as in flight until dropped.
pub struct Registered(PathBuf);

impl Registered {
    /// Registers `path` until the returned value is dropped.
    pub fn new(path: &Path) -> Self {
        UNFINISHED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(path.to_path_buf());
        Registered(path.to_path_buf())
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        UNFINISHED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|p| p != &self.0);
    }
}

/// Deletes every temporary file still being written; for an exit that
/// skips destructors.
pub fn remove_all() {
    for p in UNFINISHED.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
        let _ = std::fs::remove_file(p);
    }
}
