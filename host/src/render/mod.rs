//! One render from start to finish: load the scene, apply overrides, pick a
//! back end, render, write the image, summarise.

pub mod compare;
pub mod raycast;
pub mod tone;
pub mod verify;

use crate::accel::AccelChoice;
use crate::backend::cpu::{self, Threads};
use crate::backend::gpu::buffers::DeviceScene;
use crate::backend::gpu::{Gpu, megakernel, wavefront};
use crate::backend::wavefront::emulated;
use crate::backend::{BackendKind, BackendOptions, RenderJob, RenderOutput};
use crate::io::{atomic_file, image as image_out};
use crate::prepared::PreparedScene;
use crate::scene::{self, Scene};
use crate::settings::backend::BackendChoice;
use crate::settings::nee::NeeMode;
use crate::settings::sampler::SamplerKind;
use anyhow::Context;
use device::scene::{RenderParams, RenderView};
use indicatif::{ProgressBar, ProgressStyle};
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
    /// Output image; `None` writes `<scene name>.png` in the current folder.
    pub out: Option<PathBuf>,
    /// Show a progress bar.
    pub progress: bool,
    /// Write one CSV row per GPU kernel launch here.
    pub launch_log: Option<PathBuf>,
    /// Set by Ctrl-C: stop after the samples in flight and write the image
    /// of the samples finished.
    pub stop: Option<&'static AtomicBool>,
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
}

impl RenderSummary {
    /// The one-line summary printed after a render.
    pub fn line(&self) -> String {
        let secs = self.output.elapsed.as_secs_f64().max(1e-9);
        let samples = self.params.width as f64 * self.params.height as f64 * self.output.spp as f64;
        let spp = if self.interrupted() {
            format!("{} of {} spp (stopped by Ctrl-C)", self.output.spp, self.spp)
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

/// A back end ready to render: for GPU back ends, an open device with the
/// module loaded (opened once, reused across renders).
pub struct Renderer {
    kind: BackendKind,
    options: BackendOptions,
    gpu: Option<Gpu>,
    stop: Option<&'static AtomicBool>,
}

impl Renderer {
    /// Prepares `kind`; for a GPU back end this opens device 0.
    pub fn new(kind: BackendKind, options: BackendOptions) -> anyhow::Result<Self> {
        let gpu = if kind.is_gpu() {
            Some(Gpu::open(0).with_context(|| format!("the {} back end needs a GPU", kind.label()))?)
        } else {
            None
        };
        Ok(Renderer {
            kind,
            options,
            gpu,
            stop: None,
        })
    }

    /// Prepares `kind` on a GPU opened earlier (shared by many renderers);
    /// a GPU back end without one is an error.
    pub fn on(kind: BackendKind, options: BackendOptions, gpu: Option<&Gpu>) -> anyhow::Result<Self> {
        if kind.is_gpu() && gpu.is_none() {
            anyhow::bail!("the {} back end needs a GPU", kind.label());
        }
        Ok(Renderer {
            kind,
            options,
            gpu: gpu.filter(|_| kind.is_gpu()).cloned(),
            stop: None,
        })
    }

    /// Resolves `choice`: `auto` takes the GPU megakernel when a GPU opens and
    /// otherwise the `cpu` back end, with a note saying why.
    pub fn choose(choice: BackendChoice, options: BackendOptions) -> anyhow::Result<(Self, Option<String>)> {
        match choice {
            BackendChoice::Exactly(kind) => Ok((Renderer::new(kind, options)?, None)),
            BackendChoice::Auto => match Gpu::open(0) {
                Ok(gpu) => {
                    let note = format!("using the gpu-mega back end on {}", gpu.info().describe());
                    Ok((
                        Renderer {
                            kind: BackendKind::GpuMega,
                            options,
                            gpu: Some(gpu),
                            stop: None,
                        },
                        Some(note),
                    ))
                }
                Err(e) => {
                    let note = format!("no usable GPU ({e}); rendering on the cpu back end");
                    Ok((Renderer::new(BackendKind::Cpu, options)?, Some(note)))
                }
            },
        }
    }

    /// Makes renders stop early once `flag` is set (by Ctrl-C), keeping
    /// the whole samples per pixel finished.
    pub fn stopping_on(self, flag: Option<&'static AtomicBool>) -> Self {
        Renderer { stop: flag, ..self }
    }

    /// The back end's options.
    pub fn options(&self) -> BackendOptions {
        self.options
    }

    /// The back end this renderer runs.
    pub fn kind(&self) -> BackendKind {
        self.kind
    }

    /// The open GPU, for GPU back ends.
    pub fn gpu(&self) -> Option<&Gpu> {
        self.gpu.as_ref()
    }

    /// Renders `scene` with `params` and `spp`, reporting progress in pixel-samples.
    pub fn render(
        &self,
        scene: &PreparedScene,
        params: RenderParams,
        spp: u32,
        progress: &(dyn Fn(u64) + Sync),
    ) -> anyhow::Result<RenderOutput> {
        self.render_uploaded(scene, None, params, spp, progress)
    }

    /// [`Renderer::render`] with the scene already in device memory (GPU
    /// back ends; `None` uploads it for this render).
    pub fn render_uploaded(
        &self,
        scene: &PreparedScene,
        uploaded: Option<&DeviceScene>,
        params: RenderParams,
        spp: u32,
        progress: &(dyn Fn(u64) + Sync),
    ) -> anyhow::Result<RenderOutput> {
        let job = RenderJob {
            scene,
            params,
            camera: scene.scene.camera_for(params.width, params.height),
            spp,
            uploaded,
            stop: self.stop,
        };
        let schedule = self.options.cpu_schedule;
        match (self.kind, &self.gpu) {
            (BackendKind::CpuSerial, _) => cpu::render(&job, Threads::Serial, schedule, progress),
            (BackendKind::Cpu, _) => cpu::render(&job, Threads::Pool(self.options.threads), schedule, progress),
            (BackendKind::GpuMega, Some(gpu)) => Ok(megakernel::render(gpu, &job, &self.options.megakernel, progress)?),
            (BackendKind::GpuWave | BackendKind::CpuWave, _) if params.view != device::scene::RenderView::Radiance => {
                anyhow::bail!(
                    "debug views render on the cpu and gpu-mega back ends; the wavefront traces radiance only"
                )
            }
            (BackendKind::GpuWave, Some(gpu)) => Ok(wavefront::render(gpu, &job, &self.options.wavefront, progress)?),
            (BackendKind::CpuWave, _) => {
                let out = emulated::render(&job, &self.options.wavefront, progress)?;
                Ok(RenderOutput {
                    spp: out.spp(&job),
                    film: out.film,
                    rays: out.rays,
                    invalid_samples: out.invalid_samples,
                    elapsed: out.loop_time,
                    device: format!(
                        "the host, emulating the wavefront ({}, {} paths in flight)",
                        self.options.wavefront.label(),
                        out.capacity
                    ),
                    gpu: None,
                })
            }
            (BackendKind::GpuMega | BackendKind::GpuWave, None) => {
                anyhow::bail!("internal: a GPU back end without an open GPU")
            }
        }
    }
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

/// Runs a whole render request. Everything that can be checked is checked
/// before the first sample: the output paths, the back end, the memory.
pub fn run(req: &RenderRequest) -> anyhow::Result<RenderSummary> {
    let out = req.out.clone().unwrap_or_else(|| default_output(&req.scene));
    image_out::format_for(&out)?;
    let scene = load_scene(&req.scene, &req.overrides)?;
    let inputs = &scene.scene.files;
    atomic_file::check(&out, inputs)?;
    if let Some(log) = &req.launch_log {
        if log == &out {
            anyhow::bail!("{}: is both the image and the launch log", log.display());
        }
        atomic_file::check(log, inputs)?;
    }
    let (params, spp) = params_for(&scene.scene, &req.overrides, req.view);
    check_memory(&params, 1)?;
    let (renderer, note) =
        Renderer::choose(req.backend, req.options).context("`--backend cpu` renders without a GPU")?;
    if req.launch_log.is_some() && !renderer.kind().is_gpu() {
        anyhow::bail!(
            "--launch-log records GPU kernel launches; the {} back end launches none (choose gpu-mega or gpu-wave)",
            renderer.kind().label()
        );
    }
    let renderer = renderer.stopping_on(req.stop);
    if let Some(n) = &note {
        eprintln!("wavepath: {n}");
    }
    let bar = progress_bar(params.width as u64 * params.height as u64 * spp as u64, req.progress)?;
    let output = renderer.render(&scene, params, spp, &|n| bar.inc(n))?;
    bar.finish_and_clear();
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
        backend: renderer.kind(),
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
    })
}
