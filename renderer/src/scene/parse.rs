//! Scene text into the schema's serde types with every value's position
//! kept, and a value that does not fit the schema (of the wrong type,
//! unknown, missing) placed at its line and column, naming its entry and
//! field as a value error names them.
//!
//! The file is parsed into TOML's spanned document first, and each section
//! checked for its shape (a table, named tables, an array of tables), so
//! that `render = 3` is refused naming the field rather than a Rust type.
//! The tables that
//! name their kind (`[background]`, `[textures.*]`, `[materials.*]`,
//! `[[objects]]`, `[[generators]]`) are rewritten there for
//! [`super::schema::Tagged`], and serde reads the rewritten document, each
//! value carrying its span. An error's span is then looked up in the
//! document as written: the narrowest key or value that holds it is the
//! field at fault.

use super::error::{SceneError, line_col, quoting_shortened};
use super::locate::{listed_entry, named_entry, table_entry};
use super::schema::SceneFile;
use crate::io::document_path::{self, PathStep};
use serde::Deserialize;
use serde_spanned::Spanned;
use std::borrow::Cow;
use std::ops::Range;
use std::path::Path;
use toml::de::{DeTable, DeValue};

/// Sections of one table.
const TABLES: [&str; 3] = ["render", "camera", "accel"];
/// Sections of one table that names its kind.
const TAGGED_TABLES: [&str; 1] = ["background"];
/// Sections of named tables (`[materials.white]`).
const NAMED_TABLES: [&str; 2] = ["textures", "materials"];
/// Sections of arrays of tables (`[[objects]]`).
const TABLE_ARRAYS: [&str; 2] = ["objects", "generators"];

/// Parses scene `text` (of the file `path`) into its serde types.
pub fn scene_file(path: &Path, text: &str) -> Result<SceneFile, SceneError> {
    let written = DeTable::parse(text).map_err(|e| SceneError::syntax(path, text, &e))?;
    check_shapes(path, text, written.get_ref())?;
    let mut read = written.clone();
    untag_sections(read.get_mut());
    SceneFile::deserialize(toml::de::Deserializer::from(read)).map_err(|e| place(path, text, written.get_ref(), &e))
}

/// Refuses a section of `doc` (the text of `path`) of the wrong shape,
/// which serde would refuse naming its Rust type: each of [`TABLES`] and
/// [`TAGGED_TABLES`] is a table, each of [`NAMED_TABLES`] a table of
/// tables and each of [`TABLE_ARRAYS`] an array of tables.
fn check_shapes(path: &Path, text: &str, doc: &DeTable) -> Result<(), SceneError> {
    let refuse = |value: &Spanned<DeValue<'_>>, item: String, expected: String| {
        let (line, column) = line_col(text, value.span().start);
        SceneError::Schema {
            path: path.to_path_buf(),
            line,
            column,
            item,
            message: format!("expected {expected}, found {}", a_type(value.get_ref())),
        }
    };
    for (key, value) in doc.iter() {
        let section: &str = key.get_ref();
        let field = || format!("field `{section}`");
        if TABLES.contains(&section) || TAGGED_TABLES.contains(&section) {
            if !value.get_ref().is_table() {
                return Err(refuse(value, field(), format!("a table (a `[{section}]` section)")));
            }
        } else if NAMED_TABLES.contains(&section) {
            let DeValue::Table(entries) = value.get_ref() else {
                let expected = format!("a table of named tables (`[{section}.NAME]` sections)");
                return Err(refuse(value, field(), expected));
            };
            if let Some((name, entry)) = entries.iter().find(|(_, e)| !e.get_ref().is_table()) {
                let expected = format!("a table (a `[{section}.NAME]` section)");
                return Err(refuse(entry, named_entry(section, name.get_ref()), expected));
            }
        } else if TABLE_ARRAYS.contains(&section) {
            let DeValue::Array(entries) = value.get_ref() else {
                let expected = format!("an array of tables (`[[{section}]]` entries)");
                return Err(refuse(value, field(), expected));
            };
            if let Some((i, entry)) = entries.iter().enumerate().find(|(_, e)| !e.get_ref().is_table()) {
                let expected = format!("a table (a `[[{section}]]` entry)");
                return Err(refuse(entry, format!("{section}[{i}]"), expected));
            }
        }
    }
    Ok(())
}

/// What `value` is, with its article: `an integer`, `a table`.
fn a_type(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// Rewrites every table of `doc` that names its kind ([`untag`]): each
/// named table and array entry of the sections that hold them (every
/// named table and entry names a kind, and `[accel]`'s `kind` is a field).
fn untag_sections(doc: &mut DeTable) {
    for (key, section) in doc.iter_mut() {
        let key: &str = key.get_ref();
        match section.get_mut() {
            DeValue::Table(_) if TAGGED_TABLES.contains(&key) => untag(section),
            DeValue::Table(tables) if NAMED_TABLES.contains(&key) => {
                tables.iter_mut().for_each(|(_, table)| untag(table));
            }
            DeValue::Array(entries) if TABLE_ARRAYS.contains(&key) => entries.iter_mut().for_each(untag),
            _ => {}
        }
    }
}

/// Rewrites `{ kind = K, fields }` as `{ kind = K, def = { K = { fields } } }`,
/// the shape [`super::schema::Tagged`] reads: the new key `K` has the span
/// of the kind's value (an unknown kind is refused there), the new tables
/// the span of the table. A table without a kind, or whose kind is not a
/// string, is left for serde to refuse.
fn untag(table: &mut Spanned<DeValue<'_>>) {
    let span = table.span();
    let DeValue::Table(fields) = table.get_mut() else {
        return;
    };
    let Some(kind_name) = fields.get("kind").and_then(|k| k.get_ref().as_str()).map(str::to_owned) else {
        return;
    };
    let Some((kind_key, kind)) = fields.remove_entry("kind") else {
        return;
    };
    let mut variant = DeTable::new();
    variant.insert(
        Spanned::new(kind.span(), Cow::Owned(kind_name)),
        Spanned::new(span.clone(), DeValue::Table(std::mem::take(fields))),
    );
    fields.insert(kind_key, kind);
    fields.insert(
        Spanned::new(span.clone(), Cow::Borrowed("def")),
        Spanned::new(span, DeValue::Table(variant)),
    );
}

/// The error `e` of reading the document `written` (the text of `path`),
/// placed at its span: with its entry and field where the span lies in
/// an entry, else at its position alone.
fn place(path: &Path, text: &str, written: &DeTable, e: &toml::de::Error) -> SceneError {
    let message = e.message().trim();
    let message = unknown_keys(message).unwrap_or_else(|| plain_expected(message));
    let message = quoting_shortened(&message);
    let span = e.span().unwrap_or(0..0);
    let (line, column) = line_col(text, span.start);
    match item(written, &locate(written, &span), &message) {
        Some(item) => SceneError::Schema {
            path: path.to_path_buf(),
            line,
            column,
            item: quoting_shortened(&item),
            message,
        },
        None => SceneError::Syntax {
            path: path.to_path_buf(),
            line,
            column,
            message,
        },
    }
}

/// serde's refusal of a value where it expected a struct, which it names
/// by its Rust type (`expected struct TransformDef`), in the file's words
/// (`expected a table`).
fn plain_expected(message: &str) -> String {
    match message.split_once(", expected struct ") {
        Some((found, _)) => format!("{found}, expected a table"),
        None => message.to_string(),
    }
}

/// TOML's refusal of unknown keys in the table of a kind ("unexpected keys
/// in table: a, available keys: b, c"), in the words serde uses for every
/// other table ("unknown field `a`, expected one of `b`, `c`").
fn unknown_keys(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unexpected keys in table: ")?;
    let (unknown, available) = rest.split_once(", available keys:")?;
    let quoted = |names: &str| -> Vec<String> {
        names
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| format!("`{n}`"))
            .collect()
    };
    let (unknown, available) = (quoted(unknown), quoted(available));
    let fields = if unknown.len() == 1 { "field" } else { "fields" };
    let expected = match available.as_slice() {
        [] => "there are no fields".to_string(),
        [one] => format!("expected {one}"),
        many => format!("expected one of {}", many.join(", ")),
    };
    Some(format!("unknown {fields} {}, {expected}", unknown.join(", ")))
}

/// The path to the narrowest key or value of `doc` whose text holds
/// `span` (empty when none does).
fn locate(doc: &DeTable, span: &Range<usize>) -> Vec<PathStep> {
    let mut best = None;
    visit_table(doc, span, &mut Vec::new(), &mut best);
    best.map(|(_, path)| path).unwrap_or_default()
}

/// Records `path` in `best` if `text` holds `span` and is no wider than
/// the best so far (of equal widths, the later, deeper one wins).
fn consider(text: Range<usize>, span: &Range<usize>, path: &[PathStep], best: &mut Option<(usize, Vec<PathStep>)>) {
    let holds = text.start <= span.start && span.end <= text.end;
    if holds && best.as_ref().is_none_or(|(width, _)| text.len() <= *width) {
        *best = Some((text.len(), path.to_vec()));
    }
}

/// [`consider`]s every key and value of `table`, at `path`.
fn visit_table(
    table: &DeTable,
    span: &Range<usize>,
    path: &mut Vec<PathStep>,
    best: &mut Option<(usize, Vec<PathStep>)>,
) {
    for (key, value) in table.iter() {
        path.push(document_path::key(key.get_ref().to_string()));
        consider(key.span(), span, path, best);
        visit_value(value, span, path, best);
        path.pop();
    }
}

/// [`consider`]s `value` at `path`, and what it holds.
fn visit_value(
    value: &Spanned<DeValue<'_>>,
    span: &Range<usize>,
    path: &mut Vec<PathStep>,
    best: &mut Option<(usize, Vec<PathStep>)>,
) {
    consider(value.span(), span, path, best);
    match value.get_ref() {
        DeValue::Table(table) => visit_table(table, span, path, best),
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(PathStep::Index(i));
                visit_value(item, span, path, best);
                path.pop();
            }
        }
        _ => {}
    }
}

/// How an error at `path` of `doc` names its place: the entry, as value
/// errors name it (`[render]`, `[materials.white]`, `objects[2] (sphere)`),
/// and the field within it, or the field `message` names (a missing or
/// unknown one) where the path ends at the entry. `None` outside entries.
fn item(doc: &DeTable, path: &[PathStep], message: &str) -> Option<String> {
    let (entry, field) = match path {
        [PathStep::Key(section), PathStep::Key(name), field @ ..] if NAMED_TABLES.contains(&section.as_str()) => {
            (named_entry(section, name), field)
        }
        [PathStep::Key(section), PathStep::Index(i), field @ ..] if TABLE_ARRAYS.contains(&section.as_str()) => {
            let kind = doc
                .get(section.as_str())
                .and_then(|s| s.get_ref().as_array())
                .and_then(|entries| entries.get(*i))
                .and_then(|entry| entry.get_ref().get("kind"))
                .and_then(|kind| kind.get_ref().as_str())
                .unwrap_or("no kind");
            (listed_entry(section, *i, kind), field)
        }
        [PathStep::Key(section), field @ ..] if doc.get(section.as_str()).is_some_and(|s| s.get_ref().is_table()) => {
            (table_entry(section), field)
        }
        _ => return None,
    };
    let field = match field {
        [] => quoted_field(message),
        steps => Some(document_path::display(steps)),
    };
    Some(match field {
        Some(field) => format!("{entry}, field `{field}`"),
        None => entry,
    })
}

/// The field a "missing field `x`" or "unknown field `x`" message names.
fn quoted_field(message: &str) -> Option<String> {
    ["missing field", "unknown field"].iter().find_map(|prefix| {
        let rest = message.strip_prefix(prefix)?;
        Some(rest.split('`').nth(1)?.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tagged_table_is_rewritten_for_its_kind_keeping_every_span() {
        let text = "[materials.m]\nkind = \"metal\"\nroughness = 0.5\n";
        let mut doc = DeTable::parse(text).unwrap();
        untag_sections(doc.get_mut());
        let m = doc.get_ref().get("materials").unwrap().get_ref().get("m").unwrap();
        let kind = m.get_ref().get("kind").unwrap();
        assert_eq!(kind.get_ref().as_str(), Some("metal"));
        let variant = m.get_ref().get("def").unwrap().get_ref().get("metal").unwrap();
        let roughness = variant.get_ref().get("roughness").unwrap();
        assert_eq!(&text[roughness.span()], "0.5");
        assert!(variant.get_ref().get("kind").is_none());
        // `[accel]`'s kind is a field, not a tag.
        let mut doc = DeTable::parse("[accel]\nkind = \"bvh\"\n").unwrap();
        untag_sections(doc.get_mut());
        let accel = doc.get_ref().get("accel").unwrap();
        assert!(accel.get_ref().get("def").is_none());
    }

    #[test]
    fn a_span_is_found_at_the_narrowest_key_or_value_holding_it() {
        let text = "[[objects]]\nkind = \"box\"\nedges = [[1, 0, 0], [0, \"x\", 0]]\n";
        let doc = DeTable::parse(text).unwrap();
        let at = text.find("\"x\"").unwrap();
        let path = locate(doc.get_ref(), &(at..at + 3));
        assert_eq!(
            path,
            [
                document_path::key("objects"),
                PathStep::Index(0),
                document_path::key("edges"),
                PathStep::Index(1),
                PathStep::Index(1)
            ]
        );
        assert_eq!(
            item(doc.get_ref(), &path, "invalid type").as_deref(),
            Some("objects[0] (box), field `edges[1][1]`")
        );
        assert_eq!(
            item(doc.get_ref(), &path[..2], "missing field `material`").as_deref(),
            Some("objects[0] (box), field `material`")
        );
        assert_eq!(item(doc.get_ref(), &[], "missing field `camera`"), None);
    }

    #[test]
    fn unknown_keys_are_refused_in_serdes_words() {
        let refusal = |m: &str| unknown_keys(m).unwrap();
        assert_eq!(
            refusal("unexpected keys in table: radus, available keys: center, radius, material"),
            "unknown field `radus`, expected one of `center`, `radius`, `material`"
        );
        assert_eq!(
            refusal("unexpected keys in table: size, available keys:"),
            "unknown field `size`, there are no fields"
        );
        assert_eq!(
            refusal("unexpected keys in table: a, b, available keys: c"),
            "unknown fields `a`, `b`, expected `c`"
        );
        assert_eq!(unknown_keys("invalid type: string \"x\", expected f32"), None);
    }
}
