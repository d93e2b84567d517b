//! The features kernels are bound to: derived from each scene, never more
//! than it uses, and any superset of them renders the same image.

mod util;

use device::accel::Dispatch;
use device::features::{Feature, Features, LIGHT_KINDS};
use device::integrator::{SampleRange, render_pixel};
use device::material::{AnyMaterial, MaterialKind};
use device::observe::Unobserved;
use device::rng::pcg_hash;
use device::scene::{RenderParams, RenderView};
use device::warp::Unsynchronised;
use renderer::backend::{BackendKind, BackendOptions};
use renderer::prepared::PreparedScene;
use renderer::render::{Overrides, Renderer, load_scene, params_for};
use renderer::settings::capacity::Capacity;
use renderer::settings::kernels::KernelFeatures;
use renderer::settings::nee::NeeMode;
use renderer::settings::sampler::SamplerKind;
use renderer::settings::wave_config::WavefrontConfig;
use util::{render_features, repo};

/// Every scene file of the repository but those of generated meshes: the
/// seeds and the test scenes, and the studies' scenes.
fn scene_files() -> Vec<String> {
    let mut names: Vec<String> = ["scenes", "experiments/scenes"]
        .into_iter()
        .flat_map(|dir| {
            std::fs::read_dir(repo(dir))
                .unwrap()
                .map(move |e| format!("{dir}/{}", e.unwrap().file_name().into_string().unwrap()))
        })
        .filter(|n| n.ends_with(".toml") && !n.ends_with("dragon.toml") && !n.ends_with("_obj.toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 11, "{names:?}");
    names
}

/// The settings that add features to a scene's: next-event estimation
/// and the sampler, each with and without (not every pairing: each scene
/// renders once per pairing in each test).
const SETTINGS: [(NeeMode, SamplerKind); 3] = [
    (NeeMode::Off, SamplerKind::Hash),
    (NeeMode::On, SamplerKind::Hash),
    (NeeMode::On, SamplerKind::Sobol),
];

/// `name` loaded at `size` and `spp`, with next-event estimation `nee`
/// and `sampler`, and its params.
fn small(
    name: &str,
    (nee, sampler): (NeeMode, SamplerKind),
    size: (u32, u32),
    spp: u32,
) -> (PreparedScene, RenderParams, u32) {
    let overrides = Overrides {
        size: Some(size),
        spp: Some(spp),
        nee: Some(nee),
        sampler: Some(sampler),
        ..Overrides::default()
    };
    let scene = load_scene(&repo(name), &overrides).unwrap_or_else(|e| panic!("{name}: {e:#}"));
    let (params, spp) = params_for(&scene.scene, &overrides, RenderView::Radiance);
    (scene, params, spp)
}

/// Every pixel's sum, traced by the CPU through code that holds `features`.
fn film_with(scene: &PreparedScene, params: RenderParams, spp: u32, features: Features) -> Vec<[u64; 3]> {
    let view = scene.view(scene.scene.camera_for(params.width, params.height), features);
    (0..params.width * params.height)
        .map(|pixel| {
            let samples = SampleRange { begin: 0, end: spp };
            let r = render_pixel::<Dispatch, AnyMaterial>(&view, &params, pixel, samples, &Unobserved, Unsynchronised);
            [r.sum.r, r.sum.g, r.sum.b]
        })
        .collect()
}

#[test]
fn each_scenes_features_are_exactly_those_it_uses() {
    for name in scene_files() {
        for (nee, sampler) in SETTINGS {
            // Large enough that every object shows.
            let (scene, params, spp) = small(&name, (nee, sampler), (64, 48), 4);
            let features = render_features(&scene, params, spp);
            assert!(
                features.iter().any(|f| matches!(f, Feature::Primitive(_))),
                "{name}: no primitive kind in {features}"
            );
            assert_eq!(
                features.contains(Feature::Nee),
                nee == NeeMode::On && !scene.lights.lights.is_empty(),
                "{name}, nee {nee:?}: {features}"
            );
            let shadow_rays = features.contains(Feature::Nee);
            for kind in LIGHT_KINDS {
                assert_eq!(
                    features.contains(Feature::Light(kind)),
                    shadow_rays && scene.lights.lights.iter().any(|l| l.prim.kind() == kind),
                    "{name}, nee {nee:?}: {features}"
                );
            }
            assert_eq!(
                features.contains(Feature::Sobol),
                sampler == SamplerKind::Sobol,
                "{name}, sampler {sampler:?}: {features}"
            );
            // Each feature derived is needed: the code without it renders
            // another image. But the emissive kind's: its code is to
            // absorb, which is what a kind left out does.
            let full = film_with(&scene, params, spp, features);
            let emissive = Feature::Material(MaterialKind::Emissive);
            for feature in features.iter().filter(|&f| f != emissive) {
                let without = features.without(Features::of([feature]));
                assert!(
                    film_with(&scene, params, spp, without) != full,
                    "{name}, nee {nee:?}, sampler {sampler:?}: {} is derived but the image does not need it",
                    feature.name()
                );
            }
        }
    }
}

#[test]
fn every_superset_of_a_scenes_features_renders_its_image_on_the_cpu_and_the_emulated_wavefront() {
    // The random sets' bits, from the renderer's own hash.
    let mut draws = (0u32..).map(pcg_hash);
    for name in scene_files() {
        for (nee, sampler) in SETTINGS {
            let (scene, params, spp) = small(&name, (nee, sampler), (32, 24), 2);
            let reference = Renderer::new(BackendKind::Cpu, BackendOptions::default())
                .unwrap()
                .render(&scene, params, spp, &|_| {})
                .unwrap();
            // Two random sets of features on top of the scene's, then
            // exactly its own and every feature.
            let random = (0..2).map(|_| {
                let bits = draws.next().unwrap();
                let names: Vec<&str> = (Feature::ALL.iter().enumerate())
                    .filter(|(i, _)| bits >> i & 1 == 1)
                    .map(|(_, f)| f.name())
                    .collect();
                format!("exact+{}", names.join("+"))
                    .trim_end_matches('+')
                    .parse()
                    .unwrap()
            });
            let sets: Vec<KernelFeatures> = random.chain([KernelFeatures::EXACT, KernelFeatures::ALL]).collect();
            for kernels in sets {
                // With the drain, the per-class kernels and the dispatching one both run.
                let wavefront = WavefrontConfig {
                    kernels,
                    capacity: Capacity::Slots(1024),
                    drain_below: 300,
                    ..WavefrontConfig::default()
                };
                let options = BackendOptions {
                    wavefront,
                    ..BackendOptions::default()
                };
                let out = Renderer::new(BackendKind::CpuWave, options)
                    .unwrap()
                    .render(&scene, params, spp, &|_| {})
                    .unwrap();
                assert!(
                    out.film == reference.film,
                    "{name}, nee {nee:?}, sampler {sampler:?}, kernels {kernels}: films differ"
                );
            }
            // The dispatching code alone, bound to every feature.
            let exact = film_with(&scene, params, spp, render_features(&scene, params, spp));
            assert!(
                film_with(&scene, params, spp, Features::ALL) == exact,
                "{name}, nee {nee:?}, sampler {sampler:?}"
            );
        }
    }
}
