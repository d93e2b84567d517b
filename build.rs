//! Stamps the `wavepath` binary with the build it is: the commit (`-dirty`
//! when tracked files differ from it) and the fingerprint of the measured
//! source, computed as `report --currency` computes it for a checkout
//! (`renderer/src/system/fingerprint.rs`). Every record the binary writes
//! carries both. The PTX is built by the renderer's own `build.rs`.
//!
//! This script reruns on any change to the measured source, and on a
//! commit or a change to git's index; only this crate, the command line,
//! is then rebuilt.

use std::path::Path;
use std::process::Command;

#[path = "renderer/src/system/fingerprint.rs"]
mod fingerprint;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    println!("cargo:rustc-env=WAVEPATH_COMMIT={}", commit(root));
    for source in fingerprint::MEASURED_SOURCES {
        println!("cargo:rerun-if-changed={source}");
    }
    let Some(source) = fingerprint::source_fingerprint(root) else {
        eprintln!("error: cannot read the measured source to fingerprint it");
        std::process::exit(1);
    };
    println!("cargo:rustc-env=WAVEPATH_SOURCE={source}");
}

/// The commit being built, `-dirty` when tracked files differ from it, or
/// `unknown` outside a git checkout. Results carry it as provenance.
fn commit(root: &Path) -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .current_dir(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    for f in [".git/HEAD", ".git/index"] {
        if root.join(f).exists() {
            println!("cargo:rerun-if-changed={f}");
        }
    }
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(hash) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            if dirty { format!("{hash}-dirty") } else { hash }
        }
        None => "unknown".into(),
    }
}
