//! Energy conservation: white furnaces and hand-computable radiance.

mod util;

use device::film::FIXED_POINT_SCALE;
use renderer::backend::{BackendKind, RenderOutput};
use renderer::prepared::PreparedScene;
use util::{render, scene};

/// A scene under a uniform background of radiance 1 with the given materials
/// and objects, seen by a pinhole camera from +z.
fn furnace(materials_and_objects: &str, max_depth: u32) -> String {
    format!(
        r#"
[render]
width = 24
height = 16
spp = 4
max_depth = {max_depth}

[camera]
look_from = [0.0, 0.0, 8.0]
look_at = [0.0, 0.0, 0.0]
vfov = 30.0

[background]
kind = "constant"
color = [1.0, 1.0, 1.0]

{materials_and_objects}
"#
    )
}

/// Renders `s` (a white furnace) at 24x16 and 4 spp on the CPU, checks
/// that every pixel holds exactly one per sample, and returns the render.
fn every_path_returns_one(s: &PreparedScene) -> RenderOutput {
    let out = render(s, BackendKind::Cpu, 24, 16, 4);
    let one = 4 * FIXED_POINT_SCALE as u64;
    for p in &out.film {
        assert_eq!((p.r, p.g, p.b), (one, one, one));
    }
    out
}

#[test]
fn white_convex_objects_vanish_in_a_white_furnace() {
    // Albedo 1 under radiance 1: every path returns exactly 1, so every
    // pixel's fixed-point sum is exactly spp units of radiance 1.
    let s = scene(&furnace(
        r#"
[materials.white]
kind = "diffuse"
albedo = [1.0, 1.0, 1.0]

[[objects]]
kind = "sphere"
center = [-1.0, 0.0, 0.0]
radius = 1.0
material = "white"

[[objects]]
kind = "box"
corner = [0.5, -0.8, -0.8]
edges = [[1.2, 0.3, 0.0], [-0.3, 1.2, 0.0], [0.0, 0.0, 1.5]]
material = "white"
"#,
        16,
    ));
    let out = every_path_returns_one(&s);
    // The objects were really hit: some paths took two segments.
    assert!(out.rays > 24 * 16 * 4);
}

#[test]
fn grey_sphere_returns_its_albedo() {
    let s = scene(&furnace(
        r#"
[materials.grey]
kind = "diffuse"
albedo = [0.5, 0.25, 0.125]

[[objects]]
kind = "sphere"
center = [0.0, 0.0, 0.0]
radius = 3.0
material = "grey"
"#,
        16,
    ));
    let out = render(&s, BackendKind::Cpu, 24, 16, 4);
    // The sphere fills the centre pixel: one bounce, then the background.
    let centre = out.film[8 * 24 + 12].mean(4);
    assert_eq!((centre.r, centre.g, centre.b), (0.5, 0.25, 0.125));
}

#[test]
fn inside_an_emitting_box_radiance_is_the_geometric_series() {
    // Camera inside a closed box of inward-facing walls of emission e and
    // albedo a: every path sees e (1 + a + ... + a^(D-1)) for depth D. With
    // e = 1, a = 0.5, D = 8 that is 2 - 2^-7 = 1.9921875, exactly
    // representable, so every pixel must be exactly that.
    let wall = |v: &str| format!("[[objects]]\nkind = \"polygon\"\nvertices = {v}\nmaterial = \"glow\"\n");
    let walls = [
        "[[-10,-10,-10],[-10,10,-10],[-10,10,10],[-10,-10,10]]",
        "[[10,-10,-10],[10,-10,10],[10,10,10],[10,10,-10]]",
        "[[-10,-10,-10],[-10,-10,10],[10,-10,10],[10,-10,-10]]",
        "[[-10,10,-10],[10,10,-10],[10,10,10],[-10,10,10]]",
        "[[-10,-10,-10],[10,-10,-10],[10,10,-10],[-10,10,-10]]",
        "[[-10,-10,10],[-10,10,10],[10,10,10],[10,-10,10]]",
    ];
    let objects: String = walls.iter().map(|v| wall(v)).collect();
    let s = scene(&furnace(
        &format!(
            "[materials.glow]\nkind = \"diffuse\"\nalbedo = [0.5, 0.5, 0.5]\nemission = [1.0, 1.0, 1.0]\n\n{objects}"
        ),
        8,
    ));
    let out = render(&s, BackendKind::Cpu, 24, 16, 4);
    for p in &out.film {
        let m = p.mean(4);
        assert_eq!((m.r, m.g, m.b), (1.9921875, 1.9921875, 1.9921875));
    }
    assert_eq!(out.rays, 24 * 16 * 4 * 8);
}

#[test]
fn clear_glass_and_perfect_mirrors_conserve_energy() {
    let s = scene(&furnace(
        r#"
[materials.glass]
kind = "dielectric"
ior = 1.5

[materials.mirror]
kind = "metal"
albedo = [1.0, 1.0, 1.0]

[[objects]]
kind = "sphere"
center = [-1.1, 0.0, 0.0]
radius = 1.0
material = "glass"

[[objects]]
kind = "sphere"
center = [1.1, 0.0, 0.0]
radius = 1.0
material = "mirror"
"#,
        64,
    ));
    let out = render(&s, BackendKind::Cpu, 24, 16, 4);
    let mut total = 0.0f64;
    for p in &out.film {
        let m = p.mean(4);
        assert!(m.r <= 1.0 + 1e-6, "a lossless scene cannot add energy: {m:?}");
        total += m.r as f64;
    }
    // Only paths cut off by the depth limit (64 internal reflections) lose energy.
    assert!(
        total / out.film.len() as f64 > 0.999,
        "mean {}",
        total / out.film.len() as f64
    );
}

#[test]
fn beer_lambert_attenuates_by_transmittance_to_the_distance() {
    // An index-matched slab (ior 1: no refraction, no reflection) 2 units
    // thick with transmittance 0.5 per unit seen head-on through a very
    // narrow field of view: I = 1 · 0.5² = 0.25.
    let s = scene(
        &furnace(
            r#"
[materials.tinted]
kind = "dielectric"
ior = 1.0
transmittance = [0.5, 0.8, 1.0]

[[objects]]
kind = "box"
corner = [-50.0, -50.0, -1.0]
edges = [[100.0, 0.0, 0.0], [0.0, 100.0, 0.0], [0.0, 0.0, 2.0]]
material = "tinted"
"#,
            8,
        )
        .replace("vfov = 30.0", "vfov = 0.01"),
    );
    let out = render(&s, BackendKind::Cpu, 24, 16, 4);
    for p in &out.film {
        let m = p.mean(4);
        assert!(
            (m.r - 0.25).abs() < 2e-5 && (m.g - 0.64).abs() < 2e-5 && (m.b - 1.0).abs() < 2e-5,
            "{m:?}"
        );
    }
}

#[test]
fn bunny_in_a_white_furnace_stays_white_within_the_noise() {
    // A non-convex mesh: paths bounce between its parts, still with albedo 1.
    let s = scene(&furnace(
        r#"
[materials.white]
kind = "diffuse"
albedo = [1.0, 1.0, 1.0]

[[objects]]
kind = "mesh"
file = "scenes/meshes/bunny.obj"
material = "white"
transform = { scale = 0.3, translate = [0.0, -1.5, 0.0] }
"#,
        256,
    ));
    let out = render(&s, BackendKind::Cpu, 24, 16, 4);
    for p in &out.film {
        let m = p.mean(4);
        assert!((m.r - 1.0).abs() < 1e-5, "{m:?}");
    }
}

#[test]
fn a_white_coated_sphere_vanishes_in_a_white_furnace_whatever_its_texture_costs() {
    // The coat reflects with weight 1 and a white base scatters with weight
    // 1, so every path returns exactly 1; the noise texture (8 octaves)
    // blends white into white.
    let s = scene(&furnace(
        r#"
[materials.coat]
kind = "coated"
albedo = [1.0, 1.0, 1.0]
pattern = [1.0, 1.0, 1.0]
octaves = 8
frequency = 3.0

[[objects]]
kind = "sphere"
center = [0.0, 0.0, 0.0]
radius = 2.0
material = "coat"
"#,
        16,
    ));
    let out = every_path_returns_one(&s);
    assert!(out.rays > 24 * 16 * 4);
}

#[test]
fn a_coated_base_shows_its_noise_texture() {
    // A base under a coat of index 1 (which reflects only at grazing
    // angles) lit by the furnace: a central pixel returns about its base
    // colour, which the noise blends between albedo and pattern, so the
    // centre of the image is not uniform.
    let s = scene(&furnace(
        r#"
[materials.coat]
kind = "coated"
albedo = [0.1, 0.1, 0.1]
pattern = [0.9, 0.9, 0.9]
ior = 1.0
octaves = 4
frequency = 2.0

[[objects]]
kind = "sphere"
center = [0.0, 0.0, 0.0]
radius = 3.0
material = "coat"
"#,
        2,
    ));
    let out = render(&s, BackendKind::Cpu, 24, 16, 4);
    let centre = |i: usize| (8..16).contains(&(i % 24)) && (5..11).contains(&(i / 24));
    let values: Vec<f32> = (0..out.film.len())
        .filter(|&i| centre(i))
        .map(|i| out.film[i].mean(4).r)
        .collect();
    let (lo, hi) = values
        .iter()
        .fold((f32::MAX, f32::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    assert!(lo >= 0.1 - 1e-4 && hi <= 1.0 + 1e-4, "{lo}..{hi}");
    assert!(hi - lo > 0.2, "the texture is flat: {lo}..{hi}");
}
