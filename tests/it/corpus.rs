//! The real-world NACHA files of the test corpus (`ach/`), with the outcomes their
//! MANIFEST states. Where we are stricter or more lenient than the peer (moov-io/ach),
//! the test says why.

use crate::common;

use clearledger::findings::{FindingCode, Severity};
use clearledger::formats::nacha::{self, ValidateOptions};
use std::path::Path;

struct Expect {
    entries: u64,
    addenda: u64,
    batches: u64,
    debit: u128,
    credit: u128,
}

fn read(path: &Path, opts: ValidateOptions) -> nacha::ReadResult {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    nacha::check(f, opts).unwrap()
}

fn errors(r: &nacha::ReadResult) -> Vec<(FindingCode, u64)> {
    r.summary
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.code, f.position.line()))
        .collect()
}

fn warnings(r: &nacha::ReadResult) -> Vec<FindingCode> {
    r.summary
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .map(|f| f.code)
        .collect()
}

#[test]
fn valid_files_are_accepted_with_exact_totals() {
    let corpus = common::corpus();
    let cases: &[(&str, Expect, &[FindingCode])] = &[
        (
            "adv-read.ach",
            Expect {
                entries: 2,
                addenda: 0,
                batches: 1,
                debit: 250000,
                credit: 50000,
            },
            &[],
        ),
        (
            "ccd-debit.ach",
            Expect {
                entries: 2,
                addenda: 0,
                batches: 1,
                debit: 500125,
                credit: 0,
            },
            &[],
        ),
        (
            "contested-return.ach",
            Expect {
                entries: 1,
                addenda: 3,
                batches: 1,
                debit: 0,
                credit: 100000000,
            },
            &[],
        ),
        (
            "cor-example.ach",
            Expect {
                entries: 1,
                addenda: 1,
                batches: 1,
                debit: 0,
                credit: 0,
            },
            &[],
        ),
        (
            "ctx-debit.ach",
            Expect {
                entries: 1,
                addenda: 2,
                batches: 1,
                debit: 100000000,
                credit: 0,
            },
            &[],
        ),
        (
            "dishonored-return.ach",
            Expect {
                entries: 2,
                addenda: 2,
                batches: 1,
                debit: 48000,
                credit: 0,
            },
            &[],
        ),
        (
            "iat-mixedCreditDebit.ach",
            Expect {
                entries: 2,
                addenda: 18,
                batches: 1,
                debit: 100000,
                credit: 100000,
            },
            &[],
        ),
        (
            "pos-debit.ach",
            Expect {
                entries: 1,
                addenda: 1,
                batches: 1,
                debit: 100000000,
                credit: 0,
            },
            &[],
        ),
        (
            "ppd-debit-fixedLength.ach",
            Expect {
                entries: 1,
                addenda: 0,
                batches: 1,
                debit: 10500,
                credit: 0,
            },
            &[],
        ),
        // Two records with trailing blanks trimmed: accepted, each with a warning.
        (
            "ppd-debit.ach",
            Expect {
                entries: 1,
                addenda: 0,
                batches: 1,
                debit: 100000000,
                credit: 0,
            },
            &[FindingCode::TrimmedRecord, FindingCode::TrimmedRecord],
        ),
        (
            "return-WEB.ach",
            Expect {
                entries: 2,
                addenda: 2,
                batches: 2,
                debit: 12354,
                credit: 4565,
            },
            &[],
        ),
        (
            "small-leejayhsu.ach",
            Expect {
                entries: 1,
                addenda: 0,
                batches: 1,
                debit: 100000000,
                credit: 0,
            },
            &[],
        ),
        (
            "tel-debit.ach",
            Expect {
                entries: 1,
                addenda: 0,
                batches: 1,
                debit: 50000,
                credit: 0,
            },
            &[],
        ),
        (
            "two-micro-deposits.ach",
            Expect {
                entries: 6,
                addenda: 6,
                batches: 2,
                debit: 120,
                credit: 120,
            },
            &[],
        ),
        (
            "web-debit.ach",
            Expect {
                entries: 6,
                addenda: 0,
                batches: 3,
                debit: 15000,
                credit: 26820,
            },
            &[],
        ),
    ];
    for (name, e, warn) in cases {
        let r = read(
            &corpus.join("ach/valid").join(name),
            ValidateOptions::default(),
        );
        assert_eq!(errors(&r), vec![], "{name}");
        assert_eq!(warnings(&r), warn.to_vec(), "{name}");
        let s = &r.summary;
        assert_eq!(
            (s.entries, s.addenda, s.batches),
            (e.entries, e.addenda, e.batches),
            "{name}"
        );
        assert_eq!(
            (s.total_debit_minor, s.total_credit_minor),
            (e.debit, e.credit),
            "{name}"
        );
    }
}

#[test]
fn small_leejayhsu_matches_its_readme() {
    // The nacha crate's README shows entry_hash 0023138010 and total_debit 100000000.
    let corpus = common::corpus();
    let mut entries = Vec::new();
    let f = std::fs::File::open(corpus.join("ach/valid/small-leejayhsu.ach")).unwrap();
    let r = nacha::read_file(
        f,
        ValidateOptions::default(),
        &mut |ev| {
            if let nacha::Event::Entry(e) = ev {
                entries.push(e)
            }
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r.summary.total_debit_minor, 100000000);
    assert_eq!(entries.len(), 1);
    assert_eq!(&entries[0].rdfi_routing[..8], "23138010");
}

#[test]
fn stricter_than_the_peer_where_the_rules_say_so() {
    let corpus = common::corpus();
    // moov-io/ach reads this IAT file, but batch 2 declares service class 220 (credits
    // only) and carries a debit (transaction code 27). NACHA reject: we refuse it.
    let r = read(
        &corpus.join("ach/valid/20180716-IAT-A17-A18.ach"),
        ValidateOptions::default(),
    );
    assert_eq!(errors(&r), vec![(FindingCode::DebitInCreditBatch, 20)]);

    // moov-io's own test reads issue702 only with BypassDestinationValidation: its
    // immediate destination is "YYYYYYYYY". Same here: rejected by default, accepted
    // (with the finding downgraded to a warning) with the same relaxation.
    let path = corpus.join("ach/valid/issue702-crlf.ach");
    let strict = read(&path, ValidateOptions::default());
    assert_eq!(errors(&strict), vec![(FindingCode::FieldFormat, 1)]);
    let f = &strict
        .summary
        .findings
        .iter()
        .find(|f| f.severity == Severity::Error)
        .unwrap();
    assert_eq!(f.field.unwrap().name, "immediate_destination");
    assert_eq!(f.found, " YYYYYYYYY");
    let relaxed = read(
        &path,
        ValidateOptions {
            bypass_destination_check: true,
            ..ValidateOptions::default()
        },
    );
    assert_eq!(errors(&relaxed), vec![]);
    assert_eq!(
        warnings(&relaxed),
        vec![FindingCode::TrimmedRecord, FindingCode::FieldFormat]
    );
    assert_eq!(
        (
            relaxed.summary.entries,
            relaxed.summary.addenda,
            relaxed.summary.batches
        ),
        (3, 3, 3)
    );
}

#[test]
fn lenient_files_as_the_peer_treats_them() {
    let corpus = common::corpus();
    let dir = corpus.join("ach/lenient");
    // Records padded past 94 with blanks: accepted, one warning per long record.
    let r = read(&dir.join("long-line.ach"), ValidateOptions::default());
    assert_eq!(errors(&r), vec![]);
    assert_eq!(warnings(&r), vec![FindingCode::LongRecord; 3]);
    assert_eq!(r.summary.entries, 1);
    // A record shorter than 94: padded, accepted, warned.
    let r = read(&dir.join("short-line.ach"), ValidateOptions::default());
    assert_eq!(errors(&r), vec![]);
    assert_eq!(warnings(&r), vec![FindingCode::TrimmedRecord]);
    let w = r
        .summary
        .findings
        .iter()
        .find(|f| f.code == FindingCode::TrimmedRecord)
        .unwrap();
    assert_eq!(
        (
            w.position.line(),
            w.position.record_index().unwrap_or(0),
            w.position.byte_offset()
        ),
        (5, 4, 380)
    );
    assert_eq!(w.found, "74 bytes");
    // The vendor's zero file: rejected by default, as the peer does ("ImmediateDestination
    // 100067554 routing number checksum mismatch").
    let r = read(&dir.join("FISERV-ZEROFILE.ach"), ValidateOptions::default());
    let e = errors(&r);
    assert_eq!(e[0], (FindingCode::CheckDigit, 1));
    let f = r
        .summary
        .findings
        .iter()
        .find(|f| f.code == FindingCode::CheckDigit)
        .unwrap();
    assert_eq!(f.found, "100067554");
    assert_eq!(f.expected, "check digit 8 for routing 10006755");
    // A non-standard return reason code: the peer accepts it only with an option; we
    // have none, and refuse it.
    let r = read(
        &dir.join("return-PPD-custom-reason-code.ach"),
        ValidateOptions::default(),
    );
    assert_eq!(errors(&r), vec![(FindingCode::ReturnReasonCode, 4)]);
    let f = r
        .summary
        .findings
        .iter()
        .find(|f| f.code == FindingCode::ReturnReasonCode)
        .unwrap();
    assert_eq!(f.found, "R97");
}

#[test]
fn invalid_files_are_rejected_with_the_expected_first_error() {
    let corpus = common::corpus();
    let cases: &[(&str, FindingCode, u64)] = &[
        (
            "1e5RecordBefore1or8.ach",
            FindingCode::FileHeaderNotFirst,
            1,
        ),
        (
            "1k8RecordFollowing9Record.ach",
            FindingCode::BatchNotClosed,
            10,
        ),
        ("1qFormatCodeIncorrect.ach", FindingCode::InvalidValue, 1),
        ("20110729A-invalid.ach", FindingCode::FieldFormat, 1),
        ("2lCompanyNameAllZeros.ach", FindingCode::InvalidValue, 2),
        ("adv-noFileControl.ach", FindingCode::MissingFileControl, 5),
        ("crasher-4.ach", FindingCode::FileHeaderNotFirst, 1),
        ("extended-ascii.ach", FindingCode::NonAsciiByte, 15),
        ("iat-invalidBatchControl.ach", FindingCode::CheckDigit, 1),
        ("iat-invalidEntryDetail.ach", FindingCode::CheckDigit, 1),
        (
            "invalid-two-micro-deposits.ach",
            FindingCode::FieldFormat,
            15,
        ),
        (
            "pos-invalidReturnFile.ach",
            FindingCode::ReturnReasonCode,
            4,
        ),
        (
            "ppd-debit-fixedLengthInvalid.ach",
            FindingCode::InvalidValue,
            1,
        ),
        (
            "ppd-debit-invalid-entryDetail-checkDigit.ach",
            FindingCode::CheckDigit,
            3,
        ),
        (
            "return-no-file-header-control.ach",
            FindingCode::FileHeaderNotFirst,
            1,
        ),
        ("web-invalidNOCFile.ach", FindingCode::ChangeCode, 4),
    ];
    for (name, code, line) in cases {
        let r = read(
            &corpus.join("ach/invalid").join(name),
            ValidateOptions::default(),
        );
        let e = errors(&r);
        assert_eq!(e.first(), Some(&(*code, *line)), "{name}: {e:?}");
    }
}

#[test]
fn invalid_files_name_the_rule_the_peer_names() {
    let corpus = common::corpus();
    let dir = corpus.join("ach/invalid");
    let has = |name: &str, code: FindingCode| {
        let r = read(&dir.join(name), ValidateOptions::default());
        r.summary
            .findings
            .iter()
            .any(|f| f.code == code && f.severity == Severity::Error)
    };
    // Reject reason 1k: records after the file control.
    assert!(has(
        "1k8RecordFollowing9Record.ach",
        FindingCode::RecordAfterFileControl
    ));
    // moov: "TotalDebitEntryDollarAmount calculated 0 is out-of-balance with batch control 44".
    let r = read(
        &dir.join("invalid-two-micro-deposits.ach"),
        ValidateOptions::default(),
    );
    let f = r
        .summary
        .findings
        .iter()
        .find(|f| f.code == FindingCode::TotalDebitMismatch)
        .unwrap();
    assert_eq!(
        (f.position.line(), f.expected.as_str(), f.found.as_str()),
        (17, "000000000000", "000000000044")
    );
    assert_eq!(f.field.unwrap().columns(), "21-32");
    // moov: header 23138010 is not equal to control 23100000 (ODFI).
    let r = read(
        &dir.join("iat-invalidBatchControl.ach"),
        ValidateOptions::default(),
    );
    let f = r
        .summary
        .findings
        .iter()
        .find(|f| f.code == FindingCode::OdfiMismatch)
        .unwrap();
    assert_eq!(
        (f.expected.as_str(), f.found.as_str()),
        ("23138010 (batch header)", "23100000")
    );
    // moov: ErrTransactionCode.
    assert!(has(
        "iat-invalidEntryDetail.ach",
        FindingCode::TransactionCode
    ));
    // moov: a fixed-length file with one extra character.
    let r = read(
        &dir.join("ppd-debit-fixedLengthInvalid.ach"),
        ValidateOptions::default(),
    );
    assert!(
        r.summary
            .findings
            .iter()
            .any(|f| f.code == FindingCode::RecordLength)
    );
}

#[test]
fn the_100k_benchmark_file_validates_and_repeats_trace_numbers() {
    let corpus = common::corpus();
    let gz = std::fs::File::open(corpus.join("ach/bench/PPD-200-batches-100000-entries.ach.gz"))
        .unwrap();
    let mut traces = std::collections::HashMap::<String, u32>::new();
    let r = nacha::read_file(
        flate2::read::GzDecoder::new(gz),
        ValidateOptions::default(),
        &mut |ev| {
            if let nacha::Event::Entry(e) = ev {
                *traces.entry(e.trace_number).or_default() += 1;
            }
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(errors(&r), vec![]);
    assert_eq!(r.summary.entries, 100_199);
    assert_eq!(r.summary.batches, 200);
    assert_eq!(r.bytes, 9557950);
    let repeated = traces.values().filter(|&&n| n > 1).count();
    assert_eq!(repeated, 3_556, "trace numbers seen more than once");
}
