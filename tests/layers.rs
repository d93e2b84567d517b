//! The code's layers: the workspace's crates depend downwards only (read
//! from their manifests), and no crate has an import circle (read from its
//! own imports).
//!
//! Each source file is a module. A file imports another when it names a
//! path into it: `use crate::a::b::Item`, `super::Item`, an inline
//! `crate::a::f()`, or a child module's item. A path is resolved to the
//! deepest module file that exists and, where that module only re-exports
//! the item (`pub use x::Item`), on to the file that defines it. A module's
//! own `mod` declarations and re-exports of its children are its interface, not
//! imports. `#[cfg(test)]` modules are left out.
//!
//! `scripts/imports` prints the graphs this test checks.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The workspace's crates by layer, bottom up, each with its source folder:
/// a crate may depend on those before it, never on one after it.
const CRATES: [(&str, &str); 5] = [
    ("device", "device/src"),
    ("renderer", "renderer/src"),
    ("lab", "lab/src"),
    ("report", "report/src"),
    ("wavepath", "src"),
];

#[test]
fn no_crate_has_an_import_circle() {
    for (name, src) in CRATES {
        let graph = Graph::read(&repo(src));
        let circles = graph.circles();
        assert!(
            circles.is_empty(),
            "import circles in the {name} crate (each line: the files of one circle, with the edges that tie them):\n{}",
            graph.describe(&circles)
        );
    }
}

#[test]
fn the_renderers_layers_import_downwards_only() {
    let graph = Graph::read(&repo("renderer/src")).by_top_module();
    let circles = graph.circles();
    assert!(
        circles.is_empty(),
        "circles between the renderer's top-level modules:\n{}",
        graph.describe(&circles)
    );
}

#[test]
fn the_crates_depend_downwards_only() {
    let manifest = |dir: &str| -> toml::Table {
        let path = repo(dir).join("Cargo.toml");
        toml::from_str(&fs::read_to_string(&path).unwrap()).unwrap()
    };
    let root = manifest("");
    let members: Vec<&str> = root["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let layered: Vec<&str> = CRATES
        .iter()
        .map(|(name, _)| *name)
        .filter(|n| *n != "wavepath")
        .collect();
    assert_eq!(
        members, layered,
        "the workspace's members, in layer order, are CRATES's"
    );
    for (name, src) in CRATES {
        let dir = src.strip_suffix("src").unwrap().trim_end_matches('/');
        let manifest = manifest(dir);
        assert_eq!(manifest["package"]["name"].as_str(), Some(name), "{dir}/Cargo.toml");
        let upward = upward_dependencies(name, &manifest);
        assert!(upward.is_empty(), "{name} depends on crates not below it: {upward:?}");
    }
}

#[test]
fn a_dependency_on_a_crate_above_is_found() {
    let manifest: toml::Table = toml::from_str(
        "[dependencies]\ndevice.workspace = true\nlab = { path = \"../lab\" }\nanyhow = \"1\"\n\
         [build-dependencies]\nreport.workspace = true\n",
    )
    .unwrap();
    assert_eq!(upward_dependencies("renderer", &manifest), ["lab", "report"]);
    assert!(upward_dependencies("wavepath", &manifest).is_empty());
}

/// The workspace crates that `name`'s manifest depends on (normally or in
/// its build script) and that are not below it in [`CRATES`].
fn upward_dependencies(name: &str, manifest: &toml::Table) -> Vec<String> {
    let layer = |crate_name: &str| CRATES.iter().position(|(n, _)| *n == crate_name);
    let own = layer(name).unwrap();
    ["dependencies", "build-dependencies"]
        .iter()
        .filter_map(|section| manifest.get(*section).and_then(|d| d.as_table()))
        .flat_map(|deps| deps.keys())
        .filter(|dep| layer(dep).is_some_and(|l| l >= own))
        .cloned()
        .collect()
}

/// Not a check: `scripts/imports` runs it to print the graphs.
#[test]
#[ignore = "prints the import graphs for scripts/imports"]
fn print_the_import_graphs() {
    for (_, src) in CRATES {
        let graph = Graph::read(&repo(src));
        println!("# {src}: {} files", graph.edges.len());
        for (from, tos) in &graph.edges {
            for (to, names) in tos {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                println!("{from} -> {to}: {}", names.join(", "));
            }
        }
        println!("## circles\n{}", graph.describe(&graph.circles()));
        let top = graph.by_top_module();
        println!("## circles between top-level modules\n{}", top.describe(&top.circles()));
    }
}

#[test]
fn the_resolver_sees_plain_grouped_inline_and_relative_paths() {
    let graph = graph_of(&[
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        (
            "a/mod.rs",
            "pub mod x;\npub use x::Thing;\nuse crate::b::{self, f as g};\n",
        ),
        ("a/x.rs", "pub struct Thing;\nfn h() { super::super::c::run(); }\n"),
        ("b.rs", "use crate::a::Thing;\npub fn f() {}\n"),
        (
            "c.rs",
            "// use crate::b; (a comment)\npub fn run() { let _ = \"crate::b\"; }\n#[cfg(test)]\nmod tests { use crate::b::f; }\n",
        ),
    ]);
    assert_eq!(
        graph.edge_list(),
        [("a/mod.rs", "b.rs"), ("a/x.rs", "c.rs"), ("b.rs", "a/x.rs")]
    );
    assert!(graph.circles().is_empty());
}

#[test]
fn a_circle_is_found_with_its_edges() {
    let graph = graph_of(&[
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        ("a.rs", "use crate::b::B;\npub struct A;\n"),
        ("b.rs", "pub struct B(crate::c::C);\n"),
        ("c.rs", "use super::a::A;\npub struct C;\n"),
    ]);
    let circles = graph.circles();
    assert_eq!(circles.len(), 1);
    assert_eq!(circles[0].len(), 3);
    assert!(graph.describe(&circles).contains("c.rs -> a.rs: A"));
}

/// The graph of a crate made of `files` (path, text), in a temporary folder.
fn graph_of(files: &[(&str, &str)]) -> Graph {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    Graph::read(dir.path())
}

/// A path in the repository.
fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Modules (files, relative to the crate's source folder) and their imports.
struct Graph {
    /// From a file to the files it imports, each with the names it takes.
    edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

/// One source file as the resolver needs it.
struct Module {
    /// Its file, relative to the source folder.
    file: String,
    /// Its module path from the crate root (empty for the root).
    path: Vec<String>,
    /// Names it re-exports, with the absolute path each comes from.
    reexports: BTreeMap<String, Vec<String>>,
    /// The absolute paths its code names.
    uses: Vec<Vec<String>>,
}

impl Graph {
    /// Reads every `.rs` file under `src` (a crate's source folder).
    fn read(src: &Path) -> Graph {
        let mut files = Vec::new();
        collect_rs(src, src, &mut files);
        let mut modules: Vec<Module> = files
            .iter()
            .map(|f| {
                let path = module_path(f);
                let text = code_only(&fs::read_to_string(src.join(f)).unwrap());
                let children = child_modules(&text);
                let mut uses = Vec::new();
                let mut reexports = BTreeMap::new();
                for (is_pub, tree) in use_statements(&text) {
                    for p in expand_use_tree(&tree) {
                        let Some(abs) = absolute(&path, &children, &p) else {
                            continue;
                        };
                        if is_pub {
                            let name = p.last().cloned().unwrap_or_default();
                            let name = name.split(" as ").last().unwrap_or(&name).trim().to_string();
                            reexports.insert(name, strip_alias(abs.clone()));
                        }
                        // Re-exporting a child's item is a module's interface;
                        // re-exporting anything else depends on it.
                        if !(is_pub && abs.len() > path.len() && abs.starts_with(&path)) {
                            uses.push(strip_alias(abs));
                        }
                    }
                }
                for p in inline_paths(&without_use_statements(&text)) {
                    if let Some(abs) = absolute(&path, &children, &p) {
                        uses.push(abs);
                    }
                }
                Module {
                    file: f.clone(),
                    path,
                    reexports,
                    uses,
                }
            })
            .collect();
        modules.sort_by(|a, b| a.file.cmp(&b.file));
        let by_path: BTreeMap<Vec<String>, usize> =
            modules.iter().enumerate().map(|(i, m)| (m.path.clone(), i)).collect();
        let mut edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
        for m in &modules {
            let entry = edges.entry(m.file.clone()).or_default();
            for u in &m.uses {
                let (target, name) = resolve(&modules, &by_path, u, 0);
                if target != m.file {
                    entry.entry(target).or_default().insert(name);
                }
            }
        }
        Graph { edges }
    }

    /// Every edge as (from, to), sorted.
    fn edge_list(&self) -> Vec<(&str, &str)> {
        self.edges
            .iter()
            .flat_map(|(from, to)| to.keys().map(move |t| (from.as_str(), t.as_str())))
            .collect()
    }

    /// The same graph with each file replaced by its top-level module
    /// (`backend/gpu/device.rs` → `backend`; the crate root files stay).
    fn by_top_module(&self) -> Graph {
        let top = |f: &str| f.split('/').next().unwrap_or(f).trim_end_matches(".rs").to_string();
        let mut edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
        for (from, tos) in &self.edges {
            let entry = edges.entry(top(from)).or_default();
            for (to, names) in tos {
                if top(to) != top(from) && !matches!(top(to).as_str(), "lib") {
                    entry
                        .entry(top(to))
                        .or_default()
                        .extend(names.iter().map(|n| format!("{from} -> {to}: {n}")));
                }
            }
        }
        Graph { edges }
    }

    /// The strongly connected components of more than one file (Tarjan).
    fn circles(&self) -> Vec<BTreeSet<String>> {
        let nodes: Vec<&String> = self.edges.keys().collect();
        let index_of: BTreeMap<&String, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let succ: Vec<Vec<usize>> = nodes
            .iter()
            .map(|n| self.edges[*n].keys().filter_map(|t| index_of.get(t).copied()).collect())
            .collect();
        let mut t = Tarjan {
            succ: &succ,
            index: vec![None; nodes.len()],
            low: vec![0; nodes.len()],
            on_stack: vec![false; nodes.len()],
            stack: Vec::new(),
            next: 0,
            components: Vec::new(),
        };
        for v in 0..nodes.len() {
            if t.index[v].is_none() {
                t.visit(v);
            }
        }
        t.components
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| c.into_iter().map(|i| nodes[i].clone()).collect())
            .collect()
    }

    /// Each circle's files and the edges between them, for messages.
    fn describe(&self, circles: &[BTreeSet<String>]) -> String {
        let mut s = String::new();
        for c in circles {
            s.push_str(&format!("circle of {} files: {:?}\n", c.len(), c));
            for from in c {
                for (to, names) in &self.edges[from] {
                    if c.contains(to) {
                        let names: Vec<&str> = names.iter().map(String::as_str).collect();
                        s.push_str(&format!("  {from} -> {to}: {}\n", names.join(", ")));
                    }
                }
            }
        }
        s
    }
}

/// Follows `path` to the file that defines what it names: the deepest
/// module on it, then that module's re-exports (a few hops at most).
fn resolve(modules: &[Module], by_path: &BTreeMap<Vec<String>, usize>, path: &[String], hops: u32) -> (String, String) {
    let mut depth = path.len();
    while depth > 0 && !by_path.contains_key(&path[..depth]) {
        depth -= 1;
    }
    let m = &modules[by_path[&path[..depth]]];
    let name = path.get(depth).cloned().unwrap_or_else(|| "(module)".into());
    match m.reexports.get(&name) {
        Some(source) if hops < 8 && source != path => resolve(modules, by_path, source, hops + 1),
        _ => (m.file.clone(), name),
    }
}

/// Tarjan's strongly connected components.
struct Tarjan<'a> {
    succ: &'a [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    next: usize,
    components: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, v: usize) {
        self.index[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for &w in &self.succ[v] {
            match self.index[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

/// Every `.rs` file under `dir`, relative to `root`, with `/` separators,
/// but a `main.rs` at the root (a binary is a crate of its own).
fn collect_rs(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_rs(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && path != root.join("main.rs") {
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            out.push(rel);
        }
    }
}

/// The module path of a file: `a/b.rs` and `a/b/mod.rs` → `[a, b]`; the
/// crate roots (`lib.rs`, `main.rs`) → `[]`.
fn module_path(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file.trim_end_matches(".rs").split('/').map(String::from).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The source without comments, string and character literals, and
/// `#[cfg(test)]` items, so that only code is scanned.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            i += 2;
            while i < b.len() && !b[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A character literal ('x' or '\n'); a lifetime has no closing quote.
            i += if b[i + 1] == b'\\' { 4 } else { 3 };
            while i < b.len() && b[i - 1] != b'\'' {
                i += 1;
            }
            out.push_str("' '");
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    match out.find("#[cfg(test)]") {
        Some(at) => out[..at].to_string(),
        None => out,
    }
}

/// The names of the child modules a file declares (`mod x;`, `pub mod x;`).
fn child_modules(code: &str) -> BTreeSet<String> {
    code.split(';')
        .filter_map(|stmt| {
            let words: Vec<&str> = stmt.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "mod")?;
            (at + 2 == words.len()).then(|| words[at + 1].to_string())
        })
        .collect()
}

/// Each `use` statement: whether it is public, and its tree text.
fn use_statements(code: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = find_word(rest, "use") {
        let before = rest[..at].trim_end();
        let is_pub = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        let after = &rest[at + 3..];
        let end = after.find(';').unwrap_or(after.len());
        out.push((is_pub, after[..end].trim().to_string()));
        rest = &after[end..];
    }
    out
}

/// The code with its `use` statements cut out (their paths are read as
/// trees, not as inline paths).
fn without_use_statements(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = find_word(rest, "use") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        rest = &after[after.find(';').map_or(after.len(), |e| e + 1)..];
    }
    out.push_str(rest);
    out
}

/// The byte offset of `word` standing alone in `text`.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(i) = text[from..].find(word) {
        let at = from + i;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        if !before.is_some_and(is_ident) && !after.is_some_and(is_ident) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// `a::{b, c::{d, e}}` → `[a, b]`, `[a, c, d]`, `[a, c, e]` (a path may end
/// in `X as Y`, kept as one segment).
fn expand_use_tree(tree: &str) -> Vec<Vec<String>> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    expand(&[], tree.trim(), &mut out);
    out
}

fn expand(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = tree[..open]
            .split("::")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut base = prefix.to_vec();
        base.extend(head);
        for part in split_top_level(inner) {
            expand(&base, part.trim(), out);
        }
    } else if !tree.is_empty() {
        let mut path = prefix.to_vec();
        path.extend(tree.split("::").map(|s| s.trim().to_string()));
        if path.last().is_some_and(|s| s == "self") {
            path.pop();
        }
        out.push(path);
    }
}

/// Splits at commas outside braces.
fn split_top_level(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut parts) = (0, 0, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// Paths written inline in code: `crate::a::b`, `super::x`, `self::y`.
fn inline_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let len = code[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(code.len() - at);
            let path: Vec<String> = code[at..at + len]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            out.push(path);
        }
    }
    out
}

/// A path as written in module `here` (with child modules `children`),
/// made absolute from the crate root; `None` for other crates.
fn absolute(here: &[String], children: &BTreeSet<String>, path: &[String]) -> Option<Vec<String>> {
    let first = path.first()?.as_str();
    let mut base: Vec<String> = match first {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        "super" => {
            let mut b = here.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                b.pop();
                rest = &rest[1..];
            }
            b.extend(rest.iter().cloned());
            return Some(b);
        }
        name if children.contains(name) => {
            let mut b = here.to_vec();
            b.push(name.to_string());
            b.extend(path[1..].iter().cloned());
            return Some(b);
        }
        _ => return None,
    };
    base.extend(path[1..].iter().cloned());
    Some(base)
}

/// Drops `as Alias` from a path's last segment.
fn strip_alias(mut path: Vec<String>) -> Vec<String> {
    if let Some(last) = path.last_mut()
        && let Some((name, _)) = last.split_once(" as ")
    {
        *last = name.trim().to_string();
    }
    path
}
