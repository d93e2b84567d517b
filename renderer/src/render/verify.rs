//! `wavepath verify`: a GPU back end against the CPU reference, bit for bit.
//!
//! Both render the same scene, seed and settings; the fixed-point films must
//! be identical. On a mismatch the report names the first differing pixel,
//! then re-renders that pixel one sample at a time on the back end under
//! test to find the first differing sample, and prints the CPU's path for it
//! bounce by bounce. Under the fast arithmetic the films cannot be
//! identical: the back end's image must then be nearer the CPU's than a
//! fraction of the Monte Carlo noise ([`FastAgreement`]: the CPU renders
//! the next seed too).

use crate::backend::gpu::mega_launch::render_launches;
use crate::backend::gpu::wave_launch::render_items;
use crate::backend::wave_driver::emulated;
use crate::backend::{BackendKind, BackendOptions, OpenedBackend, RenderJob};
use crate::prepared::PreparedScene;
use crate::render::compare::{FastAgreement, film_hash};
use crate::render::{Overrides, RenderDevices, Renderer, check_memory, load_scene, params_for};
use crate::settings::arithmetic::Arithmetic;
use crate::settings::backend::BackendChoice;
use crate::settings::devices::Devices;
use anyhow::Context;
use device::accel::Dispatch;
use device::features::Features;
use device::film::FixedRgb;
use device::geometry::{Hit, PrimRef};
use device::integrator::{PixelResult, SampleRange, trace_path};
use device::kernels::wave_kernels::WorkItems;
use device::launch::Tile;
use device::material::AnyMaterial;
use device::math::{Ray, Rgb};
use device::observe::Unobserved;
use device::scene::{RenderParams, RenderView};
use device::stages::PathState;
use device::stages::generate::generate;
use device::warp::Unsynchronised;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One segment of a path, as the CPU traced it.
#[derive(Clone, Debug, PartialEq)]
pub struct TracedSegment {
    /// Segment index.
    pub bounce: u32,
    /// The ray traced.
    pub ray: Ray,
    /// What it hit: primitive, material and distance.
    pub hit: Option<(PrimRef, u32, f32)>,
    /// Throughput before shading this hit.
    pub throughput: Rgb,
}

/// The first sample of a pixel whose value differs.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleMismatch {
    /// Sample index.
    pub sample: u32,
    /// CPU value (fixed point).
    pub cpu: FixedRgb,
    /// GPU value (fixed point).
    pub gpu: FixedRgb,
    /// The CPU's path for this sample.
    pub path: Vec<TracedSegment>,
}

/// Where the films first differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Column of the first differing pixel (row-major order).
    pub x: u32,
    /// Row.
    pub y: u32,
    /// CPU sum.
    pub cpu: FixedRgb,
    /// GPU sum.
    pub gpu: FixedRgb,
    /// Pixels that differ in all.
    pub differing_pixels: usize,
    /// The first differing sample of that pixel, when one was found.
    pub sample: Option<SampleMismatch>,
}

/// The outcome of a verification.
#[derive(Clone, Debug)]
pub struct VerifyReport {
    /// The scene file.
    pub scene: PathBuf,
    /// The back end checked.
    pub backend: BackendKind,
    /// The device it ran on.
    pub device: String,
    /// Settings used.
    pub params: RenderParams,
    /// Samples per pixel.
    pub spp: u32,
    /// CPU reference render time.
    pub cpu_time: Duration,
    /// Checked back end's render time.
    pub time: Duration,
    /// Ray segments traced (equal on both when the films agree).
    pub rays: u64,
    /// `None` when the films are identical (exact arithmetic only).
    pub mismatch: Option<Mismatch>,
    /// Under the fast arithmetic: the image's distance from the CPU's.
    pub fast: Option<FastAgreement>,
    /// The checked back end's film hash (two back ends under the fast
    /// arithmetic agree when theirs do).
    pub film_hash: String,
}

impl VerifyReport {
    /// True when the images are bit-identical, or under the fast
    /// arithmetic within its bound.
    pub fn passed(&self) -> bool {
        match self.fast {
            Some(fast) => fast.within_bound(),
            None => self.mismatch.is_none(),
        }
    }

    /// A human-readable account.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{}: {} on {} vs cpu, {}x{}, {} spp, depth {}, seed {}: ",
            self.scene.display(),
            self.backend.label(),
            self.device,
            self.params.width,
            self.params.height,
            self.spp,
            self.params.max_depth,
            self.params.seed
        );
        if let Some(fast) = self.fast {
            let _ = write!(
                s,
                "{} the bound (fast arithmetic: {} of {}; film {}; cpu {:.3} s, {} {:.3} s)",
                if fast.within_bound() { "WITHIN" } else { "BEYOND" },
                fast.describe(),
                self.params.width as u64 * self.params.height as u64,
                self.film_hash,
                self.cpu_time.as_secs_f64(),
                self.backend.label(),
                self.time.as_secs_f64()
            );
            return s;
        }
        match &self.mismatch {
            None => {
                let _ = write!(
                    s,
                    "IDENTICAL ({} pixels, {} rays; cpu {:.3} s, {} {:.3} s)",
                    self.params.width as u64 * self.params.height as u64,
                    self.rays,
                    self.cpu_time.as_secs_f64(),
                    self.backend.label(),
                    self.time.as_secs_f64()
                );
            }
            Some(m) => {
                let _ = writeln!(
                    s,
                    "DIFFERENT in {} pixels; first at ({}, {}): cpu {:?}, gpu {:?}",
                    m.differing_pixels, m.x, m.y, m.cpu, m.gpu
                );
                if let Some(sm) = &m.sample {
                    let _ = writeln!(
                        s,
                        "first differing sample {}: cpu {:?}, gpu {:?}; cpu path:",
                        sm.sample, sm.cpu, sm.gpu
                    );
                    for step in &sm.path {
                        let _ = writeln!(
                            s,
                            "  bounce {}: origin {:?} dir {:?} throughput {:?} -> {}",
                            step.bounce,
                            step.ray.origin,
                            step.ray.dir,
                            step.throughput,
                            match step.hit {
                                Some((p, m, t)) => format!("{:?} #{} material {m} at t = {t}", p.kind(), p.index()),
                                None => "escaped".into(),
                            }
                        );
                    }
                }
            }
        }
        s
    }
}

/// The CPU's path for one radiance sample, segment by segment, through the same stages.
pub fn trace_steps(scene: &PreparedScene, params: &RenderParams, pixel: u32, sample: u32) -> Vec<TracedSegment> {
    let view = scene.view(scene.scene.camera_for(params.width, params.height), Features::ALL);
    let mut path = generate(&view, params, pixel, sample);
    let mut steps = Vec::new();
    let segment = |p: &PathState, hit: Option<&Hit>| {
        steps.push(TracedSegment {
            bounce: p.bounce,
            ray: p.ray,
            hit: hit.map(|h| (h.prim, h.material, h.t)),
            throughput: p.throughput,
        })
    };
    super::follow_path(&view, params, &mut path, segment);
    steps
}

/// Renders `scene_path` on `backend` and on the CPU and compares the films.
pub fn verify(
    scene_path: &Path,
    overrides: &Overrides,
    backend: BackendKind,
    options: BackendOptions,
) -> anyhow::Result<VerifyReport> {
    verify_on(scene_path, overrides, (backend, None), options)
}

/// [`verify`] with the back end on the GPUs `devices` names (the render
/// split over them, [`crate::render::split`]; `None`: the back end's own device).
pub fn verify_on(
    scene_path: &Path,
    overrides: &Overrides,
    (backend, devices): (BackendKind, Option<&Devices>),
    options: BackendOptions,
) -> anyhow::Result<VerifyReport> {
    let scene = load_scene(scene_path, overrides)?;
    let (params, spp) = params_for(&scene.scene, overrides, RenderView::Radiance);
    let checked = match devices {
        None => RenderDevices::One(Box::new(
            Renderer::new(backend, options).context("verify compares a GPU back end with the CPU")?,
        )),
        Some(devices) => RenderDevices::open(BackendChoice::Exactly(backend), options, devices)?,
    };
    // The back end's films and the CPU's (two under the fast arithmetic:
    // the next seed's too, held alongside).
    let cpu_films = match options.arithmetic(backend) {
        Arithmetic::Exact => 1,
        Arithmetic::Fast => 2,
    };
    check_memory(&params, checked.host_films() + cpu_films)?;
    let reference = Renderer::new(BackendKind::Cpu, options)?;
    let gpu_out = checked
        .render(&scene, (params, SampleRange { begin: 0, end: spp }), None, &|_| {})?
        .output;
    let cpu_out = reference.render(&scene, params, spp, &|_| {})?;
    let differing: Vec<usize> = (0..cpu_out.film.len())
        .filter(|&i| cpu_out.film[i] != gpu_out.film[i])
        .collect();
    let fast = match options.arithmetic(backend) {
        Arithmetic::Exact => None,
        Arithmetic::Fast => {
            let noise = reference.render(&scene, FastAgreement::noise_params(params), spp, &|_| {})?;
            Some(FastAgreement::measure(&gpu_out.film, &cpu_out.film, &noise.film, spp))
        }
    };
    let mismatch = match differing.first() {
        Some(&i) if fast.is_none() => {
            let (x, y) = (i as u32 % params.width, i as u32 / params.width);
            let sample = first_differing_sample(checked.first(), &options, &scene, params, spp, x, y)?;
            Some(Mismatch {
                x,
                y,
                cpu: cpu_out.film[i],
                gpu: gpu_out.film[i],
                differing_pixels: differing.len(),
                sample,
            })
        }
        _ => None,
    };
    Ok(VerifyReport {
        scene: scene_path.to_path_buf(),
        backend,
        device: gpu_out.device.clone(),
        params,
        spp,
        cpu_time: cpu_out.elapsed,
        time: gpu_out.elapsed,
        rays: cpu_out.rays,
        mismatch,
        fast,
        film_hash: film_hash(&gpu_out.film),
    })
}

/// Re-renders pixel `(x, y)` one sample at a time on the checked back end
/// and returns the first sample whose value differs from the CPU's.
fn first_differing_sample(
    checked: &Renderer,
    options: &BackendOptions,
    scene: &PreparedScene,
    params: RenderParams,
    spp: u32,
    x: u32,
    y: u32,
) -> anyhow::Result<Option<SampleMismatch>> {
    let pixel = y * params.width + x;
    let job = RenderJob {
        scene,
        params,
        camera: scene.scene.camera_for(params.width, params.height),
        samples: SampleRange { begin: 0, end: spp },
        uploaded: None,
        stop: None,
    };
    let view = scene.view(job.camera, job.features());
    let tile = [Tile {
        x0: x,
        y0: y,
        width: 1,
        height: 1,
    }];
    for sample in 0..spp {
        let pass = [SampleRange {
            begin: sample,
            end: sample + 1,
        }];
        let one = WorkItems {
            first_pixel: pixel,
            pixels: 1,
            first_sample: sample,
        };
        let film = match checked.backend() {
            OpenedBackend::GpuMega(gpu) => render_launches(gpu, &job, &options.megakernel, &tile, &pass, &|_| {})?.film,
            OpenedBackend::GpuWave(gpu) => render_items(gpu, &job, &options.wavefront, (one, 1), &|_| {})?.film,
            OpenedBackend::CpuWave => emulated::render_items(&job, &options.wavefront, (one, 1), &|_| {})?.film,
            // The CPU back ends are the reference's own code.
            OpenedBackend::Cpu | OpenedBackend::CpuSerial => return Ok(None),
        };
        let gpu_value = film[pixel as usize];
        // The same rule as `render_pixel`: each contribution in fixed
        // point, invalid ones adding nothing.
        let mut cpu = PixelResult::default();
        trace_path::<Dispatch, AnyMaterial>(&view, &params, (pixel, sample), &Unobserved, &mut Unsynchronised, |c| {
            cpu.deposit(c)
        });
        let cpu_value = cpu.sum;
        if gpu_value != cpu_value {
            let path = trace_steps(scene, &params, pixel, sample);
            return Ok(Some(SampleMismatch {
                sample,
                cpu: cpu_value,
                gpu: gpu_value,
                path,
            }));
        }
    }
    Ok(None)
}
