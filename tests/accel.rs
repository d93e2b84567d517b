//! Every acceleration structure returns the same closest hit as brute force,
//! on randomised scenes and rays (a property test over many seeds), including
//! rays that start inside boxes and inside dielectric spheres, and ties
//! between coincident surfaces; and every scene file renders the same image
//! whichever structure traverses it.

mod util;

use device::accel::closest_hit;
use device::features::Features;
use device::geometry::{Interval, Parallelepiped, Sphere, Triangle};
use device::math::{Ray, Vec3};
use device::scene::RenderView;
use proptest::prelude::*;
use renderer::accel::{AccelChoice, AccelSettings, BuiltAccel, BvhSettings, build};
use renderer::backend::{BackendKind, BackendOptions};
use renderer::prepared::PreparedScene;
use renderer::render::{Overrides, load_scene, params_for, render_scene};
use renderer::scene::{self, Geometry};

/// A deterministic stream of numbers for building random content.
struct Numbers(u32);

impl Numbers {
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(1);
        (device::rng::pcg_hash(self.0.wrapping_mul(0x9e37_79b9)) >> 8) as f32 / 16_777_216.0
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next()
    }
    fn point(&mut self, extent: f32) -> Vec3 {
        Vec3::new(
            self.range(-extent, extent),
            self.range(-extent, extent),
            self.range(-extent, extent),
        )
    }
    fn direction(&mut self) -> Vec3 {
        loop {
            let v = self.point(1.0);
            if v.length() > 0.1 && v.length() <= 1.0 {
                return v.normalized();
            }
        }
    }
}

/// A scene of `n` random primitives of every type, some overlapping, some
/// sharing planes (axis-aligned boxes on a grid) to provoke ties and rays in
/// split planes.
fn random_geometry(seed: u32, n: usize) -> Geometry {
    let mut r = Numbers(seed.wrapping_mul(7919));
    let mut g = Geometry::default();
    for i in 0..n {
        match i % 4 {
            0 => g.spheres.push(Sphere::new(r.point(10.0), r.range(0.05, 2.0), 0)),
            1 => {
                let corner = if r.next() < 0.5 {
                    r.point(10.0)
                } else {
                    Vec3::new(r.range(-8.0, 8.0).round(), 0.0, r.range(-8.0, 8.0).round())
                };
                let edges = if r.next() < 0.5 {
                    [
                        Vec3::new(1.0, 0.0, 0.0),
                        Vec3::new(0.0, 1.0, 0.0),
                        Vec3::new(0.0, 0.0, 1.0),
                    ]
                } else {
                    [r.point(2.0), r.point(2.0), r.point(2.0)]
                };
                if edges[0].dot(edges[1].cross(edges[2])).abs() > 1e-3 {
                    g.boxes.push(Parallelepiped::new(corner, edges, 0));
                }
            }
            2 => {
                let c = r.point(10.0);
                let (u, v) = (r.point(2.0), r.point(2.0));
                let first = g.polygon_vertices.len() as u32;
                let quad = [c, c + u, c + u + v, c + v];
                if u.cross(v).length() > 1e-3 {
                    g.polygons.push(device::geometry::Polygon::new(&quad, first, 0));
                    g.polygon_vertices.extend_from_slice(&quad);
                }
            }
            _ => {
                let a = r.point(10.0);
                let (b, c) = (a + r.point(2.0), a + r.point(2.0));
                if (b - a).cross(c - a).length() > 1e-4 {
                    g.triangles.push(Triangle::new(a, b, c, 0));
                }
            }
        }
    }
    g
}

/// The default build parameters for `choice`.
fn settings(choice: AccelChoice) -> AccelSettings {
    AccelSettings {
        choice,
        ..AccelSettings::default()
    }
}

/// A seed scene's camera and materials with `geometry`, and the structure
/// `accel` over it.
fn scene_with(geometry: Geometry, accel: AccelSettings) -> PreparedScene {
    let mut s = scene::load(&util::repo("scenes/cornell_diffuse.toml")).unwrap();
    s.geometry = geometry;
    s.declared_accel = accel;
    PreparedScene::new(s, None)
}

/// Rays of three kinds: from outside, from inside a sphere, from inside a box.
fn random_rays(g: &Geometry, seed: u32, count: usize) -> Vec<Ray> {
    let mut r = Numbers(seed ^ 0xabcd);
    (0..count)
        .map(|i| {
            let origin = match i % 3 {
                0 => r.point(14.0),
                1 if !g.spheres.is_empty() => g.spheres[i % g.spheres.len()].center,
                2 if !g.boxes.is_empty() => {
                    let corners = renderer::accel::bounds::box_corners(&g.boxes[i % g.boxes.len()]);
                    corners.iter().fold(Vec3::ZERO, |s, &c| s + c) * 0.125
                }
                _ => r.point(14.0),
            };
            Ray::new(origin, r.direction())
        })
        .collect()
}

fn assert_same_hits(brute: &PreparedScene, accel: &PreparedScene, rays: &[Ray]) -> Result<(), TestCaseError> {
    let camera = brute.scene.camera_for(4, 4);
    let (bv, av) = (brute.view(camera, Features::ALL), accel.view(camera, Features::ALL));
    for ray in rays {
        let want = closest_hit(&bv.primitives, &bv.accel, ray, Interval::POSITIVE);
        let got = closest_hit(&av.primitives, &av.accel, ray, Interval::POSITIVE);
        match (want, got) {
            (None, None) => {}
            // The closest hit is a total order: at a tie (two primitives at
            // exactly the same distance) every structure keeps the smaller
            // primitive reference, so the whole hit must match.
            (Some(w), Some(g)) => prop_assert_eq!(w, g, "ray {:?}", ray),
            (w, g) => prop_assert!(
                false,
                "ray {:?}: brute {:?} vs accel {:?}",
                ray,
                w.map(|h| h.t),
                g.map(|h| h.t)
            ),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_structure_finds_the_brute_force_hit(seed in any::<u32>(), n in 1usize..160) {
        let geometry = random_geometry(seed, n);
        prop_assume!(geometry.primitive_count() > 0);
        let rays = random_rays(&geometry, seed, 300);
        let brute = scene_with(geometry.clone(), settings(AccelChoice::None));
        for choice in [AccelChoice::Bvh, AccelChoice::Bvh8, AccelChoice::Kdtree] {
            let accel = scene_with(geometry.clone(), settings(choice));
            assert_same_hits(&brute, &accel, &rays)?;
        }
    }
}

#[test]
fn rays_lying_in_split_planes_and_grazing_faces_agree() {
    // A grid of unit cubes on y = 0, and rays running exactly along the
    // shared faces (x = integer, y = 0.5 and y = 1) in every direction.
    let mut g = Geometry::default();
    for i in -4..4 {
        for k in -4..4 {
            let corner = Vec3::new(i as f32, 0.0, k as f32);
            let e = [
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(0.0, 1.0, 0.0),
                Vec3::new(0.0, 0.0, 1.0),
            ];
            g.boxes.push(Parallelepiped::new(corner, e, 0));
        }
    }
    let mut rays = Vec::new();
    for x in -5..=5 {
        for (y, dir) in [
            (1.0, Vec3::new(0.0, 0.0, 1.0)),
            (0.5, Vec3::new(0.0, 0.0, -1.0)),
            (1.0, Vec3::new(1.0, 0.0, 0.0)),
        ] {
            rays.push(Ray::new(Vec3::new(x as f32, y, -9.0), dir));
            rays.push(Ray::new(Vec3::new(-9.0, y, x as f32), Vec3::new(1.0, 0.0, 0.0)));
        }
    }
    let brute = scene_with(g.clone(), settings(AccelChoice::None));
    for choice in [AccelChoice::Bvh, AccelChoice::Bvh8, AccelChoice::Kdtree] {
        assert_same_hits(&brute, &scene_with(g.clone(), settings(choice)), &rays).unwrap();
    }
}

#[test]
fn structures_report_their_size_and_respect_the_depth_limit() {
    let g = random_geometry(1, 2000);
    for choice in [AccelChoice::Bvh, AccelChoice::Bvh8, AccelChoice::Kdtree] {
        let built: BuiltAccel = build(&g.primitives(), &settings(choice));
        assert!(built.stats.nodes > 1 && built.stats.leaves > 1);
        assert!(built.stats.max_depth < device::accel::bvh::MAX_DEPTH);
        assert!(built.stats.bytes > 0);
        assert!(
            built.stats.prim_refs >= g.primitive_count(),
            "every primitive is referenced"
        );
    }
}

#[test]
fn lopsided_trees_hit_the_depth_limit_with_small_leaves() {
    // Spheres at x = 1.2^i, binned in two bins: each split peels off the
    // four or so beyond half the extent, so the tree runs into the depth
    // limit with well over 64 primitives left. It must still end in leaves
    // that the 8-wide BVH can hold, and find the brute-force hits.
    let mut g = Geometry::default();
    let xs: Vec<f32> = (0..400).map(|i| 1.2f32.powi(i)).collect();
    for &x in &xs {
        g.spheres.push(Sphere::new(Vec3::new(x, 0.0, 0.0), 0.1, 0));
    }
    let brute = scene_with(g.clone(), settings(AccelChoice::None));
    let rays: Vec<Ray> = xs
        .iter()
        .map(|&x| Ray::new(Vec3::new(x, 5.0, 0.05), Vec3::new(0.0, -1.0, 0.0)))
        .collect();
    for choice in [AccelChoice::Bvh, AccelChoice::Bvh8] {
        let two_bins = AccelSettings {
            choice,
            bvh: BvhSettings {
                bins: 2,
                ..BvhSettings::default()
            },
            ..AccelSettings::default()
        };
        let s = scene_with(g.clone(), two_bins);
        let binary = build(
            &g.primitives(),
            &AccelSettings {
                choice: AccelChoice::Bvh,
                ..two_bins
            },
        );
        assert_eq!(
            binary.stats.max_depth,
            device::accel::bvh::MAX_DEPTH - 1,
            "the tree reaches the limit"
        );
        let largest = binary.bvh_nodes.iter().flat_map(|n| n.count).max();
        assert!(largest.is_some_and(|l| l <= 64), "largest leaf {largest:?}");
        assert_same_hits(&brute, &s, &rays).unwrap();
    }
}

#[test]
fn coincident_surfaces_resolve_to_the_smaller_primitive_everywhere() {
    // Every primitive twice, the copy with material 1: each ray that hits
    // meets two surfaces at exactly the same distance, and every structure
    // must keep the original (the smaller primitive reference, material 0).
    let mut g = random_geometry(7, 120);
    let copy = |m: &mut u32| *m = 1;
    let (spheres, boxes, triangles) = (g.spheres.clone(), g.boxes.clone(), g.triangles.clone());
    g.spheres.extend(spheres.into_iter().map(|mut s| {
        copy(&mut s.material);
        s
    }));
    g.boxes.extend(boxes.into_iter().map(|mut b| {
        copy(&mut b.material);
        b
    }));
    g.triangles.extend(triangles.into_iter().map(|mut t| {
        copy(&mut t.material);
        t
    }));
    let rays = random_rays(&g, 7, 600);
    for choice in [
        AccelChoice::None,
        AccelChoice::Bvh,
        AccelChoice::Bvh8,
        AccelChoice::Kdtree,
    ] {
        let s = scene_with(g.clone(), settings(choice));
        let view = s.view(s.scene.camera_for(4, 4), Features::ALL);
        let hits: Vec<_> = rays
            .iter()
            .filter_map(|ray| closest_hit(&view.primitives, &view.accel, ray, Interval::POSITIVE))
            .collect();
        assert!(hits.len() > 100, "{choice:?}: only {} hits", hits.len());
        for h in hits {
            assert_eq!(h.material, 0, "{choice:?}: the copy {:?} won a tie", h.prim);
        }
    }
}

#[test]
fn every_scene_file_renders_the_same_image_with_every_structure() {
    let mut scenes = 0;
    for entry in std::fs::read_dir(util::repo("scenes")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let film = |accel| {
            let overrides = Overrides {
                accel: Some(accel),
                spp: Some(2),
                size: Some((16, 12)),
                ..Overrides::default()
            };
            let scene = load_scene(&path, &overrides).unwrap_or_else(|e| panic!("{e}"));
            let (params, spp) = params_for(&scene.scene, &overrides, RenderView::Radiance);
            render_scene(
                &scene,
                BackendKind::Cpu,
                params,
                spp,
                &BackendOptions::default(),
                &|_| {},
            )
            .expect("render")
            .film
        };
        let brute = film(AccelChoice::None);
        assert!(brute.iter().any(|p| p.r + p.g + p.b > 0), "{}: black", path.display());
        for choice in [AccelChoice::Bvh, AccelChoice::Bvh8, AccelChoice::Kdtree] {
            let other = film(choice);
            let differing = brute.iter().zip(&other).filter(|(a, b)| a != b).count();
            assert_eq!(
                differing,
                0,
                "{}: {choice:?} differs from brute force in {differing} pixels",
                path.display()
            );
        }
        scenes += 1;
    }
    assert!(scenes >= 7, "{scenes} scene files");
}
