//! `gpu-mega`: the classic megakernel. One thread traces every sample of
//! one pixel from camera to termination, calling the same
//! [`device::integrator::render_pixel`] as the CPU back ends.
//!
//! The image is launched in tiles and in passes of a few samples, so a long
//! render never trips a display watchdog and progress can be shown; every
//! launch is timed with CUDA events.

use super::buffers::{DeviceBuffer, DeviceScene, SceneOnDevice};
use super::device::{Gpu, KernelInfo};
use super::error::GpuError;
use super::profile::{GpuProfile, LaunchRecord};
use super::timeline::Timeline;
use crate::backend::{ProgressCallback, RenderJob, RenderOutput, SizedBy};
use crate::settings::mega_config::MegakernelConfig;
use cudarc::driver::LaunchConfig;
use device::features::Features;
use device::film::FixedRgb;
use device::integrator::SampleRange;
use device::kernel::EntryPoint;
use device::kernels::megakernel::MegakernelArgs;
use device::kernels::{AccelKernels, AccelVisitor, visit_accel};
use device::launch::{LaunchCounters, Tile};
use device::observe::DivergenceCounters;
use std::time::{Duration, Instant};

/// The tiles covering a `width × height` image, row by row.
pub fn tiles(width: u32, height: u32, tile: Option<(u32, u32)>) -> Vec<Tile> {
    let (tw, th) = tile.unwrap_or((width, height));
    let mut out = Vec::new();
    for y0 in (0..height).step_by(th as usize) {
        for x0 in (0..width).step_by(tw as usize) {
            out.push(Tile {
                x0,
                y0,
                width: tw.min(width - x0),
                height: th.min(height - y0),
            });
        }
    }
    out
}

/// The sample ranges of successive passes over `samples`.
pub fn passes(samples: SampleRange, samples_per_launch: u32) -> Vec<SampleRange> {
    (samples.begin..samples.end)
        .step_by(samples_per_launch as usize)
        .map(|begin| SampleRange {
            begin,
            end: begin.saturating_add(samples_per_launch).min(samples.end),
        })
        .collect()
}

/// Renders `job` with the megakernel on `gpu`: every tile, every pass.
pub fn render(
    gpu: &Gpu,
    job: &RenderJob,
    config: &MegakernelConfig,
    progress: ProgressCallback,
) -> Result<RenderOutput, GpuError> {
    let tiles = tiles(job.params.width, job.params.height, config.tile);
    render_launches(
        gpu,
        job,
        config,
        &tiles,
        &passes(job.samples, config.samples_per_launch),
        progress,
    )
}

/// Renders the given sample passes of the given tiles (pixels outside every
/// tile stay zero). [`render`] covers the image; `wavepath verify` uses
/// single-pixel, single-sample launches to find the first differing path.
pub fn render_launches(
    gpu: &Gpu,
    job: &RenderJob,
    config: &MegakernelConfig,
    tiles: &[Tile],
    passes: &[SampleRange],
    progress: ProgressCallback,
) -> Result<RenderOutput, GpuError> {
    let mut session = MegaSession::open(gpu, job, config)?;
    session.render_launches(job, tiles, passes, progress)?;
    session.read_back()
}

/// The megakernel on one GPU over one or more renders (the chunks of a
/// split render, [`crate::render::split`]): the scene and the film
/// allocated once, each render's samples added to the film in the GPU's
/// memory, read back once.
pub struct MegaSession<'a> {
    /// The handle with the render's register cap, features and arithmetic.
    gpu: Gpu,
    config: MegakernelConfig,
    features: Features,
    scene: SceneOnDevice<'a>,
    outputs: Outputs,
    upload_ms: f64,
    /// The renders so far: their launch loops' time and samples per pixel.
    loop_time: Duration,
    spp: u32,
    /// The megakernel that ran, and the last render's launches.
    kernel: Option<KernelInfo>,
    launches: Vec<LaunchRecord>,
}

impl<'a> MegaSession<'a> {
    /// Uploads `job`'s scene to `gpu` (unless the job's was uploaded before)
    /// and allocates a zeroed film for its image.
    pub fn open(gpu: &Gpu, job: &RenderJob<'a>, config: &MegakernelConfig) -> Result<Self, GpuError> {
        config.validate().map_err(|error| GpuError::Config {
            what: "megakernel",
            error,
        })?;
        let features = config.kernels.bind(job.features());
        let gpu = gpu
            .with_register_cap(config.max_registers)
            .with_features(features)
            .with_arithmetic(config.arithmetic);
        let upload_start = Instant::now();
        let scene = DeviceScene::for_job(&gpu, job)?;
        let outputs = Outputs::alloc(&gpu, job.pixel_count())?;
        gpu.synchronize("uploading the scene")?;
        Ok(MegaSession {
            config: *config,
            features,
            scene,
            outputs,
            upload_ms: upload_start.elapsed().as_secs_f64() * 1e3,
            loop_time: Duration::ZERO,
            spp: 0,
            kernel: None,
            launches: Vec::new(),
            gpu,
        })
    }

    /// Renders `job`'s samples over the image (the image and scene the
    /// session was opened for) into the session's film, in tiles and
    /// passes. Returns the samples per pixel rendered.
    pub fn render(&mut self, job: &RenderJob, progress: ProgressCallback) -> Result<u32, GpuError> {
        let tiles = tiles(job.params.width, job.params.height, self.config.tile);
        let passes = passes(job.samples, self.config.samples_per_launch);
        self.render_launches(job, &tiles, &passes, progress)
    }

    /// Renders the given sample passes of the given tiles into the film.
    fn render_launches(
        &mut self,
        job: &RenderJob,
        tiles: &[Tile],
        passes: &[SampleRange],
        progress: ProgressCallback,
    ) -> Result<u32, GpuError> {
        visit_accel(
            job.scene.accel.kind,
            Launches {
                session: self,
                work: Passes {
                    job,
                    tiles,
                    passes,
                    progress,
                },
            },
        )
    }

    /// The film and counters, read back, with the last render's launches;
    /// its time is the renders' sum.
    pub fn read_back(&self) -> Result<RenderOutput, GpuError> {
        let gpu = &self.gpu;
        let counted = self.kernel.as_ref().filter(|_| self.config.count_divergence);
        let readback_start = Instant::now();
        let (film, counters, divergence) = self.outputs.read_back(gpu, counted.map(|k| k.name.as_str()))?;
        let readback_ms = readback_start.elapsed().as_secs_f64() * 1e3;
        let profile = GpuProfile {
            device: gpu.info().clone(),
            kernels: self.kernel.iter().cloned().collect(),
            launches: self.launches.clone(),
            upload_ms: self.upload_ms,
            readback_ms,
            loop_ms: self.loop_time.as_secs_f64() * 1e3,
            scene_bytes: self.scene.byte_len(),
            film_bytes: self.outputs.film.byte_len(),
            divergence,
            state_bytes: 0,
            pool_capacity: 0,
        };
        Ok(RenderOutput {
            film,
            spp: self.spp,
            rays: counters.rays,
            invalid_samples: counters.invalid_samples,
            elapsed: self.loop_time,
            device: gpu.info().name.clone(),
            gpu: Some(profile),
        })
    }
}

/// One render of a session, once the structure's megakernel is known.
struct Launches<'s, 'a> {
    session: &'s mut MegaSession<'a>,
    work: Passes<'s>,
}

impl AccelVisitor for Launches<'_, '_> {
    type Output = Result<u32, GpuError>;

    fn visit<A: AccelKernels>(self) -> Result<u32, GpuError> {
        if self.session.config.count_divergence {
            self.run::<A::CountingMegakernel>()
        } else {
            self.run::<A::Megakernel>()
        }
    }
}

impl Launches<'_, '_> {
    /// Renders with megakernel `K`: every launch, into the session's film.
    fn run<K: EntryPoint<Args = MegakernelArgs>>(self) -> Result<u32, GpuError> {
        let Launches { session, work } = self;
        let job = work.job;
        let gpu = &session.gpu;
        let mut timeline = Timeline::new(gpu);
        let (bx, by) = session.config.block;
        let function = timeline.function::<K>()?.clone();
        if session.kernel.is_none() {
            session.kernel = Some(gpu.kernel_info(K::NAME, &function, bx * by)?);
        }
        let outputs = &session.outputs;
        let args = MegakernelArgs {
            // SAFETY: the scene stays uploaded until the launches are done
            // (it lives as long as the session).
            scene: unsafe {
                session
                    .scene
                    .view(gpu, job.scene, job.camera, session.features)
                    .detached()
            },
            params: job.params,
            samples: SampleRange { begin: 0, end: 0 },
            tile: Tile {
                x0: 0,
                y0: 0,
                width: 0,
                height: 0,
            },
            film: outputs.film.ptr(gpu),
            counters: outputs.counters.ptr(gpu),
            divergence: if session.config.count_divergence {
                outputs.divergence.ptr(gpu)
            } else {
                std::ptr::null_mut()
            },
        };
        let loop_start = Instant::now();
        let spp = work.launch::<K>(gpu, session.config.block, &mut timeline, args)?;
        session.loop_time += loop_start.elapsed();
        session.spp += spp;
        session.launches = timeline.finish()?;
        Ok(spp)
    }
}

/// What one render launches: the passes of samples over the tiles of
/// `job`'s image.
struct Passes<'a> {
    job: &'a RenderJob<'a>,
    tiles: &'a [Tile],
    passes: &'a [SampleRange],
    progress: ProgressCallback<'a>,
}

impl Passes<'_> {
    /// Launches `K` on `gpu` in blocks of `(bx, by)` with `args` over
    /// every tile of every pass, waiting for each pass; returns the samples
    /// per pixel rendered (fewer than the job's when a stop request ends
    /// the render after a pass).
    fn launch<K: EntryPoint<Args = MegakernelArgs>>(
        &self,
        gpu: &Gpu,
        (bx, by): (u32, u32),
        timeline: &mut Timeline<'_>,
        mut args: MegakernelArgs,
    ) -> Result<u32, GpuError> {
        let pass_pixels: u64 = self.tiles.iter().map(|t| t.width as u64 * t.height as u64).sum();
        for (pass, &samples) in self.passes.iter().enumerate() {
            for tile in self.tiles {
                let cfg = LaunchConfig {
                    grid_dim: (tile.width.div_ceil(bx), tile.height.div_ceil(by), 1),
                    block_dim: (bx, by, 1),
                    shared_mem_bytes: 0,
                };
                (args.samples, args.tile) = (samples, *tile);
                timeline.launch::<K>(cfg, &args, launch_record(pass as u32, samples, tile))?;
            }
            // One synchronisation per pass: progress, and faults surface here.
            gpu.synchronize("running the megakernel")?;
            (self.progress)(pass_pixels * (samples.end - samples.begin) as u64);
            if self.job.stopping() {
                return Ok(samples.end - self.job.samples.begin);
            }
        }
        Ok(self.job.spp())
    }
}

/// The launch log's record of pass `pass`, rendering `samples` of `tile`.
fn launch_record(pass: u32, samples: SampleRange, tile: &Tile) -> LaunchRecord {
    LaunchRecord {
        iteration: pass,
        sample_begin: samples.begin,
        sample_end: samples.end,
        tile_x: tile.x0,
        tile_y: tile.y0,
        tile_width: tile.width,
        tile_height: tile.height,
        items: tile.width as u64 * tile.height as u64 * (samples.end - samples.begin) as u64,
        ..LaunchRecord::default()
    }
}

/// What the megakernel writes: the film and its counters.
struct Outputs {
    film: DeviceBuffer<FixedRgb>,
    counters: DeviceBuffer<LaunchCounters>,
    divergence: DeviceBuffer<DivergenceCounters>,
}

impl Outputs {
    /// Zeroed outputs for `pixels`.
    fn alloc(gpu: &Gpu, pixels: usize) -> Result<Self, GpuError> {
        Ok(Outputs {
            film: DeviceBuffer::zeroed(gpu, "the film", SizedBy::Image, pixels)?,
            counters: DeviceBuffer::zeroed(gpu, "the counters", SizedBy::Fixed, 1)?,
            divergence: DeviceBuffer::zeroed(gpu, "the divergence counters", SizedBy::Fixed, 1)?,
        })
    }

    /// The film, the counters, and the divergence counts of `counted` (the
    /// kernel's name, when it counted them).
    fn read_back(&self, gpu: &Gpu, counted: Option<&str>) -> Result<ReadBack, GpuError> {
        let film = self.film.read(gpu, "the film")?;
        let counters = self.counters.read(gpu, "the counters")?[0];
        let divergence = match counted {
            Some(name) => vec![(
                name.to_string(),
                self.divergence.read(gpu, "the divergence counters")?[0],
            )],
            None => Vec::new(),
        };
        Ok((film, counters, divergence))
    }
}

/// The film, counters and per-kernel divergence counts read back.
type ReadBack = (Vec<FixedRgb>, LaunchCounters, Vec<(String, DivergenceCounters)>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_cover_the_image_exactly_once() {
        let t = tiles(100, 70, Some((32, 32)));
        assert_eq!(t.len(), 4 * 3);
        let area: u32 = t.iter().map(|t| t.width * t.height).sum();
        assert_eq!(area, 100 * 70);
        assert_eq!(
            t.last().unwrap(),
            &Tile {
                x0: 96,
                y0: 64,
                width: 4,
                height: 6
            }
        );
        assert_eq!(
            tiles(100, 70, None),
            vec![Tile {
                x0: 0,
                y0: 0,
                width: 100,
                height: 70
            }]
        );
    }

    #[test]
    fn passes_split_the_samples() {
        let ranges = |begin, end, per_launch| {
            passes(SampleRange { begin, end }, per_launch)
                .iter()
                .map(|r| (r.begin, r.end))
                .collect::<Vec<_>>()
        };
        assert_eq!(ranges(0, 10, 4), [(0, 4), (4, 8), (8, 10)]);
        assert_eq!(ranges(5, 12, 4), [(5, 9), (9, 12)]);
        assert_eq!(ranges(3, 3, 4), []);
    }

    #[test]
    fn block_shapes_are_checked() {
        let ok = MegakernelConfig::default();
        assert!(ok.validate().is_ok());
        assert!(MegakernelConfig { block: (4, 4), ..ok }.validate().is_ok());
        for block in [(0, 4), (1025, 1), (64, 32)] {
            assert!(MegakernelConfig { block, ..ok }.validate().is_err(), "{block:?}");
        }
        for (cap, valid) in [
            (Some(15), false),
            (Some(16), true),
            (Some(255), true),
            (Some(256), false),
        ] {
            let config = MegakernelConfig {
                max_registers: cap,
                ..ok
            };
            assert_eq!(config.validate().is_ok(), valid, "{cap:?}");
        }
        assert_eq!(
            MegakernelConfig {
                max_registers: Some(64),
                ..ok
            }
            .label(),
            "8x8/spl16/reg64"
        );
    }
}
