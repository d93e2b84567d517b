//! Fuzz target: arbitrary text through the scene loader (TOML, validation,
//! generators and the acceleration-structure build), as `fuzz.toml`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    wavepath_fuzz::scene_loader(data);
});
