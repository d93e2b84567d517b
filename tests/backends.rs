//! Back-end agreement: the same scene and seed give the same film, bit for
//! bit, on every back end available here (see the GPU checks in `wavepath
//! verify` for the GPU back ends).

mod util;

use util::{SEED_SCENES, render, seed_scene};
use wavepath::backend::BackendKind;

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
