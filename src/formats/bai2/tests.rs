//! The reader's unit tests and the corpus files.

use super::*;
use crate::findings::{FindingCode, Severity};
use crate::formats::statement::{BalanceKind, EntryStatus};
use chrono::NaiveDate;

fn read_bytes(b: &[u8]) -> (Vec<Statement>, StatementRead) {
    let mut v = Vec::new();
    let r = read(b, &mut |s| v.push(s)).unwrap();
    (v, r)
}

#[test]
fn generated_file_reads_back_without_findings() {
    let mut out = Vec::new();
    generate_bai2(7, 25, 42, &mut out).unwrap();
    let (st, r) = read_bytes(&out);
    assert_eq!(r.findings, vec![], "{}", String::from_utf8_lossy(&out));
    assert_eq!((r.statements, r.entries), (7, 175));
    assert_eq!(st.len(), 7);
    assert!(
        out.windows(3).any(|w| w == b"88,"),
        "texts continued in 88s"
    );
    for seed in 1..4 {
        let mut out = Vec::new();
        generate_bai2(30, 40, seed, &mut out).unwrap();
        let (_, r) = read_bytes(&out);
        assert_eq!(
            (r.findings.len(), r.statements, r.entries),
            (0, 30, 1200),
            "seed {seed}"
        );
    }
}

fn corpus(name: &str) -> std::path::PathBuf {
    crate::test_support::corpus_dir().join("bai2").join(name)
}

fn read_corpus(name: &str) -> (Vec<Statement>, StatementRead) {
    let path = corpus(name);
    let f = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut v = Vec::new();
    let r = read(std::io::BufReader::new(f), &mut |s| v.push(s)).unwrap();
    (v, r)
}

/// (code, severity, line, column, tag) of every finding.
fn where_(r: &StatementRead) -> Vec<(FindingCode, Severity, u64, u64, String)> {
    r.findings
        .iter()
        .map(|f| {
            let (line, col, tag) = match &f.position {
                crate::findings::Position::Text(p) => (
                    p.line,
                    p.column,
                    p.tag.as_deref().unwrap_or_default().to_string(),
                ),
                p => (p.line(), 0, String::new()),
            };
            (f.code, f.severity, line, col, tag)
        })
        .collect()
}

use FindingCode as C;
use Severity::{Error as E, Warning as W};

fn t(
    code: FindingCode,
    sev: Severity,
    line: u64,
    col: u64,
    tag: &str,
) -> (FindingCode, Severity, u64, u64, String) {
    (code, sev, line, col, tag.to_string())
}

/// A valid file: one group, one account, two details; every total right.
const BASE: [&str; 8] = [
    "01,SENDER,RECEIVER,260301,0800,77,,,2/",
    "02,RECEIVER,BANKID,1,260228,2400,USD,2/",
    "03,123456,,010,100000,,,015,125000,,/",
    "16,195,50000,Z,BREF1,CREF1,WIRE IN/",
    "16,475,25000,0,,,CHECK 123/",
    "49,300000,4/",
    "98,300000,1,6/",
    "99,300000,1,8/",
];

fn file(lines: &[&str]) -> Vec<u8> {
    lines.join("\n").into_bytes()
}

fn with(i: usize, line: &str) -> Vec<u8> {
    let mut l = BASE.to_vec();
    l[i] = line;
    file(&l)
}

#[test]
fn a_valid_file_maps_onto_the_model() {
    let (st, r) = read_bytes(&file(&BASE));
    assert_eq!(r.findings, vec![]);
    assert_eq!((r.format, r.statements, r.entries), ("bai2", 1, 2));
    let s = &st[0];
    assert_eq!(s.format, "bai2");
    assert_eq!(s.kind, StatementKind::Final);
    assert_eq!(s.account, "123456");
    assert_eq!(s.currency.as_deref(), Some("USD"));
    assert_eq!(s.servicer.as_deref(), Some("BANKID"));
    assert_eq!(s.id, "77");
    assert_eq!(s.sequence.as_deref(), Some("260228,2400,2"));
    assert_eq!(s.date, NaiveDate::from_ymd_opt(2026, 2, 28));
    let b: Vec<_> = s
        .balances
        .iter()
        .map(|b| (b.kind, b.code.as_str(), b.amount_minor))
        .collect();
    assert_eq!(
        b,
        vec![
            (BalanceKind::OpeningBooked, "010", 100000),
            (BalanceKind::ClosingBooked, "015", 125000)
        ]
    );
    let e = &s.entries;
    assert_eq!(
        (e[0].entry_no, e[0].credit, e[0].amount_minor),
        (1, true, 50000)
    );
    assert_eq!(
        (e[1].entry_no, e[1].credit, e[1].amount_minor),
        (2, false, 25000)
    );
    assert_eq!(e[0].bank_ref.as_deref(), Some("BREF1"));
    assert_eq!(e[0].customer_ref.as_deref(), Some("CREF1"));
    assert_eq!(
        (e[1].bank_ref.clone(), e[1].customer_ref.clone()),
        (None, None)
    );
    assert_eq!(e[0].bank_tx_code.as_deref(), Some("195"));
    assert_eq!(e[1].remittance.as_deref(), Some("CHECK 123"));
    assert_eq!(e[0].status, EntryStatus::Booked);
    assert_eq!(e[0].booking_date, NaiveDate::from_ymd_opt(2026, 2, 28));
    assert!(!e[0].reversal);
    assert_eq!(e[0].position.line(), 4);
}

#[test]
fn one_byte_reads_give_the_same_result() {
    let bytes = file(&BASE);
    let (whole, r1) = read_bytes(&bytes);
    let mut v = Vec::new();
    let r2 = read(std::io::BufReader::with_capacity(1, &bytes[..]), &mut |s| {
        v.push(s)
    })
    .unwrap();
    assert_eq!((whole, r1), (v, r2));
    // CRLF and a final newline change nothing but byte offsets.
    let crlf = format!("{}\r\n", BASE.join("\r\n"));
    let (_, r3) = read_bytes(crlf.as_bytes());
    assert_eq!((r3.findings, r3.entries), (vec![], 2));
}

#[test]
fn the_layout_traps_of_the_corpus() {
    // Several records on one line, joined after '/' with or without blanks; a 16 text
    // ended by a newline without '/'; an 88 continuing the text; an 88 splitting the 03's
    // type-code group; a text that runs onto the next line without an 88.
    let f = file(&[
        "01,SENDER,RECEIVER,260301,0800,77,,,2/02,RECEIVER,BANKID,1,260228,2400,,2/",
        "03,123456,,010,100000,,,015/",
        "88,125000,,/   16,195,50000,Z,BREF1,CREF1,WIRE, IN 22/03/66",
        "88,MORE TEXT/ 16,475,25000,0,,,CHECK",
        "123   /",
        "49,300000,6/   98,300000,1,8/",
        "99,300000,1,10/",
    ]);
    let (st, r) = read_bytes(&f);
    assert_eq!(where_(&r), vec![t(C::TagSyntax, W, 5, 1, "16")]);
    let s = &st[0];
    assert_eq!(
        s.currency.as_deref(),
        Some("USD"),
        "no currency anywhere: USD"
    );
    assert_eq!(
        s.balance(BalanceKind::ClosingBooked)
            .map(|b| b.amount_minor),
        Some(125000)
    );
    assert_eq!(
        s.entries[0].remittance.as_deref(),
        Some("WIRE, IN 22/03/66 MORE TEXT")
    );
    assert_eq!(s.entries[1].remittance.as_deref(), Some("CHECK 123"));
}

#[test]
fn funds_types_and_their_fields() {
    let f = file(&[
        "01,SENDER,RECEIVER,260301,0800,77,,,2/",
        "02,RECEIVER,BANKID,1,260228,2400,USD,2/",
        "03,123456,EUR,010,-100,,,100,70,2,S,10,20,40,400,30,1,D,2,0,10,1,20/",
        "16,195,10,S,1,2,7,R1,C1,S TEXT/",
        "16,195,20,V,260227,1200,R2,C2,V TEXT/",
        "16,475,30,D,1,0,30,R3,C3,D TEXT/",
        "49,60,5/",
        "98,60,1,7/",
        "99,60,1,9/",
    ]);
    let (st, r) = read_bytes(&f);
    assert_eq!(r.findings, vec![]);
    let s = &st[0];
    assert_eq!(
        s.currency.as_deref(),
        Some("EUR"),
        "the 03's currency first"
    );
    assert_eq!(s.balances.len(), 1, "summaries 100/400 are no balances");
    assert_eq!(s.balances[0].amount_minor, -100);
    let refs: Vec<_> = s
        .entries
        .iter()
        .map(|e| {
            (
                e.bank_ref.clone().unwrap(),
                e.remittance.clone().unwrap(),
                e.value_date,
            )
        })
        .collect();
    assert_eq!(
        refs,
        vec![
            ("R1".into(), "S TEXT".into(), None),
            (
                "R2".into(),
                "V TEXT".into(),
                NaiveDate::from_ymd_opt(2026, 2, 27)
            ),
            ("R3".into(), "D TEXT".into(), None),
        ]
    );
    assert_eq!(s.entries[0].currency, "EUR");
}

#[test]
fn implied_decimals_follow_the_currency() {
    // JPY has no decimals, BHD three: the integer is the minor units either way.
    for ccy in ["JPY", "BHD"] {
        let l3 = format!("03,123456,{ccy},010,100000,,,015,125000,,/");
        let (st, r) = read_bytes(&with(2, &l3));
        assert_eq!(r.findings, vec![], "{ccy}");
        assert_eq!(st[0].entries[0].amount_minor, 50000);
        assert_eq!(st[0].entries[0].currency, ccy);
    }
}

/// A line put in place of line `i` of a valid file, and the finding it gives: code,
/// severity, line, column, record code.
type FieldCase = (
    usize,
    &'static str,
    (FindingCode, Severity, u64, u64, &'static str),
);

const FIELD_CASES: &[FieldCase] = &[
    (
        1,
        "02,RECEIVER,BANKID,1,260230,2400,USD,2/",
        (C::DateFormat, E, 2, 22, "02"),
    ),
    (
        1,
        "02,RECEIVER,BANKID,1,260228,2500,USD,2/",
        (C::DateFormat, E, 2, 29, "02"),
    ),
    (
        1,
        "02,RECEIVER,BANKID,1,260228,2400,XXY,2/",
        (C::CurrencyCode, E, 2, 34, "02"),
    ),
    (
        1,
        "02,RECEIVER,BANKID,4,260228,2400,USD,2/",
        (C::TagSyntax, E, 2, 20, "02"),
    ),
    (
        1,
        "02,RECEIVER,BANKID,1,260228,2400,USD,7/",
        (C::TagSyntax, E, 2, 38, "02"),
    ),
    (
        0,
        "01,SENDER,RECEIVER,260301,0800,77,,,1/",
        (C::TagSyntax, E, 1, 37, "01"),
    ),
    (
        3,
        "16,195,500.00,Z,BREF1,CREF1,WIRE IN/",
        (C::AmountFormat, E, 4, 8, "16"),
    ),
    (
        3,
        "16,195,+50000,Z,BREF1,CREF1,WIRE IN/",
        (C::AmountFormat, E, 4, 8, "16"),
    ),
    (
        3,
        "16,890,50000,Z,BREF1,CREF1,WIRE IN/",
        (C::TagSyntax, E, 4, 4, "16"),
    ),
    (
        3,
        "16,195,50000,X,BREF1,CREF1,WIRE IN/",
        (C::TagSyntax, E, 4, 14, "16"),
    ),
    (
        3,
        "16,195,50000,V,260230,,BREF1,CREF1,WIRE IN/",
        (C::DateFormat, E, 4, 16, "16"),
    ),
    (
        2,
        "03,123456,,01,100000,,,015,125000,,/",
        (C::TagSyntax, E, 3, 12, "03"),
    ),
    (
        2,
        "03,,,010,100000,,,015,125000,,/",
        (C::TagSyntax, E, 3, 4, "03"),
    ),
    (
        2,
        "03,123456,,010,1e5,,,015,125000,,/",
        (C::AmountFormat, E, 3, 16, "03"),
    ),
];

#[test]
fn field_errors_say_where() {
    let cases = FIELD_CASES;
    for (i, line, want) in cases {
        let (_, r) = read_bytes(&with(*i, line));
        let got = where_(&r);
        let want = t(want.0, want.1, want.2, want.3, want.4);
        assert!(got.contains(&want), "{line}: {got:?}");
        assert!(r.findings.iter().any(|f| f.is_error()), "{line}");
    }
}

#[test]
fn control_totals_and_counts() {
    let (_, r) = read_bytes(&with(5, "49,300001,5/"));
    let f: Vec<_> = r
        .findings
        .iter()
        .map(|f| {
            (
                f.code,
                f.position.line(),
                f.position.column(),
                f.expected.as_str(),
                f.found.as_str(),
            )
        })
        .collect();
    assert_eq!(
        f,
        vec![
            (
                C::ControlTotalMismatch,
                6,
                Some(4),
                "300000 (the sum of the amounts of the account's 03 and 16 records)",
                "300001"
            ),
            (
                C::ControlCountMismatch,
                6,
                Some(11),
                "4 (records of the account, 03 to 49, 88s included)",
                "5"
            ),
            // 98 adds the 49 as written.
            (
                C::ControlTotalMismatch,
                7,
                Some(4),
                "300001 (the sum of the group's 49 control totals)",
                "300000"
            ),
        ]
    );
    let (_, r) = read_bytes(&with(6, "98,300000,2,7/"));
    assert_eq!(
        where_(&r),
        vec![
            t(C::ControlCountMismatch, E, 7, 11, "98"),
            t(C::ControlCountMismatch, E, 7, 13, "98")
        ]
    );
    let (_, r) = read_bytes(&with(7, "99,-300000,2,9/"));
    assert_eq!(
        where_(&r),
        vec![
            t(C::ControlTotalMismatch, E, 8, 4, "99"),
            t(C::ControlCountMismatch, E, 8, 12, "99"),
            t(C::ControlCountMismatch, E, 8, 14, "99"),
        ]
    );
    // A blank control total is a warning, not checked.
    let (_, r) = read_bytes(&with(5, "49,,4/"));
    assert_eq!(where_(&r), vec![t(C::TagSyntax, W, 6, 4, "49")]);
}

#[test]
fn structure_errors() {
    // A 16 outside an account, a missing 49, a missing 99, a record after 99, an 88 first,
    // an empty file, a file of no account.
    let mut l = BASE.to_vec();
    l.insert(2, "16,195,1,Z,,,X/");
    let (_, r) = read_bytes(&file(&l));
    assert_eq!(where_(&r)[0], t(C::RecordOrder, E, 3, 1, "16"));
    let mut l = BASE.to_vec();
    l.remove(5);
    let (st, r) = read_bytes(&file(&l));
    assert_eq!(where_(&r)[0], t(C::MissingTag, E, 6, 1, "98"));
    assert_eq!(st.len(), 1, "the account is still emitted");
    let (_, r) = read_bytes(&file(&BASE[..7]));
    assert_eq!(where_(&r), vec![t(C::MissingTag, E, 7, 15, "99")]);
    let mut l = BASE.to_vec();
    l.push("03,1,/");
    let (_, r) = read_bytes(&file(&l));
    assert_eq!(where_(&r), vec![t(C::RecordOrder, E, 9, 1, "03")]);
    let mut l = BASE.to_vec();
    l.insert(0, "88,X/");
    let (_, r) = read_bytes(&file(&l));
    assert_eq!(where_(&r)[0], t(C::RecordOrder, E, 1, 1, "88"));
    let (_, r) = read_bytes(b"");
    assert_eq!(where_(&r), vec![t(C::EmptyFile, E, 1, 1, "file")]);
    let (_, r) = read_bytes(&file(&[BASE[0], BASE[1], "98,0,0,2/", "99,0,1,4/"]));
    assert_eq!(where_(&r), vec![t(C::NoStatements, E, 1, 1, "01")]);
    // A text closed by '/' and a line with no record code: not a continuation.
    let mut l = BASE.to_vec();
    l.insert(4, "MORE");
    let (_, r) = read_bytes(&file(&l));
    assert_eq!(where_(&r)[0], t(C::TagSyntax, E, 5, 1, "line"));
    // Something after a non-text record's '/'.
    let (_, r) = read_bytes(&with(5, "49,300000,4/ X"));
    assert_eq!(where_(&r), vec![t(C::TagSyntax, E, 6, 14, "49")]);
}

#[test]
fn bytes_outside_ascii_and_limits() {
    let (st, r) = read_bytes(&with(3, "16,195,50000,Z,BREF1,CREF1,CAFÉ/"));
    assert_eq!(where_(&r), vec![t(C::NonAsciiByte, W, 4, 31, "16")]);
    assert_eq!(st[0].entries[0].remittance.as_deref(), Some("CAFÉ"));
    let (_, r) = read_bytes(&with(3, "16,195,50000,Z,BRÉF1,CREF1,CAFE/"));
    assert_eq!(where_(&r), vec![t(C::NonAsciiByte, E, 4, 18, "16")]);
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend(file(&BASE));
    let (_, r) = read_bytes(&bom);
    assert_eq!(where_(&r), vec![t(C::ByteOrderMark, W, 1, 1, "line")]);
    let long = format!(
        "{}\n16,195,1,Z,,,{}",
        BASE[..4].join("\n"),
        "X".repeat(2 << 20)
    );
    let (_, r) = read_bytes(long.as_bytes());
    assert_eq!(where_(&r), vec![t(C::SizeLimit, E, 5, 1, "line")]);
}

#[test]
fn same_day_reports_are_intraday_and_pending() {
    let (st, r) = read_bytes(&with(1, "02,RECEIVER,BANKID,1,260228,1200,USD,3/"));
    // 010 + pending credits - debits = 015 holds: no finding.
    assert_eq!(r.findings, vec![]);
    assert_eq!(st[0].kind, StatementKind::Intraday);
    assert!(
        st[0]
            .entries
            .iter()
            .all(|e| e.status == EntryStatus::Pending)
    );
    let (st, _) = read_bytes(&with(1, "02,RECEIVER,BANKID,1,260228,1200,USD,1/"));
    assert_eq!(st[0].kind, StatementKind::Final);
    // Off by one: the balance check finds it at the 015.
    let (_, r) = read_bytes(&with(2, "03,123456,,010,100001,,,015,125000,,/"));
    assert_eq!(
        where_(&r),
        vec![
            t(C::ControlTotalMismatch, E, 6, 4, "49"),
            t(C::BalanceMismatch, E, 3, 25, "03")
        ]
    );
}

#[test]
fn the_balance_chain_runs_across_as_of_dates() {
    let group = |date: &str, open: i64, close: i64| {
        let total = open + close + 50000 + 25000;
        let open = open.to_string();
        let close = close.to_string();
        vec![
            format!("02,RECEIVER,BANKID,1,{date},2400,USD,2/"),
            format!("03,123456,,010,{open},,,015,{close},,/"),
            "16,195,50000,Z,BREF1,CREF1,WIRE IN/".to_string(),
            "16,475,25000,0,,,CHECK 123/".to_string(),
            format!("49,{total},4/"),
            format!("98,{total},1,6/"),
        ]
    };
    let build = |groups: Vec<Vec<String>>| {
        let mut l = vec![BASE[0].to_string()];
        let mut total = 0i64;
        for g in &groups {
            total += g[5][3..].split(',').next().unwrap().parse::<i64>().unwrap();
        }
        let n = groups.len();
        l.extend(groups.into_iter().flatten());
        l.push(format!("99,{total},{n},{}/", 2 + 6 * n));
        l.join("\n").into_bytes()
    };
    let (_, r) = read_bytes(&build(vec![
        group("260227", 75000, 100000),
        group("260228", 100000, 125000),
    ]));
    assert_eq!(r.findings, vec![]);
    let (_, r) = read_bytes(&build(vec![
        group("260227", 75000, 100000),
        group("260228", 100001, 125001),
    ]));
    assert_eq!(where_(&r), vec![t(C::BalanceChain, E, 9, 12, "03")]);
    assert_eq!(
        r.findings[0].expected,
        "010 100000 (the 015 of account 123456 as of 2026-02-27, line 3)"
    );
    // The same as-of date twice: two reports of one day, not a chain.
    let (_, r) = read_bytes(&build(vec![
        group("260228", 75000, 100000),
        group("260228", 0, 25000),
    ]));
    assert_eq!(r.findings, vec![]);
}

// ---- the corpus (its bai2/; MANIFEST "Statement files") ----

/// Credits and debits (count, minor units) over all statements.
fn totals(st: &[Statement]) -> ((usize, u64), (usize, u64)) {
    let sum = |credit: bool| {
        let e: Vec<_> = st
            .iter()
            .flat_map(|s| &s.entries)
            .filter(|e| e.credit == credit)
            .collect();
        (e.len(), e.iter().map(|e| e.amount_minor).sum())
    };
    (sum(true), sum(false))
}

#[test]
fn corpus_moov_sample1_cad_same_account_twice() {
    let (st, r) = read_corpus("moov-sample1.bai2");
    assert_eq!(r.findings, vec![]);
    assert_eq!((r.statements, r.entries), (2, 17));
    assert_eq!(
        st.iter().map(|s| s.entries.len()).collect::<Vec<_>>(),
        vec![11, 6]
    );
    assert!(
        st.iter()
            .all(|s| s.account == "10200123456" && s.currency.as_deref() == Some("CAD"))
    );
    assert_eq!(totals(&st), ((5, 320000), (12, 320000)));
    assert_eq!(st[0].id, "001");
    // Only available balances: no booked balance check.
    assert_eq!(
        st[0]
            .balance(BalanceKind::OpeningAvailable)
            .map(|b| b.amount_minor),
        Some(0)
    );
    assert_eq!(st[0].balance(BalanceKind::OpeningBooked), None);
    // moov keeps the terminating '/' in the text ('RETURNED CHEQUE     /'); we drop it
    // and collapse the blanks.
    assert_eq!(
        st[0].entries[0].remittance.as_deref(),
        Some("RETURNED CHEQUE")
    );
    assert!(
        st.iter()
            .flat_map(|s| &s.entries)
            .all(|e| e.bank_ref.is_none() && e.customer_ref.is_none())
    );
}

#[test]
fn corpus_moov_sample2_spec_example_usd_by_default() {
    let (st, r) = read_corpus("moov-sample2.bai2");
    assert_eq!(r.findings, vec![]);
    assert_eq!((r.statements, r.entries), (5, 4));
    let accounts: Vec<_> = st.iter().map(|s| s.account.as_str()).collect();
    assert_eq!(
        accounts,
        vec![
            "0123456789",
            "9876543210",
            "4589761203",
            "0975312468",
            "7890654321"
        ]
    );
    assert!(
        st.iter().all(|s| s.currency.as_deref() == Some("USD")),
        "no currency anywhere"
    );
    assert_eq!(totals(&st), ((4, 30950000), (0, 0)));
    // The 88 split '...,190/' + '88,500000,...': 040 -1500000 is the last group.
    assert_eq!(
        st[1]
            .balance(BalanceKind::OpeningAvailable)
            .map(|b| b.amount_minor),
        Some(-1500000)
    );
    let e = &st[2].entries[0];
    assert_eq!(
        (e.bank_ref.as_deref(), e.customer_ref.as_deref()),
        (Some("SP4738"), Some("YRC065321"))
    );
    assert_eq!(
        e.remittance.as_deref(),
        Some("PROCEEDS OF LETTER OF CREDIT FROM THE ARAMCO OIL CO")
    );
    assert_eq!(e.value_date, NaiveDate::from_ymd_opt(2004, 6, 22));
}

#[test]
fn corpus_moov_sample3_joined_records_and_a_text_over_two_lines() {
    let (st, r) = read_corpus("moov-sample3.bai2");
    // Line 19 starts with no record code: the 16 text of line 18 goes on there. moov
    // accepts it silently; we accept it with a warning.
    assert_eq!(where_(&r), vec![t(C::TagSyntax, W, 19, 1, "16")]);
    assert_eq!((r.statements, r.entries), (15, 26));
    assert_eq!(totals(&st), ((13, 39713), (13, 59418)));
    assert_eq!(
        st[7].entries[0].remittance.as_deref(),
        Some("111111 ACH_SETL 1111111111 111111111111111 1111111111")
    );
    // 1111111 is reported 7 times for one as-of date: not a chain (else line 9's 010 00
    // after 015 -3600 would be a chain break).
    assert_eq!(st.iter().filter(|s| s.account == "1111111").count(), 7);
}

#[test]
fn corpus_moov_sample4_every_total_wrong() {
    // moov-io/bai2 accepts this file (it does not check totals); we reject it with one
    // finding per wrong total, where it is.
    let (st, r) = read_corpus("moov-sample4-continuations-newline-delimited.bai2");
    assert_eq!(
        where_(&r),
        vec![
            t(C::ControlTotalMismatch, E, 22, 4, "49"),
            t(C::ControlCountMismatch, E, 22, 19, "49"),
            t(C::ControlTotalMismatch, E, 110, 4, "49"),
            t(C::ControlCountMismatch, E, 110, 12, "49"),
            t(C::BalanceMismatch, E, 23, 34, "03"),
            t(C::ControlTotalMismatch, E, 115, 4, "98"),
            t(C::ControlCountMismatch, E, 115, 16, "98"),
            t(C::ControlCountMismatch, E, 115, 18, "98"),
            t(C::ControlCountMismatch, E, 116, 18, "99"),
        ]
    );
    let exp: Vec<_> = r
        .findings
        .iter()
        .map(|f| (f.expected.split(' ').next().unwrap_or(""), f.found.as_str()))
        .collect();
    assert_eq!(
        exp,
        vec![
            ("7999960", "-1260161341762"),
            ("18", "26"),
            ("666917818", "6869722"),
            ("88", "8"),
            ("015", "159381194"),
            ("-1247101146600", "13060195162"),
            ("5", "4"),
            ("114", "16"),
            ("116", "18"),
        ]
    );
    assert_eq!((r.statements, r.entries), (5, 17));
    assert_eq!(
        st.iter().map(|s| s.entries.len()).collect::<Vec<_>>(),
        vec![0, 3, 14, 0, 0]
    );
    assert_eq!(totals(&st), ((9, 600731), (8, 31349055)));
    let all: Vec<_> = st.iter().flat_map(|s| &s.entries).collect();
    assert!(all.iter().all(|e| e.bank_ref.is_some()));
    assert_eq!(all.iter().filter(|e| e.customer_ref.is_some()).count(), 16);
    assert_eq!(
        all[5].remittance.as_deref(),
        Some(
            "Outgoing Wire Return,- CREF: 20210706MMQFMPU8000001 EREF: 20210706MMQFMPU8000001 DBIC: GSCRUS33 CRNM: ABC Company DBNM: SAMPLE INC."
        )
    );
}

#[test]
fn corpus_moov_parse_error_is_not_bai2() {
    let (_, r) = read_corpus("moov-sample-parseError.bai2");
    // moov: "unsupported record type 00" on line 1. We skip the unknown record (warning)
    // and reject the file for having no 01.
    assert_eq!(
        where_(&r),
        vec![
            t(C::UnknownTag, W, 1, 1, "00"),
            t(C::MissingTag, E, 1, 41, "01")
        ]
    );
    assert_eq!(r.statements, 0);
}

#[test]
fn corpus_nwb_gbp_and_a_word_split_over_two_88s() {
    let (st, r) = read_corpus("nwb_example.bai2");
    // The creation time '14:59:35' is no HHMM; it is not used: a warning.
    assert_eq!(where_(&r), vec![t(C::DateFormat, W, 1, 28, "01")]);
    assert_eq!((r.statements, r.entries), (1, 5));
    let s = &st[0];
    assert_eq!(
        (s.account.as_str(), s.currency.as_deref()),
        ("88888888 600004", Some("GBP"))
    );
    assert_eq!(totals(&st), ((1, 89), (4, 2765)));
    // The 80-byte 88 ends in 'CLIE', the next begins 'NT': joined without a space.
    assert_eq!(
        s.entries[4].remittance.as_deref(),
        Some(
            "TFR XBANKGO24007680SJ CAT JPY 2 GBPXBANKGO24007680BGC INTERNATIONAL-5373 CLIENT SECCY AC TFR"
        )
    );
}

#[test]
fn corpus_citi_does_not_balance() {
    // ministryofjustice/bai2 parses it (it checks no balances); 010 10000 + a credit of
    // 001 (GBP 0.01) is 10001, not the 015 10000: rejected.
    let (st, r) = read_corpus("citi_example.bai2");
    assert_eq!(where_(&r), vec![t(C::BalanceMismatch, E, 3, 29, "03")]);
    assert_eq!(
        r.findings[0].expected,
        "015 10001 (opening 010 10000 + booked credits - debits 1)"
    );
    let e = &st[0].entries[0];
    assert_eq!(
        (e.amount_minor, e.credit, e.currency.as_str()),
        (1, true, "GBP")
    );
    assert_eq!(
        (e.bank_ref.as_deref(), e.customer_ref.as_deref()),
        (Some("1234567890"), Some("RP12312312312312"))
    );
    assert_eq!(e.value_date, NaiveDate::from_ymd_opt(2015, 7, 15));
    assert!(e.remittance.as_deref().is_some_and(|t| {
        t.starts_with("FR:FP SIP INCOMING ENDT:20150715 ") && t.ends_with(" BO1:DOE JO")
    }));
}

#[test]
fn corpus_svb_two_days_chain() {
    // Two groups, one account, as-of 220201 then 220202: 015 35217175 = next 010; a
    // trailing empty field on the first 03; the 99 ends without '/'.
    let (st, r) = read_corpus("svb_us_example.bai2");
    assert_eq!(r.findings, vec![]);
    assert_eq!((r.statements, r.entries), (2, 2));
    assert_eq!(totals(&st), ((2, 490196 + 905800), (0, 0)));
    assert_eq!(
        st[1]
            .balance(BalanceKind::OpeningBooked)
            .map(|b| b.amount_minor),
        Some(35217175)
    );
    assert_eq!(st[0].entries[0].bank_ref.as_deref(), Some("172629"));
}

#[test]
fn corpus_blank_account_trailer_amounts() {
    // 'lenient' in the MANIFEST: the peer parses '49,,2/'; we accept it with a warning
    // per blank control total (the accounts hold no amount).
    let (st, r) = read_corpus("account_trailer_amount_blank_example.bai2");
    assert_eq!(
        where_(&r),
        vec![
            t(C::TagSyntax, W, 4, 4, "49"),
            t(C::TagSyntax, W, 6, 4, "49")
        ]
    );
    assert_eq!(
        st.iter().map(|s| s.account.as_str()).collect::<Vec<_>>(),
        vec!["12345", "54321"]
    );
    assert_eq!(r.entries, 0);
}

#[test]
fn a_slash_and_a_record_code_inside_a_text_are_text() {
    // `/ 16,50` cannot start a 16 (no three-digit type code), `/ 03,2024` cannot come after
    // a 16 (a 49 closes the account first): both are text, one warning each at the '/'.
    // Read as joined records they made eight errors, none at the cause.
    let file = b"01,BANK,CUST,240512,0800,1,,,2/\n\
02,CUST,BANK,1,240511,2400,USD,2/\n\
03,12345,USD,010,10000,,,015,10950,,/\n\
16,195,1000,0,B1,C1,BANK FEE/ 16,50 EUR REFUNDED/\n\
16,475,50,0,,,FEE 05/ 03,2024/\n\
49,22000,4/\n\
98,22000,1,6/\n\
99,22000,1,8/\n";
    let (st, r) = read_bytes(file);
    let rule = "16 text holding '/' and a record code: text runs to the record's end";
    let got: Vec<_> = r
        .findings
        .iter()
        .map(|f| {
            (
                f.code,
                f.severity,
                f.position.line(),
                f.position.byte_offset(),
                f.expected.as_str(),
                f.found.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                C::BankDialect,
                W,
                4,
                132,
                rule,
                "BANK FEE/ 16,50 EUR REFUNDED"
            ),
            (C::BankDialect, W, 5, 174, rule, "FEE 05/ 03,2024"),
        ]
    );
    assert_eq!(where_(&r)[0], t(C::BankDialect, W, 4, 29, "16"));
    assert_eq!((r.statements, r.entries), (1, 2));
    let e: Vec<_> = st[0]
        .entries
        .iter()
        .map(|e| {
            (
                e.amount_minor,
                e.credit,
                e.booking_date,
                e.bank_ref.as_deref(),
                e.customer_ref.as_deref(),
                e.bank_tx_code.as_deref(),
                e.remittance.as_deref(),
            )
        })
        .collect();
    let d = NaiveDate::from_ymd_opt(2024, 5, 11);
    assert_eq!(
        e,
        [
            (
                1000,
                true,
                d,
                Some("B1"),
                Some("C1"),
                Some("195"),
                Some("BANK FEE/ 16,50 EUR REFUNDED")
            ),
            (
                50,
                false,
                d,
                None,
                None,
                Some("475"),
                Some("FEE 05/ 03,2024")
            ),
        ]
    );
    // A record that may follow a text still starts there, and a '/' alone is text.
    let joined = b"01,BANK,CUST,240512,0800,1,,,2/\n\
02,CUST,BANK,1,240511,2400,USD,2/\n\
03,12345,USD,010,10000,,,015,10950,,/\n\
16,195,1000,0,,,PAYMENT 12/05/2024/ 16,475,50,0,,,FEE/  49,22000,4/\n\
98,22000,1,6/\n\
99,22000,1,8/\n";
    let (st, r) = read_bytes(joined);
    assert_eq!(r.findings, []);
    assert_eq!(
        st[0]
            .entries
            .iter()
            .map(|e| (e.amount_minor, e.remittance.as_deref()))
            .collect::<Vec<_>>(),
        [(1000, Some("PAYMENT 12/05/2024")), (50, Some("FEE"))]
    );
}

/// Every BAI2 file of the corpus: statements, entries, credits and debits (count, minor
/// units), entries with a bank and with a customer reference, the booking dates (the
/// groups' as-of dates). The MANIFEST's FACTS agree: moov-sample1 17 details, CAD 320000
/// (5) / 320000 (12), no reference; moov-sample2 4 details, USD 30950000 (4), bank and
/// customer reference 1/4 each; moov-sample3 26 details, 39713 (13) / 59418 (13), no
/// reference; moov-sample4 17 details, 600731 (9) / 31349055 (8), bank reference 17/17,
/// customer reference 16/17; parseError no group. (citi, nwb, svb, blank trailer: the
/// peer only parses them.)
#[test]
fn every_corpus_file_as_read() {
    type Row = (
        &'static str,
        u64,
        usize,
        (usize, u64),
        (usize, u64),
        usize,
        usize,
        &'static [&'static str],
    );
    let rows: &[Row] = &[
        (
            "account_trailer_amount_blank_example.bai2",
            2,
            0,
            (0, 0),
            (0, 0),
            0,
            0,
            &[],
        ),
        (
            "citi_example.bai2",
            1,
            1,
            (1, 1),
            (0, 0),
            1,
            1,
            &["2015-07-15"],
        ),
        (
            "moov-sample-parseError.bai2",
            0,
            0,
            (0, 0),
            (0, 0),
            0,
            0,
            &[],
        ),
        (
            "moov-sample1.bai2",
            2,
            17,
            (5, 320000),
            (12, 320000),
            0,
            0,
            &["2006-03-17"],
        ),
        (
            "moov-sample2.bai2",
            5,
            4,
            (4, 30950000),
            (0, 0),
            1,
            1,
            &["2004-06-20"],
        ),
        (
            "moov-sample3.bai2",
            15,
            26,
            (13, 39713),
            (13, 59418),
            0,
            0,
            &["2022-09-19"],
        ),
        (
            "moov-sample4-continuations-newline-delimited.bai2",
            5,
            17,
            (9, 600731),
            (8, 31349055),
            17,
            16,
            &["2023-09-06"],
        ),
        (
            "nwb_example.bai2",
            1,
            5,
            (1, 89),
            (4, 2765),
            0,
            0,
            &["2009-12-16"],
        ),
        (
            "svb_us_example.bai2",
            2,
            2,
            (2, 1395996),
            (0, 0),
            2,
            0,
            &["2022-02-01", "2022-02-02"],
        ),
    ];
    for &(file, statements, entries, credits, debits, bank, customer, dates) in rows {
        let (st, r) = read_corpus(file);
        let all: Vec<_> = st.iter().flat_map(|s| &s.entries).collect();
        let mut days: Vec<String> = all
            .iter()
            .map(|e| e.booking_date.map(|d| d.to_string()).unwrap_or_default())
            .collect();
        days.dedup();
        assert_eq!(
            (
                r.statements,
                all.len(),
                totals(&st),
                all.iter().filter(|e| e.bank_ref.is_some()).count(),
                all.iter().filter(|e| e.customer_ref.is_some()).count(),
                days,
            ),
            (
                statements,
                entries,
                (credits, debits),
                bank,
                customer,
                dates.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
            ),
            "{file}"
        );
    }
    // Every file of the corpus directory is in the table.
    let mut n = 0;
    for e in std::fs::read_dir(corpus("")).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        assert!(rows.iter().any(|r| r.0 == name), "{name}");
        n += 1;
    }
    assert_eq!(n, rows.len());
}
