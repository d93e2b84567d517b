//! Input files read with a size limit, and OS errors said once in words.

use std::path::Path;

/// The largest scene or experiment config accepted: such files are short
/// (meshes live in OBJ files), and a limit keeps a wrong path (a log, a
/// device) from being read whole.
pub const MAX_TEXT_FILE_BYTES: u64 = 16 << 20;

/// What a non-regular file is, for messages.
pub fn describe_special(m: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if m.is_dir() { "a folder" } else { "not a regular file" }
}

/// Opens the regular file at `path` for reading, with its size; the error
/// says what stands there instead.
pub fn open_sized(path: &Path) -> Result<(std::fs::File, u64), String> {
    let meta = std::fs::metadata(path).map_err(|e| io_reason(&e))?;
    if !meta.is_file() {
        // A FIFO would block until a writer comes, a device may never end.
        return Err(format!("is {}, not a regular file", describe_special(&meta)));
    }
    let file = std::fs::File::open(path).map_err(|e| io_reason(&e))?;
    Ok((file, meta.len()))
}

/// Opens the regular file at `path` for reading (a part of it: a header);
/// the error says what stands there instead.
pub fn open_regular(path: &Path) -> Result<std::fs::File, String> {
    open_sized(path).map(|(file, _)| file)
}

/// Reads the regular file at `path` if it holds at most `limit` bytes; the
/// error says what stands there instead, or how large it is.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let (file, len) = open_sized(path)?;
    if len > limit {
        return Err(format!(
            "is {len} bytes; the limit is {limit} bytes ({})",
            crate::system::memory::gib(limit)
        ));
    }
    let mut bytes = Vec::new();
    // The file may grow while it is read: read one byte past the limit.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_reason(&e))?;
    if bytes.len() as u64 > limit {
        return Err(format!("holds more than the limit of {limit} bytes"));
    }
    Ok(bytes)
}

/// An OS error in words, without the error code repeated.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "does not exist".into(),
        std::io::ErrorKind::PermissionDenied => "cannot be read (permission denied)".into(),
        _ => format!("cannot be read: {e}"),
    }
}

/// The UTF-8 text of the file at `path`, read as [`read_limited`] reads it.
pub fn read_text(path: &Path, limit: u64) -> Result<String, String> {
    String::from_utf8(read_limited(path, limit)?).map_err(|e| {
        format!(
            "is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_stands_at_the_path_is_named() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            read_limited(dir.path(), 10).unwrap_err(),
            "is a folder, not a regular file"
        );
        assert_eq!(
            read_limited(&dir.path().join("none"), 10).unwrap_err(),
            "does not exist"
        );
        let big = dir.path().join("big");
        std::fs::write(&big, [b'x'; 11]).unwrap();
        assert!(read_limited(&big, 10).unwrap_err().contains("the limit is 10 bytes"));
        assert_eq!(read_limited(&big, 11).unwrap().len(), 11);
        std::fs::write(&big, [0xff, 0xfe]).unwrap();
        assert!(read_text(&big, 10).unwrap_err().contains("not UTF-8"));
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_not_read() {
        let e = read_limited(Path::new("/dev/zero"), 1000).unwrap_err();
        assert_eq!(e, "is a device, not a regular file");
    }
}
