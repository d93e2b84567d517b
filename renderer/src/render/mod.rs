//! One render from start to finish: load the scene, apply overrides, pick a
//! back end, render, write the image, summarise.

pub mod chunks;
pub mod compare;
pub mod film_sum;
pub mod ray_throughput;
mod render_devices;
mod renderer;
pub mod seed_compare;
pub mod split;
pub mod summary_record;
pub mod tone;
pub mod verify;

pub use render_devices::RenderDevices;
pub use renderer::Renderer;

use crate::accel::AccelChoice;
use crate::backend::{BackendKind, BackendOptions, RenderOutput};
use crate::io::atomic_file::{self, Output};
use crate::io::image as image_out;
use crate::prepared::PreparedScene;
use crate::scene::{self, Scene};
use crate::settings::backend::BackendChoice;
use crate::settings::devices::Devices;
use crate::settings::nee::NeeMode;
use crate::settings::sampler::SamplerKind;
use crate::settings::scope::{BackendFlag, check_flags};
use anyhow::Context;
use device::accel::Dispatch;
use device::geometry::Hit;
use device::integrator::{SampleRange, finish_path};
use device::material::AnyMaterial;
use device::observe::Unobserved;
use device::scene::{RenderParams, RenderView, SceneView};
use device::stages::PathState;
use device::warp::Unsynchronised;
use indicatif::{ProgressBar, ProgressStyle};
use split::{DeviceShare, SplitOutput};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Command-line settings that replace the scene file's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// Samples per pixel.
    pub spp: Option<u32>,
    /// Maximum ray segments per path.
    pub max_depth: Option<u32>,
    /// Image size (width, height).
    pub size: Option<(u32, u32)>,
    /// RNG seed.
    pub seed: Option<u32>,
    /// Acceleration structure.
    pub accel: Option<AccelChoice>,
    /// Random-number sampler.
    pub sampler: Option<SamplerKind>,
    /// Next-event estimation.
    pub nee: Option<NeeMode>,
}

/// Loads `path` and builds its acceleration structure once, with the
/// override that changes the scene itself (`accel`) applied; the others
/// apply per render via [`params_for`].
pub fn load_scene(path: &Path, overrides: &Overrides) -> anyhow::Result<PreparedScene> {
    Ok(PreparedScene::new(scene::load(path)?, overrides.accel))
}

/// Everything `wavepath render` needs.
#[derive(Clone, Debug)]
pub struct RenderRequest {
    /// The scene file.
    pub scene: PathBuf,
    /// Back end.
    pub backend: BackendChoice,
    /// Settings replacing the file's.
    pub overrides: Overrides,
    /// Which image to produce.
    pub view: RenderView,
    /// Back-end tuning (threads, launch configuration).
    pub options: BackendOptions,
    /// The flags given that concern only some back ends: refused where the
    /// back end that renders would ignore them.
    pub flags: Vec<BackendFlag>,
    /// Output image; `None` writes `<scene name>.png` in the current folder.
    pub out: Option<PathBuf>,
    /// Show a progress bar.
    pub progress: bool,
    /// Write one CSV row per GPU kernel launch here.
    pub launch_log: Option<PathBuf>,
    /// The CPU profile's flame graph (`render --profile`), which the
    /// command writes after the render; checked here with the other outputs.
    pub profile: Option<PathBuf>,
    /// The summary as a JSON record (`--summary-json`), which the command
    /// writes after the render; checked here with the other outputs.
    pub summary_json: Option<PathBuf>,
    /// The GPUs to render on (`--devices`); `None`: the back end's own
    /// choice (device 0 for a GPU back end).
    pub devices: Option<Devices>,
    /// Set by Ctrl-C: stop after the samples in flight and write the image
    /// of the samples finished.
    pub stop: Option<&'static AtomicBool>,
}

impl RenderRequest {
    /// The image file: `out`, or `<scene name>.png` in the current folder.
    pub fn image(&self) -> PathBuf {
        self.out.clone().unwrap_or_else(|| default_output(&self.scene))
    }

    /// Every file the render writes: the image, and the launch log, the
    /// flame graph and the summary record where asked for.
    pub fn outputs(&self) -> Vec<Output> {
        [
            Some(Output::new(self.image(), "the image")),
            self.launch_log.as_ref().map(|p| Output::new(p, "the launch log")),
            self.profile.as_ref().map(|p| Output::new(p, "the flame graph")),
            self.summary_json.as_ref().map(|p| Output::new(p, "the summary record")),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// What a finished render reports.
#[derive(Clone, Debug)]
pub struct RenderSummary {
    /// The scene file.
    pub scene: PathBuf,
    /// The back end that ran.
    pub backend: BackendKind,
    /// Why the back end was chosen, when `auto` chose it.
    pub note: Option<String>,
    /// Settings used.
    pub params: RenderParams,
    /// Samples per pixel asked for (the output says how many were done).
    pub spp: u32,
    /// The render's raw output.
    pub output: RenderOutput,
    /// The image written.
    pub image: PathBuf,
    /// The acceleration structure, described.
    pub accel: String,
    /// Each device's part of a render split over several (empty for a
    /// render on one).
    pub shares: Vec<DeviceShare>,
    /// The merge of a split's device films (zero for a render on one).
    pub merge: std::time::Duration,
}

impl RenderSummary {
    /// The one-line summary printed after a render.
    pub fn line(&self) -> String {
        let secs = self.output.elapsed.as_secs_f64().max(1e-9);
        let samples = self.params.width as f64 * self.params.height as f64 * self.output.spp as f64;
        let spp = if self.interrupted() {
            format!(
                "{} of {} spp (stopped by {})",
                self.output.spp,
                self.spp,
                crate::system::interrupt::stopped_by()
            )
        } else {
            format!("{} spp", self.spp)
        };
        format!(
            "{}: {} on {} ({}), {}x{}, {spp}, depth {}: {:.3} s, {:.3} M samples/s, {:.3} M rays/s{} -> {}",
            self.scene.display(),
            self.backend.label(),
            self.output.device,
            self.accel,
            self.params.width,
            self.params.height,
            self.params.max_depth,
            secs,
            samples / secs / 1e6,
            self.output.rays as f64 / secs / 1e6,
            match self.output.invalid_samples {
                0 => String::new(),
                n => format!(", {n} NaN/inf samples dropped"),
            },
            self.image.display(),
        )
    }

    /// True when a stop request cut the render short.
    pub fn interrupted(&self) -> bool {
        self.output.spp < self.spp
    }
}

/// The render settings for `scene` after `overrides`.
pub fn params_for(scene: &Scene, overrides: &Overrides, view: RenderView) -> (RenderParams, u32) {
    let s = &scene.settings;
    let (width, height) = overrides.size.unwrap_or((s.width, s.height));
    let params = RenderParams {
        width,
        height,
        max_depth: overrides.max_depth.unwrap_or(s.max_depth),
        seed: overrides.seed.unwrap_or(s.seed),
        sampler: overrides.sampler.unwrap_or(s.sampler).device(),
        roulette_start: s.roulette_start,
        view,
        nee: overrides.nee.unwrap_or(s.nee).device(),
    };
    (params, overrides.spp.unwrap_or(s.spp))
}

/// Renders `scene` once with a freshly prepared `kind` (convenience for tests
/// and one-off renders).
pub fn render_scene(
    scene: &PreparedScene,
    kind: BackendKind,
    params: RenderParams,
    spp: u32,
    options: &BackendOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> anyhow::Result<RenderOutput> {
    Renderer::new(kind, *options)?.render(scene, params, spp, progress)
}

/// Follows `path` to its end on the CPU, as the CPU back end traces it
/// (the scene's own structure, every material class), handing `on_segment`
/// each path state with the hit of its ray; the light found is dropped.
/// The host's path diagnostics record through it: `verify`'s trace of a
/// differing sample, and the bounce rays `raycast` casts.
pub fn follow_path(
    view: &SceneView,
    params: &RenderParams,
    path: &mut PathState,
    on_segment: impl FnMut(&PathState, Option<&Hit>),
) {
    finish_path::<Dispatch, AnyMaterial>(view, params, path, &Unobserved, &mut Unsynchronised, on_segment, |_| {});
}

/// The default output path: `<scene name>.png` in the current folder.
fn default_output(scene: &Path) -> PathBuf {
    let stem = scene
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "render".into());
    PathBuf::from(format!("{stem}.png"))
}

/// A progress bar over `total` pixel-samples, or a hidden one.
pub fn progress_bar(total: u64, visible: bool) -> anyhow::Result<ProgressBar> {
    let bar = if visible {
        ProgressBar::new(total)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% eta {eta}")
            .context("progress bar template")?,
    );
    Ok(bar)
}

/// Host memory a render of `params` needs beyond the scene: the film, the
/// 8-bit image and its encoding.
pub fn host_bytes(params: &RenderParams) -> u64 {
    let pixels = params.width as u64 * params.height as u64;
    pixels * (size_of::<device::film::FixedRgb>() as u64 + 2 * image_out::BYTES_PER_PIXEL)
}

/// Checks, before anything is allocated, that `films` films of `params`'
/// size (with their images) fit in the host memory available: every command
/// that renders goes through here.
pub fn check_memory(params: &RenderParams, films: u64) -> anyhow::Result<()> {
    let what = match films {
        1 => format!("a {}x{} render", params.width, params.height),
        n => format!("{n} renders of {}x{}", params.width, params.height),
    };
    crate::system::memory::check_available(
        &what,
        films.saturating_mul(host_bytes(params)),
        "render a smaller image (--size)",
    )
}

/// A render made, its image not yet written: what [`make`] leaves for
/// [`write()`] (under MPI, each rank's, whose films rank 0 adds up first).
pub struct UnwrittenRender {
    /// The image to write.
    pub out: PathBuf,
    /// The scene.
    pub scene: PreparedScene,
    /// Settings used.
    pub params: RenderParams,
    /// Samples per pixel asked for (of the whole image, not of a share).
    pub spp: u32,
    /// The back end that ran.
    pub kind: BackendKind,
    /// Why the back end was chosen, when `auto` chose it.
    pub note: Option<String>,
    /// The film and each device's part.
    pub split: SplitOutput,
}

/// Runs a whole render request: [`make`] of every sample, then [`write()`].
pub fn run(req: &RenderRequest) -> anyhow::Result<RenderSummary> {
    let made = make(req, |spp| SampleRange { begin: 0, end: spp })?;
    if let Some(n) = &made.note {
        eprintln!("wavepath: {n}");
    }
    write(req, made)
}

/// Renders the sample indices `share(spp)` of the request (every sample,
/// or an MPI rank's share). Everything that can be checked is checked
/// before the first sample: the output paths, the back end, the memory.
pub fn make(req: &RenderRequest, share: impl Fn(u32) -> SampleRange) -> anyhow::Result<UnwrittenRender> {
    // A flag the back end would ignore is refused before anything opens
    // (under `auto`, as soon as it has chosen, below).
    if let BackendChoice::Exactly(kind) = req.backend {
        check_flags(&req.flags, &[kind]).map_err(anyhow::Error::msg)?;
    }
    let out = req.image();
    image_out::format_for(&out)?;
    let scene = load_scene(&req.scene, &req.overrides)?;
    atomic_file::check_outputs(&req.outputs(), &scene.scene.files)?;
    let (params, spp) = params_for(&scene.scene, &req.overrides, req.view);
    let (devices, note) = match &req.devices {
        None => {
            let (renderer, note) =
                Renderer::choose(req.backend, req.options).context("`--backend cpu` renders without a GPU")?;
            (RenderDevices::One(Box::new(renderer)), note)
        }
        Some(devices) => (RenderDevices::open(req.backend, req.options, devices)?, None),
    };
    let kind = devices.kind();
    if req.backend == BackendChoice::Auto {
        let chose = note
            .clone()
            .unwrap_or_else(|| format!("--devices renders on {}", kind.label()));
        check_flags(&req.flags, &[kind]).map_err(|e| anyhow::anyhow!("--backend auto: {chose}: {e}"))?;
    }
    check_memory(&params, devices.host_films())?;
    if req.launch_log.is_some() && devices.count() > 1 {
        anyhow::bail!("--launch-log records the launches of one GPU; render on one device (--devices N) to log them");
    }
    let samples = share(spp);
    let pixels = params.width as u64 * params.height as u64;
    let bar = progress_bar(pixels * samples.end.saturating_sub(samples.begin) as u64, req.progress)?;
    let split = devices.render(&scene, (params, samples), req.stop, &|n| bar.inc(n))?;
    bar.finish_and_clear();
    Ok(UnwrittenRender {
        out,
        scene,
        params,
        spp,
        kind,
        note,
        split,
    })
}

/// Writes the image of `made`'s film (and its launch log, if asked for)
/// through the atomic-write helpers, and summarises the render.
pub fn write(req: &RenderRequest, made: UnwrittenRender) -> anyhow::Result<RenderSummary> {
    let UnwrittenRender {
        out,
        scene,
        params,
        spp,
        kind,
        note,
        split,
    } = made;
    let output = split.output;
    if let (Some(path), Some(profile)) = (&req.launch_log, &output.gpu) {
        profile.write_launch_csv(path)?;
    }
    match image_out::format_for(&out)? {
        image_out::OutputFormat::Linear(format) => {
            let linear = tone::linear(&output.film, output.spp)?;
            image_out::write_linear(&out, format, params.width, &linear)?;
        }
        image_out::OutputFormat::Display(_) => {
            let image = tone::to_image(&output.film, output.spp, &params, &scene.scene.settings.tone)?;
            image_out::write_image(&out, &image)?;
        }
    }
    Ok(RenderSummary {
        scene: req.scene.clone(),
        backend: kind,
        note,
        params,
        spp,
        output,
        image: out,
        accel: match scene.accel_settings.choice {
            crate::accel::AccelChoice::Auto => format!(
                "auto, at most {} primitives by brute force: {}",
                crate::accel::AUTO_BRUTE_FORCE_MAX,
                scene.accel.describe()
            ),
            _ => scene.accel.describe(),
        },
        shares: split.shares,
        merge: split.merge,
    })
}
