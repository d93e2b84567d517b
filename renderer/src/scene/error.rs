//! Scene errors that say where: file, line and field, and no more of a
//! value than a reader needs ([`quoting_shortened`]).

use crate::settings::echo::shorten_for_error;
use std::path::{Path, PathBuf};
use toml::de::DeTable;

/// Why a scene could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// The file could not be read, or is not a scene file at all.
    #[error("{}: {message}", path.display())]
    File {
        /// The scene file.
        path: PathBuf,
        /// What is wrong, e.g. "does not exist".
        message: String,
    },
    /// The text is not valid TOML, or does not fit the scene format outside
    /// any entry (a section missing).
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        /// The scene file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// A value of an entry does not fit the scene format: of the wrong
    /// type, unknown, or missing.
    #[error("{}:{line}:{column}: {item}: {message}", path.display())]
    Schema {
        /// The scene file.
        path: PathBuf,
        /// 1-based line of the value (or key, or entry) at fault.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The entry and field, e.g. ``[textures.marble], field `octaves` ``.
        item: String,
        /// What the format expected.
        message: String,
    },
    /// A value is out of range or refers to something that does not exist.
    #[error("{}:{line}: {item}: {message}", path.display())]
    Invalid {
        /// The scene file.
        path: PathBuf,
        /// 1-based line of the entry at fault.
        line: usize,
        /// The entry and field, e.g. ``objects[3] (sphere), field `radius` ``.
        item: String,
        /// What was wrong and what was expected.
        message: String,
    },
}

/// 1-based (line, column) of byte offset `at` in `text`.
pub fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// `message` with every value it quotes, between backticks or double
/// quotes, cut to a readable length ([`shorten_for_error`]): a scene's
/// names and strings may be of any size.
pub fn quoting_shortened(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(1 << 12));
    let mut rest = message;
    while let Some(open) = rest.find(['`', '"']) {
        let quote = if rest.as_bytes()[open] == b'`' { '`' } else { '"' };
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        // A double-quoted value is escaped as Rust writes strings: `\"`
        // is a quote within it.
        let mut close = None;
        let mut escaped = false;
        for (i, c) in rest.char_indices() {
            match c {
                '\\' if quote == '"' => escaped = !escaped,
                c if c == quote && !escaped => {
                    close = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let Some(close) = close else { break };
        out.push_str(&shorten_for_error(&rest[..close]));
        out.push(quote);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

impl SceneError {
    /// Wraps an error of TOML's parser with its position: a duplicate key
    /// named, and an error the parser gives no position (a header nested
    /// too deep) placed at the first line that gives it.
    pub fn syntax(path: &Path, text: &str, e: &toml::de::Error) -> Self {
        let message = e.message().trim();
        let (line, column, message) = match e.span() {
            Some(span) if message == "duplicate key" => {
                let (line, column) = line_col(text, span.start);
                let key = text.get(span).unwrap_or_default();
                let message = format!("duplicate key `{key}` (a key is set once in its table)");
                (line, column, message)
            }
            Some(span) => {
                let (line, column) = line_col(text, span.start);
                (line, column, message.to_string())
            }
            None => (first_line_giving(text, message), 1, message.to_string()),
        };
        SceneError::Syntax {
            path: path.to_path_buf(),
            line,
            column,
            message: quoting_shortened(&message),
        }
    }
}

/// The first line of `text` by which its first lines give the parser's
/// error `message` without a position: the fewest lines that do, found by
/// halving (a prefix that holds the line at fault fails there, one that
/// does not fails otherwise or not at all).
fn first_line_giving(text: &str, message: &str) -> usize {
    let ends: Vec<usize> = text
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .chain(std::iter::once(text.len()))
        .collect();
    let gives = |lines: usize| {
        DeTable::parse(&text[..ends[lines - 1]])
            .err()
            .is_some_and(|e| e.span().is_none() && e.message().trim() == message)
    };
    let (mut lo, mut hi) = (1, ends.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if gives(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}
