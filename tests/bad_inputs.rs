//! The bad-input suite: every class of hostile or mistaken input found so
//! far, run through the `wavepath` binary. Each case must exit
//! non-zero without a panic, print a message naming the file and the field
//! or line at fault (or the flag), and leave no file behind: not an output,
//! not a `.wavepath-` temporary.

use std::path::Path;
use std::process::Command;

/// Something a case puts in its folder before it runs.
enum Entry {
    /// A file with this text.
    Text(&'static str),
    /// A file of this many bytes.
    Bytes(usize),
    /// A symbolic link to this path.
    Link(&'static str),
    /// A hard link to this file (listed before it).
    HardLink(&'static str),
    /// A file of these bytes.
    Binary(&'static [u8]),
    /// A 2×2 PNG image.
    Png,
    /// A folder.
    Folder,
    /// A named pipe (FIFO).
    Fifo,
}

/// One bad input.
struct Case {
    /// What is wrong.
    name: &'static str,
    /// Files in the case's folder (the working directory of the run).
    files: &'static [(&'static str, Entry)],
    /// Arguments after `wavepath`.
    args: &'static [&'static str],
    /// Text the error must contain (the file, the field or line, the reason).
    expect: &'static [&'static str],
    /// The case is about a missing GPU (skipped where one is present).
    needs_no_gpu: bool,
}

const fn case(
    name: &'static str,
    files: &'static [(&'static str, Entry)],
    args: &'static [&'static str],
    expect: &'static [&'static str],
) -> Case {
    Case {
        name,
        files,
        args,
        expect,
        needs_no_gpu: false,
    }
}

const fn without_gpu(mut c: Case) -> Case {
    c.needs_no_gpu = true;
    c
}

/// An image name of 300 bytes: more than a file system takes (255).
const LONG_NAME: &str = concat!(
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.png"
);

/// A valid scene; cases append to it or replace parts of it.
macro_rules! scene {
    ($($extra:literal),*) => {
        concat!(
            "[render]\nwidth = 8\nheight = 8\nspp = 1\nmax_depth = 2\n\n",
            "[camera]\nlook_from = [0.0, 0.0, 5.0]\nlook_at = [0.0, 0.0, 0.0]\nvfov = 40.0\n\n",
            "[materials.white]\nkind = \"diffuse\"\nalbedo = [0.5, 0.5, 0.5]\n\n",
            $($extra,)*
        )
    };
}

/// A scene whose render settings are given, with one sphere.
macro_rules! settings {
    ($render:literal) => {
        concat!(
            $render,
            "\n[camera]\nlook_from = [0.0, 0.0, 5.0]\nlook_at = [0.0, 0.0, 0.0]\nvfov = 40.0\n",
            "[materials.white]\nkind = \"diffuse\"\nalbedo = [0.5, 0.5, 0.5]\n",
            "[[objects]]\nkind = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 1.0\nmaterial = \"white\"\n"
        )
    };
}

/// A scene whose camera is given, with one sphere.
macro_rules! camera {
    ($camera:literal) => {
        concat!(
            "[render]\nwidth = 8\nheight = 8\nspp = 1\nmax_depth = 2\n",
            $camera,
            "\n[materials.white]\nkind = \"diffuse\"\nalbedo = [0.5, 0.5, 0.5]\n",
            "[[objects]]\nkind = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 1.0\nmaterial = \"white\"\n"
        )
    };
}

const SPHERE: &str = "[[objects]]\nkind = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 1.0\nmaterial = \"white\"\n";
const OK: &str =
    scene!("[[objects]]\nkind = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 1.0\nmaterial = \"white\"\n");
const TRI: &str = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
const MESH: &str = scene!("[[objects]]\nkind = \"mesh\"\nfile = \"m.obj\"\nmaterial = \"white\"\n");
/// A sphere whose albedo is the image `t.png`.
const TEXTURED: &str = scene!(
    "[textures.t]\nkind = \"image\"\nfile = \"t.png\"\n\n",
    "[materials.tex]\nkind = \"diffuse\"\nalbedo = \"t\"\n\n",
    "[[objects]]\nkind = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 1.0\nmaterial = \"tex\"\n"
);

/// A 1×1 PFM (little-endian) of grey 0.5.
const PFM: &[u8] = b"PF\n1 1\n-1.0\n\0\0\0\x3f\0\0\0\x3f\0\0\0\x3f";
/// A 1×1 PFM whose red channel is NaN.
const PFM_NAN: &[u8] = b"PF\n1 1\n-1.0\n\0\0\xc0\x7f\0\0\0\x3f\0\0\0\x3f";
/// A 1×1 PFM whose scale is 0 (neither byte order).
const PFM_SCALE_0: &[u8] = b"PF\n1 1\n0\n\0\0\0\x3f\0\0\0\x3f\0\0\0\x3f";
/// A 1×1 PFM whose scale is NaN.
const PFM_SCALE_NAN: &[u8] = b"PF\n1 1\nnan\n\0\0\0\x3f\0\0\0\x3f\0\0\0\x3f";
/// The header of a 32768×32768 PFM, without its 12 GiB of pixels.
const PFM_HUGE_HEADER: &[u8] = b"PF\n32768 32768\n-1.0\n";

/// An experiment config with one study over the given `fixed` table.
macro_rules! config {
    ($fixed:literal) => {
        concat!(
            "[experiment]\nname = \"bad\"\ndescription = \"a bad config\"\n\n",
            "[[study]]\nname = \"s\"\nscenes = [\"ok.toml\"]\nbackends = [\"cpu\"]\n",
            $fixed,
            "\n"
        )
    };
}

#[rustfmt::skip]
const CASES: &[Case] = &[
    // 1. Outputs: special files, links to them, inputs.
    case("output is a link to a device", &[("s.toml", Entry::Text(OK)), ("dev.png", Entry::Link("/dev/full"))],
        &["render", "s.toml", "--backend", "cpu", "--out", "dev.png"], &["dev.png (a link to /dev/full)", "is a device"]),
    case("output is a folder", &[("s.toml", Entry::Text(OK)), ("x.png", Entry::Folder)],
        &["render", "s.toml", "--backend", "cpu", "--out", "x.png"], &["x.png", "is a folder"]),
    case("output is a FIFO", &[("s.toml", Entry::Text(OK)), ("f.png", Entry::Fifo)],
        &["render", "s.toml", "--backend", "cpu", "--out", "f.png"], &["f.png", "is a FIFO"]),
    case("output is the scene file", &[("s.png", Entry::Text(OK))],
        &["render", "s.png", "--backend", "cpu", "--out", "s.png"], &["s.png", "also an input"]),
    case("output is the scene's mesh", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"mesh\"\nfile = \"m.ppm\"\nmaterial = \"white\"\n"))), ("m.ppm", Entry::Text(TRI))],
        &["render", "s.toml", "--backend", "cpu", "--out", "m.ppm"], &["m.ppm", "also an input"]),
    case("output is a link to the scene", &[("s.png", Entry::Text(OK)), ("l.png", Entry::Link("s.png"))],
        &["render", "s.png", "--backend", "cpu", "--out", "l.png"], &["l.png (a link to", "also an input"]),
    case("launch log is the image", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "gpu-mega", "--out", "a.png", "--launch-log", "a.png"], &["a.png", "both the image and the launch log"]),
    case("bench CSV is the scene", &[("s.toml", Entry::Text(OK))],
        &["bench", "s.toml", "--backends", "cpu", "--csv", "s.toml"], &["s.toml", "also an input"]),
    case("bench CSV is the scene's mesh", &[("s.toml", Entry::Text(MESH)), ("m.obj", Entry::Text(TRI))],
        &["bench", "s.toml", "--backends", "cpu", "--csv", "m.obj"], &["m.obj", "also an input"]),
    case("bench launch log is the scene's texture", &[("s.toml", Entry::Text(TEXTURED)), ("t.png", Entry::Png)],
        &["bench", "s.toml", "--backends", "cpu,gpu-mega", "--launch-log", "t.png"], &["t.png", "also an input"]),
    case("flame graph is the scene's texture", &[("s.toml", Entry::Text(TEXTURED)), ("t.png", Entry::Png)],
        &["render", "s.toml", "--backend", "cpu", "--profile", "t.png"], &["t.png", "also an input"]),
    case("flame graph is the scene's mesh", &[("s.toml", Entry::Text(MESH)), ("m.obj", Entry::Text(TRI))],
        &["render", "s.toml", "--backend", "cpu", "--profile", "m.obj"], &["m.obj", "also an input"]),
    case("experiment manifest is a link to a study's mesh", &[("ok.toml", Entry::Text(MESH)), ("m.obj", Entry::Text(TRI)), ("e.toml", Entry::Text(config!(""))), ("o", Entry::Folder), ("o/manifest.toml", Entry::Link("../m.obj"))],
        &["experiment", "e.toml", "--out", "o"], &["o/manifest.toml (a link to", "m.obj", "also an input"]),
    case("experiment records are a link to a study's texture", &[("ok.toml", Entry::Text(TEXTURED)), ("t.png", Entry::Png), ("e.toml", Entry::Text(config!(""))), ("o", Entry::Folder), ("o/kernels.csv", Entry::Link("../t.png"))],
        &["experiment", "e.toml", "--out", "o"], &["o/kernels.csv (a link to", "also an input"]),
    case("heat map is the image under test", &[("a.pfm", Entry::Binary(PFM)), ("b.pfm", Entry::Binary(PFM))],
        &["compare", "a.pfm", "b.pfm", "--heatmap", "./a.pfm"], &["./a.pfm", "also an input"]),
    case("image and flame graph are one file", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu", "--out", "same.png", "--profile", "same.png"], &["same.png", "both the image and the flame graph"]),
    case("flame graph is the image spelled another way", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu", "--out", "same.png", "--profile", "./same.png"], &["./same.png", "same.png", "both the image and the flame graph"]),
    case("flame graph is a link to the image yet to be written", &[("s.toml", Entry::Text(OK)), ("l.svg", Entry::Link("new.png"))],
        &["render", "s.toml", "--backend", "cpu", "--out", "new.png", "--profile", "l.svg"], &["l.svg (a link to", "both the image and the flame graph"]),
    case("flame graph is a hard link to the image", &[("s.toml", Entry::Text(OK)), ("a.png", Entry::Text("old")), ("b.svg", Entry::HardLink("a.png"))],
        &["render", "s.toml", "--backend", "cpu", "--out", "a.png", "--profile", "b.svg"], &["b.svg", "a.png", "both the image and the flame graph"]),
    case("bench CSV and launch log are one file", &[("s.toml", Entry::Text(OK))],
        &["bench", "s.toml", "--backends", "cpu,gpu-mega", "--csv", "b.csv", "--launch-log", "b.csv"], &["b.csv", "both the bench CSV and the launch log"]),
    case("experiment records are links to one file", &[("ok.toml", Entry::Text(OK)), ("e.toml", Entry::Text(config!(""))), ("o", Entry::Folder), ("o/runs.csv", Entry::Link("x.csv")), ("o/kernels.csv", Entry::Link("x.csv"))],
        &["experiment", "e.toml", "--out", "o"], &["o/kernels.csv (a link to", "o/runs.csv", "both"]),
    case("bench CSV is a device", &[("s.toml", Entry::Text(OK))],
        &["bench", "s.toml", "--backends", "cpu", "--csv", "/dev/null"], &["/dev/null", "is a device"]),
    case("gen-mesh into a device", &[],
        &["gen-mesh", "--subdivisions", "1", "--out", "/dev/full"], &["/dev/full", "is a device"]),
    case("gen-mesh into a FIFO", &[("f.obj", Entry::Fifo)],
        &["gen-mesh", "--subdivisions", "1", "--out", "f.obj"], &["f.obj", "is a FIFO"]),
    case("unknown image format", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--out", "x.jpg"], &["x.jpg", ".png"]),

    // 2. Sizes, counts and threads past their limits.
    case("raycast count beyond the limit", &[("s.toml", Entry::Text(OK))],
        &["raycast", "s.toml", "--count", "100000000000"], &["--count", "1..=67108864"]),
    case("raycast count zero", &[("s.toml", Entry::Text(OK))],
        &["raycast", "s.toml", "--count", "0"], &["--count"]),
    case("raycast block too large", &[("s.toml", Entry::Text(OK))],
        &["raycast", "s.toml", "--blocks", "64,4096"], &["--blocks", "4096"]),
    case("image side beyond the limit", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--size", "40000x10"], &["--size", "1 to 32768"]),
    case("image side zero", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--size", "0x10"], &["--size"]),
    case("threads beyond the limit", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--threads", "20000"], &["--threads", "from 0 to 1024"]),
    case("bench threads beyond the limit", &[("s.toml", Entry::Text(OK))],
        &["bench", "s.toml", "--backends", "cpu", "--threads", "5000"], &["--threads", "at most 1024"]),
    case("spp beyond the film's exact limit", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--spp", "268435456"], &["--spp", "268435455"]),
    case("depth beyond the limit", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--depth", "70000"], &["--depth", "65536"]),
    case("scene spp beyond the limit", &[("s.toml", Entry::Text(settings!("[render]\nwidth = 8\nheight = 8\nspp = 4294967295\nmax_depth = 2\n")))],
        &["render", "s.toml"], &["s.toml:4: [render], field `spp`", "268435455"]),
    case("scene depth beyond the limit", &[("s.toml", Entry::Text(settings!("[render]\nwidth = 8\nheight = 8\nspp = 1\nmax_depth = 100000\n")))],
        &["render", "s.toml"], &["s.toml:5: [render], field `max_depth`", "65536"]),
    case("scene width beyond the limit", &[("s.toml", Entry::Text(settings!("[render]\nwidth = 40000\nheight = 8\nspp = 1\nmax_depth = 2\n")))],
        &["render", "s.toml"], &["s.toml:2: [render], field `width`", "32768"]),
    case("scene file beyond the size limit", &[("s.toml", Entry::Bytes((16 << 20) + 1))],
        &["render", "s.toml"], &["s.toml", "the limit is 16777216 bytes"]),
    case("scene file is a folder", &[("s.toml", Entry::Folder)],
        &["render", "s.toml"], &["s.toml", "is a folder"]),
    case("scene file is a FIFO", &[("s.toml", Entry::Fifo)],
        &["render", "s.toml"], &["s.toml", "is a FIFO"]),
    case("scene file is a device", &[],
        &["render", "/dev/zero", "--out", "z.png"], &["/dev/zero", "is a device"]),
    case("kernel feature that is no feature", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu-wave", "--kernels", "exact+sparkles"], &["`sparkles`", "the features are", "nee", "triangle"]),
    case("experiment kernels named by an earlier build", &[("ok.toml", Entry::Text(OK)), ("e.toml", Entry::Text(concat!(
            "[experiment]\nname = \"bad\"\ndescription = \"a bad config\"\n\n",
            "[[study]]\nname = \"s\"\nscenes = [\"ok.toml\"]\nbackends = [\"cpu-wave\"]\nfixed = { kernels = \"lean\" }\n")))],
        &["experiment", "e.toml", "--out", "o"], &["e.toml:9:", "`kernels`", "`lean` is not a kernel feature set", "`exact`"]),
    case("experiment repeat beyond the limit", &[("ok.toml", Entry::Text(OK)), ("e.toml", Entry::Text(config!("repeat = 1000000")))],
        &["experiment", "e.toml", "--out", "o"], &["e.toml:9:", "field `repeat`", "1 to 1000"]),
    case("bench warm-up beyond the limit", &[("s.toml", Entry::Text(OK))],
        &["bench", "s.toml", "--backends", "cpu", "--warmup", "1000"], &["--warmup", "0..=100"]),
    case("pool capacity beyond the limit", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--capacity", "2^29"], &["--capacity"]),
    case("experiment spp beyond the limit", &[("ok.toml", Entry::Text(OK)), ("e.toml", Entry::Text(config!("fixed = { spp = 4294967295 }")))],
        &["experiment", "e.toml", "--out", "o"], &["e.toml:", "spp", "268435455"]),
    case("experiment threads beyond the limit", &[("ok.toml", Entry::Text(OK)), ("e.toml", Entry::Text(config!("fixed = { threads = 5000 }")))],
        &["experiment", "e.toml", "--out", "o"], &["e.toml:", "threads", "1024"]),

    // 3. Geometry that leaves f32's useful range, after transforms.
    case("mesh scaled past the limit", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"mesh\"\nfile = \"m.obj\"\nmaterial = \"white\"\ntransform = { scale = 1e30 }\n"))), ("m.obj", Entry::Text(TRI))],
        &["render", "s.toml", "--accel", "kdtree"], &["s.toml:20: objects[0] (mesh), field `transform`", "±1e9"]),
    case("mesh moved past the limit", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"mesh\"\nfile = \"m.obj\"\nmaterial = \"white\"\ntransform = { translate = [1e12, 0, 0] }\n"))), ("m.obj", Entry::Text(TRI))],
        &["render", "s.toml"], &["s.toml:20: objects[0] (mesh), field `transform.translate`", "±1e9"]),
    case("mesh vertex past the limit", &[("s.toml", Entry::Text(MESH)), ("m.obj", Entry::Text("v 0 0 0\nv 1e30 0 0\nv 0 1 0\nf 1 2 3\n"))],
        &["render", "s.toml"], &["s.toml:16: objects[0] (mesh)", "±1e9"]),
    case("sphere centre past the limit", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"sphere\"\ncenter = [1e10, 0, 0]\nradius = 1.0\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:18: objects[0] (sphere), field `center`", "±1e9"]),
    case("sphere radius past the limit", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"sphere\"\ncenter = [0, 0, 0]\nradius = 1e20\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:19: objects[0] (sphere), field `radius`", "at most 1e9"]),
    case("polygon vertex past the limit", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"polygon\"\nvertices = [[0, 0, 0], [1e20, 0, 0], [0, 1, 0]]\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:18: objects[0] (polygon), field `vertices`", "±1e9"]),
    case("box edge past the limit", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"box\"\ncorner = [0, 0, 0]\nedges = [[1e20, 0, 0], [0, 1, 0], [0, 0, 1]]\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:19: objects[0] (box), field `edges`", "±1e9"]),
    case("generated sphere past the limit", &[("s.toml", Entry::Text(scene!("[[generators]]\nkind = \"displaced_sphere\"\nsubdivisions = 1\ncenter = [9e8, 0, 0]\nradius = 5e8\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:", "generators[0] (displaced_sphere), field `center`", "±1e9"]),
    case("camera at 3e38", &[("s.toml", Entry::Text(camera!("[camera]\nlook_from = [0.0, 0.0, 3e38]\nlook_at = [0.0, 0.0, 0.0]\nvfov = 40.0\n")))],
        &["render", "s.toml"], &["s.toml:7: [camera], field `look_from`", "±1e9"]),
    case("triangle vertex infinite", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"triangle\"\nvertices = [[0, 0, 0], [inf, 0, 0], [0, 1, 0]]\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:18: objects[0] (triangle), field `vertices`", "finite"]),

    // 4. What can be checked before the work is checked first.
    case("missing output folder", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu", "--out", "no/x.png"], &["no/x.png", "folder no does not exist"]),
    case("bench CSV in a missing folder", &[("s.toml", Entry::Text(OK))],
        &["bench", "s.toml", "--backends", "cpu", "--csv", "no/b.csv"], &["no/b.csv", "folder no does not exist"]),
    case("bench launch log in a missing folder", &[("s.toml", Entry::Text(OK))],
        &["bench", "s.toml", "--backends", "cpu,gpu-mega", "--launch-log", "no/l.csv"], &["no/l.csv", "does not exist"]),
    case("launch log with the CPU back end", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu", "--launch-log", "l.csv"], &["--launch-log", "applies to the gpu-mega and gpu-wave back ends", "the cpu back end would ignore it"]),
    without_gpu(case("bench GPU without a GPU", &[("s.toml", Entry::Text(OK))],
        &["bench", "s.toml", "--backends", "cpu,gpu-mega", "--csv", "b.csv"], &["GPU", "--backends cpu"])),
    without_gpu(case("render GPU without a GPU", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "gpu-wave"], &["gpu-wave", "--backend cpu"])),
    without_gpu(case("raycast without a GPU", &[("s.toml", Entry::Text(OK))],
        &["raycast", "s.toml", "--csv", "r.csv"], &["raycast", "needs a GPU"])),
    case("devices listed twice", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--devices", "0,1,0"], &["--devices", "GPU ordinals", "device 0 is listed twice"]),
    case("devices empty", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--devices", ""], &["--devices", "GPU ordinals", "got nothing"]),
    case("devices not a number", &[("s.toml", Entry::Text(OK))],
        &["verify", "s.toml", "--devices", "0,gpu1"], &["--devices", "`gpu1` is not a GPU ordinal"]),
    case("experiment devices listed twice", &[],
        &["experiment", "e.toml", "--devices", "1,1"], &["--devices", "device 1 is listed twice"]),
    case("devices with the CPU back end", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu", "--devices", "0"], &["--devices", "applies to the gpu-mega and gpu-wave back ends", "the cpu back end would ignore it"]),
    case("split-all without devices", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "gpu-wave", "--split-all"], &["--split-all applies to a render split over --devices", "add --devices"]),
    case("verify split-all without devices", &[("s.toml", Entry::Text(OK))],
        &["verify", "s.toml", "--split-all"], &["--split-all applies to a render split over --devices"]),
    case("split-all with the CPU back end", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu", "--devices", "0", "--split-all"], &["--split-all applies to the gpu-mega and gpu-wave back ends", "the cpu back end would ignore it"]),
    without_gpu(case("devices without a GPU", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "gpu-wave", "--devices", "all"], &["--devices picks GPUs for the gpu-wave back end", "--backend cpu", "no CUDA driver"])),
    without_gpu(case("verify on devices without a GPU", &[("s.toml", Entry::Text(OK))],
        &["verify", "s.toml", "--devices", "0,1"], &["--devices picks GPUs for the gpu-mega back end"])),
    without_gpu(case("verify without a GPU", &[("s.toml", Entry::Text(OK))],
        &["verify", "s.toml"], &["verify compares a GPU back end with the CPU", "gpu-mega back end needs a GPU"])),
    case("experiment output is a file", &[("ok.toml", Entry::Text(OK)), ("e.toml", Entry::Text(config!(""))), ("o", Entry::Text("x"))],
        &["experiment", "e.toml", "--out", "o"], &["o: is not a folder"]),

    // 5. Error positions and messages.
    case("bad type in the third object", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"sphere\"\ncenter = [0, 0, 0]\nradius = 1.0\nmaterial = \"white\"\n",
        "[[objects]]\nkind = \"sphere\"\ncenter = [0, 2, 0]\nradius = 1.0\nmaterial = \"white\"\n",
        "[[objects]]\nkind = \"sphere\"\ncenter = [0, 4, 0]\nradius = \"big\"\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:29:10: objects[2] (sphere), field `radius`", "expected f32"]),
    case("unknown key in smallpt_cornell", &[("s.toml", Entry::Text(scene!("[[generators]]\nkind = \"smallpt_cornell\"\nsize = 2\n")))],
        &["render", "s.toml"], &["s.toml:18:1: generators[0] (smallpt_cornell), field `size`", "unknown field `size`, there are no fields"]),
    case("mesh file is a folder", &[("s.toml", Entry::Text(MESH)), ("m.obj", Entry::Folder)],
        &["render", "s.toml"], &["s.toml:18: objects[0] (mesh), field `file`", "m.obj is a folder"]),
    case("mesh file is missing", &[("s.toml", Entry::Text(MESH))],
        &["render", "s.toml"], &["s.toml:18: objects[0] (mesh), field `file`", "m.obj does not exist"]),
    case("scene file is missing", &[],
        &["render", "none.toml"], &["none.toml: does not exist"]),
    case("unknown material", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"sphere\"\ncenter = [0, 0, 0]\nradius = 1.0\nmaterial = \"gold\"\n")))],
        &["render", "s.toml"], &["s.toml:20: objects[0] (sphere), field `material`", "unknown material `gold`"]),
    case("unknown object kind", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"cone\"\nradius = 1.0\n")))],
        &["render", "s.toml"], &["s.toml:17:8: objects[0] (cone), field `kind`", "unknown variant"]),
    case("missing radius", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"sphere\"\ncenter = [0, 0, 0]\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:16:1: objects[0] (sphere), field `radius`", "missing field"]),
    case("TOML syntax error", &[("s.toml", Entry::Text(scene!("[[objects]\nkind = \"sphere\"\n")))],
        &["render", "s.toml"], &["s.toml:16:"]),
    case("render table twice", &[("s.toml", Entry::Text(scene!("[render]\nwidth = 8\n")))],
        &["render", "s.toml"], &["s.toml:16:"]),
    case("width of the wrong type", &[("s.toml", Entry::Text(settings!("[render]\nwidth = \"wide\"\nheight = 8\nspp = 1\nmax_depth = 2\n")))],
        &["render", "s.toml"], &["s.toml:2:", "invalid type"]),
    case("negative albedo", &[("s.toml", Entry::Text("[render]\nwidth = 8\nheight = 8\nspp = 1\nmax_depth = 2\n[camera]\nlook_from = [0.0, 0.0, 5.0]\nlook_at = [0.0, 0.0, 0.0]\nvfov = 40.0\n[materials.white]\nkind = \"diffuse\"\nalbedo = [-0.5, 0.5, 0.5]\n"))],
        &["render", "s.toml"], &["s.toml:12: [materials.white], field `albedo`"]),
    case("NaN emission", &[("s.toml", Entry::Text("[render]\nwidth = 8\nheight = 8\nspp = 1\nmax_depth = 2\n[camera]\nlook_from = [0.0, 0.0, 5.0]\nlook_at = [0.0, 0.0, 0.0]\nvfov = 40.0\n[materials.white]\nkind = \"emissive\"\nemission = [nan, 1, 1]\n"))],
        &["render", "s.toml"], &["s.toml:12: [materials.white], field `emission`", "finite"]),
    case("polygon not convex", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"polygon\"\nvertices = [[0, 0, 0], [2, 0, 0], [0.5, 0.5, 0], [0, 2, 0]]\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:18: objects[0] (polygon), field `vertices`", "not convex"]),
    case("polygon with two vertices", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"polygon\"\nvertices = [[0, 0, 0], [2, 0, 0]]\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:18: objects[0] (polygon), field `vertices`", "at least 3"]),
    case("flat box", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"box\"\ncorner = [0, 0, 0]\nedges = [[1, 0, 0], [0, 1, 0], [1, 1, 0]]\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:19: objects[0] (box), field `edges`", "span a volume"]),
    case("triangle without area", &[("s.toml", Entry::Text(scene!("[[objects]]\nkind = \"triangle\"\nvertices = [[0, 0, 0], [1, 1, 1], [2, 2, 2]]\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:18: objects[0] (triangle), field `vertices`", "no area"]),
    case("field of view of 180 degrees", &[("s.toml", Entry::Text(camera!("[camera]\nlook_from = [0.0, 0.0, 5.0]\nlook_at = [0.0, 0.0, 0.0]\nvfov = 180.0\n")))],
        &["render", "s.toml"], &["s.toml:9: [camera], field `vfov`"]),
    case("up along the view", &[("s.toml", Entry::Text(camera!("[camera]\nlook_from = [0.0, 0.0, 5.0]\nlook_at = [0.0, 0.0, 0.0]\nup = [0.0, 0.0, 1.0]\nvfov = 40.0\n")))],
        &["render", "s.toml"], &["s.toml:9: [camera], field `up`", "parallel"]),
    case("camera looking at itself", &[("s.toml", Entry::Text(camera!("[camera]\nlook_from = [1.0, 2.0, 3.0]\nlook_at = [1.0, 2.0, 3.0]\nvfov = 40.0\n")))],
        &["render", "s.toml"], &["s.toml:8: [camera], field `look_at`", "must differ"]),
    case("BVH with one bin", &[("s.toml", Entry::Text(scene!("[accel]\nbvh_bins = 1\n", "[[objects]]\nkind = \"sphere\"\ncenter = [0, 0, 0]\nradius = 1.0\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:17: [accel], field `bvh_bins`", "between 2 and 256"]),
    case("unknown structure", &[("s.toml", Entry::Text(scene!("[accel]\nkind = \"octree\"\n")))],
        &["render", "s.toml"], &["s.toml:17:", "octree"]),
    case("kd-tree of depth zero", &[("s.toml", Entry::Text(scene!("[accel]\nkd_max_depth = 0\n", "[[objects]]\nkind = \"sphere\"\ncenter = [0, 0, 0]\nradius = 1.0\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:17: [accel], field `kd_max_depth`"]),
    case("scene without objects", &[("s.toml", Entry::Text(scene!()))],
        &["render", "s.toml"], &["s.toml", "no objects"]),
    case("RTIOW grid too large", &[("s.toml", Entry::Text(scene!("[[generators]]\nkind = \"rtiow_final\"\ngrid = 1000\n")))],
        &["render", "s.toml"], &["s.toml:18: generators[0] (rtiow_final), field `grid`", "between 1 and 200"]),
    case("too many subdivisions", &[("s.toml", Entry::Text(scene!("[[generators]]\nkind = \"displaced_sphere\"\nsubdivisions = 99\ncenter = [0, 0, 0]\nradius = 1.0\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:18: generators[0] (displaced_sphere), field `subdivisions`"]),
    case("amplitude too large", &[("s.toml", Entry::Text(scene!("[[generators]]\nkind = \"displaced_sphere\"\nsubdivisions = 1\namplitude = 0.7\ncenter = [0, 0, 0]\nradius = 1.0\nmaterial = \"white\"\n")))],
        &["render", "s.toml"], &["s.toml:19: generators[0] (displaced_sphere), field `amplitude`"]),
    case("OBJ face past the vertices", &[("s.toml", Entry::Text(MESH)), ("m.obj", Entry::Text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n"))],
        &["render", "s.toml"], &["s.toml:18: objects[0] (mesh), field `file`", "m.obj"]),
    case("OBJ NaN vertex", &[("s.toml", Entry::Text(MESH)), ("m.obj", Entry::Text("v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n"))],
        &["render", "s.toml"], &["s.toml:18: objects[0] (mesh), field `file`", "non-finite"]),
    case("OBJ without faces", &[("s.toml", Entry::Text(MESH)), ("m.obj", Entry::Text("v 0 0 0\nv 1 0 0\n"))],
        &["render", "s.toml"], &["s.toml:18: objects[0] (mesh), field `file`", "no triangles"]),
    case("experiment config missing", &[],
        &["experiment", "none.toml"], &["none.toml: does not exist"]),
    case("experiment config unknown key", &[("ok.toml", Entry::Text(OK)), ("e.toml", Entry::Text(config!("colour = 3")))],
        &["experiment", "e.toml", "--out", "o"], &["e.toml:9", "colour"]),
    case("experiment scene missing", &[("e.toml", Entry::Text(config!("")))],
        &["experiment", "e.toml", "--out", "o"], &["ok.toml"]),
    case("gen-mesh amplitude", &[],
        &["gen-mesh", "--subdivisions", "1", "--amplitude", "0.7", "--out", "m.obj"], &["--amplitude", "0.7"]),
    case("gen-mesh subdivisions", &[],
        &["gen-mesh", "--subdivisions", "11", "--out", "m.obj"], &["--subdivisions", "11"]),
    case("refill beyond one", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--refill", "2"], &["--refill", "fraction"]),
    case("block of 2048 threads", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--block", "64x32"], &["1 to 1024 threads"]),
    case("register cap of 300", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--max-registers", "300"], &["300"]),
    case("report of a missing folder", &[],
        &["report", "none"], &["none/manifest.toml", "cannot read"]),
    case("camera near distance below zero", &[("s.toml", Entry::Text(camera!("[camera]\nlook_from = [0.0, 0.0, 5.0]\nlook_at = [0.0, 0.0, 0.0]\nvfov = 40.0\nnear = -1.0\n")))],
        &["render", "s.toml", "--backend", "cpu"], &["s.toml:", "[camera], field `near`", "must not be negative"]),
    case("glass tint above one", &[("s.toml", Entry::Text(scene!("[materials.glass]\nkind = \"dielectric\"\nior = 1.5\ntint = [1.0, 2.0, 1.0]\n\n[[objects]]\nkind = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 1.0\nmaterial = \"glass\"\n")))],
        &["render", "s.toml", "--backend", "cpu"], &["s.toml:", "field `tint`"]),
    case("a CPU profile of a GPU back end", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "gpu-mega", "--profile", "p.svg"], &["--profile applies to the cpu-serial, cpu and cpu-wave back ends", "the gpu-mega back end would ignore it"]),
    case("verify at a size that does not fit", &[("s.toml", Entry::Text(OK))],
        &["verify", "s.toml", "--backend", "cpu-wave", "--size", "32768x32768"], &["2 renders of 32768x32768 needs", "host memory"]),
    case("output name too long for the file system", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu", "--out", LONG_NAME], &["is too long for the file system"]),
    case("verify with auto", &[("s.toml", Entry::Text(OK))],
        &["verify", "s.toml", "--backend", "auto"], &["invalid value 'auto'", "possible values: cpu-serial, cpu, gpu-mega, gpu-wave, cpu-wave"]),

    // 6. Images read back: the file named in every error, the sizes compared
    // from the headers, and no pixel that is not finite.
    case("compare of a missing image", &[("b.pfm", Entry::Binary(PFM))],
        &["compare", "missing.pfm", "b.pfm"], &["missing.pfm: does not exist"]),
    case("compare with a missing reference", &[("a.pfm", Entry::Binary(PFM))],
        &["compare", "a.pfm", "gone.pfm"], &["gone.pfm: does not exist"]),
    case("compare of a PFM with a NaN pixel", &[("a.pfm", Entry::Binary(PFM_NAN)), ("b.pfm", Entry::Binary(PFM))],
        &["compare", "a.pfm", "b.pfm"], &["a.pfm", "pixel (0, 0)", "not finite"]),
    case("compare against a reference with a NaN pixel", &[("a.pfm", Entry::Binary(PFM)), ("b.pfm", Entry::Binary(PFM_NAN))],
        &["compare", "a.pfm", "b.pfm"], &["b.pfm", "pixel (0, 0)", "not finite"]),
    case("PFM scale of zero", &[("a.pfm", Entry::Binary(PFM_SCALE_0)), ("b.pfm", Entry::Binary(PFM))],
        &["compare", "a.pfm", "b.pfm"], &["a.pfm", "scale `0`", "non-zero"]),
    case("PFM scale of NaN", &[("a.pfm", Entry::Binary(PFM)), ("b.pfm", Entry::Binary(PFM_SCALE_NAN))],
        &["compare", "a.pfm", "b.pfm"], &["b.pfm", "scale `nan`", "non-zero"]),
    case("compare sizes from the headers", &[("a.pfm", Entry::Binary(PFM)), ("big.pfm", Entry::Binary(PFM_HUGE_HEADER))],
        &["compare", "a.pfm", "big.pfm"], &["a.pfm is 1x1", "big.pfm is 32768x32768"]),

    // 7. Flags that the back ends chosen would ignore.
    case("wavefront capacity with the CPU", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu", "--capacity", "2^20"], &["--capacity applies to the gpu-wave and cpu-wave back ends", "the cpu back end would ignore it"]),
    case("refill threshold with a schedule that never refills", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu-wave", "--schedule", "bounce-sync", "--refill", "0.25"], &["refill applies to the regenerate schedule", "bounce-sync never refills the pool"]),
    case("wavefront schedule with the CPU", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu", "--schedule", "bounce-sync"], &["--schedule applies to the gpu-wave and cpu-wave back ends"]),
    case("material sort with the CPU", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu", "--material-sort", "off"], &["--material-sort applies to the gpu-wave and cpu-wave back ends"]),
    case("megakernel block with the CPU", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu", "--block", "8x8"], &["--block applies to the gpu-mega back end", "the cpu back end would ignore it"]),
    case("register cap with the CPU", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu-serial", "--max-registers", "64"], &["--max-registers applies to the gpu-mega and gpu-wave back ends", "the cpu-serial back end would ignore it"]),
    case("fast arithmetic with the CPU, the exact reference", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu-wave", "--arithmetic", "fast"], &["--arithmetic applies to the gpu-mega and gpu-wave back ends", "the cpu-wave back end would ignore it"]),
    case("arithmetic that is no arithmetic", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--arithmetic", "sloppy"], &["`sloppy` is no arithmetic", "`exact` or `fast`"]),
    case("experiment arithmetic that is no arithmetic", &[("ok.toml", Entry::Text(OK)), ("e.toml", Entry::Text(concat!(
            "[experiment]\nname = \"bad\"\ndescription = \"a bad config\"\n\n",
            "[[study]]\nname = \"s\"\nscenes = [\"ok.toml\"]\nbackends = [\"gpu-mega\"]\nfixed = { arithmetic = \"approximate\" }\n")))],
        &["experiment", "e.toml", "--out", "o"], &["e.toml:9:", "`arithmetic`", "`approximate` is no arithmetic"]),
    case("threads with the emulated wavefront", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "cpu-wave", "--threads", "2"], &["--threads applies to the cpu back end", "the cpu-wave back end would ignore it"]),
    case("megakernel tile with the GPU wavefront", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--backend", "gpu-wave", "--tile", "8x8"], &["--tile applies to the gpu-mega back end", "the gpu-wave back end would ignore it"]),
    without_gpu(case("a GPU flag when auto finds no GPU", &[("s.toml", Entry::Text(OK))],
        &["render", "s.toml", "--untimed-launches"], &["--backend auto", "no usable GPU", "--untimed-launches applies to the gpu-wave back end", "the cpu back end would ignore it"])),
    case("bench flag for none of its back ends", &[("s.toml", Entry::Text(OK))],
        &["bench", "s.toml", "--backends", "cpu,cpu-serial", "--blocks", "16x16"], &["--blocks applies to the gpu-mega back end", "the cpu and cpu-serial back ends would ignore it"]),
    case("bench threads for the emulated wavefront", &[("s.toml", Entry::Text(OK))],
        &["bench", "s.toml", "--backends", "cpu-wave", "--threads", "2"], &["--threads applies to the cpu back end", "the cpu-wave back end would ignore it"]),
    case("bench launch log of the CPU", &[("s.toml", Entry::Text(OK))],
        &["bench", "s.toml", "--backends", "cpu", "--launch-log", "l.csv"], &["--launch-log applies to the gpu-mega and gpu-wave back ends"]),
    case("verify with a megakernel flag on the emulated wavefront", &[("s.toml", Entry::Text(OK))],
        &["verify", "s.toml", "--backend", "cpu-wave", "--samples-per-launch", "4"], &["--samples-per-launch applies to the gpu-mega back end", "the cpu-wave and cpu back ends would ignore it"]),
    case("verify on devices with the emulated wavefront", &[("s.toml", Entry::Text(OK))],
        &["verify", "s.toml", "--backend", "cpu-wave", "--devices", "0"], &["--devices applies to the gpu-mega and gpu-wave back ends", "the cpu-wave and cpu back ends would ignore it"]),
    case("experiment devices without GPU runs", &[("ok.toml", Entry::Text(OK)), ("e.toml", Entry::Text(config!("")))],
        &["experiment", "e.toml", "--out", "o", "--devices", "0"], &["--devices applies to the gpu-mega and gpu-wave back ends", "the cpu back end would ignore it"]),
    case("raycast samples per pixel", &[("s.toml", Entry::Text(OK))],
        &["raycast", "s.toml", "--spp", "4"], &["--spp", "raycast casts --count rays"]),
    case("raycast next-event estimation", &[("s.toml", Entry::Text(OK))],
        &["raycast", "s.toml", "--nee", "on"], &["--nee", "next-event estimation leaves as they are"]),
];

/// Whether a GPU opens here (cases about a missing GPU are skipped then).
fn gpu_present() -> bool {
    renderer::backend::gpu::Gpu::open(0).is_ok()
}

/// The names in `dir`, recursively, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.path().strip_prefix(dir).unwrap().display().to_string();
        if entry.file_type().unwrap().is_dir() {
            out.extend(listing(&entry.path()).into_iter().map(|n| format!("{name}/{n}")));
        }
        out.push(name);
    }
    out.sort();
    out
}

fn set_up(dir: &Path, files: &[(&str, Entry)]) {
    for (name, entry) in files {
        let path = dir.join(name);
        match entry {
            Entry::Text(text) => std::fs::write(&path, text).unwrap(),
            Entry::Bytes(n) => std::fs::write(&path, "#".repeat(*n)).unwrap(),
            Entry::Link(target) => std::os::unix::fs::symlink(target, &path).unwrap(),
            Entry::HardLink(target) => std::fs::hard_link(dir.join(target), &path).unwrap(),
            Entry::Binary(bytes) => std::fs::write(&path, bytes).unwrap(),
            Entry::Png => image::RgbImage::from_pixel(2, 2, image::Rgb([200, 100, 50]))
                .save(&path)
                .unwrap(),
            Entry::Folder => std::fs::create_dir(&path).unwrap(),
            Entry::Fifo => {
                let made = Command::new("mkfifo").arg(&path).status().unwrap();
                assert!(made.success());
            }
        }
    }
}

/// Runs one case; returns what went wrong, if anything.
fn check(case: &Case) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    set_up(dir.path(), case.files);
    let before = listing(dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_wavepath"))
        .args(case.args)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut problems = Vec::new();
    match out.status.code() {
        Some(0) => problems.push("exit status 0".to_string()),
        Some(101) | None => problems.push(format!("crashed ({:?})", out.status)),
        Some(_) => {}
    }
    if stderr.contains("panicked") {
        problems.push("panicked".into());
    }
    for e in case.expect {
        if !stderr.contains(e) {
            problems.push(format!("no `{e}` in the message"));
        }
    }
    let after = listing(dir.path());
    if after != before {
        problems.push(format!("files changed: {before:?} -> {after:?}"));
    }
    (!problems.is_empty()).then(|| format!("{}: {}\n  stderr: {}", case.name, problems.join("; "), stderr.trim()))
}

#[test]
fn every_bad_input_fails_cleanly_with_a_message_naming_the_place() {
    assert!(CASES.len() >= 60, "{} cases", CASES.len());
    let mut names: Vec<_> = CASES.iter().map(|c| c.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), CASES.len(), "case names are distinct");
    let skip_no_gpu = gpu_present();
    let failures: Vec<String> = CASES
        .iter()
        .filter(|c| !(c.needs_no_gpu && skip_no_gpu))
        .filter_map(check)
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

#[test]
fn the_valid_scenes_of_the_suite_render() {
    // The templates the cases break are themselves valid: each case fails
    // for its own defect, not for the template's.
    for (name, text, extra) in [("ok", OK, ""), ("mesh", MESH, TRI), ("sphere", SPHERE, "")] {
        let dir = tempfile::tempdir().unwrap();
        let scene = if name == "sphere" {
            scene!().to_string() + text
        } else {
            text.to_string()
        };
        std::fs::write(dir.path().join("s.toml"), scene).unwrap();
        std::fs::write(dir.path().join("m.obj"), extra).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_wavepath"))
            .args(["render", "s.toml", "--backend", "cpu", "--quiet"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(dir.path().join("s.png").is_file());
    }
}
