//! The GPU back ends against the CPU reference: bit-identical films on every
//! seed scene, whatever the launch shape; and GPU failures as errors (out of
//! memory, a kernel fault) that leave the process able to render. These run
//! where a GPU is present; elsewhere each says SKIPPED (loudly, on stderr)
//! and passes. Run with `--nocapture` to see the error messages.

mod util;

use renderer::backend::gpu::buffers::alloc_zeros;
use renderer::backend::gpu::{Gpu, GpuError};
use renderer::backend::{BackendKind, BackendOptions, RenderOutput, SizedBy};
use renderer::render::verify::verify;
use renderer::render::{Overrides, Renderer, params_for};
use renderer::settings::mega_config::MegakernelConfig;
use std::sync::{Mutex, MutexGuard};
use util::{SEED_SCENES, repo, seed_scene};

/// One GPU test at a time: they share the device (and one of them fills
/// its memory on purpose).
static DEVICE: Mutex<()> = Mutex::new(());

/// The GPU, held by one test until it drops.
struct GpuTest {
    gpu: Gpu,
    _turn: MutexGuard<'static, ()>,
}

impl std::ops::Deref for GpuTest {
    type Target = Gpu;

    fn deref(&self) -> &Gpu {
        &self.gpu
    }
}

fn gpu_or_skip(test: &str) -> Option<GpuTest> {
    let turn = DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    match Gpu::open(0) {
        Ok(gpu) => Some(GpuTest { gpu, _turn: turn }),
        Err(e) => {
            eprintln!("SKIPPED {test}: no usable GPU ({e})");
            None
        }
    }
}

#[test]
fn megakernel_matches_the_cpu_bit_for_bit_on_every_seed_scene() {
    use renderer::accel::AccelChoice;
    let Some(_gpu) = gpu_or_skip("megakernel parity") else {
        return;
    };
    for name in SEED_SCENES {
        let (size, spp) = if name == "cs500" {
            ((96, 96), 2)
        } else {
            ((160, 120), 4)
        };
        // Every structure's megakernel, and the one that counts divergence.
        for (accel, count_divergence) in [
            (AccelChoice::Bvh, false),
            (AccelChoice::Bvh8, false),
            (AccelChoice::Kdtree, false),
            (AccelChoice::Auto, true),
        ] {
            let overrides = Overrides {
                spp: Some(spp),
                size: Some(size),
                accel: Some(accel),
                ..Overrides::default()
            };
            let mut options = BackendOptions::default();
            options.megakernel.count_divergence = count_divergence;
            let report = verify(
                &repo(&format!("scenes/{name}.toml")),
                &overrides,
                BackendKind::GpuMega,
                options,
            )
            .unwrap_or_else(|e| panic!("{name}: {e:#}"));
            eprintln!("{} [{accel:?}, counting {count_divergence}]", report.describe());
            assert!(report.passed(), "{} [{accel:?}]", report.describe());
        }
    }
}

#[test]
fn textures_render_like_the_cpu_on_both_gpu_back_ends() {
    let Some(_gpu) = gpu_or_skip("texture parity") else {
        return;
    };
    let overrides = Overrides {
        spp: Some(4),
        size: Some((160, 100)),
        ..Overrides::default()
    };
    for kind in [BackendKind::GpuMega, BackendKind::GpuWave] {
        let report = verify(
            &repo("scenes/textured.toml"),
            &overrides,
            kind,
            BackendOptions::default(),
        )
        .unwrap_or_else(|e| panic!("textured: {e:#}"));
        eprintln!("{}", report.describe());
        assert!(report.passed(), "{}", report.describe());
    }
}

#[test]
fn every_kernel_feature_set_renders_like_the_cpu_on_both_gpu_back_ends() {
    use renderer::settings::kernels::KernelFeatures;
    use renderer::settings::nee::NeeMode;
    let Some(_gpu) = gpu_or_skip("kernel feature sets") else {
        return;
    };
    // Exactly the scene's features, one more, and every one.
    let sets = ["exact", "exact+coated+triangle", "all"].map(|s| s.parse::<KernelFeatures>().unwrap());
    let cases = [
        ("scenes/rtiow_final.toml", NeeMode::Off),
        ("scenes/cs500.toml", NeeMode::On),
        ("scenes/textured.toml", NeeMode::Off),
        ("scenes/cs500_heavy.toml", NeeMode::On),
    ];
    for (path, nee) in cases {
        let overrides = Overrides {
            spp: Some(2),
            size: Some((96, 64)),
            nee: Some(nee),
            ..Overrides::default()
        };
        for kernels in sets {
            for kind in [BackendKind::GpuMega, BackendKind::GpuWave] {
                let mut options = BackendOptions::default();
                options.megakernel.kernels = kernels;
                options.wavefront.kernels = kernels;
                let report = verify(&repo(path), &overrides, kind, options)
                    .unwrap_or_else(|e| panic!("{path} [{kernels:?}]: {e:#}"));
                eprintln!("{} [{kernels:?}]", report.describe());
                assert!(report.passed(), "{} [{kernels:?}]", report.describe());
            }
        }
    }
}

#[test]
fn launch_shape_never_changes_the_image() {
    let Some(_gpu) = gpu_or_skip("launch shapes") else {
        return;
    };
    let scene = seed_scene("rtiow_final");
    let overrides = Overrides {
        spp: Some(3),
        size: Some((131, 77)),
        ..Overrides::default()
    };
    let (params, spp) = params_for(&scene.scene, &overrides, device::scene::RenderView::Radiance);
    let mut films = Vec::new();
    // A register cap changes how the kernel is compiled, never the image.
    for (block, tile, samples_per_launch, max_registers) in [
        ((16, 16), None, 1, None),
        ((8, 8), Some((17, 13)), 3, None),
        ((32, 4), Some((64, 64)), 2, None),
        ((256, 1), None, 3, None),
        ((8, 8), None, 3, Some(64)),
    ] {
        let megakernel = MegakernelConfig {
            block,
            tile,
            samples_per_launch,
            count_divergence: true,
            max_registers,
            ..MegakernelConfig::default()
        };
        let options = BackendOptions {
            megakernel,
            ..BackendOptions::default()
        };
        let out = Renderer::new(BackendKind::GpuMega, options)
            .unwrap()
            .render(&scene, params, spp, &|_| {})
            .unwrap();
        let profile = out.gpu.expect("GPU renders carry a profile");
        assert!(profile.launches.iter().all(|l| l.ms > 0.0));
        if let Some(cap) = max_registers {
            assert!(profile.kernels[0].registers <= cap, "{:?}", profile.kernels[0]);
        }
        let (_, d) = &profile.divergence[0];
        assert!(d.groups > 0 && d.average_lanes() <= 32.0, "{d:?}");
        films.push(out.film);
    }
    assert!(films.windows(2).all(|w| w[0] == w[1]));
}

/// Renders rtiow_final small with `kind` on `gpu` (`options` as given) and
/// returns the output, or the GPU error that stopped it.
fn small_render(
    gpu: &Gpu,
    kind: BackendKind,
    options: BackendOptions,
    size: (u32, u32),
) -> Result<RenderOutput, GpuError> {
    let scene = seed_scene("rtiow_final");
    let overrides = Overrides {
        spp: Some(2),
        size: Some(size),
        ..Overrides::default()
    };
    let (params, spp) = params_for(&scene.scene, &overrides, device::scene::RenderView::Radiance);
    Renderer::on(kind, options, Some(gpu))
        .unwrap()
        .render(&scene, params, spp, &|_| {})
        .map_err(|e| match e.downcast::<GpuError>() {
            Ok(e) => e,
            Err(e) => panic!("not a GPU error: {e:#}"),
        })
}

/// Checks that `gpu` renders rtiow_final small with both back ends, each
/// bit-identical to the CPU.
fn gpu_renders_like_the_cpu(gpu: &Gpu) {
    let cpu = small_render(gpu, BackendKind::Cpu, BackendOptions::default(), (64, 48)).unwrap();
    for kind in [BackendKind::GpuMega, BackendKind::GpuWave] {
        let out = small_render(gpu, kind, BackendOptions::default(), (64, 48))
            .unwrap_or_else(|e| panic!("{}: {e}", kind.label()));
        assert!(
            out.film == cpu.film,
            "{}: the film differs from the CPU's",
            kind.label()
        );
    }
}

#[test]
fn a_pinned_readback_returns_the_bytes_of_the_copy_just_queued() {
    // The wavefront reads its schedule this way, a few iterations late; a
    // read that did not wait for its copy would return the bytes an
    // earlier copy left (here: the previous round's), as cudarc's own
    // pinned slices do on a one-stream context.
    use renderer::backend::gpu::buffers::{DeviceBuffer, PinnedCopy};
    let Some(gpu) = gpu_or_skip("pinned readback") else {
        return;
    };
    let len = 1 << 16;
    let mut source = DeviceBuffer::<u8>::zeroed(&gpu, "the source", SizedBy::Scene, len).unwrap();
    let mut pinned = PinnedCopy::new(&gpu, len).unwrap();
    for round in 1..=500u32 {
        let fill = (round % 251) as u8 + 1;
        source.write(&gpu, "the source", &vec![fill; len]).unwrap();
        pinned.copy_from(&gpu, &source, "the source").unwrap();
        let read = pinned.read(&gpu, "the source").unwrap();
        let stale = read.iter().filter(|&&b| b != fill).count();
        assert_eq!(
            stale, 0,
            "round {round}: {stale} of {len} bytes are not the copy's ({fill})"
        );
    }
}

#[test]
fn an_impossible_allocation_is_an_out_of_memory_error() {
    let Some(gpu) = gpu_or_skip("out of memory") else {
        return;
    };
    let total = gpu.info().memory_bytes;
    let e = alloc_zeros::<u8>(&gpu, "four times the GPU's memory", SizedBy::Fixed, 4 * total)
        .map(|_| ())
        .unwrap_err();
    eprintln!("out-of-memory error: {e}");
    match &e {
        GpuError::OutOfMemory {
            what,
            bytes,
            free,
            total: t,
            sized_by,
        } => {
            assert_eq!(
                (what.as_str(), *bytes, *t, *sized_by),
                ("four times the GPU's memory", 4 * total, total, SizedBy::Fixed)
            );
            assert!(*free <= total);
        }
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    let text = e.to_string();
    assert!(
        text.starts_with("out of GPU memory allocating four times the GPU's memory: "),
        "{text}"
    );
    assert!(text.contains(&format!("{} bytes (", 4 * total)), "{text}");
    assert!(
        text.contains(&format!(" asked, more than the GPU's {total} bytes (")),
        "{text}"
    );
    assert!(text.contains(" in all; ") && text.contains(" are free; "), "{text}");
    // The device still works after the refused allocation.
    assert!(alloc_zeros::<u8>(&gpu, "a kilobyte", SizedBy::Fixed, 1024).is_ok());
    gpu_renders_like_the_cpu(&gpu);
}

#[test]
fn renders_that_do_not_fit_say_what_to_shrink_and_the_gpu_still_renders() {
    use renderer::settings::capacity::Capacity;
    use renderer::settings::wave_config::WavefrontConfig;
    let Some(gpu) = gpu_or_skip("renders out of memory") else {
        return;
    };
    // Leave 512 MiB free: too little for 2^24 paths (1.4 GB of path pool)
    // or an 8192x8192 film (1.6 GB), enough for the scene and the module.
    let (free, _) = gpu.memory().unwrap();
    let hog = alloc_zeros::<u8>(&gpu, "memory held by the test", SizedBy::Fixed, free - (512 << 20)).unwrap();
    let wavefront = WavefrontConfig {
        capacity: Capacity::Slots(1 << 24),
        ..WavefrontConfig::default()
    };
    let options = BackendOptions {
        wavefront,
        ..BackendOptions::default()
    };
    let e = small_render(&gpu, BackendKind::GpuWave, options, (64, 48))
        .map(|_| ())
        .unwrap_err();
    eprintln!("gpu-wave, 2^24 paths: {e}");
    assert!(
        matches!(&e, GpuError::OutOfMemory { what, sized_by: SizedBy::PathPool, .. } if what == "the path pool"),
        "{e:?}"
    );
    assert!(e.to_string().contains("--capacity"), "{e}");
    let e = small_render(&gpu, BackendKind::GpuMega, BackendOptions::default(), (8192, 8192))
        .map(|_| ())
        .unwrap_err();
    eprintln!("gpu-mega, 8192x8192: {e}");
    assert!(
        matches!(&e, GpuError::OutOfMemory { what, sized_by: SizedBy::Image, bytes, .. } if what == "the film" && *bytes == 8192 * 8192 * 24),
        "{e:?}"
    );
    assert!(e.to_string().contains("--size"), "{e}");
    drop(hog);
    gpu_renders_like_the_cpu(&gpu);
}

/// Set in the child process that [`a_kernel_fault_names_the_kernel_and_leaves_the_cpu_back_ends_working`] starts.
const FAULT_CHILD: &str = "WAVEPATH_TEST_KERNEL_FAULT_CHILD";

/// A kernel fault loses the CUDA context of the whole process (cudarc uses
/// the device's primary context), so it is provoked in a child process: this
/// test binary again, running only [`kernel_fault_child`].
#[test]
fn a_kernel_fault_names_the_kernel_and_leaves_the_cpu_back_ends_working() {
    let Some(gpu) = gpu_or_skip("kernel fault") else {
        return;
    };
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "kernel_fault_child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(FAULT_CHILD, "1")
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("--- the child process ---\n{log}--- end of the child process ---");
    assert!(out.status.success(), "the child failed ({})", out.status);
    assert!(
        log.contains("KERNEL FAULT: kernel `fault_trap` (launch 0 of the render"),
        "{log}"
    );
    assert!(log.contains("CPU AFTER THE FAULT: ok"), "{log}");
    // Another process's fault leaves this one's context alone.
    gpu_renders_like_the_cpu(&gpu);
}

/// The child of [`a_kernel_fault_names_the_kernel_and_leaves_the_cpu_back_ends_working`]:
/// provokes a kernel fault, checks the errors during and after it, then
/// renders on the CPU. Does nothing unless that test started it.
#[test]
#[ignore = "run in a child process by a_kernel_fault_names_the_kernel_and_leaves_the_cpu_back_ends_working"]
fn kernel_fault_child() {
    use renderer::backend::gpu::fault::provoke_kernel_fault;
    if std::env::var_os(FAULT_CHILD).is_none() {
        eprintln!("SKIPPED: only runs as the kernel-fault test's child process");
        return;
    }
    let gpu = Gpu::open(0).expect("the parent opened the GPU");
    let e = provoke_kernel_fault(&gpu).expect_err("the trap kernel must fault");
    eprintln!("KERNEL FAULT: {e}");
    match &e {
        GpuError::KernelFault { site, earlier, .. } => {
            assert_eq!((site.kernel, site.launch), ("fault_trap", 0));
            assert!(earlier.is_none(), "{earlier:?}");
        }
        other => panic!("expected KernelFault, got {other:?}"),
    }
    assert!(
        e.to_string()
            .contains("The GPU context is lost: GPU work needs a new process"),
        "{e}"
    );
    // Every GPU call after it fails, naming the fault; the GPU renders too.
    let after = alloc_zeros::<u8>(&gpu, "a buffer after the fault", SizedBy::Fixed, 1024)
        .map(|_| ())
        .unwrap_err();
    eprintln!("AFTER THE FAULT: {after}");
    assert!(
        matches!(&after, GpuError::ContextLost { fault: Some(f), .. } if f.contains("fault_trap")),
        "{after:?}"
    );
    let render = small_render(&gpu, BackendKind::GpuMega, BackendOptions::default(), (64, 48))
        .map(|_| ())
        .unwrap_err();
    eprintln!("GPU RENDER AFTER THE FAULT: {render}");
    assert!(matches!(render, GpuError::ContextLost { .. }), "{render:?}");
    // The CPU back ends still render, bit for bit as ever.
    let scene = seed_scene("cornell_smallpt");
    let cpu = util::render(&scene, BackendKind::Cpu, 32, 24, 2);
    let serial = util::render(&scene, BackendKind::CpuSerial, 32, 24, 2);
    assert!(cpu.rays > 0 && cpu.film == serial.film);
    eprintln!("CPU AFTER THE FAULT: ok ({} rays)", cpu.rays);
}

#[test]
fn raycast_kernel_hits_equal_the_cpu_for_every_structure() {
    let Some(gpu) = gpu_or_skip("raycast") else {
        return;
    };
    use renderer::accel::AccelChoice;
    for accel in [
        AccelChoice::None,
        AccelChoice::Bvh,
        AccelChoice::Bvh8,
        AccelChoice::Kdtree,
    ] {
        let overrides = Overrides {
            size: Some((64, 48)),
            accel: Some(accel),
            ..Overrides::default()
        };
        let scene = renderer::render::load_scene(&repo("scenes/cs500.toml"), &overrides).unwrap();
        let (params, _) = params_for(&scene.scene, &overrides, device::scene::RenderView::Radiance);
        let rays = renderer::render::ray_throughput::make_rays(
            &scene,
            &params,
            renderer::render::ray_throughput::RayKind::Bounce,
            20_000,
        );
        // gpu_rows fails unless every GPU hit equals the CPU's.
        let rows = renderer::render::ray_throughput::gpu_rows(
            wavepath::BUILD,
            &gpu,
            &scene,
            renderer::render::ray_throughput::RayKind::Bounce,
            &rays,
            &[64],
            1,
        )
        .unwrap();
        assert!(rows[0].hit_count > 0);
    }
}

#[test]
fn wavefront_matches_the_cpu_bit_for_bit_in_every_schedule_and_compaction() {
    use device::launch::Compaction;
    use renderer::settings::capacity::Capacity;
    use renderer::settings::wave_config::{WaveSchedule, WavefrontConfig};
    let Some(_gpu) = gpu_or_skip("wavefront parity") else {
        return;
    };
    for name in SEED_SCENES {
        let (size, spp) = if name == "cs500" {
            ((96, 96), 2)
        } else {
            ((160, 120), 4)
        };
        let overrides = Overrides {
            spp: Some(spp),
            size: Some(size),
            ..Overrides::default()
        };
        let modes = [
            (WaveSchedule::Regenerate, Some(1.0)),
            (WaveSchedule::Regenerate, Some(0.5)),
            (WaveSchedule::BounceSync, None),
        ]
        .into_iter()
        .flat_map(|s| [Compaction::AtomicAppend, Compaction::PrefixSum].map(|c| (s, c)))
        .flat_map(|(s, c)| [0, 1000].map(|d| (s, c, d)));
        for ((schedule, refill), compaction, drain_below) in modes {
            // A small pool forces many refills and survivor moves;
            // a drain threshold finishes the tail in one launch.
            let wavefront = WavefrontConfig {
                capacity: Capacity::Slots(1 << 12),
                schedule,
                refill,
                compaction,
                material_sort: device::launch::MaterialSort::ByVariant,
                block: 128,
                count_divergence: true,
                time_launches: true,
                max_registers: None,
                drain_below,
                ..WavefrontConfig::default()
            };
            let options = BackendOptions {
                wavefront,
                ..BackendOptions::default()
            };
            let report = verify(
                &repo(&format!("scenes/{name}.toml")),
                &overrides,
                BackendKind::GpuWave,
                options,
            )
            .unwrap_or_else(|e| panic!("{name}: {e:#}"));
            eprintln!("{} [{}]", report.describe(), wavefront.label());
            assert!(report.passed(), "{} [{}]", report.describe(), wavefront.label());
        }
        // The default wavefront with the other structures.
        for accel in [renderer::accel::AccelChoice::Bvh8, renderer::accel::AccelChoice::Kdtree] {
            let overrides = Overrides {
                accel: Some(accel),
                ..overrides
            };
            let report = verify(
                &repo(&format!("scenes/{name}.toml")),
                &overrides,
                BackendKind::GpuWave,
                BackendOptions::default(),
            )
            .unwrap_or_else(|e| panic!("{name}: {e:#}"));
            eprintln!("{} [{accel:?}]", report.describe());
            assert!(report.passed(), "{} [{accel:?}]", report.describe());
        }
    }
}

#[test]
fn wavefront_profile_accounts_for_every_ray_and_counts_full_warps() {
    use renderer::settings::wave_config::WavefrontConfig;
    let Some(_gpu) = gpu_or_skip("wavefront profile") else {
        return;
    };
    let scene = seed_scene("rtiow_final");
    let overrides = Overrides {
        spp: Some(2),
        size: Some((200, 100)),
        ..Overrides::default()
    };
    let (params, spp) = params_for(&scene.scene, &overrides, device::scene::RenderView::Radiance);
    let render = |wavefront: WavefrontConfig| {
        let options = BackendOptions {
            wavefront,
            ..BackendOptions::default()
        };
        Renderer::new(BackendKind::GpuWave, options)
            .unwrap()
            .render(&scene, params, spp, &|_| {})
            .unwrap()
    };
    // Without the drain every ray passes through the queues.
    let out = render(WavefrontConfig {
        count_divergence: true,
        drain_below: 0,
        ..WavefrontConfig::default()
    });
    let p = out.gpu.as_ref().unwrap();
    let extended: u64 = p
        .launches
        .iter()
        .filter(|l| l.kernel.starts_with("wf_extend"))
        .map(|l| l.items)
        .sum();
    let shaded: u64 = p
        .launches
        .iter()
        .filter(|l| l.kernel.starts_with("wf_shade"))
        .map(|l| l.items)
        .sum();
    assert_eq!(extended, out.rays, "every traced ray was queued once");
    assert_eq!(shaded, out.rays, "every traced ray was shaded once");
    for (kernel, d) in &p.divergence {
        assert!(
            d.groups == 0 || d.average_lanes() > 8.0,
            "{kernel}: {:.1} lanes",
            d.average_lanes()
        );
    }
    assert!(p.state_bytes > 0);
    // Draining everything at once (the pool holds fewer paths than the
    // threshold) traces the same rays into the same image.
    let drained = render(WavefrontConfig {
        drain_below: u32::MAX,
        ..WavefrontConfig::default()
    });
    assert!(
        drained
            .gpu
            .as_ref()
            .unwrap()
            .launches
            .iter()
            .any(|l| l.kernel.starts_with("wf_drain") && l.items > 0)
    );
    assert_eq!((drained.rays, &drained.film), (out.rays, &out.film));
    // Untimed launches render the same image and report no kernel times.
    let untimed = render(WavefrontConfig {
        time_launches: false,
        ..WavefrontConfig::default()
    });
    assert_eq!((untimed.rays, &untimed.film), (out.rays, &out.film));
    assert!(untimed.gpu.as_ref().unwrap().launches.iter().all(|l| l.ms.is_nan()));
}

/// The scene of the stop tests: the diffuse Cornell box at 64x48, small
/// enough that the first samples finish at once.
fn stop_test_scene() -> (renderer::prepared::PreparedScene, device::scene::RenderParams) {
    let scene = seed_scene("cornell_diffuse");
    let overrides = Overrides {
        size: Some((64, 48)),
        ..Overrides::default()
    };
    let (params, _) = params_for(&scene.scene, &overrides, device::scene::RenderView::Radiance);
    (scene, params)
}

/// Set by the progress callback of the stop tests: a Ctrl-C as soon as the
/// first samples are done.
static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[test]
fn a_stop_request_keeps_whole_samples_on_both_gpu_back_ends() {
    use std::sync::atomic::Ordering;
    let Some(gpu) = gpu_or_skip("stop request") else {
        return;
    };
    let (scene, params) = stop_test_scene();
    let spp = 4096;
    let mut options = BackendOptions::default();
    options.megakernel.samples_per_launch = 8;
    options.wavefront.capacity = renderer::settings::capacity::Capacity::Slots(1 << 12);
    for kind in [BackendKind::GpuMega, BackendKind::GpuWave] {
        STOP.store(false, Ordering::SeqCst);
        let renderer = Renderer::on(kind, options, Some(&gpu))
            .unwrap()
            .stopping_on(Some(&STOP));
        let cut = renderer
            .render(&scene, params, spp, &|_| STOP.store(true, Ordering::SeqCst))
            .unwrap_or_else(|e| panic!("{}: {e:#}", kind.label()));
        assert!(
            (1..spp).contains(&cut.spp),
            "{}: stopped after {} of {spp} spp",
            kind.label(),
            cut.spp
        );
        let whole = Renderer::new(BackendKind::Cpu, options)
            .unwrap()
            .render(&scene, params, cut.spp, &|_| {})
            .unwrap();
        assert!(
            cut.film == whole.film,
            "{}: the film of {} finished spp differs from the CPU's",
            kind.label(),
            cut.spp
        );
        eprintln!(
            "{}: stopped after {} of {spp} spp, film equals the CPU's",
            kind.label(),
            cut.spp
        );
    }
}

/// The renderers of `kind` to split a render over, and what they are:
/// every GPU when there are several; with one GPU, two handles of it (on
/// its one context and stream, each with its own modules, scene upload and
/// thread), which runs the split's threads, uploads and merge on a GPU
/// even where only one is present.
fn split_renderers(kind: BackendKind, options: BackendOptions) -> (Vec<Renderer>, String) {
    use renderer::render::split;
    use renderer::settings::backend::BackendChoice;
    use renderer::settings::devices::Devices;
    let present = Gpu::count().expect("a GPU opened, so the driver counts it");
    if present >= 2 {
        let every = split::open(BackendChoice::Exactly(kind), options, &Devices::All).expect("every GPU opens");
        return (every, format!("{present} GPUs"));
    }
    let handles = (0..2).map(|_| {
        let gpu = Gpu::open(0).expect("GPU 0 opens again");
        Renderer::on(kind, options, Some(&gpu)).expect("a GPU back end on a GPU")
    });
    (handles.collect(), "two handles of the one GPU".into())
}

#[test]
fn a_render_split_over_gpus_is_the_one_gpu_render_bit_for_bit() {
    use device::integrator::SampleRange;
    use renderer::backend::gpu::buffers::DeviceScene;
    use renderer::render::split;
    let Some(_gpu) = gpu_or_skip("split over GPUs") else {
        return;
    };
    for (name, spp) in [("cornell_smallpt", 96), ("cs500", 24)] {
        let scene = seed_scene(name);
        let overrides = Overrides {
            spp: Some(spp),
            size: Some((160, 120)),
            ..Overrides::default()
        };
        let (params, spp) = params_for(&scene.scene, &overrides, device::scene::RenderView::Radiance);
        let samples = SampleRange { begin: 0, end: spp };
        for kind in [BackendKind::GpuMega, BackendKind::GpuWave] {
            let (split_over, over) = split_renderers(kind, BackendOptions::default());
            let what = format!("{name} on {} over {over}", kind.label());
            let one = split_over[0]
                .render_samples(&scene, None, params, samples, &|_| {})
                .unwrap_or_else(|e| panic!("{what}: one renders: {e:#}"));
            // As `render` splits (the scene uploaded on each device's
            // thread) and as an experiment's run of `gpus = 2` does (the
            // scene uploaded beforehand, on this thread).
            let all = split::render(&split_over, None, &scene, (params, samples), None, &|_| {})
                .unwrap_or_else(|e| panic!("{what}: the split renders: {e:#}"));
            let uploads: Vec<DeviceScene> = split_over
                .iter()
                .map(|r| DeviceScene::upload(r.gpu().expect("a GPU renderer"), &scene).expect("the scene uploads"))
                .collect();
            let uploaded = split::render(&split_over, Some(&uploads), &scene, (params, samples), None, &|_| {})
                .unwrap_or_else(|e| panic!("{what}: the split of an uploaded scene renders: {e:#}"));
            for (how, split) in [("uploaded on each thread", &all), ("uploaded beforehand", &uploaded)] {
                assert_eq!(split.shares.len(), split_over.len(), "{what}, {how}");
                assert_eq!(split.shares.iter().map(|s| s.spp).sum::<u32>(), spp, "{what}, {how}");
                assert_eq!(
                    (split.output.spp, split.output.rays),
                    (one.spp, one.rays),
                    "{what}, {how}"
                );
                assert!(split.output.film == one.film, "{what}, {how}: the merged film differs");
            }
            eprintln!("{what}: identical\n{}", split::describe(&all.shares, all.merge));
        }
    }
}

/// Stops `split_over`'s render of `spp` samples of the stop test's scene
/// and checks what it kept: whole samples `0..n`, each counted in one
/// device's share, whose film is one GPU's render of `n` samples. Under
/// [`SplitRule::Every`] the devices start together and the stop comes once
/// every one has finished a chunk; under [`SplitRule::Paying`] it comes with
/// the first finished samples, so a device still setting up then stays out
/// (a split never starts a device on a render that is stopping).
fn stop_split_and_check(kind: BackendKind, rule: renderer::settings::devices::SplitRule, spp: u32) {
    use device::integrator::SampleRange;
    use renderer::render::split;
    use renderer::settings::devices::SplitRule;
    use std::collections::HashSet;
    use std::sync::atomic::Ordering;
    use std::sync::{Barrier, Mutex};
    let (scene, params) = stop_test_scene();
    let options = BackendOptions {
        split: rule,
        ..BackendOptions::default()
    };
    let (split_over, over) = split_renderers(kind, options);
    let what = format!("{} over {over}, {rule:?}", kind.label());
    let names: Vec<String> = (0..split_over.len()).map(|d| format!("device {d}")).collect();
    // Each device's worker thread reports its own progress: the stop comes
    // once `wanted` of them have.
    let wanted = match rule {
        SplitRule::Every => split_over.len(),
        SplitRule::Paying => 1,
    };
    let reported = Mutex::new(HashSet::new());
    let ready = Barrier::new(split_over.len());
    STOP.store(false, Ordering::SeqCst);
    let samples = SampleRange { begin: 0, end: spp };
    let progress = |_| {
        let mut threads = reported.lock().unwrap();
        threads.insert(std::thread::current().id());
        if threads.len() >= wanted {
            STOP.store(true, Ordering::SeqCst);
        }
    };
    let cut = split::render_devices(&names, samples, Some(&STOP), &progress, rule, |d| {
        let renderer = &split_over[d];
        let sum = (|| -> anyhow::Result<_> {
            renderer.gpu().expect("a GPU renderer").bind_to_thread()?;
            renderer.open_sum(&scene, None, params, samples)
        })();
        if rule == SplitRule::Every {
            ready.wait();
        }
        sum
    })
    .unwrap_or_else(|e| panic!("{what}: {e:#}"));
    let kept = cut.output.spp;
    let shares = split::describe(&cut.shares, cut.merge);
    assert!(
        (1..spp).contains(&kept),
        "{what}: stopped after {kept} of {spp} spp\n{shares}"
    );
    if rule == SplitRule::Every {
        assert!(
            cut.shares.iter().all(|s| s.spp >= 1),
            "{what}: every device finished its first chunk\n{shares}"
        );
    }
    assert_eq!(cut.shares.iter().map(|s| s.spp).sum::<u32>(), kept, "{what}");
    // One GPU's render equals the CPU's (the tests above), and a chunk
    // in flight may hold thousands of samples: compare on the GPU.
    let whole = split_over[0]
        .render(&scene, params, kept, &|_| {})
        .unwrap_or_else(|e| panic!("{what}: {kept} spp on one GPU: {e:#}"));
    assert!(
        cut.output.film == whole.film,
        "{what}: the film of the {kept} finished spp differs from one GPU's render of as many"
    );
    eprintln!("{what}: stopped after {kept} of {spp} spp, the film of one GPU's {kept}\n{shares}");
}

#[test]
fn a_stopped_split_keeps_the_finished_samples_of_every_gpu() {
    use renderer::settings::devices::SplitRule;
    let Some(_gpu) = gpu_or_skip("stopped split") else {
        return;
    };
    for kind in [BackendKind::GpuMega, BackendKind::GpuWave] {
        for rule in [SplitRule::Every, SplitRule::Paying] {
            stop_split_and_check(kind, rule, 1 << 16);
        }
    }
}

#[test]
fn an_experiment_spreads_its_gpu_runs_over_every_gpu() {
    use lab::records::{RunRow, recover_rows};
    let Some(_gpu) = gpu_or_skip("experiment over GPUs") else {
        return;
    };
    let present = Gpu::count().expect("a GPU opened, so the driver counts it");
    if present < 2 {
        eprintln!("SKIPPED experiment over GPUs: {present} GPU present, spreading needs two");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = util::write_config(
        dir.path(),
        "spread",
        r#"
[experiment]
name = "spread"
description = "GPU runs over every GPU"

[[study]]
name = "blocks"
scenes = ["SCENES/cornell_diffuse.toml"]
backends = ["gpu-mega", "gpu-wave", "cpu"]
warmup = 0
repeat = 2
fixed = { size = "64x48", spp = 4, depth = 4 }
sweep = { block = ["8x8", "16x8", "32x4"] }
"#,
    );
    let out = dir.path().join("out");
    let run = util::run_experiment(&config, &out, &["--devices", "all"]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let rows = recover_rows::<RunRow>(&out.join("runs.csv")).unwrap().rows;
    assert_eq!(rows.len(), 2 * 5, "four GPU configurations and the CPU's, twice each");
    assert!(
        rows.iter()
            .all(|r| r.gpu_ordinal.is_some() == r.backend.starts_with("gpu")),
        "GPU rows, and only they, name their GPU"
    );
    let used: std::collections::BTreeSet<usize> = rows.iter().filter_map(|r| r.gpu_ordinal).collect();
    assert_eq!(used.len(), present.min(4), "every GPU took a configuration: {used:?}");
    assert!(
        rows.iter().all(|r| r.film_hash == rows[0].film_hash),
        "one image on every GPU"
    );
    assert!(stdout.contains("load imbalance over the GPUs"), "{stdout}");
    let manifest = lab::records::Manifest::read(&out.join("manifest.toml")).unwrap();
    assert_eq!(manifest.devices.len(), present, "the manifest lists every GPU");
}

#[test]
fn an_experiment_run_on_two_gpus_renders_the_film_of_one() {
    use lab::records::{Manifest, RunRow, recover_rows};
    let Some(_gpu) = gpu_or_skip("gpus = [1, 2]") else {
        return;
    };
    let present = Gpu::count().expect("a GPU opened, so the driver counts it");
    if present < 2 {
        eprintln!("SKIPPED gpus = [1, 2]: {present} GPU present, the split needs two");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = util::write_config(
        dir.path(),
        "together",
        r#"
[experiment]
name = "together"
description = "one image on one GPU and on two"

[[study]]
name = "split"
scenes = ["SCENES/cornell_diffuse.toml"]
backends = ["gpu-mega", "gpu-wave"]
warmup = 1
repeat = 2
fixed = { size = "96x64", spp = 16, depth = 4 }
sweep = { gpus = [1, 2] }
"#,
    );
    // Spread over every GPU, the runs of two GPUs in a phase of their own.
    let out = dir.path().join("out");
    let run = util::run_experiment(&config, &out, &["--devices", "all"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let rows = recover_rows::<RunRow>(&out.join("runs.csv")).unwrap().rows;
    assert_eq!(rows.len(), 4 * 2, "two back ends on one GPU and on two, twice each");
    for r in &rows {
        let two = r.gpus == Some(2);
        assert!(two || r.gpus == Some(1), "{r:?}");
        assert_eq!(
            r.split_imbalance.is_some(),
            two,
            "{}: the imbalance of a split only",
            r.config
        );
        assert_eq!(r.gpu_ordinal.is_none(), two, "{}: a split has no one GPU", r.config);
        assert_eq!(r.film_hash, rows[0].film_hash, "{}: the image of one GPU", r.config);
        // A split row gives each GPU's samples (which add up to the row's)
        // and busy time.
        let spp: Vec<u32> = r.split_spp.split_whitespace().map(|s| s.parse().unwrap()).collect();
        let busy = r.split_busy_ms.split_whitespace().map(|s| s.parse::<f64>().unwrap());
        assert_eq!((spp.len(), busy.count()), if two { (2, 2) } else { (0, 0) }, "{r:?}");
        assert!(!two || spp.iter().sum::<u32>() == r.spp, "{r:?}");
    }
    let manifest = Manifest::read(&out.join("manifest.toml")).unwrap();
    assert!(
        manifest.study[0].film_check.starts_with("identical: 1 group"),
        "{}",
        manifest.study[0].film_check
    );
}

#[test]
fn chunks_of_samples_on_a_gpu_add_up_to_the_whole_render_bit_for_bit() {
    use device::integrator::SampleRange;
    let Some(gpu) = gpu_or_skip("chunks of samples") else {
        return;
    };
    let scene = seed_scene("cornell_smallpt");
    let overrides = Overrides {
        spp: Some(13),
        size: Some((160, 120)),
        ..Overrides::default()
    };
    let (params, spp) = params_for(&scene.scene, &overrides, device::scene::RenderView::Radiance);
    for kind in [BackendKind::GpuMega, BackendKind::GpuWave] {
        let renderer = Renderer::on(kind, BackendOptions::default(), Some(&gpu)).unwrap();
        let whole = renderer.render(&scene, params, spp, &|_| {}).unwrap();
        let mut sum = vec![device::film::FixedRgb::default(); whole.film.len()];
        let mut rays = 0;
        for (begin, end) in [(0, 1), (1, 6), (6, 13)] {
            let samples = SampleRange { begin, end };
            let chunk = renderer.render_samples(&scene, None, params, samples, &|_| {}).unwrap();
            assert_eq!(chunk.spp, end - begin, "{}", kind.label());
            sum.iter_mut().zip(&chunk.film).for_each(|(s, c)| s.add(*c));
            rays += chunk.rays;
        }
        assert!(
            sum == whole.film,
            "{}: the chunks' films do not add up to the whole",
            kind.label()
        );
        assert_eq!(rays, whole.rays, "{}", kind.label());
    }
}
