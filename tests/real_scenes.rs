//! Bitterli's four interiors read from their own Mitsuba files, unedited,
//! where `scripts/fetch-scenes` has installed them in `scenes/external/`
//! (they are their authors' data, never committed). Without them each test
//! says SKIPPED (loudly, on stderr) and passes.

use renderer::scene::mitsuba::{self, model::Environment};
use std::path::PathBuf;

/// The installed scene file of `name`, or `None` (and a SKIPPED line).
fn installed(name: &str) -> Option<PathBuf> {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("scenes/external/{name}/scene.xml"));
    if file.is_file() {
        Some(file)
    } else {
        eprintln!("SKIPPED {name}: not installed (scripts/fetch-scenes installs it)");
        None
    }
}

#[test]
fn each_interior_is_read_from_its_own_file() {
    // (scene, shapes, film, an environment map, emitting shapes)
    let expected = [
        ("staircase2", 32, (1280, 720), false, 13),
        ("living-room", 65, (1280, 720), true, 0),
        ("staircase", 775, (720, 1280), false, 1),
        ("dining-room", 53, (1280, 720), true, 0),
    ];
    for (name, shapes, film, envmap, lights) in expected {
        let Some(file) = installed(name) else { continue };
        let scene = mitsuba::load(&file).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(scene.shapes.len(), shapes, "{name}");
        assert_eq!((scene.sensor.width, scene.sensor.height), film, "{name}");
        assert_eq!(scene.sensor.sample_count, 256, "{name}");
        assert_eq!(scene.integrator.max_depth, Some(65), "{name}");
        assert_eq!(
            matches!(scene.environment, Some(Environment::Map { .. })),
            envmap,
            "{name}"
        );
        assert_eq!(
            scene.shapes.iter().filter(|s| s.emission.is_some()).count(),
            lights,
            "{name}"
        );
        // The film's output settings are read and said not to apply.
        assert!(
            scene
                .not_applying
                .iter()
                .any(|(_, note)| note.contains("`file_format`")),
            "{name}: {:?}",
            scene.not_applying
        );
    }
}

#[test]
fn the_staircases_bump_map_reaches_no_shape_as_in_mitsuba() {
    let Some(file) = installed("staircase") else { return };
    let scene = mitsuba::load(&file).unwrap();
    let notes: Vec<_> = scene
        .not_applying
        .iter()
        .filter(|(_, n)| n.contains("bumpmap"))
        .collect();
    assert_eq!(notes.len(), 1, "{:?}", scene.not_applying);
    assert_eq!(notes[0].0, 93);
}
