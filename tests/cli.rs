//! The `wavepath` binary end to end: a render writes a real image, bad input
//! fails with a message naming the file, and nothing half-written is left.

mod util;

use std::process::Command;
use util::repo;

fn wavepath() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wavepath"))
}

const TINY: &str = r#"
[render]
width = 16
height = 8
spp = 2
max_depth = 4

[camera]
look_from = [0.0, 0.0, 5.0]
look_at = [0.0, 0.0, 0.0]
vfov = 40.0

[background]
kind = "sky"

[materials.red]
kind = "diffuse"
albedo = [0.8, 0.1, 0.1]

[[objects]]
kind = "sphere"
center = [0.0, 0.0, 0.0]
radius = 1.0
material = "red"
"#;

#[test]
fn render_writes_each_format_and_prints_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("tiny.toml");
    std::fs::write(&scene, TINY).unwrap();
    for ext in ["png", "ppm", "bmp"] {
        let out = dir.path().join(format!("tiny.{ext}"));
        let run = wavepath()
            .arg("render")
            .arg(&scene)
            .arg("--out")
            .arg(&out)
            .arg("--quiet")
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(stdout.contains("16x8") && stdout.contains("M rays/s"), "{stdout}");
        let img = image::open(&out).unwrap().to_rgb8();
        assert_eq!(img.dimensions(), (16, 8));
        // The red sphere is in the middle, the sky at the corner.
        let centre = img.get_pixel(8, 4);
        assert!(centre[0] > centre[2], "{centre:?}");
    }
    // No GPU here: auto falls back to the CPU and says so.
    let run = wavepath()
        .arg("render")
        .arg(&scene)
        .arg("--out")
        .arg(dir.path().join("a.png"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&run.stderr).contains("cpu back end"));
}

#[test]
fn overrides_and_debug_views_apply() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("tiny.toml");
    std::fs::write(&scene, TINY).unwrap();
    let out = dir.path().join("n.png");
    let run = wavepath()
        .args([
            "render",
            "--size",
            "10x6",
            "--spp",
            "1",
            "--view",
            "normals",
            "--backend",
            "cpu-serial",
            "--quiet",
        ])
        .arg(&scene)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let img = image::open(&out).unwrap().to_rgb8();
    assert_eq!(img.dimensions(), (10, 6));
    // The sphere's centre faces the camera: normal (0,0,1) shows as (128,128,255).
    let p = img.get_pixel(5, 3);
    assert!(p[2] > 240 && (p[0] as i32 - 128).abs() < 40, "{p:?}");
}

#[test]
fn bad_scene_fails_with_the_file_and_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("bad.toml");
    std::fs::write(&scene, TINY.replace("radius = 1.0", "radius = -1.0")).unwrap();
    let out = dir.path().join("bad.png");
    let run = wavepath()
        .arg("render")
        .arg(&scene)
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("bad.toml:23:") && stderr.contains("radius"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only the scene file may remain"
    );
}

#[test]
fn unwritable_output_and_unknown_format_are_errors() {
    let scene = repo("scenes/cornell_diffuse.toml");
    let run = wavepath()
        .arg("render")
        .arg(&scene)
        .args(["--out", "x.jpg", "--quiet"])
        .output()
        .unwrap();
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("x.jpg"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("no/such/folder/x.png");
    let run = wavepath()
        .arg("render")
        .arg(&scene)
        .args(["--size", "4x4", "--spp", "1", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("no/such/folder"));
}

#[test]
fn bad_arguments_are_refused_by_the_parser() {
    let run = wavepath()
        .args(["render", "scenes/cs500.toml", "--size", "big"])
        .output()
        .unwrap();
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("WIDTHxHEIGHT"));
    let run = wavepath()
        .args(["render", "scenes/cs500.toml", "--spp", "0"])
        .output()
        .unwrap();
    assert!(!run.status.success());
}

#[test]
fn an_error_quotes_a_huge_value_cut_to_a_readable_length() {
    // 100 kB values: each error names the flag and what was expected, and
    // quotes the value's start and its size, not the value whole.
    let long = format!("exact+{}", "x".repeat(100_000));
    let count = "9".repeat(100_000);
    for (args, expected) in [
        (vec!["render", "s.toml", "--kernels", &long], "is no feature"),
        (vec!["render", "s.toml", "--size", &count], "WIDTHxHEIGHT"),
        (vec!["render", "s.toml", "--refill", &count], "a fraction from 0 to 1"),
        (vec!["render", "s.toml", "--backend", &count], "possible values"),
        (vec!["experiment", "e.toml", "--devices", &count], "GPU ordinal"),
        (vec!["render", "s.toml", &count], "unexpected argument"),
    ] {
        check(args, expected);
    }
    // Paths, which the errors name whole where they are short.
    let scene = util::repo("scenes/cornell_diffuse.toml");
    let scene = scene.to_str().unwrap();
    let out = format!("o.{}", "k".repeat(100_000));
    let missing = format!("/tmp/{}.toml", "k".repeat(100_000));
    for (args, expected) in [
        (
            vec!["render", scene, "--size", "8x8", "--spp", "1", "--out", &out],
            "o.kkk",
        ),
        (vec!["render", &missing, "--size", "8x8"], "/tmp/kkk"),
        (vec!["report", &missing], "/tmp/kkk"),
    ] {
        check(args, expected);
    }
    fn check(args: Vec<&str>, expected: &str) {
        let run = wavepath().args(&args).output().unwrap();
        let label: String = args.join(" ").chars().take(60).collect();
        assert!(!run.status.success(), "{label}");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.len() < 2000, "{} bytes for {label}", stderr.len());
        assert!(stderr.contains(expected) && stderr.contains("… (100"), "{stderr}");
    }
}

#[test]
fn verify_and_bench_offer_only_the_back_ends_they_take() {
    for command in ["verify", "bench"] {
        let out = wavepath().args([command, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success());
        for backend in ["cpu-serial", "cpu", "gpu-mega", "gpu-wave", "cpu-wave"] {
            assert!(
                help.contains(&format!("{backend}:")),
                "{command} --help lacks {backend}:\n{help}"
            );
        }
        // `auto`'s help, as `render --help` gives it.
        assert!(
            !help.contains("when a GPU is usable"),
            "{command} --help offers auto:\n{help}"
        );
        // What is not offered is refused by the parser, naming what is.
        let flag = if command == "verify" { "--backend" } else { "--backends" };
        let run = wavepath().args([command, "s.toml", flag, "auto"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("invalid value 'auto'")
                && stderr.contains("[possible values: cpu-serial, cpu, gpu-mega, gpu-wave, cpu-wave]"),
            "{stderr}"
        );
    }
    // render still takes auto.
    let out = wavepath().args(["render", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("when a GPU is usable"));
}

#[test]
fn gpu_back_end_without_a_driver_is_a_clear_error_pointing_to_the_cpu() {
    // SAFETY: only probes whether libcuda can be opened.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        eprintln!("SKIPPED: a CUDA driver is present, so the no-driver error cannot be seen here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.png");
    let scene = repo("scenes/cornell_diffuse.toml");
    // Each points to its own way of running on the CPU.
    let runs = [
        (
            wavepath()
                .args(["render", "--backend", "gpu-mega", "--quiet", "--out"])
                .arg(&out)
                .arg(&scene)
                .output(),
            "--backend cpu",
        ),
        (
            wavepath().arg("verify").arg(&scene).output(),
            "verify compares a GPU back end with the CPU",
        ),
        (wavepath().arg("bench").arg(&scene).output(), "--backends cpu"),
    ];
    for (run, hint) in runs {
        let run = run.unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success());
        assert!(stderr.contains("no CUDA driver") && stderr.contains(hint), "{stderr}");
        assert_eq!(
            stderr.matches("--backend").count(),
            (hint != "verify compares a GPU back end with the CPU") as usize,
            "one hint, the command's own: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert!(!out.exists(), "a failed render leaves no image");
    let run = wavepath().arg("gpu-info").output().unwrap();
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stdout).contains("embedded PTX: sm_"));
}

#[test]
fn a_reader_that_stops_early_is_not_a_crash() {
    // `wavepath bench ... | head -1`: the summary's later lines meet a closed pipe.
    let mut child = wavepath()
        .args([
            "bench",
            "--backends",
            "cpu",
            "--size",
            "8x8",
            "--spp",
            "1",
            "--repeat",
            "3",
            "--warmup",
            "0",
        ])
        .arg(repo("scenes/cornell_diffuse.toml"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // close the read end before anything is written
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.status.success(), "{stderr}");
}

#[test]
fn the_version_names_the_commit() {
    let out = wavepath().arg("--version").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        text.starts_with(&format!("wavepath {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
}

#[test]
fn a_summary_that_cannot_be_printed_names_the_image_that_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("tiny.toml");
    std::fs::write(&scene, TINY).unwrap();
    let out = dir.path().join("tiny.png");
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let o = wavepath()
        .arg("render")
        .arg(&scene)
        .args(["--backend", "cpu", "--quiet", "--out"])
        .arg(&out)
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains("tiny.png was written, but printing the summary to standard output failed"),
        "{stderr}"
    );
    assert!(out.is_file());
}

#[test]
fn a_cpu_profile_measures_each_function_by_the_samples_it_was_on_the_stack_in_and_draws_a_flame_graph() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("profile.svg");
    let o = wavepath()
        .arg("render")
        .arg(repo("scenes/rtiow_final.toml"))
        .args([
            "--backend",
            "cpu-serial",
            "--size",
            "400x225",
            "--spp",
            "16",
            "--quiet",
            "--out",
        ])
        .arg(dir.path().join("r.png"))
        .arg("--profile")
        .arg(&svg)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("CPU profile:"))
        .skip(2)
        .take_while(|l| !l.starts_with("flame graph:"))
        .collect();
    let rows: Vec<(f64, &str)> = table
        .iter()
        .filter_map(|l| {
            let (share, name) = l.trim_start().split_once(char::is_whitespace)?;
            Some((share.parse().ok()?, name.trim()))
        })
        .collect();
    assert_eq!(rows.len(), table.len(), "every row a share and a name: {stdout}");
    assert!(
        rows.windows(2).all(|w| w[0].0 >= w[1].0),
        "most samples first: {stdout}"
    );
    let share = |name: &str| rows.iter().find(|r| r.1 == name).map_or(0.0, |r| r.0);
    // The render's outer, called frames hold every sample.
    for outer in ["device::integrator::render_pixel", "device::kernels::visit_accel"] {
        assert!(share(outer) > 90.0, "{outer}: {stdout}");
    }
    // The inlined frames are counted at each sample's own addresses: the
    // BVH traversal holds most samples, and the box tests inlined into it
    // a clearly smaller part of them (60 to 73 % and 22 to 29 % in five
    // runs of the release and test builds, of about 180 samples each).
    // Counted at one address per chain of called functions, every inlined
    // function at that address would get the same share, and the others
    // none.
    let (traversal, boxes) = (
        share("device::accel::bvh::search"),
        share("device::geometry::aabb::enter"),
    );
    assert!(traversal > 40.0, "the traversal: {stdout}");
    assert!(
        boxes > 10.0 && boxes < traversal - 20.0,
        "the box tests, a part of the traversal: {stdout}"
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(
        svg.contains("<svg") && svg.contains("render_pixel"),
        "a flame graph of the render"
    );
}

#[test]
fn a_cpu_profile_of_a_render_too_short_to_sample_is_refused_and_writes_no_flame_graph() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("p.svg");
    let o = wavepath()
        .arg("render")
        .arg(repo("scenes/cs500.toml"))
        .args(["--backend", "cpu", "--size", "16x12", "--spp", "1", "--quiet", "--out"])
        .arg(dir.path().join("r.png"))
        .arg("--profile")
        .arg(&svg)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: the profiled render was too short to measure",
            svg.display()
        )) && stderr.contains("of the 100 samples a profile needs"),
        "{stderr}"
    );
    assert!(!svg.exists(), "no flame graph of too few samples");
}

/// Renders `TINY` in `dir` at `spp` to `name`, which picks the format.
fn render_tiny(dir: &std::path::Path, name: &str, spp: u32) -> std::path::PathBuf {
    let scene = dir.join("tiny.toml");
    std::fs::write(&scene, TINY).unwrap();
    let out = dir.join(name);
    let run = wavepath()
        .arg("render")
        .arg(&scene)
        .args(["--backend", "cpu", "--quiet", "--spp", &spp.to_string(), "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    out
}

#[test]
fn compare_measures_an_image_against_a_reference_and_draws_the_flip_heat_map() {
    let dir = tempfile::tempdir().unwrap();
    // The same render as OpenEXR and as PFM: the same floats, no error.
    let exr = render_tiny(dir.path(), "a.exr", 4);
    let pfm = render_tiny(dir.path(), "a.pfm", 4);
    let same = wavepath().arg("compare").arg(&exr).arg(&pfm).output().unwrap();
    let text = String::from_utf8_lossy(&same.stdout);
    assert!(same.status.success(), "{}", String::from_utf8_lossy(&same.stderr));
    for metric in [
        "RMSE      0.000000e0",
        "relMSE    0.000000e0",
        "MAE       0.000000e0",
        "FLIP      0.000000",
    ] {
        assert!(text.contains(metric), "{text}");
    }
    // Fewer samples against more: some error, and a heat map of the size.
    let reference = render_tiny(dir.path(), "ref.exr", 64);
    let heat = dir.path().join("heat.png");
    let o = wavepath()
        .arg("compare")
        .arg(&exr)
        .arg(&reference)
        .arg("--heatmap")
        .arg(&heat)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rmse: f64 = String::from_utf8_lossy(&o.stdout)
        .lines()
        .find_map(|l| l.trim().strip_prefix("RMSE"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap();
    assert!(rmse > 0.0 && rmse < 1.0, "{rmse}");
    assert_eq!(image::open(&heat).unwrap().to_rgb8().dimensions(), (16, 8));

    // Different kinds and damaged files are refused by name.
    let png = render_tiny(dir.path(), "a.png", 4);
    let e = wavepath().arg("compare").arg(&png).arg(&exr).output().unwrap();
    let e = String::from_utf8_lossy(&e.stderr);
    assert!(
        e.contains("a.png holds 8-bit display values") && e.contains("compare like with like"),
        "{e}"
    );
    let bad = dir.path().join("bad.pfm");
    std::fs::write(&bad, "PF\n16 8\n-1.0\n").unwrap();
    let e = wavepath().arg("compare").arg(&bad).arg(&pfm).output().unwrap();
    assert!(!e.status.success());
    assert!(String::from_utf8_lossy(&e.stderr).contains("bad.pfm: not a colour PFM file"));
}

#[test]
fn the_help_names_every_image_format_each_path_takes() {
    let help = |command: &str| {
        let out = wavepath().args([command, "--help"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let (render, compare) = (help("render"), help("compare"));
    // Every format `--out` writes, linear ones included.
    for ext in [".png", ".ppm", ".bmp", ".pfm", ".exr"] {
        assert!(render.contains(ext), "render --help lacks {ext}:\n{render}");
        assert!(compare.contains(ext), "compare --help lacks {ext}:\n{compare}");
    }
}

/// Each back end's (sampler, nee, film hash) in the CSV of `wavepath bench
/// SCENE --backends cpu,cpu-wave` with `extra` arguments.
fn bench_films(scene: &std::path::Path, extra: &[&str]) -> Vec<(String, String, String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let csv_path = dir.path().join("b.csv");
    let run = wavepath()
        .arg("bench")
        .arg(scene)
        .args([
            "--backends",
            "cpu,cpu-wave",
            "--size",
            "12x8",
            "--spp",
            "4",
            "--repeat",
            "1",
        ])
        .args(["--warmup", "0", "--csv"])
        .arg(&csv_path)
        .args(extra)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let mut reader = csv::Reader::from_path(&csv_path).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (backend, sampler, nee, hash) = (column("backend"), column("sampler"), column("nee"), column("film_hash"));
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (
                r[backend].to_string(),
                r[sampler].to_string(),
                r[nee].to_string(),
                r[hash].to_string(),
            )
        })
        .collect()
}

#[test]
fn bench_renders_the_sampler_and_nee_it_is_given_and_records_them() {
    let plain_scene = repo("scenes/cornell_diffuse.toml");
    let dir = tempfile::tempdir().unwrap();
    // The same room, its file asking for Sobol points and NEE.
    let text = std::fs::read_to_string(&plain_scene).unwrap();
    let sobol_scene = dir.path().join("cornell_sobol_nee.toml");
    std::fs::write(
        &sobol_scene,
        text.replace("[render]\n", "[render]\nsampler = \"sobol\"\nnee = true\n"),
    )
    .unwrap();

    let plain = bench_films(&plain_scene, &[]);
    let sobol_nee = bench_films(&sobol_scene, &[]);
    assert_eq!(plain.len(), 2);
    for ((backend, sampler, nee, _), (_, sobol, on, _)) in plain.iter().zip(&sobol_nee) {
        assert_eq!((sampler.as_str(), nee.as_str()), ("hash", "off"), "{backend}");
        assert_eq!((sobol.as_str(), on.as_str()), ("sobol", "on"), "{backend}");
    }
    // The flags override the file's settings both ways: the rows say so,
    // and the films are those of the scene that asks for the same.
    let given = bench_films(&plain_scene, &["--sampler", "sobol", "--nee", "on"]);
    assert_eq!(given, sobol_nee);
    let taken_back = bench_films(&sobol_scene, &["--sampler", "hash", "--nee", "off"]);
    assert_eq!(taken_back, plain);
    assert_ne!(plain[0].3, sobol_nee[0].3, "Sobol points with NEE render another film");
}
