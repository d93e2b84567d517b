//! The scene library: every file in `scenes/` loads, and each holds what its
//! source describes.

mod util;

use device::material::MaterialKind;
use util::{repo, seed_scene};

#[test]
fn every_scene_file_loads() {
    let mut count = 0;
    for entry in std::fs::read_dir(repo("scenes")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            renderer::scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
            count += 1;
        }
    }
    assert!(count >= 4);
}

#[test]
fn rtiow_final_matches_the_book() {
    let s = seed_scene("rtiow_final").scene;
    assert_eq!(
        (
            s.settings.width,
            s.settings.height,
            s.settings.spp,
            s.settings.max_depth
        ),
        (1200, 675, 10, 50)
    );
    let g = &s.geometry;
    // 22 x 22 candidates minus those too close to the bronze sphere, plus
    // the ground and three large spheres: at most 488.
    assert!(g.spheres.len() > 470 && g.spheres.len() <= 488, "{}", g.spheres.len());
    assert_eq!(g.primitive_count(), g.spheres.len());
    let big: Vec<_> = g.spheres.iter().filter(|s| s.radius == 1.0).collect();
    assert_eq!(big.len(), 3);
    let kinds: Vec<_> = big.iter().map(|b| s.materials[b.material as usize].kind).collect();
    assert_eq!(
        kinds,
        [MaterialKind::Dielectric, MaterialKind::Diffuse, MaterialKind::Metal]
    );
}

#[test]
fn rtiow_grid_sweeps_the_object_count() {
    let text = std::fs::read_to_string(repo("scenes/rtiow_final.toml")).unwrap();
    let small = util::scene(&text.replace("grid = 11", "grid = 2")).scene;
    let large = util::scene(&text.replace("grid = 11", "grid = 30")).scene;
    assert!(small.geometry.spheres.len() <= 4 * 4 + 4);
    assert!(large.geometry.spheres.len() > 60 * 60 - 10);
}

#[test]
fn smallpt_cornell_has_its_light_and_two_special_spheres() {
    let s = seed_scene("cornell_smallpt").scene;
    let g = &s.geometry;
    // Five walls, smallpt's black front wall at z = 170 among them.
    assert_eq!((g.polygons.len(), g.spheres.len()), (6, 3));
    let front = g
        .polygons
        .iter()
        .find(|p| (0..p.vertex_count).all(|i| g.polygon_vertices[(p.first_vertex + i) as usize].z == 170.0))
        .expect("a front wall at z = 170");
    assert_eq!(
        s.materials[front.material as usize].albedo.rgb,
        device::math::Rgb::BLACK
    );
    // smallpt's camera rays start 140 units forward, inside the box.
    let camera = s.camera_for(s.settings.width, s.settings.height);
    for (u, v) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (0.5, 0.5)] {
        let ray = camera.ray(u, v, 0.5, 0.5);
        assert!(ray.origin.z < 170.0 && ray.origin.z > 150.0, "{:?}", ray.origin);
    }
    let glass = g
        .spheres
        .iter()
        .map(|sp| &s.materials[sp.material as usize])
        .find(|m| m.kind == MaterialKind::Dielectric)
        .unwrap();
    assert_eq!(glass.albedo.rgb, device::math::Rgb::new(0.999, 0.999, 0.999));
    let light = g.spheres.iter().find(|s| s.radius == 600.0).unwrap();
    assert_eq!(s.materials[light.material as usize].emission.rgb.r, 12.0);
    let kinds: Vec<_> = g
        .spheres
        .iter()
        .map(|sp| s.materials[sp.material as usize].kind)
        .collect();
    assert!(kinds.contains(&MaterialKind::Metal) && kinds.contains(&MaterialKind::Dielectric));
}

#[test]
fn cs500_uses_every_primitive_and_material_type() {
    let s = seed_scene("cs500").scene;
    let g = &s.geometry;
    assert!(!g.spheres.is_empty() && !g.boxes.is_empty() && !g.polygons.is_empty());
    // The bunny (3674 faces) plus one loose triangle.
    assert_eq!(g.triangles.len(), 3675);
    for kind in [
        MaterialKind::Diffuse,
        MaterialKind::Metal,
        MaterialKind::Dielectric,
        MaterialKind::Emissive,
    ] {
        assert!(s.materials.iter().any(|m| m.kind == kind), "{kind:?} missing");
    }
    assert!(
        s.materials
            .iter()
            .any(|m| m.kind == MaterialKind::Dielectric && m.transmittance.r < 1.0)
    );
}

#[test]
fn displaced_sphere_generator_and_its_obj_agree() {
    use renderer::scene::meshgen::DisplacedSphere;
    let s = seed_scene("displaced_sphere").scene;
    assert_eq!(s.geometry.triangles.len(), 20 * 4usize.pow(7));
    // The same mesh written as OBJ and loaded through tobj: same triangles.
    let dir = tempfile::tempdir().unwrap();
    let mesh = DisplacedSphere {
        subdivisions: 3,
        amplitude: 0.1,
    }
    .mesh();
    std::fs::write(dir.path().join("m.obj"), mesh.to_obj("test")).unwrap();
    let scene_text = std::fs::read_to_string(repo("tests/data/mesh_only.toml")).unwrap();
    let loaded = renderer::scene::load_str(&dir.path().join("s.toml"), &scene_text).unwrap();
    assert_eq!(loaded.geometry.triangles.len(), mesh.faces.len());
    let t = &loaded.geometry.triangles[5];
    let [a, _, _] = mesh.faces[5];
    assert!((t.v0 - mesh.positions[a as usize]).length() < 1e-5);
}
