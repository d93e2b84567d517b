//! The PTX modules that `build.rs` compiled from `device/` and embedded
//! (`backend::gpu::device::choose_ptx` picks the one a GPU loads).

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
}
