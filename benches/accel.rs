//! Criterion benchmarks of the acceleration structures on the CPU: build
//! time, and closest-hit throughput (rays/s) for random rays, per structure.
//! Run with `cargo bench --bench accel`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use device::accel::closest_hit;
use device::geometry::{Aabb, Interval};
use device::math::{Ray, Vec3};
use device::rng::{Dim, PathRng, Sampler};
use renderer::accel::{AccelChoice, AccelSettings, build};
use renderer::prepared::PreparedScene;
use renderer::scene::{self, Scene};
use std::hint::black_box;
use std::path::Path;

/// The seed scenes with enough primitives for a structure to matter.
const SCENES: [&str; 3] = ["rtiow_final", "cs500", "displaced_sphere"];

/// Brute force is timed only up to this many primitives (it is quadratic
/// in the measurement's cost).
const BRUTE_FORCE_MAX: usize = 5000;

fn load(name: &str) -> Scene {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenes")
        .join(format!("{name}.toml"));
    scene::load(&path).expect("seed scene loads")
}

/// Rays from random points inside the scene's bounds in random directions:
/// incoherent, like bounce rays.
fn random_rays(s: &Scene, count: u32) -> Vec<Ray> {
    let b = s
        .geometry
        .primitives()
        .iter()
        .fold(Aabb::EMPTY, |b, (_, pb)| b.union(*pb));
    let e = b.extent();
    (0..count)
        .map(|i| {
            let r = PathRng::new(Sampler::Hash, 7, i, 0);
            let u = |d| r.uniform(0, d);
            let origin = b.min + Vec3::new(e.x * u(Dim::PixelX), e.y * u(Dim::PixelY), e.z * u(Dim::LensU)) * 0.98;
            let z = 1.0 - 2.0 * u(Dim::ScatterU);
            let phi = std::f32::consts::TAU * u(Dim::ScatterV);
            let s2 = (1.0 - z * z).max(0.0).sqrt();
            Ray::new(origin, Vec3::new(s2 * phi.cos(), s2 * phi.sin(), z))
        })
        .collect()
}

fn builds(c: &mut Criterion) {
    let mut group = c.benchmark_group("build");
    group.sample_size(10);
    for name in SCENES {
        let s = load(name);
        let prims = s.geometry.primitives();
        for choice in [AccelChoice::Bvh, AccelChoice::Bvh8, AccelChoice::Kdtree] {
            let settings = AccelSettings {
                choice,
                ..AccelSettings::default()
            };
            group.throughput(Throughput::Elements(s.geometry.primitive_count() as u64));
            group.bench_function(BenchmarkId::new(choice.label(), name), |b| {
                b.iter(|| build(black_box(&prims), &settings))
            });
        }
    }
    group.finish();
}

fn traversal(c: &mut Criterion) {
    let mut group = c.benchmark_group("closest_hit");
    for name in SCENES {
        let s = load(name);
        let rays = random_rays(&s, 4096);
        for choice in [
            AccelChoice::None,
            AccelChoice::Bvh,
            AccelChoice::Bvh8,
            AccelChoice::Kdtree,
        ] {
            if choice == AccelChoice::None && s.geometry.primitive_count() > BRUTE_FORCE_MAX {
                continue;
            }
            let prepared = PreparedScene::new(s.clone(), Some(choice));
            let view = prepared.view(s.camera_for(4, 4), prepared.features());
            group.throughput(Throughput::Elements(rays.len() as u64));
            group.bench_function(BenchmarkId::new(choice.label(), name), |b| {
                b.iter(|| {
                    rays.iter()
                        .filter(|r| {
                            closest_hit(&view.primitives, &view.accel, black_box(r), Interval::POSITIVE).is_some()
                        })
                        .count()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, builds, traversal);
criterion_main!(benches);
