//! The `bai2` target: `clearledger::fuzzing::bai2` on libFuzzer's bytes (what it checks is
//! written there, where the stable suite calls it too).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| clearledger::fuzzing::bai2(data));
