//! `scripts/gpu-study` under hostile input: `unpack` installs only the
//! folders and regular files of whole, checked studies, by a swap that a
//! refusal never starts, and `pack` checks every argument before it clears
//! gpu-run/ or builds. Each test runs a copy of the script in a copy of the
//! checkout's layout (scripts/, experiments/, results/, gpu-run/), with a
//! stand-in for scripts/gpu-pack: no GPU, network or release build.

mod util;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tar::{EntryType, Header};
use util::{repo, wavepath_bin};

/// The study whose committed results the tests pack and unpack, and its
/// run with a --reference binary (`NAME_COMMIT`).
const STUDY: &str = "regression_check_nee";
const REFERENCE_RUN: &str = "regression_check_nee_30955b3";

/// A checkout's layout in a temporary folder: the script, the configs of
/// [`STUDY`] and `nee`, a scene, and results/STUDY as an earlier unpack left
/// it (with a reference file of its own, and an old report).
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("checkout");
        for sub in ["scripts", "experiments", "scenes", "results", "gpu-run"] {
            fs::create_dir_all(root.join(sub)).unwrap();
        }
        for file in [
            "scripts/gpu-study",
            "scripts/gpu_study_unpack.py",
            "scripts/input_file.py",
            "scripts/gpu_study_splits.py",
            "scenes/cornell_diffuse.toml",
        ] {
            fs::copy(repo(file), root.join(file)).unwrap();
        }
        for config in [STUDY, "nee"] {
            let file = format!("experiments/{config}.toml");
            fs::copy(repo(&file), root.join(file)).unwrap();
        }
        // scripts/gpu-pack's stand-in: notes that it ran, and packs a binary
        // (with --mpi, the MPI build and an MPI runtime: FAKE_MPI_RUN).
        let pack = root.join("scripts/gpu-pack");
        fs::write(&pack, FAKE_GPU_PACK).unwrap();
        make_executable(&pack);
        let mpi_run = root.join("scripts/fake-mpi-run");
        fs::write(&mpi_run, FAKE_MPI_RUN).unwrap();
        make_executable(&mpi_run);
        let installed = root.join("results").join(STUDY);
        copy_study(STUDY, &installed);
        fs::write(installed.join("report.md"), "OLD REPORT\n").unwrap();
        fs::create_dir_all(installed.join("references")).unwrap();
        fs::write(installed.join("references/kept.txt"), "the study's own reference").unwrap();
        fs::create_dir_all(dir.path().join("outside")).unwrap();
        fs::write(dir.path().join("outside/victim.txt"), "outside the checkout").unwrap();
        Tree { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("checkout")
    }

    fn outside(&self) -> PathBuf {
        self.dir.path().join("outside")
    }

    /// Runs the copy of `scripts/gpu-study` from the checkout's root,
    /// stopped after two minutes, so that a read that waits fails the test
    /// instead of hanging it.
    fn gpu_study(&self, args: &[&str]) -> Output {
        Command::new("timeout")
            .arg("120")
            .arg(self.root().join("scripts/gpu-study"))
            .args(args)
            .current_dir(self.root())
            .env("WAVEPATH_BIN", wavepath_bin())
            .output()
            .unwrap()
    }

    /// Unpacks the tarball `members` make.
    fn unpack(&self, members: impl FnOnce(&mut Tarball)) -> Output {
        let path = self.dir.path().join("studies.tgz");
        let mut tarball = Tarball(tar::Builder::new(flate2::write::GzEncoder::new(
            fs::File::create(&path).unwrap(),
            flate2::Compression::fast(),
        )));
        members(&mut tarball);
        tarball.0.into_inner().unwrap().finish().unwrap();
        self.gpu_study(&["unpack", path.to_str().unwrap()])
    }
}

/// A stand-in for `scripts/gpu-pack`: `gpu-run/built` and a packed
/// binary; with `--mpi`, `gpu-run/built-mpi`, the MPI build and
/// `gpu-run/mpi.tar.xz` holding [`FAKE_MPI_RUN`] as `mpi/run`.
const FAKE_GPU_PACK: &str = r#"#!/usr/bin/env bash
set -e
cd "$(dirname "$0")/.."
mkdir -p gpu-run
if [[ ${1:-} == --mpi ]]; then
  touch gpu-run/built-mpi
  echo binary | xz >gpu-run/wavepath-mpi.xz
  stage=$(mktemp -d)
  mkdir "$stage/mpi"
  cp scripts/fake-mpi-run "$stage/mpi/run"
  tar -C "$stage" -cJf gpu-run/mpi.tar.xz mpi
  rm -rf "$stage"
else
  touch gpu-run/built
  echo binary | xz >gpu-run/wavepath.xz
fi
"#;

/// A stand-in for MPICH's `mpiexec -n N`: runs the command once, with
/// `FAKE_RANKS=N` in its environment.
const FAKE_MPI_RUN: &str = r#"#!/usr/bin/env bash
[[ $1 == -n ]] || exit 2
export FAKE_RANKS=$2
shift 2
exec "$@"
"#;

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// The committed study `name`'s files, copied to `to`.
fn copy_study(name: &str, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for file in ["runs.csv", "kernels.csv", "manifest.toml", "report.md"] {
        fs::copy(repo(&format!("results/{name}/{file}")), to.join(file)).unwrap();
    }
}

/// What a test case writes into its tarball.
type Members<'a> = Box<dyn Fn(&mut Tarball) + 'a>;

/// A study tarball being written, as study.sh packs one (`./STUDY/FILE`).
struct Tarball(tar::Builder<flate2::write::GzEncoder<fs::File>>);

impl Tarball {
    fn file(&mut self, path: &str, bytes: &[u8]) -> &mut Self {
        let mut h = Header::new_gnu();
        h.set_entry_type(EntryType::Regular);
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        self.0.append_data(&mut h, path, bytes).unwrap();
        self
    }

    /// A regular file whose name is written as is, past the checks the
    /// tar crate makes (a `..` in it, say).
    fn raw_file(&mut self, path: &str, bytes: &[u8]) -> &mut Self {
        let mut h = Header::new_old();
        h.as_old_mut().name[..path.len()].copy_from_slice(path.as_bytes());
        h.set_entry_type(EntryType::Regular);
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        self.0.append(&h, bytes).unwrap();
        self
    }

    /// A regular file's header declaring `size` bytes, without the bytes:
    /// a check that reads the header alone refuses it before reading on.
    fn declared(&mut self, path: &str, size: u64) -> &mut Self {
        let mut h = Header::new_gnu();
        h.set_path(path).unwrap();
        h.set_entry_type(EntryType::Regular);
        h.set_size(size);
        h.set_mode(0o644);
        h.set_cksum();
        std::io::Write::write_all(self.0.get_mut(), h.as_bytes()).unwrap();
        self
    }

    fn dir(&mut self, path: &str) -> &mut Self {
        self.special(path, EntryType::Directory, None)
    }

    /// A member of `kind` (a link to `target`, a FIFO, a device).
    fn special(&mut self, path: &str, kind: EntryType, target: Option<&str>) -> &mut Self {
        let mut h = Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(0);
        h.set_mode(if kind == EntryType::Directory { 0o755 } else { 0o644 });
        if kind == EntryType::Char || kind == EntryType::Block {
            h.set_device_major(1).unwrap();
            h.set_device_minor(3).unwrap();
        }
        match target {
            Some(t) => self.0.append_link(&mut h, path, t).unwrap(),
            None => self.0.append_data(&mut h, path, std::io::empty()).unwrap(),
        }
        self
    }

    /// The committed study [`STUDY`] with its `file` replaced by a member
    /// of `kind` (a link to `target`, a FIFO, a device).
    fn study_with_special(&mut self, file: &str, kind: EntryType, target: Option<&str>) -> &mut Self {
        self.study_as(STUDY, STUDY, &[file], None)
            .special(&format!("./{STUDY}/{file}"), kind, target)
    }

    /// The committed study `from`, packed as folder `name`, with `except`
    /// left out and `text` in place of `changed`'s.
    fn study_as(&mut self, from: &str, name: &str, except: &[&str], changed: Option<(&str, &str)>) -> &mut Self {
        self.dir(&format!("./{name}/"));
        for file in ["runs.csv", "kernels.csv", "manifest.toml", "report.md"] {
            if except.contains(&file) {
                continue;
            }
            let bytes = match changed {
                Some((f, text)) if f == file => text.as_bytes().to_vec(),
                _ => fs::read(repo(&format!("results/{from}/{file}"))).unwrap(),
            };
            self.file(&format!("./{name}/{file}"), &bytes);
        }
        self
    }

    fn study(&mut self, name: &str) -> &mut Self {
        self.study_as(name, name, &[], None)
    }
}

/// Every path under `dir` with what it is: a folder, a link and its
/// target, or a file and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut all = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let what = if meta.is_symlink() {
                format!("link to {}", fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                "folder".to_string()
            } else if meta.is_file() {
                String::from_utf8_lossy(&fs::read(&path).unwrap()).into_owned()
            } else {
                format!("special {:?}", meta.file_type())
            };
            all.insert(path.strip_prefix(dir).unwrap().to_path_buf(), what);
        }
    }
    all
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts that `o` failed with a message holding each of `expected`.
fn refused(o: &Output, what: &str, expected: &[&str]) {
    let err = stderr(o);
    assert!(!o.status.success(), "{what}: accepted\n{err}");
    for e in expected {
        assert!(err.contains(e), "{what}: the message should name `{e}`:\n{err}");
    }
}

/// Everything in the tree: the checkout (results/, gpu-run/ and the
/// folder beside results/, which the staging uses) and the folder outside.
fn everything(tree: &Tree) -> BTreeMap<PathBuf, String> {
    snapshot(tree.dir.path())
}

/// Asserts that `after` is `before` but for the tarballs the test wrote,
/// naming each path that differs.
fn unchanged(before: &BTreeMap<PathBuf, String>, after: &BTreeMap<PathBuf, String>, what: &str) {
    let written = ["studies.tgz", "junk.tgz"].map(PathBuf::from);
    let differ: Vec<_> = before
        .keys()
        .chain(after.keys())
        .filter(|p| !written.contains(p) && before.get(*p) != after.get(*p))
        .collect();
    assert!(differ.is_empty(), "{what}: changed {differ:?}");
}

#[test]
fn unpack_refuses_links_fifos_and_devices_before_writing_anything() {
    let tree = Tree::new();
    let victim = tree.outside().join("victim.txt");
    let victim_path = victim.to_str().unwrap().to_string();
    let outside = tree.outside().to_str().unwrap().to_string();
    let cases: Vec<(&str, &str, Members<'_>)> = vec![
        (
            "a report linked to a file outside",
            "regression_check_nee/report.md: a symbolic link",
            Box::new(|t| {
                t.study_with_special("report.md", EntryType::Symlink, Some(&victim_path));
            }),
        ),
        (
            "a linked figures folder",
            "regression_check_nee/figures: a symbolic link",
            Box::new(|t| {
                t.study(STUDY)
                    .special("./regression_check_nee/figures", EntryType::Symlink, Some(&outside));
            }),
        ),
        (
            "a top-level link to a folder",
            "evil: a symbolic link",
            Box::new(|t| {
                t.study(STUDY).special("./evil", EntryType::Symlink, Some(&outside));
            }),
        ),
        (
            "a hard link",
            "regression_check_nee/report.md: a hard link",
            Box::new(|t| {
                t.study_with_special("report.md", EntryType::Link, Some("./regression_check_nee/runs.csv"));
            }),
        ),
        (
            "a FIFO as kernels.csv",
            "regression_check_nee/kernels.csv: a FIFO",
            Box::new(|t| {
                t.study_with_special("kernels.csv", EntryType::Fifo, None);
            }),
        ),
        (
            "a character device as report.md",
            "regression_check_nee/report.md: a character device",
            Box::new(|t| {
                t.study_with_special("report.md", EntryType::Char, None);
            }),
        ),
        (
            "a block device",
            "regression_check_nee/runs.csv: a block device",
            Box::new(|t| {
                t.study_with_special("runs.csv", EntryType::Block, None);
            }),
        ),
    ];
    for (what, named, members) in cases {
        let before = everything(&tree);
        let o = tree.unpack(|t| members(t));
        refused(&o, what, &[named, "only folders and regular files"]);
        unchanged(&before, &everything(&tree), what);
        assert_eq!(fs::read_to_string(&victim).unwrap(), "outside the checkout", "{what}");
    }
}

#[test]
fn unpack_installs_a_whole_study_with_its_report_written_afresh() {
    let tree = Tree::new();
    // The tarball has no report.md: the old one must not stay beside the
    // new rows.
    let o = tree.unpack(|t| {
        t.study_as(STUDY, STUDY, &["report.md"], None).study(REFERENCE_RUN);
    });
    assert!(o.status.success(), "{}", stderr(&o));
    let results = tree.root().join("results");
    for name in [STUDY, REFERENCE_RUN] {
        assert_eq!(
            fs::read_to_string(results.join(name).join("report.md")).unwrap(),
            fs::read_to_string(repo(&format!("results/{name}/report.md"))).unwrap(),
            "{name}: the report of the rows installed"
        );
        assert_eq!(
            fs::read(results.join(name).join("runs.csv")).unwrap(),
            fs::read(repo(&format!("results/{name}/runs.csv"))).unwrap()
        );
    }
    assert_eq!(
        fs::read_to_string(results.join(STUDY).join("references/kept.txt")).unwrap(),
        "the study's own reference",
        "what else the folder held stays"
    );
    assert!(results.join("SUMMARY.md").is_file());
    let leftovers: Vec<_> = fs::read_dir(tree.root())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "staging left behind: {leftovers:?}");
}

/// The committed runs of [`STUDY`], made by MPI ranks 0 and 1 in turn on
/// host `h`, and the `[[rank]]` entries the runner writes for them.
fn runs_of_two_ranks() -> (Vec<u8>, String) {
    let mut reader = csv::Reader::from_path(repo(&format!("results/{STUDY}/runs.csv"))).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (rank, host) = (column("rank"), column("host"));
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&headers).unwrap();
    let mut rows = [0; 2];
    for (i, record) in reader.records().enumerate() {
        let mut cells: Vec<String> = record.unwrap().iter().map(String::from).collect();
        (cells[rank], cells[host]) = ((i % 2).to_string(), "h".into());
        rows[i % 2] += 1;
        writer.write_record(&cells).unwrap();
    }
    let entries = (0..2)
        .map(|k| {
            format!(
                "\n[[rank]]\nrank = {k}\nhost = \"h\"\nrows = {}\nrender_s = 1.0\n",
                rows[k]
            )
        })
        .collect();
    (writer.into_inner().unwrap(), entries)
}

#[test]
fn unpack_installs_spreads_whose_manifests_agree_with_their_names() {
    let tree = Tree::new();
    let manifest = fs::read_to_string(repo(&format!("results/{STUDY}/manifest.toml"))).unwrap();
    let device = &manifest[manifest.find("[device]").unwrap()..manifest.find("[build]").unwrap()];
    let gpus = manifest.clone()
        + &(0..2)
            .map(|k| {
                device
                    .replace("[device]", "\n[[devices]]")
                    .replace("ordinal = 0", &format!("ordinal = {k}"))
            })
            .collect::<String>();
    let (runs, rank_entries) = runs_of_two_ranks();
    let ranks = manifest.clone() + &rank_entries;
    let (over_gpus, over_ranks) = (format!("{STUDY}_gpus2"), format!("{STUDY}_ranks2"));
    let o = tree.unpack(|t| {
        t.study_as(STUDY, &over_gpus, &[], Some(("manifest.toml", &gpus)))
            .study_as(STUDY, &over_ranks, &["runs.csv"], Some(("manifest.toml", &ranks)))
            .file(&format!("./{over_ranks}/runs.csv"), &runs);
    });
    assert!(o.status.success(), "{}", stderr(&o));
    let results = tree.root().join("results");
    for name in [&over_gpus, &over_ranks] {
        assert!(
            results.join(name).join("report.md").is_file(),
            "{name}: installed with its report"
        );
    }
    let summary = fs::read_to_string(results.join("SUMMARY.md")).unwrap();
    for line in [
        format!("| 2 GPUs (`--devices`) | [`{over_gpus}`]({over_gpus}/report.md) |"),
        format!("| 2 MPI ranks, a GPU each | [`{over_ranks}`]({over_ranks}/report.md) |"),
    ] {
        assert!(summary.contains(&line), "{line}\n{summary}");
    }
}

#[test]
fn unpack_leaves_out_a_study_its_manifest_says_was_cut_short() {
    let manifest = fs::read_to_string(repo(&format!("results/{STUDY}/manifest.toml"))).unwrap();
    assert!(manifest.contains("\nstatus = \"complete\"\n"));
    let interrupted = "status = \"interrupted by a stop request; --resume continues it\"";
    for (what, text) in [
        (
            "an interrupted study",
            manifest.replacen("status = \"complete\"", interrupted, 1),
        ),
        (
            "an indented status",
            manifest.replacen("status = \"complete\"", &format!("  {interrupted}"), 1),
        ),
    ] {
        let tree = Tree::new();
        let before = snapshot(&tree.root().join(format!("results/{STUDY}")));
        let o = tree.unpack(|t| {
            t.study_as(STUDY, STUDY, &[], Some(("manifest.toml", &text)));
        });
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        assert!(stderr(&o).contains("was cut short"), "{what}: {}", stderr(&o));
        let after = snapshot(&tree.root().join(format!("results/{STUDY}")));
        unchanged(&before, &after, what);
    }
}

#[test]
fn a_refused_tarball_leaves_results_as_it_was() {
    let manifest = fs::read_to_string(repo(&format!("results/{STUDY}/manifest.toml"))).unwrap();
    let runs = fs::read_to_string(repo(&format!("results/{STUDY}/runs.csv"))).unwrap();
    let cases: Vec<(&str, &[&str], Members<'_>)> = vec![
        (
            "a manifest without a status",
            &["regression_check_nee/manifest.toml", "has no status"],
            Box::new(|t| {
                let text = manifest.replace("status = \"complete\"\n", "");
                t.study(REFERENCE_RUN)
                    .study_as(STUDY, STUDY, &[], Some(("manifest.toml", &text)));
            }),
        ),
        (
            // The valid study before it must not be installed either.
            "rows report refuses",
            &["regression_check_nee: `wavepath report` refuses it"],
            Box::new(|t| {
                let text = runs.replacen(",512,512,64,", ",512,512,sixty-four,", 1);
                t.study(REFERENCE_RUN)
                    .study_as(STUDY, STUDY, &[], Some(("runs.csv", &text)));
            }),
        ),
        (
            "a spread over two GPUs whose run opened one",
            &[
                "regression_check_nee_gpus2/manifest.toml: the run opened 1 GPU(s)",
                "not 2 as the folder's name says",
            ],
            Box::new(|t| {
                t.study(STUDY).study_as(STUDY, "regression_check_nee_gpus2", &[], None);
            }),
        ),
        (
            "a spread over two ranks made by one process",
            &["regression_check_nee_ranks2/manifest.toml: [[rank]] lists ranks []"],
            Box::new(|t| {
                t.study(STUDY).study_as(STUDY, "regression_check_nee_ranks2", &[], None);
            }),
        ),
        (
            "the summary's figures folder",
            &["figures: `figures` is not a study's folder"],
            Box::new(|t| {
                t.study(STUDY).dir("./figures/");
            }),
        ),
        (
            "a folder no config names",
            &["copy_of_it", "no experiments/copy_of_it.toml"],
            Box::new(|t| {
                t.study(STUDY).study_as(STUDY, "copy_of_it", &[], None);
            }),
        ),
        (
            "another study's run under a study's name",
            &["nee/manifest.toml", "not a run of experiments/nee.toml"],
            Box::new(|t| {
                t.study(REFERENCE_RUN).study_as(STUDY, "nee", &[], None);
            }),
        ),
        (
            "a reference run named for another commit",
            &["regression_check_nee_1234567/manifest.toml", "not 1234567"],
            Box::new(|t| {
                t.study_as(REFERENCE_RUN, "regression_check_nee_1234567", &[], None);
            }),
        ),
        (
            "a manifest that is not TOML",
            &["regression_check_nee/manifest.toml", "not a manifest"],
            Box::new(|t| {
                t.study_as(STUDY, STUDY, &[], Some(("manifest.toml", "status = \"complete\"\n[[")));
            }),
        ),
        (
            "a path that climbs out",
            &["./regression_check_nee/../../x", "outside"],
            Box::new(|t| {
                t.study(STUDY).raw_file("./regression_check_nee/../../x", b"x");
            }),
        ),
        (
            "a file a study does not write",
            &["regression_check_nee/run.sh: not a file a study writes"],
            Box::new(|t| {
                t.study(STUDY).file("./regression_check_nee/run.sh", b"rm -rf /");
            }),
        ),
        (
            "a file outside any study",
            &["stray: not a file a study writes"],
            Box::new(|t| {
                t.study(STUDY).file("./stray", b"x");
            }),
        ),
        (
            "a member twice",
            &["regression_check_nee/runs.csv: in the tarball twice"],
            Box::new(|t| {
                t.study(STUDY).file("./regression_check_nee/runs.csv", b"x");
            }),
        ),
        (
            "an absolute path",
            &["/regression_check_nee/runs.csv", "outside"],
            Box::new(|t| {
                t.study(STUDY).raw_file("/regression_check_nee/runs.csv", b"x");
            }),
        ),
        (
            "a file past the bound on bytes",
            &[
                "regression_check_nee/figures/huge.svg: 536870913 bytes",
                "a study tarball holds at most 512 MiB of files",
            ],
            Box::new(|t| {
                t.study(STUDY)
                    .declared("./regression_check_nee/figures/huge.svg", (512 << 20) + 1);
            }),
        ),
        (
            "more members than the bound",
            &["member 10001", "a study tarball holds at most 10000"],
            Box::new(|t| {
                t.study(STUDY);
                for i in 0..10_000 {
                    t.file(&format!("./regression_check_nee/figures/f{i}.svg"), b"");
                }
            }),
        ),
        ("not a tarball", &["not a readable tarball"], Box::new(|_| {})),
    ];
    for (what, expected, members) in cases {
        let tree = Tree::new();
        let before = everything(&tree);
        let o = if what == "not a tarball" {
            fs::write(tree.dir.path().join("junk.tgz"), "not gzip").unwrap();
            tree.gpu_study(&["unpack", "../junk.tgz"])
        } else {
            tree.unpack(|t| members(t))
        };
        refused(&o, what, expected);
        assert!(stderr(&o).contains("results/ is as it was"), "{what}: {}", stderr(&o));
        unchanged(&before, &everything(&tree), what);
    }
}

/// A tarball that is not a regular file is refused before it is read:
/// a FIFO would wait for a writer, a folder cannot be read.
#[test]
fn unpack_refuses_a_tarball_that_is_not_a_regular_file() {
    let tree = Tree::new();
    let fifo = tree.dir.path().join("studies.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for (what, path) in [("a FIFO", fifo), ("a folder", tree.outside())] {
        let before = everything(&tree);
        let path = path.to_str().unwrap();
        let o = tree.gpu_study(&["unpack", path]);
        refused(&o, what, &[path, "not a regular file"]);
        assert!(stderr(&o).contains("results/ is as it was"), "{what}: {}", stderr(&o));
        unchanged(&before, &everything(&tree), what);
    }
}

/// gpu-run/ as an earlier pack left it: a reference, results and output.
fn earlier_pack(tree: &Tree) {
    let run = tree.root().join("gpu-run");
    for (file, text) in [
        ("results/x/runs.csv", "earlier results"),
        ("out/studies.tgz", "earlier output"),
        ("study.sh", "earlier study.sh"),
    ] {
        fs::create_dir_all(run.join(file).parent().unwrap()).unwrap();
        fs::write(run.join(file), text).unwrap();
    }
    fs::create_dir_all(run.join("reference")).unwrap();
    let xz = Command::new("xz")
        .args(["-c"])
        .stdin(fs::File::open(repo("scripts/gpu-study")).unwrap())
        .output()
        .unwrap();
    assert!(xz.status.success());
    fs::write(run.join("reference/old.xz"), xz.stdout).unwrap();
}

#[test]
fn pack_checks_every_argument_before_it_clears_or_builds() {
    let tree = Tree::new();
    earlier_pack(&tree);
    fs::write(tree.root().join("not-packed.txt"), "text").unwrap();
    for (what, args, expected) in [
        (
            "a missing reference",
            &["--reference", "missing.xz", STUDY][..],
            "--reference: no file",
        ),
        (
            "a reference not packed",
            &["--reference", "not-packed.txt", STUDY],
            "not a packed binary",
        ),
        ("an octal-looking budget", &["--budget", "0600", STUDY], "`0600`"),
        ("a budget that is not octal either", &["--budget", "08", STUDY], "`08`"),
        ("no budget at all", &["--budget", "0", STUDY], "`0`"),
        (
            "a budget too short to run a study",
            &["--budget", "20", STUDY],
            "from 60 to 86400",
        ),
        ("a budget past a day", &["--budget", "9999999", STUDY], "`9999999`"),
        ("a negative budget", &["--budget", "-5", STUDY], "`-5`"),
        ("a budget in another notation", &["--budget", "1e3", STUDY], "`1e3`"),
        ("a budget without its value", &["--budget"], "--budget takes seconds"),
        ("no study", &["--budget", "600"], "name at least one study"),
        (
            "no slot",
            &["--slots", "0", STUDY],
            "`0` is not a number of GPUs from 1 to 16",
        ),
        ("more slots than a host has GPUs", &["--slots", "17", STUDY], "`17`"),
        ("an octal-looking slot count", &["--slots", "04", STUDY], "`04`"),
        (
            "slots without their count",
            &["--slots"],
            "--slots takes a number of GPUs",
        ),
        (
            "a spread of one GPU",
            &["--spread", "1", STUDY],
            "`1` is not a count of GPUs from 2 to 16",
        ),
        ("a spread past 16 GPUs", &["--spread", "2,17", STUDY], "`17`"),
        ("an octal-looking spread", &["--spread", "04", STUDY], "`04`"),
        (
            "a spread twice",
            &["--spread", "2,4,2", STUDY],
            "--spread: 2 is named twice",
        ),
        (
            "a spread with an empty entry",
            &["--spread", "2,,4", STUDY],
            "`2,,4` is not a comma-separated list",
        ),
        ("an empty spread", &["--spread", "", STUDY], "--spread: `` is not"),
        (
            "a glob for ranks",
            &["--ranks", "*", STUDY],
            "--ranks: `*` is not a count",
        ),
        (
            "ranks without their counts",
            &["--ranks"],
            "--ranks takes MPI rank counts",
        ),
        (
            "ranks in slots",
            &["--slots", "2", "--ranks", "2", STUDY],
            "they need --slots 1",
        ),
        (
            "a command in a name",
            &["x$(touch INJECTED)"],
            "`x$(touch INJECTED)` is not a study's name",
        ),
        ("a name with a space", &["a b"], "`a b` is not a study's name"),
        (
            "a path",
            &["../scenes/cornell_diffuse"],
            "`../scenes/cornell_diffuse` is not a study's name",
        ),
        ("an option-like name", &[STUDY, "-x"], "`-x` is not a study's name"),
        ("no such config", &["nosuch"], "no experiments/nosuch.toml"),
        (
            "a study twice",
            &[STUDY, "nee", STUDY],
            "regression_check_nee is named twice",
        ),
    ] {
        let before = everything(&tree);
        let mut all = vec!["pack"];
        all.extend_from_slice(args);
        let o = tree.gpu_study(&all);
        refused(&o, what, &[expected]);
        assert_eq!(o.status.code(), Some(2), "{what}");
        unchanged(&before, &everything(&tree), what);
        assert!(!tree.root().join("INJECTED").exists(), "{what}");
    }
}

#[test]
fn pack_writes_the_studies_quoted_and_the_budget_in_decimal() {
    let tree = Tree::new();
    earlier_pack(&tree);
    let run = tree.root().join("gpu-run");
    let reference = fs::read(run.join("reference/old.xz")).unwrap();
    // The earlier pack's reference, reused: kept across the clearing.
    let o = tree.gpu_study(&[
        "pack",
        "--budget",
        "600",
        "--reference",
        "gpu-run/reference/old.xz",
        STUDY,
        "nee",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(run.join("built").exists());
    assert_eq!(fs::read(run.join("reference/old.xz")).unwrap(), reference);
    assert!(
        !run.join("results").exists() && !run.join("out").exists(),
        "the earlier pack's results stay"
    );
    let read = Command::new("bash")
        .arg("-c")
        .arg("eval \"$(grep -E '^(budget|studies)=' gpu-run/study.sh)\"; printf '%s\\n' \"$budget\" \"${studies[@]}\"")
        .current_dir(tree.root())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&read.stdout), format!("600\n{STUDY}\nnee\n"));
    let check = Command::new("bash")
        .args(["-n", "gpu-run/study.sh"])
        .current_dir(tree.root())
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", stderr(&check));
}

/// A stand-in for the packed binary: every scene verifies identical, and an
/// experiment notes the GPU and CPUs it was given in its folder.
const FAKE_BINARY: &str = r#"#!/usr/bin/env bash
case $1 in
  --version) echo "wavepath 0.1.0 (commit 1234567abcde)" ;;
  verify) echo "$*: IDENTICAL" ;;
  experiment)
    mkdir -p "$4"
    echo "gpu ${CUDA_VISIBLE_DEVICES:-unset} cpus $(grep Cpus_allowed_list /proc/self/status | cut -f2)" >"$4/ran.txt"
    sleep 0.3 ;;
esac
"#;

/// A stand-in for `nvidia-smi` on a host of two GPUs.
const FAKE_NVIDIA_SMI: &str = r#"#!/usr/bin/env bash
if [[ $1 == -L ]]; then printf 'GPU 0: Fake\nGPU 1: Fake\n'; else echo "Fake GPU, 1.0"; fi
"#;

/// Runs the packed study.sh of `tree` with the stand-ins, its output in
/// `out`.
fn run_study_sh(tree: &Tree, out: &Path) -> Output {
    run_study_sh_with(tree, out, FAKE_BINARY)
}

/// Runs the packed study.sh of `tree` with `binary` as the packed binary
/// (and its MPI build) and the stand-in `nvidia-smi`, its output in `out`.
fn run_study_sh_with(tree: &Tree, out: &Path, binary: &str) -> Output {
    let bin = tree.dir.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    fs::write(bin.join("nvidia-smi"), FAKE_NVIDIA_SMI).unwrap();
    make_executable(&bin.join("nvidia-smi"));
    for name in ["wavepath", "wavepath-mpi"] {
        let path = tree.root().join("gpu-run").join(name);
        fs::write(&path, binary).unwrap();
        make_executable(&path);
    }
    Command::new("bash")
        .arg("gpu-run/study.sh")
        .current_dir(tree.root())
        .env("OUT", out)
        .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()))
        .output()
        .unwrap()
}

/// The study folders of the tarball at `path`, in the order it holds
/// them.
fn tarball_folders(path: &Path) -> Vec<String> {
    let list = Command::new("tar").arg("tzf").arg(path).output().unwrap();
    assert!(list.status.success(), "{}", stderr(&list));
    let mut folders: Vec<String> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .filter_map(|l| l.split('/').next().map(String::from))
        .collect();
    folders.dedup();
    folders
}

#[test]
fn slots_run_each_study_once_on_their_own_gpu_and_cpus_and_pack_their_own() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        eprintln!("SKIPPED: two slots need two CPUs; this machine has {cpus}");
        return;
    }
    let tree = Tree::new();
    let studies = ["s1", "s2", "s3"];
    for s in studies {
        fs::write(tree.root().join(format!("experiments/{s}.toml")), "").unwrap();
    }
    let o = tree.gpu_study(&["pack", "--slots", "2", "s1", "s2", "s3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = tree.dir.path().join("out");
    let o = run_study_sh(&tree, &out);
    assert!(o.status.success(), "{}", stderr(&o));

    let mut used = BTreeMap::new();
    for s in studies {
        let ran = fs::read_to_string(tree.root().join(format!("gpu-run/results/{s}/ran.txt"))).unwrap();
        let fields: Vec<&str> = ran.split_whitespace().collect();
        let (gpu, cpus) = (fields[1].to_string(), fields[3].to_string());
        assert!(gpu == "0" || gpu == "1", "{s}: {ran}");
        if let Some(other) = used.insert(gpu.clone(), cpus.clone()) {
            assert_eq!(other, cpus, "one GPU, one set of CPUs");
        }
    }
    let sets: Vec<&String> = used.values().collect();
    if sets.len() == 2 {
        assert_ne!(sets[0], sets[1], "each slot its own CPUs");
    }
    let slots = fs::read_to_string(out.join("slots.txt")).unwrap();
    assert_eq!(slots.lines().count(), 2, "{slots}");

    // Each study ran once, packed by the slot that ran it alone.
    let mut packed = Vec::new();
    for i in 0..2 {
        let log = fs::read_to_string(out.join(format!("slot{i}/studies.log"))).unwrap_or_default();
        let ran: Vec<String> = log
            .lines()
            .filter_map(|l| l.strip_prefix("== "))
            .map(|l| l.split(' ').next().unwrap().to_string())
            .collect();
        assert!(
            fs::read_to_string(out.join(format!("slot{i}/verify.txt")))
                .unwrap()
                .contains("IDENTICAL"),
            "slot {i} verified its own GPU first"
        );
        if ran.is_empty() {
            continue;
        }
        let folders = tarball_folders(&out.join(format!("slot{i}/studies.tgz")));
        assert_eq!(folders, ran, "slot {i} packs what it ran, nothing of the other's");
        packed.extend(ran);
    }
    packed.sort();
    assert_eq!(packed, studies, "every study once");
}

#[test]
fn one_slot_on_a_host_of_several_gpus_verifies_the_split_too() {
    let tree = Tree::new();
    let o = tree.gpu_study(&["pack", STUDY]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = tree.dir.path().join("out");
    let o = run_study_sh(&tree, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let verified = fs::read_to_string(out.join("verify.txt")).unwrap();
    let scenes = fs::read_dir(tree.root().join("scenes"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "toml"))
        .count();
    let split = verified
        .lines()
        .filter(|l| l.contains("--devices all --split-all"))
        .count();
    assert_eq!(
        split,
        2 * scenes,
        "each scene split over both GPUs, on both back ends:\n{verified}"
    );
    assert_eq!(verified.lines().count(), 4 * scenes, "{verified}");
    assert!(verified.lines().all(|l| l.ends_with("IDENTICAL")), "{verified}");
}

/// A stand-in for the packed binary whose experiment runs until stopped,
/// with a helper process of its own (as a render has threads): it notes in
/// its folder each SIGINT the runner and the helper receive.
const FAKE_LONG_RUNNER: &str = r#"#!/usr/bin/env python3
import os, signal, sys, time
if sys.argv[1] == "--version":
    print("wavepath 0.1.0 (commit 1234567abcde)")
elif sys.argv[1] == "verify":
    print(" ".join(sys.argv[1:]) + ": IDENTICAL")
elif sys.argv[1] == "experiment":
    out = sys.argv[4]
    os.makedirs(out, exist_ok=True)
    def noting(who):
        def note(*_):
            with open(os.path.join(out, who), "a") as f:
                f.write("SIGINT\n")
        return note
    helper = os.fork()
    if helper == 0:
        signal.signal(signal.SIGINT, noting("helper"))
        time.sleep(60)
        os._exit(0)
    stopped = []
    signal.signal(signal.SIGINT, lambda *a: (noting("runner")(), stopped.append(1)))
    for _ in range(600):
        if stopped:
            break
        time.sleep(0.1)
    time.sleep(0.5)
    os.kill(helper, signal.SIGKILL)
"#;

/// The runner's stop on a study cut short is one Ctrl-C: a second is an
/// immediate exit, which loses a CPU render the first would have kept for
/// --resume. So the signal goes to the runner alone, not to its process
/// group as well (which `timeout` does unless --foreground).
#[test]
fn a_study_cut_short_is_stopped_by_one_sigint_to_the_runner_alone() {
    let tree = Tree::new();
    let o = tree.gpu_study(&["pack", STUDY]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A budget that the study starts within (a study starts with 30 s of
    // it left) after up to 4 s of verifying the scenes, which a loaded
    // machine can take, so that the stop comes soon.
    let script = tree.root().join("gpu-run/study.sh");
    let text = fs::read_to_string(&script).unwrap();
    let budget = text.lines().find(|l| l.starts_with("budget=")).unwrap();
    fs::write(&script, text.replace(budget, "budget=35")).unwrap();
    let out = tree.dir.path().join("out");
    let o = run_study_sh_with(&tree, &out, FAKE_LONG_RUNNER);
    assert!(o.status.success(), "{}", stderr(&o));
    let folder = tree.root().join("gpu-run/results").join(STUDY);
    let runner = fs::read_to_string(folder.join("runner")).unwrap_or_default();
    assert_eq!(runner, "SIGINT\n", "the runner is stopped once, by the budget");
    assert!(
        !folder.join("helper").exists(),
        "the stop reaches the runner alone, not its process group"
    );
}

#[test]
fn more_slots_than_gpus_runs_nothing_and_says_so() {
    let tree = Tree::new();
    let o = tree.gpu_study(&["pack", "--slots", "3", STUDY]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = tree.dir.path().join("out");
    let o = run_study_sh(&tree, &out);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("3 slots need 3 GPUs; this host has 2"),
        "{}",
        stderr(&o)
    );
    assert!(!tree.root().join(format!("gpu-run/results/{STUDY}")).exists());
}

/// A stand-in for the packed binary and its MPI build: every scene
/// verifies identical, a render writes one image however many ranks
/// render it (unless `FAKE_IMAGE_BY_RANKS` names the variable that holds
/// them), and an experiment notes in its folder the ranks it ran over
/// and its arguments.
const FAKE_SPREAD_BINARY: &str = r#"#!/usr/bin/env bash
case $1 in
  --version) echo "wavepath 0.1.0 (commit 1234567abcde)" ;;
  verify) echo "$*: IDENTICAL" ;;
  render)
    while [[ $# -gt 0 && $1 != --out ]]; do shift; done
    echo "image${FAKE_IMAGE_BY_RANKS:+ of ${FAKE_RANKS:-one process}}" >"$2" ;;
  experiment)
    mkdir -p "$4"
    echo "ranks ${FAKE_RANKS:-none} args ${*:2}" >"$4/ran.txt"
    printf '[[study]]\nstatus = "complete"\n' >"$4/manifest.toml" ;;
esac
"#;

#[test]
fn spreads_run_each_study_again_over_gpus_and_mpi_ranks_after_checking_the_ranks_image() {
    let tree = Tree::new();
    // A study whose runs split images over GPUs themselves.
    fs::write(
        tree.root().join("experiments/splits.toml"),
        "[[study]]\nname = \"s\"\nsweep = { gpus = [1, 2] }\n",
    )
    .unwrap();
    let o = tree.gpu_study(&["pack", "--spread", "2", "--ranks", "2", STUDY, "splits"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = tree.root().join("gpu-run");
    assert!(
        run.join("built-mpi").exists() && run.join("mpi.tar.xz").exists(),
        "--ranks packs the MPI build"
    );
    let out = tree.dir.path().join("out");
    let o = run_study_sh_with(&tree, &out, FAKE_SPREAD_BINARY);
    assert!(o.status.success(), "{}", stderr(&o));

    let ran = |folder: &str| fs::read_to_string(run.join("results").join(folder).join("ran.txt")).unwrap();
    let args = |folder: &str| format!("experiments/{STUDY}.toml --out gpu-run/results/{folder} --quiet");
    assert_eq!(ran(STUDY), format!("ranks none args {}\n", args(STUDY)));
    let gpus = format!("{STUDY}_gpus2");
    assert_eq!(ran(&gpus), format!("ranks none args {} --devices 0,1\n", args(&gpus)));
    let ranks = format!("{STUDY}_ranks2");
    assert_eq!(ran(&ranks), format!("ranks 2 args {}\n", args(&ranks)));
    assert!(ran("splits").starts_with("ranks none args experiments/splits.toml"));
    for unspread in ["splits_gpus2", "splits_ranks2"] {
        assert!(!run.join("results").join(unspread).exists(), "{unspread}");
    }
    let log = fs::read_to_string(out.join("studies.log")).unwrap();
    assert!(
        log.contains("== splits: not spread: its runs split images over GPUs themselves (gpus)"),
        "{log}"
    );
    // The spread study ran first over both GPUs, unpacked, to warm the
    // driver's kernel cache; the unspread one did not.
    let runs: Vec<&str> = log.lines().filter(|l| l.starts_with("== ")).collect();
    assert!(
        runs[0] == format!("== {STUDY}: warming the driver's kernel cache over 2 GPUs (not packed)")
            && runs[1].starts_with(&format!("== {STUDY} with gpu-run/wavepath into {STUDY} ")),
        "{log}"
    );
    assert_eq!(log.matches("warming").count(), 1, "{log}");
    assert!(
        !run.join("warm").join(STUDY).exists(),
        "the warm-up's folder is removed"
    );

    // Every scene rendered the one-process image over the ranks, on both
    // GPU back ends, before any study ran.
    let verified = fs::read_to_string(out.join("verify.txt")).unwrap();
    let scenes = fs::read_dir(tree.root().join("scenes")).unwrap().count();
    let over_ranks: Vec<&str> = verified.lines().filter(|l| l.contains("over 2 MPI ranks")).collect();
    assert_eq!(over_ranks.len(), 2 * scenes, "{verified}");
    assert!(over_ranks.iter().all(|l| l.ends_with(": IDENTICAL")), "{verified}");

    let mut folders = tarball_folders(&out.join("studies.tgz"));
    folders.sort();
    assert_eq!(folders, [STUDY.to_string(), gpus, ranks, "splits".into()]);

    // Run again, every run finished: resumed, none warms the cache again.
    let o = run_study_sh_with(&tree, &out, FAKE_SPREAD_BINARY);
    assert!(o.status.success(), "{}", stderr(&o));
    let log = fs::read_to_string(out.join("studies.log")).unwrap();
    assert_eq!(log.matches("warming").count(), 1, "{log}");
    assert_eq!(
        log.matches(&format!("== {STUDY} with gpu-run/wavepath into")).count(),
        2,
        "{log}"
    );
}

/// Whether a study's runs split images over GPUs themselves is read from
/// its config as TOML, not searched for in its text: a quoted key is
/// still `gpus`, a description that names it sets nothing, a sweep of
/// one GPU splits nothing, and a config that is not TOML is refused
/// before anything is built.
#[test]
fn a_study_is_spread_unless_its_config_read_as_toml_sets_gpus_above_one() {
    let tree = Tree::new();
    for (name, config) in [
        ("quoted", "[[study]]\nname = \"s\"\nsweep = { \"gpus\" = [1, 2] }\n"),
        (
            "fixed",
            "[[study]]\nname = \"s\"\nper_backend.gpu-wave = { gpus = 4 }\n",
        ),
        (
            "described",
            "[experiment]\ndescription = \"\"\"one GPU each;\ngpus = 2 is scale_out's\"\"\"\n",
        ),
        ("one", "[[study]]\nname = \"s\"\nsweep = { gpus = [1] }\n"),
    ] {
        fs::write(tree.root().join(format!("experiments/{name}.toml")), config).unwrap();
    }
    let o = tree.gpu_study(&["pack", "--spread", "2", "quoted", "fixed", "described", "one"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = tree.dir.path().join("out");
    let o = run_study_sh_with(&tree, &out, FAKE_SPREAD_BINARY);
    assert!(o.status.success(), "{}", stderr(&o));
    let log = fs::read_to_string(out.join("studies.log")).unwrap();
    for name in ["quoted", "fixed"] {
        let line = format!("== {name}: not spread: its runs split images over GPUs themselves (gpus)");
        assert!(log.contains(&line), "{line}\n{log}");
    }
    let mut folders = tarball_folders(&out.join("studies.tgz"));
    folders.sort();
    assert_eq!(
        folders,
        ["described", "described_gpus2", "fixed", "one", "one_gpus2", "quoted"],
        "{log}"
    );

    fs::write(
        tree.root().join("experiments/broken.toml"),
        "[[study]]\nname = \"s\"\nsweep = {\n",
    )
    .unwrap();
    let before = everything(&tree);
    let o = tree.gpu_study(&["pack", "--spread", "2", "one", "broken"]);
    refused(
        &o,
        "a config that is not TOML",
        &["experiments/broken.toml: not TOML", "line 3"],
    );
    assert_eq!(o.status.code(), Some(2));
    unchanged(&before, &everything(&tree), "a config that is not TOML");
}

#[test]
fn a_spread_the_host_cannot_give_or_an_mpi_image_unlike_one_process_runs_nothing() {
    let tree = Tree::new();
    let o = tree.gpu_study(&["pack", "--spread", "2", "--ranks", "4", STUDY]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = tree.dir.path().join("out");
    let o = run_study_sh_with(&tree, &out, FAKE_SPREAD_BINARY);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("spreading a study over 4 GPUs (--spread, --ranks) needs 4; this host has 2"),
        "{}",
        stderr(&o)
    );
    assert!(!tree.root().join(format!("gpu-run/results/{STUDY}")).exists());

    let o = tree.gpu_study(&["pack", "--ranks", "2", STUDY]);
    assert!(o.status.success(), "{}", stderr(&o));
    let differs = FAKE_SPREAD_BINARY.replace("FAKE_IMAGE_BY_RANKS", "FAKE_RANKS");
    let o = run_study_sh_with(&tree, &out, &differs);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no study run"), "{}", stderr(&o));
    let verified = fs::read_to_string(out.join("verify.txt")).unwrap();
    assert!(
        verified.contains("over 2 MPI ranks: DIFFERS from one process's image"),
        "{verified}"
    );
    assert!(!tree.root().join(format!("gpu-run/results/{STUDY}")).exists());
}

#[test]
fn a_run_that_never_starts_leaves_the_other_studies_packed() {
    let tree = Tree::new();
    fs::write(tree.root().join("experiments/first.toml"), "").unwrap();
    let o = tree.gpu_study(&["pack", "--spread", "2", "first", STUDY]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Every run spread over GPUs is refused before it writes anything.
    let refusing = FAKE_SPREAD_BINARY.replace(
        "  experiment)\n",
        "  experiment)\n    [[ $* == *--devices* ]] && { echo 'no device 1' >&2; exit 1; }\n",
    );
    let out = tree.dir.path().join("out");
    let o = run_study_sh_with(&tree, &out, &refusing);
    assert!(o.status.success(), "{}", stderr(&o));
    let log = fs::read_to_string(out.join("studies.log")).unwrap();
    for line in [
        "== first: no first_gpus2: the run did not start".to_string(),
        format!("== {STUDY}: no {STUDY}_gpus2: the run did not start"),
    ] {
        assert!(log.contains(&line), "{line}\n{log}");
    }
    let mut folders = tarball_folders(&out.join("studies.tgz"));
    folders.sort();
    assert_eq!(folders, ["first", STUDY], "the studies that ran, both packed");
}
