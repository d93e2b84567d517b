//! `results/SUMMARY.md`: regenerated from the committed result folders it
//! must equal the committed file (and its figure the committed
//! `results/figures/answer.svg`), whatever the renderer's source around
//! them reads; on a fresh experiment it sets the published figure beside
//! our value at the run the entry names, in the seed's time, and names the
//! build each figure was measured with. `report --currency` tells, on
//! demand, which folders are no longer current for the checkout and why: an
//! edited scene or config, or a changed measured source. A file of the tree
//! that is not a regular one is refused unread.

mod util;

use renderer::system::fingerprint::{MEASURED_SOURCES, fingerprint_bytes};
use renderer::system::provenance::Provenance;
use report::answer;
use report::summary::{SUMMARY_FILE, summary};
use std::path::{Path, PathBuf};
use std::time::Duration;
use util::{output_within, repo, run_experiment, wavepath, write_config};

#[test]
fn the_committed_summary_is_what_the_committed_results_give() {
    let results = repo("results");
    let committed = std::fs::read_to_string(results.join(SUMMARY_FILE)).unwrap();
    let regenerated = summary(&results).unwrap();
    assert!(
        committed == regenerated.markdown,
        "results/SUMMARY.md is out of date: run `wavepath report --summary results` and commit it"
    );
    let figure = std::fs::read_to_string(results.join(answer::FIGURE)).ok();
    assert!(
        figure == regenerated.figure,
        "results/{} is out of date: run `wavepath report --summary results` and commit it",
        answer::FIGURE
    );
}

/// The files of the results folder `from` that the summary reads (every
/// folder's manifest and runs, and the peers' figures), copied into `to`.
fn copy_what_the_summary_reads(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let dir = entry.unwrap().path();
        for file in ["manifest.toml", "runs.csv"] {
            if dir.join(file).is_file() {
                let copy = to.join(dir.file_name().unwrap()).join(file);
                std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
                std::fs::copy(dir.join(file), copy).unwrap();
            }
        }
    }
    let peers = "reference/peers/peers.csv";
    std::fs::create_dir_all(to.join(peers).parent().unwrap()).unwrap();
    std::fs::copy(from.join(peers), to.join(peers)).unwrap();
}

#[test]
fn the_summary_is_a_function_of_the_results_alone() {
    let committed = std::fs::read_to_string(repo("results").join(SUMMARY_FILE)).unwrap();
    // Outside any checkout, and in a checkout whose renderer was edited
    // since every run: the same page.
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    copy_what_the_summary_reads(&repo("results"), &results);
    assert!(summary(&results).unwrap().markdown == committed, "outside a checkout");
    for source in MEASURED_SOURCES.iter().filter(|s| **s != "device/src") {
        let link = dir.path().join(source);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(repo(source), link).unwrap();
    }
    std::fs::create_dir_all(dir.path().join("device/src")).unwrap();
    std::fs::write(dir.path().join("device/src/lib.rs"), "// an edited renderer\n").unwrap();
    assert!(
        summary(&results).unwrap().markdown == committed,
        "the summary moved with the renderer's source"
    );
}

/// A study whose published figure is a gain of two threads over one.
const GAIN: &str = r#"
[experiment]
name = "gain"

[[study]]
name = "threads"
scenes = ["scene.toml"]
backends = ["cpu"]
warmup = 0
repeat = 1
fixed = { size = "16x12", spp = 2, depth = 2 }
sweep = { threads = [1, 2] }

[[study.published]]
source = "a paper"
hardware = "a CPU"
value = 1.5
unit = "x"
backend = "cpu"
time = "total"
match = { threads = 2 }
over = { threads = 1 }
"#;

/// The summary's line for `source`.
fn line_of<'a>(text: &'a str, source: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(&format!("| {source} |")))
        .unwrap_or_else(|| panic!("no line for {source} in:\n{text}"))
}

/// `report --currency` on `results`: its status and standard output.
fn currency(results: &Path) -> (bool, String, String) {
    let o = output_within(
        wavepath().args(["report", "--currency"]).arg(results),
        Duration::from_secs(60),
    );
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (o.status.success(), text(&o.stdout), text(&o.stderr))
}

#[test]
fn a_fresh_experiment_is_summarised_with_its_build_and_its_currency_told_on_demand() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(repo("scenes/cornell_diffuse.toml"), dir.path().join("scene.toml")).unwrap();
    let config = write_config(dir.path(), "gain", GAIN);
    let results = dir.path().join("results");
    let o = run_experiment(&config, &results.join("gain"), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = wavepath().args(["report", "--summary"]).arg(&results).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(results.join(SUMMARY_FILE)).unwrap();
    // No study against the megakernel: the answer says so, and no figure.
    assert!(
        text.contains("No study sets the megakernel against the wavefront yet."),
        "{text}"
    );
    assert!(!results.join(answer::FIGURE).exists());
    let line = line_of(&text, "a paper");
    let cells: Vec<&str> = line.split(" | ").collect();
    // seed | figure | hardware | time | ours | other time | ratio | our hardware | study | commit | source
    assert_eq!(cells[1], "1.50x");
    assert_eq!(cells[3], "total (whole render call)");
    assert!(cells[4].ends_with("x (cpu)"), "{line}");
    let ours: f64 = cells[4].split('x').next().unwrap().parse().unwrap();
    let ratio: f64 = cells[6].parse().unwrap();
    assert!((ratio - ours / 1.5).abs() < 0.01, "{line}");
    assert_eq!(cells[8], "[`gain` / `threads`](gain/report.md)");
    // The build it was measured with: this binary's commit and source.
    let build = Provenance::collect(wavepath::BUILD);
    assert!(cells[9].starts_with(&format!("`{}`", build.commit_hash())), "{line}");
    assert_eq!(
        cells[10].trim_end_matches(" |"),
        format!("`{}`", build.source),
        "{line}"
    );

    // No renderer source beside the results: currency cannot be told.
    let (ok, _, stderr) = currency(&results);
    assert!(
        !ok && stderr.contains("no wavepath source here to compare with"),
        "{stderr}"
    );
    // The checkout's measured source beside them: current.
    for source in MEASURED_SOURCES {
        let link = dir.path().join(source);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(repo(source), link).unwrap();
    }
    let (ok, stdout, stderr) = currency(&results);
    assert!(ok, "{stderr}");
    let folder = format!("gain ({}): ", build.commit_hash());
    assert!(
        stdout.starts_with(&format!("{folder}current\n1 of 1 experiment folders current")),
        "{stdout}"
    );

    // An edited scene is told, then an edited config (checked first); the
    // summary does not move.
    let scene = dir.path().join("scene.toml");
    let (scene_as_run, config_as_run) = (
        std::fs::read_to_string(&scene).unwrap(),
        std::fs::read_to_string(&config).unwrap(),
    );
    std::fs::write(&scene, format!("{scene_as_run}\n# edited\n")).unwrap();
    let (_, stdout, _) = currency(&results);
    let told = format!("{folder}not current: its input {} has changed since\n", scene.display());
    assert!(stdout.starts_with(&told), "{stdout}");
    assert!(stdout.contains("\n0 of 1 experiment folders current"), "{stdout}");
    std::fs::write(&config, format!("{config_as_run}\n# edited\n")).unwrap();
    let (_, stdout, _) = currency(&results);
    assert!(
        stdout.starts_with(&format!("{folder}not current: its config has changed since it ran\n")),
        "{stdout}"
    );
    assert!(
        summary(&results).unwrap().markdown == text,
        "the summary moved with its inputs"
    );

    // A renderer edit, config and scene as run again: the source is told.
    std::fs::write(&config, config_as_run).unwrap();
    std::fs::write(&scene, scene_as_run).unwrap();
    std::fs::remove_file(dir.path().join("device/src")).unwrap();
    std::fs::create_dir_all(dir.path().join("device/src")).unwrap();
    std::fs::write(dir.path().join("device/src/lib.rs"), "// an edited renderer\n").unwrap();
    let (_, stdout, _) = currency(&results);
    let moved = format!(
        "{folder}not current: the renderer's measured source has changed since it ran ({} then, ",
        build.source
    );
    assert!(stdout.starts_with(&moved), "{stdout}");
    assert!(
        summary(&results).unwrap().markdown == text,
        "the summary moved with the renderer"
    );
}

/// A results folder in `dir` holding the report fixture as its folder
/// `fixture`, with the config its manifest names and one input, both as run.
fn fixture_results(dir: &Path) -> PathBuf {
    let results = dir.join("results");
    std::fs::create_dir_all(results.join("fixture")).unwrap();
    std::fs::copy(repo("tests/data/report/runs.csv"), results.join("fixture/runs.csv")).unwrap();
    let (config, scene) = ("# the fixture's config\n", "# the fixture's scene\n");
    for (path, text) in [("experiments/fixture.toml", config), ("scenes/fixture.toml", scene)] {
        std::fs::create_dir_all(dir.join(path).parent().unwrap()).unwrap();
        std::fs::write(dir.join(path), text).unwrap();
    }
    let manifest = std::fs::read_to_string(repo("tests/data/report/manifest.toml"))
        .unwrap()
        .replace("0123456789abcdef", &fingerprint_bytes(config.as_bytes()))
        + &format!(
            "\n[[input]]\npath = \"scenes/fixture.toml\"\nfingerprint = \"{}\"\n",
            fingerprint_bytes(scene.as_bytes())
        );
    std::fs::write(results.join("fixture/manifest.toml"), manifest).unwrap();
    results
}

/// `results/fixture` copied to `results/NAME`, its manifest's dates
/// `started`..`finished` with `extra` appended, and each GPU row given to
/// worker `i % workers` in `column` (`gpu_ordinal` or `rank`).
fn spread_copy(
    results: &Path,
    name: &str,
    (started, finished): (&str, &str),
    extra: &str,
    column: &str,
    workers: usize,
) {
    let (from, to) = (results.join("fixture"), results.join(name));
    std::fs::create_dir_all(&to).unwrap();
    let manifest = std::fs::read_to_string(from.join("manifest.toml"))
        .unwrap()
        .replace("2026-11-22T04:00:00Z", started)
        .replace("2026-11-22T04:10:00Z", finished);
    std::fs::write(to.join("manifest.toml"), manifest + extra).unwrap();
    let mut reader = csv::Reader::from_path(from.join("runs.csv")).unwrap();
    let mut writer = csv::Writer::from_path(to.join("runs.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let backend = headers.iter().position(|h| h == "backend").unwrap();
    let at = headers.iter().position(|h| h == column).unwrap();
    writer.write_record(&headers).unwrap();
    for (i, record) in reader.records().enumerate() {
        let record = record.unwrap();
        let worker = if record[backend].starts_with("gpu") {
            (i % workers).to_string()
        } else {
            String::new()
        };
        let cells = record.iter().enumerate();
        writer
            .write_record(cells.map(|(k, cell)| if k == at { worker.as_str() } else { cell }))
            .unwrap();
    }
    writer.flush().unwrap();
}

#[test]
fn spreads_over_gpus_and_ranks_are_set_against_one_gpu_and_kept_out_of_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let results = fixture_results(dir.path());
    let alone = summary(&results).unwrap().markdown;
    assert!(
        !alone.contains("## Over several GPUs"),
        "no spread, no section:\n{alone}"
    );
    let device = std::fs::read_to_string(results.join("fixture/manifest.toml")).unwrap();
    let device = &device[device.find("[device]").unwrap()..device.find("[build]").unwrap()];
    let devices: String = (0..2)
        .map(|k| device.replace("[device]", &format!("[[devices]]\nordinal = {k}")))
        .collect();
    // The one-GPU run took 600 s; two GPUs 300 s; two ranks 315 s, one
    // of whose ranks made no row.
    spread_copy(
        &results,
        "fixture_gpus2",
        ("2026-11-23T04:00:00Z", "2026-11-23T04:05:00Z"),
        &devices,
        "gpu_ordinal",
        2,
    );
    spread_copy(
        &results,
        "fixture_ranks2",
        ("2026-11-24T04:00:00Z", "2026-11-24T04:05:15Z"),
        "",
        "rank",
        1,
    );
    let text = summary(&results).unwrap().markdown;
    let section = &text[text.find("## Over several GPUs").expect("the section")..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let lines: Vec<&str> = section.lines().filter(|l| l.starts_with("| [`fixture`]")).collect();
    assert_eq!(lines.len(), 2, "{section}");
    assert!(
        lines[0].starts_with("| [`fixture`](fixture/report.md) | 2 GPUs (`--devices`) | [`fixture_gpus2`](fixture_gpus2/report.md) | 300 | 600 | 2.00x | – | "),
        "{section}"
    );
    assert!(lines[0].contains("% | yes | "), "{section}");
    assert!(
        lines[1].contains("| 315 | 600 | 1.90x | 1.050 | – | 1 of 2 ranks made rows |"),
        "{section}"
    );
    // The spreads' rows are the one-GPU run's measurements again: the
    // answer and the tables above cite `fixture` alone, as without them.
    let before = &alone[..alone.find("## Where each figure comes from").unwrap()];
    let after = &text[..text.find("## Over several GPUs").unwrap()];
    assert_eq!(before, after);
    let sources = &text[text.find("## Where each figure comes from").unwrap()..];
    for name in ["fixture_gpus2", "fixture_ranks2"] {
        assert!(sources.contains(&format!("[`{name}`]({name}/report.md)")), "{sources}");
    }
}

#[test]
fn spread_times_the_runner_cannot_write_or_too_short_to_compare_are_refused() {
    let long = "9".repeat(100_000);
    let session = format!("\n[[session]]\nstarted = \"{long}\"\nfinished = \"\"\ncommit = \"abc1234\"\ndirty = true\n");
    // The spread's start, end and extra manifest text, and what the
    // refusal says of its manifest, against the one-GPU run's 600 s.
    let cases = [
        (
            ("2026-11-23T04:00:00Z", "2026-11-23T04:00:00.000000001Z"),
            "",
            "field `experiment.finished`: `2026-11-23T04:00:00.000000001Z` is not a time as the runner writes one \
             (UTC to the second, e.g. `2026-11-29T02:22:06Z`)",
        ),
        (
            ("2026-11-23T04:00:00Z", "2026-11-23T04:05:00Z"),
            session.as_str(),
            "field `session[0].started`: `99999999999999999999",
        ),
        (
            ("2026-11-23T04:00:00Z", "2026-11-23T04:00:00Z"),
            "",
            "fields `experiment.started` and `experiment.finished`: 0 s in all, under the 1 s",
        ),
        (
            ("2026-11-23T04:00:00Z", "2026-11-23T04:00:10Z"),
            "",
            "the speedup over one GPU (600 s over 10 s) is 60.000, outside the 1/16 to 16",
        ),
    ];
    for ((started, finished), extra, expect) in cases {
        let dir = tempfile::tempdir().unwrap();
        let results = fixture_results(dir.path());
        spread_copy(&results, "fixture_ranks2", (started, finished), extra, "rank", 1);
        let e = format!("{:#}", summary(&results).err().expect("refused"));
        let manifest = results.join("fixture_ranks2/manifest.toml");
        assert!(
            e.starts_with(&manifest.display().to_string()) && e.contains(expect),
            "{e}"
        );
        assert!(e.len() < 1000, "the refusal quotes a cut value: {e}");
    }
}

#[test]
fn a_peer_timed_near_zero_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let results = fixture_results(dir.path());
    let peers = results.join("reference/peers/peers.csv");
    std::fs::create_dir_all(peers.parent().unwrap()).unwrap();
    // The fixture's megakernel workload: its ratio would be infinite.
    std::fs::write(
        &peers,
        "program,workload,width,height,spp,depth,roulette,render_ms,samples_per_s,scene\n\
         p,w,640,480,64,8,0,5e-324,1e9,cs500\n",
    )
    .unwrap();
    let o = output_within(
        wavepath().args(["report", "--summary"]).arg(&results),
        Duration::from_secs(20),
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: line 2, column `render_ms`: 5e-324 is out of range (expected a time from 1e-6 to 1e9 ms)",
            peers.display()
        )),
        "{stderr}"
    );
    assert!(!results.join(SUMMARY_FILE).exists(), "wrote a summary");
}

#[test]
fn files_of_the_tree_that_are_not_regular_are_refused_unread() {
    // What the summary reads, and what the currency check reads besides.
    for (file, make, expect, command) in [
        (
            "results/fixture/runs.csv",
            "fifo",
            "is a FIFO, not a regular file",
            "--summary",
        ),
        (
            "results/fixture/manifest.toml",
            "zero",
            "is a device, not a regular file",
            "--summary",
        ),
        (
            "experiments/fixture.toml",
            "fifo",
            "is a FIFO, not a regular file",
            "--currency",
        ),
        (
            "scenes/fixture.toml",
            "zero",
            "is a device, not a regular file",
            "--currency",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let results = fixture_results(dir.path());
        for source in MEASURED_SOURCES {
            let link = dir.path().join(source);
            std::fs::create_dir_all(link.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(repo(source), link).unwrap();
        }
        let run = || {
            output_within(
                wavepath().args(["report", command]).arg(&results),
                Duration::from_secs(20),
            )
        };
        let o = run();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let figure = results.join(answer::FIGURE);
        if command == "--summary" {
            let text = std::fs::read_to_string(results.join(SUMMARY_FILE)).unwrap();
            assert!(text.contains("[`fixture`](fixture/report.md)"), "{text}");
            assert!(
                text.contains("\n| [`fixture` / `wavefront`](fixture/report.md) | "),
                "the answer has no row of the fixture's study: {text}"
            );
            assert!(std::fs::read_to_string(&figure).unwrap().starts_with("<svg"));
            std::fs::remove_file(results.join(SUMMARY_FILE)).unwrap();
            std::fs::remove_file(&figure).unwrap();
        } else {
            let stdout = String::from_utf8_lossy(&o.stdout);
            assert!(stdout.starts_with("fixture ("), "{stdout}");
        }

        let path = dir.path().join(file);
        let _ = std::fs::remove_file(&path);
        match make {
            "fifo" => assert!(
                std::process::Command::new("mkfifo")
                    .arg(&path)
                    .status()
                    .unwrap()
                    .success()
            ),
            _ => std::os::unix::fs::symlink("/dev/zero", &path).unwrap(),
        }
        let o = run();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{file}: {stderr}");
        assert!(
            stderr.contains(&path.display().to_string()) && stderr.contains(expect),
            "{file}: {stderr}"
        );
        assert!(!results.join(SUMMARY_FILE).exists(), "{file}: wrote a summary");
        assert!(!figure.exists(), "{file}: wrote the answer's figure");
    }
}
