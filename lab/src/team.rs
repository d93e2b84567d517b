//! Runs whose image several GPUs render together (`gpus` > 1): the first
//! `gpus` GPUs of the experiment's list (those of `--devices`, or ordinals
//! 0 to N−1) split each image's samples ([`renderer::render::split`]), the
//! merged film bit-identical to one GPU's.
//!
//! Such a run never shares a GPU: the runner makes every other run first
//! (spread over the GPUs where `--devices` asks for it), then these, one
//! after another ([`phases`]). Its scene is uploaded to each of its GPUs
//! before the first render, outside the timed renders, as a one-GPU run's
//! is, and its rows record the split's imbalance.

use super::config::{PlannedRun, Study};
use super::params::RunSpec;
use super::records::RunRow;
use device::integrator::SampleRange;
use device::scene::RenderParams;
use renderer::backend::gpu::Gpu;
use renderer::backend::gpu::buffers::DeviceScene;
use renderer::prepared::PreparedScene;
use renderer::render::Renderer;
use renderer::render::split::{self, DeviceShare, ShareTimes, SplitOutput, imbalance};
use std::time::Duration;

/// A run and its study, as the runner makes it.
pub type PlanStep<'p> = (&'p Study, &'p PlannedRun);

/// The runs of `plan` in two phases, each in plan order: first those of
/// one GPU or of the host, then those of several GPUs (which must have
/// their GPUs to themselves).
pub fn phases<'p>(plan: &'p [(&'p Study, Vec<PlannedRun>)]) -> (Vec<PlanStep<'p>>, Vec<PlanStep<'p>>) {
    plan.iter()
        .flat_map(|(study, runs)| runs.iter().map(move |run| (*study, run)))
        .partition(|(_, run)| run.spec.gpus <= 1)
}

/// The most GPUs a GPU run of `plan` renders on, and the first study that
/// asks for that many (1 and `None` when none asks for more than one).
pub fn most_gpus<'p>(plan: &'p [(&'p Study, Vec<PlannedRun>)]) -> (u32, Option<&'p str>) {
    let mut most = (1, None);
    for (study, runs) in plan {
        for run in runs.iter().filter(|r| r.spec.backend.is_gpu()) {
            if run.spec.gpus > most.0 {
                most = (run.spec.gpus, Some(study.name.as_str()));
            }
        }
    }
    most
}

/// Checks that the `available` GPUs of `source` (the host, or `--devices`)
/// are enough for the run of `plan` that asks for the most.
pub fn check_enough(plan: &[(&Study, Vec<PlannedRun>)], available: usize, source: &str) -> anyhow::Result<()> {
    if let (need, Some(study)) = most_gpus(plan)
        && available < need as usize
    {
        anyhow::bail!(
            "study `{study}` renders images on gpus = {need} GPUs together, and {source} {} only {available}: \
             run on a host with {need} GPUs, or leave the study out (--only)",
            if source == "--devices" { "names" } else { "has" }
        );
    }
    Ok(())
}

/// The GPUs `spec` renders one image on, when it is several: the first
/// `gpus` of `list`. `None` for a run of one GPU or of the host; an error
/// when `list` is shorter.
pub fn gpus_for<'g>(spec: &RunSpec, list: &'g [Gpu]) -> Result<Option<&'g [Gpu]>, String> {
    if !spec.backend.is_gpu() || spec.gpus <= 1 {
        return Ok(None);
    }
    list.get(..spec.gpus as usize).map(Some).ok_or_else(|| {
        format!(
            "gpus = {}: only {} GPU{} opened for this experiment",
            spec.gpus,
            list.len(),
            if list.len() == 1 { " was" } else { "s were" }
        )
    })
}

/// A run's GPUs: one renderer per GPU, each with the scene uploaded there.
pub struct Team<'s> {
    renderers: Vec<Renderer>,
    uploads: &'s [DeviceScene],
}

impl<'s> Team<'s> {
    /// The back end of `spec` on each of `gpus`, reading the scene from
    /// `uploads` (one per GPU, in the same order).
    pub fn new(spec: &RunSpec, gpus: &[Gpu], uploads: &'s [DeviceScene]) -> anyhow::Result<Self> {
        anyhow::ensure!(
            uploads.len() >= gpus.len(),
            "internal: the scene is on {} of the {} GPUs",
            uploads.len(),
            gpus.len()
        );
        let renderers = gpus
            .iter()
            .map(|gpu| Renderer::on(spec.backend, spec.options, Some(gpu)))
            .collect::<anyhow::Result<_>>()?;
        Ok(Team {
            renderers,
            uploads: &uploads[..gpus.len()],
        })
    }

    /// Renders `spp` samples per pixel of `scene` split over the team.
    pub fn render(&self, scene: &PreparedScene, params: RenderParams, spp: u32) -> anyhow::Result<SplitOutput> {
        let samples = SampleRange { begin: 0, end: spp };
        split::render(
            &self.renderers,
            Some(self.uploads),
            scene,
            (params, samples),
            None,
            &|_| {},
        )
    }
}

/// Records a split render's devices in its row: their load imbalance (the
/// busiest's time over the mean, less one), each one's samples per pixel,
/// busy time and where its other time went, in the team's order, and the
/// merge. Nothing for a render on one device (no shares).
pub fn record_split(row: &mut RunRow, shares: &[DeviceShare], merge: Duration) {
    if shares.is_empty() {
        return;
    }
    let busy: Vec<f64> = shares.iter().map(|s| s.busy.as_secs_f64()).collect();
    row.split_imbalance = Some(imbalance(&busy));
    row.split_spp = shares.iter().map(|s| s.spp.to_string()).collect::<Vec<_>>().join(" ");
    row.split_busy_ms = ms_list(shares.iter().map(|s| s.busy));
    if let Some(times) = shares.iter().map(|s| s.times).collect::<Option<Vec<ShareTimes>>>() {
        let each = |part: fn(&ShareTimes) -> Duration| ms_list(times.iter().map(part));
        row.split_setup_ms = each(|t| t.setup);
        row.split_first_ms = each(|t| t.first_chunk);
        row.split_readback_ms = each(|t| t.readback);
        row.split_idle_ms = each(|t| t.idle);
        row.split_merge_ms = Some(merge.as_secs_f64() * 1e3);
    }
}

/// Times in ms with three decimals, space-separated: a per-GPU cell.
fn ms_list(times: impl Iterator<Item = Duration>) -> String {
    times
        .map(|t| format!("{:.3}", t.as_secs_f64() * 1e3))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse;
    use renderer::backend::BackendKind;
    use std::path::Path;

    fn config(gpus: &str) -> crate::config::Config {
        let text = format!(
            "[experiment]\nname = \"t\"\n\n[[study]]\nname = \"s\"\nscenes = [\"scenes/cornell_smallpt.toml\"]\n\
             backends = [\"cpu\", \"gpu-mega\", \"gpu-wave\"]\nsweep = {{ gpus = {gpus} }}\n\n\
             [[study]]\nname = \"u\"\nscenes = [\"scenes/cornell_smallpt.toml\"]\nbackends = [\"gpu-mega\"]\n"
        );
        parse(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../x.toml")), &text).unwrap()
    }

    #[test]
    fn runs_of_several_gpus_come_after_every_other_run() {
        let c = config("[2, 1]");
        let plan: Vec<_> = c.studies.iter().map(|s| (s, s.runs())).collect();
        let (first, then) = phases(&plan);
        let labels = |steps: &[PlanStep]| {
            steps
                .iter()
                .map(|(s, r)| format!("{} {}", s.name, r.label))
                .collect::<Vec<_>>()
        };
        // The CPU's run is made once: `gpus` does not concern it.
        assert_eq!(
            labels(&first),
            ["s cpu", "s gpu-mega gpus=1", "s gpu-wave gpus=1", "u gpu-mega"]
        );
        assert_eq!(labels(&then), ["s gpu-mega gpus=2", "s gpu-wave gpus=2"]);
        assert_eq!(most_gpus(&plan), (2, Some("s")));
        assert!(check_enough(&plan, 2, "this host").is_ok());
        let e = check_enough(&plan, 1, "--devices").unwrap_err().to_string();
        assert!(
            e.contains("study `s`") && e.contains("gpus = 2") && e.contains("--devices names only 1"),
            "{e}"
        );
    }

    #[test]
    fn a_plan_of_one_gpu_per_run_needs_no_team() {
        let c = config("[1]");
        let plan: Vec<_> = c.studies.iter().map(|s| (s, s.runs())).collect();
        assert_eq!(most_gpus(&plan), (1, None));
        assert!(check_enough(&plan, 0, "this host").is_ok());
        assert!(phases(&plan).1.is_empty());
        let mut spec = plan[0].1[1].spec.clone();
        assert_eq!(spec.backend, BackendKind::GpuMega);
        assert!(gpus_for(&spec, &[]).unwrap().is_none());
        spec.gpus = 2;
        let e = gpus_for(&spec, &[]).err().unwrap();
        assert!(e.contains("gpus = 2: only 0 GPUs were opened"), "{e}");
    }

    #[test]
    fn a_split_row_records_each_device_in_order_and_the_imbalance() {
        let share = |spp, ms: u64| DeviceShare {
            device: String::new(),
            chunks: 1,
            spp,
            rays: 0,
            busy: Duration::from_micros(ms * 1000),
            times: Some(ShareTimes {
                setup: Duration::from_micros(1500),
                first_chunk: Duration::from_millis(ms / 10),
                idle: Duration::from_millis(300 - ms),
                ..ShareTimes::default()
            }),
        };
        let mut row = RunRow::default();
        record_split(&mut row, &[], Duration::ZERO);
        assert_eq!(
            (row.split_imbalance, row.split_spp.as_str()),
            (None, ""),
            "one device: nothing"
        );
        // 300 ms and 100 ms busy: the mean is 200 ms, the busiest 1.5 times it.
        record_split(&mut row, &[share(48, 300), share(16, 100)], Duration::from_micros(2500));
        assert_eq!(row.split_spp, "48 16");
        assert_eq!(row.split_busy_ms, "300.000 100.000");
        assert_eq!(row.split_setup_ms, "1.500 1.500");
        assert_eq!(row.split_first_ms, "30.000 10.000");
        assert_eq!(row.split_idle_ms, "0.000 200.000");
        assert_eq!(row.split_readback_ms, "0.000 0.000");
        assert_eq!(row.split_merge_ms, Some(2.5));
        assert!((row.split_imbalance.unwrap() - 0.5).abs() < 1e-12);
    }
}
