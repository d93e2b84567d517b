//! The PTX modules that the renderer's `build.rs` compiled from `device/` and embedded
//! (`backend::gpu::device::choose_ptx` picks the one a GPU loads; none in a
//! binary built with `WAVEPATH_CUDA_ARCHS=none`, whose GPU back ends refuse
//! to open).

use device::bound::Arithmetic;
use device::features::{Features, SENTINEL_TEXT};
use std::path::{Path, PathBuf};
use std::process::Command;

include!(concat!(env!("OUT_DIR"), "/ptx_modules.rs"));

/// The fewest registers per thread a cap may set (below this, `ptxas`
/// spills nearly everything).
pub const MIN_REGISTER_CAP: u32 = 16;
/// The most registers per thread a thread may use on any supported GPU.
pub const MAX_REGISTER_CAP: u32 = 255;

/// `ptx` with every kernel entry capped at `registers` per thread: a
/// `.maxnreg` directive after each entry's parameter list, which `ptxas`
/// honours when the driver JIT-compiles the module (spilling what does not
/// fit to local memory).
pub fn with_register_cap(ptx: &str, registers: u32) -> String {
    let mut out = String::with_capacity(ptx.len() + 64);
    let mut in_entry_params = false;
    for line in ptx.lines() {
        out.push_str(line);
        out.push('\n');
        if line.contains(".entry ") {
            in_entry_params = true;
        } else if in_entry_params && line.trim() == ")" {
            out.push_str(&format!(".maxnreg {registers}\n"));
            in_entry_params = false;
        }
    }
    out
}

/// The IEEE-strict instructions the fast arithmetic replaces, and what
/// with: division to within 2 ulp over the whole range (`div.full`), the
/// multi-function unit's square root and reciprocal. rustc writes every
/// `f32` division, square root and reciprocal of the device crate as the
/// first of each pair; nothing else in the PTX spells them.
pub const FAST_INSTRUCTIONS: [(&str, &str); 3] = [
    ("div.rn.f32", "div.full.f32"),
    ("sqrt.rn.f32", "sqrt.approx.f32"),
    ("rcp.rn.f32", "rcp.approx.f32"),
];

/// `ptx` (one kernel's module) with `features` and `arithmetic` bound:
/// every read of the kernel's bound word ([`device::features::SENTINEL_TEXT`])
/// replaced by the set and the arithmetic's bit, so that the driver's
/// compiler removes the code of the features left out and of the other
/// arithmetic; under [`Arithmetic::Fast`] the strict division, square root
/// and reciprocal are also replaced ([`FAST_INSTRUCTIONS`]). Also returns
/// the set bound: `None` for a kernel that reads no features, which is
/// bound to the arithmetic alone. An error for a kernel that reads its
/// features when none are given.
pub fn with_features(
    ptx: &str,
    features: Option<Features>,
    arithmetic: Arithmetic,
) -> Result<(String, Option<Features>), String> {
    let ptx = match arithmetic {
        Arithmetic::Exact => ptx.to_string(),
        Arithmetic::Fast => FAST_INSTRUCTIONS
            .iter()
            .fold(ptx.to_string(), |text, (strict, fast)| text.replace(strict, fast)),
    };
    if !ptx.contains(SENTINEL_TEXT) {
        return Ok((ptx, None));
    }
    let features = features.ok_or("it reads the features it holds, and none were bound")?;
    let word = features.bits() | arithmetic.bits();
    Ok((ptx.replace(SENTINEL_TEXT, &format!("0x{word:08X}")), Some(features)))
}

/// The largest file `WAVEPATH_PTX` may name: many times an embedded
/// module (about 10 MB, more with line information), so that a wrong path
/// (a log, a core dump) is refused rather than read whole.
pub const MAX_PTX_FILE_BYTES: u64 = 256 << 20;

/// The architecture that the `.target sm_NN` line of the PTX module
/// `text` gives, after checking that it holds no NUL byte (the driver
/// takes a module as a C string); what is wrong otherwise. For a module
/// from outside the binary (`WAVEPATH_PTX`).
pub fn module_arch(text: &str) -> Result<u32, String> {
    if let Some(at) = text.find('\0') {
        return Err(format!("holds a NUL byte (at offset {at}); a PTX module is text"));
    }
    text.lines()
        .find_map(|l| l.trim().strip_prefix(".target sm_"))
        .and_then(|rest| rest.split([',', ' ']).next())
        .and_then(|n| n.parse::<u32>().ok())
        .ok_or_else(|| "no `.target sm_NN` line".into())
}

/// How messages name a PTX module of `sm_{arch}`: the file `WAVEPATH_PTX`
/// named, where it came from one, or else the embedded module.
pub fn module_name(arch: u32, file: Option<&Path>) -> String {
    match file {
        Some(file) => format!("the sm_{arch} PTX of WAVEPATH_PTX={}", file.display()),
        None => format!("the embedded sm_{arch} PTX"),
    }
}

/// The ptxas that `WAVEPATH_PTXAS` names, if it names one: the GPU back
/// ends then assemble each kernel's module with it, keeping line
/// information (`-lineinfo`), and load the machine code, instead of
/// leaving the PTX to the driver's JIT, which drops line information.
/// For Nsight Compute's source view of a binary built with
/// `WAVEPATH_PTX_LINE_INFO=1` (docs/results.md); the code is the same.
pub fn outside_assembler() -> Option<PathBuf> {
    std::env::var_os("WAVEPATH_PTXAS")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// `ptx` assembled for `sm_{arch}` by `ptxas`, with line information: the
/// machine code (a cubin) the driver loads as it is.
pub fn assemble(ptxas: &Path, ptx: &str, arch: u32) -> Result<Vec<u8>, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("a folder for ptxas: {e}"))?;
    let (source, cubin) = (dir.path().join("kernel.ptx"), dir.path().join("kernel.cubin"));
    std::fs::write(&source, ptx).map_err(|e| format!("writing {}: {e}", source.display()))?;
    let output = Command::new(ptxas)
        .arg(format!("-arch=sm_{arch}"))
        .arg("-lineinfo")
        .arg(&source)
        .arg("-o")
        .arg(&cubin)
        .output()
        .map_err(|e| format!("running WAVEPATH_PTXAS={}: {e}", ptxas.display()))?;
    if !output.status.success() {
        return Err(format!(
            "WAVEPATH_PTXAS={} failed ({}): {}",
            ptxas.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    std::fs::read(&cubin).map_err(|e| format!("reading {}: {e}", cubin.display()))
}

/// `ptx` with one kernel entry point, `entry`, and every other entry's
/// definition left out (`None` if it holds no such entry). Functions,
/// globals and the header stay: the driver compiles only what is loaded,
/// so a module per kernel costs the driver's JIT seconds where the whole
/// module (every kernel of every build) cost one to three minutes, per
/// register cap, on a machine that has not cached it yet.
pub fn entry_module(ptx: &str, entry: &str) -> Option<String> {
    let mut out = String::with_capacity(ptx.len() / 8);
    let mut found = false;
    let mut skipping = false;
    for line in ptx.lines() {
        if let Some(name) = entry_name(line) {
            skipping = name != entry;
            found |= !skipping;
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        } else if line == "}" {
            // LLVM closes each function body with a brace in column 0;
            // blocks inside it are indented.
            skipping = false;
        }
    }
    found.then_some(out)
}

/// The name of the entry point whose definition starts on `line`.
fn entry_name(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix(".visible .entry ")
        .or_else(|| line.strip_prefix(".entry "))?;
    rest.split(['(', ' ']).next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outside_ptxas_assembles_a_module_or_says_why_not() {
        let module = ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
        let missing = assemble(Path::new("/nonexistent/ptxas"), module, 90).unwrap_err();
        assert!(missing.contains("WAVEPATH_PTXAS=/nonexistent/ptxas"), "{missing}");
        // Where CI installed ptxas (scripts/setup --ptxas), it really runs.
        let Some(ptxas) = std::env::var_os("PTXAS") else { return };
        let cubin = assemble(Path::new(&ptxas), module, 90).unwrap();
        assert_eq!(&cubin[..4], b"\x7fELF");
        let broken = assemble(Path::new(&ptxas), ".version 7.8\n.target sm_90\nnonsense\n", 90).unwrap_err();
        assert!(broken.contains("failed"), "{broken}");
    }

    #[test]
    fn an_entry_module_keeps_its_entry_the_functions_and_the_globals_only() {
        let ptx = ".version 8.7\n.global .align 4 .b8 table[4] = {1, 2, 3, 4};\n\
                   .visible .entry a(\n\t.param .u32 a_param_0\n)\n{\n\t{ .reg .pred p; }\n\tret;\n}\n\
                   .func f()\n{\n\tret;\n}\n\
                   .visible .entry b(\n)\n{\n\tcall f;\n\tret;\n}\n";
        assert_eq!(
            entry_module(ptx, "b").unwrap(),
            ".version 8.7\n.global .align 4 .b8 table[4] = {1, 2, 3, 4};\n\
             .func f()\n{\n\tret;\n}\n\
             .visible .entry b(\n)\n{\n\tcall f;\n\tret;\n}\n"
        );
        assert_eq!(
            entry_module(ptx, "a").unwrap(),
            ".version 8.7\n.global .align 4 .b8 table[4] = {1, 2, 3, 4};\n\
             .visible .entry a(\n\t.param .u32 a_param_0\n)\n{\n\t{ .reg .pred p; }\n\tret;\n}\n\
             .func f()\n{\n\tret;\n}\n"
        );
        assert_eq!(entry_module(ptx, "c"), None);
        // A prefix of a name is not the name.
        assert_eq!(entry_module(ptx, ""), None);
    }

    #[test]
    fn the_embedded_module_splits_into_one_module_per_entry_point() {
        let (_, text) = PTX_MODULES[PTX_MODULES.len() - 1];
        let mut lengths = Vec::new();
        for name in device::kernels::all_entry_points() {
            let module = entry_module(text, name).unwrap_or_else(|| panic!("no entry {name}"));
            assert_eq!(module.matches(".entry ").count(), 1, "{name}");
            assert!(module.contains(&format!(".entry {name}(")), "{name}");
            assert_eq!(
                module.matches(".func ").count(),
                text.matches(".func ").count(),
                "{name}"
            );
            lengths.push(module.len());
        }
        // Each module is the shared part plus one entry, and the whole is
        // the shared part plus every entry: nothing lost, nothing doubled.
        let n = lengths.len();
        let surplus = lengths.iter().sum::<usize>() - text.len();
        assert_eq!(surplus % (n - 1), 0);
        let shared = surplus / (n - 1);
        assert!(lengths.iter().all(|&l| l > shared));
        assert!(shared < text.len() / 10, "{shared} of {}", text.len());
    }

    #[test]
    fn the_fast_arithmetic_binds_its_bit_and_the_approximate_instructions() {
        let ptx = format!(
            ".entry k()\n{{\n\tmov.u32 %r1, {SENTINEL_TEXT};\n\tdiv.rn.f32 %f3, %f1, %f2;\n\
             \tsqrt.rn.f32 %f4, %f3;\n\trcp.rn.f32 %f5, %f4;\n\tmul.rn.f32 %f6, %f5, %f5;\n}}\n"
        );
        let features = Features::NONE.with(device::features::Feature::Nee);
        let (exact, _) = with_features(&ptx, Some(features), Arithmetic::Exact).unwrap();
        assert_eq!(exact, ptx.replace(SENTINEL_TEXT, &format!("0x{:08X}", features.bits())));
        let (fast, bound) = with_features(&ptx, Some(features), Arithmetic::Fast).unwrap();
        assert_eq!(bound, Some(features));
        assert_eq!(
            fast,
            format!(
                ".entry k()\n{{\n\tmov.u32 %r1, 0x{:08X};\n\tdiv.full.f32 %f3, %f1, %f2;\n\
                 \tsqrt.approx.f32 %f4, %f3;\n\trcp.approx.f32 %f5, %f4;\n\tmul.rn.f32 %f6, %f5, %f5;\n}}\n",
                features.bits() | device::bound::FAST_ARITHMETIC
            )
        );
        // A kernel that reads no features is bound to the arithmetic alone.
        let plain = ".entry k()\n{\n\tdiv.rn.f32 %f3, %f1, %f2;\n}\n";
        let (fast, bound) = with_features(plain, None, Arithmetic::Fast).unwrap();
        assert_eq!(
            (fast.as_str(), bound),
            (".entry k()\n{\n\tdiv.full.f32 %f3, %f1, %f2;\n}\n", None)
        );
        // Bound under both, a kernel's feature read still sees its set.
        let word = features.bits() | Arithmetic::Fast.bits();
        assert_eq!(Features::ALL.bits() & word, features.bits());
    }

    #[test]
    fn a_register_cap_follows_every_entry_parameter_list() {
        let ptx = ".visible .entry a(\n\t.param .u32 a_param_0\n)\n{\n\tret;\n}\n.func (.reg .b32 r) f(\n)\n{\n}\n";
        let capped = with_register_cap(ptx, 64);
        assert_eq!(
            capped,
            ".visible .entry a(\n\t.param .u32 a_param_0\n)\n.maxnreg 64\n{\n\tret;\n}\n.func (.reg .b32 r) f(\n)\n{\n}\n"
        );
        // The embedded modules: one directive per entry point.
        let (_, text) = PTX_MODULES[PTX_MODULES.len() - 1];
        let capped = with_register_cap(text, 96);
        assert_eq!(capped.matches(".maxnreg 96").count(), text.matches(".entry ").count());
        assert_eq!(
            text.matches(".entry ").count(),
            device::kernels::all_entry_points().count()
        );
    }

    #[test]
    fn an_outside_module_is_text_with_a_target_line() {
        assert_eq!(module_arch(".version 8.7\n.target sm_90\n.entry k()\n{\n}\n"), Ok(90));
        assert_eq!(module_arch(".target sm_86, debug\n"), Ok(86));
        let nul = module_arch(".version 8.7\n.target sm_90\n.entry k()\0\n").unwrap_err();
        assert!(nul.starts_with("holds a NUL byte (at offset 37)"), "{nul}");
        assert_eq!(module_arch(".version 8.7\n").unwrap_err(), "no `.target sm_NN` line");
        // Every embedded module is well within the limit on such a file.
        for (arch, text) in PTX_MODULES {
            assert!(
                (text.len() as u64) < MAX_PTX_FILE_BYTES / 4,
                "sm_{arch}: {} bytes",
                text.len()
            );
            assert_eq!(module_arch(text), Ok(*arch));
        }
    }

    #[test]
    fn a_module_is_named_by_its_file_where_it_came_from_one() {
        assert_eq!(module_name(90, None), "the embedded sm_90 PTX");
        assert_eq!(
            module_name(90, Some(Path::new("probe.ptx"))),
            "the sm_90 PTX of WAVEPATH_PTX=probe.ptx"
        );
    }
}
