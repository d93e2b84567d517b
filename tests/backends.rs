//! Back-end agreement: the same scene and seed give the same film, bit for
//! bit, on every back end available here (see the GPU checks in `wavepath
//! verify` for the GPU back ends).

mod util;

use renderer::backend::BackendKind;
use util::{SEED_SCENES, render, seed_scene};

#[test]
fn serial_and_parallel_cpu_back_ends_agree_bit_for_bit_on_every_seed_scene() {
    for name in SEED_SCENES {
        let scene = seed_scene(name);
        let (w, h, spp) = if name == "cs500" { (12, 12, 1) } else { (24, 16, 2) };
        let serial = render(&scene, BackendKind::CpuSerial, w, h, spp);
        let parallel = render(&scene, BackendKind::Cpu, w, h, spp);
        assert_eq!(serial.film, parallel.film, "{name}: films differ");
        assert_eq!(serial.rays, parallel.rays, "{name}: ray counts differ");
        assert!(
            serial.film.iter().any(|p| p.r + p.g + p.b > 0),
            "{name}: image is black"
        );
    }
}

#[test]
fn the_seed_decides_the_image() {
    let mut scene = seed_scene("cornell_diffuse");
    let a = render(&scene, BackendKind::Cpu, 24, 16, 2);
    let again = render(&scene, BackendKind::Cpu, 24, 16, 2);
    assert_eq!(a.film, again.film, "same seed, same image");
    scene.scene.settings.seed += 1;
    let b = render(&scene, BackendKind::Cpu, 24, 16, 2);
    assert_ne!(a.film, b.film, "another seed, another image");
}

#[test]
fn a_pixel_whose_paths_regenerate_sums_what_its_samples_sum_one_by_one() {
    use device::accel::Dispatch;
    use device::integrator::{PixelResult, SampleRange, render_pixel, trace_path};
    use device::material::AnyMaterial;
    use device::observe::Unobserved;
    use device::warp::Unsynchronised;
    use renderer::render::{Overrides, load_scene, params_for};

    // Russian roulette from the first bounce makes the paths of one pixel
    // end at very different depths: the case where the next sample starts
    // in the middle of the loop most often. Next-event estimation adds the
    // shadow rays.
    let cases = [
        ("experiments/scenes/rtiow_roulette.toml", false),
        ("scenes/cornell_smallpt.toml", true),
        ("scenes/cs500.toml", true),
    ];
    for (file, nee) in cases {
        let overrides = Overrides {
            size: Some((16, 12)),
            spp: Some(9),
            nee: nee.then_some(renderer::settings::nee::NeeMode::On),
            ..Overrides::default()
        };
        let scene = load_scene(&util::repo(file), &overrides).unwrap_or_else(|e| panic!("{e}"));
        let (params, spp) = params_for(&scene.scene, &overrides, device::scene::RenderView::Radiance);
        let features = util::render_features(&scene, params, spp);
        let view = scene.view(scene.scene.camera_for(params.width, params.height), features);
        let (mut rays, mut paths_longer_than_one) = (0, 0);
        for pixel in (0..params.width * params.height).step_by(7) {
            let samples = SampleRange { begin: 2, end: 2 + spp };
            let together =
                render_pixel::<Dispatch, AnyMaterial>(&view, &params, pixel, samples, &Unobserved, Unsynchronised);
            let mut alone = PixelResult::default();
            for sample in samples.begin..samples.end {
                let traced = trace_path::<Dispatch, AnyMaterial>(
                    &view,
                    &params,
                    (pixel, sample),
                    &Unobserved,
                    &mut Unsynchronised,
                    |c| alone.deposit(c),
                );
                alone.rays += traced;
                paths_longer_than_one += (traced > 1) as u32;
            }
            assert_eq!(together, alone, "{file}: pixel {pixel}");
            rays += together.rays;
        }
        assert!(
            rays > 0 && paths_longer_than_one > 0,
            "{file}: the paths were not traced"
        );
    }
}
