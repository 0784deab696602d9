//! libFuzzer entry point of the `test_log` target (see `src/lib.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loopwatch_fuzz::test_log(data));
