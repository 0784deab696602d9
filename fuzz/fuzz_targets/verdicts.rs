//! libFuzzer entry point of the `verdicts` target (see `src/lib.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loopwatch_fuzz::verdicts(data));
