//! Every record parser, and the structure checker, on any 94 bytes.
#![no_main]
use clearledger::formats::nacha::record::*;
use clearledger::findings::RecordPosition as Position;
use clearledger::formats::nacha::Assembler;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Every parser on the first 94 bytes (a framed record; shorter input never reaches one).
    if let Some(rec) = data.first_chunk::<RECORD_LEN>() {
        let _ = parse_file_header(rec);
        let _ = parse_batch_header(rec);
        let _ = parse_iat_batch_header(rec);
        let _ = parse_entry_detail(rec);
        let _ = parse_cie_entry_detail(rec);
        let _ = parse_shr_entry_detail(rec);
        let _ = parse_ctx_entry_detail(rec);
        let _ = parse_iat_entry_detail(rec);
        let _ = parse_adv_entry_detail(rec);
        let _ = parse_addenda(rec);
        let _ = parse_addenda10(rec);
        let _ = parse_addenda98(rec);
        let _ = parse_addenda99(rec);
        let _ = parse_addenda02(rec);
        let _ = parse_batch_control(rec);
        let _ = parse_adv_batch_control(rec);
        let _ = parse_file_control(rec);
        let _ = parse_adv_file_control(rec);
    }
    // Any sequence of 94-byte records through the assembler.
    let mut asm = Assembler::new();
    for (i, rec) in data.chunks(RECORD_LEN).enumerate() {
        let pos = Position { record_index: i as u64, line: i as u64 + 1, byte_offset: (i * RECORD_LEN) as u64 };
        asm.push(rec, pos, &mut |_| {});
    }
    let _ = asm.finish(Position::default(), &mut |_| {});
});
