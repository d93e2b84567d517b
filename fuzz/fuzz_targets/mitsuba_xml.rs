//! Fuzz target: arbitrary text through the Mitsuba XML scene reader.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = wavepath_fuzz::mitsuba_xml(data);
});
