//! Fuzz target: arbitrary text through the experiment config loader (TOML,
//! studies, settings, sweeps, published figures, planning), as
//! `experiments/fuzz.toml`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    wavepath_fuzz::experiment_config(data);
});
