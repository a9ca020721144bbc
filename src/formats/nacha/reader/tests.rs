use super::*;
use crate::findings::Severity;

/// Reads `data` through a source that hands out `chunk` bytes at a time.
struct Trickle<'a> {
    data: &'a [u8],
    chunk: usize,
}
impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.chunk.min(out.len()).min(self.data.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn frame(data: &[u8], chunk: usize) -> (Vec<(Vec<u8>, RecordPosition)>, Vec<Finding>) {
    let mut r = RecordReader::new(Trickle { data, chunk });
    let mut out = Vec::new();
    let mut findings = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        out.push((rec.bytes.to_vec(), rec.position));
        findings.extend(r.take_findings());
    }
    findings.extend(r.take_findings());
    assert_eq!(r.bytes_read(), data.len() as u64);
    (out, findings)
}

fn rec(c: u8) -> Vec<u8> {
    let mut v = vec![c; RECORD_LEN];
    v[0] = c;
    v
}

#[test]
fn lf_crlf_cr_and_none_give_the_same_records() {
    let (a, b, c) = (rec(b'1'), rec(b'5'), rec(b'9'));
    for sep in [&b"\n"[..], b"\r\n", b"\r", b""] {
        for trailing in [true, false] {
            let mut data = Vec::new();
            for (i, r) in [&a, &b, &c].iter().enumerate() {
                data.extend_from_slice(r);
                if i < 2 || trailing {
                    data.extend_from_slice(sep);
                }
            }
            for chunk in [1, 7, 95, 4096] {
                let (recs, findings) = frame(&data, chunk);
                assert_eq!(recs.len(), 3, "sep {sep:?} chunk {chunk}");
                assert_eq!(recs[1].0, b);
                assert!(findings.is_empty(), "{findings:?}");
                let off = (RECORD_LEN + sep.len()) as u64;
                assert_eq!(recs[2].1.byte_offset, 2 * off);
                assert_eq!(recs[2].1.record_index, 2);
                let line = if sep.is_empty() { 1 } else { 3 };
                assert_eq!(recs[2].1.line, line);
            }
        }
    }
}

#[test]
fn trimmed_record_is_padded_with_a_warning() {
    let mut data = rec(b'1');
    data.push(b'\n');
    data.extend_from_slice(&b"9000001"[..]);
    data.push(b'\n');
    let (recs, findings) = frame(&data, 3);
    assert_eq!(recs.len(), 2);
    assert_eq!(&recs[1].0[..7], b"9000001");
    assert!(recs[1].0[7..].iter().all(|&b| b == b' '));
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].code, FindingCode::TrimmedRecord);
    assert_eq!(findings[0].severity, Severity::Warning);
    assert_eq!(findings[0].found, "7 bytes");
    assert_eq!(
        findings[0].position,
        RecordPosition {
            record_index: 1,
            line: 2,
            byte_offset: 95
        }
        .into()
    );
}

#[test]
fn long_record_of_trailing_blanks_is_trimmed_with_a_warning() {
    let mut data = rec(b'1');
    data.extend_from_slice(b"    \r\n");
    data.extend_from_slice(&rec(b'5'));
    let (recs, findings) = frame(&data, 5);
    assert_eq!(recs.len(), 2);
    assert_eq!(
        recs[1].1,
        RecordPosition {
            record_index: 1,
            line: 2,
            byte_offset: 100
        }
    );
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].code, FindingCode::LongRecord);
    assert_eq!(findings[0].found, "98 bytes");
}

#[test]
fn unseparated_line_with_extra_byte_is_an_error_at_the_remainder() {
    let mut data = Vec::new();
    data.extend_from_slice(&rec(b'1'));
    data.extend_from_slice(&rec(b'5'));
    data.push(b'X');
    data.push(b'\n');
    let (recs, findings) = frame(&data, 64);
    assert_eq!(recs.len(), 3);
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].code, FindingCode::RecordLength);
    assert_eq!(findings[0].severity, Severity::Error);
    assert_eq!(findings[0].found, "1 bytes");
    assert_eq!(
        findings[0].position,
        RecordPosition {
            record_index: 2,
            line: 1,
            byte_offset: 188
        }
        .into()
    );
}

#[test]
fn non_ascii_byte_names_its_column() {
    let mut data = rec(b'6');
    data[44] = 0xE9;
    let (_, findings) = frame(&data, 94);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].code, FindingCode::NonAsciiByte);
    assert_eq!(findings[0].expected, "printable ASCII at column 45");
    assert_eq!(findings[0].found, "\\xe9");
    // At the byte itself, its column as the field (the assembler names the field).
    assert_eq!(findings[0].position.byte_offset(), 44);
    assert_eq!(findings[0].field, Some(column_of_record(45)));
    assert_eq!(findings[0].field.unwrap().columns(), "45-45");
}

/// Two records (types 1 and 5) separated by `sep`, with `before` and `after` around.
fn two_records(before: &[u8], sep: &[u8], after: &[u8]) -> Vec<u8> {
    let mut data = before.to_vec();
    data.extend_from_slice(&rec(b'1'));
    data.extend_from_slice(sep);
    data.extend_from_slice(&rec(b'5'));
    data.extend_from_slice(after);
    data
}

#[test]
fn a_byte_order_mark_is_skipped_with_one_warning() {
    let data = two_records(UTF8_BOM, b"\r\n", b"\r\n");
    for chunk in [1, 2, 3, 7, 4096] {
        let (recs, findings) = frame(&data, chunk);
        assert_eq!(recs.len(), 2);
        assert_eq!(
            (recs[0].0.clone(), recs[1].0.clone()),
            (rec(b'1'), rec(b'5'))
        );
        // Positions stay those of the real bytes: the first record starts at byte 3.
        assert_eq!(
            recs[0].1,
            RecordPosition {
                record_index: 0,
                line: 1,
                byte_offset: 3
            }
        );
        assert_eq!(recs[1].1.byte_offset, 3 + 96);
        assert_eq!(findings.len(), 1, "{findings:?}");
        let f = &findings[0];
        assert_eq!(
            (f.code, f.severity),
            (FindingCode::ByteOrderMark, Severity::Warning)
        );
        let at_0 = RecordPosition {
            record_index: 0,
            line: 1,
            byte_offset: 0,
        };
        assert_eq!(f.position, at_0.into());
        assert_eq!(f.found, "a UTF-8 byte-order mark \\xef\\xbb\\xbf (skipped)");
    }
}

#[test]
fn a_byte_order_mark_after_byte_0_is_not_skipped() {
    let data = two_records(b"", b"\n", b"\n\xEF\xBB\xBF");
    let (recs, findings) = frame(&data, 4096);
    assert_eq!(recs.len(), 3);
    let codes: Vec<_> = findings.iter().map(|f| f.code).collect();
    assert_eq!(
        codes,
        [FindingCode::NonAsciiByte, FindingCode::TrimmedRecord]
    );
    assert_eq!(
        findings[0].found,
        "\\xef\\xbb\\xbf (the UTF-8 character '\\u{feff}', 3 bytes read as one column)"
    );
}

#[test]
fn end_of_file_markers_are_skipped_with_one_warning() {
    // What follows the last record: its separator or none, then Ctrl-Z bytes.
    let tails: [(&[u8], u64, &str); 5] = [
        (
            b"\x1a",
            2,
            "1 DOS end-of-file byte(s) 0x1A (Ctrl-Z): \\x1a (skipped)",
        ),
        (
            b"\r\n\x1a",
            3,
            "1 DOS end-of-file byte(s) 0x1A (Ctrl-Z): \\x1a (skipped)",
        ),
        (
            b"\n\x1a\x1a\x1a\n",
            3,
            "3 DOS end-of-file byte(s) 0x1A (Ctrl-Z): \\x1a\\x1a\\x1a\\n (skipped)",
        ),
        (
            b"\r\n\x1a\r\n",
            3,
            "1 DOS end-of-file byte(s) 0x1A (Ctrl-Z): \\x1a\\r\\n (skipped)",
        ),
        (
            b"\x1a\x1a\r\n",
            2,
            "2 DOS end-of-file byte(s) 0x1A (Ctrl-Z): \\x1a\\x1a\\r\\n (skipped)",
        ),
    ];
    for (tail, line, found) in tails {
        let data = two_records(b"", b"\r\n", tail);
        for chunk in [1, 5, 95, 4096] {
            let (recs, findings) = frame(&data, chunk);
            assert_eq!(recs.len(), 2, "{tail:?}");
            assert_eq!(recs[1].0, rec(b'5'));
            assert_eq!(findings.len(), 1, "{tail:?}: {findings:?}");
            let f = &findings[0];
            assert_eq!(
                (f.code, f.severity),
                (FindingCode::EndOfFileMarker, Severity::Warning)
            );
            assert_eq!(f.found, found);
            assert_eq!(f.position.line(), line, "{tail:?}");
            assert_eq!(f.position.record_index(), Some(2));
            let at = 96 + 94 + tail.iter().take_while(|&&b| b != 0x1a).count();
            assert_eq!(f.position.byte_offset(), at as u64, "{tail:?}");
        }
    }
}

#[test]
fn a_long_run_of_end_of_file_markers_is_one_short_warning() {
    let data = two_records(b"", b"\n", &[0x1a; 3000]);
    let (recs, findings) = frame(&data, 4096);
    assert_eq!(recs.len(), 2);
    assert_eq!(findings.len(), 1);
    let shown = "\\x1a".repeat(16);
    let want =
        format!("3000 DOS end-of-file byte(s) 0x1A (Ctrl-Z): {shown}... (3000 bytes) (skipped)");
    assert_eq!(findings[0].found, want);
}

#[test]
fn a_trimmed_last_record_then_ctrl_z_is_two_warnings() {
    for tail in [&b"\x1a"[..], b"\x1a\r\n", b"\r\n\x1a"] {
        let mut data = rec(b'1');
        data.extend_from_slice(b"\r\n9000001");
        data.extend_from_slice(tail);
        for chunk in [1, 4096] {
            let (recs, findings) = frame(&data, chunk);
            assert_eq!(recs.len(), 2);
            assert_eq!(&recs[1].0[..8], b"9000001 ");
            let codes: Vec<_> = findings.iter().map(|f| (f.code, f.severity)).collect();
            assert_eq!(
                codes,
                [
                    (FindingCode::TrimmedRecord, Severity::Warning),
                    (FindingCode::EndOfFileMarker, Severity::Warning)
                ],
                "{tail:?}"
            );
        }
    }
}

#[test]
fn a_ctrl_z_before_more_records_is_not_an_end_of_file_marker() {
    let data = two_records(b"", b"\n\x1a\n", b"\n");
    let (recs, findings) = frame(&data, 4096);
    assert_eq!(recs.len(), 3);
    let codes: Vec<_> = findings.iter().map(|f| f.code).collect();
    assert_eq!(
        codes,
        [FindingCode::TrimmedRecord, FindingCode::NonAsciiByte]
    );
    assert_eq!(findings[1].found, "\\x1a");
}

#[test]
fn a_multibyte_utf8_character_is_one_column_and_one_finding() {
    // An entry whose name has an é (2 bytes in UTF-8) at column 45: 94 characters,
    // 95 bytes.
    let mut first = rec(b'6');
    first[44..47].copy_from_slice(b"JOS");
    let mut line = first[..44].to_vec();
    line.extend_from_slice("é".as_bytes());
    line.extend_from_slice(&first[45..]);
    assert_eq!(line.len(), 95);
    let mut data = line.clone();
    data.push(b'\n');
    data.extend_from_slice(&rec(b'8'));
    data.push(b'\n');
    for chunk in [1, 7, 95, 4096] {
        let (recs, findings) = frame(&data, chunk);
        assert_eq!(recs.len(), 2, "chunk {chunk}");
        let mut want = first.clone();
        want[44] = b'?';
        assert_eq!(recs[0].0, want);
        assert_eq!(recs[1].0, rec(b'8'));
        assert_eq!(
            recs[1].1,
            RecordPosition {
                record_index: 1,
                line: 2,
                byte_offset: 96
            }
        );
        assert_eq!(findings.len(), 1, "{findings:?}");
        let f = &findings[0];
        assert_eq!(
            (f.code, f.severity),
            (FindingCode::NonAsciiByte, Severity::Error)
        );
        assert_eq!(f.position.line(), 1);
        assert_eq!(f.position.byte_offset(), 44);
        assert_eq!(f.field, Some(column_of_record(45)));
        assert_eq!(f.expected, "printable ASCII at column 45");
        assert_eq!(
            f.found,
            "\\xc3\\xa9 (the UTF-8 character 'é', 2 bytes read as one column)"
        );
    }
}

#[test]
fn a_last_record_with_a_multibyte_character_then_ctrl_z() {
    let mut data = rec(b'1');
    data.push(b'\n');
    data.extend_from_slice(&rec(b'9')[..93]);
    data.extend_from_slice("é\x1a".as_bytes());
    let (recs, findings) = frame(&data, 4096);
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[1].0[93], b'?');
    let codes: Vec<_> = findings.iter().map(|f| f.code).collect();
    assert_eq!(
        codes,
        [FindingCode::NonAsciiByte, FindingCode::EndOfFileMarker]
    );
}

#[test]
fn several_multibyte_characters_in_a_record_are_still_one_finding() {
    let mut line = rec(b'6')[..90].to_vec();
    line.extend_from_slice("ñü€𝄞".as_bytes());
    let (recs, findings) = frame(&line, 4096);
    assert_eq!(recs.len(), 1);
    assert_eq!(&recs[0].0[90..], b"????");
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].expected, "printable ASCII at column 91");
    assert_eq!(findings[0].position.byte_offset(), 90);
    assert_eq!(
        findings[0].found,
        "\\xc3\\xb1 (the UTF-8 character 'ñ', 2 bytes read as one column); \
         3 more non-ASCII character(s) in the record"
    );
}

#[test]
fn empty_input_gives_no_records() {
    let (recs, findings) = frame(b"", 10);
    assert!(recs.is_empty());
    assert!(findings.is_empty());
}

#[test]
fn blank_lines_are_skipped_with_a_warning() {
    let mut data = rec(b'1');
    data.extend_from_slice(b"\n\n");
    data.extend_from_slice(&rec(b'9'));
    let (recs, findings) = frame(&data, 2);
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[1].1.line, 3);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].code, FindingCode::BlankLine);
    assert_eq!(findings[0].position.line(), 2);
}

/// A record as framed, with the findings it brought.
type Framed = (Vec<u8>, RecordPosition, NonAsciiColumns, Vec<Finding>);
type TrickleReader<'a> = RecordReader<Trickle<'a>>;

/// The next record as `next_record` frames it, with the findings it brought.
fn one(r: &mut TrickleReader) -> Option<Framed> {
    let rec = r.next_record().unwrap()?;
    let (b, p, n) = (rec.bytes.to_vec(), rec.position, rec.non_ascii);
    Some((b, p, n, r.take_findings()))
}

/// Where the input ended, and the findings left at its end.
fn end(r: &mut TrickleReader) -> Framed {
    let none = NonAsciiColumns::default();
    (Vec::new(), r.end_position(), none, r.take_findings())
}

/// Every record of `data` by `next_record` alone, read `chunk` bytes at a time.
fn alone(data: &[u8], chunk: usize) -> Vec<Framed> {
    let mut r = RecordReader::new(Trickle { data, chunk });
    let mut out: Vec<Framed> = std::iter::from_fn(|| one(&mut r)).collect();
    out.push(end(&mut r));
    out
}

/// Every record of `data` from plain runs taken `take` at a time (the rest by
/// `next_record`), and how many came from runs.
fn in_runs(data: &[u8], chunk: usize, take: usize) -> (Vec<Framed>, usize) {
    let mut r = RecordReader::new(Trickle { data, chunk });
    let (mut out, mut bulk) = (Vec::new(), 0);
    loop {
        let run = r.plain_run().unwrap();
        let mut k = 0;
        while k < take
            && let Some(b) = run.record(k)
        {
            let none = NonAsciiColumns::default();
            out.push((b.to_vec(), run.position(k), none, Vec::new()));
            k += 1;
        }
        let sep = run.sep;
        r.skip_plain(k, sep);
        bulk += k;
        let Some(f) = one(&mut r) else { break };
        out.push(f);
    }
    out.push(end(&mut r));
    (out, bulk)
}

/// Plain runs taken `take` records at a time (the rest by `next_record`) give exactly
/// what `next_record` alone gives: the same records, positions, non-ASCII columns and
/// findings, on lines with LF, CR LF, a CR alone, trimmed, long, blank, non-ASCII and
/// multi-byte ones between plain stretches, whatever the source's read size.
#[test]
fn plain_runs_frame_as_next_record_does() {
    let plain = |c: u8| {
        let mut v = rec(b'6');
        v[1] = c;
        v
    };
    let mut data = Vec::new();
    let lines: Vec<(Vec<u8>, &[u8])> = vec![
        (plain(b'a'), b"\n"),
        (plain(b'b'), b"\n"),
        (plain(b'c'), b"\r\n"),
        (plain(b'd'), b"\r\n"),
        (plain(b'D'), b"\r\n"),
        (plain(b'e'), b"\n"),
        (plain(b'f')[..60].to_vec(), b"\n"),
        (plain(b'g'), b"\r"),
        (plain(b'h'), b"\n"),
        ([plain(b'i'), b"   ".to_vec()].concat(), b"\n"),
        (Vec::new(), b"\n"),
        (plain(b'j'), b"\n"),
        (
            [&plain(b'k')[..10], "\u{e9}".as_bytes(), &plain(b'k')[11..]].concat(),
            b"\n",
        ),
        (
            [&plain(b'l')[..10], b"\xe9", &plain(b'l')[11..]].concat(),
            b"\n",
        ),
        (
            [&plain(b'm')[..10], b"\t", &plain(b'm')[11..]].concat(),
            b"\n",
        ),
        (plain(b'n'), b"\n"),
        ([plain(b'o'), plain(b'p')].concat(), b"\n"),
        (plain(b'q'), b"\n"),
        (plain(b'r'), b""),
    ];
    for (line, sep) in &lines {
        data.extend_from_slice(line);
        data.extend_from_slice(sep);
    }
    for chunk in [1, 95, 96, 200, 4096] {
        let want = alone(&data, chunk);
        assert_eq!(
            want.len(),
            20,
            "every line a record but the blank one, then the end"
        );
        for take in [1, 2, 3, usize::MAX] {
            let (got, bulk) = in_runs(&data, chunk, take);
            assert_eq!(got, want, "reads of {chunk}, runs taken {take} at a time");
            // In bulk, when the reads bring whole runs: a b | d D | h | n | p q (a run
            // keeps one separator; p is the second record of a line without one between
            // them; r, the last, has no byte after it).
            if chunk == 4096 && take == usize::MAX {
                assert_eq!(bulk, 8);
            }
        }
    }
}
