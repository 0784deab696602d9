//! libFuzzer entry point of the `gate_output` target (see `src/lib.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loopwatch_fuzz::gate_output(data));
