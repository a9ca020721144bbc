//! The ISO 20022 reader (XML walk, limits, validation) on any bytes.
#![no_main]
use clearledger::formats::iso20022;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let r = iso20022::read_file(data, &mut |_| {}).expect("reading from memory cannot fail");
    assert_eq!(r.bytes, data.len() as u64);
});
