//! The PTX modules that `build.rs` compiled from `device/` and embedded.

include!(concat!(env!("OUT_DIR"), "/ptx_modules.rs"));

/// The newest embedded module a device of compute capability `cc` (e.g. 90
/// for 9.0) can load: PTX for an older architecture is JIT-compiled forward
/// by the driver, never backward.
pub fn for_compute_capability(cc: u32) -> Option<(u32, &'static str)> {
    PTX_MODULES.iter().rev().find(|(arch, _)| *arch <= cc).copied()
}

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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn picks_the_newest_module_not_newer_than_the_device() {
        let oldest = PTX_MODULES[0].0;
        let newest = PTX_MODULES[PTX_MODULES.len() - 1].0;
        assert_eq!(for_compute_capability(newest + 10).unwrap().0, newest);
        assert_eq!(for_compute_capability(oldest).unwrap().0, oldest);
        assert!(for_compute_capability(oldest - 1).is_none());
    }
}
