//! Scene errors that say where: file, line and field.

use std::path::{Path, PathBuf};

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

impl SceneError {
    /// Wraps a TOML parse or schema error with its position.
    pub fn syntax(path: &Path, text: &str, e: &toml::de::Error) -> Self {
        let (line, column) = e.span().map_or((1, 1), |s| line_col(text, s.start));
        SceneError::Syntax {
            path: path.to_path_buf(),
            line,
            column,
            message: e.message().trim().to_string(),
        }
    }
}
