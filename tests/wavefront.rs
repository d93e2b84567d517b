//! The wavefront on the CPU: `cpu-wave` runs the wavefront's own kernels
//! (schedule, generate, extend, shading, shadow rays, both compactions, the
//! drain) in the host's serial emulation, so CI checks the whole schedule
//! bit for bit against `cpu` without a GPU. Pools are small enough that slots are
//! refilled many times, survivors move down and waves are drained.

mod util;

use device::launch::{Compaction, MaterialSort};
use device::scene::RenderParams;
use renderer::backend::{BackendKind, BackendOptions, RenderOutput};
use renderer::prepared::PreparedScene;
use renderer::render::verify::verify;
use renderer::render::{Overrides, Renderer};
use renderer::settings::capacity::Capacity;
use renderer::settings::kernels::KernelFeatures;
use renderer::settings::nee::NeeMode;
use renderer::settings::sampler::SamplerKind;
use renderer::settings::wave_config::{WaveSchedule, WavefrontConfig};
use util::{SEED_SCENES, repo, seed_scene};

/// Every schedule the wavefront has, with both compactions and with and
/// without a drain.
fn configurations() -> Vec<WavefrontConfig> {
    let schedules = [
        (WaveSchedule::BounceSync, None),
        (WaveSchedule::Regenerate, Some(0.5)),
        (WaveSchedule::Regenerate, Some(1.0)),
    ];
    let mut out = Vec::new();
    for (schedule, refill) in schedules {
        for compaction in [Compaction::PrefixSum, Compaction::AtomicAppend] {
            for drain_below in [0, 300] {
                out.push(WavefrontConfig {
                    capacity: Capacity::Slots(1024),
                    schedule,
                    refill,
                    compaction,
                    material_sort: MaterialSort::ByVariant,
                    block: 64,
                    count_divergence: false,
                    time_launches: true,
                    max_registers: None,
                    kernels: KernelFeatures::EXACT,
                    drain_below,
                    ..WavefrontConfig::default()
                });
            }
        }
    }
    out
}

fn render(kind: BackendKind, wavefront: WavefrontConfig, name: &str, params: RenderParams, spp: u32) -> RenderOutput {
    render_scene(kind, wavefront, &seed_scene(name), params, spp)
}

fn render_scene(
    kind: BackendKind,
    wavefront: WavefrontConfig,
    scene: &PreparedScene,
    params: RenderParams,
    spp: u32,
) -> RenderOutput {
    let options = BackendOptions {
        wavefront,
        ..BackendOptions::default()
    };
    Renderer::new(kind, options)
        .unwrap()
        .render(scene, params, spp, &|_| {})
        .unwrap_or_else(|e| panic!("{}: {e:#}", kind.label()))
}

/// Renders `name` on `cpu-wave` in every configuration and checks that each
/// film and ray count equals the CPU's `reference`.
fn every_configuration_matches(name: &str, params: RenderParams, spp: u32, reference: &RenderOutput) {
    let scene = seed_scene(name);
    for config in configurations() {
        let out = render_scene(BackendKind::CpuWave, config, &scene, params, spp);
        assert!(out.film == reference.film, "{name} [{}]: films differ", config.label());
        assert_eq!(
            out.rays,
            reference.rays,
            "{name} [{}]: ray counts differ",
            config.label()
        );
    }
}

#[test]
fn the_emulated_wavefront_matches_the_cpu_bit_for_bit_in_every_schedule() {
    for name in SEED_SCENES {
        let scene = seed_scene(name);
        // 1200 or 1600 work items over 1024 slots: the pool is refilled.
        let (width, height, spp) = if name == "cs500" { (20, 20, 3) } else { (40, 20, 2) };
        let params = RenderParams {
            width,
            height,
            ..renderer::render::params_for(&scene.scene, &Overrides::default(), device::scene::RenderView::Radiance).0
        };
        let reference = render(BackendKind::Cpu, WavefrontConfig::default(), name, params, spp);
        assert!(
            reference.film.iter().any(|p| p.r + p.g + p.b > 0),
            "{name}: black image"
        );
        every_configuration_matches(name, params, spp, &reference);
    }
}

#[test]
fn with_sobol_samples_the_emulated_wavefront_matches_the_cpu_in_every_schedule() {
    // Sobol streams carry their sample index through the path pool: every
    // schedule, refill and compaction must keep it with its path.
    for name in ["cornell_smallpt", "rtiow_final"] {
        let scene = seed_scene(name);
        let overrides = Overrides {
            sampler: Some(SamplerKind::Sobol),
            ..Overrides::default()
        };
        let params = RenderParams {
            width: 40,
            height: 20,
            ..renderer::render::params_for(&scene.scene, &overrides, device::scene::RenderView::Radiance).0
        };
        assert_eq!(params.sampler, device::rng::Sampler::Sobol);
        let reference = render(BackendKind::Cpu, WavefrontConfig::default(), name, params, 2);
        let hash = render(
            BackendKind::Cpu,
            WavefrontConfig::default(),
            name,
            RenderParams {
                sampler: device::rng::Sampler::Hash,
                ..params
            },
            2,
        );
        assert!(reference.film != hash.film, "{name}: the sampler changed nothing");
        for config in configurations() {
            let out = render(BackendKind::CpuWave, config, name, params, 2);
            assert!(out.film == reference.film, "{name} [{}]: films differ", config.label());
        }
    }
}

#[test]
fn with_next_event_estimation_the_emulated_wavefront_matches_the_cpu_in_every_schedule() {
    // Shadow rays go through their own queue and kernel, and each unblocked
    // one adds to the film on its own: the film must still equal the CPU's,
    // whose paths trace their shadow rays inline. Sobol samples too, and a
    // sphere light (smallpt), polygon lights (Cornell, CS500).
    for name in ["cornell_smallpt", "cornell_diffuse", "cs500"] {
        let scene = seed_scene(name);
        assert!(!scene.lights.lights.is_empty(), "{name}: no lights");
        let overrides = Overrides {
            sampler: Some(SamplerKind::Sobol),
            nee: Some(NeeMode::On),
            ..Overrides::default()
        };
        let (width, height) = if name == "cs500" { (20, 20) } else { (40, 20) };
        let params = RenderParams {
            width,
            height,
            ..renderer::render::params_for(&scene.scene, &overrides, device::scene::RenderView::Radiance).0
        };
        let reference = render(BackendKind::Cpu, WavefrontConfig::default(), name, params, 3);
        let without = RenderParams {
            nee: device::scene::Nee::Off,
            ..params
        };
        let off = render(BackendKind::Cpu, WavefrontConfig::default(), name, without, 3);
        assert!(
            reference.film != off.film,
            "{name}: next-event estimation changed nothing"
        );
        assert!(reference.rays > off.rays, "{name}: no shadow rays counted");
        every_configuration_matches(name, params, 3, &reference);
    }
}

#[test]
fn sorted_by_variant_or_not_the_emulated_wavefront_matches_the_cpu_in_every_schedule() {
    // Sixteen coated materials, each its own noise program: the sort
    // regroups the coated queue every iteration, and a path it lost or
    // placed twice would change the film.
    let scene =
        renderer::render::load_scene(&repo("experiments/scenes/material_cost.toml"), &Overrides::default()).unwrap();
    let variants: std::collections::BTreeSet<u32> = scene.scene.materials.iter().map(|m| m.variant()).collect();
    assert_eq!(variants.len(), 16, "the scene's materials are sixteen programs");
    for nee in [NeeMode::Off, NeeMode::On] {
        let overrides = Overrides {
            nee: Some(nee),
            ..Overrides::default()
        };
        let params = RenderParams {
            width: 40,
            height: 24,
            ..renderer::render::params_for(&scene.scene, &overrides, device::scene::RenderView::Radiance).0
        };
        let reference = render_scene(BackendKind::Cpu, WavefrontConfig::default(), &scene, params, 2);
        for config in configurations() {
            for material_sort in [MaterialSort::Off, MaterialSort::ByVariant] {
                let config = WavefrontConfig {
                    material_sort,
                    ..config
                };
                let out = render_scene(BackendKind::CpuWave, config, &scene, params, 2);
                assert!(
                    out.film == reference.film,
                    "[{}, nee {nee:?}]: films differ",
                    config.label()
                );
            }
        }
    }
}

#[test]
fn verify_checks_the_emulated_wavefront_against_the_cpu() {
    let overrides = Overrides {
        spp: Some(2),
        size: Some((32, 24)),
        ..Overrides::default()
    };
    let options = BackendOptions {
        wavefront: WavefrontConfig {
            capacity: Capacity::Slots(1024),
            ..WavefrontConfig::default()
        },
        ..BackendOptions::default()
    };
    let report = verify(
        &repo("scenes/rtiow_final.toml"),
        &overrides,
        BackendKind::CpuWave,
        options,
    )
    .unwrap();
    assert!(report.passed(), "{}", report.describe());
    assert!(report.rays > 32 * 24 * 2, "every path traced at least its camera ray");
}

#[test]
fn the_wavefront_refuses_debug_views_and_auto_capacity_without_a_gpu() {
    let scene = seed_scene("cornell_diffuse");
    let (params, spp) = renderer::render::params_for(
        &scene.scene,
        &Overrides {
            size: Some((8, 8)),
            spp: Some(1),
            ..Overrides::default()
        },
        device::scene::RenderView::Normals,
    );
    let wave = Renderer::new(BackendKind::CpuWave, BackendOptions::default()).unwrap();
    let err = wave.render(&scene, params, spp, &|_| {}).unwrap_err();
    assert!(format!("{err:#}").contains("debug views"), "{err:#}");
    let auto = BackendOptions {
        wavefront: WavefrontConfig {
            capacity: Capacity::Auto,
            ..WavefrontConfig::default()
        },
        ..BackendOptions::default()
    };
    let params = RenderParams {
        view: device::scene::RenderView::Radiance,
        ..params
    };
    let err = Renderer::new(BackendKind::CpuWave, auto)
        .unwrap()
        .render(&scene, params, spp, &|_| {})
        .unwrap_err();
    assert!(format!("{err:#}").contains("`auto` capacity needs a GPU"), "{err:#}");
}

#[test]
fn with_textures_the_emulated_wavefront_matches_the_cpu_in_every_schedule() {
    // Image, checker and noise textures on spheres, polygons, a box and an
    // OBJ mesh with `vt`, and a light whose emission is a texture, sampled
    // by next-event estimation (the scene turns it on) with Sobol samples.
    let name = "textured";
    let scene = seed_scene(name);
    assert!(!scene.scene.textures.textures.is_empty() && !scene.scene.geometry.triangle_uvs.is_empty());
    let overrides = Overrides {
        sampler: Some(SamplerKind::Sobol),
        ..Overrides::default()
    };
    let params = RenderParams {
        width: 40,
        height: 24,
        ..renderer::render::params_for(&scene.scene, &overrides, device::scene::RenderView::Radiance).0
    };
    assert_eq!(params.nee, device::scene::Nee::On);
    let reference = render(BackendKind::Cpu, WavefrontConfig::default(), name, params, 2);
    let lit = reference.film.iter().filter(|p| p.r + p.g + p.b > 0).count();
    assert!(lit > reference.film.len() / 2, "{name}: mostly black");
    every_configuration_matches(name, params, 2, &reference);
}
