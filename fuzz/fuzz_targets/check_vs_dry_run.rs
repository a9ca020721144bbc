//! The `check_vs_dry_run` target: `clearledger::fuzzing::check_vs_dry_run` on libFuzzer's bytes (what it checks is
//! written there, where the stable suite calls it too).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| clearledger::fuzzing::check_vs_dry_run(data));
