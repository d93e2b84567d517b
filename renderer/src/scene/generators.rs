//! Procedural scene content: RTIOW's final scene, smallpt's Cornell box and
//! the material-cost field of coated spheres.

use super::builder::SceneBuilder;
use super::sections::blank_material;
use device::material::{FresnelModel, Material, MaterialKind};
use device::math::{Rgb, Vec3};
use device::noise::Basis;
use device::rng::pcg_hash;
use device::texture::Colour;

/// The largest `grid` accepted by [`rtiow_final`] (a 400 × 400 field).
pub const MAX_RTIOW_GRID: u32 = 200;

/// Uniform numbers in [0, 1) from a seed, drawn in sequence.
struct Sequence {
    key: u32,
    counter: u32,
}

impl Sequence {
    fn next(&mut self) -> f32 {
        self.counter += 1;
        (pcg_hash(self.key ^ pcg_hash(self.counter)) >> 8) as f32 / 16_777_216.0
    }

    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next()
    }
}

fn diffuse(albedo: Rgb) -> Material {
    Material {
        albedo: Colour::constant(albedo),
        ..blank_material(MaterialKind::Diffuse)
    }
}

fn metal(albedo: Rgb, roughness: f32) -> Material {
    Material {
        albedo: Colour::constant(albedo),
        roughness,
        ..blank_material(MaterialKind::Metal)
    }
}

fn glass(fresnel: FresnelModel, tint: f32) -> Material {
    Material {
        albedo: Colour::constant(Rgb::new(tint, tint, tint)),
        ior: 1.5,
        fresnel,
        ..blank_material(MaterialKind::Dielectric)
    }
}

/// RTIOW's final scene (Shirley, "Ray Tracing in One Weekend", §13): a ground
/// sphere, small spheres at `(a + 0.9u, 0.2, b + 0.9v)` for `a, b` in
/// `-grid..grid` (80% diffuse, 15% metal, 5% glass, skipping those near the
/// big metal sphere) and three large spheres. `grid = 11` is the book's.
pub fn rtiow_final(b: &mut SceneBuilder, grid: u32, seed: u32) {
    let mut rng = Sequence {
        key: pcg_hash(seed ^ 0x5254_494f),
        counter: 0,
    };
    let ground = b.add_material("rtiow.ground", diffuse(Rgb::new(0.5, 0.5, 0.5)));
    b.add_sphere(Vec3::new(0.0, -1000.0, 0.0), 1000.0, ground);
    let glass_m = b.add_material("rtiow.glass", glass(FresnelModel::Schlick, 1.0));
    let g = grid as i32;
    for a in -g..g {
        for c in -g..g {
            let choose = rng.next();
            let center = Vec3::new(a as f32 + 0.9 * rng.next(), 0.2, c as f32 + 0.9 * rng.next());
            if (center - Vec3::new(4.0, 0.2, 0.0)).length() <= 0.9 {
                continue;
            }
            let name = format!("rtiow.sphere[{a},{c}]");
            let m = if choose < 0.8 {
                let albedo = Rgb::new(
                    rng.next() * rng.next(),
                    rng.next() * rng.next(),
                    rng.next() * rng.next(),
                );
                b.add_material(&name, diffuse(albedo))
            } else if choose < 0.95 {
                let albedo = Rgb::new(rng.range(0.5, 1.0), rng.range(0.5, 1.0), rng.range(0.5, 1.0));
                let fuzz = rng.range(0.0, 0.5);
                b.add_material(&name, metal(albedo, fuzz))
            } else {
                glass_m
            };
            b.add_sphere(center, 0.2, m);
        }
    }
    b.add_sphere(Vec3::new(0.0, 1.0, 0.0), 1.0, glass_m);
    let brown = b.add_material("rtiow.brown", diffuse(Rgb::new(0.4, 0.2, 0.1)));
    b.add_sphere(Vec3::new(-4.0, 1.0, 0.0), 1.0, brown);
    let bronze = b.add_material("rtiow.bronze", metal(Rgb::new(0.7, 0.6, 0.5), 0.0));
    b.add_sphere(Vec3::new(4.0, 1.0, 0.0), 1.0, bronze);
}

/// The largest `grid` accepted by [`material_grid`].
pub const MAX_MATERIAL_GRID: u32 = 64;

/// The material-cost scene: `grid × grid` spheres of radius 0.45 on unit
/// spacing, resting on a ground sphere, under the sky. It has `materials`
/// coated materials, material `k` with noise basis `k` (so `materials`
/// different shading programs) and `octaves` octaves (the cost of each);
/// sphere `(i, j)` takes material `(5i + 3j) mod materials`, so that
/// neighbours differ, and the ground material 0.
pub fn material_grid(b: &mut SceneBuilder, materials: u32, octaves: u32, grid: u32) {
    let ids: Vec<u32> = (0..materials)
        .map(|k| {
            // Hues around the colour wheel, each blended into a pale grey.
            let hue = k as f32 / materials as f32 * core::f32::consts::TAU;
            let channel = |phase: f32| 0.45 + 0.35 * (hue + phase).cos();
            let albedo = Rgb::new(channel(0.0), channel(2.094), channel(4.189));
            let coated = Material {
                albedo: Colour::constant(albedo),
                pattern: Colour::constant(Rgb::new(0.85, 0.85, 0.8)),
                ior: 1.5,
                octaves,
                frequency: 4.0,
                basis: Basis(k),
                ..blank_material(MaterialKind::Coated)
            };
            b.add_material(&format!("material_grid.coated[{k}]"), coated)
        })
        .collect();
    b.add_sphere(Vec3::new(0.0, -1000.0, 0.0), 1000.0, ids[0]);
    let half = grid as f32 / 2.0;
    for i in 0..grid {
        for j in 0..grid {
            let center = Vec3::new(i as f32 + 0.5 - half, 0.45, j as f32 + 0.5 - half);
            b.add_sphere(center, 0.45, ids[((5 * i + 3 * j) % materials) as usize]);
        }
    }
}

/// smallpt's Cornell box (Beason, 2008): red and blue side walls, a mirror
/// sphere, a glass sphere (tint 0.999) and a spherical light of radius 600
/// sunk into the ceiling (emission 12). smallpt builds its walls from spheres
/// of radius 1e5, which single precision cannot intersect accurately; here
/// they are the planes those spheres approximate, the black front wall at
/// z = 170 included. That wall matters: the light sphere bulges below the
/// ceiling's height in front of the box, so paths leaving through an open
/// front would hit it and bring its light back. smallpt's camera starts its
/// rays 140 units out, past that wall: the scene's camera has `near = 140`.
pub fn smallpt_cornell(b: &mut SceneBuilder) {
    let (x0, x1, y0, y1, z0, z1) = (1.0, 99.0, 0.0, 81.6, 0.0, 170.0);
    let p = Vec3::new;
    let red = b.add_material("smallpt.left", diffuse(Rgb::new(0.75, 0.25, 0.25)));
    let blue = b.add_material("smallpt.right", diffuse(Rgb::new(0.25, 0.25, 0.75)));
    let grey = b.add_material("smallpt.grey", diffuse(Rgb::new(0.75, 0.75, 0.75)));
    let black = b.add_material("smallpt.front", diffuse(Rgb::BLACK));
    let mirror = b.add_material("smallpt.mirror", metal(Rgb::new(0.999, 0.999, 0.999), 0.0));
    let glass_m = b.add_material("smallpt.glass", glass(FresnelModel::Schlick, 0.999));
    let light = b.add_material(
        "smallpt.light",
        Material {
            emission: Colour::constant(Rgb::new(12.0, 12.0, 12.0)),
            ..blank_material(MaterialKind::Diffuse)
        },
    );
    // Each wall faces into the room (counter-clockwise seen from inside).
    b.add_polygon(&[p(x0, y0, z0), p(x0, y1, z0), p(x0, y1, z1), p(x0, y0, z1)], red);
    b.add_polygon(&[p(x1, y0, z0), p(x1, y0, z1), p(x1, y1, z1), p(x1, y1, z0)], blue);
    b.add_polygon(&[p(x0, y0, z0), p(x1, y0, z0), p(x1, y1, z0), p(x0, y1, z0)], grey);
    b.add_polygon(&[p(x0, y0, z0), p(x0, y0, z1), p(x1, y0, z1), p(x1, y0, z0)], grey);
    b.add_polygon(&[p(x0, y1, z0), p(x1, y1, z0), p(x1, y1, z1), p(x0, y1, z1)], grey);
    b.add_polygon(&[p(x0, y0, z1), p(x0, y1, z1), p(x1, y1, z1), p(x1, y0, z1)], black);
    b.add_sphere(p(27.0, 16.5, 47.0), 16.5, mirror);
    b.add_sphere(p(73.0, 16.5, 78.0), 16.5, glass_m);
    b.add_sphere(p(50.0, 681.6 - 0.27, 81.6), 600.0, light);
}
