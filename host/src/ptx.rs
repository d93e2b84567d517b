//! The PTX modules that `build.rs` compiled from `device/` and embedded.

include!(concat!(env!("OUT_DIR"), "/ptx_modules.rs"));

/// The newest embedded module a device of compute capability `cc` (e.g. 90
/// for 9.0) can load: PTX for an older architecture is JIT-compiled forward
/// by the driver, never backward.
pub fn for_compute_capability(cc: u32) -> Option<(u32, &'static str)> {
    PTX_MODULES.iter().rev().find(|(arch, _)| *arch <= cc).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_newest_module_not_newer_than_the_device() {
        let oldest = PTX_MODULES[0].0;
        let newest = PTX_MODULES[PTX_MODULES.len() - 1].0;
        assert_eq!(for_compute_capability(newest + 10).unwrap().0, newest);
        assert_eq!(for_compute_capability(oldest).unwrap().0, oldest);
        assert!(for_compute_capability(oldest - 1).is_none());
    }
}
