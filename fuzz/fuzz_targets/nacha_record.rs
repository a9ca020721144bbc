//! Every record parser, and the structure checker, on any 94 bytes.
#![no_main]
use clearledger::formats::nacha::record::*;
use clearledger::findings::RecordPosition as Position;
use clearledger::formats::nacha::Assembler;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parse_file_header(data);
    let _ = parse_batch_header(data);
    let _ = parse_iat_batch_header(data);
    let _ = parse_entry_detail(data);
    let _ = parse_ctx_entry_detail(data);
    let _ = parse_iat_entry_detail(data);
    let _ = parse_adv_entry_detail(data);
    let _ = parse_addenda(data);
    let _ = parse_addenda98(data);
    let _ = parse_addenda99(data);
    let _ = parse_addenda02(data);
    let _ = parse_batch_control(data);
    let _ = parse_adv_batch_control(data);
    let _ = parse_file_control(data);
    let _ = parse_adv_file_control(data);
    // Any sequence of 94-byte records through the assembler.
    let mut asm = Assembler::new();
    for (i, rec) in data.chunks(RECORD_LEN).enumerate() {
        let pos = Position { record_index: i as u64, line: i as u64 + 1, byte_offset: (i * RECORD_LEN) as u64 };
        asm.push(rec, pos, &mut |_| {});
    }
    let _ = asm.finish(Position::default(), &mut |_| {});
});
