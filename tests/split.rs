//! A render split over several devices (`wavepath::render::split`), with
//! the devices emulated on the CPU: each a `cpu` or `cpu-wave` renderer on
//! a thread of its own, taking chunks of samples from the shared cursor.
//! However many devices, and however uneven their shares, the merged film
//! and its counters equal the one-device render's bit for bit; a slow
//! device takes fewer samples; a stop keeps every finished chunk of every
//! device, and the image is then a render of that many samples.

mod util;

use device::integrator::SampleRange;
use device::scene::{RenderParams, RenderView};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use util::seed_scene;
use wavepath::backend::{BackendKind, BackendOptions, Progress, RenderOutput};
use wavepath::prepared::PreparedScene;
use wavepath::render::split::{self, DeviceShare, SplitOutput};
use wavepath::render::{Overrides, Renderer, params_for};
use wavepath::settings::capacity::Capacity;
use wavepath::settings::nee::NeeMode;
use wavepath::settings::wave_config::WavefrontConfig;

/// One emulated device of `kind`: one thread, and for the wavefront a pool
/// small enough to be refilled many times.
fn device(kind: BackendKind) -> Renderer {
    let options = BackendOptions {
        threads: 1,
        wavefront: WavefrontConfig {
            capacity: Capacity::Slots(1024),
            ..WavefrontConfig::default()
        },
        ..BackendOptions::default()
    };
    Renderer::on(kind, options, None).expect("a CPU back end opens")
}

/// `name` at a small size, with next-event estimation as asked.
fn small(name: &str, spp: u32, nee: NeeMode) -> (PreparedScene, RenderParams) {
    let scene = seed_scene(name);
    let overrides = Overrides {
        size: Some((24, 16)),
        spp: Some(spp),
        nee: Some(nee),
        ..Overrides::default()
    };
    let (params, _) = params_for(&scene.scene, &overrides, RenderView::Radiance);
    (scene, params)
}

/// Splits `spp` samples of `scene` over `devices` emulated devices of
/// `kind`. No device renders before every device has taken its first
/// chunk (of one sample), so each renders at least one. `after_chunk(d)`
/// runs after each chunk device `d` renders.
fn split_render(
    kind: BackendKind,
    (scene, params, spp): (&PreparedScene, RenderParams, u32),
    devices: usize,
    stop: Option<&AtomicBool>,
    after_chunk: &(dyn Fn(usize) + Sync),
) -> SplitOutput {
    let renderer = device(kind);
    let names: Vec<String> = (0..devices).map(|d| format!("emulated device {d}")).collect();
    let everyone_started = Barrier::new(devices);
    split::render(&names, SampleRange { begin: 0, end: spp }, stop, &|_| {}, |d| {
        let (renderer, everyone_started) = (&renderer, &everyone_started);
        let mut first = true;
        Ok(move |samples: SampleRange, progress: Progress| {
            if std::mem::take(&mut first) {
                everyone_started.wait();
            }
            let out = renderer.render_samples(scene, None, params, samples, progress);
            after_chunk(d);
            out
        })
    })
    .expect("the split renders")
}

/// The one-device render of `spp` samples.
fn alone(kind: BackendKind, scene: &PreparedScene, params: RenderParams, spp: u32) -> RenderOutput {
    device(kind).render(scene, params, spp, &|_| {}).expect("the render")
}

fn assert_same_render(split: &RenderOutput, alone: &RenderOutput, what: &str) {
    assert_eq!(split.spp, alone.spp, "{what}: samples per pixel");
    assert!(
        split.film == alone.film,
        "{what}: the merged film differs from the one-device film"
    );
    assert_eq!(split.rays, alone.rays, "{what}: rays");
    assert_eq!(split.invalid_samples, alone.invalid_samples, "{what}: invalid samples");
}

fn total_spp(shares: &[DeviceShare]) -> u32 {
    shares.iter().map(|s| s.spp).sum()
}

#[test]
fn a_split_over_one_two_or_three_devices_renders_the_one_device_film_bit_for_bit() {
    let cases = [
        (BackendKind::Cpu, "cornell_diffuse", NeeMode::Off),
        (BackendKind::Cpu, "cornell_smallpt", NeeMode::On),
        (BackendKind::CpuWave, "cornell_diffuse", NeeMode::Off),
        (BackendKind::CpuWave, "cs500", NeeMode::On),
    ];
    let spp = 7;
    for (kind, name, nee) in cases {
        let (scene, params) = small(name, spp, nee);
        let reference = alone(kind, &scene, params, spp);
        assert!(reference.film.iter().any(|p| p.r + p.g + p.b > 0), "{name}: black");
        for devices in 1..=3 {
            let what = format!("{name} on {devices} emulated {} devices", kind.label());
            let out = split_render(kind, (&scene, params, spp), devices, None, &|_| {});
            assert_same_render(&out.output, &reference, &what);
            assert_eq!(out.shares.len(), devices, "{what}");
            assert!(
                out.shares.iter().all(|s| s.spp >= 1 && s.chunks >= 1),
                "{what}: {:?}",
                out.shares
            );
            assert_eq!(total_spp(&out.shares), spp, "{what}");
            assert_eq!(out.shares.iter().map(|s| s.rays).sum::<u64>(), reference.rays, "{what}");
        }
    }
    // The emulated wavefront's film is the CPU's too.
    let (scene, params) = small("cornell_diffuse", spp, NeeMode::Off);
    let out = split_render(BackendKind::CpuWave, (&scene, params, spp), 2, None, &|_| {});
    assert_same_render(
        &out.output,
        &alone(BackendKind::Cpu, &scene, params, spp),
        "cpu-wave split vs cpu",
    );
}

#[test]
fn a_slow_device_takes_fewer_samples_and_the_film_is_unchanged() {
    let spp = 32;
    let (scene, params) = small("cornell_diffuse", spp, NeeMode::Off);
    let slow = |d: usize| {
        if d == 1 {
            std::thread::sleep(Duration::from_millis(300));
        }
    };
    let out = split_render(BackendKind::Cpu, (&scene, params, spp), 2, None, &slow);
    assert_same_render(
        &out.output,
        &alone(BackendKind::Cpu, &scene, params, spp),
        "slow device",
    );
    let (fast, slow) = (&out.shares[0], &out.shares[1]);
    assert!(
        slow.spp < fast.spp && slow.chunks < fast.chunks,
        "the slow device took {} spp in {} chunks, the fast one {} in {}",
        slow.spp,
        slow.chunks,
        fast.spp,
        fast.chunks
    );
    assert!(slow.busy >= Duration::from_millis(300), "{slow:?}");
}

#[test]
fn a_stop_keeps_every_finished_chunk_of_every_device() {
    let spp = 64;
    let (scene, params) = small("cornell_diffuse", spp, NeeMode::Off);
    // A stop before the start: each device renders the one chunk it took
    // (a sample each), and the image is the render of three samples.
    let stop = AtomicBool::new(true);
    let out = split_render(BackendKind::Cpu, (&scene, params, spp), 3, Some(&stop), &|_| {});
    assert_eq!(out.output.spp, 3);
    assert!(
        out.shares.iter().all(|s| (s.spp, s.chunks) == (1, 1)),
        "{:?}",
        out.shares
    );
    assert_same_render(
        &out.output,
        &alone(BackendKind::Cpu, &scene, params, 3),
        "stopped at once",
    );

    // A stop after device 0's second chunk: the chunks in flight finish,
    // and whatever every device finished is a render of that many samples.
    let stop = AtomicBool::new(false);
    let chunks_of_0 = std::sync::atomic::AtomicU32::new(0);
    let stop_after_two = |d: usize| {
        if d == 0 && chunks_of_0.fetch_add(1, Ordering::SeqCst) == 1 {
            stop.store(true, Ordering::SeqCst);
        }
    };
    let out = split_render(BackendKind::Cpu, (&scene, params, spp), 2, Some(&stop), &stop_after_two);
    let done = out.output.spp;
    assert_eq!(out.shares[0].chunks, 2, "device 0 stopped after its second chunk");
    assert_eq!(total_spp(&out.shares), done);
    assert!(out.shares.iter().all(|s| s.spp >= 1), "{:?}", out.shares);
    assert_same_render(
        &out.output,
        &alone(BackendKind::Cpu, &scene, params, done),
        "stopped mid-way",
    );
}

#[test]
fn a_failing_device_ends_the_split_with_its_error() {
    let (scene, params) = small("cornell_diffuse", 8, NeeMode::Off);
    let renderer = device(BackendKind::Cpu);
    let names = ["good".to_string(), "broken".to_string()];
    let result = split::render(&names, SampleRange { begin: 0, end: 8 }, None, &|_| {}, |d| {
        let renderer = &renderer;
        let scene = &scene;
        Ok(move |samples: SampleRange, progress: Progress| {
            anyhow::ensure!(d == 0, "the device fell off the bus");
            renderer.render_samples(scene, None, params, samples, progress)
        })
    });
    let e = format!("{:#}", result.expect_err("the broken device fails the split"));
    assert!(
        e.contains("rendering on broken") && e.contains("fell off the bus"),
        "{e}"
    );
}

#[test]
fn the_imbalance_is_the_busiest_device_over_the_mean() {
    assert!((split::imbalance(&[1.0, 3.0]) - 0.5).abs() < 1e-12);
    assert!(split::imbalance(&[0.7, 0.7, 0.7]).abs() < 1e-12);
    assert!(split::imbalance(&[]).abs() < 1e-12);
    let share = |busy_ms| DeviceShare {
        busy: Duration::from_millis(busy_ms),
        ..DeviceShare::default()
    };
    let text = split::describe(&[share(1000), share(3000)], Duration::from_millis(4));
    assert!(text.contains("load imbalance: 50.0 %"), "{text}");
    assert!(text.contains("merge of the devices' films: 0.004 s"), "{text}");
    assert!(split::describe(&[], Duration::ZERO).is_empty());
}

#[test]
fn each_device_says_where_its_time_went_besides_its_chunks() {
    let spp = 24;
    let (scene, params) = small("cornell_diffuse", spp, NeeMode::Off);
    let renderer = device(BackendKind::Cpu);
    let names: Vec<String> = (0..2).map(|d| format!("emulated device {d}")).collect();
    // Device 1 takes 200 ms to set up, so device 0 renders most samples.
    let out = split::render(&names, SampleRange { begin: 0, end: spp }, None, &|_| {}, |d| {
        std::thread::sleep(Duration::from_millis(200 * d as u64));
        let (renderer, scene) = (&renderer, &scene);
        Ok(move |samples: SampleRange, progress: Progress| {
            renderer.render_samples(scene, None, params, samples, progress)
        })
    })
    .expect("the split renders");
    assert_same_render(
        &out.output,
        &alone(BackendKind::Cpu, &scene, params, spp),
        "a device slow to set up",
    );
    let times: Vec<_> = out
        .shares
        .iter()
        .map(|s| s.times.expect("a split device's times"))
        .collect();
    assert!(times[1].setup >= Duration::from_millis(200), "{:?}", times[1]);
    assert!(times[0].setup < Duration::from_millis(200), "{:?}", times[0]);
    for (share, t) in out.shares.iter().zip(&times) {
        assert!(t.first_chunk <= share.busy, "{share:?}");
        assert_eq!(
            (t.alloc, t.readback),
            (Duration::ZERO, Duration::ZERO),
            "no GPU profile on the host"
        );
        assert!(
            t.setup + share.busy + t.film_add + t.idle <= out.output.elapsed,
            "{share:?}"
        );
    }
    // The last device to finish did not wait for another.
    assert!(times.iter().any(|t| t.idle < Duration::from_millis(20)), "{times:?}");
    let text = split::describe(&out.shares, out.merge);
    assert!(text.contains("    setup 0.2"), "{text}");
}
