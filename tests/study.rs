//! `wavepath study` under hostile input: `install` puts only the folders
//! and regular files of whole, checked studies into results/, by a swap
//! that a refusal never starts, and `run` checks every option before it
//! writes anything, verifies before it times, stops at its budget, resumes,
//! and spreads over GPUs and MPI ranks. Each test runs the binary in a copy
//! of the checkout's layout (experiments/, scenes/, results/, gpu-run/),
//! `run` with stand-ins for the GPU machine's binary, `nvidia-smi` and the
//! MPI launcher: no GPU, network or release build.

mod util;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tar::{EntryType, Header};
use util::{repo, wavepath_bin};

/// The study whose committed results the tests pack and install, and its
/// run with a reference binary (`NAME_COMMIT`).
const STUDY: &str = "regression_check_nee";
const REFERENCE_RUN: &str = "regression_check_nee_30955b3";

/// The scenes [`STUDY`] renders.
const SCENES: [&str; 3] = ["cornell_smallpt", "cornell_diffuse", "cs500"];

/// A checkout's layout in a temporary folder: the configs of [`STUDY`] and
/// `nee`, the scenes it renders, and results/STUDY as an earlier install
/// left it (with a reference file of its own, and an old report).
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("checkout");
        for sub in ["experiments", "scenes", "results", "gpu-run", "scripts"] {
            fs::create_dir_all(root.join(sub)).unwrap();
        }
        for scene in SCENES {
            let file = format!("scenes/{scene}.toml");
            fs::copy(repo(&file), root.join(file)).unwrap();
        }
        for config in [STUDY, "nee"] {
            let file = format!("experiments/{config}.toml");
            fs::copy(repo(&file), root.join(file)).unwrap();
        }
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

    /// Runs `wavepath ARGS` from the checkout's root, stopped after three
    /// minutes, so that a read that waits fails the test instead of
    /// hanging it.
    fn wavepath(&self, args: &[&str]) -> Output {
        Command::new("timeout")
            .arg("180")
            .arg(wavepath_bin())
            .args(args)
            .current_dir(self.root())
            .output()
            .unwrap()
    }

    /// Installs the tarball `members` make.
    fn install(&self, members: impl FnOnce(&mut Tarball)) -> Output {
        let path = self.dir.path().join("studies.tgz");
        let mut tarball = Tarball(tar::Builder::new(flate2::write::GzEncoder::new(
            fs::File::create(&path).unwrap(),
            flate2::Compression::fast(),
        )));
        members(&mut tarball);
        tarball.0.into_inner().unwrap().finish().unwrap();
        self.wavepath(&["study", "install", path.to_str().unwrap()])
    }

    /// Writes experiments/NAME.toml: a study of [`STUDY`]'s first scene on
    /// the megakernel, with `settings` (lines of the `[[study]]` table).
    fn config(&self, name: &str, settings: &str) {
        let text = format!(
            "[experiment]\nname = \"{name}\"\n\n[[study]]\nname = \"s\"\nscenes = [\"../scenes/{}.toml\"]\n\
             backends = [\"gpu-mega\"]\n{settings}",
            SCENES[0]
        );
        fs::write(self.root().join(format!("experiments/{name}.toml")), text).unwrap();
    }

    /// Runs `wavepath study run ARGS` with `binary` standing in for the
    /// GPU machine's binary and its MPI build, the stand-in `nvidia-smi`
    /// of a host of two GPUs and MPI launcher, its output in `out`.
    fn run_studies(&self, binary: &str, out: &Path, args: &[&str]) -> Output {
        let bin = self.dir.path().join("bin");
        fs::create_dir_all(&bin).unwrap();
        fs::write(bin.join("nvidia-smi"), FAKE_NVIDIA_SMI).unwrap();
        make_executable(&bin.join("nvidia-smi"));
        let manifest = repo(&format!("results/{STUDY}/manifest.toml"));
        for name in ["wavepath", "wavepath-mpi"] {
            let path = self.root().join("gpu-run").join(name);
            fs::write(&path, binary.replace("MANIFEST", manifest.to_str().unwrap())).unwrap();
            make_executable(&path);
        }
        Command::new("timeout")
            .arg("180")
            .arg(wavepath_bin())
            .args([
                "study",
                "run",
                "--binary",
                "gpu-run/wavepath",
                "--mpi-launcher",
                "scripts/fake-mpi-run",
            ])
            .arg("--out")
            .arg(out)
            .args(args)
            .current_dir(self.root())
            .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()))
            .output()
            .unwrap()
    }
}

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

/// A study tarball being written, as `study run` packs one (`./STUDY/FILE`).
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
fn install_refuses_links_fifos_and_devices_before_writing_anything() {
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
        let o = tree.install(|t| members(t));
        refused(&o, what, &[named, "only folders and regular files"]);
        unchanged(&before, &everything(&tree), what);
        assert_eq!(fs::read_to_string(&victim).unwrap(), "outside the checkout", "{what}");
    }
}

#[test]
fn install_installs_a_whole_study_with_its_report_written_afresh() {
    let tree = Tree::new();
    // The tarball has no report.md: the old one must not stay beside the
    // new rows.
    let o = tree.install(|t| {
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
fn install_installs_spreads_whose_manifests_agree_with_their_names() {
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
    let o = tree.install(|t| {
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
fn install_leaves_out_a_study_its_manifest_says_was_cut_short() {
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
        let o = tree.install(|t| {
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
            &["regression_check_nee/manifest.toml", "missing field `status`"],
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
            tree.wavepath(&["study", "install", "../junk.tgz"])
        } else {
            tree.install(|t| members(t))
        };
        refused(&o, what, expected);
        assert!(stderr(&o).contains("results/ is as it was"), "{what}: {}", stderr(&o));
        unchanged(&before, &everything(&tree), what);
    }
}

/// A tarball that is not a regular file is refused before it is read:
/// a FIFO would wait for a writer, a folder cannot be read.
#[test]
fn install_refuses_a_tarball_that_is_not_a_regular_file() {
    let tree = Tree::new();
    let fifo = tree.dir.path().join("studies.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for (what, path) in [("a FIFO", fifo), ("a folder", tree.outside())] {
        let before = everything(&tree);
        let path = path.to_str().unwrap();
        let o = tree.wavepath(&["study", "install", path]);
        refused(&o, what, &[path, "not a regular file"]);
        assert!(stderr(&o).contains("results/ is as it was"), "{what}: {}", stderr(&o));
        unchanged(&before, &everything(&tree), what);
    }
}

#[test]
fn run_checks_every_option_and_config_before_it_writes_anything() {
    let tree = Tree::new();
    tree.config("broken", "sweep = {\n");
    tree.config("other", "");
    for (what, args, expected) in [
        (
            "an octal-looking budget read as decimal, too short",
            &["--budget", "059", STUDY][..],
            "059",
        ),
        ("no budget at all", &["--budget", "0", STUDY], "60..=86400"),
        ("a budget past a day", &["--budget", "86401", STUDY], "60..=86400"),
        ("a negative budget", &["--budget", "-5", STUDY], "-5"),
        ("a budget in another notation", &["--budget", "1e3", STUDY], "1e3"),
        ("no study", &["--budget", "600"], "STUDIES"),
        ("no slot", &["--slots", "0", STUDY], "1..=16"),
        ("more slots than a host may have", &["--slots", "17", STUDY], "1..=16"),
        ("a spread of one GPU", &["--spread", "1", STUDY], "2..=16"),
        ("a spread past 16 GPUs", &["--spread", "2,17", STUDY], "17"),
        (
            "a spread twice",
            &["--spread", "2,4,2", STUDY],
            "--spread: 2 is named twice",
        ),
        ("a spread with an empty entry", &["--spread", "2,,4", STUDY], "--spread"),
        ("a glob for ranks", &["--ranks", "*", STUDY], "*"),
        (
            "ranks in slots",
            &["--slots", "2", "--ranks", "2", STUDY],
            "they need --slots 1",
        ),
        (
            "a missing reference",
            &["--reference", "missing", STUDY],
            "--reference: no file missing",
        ),
        ("a name with a space", &["a b"], "`a b` is not a study's name"),
        (
            "a path",
            &["../scenes/cornell_diffuse"],
            "`../scenes/cornell_diffuse` is not a study's name",
        ),
        ("no such config", &["nosuch"], "no experiments/nosuch.toml"),
        (
            "a study twice",
            &[STUDY, "other", STUDY],
            "regression_check_nee is named twice",
        ),
        (
            "a config that is not TOML",
            &[STUDY, "broken"],
            "experiments/broken.toml:",
        ),
    ] {
        let before = everything(&tree);
        let out = tree.dir.path().join("out");
        let o = tree.run_studies(FAKE_BINARY, &out, args);
        refused(&o, what, &[expected]);
        assert!(!out.exists(), "{what}: wrote {}", out.display());
        // The stand-ins are written afresh for each run; nothing else.
        let stand_ins = |p: &PathBuf| p.starts_with("bin") || p.starts_with("checkout/gpu-run");
        let (mut before, mut after) = (before, everything(&tree));
        before.retain(|p, _| !stand_ins(p));
        after.retain(|p, _| !stand_ins(p));
        unchanged(&before, &after, what);
        assert!(!tree.root().join("gpu-run/results").exists(), "{what}");
    }
}

/// A stand-in for the GPU machine's binary: every scene verifies
/// identical, and an experiment notes the GPU and CPUs it was given in its
/// folder.
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

/// The study folders of the tarball at `path`, in the order it holds
/// them.
fn tarball_folders(path: &Path) -> Vec<String> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(fs::File::open(path).unwrap()));
    let mut folders: Vec<String> = archive
        .entries()
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path().unwrap().into_owned();
            path.components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy()
                .into_owned()
        })
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
        tree.config(s, "");
    }
    let out = tree.dir.path().join("out");
    let o = tree.run_studies(FAKE_BINARY, &out, &["--slots", "2", "s1", "s2", "s3"]);
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
    let out = tree.dir.path().join("out");
    let o = tree.run_studies(FAKE_BINARY, &out, &[STUDY]);
    assert!(o.status.success(), "{}", stderr(&o));
    let verified = fs::read_to_string(out.join("verify.txt")).unwrap();
    let scenes = SCENES.len();
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
    assert_eq!(tarball_folders(&out.join("studies.tgz")), [STUDY]);
}

#[test]
fn a_scene_unlike_the_cpus_image_runs_nothing() {
    let tree = Tree::new();
    let out = tree.dir.path().join("out");
    let differs = FAKE_BINARY.replace(
        "verify) echo \"$*: IDENTICAL\" ;;",
        "verify) [[ $2 == *cs500* && $4 == gpu-wave ]] && echo 'MISMATCH: 3 pixels' || echo IDENTICAL ;;",
    );
    let o = tree.run_studies(&differs, &out, &[STUDY]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no study run"), "{}", stderr(&o));
    let verified = fs::read_to_string(out.join("verify.txt")).unwrap();
    assert!(
        verified.contains("scenes/cs500.toml gpu-wave: MISMATCH: 3 pixels"),
        "{verified}"
    );
    assert!(!tree.root().join(format!("gpu-run/results/{STUDY}")).exists());
}

/// A stand-in for the GPU machine's binary whose experiment runs until
/// stopped, with a helper process of its own (as a render has threads): it
/// notes in its folder each SIGINT the runner and the helper receive.
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
        time.sleep(90)
        os._exit(0)
    stopped = []
    signal.signal(signal.SIGINT, lambda *a: (noting("runner")(), stopped.append(1)))
    for _ in range(900):
        if stopped:
            break
        time.sleep(0.1)
    time.sleep(0.5)
    os.kill(helper, signal.SIGKILL)
"#;

/// The runner's stop on a study cut short is one Ctrl-C: a second is an
/// immediate exit, which loses a CPU render the first would have kept for
/// --resume. So the signal goes to the runner alone, not to its process
/// group as well.
#[test]
fn a_study_cut_short_by_the_budget_is_stopped_by_one_sigint_to_the_runner_alone() {
    let tree = Tree::new();
    tree.config("other", "");
    let out = tree.dir.path().join("out");
    let o = tree.run_studies(FAKE_LONG_RUNNER, &out, &["--budget", "60", STUDY, "other"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let folder = tree.root().join("gpu-run/results").join(STUDY);
    let runner = fs::read_to_string(folder.join("runner")).unwrap_or_default();
    assert_eq!(runner, "SIGINT\n", "the runner is stopped once, by the budget");
    assert!(
        !folder.join("helper").exists(),
        "the stop reaches the runner alone, not its process group"
    );
    let log = fs::read_to_string(out.join("studies.log")).unwrap();
    assert!(
        log.contains("== other: skipped, "),
        "the budget spent, the next study is skipped:\n{log}"
    );
    assert_eq!(
        tarball_folders(&out.join("studies.tgz")),
        [STUDY],
        "the study cut short is packed"
    );
}

#[test]
fn more_slots_than_gpus_runs_nothing_and_says_so() {
    let tree = Tree::new();
    let out = tree.dir.path().join("out");
    let o = tree.run_studies(FAKE_BINARY, &out, &["--slots", "3", STUDY]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("3 slots need 3 GPUs; this host has 2"),
        "{}",
        stderr(&o)
    );
    assert!(!tree.root().join(format!("gpu-run/results/{STUDY}")).exists());
}

/// A stand-in for the GPU machine's binary and its MPI build: every scene
/// verifies identical, a render writes one image however many ranks
/// render it (unless `FAKE_IMAGE_BY_RANKS` names the variable that holds
/// them), and an experiment notes in its folder the ranks it ran over and
/// its arguments, and writes a manifest of a complete study.
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
    cp MANIFEST "$4/manifest.toml" ;;
esac
"#;

#[test]
fn spreads_run_each_study_again_over_gpus_and_mpi_ranks_after_checking_the_ranks_image() {
    let tree = Tree::new();
    // A study whose runs split images over GPUs themselves.
    tree.config("splits", "sweep = { gpus = [1, 2] }\n");
    let out = tree.dir.path().join("out");
    let o = tree.run_studies(
        FAKE_SPREAD_BINARY,
        &out,
        &["--spread", "2", "--ranks", "2", STUDY, "splits"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = tree.root().join("gpu-run");

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
    let over_ranks: Vec<&str> = verified.lines().filter(|l| l.contains("over 2 MPI ranks")).collect();
    assert_eq!(over_ranks.len(), 2 * SCENES.len(), "{verified}");
    assert!(over_ranks.iter().all(|l| l.ends_with(": IDENTICAL")), "{verified}");

    let mut folders = tarball_folders(&out.join("studies.tgz"));
    folders.sort();
    assert_eq!(folders, [STUDY.to_string(), gpus, ranks.clone(), "splits".into()]);

    // Run again, every run finished: each resumed, none warms the cache
    // again.
    let o = tree.run_studies(
        FAKE_SPREAD_BINARY,
        &out,
        &["--spread", "2", "--ranks", "2", STUDY, "splits"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let log = fs::read_to_string(out.join("studies.log")).unwrap();
    assert_eq!(log.matches("warming").count(), 1, "{log}");
    assert_eq!(
        log.matches(&format!("== {STUDY} with gpu-run/wavepath into")).count(),
        2,
        "{log}"
    );
    assert_eq!(ran(&ranks), format!("ranks 2 args {} --resume\n", args(&ranks)));
}

/// Whether a study's runs split images over GPUs themselves is read from
/// its config by the lab's config reader: a quoted key is still `gpus`, a
/// description that names it sets nothing, and a sweep of one GPU splits
/// nothing.
#[test]
fn a_study_is_spread_unless_its_config_sets_gpus_above_one() {
    let tree = Tree::new();
    tree.config("quoted", "sweep = { \"gpus\" = [1, 2] }\n");
    tree.config("fixed", "per_backend.gpu-mega = { gpus = 4 }\n");
    tree.config(
        "described",
        "description = \"\"\"one GPU each;\ngpus = 2 is scale_out's\"\"\"\n",
    );
    tree.config("one", "sweep = { gpus = [1] }\n");
    let out = tree.dir.path().join("out");
    let o = tree.run_studies(
        FAKE_SPREAD_BINARY,
        &out,
        &["--spread", "2", "quoted", "fixed", "described", "one"],
    );
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
}

#[test]
fn a_spread_the_host_cannot_give_or_an_mpi_image_unlike_one_process_runs_nothing() {
    let tree = Tree::new();
    let out = tree.dir.path().join("out");
    let o = tree.run_studies(FAKE_SPREAD_BINARY, &out, &["--spread", "2", "--ranks", "4", STUDY]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("spreading a study over 4 GPUs (--spread, --ranks) needs 4; this host has 2"),
        "{}",
        stderr(&o)
    );
    assert!(!tree.root().join(format!("gpu-run/results/{STUDY}")).exists());

    let differs = FAKE_SPREAD_BINARY.replace("FAKE_IMAGE_BY_RANKS", "FAKE_RANKS");
    let o = tree.run_studies(&differs, &out, &["--ranks", "2", STUDY]);
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
    tree.config("first", "");
    // Every run spread over GPUs is refused before it writes anything.
    let refusing = FAKE_SPREAD_BINARY.replace(
        "  experiment)\n",
        "  experiment)\n    [[ $* == *--devices* ]] && { echo 'no device 1' >&2; exit 1; }\n",
    );
    let out = tree.dir.path().join("out");
    let o = tree.run_studies(&refusing, &out, &["--spread", "2", "first", STUDY]);
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

/// What `study run` packs, `study install` takes in: the tarball of a run
/// of the committed study's files installs them.
#[test]
fn what_a_run_packs_installs() {
    let tree = Tree::new();
    let noting = FAKE_BINARY.lines().find(|l| l.contains("ran.txt")).unwrap();
    let copying = FAKE_BINARY.replace(
        noting,
        &format!(
            "    for f in runs.csv kernels.csv manifest.toml; do cp {}/$f \"$4/\"; done",
            repo(&format!("results/{STUDY}")).display()
        ),
    );
    let out = tree.dir.path().join("out");
    let o = tree.run_studies(&copying, &out, &[STUDY]);
    assert!(o.status.success(), "{}", stderr(&o));
    let tarball = out.join("studies.tgz");
    let o = tree.wavepath(&["study", "install", tarball.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let results = tree.root().join("results").join(STUDY);
    assert_eq!(
        fs::read(results.join("runs.csv")).unwrap(),
        fs::read(repo(&format!("results/{STUDY}/runs.csv"))).unwrap()
    );
}

/// A stand-in for `scripts/gpu-pack`: `gpu-run/built` and a packed binary.
const FAKE_GPU_PACK: &str = r#"#!/usr/bin/env bash
set -e
cd "$(dirname "$0")/.."
mkdir -p gpu-run
touch gpu-run/built
echo binary | xz >gpu-run/wavepath.xz
"#;

/// `scripts/gpu-study pack` has the binary it built check the options and
/// configs before it clears what an earlier pack left in gpu-run/, and
/// writes a study.sh that runs `wavepath study run` with them.
#[test]
fn the_pack_wrapper_checks_the_options_before_it_clears_gpu_run() {
    let tree = Tree::new();
    let root = tree.root();
    fs::copy(repo("scripts/gpu-study"), root.join("scripts/gpu-study")).unwrap();
    fs::write(root.join("scripts/gpu-pack"), FAKE_GPU_PACK).unwrap();
    make_executable(&root.join("scripts/gpu-pack"));
    let target = tree.dir.path().join("target");
    fs::create_dir_all(target.join("release")).unwrap();
    std::os::unix::fs::symlink(wavepath_bin(), target.join("release/wavepath")).unwrap();
    let earlier = root.join("gpu-run/results/x/runs.csv");
    fs::create_dir_all(earlier.parent().unwrap()).unwrap();
    fs::write(&earlier, "earlier results").unwrap();
    let pack = |args: &[&str]| {
        Command::new(root.join("scripts/gpu-study"))
            .arg("pack")
            .args(args)
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .unwrap()
    };

    let o = pack(&["--budget", "5", STUDY]);
    refused(&o, "a budget too short", &["--budget"]);
    assert!(earlier.exists(), "the earlier pack's results stay");
    assert!(!root.join("gpu-run/study.sh").exists());

    let o = pack(&["--budget", "600", STUDY]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(root.join("gpu-run/built").exists());
    assert!(!earlier.exists(), "the earlier pack's results are cleared");
    let script = fs::read_to_string(root.join("gpu-run/study.sh")).unwrap();
    let exec = script.lines().last().unwrap();
    assert_eq!(
        exec,
        format!(
            "exec gpu-run/wavepath study run --binary gpu-run/wavepath --out \"${{OUT:-gpu-run/out}}\" \
             --budget 600 {STUDY}"
        )
    );
    let check = Command::new("bash")
        .arg("-n")
        .arg(root.join("gpu-run/study.sh"))
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", stderr(&check));
}
