//! Paths into a TOML document, such as `generators[0].grid`: the place of
//! a field in a scene file, a config or a manifest, as an error names it
//! and as a sweep of a scene field names what it sets.

/// One step of a path into a TOML document: a key, or an index into an
/// array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// A table key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// The step into the table key `name`.
pub fn key(name: impl Into<String>) -> PathStep {
    PathStep::Key(name.into())
}

/// `steps` as a TOML path names them: `objects[2].edges[1]`.
pub fn display(steps: &[PathStep]) -> String {
    let mut text = String::new();
    for step in steps {
        match step {
            PathStep::Key(k) if text.is_empty() => text.push_str(k),
            PathStep::Key(k) => {
                text.push('.');
                text.push_str(k);
            }
            PathStep::Index(i) => text.push_str(&format!("[{i}]")),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_reads_as_toml_names_it() {
        use PathStep::Index;
        assert_eq!(
            display(&[key("objects"), Index(2), key("edges"), Index(1)]),
            "objects[2].edges[1]"
        );
        assert_eq!(display(&[key(String::from("a")), Index(0), Index(1)]), "a[0][1]");
        assert_eq!(display(&[]), "");
    }
}
