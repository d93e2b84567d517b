//! Opening the devices of a split: the back end on each GPU that
//! `--devices` names, all at once, and the names the devices go by.

use crate::backend::BackendOptions;
use crate::backend::gpu::Gpu;
use crate::render::Renderer;
use crate::settings::backend::{BackendChoice, BackendKind};
use crate::settings::devices::Devices;
use anyhow::{Context, anyhow};

/// Opens the back end `choice` on each GPU that `devices` names.
/// `--devices` picks GPUs: `auto` is the megakernel, and a machine without
/// a usable GPU is an error that says so (a back end that renders on the
/// host is refused `--devices` before: `settings::scope::check_flags`).
pub fn open(choice: BackendChoice, options: BackendOptions, devices: &Devices) -> anyhow::Result<Vec<Renderer>> {
    let kind = match choice {
        BackendChoice::Auto => BackendKind::GpuMega,
        BackendChoice::Exactly(kind) => kind,
    };
    let present = Gpu::count().with_context(|| {
        format!(
            "--devices picks GPUs for the {} back end, and none can be used here; \
             `--backend cpu` without --devices renders on the host",
            kind.label()
        )
    })?;
    let ordinals = devices.ordinals(present).map_err(|e| anyhow!(e))?;
    // Each GPU's context and first module load at once, on threads of
    // their own: the opening takes the slowest GPU's time, not their sum.
    let opened: Vec<anyhow::Result<Renderer>> = std::thread::scope(|s| {
        let openings: Vec<_> = ordinals
            .iter()
            .map(|&d| {
                s.spawn(move || {
                    let gpu = Gpu::open(d).with_context(|| format!("opening GPU {d}"))?;
                    Renderer::on(kind, options, Some(&gpu))
                })
            })
            .collect();
        openings
            .into_iter()
            .map(|o| o.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    opened.into_iter().collect()
}

/// The devices' names in summaries: `GPU 1 (NVIDIA H200)`; a host back
/// end alone as its name (`cpu`: an MPI rank's share then reads `rank 1
/// on node7 (cpu)`), several numbered (`host worker 2 (cpu)`).
pub(super) fn device_names(renderers: &[Renderer]) -> Vec<String> {
    renderers
        .iter()
        .enumerate()
        .map(|(i, r)| match r.gpu() {
            Some(gpu) => format!("GPU {} ({})", gpu.info().ordinal, gpu.info().name),
            None if renderers.len() == 1 => r.kind().label().to_string(),
            None => format!("host worker {i} ({})", r.kind().label()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::description::devices_label;
    use super::*;

    #[test]
    fn host_devices_read_naturally_alone_and_numbered_together() {
        let cpu = Renderer::new(BackendKind::Cpu, BackendOptions::default()).unwrap();
        let one = device_names(std::slice::from_ref(&cpu));
        assert_eq!(one, ["cpu"]);
        assert_eq!(devices_label(&one), "cpu");
        let two = device_names(&[cpu.clone(), cpu]);
        assert_eq!(two, ["host worker 0 (cpu)", "host worker 1 (cpu)"]);
        assert_eq!(
            devices_label(&two),
            "2 devices: host worker 0 (cpu), host worker 1 (cpu)"
        );
    }
}
