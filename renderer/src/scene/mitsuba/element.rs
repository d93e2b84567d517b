//! The XML as a tree of plugin objects: each `<integrator>`, `<sensor>`,
//! `<sampler>`, `<film>`, `<rfilter>`, `<bsdf>`, `<texture>`, `<shape>` and
//! `<emitter>` with its plugin type, its properties (`<float>`, `<rgb>`,
//! `<transform>`, …, by name) and the objects nested in it, each with the
//! line it starts on. A `<ref id="…"/>` stands for the object declared
//! earlier with that `id`. Comments are skipped; any other element, an
//! attribute an element does not take, or text between elements is refused
//! with its line.
//!
//! Property names are kept in Mitsuba 3's spelling: Mitsuba 0.6's
//! camel-case names are rewritten as Mitsuba 3 does on reading an older
//! file (`toWorld` is `to_world`, `intIOR` is `int_ior`).

use super::transform::Matrix4;
use crate::settings::choice::prose_list;
use std::collections::HashMap;
use std::rc::Rc;

/// How deep elements may nest (a real scene nests five or six deep; the
/// limit keeps a hostile file from exhausting the stack).
const MAX_NESTING: usize = 64;

/// The elements that declare plugin objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// The light-transport algorithm.
    Integrator,
    /// The camera.
    Sensor,
    /// The sample generator, inside the sensor.
    Sampler,
    /// The image, inside the sensor.
    Film,
    /// The pixel reconstruction filter, inside the film.
    Rfilter,
    /// A surface's scattering.
    Bsdf,
    /// A spatially varying value.
    Texture,
    /// Geometry.
    Shape,
    /// A light.
    Emitter,
}

impl Tag {
    const ALL: [Tag; 9] = [
        Tag::Integrator,
        Tag::Sensor,
        Tag::Sampler,
        Tag::Film,
        Tag::Rfilter,
        Tag::Bsdf,
        Tag::Texture,
        Tag::Shape,
        Tag::Emitter,
    ];

    /// The element's name.
    pub fn name(self) -> &'static str {
        match self {
            Tag::Integrator => "integrator",
            Tag::Sensor => "sensor",
            Tag::Sampler => "sampler",
            Tag::Film => "film",
            Tag::Rfilter => "rfilter",
            Tag::Bsdf => "bsdf",
            Tag::Texture => "texture",
            Tag::Shape => "shape",
            Tag::Emitter => "emitter",
        }
    }

    fn named(name: &str) -> Option<Tag> {
        Tag::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// A property's value, as its element gives it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `<integer>`.
    Integer(i64),
    /// `<float>`.
    Float(f64),
    /// `<boolean>`.
    Boolean(bool),
    /// `<string>`.
    String(String),
    /// `<rgb>`, or a `<spectrum>` of one value for every wavelength.
    Rgb([f64; 3]),
    /// `<point>` or `<vector>`.
    Point([f64; 3]),
    /// `<transform>`.
    Transform(Matrix4),
}

impl Value {
    /// The element that gives a value of this kind, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Integer(_) => "an <integer>",
            Value::Float(_) => "a <float>",
            Value::Boolean(_) => "a <boolean>",
            Value::String(_) => "a <string>",
            Value::Rgb(_) => "an <rgb>",
            Value::Point(_) => "a <point>",
            Value::Transform(_) => "a <transform>",
        }
    }
}

/// One named property of an object.
#[derive(Clone, Debug, PartialEq)]
pub struct Property {
    /// Its name, in Mitsuba 3's spelling.
    pub name: String,
    /// Its value.
    pub value: Value,
    /// The line of its element.
    pub line: usize,
}

/// An object nested in another, directly or by reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Child {
    /// The slot it fills (`name="…"`), e.g. a BSDF's `reflectance`.
    pub slot: Option<String>,
    /// The object.
    pub object: Rc<Object>,
    /// The line of the element that nests it (the object's own, or the
    /// `<ref>`'s).
    pub line: usize,
}

/// A plugin object: `<bsdf type="diffuse" id="wall">…</bsdf>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    /// Which kind of object.
    pub tag: Tag,
    /// The plugin, from `type`.
    pub plugin: String,
    /// Its `id`, if it has one.
    pub id: Option<String>,
    /// The line it starts on.
    pub line: usize,
    /// Its properties, in file order.
    pub properties: Vec<Property>,
    /// The objects nested in it, in file order.
    pub children: Vec<Child>,
}

impl Object {
    /// How messages name it: `<bsdf type="diffuse">` (with its id, if any).
    pub fn label(&self) -> String {
        match &self.id {
            Some(id) => format!("<{} type=\"{}\" id=\"{id}\">", self.tag.name(), self.plugin),
            None => format!("<{} type=\"{}\">", self.tag.name(), self.plugin),
        }
    }
}

/// The scene: its top-level objects, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// The `version` of `<scene>`.
    pub version: String,
    /// The objects directly inside `<scene>` (a `<ref>` there is refused:
    /// an object is placed once).
    pub objects: Vec<Rc<Object>>,
}

/// A problem at a line: what is at fault and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// 1-based line.
    pub line: usize,
    /// The element (and attribute or parameter) at fault.
    pub item: String,
    /// What is wrong and what was expected.
    pub message: String,
}

type Result<T> = std::result::Result<T, Fault>;

fn fault(line: usize, item: impl Into<String>, message: impl Into<String>) -> Fault {
    Fault {
        line,
        item: item.into(),
        message: message.into(),
    }
}

/// Reads the XML text of a Mitsuba scene into its objects.
pub fn document(text: &str) -> Result<Document> {
    let xml = roxmltree::Document::parse(text).map_err(|e| {
        let pos = e.pos();
        fault(pos.row as usize, "the XML", e.to_string())
    })?;
    let root = xml.root_element();
    let mut reader = Reader {
        xml: &xml,
        ids: HashMap::new(),
    };
    let line = reader.line(root);
    if root.tag_name().name() != "scene" {
        return Err(fault(
            line,
            format!("<{}>", root.tag_name().name()),
            "a Mitsuba scene file's outermost element is <scene>",
        ));
    }
    reader.attributes(root, &["version"])?;
    let version = root.attribute("version").ok_or_else(|| {
        fault(
            line,
            "<scene>",
            "has no `version` (Mitsuba's files say which, e.g. \"0.6.0\" or \"3.0.0\")",
        )
    })?;
    let major = version.split('.').next().unwrap_or_default();
    if !["0", "2", "3"].contains(&major) || version.split('.').any(|p| p.parse::<u32>().is_err()) {
        return Err(fault(
            line,
            "<scene>, attribute `version`",
            format!("`{version}` is not a Mitsuba version (0.x.y, 2.x.y or 3.x.y)"),
        ));
    }
    let mut objects = Vec::new();
    for node in reader.elements(root)? {
        let name = node.tag_name().name();
        match Tag::named(name) {
            Some(tag) => objects.push(reader.object(node, tag, 1)?),
            None => return Err(reader.unknown(node, "<scene>")),
        }
    }
    Ok(Document {
        version: version.to_string(),
        objects,
    })
}

struct Reader<'x, 'i> {
    xml: &'x roxmltree::Document<'i>,
    /// Every object with an `id`, as declared so far.
    ids: HashMap<String, Rc<Object>>,
}

impl<'x, 'i> Reader<'x, 'i> {
    fn line(&self, node: roxmltree::Node) -> usize {
        self.xml.text_pos_at(node.range().start).row as usize
    }

    /// `node`'s child elements, with comments skipped; text other than
    /// white space is refused.
    fn elements(&self, node: roxmltree::Node<'x, 'i>) -> Result<Vec<roxmltree::Node<'x, 'i>>> {
        let mut out = Vec::new();
        for child in node.children() {
            if child.is_element() {
                out.push(child);
            } else if child.is_text() && !child.text().unwrap_or_default().trim().is_empty() {
                return Err(fault(
                    self.line(child),
                    format!("<{}>", node.tag_name().name()),
                    "holds text; Mitsuba's elements hold only other elements",
                ));
            }
        }
        Ok(out)
    }

    /// Refuses an attribute of `node` that is not among `allowed`.
    fn attributes(&self, node: roxmltree::Node, allowed: &[&str]) -> Result<()> {
        match node.attributes().find(|a| !allowed.contains(&a.name())) {
            Some(a) => Err(fault(
                self.line(node),
                format!("<{}>", node.tag_name().name()),
                format!(
                    "has an attribute `{}` that wavepath does not read (expected {})",
                    a.name(),
                    prose_list(&allowed.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>(), "or")
                ),
            )),
            None => Ok(()),
        }
    }

    fn required<'a>(&self, node: roxmltree::Node<'a, '_>, attribute: &str) -> Result<&'a str> {
        node.attribute(attribute).ok_or_else(|| {
            fault(
                self.line(node),
                format!("<{}>", node.tag_name().name()),
                format!("has no `{attribute}`"),
            )
        })
    }

    fn unknown(&self, node: roxmltree::Node, inside: &str) -> Fault {
        fault(
            self.line(node),
            format!("<{}> in {inside}", node.tag_name().name()),
            "is not an element wavepath reads (it reads integrator, sensor, sampler, film, rfilter, bsdf, \
             texture, shape, emitter and ref, the properties integer, float, boolean, string, rgb, \
             spectrum, point, vector and transform, and comments)",
        )
    }

    fn object(&mut self, node: roxmltree::Node<'x, 'i>, tag: Tag, depth: usize) -> Result<Rc<Object>> {
        let line = self.line(node);
        if depth > MAX_NESTING {
            return Err(fault(
                line,
                format!("<{}>", tag.name()),
                format!("nests more than {MAX_NESTING} deep"),
            ));
        }
        self.attributes(node, &["type", "id", "name"])?;
        let plugin = self.required(node, "type")?.to_string();
        let id = node.attribute("id").map(String::from);
        let mut object = Object {
            tag,
            plugin,
            id: id.clone(),
            line,
            properties: Vec::new(),
            children: Vec::new(),
        };
        for child in self.elements(node)? {
            let name = child.tag_name().name();
            let child_line = self.line(child);
            if let Some(child_tag) = Tag::named(name) {
                let slot = child.attribute("name").map(snake_case);
                let nested = self.object(child, child_tag, depth + 1)?;
                object.children.push(Child {
                    slot,
                    object: nested,
                    line: child_line,
                });
            } else if name == "ref" {
                self.attributes(child, &["id", "name"])?;
                let id = self.required(child, "id")?;
                let referenced = self.ids.get(id).cloned().ok_or_else(|| {
                    fault(
                        child_line,
                        format!("<ref id=\"{id}\">"),
                        "names no object declared before it (an object is declared, with its `id`, before it is referenced)",
                    )
                })?;
                object.children.push(Child {
                    slot: child.attribute("name").map(snake_case),
                    object: referenced,
                    line: child_line,
                });
            } else {
                let property = self.property(child, &object)?;
                if let Some(earlier) = object.properties.iter().find(|p| p.name == property.name) {
                    return Err(fault(
                        property.line,
                        format!("{}, parameter `{}`", object.label(), property.name),
                        format!("is given twice (first on line {})", earlier.line),
                    ));
                }
                object.properties.push(property);
            }
        }
        let object = Rc::new(object);
        if let Some(id) = id {
            if let Some(earlier) = self.ids.get(&id) {
                return Err(fault(
                    line,
                    object.label(),
                    format!("repeats the id of {} on line {}", earlier.label(), earlier.line),
                ));
            }
            self.ids.insert(id, object.clone());
        }
        Ok(object)
    }

    /// A property element of `owner`.
    fn property(&self, node: roxmltree::Node, owner: &Object) -> Result<Property> {
        let element = node.tag_name().name();
        let line = self.line(node);
        let raw_name = node.attribute("name");
        let item = |what: &str| match raw_name {
            Some(n) => format!("{}, parameter `{}`{what}", owner.label(), snake_case(n)),
            None => format!("{}, <{element}>{what}", owner.label()),
        };
        let value = match element {
            "integer" | "float" | "boolean" | "string" | "rgb" | "spectrum" => {
                self.attributes(node, &["name", "value"])?;
                let text = self.required(node, "value")?;
                let bad = |expected: &str| fault(line, item(""), format!("`{text}` is not {expected}"));
                match element {
                    "integer" => Value::Integer(text.trim().parse().map_err(|_| bad("an integer"))?),
                    "float" => Value::Float(finite(text).ok_or_else(|| bad("a finite number"))?),
                    "boolean" => Value::Boolean(match text.trim() {
                        "true" => true,
                        "false" => false,
                        _ => return Err(bad("`true` or `false`")),
                    }),
                    "string" => Value::String(text.to_string()),
                    "rgb" => Value::Rgb(triple(text).ok_or_else(|| bad("one number, or three (red, green, blue)"))?),
                    _ => {
                        let v = finite(text).ok_or_else(|| {
                            bad("one number (a spectrum of one value at every wavelength; wavepath renders in RGB)")
                        })?;
                        Value::Rgb([v; 3])
                    }
                }
            }
            "point" | "vector" => {
                self.attributes(node, &["name", "value", "x", "y", "z"])?;
                Value::Point(self.xyz(node, 0.0).map_err(|m| fault(line, item(""), m))?)
            }
            "transform" => {
                self.attributes(node, &["name"])?;
                Value::Transform(self.transform(node, &item)?)
            }
            _ => return Err(self.unknown(node, &owner.label())),
        };
        let name = raw_name.ok_or_else(|| fault(line, item(""), "has no `name`"))?;
        Ok(Property {
            name: snake_case(name),
            value,
            line,
        })
    }

    /// The three numbers of `value="x y z"` (or `x, y, z`), or of the
    /// attributes `x`, `y` and `z`, each `missing` where not given.
    fn xyz(&self, node: roxmltree::Node, missing: f64) -> std::result::Result<[f64; 3], String> {
        if let Some(text) = node.attribute("value") {
            if ["x", "y", "z"].iter().any(|a| node.attribute(*a).is_some()) {
                return Err("gives both `value` and `x`, `y` or `z`".into());
            }
            return triple(text).ok_or_else(|| format!("`{text}` is not one number or three"));
        }
        let mut out = [missing; 3];
        for (i, axis) in ["x", "y", "z"].into_iter().enumerate() {
            if let Some(text) = node.attribute(axis) {
                out[i] = finite(text).ok_or_else(|| format!("`{axis}` = `{text}` is not a finite number"))?;
            }
        }
        Ok(out)
    }

    /// A `<transform>`'s steps, composed.
    fn transform(&self, node: roxmltree::Node, item: &dyn Fn(&str) -> String) -> Result<Matrix4> {
        let mut m = Matrix4::IDENTITY;
        for step in self.elements(node)? {
            let line = self.line(step);
            let name = step.tag_name().name();
            let at = |m: String| fault(line, item(&format!(", <{name}>")), m);
            let matrix = match name {
                "matrix" => {
                    self.attributes(step, &["value"])?;
                    let text = self.required(step, "value")?;
                    let numbers = numbers(text).filter(|n| n.len() == 16 || n.len() == 9).ok_or_else(|| {
                        at(format!(
                            "`{}` is not 16 finite numbers (a 4×4 matrix, row by row) or 9 (3×3)",
                            text.trim()
                        ))
                    })?;
                    let mut m = Matrix4::IDENTITY;
                    let side = if numbers.len() == 16 { 4 } else { 3 };
                    for (i, v) in numbers.into_iter().enumerate() {
                        m.0[i / side][i % side] = v;
                    }
                    m
                }
                "translate" => {
                    self.attributes(step, &["value", "x", "y", "z"])?;
                    Matrix4::translation(self.xyz(step, 0.0).map_err(at)?)
                }
                "scale" => {
                    self.attributes(step, &["value", "x", "y", "z"])?;
                    Matrix4::scaling(self.xyz(step, 1.0).map_err(at)?)
                }
                "rotate" => {
                    self.attributes(step, &["value", "x", "y", "z", "angle", "axis"])?;
                    let axis = match step.attribute("axis") {
                        Some(text) => triple(text).ok_or_else(|| at(format!("axis `{text}` is not three numbers")))?,
                        None => self.xyz(step, 0.0).map_err(at)?,
                    };
                    let angle = self.required(step, "angle")?;
                    let degrees = finite(angle).ok_or_else(|| at(format!("angle `{angle}` is not a finite number")))?;
                    Matrix4::rotation(axis, degrees).ok_or_else(|| at("turns about a zero axis".into()))?
                }
                "lookat" => {
                    self.attributes(step, &["origin", "target", "up"])?;
                    let point = |attribute: &str| -> Result<[f64; 3]> {
                        let text = self.required(step, attribute)?;
                        triple(text).ok_or_else(|| at(format!("`{attribute}` = `{text}` is not three numbers")))
                    };
                    let up = match step.attribute("up") {
                        Some(_) => point("up")?,
                        None => [0.0, 1.0, 0.0],
                    };
                    Matrix4::look_at(point("origin")?, point("target")?, up)
                        .ok_or_else(|| at("has its target at its origin, or its up along the view".into()))?
                }
                _ => {
                    return Err(at(
                        "is not a step of a transform (matrix, lookat, translate, rotate or scale)".into(),
                    ));
                }
            };
            m = matrix.times(&m);
        }
        Ok(m)
    }
}

/// Mitsuba 3's name for a Mitsuba 0.6 parameter: an underscore before each
/// capital that follows a small letter or a digit, then all in lower case
/// (`toWorld` → `to_world`, `intIOR` → `int_ior`; `to_world` stays).
pub fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if c.is_ascii_uppercase() && previous.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit()) {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
        previous = Some(c);
    }
    out
}

fn finite(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The finite numbers of `text`, separated by commas and/or white space.
fn numbers(text: &str) -> Option<Vec<f64>> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(finite)
        .collect()
}

/// One number (for all three) or three.
fn triple(text: &str) -> Option<[f64; 3]> {
    match numbers(text)?.as_slice() {
        [v] => Some([*v; 3]),
        [x, y, z] => Some([*x, *y, *z]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_names_take_mitsuba_3s_spelling() {
        for (old, new) in [
            ("toWorld", "to_world"),
            ("intIOR", "int_ior"),
            ("maxDepth", "max_depth"),
            ("diffuseReflectance", "diffuse_reflectance"),
            ("high_quality_edges", "high_quality_edges"),
            ("to_world", "to_world"),
            ("k", "k"),
        ] {
            assert_eq!(snake_case(old), new);
        }
    }

    #[test]
    fn objects_properties_and_references_are_read_with_their_lines() {
        let doc = document(
            "<scene version=\"0.6.0\">\n\
             <bsdf type=\"diffuse\" id=\"white\">\n\
               <rgb name=\"reflectance\" value=\"0.5, 0.25 1\"/>\n\
             </bsdf>\n\
             <!-- <medium type=\"homogeneous\"/> -->\n\
             <shape type=\"rectangle\">\n\
               <transform name=\"toWorld\"><scale value=\"2\"/><translate x=\"1\"/></transform>\n\
               <ref id=\"white\"/>\n\
             </shape>\n\
             </scene>",
        )
        .unwrap();
        assert_eq!(doc.version, "0.6.0");
        assert_eq!(doc.objects.len(), 2);
        let shape = &doc.objects[1];
        assert_eq!(
            (shape.tag, shape.plugin.as_str(), shape.line),
            (Tag::Shape, "rectangle", 6)
        );
        assert_eq!(shape.properties[0].name, "to_world");
        let Value::Transform(m) = &shape.properties[0].value else {
            panic!("a transform")
        };
        assert_eq!(m.point([1.0, 0.0, 0.0]), [3.0, 0.0, 0.0]);
        assert_eq!(shape.children[0].line, 8);
        assert!(Rc::ptr_eq(&shape.children[0].object, &doc.objects[0]));
        assert_eq!(doc.objects[0].properties[0].value, Value::Rgb([0.5, 0.25, 1.0]));
    }

    #[test]
    fn each_bad_element_is_named_with_its_line() {
        let cases: &[(&str, &str, usize, &str)] = &[
            (
                "<scene version=\"0.6.0\">\n<medium type=\"homogeneous\"/>\n</scene>",
                "<medium> in <scene>",
                2,
                "is not an element",
            ),
            ("<scene>\n</scene>", "<scene>", 1, "has no `version`"),
            (
                "<scene version=\"9.0\">\n</scene>",
                "<scene>, attribute `version`",
                1,
                "not a Mitsuba version",
            ),
            (
                "<sceen version=\"0.6.0\"/>",
                "<sceen>",
                1,
                "outermost element is <scene>",
            ),
            (
                "<scene version=\"0.6.0\">\n<bsdf type=\"diffuse\">\n<float name=\"alpha\" value=\"x\"/>\n</bsdf>\n</scene>",
                "<bsdf type=\"diffuse\">, parameter `alpha`",
                3,
                "`x` is not a finite number",
            ),
            (
                "<scene version=\"0.6.0\">\n<shape type=\"obj\">\n<ref id=\"later\"/>\n</shape>\n</scene>",
                "<ref id=\"later\">",
                3,
                "names no object declared before it",
            ),
            (
                "<scene version=\"0.6.0\">\n<bsdf type=\"diffuse\" id=\"a\"/>\n<bsdf type=\"diffuse\" id=\"a\"/>\n</scene>",
                "<bsdf type=\"diffuse\" id=\"a\">",
                3,
                "repeats the id",
            ),
            (
                "<scene version=\"0.6.0\">\n<shape type=\"obj\" colour=\"red\"/>\n</scene>",
                "<shape>",
                2,
                "attribute `colour`",
            ),
            (
                "<scene version=\"0.6.0\">\n<shape type=\"obj\">\n<transform name=\"toWorld\">\n<shear/>\n</transform>\n</shape>\n</scene>",
                "<shape type=\"obj\">, parameter `to_world`, <shear>",
                4,
                "not a step of a transform",
            ),
            (
                "<scene version=\"0.6.0\">\n<shape type=\"obj\">\n<transform name=\"toWorld\">\n<matrix value=\"1 2 3\"/>\n</transform>\n</shape>\n</scene>",
                "<shape type=\"obj\">, parameter `to_world`, <matrix>",
                4,
                "is not 16 finite numbers",
            ),
            (
                "<scene version=\"0.6.0\">\n<bsdf type=\"diffuse\">\n<float name=\"a\" value=\"1\"/>\n<float name=\"a\" value=\"2\"/>\n</bsdf>\n</scene>",
                "<bsdf type=\"diffuse\">, parameter `a`",
                4,
                "is given twice (first on line 3)",
            ),
            ("<scene version=\"0.6.0\">\nhello\n</scene>", "<scene>", 1, "holds text"),
            (
                "<scene version=\"0.6.0\">\n<bsdf type=\"diffuse\">\n</scene>",
                "the XML",
                3,
                "",
            ),
        ];
        for (text, item, line, message) in cases {
            let f = document(text).expect_err(text);
            assert_eq!((f.item.as_str(), f.line), (*item, *line), "{text}: {f:?}");
            assert!(f.message.contains(message), "{text}: {f:?}");
        }
    }

    #[test]
    fn nesting_past_the_limit_is_refused_not_recursed_into() {
        let mut text = String::from("<scene version=\"0.6.0\">");
        for _ in 0..100 {
            text.push_str("<bsdf type=\"twosided\">");
        }
        for _ in 0..100 {
            text.push_str("</bsdf>");
        }
        text.push_str("</scene>");
        let f = document(&text).unwrap_err();
        assert!(f.message.contains("nests more than 64 deep"), "{f:?}");
    }
}
