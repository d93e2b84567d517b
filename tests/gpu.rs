//! The GPU back ends against the CPU reference: bit-identical films on every
//! seed scene, whatever the launch shape. These run where a GPU is present;
//! elsewhere each says SKIPPED (loudly, on stderr) and passes.

mod util;

use util::{SEED_SCENES, repo, seed_scene};
use wavepath::backend::gpu::buffers::alloc_zeros;
use wavepath::backend::gpu::megakernel::MegakernelConfig;
use wavepath::backend::gpu::{Gpu, GpuError};
use wavepath::backend::{BackendKind, BackendOptions};
use wavepath::render::{Overrides, Renderer, params_for};
use wavepath::verify::verify;

fn gpu_or_skip(test: &str) -> Option<Gpu> {
    match Gpu::open(0) {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            eprintln!("SKIPPED {test}: no usable GPU ({e})");
            None
        }
    }
}

#[test]
fn megakernel_matches_the_cpu_bit_for_bit_on_every_seed_scene() {
    use wavepath::accel::AccelChoice;
    if gpu_or_skip("megakernel parity").is_none() {
        return;
    }
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
fn launch_shape_never_changes_the_image() {
    if gpu_or_skip("launch shapes").is_none() {
        return;
    }
    let scene = seed_scene("rtiow_final");
    let overrides = Overrides {
        spp: Some(3),
        size: Some((131, 77)),
        ..Overrides::default()
    };
    let (params, spp) = params_for(&scene, &overrides, device::scene::RenderView::Radiance);
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

#[test]
fn an_impossible_allocation_is_an_out_of_memory_error() {
    let Some(gpu) = gpu_or_skip("out of memory") else {
        return;
    };
    match alloc_zeros::<u8>(&gpu, "a petabyte", 1 << 50) {
        Err(GpuError::OutOfMemory { bytes, total, .. }) => assert!(bytes > total),
        other => panic!("expected OutOfMemory, got {:?}", other.map(|_| ())),
    }
    // The device still works after the failed allocation.
    assert!(alloc_zeros::<u8>(&gpu, "a kilobyte", 1024).is_ok());
}

#[test]
fn raycast_kernel_hits_equal_the_cpu_for_every_structure() {
    let Some(gpu) = gpu_or_skip("raycast") else {
        return;
    };
    use wavepath::accel::AccelChoice;
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
        let scene = wavepath::render::load_scene(&repo("scenes/cs500.toml"), &overrides).unwrap();
        let (params, _) = params_for(&scene, &overrides, device::scene::RenderView::Radiance);
        let rays = wavepath::raycast::make_rays(&scene, &params, wavepath::raycast::RayKind::Bounce, 20_000);
        // gpu_rows fails unless every GPU hit equals the CPU's.
        let rows =
            wavepath::raycast::gpu_rows(&gpu, &scene, wavepath::raycast::RayKind::Bounce, &rays, &[64], 1).unwrap();
        assert!(rows[0].hit_count > 0);
    }
}

#[test]
fn wavefront_matches_the_cpu_bit_for_bit_in_every_schedule_and_compaction() {
    use device::launch::Compaction;
    use wavepath::backend::wavefront::{Capacity, Schedule, WavefrontConfig};
    if gpu_or_skip("wavefront parity").is_none() {
        return;
    }
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
            (Schedule::Regenerate, 1.0),
            (Schedule::Regenerate, 0.5),
            (Schedule::BounceSync, 0.0),
        ]
        .into_iter()
        .flat_map(|s| [Compaction::AtomicAppend, Compaction::PrefixSum].map(|c| (s, c)))
        .flat_map(|(s, c)| [0, 1000].map(|d| (s, c, d)));
        for ((schedule, refill), compaction, drain_below) in modes {
            // A small pool forces many regenerations and ring wrap-arounds;
            // a drain threshold finishes the tail in one launch.
            let wavefront = WavefrontConfig {
                capacity: Capacity::Slots(1 << 12),
                schedule,
                refill,
                compaction,
                block: 128,
                count_divergence: true,
                time_launches: true,
                max_registers: None,
                drain_below,
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
        for accel in [wavepath::accel::AccelChoice::Bvh8, wavepath::accel::AccelChoice::Kdtree] {
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
    use wavepath::backend::wavefront::WavefrontConfig;
    if gpu_or_skip("wavefront profile").is_none() {
        return;
    }
    let scene = seed_scene("rtiow_final");
    let overrides = Overrides {
        spp: Some(2),
        size: Some((200, 100)),
        ..Overrides::default()
    };
    let (params, spp) = params_for(&scene, &overrides, device::scene::RenderView::Radiance);
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
