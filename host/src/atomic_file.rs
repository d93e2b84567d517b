//! Output files written whole or not at all: the bytes go to a temporary
//! file in the destination folder, which is then renamed into place.

use anyhow::Context;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically.
pub fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".wavepath-");
    // Temporary files are private (0600); a finished image or report is not.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    let mut tmp = builder
        .tempfile_in(dir)
        .with_context(|| format!("{}: cannot create a file in this folder", dir.display()))?;
    tmp.write_all(bytes)
        .with_context(|| format!("{}: cannot write", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("{}: cannot move the finished file into place", path.display()))?;
    Ok(())
}
