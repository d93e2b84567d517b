//! The profiling commands under good and bad input: `wavepath
//! profile-parts` (where a kernel's instructions go, by part of a path)
//! and `wavepath compare-seeds` (two renderers' images of two seeds each).
//! Each sums or compares inputs worked by hand; a bad input (missing, a
//! FIFO or a folder, not of the format, a figure it cannot read or divide
//! by) exits 1 with one line naming the file and what was expected, and
//! never blocks.

mod util;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `wavepath COMMAND` with `args`, stopped after 20 s so that a read
/// that waits fails the test instead of hanging it.
fn run(command: &str, args: &[&Path]) -> Output {
    Command::new("timeout")
        .arg("20")
        .arg(env!("CARGO_BIN_EXE_wavepath"))
        .arg(command)
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Asserts that `o` exited 1 with one line on stderr holding each of
/// `expected`.
fn refused(o: &Output, what: &str, expected: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{what}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: not one line:\n{err}");
    for e in expected {
        assert!(err.contains(e), "{what}: the message should name `{e}`:\n{err}");
    }
}

/// Makes a FIFO at `path`.
fn fifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// A disassembly with line information: two instructions of the camera,
/// one of a traversal, one of a helper (math/, no part of its own), then
/// the wavefront's: one of a queue kernel, one of the queues, one of the
/// prefix sum, and one of the core library (no part of its own).
const DISASSEMBLY: &str = r#"        //## File "/w/device/src/camera.rs", line 10
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
        //## File "/w/device/src/accel/bvh.rs", line 20
        /*0020*/                   ISETP.GE.AND P0, PT, R0, 0x1, PT ;
        //## File "/w/device/src/math/vec.rs", line 3
        /*0030*/                   FADD R2, R2, R3 ;
        //## File "/w/device/src/kernels/wave_kernels.rs", line 40
        /*0040*/                   LDG.E R4, [R2.64] ;
        //## File "/w/device/src/queue.rs", line 50
        /*0050*/                   ATOMG.E.ADD R5, [R2.64], R6 ;
        //## File "/w/device/src/kernels/scan.rs", line 60
        /*0060*/                   SHFL.UP R7, R8, 0x1, RZ ;
        //## File "/rustc/1a2b/library/core/src/ptr/mod.rs", line 70
        /*0070*/                   STG.E [R2.64], R7 ;
"#;

/// Nsight Compute's per-instruction counters of the same code, its
/// addresses from the kernel's load address.
const SASS: &str = "\"Address\",\"Source\",\"Instructions Executed\",\"Thread Instructions Executed\"\n\
\"0x7f0000\",\"MOV\",\"10\",\"320\"\n\
\"0x7f0010\",\"S2R\",\"10\",\"160\"\n\
\"0x7f0020\",\"ISETP\",\"20\",\"640\"\n\
\"0x7f0030\",\"FADD\",\"5\",\"80\"\n\
\"0x7f0040\",\"LDG\",\"40\",\"1280\"\n\
\"0x7f0050\",\"ATOMG\",\"2\",\"8\"\n\
\"0x7f0060\",\"SHFL\",\"4\",\"128\"\n\
\"0x7f0070\",\"STG\",\"4\",\"64\"\n";

/// A folder with `sass.csv` and `lines.txt` holding `sass` and
/// `disassembly`.
fn profile(sass: &str, disassembly: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (csv, lines) = (dir.path().join("sass.csv"), dir.path().join("lines.txt"));
    fs::write(&csv, sass).unwrap();
    fs::write(&lines, disassembly).unwrap();
    (dir, csv, lines)
}

#[test]
fn profile_parts_sums_each_module_with_helpers_given_to_the_part_before_them() {
    let (_dir, csv, lines) = profile(SASS, DISASSEMBLY);
    let o = run("profile-parts", &[&csv, &lines]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Of 95 warp instructions: the queue kernel's 40 (1280 lanes); the
    // traversal's own 20 (640 lanes) and the helper's 5 (80 lanes) after
    // it; the camera's 20 (480 lanes); the prefix sum's 4 (128 lanes) and
    // the core library's 4 (64 lanes) after it; the queues' 2 (8 lanes).
    assert_eq!(
        stdout(&o),
        "| part of a path | warp instructions (M) | share | active lanes |\n\
         |---|---|---|---|\n\
         | kernels::wave_kernels | 0.0 | 42.1 % | 32.0 |\n\
         | accel::bvh | 0.0 | 26.3 % | 28.8 |\n\
         | camera | 0.0 | 21.1 % | 24.0 |\n\
         | kernels::scan | 0.0 | 8.4 % | 24.0 |\n\
         | queue | 0.0 | 2.1 % | 4.0 |\n"
    );
    // At depth 1 the kernels' modules are one part (48 warp instructions
    // of 1472 lanes); the title line gives the totals, 2680 lanes over 95.
    let (_dir, csv, lines) = profile(SASS, DISASSEMBLY);
    let title = Path::new("--title=wave");
    let o = run("profile-parts", &[&csv, &lines, Path::new("--depth=1"), title]);
    let table = stdout(&o);
    for row in [
        "**wave**: 0.000 G warp instructions, 28.2 active lanes of 32\n\n",
        "| kernels | 0.0 | 50.5 % | 30.7 |\n",
        "| accel | 0.0 | 26.3 % | 28.8 |\n",
    ] {
        assert!(table.contains(row), "{row}\n{table}");
    }
    // An instruction the disassembly has no line for is counted to the
    // part before it, and said.
    let (_dir, csv, lines) = profile(&SASS.replace("0x7f0070", "0x7f0080"), DISASSEMBLY);
    let o = run("profile-parts", &[&csv, &lines]);
    assert!(
        stdout(&o).contains("| kernels::scan | 0.0 | 8.4 % | 24.0 |"),
        "{}",
        stdout(&o)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err, "(1 instructions had no line in the disassembly)\n");
}

#[test]
fn profile_parts_refuses_every_bad_input_in_one_line() {
    let no_thread = SASS.replace(",\"Thread Instructions Executed\"", ",\"Threads\"");
    let cases: Vec<(&str, String, &str, Vec<&str>)> = vec![
        (
            "no header",
            SASS.lines().skip(1).collect::<Vec<_>>().join("\n"),
            DISASSEMBLY,
            vec!["sass.csv: no header row starting with `Address`"],
        ),
        (
            "no thread counter",
            no_thread,
            DISASSEMBLY,
            vec!["sass.csv:1: no column Thread Instructions Executed"],
        ),
        (
            "a counter that is not a number",
            SASS.replace("\"20\",", "\"twenty\","),
            DISASSEMBLY,
            vec!["sass.csv:4: Instructions Executed is `twenty`", "whole number"],
        ),
        (
            "an address that is not hexadecimal",
            SASS.replace("0x7f0030", "0xZZ"),
            DISASSEMBLY,
            vec!["sass.csv:5: Address is `0xZZ`"],
        ),
        (
            "no instruction",
            SASS.lines().next().unwrap().to_string(),
            DISASSEMBLY,
            vec!["sass.csv: no instruction rows"],
        ),
        (
            "a disassembly without line information",
            SASS.to_string(),
            "        /*0000*/ MOV R1 ;\n",
            vec!["lines.txt: no line information"],
        ),
    ];
    for (what, sass, disassembly, expected) in cases {
        let (_dir, csv, lines) = profile(&sass, disassembly);
        refused(&run("profile-parts", &[&csv, &lines]), what, &expected);
    }
    for (what, file) in [
        ("counters in a FIFO", "sass.csv"),
        ("a disassembly in a FIFO", "lines.txt"),
    ] {
        let (dir, csv, lines) = profile(SASS, DISASSEMBLY);
        let path = dir.path().join(file);
        fs::remove_file(&path).unwrap();
        fifo(&path);
        refused(
            &run("profile-parts", &[&csv, &lines]),
            what,
            &[&format!("{file}: is a FIFO, not a regular file")],
        );
        fs::remove_file(&path).unwrap();
        refused(
            &run("profile-parts", &[&csv, &lines]),
            "a missing file",
            &[&format!("{file}: does not exist")],
        );
    }
}

/// A colour PFM of `width × height`, every channel of every pixel
/// `value`, bottom row first, little-endian.
fn pfm(width: usize, height: usize, value: f32) -> Vec<u8> {
    let mut bytes = format!("PF\n{width} {height}\n-1.0\n").into_bytes();
    for _ in 0..width * height * 3 {
        bytes.extend_from_slice(&value.to_le_bytes());
    }
    bytes
}

/// Writes A0, A1, B0 and B1 into a folder and compares them.
fn compare(images: [Vec<u8>; 4]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = ["a0.pfm", "a1.pfm", "b0.pfm", "b1.pfm"]
        .iter()
        .zip(images)
        .map(|(name, bytes)| {
            let path = dir.path().join(name);
            fs::write(&path, bytes).unwrap();
            path
        })
        .collect();
    let args: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    run("compare-seeds", &args)
}

/// The table's row `name`, or a failure naming the table.
fn row(o: &Output, name: &str) -> String {
    let table = stdout(o);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line = table.lines().find(|l| l.starts_with(name));
    line.unwrap_or_else(|| panic!("no row `{name}`:\n{table}")).to_string()
}

#[test]
fn compare_seeds_sets_the_difference_against_the_noise_of_two_seeds() {
    // A's seeds 0.5 and 0.75 (mean 0.625), B's 0.75 and 1 (0.875): 48
    // channels, each of variance (0.25 / 2)^2 per renderer, so a standard
    // error of sqrt(2 · 48 · 0.015625) / 48 = 0.02552: the difference of
    // 0.25 is 9.80 of them, and its RMS of 0.25 over the noise's,
    // sqrt(2 · 0.015625), is 1.414.
    let o = compare([pfm(4, 4, 0.5), pfm(4, 4, 0.75), pfm(4, 4, 0.75), pfm(4, 4, 1.0)]);
    let whole = row(&o, "whole image");
    let figures: Vec<&str> = whole.split_whitespace().collect();
    assert_eq!(
        figures[2..],
        ["16", "0.62500", "0.87500", "+40.00%", "+9.80", "1.414"],
        "{whole}"
    );
}

#[test]
fn compare_seeds_says_n_a_where_there_is_nothing_to_divide_by() {
    for (what, images, name, says) in [
        ("black images", [0.0, 0.0, 0.0, 0.0], "whole image", "n/a"),
        (
            "no noise: each seed's image the other's",
            [0.5, 0.5, 0.75, 0.75],
            "whole image",
            "n/a",
        ),
        (
            "every pixel bright",
            [2.0, 3.0, 2.0, 3.0],
            "without the light",
            "(no pixels)",
        ),
    ] {
        let o = compare(images.map(|v| pfm(4, 4, v)));
        let line = row(&o, name);
        assert!(line.contains(says), "{what}: {line}");
    }
}

#[test]
fn compare_seeds_refuses_every_bad_image_in_one_line() {
    let good = || pfm(4, 4, 0.5);
    let with = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut bytes = good();
        edit(&mut bytes);
        bytes
    };
    let header = |text: &str| {
        let mut bytes = text.as_bytes().to_vec();
        bytes.extend_from_slice(&good()[b"PF\n4 4\n-1.0\n".len()..]);
        bytes
    };
    let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        ("a PPM", b"P6\n4 4\n255\n".to_vec(), vec!["a0.pfm: not a colour PFM"]),
        ("an empty file", Vec::new(), vec!["a0.pfm: not a colour PFM"]),
        (
            "a size that is not two numbers",
            header("PF\n4 x\n-1.0\n"),
            vec!["a0.pfm: not a colour PFM file: height `x`"],
        ),
        (
            "a zero scale",
            header("PF\n4 4\n0\n"),
            vec!["a0.pfm: not a colour PFM file: scale `0`"],
        ),
        (
            "pixels cut short",
            with(&|b| b.truncate(b.len() - 4)),
            vec!["a0.pfm: not a colour PFM file: 188 bytes of pixels, expected 192"],
        ),
        (
            "bytes after the pixels",
            with(&|b| b.push(0)),
            vec!["a0.pfm: not a colour PFM file: 193 bytes of pixels, expected 192"],
        ),
        (
            "a pixel that is not finite",
            with(&|b| {
                let at = b.len() - 4;
                b[at..].copy_from_slice(&f32::NAN.to_le_bytes());
            }),
            vec!["a0.pfm: pixel (3, 0), counted from the top left, is not finite"],
        ),
        (
            "a header of more pixels than the file holds",
            b"PF\n2048 1024\n-1.0\n".to_vec(),
            vec!["a0.pfm: not a colour PFM file: 0 bytes of pixels, expected 25165824 for 2048x1024"],
        ),
    ];
    for (what, a0, expected) in cases {
        refused(&compare([a0, good(), good(), good()]), what, &expected);
    }
    refused(
        &compare([good(), good(), pfm(2, 8, 0.5), good()]),
        "images of two sizes",
        &["b0.pfm is 2x8 and", "a0.pfm 4x4; expected four images of one size"],
    );
    let dir = tempfile::tempdir().unwrap();
    let (a0, missing) = (dir.path().join("a0.pfm"), dir.path().join("missing.pfm"));
    fifo(&a0);
    refused(
        &run("compare-seeds", &[&a0, &a0, &a0, &a0]),
        "an image in a FIFO",
        &["a0.pfm: is a FIFO, not a regular file"],
    );
    refused(
        &run("compare-seeds", &[&missing, &missing, &missing, &missing]),
        "a missing image",
        &["missing.pfm: does not exist"],
    );
}
