//! The file readers' targets: every format, format detection, the rules file.

use super::{Trickle, assert_bounded, comparable};
use crate::findings::RecordPosition;
use crate::formats::detect::{self as detection, Detected, StatementFormat};
use crate::formats::nacha::record::*;
use crate::formats::nacha::{self, Assembler, ReadResult, ValidateOptions, parallel};
use crate::formats::statement::{self, StatementRead};
use std::io::BufReader;

/// Every NACHA record parser on the first 94 bytes, and any sequence of 94-byte records
/// through the assembler.
pub fn nacha_record(data: &[u8]) {
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
    let mut asm = Assembler::new();
    for (i, rec) in data.chunks(RECORD_LEN).enumerate() {
        let pos = RecordPosition {
            record_index: i as u64,
            line: i as u64 + 1,
            byte_offset: (i * RECORD_LEN) as u64,
        };
        asm.push(rec, pos, &mut |_| {});
    }
    assert_bounded(&asm.finish(RecordPosition::default(), &mut |_| {}).findings);
}

fn nacha_key(r: &ReadResult) -> String {
    format!("{:?}|{}", r.summary, r.bytes)
}

/// The whole NACHA reader: the parallel `check` (with chunks of 1 to 8 records, so that
/// the cuts and their joins are fuzzed too) equals one pass, equals the same bytes in
/// 7-byte reads, equals what ingest reads (`read_file`, entry details kept).
pub fn nacha_file(data: &[u8]) {
    let opts = ValidateOptions::default();
    let one = nacha::check_in_one_pass(data, opts).expect("memory reads cannot fail");
    assert_eq!(one.bytes, data.len() as u64);
    assert_bounded(&one.summary.findings);
    let chunk = 1 + data.first().map_or(0, |b| usize::from(b % 8));
    let par = parallel::check(data, opts, chunk).expect("memory reads cannot fail");
    assert_eq!(
        nacha_key(&par),
        nacha_key(&one),
        "parallel ({chunk}) vs one pass"
    );
    let trickled = nacha::check_in_one_pass(Trickle { data, chunk: 7 }, opts).expect("memory");
    assert_eq!(
        nacha_key(&trickled),
        nacha_key(&one),
        "7-byte reads vs whole"
    );
    let mut entries = 0u64;
    let ingest = nacha::read_file(
        data,
        opts,
        &mut |e| {
            if matches!(e, nacha::Event::Entry(_)) {
                entries += 1;
            }
        },
        &mut |_| {},
    )
    .expect("memory reads cannot fail");
    assert_eq!(
        nacha_key(&ingest),
        nacha_key(&one),
        "ingest's read vs check"
    );
    assert!(
        entries <= one.summary.entries,
        "more entries handed out than read"
    );
}

/// The ISO 20022 payments reader: whole and in 7-byte reads alike.
pub fn iso20022(data: &[u8]) {
    use crate::formats::iso20022::read_file;
    // A fatal finding stops the walk: the bytes after it are not read.
    let whole = read_file(data, &mut |_| {}).expect("memory reads cannot fail");
    assert!(whole.bytes <= decoded_len_max(data));
    assert_bounded(&whole.findings);
    let t = read_file(Trickle { data, chunk: 7 }, &mut |_| {}).expect("memory reads cannot fail");
    assert_eq!(comparable(&t.findings), comparable(&whole.findings));
    assert_eq!(
        (t.documents, t.transactions),
        (whole.documents, whole.transactions)
    );
}

/// The most UTF-8 bytes `data` decodes to: the XML readers count the bytes of the text they
/// read, which for a file in UTF-16 or latin-1 is the decoded text (two UTF-16 bytes are up to
/// three of UTF-8: a file of CJK characters reads longer than it is).
fn decoded_len_max(data: &[u8]) -> u64 {
    use crate::formats::xml::decode::{Encoding, HEAD_BYTES_MAX, sniff};
    let head = &data[..data.len().min(HEAD_BYTES_MAX)];
    let (num, den) = match sniff(head).map(|s| s.encoding) {
        Ok(Encoding::Utf16Le | Encoding::Utf16Be) => (3, 2),
        Ok(Encoding::Latin1) => (2, 1),
        Ok(Encoding::Windows1252) => (3, 1),
        Ok(Encoding::Utf8) | Err(_) => (1, 1),
    };
    (data.len() as u64 * num).div_ceil(den)
}

/// One statement reader on `data`, whole and in 7-byte reads alike; what it handed out
/// agrees with what it counted.
fn statement_reader(format: StatementFormat, data: &[u8]) {
    let read = |input: &mut dyn std::io::BufRead| -> (StatementRead, u64, u64) {
        let (mut statements, mut entries) = (0, 0);
        let r = statement::read(format, input, Default::default(), &mut |s| {
            statements += 1;
            entries += s.entries.len() as u64;
        })
        .expect("memory reads cannot fail");
        (r, statements, entries)
    };
    let (whole, statements, entries) = read(&mut &data[..]);
    assert_bounded(&whole.findings);
    assert_eq!((whole.statements, whole.entries), (statements, entries));
    let mut trickle = BufReader::with_capacity(7, Trickle { data, chunk: 7 });
    let (t, _, _) = read(&mut trickle);
    assert_eq!(comparable(&t.findings), comparable(&whole.findings));
    assert_eq!((t.statements, t.entries), (whole.statements, whole.entries));
}

/// The format detection said, or `fallback` when it said another kind of file: the
/// statement readers are fuzzed on what detection would send them and on what it would not.
fn statement_format(
    data: &[u8],
    fits: &[StatementFormat],
    fallback: StatementFormat,
) -> StatementFormat {
    match detection::detect(&data[..data.len().min(detection::HEAD_BYTES)]) {
        Detected::Statement(f) if fits.contains(&f) => f,
        _ => fallback,
    }
}

/// The camt.052/053/054 reader.
pub fn camt(data: &[u8]) {
    use StatementFormat::*;
    statement_reader(
        statement_format(data, &[Camt052, Camt053, Camt054], Camt053),
        data,
    );
}

/// The BAI2 reader.
pub fn bai2(data: &[u8]) {
    statement_reader(StatementFormat::Bai2, data);
}

/// The MT940/MT942 reader.
pub fn mt940(data: &[u8]) {
    use StatementFormat::*;
    statement_reader(statement_format(data, &[Mt940, Mt942], Mt940), data);
}

/// Format detection: on the head as a slice, and through `read_head` from a reader
/// handing out 7 bytes a read, the same answer.
pub fn detect(data: &[u8]) {
    let on_slice = detection::detect(&data[..data.len().min(detection::HEAD_BYTES)]);
    let (head, mut whole) =
        detection::read_head(Trickle { data, chunk: 7 }).expect("memory reads cannot fail");
    assert_eq!(detection::detect(&head), on_slice);
    let mut again = Vec::new();
    std::io::Read::read_to_end(&mut whole, &mut again).expect("memory reads cannot fail");
    assert_eq!(again, data, "read_head's reader gives the whole input back");
}

/// The reconciliation rules file: read or refused with a message naming the file.
pub fn rules_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = crate::reconcile::rules::Rules::parse("rules.toml", text) {
        assert!(e.to_string().starts_with("rules.toml: "), "{e}");
    }
}
