//! The whole NACHA reader (framing, structure, controls) on any bytes.
#![no_main]
use clearledger::formats::nacha::{self, ValidateOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let r = nacha::check(data, ValidateOptions::default()).expect("reading from memory cannot fail");
    assert_eq!(r.bytes, data.len() as u64);
    assert!(r.summary.findings.len() <= clearledger::findings::FINDINGS_MAX + 8);
});
