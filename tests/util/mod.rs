//! Shared harness for the integration tests: scenes from strings, renders
//! into films, and paths in the repository.
#![allow(dead_code)] // each test binary uses a different subset

use device::features::Features;
use device::integrator::SampleRange;
use device::scene::RenderParams;
use renderer::backend::{BackendKind, BackendOptions, RenderJob, RenderOutput};
use renderer::prepared::PreparedScene;
use renderer::render::{Overrides, load_scene, params_for, render_scene};
use renderer::scene::{self, Scene, SceneError};
use std::path::{Path, PathBuf};

/// A path inside the repository. A test binary run from another copy of the
/// repository (the GPU machine has no Rust: tests are built here, run there)
/// resolves paths against the current folder instead.
pub fn repo(rel: &str) -> PathBuf {
    let built_in = Path::new(env!("CARGO_MANIFEST_DIR"));
    if built_in.exists() {
        built_in.join(rel)
    } else {
        PathBuf::from(rel)
    }
}

/// Parses scene text as if it came from `test.toml` in the repository root.
pub fn try_scene(text: &str) -> Result<Scene, SceneError> {
    scene::load_str(&repo("test.toml"), text)
}

/// Parses scene text that must be valid, and builds its structure.
pub fn scene(text: &str) -> PreparedScene {
    let loaded = try_scene(text).unwrap_or_else(|e| panic!("test scene should load: {e}"));
    PreparedScene::new(loaded, None)
}

/// Loads a scene file of the repository's `scenes/` folder, with its structure.
pub fn seed_scene(name: &str) -> PreparedScene {
    load_scene(&repo(&format!("scenes/{name}.toml")), &Overrides::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Renders `scene` at `width × height` with `spp` samples on `kind`.
pub fn render(scene: &PreparedScene, kind: BackendKind, width: u32, height: u32, spp: u32) -> RenderOutput {
    let overrides = Overrides {
        spp: Some(spp),
        size: Some((width, height)),
        ..Overrides::default()
    };
    let (params, spp) = params_for(&scene.scene, &overrides, device::scene::RenderView::Radiance);
    render_scene(scene, kind, params, spp, &BackendOptions::default(), &|_| {}).expect("render")
}

/// The 1-based line of the first occurrence of `needle` in `text`.
pub fn line_of(text: &str, needle: &str) -> usize {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` not in the test scene"));
    text[..at].matches('\n').count() + 1
}

/// The seed scenes every back end must agree on.
pub const SEED_SCENES: [&str; 4] = ["cornell_smallpt", "cornell_diffuse", "rtiow_final", "cs500"];

/// Writes `text` as `NAME.toml` in `dir`, with `SCENES` replaced by the
/// repository's scene folder.
pub fn write_config(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text.replace("SCENES", &repo("scenes").display().to_string())).unwrap();
    path
}

/// The `wavepath` binary of this build, or the one `WAVEPATH_BIN` names:
/// a test binary carried to a GPU machine without this checkout's
/// `target/` (`cargo test --release --no-run --test gpu`, run there beside
/// a packed `wavepath`) finds its `wavepath` there.
pub fn wavepath() -> std::process::Command {
    std::process::Command::new(wavepath_bin())
}

/// The path of the binary [`wavepath`] runs.
pub fn wavepath_bin() -> std::ffi::OsString {
    std::env::var_os("WAVEPATH_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_wavepath").into())
}

/// A message with each figure that measures the machine at that moment
/// (the host memory available, which moves between two runs a fraction of
/// a second apart) replaced by `…`: two runs' messages compare by what they
/// say, not by the state of the machine.
pub fn without_measured(message: &str) -> String {
    let available = regex::Regex::new(r"\d+(\.\d+)? [KMG]iB is available").unwrap();
    available.replace_all(message, "… is available").into_owned()
}

/// `wavepath experiment CONFIG --out OUT --quiet`, not yet started.
pub fn experiment_command(config: &Path, out: &Path) -> std::process::Command {
    let mut command = wavepath();
    command
        .arg("experiment")
        .arg(config)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        // Tests run from working trees with uncommitted changes too; the
        // refusal of a dirty build is tested on `runner::check_clean`.
        .arg("--allow-dirty");
    command
}

/// Runs `wavepath experiment CONFIG --out OUT --quiet` with `extra`.
pub fn run_experiment(config: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    experiment_command(config, out).args(extra).output().unwrap()
}

/// Runs `command` to its end with its output captured, or kills it after
/// `limit` and panics: a command that blocks (reading a FIFO) or runs on
/// (reading an endless device) fails its test instead of hanging it.
pub fn output_within(command: &mut std::process::Command, limit: std::time::Duration) -> std::process::Output {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read both pipes as the command writes, so that it never waits on a full one.
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).map(|_| bytes).unwrap_or_default()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "{command:?} still ran after {limit:?}; it wrote to stderr:\n{}",
                String::from_utf8_lossy(&stderr.join().unwrap())
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// The features a render of `scene` with `params` and `spp` uses, as its
/// kernels are bound to them.
pub fn render_features(scene: &PreparedScene, params: RenderParams, spp: u32) -> Features {
    RenderJob {
        scene,
        params,
        camera: scene.scene.camera_for(params.width, params.height),
        samples: SampleRange { begin: 0, end: spp },
        uploaded: None,
        stop: None,
    }
    .features()
}
