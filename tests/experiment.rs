//! `wavepath experiment` end to end on the CPU: every column written, an
//! interrupted run resumed to the same rows, bad configs named by file, line
//! and field, GPU runs skipped with a note where there is no GPU, and the four
//! CPU work distributions rendering one film.

mod util;

use lab::config::{self, ConfigError};
use lab::records::{KernelRow, Manifest, RunRow, recover_rows};
use renderer::backend::{BackendKind, BackendOptions};
use renderer::render::{Overrides, params_for, render_scene};
use renderer::settings::cpu::CpuSchedule;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use util::{experiment_command, repo, run_experiment, write_config};

/// A two-parameter sweep over tiny renders of two back ends.
const TWO_PARAMS: &str = r#"
[experiment]
name = "tiny"
description = "two swept parameters"

[[study]]
name = "sweep"
scenes = ["SCENES/cornell_diffuse.toml"]
backends = ["cpu-serial", "cpu"]
baseline = "cpu-serial"
warmup = 0
repeat = 2
fixed = { size = "12x8", spp = 2, depth = 3 }
sweep = { threads = [1, 2], cpu_schedule = ["collapsed", "cyclic-rows"] }
"#;

fn header(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().next().unwrap().split(',').map(String::from).collect()
}

#[test]
fn a_two_parameter_sweep_writes_every_column() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "tiny", TWO_PARAMS);
    let out = dir.path().join("out");
    let run = run_experiment(&config, &out, &[]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));

    let columns = header(&out.join("runs.csv"));
    for c in [
        "study",
        "config",
        "repetition",
        "scene",
        "backend",
        "width",
        "height",
        "spp",
        "max_depth",
        "seed",
        "accel",
        "block",
        "samples_per_launch",
        "tile",
        "schedule",
        "compaction",
        "capacity",
        "wave_block",
        "drain_below",
        "threads",
        "cpu_schedule",
        "time_launches",
        "wall_ms",
        "kernel_ms",
        "overhead_ms",
        "upload_ms",
        "readback_ms",
        "rays",
        "rays_per_s",
        "samples_per_s",
        "registers",
        "local_bytes",
        "occupancy",
        "state_bytes",
        "device",
        "driver",
        "compute_capability",
        "cpu",
        "cpu_threads",
        "version",
        "commit",
        "dirty",
        "date",
    ] {
        assert!(columns.iter().any(|h| h == c), "runs.csv lacks `{c}`: {columns:?}");
    }
    let kernel_columns = header(&out.join("kernels.csv"));
    for c in [
        "kernel",
        "launches",
        "total_ms",
        "mean_ms",
        "min_ms",
        "max_ms",
        "items",
        "items_per_s",
        "active_lanes",
    ] {
        assert!(kernel_columns.iter().any(|h| h == c), "kernels.csv lacks `{c}`");
    }

    let rows = recover_rows::<RunRow>(&out.join("runs.csv")).unwrap().rows;
    // cpu-serial once, cpu over 2 threads x 2 distributions; two repetitions each.
    assert_eq!(rows.len(), (1 + 4) * 2);
    let cpu: Vec<&RunRow> = rows.iter().filter(|r| r.backend == "cpu").collect();
    let configs: BTreeSet<(Option<usize>, Option<String>)> =
        cpu.iter().map(|r| (r.threads, r.cpu_schedule.clone())).collect();
    assert_eq!(configs.len(), 4);
    for r in &rows {
        // Effective values, not only the ones the config set.
        assert_eq!((r.width, r.height, r.spp, r.max_depth), (12, 8, 2, 3));
        assert_eq!(r.seed, 0, "the scene's own seed");
        assert_eq!(
            r.accel, "auto (none)",
            "the default structure, and what it picked for a small scene"
        );
        assert!(r.wall_ms > 0.0 && r.rays > 0 && r.samples_per_s > 0.0);
        assert!(
            r.block.is_none() && r.capacity.is_none(),
            "GPU settings do not apply to the CPU"
        );
        assert!(!r.commit.is_empty() && !r.version.is_empty() && !r.date.is_empty() && r.cpu_threads > 0);
    }
    assert!(
        rows.iter()
            .filter(|r| r.backend == "cpu-serial")
            .all(|r| r.threads == Some(1))
    );
    // Every run renders the same image, so every film hash is one.
    let hashes: BTreeSet<&str> = rows.iter().map(|r| r.film_hash.as_str()).collect();
    assert_eq!(hashes.len(), 1);

    let manifest = Manifest::read(&out.join("manifest.toml")).unwrap();
    assert_eq!(manifest.experiment.name, "tiny");
    assert_eq!(manifest.study[0].status, "complete");
    assert!(
        manifest.study[0].film_check.starts_with("identical: 1 group"),
        "{}",
        manifest.study[0].film_check
    );
    assert_eq!(manifest.study[0].swept, ["threads", "cpu_schedule"]);
    assert!(manifest.config_text.contains("two swept parameters"));
    assert!(!manifest.experiment.finished.is_empty());
}

/// Enough runs that a kill lands part-way.
const MANY_RUNS: &str = r#"
[experiment]
name = "resume"

[[study]]
name = "seeds"
scenes = ["SCENES/cornell_diffuse.toml"]
backends = ["cpu-serial"]
warmup = 0
repeat = 2
fixed = { size = "48x32", spp = 16, depth = 4 }
sweep = { seed = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] }
"#;

fn row_keys(out: &Path) -> Vec<(u32, u32, String)> {
    let rows = recover_rows::<RunRow>(&out.join("runs.csv")).unwrap().rows;
    let mut keys: Vec<_> = rows.into_iter().map(|r| (r.run, r.repetition, r.film_hash)).collect();
    keys.sort();
    keys
}

/// Lines in a text file (0 if it does not exist yet).
fn csv_lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// Starts `wavepath experiment` on `config` into `out` and returns once it
/// has written at least three rows (or two minutes have passed).
fn start_part_way(config: &Path, out: &Path) -> std::process::Child {
    let child = experiment_command(config, out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while csv_lines(&out.join("runs.csv")) < 4 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child
}

#[test]
fn a_killed_run_resumes_to_the_same_rows_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "resume", MANY_RUNS);
    let whole = dir.path().join("whole");
    assert!(run_experiment(&config, &whole, &[]).status.success());

    let cut = dir.path().join("cut");
    let mut child = start_part_way(&config, &cut);
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = csv_lines(&cut.join("runs.csv")) - 1;
    assert!(
        (3..24).contains(&kept),
        "the kill should land part-way, after {kept} rows"
    );

    let again = run_experiment(&config, &cut, &[]);
    assert!(!again.status.success(), "a second run without --resume must refuse");
    assert!(String::from_utf8_lossy(&again.stderr).contains("--resume"));

    let resumed = run_experiment(&config, &cut, &["--resume"]);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    let (a, b) = (row_keys(&whole), row_keys(&cut));
    assert_eq!(a.len(), 24);
    assert_eq!(a, b, "same runs, repetitions and films; no duplicates");
    let manifest = Manifest::read(&cut.join("manifest.toml")).unwrap();
    assert_eq!(manifest.study[0].resumed_rows, kept);
    assert_eq!(
        manifest.session.len(),
        2,
        "the first session is kept, the resumption listed"
    );
    assert_eq!(manifest.experiment.started, manifest.session[0].started);
    assert!(manifest.session[0].started <= manifest.session[1].started);
    assert!(!manifest.session[1].finished.is_empty());
    assert!(manifest.session.iter().all(|s| s.commit == manifest.build.commit));
    assert_eq!(manifest.study[0].rows, 24);
}

#[test]
fn ctrl_c_stops_after_the_render_in_flight_and_keeps_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "resume", MANY_RUNS);
    let whole = dir.path().join("whole");
    assert!(run_experiment(&config, &whole, &[]).status.success());

    let cut = dir.path().join("cut");
    let child = start_part_way(&config, &cut);
    let interrupt = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupt.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("every finished row is kept"), "{stderr}");
    let manifest = Manifest::read(&cut.join("manifest.toml")).unwrap();
    let kept = manifest.study[0].rows;
    assert!((3..24).contains(&kept), "stopped part-way, after {kept} rows");
    assert_eq!(
        csv_lines(&cut.join("runs.csv")),
        kept + 1,
        "every finished render has its row"
    );
    assert!(
        manifest.study[0].status.starts_with("interrupted"),
        "{}",
        manifest.study[0].status
    );
    assert!(!manifest.experiment.finished.is_empty());

    let resumed = run_experiment(&config, &cut, &["--resume"]);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert_eq!(row_keys(&whole), row_keys(&cut));
}

/// A quick run, then a one-thread render of a few seconds for a stop to cut.
const LONG_CPU_RUN: &str = r#"
[experiment]
name = "long"

[[study]]
name = "quick"
scenes = ["SCENES/cornell_diffuse.toml"]
backends = ["cpu-serial"]
warmup = 0
repeat = 1
fixed = { size = "8x8", spp = 1, depth = 2 }

[[study]]
name = "baseline"
scenes = ["SCENES/cornell_diffuse.toml"]
backends = ["cpu-serial"]
warmup = 0
repeat = 1
fixed = { size = "48x32", spp = 2048, depth = 4 }
"#;

#[test]
fn ctrl_c_keeps_a_cpu_render_part_way_and_resume_finishes_it_to_the_same_film() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "long", LONG_CPU_RUN);
    let whole = dir.path().join("whole");
    assert!(run_experiment(&config, &whole, &[]).status.success());

    let cut = dir.path().join("cut");
    let child = experiment_command(&config, &cut)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The quick study's row is written just before the long render starts.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while csv_lines(&cut.join("runs.csv")) < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let interrupt = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupt.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert_eq!(csv_lines(&cut.join("runs.csv")), 2, "no row for the cut render");
    let kept = cut.join("partial/baseline-run0-rep0.toml");
    let info: toml::Table = std::fs::read_to_string(&kept)
        .unwrap_or_else(|e| panic!("{}: {e}; {stderr}", kept.display()))
        .parse()
        .unwrap();
    let samples = info["samples"].as_integer().unwrap();
    assert!((1..2048).contains(&samples), "kept {samples} of 2048 samples");
    assert_eq!(info["parts"].as_integer(), Some(1));
    assert!(stderr.contains("`--resume` renders the rest"), "{stderr}");

    let resumed = run_experiment(&config, &cut, &["--resume"]);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert_eq!(
        row_keys(&whole),
        row_keys(&cut),
        "the finished render's film is the whole render's"
    );
    let rows = recover_rows::<RunRow>(&cut.join("runs.csv")).unwrap().rows;
    let baseline = rows.iter().find(|r| r.study == "baseline").unwrap();
    assert_eq!((baseline.parts.0, baseline.spp), (2, 2048));
    let kept_ms = info["elapsed_ms"].as_float().unwrap();
    assert!(
        baseline.wall_ms > kept_ms,
        "{} ms in all, {kept_ms} ms kept",
        baseline.wall_ms
    );
    assert!(rows.iter().filter(|r| r.study == "quick").all(|r| r.parts.0 == 1));
    assert!(
        !cut.join("partial").exists(),
        "the kept render is removed once its row is written"
    );
}

#[test]
fn a_runs_file_without_one_of_this_versions_columns_is_not_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "tiny", TWO_PARAMS);
    let out = dir.path().join("out");
    assert!(run_experiment(&config, &out, &[]).status.success());
    // The same records without the `gpu_ordinal` column.
    let text = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let columns = reader.headers().unwrap().clone();
    let dropped = columns
        .iter()
        .position(|c| c == "gpu_ordinal")
        .expect("the column exists");
    let without = |record: &csv::StringRecord| -> Vec<String> {
        let fields = record.iter().enumerate().filter(|&(i, _)| i != dropped);
        fields.map(|(_, f)| f.to_string()).collect()
    };
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(without(&columns)).unwrap();
    for record in reader.records() {
        writer.write_record(without(&record.unwrap())).unwrap();
    }
    let damaged = writer.into_inner().unwrap();
    std::fs::write(out.join("runs.csv"), &damaged).unwrap();

    let resumed = run_experiment(&config, &out, &["--resume"]);
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(!resumed.status.success());
    assert!(
        stderr.contains("runs.csv: line 1: the header is not this version's"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(out.join("runs.csv")).unwrap(),
        damaged,
        "the refused file is left as it was"
    );
}

#[test]
fn resuming_with_another_config_is_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "tiny", TWO_PARAMS);
    let out = dir.path().join("out");
    assert!(run_experiment(&config, &out, &[]).status.success());
    write_config(dir.path(), "tiny", &TWO_PARAMS.replace("repeat = 2", "repeat = 3"));
    let refused = run_experiment(&config, &out, &["--resume"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("different config") && stderr.contains("--allow-mixed"),
        "{stderr}"
    );
    let mixed = run_experiment(&config, &out, &["--resume", "--allow-mixed"]);
    assert!(mixed.status.success(), "{}", String::from_utf8_lossy(&mixed.stderr));
    // Only the third repetition of each configuration was added.
    let rows = recover_rows::<RunRow>(&out.join("runs.csv")).unwrap().rows;
    assert_eq!(rows.len(), 5 * 3);
}

#[test]
fn gpu_runs_are_skipped_with_one_note_where_there_is_no_gpu() {
    // SAFETY: only probes whether libcuda can be opened.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        eprintln!("SKIPPED: a CUDA driver is present, so GPU runs are not skipped here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let text = TWO_PARAMS
        .replace(
            r#"backends = ["cpu-serial", "cpu"]"#,
            r#"backends = ["cpu-serial", "gpu-mega", "gpu-wave"]"#,
        )
        .replace(
            "sweep = { threads = [1, 2], cpu_schedule = [\"collapsed\", \"cyclic-rows\"] }",
            "sweep = { block = [\"8x8\", \"16x8\"] }",
        );
    let text = format!(
        "{text}\n[[study]]\nname = \"gpu_only\"\nscenes = [\"SCENES/cornell_diffuse.toml\"]\nbackends = [\"gpu-wave\"]\n"
    );
    let config = write_config(dir.path(), "gpu", &text);
    let out = dir.path().join("out");
    let run = run_experiment(&config, &out, &[]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert_eq!(stderr.matches("no usable GPU").count(), 1, "one note: {stderr}");
    assert!(stderr.contains("the CPU runs go ahead"), "{stderr}");
    let rows = recover_rows::<RunRow>(&out.join("runs.csv")).unwrap().rows;
    assert!(rows.len() == 2 && rows.iter().all(|r| r.backend == "cpu-serial"));
    let kernels = recover_rows::<KernelRow>(&out.join("kernels.csv")).unwrap().rows;
    assert!(kernels.is_empty());
    let manifest = Manifest::read(&out.join("manifest.toml")).unwrap();
    // Two megakernel block shapes and one wavefront configuration, and the
    // second study's one configuration.
    assert_eq!(manifest.skipped.len(), 4);
    assert!(manifest.skipped.iter().all(|s| s.reason.contains("no usable GPU")));
    assert!(manifest.device.is_none());
    assert_eq!(manifest.study[0].status, "complete, with skipped runs");
    assert!(
        manifest.study[1].status.starts_with("skipped: none of its runs"),
        "{}",
        manifest.study[1].status
    );
}

#[test]
fn a_dry_run_prints_the_plan_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "tiny", TWO_PARAMS);
    let out = dir.path().join("out");
    let run = run_experiment(&config, &out, &["--dry-run"]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success());
    assert!(
        stdout.contains("study `sweep`: 5 configurations × (0 warm-up + 2 timed) = 10 renders"),
        "{stdout}"
    );
    assert!(stdout.contains("cpu threads=2 cpu_schedule=cyclic-rows"), "{stdout}");
    assert!(!out.exists(), "a dry run writes nothing");
}

/// Parses `text` (with `SCENES` filled in) and returns the error.
fn config_error(text: &str) -> ConfigError {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), "bad", text);
    let text = std::fs::read_to_string(&path).unwrap();
    config::parse(&path, &text).expect_err("the config should be refused")
}

fn assert_error(text: &str, marker: &str, parts: &[&str]) {
    let e = config_error(text).to_string();
    let line = util::line_of(text, marker);
    assert!(
        e.contains(&format!("bad.toml:{line}:")),
        "`{e}` should point at line {line}"
    );
    for p in parts {
        assert!(e.contains(p), "`{e}` should mention `{p}`");
    }
}

#[test]
fn every_bad_config_names_the_file_line_and_field() {
    let base = TWO_PARAMS;
    let with = |from: &str, to: &str| {
        assert!(base.contains(from));
        base.replace(from, to)
    };
    let sweep = "sweep = { threads = [1, 2], cpu_schedule = [\"collapsed\", \"cyclic-rows\"] }";
    // An unknown parameter.
    assert_error(
        &with(sweep, "sweep = { thread = [1, 2] }"),
        "thread =",
        &["sweep `thread`", "unknown parameter", "threads"],
    );
    // An empty sweep.
    assert_error(
        &with(sweep, "sweep = { threads = [] }"),
        "threads = []",
        &["sweep `threads`", "empty sweep"],
    );
    // An unknown back end.
    assert_error(
        &with(
            r#"backends = ["cpu-serial", "cpu"]"#,
            r#"backends = ["cpu-serial", "gpu"]"#,
        ),
        "backends =",
        &["field `backends`", "`gpu`", "gpu-mega"],
    );
    // A sweep value of the wrong type.
    assert_error(
        &with(sweep, "sweep = { threads = [1, \"two\"] }"),
        "threads = [1",
        &["sweep `threads`", "expected a whole number", "\"two\""],
    );
    assert_error(
        &with(r#"size = "12x8""#, r#"size = "twelve""#),
        "fixed =",
        &["fixed `size`", "WIDTHxHEIGHT"],
    );
    // A baseline that is not measured.
    assert_error(
        &with(r#"baseline = "cpu-serial""#, r#"baseline = "gpu-mega""#),
        "baseline =",
        &["field `baseline`", "not one of the study's backends"],
    );
    // A missing scene file.
    assert_error(
        &with("cornell_diffuse.toml", "cornell_difuse.toml"),
        "scenes =",
        &["field `scenes`", "no scene file", "cornell_difuse.toml"],
    );
    // An unknown field of a study, and a malformed scene field path.
    assert_error(
        &with("repeat = 2", "repeats = 2"),
        "repeats",
        &["unknown field `repeats`"],
    );
    assert_error(
        &with(sweep, "sweep = { \"scene.generators[x].grid\" = [2] }"),
        "scene.generators[x]",
        &["scene field path"],
    );
    // A block too large for CUDA.
    assert_error(
        &with(
            r#"backends = ["cpu-serial", "cpu"]"#,
            r#"backends = ["cpu-serial", "gpu-mega"]"#,
        )
        .replace(sweep, "sweep = { block = [\"64x32\"] }"),
        "[[study]]",
        &["run `gpu-mega block=64x32`", "1 to 1024 threads"],
    );
    // No studies at all.
    let e = config_error("[experiment]\nname = \"empty\"\n").to_string();
    assert!(e.contains("bad.toml:1:") && e.contains("no studies"), "{e}");
}

#[test]
fn an_unknown_study_and_a_missing_scene_field_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "tiny", TWO_PARAMS);
    let run = run_experiment(&config, &dir.path().join("a"), &["--only", "nope"]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        !run.status.success() && stderr.contains("no study `nope`; the studies are sweep"),
        "{stderr}"
    );

    let text = TWO_PARAMS.replace(
        "sweep = { threads = [1, 2], cpu_schedule = [\"collapsed\", \"cyclic-rows\"] }",
        "sweep = { \"scene.generators[0].grid\" = [2] }",
    );
    let config = write_config(dir.path(), "field", &text);
    let run = run_experiment(&config, &dir.path().join("b"), &[]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(
        stderr.contains("scene.generators[0].grid: the scene has no `generators`"),
        "{stderr}"
    );
    assert!(stderr.contains("cornell_diffuse.toml"), "{stderr}");
}

#[test]
fn a_scene_field_sweep_changes_the_scene() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
[experiment]
name = "grid"

[[study]]
name = "grid"
scenes = ["SCENES/rtiow_final.toml"]
backends = ["cpu"]
warmup = 0
repeat = 1
fixed = { size = "16x8", spp = 1, depth = 3 }
sweep = { "scene.generators[0].grid" = [1, 3] }
"#;
    let config = write_config(dir.path(), "grid", text);
    let out = dir.path().join("out");
    let run = run_experiment(&config, &out, &[]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let rows = recover_rows::<RunRow>(&out.join("runs.csv")).unwrap().rows;
    // The same counts as the scene file edited by hand.
    let file = std::fs::read_to_string(repo("scenes/rtiow_final.toml")).unwrap();
    for (row, grid) in rows.iter().zip([1, 3]) {
        let by_hand = util::scene(&file.replace("grid = 11", &format!("grid = {grid}")));
        assert_eq!(row.scene_overrides, format!("generators[0].grid={grid}"));
        assert_eq!(row.primitives, by_hand.scene.geometry.primitive_count() as u64);
    }
    assert!(rows[0].primitives < rows[1].primitives);
}

#[test]
fn the_four_cpu_distributions_render_identical_films() {
    let scene = util::seed_scene("cs500");
    let overrides = Overrides {
        size: Some((37, 23)),
        spp: Some(2),
        ..Overrides::default()
    };
    let (params, spp) = params_for(&scene.scene, &overrides, device::scene::RenderView::Radiance);
    let serial = render_scene(
        &scene,
        BackendKind::CpuSerial,
        params,
        spp,
        &BackendOptions::default(),
        &|_| {},
    )
    .unwrap();
    for cpu_schedule in CpuSchedule::ALL {
        // 5 threads: rows and pixels do not divide evenly between them.
        let options = BackendOptions {
            threads: 5,
            cpu_schedule,
            ..BackendOptions::default()
        };
        let out = render_scene(&scene, BackendKind::Cpu, params, spp, &options, &|_| {}).unwrap();
        assert!(out.film == serial.film, "{cpu_schedule:?} differs from serial");
        assert_eq!(out.rays, serial.rays, "{cpu_schedule:?}");
        assert!(out.device.contains(cpu_schedule.label()), "{}", out.device);
    }
}

/// A study of the GPU back ends over `gpus`, with `extra` lines.
fn gpus_study(extra: &str) -> String {
    format!(
        "[experiment]\nname = \"scale\"\n\n[[study]]\nname = \"weak\"\nscenes = [\"SCENES/cornell_diffuse.toml\"]\n\
         backends = [\"cpu\", \"gpu-mega\", \"gpu-wave\"]\n{extra}\n"
    )
}

#[test]
fn gpus_and_weak_scaling_are_checked_when_the_config_loads() {
    let sweep = "sweep = { gpus = [1, 2] }";
    assert_error(
        &gpus_study("sweep = { gpus = [1, 0] }"),
        "sweep =",
        &["study `weak`", "sweep `gpus`", "from 1 to 64", "got 0"],
    );
    assert_error(
        &gpus_study("fixed = { gpus = \"two\" }"),
        "fixed =",
        &["fixed `gpus`", "expected a whole number"],
    );
    assert_error(
        &gpus_study("scaling = \"linear\"\nfixed = { size = \"64x32\" }"),
        "scaling =",
        &["field `scaling`", "`strong` or `weak`", "`linear`"],
    );
    assert_error(
        &gpus_study("scaling = \"weak\"\nfixed = { size = \"64x32\", gpus = 2 }"),
        "scaling =",
        &["field `scaling`", "sweeps no `gpus`"],
    );
    assert_error(
        &gpus_study(&format!("scaling = \"weak\"\n{sweep}")),
        "[[study]]",
        &["run `gpu-mega gpus=1`", "needs the size", "`size`"],
    );
    assert_error(
        &gpus_study(&format!(
            "scaling = \"weak\"\nfixed = {{ size = \"64x20000\" }}\n{sweep}"
        )),
        "[[study]]",
        &["run `gpu-mega gpus=2`", "64x40000", "largest side"],
    );
}

#[test]
fn split_all_is_refused_where_every_run_has_one_gpu_and_left_out_of_runs_of_one() {
    // No run of more than one GPU: fixed, swept or of one back end, it is
    // refused at its line, naming the field (a sweep would make the same
    // run twice).
    for (extra, marker, field) in [
        ("fixed = { split_all = true }", "fixed =", "fixed `split_all`"),
        ("sweep = { split_all = [false, true] }", "sweep =", "sweep `split_all`"),
        (
            "per_backend.gpu-mega = { split_all = true }\nper_backend.gpu-wave = { gpus = 1 }",
            "per_backend.gpu-mega",
            "per_backend.gpu-mega `split_all`",
        ),
    ] {
        assert_error(
            &gpus_study(extra),
            marker,
            &["study `weak`", field, "renders on one GPU", "`gpus`"],
        );
    }
    // Beside runs of several GPUs, the runs of one leave it at its default:
    // made once, labelled without it.
    let dir = tempfile::tempdir().unwrap();
    let text = gpus_study("sweep = { gpus = [1, 2], split_all = [false, true] }");
    let path = write_config(dir.path(), "scale", &text);
    let config = config::parse(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
    let labels: Vec<String> = config.studies[0].runs().into_iter().map(|r| r.label).collect();
    assert_eq!(
        labels,
        [
            "cpu",
            "gpu-mega gpus=1",
            "gpu-mega gpus=2 split_all=false",
            "gpu-mega gpus=2 split_all=true",
            "gpu-wave gpus=1",
            "gpu-wave gpus=2 split_all=false",
            "gpu-wave gpus=2 split_all=true",
        ]
    );
}

#[test]
fn weak_scaling_grows_each_gpu_runs_height_with_its_gpus() {
    let dir = tempfile::tempdir().unwrap();
    let plan = |extra: &str| {
        let path = write_config(dir.path(), "scale", &gpus_study(extra));
        let text = std::fs::read_to_string(&path).unwrap();
        let config = config::parse(&path, &text).unwrap();
        config.studies[0]
            .runs()
            .into_iter()
            .map(|r| (r.label, r.spec.gpus, r.spec.overrides.size))
            .collect::<Vec<_>>()
    };
    let weak = plan("scaling = \"weak\"\nfixed = { size = \"64x32\" }\nsweep = { gpus = [1, 2, 4] }");
    let size = Some((64, 32));
    assert_eq!(
        weak,
        [
            // `gpus` does not concern the CPU: one run, at the size given.
            ("cpu".to_string(), 1, size),
            ("gpu-mega gpus=1".to_string(), 1, size),
            ("gpu-mega gpus=2".to_string(), 2, Some((64, 64))),
            ("gpu-mega gpus=4".to_string(), 4, Some((64, 128))),
            ("gpu-wave gpus=1".to_string(), 1, size),
            ("gpu-wave gpus=2".to_string(), 2, Some((64, 64))),
            ("gpu-wave gpus=4".to_string(), 4, Some((64, 128))),
        ]
    );
    // Strong scaling (the default) keeps the image.
    let strong = plan("fixed = { size = \"64x32\" }\nsweep = { gpus = [1, 2] }");
    assert!(strong.iter().all(|(_, _, s)| *s == size), "{strong:?}");
    assert_eq!(strong.iter().map(|r| r.1).max(), Some(2));
}
