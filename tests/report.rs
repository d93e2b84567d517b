//! `write_report` on a hand-written experiment folder: the medians and
//! speedups worked out by hand appear in the right rows, published figures
//! sit beside ours, every table and figure is captioned, the header names
//! the device and the runner's overhead, and the figures are real SVG and
//! PNG files with a footer naming their origin. A CSV without a needed column is an error naming
//! the file and the column; so is every value the experiment runner could not have written,
//! and a file that is not a regular one is refused unread. Rows of several builds are refused,
//! or, told to mix them, each build is named. Text from the inputs cannot change the Markdown
//! around it, in the report or the summary.

mod util;

use lab::records::MAX_RECORDS_BYTES;
use report::summary::{SUMMARY_FILE, summary, write_summary};
use report::{Png, write_report};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;
use util::{line_of, output_within, wavepath};

/// A copy of `tests/data/report/` in a fresh temporary folder.
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture(dir.path());
    dir
}

/// Copies `tests/data/report/` into the folder `to`.
fn copy_fixture(to: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/report");
    for name in ["runs.csv", "kernels.csv", "manifest.toml"] {
        fs::copy(src.join(name), to.join(name)).unwrap();
    }
}

/// The one line of `markdown` that starts with `prefix`.
fn line<'a>(markdown: &'a str, prefix: &str) -> &'a str {
    let mut lines = markdown.lines().filter(|l| l.starts_with(prefix));
    let found = lines
        .next()
        .unwrap_or_else(|| panic!("no line starts with {prefix:?} in\n{markdown}"));
    assert!(lines.next().is_none(), "several lines start with {prefix:?}");
    found
}

fn report(dir: &Path) -> String {
    let out = write_report(dir, false, Png::No).unwrap();
    assert_eq!(out.markdown, dir.join("report.md"));
    fs::read_to_string(&out.markdown).unwrap()
}

#[test]
fn configuration_rows_carry_hand_computed_medians_and_speedups() {
    let dir = fixture();
    let md = report(dir.path());
    // cpu-serial: scaled 1000, 1010, 990 ms (run at 4 spp, reported at 16),
    // and marked as scaled.
    let serial = line(&md, "| 0 | `cpu-serial` |");
    assert!(
        serial.contains("| 1000.00 | – | 4 spp | 990.00–1010.00 | 2.0% | 4.00 |"),
        "{serial}"
    );
    // A scaled time has no whole-call time, so no speedup in total time.
    assert!(serial.ends_with("| 1.00x | – |"), "{serial}");
    // 4 threads, dynamic rows: 250, 240, 260 ms; 1000 / 250 = 4.
    let four = line(&md, "| 6 | `cpu threads=4 schedule=dynamic-rows` |");
    assert!(
        four.contains("| 250.00 | 250.00 | – | 240.00–260.00 | 8.0% | 16.00 |"),
        "{four}"
    );
    assert!(four.ends_with("| 4.00x | – |"), "{four}");
    let two = line(&md, "| 5 | `cpu threads=2 schedule=dynamic-rows` |");
    assert!(
        two.contains("| 500.00 | 500.00 | – | 490.00–520.00 | 6.0% |") && two.ends_with("| 2.00x | – |"),
        "{two}"
    );
    // 4 threads, static rows: 255 ms; 1000 / 255 = 3.92.
    assert!(line(&md, "| 3 | `cpu threads=4 schedule=static-rows` |").ends_with("| 3.92x | – |"));
    // Megakernel 40 ms (96 registers, occupancy 0.5), 40.5 ms whole calls;
    // wavefronts 20 and 25 ms, 30.5 and 25.5 ms whole calls (the first
    // allocates 10 ms more): 40.5 / 30.5 = 1.33, 40.5 / 25.5 = 1.59.
    let mega = line(&md, "| 0 | `gpu-mega block=8x8` |");
    assert!(
        mega.contains("| 40.00 | 40.50 |") && mega.contains("| 96 | 50% | 1.00x | 1.00x |"),
        "{mega}"
    );
    let wave = line(&md, "| 1 | `gpu-wave wave_block=64` |");
    assert!(
        wave.contains("| 20.00 | 30.50 | – | 19.00–21.00 | 10.0% | 1000.00 | 40 | 100% | 2.00x | 1.33x |"),
        "{wave}"
    );
    assert!(line(&md, "| 2 | `gpu-wave wave_block=128` |").ends_with("| 1.60x | 1.59x |"));
    assert!(
        md.contains("| speedup vs cpu-serial | speedup vs cpu-serial, total |")
            && md.contains("| speedup vs gpu-mega | speedup vs gpu-mega, total |")
    );
}

#[test]
fn published_figures_sit_beside_ours_and_everything_is_captioned() {
    let dir = fixture();
    let md = report(dir.path());
    let cs500 = line(&md, "| CS500 report (2017) |");
    // An entry from before matching names no run, and the study's only
    // cpu-serial baseline is scaled from 4 spp: nothing stands beside it.
    assert!(
        cs500.contains(
            "| 3.50x | not stated | cpu on cs500 | – (the entry names no run: a config from before matching) | – | – \
             | – (no measured run: scaled times never stand here) | AMD EPYC 9654 96-Core Processor |"
        ),
        "{cs500}"
    );
    // The Laine entry names its run (20 ms against the megakernel's 40 ms,
    // in the wall time it states; 1.33x in whole calls beside it); the
    // study's best (the same run) stands in its own column.
    let laine = line(&md, "| Laine et al. (2013) |");
    assert!(
        laine.contains(
            "| 1.80x | wall (render loop) | gpu-wave | 2.00x | 1.33x (total time) | `gpu-wave wave_block=64` | 2.00x | NVIDIA H200 |"
        ),
        "{laine}"
    );

    for study in ["cpu_scaling", "wavefront"] {
        let caption = format!(
            "study `{study}` of config `experiments/fixture.toml`, produced by \
             `wavepath experiment experiments/fixture.toml --out results/fixture`"
        );
        assert!(
            md.contains(&format!("*Table: {caption}.*")),
            "no table caption for {study}"
        );
        assert!(
            md.contains(&format!("*Figure: {caption}.*")),
            "no figure caption for {study}"
        );
    }
    assert!(md.contains("commit `abc1234` (**dirty**: uncommitted changes)"));
    assert!(md.contains(
        "| device | NVIDIA H200, driver CUDA 13.0, compute capability 9.0, 132 multiprocessors, 139.8 GiB |"
    ));
    assert!(md.contains(
        "\nRunner overhead per GPU row (the runner's own time against the render call): \
         median 0.40%, largest 1.20%, over 9 GPU rows.\n"
    ));
    // The three cpu-serial rows render 4 spp and report 16; no other row scales.
    assert_eq!(
        line(&md, "- rows rendered at fewer spp and scaled:"),
        "- rows rendered at fewer spp and scaled: 3 (their times are scaled to report_spp)"
    );
    assert!(md.contains("note: cpu-serial rows were run at 4 spp and scaled to 16"));
    assert!(md.contains("skipped `gpu-wave wave_block=256`: out of memory"));
    assert!(md.contains("](figures/cpu_scaling_threads.svg)\n"));
}

#[test]
fn a_png_is_drawn_and_linked_only_when_asked_for_and_a_stale_one_is_removed() {
    let dir = fixture();
    let png = dir.path().join("figures/cpu_scaling_threads.png");
    write_report(dir.path(), false, Png::Yes).unwrap();
    let md = fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("](figures/cpu_scaling_threads.svg) ([PNG](figures/cpu_scaling_threads.png))\n"));
    assert!(png.is_file());
    // Without it, the earlier report's PNG goes: it would no longer match.
    let out = write_report(dir.path(), false, Png::No).unwrap();
    let md = fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(!md.contains("[PNG]"));
    assert!(!png.exists());
    assert!(
        out.figures.iter().all(|f| f.extension().is_some_and(|e| e == "svg")),
        "{:?}",
        out.figures
    );
}

#[test]
fn thread_scaling_and_kernel_figures_are_real_svg_and_png() {
    let dir = fixture();
    let out = write_report(dir.path(), false, Png::Yes).unwrap();
    let figures = dir.path().join("figures");
    let expect = |name: &str| -> PathBuf {
        let path = figures.join(name);
        assert!(out.figures.contains(&path), "{name} not reported in {:?}", out.figures);
        path
    };
    for (stem, axis_label) in [
        ("cpu_scaling_threads", "CPU threads"),
        ("wavefront_kernels", "kernel time (ms)"),
        ("wavefront_speedup", "speedup over gpu-mega (x)"),
        ("wavefront_active_lanes", "active lanes per warp (of 32)"),
    ] {
        let svg = fs::read_to_string(expect(&format!("{stem}.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains(axis_label),
            "{stem}.svg lacks {axis_label:?}"
        );
        let png = image::open(expect(&format!("{stem}.png"))).unwrap();
        assert_eq!((png.width(), png.height()), (1000, 600), "{stem}.png");
    }
    assert!(!figures.join("cpu_scaling_kernels.svg").exists());
    let speedup = fs::read_to_string(figures.join("wavefront_speedup.svg")).unwrap();
    assert!(
        speedup.contains(
            "config experiments/fixture.toml · study wavefront · \
             wavepath experiment experiments/fixture.toml --out results/fixture"
        ),
        "no footer naming config, study and command"
    );
}

#[test]
fn spp_and_scene_sweeps_get_log_log_time_figures() {
    let dir = fixture();
    let path = dir.path().join("manifest.toml");
    let text = fs::read_to_string(&path).unwrap().replace(
        r#"swept = ["threads", "cpu_schedule"]"#,
        r#"swept = ["threads", "spp", "scene.generators[0].grid"]"#,
    );
    fs::write(&path, text).unwrap();
    // The grid sweep changes the primitive count: configuration 1 has more.
    let runs = dir.path().join("runs.csv");
    let mut reader = csv::Reader::from_path(&runs).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = headers.iter().position(|h| h == "primitives").unwrap();
    let run = headers.iter().position(|h| h == "run").unwrap();
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let mut writer = csv::Writer::from_path(&runs).unwrap();
    writer.write_record(&headers).unwrap();
    for r in records {
        let fields: Vec<&str> = (0..r.len())
            .map(|i| if i == column && &r[run] == "1" { "2000" } else { &r[i] })
            .collect();
        writer.write_record(&fields).unwrap();
    }
    writer.flush().unwrap();
    write_report(dir.path(), false, Png::No).unwrap();
    for (stem, axis_label) in [
        ("cpu_scaling_spp", "samples per pixel"),
        ("cpu_scaling_primitives", "primitives"),
    ] {
        let svg = fs::read_to_string(dir.path().join(format!("figures/{stem}.svg"))).unwrap();
        assert!(
            svg.contains(axis_label) && svg.contains("median time (ms)"),
            "{stem}.svg"
        );
        assert!(
            !dir.path().join(format!("figures/{stem}.png")).exists(),
            "a PNG only when asked for"
        );
    }
}

#[test]
fn a_block_sweep_draws_the_speedup_per_block_with_registers_and_occupancy() {
    let dir = fixture();
    let path = dir.path().join("manifest.toml");
    let text = fs::read_to_string(&path)
        .unwrap()
        .replace(r#"swept = ["wave_block"]"#, r#"swept = ["block", "wave_block"]"#);
    fs::write(&path, text).unwrap();
    write_report(dir.path(), false, Png::No).unwrap();
    // The fixture's one megakernel: block 8x8, 96 registers, occupancy 0.5,
    // the study's baseline itself (1.00x).
    let svg = fs::read_to_string(dir.path().join("figures/wavefront_blocks.svg")).unwrap();
    assert!(
        svg.contains("gpu-mega block=8x8 (96 registers, occupancy 50%)") && svg.contains("speedup over gpu-mega"),
        "the block figure"
    );
    // Without a block sweep there is none.
    let dir = fixture();
    write_report(dir.path(), false, Png::No).unwrap();
    assert!(!dir.path().join("figures/wavefront_blocks.svg").exists());
}

#[test]
fn absent_kernel_profiles_mean_no_kernel_figures() {
    let dir = fixture();
    fs::remove_file(dir.path().join("kernels.csv")).unwrap();
    let md = report(dir.path());
    assert!(!md.contains("wavefront_kernels") && md.contains("cpu_scaling_threads"));
}

#[test]
fn runs_csv_without_a_needed_column_is_an_error_naming_file_and_column() {
    let dir = fixture();
    let path = dir.path().join("runs.csv");
    let text = fs::read_to_string(&path)
        .unwrap()
        .replace("scaled_wall_ms", "scaled_ms");
    fs::write(&path, text).unwrap();
    let err = format!(
        "{:#}",
        write_report(dir.path(), false, Png::No)
            .err()
            .expect("a missing column must fail")
    );
    assert!(err.contains("runs.csv") && err.contains("`scaled_wall_ms`"), "{err}");
}

#[test]
fn missing_manifest_is_an_error_naming_it() {
    let dir = fixture();
    fs::remove_file(dir.path().join("manifest.toml")).unwrap();
    let err = format!(
        "{:#}",
        write_report(dir.path(), false, Png::No)
            .err()
            .expect("a missing manifest must fail")
    );
    assert!(err.contains("manifest.toml"), "{err}");
}

/// Sets the cell of `column` in the record on `line` of the CSV file at
/// `path` to `value`, adding the column (empty elsewhere) where the file
/// has none, as files from before it was added do.
fn set_cell(path: &Path, line: usize, column: &str, value: &str) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let mut headers = reader.headers().unwrap().clone();
    let mut records: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    let at = headers.iter().position(|h| h == column).unwrap_or_else(|| {
        headers.push_field(column);
        records.iter_mut().for_each(|r| r.push(String::new()));
        headers.len() - 1
    });
    records[line - 2][at] = value.into();
    let mut writer = csv::Writer::from_path(path).unwrap();
    writer.write_record(&headers).unwrap();
    for r in &records {
        writer.write_record(r).unwrap();
    }
    writer.flush().unwrap();
}

/// The error of a report on `dir` that must fail.
fn refusal(dir: &Path) -> String {
    let err = write_report(dir, false, Png::No).err().expect("the report must refuse");
    assert!(!dir.join("report.md").exists(), "wrote a report");
    format!("{err:#}")
}

/// A report input edited: `cells` of the record on `line` of `file` set,
/// and what the refusal must say.
struct Edit {
    file: &'static str,
    line: usize,
    cells: &'static [(&'static str, &'static str)],
    expect: &'static str,
}

/// Values the runner cannot write, on lines of the fixture: 2 is
/// `cpu-serial`, 5 `cpu` at 16 spp, 23 `gpu-mega` at 64 spp. The last cell
/// set is the one refused.
const CSV_EDITS: [Edit; 42] = [
    Edit {
        file: "runs.csv",
        line: 2,
        cells: &[("experiment", "other")],
        expect: "`other` is not the manifest's experiment `fixture`",
    },
    Edit {
        file: "runs.csv",
        line: 2,
        cells: &[("study", "ghost")],
        expect: "`ghost` is not one of the manifest's studies (cpu_scaling, wavefront)",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[("backend", "gpu-turbo")],
        expect: "`gpu-turbo` is not a back end (expected one of cpu-serial, cpu, gpu-mega, gpu-wave, cpu-wave)",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[("backend", "cpu")],
        expect: "`cpu` is not one of study `wavefront`'s back ends (gpu-mega, gpu-wave)",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[("gpus", "0")],
        expect: "expected a whole number from 1 to 64, got 0",
    },
    Edit {
        file: "runs.csv",
        line: 5,
        cells: &[("gpus", "2")],
        expect: "`2` is out of range (back end `cpu` has no `gpus`: the runner leaves it empty)",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[("block", "8y8")],
        expect: "expected WIDTHxHEIGHT with sides from 1 to 32768, e.g. 1200x800; got `8y8`",
    },
    Edit {
        file: "runs.csv",
        line: 5,
        cells: &[("block", "8x8")],
        expect: "`8x8` is out of range (back end `cpu` has no `block`: the runner leaves it empty)",
    },
    Edit {
        file: "runs.csv",
        line: 5,
        cells: &[("sampler", "bogus")],
        expect: "expected one of hash, sobol; got `bogus`",
    },
    Edit {
        file: "runs.csv",
        line: 5,
        cells: &[("threads", "0")],
        expect: "0 is out of range (expected 1 or more threads)",
    },
    Edit {
        file: "runs.csv",
        line: 2,
        cells: &[("threads", "4")],
        expect: "4 is out of range (`cpu-serial` runs on 1 thread)",
    },
    Edit {
        file: "runs.csv",
        line: 5,
        cells: &[("report_spp", "2")],
        expect: "2 is below the 16 spp rendered",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[("occupancy", "1.5")],
        expect: "1.5 is out of range (expected a fraction above 0 and at most 1)",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[
            ("gpus", "2"),
            ("split_imbalance", "0.1"),
            ("split_busy_ms", "1.000 2.000"),
            ("split_spp", "x y z"),
        ],
        expect: "`x y z` is not a split over 2 GPUs (expected one whole number of samples per GPU)",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[
            ("gpus", "2"),
            ("split_imbalance", "0.1"),
            ("split_spp", "32 32"),
            ("split_busy_ms", "1.000 NaN"),
        ],
        expect: "`1.000 NaN` is not a split over 2 GPUs (expected a time from 0 to 1e9 ms per GPU)",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[
            ("gpus", "2"),
            ("split_imbalance", "0.1"),
            ("split_busy_ms", "1.000 2.000"),
            ("split_spp", "32 16"),
        ],
        expect: "`32 16` is 48 samples in all, not the 64 spp rendered",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[("split_imbalance", "0.1")],
        expect: "a split over GPUs in a row of one GPU",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[("registers", "300")],
        expect: "300 is out of range (expected 1 to 255 registers per thread)",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[("registers", "0")],
        expect: "0 is out of range (expected 1 to 255 registers per thread)",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[("occupancy", "0")],
        expect: "0 is out of range (expected a fraction above 0 and at most 1)",
    },
    Edit {
        file: "runs.csv",
        line: 5,
        cells: &[("registers", "64")],
        expect: "set in a row of back end `cpu` (only GPU runs have a GPU and a kernel profile: the runner leaves \
                 it empty)",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[("config", "gpu-mega block=8x8 kernels=exact"), ("kernels", "all")],
        expect: "`all` contradicts the row's configuration `gpu-mega block=8x8 kernels=exact`, which sets `kernels=exact`",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[
            ("config", "gpu-mega block=8x8 max_registers=80"),
            ("max_registers", "128"),
        ],
        expect: "`128` contradicts the row's configuration `gpu-mega block=8x8 max_registers=80`, which sets `max_registers=80`",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[("gpus", "2")],
        expect: "2 with no split",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[("registers", "9x")],
        expect: "`9x` cannot be read (invalid digit found in string)",
    },
    Edit {
        file: "kernels.csv",
        line: 2,
        cells: &[("registers", "300")],
        expect: "300 is out of range (expected 1 to 255 registers per thread)",
    },
    Edit {
        file: "kernels.csv",
        line: 2,
        cells: &[("study", "cpu_scaling"), ("backend", "cpu")],
        expect: "`cpu` has no kernel profiles (only the GPU back ends' runs are profiled)",
    },
    Edit {
        file: "kernels.csv",
        line: 2,
        cells: &[("experiment", "other")],
        expect: "`other` is not the manifest's experiment `fixture`",
    },
    Edit {
        file: "kernels.csv",
        line: 2,
        cells: &[("study", "ghost")],
        expect: "`ghost` is not one of the manifest's studies",
    },
    Edit {
        file: "kernels.csv",
        line: 2,
        cells: &[("launches", "0")],
        expect: "0 is out of range (expected 1 or more launches)",
    },
    Edit {
        file: "kernels.csv",
        line: 2,
        cells: &[("active_lanes", "40")],
        expect: "40 is out of range (expected a mean from 0 to 32 lanes)",
    },
    Edit {
        file: "runs.csv",
        line: 2,
        cells: &[("film_hash", "abc")],
        expect: "`abc` is not a film hash (expected 16 hex digits, or 8 from older runners)",
    },
    Edit {
        file: "runs.csv",
        line: 2,
        cells: &[("commit", "f47|`x")],
        expect: "`f47|`x` is not a commit (expected 7 to 40 hex digits, `-dirty` after them for a build with \
                 uncommitted changes, or `unknown`)",
    },
    Edit {
        file: "kernels.csv",
        line: 2,
        cells: &[("kernel", "")],
        expect: "empty (expected the kernel's entry-point name)",
    },
    Edit {
        file: "kernels.csv",
        line: 2,
        cells: &[("min_ms", "99999")],
        expect: "99999 is above `max_ms`, 0.7125 (the fastest launch cannot be slower than the slowest)",
    },
    Edit {
        file: "runs.csv",
        line: 2,
        cells: &[("gpu_ordinal", "0")],
        expect: "set in a row of back end `cpu-serial` (only GPU runs have a GPU and a kernel profile: the runner \
                 leaves it empty)",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[("max_registers", "64"), ("registers", "96")],
        expect: "96 is above the row's cap of 64 registers (`max_registers`), which the kernel keeps to",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[("config", "gpu-mega block=8x8 gpus=2"), ("gpus", "1")],
        expect: "`1` contradicts the row's configuration `gpu-mega block=8x8 gpus=2`, which sets `gpus=2`",
    },
    Edit {
        file: "runs.csv",
        line: 23,
        cells: &[
            ("config", "gpu-mega block=8x8 gpus=2 split_all=true"),
            ("gpus", "2"),
            ("split_spp", "32 32"),
            ("split_busy_ms", "1.000 2.000"),
            ("split_imbalance", "0.1"),
            ("split_all", "false"),
        ],
        expect: "`false` contradicts the row's configuration `gpu-mega block=8x8 gpus=2 split_all=true`, which sets \
                 `split_all=true`",
    },
    Edit {
        file: "runs.csv",
        line: 26,
        cells: &[("scaled_wall_ms", "1e-310")],
        expect: "1e-310 is out of range (expected a time from 1e-6 to 1e9 ms)",
    },
    Edit {
        file: "runs.csv",
        line: 2,
        cells: &[("total_ms", "2e9")],
        expect: "2000000000 is out of range (expected a time from 1e-6 to 1e9 ms)",
    },
    Edit {
        file: "kernels.csv",
        line: 2,
        cells: &[("max_ms", "1e300")],
        expect: "1e300 is out of range (expected a time from 0 to 1e9 ms, or NaN (not measured))",
    },
];

#[test]
fn csv_values_the_runner_cannot_write_are_refused_naming_file_line_and_column() {
    for Edit {
        file,
        line,
        cells,
        expect,
    } in CSV_EDITS
    {
        let dir = fixture();
        for (column, value) in cells {
            set_cell(&dir.path().join(file), line, column, value);
        }
        let err = refusal(dir.path());
        let column = cells.last().unwrap().0;
        assert!(
            err.contains(&format!("{file}: line {line}, column `{column}`: {expect}"))
                && err.ends_with("; this is not a file `wavepath experiment` wrote"),
            "{cells:?}: {err}"
        );
    }
}

#[test]
fn a_configuration_timed_near_zero_is_refused_at_once_not_drawn() {
    // Every repetition of the first wavefront configuration (lines 26 to
    // 28) at 1e-310 ms: its speedup would be infinite, and no axis spans it.
    let dir = fixture();
    for line in 26..=28 {
        set_cell(&dir.path().join("runs.csv"), line, "scaled_wall_ms", "1e-310");
    }
    let o = output_within(wavepath().arg("report").arg(dir.path()), Duration::from_secs(20));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("runs.csv: line 26, column `scaled_wall_ms`: 1e-310 is out of range"),
        "{stderr}"
    );
    assert!(!dir.path().join("report.md").exists(), "wrote a report");
}

#[test]
fn a_film_hash_against_the_manifests_film_check_is_refused_at_its_line() {
    let dir = fixture();
    // Line 24 is the second repetition of line 23's configuration: the
    // same image, which the manifest says every run rendered alike.
    set_cell(&dir.path().join("runs.csv"), 24, "film_hash", "deadbeef");
    let err = refusal(dir.path());
    assert!(
        err.contains(
            "runs.csv: line 24, column `film_hash`: `deadbeef` differs from `77e0d4c5` on line 23, \
             a run that renders the same image, but the manifest's film check of study `wavefront` says `identical: 1 groups`"
        ),
        "{err}"
    );
}

#[test]
fn manifest_fields_the_runner_cannot_write_are_refused_naming_file_line_and_field() {
    let cases = [
        (
            "status = \"complete\"",
            "status = \"bogus\"",
            "study `cpu_scaling`, field `status`",
            "`bogus` is not a status",
        ),
        (
            "baseline = \"gpu-mega\"",
            "baseline = \"cpu\"",
            "study `wavefront`, field `baseline`",
            "not one of the study's back ends",
        ),
        (
            "value = 1.8",
            "value = nan",
            "study `wavefront`, field `published[0].value`",
            "expected a finite value above 0",
        ),
        (
            "memory_gib = 139.8",
            "memory_gib = inf",
            "field `device.memory_gib`",
            "expected a finite value of at least 0",
        ),
        (
            "median_fraction = 0.004",
            "median_fraction = nan",
            "field `overhead.median_fraction`",
            "expected a finite value of at least 0",
        ),
        (
            "swept = [\"wave_block\"]",
            "swept = [\"warp\"]",
            "study `wavefront`, field `swept`",
            "`warp` is not a setting",
        ),
        (
            "started = \"2026-11-22T04:00:00Z\"",
            "started = \"2026-11-22T04:00:00.5Z\"",
            "field `experiment.started`",
            "`2026-11-22T04:00:00.5Z` is not a time as the runner writes one (UTC to the second",
        ),
        (
            "finished = \"2026-11-22T04:10:00Z\"",
            "finished = \"2026-11-22T03:10:00Z\"",
            "field `experiment.finished`",
            "`2026-11-22T03:10:00Z` is before the start, `2026-11-22T04:00:00Z`",
        ),
    ];
    for (from, to, field, expect) in cases {
        let dir = fixture();
        let path = dir.path().join("manifest.toml");
        let text = fs::read_to_string(&path).unwrap();
        let line = line_of(&text, from);
        fs::write(&path, text.replacen(from, to, 1)).unwrap();
        let err = refusal(dir.path());
        assert!(
            err.contains(&format!("manifest.toml: line {line}, {field}: ")) && err.contains(expect),
            "{to}: {err}"
        );
    }
}

/// `[[rank]]` entries: each rank with its rows, on host `h`.
fn rank_entries(ranks: &[(usize, usize)]) -> String {
    ranks
        .iter()
        .map(|(rank, rows)| format!("\n[[rank]]\nrank = {rank}\nhost = \"h\"\nrows = {rows}\nrender_s = 1.0\n"))
        .collect()
}

/// The fixture's runs.csv with its rows made by ranks 0 and 1 in turn (15
/// each), on host `h`.
fn rows_of_two_ranks(dir: &Path) {
    let runs = dir.join("runs.csv");
    for line in 2..=31 {
        set_cell(&runs, line, "rank", &(line % 2).to_string());
        set_cell(&runs, line, "host", "h");
    }
}

/// The 1-based line of the `n`-th (from 0) occurrence of `needle` in `text`.
fn line_of_nth(text: &str, needle: &str, n: usize) -> usize {
    let (at, _) = text.match_indices(needle).nth(n).expect("the needle");
    text[..at].matches('\n').count() + 1
}

#[test]
fn a_manifest_that_contradicts_the_rows_is_refused_naming_file_line_and_field() {
    let base =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/report/manifest.toml")).unwrap();
    let device = "\n[[devices]]\nordinal = 0\nname = \"a\"\ndriver = \"d\"\ncompute_capability = \"9.0\"\n\
                  multiprocessors = 1\nmemory_gib = 1.0\n";
    let wavefront = "rows = 9\nresumed_rows = 0\nstatus = \"complete\"";
    // What, the manifest, whether the rows are of ranks 0 and 1, the
    // refused field's line (a needle and its occurrence), the field and
    // what is wrong.
    let cases = [
        (
            "a study's count",
            base.replacen(wavefront, &wavefront.replace("9", "8"), 1),
            false,
            ("rows = 8", 0),
            "study `wavefront`, field `rows`",
            "8, but runs.csv holds 9 rows of the study",
        ),
        (
            "a running study's count",
            base.replacen(wavefront, &wavefront.replace("complete", "running"), 1),
            false,
            ("rows = 9", 0),
            "study `wavefront`, field `rows`",
            "9, but a study still `running` has counted none yet",
        ),
        (
            "ranks of one process",
            base.clone() + &rank_entries(&[(0, 15), (1, 15)]),
            false,
            ("[[rank]]", 0),
            "field `rank`",
            "lists 2 ranks, but no MPI rank made the rows of runs.csv (the runner lists the ranks only where two or \
             more did)",
        ),
        (
            "a rank listed twice",
            base.clone() + &rank_entries(&[(0, 15), (1, 15), (0, 15)]),
            true,
            ("rank = 0", 1),
            "field `rank[2].rank`",
            "rank 0 is listed twice (also as rank[0])",
        ),
        (
            "a rank not listed",
            base.clone() + &rank_entries(&[(0, 15)]),
            true,
            ("[[rank]]", 0),
            "field `rank`",
            "lists no rank 1, which made 15 rows of runs.csv",
        ),
        (
            "a rank's count",
            base.clone() + &rank_entries(&[(0, 15), (1, 16)]),
            true,
            ("rows = 16", 0),
            "field `rank[1].rows`",
            "16, but rank 1 made 15 rows of runs.csv",
        ),
        (
            "a GPU listed twice",
            base.clone() + &device.repeat(2),
            false,
            ("ordinal = 0", 1),
            "field `devices[1].ordinal`",
            "0 is also the ordinal of devices[0] (the runner lists each GPU once)",
        ),
    ];
    for (what, text, ranked, (needle, nth), field, expect) in cases {
        let dir = fixture();
        fs::write(dir.path().join("manifest.toml"), &text).unwrap();
        if ranked {
            rows_of_two_ranks(dir.path());
        }
        let err = refusal(dir.path());
        let line = line_of_nth(&text, needle, nth);
        assert!(
            err.contains(&format!("manifest.toml: line {line}, {field}: {expect}; ")),
            "{what}: {err}"
        );
    }
    // The ranks as the runner lists them.
    let dir = fixture();
    fs::write(
        dir.path().join("manifest.toml"),
        base + &rank_entries(&[(1, 15), (0, 15)]),
    )
    .unwrap();
    rows_of_two_ranks(dir.path());
    report(dir.path());
}

#[test]
fn rows_of_several_builds_are_refused_or_each_build_is_named() {
    let dir = fixture();
    let runs = dir.path().join("runs.csv");
    set_cell(&runs, 26, "commit", "def5678");
    set_cell(&runs, 26, "dirty", "false");
    let err = refusal(dir.path());
    assert!(
        err.contains("rows from 2 builds (`abc1234` (dirty), `def5678`)") && err.contains("--allow-mixed"),
        "{err}"
    );
    write_report(dir.path(), true, Png::No).unwrap();
    let md = fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert_eq!(
        line(&md, "| build |"),
        "| build | wavepath 0.1.0, rows from 2 builds: `abc1234` (dirty), `def5678` |"
    );
}

#[test]
fn files_that_are_not_regular_or_too_large_are_refused_unread() {
    let limit = format!("the limit is {MAX_RECORDS_BYTES} bytes");
    for name in ["runs.csv", "kernels.csv", "manifest.toml"] {
        for (what, expect) in [
            ("a FIFO", "is a FIFO, not a regular file"),
            ("a link to /dev/zero", "is a device, not a regular file"),
            ("too large", limit.as_str()),
        ] {
            let dir = fixture();
            let path = dir.path().join(name);
            fs::remove_file(&path).unwrap();
            match what {
                "a FIFO" => assert!(
                    std::process::Command::new("mkfifo")
                        .arg(&path)
                        .status()
                        .unwrap()
                        .success()
                ),
                "a link to /dev/zero" => std::os::unix::fs::symlink("/dev/zero", &path).unwrap(),
                // Sparse: no disk is spent on it.
                _ => fs::File::create(&path).unwrap().set_len(MAX_RECORDS_BYTES + 1).unwrap(),
            }
            let o = output_within(wavepath().arg("report").arg(dir.path()), Duration::from_secs(20));
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{name} as {what}: {stderr}");
            assert!(
                stderr.contains(&format!("{name}: cannot read ")) && stderr.contains(expect),
                "{name} as {what}: {stderr}"
            );
            assert!(
                !dir.path().join("report.md").exists(),
                "{name} as {what}: wrote a report"
            );
        }
    }
}

#[test]
fn an_output_that_is_an_input_or_another_output_is_refused_before_anything_is_written() {
    use std::os::unix::fs::symlink;
    // The figures folder holds nothing but the links the cases make.
    let figures = |dir: &Path| {
        let figures = dir.join("figures");
        let mut names: Vec<_> = match fs::read_dir(&figures) {
            Ok(entries) => entries.map(|e| e.unwrap().file_name()).collect(),
            Err(_) => Vec::new(),
        };
        names.sort();
        names
    };
    // report.md as a link to runs.csv would replace the records it reads.
    let dir = fixture();
    let runs = fs::read(dir.path().join("runs.csv")).unwrap();
    symlink("runs.csv", dir.path().join("report.md")).unwrap();
    let err = format!("{:#}", write_report(dir.path(), false, Png::No).err().expect("refused"));
    assert!(
        err.contains("report.md (a link to") && err.contains("also an input"),
        "{err}"
    );
    assert_eq!(fs::read(dir.path().join("runs.csv")).unwrap(), runs);
    assert!(figures(dir.path()).is_empty());

    // A figure as a link to the report: two outputs, one file.
    let dir = fixture();
    fs::create_dir(dir.path().join("figures")).unwrap();
    symlink("../report.md", dir.path().join("figures/cpu_scaling_threads.svg")).unwrap();
    let err = format!("{:#}", write_report(dir.path(), false, Png::No).err().expect("refused"));
    assert!(
        err.contains("cpu_scaling_threads.svg (a link to") && err.contains("report.md") && err.contains("both"),
        "{err}"
    );
    assert_eq!(figures(dir.path()), ["cpu_scaling_threads.svg"]);
    assert!(!dir.path().join("report.md").exists());

    // The summary as a link to an experiment folder's runs.csv.
    let results = tempfile::tempdir().unwrap();
    fs::create_dir(results.path().join("x")).unwrap();
    copy_fixture(&results.path().join("x"));
    symlink("x/runs.csv", results.path().join(SUMMARY_FILE)).unwrap();
    let err = format!("{:#}", write_summary(results.path()).expect_err("refused"));
    assert!(
        err.contains("SUMMARY.md (a link to") && err.contains("also an input"),
        "{err}"
    );
    assert_eq!(fs::read(results.path().join("x/runs.csv")).unwrap(), runs);
}

#[test]
fn text_from_the_inputs_cannot_change_the_markdown_around_it() {
    // The host's CPU, in the header's table, with a pipe, a line break
    // and a heading after it.
    let dir = fixture();
    let path = dir.path().join("manifest.toml");
    let manifest = fs::read_to_string(&path).unwrap();
    let cpu = "cpu = \"AMD EPYC 9654 96-Core Processor\"";
    let hostile = "cpu = \"A | B\\n# Injected <b>bold</b> `x\"";
    fs::write(&path, manifest.replacen(cpu, hostile, 1)).unwrap();
    let md = report(dir.path());
    assert!(!md.lines().any(|l| l.starts_with("# Injected")), "{md}");
    assert_eq!(
        line(&md, "| host CPU |"),
        "| host CPU | A \\| B \\# Injected \\<b\\>bold\\</b\\> \\`x (16 threads) |"
    );

    // A folder's name, in the summary's tables, with backticks, HTML and
    // a line break: a code span of it, and a link that ends where it should.
    let results = tempfile::tempdir().unwrap();
    let name = "a`b <img src=x>\n# c";
    fs::create_dir(results.path().join(name)).unwrap();
    copy_fixture(&results.path().join(name));
    let md = summary(results.path()).unwrap().markdown;
    assert!(!md.lines().any(|l| l.starts_with("# c")), "{md}");
    assert!(
        md.contains("[``a`b <img src=x> # c`` / `wavefront`](a%60b%20%3Cimg%20src%3Dx%3E%0A%23%20c/report.md)"),
        "{md}"
    );
}
