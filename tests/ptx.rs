//! The embedded PTX: a real kernel entry point, no external calls, and it
//! assembles with `ptxas` for every architecture it was built for, whole
//! and one kernel at a time (as the GPU back ends load it).
//!
//! `ptxas` comes from PyPI's `nvidia-cuda-nvcc` (see `.ci/run`). The test
//! finds it through `$PTXAS` or `PATH`; without it, it fails under CI and is
//! skipped (saying so) elsewhere.

mod util;

use device::features::Features;
use device::kernel::EntryPoint;
use device::kernels::fault::FaultTrap;
use device::kernels::{AccelKernels, AccelVisitor, all_entry_points, visit_accel};
use device::scene::RenderView;
use renderer::render::{Overrides, load_scene, params_for};
use renderer::settings::arithmetic::Arithmetic;
use renderer::settings::nee::NeeMode;
use renderer::system::ptx::{FAST_INSTRUCTIONS, PTX_MODULES, entry_module, with_features};
use std::path::{Path, PathBuf};
use std::process::Command;
use util::{render_features, repo};

#[test]
fn every_module_has_every_kernel_and_no_extern_functions() {
    assert!(!PTX_MODULES.is_empty());
    for (cc, ptx) in PTX_MODULES {
        assert!(ptx.contains(&format!(".target sm_{cc}")), "sm_{cc}: wrong target");
        for kernel in all_entry_points() {
            assert!(ptx.contains(&format!(".entry {kernel}(")), "sm_{cc}: no {kernel} entry");
        }
        assert!(!ptx.contains(".extern .func"), "sm_{cc}: calls an external function");
        // Strict IEEE float semantics keep CPU and GPU bit-identical: no
        // approximate instructions but the fast arithmetic's four (behind
        // its bound bit, which an exact kernel folds away), no
        // flush-to-zero, and every multiply-add the correctly rounded
        // `fma.rn` that the device code's explicit `scalar::fma` becomes
        // (never `mad`, nor another rounding).
        for line in ptx.lines().filter(|l| l.contains(".approx")) {
            let op = line.split_whitespace().next().unwrap_or_default();
            assert!(
                ["sin.approx.f32", "cos.approx.f32", "ex2.approx.f32", "lg2.approx.f32"].contains(&op),
                "sm_{cc}: approximate math outside the fast arithmetic: `{}`",
                line.trim()
            );
        }
        assert!(!ptx.contains(".ftz"), "sm_{cc}: flush-to-zero in the PTX");
        assert!(
            !ptx.contains("mad.f32") && !ptx.contains("mad.rn.f32"),
            "sm_{cc}: mad in the PTX"
        );
        for line in ptx.lines().filter(|l| l.contains("fma.")) {
            assert!(
                line.trim_start().starts_with("fma.rn.f32"),
                "sm_{cc}: `{}`",
                line.trim()
            );
        }
        assert!(
            ptx.contains("fma.rn.f32"),
            "sm_{cc}: the explicit fused multiply-adds are missing"
        );
    }
}

/// `ptxas`, from `$PTXAS` or `PATH`; `None` (having said so) where there is
/// none, which CI does not allow.
fn ptxas_or_skip() -> Option<PathBuf> {
    let found = match std::env::var_os("PTXAS") {
        Some(p) => Some(PathBuf::from(p)),
        None => {
            let ok = Command::new("ptxas")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success());
            ok.then(|| PathBuf::from("ptxas"))
        }
    };
    if found.is_none() {
        assert!(std::env::var_os("CI").is_none(), "CI must provide ptxas (set PTXAS)");
        eprintln!("SKIPPED: ptxas not found (set PTXAS or install nvidia-cuda-nvcc from PyPI)");
    }
    found
}

/// Assembles `ptx` for `sm_{cc}` as `name` in `dir` with `ptxas -v`:
/// whether it succeeded, and its log.
fn assemble(ptxas: &Path, dir: &Path, name: &str, cc: u32, ptx: &str) -> (bool, String) {
    let src = dir.join(format!("{name}.ptx"));
    std::fs::write(&src, ptx).unwrap();
    let out = Command::new(ptxas)
        .arg(format!("-arch=sm_{cc}"))
        .arg("-v")
        .arg(&src)
        .arg("-o")
        .arg(dir.join(format!("{name}.cubin")))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", ptxas.display()));
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn ptx_assembles_for_every_architecture() {
    let Some(ptxas) = ptxas_or_skip() else { return };
    let dir = tempfile::tempdir().unwrap();
    for (cc, ptx) in PTX_MODULES {
        let (ok, log) = assemble(&ptxas, dir.path(), &format!("sm_{cc}"), *cc, ptx);
        assert!(ok, "ptxas failed for sm_{cc}:\n{log}");
        assert!(
            log.contains("megakernel"),
            "sm_{cc}: ptxas did not report the megakernel:\n{log}"
        );
        eprintln!(
            "sm_{cc}: {}",
            log.lines()
                .filter(|l| l.contains("registers"))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
}

/// The GPU back ends load each kernel alone in its module
/// (`system::ptx::entry_module`): such a module must assemble by itself.
/// Three stand for the rest: the smallest kernel, a shading kernel that
/// calls functions kept out of line, and a megakernel; each also bound to
/// every feature under the fast arithmetic, as the GPU back ends bind it.
#[test]
fn one_kernel_modules_assemble() {
    let Some(ptxas) = ptxas_or_skip() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (cc, ptx) = PTX_MODULES[PTX_MODULES.len() - 1];
    for entry in [FaultTrap::NAME, "wf_shade_coated", "megakernel_brute"] {
        let module = entry_module(ptx, entry).unwrap_or_else(|| panic!("no kernel {entry}"));
        assert!(module.contains(".func "), "{entry}: the shared functions must stay");
        let (fast, _) = with_features(&module, Some(Features::ALL), Arithmetic::Fast).unwrap();
        for (label, text) in [(entry.to_string(), module), (format!("{entry}_fast"), fast)] {
            let (ok, log) = assemble(&ptxas, dir.path(), &label, cc, &text);
            assert!(ok, "ptxas failed for {label} alone:\n{log}");
            assert_eq!(log.matches("Compiling entry function").count(), 1, "{label}:\n{log}");
        }
    }
}

/// The number before `label` in `ptxas -v`'s report of `entry`'s
/// function properties (e.g. "bytes stack frame"), which follows the line
/// that names it.
fn ptxas_figure(log: &str, entry: &str, label: &str) -> u32 {
    let lines: Vec<&str> = log.lines().collect();
    let named = (lines.iter())
        .position(|l| l.contains(&format!("Function properties for {entry}")))
        .unwrap_or_else(|| panic!("no properties of {entry} in:\n{log}"));
    let line = lines[named + 1];
    let before = &line[..line.find(label).unwrap_or_else(|| panic!("no `{label}` in `{line}`"))];
    let number = before.trim_end().rsplit([' ', ',', ':']).next().unwrap();
    number.parse().unwrap_or_else(|_| panic!("`{number}` in `{line}`"))
}

/// The megakernel every scene file runs, bound to the features of its
/// render (with next-event estimation and without) and to each arithmetic,
/// uncapped, holds nothing in local memory but its structure's traversal
/// stack, and spills nothing: `ptxas -v` reports a stack frame of exactly
/// the stack. Bound to the fast arithmetic, it holds none of the strict
/// instructions the fast ones replace.
#[test]
fn every_scenes_megakernel_holds_nothing_in_local_memory_but_its_traversal_stack() {
    let Some(ptxas) = ptxas_or_skip() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (cc, ptx) = PTX_MODULES[PTX_MODULES.len() - 1];
    struct Mega;
    impl AccelVisitor for Mega {
        type Output = (&'static str, usize);
        fn visit<A: AccelKernels>(self) -> (&'static str, usize) {
            (A::Megakernel::NAME, A::STACK_BYTES)
        }
    }
    let mut names: Vec<_> = std::fs::read_dir(repo("scenes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    for name in names {
        for nee in [NeeMode::Off, NeeMode::On] {
            let overrides = Overrides {
                size: Some((32, 24)),
                spp: Some(1),
                nee: Some(nee),
                ..Overrides::default()
            };
            let scene = load_scene(&repo(&format!("scenes/{name}")), &overrides).unwrap();
            let (params, spp) = params_for(&scene.scene, &overrides, RenderView::Radiance);
            let features = render_features(&scene, params, spp);
            let (entry, stack) = visit_accel(scene.accel.kind, Mega);
            let module = entry_module(ptx, entry).unwrap();
            for arithmetic in Arithmetic::ALL {
                let (bound, _) = with_features(&module, Some(features), arithmetic).unwrap();
                if arithmetic == Arithmetic::Fast {
                    for (strict, _) in FAST_INSTRUCTIONS {
                        assert!(
                            !bound.contains(strict),
                            "{name}: {entry} bound fast still holds {strict}"
                        );
                    }
                }
                let label = format!(
                    "{}_{}_{}",
                    name.trim_end_matches(".toml"),
                    features.bits(),
                    arithmetic.name()
                );
                let (ok, log) = assemble(&ptxas, dir.path(), &label, cc, &bound);
                assert!(ok, "{name}: ptxas failed for {entry}:\n{log}");
                let frame = ptxas_figure(&log, entry, "bytes stack frame");
                let spilled = ptxas_figure(&log, entry, "bytes spill stores");
                eprintln!(
                    "{name}, nee {nee:?}, {}: {entry} bound to {features}: {frame} B stack frame, {spilled} B spilled",
                    arithmetic.name()
                );
                assert!(
                    frame as usize == stack && spilled == 0,
                    "{name}, nee {nee:?}, {}: {entry} bound to {features} holds {frame} B of local memory \
                     ({spilled} B spilled) where its traversal stack is {stack} B:\n{log}",
                    arithmetic.name()
                );
            }
        }
    }
}
