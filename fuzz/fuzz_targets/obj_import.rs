//! Fuzz target: arbitrary bytes through the OBJ import that scene meshes use.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = wavepath_fuzz::obj_import(data);
});
