//! The `iso20022` target: `clearledger::fuzzing::iso20022` on libFuzzer's bytes (what it checks is
//! written there, where the stable suite calls it too).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| clearledger::fuzzing::iso20022(data));
