//! Where a kernel's instructions go, by part of a path (`wavepath
//! profile-parts`): Nsight Compute's per-instruction counters of one kernel
//! (`ncu -i REPORT --page source --csv --print-source sass`) placed by the
//! line table of the same machine code (`nvdisasm -g`), each instruction
//! in the part its source line's module is.
//!
//! The parts are the device crate's modules, derived from the source
//! file's path under `device/src/` (`accel/bvh.rs` is `accel::bvh`,
//! `material/mod.rs` is `material`), cut to the first `depth` steps of the
//! module tree (depth 1: `accel`, `material`, `kernels`), so that every
//! module of the megakernel and the wavefront (`kernels::wave_kernels`,
//! `kernels::scan`, `queue`, `schedule`, ...) is a part of its own without
//! a list to keep. The inlined helpers ([`HELPER_MODULES`]) and code
//! outside the device crate (the core library) carry no part of their
//! own: their instructions go to the part of the nearest instruction
//! before them that has one, which is the caller in straight-line code.

use anyhow::bail;
use indexmap::IndexMap;
use renderer::io::input_file;
use std::collections::HashMap;
use std::path::Path;

/// The device crate's modules of inlined helpers, which carry no part of
/// their own (their instructions count to their caller's part).
pub const HELPER_MODULES: [&str; 5] = ["math", "slice", "bound", "features", "observe"];

/// The part of the instructions before the first that has one.
pub const NO_PART_YET: &str = "(entry, before any part)";

/// The most bytes read of either input: 64 MiB, far above a kernel's
/// source page or disassembly (a few MB for the megakernel).
const MAX_INPUT_BYTES: u64 = 64 << 20;

/// The columns of Nsight Compute's source page that are read.
const ADDRESS: &str = "Address";
/// Warp instructions executed.
const WARP: &str = "Instructions Executed";
/// Thread instructions executed.
const THREAD: &str = "Thread Instructions Executed";
/// How the counters are exported, for messages.
const SOURCE_PAGE: &str = "ncu -i REPORT --page source --csv --print-source sass";

/// The module of a device source file, cut to `depth` steps (`accel::bvh`
/// at depth 2), or `None` for a helper module or a file outside
/// `device/src/`.
pub fn module_part(source: &str, depth: usize) -> Option<String> {
    let (_, rel) = source.split_once("/device/src/")?;
    let rel = rel.strip_suffix(".rs")?;
    let mut steps: Vec<&str> = rel.split('/').collect();
    if matches!(steps.last(), Some(&"mod") | Some(&"lib")) {
        steps.pop();
    }
    if steps.is_empty() {
        return Some("(crate root)".into());
    }
    if HELPER_MODULES.contains(&steps[0]) {
        return None;
    }
    steps.truncate(depth.max(1));
    Some(steps.join("::"))
}

/// Each instruction's source file, by its offset in the kernel, from
/// `nvdisasm -g` output.
fn line_table(path: &Path) -> anyhow::Result<HashMap<u64, String>> {
    let text = read_lossy(path, "nvdisasm -g output")?;
    let mut table = HashMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(file) = source_file(line) {
            current = Some(file.to_string());
        } else if let (Some(offset), Some(file)) = (instruction_offset(line), &current) {
            table.insert(offset, file.clone());
        }
    }
    if table.is_empty() {
        bail!(
            "{}: no line information; expected nvdisasm -g of a cubin with -lineinfo",
            path.display()
        );
    }
    Ok(table)
}

/// The file of a line-table line: `//## File "PATH", line N`.
fn source_file(line: &str) -> Option<&str> {
    let (_, rest) = line.split_once("//## File \"")?;
    let (file, rest) = rest.split_once('"')?;
    let number = rest.strip_prefix(", line ")?;
    number.starts_with(|c: char| c.is_ascii_digit()).then_some(file)
}

/// The offset of an instruction line: `/*0a10*/` (four or more lowercase
/// hexadecimal digits).
fn instruction_offset(line: &str) -> Option<u64> {
    line.match_indices("/*").find_map(|(at, _)| {
        let rest = &line[at + 2..];
        let digits = rest
            .find(|c: char| !matches!(c, '0'..='9' | 'a'..='f'))
            .unwrap_or(rest.len());
        (digits >= 4 && rest[digits..].starts_with("*/")).then(|| u64::from_str_radix(&rest[..digits], 16).ok())?
    })
}

/// The file `path` as text, bytes that are not UTF-8 replaced.
fn read_lossy(path: &Path, expected: &str) -> anyhow::Result<String> {
    let bytes = input_file::read_limited(path, MAX_INPUT_BYTES)
        .map_err(|e| anyhow::anyhow!("{}: {e}; expected {expected}", path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// One instruction's counters.
struct Executed {
    /// Its offset from the kernel's first instruction.
    offset: u64,
    /// Warp instructions executed.
    warp: u64,
    /// Thread instructions executed.
    thread: u64,
}

/// A counter's cell: empty for none, else a whole number.
fn count(text: &str, at: &str, column: &str) -> anyhow::Result<u64> {
    if text.is_empty() {
        return Ok(0);
    }
    match text.parse::<u64>() {
        Ok(n) if text.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => bail!("{at}: {column} is `{text}`; expected a whole number (or nothing)"),
    }
}

/// The counters of every instruction row of the source page `path`, in
/// address order, their offsets from the lowest address.
fn counters(path: &Path) -> anyhow::Result<Vec<Executed>> {
    let expected = format!("the CSV of `{SOURCE_PAGE}`");
    let text = read_lossy(path, &expected)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut columns: Option<(usize, usize)> = None;
    let mut out = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| anyhow::anyhow!("{}: {e}; expected {expected}", path.display()))?;
        let at = format!("{}:{}", path.display(), record.position().map_or(0, |p| p.line()));
        let Some((warp, thread)) = columns else {
            if record.get(0) == Some(ADDRESS) {
                let find = |name: &str| record.iter().position(|c| c == name);
                let missing: Vec<&str> = [WARP, THREAD].into_iter().filter(|c| find(c).is_none()).collect();
                if !missing.is_empty() {
                    bail!("{at}: no column {}; expected {expected}", missing.join(", "));
                }
                columns = find(WARP).zip(find(THREAD));
            }
            continue;
        };
        let address = record.get(0).unwrap_or("");
        if record.len() <= warp.max(thread) || !address.starts_with("0x") {
            continue;
        }
        let Ok(offset) = u64::from_str_radix(&address[2..], 16) else {
            bail!("{at}: {ADDRESS} is `{address}`; expected a hexadecimal address");
        };
        out.push(Executed {
            offset,
            warp: count(&record[warp], &at, WARP)?,
            thread: count(&record[thread], &at, THREAD)?,
        });
    }
    if columns.is_none() {
        bail!(
            "{}: no header row starting with `{ADDRESS}`; expected {expected}",
            path.display()
        );
    }
    let Some(base) = out.iter().map(|e| e.offset).min() else {
        bail!(
            "{}: no instruction rows (an address 0x... with its counters); expected {expected}",
            path.display()
        );
    };
    out.sort_by_key(|e| e.offset);
    for e in &mut out {
        e.offset -= base;
    }
    Ok(out)
}

/// A kernel's instructions by part: each part's warp and thread
/// instructions, and the instructions without a line in the disassembly.
pub struct PathParts {
    /// Warp and thread instructions per part, in the order first met.
    pub parts: IndexMap<String, (u64, u64)>,
    /// Instructions the disassembly has no line for.
    pub unmatched: usize,
}

impl PathParts {
    /// Places the counters of `source_page` (Nsight Compute's CSV) by the
    /// line table of `disassembly` (nvdisasm -g), at module `depth`.
    pub fn read(source_page: &Path, disassembly: &Path, depth: usize) -> anyhow::Result<PathParts> {
        let table = line_table(disassembly)?;
        let executed = counters(source_page)?;
        let mut parts: IndexMap<String, (u64, u64)> = IndexMap::new();
        let mut part = NO_PART_YET.to_string();
        let mut unmatched = 0;
        for e in executed {
            match table.get(&e.offset) {
                None => unmatched += 1,
                Some(file) => {
                    if let Some(own) = module_part(file, depth) {
                        part = own;
                    }
                }
            }
            let sums = parts.entry(part.clone()).or_default();
            sums.0 += e.warp;
            sums.1 += e.thread;
        }
        Ok(PathParts { parts, unmatched })
    }

    /// The Markdown table: per part, the warp instructions (millions),
    /// their share and the active lanes per warp instruction, the largest
    /// first; under a line of the totals when `title` is given.
    pub fn table(&self, title: Option<&str>) -> String {
        let total: u64 = self.parts.values().map(|(w, _)| w).sum();
        let threads: u64 = self.parts.values().map(|(_, t)| t).sum();
        let mut out = String::new();
        if let Some(title) = title {
            out += &format!(
                "**{title}**: {:.3} G warp instructions, {:.1} active lanes of 32\n\n",
                total as f64 / 1e9,
                threads as f64 / total.max(1) as f64
            );
        }
        out += "| part of a path | warp instructions (M) | share | active lanes |\n|---|---|---|---|\n";
        let mut rows: Vec<(&String, &(u64, u64))> = self.parts.iter().collect();
        rows.sort_by_key(|(_, (warp, _))| std::cmp::Reverse(*warp));
        for (name, (w, t)) in rows {
            out += &format!(
                "| {name} | {:.1} | {:.1} % | {:.1} |\n",
                *w as f64 / 1e6,
                100.0 * *w as f64 / total.max(1) as f64,
                *t as f64 / (*w).max(1) as f64
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_file_is_its_module_cut_to_the_depth() {
        for (file, depth, part) in [
            ("/w/device/src/accel/bvh.rs", 2, Some("accel::bvh")),
            ("/w/device/src/accel/bvh.rs", 1, Some("accel")),
            ("/w/device/src/material/mod.rs", 2, Some("material")),
            (
                "/w/device/src/kernels/wave_kernels.rs",
                2,
                Some("kernels::wave_kernels"),
            ),
            ("/w/device/src/queue.rs", 2, Some("queue")),
            ("/w/device/src/math/vec3.rs", 2, None),
            ("/w/device/src/slice.rs", 2, None),
            ("/rustc/abc/library/core/src/ptr/mod.rs", 2, None),
        ] {
            assert_eq!(module_part(file, depth).as_deref(), part, "{file} at depth {depth}");
        }
    }

    #[test]
    fn every_helper_module_is_one_of_the_device_crate() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../device/src");
        for helper in HELPER_MODULES {
            let file = src.join(format!("{helper}.rs"));
            let folder = src.join(helper).join("mod.rs");
            assert!(file.is_file() || folder.is_file(), "device/src has no module {helper}");
        }
    }

    #[test]
    fn offsets_and_files_are_read_from_the_disassembly_lines() {
        assert_eq!(
            instruction_offset("        /*0a10*/   MOV R1, c[0x0][0x28] ;"),
            Some(0xa10)
        );
        assert_eq!(instruction_offset("  /*0a1*/ MOV"), None);
        assert_eq!(instruction_offset("  /* 0a10 */ MOV"), None);
        assert_eq!(
            source_file("  //## File \"/w/device/src/rng.rs\", line 12"),
            Some("/w/device/src/rng.rs")
        );
        assert_eq!(source_file("  //## File \"/w/x.rs\", inlined"), None);
    }
}
