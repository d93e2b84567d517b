//! The planned runs, one configuration after another: each loads (once) and
//! uploads (once) its scene, warms up, times its remaining repetitions and
//! hands each to the row writer. A configuration that cannot be made here is
//! skipped with the reason; any other error ends the experiment.

use super::config::{PlannedRun, Study};
use super::output::Resumed;
use super::partial::{KeptRenders, Part, PartInfo, PartKey, PartOf};
use super::plan::estimate_s;
use super::preflight::References;
use super::progress::Progress;
use super::records::Skipped;
use super::rows::{Origin, Rendered, run_row};
use super::scenes::SceneCache;
use super::team::{self, PlanStep, Team};
use super::worker_loop::{self, WorkerEnd};
use super::writer::{Finished, RowWriter};
use anyhow::Context;
use device::film::FixedRgb;
use device::integrator::SampleRange;
use device::scene::{RenderParams, RenderView};
use renderer::backend::gpu::buffers::DeviceScene;
use renderer::backend::gpu::profile::GpuProfile;
use renderer::backend::gpu::{Gpu, GpuError};
use renderer::backend::{BackendKind, RenderOutput};
use renderer::prepared::PreparedScene;
use renderer::render::compare::FastAgreement;
use renderer::render::split::SplitOutput;
use renderer::render::{Renderer, params_for};
use renderer::settings::arithmetic::{Arithmetic, FAST_NOISE_FRACTION};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// How the planned runs ended.
pub enum Ending {
    /// Every planned run was made or skipped.
    Complete,
    /// A stop request ended them in this study, after the render in flight.
    Stopped(String),
    /// This error ended them.
    Failed(anyhow::Error),
}

impl Ending {
    /// How the runs of `plan` ended, made by workers that took their
    /// configurations from `next` and ended as `ends` say
    /// ([`worker_loop::make_each`]): failed with the first error of any;
    /// stopped (`stopped`) in the study of the first configuration that a
    /// stop left unfinished or untaken; otherwise complete.
    pub fn of(plan: &[PlanStep], next: &AtomicUsize, ends: impl IntoIterator<Item = WorkerEnd>, stopped: bool) -> Self {
        let mut error = None;
        let mut cut = next.load(Ordering::SeqCst).min(plan.len());
        for end in ends {
            error = error.or(end.error);
            cut = end.cut.map_or(cut, |c| c.min(cut));
        }
        match error {
            Some(e) => Ending::Failed(e),
            None if stopped && cut < plan.len() => Ending::Stopped(plan[cut].0.name.clone()),
            None => Ending::Complete,
        }
    }
}

/// What the runs leave besides their rows.
#[derive(Default)]
pub struct RunExtras {
    /// The configurations not made, and why.
    pub skipped: Vec<Skipped>,
    /// Per study: the configurations checked against the CPU before they
    /// were timed, and the first that differed.
    pub parity: Vec<Parity>,
    /// The last CPU reference film of the parity step, by what it renders
    /// (the configurations of one scene and size follow each other).
    reference: Option<(String, Vec<FixedRgb>)>,
    /// The last CPU film of the next seed, the noise a fast-arithmetic
    /// film is measured against, likewise.
    next_seed: Option<(String, Vec<FixedRgb>)>,
    /// The last GPU profile of each configuration, as (study, run, profile),
    /// when kept.
    pub profiles: Vec<(String, u32, GpuProfile)>,
}

impl RunExtras {
    /// What another process's runs left (an MPI rank's), without its
    /// profiles.
    pub fn of(skipped: Vec<Skipped>, parity: Vec<Parity>) -> Self {
        RunExtras {
            skipped,
            parity,
            ..RunExtras::default()
        }
    }

    /// Adds what another worker's runs left (`experiment --devices`).
    pub fn merge(&mut self, other: RunExtras) {
        self.skipped.extend(other.skipped);
        self.profiles.extend(other.profiles);
        for p in other.parity {
            match self.parity.iter_mut().find(|q| q.study == p.study) {
                Some(q) => {
                    q.identical += p.identical;
                    q.within_bound += p.within_bound;
                    q.mismatch = q.mismatch.take().or(p.mismatch);
                }
                None => self.parity.push(p),
            }
        }
    }
}

/// The parity step of one study: every configuration that is not the CPU's
/// own renders, at [`PARITY_SPP`] samples per pixel, the CPU's film bit for
/// bit before it is timed, or under the fast arithmetic nearer it than
/// [`FAST_NOISE_FRACTION`] of the noise.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Parity {
    /// The study.
    pub study: String,
    /// Configurations checked and found identical.
    pub identical: usize,
    /// Fast-arithmetic configurations checked and found within the bound.
    #[serde(default)]
    pub within_bound: usize,
    /// The first configuration that differed, and where.
    pub mismatch: Option<String>,
}

impl Parity {
    /// What the manifest and report say of it.
    pub fn outcome(&self) -> String {
        match &self.mismatch {
            None if self.within_bound > 0 => format!(
                "{} configuration(s) rendered the CPU's film bit for bit, and {} under the fast arithmetic nearer it \
                 than {FAST_NOISE_FRACTION} of the noise (the next seed's film in relative MSE), at {PARITY_SPP} spp \
                 before they were timed",
                self.identical, self.within_bound
            ),
            None => format!(
                "{} configuration(s) rendered the CPU's film bit for bit at {PARITY_SPP} spp before they were timed",
                self.identical
            ),
            Some(m) => format!("MISMATCH before timing: {m}"),
        }
    }
}

/// The CPU's film of `job` under `params` at `spp`, from `slot` when it
/// holds that render (the configurations of one scene and size follow each
/// other), else rendered and kept there.
fn cpu_film<'t>(
    slot: &'t mut Option<(String, Vec<FixedRgb>)>,
    job: &Job,
    params: RenderParams,
    spp: u32,
) -> Result<&'t [FixedRgb], RunError> {
    let spec = &job.run.spec;
    let key = format!(
        "{:?} {:?} {:?} {params:?} {spp}",
        spec.scene, spec.scene_fields, spec.overrides
    );
    if slot.as_ref().is_none_or(|(k, _)| *k != key) {
        let cpu = Renderer::on(BackendKind::Cpu, job.renderer.options(), None)?;
        let film = cpu
            .render(job.scene, params, spp, &|_| {})
            .map_err(|e| RunError::Abort(e.context(what(job.study, job.run))))?
            .film;
        *slot = Some((key, film));
    }
    Ok(&slot.as_ref().expect("filled above").1)
}

/// Samples per pixel of the parity step: enough to take every branch of a
/// path, few enough to cost little beside the timed renders.
pub const PARITY_SPP: u32 = 2;

/// Why a configuration ended before its last repetition.
enum RunError {
    /// It cannot be made here (no GPU, a study that failed its film check, a
    /// GPU that cannot launch or hold it): it is recorded as skipped with
    /// this reason, and the experiment goes on.
    Skip(String),
    /// The experiment cannot go on.
    Abort(anyhow::Error),
}

impl From<anyhow::Error> for RunError {
    fn from(e: anyhow::Error) -> Self {
        RunError::Abort(e)
    }
}

/// What every run shares.
#[derive(Clone, Copy)]
pub struct Runs<'a> {
    /// Where the rows come from.
    pub origin: Origin<'a>,
    /// Why GPU runs are skipped, when they are.
    pub no_gpu: Option<&'a str>,
    /// The repetitions made before a resumption.
    pub resumed: &'a Resumed,
    /// Where finished renders go.
    pub writer: &'a RowWriter,
    /// The progress bar.
    pub progress: &'a Progress,
    /// Set (by a Ctrl-C handler) to stop after the render in flight.
    pub stop: Option<&'static AtomicBool>,
    /// Where a CPU render cut short by a stop is kept for `--resume`
    /// (`None`: CPU renders finish in flight too, as at an MPI rank without
    /// the output folder).
    pub kept_renders: Option<&'a KeptRenders>,
    /// Keep the last GPU profile of each configuration.
    pub keep_profiles: bool,
    /// Each study's reference image, for the rows' error.
    pub references: &'a References,
    /// The experiment's GPUs in order: a run of `gpus` = N renders on the
    /// first N ([`team`]).
    pub team: &'a [Gpu],
}

/// One configuration's renders, ready to go.
struct Job<'s> {
    study: &'s Study,
    run: &'s PlannedRun,
    renderer: Renderer,
    scene: &'s PreparedScene,
    uploaded: Option<&'s DeviceScene>,
    /// The GPUs that split each render, for a run of several.
    team: Option<Team<'s>>,
    params: RenderParams,
    /// Samples per pixel rendered.
    spp: u32,
    /// Samples per pixel asked for.
    report_spp: u32,
    /// The estimated time of one render, ms, for the progress bar.
    estimate_ms: u64,
}

/// What a configuration is, for error messages.
fn what(study: &Study, run: &PlannedRun) -> String {
    format!("study `{}`, run {} ({})", study.name, run.index, run.label)
}

impl Runs<'_> {
    /// Makes every run of `plan` in order, until the end, a stop request or
    /// an error: the one worker of [`worker_loop::make_each`].
    pub fn all(&self, plan: &[(&Study, &PlannedRun)]) -> (Ending, RunExtras) {
        let mut scenes = SceneCache::default();
        let mut tally = RunExtras::default();
        let next = AtomicUsize::new(0);
        let stop = || self.stop_requested();
        let end = worker_loop::make_each(&next, plan.len(), stop, stop, |i| {
            let (study, run) = plan[i];
            self.one(study, run, &mut scenes, &mut tally)
        });
        (Ending::of(plan, &next, [end], self.stop_requested()), tally)
    }

    /// One configuration, made or skipped (the reason goes to `tally`);
    /// an error that must end the experiment is returned.
    pub fn one(
        &self,
        study: &Study,
        run: &PlannedRun,
        scenes: &mut SceneCache,
        tally: &mut RunExtras,
    ) -> anyhow::Result<()> {
        match self.configuration(study, run, scenes, tally) {
            Ok(()) => Ok(()),
            Err(RunError::Skip(reason)) => {
                tally.skipped.push(Skipped {
                    study: study.name.clone(),
                    config: run.label.clone(),
                    reason,
                });
                Ok(())
            }
            Err(RunError::Abort(e)) => Err(e),
        }
    }

    /// True once a stop was requested.
    pub fn stop_requested(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst))
    }

    /// One configuration: checks that it can run here, loads (and uploads)
    /// its scene, warms up, times its remaining repetitions and prints their
    /// median.
    fn configuration(
        &self,
        study: &Study,
        run: &PlannedRun,
        scenes: &mut SceneCache,
        tally: &mut RunExtras,
    ) -> Result<(), RunError> {
        let reps = self.resumed.remaining(study, run);
        if reps.is_empty() {
            return Ok(());
        }
        self.check_runnable(study, run)?;
        let spec = &run.spec;
        let loaded = scenes
            .get(&spec.scene, &spec.scene_fields, spec.overrides.accel)
            .with_context(|| what(study, run))?;
        let mut loaded = loaded.borrow_mut();
        let gpus = team::gpus_for(spec, self.team).map_err(RunError::Skip)?;
        match (spec.backend.is_gpu(), gpus, self.origin.gpu) {
            (true, Some(gpus), _) => loaded.upload_to_each(gpus),
            (true, None, Some(gpu)) => loaded.upload(gpu),
            _ => Ok(()),
        }
        .with_context(|| what(study, run))?;
        let (params, report_spp) = params_for(&loaded.scene.scene, &spec.overrides, RenderView::Radiance);
        let job = Job {
            study,
            run,
            renderer: Renderer::on(spec.backend, spec.options, self.origin.gpu)?,
            scene: &loaded.scene,
            uploaded: loaded.device.as_ref().filter(|_| spec.backend.is_gpu()),
            team: gpus.map(|g| Team::new(spec, g, &loaded.on_each)).transpose()?,
            params,
            spp: spec.spp_cap.map_or(report_spp, |cap| cap.min(report_spp)),
            report_spp,
            estimate_ms: (estimate_s(spec) * 1e3) as u64,
        };
        self.parity(&job, tally)?;
        self.warm_up(&job)?;
        let times = self.time(&job, reps, tally)?;
        if let Some(median) = crate::statistics::median(&times) {
            self.progress.println(format!(
                "{} | {}: median {median:.3} ms over {} runs",
                study.name,
                run.label,
                times.len()
            ));
        }
        Ok(())
    }

    /// Skips the rest of a study that failed its film check, and GPU runs
    /// without a GPU.
    fn check_runnable(&self, study: &Study, run: &PlannedRun) -> Result<(), RunError> {
        if let Some(m) = self.writer.mismatch(&study.name) {
            return Err(RunError::Skip(format!("the study failed its film check: {m}")));
        }
        match self.no_gpu {
            Some(note) if run.spec.backend.is_gpu() => Err(RunError::Skip(note.to_string())),
            _ => Ok(()),
        }
    }

    /// Renders `job` at [`PARITY_SPP`] on its back end and on the CPU and
    /// compares the films, for every back end but the CPU's own (whose
    /// agreement the film check of the timed rows covers). A mismatch skips
    /// the configuration and fails the study.
    fn parity(&self, job: &Job, tally: &mut RunExtras) -> Result<(), RunError> {
        let kind = job.renderer.kind();
        if matches!(kind, BackendKind::Cpu | BackendKind::CpuSerial) {
            return Ok(());
        }
        let spp = job.spp.min(PARITY_SPP);
        let checked = self.render_spp(job, spp)?.output;
        let reference = cpu_film(&mut tally.reference, job, job.params, spp)?;
        // The fast arithmetic's own image is held to the CPU's within a
        // fraction of the noise here, and to the other GPU schedules' bit
        // for bit by the film check of the timed rows.
        let fast = match job.renderer.options().arithmetic(kind) {
            Arithmetic::Exact => None,
            Arithmetic::Fast => {
                let noise = cpu_film(&mut tally.next_seed, job, FastAgreement::noise_params(job.params), spp)?;
                Some(FastAgreement::measure(&checked.film, reference, noise, spp))
            }
        };
        let entry = match tally.parity.iter_mut().position(|p| p.study == job.study.name) {
            Some(i) => &mut tally.parity[i],
            None => {
                tally.parity.push(Parity {
                    study: job.study.name.clone(),
                    ..Parity::default()
                });
                tally.parity.last_mut().expect("just pushed")
            }
        };
        if let Some(agreement) = fast {
            if agreement.within_bound() {
                entry.within_bound += 1;
                return Ok(());
            }
            let m = format!(
                "{}: the fast-arithmetic film at {spp} spp is beyond its bound: {}; `wavepath verify --arithmetic \
                 fast` says more",
                job.run.label,
                agreement.describe()
            );
            entry.mismatch.get_or_insert(m.clone());
            return Err(RunError::Skip(format!("parity: {m}")));
        }
        match reference.iter().zip(&checked.film).position(|(a, b)| a != b) {
            None => {
                entry.identical += 1;
                Ok(())
            }
            Some(i) => {
                let (x, y) = (i as u32 % job.params.width, i as u32 / job.params.width);
                let m = format!(
                    "{}: the film at {spp} spp differs from the CPU's, first at pixel ({x}, {y}); `wavepath verify` says where",
                    job.run.label
                );
                entry.mismatch.get_or_insert(m.clone());
                Err(RunError::Skip(format!("parity: {m}")))
            }
        }
    }

    /// The untimed renders before the timed ones. A stop request ends them;
    /// it is never withdrawn, so no timed render follows either.
    fn warm_up(&self, job: &Job) -> Result<(), RunError> {
        for _ in 0..job.study.warmup {
            if self.stop_requested() {
                break;
            }
            self.render_spp(job, job.spp)?;
            self.progress.rendered(job.estimate_ms);
        }
        Ok(())
    }

    /// Times the repetitions `reps` and hands each to the writer; returns
    /// their render times, ms. A CPU render a stop cuts short is kept
    /// ([`super::partial`]) instead of recorded, and a kept one is finished.
    fn time(&self, job: &Job, reps: Vec<u32>, tally: &mut RunExtras) -> Result<Vec<f64>, RunError> {
        let mut times = Vec::new();
        for repetition in reps {
            if self.stop_requested() {
                break;
            }
            let want = self.part_of(job, repetition);
            let kept = match (self.kept_renders, &want) {
                (Some(dir), Some(want)) => dir
                    .take(want, |refusal| self.progress.println(format!("wavepath: {refusal}")))
                    .map_err(|e| e.context(what(job.study, job.run)))?,
                _ => None,
            };
            let begin = kept.as_ref().map_or(0, |p| p.info.samples);
            let start = Instant::now();
            let SplitOutput {
                output: out,
                shares,
                merge,
            } = self.render_timed(job, begin, want.is_some())?;
            let total_ms = start.elapsed().as_secs_f64() * 1e3;
            let rendered_now = out.spp;
            let renders = kept.as_ref().map_or(1, |p| p.info.parts + 1);
            let (out, total_ms) = match kept {
                Some(part) => part.complete(out, total_ms),
                None => (out, total_ms),
            };
            if out.spp < job.spp {
                if rendered_now > 0
                    && let (Some(dir), Some(of)) = (self.kept_renders, want)
                {
                    self.keep(dir, of, out, total_ms, renders)?;
                }
                break;
            }
            let recorded = Instant::now();
            times.push(out.elapsed.as_secs_f64() * 1e3);
            let rendered = Rendered {
                study: job.study,
                run: job.run,
                repetition,
                scene: job.scene,
                params: job.params,
                spp: job.spp,
                report_spp: job.report_spp,
                total_ms,
                parts: renders,
            };
            let mut row = run_row(&self.origin, &rendered, &out);
            team::record_split(&mut row, &shares, merge);
            if self.keep_profiles
                && let Some(p) = &out.gpu
            {
                let (study, run) = (&job.study.name, job.run.index);
                tally.profiles.retain(|(s, r, _)| !(s == study && *r == run));
                tally.profiles.push((study.clone(), run, p.clone()));
            }
            row.runner_ms = recorded.elapsed().as_secs_f64() * 1e3;
            self.writer.send(Finished {
                row,
                profile: out.gpu,
                film: out.film,
                spp: out.spp,
                reference: self.references.get(&job.study.name).cloned(),
            })?;
            if renders > 1
                && let (Some(dir), Some(of)) = (self.kept_renders, &want)
            {
                dir.remove(&of.key)?;
            }
            self.progress.rendered(job.estimate_ms);
        }
        Ok(times)
    }

    /// What a kept render of `job`'s `repetition` must be part of, for a
    /// CPU back end where renders are kept; `None` otherwise.
    fn part_of(&self, job: &Job, repetition: u32) -> Option<PartOf> {
        self.kept_renders?;
        if !matches!(job.renderer.kind(), BackendKind::Cpu | BackendKind::CpuSerial) {
            return None;
        }
        Some(PartOf {
            key: PartKey {
                study: job.study.name.clone(),
                run: job.run.index,
                config: job.run.label.clone(),
                repetition,
            },
            width: job.params.width,
            height: job.params.height,
            spp: job.spp,
            source: self.origin.meta.source.clone(),
        })
    }

    /// Keeps the samples `0..out.spp` of `of`, a render a stop cut short,
    /// made in `n` renders, and says so.
    fn keep(&self, dir: &KeptRenders, of: PartOf, out: RenderOutput, total_ms: f64, n: u32) -> Result<(), RunError> {
        let part = Part {
            info: PartInfo {
                of,
                samples: out.spp,
                parts: n,
                elapsed_ms: out.elapsed.as_secs_f64() * 1e3,
                total_ms,
                rays: out.rays,
                invalid_samples: out.invalid_samples,
                film_hash: renderer::render::compare::film_hash(&out.film),
            },
            film: out.film,
        };
        let path = dir.keep(&part)?;
        let of = &part.info.of;
        self.progress.println(format!(
            "{} | {}: {} of {} spp kept in {}; `--resume` renders the rest",
            of.key.study,
            of.key.config,
            part.info.samples,
            of.spp,
            path.display()
        ));
        Ok(())
    }

    /// The timed render of `job`: its samples from `begin`, on a CPU back
    /// end that stops at a whole sample when `keepable` (its render is kept
    /// if a stop cuts it), otherwise [`Runs::render_spp`] of every sample.
    fn render_timed(&self, job: &Job, begin: u32, keepable: bool) -> Result<SplitOutput, RunError> {
        if !keepable {
            return self.render_spp(job, job.spp);
        }
        let samples = SampleRange { begin, end: job.spp };
        job.renderer
            .clone()
            .stopping_on(self.stop)
            .render_samples(job.scene, None, job.params, samples, &|_| {})
            .map(SplitOutput::alone)
            .map_err(|e| self.render_error(job, e))
    }

    /// One render of `spp` samples per pixel, on the run's GPU or split
    /// over its team (with each GPU's share of it). A configuration the GPU
    /// cannot launch (a block too large for the kernel's registers) or hold
    /// (a pool too large for its memory) is skipped with the reason; the
    /// GPU still works for the next one.
    fn render_spp(&self, job: &Job, spp: u32) -> Result<SplitOutput, RunError> {
        match &job.team {
            Some(team) => team.render(job.scene, job.params, spp),
            None => job
                .renderer
                .render_samples(
                    job.scene,
                    job.uploaded,
                    job.params,
                    SampleRange { begin: 0, end: spp },
                    &|_| {},
                )
                .map(SplitOutput::alone),
        }
        .map_err(|e| self.render_error(job, e))
    }

    /// A failed render as the runner treats it: a configuration the GPU
    /// cannot launch or hold is skipped; anything else ends the experiment.
    fn render_error(&self, job: &Job, e: anyhow::Error) -> RunError {
        match e.downcast_ref::<GpuError>() {
            Some(GpuError::Config { .. } | GpuError::OutOfMemory { .. }) => RunError::Skip(e.to_string()),
            _ => RunError::Abort(e.context(what(job.study, job.run))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse;
    use std::path::Path;

    #[test]
    fn the_ending_names_the_first_configuration_a_stop_left_and_the_first_error() {
        let text = "[experiment]\nname = \"t\"\n\n[[study]]\nname = \"a\"\nscenes = [\"scenes/cornell_smallpt.toml\"]\n\
                    backends = [\"cpu\"]\n\n[[study]]\nname = \"b\"\nscenes = [\"scenes/cornell_smallpt.toml\"]\n\
                    backends = [\"cpu\", \"cpu-serial\"]\n";
        let config = parse(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../x.toml")), text).unwrap();
        let plan: Vec<_> = config.studies.iter().map(|s| (s, s.runs())).collect();
        let (steps, _) = team::phases(&plan);
        assert_eq!(steps.len(), 3);
        let cut = |cut| WorkerEnd { error: None, cut };
        let ending = |taken, ends: Vec<WorkerEnd>, stopped| Ending::of(&steps, &AtomicUsize::new(taken), ends, stopped);
        let study = |e: Ending| match e {
            Ending::Stopped(study) => study,
            Ending::Complete => "complete".into(),
            Ending::Failed(e) => format!("failed: {e}"),
        };
        // Every configuration taken and made: complete, stopped or not.
        assert_eq!(study(ending(4, vec![cut(None), cut(None)], false)), "complete");
        assert_eq!(study(ending(4, vec![cut(None)], true)), "complete");
        // A stop during configuration 0 (study a) while another worker
        // made configuration 1: the earliest cut names the study.
        assert_eq!(study(ending(2, vec![cut(Some(1)), cut(Some(0))], true)), "a");
        // A stop before configuration 1 was taken: study b is unfinished.
        assert_eq!(study(ending(1, vec![cut(None)], true)), "b");
        let failed = WorkerEnd {
            error: Some(anyhow::anyhow!("the GPU fell off the bus")),
            cut: None,
        };
        assert_eq!(
            study(ending(2, vec![cut(Some(0)), failed], true)),
            "failed: the GPU fell off the bus"
        );
    }
}
