//! The functions at a sampled address: the one whose code it is and every
//! function inlined there, innermost first (the `backtrace` crate's reading
//! of the debug information), each address resolved once.
//!
//! Functions of the render code (the `device` crate, whose profile the
//! seeds' tables show) are named by the module of their source file and
//! their short name (`device::geometry::sphere::intersect`), because the
//! debug information of an optimised build names inlined functions
//! without their path; other functions keep their demangled name.

use std::collections::HashMap;
use std::ffi::c_void;
use std::path::Path;

/// A function on a sampled stack.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// Its name in the profile.
    pub name: String,
    /// Whether it is render code (the `device` crate's).
    pub render_code: bool,
}

/// The functions at each address resolved so far.
#[derive(Default)]
pub struct Symbols(HashMap<usize, Vec<Function>>);

impl Symbols {
    /// The functions at the instruction at `address`, innermost first:
    /// those inlined there, then the one whose code it is (empty where the
    /// address has no symbol).
    pub fn at(&mut self, address: usize) -> &[Function] {
        self.0.entry(address).or_insert_with(|| {
            let mut functions = Vec::new();
            // `resolve` looks up the byte before the address it is given
            // (it expects a return address): give it the next one.
            backtrace::resolve((address + 1) as *mut c_void, |symbol| {
                functions.push(function(symbol));
            });
            functions
        })
    }
}

/// How the profile names a symbol's function.
fn function(symbol: &backtrace::Symbol) -> Function {
    // `{:#}`: demangled, without the hash.
    let name = symbol
        .name()
        .map_or_else(|| "[unknown]".to_string(), |n| format!("{n:#}"));
    match symbol.filename().and_then(device_module) {
        Some(module) => Function {
            name: format!("{module}::{}", short_name(&name)),
            render_code: true,
        },
        None => Function {
            name,
            render_code: false,
        },
    }
}

/// `device::a::b` for a file `…/device/src/a/b.rs` (or `…/a/b/mod.rs`;
/// `lib.rs` is `device`), `None` for a file outside the device crate.
fn device_module(file: &Path) -> Option<String> {
    let parts: Vec<&str> = file.iter().filter_map(|p| p.to_str()).collect();
    let src = parts.windows(2).rposition(|w| w == ["device", "src"])? + 2;
    let mut module = vec!["device"];
    for (i, part) in parts[src..].iter().enumerate() {
        let last = src + i + 1 == parts.len();
        match (last, part.strip_suffix(".rs")) {
            (false, _) => module.push(part),
            (true, Some("mod" | "lib")) => {}
            (true, Some(stem)) => module.push(stem),
            (true, None) => return None,
        }
    }
    Some(module.join("::"))
}

/// A function's name without generic arguments or path:
/// `<device::accel::Bvh as device::accel::Accel>::closest_hit` and
/// `closest_hit<device::accel::Bvh>` are both `closest_hit`.
fn short_name(name: &str) -> String {
    let mut depth = 0usize;
    let plain: String = name
        .chars()
        .filter(|&c| {
            match c {
                '<' => depth += 1,
                '>' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect();
    let plain = plain.trim_end_matches("::");
    plain.rsplit("::").next().unwrap_or(plain).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_named_by_their_device_module_and_short_name() {
        assert_eq!(
            device_module(Path::new("/work/x/device/src/accel/bvh.rs")).as_deref(),
            Some("device::accel::bvh")
        );
        assert_eq!(
            device_module(Path::new("device/src/material/mod.rs")).as_deref(),
            Some("device::material")
        );
        assert_eq!(device_module(Path::new("device/src/lib.rs")).as_deref(), Some("device"));
        assert_eq!(device_module(Path::new("/rustc/abc/library/core/src/f32.rs")), None);
        assert_eq!(device_module(Path::new("renderer/src/render/mod.rs")), None);
        assert_eq!(
            short_name("<device::accel::Bvh as device::accel::Accel>::closest_hit"),
            "closest_hit"
        );
        assert_eq!(
            short_name("trace_path<device::accel::Bvh, device::observe::Unobserved>"),
            "trace_path"
        );
        assert_eq!(short_name("device::integrator::trace_path"), "trace_path");
        assert_eq!(
            short_name("device::integrator::trace_path::<device::accel::Bvh, device::observe::Unobserved>"),
            "trace_path"
        );
        assert_eq!(short_name("{closure#0}<device::accel::Bvh>"), "{closure#0}");
    }

    #[inline(never)]
    fn a_function_of_this_test() -> usize {
        a_function_of_this_test as fn() -> usize as usize
    }

    #[test]
    fn an_address_is_resolved_to_the_function_whose_code_it_is() {
        let start = a_function_of_this_test();
        let functions = Symbols::default().at(start).to_vec();
        assert!(
            functions
                .iter()
                .any(|f| f.name.ends_with("a_function_of_this_test") && !f.render_code),
            "{functions:?}"
        );
    }
}
