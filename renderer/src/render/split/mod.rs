//! One image over several devices (`--devices`): one worker thread per
//! device, each with its own context and stream and a
//! [`DeviceFilmSum`](crate::render::film_sum::DeviceFilmSum) that
//! keeps its sum where it renders (the scene uploaded, the film and path
//! pool allocated once per device), takes chunks of samples from the shared
//! cursor of [`super::chunks`]; the sums are read back once each and merged
//! at the end. A device ready after the first joins only when that saves
//! more than its film costs ([`Join`]), so a short render stays on one.
//!
//! The merge is exact: films are 64-bit fixed point ([`FixedRgb`](device::film::FixedRgb)), so
//! adding them is integer addition, associative and commutative, and the
//! counters (rays, invalid samples) are sums as well. Whatever the number
//! of devices, their speeds and the order chunks finish in, the merged
//! film, its rays and its invalid samples equal the one-device render's,
//! bit for bit.
//!
//! A stop request (Ctrl-C) is seen between chunks: no device takes a new
//! chunk, the chunks in flight finish, and every finished sample of every
//! device is kept. The chunks were handed out in order, so the finished
//! samples are `0..n` and the image equals a render asked for `n` samples,
//! as a stopped one-device render does.
//!
//! The devices need not be GPUs: [`render_devices`] takes any
//! [`SplitDevice`], which is how the tests run the split over several
//! emulated devices on the CPU (sums of the `cpu` and `cpu-wave` back
//! ends).
//!
//! In parts: `opening` opens the GPUs ([`open`]), `workers` runs one
//! thread per device and merges their sums ([`render_devices`]),
//! `join_rule` decides whether a device joins ([`Join`]), `output` holds
//! what the split produced ([`SplitOutput`]) and `description` says how
//! it went ([`describe`]).

mod description;
mod join_rule;
mod opening;
mod output;
mod split_device;
mod workers;

pub use description::{describe, imbalance};
pub use join_rule::Join;
pub use opening::open;
pub use output::{DeviceShare, ShareTimes, SplitOutput};
pub use split_device::SplitDevice;
pub use workers::render_devices;

use crate::backend::ProgressCallback;
use crate::backend::gpu::buffers::DeviceScene;
use crate::prepared::PreparedScene;
use crate::render::Renderer;
use device::integrator::SampleRange;
use device::scene::RenderParams;
use std::sync::atomic::AtomicBool;

/// Films a render on `devices` devices holds in host memory at once, at
/// most: the one film, or per device its sum read back and, for a sum kept
/// on the host, the chunk it just rendered (the merge adds into one of
/// the sums).
pub fn host_films(devices: usize) -> u64 {
    match devices {
        0 | 1 => 1,
        n => 2 * n as u64,
    }
}

/// Renders the sample indices `samples` of `scene` split over `renderers`
/// (GPU back ends, or host ones standing in for devices), each in a worker
/// thread of its own ([`render_devices`]) bound to its GPU, GPU `d`
/// reading the scene that `uploads[d]` holds there (uploaded beforehand,
/// so that the render's time leaves the upload out, as a one-GPU render's
/// does in an experiment; `None`: each uploads it). A set `stop` ends the
/// split between chunks; each chunk runs to its end.
pub fn render(
    renderers: &[Renderer],
    uploads: Option<&[DeviceScene]>,
    scene: &PreparedScene,
    (params, samples): (RenderParams, SampleRange),
    stop: Option<&AtomicBool>,
    progress: ProgressCallback,
) -> anyhow::Result<SplitOutput> {
    if let Some(uploads) = uploads {
        anyhow::ensure!(
            uploads.len() == renderers.len(),
            "internal: {} uploads for {} devices",
            uploads.len(),
            renderers.len()
        );
    }
    // Each chunk runs to its end: the split sees the stop between chunks.
    let devices: Vec<Renderer> = renderers.iter().map(|r| r.clone().stopping_on(None)).collect();
    let rule = devices.first().map(|r| r.options().split).unwrap_or_default();
    workers::render_devices(&opening::device_names(&devices), samples, stop, progress, rule, |d| {
        let renderer = &devices[d];
        if let Some(gpu) = renderer.gpu() {
            gpu.bind_to_thread()?;
        }
        renderer.open_sum(scene, uploads.map(|u| &u[d]), params, samples)
    })
}
