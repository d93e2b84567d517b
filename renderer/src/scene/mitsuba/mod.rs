//! Mitsuba's XML scene format: the subset that artists' interiors use
//! (Bitterli's rendering resources, in their Mitsuba 0.5/0.6 versions),
//! in Mitsuba 0.6's spelling of the parameters (`toWorld`, `intIOR`) or
//! Mitsuba 3's (`to_world`, `int_ior`).
//!
//! Reading is in two steps: [`element`] turns the XML into a tree of
//! plugin objects (a tag, a plugin type, named properties, nested
//! objects), each with its line, references resolved; [`plugins`] reads
//! each object as the plugin its type names, into [`model`]'s description,
//! with Mitsuba's defaults where the file leaves a parameter out. Every
//! element, plugin and parameter is read or refused with the file, the
//! line and the element: none is skipped in silence. The settings of
//! Mitsuba's output file (`pixelFormat`, `fileFormat`, `banner`,
//! `high_quality_edges`) are read and listed as not applying.
//!
//! Supported: shapes `obj`, `rectangle`, `disk` and `sphere`; BSDFs
//! `diffuse`, `plastic`, `roughplastic`, `conductor`, `roughconductor`,
//! `dielectric`, `thindielectric`, `twosided`, `mask` and `bumpmap`, with
//! `bitmap` textures for reflectances, opacity and heights; emitters `area`
//! (in a shape), `envmap` and `constant`; the `perspective` sensor with an
//! `hdrfilm`, an `independent` sampler and a `box`, `tent` or `gaussian`
//! reconstruction filter; the `path` integrator.

pub mod element;
pub mod model;
pub mod plugins;
pub mod transform;

use super::SceneError;
use std::path::Path;

pub use model::MitsubaScene;

/// Reads the Mitsuba scene file at `path` (at most
/// [`super::MAX_SCENE_FILE_BYTES`]).
pub fn load(path: &Path) -> Result<MitsubaScene, SceneError> {
    parse(path, &super::read_text(path)?)
}

/// Reads Mitsuba scene text; `path` names it in errors, and the files it
/// names are taken from its folder.
pub fn parse(path: &Path, text: &str) -> Result<MitsubaScene, SceneError> {
    let folder = path.parent().unwrap_or(Path::new(""));
    element::document(text)
        .and_then(|doc| plugins::scene(&doc, folder))
        .map_err(|f| SceneError::Invalid {
            path: path.to_path_buf(),
            line: f.line,
            item: f.item,
            message: super::error::quoting_shortened(&f.message),
        })
}

#[cfg(test)]
mod tests {
    use super::model::*;
    use super::*;

    const HALL: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<scene version="0.5.0">
	<integrator type="path">
		<integer name="maxDepth" value="65"/>
	</integrator>
	<sensor type="perspective">
		<float name="fov" value="70"/>
		<transform name="toWorld">
			<lookat origin="0, 1, 5" target="0, 1, 0" up="0, 1, 0"/>
		</transform>
		<sampler type="independent">
			<integer name="sampleCount" value="256"/>
		</sampler>
		<film type="hdrfilm">
			<integer name="width" value="320"/>
			<integer name="height" value="180"/>
			<string name="fileFormat" value="openexr"/>
			<boolean name="banner" value="false"/>
			<rfilter type="tent"/>
			<boolean name="high_quality_edges" value="true"/>
		</film>
	</sensor>
	<bsdf type="twosided" id="Wood">
		<bsdf type="roughplastic">
			<float name="alpha" value="0.1"/>
			<string name="distribution" value="ggx"/>
			<float name="intIOR" value="1.5"/>
			<boolean name="nonlinear" value="true"/>
			<texture name="diffuseReflectance" type="bitmap">
				<string name="filename" value="textures/wood5.jpg"/>
				<string name="filterType" value="bilinear"/>
			</texture>
		</bsdf>
	</bsdf>
	<bsdf type="roughconductor" id="Chrome">
		<string name="distribution" value="beckmann"/>
		<rgb name="eta" value="4.36968, 2.9167, 1.6547"/>
		<rgb name="k" value="5.20643, 4.23136, 3.75495"/>
	</bsdf>
	<shape type="obj">
		<string name="filename" value="models/Mesh008.obj"/>
		<boolean name="faceNormals" value="true"/>
		<ref id="Wood"/>
	</shape>
	<shape type="disk">
		<transform name="toWorld">
			<scale value="0.1"/>
			<translate x="1" y="3"/>
		</transform>
		<ref id="Chrome"/>
		<emitter type="area">
			<rgb name="radiance" value="20"/>
		</emitter>
	</shape>
	<!--
	<medium type="homogeneous" name="interior"/>
	-->
	<emitter type="envmap">
		<string name="filename" value="textures/Sky 19.exr"/>
		<float name="scale" value="2"/>
	</emitter>
</scene>
"#;

    fn read(text: &str) -> Result<MitsubaScene, SceneError> {
        parse(Path::new("hall/scene.xml"), text)
    }

    #[test]
    fn a_scene_is_read_with_every_parameter_and_mitsubas_defaults() {
        let s = read(HALL).unwrap();
        assert_eq!(s.version, "0.5.0");
        assert_eq!(
            s.integrator,
            PathIntegrator {
                max_depth: Some(65),
                rr_depth: 5
            }
        );
        let sensor = s.sensor;
        assert_eq!((sensor.width, sensor.height, sensor.sample_count), (320, 180, 256));
        assert_eq!((sensor.fov_degrees, sensor.fov_axis), (70.0, FovAxis::X));
        assert_eq!(sensor.filter, PixelFilter::Tent { radius: 1.0 });
        assert_eq!(sensor.to_world.point([0.0; 3]), [0.0, 1.0, 5.0]);
        assert_eq!(s.shapes.len(), 2);
        assert_eq!(
            s.shapes[0].geometry,
            Geometry::Obj {
                file: "hall/models/Mesh008.obj".into(),
                face_normals: true,
                flip_tex_coords: true
            }
        );
        let Bsdf::TwoSided(wood) = &s.shapes[0].bsdf else {
            panic!("a two-sided BSDF: {:?}", s.shapes[0].bsdf)
        };
        assert_eq!(
            **wood,
            Bsdf::Plastic {
                rough: Some(Microfacets {
                    distribution: Distribution::Ggx,
                    alpha: 0.1
                }),
                int_ior: 1.5,
                ext_ior: 1.000277,
                diffuse: Reflectance::Bitmap(Bitmap {
                    file: "hall/textures/wood5.jpg".into(),
                    filter: TextureFilter::Bilinear,
                    line: 29
                }),
                specular: [1.0; 3],
                nonlinear: true,
            }
        );
        let disk = &s.shapes[1];
        assert_eq!(disk.geometry, Geometry::Disk);
        assert_eq!(disk.emission, Some([20.0; 3]));
        assert_eq!(disk.to_world.point([1.0, 0.0, 0.0]), [1.1, 3.0, 0.0]);
        assert!(matches!(
            disk.bsdf,
            Bsdf::Conductor {
                rough: Some(Microfacets {
                    distribution: Distribution::Beckmann,
                    alpha: 0.1
                }),
                fresnel: Conductor::Complex { .. },
                ..
            }
        ));
        assert_eq!(
            s.environment,
            Some(Environment::Map {
                file: "hall/textures/Sky 19.exr".into(),
                scale: 2.0,
                to_world: transform::Matrix4::IDENTITY,
                line: 58
            })
        );
        let lines: Vec<usize> = s.not_applying.iter().map(|(line, _)| *line).collect();
        assert_eq!(lines, [17, 18, 20]);
        assert!(
            s.not_applying[0]
                .1
                .contains("`file_format` = \"openexr\" does not apply")
        );
    }

    #[test]
    fn mitsuba_3s_spelling_reads_the_same() {
        let three = HALL
            .replace("maxDepth", "max_depth")
            .replace("toWorld", "to_world")
            .replace("sampleCount", "sample_count")
            .replace("intIOR", "int_ior")
            .replace("diffuseReflectance", "diffuse_reflectance")
            .replace("faceNormals", "face_normals")
            .replace("filterType", "filter_type")
            .replace("version=\"0.5.0\"", "version=\"3.0.0\"");
        let (old, new) = (read(HALL).unwrap(), read(&three).unwrap());
        assert_eq!(old.shapes, new.shapes);
        assert_eq!((old.sensor, old.integrator), (new.sensor, new.integrator));
    }

    /// `HALL` with `from` replaced by `to` (which must occur).
    fn hall_with(from: &str, to: &str) -> String {
        assert!(HALL.contains(from), "{from}");
        HALL.replacen(from, to, 1)
    }

    #[test]
    fn each_plugin_and_parameter_wavepath_does_not_read_is_refused_at_its_line() {
        let cases = [
            (
                hall_with(
                    r#"<float name="alpha" value="0.1"/>"#,
                    r#"<float name="alphaU" value="0.1"/>"#,
                ),
                "scene.xml:25: <bsdf type=\"roughplastic\">, parameter `alpha_u`: is not a parameter wavepath reads",
            ),
            (
                hall_with(r#"type="roughconductor""#, r#"type="hair""#),
                "scene.xml:35: <bsdf type=\"hair\" id=\"Chrome\">: is not a bsdf plugin wavepath reads",
            ),
            (
                hall_with(r#"value="ggx""#, r#"value="phong""#),
                "scene.xml:26: <bsdf type=\"roughplastic\">, parameter `distribution`: is \"phong\"; wavepath reads \"beckmann\", \"ggx\"",
            ),
            (
                hall_with(r#"<rfilter type="tent"/>"#, r#"<rfilter type="mitchell"/>"#),
                "scene.xml:19: <rfilter type=\"mitchell\">: is not a rfilter plugin",
            ),
            (
                hall_with(r#"<rgb name="k" value="5.20643, 4.23136, 3.75495"/>"#, ""),
                "scene.xml:35: <bsdf type=\"roughconductor\" id=\"Chrome\">: gives one of `eta` and `k`",
            ),
            (
                hall_with(r#"<rgb name="radiance" value="20"/>"#, ""),
                "scene.xml:51: <emitter type=\"area\">, parameter `radiance`: is missing",
            ),
            (
                hall_with(
                    r#"<integer name="width" value="320"/>"#,
                    r#"<integer name="width" value="0"/>"#,
                ),
                "scene.xml:15: <film type=\"hdrfilm\">, parameter `width`: is 0; expected 1 to 32768",
            ),
            (
                hall_with(
                    r#"<float name="intIOR" value="1.5"/>"#,
                    r#"<string name="intIOR" value="unobtainium"/>"#,
                ),
                "scene.xml:27: <bsdf type=\"roughplastic\">, parameter `int_ior`: names \"unobtainium\"",
            ),
            (
                hall_with(r#"<float name="fov" value="70"/>"#, ""),
                "<sensor type=\"perspective\">, parameter `fov`: is missing",
            ),
            (
                hall_with("</scene>", "<emitter type=\"constant\"/>\n</scene>"),
                "<emitter type=\"constant\">: is the second top-level <emitter>; a scene has one",
            ),
            (
                hall_with(
                    r#"<integer name="maxDepth" value="65"/>"#,
                    r#"<float name="maxDepth" value="65"/>"#,
                ),
                "<integrator type=\"path\">, parameter `max_depth`: is a <float>; expected an <integer>",
            ),
            (
                hall_with(r#"<ref id="Chrome"/>"#, r#"<ref id="Chrome"/><ref id="Wood"/>"#),
                "scene.xml:50: <shape type=\"disk\">: holds a second <bsdf> where it takes one",
            ),
        ];
        for (text, expected) in cases {
            let message = read(&text).unwrap_err().to_string();
            assert!(message.contains(expected), "expected `{expected}` in `{message}`");
        }
    }

    #[test]
    fn named_indices_and_perfect_mirrors_are_read() {
        let s = read(&hall_with(
            r#"<float name="intIOR" value="1.5"/>"#,
            r#"<string name="intIOR" value="bk7"/>"#,
        ))
        .unwrap();
        let Bsdf::TwoSided(wood) = &s.shapes[0].bsdf else {
            panic!()
        };
        assert!(matches!(**wood, Bsdf::Plastic { int_ior: 1.5046, .. }));
        let mirror = hall_with(
            r#"<rgb name="eta" value="4.36968, 2.9167, 1.6547"/>
		<rgb name="k" value="5.20643, 4.23136, 3.75495"/>"#,
            r#"<string name="material" value="none"/>"#,
        );
        let s = read(&mirror).unwrap();
        assert!(matches!(
            s.shapes[1].bsdf,
            Bsdf::Conductor {
                fresnel: Conductor::Perfect,
                ..
            }
        ));
    }

    #[test]
    fn a_top_level_bsdf_without_an_id_is_checked_and_said_to_apply_to_nothing() {
        // As in the wooden staircase: a bump map wraps a BSDF that shapes
        // refer to by its own id, so the bump map reaches no shape.
        let s = read(&hall_with(
            r#"<bsdf type="roughconductor" id="Chrome">"#,
            r#"<bsdf type="bumpmap">
		<texture name="map" type="bitmap"><string name="filename" value="bump.jpg"/></texture>
		<bsdf type="twosided" id="Aluminium"><bsdf type="diffuse"/></bsdf>
	</bsdf>
	<bsdf type="roughconductor" id="Chrome">"#,
        ))
        .unwrap();
        let (line, note) = s.not_applying.last().unwrap();
        assert_eq!(*line, 35);
        assert!(note.contains("<bsdf type=\"bumpmap\"> has no `id`"), "{note}");
        let broken = hall_with(
            r#"<bsdf type="roughconductor" id="Chrome">"#,
            "<bsdf type=\"bumpmap\"/>\n<bsdf type=\"roughconductor\" id=\"Chrome\">",
        );
        let message = read(&broken).unwrap_err().to_string();
        assert!(
            message.contains("scene.xml:35: <bsdf type=\"bumpmap\">: holds no <texture>"),
            "{message}"
        );
        let sampler = hall_with("</scene>", "<sampler type=\"independent\"/>\n</scene>");
        let message = read(&sampler).unwrap_err().to_string();
        assert!(message.contains("cannot stand at the top of a scene"), "{message}");
    }
}
