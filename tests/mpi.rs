//! `render` and `experiment` over the ranks of an MPI launch (`--features
//! mpi`), run through the launcher on the CPU back end: two and three ranks
//! (an uneven split, and more ranks than samples) write the image of one
//! process bit for bit; a rank that fails is named, with its host, by rank
//! 0, and the job exits non-zero without an image. An experiment over two
//! and three ranks writes the rows of one process (in the order they
//! finish), and every rank that asks is handed configurations; a rank that
//! cannot read the config is named and nothing runs; a rank that fails
//! mid-way is named, the rows finished on every rank are kept, and
//! `--resume` under the launcher completes them; Ctrl-C keeps the finished
//! rows, exits 130, and `--resume` completes them too.
//!
//! Needs `mpiexec` on the PATH and the MPI library on the loader's path
//! (`eval "$(scripts/setup --mpi)"`); `scripts/test` runs these with
//! `--features mpi` when MPI is installed.
#![cfg(feature = "mpi")]

mod util;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use util::repo;

/// The `wavepath` binary under test.
const WAVEPATH: &str = env!("CARGO_BIN_EXE_wavepath");

/// `mpiexec` with what Open MPI needs to run as root with more ranks than
/// cores (MPICH needs nothing).
fn mpiexec() -> Command {
    let version = Command::new("mpiexec")
        .arg("--version")
        .output()
        .expect("mpiexec is on the PATH (eval \"$(scripts/setup --mpi)\")");
    let mut cmd = Command::new("mpiexec");
    if String::from_utf8_lossy(&version.stdout).contains("Open MPI") {
        cmd.args(["--oversubscribe", "--allow-run-as-root"]);
    }
    cmd
}

/// `render` arguments for `scene` (of `scenes/`) into `out`: small, on the
/// CPU, with `spp` samples.
fn render_args(scene: &str, spp: u32, out: &Path) -> Vec<String> {
    [
        "render",
        repo(&format!("scenes/{scene}.toml")).to_str().unwrap(),
        "--backend",
        "cpu",
        "--size",
        "24x16",
        "--spp",
        &spp.to_string(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

/// Runs `cmd`, returning its output.
fn run(mut cmd: Command) -> Output {
    cmd.output().expect("the command starts")
}

/// Renders `scene` in one process and over `ranks` ranks; returns the two
/// images' bytes and the MPI run's standard output.
fn one_and_over(scene: &str, spp: u32, ranks: usize, dir: &Path) -> (Vec<u8>, Vec<u8>, String) {
    let (one, many): (PathBuf, PathBuf) = (dir.join("one.pfm"), dir.join(format!("{ranks}.pfm")));
    let mut alone = Command::new(WAVEPATH);
    alone.args(render_args(scene, spp, &one));
    let out = run(alone);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("MPI"),
        "without a launcher the binary renders alone"
    );
    let mut cmd = mpiexec();
    cmd.args(["-n", &ranks.to_string(), WAVEPATH])
        .args(render_args(scene, spp, &many));
    let out = run(cmd);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let read = |p: &Path| std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    (
        read(&one),
        read(&many),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn two_and_three_ranks_render_the_image_of_one_process_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    for (scene, spp, ranks) in [("cornell_smallpt", 7, 2), ("cornell_smallpt", 7, 3), ("cs500", 5, 3)] {
        let (one, many, stdout) = one_and_over(scene, spp, ranks, dir.path());
        assert!(
            one == many,
            "{scene}: {ranks} ranks wrote another image than one process"
        );
        assert!(stdout.contains(&format!("on {ranks} MPI ranks")), "{stdout}");
        for rank in 0..ranks {
            assert!(stdout.contains(&format!("rank {rank} on ")), "{stdout}");
        }
        assert!(stdout.contains("load imbalance"), "{stdout}");
        assert_eq!(
            stdout.matches("-> ").count(),
            1,
            "rank 0 alone prints the summary: {stdout}"
        );
    }
}

#[test]
fn more_ranks_than_samples_leave_some_ranks_idle_and_the_image_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let (one, many, stdout) = one_and_over("cornell_smallpt", 2, 3, dir.path());
    assert!(one == many, "3 ranks of 2 samples wrote another image than one process");
    assert!(stdout.contains("0 spp in"), "one rank had no sample: {stdout}");
}

#[test]
fn a_failing_rank_is_named_with_its_host_and_the_job_fails_without_an_image() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("never.png");
    let missing = dir.path().join("missing.toml");
    // Ranks 0 and 1 render a scene; rank 2 (a second program of the same
    // launch) is given one that does not exist.
    let mut cmd = mpiexec();
    cmd.args(["-n", "2", WAVEPATH])
        .args(render_args("cornell_smallpt", 4, &image))
        .args([":", "-n", "1", WAVEPATH])
        .args(render_args("cornell_smallpt", 4, &image).iter().map(|a| {
            if a.ends_with("cornell_smallpt.toml") {
                missing.to_str().unwrap().to_string()
            } else {
                a.clone()
            }
        }));
    let out = run(cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the job must fail: {stderr}");
    let expected = format!("rank 2 on {}: {}", hostname(), missing.display());
    assert!(stderr.contains("1 of 3 MPI ranks failed"), "{stderr}");
    assert!(stderr.contains(&expected), "expected `{expected}` in: {stderr}");
    assert_eq!(
        stderr.matches("MPI ranks failed").count(),
        1,
        "rank 0 alone reports: {stderr}"
    );
    assert!(!image.exists(), "no image is written when a rank failed");
}

#[test]
fn commands_that_do_not_split_refuse_to_run_under_a_launcher() {
    let mut cmd = mpiexec();
    cmd.args(["-n", "2", WAVEPATH, "verify"])
        .arg(repo("scenes/cornell_smallpt.toml"));
    let out = run(cmd);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("only `render` and `experiment` split their work"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two studies of four configurations each (the cpu back end, two
/// repetitions, tiny renders), their scenes named relative to the config.
const TINY: &str = r#"
[experiment]
name = "tiny"
description = "two studies of four configurations"

[[study]]
name = "first"
scenes = ["x.toml"]
backends = ["cpu"]
warmup = 0
repeat = 2
fixed = { size = "12x8", spp = 2, depth = 3 }
sweep = { threads = [1, 2], cpu_schedule = ["collapsed", "cyclic-rows"] }

[[study]]
name = "second"
scenes = ["y.toml"]
backends = ["cpu"]
warmup = 0
repeat = 2
fixed = { size = "12x8", spp = 2, depth = 3 }
sweep = { threads = [1, 2], cpu_schedule = ["collapsed", "cyclic-rows"] }
"#;

/// [`TINY`] as the experiments name it, relative to their working folder.
const CONFIG: &str = "cfg/tiny.toml";

/// [`TINY`] with renders of some tens of milliseconds and three
/// repetitions: time enough for every rank to ask for configurations, and
/// to stop them before the last.
fn slow() -> String {
    TINY.replace("repeat = 2", "repeat = 3")
        .replace(r#"size = "12x8", spp = 2"#, r#"size = "64x48", spp = 16"#)
}

/// Writes [`TINY`] into `folder/cfg/` (and [`slow`] as `slow.toml`) with
/// its scenes: `x.toml` (the diffuse Cornell box) and `y.toml` (smallpt's
/// box), or, when `linked` is given, two links to that file.
fn fixture(folder: &Path, linked: Option<&Path>) {
    let cfg = folder.join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("tiny.toml"), TINY).unwrap();
    std::fs::write(cfg.join("slow.toml"), slow()).unwrap();
    for (name, scene) in [("x.toml", "cornell_diffuse"), ("y.toml", "cornell_smallpt")] {
        match linked {
            Some(target) => std::os::unix::fs::symlink(target, cfg.join(name)).unwrap(),
            None => drop(std::fs::copy(repo(&format!("scenes/{scene}.toml")), cfg.join(name)).unwrap()),
        }
    }
}

/// `experiment` arguments for `config` into `out`, with `extra`.
fn experiment_args(config: &str, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["experiment", config, "--quiet", "--allow-dirty", "--out"]
        .map(String::from)
        .to_vec();
    args.push(out.to_str().unwrap().into());
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

/// `config` in one process, run in `folder`: its `runs.csv`.
fn one_process(folder: &Path, config: &str, out: &Path) -> Vec<Vec<String>> {
    let mut cmd = Command::new(WAVEPATH);
    cmd.current_dir(folder).args(experiment_args(config, out, &[]));
    let done = run(cmd);
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    rows(out)
}

/// The columns two runs of one experiment must agree on (all but times,
/// dates and where a row was made).
const SAME: [&str; 15] = [
    "experiment",
    "study",
    "run",
    "config",
    "repetition",
    "scene",
    "backend",
    "width",
    "height",
    "spp",
    "threads",
    "cpu_schedule",
    "rays",
    "invalid_samples",
    "film_hash",
];

/// The [`SAME`] columns of each row of `out/runs.csv`, in file order.
fn rows(out: &Path) -> Vec<Vec<String>> {
    column(out, &SAME)
}

/// [`rows`] sorted: the ranks write rows in the order they finish.
fn sorted_rows(out: &Path) -> Vec<Vec<String>> {
    let mut all = rows(out);
    all.sort();
    all
}

/// The `columns` of each row of `out/runs.csv`, in file order.
fn column(out: &Path, columns: &[&str]) -> Vec<Vec<String>> {
    let mut reader = csv::Reader::from_path(out.join("runs.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let at: Vec<usize> = columns
        .iter()
        .map(|c| {
            header
                .iter()
                .position(|h| h == *c)
                .unwrap_or_else(|| panic!("no column {c}"))
        })
        .collect();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            at.iter().map(|&i| r[i].to_string()).collect()
        })
        .collect()
}

#[test]
fn two_and_three_ranks_write_the_rows_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), None);
    let mut one = one_process(dir.path(), CONFIG, &dir.path().join("one"));
    assert_eq!(one.len(), 16);
    one.sort();
    for (ranks, extra) in [(2, &["--share-cores"][..]), (3, &["--share-cores"]), (3, &[])] {
        let out = dir.path().join(format!("{ranks}{}", extra.len()));
        let mut cmd = mpiexec();
        cmd.current_dir(dir.path())
            .args(["-n", &ranks.to_string(), WAVEPATH])
            .args(experiment_args(CONFIG, &out, extra));
        let done = run(cmd);
        let stdout = String::from_utf8_lossy(&done.stdout);
        assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
        assert_eq!(
            sorted_rows(&out),
            one,
            "{ranks} ranks {extra:?}: other rows than one process"
        );
        let mut made: Vec<String> = column(&out, &["rank"]).into_iter().flatten().collect();
        made.sort();
        made.dedup();
        let manifest = std::fs::read_to_string(out.join("manifest.toml")).unwrap();
        if extra.is_empty() {
            // One host: its first rank makes every CPU run.
            assert_eq!(made, ["0"], "{ranks} ranks");
            assert!(
                !manifest.contains("[[rank]]") && !stdout.contains("load imbalance"),
                "{stdout}"
            );
        } else {
            assert!(made.iter().all(|r| r.parse::<usize>().unwrap() < ranks), "{made:?}");
            assert_eq!(manifest.matches("[[rank]]").count(), made.len(), "{manifest}");
            assert_eq!(
                stdout.matches("study first: 8 rows").count(),
                1,
                "rank 0 alone prints: {stdout}"
            );
        }
    }
}

#[test]
fn configurations_go_to_every_rank_that_asks() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), None);
    let out = dir.path().join("out");
    let mut cmd = mpiexec();
    cmd.current_dir(dir.path())
        .args(["-n", "2", WAVEPATH])
        .args(experiment_args("cfg/slow.toml", &out, &["--share-cores"]));
    let done = run(cmd);
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let ranks: Vec<Vec<String>> = column(&out, &["rank", "study", "run"]);
    assert_eq!(ranks.len(), 24);
    for rank in ["0", "1"] {
        assert!(ranks.iter().any(|r| r[0] == rank), "rank {rank} made no row: {ranks:?}");
    }
    // A configuration's repetitions are made by one rank, one after another.
    for config in ranks.chunks(3) {
        assert!(config.iter().all(|r| r == &config[0]), "{config:?}");
    }
    let manifest = std::fs::read_to_string(out.join("manifest.toml")).unwrap();
    assert_eq!(manifest.matches("[[rank]]").count(), 2, "{manifest}");
    assert!(manifest.contains("rank_imbalance = "), "{manifest}");
    assert!(stdout.contains("load imbalance over the ranks"), "{stdout}");
}

/// This host's name, as MPI names it here.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn a_rank_that_cannot_read_the_config_is_named_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), None);
    let out = dir.path().join("out");
    let mut cmd = mpiexec();
    cmd.current_dir(dir.path())
        .args(["-n", "2", WAVEPATH])
        .args(experiment_args(CONFIG, &out, &[]))
        .args([":", "-n", "1", WAVEPATH])
        .args(experiment_args("cfg/missing.toml", &out, &[]));
    let failed = run(cmd);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(!failed.status.success(), "{stderr}");
    let expected = format!("rank 2 on {}: cfg/missing.toml", hostname());
    assert!(stderr.contains("1 of 3 MPI ranks failed"), "{stderr}");
    assert!(stderr.contains(&expected), "expected `{expected}` in: {stderr}");
    assert!(!out.exists(), "nothing is written when a rank cannot start");
}

#[test]
fn a_rank_that_fails_mid_way_is_named_and_resume_completes_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let out = dir.path().join("out");
    let config = "cfg/slow.toml";
    fixture(&a, None);
    let mut one = one_process(&a, config, &dir.path().join("one"));
    // Rank 2 runs in a folder of its own (as on a host of its own), whose
    // scenes are links to the manifest rank 0 writes once every rank has
    // checked its scenes. A scene stands there at the check; then rank 0
    // replaces it, and rank 2 fails at the first configuration it is
    // handed.
    std::fs::create_dir_all(&out).unwrap();
    std::fs::copy(repo("scenes/cornell_smallpt.toml"), out.join("manifest.toml")).unwrap();
    fixture(&b, Some(&out.join("manifest.toml")));
    let args = experiment_args(config, &out, &["--share-cores"]);
    let mut cmd = mpiexec();
    cmd.args(["-n", "2", "-wdir", a.to_str().unwrap(), WAVEPATH])
        .args(&args)
        .args([":", "-n", "1", "-wdir", b.to_str().unwrap(), WAVEPATH])
        .args(&args);
    let failed = run(cmd);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(!failed.status.success(), "the job must fail: {stderr}");
    let expected = format!("rank 2 on {}: study `", hostname());
    assert!(stderr.contains("1 of 3 MPI ranks failed"), "{stderr}");
    assert!(stderr.contains(&expected), "expected `{expected}` in: {stderr}");
    assert_eq!(
        stderr.matches("MPI ranks failed").count(),
        1,
        "rank 0 alone reports: {stderr}"
    );
    // The rows finished on ranks 0 and 1 are kept, each once; rank 2's
    // configuration is missing.
    let kept = rows(&out);
    assert!(kept.len() < one.len(), "{} rows kept", kept.len());
    assert!(
        kept.iter().all(|r| one.contains(r)),
        "every kept row is one of one process's"
    );
    let mut distinct = kept.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), kept.len(), "no row twice");
    let manifest = std::fs::read_to_string(out.join("manifest.toml")).unwrap();
    assert!(manifest.contains("not finished: 1 of 3 MPI ranks failed"), "{manifest}");

    let mut cmd = mpiexec();
    cmd.current_dir(&a)
        .args(["-n", "3", WAVEPATH])
        .args(experiment_args(config, &out, &["--share-cores", "--resume"]));
    let resumed = run(cmd);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    let all = rows(&out);
    assert_eq!(all[..kept.len()], kept[..], "the kept rows come first");
    one.sort();
    assert_eq!(sorted_rows(&out), one, "resumed, the rows of one process, each once");
}

#[test]
fn ctrl_c_stops_every_rank_after_its_render_and_resume_completes_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), None);
    let config = "cfg/slow.toml";
    let out = dir.path().join("out");
    let mut one = one_process(dir.path(), config, &dir.path().join("one"));
    let mut cmd = mpiexec();
    cmd.current_dir(dir.path())
        .args(["-n", "3", WAVEPATH])
        .args(experiment_args(config, &out, &["--share-cores"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    // The launcher passes Ctrl-C on to every rank; it is sent once the
    // first configuration's rows are written.
    let start = Instant::now();
    while rows_written(&out) == 0 {
        assert!(start.elapsed() < Duration::from_secs(120), "no row was written");
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let stopped = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&stopped.stderr);
    assert_eq!(stopped.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("stopped by Ctrl-C"), "{stderr}");
    let kept = rows(&out);
    assert!(!kept.is_empty() && kept.len() < one.len(), "{} rows kept", kept.len());
    assert!(
        kept.iter().all(|r| one.contains(r)),
        "every kept row is one of one process's"
    );
    let manifest = std::fs::read_to_string(out.join("manifest.toml")).unwrap();
    assert!(manifest.contains("interrupted by a stop request"), "{manifest}");

    let mut cmd = mpiexec();
    cmd.current_dir(dir.path())
        .args(["-n", "3", WAVEPATH])
        .args(experiment_args(config, &out, &["--share-cores", "--resume"]));
    let resumed = run(cmd);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    one.sort();
    assert_eq!(sorted_rows(&out), one, "resumed, the rows of one process, each once");
}

/// The rows in `out/runs.csv` so far (none before it exists).
fn rows_written(out: &Path) -> usize {
    std::fs::read_to_string(out.join("runs.csv")).map_or(0, |t| t.lines().count().saturating_sub(1))
}
