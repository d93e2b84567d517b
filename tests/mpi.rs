//! `render` over the ranks of an MPI launch (`--features mpi`), run through
//! the launcher on the CPU back end: two and three ranks (an uneven split,
//! and more ranks than samples) write the image of one process bit for
//! bit; a rank that fails is named, with its host, by rank 0, and the job
//! exits non-zero without an image.
//!
//! Needs `mpiexec` on the PATH and the MPI library on the loader's path
//! (`eval "$(scripts/setup --mpi)"`); `scripts/test` runs these with
//! `--features mpi` when MPI is installed.
#![cfg(feature = "mpi")]

mod util;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
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
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let expected = format!("rank 2 on {}: {}", host.trim(), missing.display());
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
    let mut cmd = mpiexec();
    cmd.args(["-n", "2", WAVEPATH, "experiment", "--dry-run"])
        .arg(repo("experiments/smallptcuda.toml"));
    let out = run(cmd);
    assert!(!out.status.success(), "experiments do not run over MPI yet");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("only `render` splits its work over the ranks"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
