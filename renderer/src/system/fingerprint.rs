//! Short fingerprints (64-bit FNV-1a, as 16 hex digits): of a film, so that
//! runs that must render the same image can be compared; of a config's
//! text and an input file, so that a resume continues the same experiment
//! and `report --currency` sees what changed; and of the renderer's source
//! ([`source_fingerprint`]), so that each figure names the source it was
//! measured with and `report --currency` can tell when that moved on.
//!
//! The `wavepath` crate's build script includes this file (`#[path]` in
//! the top-level `build.rs`) to stamp the binary with the fingerprint of the source it was built from, so it
//! uses the standard library only.

use std::path::Path;

/// The FNV-1a hash of `words` as 16 hex digits. Bytes widened to `u64` give
/// the byte-wise FNV-1a.
pub fn fingerprint(words: impl Iterator<Item = u64>) -> String {
    format!(
        "{:016x}",
        words.fold(0xcbf2_9ce4_8422_2325_u64, |h, w| (h ^ w).wrapping_mul(0x0100_0000_01b3))
    )
}

/// The byte-wise fingerprint of `bytes` (a file's or a text's).
pub fn fingerprint_bytes(bytes: &[u8]) -> String {
    fingerprint(bytes.iter().map(|&b| u64::from(b)))
}

/// The files and folders (relative to the repository root) whose change
/// can change what a run measures: the device crate, the renderer, the lab,
/// the command line, the build scripts, the manifests, the lock file, the
/// toolchain and the build's target CPU (`.cargo/config.toml`).
pub const MEASURED_SOURCES: &[&str] = &[
    "device/src",
    "device/Cargo.toml",
    "renderer",
    "lab",
    "src",
    "build.rs",
    "Cargo.toml",
    "Cargo.lock",
    "rust-toolchain.toml",
    ".cargo/config.toml",
];

/// The fingerprint of the measured source under `root`: every file of
/// [`MEASURED_SOURCES`] (the report crate, which only presents results,
/// is not among them), by relative path (in
/// sorted order) and contents. `None` when `root` holds no wavepath
/// source (`device/src` is missing) or a file cannot be read.
pub fn source_fingerprint(root: &Path) -> Option<String> {
    if !root.join("device/src").is_dir() {
        return None;
    }
    let mut files = Vec::new();
    for source in MEASURED_SOURCES {
        collect(root, Path::new(source), &mut files).ok()?;
    }
    files.sort();
    let mut bytes = Vec::new();
    for file in &files {
        bytes.extend_from_slice(file.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(&std::fs::read(root.join(file)).ok()?);
        bytes.push(0);
    }
    Some(fingerprint_bytes(&bytes))
}

/// Adds `rel` (a file, or every file below a folder) to `files` as
/// `/`-separated paths relative to `root`. A missing path adds nothing.
fn collect(root: &Path, rel: &Path, files: &mut Vec<String>) -> std::io::Result<()> {
    let path = root.join(rel);
    let name = rel.to_string_lossy().replace('\\', "/");
    if path.is_dir() {
        for entry in std::fs::read_dir(&path)? {
            collect(root, &rel.join(entry?.file_name()), files)?;
        }
    } else if path.is_file() {
        files.push(name);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_hash_as_byte_wise_fnv1a() {
        // The published FNV-1a 64 values of "" and "a".
        assert_eq!(fingerprint("".bytes().map(u64::from)), "cbf29ce484222325");
        assert_eq!(fingerprint("a".bytes().map(u64::from)), "af63dc4c8601ec8c");
    }

    #[test]
    fn the_source_fingerprint_follows_measured_files_only() {
        let root = std::env::temp_dir().join(format!("wavepath-source-{}", std::process::id()));
        let write = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        assert_eq!(source_fingerprint(&root), None, "no checkout there");
        write("device/src/lib.rs", "kernel");
        write("src/main.rs", "main");
        write("report/src/tables.rs", "table");
        write("README.md", "words");
        let first = source_fingerprint(&root).unwrap();
        // Presentation and documentation do not count...
        write("report/src/tables.rs", "another table");
        write("README.md", "other words");
        assert_eq!(source_fingerprint(&root).unwrap(), first);
        // ...the code does, and so does a new file or a moved one.
        write("device/src/lib.rs", "faster kernel");
        let second = source_fingerprint(&root).unwrap();
        assert_ne!(second, first);
        write("lab/src/new.rs", "");
        assert_ne!(source_fingerprint(&root).unwrap(), second);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
