//! Each plugin object read as the plugin its `type` names
//! ([`super::model`]): its parameters taken one by one with Mitsuba's
//! defaults, its nested objects by slot. A plugin, parameter or nested
//! object that wavepath does not read is refused, naming the element and
//! its line: every one of an object's properties and children must be
//! taken before the object is done.

use super::element::{Child, Document, Fault, Object, Tag, Value};
use super::model::*;
use super::transform::Matrix4;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

type Result<T> = std::result::Result<T, Fault>;

/// Mitsuba's named indices of refraction (its `ior.h`), for the
/// dielectrics and plastics that name one instead of giving a number.
const NAMED_IORS: [(&str, f64); 12] = [
    ("vacuum", 1.0),
    ("air", 1.000277),
    ("water", 1.3330),
    ("ethanol", 1.361),
    ("fused quartz", 1.458),
    ("pyrex", 1.470),
    ("acrylic glass", 1.49),
    ("polypropylene", 1.49),
    ("bk7", 1.5046),
    ("sodium chloride", 1.544),
    ("sapphire", 1.77),
    ("diamond", 2.419),
];

/// The settings of an output file, which a render's film does not use.
const OUTPUT_SETTINGS: [&str; 5] = [
    "file_format",
    "pixel_format",
    "component_format",
    "banner",
    "high_quality_edges",
];

/// Reads the scene's objects as plugins; relative file names are taken
/// from `folder`.
pub fn scene(doc: &Document, folder: &Path) -> Result<MitsubaScene> {
    let mut integrator = None;
    let mut sensor = None;
    let mut shapes = Vec::new();
    let mut environment = None;
    let mut not_applying = Vec::new();
    for object in &doc.objects {
        match object.tag {
            Tag::Integrator => once(&mut integrator, object, path_integrator(object)?)?,
            Tag::Sensor => once(&mut sensor, object, perspective(object, &mut not_applying)?)?,
            Tag::Shape => shapes.push(shape(object, folder)?),
            Tag::Emitter => once(&mut environment, object, environment_light(object, folder)?)?,
            // A top-level BSDF or texture is a declaration, used by reference.
            Tag::Bsdf | Tag::Texture if object.id.is_some() => {}
            // One without an id can be referenced by nothing: read (so that
            // it is checked) and said to apply to nothing, as in Mitsuba.
            Tag::Bsdf | Tag::Texture => {
                if object.tag == Tag::Bsdf {
                    bsdf(object, folder)?;
                } else {
                    bitmap(object, folder)?;
                }
                not_applying.push((
                    object.line,
                    format!(
                        "{} has no `id`, so no shape can refer to it: it applies to nothing, as in Mitsuba",
                        object.label()
                    ),
                ));
            }
            _ => {
                return Err(fault_at(
                    object,
                    "",
                    "cannot stand at the top of a scene (a sampler, film or rfilter belongs in its sensor)",
                ));
            }
        }
    }
    let sensor = sensor.ok_or_else(|| Fault {
        line: 1,
        item: "<scene>".into(),
        message: "has no <sensor>: wavepath renders from the scene's camera".into(),
    })?;
    Ok(MitsubaScene {
        version: doc.version.clone(),
        integrator: integrator.unwrap_or_default(),
        sensor,
        shapes,
        environment,
        not_applying,
    })
}

/// Sets `slot` to `value`, refusing a second object of the kind.
fn once<T>(slot: &mut Option<T>, object: &Object, value: T) -> Result<()> {
    if slot.replace(value).is_some() {
        return Err(fault_at(
            object,
            "",
            format!("is the second top-level <{}>; a scene has one", object.tag.name()),
        ));
    }
    Ok(())
}

fn fault_at(object: &Object, parameter: &str, message: impl Into<String>) -> Fault {
    Fault {
        line: object.line,
        item: if parameter.is_empty() {
            object.label()
        } else {
            format!("{}, parameter `{parameter}`", object.label())
        },
        message: message.into(),
    }
}

fn unknown_plugin(object: &Object, known: &str) -> Fault {
    fault_at(
        object,
        "",
        format!(
            "is not a {} plugin wavepath reads (it reads {known})",
            object.tag.name()
        ),
    )
}

/// An object's properties and children, each taken at most once; what is
/// left when [`Params::done`] is called is refused.
struct Params<'o> {
    object: &'o Object,
    properties: Vec<Cell<bool>>,
    children: Vec<Cell<bool>>,
}

impl<'o> Params<'o> {
    fn of(object: &'o Object) -> Self {
        Params {
            object,
            properties: object.properties.iter().map(|_| Cell::new(false)).collect(),
            children: object.children.iter().map(|_| Cell::new(false)).collect(),
        }
    }

    fn fault(&self, line: usize, parameter: &str, message: impl Into<String>) -> Fault {
        Fault {
            line,
            ..fault_at(self.object, parameter, message)
        }
    }

    /// The property `name`, marked taken.
    fn take(&self, name: &str) -> Option<(&'o Value, usize)> {
        let at = self.object.properties.iter().position(|p| p.name == name)?;
        self.properties[at].set(true);
        let p = &self.object.properties[at];
        Some((&p.value, p.line))
    }

    /// The line of the property `name`, or the object's where it is not given.
    fn line_of(&self, name: &str) -> usize {
        self.object
            .properties
            .iter()
            .find(|p| p.name == name)
            .map_or(self.object.line, |p| p.line)
    }

    fn wrong(&self, name: &str, value: &Value, line: usize, expected: &str) -> Fault {
        self.fault(line, name, format!("is {}; expected {expected}", value.kind()))
    }

    fn float(&self, name: &str, default: f64) -> Result<f64> {
        match self.take(name) {
            None => Ok(default),
            Some((Value::Float(v), _)) => Ok(*v),
            Some((Value::Integer(v), _)) => Ok(*v as f64),
            Some((v, line)) => Err(self.wrong(name, v, line, "a <float>")),
        }
    }

    /// A float that must be positive.
    fn positive(&self, name: &str, default: f64) -> Result<f64> {
        let v = self.float(name, default)?;
        if v > 0.0 {
            Ok(v)
        } else {
            Err(self.fault(self.line_of(name), name, format!("is {v}; expected a number above 0")))
        }
    }

    fn integer(&self, name: &str, default: i64) -> Result<i64> {
        match self.take(name) {
            None => Ok(default),
            Some((Value::Integer(v), _)) => Ok(*v),
            Some((v, line)) => Err(self.wrong(name, v, line, "an <integer>")),
        }
    }

    /// An integer from 1 to `max`.
    fn count(&self, name: &str, default: u32, max: u32) -> Result<u32> {
        let v = self.integer(name, default as i64)?;
        match u32::try_from(v) {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(self.fault(self.line_of(name), name, format!("is {v}; expected 1 to {max}"))),
        }
    }

    fn boolean(&self, name: &str, default: bool) -> Result<bool> {
        match self.take(name) {
            None => Ok(default),
            Some((Value::Boolean(v), _)) => Ok(*v),
            Some((v, line)) => Err(self.wrong(name, v, line, "a <boolean>")),
        }
    }

    fn string(&self, name: &str) -> Result<Option<(&'o str, usize)>> {
        match self.take(name) {
            None => Ok(None),
            Some((Value::String(s), line)) => Ok(Some((s.as_str(), line))),
            Some((v, line)) => Err(self.wrong(name, v, line, "a <string>")),
        }
    }

    /// One of `choices`, by name.
    fn choice<T: Copy>(&self, name: &str, default: T, choices: &[(&str, T)]) -> Result<T> {
        let Some((text, line)) = self.string(name)? else {
            return Ok(default);
        };
        choices
            .iter()
            .find(|(n, _)| *n == text)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                let names: Vec<String> = choices.iter().map(|(n, _)| format!("\"{n}\"")).collect();
                self.fault(
                    line,
                    name,
                    format!("is \"{text}\"; wavepath reads {}", names.join(", ")),
                )
            })
    }

    fn file(&self, name: &str, folder: &Path) -> Result<PathBuf> {
        match self.string(name)? {
            Some((text, _)) => Ok(folder.join(text)),
            None => Err(self.fault(self.object.line, name, "is missing: the plugin reads a file")),
        }
    }

    fn transform(&self, name: &str) -> Result<Matrix4> {
        match self.take(name) {
            None => Ok(Matrix4::IDENTITY),
            Some((Value::Transform(m), line)) if !m.is_affine() => Err(self.fault(
                line,
                name,
                "has a last row other than `0 0 0 1`: an object's placement is affine",
            )),
            Some((Value::Transform(m), _)) => Ok(*m),
            Some((v, line)) => Err(self.wrong(name, v, line, "a <transform>")),
        }
    }

    fn rgb(&self, name: &str, default: Rgb) -> Result<Rgb> {
        match self.take(name) {
            None => Ok(default),
            Some((Value::Rgb(c), _)) => Ok(*c),
            Some((Value::Float(v), _)) => Ok([*v; 3]),
            Some((v, line)) => Err(self.wrong(name, v, line, "an <rgb>, a <spectrum> or a <float>")),
        }
    }

    /// An index of refraction: a number, or one of Mitsuba's names.
    fn ior(&self, name: &str, default: f64) -> Result<f64> {
        match self.take(name) {
            Some((Value::String(s), line)) => {
                let key = s.trim().to_ascii_lowercase();
                NAMED_IORS.iter().find(|(n, _)| *n == key).map(|(_, v)| *v).ok_or_else(|| {
                    self.fault(line, name, format!("names \"{s}\", which is not one of Mitsuba's named indices wavepath holds; give the number"))
                })
            }
            _ => self.positive(name, default),
        }
    }

    /// Whether the object gives the property `name` (without taking it).
    fn has(&self, name: &str) -> bool {
        self.object.properties.iter().any(|p| p.name == name)
    }

    /// The children that are not yet taken and satisfy `wanted`.
    fn children_where(&self, wanted: impl Fn(&Child) -> bool) -> Vec<(usize, &'o Child)> {
        self.object
            .children
            .iter()
            .enumerate()
            .filter(|(i, c)| !self.children[*i].get() && wanted(c))
            .collect()
    }

    /// The one child object of kind `tag`, taken; `None` if there is none.
    /// A texture must fill no slot or the slot `slot` (another slot is a
    /// parameter's, [`Params::reflectance`]); other objects' slot names
    /// mean nothing, as in Mitsuba (`<rfilter name="rfilter">`).
    fn child(&self, tag: Tag, slot: Option<&str>) -> Result<Option<&'o Child>> {
        let found = self.children_where(|c| {
            c.object.tag == tag && (tag != Tag::Texture || c.slot.is_none() || c.slot.as_deref() == slot)
        });
        match found.as_slice() {
            [] => Ok(None),
            [(i, c)] => {
                self.children[*i].set(true);
                Ok(Some(c))
            }
            [_, (_, second), ..] => Err(self.fault(
                second.line,
                "",
                format!("holds a second <{}> where it takes one", tag.name()),
            )),
        }
    }

    /// A colour parameter: a property, or a nested texture in that slot.
    fn reflectance(&self, name: &str, default: f64, folder: &Path) -> Result<Reflectance> {
        let texture = self.children_where(|c| c.object.tag == Tag::Texture && c.slot.as_deref() == Some(name));
        if let Some((i, child)) = texture.first() {
            self.children[*i].set(true);
            if self.take(name).is_some() {
                return Err(self.fault(child.line, name, "is given both as a value and as a texture"));
            }
            return Ok(Reflectance::Bitmap(bitmap(&child.object, folder)?));
        }
        Ok(Reflectance::Constant(self.rgb(name, [default; 3])?))
    }

    /// Refuses whatever was not taken.
    fn done(self) -> Result<()> {
        let object = self.object;
        if let Some(i) = self.properties.iter().position(|t| !t.get()) {
            let p = &object.properties[i];
            return Err(self.fault(
                p.line,
                &p.name,
                format!(
                    "is not a parameter wavepath reads for {} (it would change the render, so it is refused, not skipped)",
                    object.label()
                ),
            ));
        }
        if let Some(i) = self.children.iter().position(|t| !t.get()) {
            let c = &object.children[i];
            let slot = c.slot.as_deref().map(|s| format!(" (slot `{s}`)")).unwrap_or_default();
            return Err(self.fault(
                c.line,
                "",
                format!("holds {}{slot}, which wavepath does not read there", c.object.label()),
            ));
        }
        Ok(())
    }
}

fn path_integrator(object: &Object) -> Result<PathIntegrator> {
    if object.plugin != "path" {
        return Err(unknown_plugin(object, "`path`"));
    }
    let p = Params::of(object);
    let max_depth = match p.integer("max_depth", -1)? {
        -1 => None,
        d => Some(
            u32::try_from(d)
                .ok()
                .filter(|d| (1..=65536).contains(d))
                .ok_or_else(|| {
                    fault_at(
                        object,
                        "max_depth",
                        format!("is {d}; expected -1 (unbounded) or 1 to 65536"),
                    )
                })?,
        ),
    };
    let rr_depth = p.count("rr_depth", 5, 65536)?;
    p.done()?;
    Ok(PathIntegrator { max_depth, rr_depth })
}

fn perspective(object: &Object, not_applying: &mut Vec<(usize, String)>) -> Result<Sensor> {
    if object.plugin != "perspective" {
        return Err(unknown_plugin(object, "`perspective`"));
    }
    let p = Params::of(object);
    if !p.has("fov") {
        return Err(fault_at(
            object,
            "fov",
            "is missing: a perspective camera needs its field of view",
        ));
    }
    let fov_degrees = p.positive("fov", 0.0)?;
    if fov_degrees >= 180.0 {
        return Err(fault_at(
            object,
            "fov",
            format!("is {fov_degrees}; expected a field of view under 180 degrees"),
        ));
    }
    let fov_axis = p.choice(
        "fov_axis",
        FovAxis::X,
        &[
            ("x", FovAxis::X),
            ("y", FovAxis::Y),
            ("diagonal", FovAxis::Diagonal),
            ("smaller", FovAxis::Smaller),
            ("larger", FovAxis::Larger),
        ],
    )?;
    let to_world = p.transform("to_world")?;
    let film = p
        .child(Tag::Film, None)?
        .ok_or_else(|| fault_at(object, "", "has no <film>: the image's size is the film's"))?;
    let sampler = p.child(Tag::Sampler, None)?;
    p.done()?;
    let (width, height, filter) = hdr_film(&film.object, not_applying)?;
    let sample_count = match sampler {
        Some(s) => independent(&s.object)?,
        None => 4,
    };
    Ok(Sensor {
        fov_degrees,
        fov_axis,
        to_world,
        width,
        height,
        sample_count,
        filter,
    })
}

fn hdr_film(object: &Object, not_applying: &mut Vec<(usize, String)>) -> Result<(u32, u32, PixelFilter)> {
    if object.plugin != "hdrfilm" {
        return Err(unknown_plugin(object, "`hdrfilm`"));
    }
    let p = Params::of(object);
    let width = p.count("width", 768, 1 << 15)?;
    let height = p.count("height", 576, 1 << 15)?;
    for name in OUTPUT_SETTINGS {
        if let Some((value, line)) = p.take(name) {
            let shown = match value {
                Value::String(s) => format!("\"{s}\""),
                Value::Boolean(b) => b.to_string(),
                other => other.kind().to_string(),
            };
            not_applying.push((
                line,
                format!("film `{name}` = {shown} does not apply: it sets how Mitsuba writes its file, and wavepath's output is chosen by --out"),
            ));
        }
    }
    let filter = match p.child(Tag::Rfilter, None)? {
        Some(f) => pixel_filter(&f.object)?,
        None => PixelFilter::Gaussian { stddev: 0.5 },
    };
    p.done()?;
    Ok((width, height, filter))
}

fn pixel_filter(object: &Object) -> Result<PixelFilter> {
    let p = Params::of(object);
    let filter = match object.plugin.as_str() {
        "box" => PixelFilter::Box,
        "tent" => PixelFilter::Tent {
            radius: p.positive("radius", 1.0)?,
        },
        "gaussian" => PixelFilter::Gaussian {
            stddev: p.positive("stddev", 0.5)?,
        },
        _ => return Err(unknown_plugin(object, "`box`, `tent` and `gaussian`")),
    };
    p.done()?;
    Ok(filter)
}

fn independent(object: &Object) -> Result<u32> {
    if object.plugin != "independent" {
        return Err(unknown_plugin(object, "`independent`"));
    }
    let p = Params::of(object);
    let spp = p.count("sample_count", 4, (1 << 28) - 1)?;
    p.done()?;
    Ok(spp)
}

fn shape(object: &Object, folder: &Path) -> Result<Shape> {
    let p = Params::of(object);
    let geometry = match object.plugin.as_str() {
        "obj" => Geometry::Obj {
            file: p.file("filename", folder)?,
            face_normals: p.boolean("face_normals", false)?,
            flip_tex_coords: p.boolean("flip_tex_coords", true)?,
        },
        "rectangle" => Geometry::Rectangle,
        "disk" => Geometry::Disk,
        "sphere" => Geometry::Sphere {
            center: match p.take("center") {
                None => [0.0; 3],
                Some((Value::Point(c), _)) => *c,
                Some((v, line)) => return Err(p.wrong("center", v, line, "a <point>")),
            },
            radius: p.positive("radius", 1.0)?,
        },
        _ => return Err(unknown_plugin(object, "`obj`, `rectangle`, `disk` and `sphere`")),
    };
    let to_world = p.transform("to_world")?;
    let flip_normals = p.boolean("flip_normals", false)?;
    let bsdf = match p.child(Tag::Bsdf, None)? {
        Some(b) => bsdf(&b.object, folder)?,
        None => Bsdf::Diffuse {
            reflectance: Reflectance::Constant([0.5; 3]),
        },
    };
    let emission = match p.child(Tag::Emitter, None)? {
        Some(e) => Some(area_light(&e.object)?),
        None => None,
    };
    p.done()?;
    Ok(Shape {
        geometry,
        to_world,
        flip_normals,
        bsdf,
        emission,
        line: object.line,
    })
}

fn area_light(object: &Object) -> Result<Rgb> {
    if object.plugin != "area" {
        return Err(unknown_plugin(object, "`area` inside a shape"));
    }
    let p = Params::of(object);
    if !p.has("radiance") {
        return Err(fault_at(
            object,
            "radiance",
            "is missing: an area light needs its radiance",
        ));
    }
    let radiance = p.rgb("radiance", [0.0; 3])?;
    p.done()?;
    Ok(radiance)
}

fn environment_light(object: &Object, folder: &Path) -> Result<Environment> {
    let p = Params::of(object);
    let light = match object.plugin.as_str() {
        "envmap" => Environment::Map {
            file: p.file("filename", folder)?,
            scale: p.float("scale", 1.0)?,
            to_world: p.transform("to_world")?,
            line: object.line,
        },
        "constant" => Environment::Constant {
            radiance: p.rgb("radiance", [1.0; 3])?,
        },
        _ => return Err(unknown_plugin(object, "`envmap` and `constant` at the top of a scene")),
    };
    p.done()?;
    Ok(light)
}

fn microfacets(p: &Params) -> Result<Microfacets> {
    Ok(Microfacets {
        distribution: p.choice(
            "distribution",
            Distribution::Beckmann,
            &[("beckmann", Distribution::Beckmann), ("ggx", Distribution::Ggx)],
        )?,
        alpha: p.positive("alpha", 0.1)?,
    })
}

/// The one BSDF nested in a wrapper (`twosided`, `mask`, `bumpmap`).
fn inner_bsdf(p: &Params, folder: &Path) -> Result<Box<Bsdf>> {
    match p.child(Tag::Bsdf, None)? {
        Some(b) => Ok(Box::new(bsdf(&b.object, folder)?)),
        None => Err(fault_at(p.object, "", "holds no <bsdf>: it wraps one")),
    }
}

fn bsdf(object: &Object, folder: &Path) -> Result<Bsdf> {
    let p = Params::of(object);
    let plugin = object.plugin.as_str();
    let read = match plugin {
        "diffuse" => Bsdf::Diffuse {
            reflectance: p.reflectance("reflectance", 0.5, folder)?,
        },
        "plastic" | "roughplastic" => Bsdf::Plastic {
            rough: (plugin == "roughplastic").then(|| microfacets(&p)).transpose()?,
            int_ior: p.ior("int_ior", 1.49)?,
            ext_ior: p.ior("ext_ior", 1.000277)?,
            diffuse: p.reflectance("diffuse_reflectance", 0.5, folder)?,
            specular: p.rgb("specular_reflectance", [1.0; 3])?,
            nonlinear: p.boolean("nonlinear", false)?,
        },
        "conductor" | "roughconductor" => {
            let rough = (plugin == "roughconductor").then(|| microfacets(&p)).transpose()?;
            let material = p.string("material")?;
            let fresnel = match (material, p.has("eta") || p.has("k")) {
                (Some(("none", _)), false) => Conductor::Perfect,
                (None, true) => {
                    if !(p.has("eta") && p.has("k")) {
                        return Err(fault_at(
                            object,
                            "",
                            "gives one of `eta` and `k`; a complex index needs both",
                        ));
                    }
                    Conductor::Complex {
                        eta: p.rgb("eta", [0.0; 3])?,
                        k: p.rgb("k", [0.0; 3])?,
                    }
                }
                (Some(("none", line)), true) => {
                    return Err(p.fault(
                        line,
                        "material",
                        "is \"none\" beside `eta` or `k`; give one or the other",
                    ));
                }
                (Some((name, line)), _) => {
                    return Err(p.fault(
                        line,
                        "material",
                        format!("names \"{name}\", whose index is spectral data wavepath does not hold; give `eta` and `k` as RGB, or material \"none\""),
                    ));
                }
                (None, false) => {
                    return Err(fault_at(
                        object,
                        "",
                        "gives neither `eta` and `k` nor `material`: Mitsuba's default, copper, is spectral data wavepath does not hold",
                    ));
                }
            };
            Bsdf::Conductor {
                rough,
                fresnel,
                specular: p.rgb("specular_reflectance", [1.0; 3])?,
            }
        }
        "dielectric" | "thindielectric" => Bsdf::Dielectric {
            thin: plugin == "thindielectric",
            int_ior: p.ior("int_ior", 1.5046)?,
            ext_ior: p.ior("ext_ior", 1.000277)?,
            reflectance: p.rgb("specular_reflectance", [1.0; 3])?,
            transmittance: p.rgb("specular_transmittance", [1.0; 3])?,
        },
        "twosided" => Bsdf::TwoSided(inner_bsdf(&p, folder)?),
        "mask" => {
            let opacity = p.reflectance("opacity", 0.5, folder)?;
            Bsdf::Mask {
                opacity,
                inner: inner_bsdf(&p, folder)?,
            }
        }
        "bumpmap" => {
            let map = p
                .child(Tag::Texture, Some("map"))?
                .ok_or_else(|| fault_at(object, "", "holds no <texture>: the height it tilts the normal by"))?;
            Bsdf::BumpMap {
                map: bitmap(&map.object, folder)?,
                inner: inner_bsdf(&p, folder)?,
            }
        }
        _ => {
            return Err(unknown_plugin(
                object,
                "`diffuse`, `plastic`, `roughplastic`, `conductor`, `roughconductor`, `dielectric`, \
                 `thindielectric`, `twosided`, `mask` and `bumpmap`",
            ));
        }
    };
    p.done()?;
    Ok(read)
}

fn bitmap(object: &Rc<Object>, folder: &Path) -> Result<Bitmap> {
    if object.plugin != "bitmap" {
        return Err(unknown_plugin(object, "`bitmap`"));
    }
    let p = Params::of(object);
    let file = p.file("filename", folder)?;
    let filter = p.choice(
        "filter_type",
        TextureFilter::Ewa,
        &[
            ("nearest", TextureFilter::Nearest),
            ("bilinear", TextureFilter::Bilinear),
            ("ewa", TextureFilter::Ewa),
        ],
    )?;
    p.done()?;
    Ok(Bitmap {
        file,
        filter,
        line: object.line,
    })
}
