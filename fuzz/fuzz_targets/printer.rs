//! libFuzzer entry point of the `printer` target (see `src/lib.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loopwatch_fuzz::printer(data));
