//! Placing an error in the scene file: the line of the field at fault, and
//! entries of arrays of tables deserialised one by one so that their errors
//! name them.

use super::error::{SceneError, line_col};
use super::fields::FieldError;
use serde::de::DeserializeOwned;
use serde_spanned::Spanned;
use std::ops::Range;
use std::path::Path;

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
            message: e.message,
        }
    }

    /// Deserialises entry `index` of the array of tables `array` on its
    /// own, so that an error names the entry and its line (TOML's own
    /// positions inside arrays of tables point at the first entry).
    pub fn entry<T: DeserializeOwned>(
        &self,
        array: &str,
        index: usize,
        table: &Spanned<toml::Table>,
    ) -> Result<(T, String), SceneError> {
        let kind = table
            .get_ref()
            .get("kind")
            .and_then(|k| k.as_str())
            .unwrap_or("no kind");
        let name = format!("{array}[{index}] ({kind})");
        match toml::Value::Table(table.get_ref().clone()).try_into::<T>() {
            Ok(def) => Ok((def, name)),
            Err(e) => {
                let message = e.message().trim().to_string();
                let field = culprit::<T>(table.get_ref(), &message).unwrap_or_default();
                Err(self.error(table.span(), &name, FieldError { field, message }))
            }
        }
    }
}

/// The key of `table` that `message` (its deserialisation error) is about:
/// named in the message, or else the one key whose removal changes the
/// error.
fn culprit<T: DeserializeOwned>(table: &toml::Table, message: &str) -> Option<String> {
    let quoted = |prefix: &str| {
        let rest = message.strip_prefix(prefix)?;
        Some(rest.split('`').nth(1)?.to_string())
    };
    if message.starts_with("unknown variant") {
        return Some("kind".into());
    }
    if let Some(k) = quoted("unknown field").or_else(|| quoted("missing field")) {
        return Some(k);
    }
    table.keys().filter(|k| *k != "kind").find_map(|k| {
        let mut without = table.clone();
        without.remove(k);
        let changed = match toml::Value::Table(without).try_into::<T>() {
            Ok(_) => true,
            Err(e) => e.message().trim() != message,
        };
        changed.then(|| k.clone())
    })
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
