//! Ctrl-C (or SIGTERM) during a render: the first one finishes the samples
//! in flight and writes the image of the whole samples per pixel done (the
//! same bits as a render asked for that many), the second one stops at once
//! with 128 + its number; no temporary file outlives the process.
//! `gen-mesh` stops within milliseconds and writes nothing.

mod util;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use util::repo;

fn wavepath() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wavepath"))
}

fn signal(child: &Child) {
    send(child, "-INT");
}

/// Sends `child` the signal `flag` names (`-INT`, `-TERM`).
fn send(child: &Child, flag: &str) {
    let sent = Command::new("kill")
        .args([flag, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// Starts `wavepath render` with `args`, interrupts it after `after`, and
/// returns its output.
fn interrupted_render(args: &[&str], after: Duration) -> Output {
    let child = wavepath()
        .arg("render")
        .args(args)
        .arg("--quiet")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    signal(&child);
    child.wait_with_output().unwrap()
}

/// The samples per pixel an interrupted render reports having finished.
fn finished_spp(stderr: &str) -> u32 {
    let after = stderr
        .split("stopped by Ctrl-C after ")
        .nth(1)
        .unwrap_or_else(|| panic!("no count in: {stderr}"));
    after.split_whitespace().next().unwrap().parse().unwrap()
}

/// The temporary files in `dir` that hold bytes (the output checks' probes
/// are empty): a write in progress.
fn writes_in_progress(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(renderer::io::atomic_file::TEMP_PREFIX)
        })
        .filter(|e| e.metadata().is_ok_and(|m| m.len() > 0))
        .count()
}

fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(renderer::io::atomic_file::TEMP_PREFIX))
        .collect()
}

/// Interrupts a long render on `backend` and checks that the image holds
/// exactly the finished samples.
fn keeps_the_finished_samples(backend: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let scene = repo("scenes/cornell_diffuse.toml");
    let scene = scene.to_str().unwrap();
    let cut = dir.path().join("cut.png");
    let mut args = vec![
        scene,
        "--backend",
        backend,
        "--size",
        "32x32",
        "--spp",
        "1000000",
        "--out",
    ];
    args.push(cut.to_str().unwrap());
    args.extend(extra);
    let out = interrupted_render(&args, Duration::from_millis(1500));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let spp = finished_spp(&stderr);
    assert!((1..1_000_000).contains(&spp), "{spp} samples finished");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("{spp} of 1000000 spp (stopped by Ctrl-C)")),
        "{stdout}"
    );

    let whole = dir.path().join("whole.png");
    let spp_text = spp.to_string();
    let mut args = vec![
        scene,
        "--backend",
        "cpu",
        "--size",
        "32x32",
        "--spp",
        &spp_text,
        "--quiet",
        "--out",
    ];
    args.push(whole.to_str().unwrap());
    let reference = wavepath().arg("render").args(&args).output().unwrap();
    assert!(
        reference.status.success(),
        "{}",
        String::from_utf8_lossy(&reference.stderr)
    );
    assert_eq!(
        std::fs::read(&cut).unwrap(),
        std::fs::read(&whole).unwrap(),
        "the interrupted image is the render of {spp} spp"
    );
    assert!(temporaries(dir.path()).is_empty());
}

#[test]
fn ctrl_c_keeps_the_finished_samples_on_the_cpu() {
    keeps_the_finished_samples("cpu", &[]);
}

#[test]
fn ctrl_c_keeps_the_finished_sample_rounds_of_the_wavefront() {
    keeps_the_finished_samples("cpu-wave", &["--capacity", "2^12"]);
}

/// Signals a render whose one sample takes seconds twice with `flag`
/// (`-INT`, `-TERM`): the first asks for a stop that waits for the sample,
/// the second ends it at once with `status`, leaving nothing; its stderr.
fn a_second_signal_stops_at_once_and_leaves_nothing(flag: &str, status: i32) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.png");
    // One sample of this image takes seconds, so the first signal waits.
    let child = wavepath()
        .arg("render")
        .arg(repo("scenes/rtiow_final.toml"))
        .args([
            "--backend",
            "cpu",
            "--size",
            "4000x3000",
            "--spp",
            "4",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    send(&child, flag);
    std::thread::sleep(Duration::from_millis(200));
    let second = Instant::now();
    send(&child, flag);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        second.elapsed() < Duration::from_secs(2),
        "{:?} after the second signal",
        second.elapsed()
    );
    assert_eq!(output.status.code(), Some(status), "{stderr}");
    assert!(!out.exists(), "no image of an unfinished sample");
    assert!(temporaries(dir.path()).is_empty());
    stderr
}

#[test]
fn a_second_ctrl_c_stops_at_once_and_leaves_nothing() {
    let stderr = a_second_signal_stops_at_once_and_leaves_nothing("-INT", 130);
    assert!(stderr.contains("Ctrl-C again to stop at once"), "{stderr}");
    assert!(stderr.contains("stopped by Ctrl-C"), "{stderr}");
}

#[test]
fn a_second_sigterm_stops_at_once_with_128_and_its_number() {
    let stderr = a_second_signal_stops_at_once_and_leaves_nothing("-TERM", 143);
    assert!(stderr.contains("SIGTERM again to stop at once"), "{stderr}");
    assert!(stderr.contains("stopped by SIGTERM"), "{stderr}");
}

#[test]
fn gen_mesh_stopped_mid_way_writes_nothing_and_stops_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.obj");
    // Five million triangles: seconds of work, stopped well before the end.
    let child = wavepath()
        .args(["gen-mesh", "--subdivisions", "9", "--out"])
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let sent = Instant::now();
    signal(&child);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(sent.elapsed() < Duration::from_secs(1), "{:?} to stop", sent.elapsed());
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("m.obj was not written"), "{stderr}");
    assert!(!out.exists());
    assert!(temporaries(dir.path()).is_empty());
}

#[test]
fn gen_mesh_stopped_during_its_write_abandons_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.obj");
    // About 200 MB of OBJ text: the write takes a while after the mesh is made.
    let mut child = wavepath()
        .args(["gen-mesh", "--subdivisions", "9", "--out"])
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while writes_in_progress(dir.path()) == 0 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "gen-mesh ended before its write was seen"
        );
        assert!(started.elapsed() < Duration::from_secs(300), "no write started");
        std::thread::sleep(Duration::from_millis(1));
    }
    send(&child, "-TERM");
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(143), "128 + SIGTERM: {stderr}");
    assert!(stderr.contains("m.obj was not written"), "{stderr}");
    assert!(!out.exists(), "a write stopped half-way leaves no file");
    assert!(temporaries(dir.path()).is_empty());
}
