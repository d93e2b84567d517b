//! Bad scene input: every error names the file, the line and the field, and
//! says what was expected. Nothing panics.

mod util;

use renderer::scene::{self, SceneError};
use util::{line_of, repo, try_scene};

const HEADER: &str = r#"
[render]
width = 8
height = 8
spp = 1
max_depth = 4

[camera]
look_from = [0.0, 0.0, 5.0]
look_at = [0.0, 0.0, 0.0]
vfov = 40.0

[materials.white]
kind = "diffuse"
albedo = [0.8, 0.8, 0.8]
"#;

/// Loads `HEADER + body` and returns the error text and the line the
/// `marker` text is on.
fn error_for(body: &str, marker: &str) -> (String, usize) {
    let text = format!("{HEADER}{body}");
    let err = try_scene(&text).err().unwrap_or_else(|| panic!("should fail:\n{body}"));
    (err.to_string(), line_of(&text, marker))
}

fn assert_mentions(message: &str, parts: &[&str]) {
    for p in parts {
        assert!(message.contains(p), "`{message}` should mention `{p}`");
    }
}

#[test]
fn unknown_material_names_the_object_line_and_the_known_ones() {
    let body = "\n[[objects]]\nkind = \"sphere\"\ncenter = [0, 0, 0]\nradius = 1.0\nmaterial = \"chrome\"\n";
    let (msg, line) = error_for(body, "material = \"chrome\"");
    assert_mentions(
        &msg,
        &[
            &format!("test.toml:{line}:"),
            "objects[0] (sphere)",
            "`material`",
            "unknown material `chrome`",
            "white",
        ],
    );
}

#[test]
fn missing_obj_names_the_mesh_file() {
    let body = "\n[[objects]]\nkind = \"mesh\"\nfile = \"meshes/nowhere.obj\"\nmaterial = \"white\"\n";
    let (msg, line) = error_for(body, "file = ");
    assert_mentions(
        &msg,
        &[
            &format!("test.toml:{line}:"),
            "objects[0] (mesh)",
            "`file`",
            "nowhere.obj",
            "does not exist",
        ],
    );
}

#[test]
fn nan_is_refused_as_not_finite() {
    let body = "\n[[objects]]\nkind = \"sphere\"\ncenter = [0, nan, 0]\nradius = 1.0\nmaterial = \"white\"\n";
    let (msg, line) = error_for(body, "center = [0, nan");
    assert_mentions(&msg, &[&format!("test.toml:{line}:"), "`center`", "finite"]);
}

#[test]
fn negative_radius_must_be_positive() {
    let body = "\n[[objects]]\nkind = \"sphere\"\ncenter = [0, 0, 0]\nradius = -2.0\nmaterial = \"white\"\n";
    let (msg, line) = error_for(body, "radius = -2.0");
    assert_mentions(
        &msg,
        &[&format!("test.toml:{line}:"), "`radius`", "must be positive, got -2"],
    );
}

#[test]
fn malformed_toml_gives_line_and_column() {
    let text = format!("{HEADER}\n[[objects]]\nkind = \"sphere\"\nradius = \n");
    let err = try_scene(&text).unwrap_err();
    let line = line_of(&text, "radius = ");
    assert!(matches!(err, SceneError::Syntax { .. }), "{err:?}");
    assert_mentions(&err.to_string(), &[&format!("test.toml:{line}:")]);
}

#[test]
fn unknown_field_and_wrong_type_are_named() {
    let (msg, line) = error_for("\n[[objects]]\nkind = \"sphere\"\nradus = 1.0\n", "radus");
    assert_mentions(
        &msg,
        &[
            &format!("test.toml:{line}:1: objects[0] (sphere), field `radus`"),
            "unknown field `radus`, expected one of `center`, `radius`, `material`",
        ],
    );
    let text = HEADER.replace("width = 8", "width = \"wide\"");
    let msg = try_scene(&text).unwrap_err().to_string();
    assert_mentions(
        &msg,
        &[
            &format!("test.toml:{}:9: [render], field `width`", line_of(&text, "width")),
            "invalid type",
        ],
    );
}

#[test]
fn missing_section_is_named() {
    let text = "[render]\nwidth = 8\nheight = 8\nspp = 1\nmax_depth = 1\n";
    let msg = try_scene(text).unwrap_err().to_string();
    assert_mentions(&msg, &["test.toml:", "missing field `camera`"]);
}

#[test]
fn degenerate_shapes_are_refused() {
    let cases = [
        (
            "kind = \"box\"\ncorner = [0,0,0]\nedges = [[1,0,0],[0,1,0],[1,1,0]]",
            "`edges`",
            "span a volume",
        ),
        (
            "kind = \"polygon\"\nvertices = [[0,0,0],[1,0,0]]",
            "`vertices`",
            "at least 3",
        ),
        (
            "kind = \"polygon\"\nvertices = [[0,0,0],[2,0,0],[1,0.2,0],[1,2,0]]",
            "`vertices`",
            "not convex",
        ),
        (
            "kind = \"polygon\"\nvertices = [[0,0,0],[1,0,0],[1,1,0],[0,1,1]]",
            "`vertices`",
            "off the polygon's plane",
        ),
        (
            "kind = \"triangle\"\nvertices = [[0,0,0],[1,1,1],[2,2,2]]",
            "`vertices`",
            "no area",
        ),
    ];
    for (object, field, expected) in cases {
        let body = format!("\n[[objects]]\n{object}\nmaterial = \"white\"\n");
        let marker = if field == "`edges`" { "edges =" } else { "vertices =" };
        let (msg, line) = error_for(&body, marker);
        assert_mentions(&msg, &[&format!("test.toml:{line}:"), field, expected]);
    }
}

#[test]
fn bad_render_and_camera_settings_are_refused() {
    let cases = [
        ("spp = 1", "spp = 0", "`spp`"),
        ("vfov = 40.0", "vfov = 190.0", "`vfov`"),
        ("look_at = [0.0, 0.0, 0.0]", "look_at = [0.0, 0.0, 5.0]", "`look_at`"),
        ("albedo = [0.8, 0.8, 0.8]", "albedo = [0.8, 1.8, 0.8]", "`albedo`"),
    ];
    for (from, to, field) in cases {
        let text = format!(
            "{}\n[[objects]]\nkind = \"sphere\"\ncenter = [0,0,0]\nradius = 1.0\nmaterial = \"white\"\n",
            HEADER.replace(from, to)
        );
        let msg = try_scene(&text).unwrap_err().to_string();
        assert_mentions(&msg, &[&format!("test.toml:{}:", line_of(&text, to)), field]);
    }
}

#[test]
fn an_unknown_sampler_is_refused_at_its_line_with_the_samplers_there_are() {
    let text = format!(
        "{}\n[[objects]]\nkind = \"sphere\"\ncenter = [0,0,0]\nradius = 1.0\nmaterial = \"white\"\n",
        HEADER.replace("max_depth = 4", "max_depth = 4\nsampler = \"halton\"")
    );
    let msg = try_scene(&text).unwrap_err().to_string();
    assert_mentions(
        &msg,
        &[
            &format!("test.toml:{}:", line_of(&text, "sampler =")),
            "`halton`",
            "`hash` or `sobol`",
        ],
    );
}

#[test]
fn an_error_in_a_later_entry_names_its_index_and_line() {
    let sphere = |radius: &str| {
        format!("\n[[objects]]\nkind = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = {radius}\nmaterial = \"white\"\n")
    };
    let body = format!("{}{}{}", sphere("1.0"), sphere("2.0"), sphere("\"big\""));
    let (msg, line) = error_for(&body, "\"big\"");
    assert_mentions(
        &msg,
        &[
            &format!("test.toml:{line}:10: objects[2] (sphere), field `radius`"),
            "expected f32",
        ],
    );
    let body = "\n[[generators]]\nkind = \"smallpt_cornell\"\nsize = 3\n";
    let (msg, line) = error_for(body, "size");
    assert_mentions(
        &msg,
        &[
            &format!("test.toml:{line}:1: generators[0] (smallpt_cornell), field `size`"),
            "unknown field `size`, there are no fields",
        ],
    );
}

#[test]
fn geometry_beyond_the_coordinate_limit_is_refused_after_its_transform() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tri.obj"), "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").unwrap();
    let text = format!(
        "{HEADER}\n[[objects]]\nkind = \"mesh\"\nfile = \"tri.obj\"\nmaterial = \"white\"\ntransform = {{ scale = 1e30 }}\n"
    );
    let path = dir.path().join("big.toml");
    let msg = scene::load_str(&path, &text).unwrap_err().to_string();
    assert_mentions(
        &msg,
        &[
            &format!(
                "big.toml:{}: objects[0] (mesh), field `transform`",
                line_of(&text, "transform")
            ),
            "±1e9",
        ],
    );
    let far_camera = HEADER.replace("look_from = [0.0, 0.0, 5.0]", "look_from = [0.0, 0.0, 3e38]");
    let msg = try_scene(&far_camera).unwrap_err().to_string();
    assert_mentions(&msg, &["field `look_from`", "within ±1e9"]);
}

#[test]
fn unreadable_file_names_the_path() {
    let path = repo("scenes/does-not-exist.toml");
    let msg = scene::load(&path).unwrap_err().to_string();
    assert_mentions(&msg, &["does-not-exist.toml: does not exist"]);
    assert!(!msg.contains("os error"), "{msg}");
}

#[test]
fn a_scene_with_nothing_in_it_is_refused() {
    let msg = try_scene(HEADER).unwrap_err().to_string();
    assert_mentions(&msg, &["test.toml:", "no objects"]);
}

#[test]
fn bad_nee_and_coated_material_fields_are_refused_at_their_lines() {
    let sphere = "\n[[objects]]\nkind = \"sphere\"\ncenter = [0,0,0]\nradius = 1.0\nmaterial = \"white\"\n";
    // `render.nee` is a boolean.
    let text = format!(
        "{}{sphere}",
        HEADER.replace("max_depth = 4", "max_depth = 4\nnee = \"yes\"")
    );
    let msg = try_scene(&text).unwrap_err().to_string();
    assert_mentions(&msg, &[&format!("test.toml:{}:", line_of(&text, "nee =")), "boolean"]);
    // A coated material's octaves, frequency and ior.
    for (field, value, expected) in [
        ("octaves", "65", "at most 64"),
        ("frequency", "-2.0", "positive"),
        ("ior", "0.0", "positive"),
        ("octaves", "-1", "octaves"),
        ("basis", "16", "from 0 to 15"),
        ("basis", "-3", "basis"),
    ] {
        let body =
            format!("\n[materials.coat]\nkind = \"coated\"\nalbedo = [0.5, 0.5, 0.5]\n{field} = {value}\n{sphere}");
        let (msg, line) = error_for(&body, &format!("{field} = {value}"));
        assert_mentions(&msg, &["test.toml:", field, expected]);
        assert!(
            msg.contains(&format!("test.toml:{line}:")) || msg.contains("materials.coat"),
            "`{msg}` should name line {line} or the material"
        );
    }
}

#[test]
fn bad_textures_and_texture_names_are_refused_at_their_lines() {
    let sphere = "\n[[objects]]\nkind = \"sphere\"\ncenter = [0,0,0]\nradius = 1.0\nmaterial = \"white\"\n";
    let checker = "\n[textures.checks]\nkind = \"checker\"\ncolors = [[0.9, 0.9, 0.9], [0.1, 0.1, 0.1]]\n";
    // A material naming a texture that is not there: the known ones listed.
    let body = format!("{checker}\n[materials.wood]\nkind = \"diffuse\"\nalbedo = \"oak\"\n{sphere}");
    let (msg, line) = error_for(&body, "albedo = \"oak\"");
    assert_mentions(
        &msg,
        &[
            "[materials.wood]",
            "`albedo`",
            "unknown texture `oak`",
            "defined: checks",
        ],
    );
    assert!(
        msg.contains(&format!("test.toml:{line}:")) || msg.contains("test.toml:"),
        "{msg}"
    );
    // An albedo above one through its texture.
    let hot = "\n[textures.hot]\nkind = \"checker\"\ncolors = [[2, 2, 2], [0, 0, 0]]\n";
    let body = format!("{hot}\n[materials.bright]\nkind = \"metal\"\nalbedo = \"hot\"\n{sphere}");
    let (msg, _) = error_for(&body, "albedo = \"hot\"");
    assert_mentions(&msg, &["[materials.bright]", "`albedo`", "texture `hot` reaches 2"]);
    // ...which is fine as an emission.
    let body = format!("{hot}\n[materials.lamp]\nkind = \"emissive\"\nemission = \"hot\"\n{sphere}");
    assert!(try_scene(&format!("{HEADER}{body}")).is_ok());
    // A colour that is neither a triple nor a name.
    let body = format!("\n[materials.odd]\nkind = \"diffuse\"\nalbedo = 0.5\n{sphere}");
    let (msg, line) = error_for(&body, "albedo = 0.5");
    assert_mentions(
        &msg,
        &[
            &format!("test.toml:{line}:10: [materials.odd], field `albedo`"),
            "a colour [r, g, b] or the name of a texture",
        ],
    );
    // Texture fields.
    for (table, marker, expected) in [
        (
            "kind = \"noise\"\ncolors = [[0, 0, 0], [1, 1, 1]]\noctaves = 65",
            "octaves = 65",
            "at most 64",
        ),
        (
            "kind = \"noise\"\ncolors = [[0, 0, 0], [1, 1, 1]]\noctaves = -2",
            "octaves = -2",
            "octaves",
        ),
        (
            "kind = \"checker\"\ncolors = [[0, 0, 0], [1, 1, 1]]\nfrequency = 0.0",
            "frequency = 0.0",
            "positive",
        ),
        (
            "kind = \"checker\"\ncolors = [[0, 0, 0], [1, -1, 1]]",
            "colors = ",
            "colors",
        ),
        (
            "kind = \"checker\"\ncolors = [[0, 0, 0], [1, 1, 1]]\nspace = \"object\"",
            "space = ",
            "unknown variant `object`",
        ),
        ("kind = \"marble\"", "kind = \"marble\"", "unknown variant `marble`"),
        (
            "kind = \"image\"\nfile = \"textures/missing.png\"",
            "file = ",
            "textures/missing.png",
        ),
        (
            "kind = \"image\"\nfile = \"Cargo.toml\"",
            "file = ",
            "cannot read image",
        ),
        // A folder (or a FIFO, a device) is refused before it is read.
        (
            "kind = \"image\"\nfile = \"scenes\"",
            "file = ",
            "is a folder, not a regular file",
        ),
    ] {
        let body = format!("\n[textures.t]\n{table}\n{sphere}");
        let (msg, line) = error_for(&body, marker);
        assert_mentions(
            &msg,
            &[&format!("test.toml:{line}:"), "[textures.t], field `", expected],
        );
    }
}

/// The 1-based line and column of the first `marker` in `text`.
fn position(text: &str, marker: &str) -> (usize, usize) {
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("`{marker}` not in the scene"));
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    (line_of(text, marker), text[line_start..at].chars().count() + 1)
}

#[test]
fn a_field_of_the_wrong_kind_is_placed_at_its_value_in_every_table() {
    let sphere = "\n[[objects]]\nkind = \"sphere\"\ncenter = [0, 0, 0]\nradius = 1.0\nmaterial = \"white\"\n";
    let noise = "\n[textures.marble]\nkind = \"noise\"\ncolors = [[0, 0, 0], [1, 1, 1]]\n";
    // (text, the value at fault or the key, the entry and field named)
    let cases = [
        (
            format!("{HEADER}{noise}octaves = 1.5\n{sphere}"),
            "1.5",
            "[textures.marble], field `octaves`",
        ),
        (
            format!("{HEADER}{noise}{sphere}"),
            "[textures.marble]",
            "[textures.marble], field `octaves`",
        ),
        (
            format!("{HEADER}{noise}octaves = 2\nseed = 3\n{sphere}"),
            "seed",
            "[textures.marble], field `seed`",
        ),
        (
            format!("{HEADER}\n[textures.t]\nkind = \"checker\"\ncolors = [[0, 0, 0], [1, \"x\", 1]]\n{sphere}"),
            "\"x\"",
            "[textures.t], field `colors[1][1]`",
        ),
        (
            format!("{HEADER}\n[textures.t]\nkind = \"marble\"\n{sphere}"),
            "\"marble\"",
            "[textures.t], field `kind`",
        ),
        (
            format!("{HEADER}\n[materials.coat]\nkind = \"coated\"\nalbedo = [0.5, 0.5, 0.5]\noctaves = 1.5\n{sphere}"),
            "1.5",
            "[materials.coat], field `octaves`",
        ),
        (
            format!(
                "{HEADER}\n[materials.m]\nkind = \"metal\"\nalbedo = [0.5, 0.5, 0.5]\nroughness = \"low\"\n{sphere}"
            ),
            "\"low\"",
            "[materials.m], field `roughness`",
        ),
        (
            format!("{HEADER}\n[background]\nkind = \"constant\"\ncolor = \"black\"\n{sphere}"),
            "\"black\"",
            "[background], field `color`",
        ),
        (
            format!("{HEADER}\n[accel]\nbvh_bins = \"many\"\n{sphere}"),
            "\"many\"",
            "[accel], field `bvh_bins`",
        ),
        (
            format!("{HEADER}\n[[generators]]\nkind = \"rtiow_final\"\ngrid = 2.5\n"),
            "2.5",
            "generators[0] (rtiow_final), field `grid`",
        ),
        (
            format!("{HEADER}{sphere}{}", sphere.replace("radius = 1.0", "radius = true")),
            "true",
            "objects[1] (sphere), field `radius`",
        ),
        (
            format!("{}{sphere}", HEADER.replace("vfov = 40.0", "vfov = \"wide\"")),
            "\"wide\"",
            "[camera], field `vfov`",
        ),
        (
            format!("{}{sphere}", HEADER.replace("spp = 1", "spp = 1.5")),
            "1.5",
            "[render], field `spp`",
        ),
    ];
    for (text, marker, item) in cases {
        let msg = try_scene(&text)
            .err()
            .unwrap_or_else(|| panic!("should fail:\n{text}"))
            .to_string();
        let (line, column) = position(&text, marker);
        assert_mentions(&msg, &[&format!("test.toml:{line}:{column}: {item}: ")]);
    }
}

#[test]
fn a_top_level_field_of_the_wrong_shape_is_named_with_what_it_must_be() {
    let cases = [
        (
            "render = 3",
            HEADER.replace("\n[render]\n", "\n[old_render]\n"),
            "field `render`: expected a table (a `[render]` section), found an integer",
        ),
        (
            "accel = \"bvh\"",
            HEADER.to_string(),
            "field `accel`: expected a table (a `[accel]` section), found a string",
        ),
        (
            "objects = 5",
            HEADER.to_string(),
            "field `objects`: expected an array of tables (`[[objects]]` entries), found an integer",
        ),
        (
            "materials = [1, 2]",
            HEADER.replace("[materials.white]", "[old_materials.white]"),
            "field `materials`: expected a table of named tables (`[materials.NAME]` sections), found an array",
        ),
        (
            "generators = [{ kind = \"grid\" }, 7]",
            HEADER.to_string(),
            "generators[1]: expected a table (a `[[generators]]` entry), found an integer",
        ),
    ];
    for (line, rest, expect) in cases {
        let err = try_scene(&format!("{line}\n{rest}")).unwrap_err().to_string();
        assert_mentions(&err, &["test.toml:1:", expect]);
        assert!(!err.contains("Def"), "names a Rust type: {err}");
    }
}

#[test]
fn a_duplicate_key_is_named_at_its_second_line() {
    let text = HEADER.replace("width = 8\n", "width = 8\nwidth = 9\n");
    let err = try_scene(&text).unwrap_err().to_string();
    let line = line_of(&text, "width = 9");
    assert_mentions(
        &err,
        &[&format!(
            "test.toml:{line}:1: duplicate key `width` (a key is set once in its table)"
        )],
    );
}

#[test]
fn an_error_the_parser_gives_no_position_is_placed_at_its_line() {
    // A header nested deeper than the parser allows, well below line 1.
    let deep = format!("[{}a]", "a.".repeat(4999));
    let text = format!("{HEADER}\n{deep}\nx = 1\n");
    let err = try_scene(&text).unwrap_err().to_string();
    let line = line_of(&text, "[a.a.a");
    assert!(line > 1);
    assert!(
        err.starts_with(&format!("{}:{line}:", repo("test.toml").display())),
        "{err}"
    );
}

#[test]
fn a_huge_value_is_quoted_cut_short() {
    let long = "m".repeat(1 << 20);
    let cases = [
        // An unknown material's name, in a message of the builder.
        format!("\n[[objects]]\nkind = \"sphere\"\ncenter = [0, 0, 0]\nradius = 1.0\nmaterial = \"{long}\"\n"),
        // A string where a number belongs, in serde's message.
        format!("\n[[objects]]\nkind = \"sphere\"\ncenter = [0, 0, 0]\nradius = \"{long}\"\nmaterial = \"white\"\n"),
        // A material's name, naming the entry of an error in it.
        format!("\n[materials.{long}]\nkind = \"diffuse\"\nalbedo = [0.5, 0.5, 0.5]\nshine = 1\n"),
        // A key, naming the field.
        format!(
            "\n[[objects]]\nkind = \"sphere\"\ncenter = [0, 0, 0]\nradius = 1.0\nmaterial = \"white\"\n{long} = 1\n"
        ),
    ];
    for body in cases {
        let err = try_scene(&format!("{HEADER}{body}")).unwrap_err().to_string();
        assert!(err.len() < 600, "{} bytes: {}…", err.len(), &err[..600]);
        assert!(err.contains("mmm… (1048576 bytes)"), "{err}");
    }
}
