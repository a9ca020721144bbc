//! The `rules_toml` target: `clearledger::fuzzing::rules_toml` on libFuzzer's bytes (what it checks is
//! written there, where the stable suite calls it too).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| clearledger::fuzzing::rules_toml(data));
