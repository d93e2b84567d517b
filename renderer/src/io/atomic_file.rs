//! Output files written whole or not at all, and checked before any work.
//!
//! [`check_outputs`] runs before a command starts, over every file it
//! writes: each one's folder must exist and take a new file, what stands
//! at its path must be absent or a regular file, it must not be one of the
//! command's inputs (every file it reads: a scene's meshes and textures
//! too), and no two outputs may name the same file. A symbolic link is
//! followed to its target, so the link stays and the target is written;
//! hard links and other spellings of one path are seen through.
//!
//! [`write()`] puts the bytes in a temporary file beside the target and renames
//! it into place, so a failed or interrupted command never leaves half a
//! file; [`write_unless`] also abandons the write when a stop is requested
//! (a first Ctrl-C or SIGTERM) before the file is in place. Temporary files in flight are registered
//! ([`crate::system::unfinished`]), so that an immediate exit (a second
//! Ctrl-C) deletes them and none outlives the process.

use crate::system::unfinished::Registered;
use anyhow::{Context, bail};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The prefix of temporary files (a dot file, hidden from listings).
pub const TEMP_PREFIX: &str = ".wavepath-";

/// Symbolic links followed before giving up (as Linux's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// A file a command writes, and what it is, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// Where it is written.
    pub path: PathBuf,
    /// What it is: "the image", "the launch log".
    pub what: &'static str,
}

impl Output {
    /// The output `what` at `path`.
    pub fn new(path: impl Into<PathBuf>, what: &'static str) -> Self {
        Output {
            path: path.into(),
            what,
        }
    }
}

/// The file a write to `path` lands in: `path` itself, or the end of its
/// chain of symbolic links (which need not exist yet).
pub fn target(path: &Path) -> anyhow::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p).with_context(|| format!("{}: cannot read the link", p.display()))?;
                p = match p.parent() {
                    Some(dir) => dir.join(link),
                    None => link,
                };
            }
            _ => return Ok(p),
        }
    }
    bail!("{}: more than {MAX_LINKS} symbolic links in a chain", path.display())
}

/// The folder `path` is in (`.` for a bare file name).
fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// What a path names, to tell whether two paths name one file.
#[derive(Clone, Debug, PartialEq, Eq)]
enum FileId {
    /// An existing file, by its device and inode (which hard links share).
    #[cfg(unix)]
    Inode(u64, u64),
    /// A file by its canonical path: its folder's, with its name, for a file
    /// yet to be made (and for an existing one where there are no inodes).
    Path(PathBuf),
}

impl FileId {
    /// The file `path` names, after links; `None` where that cannot be told
    /// (its folder does not exist, or it has no file name).
    fn of(path: &Path) -> Option<FileId> {
        match std::fs::metadata(path) {
            #[cfg(unix)]
            Ok(m) => {
                use std::os::unix::fs::MetadataExt;
                Some(FileId::Inode(m.dev(), m.ino()))
            }
            #[cfg(not(unix))]
            Ok(_) => std::fs::canonicalize(path).ok().map(FileId::Path),
            Err(_) => {
                let dir = std::fs::canonicalize(folder(path)).ok()?;
                Some(FileId::Path(dir.join(path.file_name()?)))
            }
        }
    }
}

/// Where `path` (shown as `shown` in errors) writes: the end of its chain
/// of links, which must be absent or a regular file.
fn regular_target(path: &Path, shown: impl Fn(&Path) -> String) -> anyhow::Result<PathBuf> {
    let target = target(path)?;
    if let Ok(m) = std::fs::metadata(&target)
        && !m.is_file()
    {
        bail!(
            "{}: is {}; wavepath writes its outputs to regular files only",
            shown(&target),
            crate::io::input_file::describe_special(&m)
        );
    }
    Ok(target)
}

/// Checks, before any work, every output of a command: each one's folder
/// exists and is writable and it is absent or a regular file (after
/// following links), none is one of `inputs` (every file the command reads),
/// and no two name the same file (through links, hard links or another
/// spelling of the path). Every command that writes goes through here.
pub fn check_outputs<P: AsRef<Path>>(outputs: &[Output], inputs: &[P]) -> anyhow::Result<()> {
    let inputs: Vec<(&Path, Option<FileId>)> = inputs.iter().map(|i| (i.as_ref(), FileId::of(i.as_ref()))).collect();
    let mut checked: Vec<(&Output, FileId)> = Vec::new();
    for output in outputs {
        let (shown, id) = check(&output.path, &inputs)?;
        let Some(id) = id else { continue };
        if let Some((earlier, _)) = checked.iter().find(|(_, e)| *e == id) {
            let same = if earlier.path == output.path {
                String::new()
            } else {
                format!(" names the same file as {}, so it would be", earlier.path.display())
            };
            let is = if same.is_empty() { " is" } else { "" };
            bail!(
                "{shown}:{same}{is} both {} and {}; choose another path for one",
                earlier.what,
                output.what
            );
        }
        checked.push((output, id));
    }
    Ok(())
}

/// Checks one output `path` against `inputs` (each with the file it
/// names); returns how errors show it and the file it names.
fn check(path: &Path, inputs: &[(&Path, Option<FileId>)]) -> anyhow::Result<(String, Option<FileId>)> {
    let shown_for = |target: &Path| {
        if target == path {
            path.display().to_string()
        } else {
            format!("{} (a link to {})", path.display(), target.display())
        }
    };
    let target = regular_target(path, shown_for)?;
    let shown = shown_for(&target);
    let id = FileId::of(&target);
    if let Some((input, _)) = inputs.iter().find(|(_, i)| i.is_some() && *i == id) {
        bail!(
            "{shown}: is also an input of this command ({}); choose another output path",
            input.display()
        );
    }
    let dir = folder(&target);
    if !dir.is_dir() {
        bail!("{shown}: the folder {} does not exist", dir.display());
    }
    // The probe's name is as long as the target's, so that a name the file
    // system refuses (too long) is found now, not after the work.
    let name_len = target.file_name().map_or(0, |n| n.len());
    match temp_builder()
        .rand_bytes(name_len.saturating_sub(TEMP_PREFIX.len()).max(6))
        .tempfile_in(dir)
    {
        Ok(probe) => drop(probe),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidFilename => bail!(
            "{shown}: the file name ({name_len} bytes) is too long for the file system in {}; choose a shorter name",
            dir.display()
        ),
        Err(e) => {
            return Err(e).with_context(|| format!("{shown}: cannot create a file in the folder {}", dir.display()));
        }
    }
    Ok((shown, id))
}

/// A builder of temporary files as this module makes them.
fn temp_builder() -> tempfile::Builder<'static, 'static> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    // Temporary files are private (0600); a finished image or report is not.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    builder
}

/// How a write that a stop request may cut short ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// The file is in place, whole.
    Whole,
    /// A stop request came first: nothing was written, the temporary file
    /// is removed and what stood at the path is untouched.
    Abandoned,
}

/// Bytes written between two looks at a stop request (a few milliseconds
/// of writing).
const STOP_CHECK_BYTES: usize = 8 << 20;

/// Writes `bytes` to `path` atomically. A symbolic link is followed and its
/// target replaced; anything other than a regular file is refused.
pub fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_unless(path, bytes, &|| false).map(drop)
}

/// [`write()`], abandoned as soon as `stopped` says so: it is asked before
/// each few megabytes and once more before the file is moved into place.
pub fn write_unless(path: &Path, bytes: &[u8], stopped: &dyn Fn() -> bool) -> anyhow::Result<Written> {
    let target = regular_target(path, |_| path.display().to_string())?;
    let dir = folder(&target);
    let mut tmp = temp_builder().tempfile_in(dir).with_context(|| {
        format!(
            "{}: cannot create a file in the folder {}",
            path.display(),
            dir.display()
        )
    })?;
    let _registered = Registered::new(tmp.path());
    for chunk in bytes.chunks(STOP_CHECK_BYTES) {
        if stopped() {
            // Dropping `tmp` removes the temporary file.
            return Ok(Written::Abandoned);
        }
        tmp.write_all(chunk)
            .with_context(|| format!("{}: cannot write", path.display()))?;
    }
    tmp.flush()
        .with_context(|| format!("{}: cannot write", path.display()))?;
    if stopped() {
        return Ok(Written::Abandoned);
    }
    tmp.persist(&target)
        .map_err(|e| e.error)
        .with_context(|| format!("{}: cannot move the finished file into place", path.display()))?;
    Ok(Written::Whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(TEMP_PREFIX))
            .collect()
    }

    /// [`check_outputs`] of one output and no inputs, as its message.
    fn refused(path: &Path) -> String {
        check_outputs::<&Path>(&[Output::new(path, "the image")], &[])
            .unwrap_err()
            .to_string()
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_followed_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        check_outputs::<&Path>(&[Output::new(&link, "the text")], &[]).unwrap();
        write(&link, b"abc").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"abc");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_refused_untouched() {
        let e = refused(Path::new("/dev/null"));
        assert!(e.contains("/dev/null") && e.contains("a device"), "{e}");
        let e = write(Path::new("/dev/null"), b"x").unwrap_err().to_string();
        assert!(e.contains("regular files only"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = refused(dir.path());
        assert!(e.contains("a folder"), "{e}");
    }

    #[test]
    fn an_input_is_not_an_output() {
        let dir = tempfile::tempdir().unwrap();
        let scene = dir.path().join("scene.toml");
        std::fs::write(&scene, "x").unwrap();
        let output = |name: &str| [Output::new(dir.path().join(name), "the image")];
        let e = check_outputs(&output("./scene.toml"), &[&scene])
            .unwrap_err()
            .to_string();
        assert!(e.contains("also an input"), "{e}");
        check_outputs(&output("out.png"), &[&scene]).unwrap();
        // An input that does not exist (yet) is no output either.
        let e = check_outputs(&output("./none.png"), &[dir.path().join("none.png")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("also an input"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn no_two_outputs_name_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        let check = |a: &str, b: &str| {
            check_outputs::<&Path>(&[Output::new(at(a), "the image"), Output::new(at(b), "the log")], &[])
                .map_err(|e| e.to_string())
        };
        let e = check("x.png", "x.png").unwrap_err();
        assert!(
            e.ends_with("x.png: is both the image and the log; choose another path for one"),
            "{e}"
        );
        std::fs::create_dir(at("sub")).unwrap();
        let e = check("x.png", "sub/../x.png").unwrap_err();
        assert!(
            e.contains("sub/../x.png: names the same file as") && e.contains("both the image and the log"),
            "{e}"
        );
        // A link to a file yet to be made, and a hard link.
        std::os::unix::fs::symlink("y.png", at("link.png")).unwrap();
        let e = check("y.png", "link.png").unwrap_err();
        assert!(e.contains("link.png (a link to") && e.contains("both"), "{e}");
        std::fs::write(at("z.png"), "z").unwrap();
        std::fs::hard_link(at("z.png"), at("hard.png")).unwrap();
        let e = check("z.png", "hard.png").unwrap_err();
        assert!(
            e.contains("hard.png: names the same file as") && e.contains("z.png"),
            "{e}"
        );
        check("x.png", "y.png").unwrap();
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_stop_during_a_write_abandons_it_and_leaves_the_target_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.obj");
        std::fs::write(&path, "earlier").unwrap();
        let bytes = vec![b'v'; 3 * STOP_CHECK_BYTES];
        // Stopped after the first chunk is written.
        let looks = std::cell::Cell::new(0);
        let stopped = || {
            looks.set(looks.get() + 1);
            looks.get() > 1
        };
        assert_eq!(write_unless(&path, &bytes, &stopped).unwrap(), Written::Abandoned);
        assert_eq!(looks.get(), 2);
        assert_eq!(std::fs::read(&path).unwrap(), b"earlier");
        assert!(leftovers(dir.path()).is_empty());
        // Stopped after the last chunk, before the rename.
        let looks = std::cell::Cell::new(0);
        let stopped = || {
            looks.set(looks.get() + 1);
            looks.get() > 3
        };
        assert_eq!(write_unless(&path, &bytes, &stopped).unwrap(), Written::Abandoned);
        assert_eq!(std::fs::read(&path).unwrap(), b"earlier");
        assert!(leftovers(dir.path()).is_empty());
        assert_eq!(write_unless(&path, &bytes, &|| false).unwrap(), Written::Whole);
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_missing_folder_is_named() {
        let e = refused(Path::new("no/such/dir/x.png"));
        assert!(e.contains("no/such/dir") && e.contains("does not exist"), "{e}");
    }
}
