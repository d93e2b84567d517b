//! A render split over several devices (`renderer::render::split`), with
//! the devices emulated on the CPU: each a `cpu` or `cpu-wave` back end's
//! sum on a thread of its own, taking chunks of samples from the shared
//! cursor. However many devices, and however uneven their shares, the
//! merged film and its counters equal the one-device render's bit for bit;
//! a device that keeps its sum (and the wavefront its pool) across chunks renders
//! the film of one render; a slow device takes fewer samples; a device
//! joins only when that pays, and a short render stays on one; the devices
//! finish together; a stop keeps every finished chunk of every device, and
//! the image is then a render of that many samples.

mod util;

use device::integrator::SampleRange;
use device::scene::{RenderParams, RenderView};
use renderer::backend::{BackendKind, BackendOptions, ProgressCallback, RenderOutput};
use renderer::prepared::PreparedScene;
use renderer::render::film_sum::DeviceFilmSum;
use renderer::render::split::{self, DeviceShare, SplitDevice, SplitOutput};
use renderer::render::{Overrides, Renderer, params_for};
use renderer::settings::capacity::Capacity;
use renderer::settings::devices::SplitRule;
use renderer::settings::nee::NeeMode;
use renderer::settings::wave_config::WavefrontConfig;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use util::seed_scene;

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

/// An emulated device's sum, paced like a slower device: each chunk takes
/// `per_sample` longer per sample; `after_chunk` runs after each; reading
/// the sum back (or finishing it) takes `readback` longer.
struct Paced<'a> {
    sum: DeviceFilmSum<'a>,
    per_sample: Duration,
    readback: Duration,
    after_chunk: &'a (dyn Fn() + Sync),
}

impl SplitDevice for Paced<'_> {
    fn render(&mut self, samples: SampleRange, progress: ProgressCallback) -> anyhow::Result<u32> {
        std::thread::sleep(self.per_sample * (samples.end - samples.begin));
        let spp = self.sum.render(samples, progress)?;
        (self.after_chunk)();
        Ok(spp)
    }

    fn read_back(&mut self) -> anyhow::Result<RenderOutput> {
        std::thread::sleep(self.readback);
        self.sum.read_back()
    }

    fn finish(self) -> anyhow::Result<RenderOutput> {
        std::thread::sleep(self.readback);
        self.sum.finish()
    }
}

/// How each emulated device of a split is paced: (time per sample, time
/// added to a readback), by device.
type Pace = dyn Fn(usize) -> (Duration, Duration) + Sync;

/// Splits `spp` samples of `scene` over `devices` emulated devices of
/// `kind`, paced by `pace`. `after_chunk(d)` runs after each chunk device
/// `d` renders.
fn split_render(
    kind: BackendKind,
    (scene, params, spp): (&PreparedScene, RenderParams, u32),
    (devices, pace): (usize, &Pace),
    stop: Option<&AtomicBool>,
    after_chunk: &(dyn Fn(usize) + Sync),
) -> SplitOutput {
    let renderer = device(kind);
    let names: Vec<String> = (0..devices).map(|d| format!("emulated device {d}")).collect();
    let hooks: Vec<Box<dyn Fn() + Sync>> = (0..devices)
        .map(|d| Box::new(move || after_chunk(d)) as Box<dyn Fn() + Sync>)
        .collect();
    let samples = SampleRange { begin: 0, end: spp };
    split::render_devices(&names, samples, stop, &|_| {}, SplitRule::Paying, |d| {
        let (per_sample, readback) = pace(d);
        Ok(Paced {
            sum: renderer.open_sum(scene, None, params, samples)?,
            per_sample,
            readback,
            after_chunk: &*hooks[d],
        })
    })
    .expect("the split renders")
}

/// Every device 2 ms a sample: long enough that each joins.
fn steady(_: usize) -> (Duration, Duration) {
    (Duration::from_millis(2), Duration::ZERO)
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
fn a_device_sum_adds_its_chunks_into_the_film_of_one_render() {
    for (kind, name, nee) in [
        (BackendKind::Cpu, "cornell_smallpt", NeeMode::On),
        (BackendKind::CpuWave, "cornell_diffuse", NeeMode::Off),
        (BackendKind::CpuWave, "cs500", NeeMode::On),
    ] {
        let (scene, params) = small(name, 9, nee);
        let renderer = device(kind);
        let mut sum = renderer
            .open_sum(&scene, None, params, SampleRange { begin: 0, end: 9 })
            .expect("the sum opens");
        // The wavefront's pool (1024 slots) is refilled within each chunk,
        // and zeroed between them; its film and counters are kept.
        for (begin, end) in [(0, 3), (3, 4), (4, 9)] {
            assert_eq!(sum.render(SampleRange { begin, end }, &|_| {}).unwrap(), end - begin);
        }
        let summed = sum.read_back().unwrap();
        assert_same_render(
            &summed,
            &alone(kind, &scene, params, 9),
            &format!("{name} on {}", kind.label()),
        );
        assert_eq!(
            sum.read_back().unwrap().film,
            summed.film,
            "reading back leaves the sum as it was"
        );
    }
}

#[test]
fn a_split_over_one_two_or_three_devices_renders_the_one_device_film_bit_for_bit() {
    let cases = [
        (BackendKind::Cpu, "cornell_diffuse", NeeMode::Off),
        (BackendKind::Cpu, "cornell_smallpt", NeeMode::On),
        (BackendKind::CpuWave, "cornell_diffuse", NeeMode::Off),
        (BackendKind::CpuWave, "cs500", NeeMode::On),
    ];
    let spp = 24;
    for (kind, name, nee) in cases {
        let (scene, params) = small(name, spp, nee);
        let reference = alone(kind, &scene, params, spp);
        assert!(reference.film.iter().any(|p| p.r + p.g + p.b > 0), "{name}: black");
        for devices in 1..=3 {
            let what = format!("{name} on {devices} emulated {} devices", kind.label());
            let out = split_render(kind, (&scene, params, spp), (devices, &steady), None, &|_| {});
            assert_same_render(&out.output, &reference, &what);
            assert_eq!(out.shares.len(), devices, "{what}");
            // A render this long pays for a second device at least (a
            // third may find the samples gone by the time it is ready).
            let rendered = out.shares.iter().filter(|s| s.chunks >= 1).count();
            assert!(rendered >= devices.min(2), "{what}: {:?}", out.shares);
            assert_eq!(total_spp(&out.shares), spp, "{what}");
            assert_eq!(out.shares.iter().map(|s| s.rays).sum::<u64>(), reference.rays, "{what}");
        }
    }
    // The emulated wavefront's film is the CPU's too.
    let (scene, params) = small("cornell_diffuse", spp, NeeMode::Off);
    let out = split_render(BackendKind::CpuWave, (&scene, params, spp), (2, &steady), None, &|_| {});
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
    let pace = |d: usize| (Duration::from_millis(if d == 1 { 12 } else { 2 }), Duration::ZERO);
    let out = split_render(BackendKind::Cpu, (&scene, params, spp), (2, &pace), None, &|_| {});
    assert_same_render(
        &out.output,
        &alone(BackendKind::Cpu, &scene, params, spp),
        "slow device",
    );
    let (fast, slow) = (&out.shares[0], &out.shares[1]);
    assert!(
        slow.spp < fast.spp,
        "the slow device took {} spp in {} chunks, the fast one {} in {}",
        slow.spp,
        slow.chunks,
        fast.spp,
        fast.chunks
    );
}

#[test]
fn a_short_render_stays_on_one_device_when_another_would_not_pay_for_its_film() {
    let spp = 64;
    let (scene, params) = small("cornell_diffuse", spp, NeeMode::Off);
    let reference = alone(BackendKind::Cpu, &scene, params, spp);
    // Device 1 is ready 20 ms after device 0, and its film takes 300 ms to
    // read back. About 0.1 s of work at 1 ms a sample would save it ~50 ms:
    // it stays out.
    let costly_film = |d: usize| (Duration::from_millis(1), Duration::from_millis(300 * d as u64));
    let out = split_late((&scene, params, spp), &costly_film, SplitRule::Paying, None);
    assert_same_render(&out.output, &reference, "kept on one device");
    let (first, second) = (&out.shares[0], &out.shares[1]);
    assert_eq!((first.spp, second.spp, second.chunks), (spp, 0, 0), "{:?}", out.shares);
    let join = second
        .times
        .and_then(|t| t.left_out)
        .expect("device 1 decided to stay out");
    assert!(
        join.cost >= Duration::from_millis(300) && join.gain < join.cost,
        "{join:?}"
    );
    let text = split::describe(&out.shares, out.merge);
    assert!(
        text.contains("stayed out") && text.contains("kept on one device"),
        "{text}"
    );

    // At 25 ms a sample, the same render is long enough to pay for it.
    let slow_work = |d: usize| (Duration::from_millis(25), Duration::from_millis(300 * d as u64));
    let out = split_late((&scene, params, spp), &slow_work, SplitRule::Paying, None);
    assert_same_render(&out.output, &reference, "split");
    assert!(out.shares.iter().all(|s| s.chunks >= 1), "{:?}", out.shares);
    assert!(out.shares[1].times.unwrap().left_out.is_none());

    // `--split-all`: the short render on both, whatever it costs.
    let out = split_late((&scene, params, spp), &costly_film, SplitRule::Every, None);
    assert_same_render(&out.output, &reference, "split on every device");
    assert!(out.shares.iter().all(|s| s.chunks >= 1), "{:?}", out.shares);
    assert!(out.shares[1].times.unwrap().readback >= Duration::from_millis(300));
}

/// `spp` samples of `scene` over two emulated `cpu` devices paced by
/// `pace`, device 1 set up 20 ms after device 0, admitted by `rule`,
/// stopping on `stop`.
fn split_late(
    (scene, params, spp): (&PreparedScene, RenderParams, u32),
    pace: &Pace,
    rule: SplitRule,
    stop: Option<&AtomicBool>,
) -> SplitOutput {
    let renderer = device(BackendKind::Cpu);
    let names: Vec<String> = (0..2).map(|d| format!("emulated device {d}")).collect();
    let samples = SampleRange { begin: 0, end: spp };
    split::render_devices(&names, samples, stop, &|_| {}, rule, |d| {
        std::thread::sleep(Duration::from_millis(20 * d as u64));
        let (per_sample, readback) = pace(d);
        Ok(Paced {
            sum: renderer.open_sum(scene, None, params, samples)?,
            per_sample,
            readback,
            after_chunk: &|| {},
        })
    })
    .expect("the split renders")
}

#[test]
fn devices_of_equal_speed_finish_together() {
    let spp = 96;
    let (scene, params) = small("cornell_diffuse", spp, NeeMode::Off);
    let out = split_render(BackendKind::CpuWave, (&scene, params, spp), (2, &steady), None, &|_| {});
    assert_same_render(
        &out.output,
        &alone(BackendKind::CpuWave, &scene, params, spp),
        "two steady devices",
    );
    // The chunks shrink towards the end, so neither device waits long
    // for the other: each idles under a quarter of the render.
    let elapsed = out.output.elapsed;
    for share in &out.shares {
        let t = share.times.expect("a split device's times");
        assert!(t.idle < elapsed / 4, "{share:?} in a render of {elapsed:?}");
        assert!(share.spp >= spp / 4, "{:?}", out.shares);
    }
}

#[test]
fn a_stop_keeps_every_finished_chunk_of_every_device() {
    let spp = 64;
    let (scene, params) = small("cornell_diffuse", spp, NeeMode::Off);
    // A stop before the start: the first device ready renders its first
    // chunk (a sample), the others none, and the image is that render.
    let stop = AtomicBool::new(true);
    let out = split_render(
        BackendKind::Cpu,
        (&scene, params, spp),
        (3, &steady),
        Some(&stop),
        &|_| {},
    );
    assert_eq!(out.output.spp, 1);
    assert_eq!(total_spp(&out.shares), 1, "{:?}", out.shares);
    assert_same_render(
        &out.output,
        &alone(BackendKind::Cpu, &scene, params, 1),
        "stopped at once",
    );

    // Under `--split-all` too, a device ready after the stop starts no
    // chunk: the render is device 0's first sample alone.
    let stop = AtomicBool::new(true);
    let out = split_late((&scene, params, spp), &steady, SplitRule::Every, Some(&stop));
    assert_eq!(
        (out.output.spp, out.shares[0].spp, out.shares[1].chunks),
        (1, 1, 0),
        "{:?}",
        out.shares
    );
    assert_same_render(
        &out.output,
        &alone(BackendKind::Cpu, &scene, params, 1),
        "stopped before device 1 was ready",
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
    let out = split_render(
        BackendKind::Cpu,
        (&scene, params, spp),
        (2, &steady),
        Some(&stop),
        &stop_after_two,
    );
    let done = out.output.spp;
    assert!(done < spp, "stopped early: {:?}", out.shares);
    assert_eq!(total_spp(&out.shares), done);
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
    let samples = SampleRange { begin: 0, end: 8 };
    let result = split::render_devices(&names, samples, None, &|_| {}, SplitRule::Paying, |d| {
        anyhow::ensure!(d == 0, "the device fell off the bus");
        renderer.open_sum(&scene, None, params, samples)
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
        chunks: 1,
        ..DeviceShare::default()
    };
    let text = split::describe(&[share(1000), share(3000)], Duration::from_millis(4));
    assert!(text.contains("load imbalance: 50.0 %"), "{text}");
    assert!(text.contains("merge of the devices' films: 4.000 ms"), "{text}");
    assert!(!text.contains("kept on one device"), "{text}");
    assert!(split::describe(&[], Duration::ZERO).is_empty());
}

#[test]
fn each_device_says_where_its_time_went_besides_its_chunks() {
    let spp = 48;
    let (scene, params) = small("cornell_diffuse", spp, NeeMode::Off);
    let renderer = device(BackendKind::Cpu);
    let names: Vec<String> = (0..2).map(|d| format!("emulated device {d}")).collect();
    let samples = SampleRange { begin: 0, end: spp };
    // Device 1 takes 100 ms to set up, and device 0 renders meanwhile.
    let out = split::render_devices(&names, samples, None, &|_| {}, SplitRule::Paying, |d| {
        std::thread::sleep(Duration::from_millis(100 * d as u64));
        Ok(Paced {
            sum: renderer.open_sum(&scene, None, params, samples)?,
            per_sample: Duration::from_millis(5),
            readback: Duration::from_millis(3),
            after_chunk: &|| {},
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
    assert!(times[1].setup >= Duration::from_millis(100), "{:?}", times[1]);
    assert!(times[0].setup < Duration::from_millis(100), "{:?}", times[0]);
    for (share, t) in out.shares.iter().zip(&times) {
        assert!(share.chunks >= 1 && t.first_chunk <= share.busy, "{share:?}");
        assert!(
            t.readback >= Duration::from_millis(3),
            "read back once, after its chunks: {t:?}"
        );
        assert!(
            t.setup + share.busy + t.readback + t.idle <= out.output.elapsed,
            "{share:?}"
        );
    }
    assert!(out.shares[0].spp > out.shares[1].spp, "{:?}", out.shares);
    // The last device to finish did not wait for another.
    assert!(times.iter().any(|t| t.idle < Duration::from_millis(20)), "{times:?}");
    let text = split::describe(&out.shares, out.merge);
    assert!(text.contains("    setup 10") && text.contains("readback 3."), "{text}");
}
