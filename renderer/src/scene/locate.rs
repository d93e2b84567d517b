//! Placing a value error in the scene file: the line of the field at
//! fault, in the entry named as every scene error names it.

use super::error::{SceneError, line_col, quoting_shortened};
use super::fields::FieldError;
use crate::settings::echo::shorten_for_error;
use std::ops::Range;
use std::path::Path;

/// How errors name a section of one table: `[render]`.
pub fn table_entry(section: &str) -> String {
    format!("[{section}]")
}

/// How errors name a named table: `[materials.white]` (a long name cut).
pub fn named_entry(section: &str, name: &str) -> String {
    format!("[{section}.{}]", shorten_for_error(name))
}

/// How errors name an entry of an array of tables: `objects[2] (sphere)`
/// (a long kind cut).
pub fn listed_entry(array: &str, index: usize, kind: &str) -> String {
    format!("{array}[{index}] ({})", shorten_for_error(kind))
}

/// Where in the file an entry is, for error messages.
pub struct Locator<'a> {
    /// The scene file.
    pub path: &'a Path,
    /// Its text.
    pub text: &'a str,
}

impl Locator<'_> {
    /// An error in field `e.field` of the entry spanning `span`, placed on
    /// the field's own line when the entry writes it as `field = ...`, else on
    /// the entry's first line.
    pub fn error(&self, span: Range<usize>, entry: &str, e: FieldError) -> SceneError {
        let key = e.field.split('.').next().unwrap_or_default();
        // A table's span covers only its header; its fields run to the next header.
        let span = span.start..entry_end(self.text, span.end);
        let entry_text = self.text.get(span.clone()).unwrap_or_default();
        let mut offset = span.start;
        for l in entry_text.split_inclusive('\n') {
            let rest = l.trim_start();
            if rest.strip_prefix(key).is_some_and(|r| r.trim_start().starts_with('=')) {
                offset += l.len() - rest.len();
                break;
            }
            offset += l.len();
        }
        let at = if offset >= span.end { span.start } else { offset };
        let (line, _) = line_col(self.text, at);
        SceneError::Invalid {
            path: self.path.to_path_buf(),
            line,
            item: if e.field.is_empty() {
                entry.to_string()
            } else {
                format!("{entry}, field `{}`", e.field)
            },
            message: quoting_shortened(&e.message),
        }
    }
}

/// Where the entry whose header or inline table ends at `from` ends: at the
/// next `[table]` or `[[array]]` header line, or the end of the text.
fn entry_end(text: &str, from: usize) -> usize {
    let mut at = from;
    for (i, line) in text.get(from..).unwrap_or_default().split_inclusive('\n').enumerate() {
        let l = line.split('#').next().unwrap_or_default().trim();
        let is_header = l.starts_with('[')
            && l.ends_with(']')
            && l.trim_matches(['[', ']'])
                .chars()
                .all(|c| c.is_alphanumeric() || "_-.\"".contains(c));
        if i > 0 && is_header {
            return at;
        }
        at += line.len();
    }
    text.len()
}
