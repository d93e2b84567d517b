//! A studies tarball (`studies.tgz`, gzip-compressed tar): [`pack`]
//! writes the study folders a run made, and [`check`] reads one member by
//! member with every check made on
//! the headers before a byte is written: only folders and regular files,
//! each one of the files a study writes, inside a study's folder, none
//! twice, within [`MAX_MEMBERS`] members and [`MAX_BYTES`] of files, and
//! at most [`READ_LIMIT`] bytes decompressed. Then [`extract`] writes the
//! members checked, and only those, into a new folder.

use super::folder::is_study_name;
use super::{FIGURES, OWN_FILES};
use crate::partial::FOLDER as PARTIAL;
use flate2::read::GzDecoder;
use std::cell::Cell;
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use tar::EntryType;

/// The most members (folders and files) a study tarball holds: a study's
/// folder holds tens of files.
pub const MAX_MEMBERS: usize = 10_000;

/// The most bytes of files a study tarball holds, as their headers declare
/// them: a study's folder holds a few MB, and a CPU render a stop cut
/// short, kept in partial/, 88 MiB at the largest size a study renders on
/// the CPU (2560x1440).
pub const MAX_BYTES: u64 = 512 << 20;

/// The most bytes read of the decompressed tarball: the files, and for
/// each member a header with room for a long name (and the blocks'
/// padding), so that no header makes the check itself read without end.
pub const READ_LIMIT: u64 = MAX_BYTES + MAX_MEMBERS as u64 * (16 << 10);

/// Packs the `folders` of `results` (their folders and regular files;
/// a link is left out) into the tarball `to`, written beside it first and
/// renamed into place, so that `to` is always a whole tarball.
pub fn pack(results: &Path, folders: &[String], to: &Path) -> std::io::Result<()> {
    let part = to.with_extension("tgz.part");
    let file = std::fs::File::create(&part)?;
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(file, flate2::Compression::default()));
    tar.follow_symlinks(false);
    for folder in folders {
        append_tree(&mut tar, &results.join(folder), Path::new(folder))?;
    }
    tar.into_inner()?.finish()?;
    std::fs::rename(part, to)
}

/// Appends the folder `from` as `name`, with its folders and regular files.
fn append_tree<W: std::io::Write>(tar: &mut tar::Builder<W>, from: &Path, name: &Path) -> std::io::Result<()> {
    tar.append_dir(name, from)?;
    let mut entries = std::fs::read_dir(from)?.collect::<Result<Vec<_>, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let kind = entry.file_type()?;
        let inside = name.join(entry.file_name());
        if kind.is_dir() {
            append_tree(tar, &entry.path(), &inside)?;
        } else if kind.is_file() {
            tar.append_path_with_name(entry.path(), &inside)?;
        }
    }
    Ok(())
}

/// One member as checked: its name in the tarball, its size and its path
/// inside the tarball's folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedMember {
    /// Its name as the tarball writes it (without a trailing `/`).
    pub name: String,
    /// The bytes its header declares.
    pub size: u64,
    /// Its path, `STUDY/...`, without `.` parts.
    pub path: PathBuf,
}

/// Reads every member's header of `archive` and checks it; nothing is
/// written. The error names the member and what was expected.
pub fn check(archive: &Path) -> Result<Vec<CheckedMember>, String> {
    let mut checked = Vec::new();
    let mut seen = HashSet::new();
    let mut total = 0u64;
    visit(archive, |member, _| {
        let path = check_member(member)?;
        total += member.size;
        if checked.len() + 1 > MAX_MEMBERS {
            return Err(format!(
                "{}: member {}; a study tarball holds at most {MAX_MEMBERS} (folders and files)",
                member.name,
                checked.len() + 1
            ));
        }
        if total > MAX_BYTES {
            return Err(format!(
                "{}: {} bytes, {total} with the members before it; a study tarball holds at most {} MiB of files",
                member.name,
                member.size,
                MAX_BYTES >> 20
            ));
        }
        if !seen.insert(path.clone()) {
            return Err(format!("{}: in the tarball twice", member.name));
        }
        checked.push(CheckedMember {
            name: member.name.clone(),
            size: member.size,
            path,
        });
        Ok(())
    })?;
    Ok(checked)
}

/// Writes the `checked` members of `archive` under `into`, a new, empty
/// folder, refusing a member that is not the one checked (the tarball
/// changed while it was read).
pub fn extract(archive: &Path, checked: &[CheckedMember], into: &Path) -> Result<(), String> {
    let mut left = checked.iter();
    visit(archive, |member, data| {
        let expected = left.next();
        if expected.is_none_or(|c| (c.name.as_str(), c.size) != (member.name.as_str(), member.size)) {
            return Err(format!(
                "{}: not the member checked; the tarball changed while it was read",
                member.name
            ));
        }
        let path = into.join(&expected.expect("compared above").path);
        let failed = |e: std::io::Error| format!("{}: cannot write it: {e}", path.display());
        if member.is_dir {
            return std::fs::create_dir_all(&path).map_err(failed);
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(failed)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(failed)?;
        std::io::copy(data, &mut file).map_err(|e| format!("{}: not a readable tarball: {e}", archive.display()))?;
        Ok(())
    })
}

/// A member's header as the checks read it.
struct MemberHeader {
    /// Its name, as written, without a trailing `/`.
    name: String,
    /// The bytes its header declares.
    size: u64,
    /// A folder (else a regular file: anything else is refused first).
    is_dir: bool,
    /// What it is, where it is neither a folder nor a regular file.
    special: Option<String>,
}

/// Calls `each(member, data)` on every member of the tarball `archive` in
/// order, read as a stream (a member's data only while it is visited).
fn visit(
    archive: &Path,
    mut each: impl FnMut(&MemberHeader, &mut dyn Read) -> Result<(), String>,
) -> Result<(), String> {
    let file = renderer::io::input_file::open_regular(archive).map_err(|why| {
        format!(
            "{}: {why}; expected a studies.tgz that `wavepath study run` packed",
            archive.display()
        )
    })?;
    let exceeded = Cell::new(false);
    let bounded = Bounded {
        inner: GzDecoder::new(file),
        left: READ_LIMIT,
        exceeded: &exceeded,
    };
    let mut tar = tar::Archive::new(bounded);
    let unreadable = |e: std::io::Error| {
        if exceeded.get() {
            format!(
                "{}: more than {} MiB once decompressed; a study tarball holds at most {} MiB of files in \
                 {MAX_MEMBERS} members",
                archive.display(),
                READ_LIMIT >> 20,
                MAX_BYTES >> 20
            )
        } else {
            format!("{}: not a readable tarball: {e}", archive.display())
        }
    };
    for entry in tar.entries().map_err(unreadable)? {
        let mut entry = entry.map_err(unreadable)?;
        let header = header_of(&entry);
        each(&header, &mut entry)?;
    }
    Ok(())
}

/// What the checks read of `entry`'s header.
fn header_of<R: Read>(entry: &tar::Entry<'_, R>) -> MemberHeader {
    let raw = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
    let name = match raw.trim_end_matches('/') {
        "" => raw.clone(),
        trimmed => trimmed.to_string(),
    };
    let kind = entry.header().entry_type();
    let target = || {
        entry
            .link_name_bytes()
            .map(|t| format!(" to {}", String::from_utf8_lossy(&t)))
            .unwrap_or_default()
    };
    let special = match kind {
        EntryType::Regular | EntryType::Directory => None,
        EntryType::Symlink => Some(format!("a symbolic link{}", target())),
        EntryType::Link => Some(format!("a hard link{}", target())),
        EntryType::Fifo => Some("a FIFO".to_string()),
        EntryType::Char => Some("a character device".to_string()),
        EntryType::Block => Some("a block device".to_string()),
        EntryType::Continuous => Some("a contiguous file".to_string()),
        other => Some(format!("an entry of type {:?}", other.as_byte() as char)),
    };
    MemberHeader {
        name,
        size: entry.size(),
        is_dir: kind == EntryType::Directory,
        special,
    }
}

/// The member's path inside the tarball's folder, refusing one that is
/// not a folder or a regular file, that leaves the folder, or that is not
/// one of the files a study writes.
fn check_member(member: &MemberHeader) -> Result<PathBuf, String> {
    let name = &member.name;
    if let Some(kind) = &member.special {
        return Err(format!(
            "{name}: {kind}; only folders and regular files may come out of a study tarball"
        ));
    }
    let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    if name.starts_with('/') || parts.contains(&"..") {
        return Err(format!("{name}: a path outside the tarball's folder"));
    }
    let Some((study, inside)) = parts.split_first() else {
        return Ok(PathBuf::new());
    };
    if !is_study_name(study) {
        return Err(format!(
            "{name}: `{study}` is not a study's folder (a study is named for experiments/NAME.toml, NAME of \
             letters, digits, `_` and `-`, and not `{FIGURES}`)"
        ));
    }
    let in_subfolder = |p: &str| p == FIGURES || p == PARTIAL;
    let written_by_a_study = if member.is_dir {
        inside.is_empty() || (inside.len() == 1 && in_subfolder(inside[0]))
    } else {
        (inside.len() == 1 && OWN_FILES.contains(&inside[0])) || (inside.len() == 2 && in_subfolder(inside[0]))
    };
    if !written_by_a_study {
        return Err(format!(
            "{name}: not a file a study writes (STUDY/ with {}, {FIGURES}/ and {PARTIAL}/ of files)",
            OWN_FILES.join(", ")
        ));
    }
    Ok(parts.iter().collect())
}

/// The decompressed tarball, failing once more than [`READ_LIMIT`] bytes
/// are read (and noting so in `exceeded`).
struct Bounded<'a, R> {
    inner: R,
    left: u64,
    exceeded: &'a Cell<bool>,
}

impl<R: Read> Read for Bounded<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let most = buf.len().min(usize::try_from(self.left + 1).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..most])?;
        if n as u64 > self.left {
            self.exceeded.set(true);
            return Err(std::io::Error::other("past the bound on decompressed bytes"));
        }
        self.left -= n as u64;
        Ok(n)
    }
}
