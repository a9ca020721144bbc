use super::super::rules::testing::{PAYROLL, errors, mutate, row};
use super::*;
use crate::findings::FINDINGS_MAX;
use crate::formats::nacha::check;

#[test]
fn the_sample_is_clean() {
    let r = check(PAYROLL, ValidateOptions::default()).unwrap();
    assert!(r.summary.findings.is_empty(), "{:?}", r.summary.findings);
    assert_eq!(
        (r.summary.entries, r.summary.addenda, r.summary.batches),
        (4, 1, 1)
    );
}

#[test]
fn positions_carry_record_index_and_byte_offset() {
    let r = check(&mutate(4, 12, "0")[..], ValidateOptions::default()).unwrap();
    let f = &r.summary.findings[0];
    assert_eq!(
        f.position,
        RecordPosition {
            record_index: 3,
            line: 4,
            byte_offset: 285
        }
        .into()
    );
    assert_eq!(f.field.unwrap().columns(), "12-12");
}

fn lines() -> Vec<Vec<u8>> {
    PAYROLL
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| l.to_vec())
        .collect()
}

fn join(ls: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in ls {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out
}

#[test]
fn structure_errors_of_the_file() {
    use FindingCode::*;
    let ls = lines();
    // No file control: reported at the end of the file.
    let mut v = ls.clone();
    v.remove(8);
    let e = errors(&join(&v));
    assert_eq!(
        e,
        vec![row(
            MissingFileControl,
            10,
            "",
            "a file control (type 9)",
            "end of file"
        )]
    );
    // A record after the file control.
    let mut v = ls.clone();
    v[9] = ls[2].clone();
    let e = errors(&join(&v));
    assert_eq!(
        e,
        vec![row(
            RecordAfterFileControl,
            10,
            "",
            "only padding records (all 9s) after the file control",
            "a record of type 6"
        )]
    );
    // A second file header.
    let mut v = ls.clone();
    v.insert(1, ls[0].clone());
    let e = errors(&join(&v));
    assert_eq!(
        e[0],
        row(
            DuplicateFileHeader,
            2,
            "record_type",
            "one file header, first in the file",
            "another file header"
        )
    );
    // No header at all.
    let v = ls[1..].to_vec();
    let e = errors(&join(&v));
    assert_eq!(
        e[0],
        row(
            FileHeaderNotFirst,
            1,
            "record_type",
            "a file header (type 1) as the first record",
            "a record of type 5"
        )
    );
    // Empty.
    assert_eq!(
        errors(b""),
        vec![row(EmptyFile, 1, "", "a NACHA file", "no records")]
    );
}

#[test]
fn structure_errors_of_records_and_batches() {
    use FindingCode::*;
    let ls = lines();
    // An addenda with no entry before it (right after the batch header).
    let mut v = ls.clone();
    v.insert(2, ls[4].clone());
    let e = errors(&join(&v));
    assert_eq!(
        e[0],
        row(
            AddendaOutsideEntry,
            3,
            "record_type",
            "an addenda record right after its entry detail",
            "an addenda with no entry before it"
        )
    );
    // A batch without its control.
    let mut v = ls.clone();
    v.remove(7);
    let e = errors(&join(&v));
    assert_eq!(
        e[0],
        row(
            BatchNotClosed,
            8,
            "record_type",
            "a batch control (type 8) before the file control",
            "a file control"
        )
    );
    // An entry outside any batch.
    let mut v = ls.clone();
    v.insert(1, ls[2].clone());
    let e = errors(&join(&v));
    assert_eq!(
        e[0],
        row(
            RecordOutsideBatch,
            2,
            "record_type",
            "an entry inside a batch (after a batch header)",
            "an entry outside any batch"
        )
    );
    // An unknown record type.
    let mut v = ls.clone();
    v.insert(8, {
        let mut r = ls[7].clone();
        r[0] = b'4';
        r
    });
    let e = errors(&join(&v));
    assert_eq!(
        e[0],
        row(
            UnknownRecordType,
            9,
            "record_type",
            "one of 1, 5, 6, 7, 8, 9",
            "4"
        )
    );
}

/// The entries of `data` (positions aside) and its summary.
fn read_entries(data: &[u8]) -> (Vec<Entry>, FileSummary) {
    let mut entries = Vec::new();
    let on_event = &mut |ev| {
        if let Event::Entry(mut e) = ev {
            e.position = RecordPosition::default();
            entries.push(e);
        }
    };
    let opts = ValidateOptions::default();
    let r = crate::formats::nacha::read_file(data, opts, on_event, &mut |_| {}).unwrap();
    (entries, r.summary)
}

#[test]
fn a_byte_order_mark_or_trailing_ctrl_z_is_one_warning_and_changes_nothing_else() {
    use FindingCode::{ByteOrderMark, EndOfFileMarker};
    let (clean, clean_summary) = read_entries(PAYROLL);
    let with = |before: &[u8], after: &[u8]| [before, PAYROLL, after].concat();
    let bom = b"\xEF\xBB\xBF";
    let cases = [
        (with(bom, b""), vec![(ByteOrderMark, 1, 0)]),
        (with(b"", b"\x1a"), vec![(EndOfFileMarker, 11, 950)]),
        (with(b"", b"\x1a\x1a\r\n"), vec![(EndOfFileMarker, 11, 950)]),
        (
            with(bom, b"\x1a"),
            vec![(ByteOrderMark, 1, 0), (EndOfFileMarker, 11, 953)],
        ),
    ];
    for (data, want) in cases {
        let (entries, summary) = read_entries(&data);
        let got: Vec<_> = summary
            .findings
            .iter()
            .map(|f| (f.code, f.position.line(), f.position.byte_offset()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(summary.errors(), 0);
        assert_eq!(entries, clean);
        let counts = |s: &FileSummary| {
            let totals = (s.total_debit_minor, s.total_credit_minor);
            (s.entries, s.addenda, s.batches, s.records, totals)
        };
        assert_eq!(counts(&summary), counts(&clean_summary));
        assert_eq!(summary.header, clean_summary.header);
    }
}

#[test]
fn one_non_ascii_character_is_one_finding_at_its_column() {
    // "ALICE SMITH" (columns 55-65 of line 3) spelt with an É: in UTF-8 (2 bytes: the
    // line is 95 bytes) or in Latin-1 (1 byte).
    let at = 2 * 95 + 58;
    for (e_acute, found) in [
        (
            &b"\xC3\x89"[..],
            "\\xc3\\x89 (the UTF-8 character 'É', 2 bytes read as one column)",
        ),
        (&b"\xC9"[..], "\\xc9"),
    ] {
        let data = [&PAYROLL[..at], e_acute, &PAYROLL[at + 1..]].concat();
        let r = check(&data[..], ValidateOptions::default()).unwrap();
        let f = &r.summary.findings;
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            (f[0].code, f[0].severity),
            (FindingCode::NonAsciiByte, Severity::Error)
        );
        // At the offending byte itself (the record starts at byte 190), in the
        // individual name's column 59.
        let pos = RecordPosition {
            record_index: 2,
            line: 3,
            byte_offset: 248,
        };
        assert_eq!(f[0].position, pos.into());
        let field = f[0].field.unwrap();
        assert_eq!(
            (field.label(), field.columns()),
            (
                "entry_detail.individual_name".to_string(),
                "59-59".to_string()
            )
        );
        assert_eq!(f[0].expected, "printable ASCII at column 59");
        assert_eq!(f[0].found, found);
        // Every record is read at its columns: counts and totals as in the sample.
        let s = &r.summary;
        assert_eq!((s.entries, s.addenda, s.batches), (4, 1, 1));
        assert_eq!(s.total_credit_minor, 787_549);
    }
}

/// The payroll sample with `with` in place of the byte at `line` (1-based), column
/// `col` (1-based).
fn replaced(line: usize, col: usize, with: &[u8]) -> Vec<u8> {
    let at = (line - 1) * 95 + col - 1;
    [&PAYROLL[..at], with, &PAYROLL[at + 1..]].concat()
}

/// (code, line, byte offset, field label, columns, expected) of each finding.
type Brief = (FindingCode, u64, u64, String, String, String);

fn brief(data: &[u8]) -> Vec<Brief> {
    let r = check(data, ValidateOptions::default()).unwrap();
    r.summary
        .findings
        .iter()
        .map(|f| {
            let (label, columns) = f
                .field
                .map_or((String::new(), String::new()), |x| (x.label(), x.columns()));
            let at = (f.position.line(), f.position.byte_offset());
            (f.code, at.0, at.1, label, columns, f.expected.clone())
        })
        .collect()
}

fn non_ascii_at(line: u64, byte_offset: u64, label: &str, col: u16) -> Brief {
    (
        FindingCode::NonAsciiByte,
        line,
        byte_offset,
        label.to_string(),
        format!("{col}-{col}"),
        format!("printable ASCII at column {col}"),
    )
}

#[test]
fn a_non_ascii_character_is_one_finding_in_a_text_or_a_numeric_field() {
    // Line 3 (record 2, bytes 190-283) is the first entry: ALICE SMITH, 0000250000,
    // RDFI 23138010. An É in its name, its amount, its RDFI routing number: one
    // finding each, at its column, in UTF-8 (2 bytes) or Latin-1 (1 byte). No
    // field_format finding on the amount or the routing number, and no batch or
    // file control total mismatch (debit/credit totals, entry hash) for what could
    // not be read.
    let e_acute: [&[u8]; 2] = [b"\xC3\x89", b"\xC9"];
    for (col, field) in [
        (59, "entry_detail.individual_name"),
        (35, "entry_detail.amount"),
        (30, "entry_detail.amount"),
        (6, "entry_detail.rdfi_identification"),
        (2, "entry_detail.transaction_code"),
    ] {
        for e in e_acute {
            let data = replaced(3, usize::from(col), e);
            let at = 190 + u64::from(col) - 1;
            assert_eq!(
                brief(&data),
                vec![non_ascii_at(3, at, field, col)],
                "column {col}, {e:?}"
            );
        }
    }
}

#[test]
fn a_non_ascii_letter_in_a_name_leaves_the_totals_compared() {
    // The name unreadable, and the batch control's credit total wrong (columns
    // 33-44 of line 8): the amounts were read, so the mismatch is still a finding.
    let data = replaced(3, 59, b"\xC3\x89");
    let at = 7 * 95 + 1 + 32;
    let data = [&data[..at], b"000000787548", &data[at + 12..]].concat();
    let got = brief(&data);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(
        got[0],
        non_ascii_at(3, 248, "entry_detail.individual_name", 59)
    );
    assert_eq!(
        (got[1].0, got[1].1, got[1].3.as_str()),
        (
            FindingCode::TotalCreditMismatch,
            8,
            "batch_control.total_credit_entry_dollar_amount"
        )
    );
    // An unreadable amount leaves the entry hash compared (and the other entries'
    // routing numbers in it): a wrong hash is still a finding.
    let data = replaced(3, 35, b"\xC9");
    let data = [&data[..7 * 95 + 10], b"0063016147", &data[7 * 95 + 20..]].concat();
    let codes: Vec<_> = brief(&data).into_iter().map(|b| (b.0, b.1)).collect();
    assert_eq!(
        codes,
        [
            (FindingCode::NonAsciiByte, 3),
            (FindingCode::EntryHashMismatch, 8)
        ]
    );
}

#[test]
fn a_non_ascii_byte_in_other_records_names_their_layout_and_cascades_nowhere() {
    let cases: [(usize, u16, u64, &str); 6] = [
        // File header: immediate origin name.
        (1, 70, 69, "file_header.immediate_origin_name"),
        // Batch header: the company identification and batch number the control
        // repeats, the company name.
        (2, 45, 95 + 44, "batch_header.company_identification"),
        (2, 90, 95 + 89, "batch_header.batch_number"),
        (2, 6, 95 + 5, "batch_header.company_name"),
        // The addenda 05 (line 5): its type code.
        (5, 3, 4 * 95 + 2, "addenda.addenda_type_code"),
        // Batch control: its credit total.
        (
            8,
            40,
            7 * 95 + 39,
            "batch_control.total_credit_entry_dollar_amount",
        ),
    ];
    for (line, col, at, field) in cases {
        let data = replaced(line, usize::from(col), b"\xC9");
        assert_eq!(
            brief(&data),
            vec![non_ascii_at(line as u64, at, field, col)],
            "line {line} column {col}"
        );
    }
}

#[test]
fn findings_are_bounded() {
    // 20,000 garbage records: the findings stop at the limit and say how many were dropped.
    let mut f = Vec::new();
    for _ in 0..20_000 {
        f.extend_from_slice(&[b'X'; 94]);
        f.push(b'\n');
    }
    let r = check(&f[..], ValidateOptions::default()).unwrap();
    // The findings about the end of the file (here: no file control) are always kept.
    assert_eq!(r.summary.findings.len(), FINDINGS_MAX + 2);
    assert_eq!(
        r.summary.findings[FINDINGS_MAX].code,
        FindingCode::MissingFileControl
    );
    let last = r.summary.findings.last().unwrap();
    assert_eq!(last.found, "10001 more findings not kept");
}

#[test]
fn a_flood_of_addenda_findings_hides_no_control_finding() {
    // The CTX sample's entry with 20,001 addenda instead of 3: each one past the
    // 9,999th is a finding, far more than the limit; the entry's, the batch control's
    // and the file control's findings are still kept, in file order, before the one
    // saying how many were dropped.
    let ctx = include_str!("../../../../samples/ctx-remittance.ach");
    let lines: Vec<&str> = ctx.lines().collect();
    let mut data = String::new();
    for l in &lines[..3] {
        data.push_str(l);
        data.push('\n');
    }
    let n = 20_001;
    for i in 1..=n {
        data.push_str(&format!("705{:<80}{:04}0000001\n", "RMR*IV*X~", i % 10_000));
    }
    for l in &lines[6..] {
        data.push_str(l);
        data.push('\n');
    }
    let r = check(data.as_bytes(), ValidateOptions::default()).unwrap();
    let f = &r.summary.findings;
    let tail: Vec<_> = f[FINDINGS_MAX..]
        .iter()
        .map(|f| {
            (
                f.code,
                f.position.line(),
                f.field.map(|x| x.name).unwrap_or(""),
                f.expected.as_str(),
                f.found.as_str(),
            )
        })
        .collect();
    use FindingCode::*;
    assert_eq!(
        tail,
        vec![
            (
                AddendaCount,
                3,
                "number_of_addenda_records",
                "9999 (addenda records that follow)",
                "0003"
            ),
            (
                EntryAddendaCountMismatch,
                20005,
                "entry_addenda_count",
                "020002",
                "000004"
            ),
            (BlockCountMismatch, 20006, "block_count", "002001", "000001"),
            (
                EntryAddendaCountMismatch,
                20006,
                "entry_addenda_count",
                "00020002",
                "00000004"
            ),
            (
                TooManyFindings,
                20009,
                "",
                "at most 10000 findings",
                "10004 more findings not kept"
            ),
        ]
    );
}
