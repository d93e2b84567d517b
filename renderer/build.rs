//! Builds `device/` to PTX and embeds it, in the shape of Rust-CUDA's
//! `cuda_builder`: a nested cargo compiles the device crate with rustc's
//! NVPTX back end, once per GPU architecture, and the host binary gets the
//! PTX texts through `include_str!` (see `src/system/ptx.rs`).
//!
//! `WAVEPATH_CUDA_ARCHS` picks the architectures (comma-separated, e.g.
//! `sm_80,sm_90`; default [`DEFAULT_ARCHS`]), or `none`: no PTX, an empty
//! table, a binary whose GPU back ends refuse to open (saying how to
//! rebuild) and whose `--backend auto` renders on the CPU. The device code
//! must not call out of its module: a PTX with an `.extern .func` would
//! fail to load, so the build fails on one.
//!
//! The cost: each architecture is a nested build of `core` and the device
//! crate, about 32 s of CPU (7 s `core`, 25 s the device crate), a third of
//! a from-scratch build with the five defaults. So `scripts/run` builds
//! only what the machine can run: the PTX for its GPUs (as `nvidia-smi`
//! lists them) or, without one, none; `cargo build`, `cargo test`,
//! `scripts/test` and `scripts/gpu-pack` build what they name or the
//! default. Each architecture has its own nested target folder under
//! `OUT_DIR`, so switching back to a set built before recompiles nothing
//! there.
//!
//! `WAVEPATH_PTX_LINE_INFO=1` keeps line information in the PTX (`.file`
//! and `.loc`, from the device crate's line tables) for Nsight Compute's
//! source view; the PTX is otherwise the same. ptxas cannot parse the DWARF
//! sections LLVM writes beside them, so those are cut off. The driver's JIT
//! drops line information unless asked to keep it, which wavepath asks
//! through an outside ptxas (`WAVEPATH_PTXAS`, `src/system/ptx.rs`).
//!
//! This script reruns when the device crate, the toolchain or the
//! workspace's manifest change (the binary's commit and source fingerprint
//! are stamped by the `wavepath` crate's own `build.rs`, so that an edit
//! above the renderer rebuilds nothing here).

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Turing through Hopper. The driver JIT-compiles the newest PTX not newer
/// than the device, so later GPUs run the sm_90 PTX.
const DEFAULT_ARCHS: &str = "sm_75,sm_80,sm_86,sm_89,sm_90";

fn main() {
    if let Err(e) = run() {
        eprintln!("error: building the device crate to PTX failed: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?);
    let workspace = manifest_dir
        .parent()
        .ok_or("the renderer crate has no parent folder")?
        .to_path_buf();
    let out_dir = PathBuf::from(env::var("OUT_DIR").map_err(|e| e.to_string())?);
    println!("cargo:rerun-if-env-changed=WAVEPATH_CUDA_ARCHS");
    println!("cargo:rerun-if-env-changed=WAVEPATH_PTX_LINE_INFO");
    for input in ["device", "Cargo.toml", "Cargo.lock", "rust-toolchain.toml"] {
        println!("cargo:rerun-if-changed={}", workspace.join(input).display());
    }

    let archs = parse_archs(&env::var("WAVEPATH_CUDA_ARCHS").unwrap_or_else(|_| DEFAULT_ARCHS.to_string()))?;
    let line_info = match env::var("WAVEPATH_PTX_LINE_INFO").as_deref() {
        Err(_) | Ok("" | "0") => false,
        Ok("1") => true,
        Ok(other) => return Err(format!("WAVEPATH_PTX_LINE_INFO: `{other}` is neither 0 nor 1")),
    };
    let builds: Vec<_> = archs
        .iter()
        .map(|&cc| {
            let (workspace, out_dir) = (workspace.clone(), out_dir.clone());
            std::thread::spawn(move || build_ptx(&workspace, &out_dir, cc, line_info))
        })
        .collect();
    let mut table = String::from(
        "/// Embedded PTX, one module per compute capability, ascending (none when\n\
         /// built with `WAVEPATH_CUDA_ARCHS=none`).\n",
    );
    table.push_str("pub const PTX_MODULES: &[(u32, &str)] = &[\n");
    for (build, cc) in builds.into_iter().zip(&archs) {
        let path = build
            .join()
            .map_err(|_| format!("the sm_{cc} build thread panicked"))??;
        writeln!(table, "    ({cc}, include_str!({:?})),", path.display().to_string()).unwrap();
    }
    table.push_str("];\n");
    fs::write(out_dir.join("ptx_modules.rs"), table).map_err(|e| e.to_string())
}

/// `"sm_75, sm_90"` → `[75, 90]`, sorted and de-duplicated; `"none"` → `[]`.
fn parse_archs(list: &str) -> Result<Vec<u32>, String> {
    if list.trim() == "none" {
        return Ok(Vec::new());
    }
    let mut ccs = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let cc = item
            .strip_prefix("sm_")
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|&n| n >= 50)
            .ok_or_else(|| {
                format!("WAVEPATH_CUDA_ARCHS: `{item}` is not an architecture like `sm_90` (or `none` alone)")
            })?;
        ccs.push(cc);
    }
    ccs.sort_unstable();
    ccs.dedup();
    if ccs.is_empty() {
        return Err("WAVEPATH_CUDA_ARCHS names no architecture (`none` builds no PTX)".into());
    }
    Ok(ccs)
}

/// Compiles the device crate for `sm_{cc}` (with line information when
/// `line_info`) and returns the path of its PTX.
fn build_ptx(workspace: &Path, out_dir: &Path, cc: u32, line_info: bool) -> Result<PathBuf, String> {
    let lines = if line_info { "-lines" } else { "" };
    let target_dir = out_dir.join(format!("device-target/sm_{cc}{lines}"));
    let asm = target_dir.join(format!("kernels_sm_{cc}.ptx"));
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let flags = [
        format!("-Ctarget-cpu=sm_{cc}"),
        "-Zunstable-options".into(),
        // No unwinding on the GPU: a panic (e.g. a bounds check) becomes
        // `trap`, not a call to an external `core::panicking` function.
        "-Cpanic=immediate-abort".into(),
    ];
    let output = Command::new(cargo)
        .current_dir(workspace)
        .args(["rustc", "--release", "-p", "device", "--target", "nvptx64-nvidia-cuda"])
        .args(["-Zbuild-std=core", "--target-dir"])
        .arg(&target_dir)
        .arg("--")
        .arg(format!("--emit=asm={}", asm.display()))
        .env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"))
        // Line tables only, or nothing: ptxas cannot parse the DWARF
        // sections of fuller debug information.
        .env(
            "CARGO_PROFILE_RELEASE_DEBUG",
            if line_info { "line-tables-only" } else { "false" },
        )
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "sm_{cc}: nested cargo failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    // NOTE: cargo skips the compile when the crate is fresh, so the file
    // from the last real build must stay where it is.
    let ptx = fs::read_to_string(&asm).map_err(|e| {
        format!(
            "sm_{cc}: cannot read {} ({e}); `cargo clean` forces a rebuild",
            asm.display()
        )
    })?;
    let ptx = if line_info { without_dwarf(&ptx, cc)? } else { ptx };
    if let Some(line) = ptx.lines().find(|l| l.contains(".extern .func")) {
        return Err(format!(
            "sm_{cc}: the PTX calls an external function, which cannot load: `{}`",
            line.trim()
        ));
    }
    if !ptx.contains(".entry") {
        return Err(format!("sm_{cc}: the PTX holds no kernel entry point"));
    }
    let dest = out_dir.join(format!("kernels_sm_{cc}{lines}.ptx"));
    fs::write(&dest, ptx).map_err(|e| e.to_string())?;
    Ok(dest)
}

/// `ptx` with its line tables (`.file`, `.loc`) and without the DWARF
/// sections LLVM writes after the code, which ptxas cannot parse; its
/// target no longer says `debug`, which asks for them.
fn without_dwarf(ptx: &str, cc: u32) -> Result<String, String> {
    let end = ptx.find("\t.section\t.debug_").unwrap_or(ptx.len());
    let target = format!(".target sm_{cc}");
    let code = &ptx[..end];
    if !code.contains(&format!("{target}, debug")) {
        return Err(format!(
            "sm_{cc}: the PTX with line information has no `{target}, debug` line"
        ));
    }
    Ok(code.replacen(&format!("{target}, debug"), &target, 1))
}
