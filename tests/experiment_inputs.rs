//! The experiment layer under hostile input: resumes that repair
//! or refuse damaged records, one writer per output folder, the runner's
//! own files checked before the first run, a report that validates every
//! value it reads, and problems found before the work rather than after.

mod util;

use device::film::FixedRgb;
use lab::partial::{KeptRenders, Part, PartInfo, PartKey, PartOf};
use lab::records::{Manifest, RunRow, recover_rows};
use renderer::render::compare::film_hash;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use util::{run_experiment as run, wavepath, without_measured, write_config};

/// A small CPU experiment: two configurations, two repetitions each.
const SMALL: &str = r#"
[experiment]
name = "small"
description = "two tiny CPU configurations"

[[study]]
name = "s"
scenes = ["SCENES/cornell_diffuse.toml"]
backends = ["cpu-serial", "cpu"]
warmup = 0
repeat = 2
fixed = { size = "8x6", spp = 1, depth = 2 }
"#;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The finished small experiment in `dir/out`, and its config.
fn finished(dir: &Path) -> (PathBuf, PathBuf) {
    let config = write_config(dir, "small", SMALL);
    let out = dir.join("out");
    let o = run(&config, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    (config, out)
}

/// Removes the last whole record of `runs`, as if its repetition had not
/// finished.
fn drop_last_record(runs: &Path) {
    let text = std::fs::read_to_string(runs).unwrap();
    let last = text.trim_end().rfind('\n').unwrap() + 1;
    std::fs::write(runs, &text[..last]).unwrap();
}

/// (study, run, repetition) of every row, sorted.
fn keys(out: &Path) -> Vec<(String, u32, u32)> {
    let mut k: Vec<_> = recover_rows::<RunRow>(&out.join("runs.csv"))
        .unwrap()
        .rows
        .into_iter()
        .map(|r| (r.study, r.run, r.repetition))
        .collect();
    k.sort();
    k
}

/// Each row's (run, the setting named `column`'s cell), sorted.
fn runs_by(out: &Path, column: impl Fn(&RunRow) -> String) -> Vec<(u32, String)> {
    let rows = recover_rows::<RunRow>(&out.join("runs.csv")).unwrap().rows;
    let mut cells: Vec<(u32, String)> = rows.iter().map(|r| (r.run, column(r))).collect();
    cells.sort();
    cells
}

#[test]
fn a_resume_of_a_reordered_sweep_matches_rows_by_configuration() {
    // Two kernel builds on the emulated wavefront, one repetition each; the
    // second row lost, then the sweep reordered.
    let text = SMALL
        .replace("backends = [\"cpu-serial\", \"cpu\"]", "backends = [\"cpu-wave\"]")
        .replace("repeat = 2", "repeat = 1")
        .replace(
            "depth = 2 }",
            "depth = 2, capacity = \"2^10\" }\nsweep = { kernels = [\"exact\", \"all\"] }",
        );
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "small", &text);
    let out = dir.path().join("out");
    let o = run(&config, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    drop_last_record(&out.join("runs.csv"));
    write_config(
        dir.path(),
        "small",
        &text.replace("[\"exact\", \"all\"]", "[\"all\", \"exact\"]"),
    );
    let o = run(&config, &out, &["--resume", "--allow-mixed"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let kernels = |r: &RunRow| r.kernels.clone().unwrap_or_default();
    assert_eq!(
        runs_by(&out, kernels),
        [(0, "all".to_string()), (1, "exact".to_string())],
        "each build once, numbered as the config now plans it"
    );
    let o = wavepath().arg("report").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_resume_of_a_changed_sweep_makes_the_new_configurations() {
    // Depths 1 and 2, then 3 and 2: depth 3 is made, depth 2 kept, and the
    // row of depth 1 (no longer planned) kept under a number of its own.
    let text = SMALL
        .replace("backends = [\"cpu-serial\", \"cpu\"]", "backends = [\"cpu-serial\"]")
        .replace("repeat = 2", "repeat = 1")
        .replace(", depth = 2 }", " }\nsweep = { depth = [1, 2] }");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "small", &text);
    let out = dir.path().join("out");
    let o = run(&config, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    write_config(dir.path(), "small", &text.replace("depth = [1, 2]", "depth = [3, 2]"));
    let o = run(&config, &out, &["--resume", "--allow-mixed"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let depth = |r: &RunRow| r.max_depth.to_string();
    assert_eq!(
        runs_by(&out, depth),
        [(0, "3".to_string()), (1, "2".to_string()), (2, "1".to_string())]
    );
    // Resuming again finds every planned configuration made.
    let before = std::fs::read(out.join("runs.csv")).unwrap();
    let o = run(&config, &out, &["--resume", "--allow-mixed"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(out.join("runs.csv")).unwrap(), before);
}

#[test]
fn a_record_cut_short_is_dropped_and_made_again_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (config, out) = finished(dir.path());
    let want = keys(&out);
    let runs = out.join("runs.csv");
    let text = std::fs::read_to_string(&runs).unwrap();
    // Cut the last record in the middle, as a crash mid-write would.
    std::fs::write(&runs, &text[..text.len() - 40]).unwrap();
    let o = run(&config, &out, &["--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("dropped an incomplete final record (line 5"),
        "{}",
        stderr(&o)
    );
    assert_eq!(keys(&out), want);
    let again = std::fs::read_to_string(&runs).unwrap();
    assert!(again.ends_with('\n') && again.lines().count() == 5, "{again}");
}

/// One CPU configuration of two samples per pixel.
const TWO_SAMPLES: &str = r#"
[experiment]
name = "kept"

[[study]]
name = "s"
scenes = ["SCENES/cornell_diffuse.toml"]
backends = ["cpu"]
warmup = 0
repeat = 1
fixed = { size = "8x6", spp = 2, depth = 2 }
"#;

/// The experiment of [`TWO_SAMPLES`] in `dir/out` with its one row taken
/// out and, in `partial/`, a kept render of that row's first sample, as a
/// stop would have left it: its config, the output folder and the kept
/// render's description.
fn with_a_kept_render(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let config = write_config(dir, "kept", TWO_SAMPLES);
    let out = dir.join("out");
    let o = run(&config, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let row = recover_rows::<RunRow>(&out.join("runs.csv")).unwrap().rows.remove(0);
    drop_last_record(&out.join("runs.csv"));
    let manifest = Manifest::read(&out.join("manifest.toml")).unwrap();
    let film = vec![FixedRgb { r: 1, g: 2, b: 3 }; 48];
    let info = PartInfo {
        of: PartOf {
            key: PartKey {
                study: row.study,
                run: row.run,
                config: row.config,
                repetition: row.repetition,
            },
            width: 8,
            height: 6,
            spp: 2,
            source: manifest.build.source.unwrap(),
        },
        samples: 1,
        parts: 1,
        elapsed_ms: 5.0,
        total_ms: 6.0,
        rays: 96,
        invalid_samples: 0,
        film_hash: film_hash(&film),
    };
    let kept = KeptRenders::in_folder(&out).keep(&Part { info, film }).unwrap();
    (config, out, kept)
}

/// The `parts` of the one row of the experiment in `out`.
fn parts_of_the_row(out: &Path) -> u32 {
    let rows = recover_rows::<RunRow>(&out.join("runs.csv")).unwrap().rows;
    assert_eq!(rows.len(), 1);
    rows[0].parts.0
}

#[test]
fn a_kept_render_is_finished_by_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (config, out, _) = with_a_kept_render(dir.path());
    let o = run(&config, &out, &["--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("discarded"), "{}", stderr(&o));
    assert_eq!(parts_of_the_row(&out), 2, "the kept render is one of its parts");
}

#[test]
fn a_kept_render_no_render_could_have_left_is_discarded_and_the_run_rendered_afresh() {
    for (what, expected) in [
        ("elapsed_ms = nan", "field `elapsed_ms` is NaN: expected a time from 0"),
        ("elapsed_ms = 1e300", "field `elapsed_ms` is 1e300"),
        ("elapsed_ms = -1.0", "field `elapsed_ms` is -1.0"),
        ("total_ms = -6.0", "field `total_ms` is -6.0"),
        ("rays = 18446744073709551615", "field `rays` is 18446744073709551615"),
        ("a FIFO film", "s-run0-rep0.film: is a FIFO, not a regular file"),
        ("/dev/zero as film", "s-run0-rep0.film: is a device, not a regular file"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (config, out, kept) = with_a_kept_render(dir.path());
        let film = kept.with_extension("film");
        match what {
            "a FIFO film" => {
                std::fs::remove_file(&film).unwrap();
                assert!(Command::new("mkfifo").arg(&film).status().unwrap().success());
            }
            "/dev/zero as film" => {
                std::fs::remove_file(&film).unwrap();
                std::os::unix::fs::symlink("/dev/zero", &film).unwrap();
            }
            field => {
                let name = field.split(" = ").next().unwrap();
                let text = std::fs::read_to_string(&kept).unwrap();
                let line = text.lines().find(|l| l.starts_with(&format!("{name} = "))).unwrap();
                std::fs::write(&kept, text.replace(line, field)).unwrap();
            }
        }
        let o = util::output_within(
            util::experiment_command(&config, &out).arg("--resume"),
            Duration::from_secs(60),
        );
        let e = stderr(&o);
        assert!(o.status.success(), "{what}: {e}");
        assert!(
            e.contains(expected) && e.contains("discarded, and the run is rendered afresh"),
            "{what}: {e}"
        );
        assert_eq!(parts_of_the_row(&out), 1, "{what}: rendered afresh");
        assert!(!out.join("partial").exists(), "{what}: the kept render is gone");
    }
}

#[test]
fn damaged_records_are_refused_with_the_file_and_line() {
    for (what, damage, expect) in [
        (
            "a header of another version",
            ("experiment,study,run", "experiment,study,runs"),
            "runs.csv: line 1: the header is not this version's",
        ),
        (
            "a record with a field missing",
            (",cpu-serial,", ",,cpu-serial,"),
            "runs.csv: line 2:",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (config, out) = finished(dir.path());
        let runs = out.join("runs.csv");
        let text = std::fs::read_to_string(&runs).unwrap();
        let broken = text.replacen(damage.0, damage.1, 1);
        assert_ne!(broken, text, "{what}: the damage applies");
        std::fs::write(&runs, &broken).unwrap();
        let o = run(&config, &out, &["--resume"]);
        assert!(!o.status.success(), "{what}: resumed");
        assert!(stderr(&o).contains(expect), "{what}: {}", stderr(&o));
        assert_eq!(
            std::fs::read_to_string(&runs).unwrap(),
            broken,
            "{what}: the file is untouched"
        );
    }
}

#[test]
fn kernel_rows_of_an_unfinished_repetition_are_dropped_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (config, out) = finished(dir.path());
    // A repetition whose kernel row was written but whose run row was not
    // (the run row commits it): resume drops the orphan and makes the
    // repetition again.
    let runs = out.join("runs.csv");
    drop_last_record(&runs);
    let kernels = out.join("kernels.csv");
    let mut k = std::fs::read_to_string(&kernels).unwrap();
    k.push_str("small,s,1,cpu,1,cpu,cornell_diffuse,orphan,1,1,1,1,1,1,1,,,,\n");
    std::fs::write(&kernels, k).unwrap();
    let o = run(&config, &out, &["--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("dropped 1 kernel rows"), "{}", stderr(&o));
    assert!(!std::fs::read_to_string(&kernels).unwrap().contains("orphan"));
    assert_eq!(keys(&out).len(), 4);
}

#[test]
fn a_second_writer_is_refused_while_the_first_holds_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "small", SMALL);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let held = lab::output::FolderLock::take(&out).unwrap();
    for extra in [&[][..], &["--resume"][..]] {
        let o = run(&config, &out, extra);
        assert!(!o.status.success());
        assert!(
            stderr(&o).contains("another wavepath experiment is writing to this folder"),
            "{}",
            stderr(&o)
        );
        assert!(!out.join("runs.csv").exists(), "nothing written");
    }
    drop(held);
    let o = run(&config, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn the_runners_own_files_are_checked_before_the_first_run() {
    for name in ["runs.csv", "kernels.csv", "manifest.toml"] {
        for (what, make, expect) in [
            ("a FIFO", "fifo", "is a FIFO"),
            ("a link to /dev/null", "null", "is a device"),
            ("a folder", "folder", "is a folder"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let config = write_config(dir.path(), "small", SMALL);
            let out = dir.path().join("out");
            std::fs::create_dir(&out).unwrap();
            let path = out.join(name);
            match make {
                "fifo" => assert!(Command::new("mkfifo").arg(&path).status().unwrap().success()),
                "null" => std::os::unix::fs::symlink("/dev/null", &path).unwrap(),
                _ => std::fs::create_dir(&path).unwrap(),
            }
            let start = Instant::now();
            let o = run(&config, &out, &[]);
            assert!(!o.status.success(), "{name} as {what}: ran");
            assert!(
                stderr(&o).contains(name) && stderr(&o).contains(expect),
                "{name} as {what}: {}",
                stderr(&o)
            );
            assert!(start.elapsed() < Duration::from_secs(20), "{name} as {what}: slow");
            let left: Vec<_> = std::fs::read_dir(&out)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert!(left.len() <= 2, "{name} as {what}: wrote {left:?}");
        }
    }
}

#[test]
fn report_refuses_values_out_of_range_naming_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = finished(dir.path());
    let runs = out.join("runs.csv");
    let text = std::fs::read_to_string(&runs).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|c| *c == "wall_ms").unwrap();
    for bad in ["0", "-1.5", "NaN", "inf"] {
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        let mut fields: Vec<String> = lines[2].split(',').map(String::from).collect();
        fields[column] = bad.into();
        lines[2] = fields.join(",");
        std::fs::write(&runs, lines.join("\n") + "\n").unwrap();
        let start = Instant::now();
        let o = wavepath().arg("report").arg(&out).output().unwrap();
        assert!(!o.status.success(), "wall_ms = {bad}: reported");
        assert!(
            stderr(&o).contains("runs.csv: line 3, column `wall_ms`"),
            "wall_ms = {bad}: {}",
            stderr(&o)
        );
        assert!(start.elapsed() < Duration::from_secs(20));
    }
}

#[test]
fn report_refuses_rows_of_unknown_studies_and_a_missing_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = finished(dir.path());
    let runs = out.join("runs.csv");
    let text = std::fs::read_to_string(&runs).unwrap();
    std::fs::write(&runs, text.replacen("small,s,", "small,ghost,", 1)).unwrap();
    let o = wavepath().arg("report").arg(&out).output().unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("runs.csv: line 2, column `study`: `ghost` is not one of the manifest's studies (s)"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(out.join("manifest.toml")).unwrap();
    let o = wavepath().arg("report").arg(&out).output().unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("manifest.toml: cannot read"), "{}", stderr(&o));
}

/// `SMALL` with `extra` added to its study.
fn small_with(extra: &str) -> String {
    format!("{SMALL}{extra}\n")
}

/// Runs a config that must be refused, and returns its message.
fn refused(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "bad", text);
    let out = dir.path().join("out");
    let start = Instant::now();
    let o = run(&config, &out, &[]);
    assert!(!o.status.success(), "ran: {text}");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?} to refuse",
        start.elapsed()
    );
    assert!(!out.join("runs.csv").exists(), "wrote rows");
    stderr(&o)
}

#[test]
fn a_sweep_past_the_limit_is_refused_at_once() {
    // 2 back ends × 100 × 100 × 3 = 60 000 configurations.
    let values = |n: u32| (1..=n).map(|v| v.to_string()).collect::<Vec<_>>().join(", ");
    let text = small_with(&format!(
        "sweep = {{ spp = [{}], seed = [{}], threads = [1, 2, 3] }}",
        values(100),
        values(100)
    ));
    let e = refused(&text);
    assert!(
        e.contains("bad.toml:")
            && e.contains(
                "the study plans 60000 configurations (scenes × back ends × each sweep's values: 1 × 2 × 100 × 100 × 3)"
            )
            && e.contains("the limit is 10000"),
        "{e}"
    );
}

#[test]
fn a_config_whose_studies_together_pass_the_limit_is_refused_at_once() {
    // Three studies of 2 back ends × 4 000 seeds: each within the limit of
    // a study, 24 000 configurations together.
    let seeds: Vec<String> = (0..4000).map(|v| v.to_string()).collect();
    let sweep = format!("sweep = {{ seed = [{}] }}\n", seeds.join(", "));
    let mut text = small_with(&sweep);
    for name in ["t", "u"] {
        text.push_str(
            &SMALL[SMALL.find("[[study]]").unwrap()..].replace("name = \"s\"", &format!("name = \"{name}\"")),
        );
        text.push_str(&sweep);
    }
    let e = refused(&text);
    assert!(
        e.contains("bad.toml:")
            && e.contains("study `u`")
            && e.contains(
                "the config plans 24000 configurations with this study's 8000 (16000 in the studies before it)"
            )
            && e.contains("the limit for a whole config is 20000"),
        "{e}"
    );
}

#[test]
fn a_large_sweep_within_the_limit_plans_in_linear_time() {
    // 2 × 4 999 = 9 998 configurations, every one distinct: planned at once
    // (the quadratic merge took minutes at this size).
    let values: Vec<String> = (0..4999).map(|v| v.to_string()).collect();
    let text = small_with(&format!("sweep = {{ seed = [{}] }}", values.join(", ")));
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), "big", &text);
    let start = Instant::now();
    let config = lab::config::load(&path).unwrap();
    assert_eq!(config.studies[0].runs().len(), 9998);
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
}

#[test]
fn a_refill_threshold_under_a_schedule_that_never_refills_is_refused() {
    // Swept, it would label identical runs refill=0.25, 0.5 and 1; fixed, it
    // would be ignored.
    let study = |settings: &str| {
        SMALL
            .replace("backends = [\"cpu-serial\", \"cpu\"]", "backends = [\"cpu-wave\"]")
            .replace("fixed = { size = \"8x6\", spp = 1, depth = 2 }", settings)
    };
    for settings in [
        "fixed = { size = \"8x6\", spp = 1, schedule = \"bounce-sync\" }\nsweep = { refill = [0.25, 0.5, 1.0] }",
        "fixed = { size = \"8x6\", spp = 1, schedule = \"bounce-sync\", refill = 0.5 }",
        "fixed = { size = \"8x6\", spp = 1 }\nsweep = { schedule = [\"regenerate\", \"bounce-sync\"], refill = [0.25] }",
    ] {
        let e = refused(&study(settings));
        assert!(
            e.contains("bad.toml:")
                && e.contains("study `s`")
                && e.contains("refill applies to the regenerate schedule; bounce-sync never refills the pool"),
            "{settings}: {e}"
        );
    }
    // Under the regenerate schedule it is a setting like any other.
    let dir = tempfile::tempdir().unwrap();
    let text = study("fixed = { size = \"8x6\", spp = 1 }\nsweep = { refill = [0.25, 1.0] }");
    let config = lab::config::load(&write_config(dir.path(), "ok", &text)).unwrap();
    assert_eq!(config.studies[0].runs().len(), 2);
}

#[test]
fn settings_for_a_back_end_the_study_does_not_run_are_refused() {
    let e = refused(&small_with("per_backend.gpu-mega = { block = \"16x16\" }"));
    assert!(
        e.contains("bad.toml:") && e.contains("per_backend.gpu-mega") && e.contains("not one of the study's backends"),
        "{e}"
    );
    // A setting none of the back ends it is for would use: the study
    // runs cpu-serial and cpu.
    let fixed = SMALL.replace("depth = 2 }", "depth = 2, block = \"16x16\" }");
    for (text, marker, field, expected) in [
        (
            fixed,
            "block = ",
            "fixed `block`",
            "block applies to the gpu-mega back end; the cpu-serial and cpu back ends would ignore it",
        ),
        (
            small_with("sweep = { capacity = [\"2^20\", \"auto\"] }"),
            "sweep =",
            "sweep `capacity`",
            "capacity applies to the gpu-wave and cpu-wave back ends",
        ),
        (
            small_with("per_backend.cpu-serial = { threads = 2 }"),
            "per_backend",
            "per_backend.cpu-serial `threads`",
            "threads applies to the cpu back end; the cpu-serial back end would ignore it",
        ),
    ] {
        let e = refused(&text);
        let line = util::line_of(&text, marker);
        assert!(
            e.contains(&format!("bad.toml:{line}: study `s`, {field}: {expected}")),
            "{field}: {e}"
        );
    }
}

#[test]
fn a_published_value_that_is_not_a_number_is_refused() {
    for value in ["nan", "inf", "-2.0", "0.0"] {
        let e = refused(&small_with(&format!(
            "published = [{{ source = \"a paper\", hardware = \"a GPU\", value = {value}, unit = \"ms\", backend = \"cpu\" }}]"
        )));
        assert!(
            e.contains("field `value`") && e.contains("expected a finite value above 0"),
            "{value}: {e}"
        );
    }
}

#[test]
fn a_bad_scene_in_the_last_study_is_found_before_the_first_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.toml"), "[render]\nwidth = 0\n").unwrap();
    let text = format!(
        "{SMALL}\n[[study]]\nname = \"late\"\nscenes = [\"broken.toml\"]\nbackends = [\"cpu\"]\nwarmup = 0\nrepeat = 1\n"
    );
    let config = write_config(dir.path(), "late", &text);
    let out = dir.path().join("out");
    let o = run(&config, &out, &[]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("study `late`, run 0") && e.contains("checked before the first run") && e.contains("broken.toml"),
        "{e}"
    );
    assert!(!out.join("runs.csv").exists(), "the first study ran");
}

#[test]
fn a_render_that_does_not_fit_is_found_before_the_first_run() {
    let e = refused(&format!(
        "{SMALL}\n[[study]]\nname = \"huge\"\nscenes = [\"SCENES/cornell_diffuse.toml\"]\nbackends = [\"cpu\"]\nwarmup = 0\nrepeat = 1\nfixed = {{ size = \"32768x32768\", spp = 1 }}\n"
    ));
    assert!(e.contains("study `huge`, run 0") && e.contains("host memory"), "{e}");
}

#[test]
fn a_dirty_build_is_refused_unless_allowed() {
    use lab::runner::check_clean;
    use renderer::system::provenance::Provenance;
    let mut meta = Provenance::collect(wavepath::BUILD);
    meta.commit = "0123456789ab-dirty".into();
    let e = check_clean(&meta, false).unwrap_err().to_string();
    assert!(
        e.contains("commit 0123456789ab with uncommitted changes") && e.contains("--allow-dirty"),
        "{e}"
    );
    assert!(check_clean(&meta, true).is_ok());
    meta.commit = "0123456789ab".into();
    assert!(check_clean(&meta, false).is_ok());
}

#[test]
fn the_manifest_and_report_show_sessions_and_the_dirty_flag_and_refuse_mixed_commits() {
    let dir = tempfile::tempdir().unwrap();
    let (config, out) = finished(dir.path());
    let runs = out.join("runs.csv");
    drop_last_record(&runs);
    let o = run(&config, &out, &["--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest = lab::records::Manifest::read(&out.join("manifest.toml")).unwrap();
    assert_eq!(manifest.session.len(), 2);
    assert!(manifest.build.allow_dirty);
    let o = wavepath().arg("report").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    for session in &manifest.session {
        assert!(
            report.contains(&format!("| {} | {} |", session.started, session.finished)),
            "{report}"
        );
    }
    assert!(
        report.contains("Sessions (the first run, then each `--resume`)"),
        "{report}"
    );
    // Rows of another commit are refused unless --allow-mixed.
    let text = std::fs::read_to_string(&runs).unwrap();
    let commit = &manifest.build.commit;
    let mixed = text.replacen(&format!(",{commit},"), ",abcdefabcdef,", 1);
    assert_ne!(mixed, text);
    std::fs::write(&runs, mixed).unwrap();
    let o = wavepath().arg("report").arg(&out).output().unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("rows from 2 builds") && stderr(&o).contains("--allow-mixed"),
        "{}",
        stderr(&o)
    );
    let o = wavepath().args(["report", "--allow-mixed"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // Reported together, each build is named.
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let build = report.lines().find(|l| l.starts_with("| build |")).unwrap();
    assert!(
        build.contains("rows from 2 builds: `abcdefabcdef`") && build.contains(&format!("`{commit}`")),
        "{build}"
    );
}

#[test]
fn every_configuration_not_the_cpus_own_is_checked_against_the_cpu_before_timing() {
    let dir = tempfile::tempdir().unwrap();
    let text = SMALL
        .replace(
            "backends = [\"cpu-serial\", \"cpu\"]",
            "backends = [\"cpu\", \"cpu-wave\"]",
        )
        .replace(
            "fixed = { size = \"8x6\", spp = 1, depth = 2 }",
            "fixed = { size = \"8x6\", spp = 3, depth = 2 }\nsweep = { wave_block = [32, 64] }",
        );
    let config = write_config(dir.path(), "parity", &text);
    let out = dir.path().join("out");
    let o = run(&config, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest = lab::records::Manifest::read(&out.join("manifest.toml")).unwrap();
    assert_eq!(
        manifest.study[0].parity,
        "2 configuration(s) rendered the CPU's film bit for bit at 2 spp before they were timed"
    );
    assert_eq!(manifest.study[0].status, "complete");
    let o = wavepath().arg("report").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("parity with the CPU: 2 configuration(s)"), "{report}");
}

/// `SMALL` with a published speedup of `cpu` over `cpu-serial` added.
fn small_published(study_extra: &str, entry_extra: &str) -> String {
    format!(
        "{SMALL}baseline = \"cpu-serial\"\n{study_extra}\n[[study.published]]\nsource = \"a paper\"\nhardware = \"a CPU\"\nvalue = 3.0\nunit = \"x\"\nbackend = \"cpu\"\ntime = \"total\"\n{entry_extra}\n"
    )
}

#[test]
fn a_published_figure_states_the_seeds_time_and_may_be_a_gain_over_another_run() {
    let dir = tempfile::tempdir().unwrap();
    // A load-balancing gain: 2 threads over 1, not over the study baseline.
    let gain = small_published(
        "sweep = { threads = [1, 2] }",
        "match = { threads = 2 }\nover = { threads = 1 }",
    );
    let path = write_config(dir.path(), "gain", &gain);
    let config = lab::config::load(&path).unwrap();
    let p = &config.studies[0].published[0];
    assert_eq!(
        (p.run.as_deref(), p.over_run.as_deref()),
        (Some("cpu threads=2"), Some("cpu threads=1"))
    );
    let e = refused(&small_published("", "").replace("time = \"total\"\n", ""));
    assert!(
        e.contains("field `time`") && e.contains("`wall`") && e.contains("`total`"),
        "{e}"
    );
    let e = refused(&small_published("", "").replace("time = \"total\"", "time = \"cpu\""));
    assert!(e.contains("bad.toml:") && e.contains("unknown variant `cpu`"), "{e}");
    let e = refused(
        &small_published(
            "sweep = { threads = [1, 2] }",
            "match = { threads = 2 }\nover = { threads = 1 }",
        )
        .replace("unit = \"x\"", "unit = \"ms\""),
    );
    assert!(
        e.contains("field `over`") && e.contains("this figure is in `ms`"),
        "{e}"
    );
}

#[test]
fn a_published_figure_names_exactly_one_measured_run() {
    let dir = tempfile::tempdir().unwrap();
    // Exactly the study's one cpu run: it loads and keeps the run's label.
    let ok = small_published("", "match = { size = \"8x6\", spp = 1 }");
    let path = write_config(dir.path(), "ok", &ok);
    let config = lab::config::load(&path).unwrap();
    assert_eq!(config.studies[0].published[0].run.as_deref(), Some("cpu"));
    for (what, text, expect) in [
        (
            "settings no run has",
            small_published("", "match = { spp = 3 }"),
            "no run of the study is cpu with {spp=3}",
        ),
        (
            "settings several runs share",
            small_published("sweep = { threads = [1, 2] }", ""),
            "2 runs are cpu with {}",
        ),
        (
            "a scaled baseline",
            small_published("per_backend.cpu-serial = { spp_cap = 1 }", ""),
            "no measured run of the baseline renders the work of `cpu`",
        ),
        (
            "an `over` run that is its own run",
            small_published(
                "sweep = { threads = [1, 2] }",
                "match = { threads = 2 }\nover = { threads = 2 }",
            ),
            "`over` names run `cpu threads=2` itself",
        ),
        (
            "an `over` run the study does not make",
            small_published(
                "sweep = { threads = [1, 2] }",
                "match = { threads = 2 }\nover = { threads = 4 }",
            ),
            "the run it is a speedup over (`over`): no run of the study is cpu with {threads=4}",
        ),
    ] {
        let e = refused(&text);
        assert!(
            e.contains("published figure `3 x` of a paper") && e.contains(expect),
            "{what}: {e}"
        );
    }
    // A setting of another back end is refused at its key.
    let e = refused(&small_published("", "match = { block = \"8x8\" }"));
    assert!(
        e.contains("published figure, `match` `block`")
            && e.contains("block applies to the gpu-mega back end; the cpu back end would ignore it"),
        "{e}"
    );
}

#[test]
fn the_sampler_is_a_setting_whose_runs_render_images_of_their_own() {
    // Hash and Sobol runs of one back end render different images: the
    // film check must group them apart, and each row names its sampler.
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        "samplers",
        &small_with("sweep = { sampler = [\"hash\", \"sobol\"] }"),
    );
    let out = dir.path().join("out");
    let o = run(&config, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest = lab::records::Manifest::read(&out.join("manifest.toml")).unwrap();
    assert_eq!(manifest.study[0].status, "complete");
    assert_eq!(
        manifest.study[0].film_check,
        "identical: 2 groups of runs that render the same image"
    );
    let text = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let samplers: Vec<String> = rows.deserialize::<RunRow>().map(|r| r.unwrap().sampler).collect();
    assert_eq!(samplers.iter().filter(|s| *s == "sobol").count(), 4, "{samplers:?}");
    assert_eq!(samplers.iter().filter(|s| *s == "hash").count(), 4, "{samplers:?}");
    let e = refused(&small_with("sweep = { sampler = [\"halton\"] }"));
    assert!(e.contains("sweep `sampler`") && e.contains("halton"), "{e}");
}

#[test]
fn rows_measure_their_error_against_the_studys_reference_image() {
    let dir = tempfile::tempdir().unwrap();
    // The reference is the 4-spp render itself: that row's error is zero,
    // the 1-spp row's is not.
    let reference = dir.path().join("ref.exr");
    let o = wavepath()
        .arg("render")
        .arg(util::repo("scenes/cornell_diffuse.toml"))
        .args([
            "--backend",
            "cpu",
            "--size",
            "8x6",
            "--spp",
            "4",
            "--depth",
            "2",
            "--quiet",
            "--out",
        ])
        .arg(&reference)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = SMALL
        .replace(
            "backends = [\"cpu-serial\", \"cpu\"]",
            "backends = [\"cpu\"]\nreference = \"ref.exr\"",
        )
        .replace("repeat = 2", "repeat = 1")
        .replace("spp = 1, ", "")
        + "sweep = { spp = [4, 1] }\n";
    let config = write_config(dir.path(), "errors", &text);
    let out = dir.path().join("out");
    let o = run(&config, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv_text = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    let rows: Vec<RunRow> = csv::Reader::from_reader(csv_text.as_bytes())
        .deserialize()
        .map(|r| r.unwrap())
        .collect();
    let error = |spp: u32| {
        let r = rows.iter().find(|r| r.spp == spp).unwrap();
        (r.rmse.unwrap(), r.rel_mse.unwrap(), r.mae.unwrap(), r.flip.unwrap())
    };
    assert_eq!(error(4), (0.0, 0.0, 0.0, 0.0));
    let (rmse, rel_mse, mae, flip) = error(1);
    assert!(rmse > 0.0 && rel_mse > 0.0 && mae > 0.0 && flip > 0.0, "{:?}", error(1));
    let manifest = lab::records::Manifest::read(&out.join("manifest.toml")).unwrap();
    assert!(
        manifest.study[0]
            .reference
            .as_deref()
            .is_some_and(|r| r.ends_with("ref.exr"))
    );

    // A reference of another size is refused before the first run; one that
    // is not linear radiance, or missing, when the config loads.
    let e = refused(
        &text
            .replace("size = \"8x6\"", "size = \"10x6\"")
            .replace("ref.exr", &reference.display().to_string()),
    );
    assert!(
        e.contains("renders 10x6 but the study's reference") && e.contains("is 8x6"),
        "{e}"
    );
    let e = refused(&text.replace("ref.exr", "ref.png"));
    assert!(
        e.contains("field `reference`") && e.contains("not linear radiance"),
        "{e}"
    );
    let e = refused(&text.replace("ref.exr", "missing.exr"));
    assert!(e.contains("field `reference`") && e.contains("no image"), "{e}");

    // A reference pixel that is not finite would make every row's error
    // NaN: it is refused before the first run, by its file and position.
    let nan = dir.path().join("nan.pfm");
    let mut bytes = b"PF\n8 6\n-1.0\n".to_vec();
    // The third pixel of the file's first row, the image's bottom row.
    let at = 2 * 3 + 1;
    for i in 0..8 * 6 * 3 {
        bytes.extend(if i == at { f32::NAN } else { 0.5f32 }.to_le_bytes());
    }
    std::fs::write(&nan, bytes).unwrap();
    let e = refused(&text.replace("ref.exr", &nan.display().to_string()));
    assert!(
        e.contains("nan.pfm") && e.contains("pixel (2, 5)") && e.contains("not finite"),
        "{e}"
    );
}

#[test]
fn refusals_compare_without_the_memory_the_machine_has_now() {
    let at = |free: &str| {
        format!("error: the film needs 32.00 GiB of host memory, but only {free} is available; render a smaller size")
    };
    assert_eq!(without_measured(&at("22.75 GiB")), without_measured(&at("22.76 GiB")));
    assert_eq!(without_measured(&at("22.75 GiB")), without_measured(&at("512.00 MiB")));
    // What the refusal says still decides.
    assert_ne!(
        without_measured(&at("22.75 GiB")),
        without_measured(&at("22.75 GiB").replace("32.00", "64.00"))
    );
}

#[test]
fn a_dry_run_makes_the_runs_device_check() {
    // GPU 7 is on no machine that runs the tests; without a GPU none is.
    let dir = tempfile::tempdir().unwrap();
    let text = SMALL.replace("backends = [\"cpu-serial\", \"cpu\"]", "backends = [\"gpu-mega\"]");
    let config = write_config(dir.path(), "gpu", &text);
    let out = dir.path().join("out");
    let real = run(&config, &out, &["--devices", "7"]);
    assert!(!real.status.success(), "the run went ahead");
    assert!(stderr(&real).contains("--devices"), "{}", stderr(&real));
    let dry = run(&config, &out, &["--dry-run", "--devices", "7"]);
    assert!(
        !dry.status.success(),
        "the dry run passed it: {}",
        String::from_utf8_lossy(&dry.stdout)
    );
    assert_eq!(stderr(&dry), stderr(&real), "the same refusal");
    assert!(!out.exists(), "the run made its folder before refusing");
}

#[test]
fn a_dry_run_refuses_every_plan_the_run_refuses() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.toml"), "[render]\nwidth = 0\n").unwrap();
    let study = |extra: &str| {
        format!("{SMALL}\n[[study]]\nname = \"late\"\nbackends = [\"cpu\"]\nwarmup = 0\nrepeat = 1\n{extra}\n")
    };
    for (what, text, expected) in [
        (
            "a scene field out of range",
            study(
                "scenes = [\"SCENES/../experiments/scenes/material_cost.toml\"]\n\
                 sweep = { \"scene.generators[0].octaves\" = [1000000000] }",
            ),
            "octaves",
        ),
        (
            "a scene that does not load",
            study("scenes = [\"broken.toml\"]"),
            "broken.toml",
        ),
        (
            "a render that does not fit",
            study("scenes = [\"SCENES/cornell_diffuse.toml\"]\nfixed = { size = \"32768x32768\", spp = 1 }"),
            "host memory",
        ),
        (
            "split_all on one GPU",
            format!(
                "{SMALL}\n[[study]]\nname = \"late\"\nbackends = [\"gpu-mega\"]\n\
                 scenes = [\"SCENES/cornell_diffuse.toml\"]\nsweep = {{ split_all = [false, true] }}\n"
            ),
            "sweep `split_all`: every run of the study renders on one GPU",
        ),
    ] {
        let config = write_config(dir.path(), "refused", &text);
        let out = dir.path().join("out");
        let real = run(&config, &out, &[]);
        assert!(!real.status.success(), "{what}: the run went ahead");
        assert!(stderr(&real).contains(expected), "{what}: {}", stderr(&real));
        let dry = run(&config, &out, &["--dry-run"]);
        assert!(!dry.status.success(), "{what}: the dry run passed it");
        assert_eq!(
            without_measured(&stderr(&dry)),
            without_measured(&stderr(&real)),
            "{what}: the same refusal"
        );
        assert!(!out.join("runs.csv").exists(), "{what}: wrote rows");
        let _ = std::fs::remove_dir_all(&out);
    }
    // The output folder's checks too: a folder holding a run is refused
    // without --resume, and a dry run changes nothing in it.
    let (config, out) = finished(dir.path());
    let before = std::fs::read(out.join("runs.csv")).unwrap();
    let dry = run(&config, &out, &["--dry-run"]);
    assert!(!dry.status.success());
    assert!(
        stderr(&dry).contains("pass --resume to continue it"),
        "{}",
        stderr(&dry)
    );
    let dry = run(&config, &out, &["--dry-run", "--resume"]);
    assert!(dry.status.success(), "{}", stderr(&dry));
    assert_eq!(std::fs::read(out.join("runs.csv")).unwrap(), before);
}

#[test]
fn an_experiment_refuses_kernels_from_outside_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "small", SMALL);
    let out = dir.path().join("out");
    let refused = util::experiment_command(&config, &out)
        .env("WAVEPATH_PTX", "probe.ptx")
        .output()
        .unwrap();
    assert!(!refused.status.success(), "an experiment ran with outside kernels");
    let e = stderr(&refused);
    assert!(
        e.contains("WAVEPATH_PTX=probe.ptx replaces the binary's kernels"),
        "{e}"
    );
    assert!(!out.join("runs.csv").exists(), "rows were written");
    // Without it, the same experiment runs.
    assert!(run(&config, &out, &[]).status.success());
}

#[test]
fn a_resume_after_the_scene_file_changed_does_not_keep_rows_of_the_old_scene() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("box.toml");
    let original = std::fs::read_to_string(util::repo("scenes/cornell_diffuse.toml")).unwrap();
    std::fs::write(&scene, &original).unwrap();
    let text = SMALL
        .replace("SCENES/cornell_diffuse.toml", &scene.display().to_string())
        .replace("backends = [\"cpu-serial\", \"cpu\"]", "backends = [\"cpu-serial\"]")
        .replace("repeat = 2", "repeat = 1");
    let config = write_config(dir.path(), "small", &text);
    let out = dir.path().join("out");
    let o = run(&config, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let hash = |out: &Path| -> Vec<String> {
        recover_rows::<RunRow>(&out.join("runs.csv"))
            .unwrap()
            .rows
            .iter()
            .map(|r| r.film_hash.clone())
            .collect()
    };
    let old = hash(&out);
    // The same config over an edited scene: its rows are of another image.
    let edited = original.replace("0.75", "0.3");
    assert_ne!(edited, original, "the test's edit found nothing to change");
    std::fs::write(&scene, &edited).unwrap();
    let o = run(&config, &out, &["--resume"]);
    assert!(!o.status.success(), "the resume kept the old scene's rows as complete");
    assert!(
        stderr(&o).contains("scene file changed since") && stderr(&o).contains("--allow-mixed"),
        "{}",
        stderr(&o)
    );
    assert_eq!(hash(&out), old, "the refused resume changed the rows");
    // With --allow-mixed the new scene's run is made and the old row kept
    // apart, and the film check says the two images differ.
    let o = run(&config, &out, &["--resume", "--allow-mixed"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success() && stdout.contains("films MISMATCH"), "{stdout}");
    let both = hash(&out);
    assert_eq!(both.len(), 2, "{both:?}");
    assert!(both.contains(&old[0]) && both.iter().any(|h| *h != old[0]), "{both:?}");
}
