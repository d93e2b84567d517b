//! The README and `docs/` against what they describe, so that neither can
//! go stale unnoticed:
//! - `docs/architecture.md`'s module index, between `<!-- modules:begin -->`
//!   and `<!-- modules:end -->`, lists every `.rs` file of every crate's
//!   `src` folder, each with the first sentence of its `//!` doc (the doc's
//!   first paragraph up to the first full stop followed by a space or its
//!   end): a module added, removed or renamed, or a first sentence
//!   changed, fails the test, which names what to fix;
//! - the README's answer, between `<!-- answer:begin -->` and
//!   `<!-- answer:end -->`, is the section "The answer" of the committed
//!   `results/SUMMARY.md` (which `tests/summary.rs` regenerates), its links
//!   made relative to the repository root;
//! - every path a page names outside the generated blocks exists: each
//!   relative Markdown link and image (`src="…"`), and each code span of
//!   one word that starts with a folder of the repository (a placeholder is
//!   written in angle brackets, `results/<study>/`, and not checked).
//!
//! `WAVEPATH_BLESS=1 cargo test --test docs` rewrites both generated blocks
//! (after a module is renamed, or the summary regenerated).

use report::answer::HEADING;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The folders whose modules the index lists.
const MODULE_ROOTS: [&str; 5] = ["device/src", "renderer/src", "lab/src", "report/src", "src"];
/// The folders of the repository whose paths a page's code spans name.
const REPO_FOLDERS: [&str; 13] = [
    "device/",
    "renderer/",
    "lab/",
    "report/",
    "src/",
    "tests/",
    "scripts/",
    "experiments/",
    "scenes/",
    "results/",
    "docs/",
    "benches/",
    "fuzz/",
];

/// A path in the repository.
fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Whether `WAVEPATH_BLESS` asks for the generated blocks to be rewritten.
fn blessing() -> bool {
    std::env::var_os("WAVEPATH_BLESS").is_some()
}

/// The text between `<!-- NAME:begin -->\n` and `<!-- NAME:end -->` in
/// `text`, as a byte range.
fn block(text: &str, name: &str) -> Option<std::ops::Range<usize>> {
    let begin = format!("<!-- {name}:begin -->\n");
    let start = text.find(&begin)? + begin.len();
    let end = start + text[start..].find(&format!("<!-- {name}:end -->"))?;
    Some(start..end)
}

/// Checks the block `name` of the page `rel` against `expected`, or
/// rewrites it when blessing; on a difference, fails with `explain`'s
/// account of it.
fn check_block(rel: &str, name: &str, expected: &str, explain: impl Fn(&str) -> String) {
    let path = repo(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let Some(range) = block(&text, name) else {
        panic!(
            "{rel} has no `<!-- {name}:begin -->` … `<!-- {name}:end -->` block; add the two markers, each on a line of its own, and rerun with WAVEPATH_BLESS=1"
        );
    };
    let committed = &text[range.clone()];
    if committed == expected {
        return;
    }
    if blessing() {
        let mut text = text.clone();
        text.replace_range(range, expected);
        std::fs::write(&path, text).unwrap();
        return;
    }
    panic!(
        "{rel}: its {name} block is out of date:\n{}\nrerun with WAVEPATH_BLESS=1 cargo test --test docs to rewrite it",
        explain(committed)
    );
}

/// Every `.rs` file under `dir`, as paths relative to the repository, in
/// order: a folder's files, then its subfolders'.
fn module_files(dir: &str) -> Vec<String> {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(repo(dir)).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_dir() {
            dirs.push(format!("{dir}/{name}"));
        } else if name.ends_with(".rs") {
            files.push(format!("{dir}/{name}"));
        }
    }
    files.sort();
    dirs.sort();
    for d in dirs {
        files.extend(module_files(&d));
    }
    files
}

/// The first sentence of a module's `//!` doc: its first paragraph, lines
/// joined by a space, up to the first full stop followed by a space or the
/// paragraph's end (an ellipsis `..` ends nothing); `None` without a doc.
fn first_sentence(source: &str) -> Option<String> {
    let mut paragraph: Vec<&str> = Vec::new();
    for line in source.lines() {
        let Some(doc) = line.strip_prefix("//!") else { break };
        match doc.trim() {
            "" if paragraph.is_empty() => continue,
            "" => break,
            text => paragraph.push(text),
        }
    }
    let text = paragraph.join(" ");
    if text.is_empty() {
        return None;
    }
    let bytes = text.as_bytes();
    let end = (0..bytes.len())
        .find(|&i| {
            bytes[i] == b'.'
                && (i == 0 || bytes[i - 1] != b'.')
                && bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace())
        })
        .map_or(text.len(), |i| i + 1);
    Some(without_links(&text[..end]))
}

/// `text` with rustdoc's links (``[`Item`]``, ``[`Item`](crate::path)``)
/// reduced to their text: their targets are Rust paths, not pages.
fn without_links(text: &str) -> String {
    let mut out = String::new();
    let mut code = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        rest = &rest[c.len_utf8()..];
        match c {
            '`' => code = !code,
            '[' if !code => {
                if let Some(close) = rest.find(']') {
                    out += &rest[..close];
                    rest = &rest[close + 1..];
                    if let Some(target) = rest.strip_prefix('(') {
                        rest = &target[target.find(')').map_or(target.len(), |i| i + 1)..];
                    }
                    continue;
                }
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// Every module file with its first sentence, by path; the files without
/// a `//!` doc apart.
fn modules() -> (BTreeMap<String, String>, Vec<String>) {
    let mut found = BTreeMap::new();
    let mut undocumented = Vec::new();
    for root in MODULE_ROOTS {
        for file in module_files(root) {
            let source = std::fs::read_to_string(repo(&file)).unwrap();
            match first_sentence(&source) {
                Some(sentence) => {
                    found.insert(file, sentence);
                }
                None => undocumented.push(file),
            }
        }
    }
    (found, undocumented)
}

/// The module index: a heading per folder, a line per file.
fn module_index() -> String {
    let (modules, _) = modules();
    let mut out = String::new();
    let mut folder = String::new();
    for root in MODULE_ROOTS {
        for file in module_files(root) {
            let (dir, name) = file.rsplit_once('/').unwrap();
            if dir != folder {
                out += &format!("\n#### `{dir}/`\n\n");
                folder = dir.to_string();
            }
            out += &format!("- `{name}`: {}\n", modules[&file]);
        }
    }
    out + "\n"
}

/// The index's entries read back: each file's path and its sentence.
fn read_index(block: &str) -> BTreeMap<String, String> {
    let mut entries = BTreeMap::new();
    let mut dir = "";
    for line in block.lines() {
        if let Some(d) = line.strip_prefix("#### `").and_then(|l| l.strip_suffix("/`")) {
            dir = d;
        } else if let Some((name, sentence)) = line.strip_prefix("- `").and_then(|l| l.split_once("`: ")) {
            entries.insert(format!("{dir}/{name}"), sentence.to_string());
        }
    }
    entries
}

#[test]
fn the_module_index_lists_every_module_with_its_first_sentence() {
    let (modules, undocumented) = modules();
    assert!(
        undocumented.is_empty(),
        "modules without a `//!` doc (every module opens with one): {undocumented:?}"
    );
    check_block("docs/architecture.md", "modules", &module_index(), |committed| {
        let listed = read_index(committed);
        let mut fixes = Vec::new();
        for (file, sentence) in &modules {
            match listed.get(file) {
                None => fixes.push(format!("- {file} is not listed")),
                Some(s) if s != sentence => fixes.push(format!(
                    "- {file}: its first sentence is now \"{sentence}\", listed \"{s}\""
                )),
                Some(_) => {}
            }
        }
        for file in listed.keys().filter(|f| !modules.contains_key(*f)) {
            fixes.push(format!("- {file} is listed but no longer exists"));
        }
        if fixes.is_empty() {
            fixes.push("- the entries agree, their layout differs".into());
        }
        fixes.join("\n")
    });
}

/// Markdown links relative to `results/` made relative to the repository
/// root (web and in-page links unchanged).
fn rebase_links(text: &str, folder: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        let (before, after) = rest.split_at(i + 2);
        out += before;
        if !(after.starts_with("http") || after.starts_with('#') || after.starts_with('/')) {
            out += folder;
        }
        rest = after;
    }
    out + rest
}

#[test]
fn the_readmes_answer_is_the_summarys() {
    let summary = std::fs::read_to_string(repo("results/SUMMARY.md")).unwrap();
    let start = summary
        .find(&format!("\n{HEADING}\n"))
        .unwrap_or_else(|| panic!("results/SUMMARY.md has no section \"{HEADING}\"; regenerate it"))
        + 1;
    let end = summary[start + 1..]
        .find("\n## ")
        .map_or(summary.len(), |i| start + 1 + i);
    let section = rebase_links(&summary[start..end], "results/");
    check_block("README.md", "answer", &section, |_| {
        "the README's answer differs from the section of results/SUMMARY.md".into()
    });
}

#[test]
fn rebasing_moves_relative_links_only() {
    assert_eq!(
        rebase_links("[a](x/r.md) ![f](figures/a.svg) [w](https://e.org) [s](#t)", "results/"),
        "[a](results/x/r.md) ![f](results/figures/a.svg) [w](https://e.org) [s](#t)"
    );
}

#[test]
fn a_first_sentence_ends_at_a_full_stop_before_a_space() {
    let source = "//!\n//! Renders `0 .. n` samples. Then more\n//! of it.\n//!\n//! Second.\nuse x;";
    assert_eq!(first_sentence(source).as_deref(), Some("Renders `0 .. n` samples."));
    assert_eq!(
        first_sentence("//! One line, no stop\n//! but two.\n").as_deref(),
        Some("One line, no stop but two.")
    );
    assert_eq!(first_sentence("/// Not a module doc.\n"), None);
    assert_eq!(
        first_sentence("//! A [`Kernel`](crate::kernel::Kernel) over [`Primitives`], cells `[t0, t1]`.").as_deref(),
        Some("A `Kernel` over `Primitives`, cells `[t0, t1]`.")
    );
}

/// The pages a reader opens: the README and every page of `docs/`.
fn pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_string()];
    for entry in std::fs::read_dir(repo("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    pages.sort();
    pages
}

/// The paths `text` (a page in `folder`) names, relative to the
/// repository, outside fenced code and generated blocks: its relative
/// links and images, and
/// its one-word code spans into a folder of the repository; with their
/// line numbers.
fn named_paths(text: &str, folder: &Path) -> Vec<(usize, String)> {
    let mut fenced = false;
    let mut generated = false;
    // The page with its fenced code and its generated blocks (checked by
    // the tests that generate them) blanked, line for line.
    let prose: Vec<&str> = text
        .lines()
        .map(|line| {
            let fence = line.trim_start().starts_with("```");
            fenced ^= fence;
            let marker = line.starts_with("<!-- ") && (line.ends_with(":begin -->") || line.ends_with(":end -->"));
            generated ^= marker;
            if fence || fenced || marker || generated {
                ""
            } else {
                line
            }
        })
        .collect();
    let mut paths = Vec::new();
    for (n, line) in prose.iter().enumerate() {
        let targets = line
            .match_indices("](")
            .map(|(i, _)| (&line[i + 2..], ')'))
            .chain(line.match_indices("src=\"").map(|(i, _)| (&line[i + 5..], '"')));
        for (rest, close) in targets {
            let target = &rest[..rest.find(close).unwrap_or(rest.len())];
            let target = target.split('#').next().unwrap_or_default();
            if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                paths.push((n + 1, folder.join(target).to_string_lossy().into_owned()));
            }
        }
    }
    // Code spans may run over a line break (then they hold whitespace).
    let prose = prose.join("\n");
    let mut line = 1;
    for (i, span) in prose.split('`').enumerate() {
        let checked = i % 2 == 1
            && REPO_FOLDERS.iter().any(|f| span.starts_with(f))
            && !span.contains(|c: char| c.is_whitespace() || "<>*{}…".contains(c));
        if checked {
            paths.push((line, span.to_string()));
        }
        line += span.matches('\n').count();
    }
    paths
}

#[test]
fn the_paths_named_are_links_images_and_one_word_code_spans() {
    let page = "See [a](../x/y.md#top), <img src=\"r/i.png\">, `tests/docs.rs`,\n\
                `results/<study>/`, `scripts/run render` and `renderer/src/a\nb.rs`\n\
                ```sh\n`renderer/src/gone.rs` [c](gone.md)\n```\n\
                [w](https://e.org) [s](#t) `renderer/src/a.rs`.\n\
                <!-- index:begin -->\n[g](generated.md)\n<!-- index:end -->";
    let found: Vec<(usize, String)> = named_paths(page, Path::new("docs"));
    let expected = [
        (1, "docs/../x/y.md"),
        (1, "docs/r/i.png"),
        (1, "tests/docs.rs"),
        (7, "renderer/src/a.rs"),
    ];
    assert_eq!(found, expected.map(|(n, p)| (n, p.to_string())));
}

#[test]
fn every_path_a_page_names_exists() {
    let mut missing = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(repo(&page)).unwrap();
        let folder = Path::new(&page).parent().unwrap_or(Path::new(""));
        for (line, path) in named_paths(&text, folder) {
            if !repo(&path).exists() {
                missing.push(format!("{page}:{line}: {path}"));
            }
        }
    }
    assert!(missing.is_empty(), "paths that do not exist:\n{}", missing.join("\n"));
}
