//! Every MT940/MT942 file of the corpus (`../shared/corpus/mt940`, `mt942`), with the
//! facts we assert: statements, entries, totals per currency, balances, findings with their
//! positions, and the mt940-rs golden parses (`*.expected.json`) compared entry by entry.

use super::*;
use crate::findings::{FindingCode, Severity};
use crate::formats::statement::BalanceKind;
use std::collections::BTreeMap;
use std::path::PathBuf;

use FindingCode::*;
use Severity::{Error, Warning};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus")
}

struct Got {
    r: StatementRead,
    sts: Vec<Statement>,
}

fn read_file(rel: &str) -> Got {
    let f = std::fs::File::open(corpus().join(rel)).unwrap();
    let mut sts = Vec::new();
    let r = read(std::io::BufReader::new(f), &mut |s| sts.push(s)).unwrap();
    assert_eq!(r.statements as usize, sts.len(), "{rel}");
    assert_eq!(
        r.entries as usize,
        sts.iter().map(|s| s.entries.len()).sum::<usize>(),
        "{rel}"
    );
    Got { r, sts }
}

impl Got {
    /// (severity, code, line, column), sorted by position.
    fn findings(&self) -> Vec<(Severity, FindingCode, u64, u64)> {
        let mut v: Vec<_> = self
            .r
            .findings
            .iter()
            .map(|f| {
                (
                    f.severity,
                    f.code,
                    f.position.line(),
                    f.position.column().unwrap_or(0),
                )
            })
            .collect();
        v.sort_by_key(|x| (x.2, x.3));
        v
    }
    /// Per currency: credits (minor, count), debits (minor, count).
    fn totals(&self) -> BTreeMap<String, (u64, u64, u64, u64)> {
        let mut m = BTreeMap::new();
        for e in self.sts.iter().flat_map(|s| &s.entries) {
            let t = m.entry(e.currency.clone()).or_insert((0, 0, 0, 0));
            if e.credit {
                t.0 += e.amount_minor;
                t.1 += 1;
            } else {
                t.2 += e.amount_minor;
                t.3 += 1;
            }
        }
        m
    }
    /// Per statement: (id, sequence, entries, opening, closing).
    #[allow(clippy::type_complexity)]
    fn shape(&self) -> Vec<(String, String, usize, Option<i64>, Option<i64>)> {
        self.sts
            .iter()
            .map(|s| {
                let open = s
                    .balance(BalanceKind::OpeningBooked)
                    .or_else(|| s.balance(BalanceKind::IntermediateOpening));
                let close = s
                    .balance(BalanceKind::ClosingBooked)
                    .or_else(|| s.balance(BalanceKind::IntermediateClosing));
                (
                    s.id.clone(),
                    s.sequence.clone().unwrap_or_default(),
                    s.entries.len(),
                    open.map(|b| b.amount_minor),
                    close.map(|b| b.amount_minor),
                )
            })
            .collect()
    }
    /// mt940-rs's golden parse: every statement line, in order, as (minor units, credit).
    fn assert_matches_peer(&self, rel: &str) {
        let path = corpus().join(rel.replace(".sta", ".expected.json"));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut peer = Vec::new();
        for m in v.as_array().unwrap() {
            for l in m["statement_lines"].as_array().unwrap() {
                let amount: rust_decimal::Decimal = l["amount"].as_str().unwrap().parse().unwrap();
                let minor =
                    u64::try_from((amount * rust_decimal::Decimal::from(100)).trunc()).unwrap();
                let credit = l["ext_debit_credit_indicator"] == "Credit";
                peer.push((minor, credit));
            }
        }
        let ours: Vec<_> = self
            .sts
            .iter()
            .flat_map(|s| &s.entries)
            .map(|e| (e.amount_minor, e.credit))
            .collect();
        assert_eq!(ours, peer, "{rel}");
    }
}

fn s(
    id: &str,
    seq: &str,
    n: usize,
    open: i64,
    close: i64,
) -> (String, String, usize, Option<i64>, Option<i64>) {
    (id.into(), seq.into(), n, Some(open), Some(close))
}

fn totals(rows: &[(&str, u64, u64, u64, u64)]) -> BTreeMap<String, (u64, u64, u64, u64)> {
    rows.iter()
        .map(|r| (r.0.to_string(), (r.1, r.2, r.3, r.4)))
        .collect()
}

#[test]
fn every_corpus_file_is_read_and_asserted() {
    let mut seen = Vec::new();
    for dir in ["mt940", "mt942"] {
        for e in std::fs::read_dir(corpus().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "sta") {
                seen.push(format!(
                    "{dir}/{}",
                    p.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    seen.sort();
    let mut asserted: Vec<&str> = ASSERTED.to_vec();
    asserted.sort();
    assert_eq!(seen, asserted, "a corpus file without its test below");
}

const ASSERTED: &[&str] = &[
    "mt940/betterplace-sepa_snippet.sta",
    "mt940/danske-MT940_DK_Example.sta",
    "mt940/invalid_statement.sta",
    "mt940/jejik-knab.sta",
    "mt940/jejik-postfinance.sta",
    "mt940/jejik-rabobank-iban.sta",
    "mt940/jejik-sns.sta",
    "mt940/mBank-mt940.sta",
    "mt940/raphaelm.sta",
    "mt940/sparkassen.sta",
    "mt940/special-february_30.sta",
    "mt940/special-incomplete_tag_61.sta",
    "mt940/special-invalid_utf8.sta",
    "mt940/special-overly_long_details.sta",
    "mt940/special-unknown_tag.sta",
    "mt942/cmxl-mt942_1-empty.sta",
    "mt942/mBank-mt942.sta",
    "mt942/special-mt942.sta",
    "mt940/wolph-mbank-with_newline_in_tnr.sta",
    "mt940/wolph-self-details_60-63.sta",
    "mt940/wolph-self-gv_codes.sta",
    "mt940/wolph-self-long_statement_number.sta",
    "mt940/wolph-self-malformed_details.sta",
    "mt940/wolph-self-overly_long_details.sta",
    "mt940/wolph-self-raiffeisen-cmi.sta",
    "mt940/wolph-self-transaction_details_wrapped.sta",
    "mt940/wolph-self-whitespace.sta",
    "mt940/wolph-self-wrapped_timestamp.sta",
    "mt942/wolph-self-mt942.sta",
];

#[test]
fn sepa_snippet_second_statement_is_300_08_off() {
    let rel = "mt940/betterplace-sepa_snippet.sta";
    let g = read_file(rel);
    assert_eq!(g.totals(), totals(&[("EUR", 143074572, 8, 357406911, 3)]));
    assert_eq!(
        g.shape(),
        vec![
            s("T089414086000001", "00004/00001", 4, 76665649, 112525040),
            s("T089414096000001", "00004/00001", 7, -197043187, -447204909),
        ]
    );
    assert_eq!(g.findings(), vec![(Error, BalanceMismatch, 55, 1)]);
    let f = &g.r.findings[0];
    assert_eq!(
        f.expected,
        ":62F: -447234917 (opening :60F: -197043187 + booked credits - debits -250191730)"
    );
    let e = &g.sts[1].entries[0];
    assert_eq!(
        (e.customer_ref.as_deref(), e.bank_ref.as_deref()),
        (Some("TFNr 40001 MSGID"), Some("0724710345316116"))
    );
    // `CR`/`DR` are a mark and the funds code R (EUR), not reversals.
    assert!(g.sts.iter().flat_map(|s| &s.entries).all(|e| !e.reversal));
    g.assert_matches_peer(rel);
}

#[test]
fn danske_fifteen_messages_are_fourteen_statements() {
    let rel = "mt940/danske-MT940_DK_Example.sta";
    let g = read_file(rel);
    // Free text and a dashed line before the first :20:, no '-' between messages: valid.
    assert_eq!(g.findings(), vec![]);
    assert_eq!(g.totals(), totals(&[("DKK", 391088635, 8, 253843358, 81)]));
    assert_eq!((g.r.statements, g.r.entries), (14, 89));
    let shape = g.shape();
    assert_eq!(
        shape[0],
        s("3996-1234567890", "00001/001", 7, 247892670, 165409516)
    );
    // 00012/001 (:62M: 2040421,62) and 00012/002 (:60M:) joined: 14 + 1 entries.
    assert_eq!(
        shape[11],
        s("3996-1234567890", "00012/001", 15, 61212981, 411264773)
    );
    assert_eq!(
        shape[13],
        s("3996-1234567890", "00014/001", 2, 385970148, 385137947)
    );
    for w in shape.windows(2) {
        assert_eq!(
            w[0].4, w[1].3,
            "each statement continues the previous closing"
        );
    }
    let e = &g.sts[0].entries[1];
    assert_eq!(
        (
            e.customer_ref.as_deref(),
            e.bank_ref.as_deref(),
            e.bank_tx_code.as_deref()
        ),
        (Some("Gebyrer ifolge"), Some("nota"), Some("NCHG"))
    );
    // Statement-level :86: lines (IBAN, address) belong to no entry.
    assert_eq!(g.sts[0].entries[0].remittance, None);
    assert_eq!(
        g.sts[0].entries[5].remittance.as_deref(),
        Some("DB faktura 1234567 Testkunde HOLMENS KANAL 2-12 1192 KOBENHAVN H")
    );
    g.assert_matches_peer(rel);
}

#[test]
fn knab_second_statement_neither_balances_nor_continues() {
    let rel = "mt940/jejik-knab.sta";
    let g = read_file(rel);
    assert_eq!(g.totals(), totals(&[("EUR", 100000, 2, 726000, 1)]));
    assert_eq!(
        g.shape(),
        vec![
            s("B4E08MS9D00A0009", "998/1", 1, 0, 50000),
            s("B4G30MS9D00A003D", "999/1", 2, 305898, 79898)
        ]
    );
    assert_eq!(
        g.findings(),
        vec![
            (Error, BalanceChain, 13, 1),
            (Error, BalanceMismatch, 20, 1)
        ]
    );
    let e = &g.sts[0].entries[0];
    assert_eq!(
        (e.customer_ref.as_deref(), e.bank_ref.as_deref()),
        (None, Some("B4E07XM00J000023"))
    );
    assert_eq!(
        g.sts[1].entries[1].customer_ref.as_deref(),
        Some("29-07-2014 10:05")
    );
    g.assert_matches_peer(rel);
}

#[test]
fn postfinance_two_messages_are_one_statement_20_off() {
    let rel = "mt940/jejik-postfinance.sta";
    let g = read_file(rel);
    assert_eq!(g.totals(), totals(&[("CHF", 23930, 3, 7990, 1)]));
    // Pages 999/1 and 999/2 have different :20: and are joined all the same (decision).
    assert_eq!(g.shape(), vec![s("2014040708285927", "999/1", 4, 0, 15960)]);
    // :86: with a 66-character line (warning); 0 + 159,40 != 159,60 across the pages.
    assert_eq!(
        g.findings(),
        vec![(Warning, TagSyntax, 7, 1), (Error, BalanceMismatch, 27, 1)]
    );
    let e = &g.sts[0].entries[0];
    // The bank reference is literally NONREF; the real one is the supplementary line.
    assert_eq!(
        (e.customer_ref.as_deref(), e.bank_ref.as_deref()),
        (Some("01916"), None)
    );
    assert!(
        e.remittance
            .as_deref()
            .unwrap()
            .starts_with("20131209007602198765432000000012 GIRO AUS")
    );
    g.assert_matches_peer(rel);
}

#[test]
fn rabobank_two_messages_same_header_both_hold() {
    let rel = "mt940/jejik-rabobank-iban.sta";
    let g = read_file(rel);
    // The ':940:' line before the first :20: is skipped; the same :28C:0 twice is no gap.
    assert_eq!(g.findings(), vec![]);
    assert_eq!(g.totals(), totals(&[("EUR", 0, 0, 7000, 4)]));
    assert_eq!(
        g.shape(),
        vec![
            s("940S130101", "0", 2, 100000, 96500),
            s("940S130101", "0", 2, 96500, 93000)
        ]
    );
    let e = &g.sts[0].entries[0];
    assert_eq!(
        (e.customer_ref.as_deref(), e.booking_date),
        (Some("EREF"), None)
    );
    assert_eq!(
        e.remittance.as_deref(),
        Some(
            "NL70ABNA0987654321 /EREF/01-01-2013 12:00 0030000987654321/BENM//NAME/CONTRA ACCOUNT HOLDER/REMI//ISDT/2013-07-11"
        )
    );
    g.assert_matches_peer(rel);
}

#[test]
fn sns_second_statement_has_no_entries() {
    let rel = "mt940/jejik-sns.sta";
    let g = read_file(rel);
    assert_eq!(g.findings(), vec![]);
    assert_eq!(g.totals(), totals(&[("EUR", 0, 0, 2500, 2)]));
    assert_eq!(
        g.shape(),
        vec![
            s("0000000000", "160/1", 2, 123456, 120956),
            s("0000000000", "161/1", 0, 120956, 120956)
        ]
    );
    assert_eq!(
        g.sts[0].entries[0].remittance.as_deref(),
        Some("marechal s 0987654321 marechal s dit is een test")
    );
    g.assert_matches_peer(rel);
}

#[test]
fn mbank_mt940_in_soh_etx_frames() {
    let g = read_file("mt940/mBank-mt940.sta");
    // WoLpH mBank/mt940.yml: 3 credits of 0.01 PLN, 0.40 -> 0.43.
    assert_eq!(g.findings(), vec![]);
    assert_eq!(g.totals(), totals(&[("PLN", 3, 3, 0, 0)]));
    assert_eq!(g.shape(), vec![s("ST170119CYC/1", "1/1", 3, 40, 43)]);
    let e = &g.sts[0].entries[0];
    assert_eq!(
        (e.customer_ref.as_deref(), e.bank_ref.as_deref()),
        (None, Some("MB170119012058"))
    );
    assert!(!e.reversal, "CN is credit + funds code N (PLN)");
}

#[test]
fn raphaelm_is_refused() {
    // WoLpH reads it (lenient); we refuse: :62M:/:62F: without a currency (WoLpH takes
    // '105' as the currency), :61: without a customer reference, DEM not a currency to
    // post. :NS: is skipped with a warning, :28: read as :28C:.
    let g = read_file("mt940/raphaelm.sta");
    assert_eq!((g.r.statements, g.r.entries), (2, 9));
    let errors: Vec<_> = g.findings().into_iter().filter(|f| f.0 == Error).collect();
    assert_eq!(
        errors,
        vec![
            (Error, CurrencyCode, 13, 13),
            (Error, TagSyntax, 22, 25),
            (Error, TagSyntax, 23, 25),
            (Error, TagSyntax, 24, 25),
            (Error, TagSyntax, 25, 25),
            (Error, TagSyntax, 26, 25),
            (Error, TagSyntax, 27, 13),
            (Error, CurrencyCode, 32, 13),
            (Error, TagSyntax, 33, 25),
            (Error, TagSyntax, 34, 25),
            (Error, TagSyntax, 35, 13),
            (Error, CurrencyCode, 43, 13),
            (Error, TagSyntax, 44, 25),
            (Error, TagSyntax, 47, 13),
        ]
    );
    let warnings = g.findings().into_iter().filter(|f| f.0 == Warning).count();
    assert_eq!(
        warnings, 10,
        "3 :28:, 5 :NS:, 1 non-ASCII (UTF-8 ä), 1 page 1/1 again"
    );
}

#[test]
fn not_a_statement() {
    // WoLpH: empty Transactions; we: an error, no statement.
    let g = read_file("mt940/invalid_statement.sta");
    assert_eq!(g.findings(), vec![(Error, NoStatements, 10, 1)]);
    // A :61: fragment without :20: (WoLpH: empty data).
    let g = read_file("mt940/sparkassen.sta");
    assert_eq!(
        g.findings(),
        vec![(Error, RecordOrder, 1, 1), (Error, NoStatements, 4, 1)]
    );
    let g = read_file("mt942/cmxl-mt942_1-empty.sta");
    assert_eq!(
        (g.findings(), g.r.statements),
        (vec![(Error, EmptyFile, 1, 1)], 0)
    );
}

#[test]
fn special_cases() {
    // 30 February 2016: DateFormat at the value date; the entry is kept, the balance holds.
    let g = read_file("mt940/special-february_30.sta");
    assert_eq!(g.findings(), vec![(Error, DateFormat, 6, 5)]);
    assert_eq!(g.totals(), totals(&[("EUR", 0, 0, 600, 1)]));
    assert_eq!(g.r.findings[0].found, "160230");
    // :61: ends after NMSC: no customer reference, column 22; does not balance (234,01).
    let g = read_file("mt940/special-incomplete_tag_61.sta");
    assert_eq!(
        g.findings(),
        vec![(Error, TagSyntax, 5, 22), (Error, BalanceMismatch, 12, 1)]
    );
    assert_eq!(g.totals(), totals(&[("EUR", 0, 0, 23315, 1)]));
    // Unknown :12: (mt940-rs: an error): skipped with a warning, otherwise valid.
    let g = read_file("mt940/special-unknown_tag.sta");
    assert_eq!(g.findings(), vec![(Warning, UnknownTag, 9, 1)]);
    assert_eq!(
        g.shape(),
        vec![s("STARTUMSE", "00000/001", 1, 120000, 119400)]
    );
    // 9-line :86: (mt940-rs: an error): a warning, kept whole; the file fails its balance.
    let g = read_file("mt940/special-overly_long_details.sta");
    assert_eq!(
        g.findings(),
        vec![(Warning, TagSyntax, 6, 1), (Error, BalanceMismatch, 15, 1)]
    );
    let e = &g.sts[0].entries[0];
    assert_eq!(
        (e.customer_ref.as_deref(), e.bank_ref.as_deref()),
        (Some("ASDAD"), Some("QEE"))
    );
    assert!(
        e.remittance
            .as_deref()
            .unwrap()
            .ends_with("?62ABWA+Finanzamt Sentinel")
    );
}

#[test]
fn invalid_utf8_is_read_as_latin1_and_refused_for_its_references() {
    // mt940-rs never gets past read_to_string; we read the bytes (a warning per line with
    // a byte above 0x7F), and refuse the file: 7 :61: without customer reference, and the
    // balance is 1123264,00 HUF off.
    let g = read_file("mt940/special-invalid_utf8.sta");
    assert_eq!(g.totals(), totals(&[("HUF", 206663700, 1, 307885050, 6)]));
    let f = g.findings();
    assert_eq!(
        f.iter()
            .filter(|x| x.1 == NonAsciiByte && x.0 == Warning)
            .count(),
        8
    );
    assert_eq!(f[0], (Error, TagSyntax, 6, 27));
    assert_eq!(f[1], (Warning, NonAsciiByte, 7, 11));
    assert_eq!(
        g.r.findings
            .iter()
            .find(|x| x.code == NonAsciiByte)
            .unwrap()
            .position
            .byte_offset(),
        127
    );
    assert_eq!(f.iter().filter(|x| x.1 == TagSyntax).count(), 7);
    assert_eq!(f.last(), Some(&(Error, BalanceMismatch, 40, 1)));
    assert_eq!(
        g.sts[0]
            .balances
            .iter()
            .filter(|b| b.kind == BalanceKind::Other)
            .count(),
        3
    );
}

#[test]
fn mt942_files() {
    // The real MT942: pending entries, :90D: says 2,30 for one 0,42 debit; type MCI0.
    let g = read_file("mt942/special-mt942.sta");
    assert_eq!(g.r.format, "mt942");
    assert_eq!(
        g.findings(),
        vec![
            (Error, TagSyntax, 7, 20),
            (Error, ControlTotalMismatch, 11, 1)
        ]
    );
    assert_eq!(g.totals(), totals(&[("EUR", 0, 0, 42, 1)]));
    let st = &g.sts[0];
    assert_eq!(
        (st.kind, st.balances.len(), st.date),
        (
            crate::formats::statement::StatementKind::Intraday,
            0,
            chrono::NaiveDate::from_ymd_opt(2016, 10, 30)
        )
    );
    assert_eq!(
        st.entries[0].status,
        crate::formats::statement::EntryStatus::Pending
    );
    assert_eq!(st.entries[0].bank_ref.as_deref(), Some("055001022000001"));
    // MT940-shaped despite its folder; DEM is no currency to post: refused, amounts 0.
    let g = read_file("mt942/mBank-mt942.sta");
    assert_eq!(g.r.format, "mt940");
    assert_eq!(
        g.findings(),
        vec![
            (Warning, TagSyntax, 3, 1),
            (Error, CurrencyCode, 4, 13),
            (Error, CurrencyCode, 27, 13)
        ]
    );
    assert_eq!(g.totals(), totals(&[("DEM", 0, 4, 0, 7)]));
    assert_eq!(
        g.sts[0]
            .entries
            .iter()
            .filter(|e| e.customer_ref.as_deref() == Some("N"))
            .count(),
        10
    );
}

/// A real-bank dialect as read today: (file, findings, statements, entries, per-currency
/// totals as in [`Got::totals`]).
type Dialect = (
    &'static str,
    &'static [(Severity, FindingCode, u64, u64)],
    u64,
    u64,
    &'static [(&'static str, u64, u64, u64, u64)],
);

/// Dialects a peer library reads and this reader still refuses: an unbalanced statement,
/// a `:61:` without its reference, a 10-digit `:28C:`, text wrapped to look like a tag.
/// Each refusal is pinned to its positions, so reading one of them changes this table on
/// purpose, not by accident.
const DIALECTS_REFUSED: &[Dialect] = &[
    (
        "mt940/wolph-mbank-with_newline_in_tnr.sta",
        &[(Error, BalanceMismatch, 19, 1)],
        1,
        2,
        &[("PLN", 8900, 2, 0, 0)],
    ),
    (
        "mt940/wolph-self-details_60-63.sta",
        &[(Error, TagSyntax, 5, 22), (Error, BalanceMismatch, 12, 1)],
        1,
        1,
        &[("EUR", 0, 0, 23315, 1)],
    ),
    (
        "mt940/wolph-self-gv_codes.sta",
        &[
            (Error, MissingTag, 1, 1),
            (Error, TagSyntax, 5, 22),
            (Warning, TagSyntax, 6, 1),
        ],
        1,
        2,
        &[("EUR", 0, 0, 25745, 2)],
    ),
    (
        "mt940/wolph-self-long_statement_number.sta",
        &[
            (Warning, TagSyntax, 3, 1),
            (Error, TagSyntax, 3, 10),
            (Error, TagSyntax, 4, 16),
            (Error, TagSyntax, 5, 16),
        ],
        1,
        0,
        &[],
    ),
    (
        "mt940/wolph-self-malformed_details.sta",
        &[
            (Error, TagSyntax, 5, 22),
            (Warning, TagSyntax, 6, 1),
            (Error, BalanceMismatch, 15, 1),
        ],
        1,
        1,
        &[("EUR", 0, 0, 23315, 1)],
    ),
    (
        "mt940/wolph-self-overly_long_details.sta",
        &[
            (Error, TagSyntax, 5, 22),
            (Warning, TagSyntax, 6, 1),
            (Error, BalanceMismatch, 15, 1),
        ],
        1,
        1,
        &[("EUR", 0, 0, 23315, 1)],
    ),
    (
        "mt940/wolph-self-raiffeisen-cmi.sta",
        &[
            (Error, TagSyntax, 6, 27),
            (Warning, NonAsciiByte, 7, 11),
            (Warning, NonAsciiByte, 11, 10),
            (Error, TagSyntax, 13, 25),
            (Warning, NonAsciiByte, 14, 11),
            (Error, TagSyntax, 19, 27),
            (Warning, NonAsciiByte, 20, 8),
            (Error, TagSyntax, 24, 24),
            (Warning, NonAsciiByte, 25, 2),
            (Error, TagSyntax, 28, 23),
            (Warning, NonAsciiByte, 29, 2),
            (Error, TagSyntax, 32, 24),
            (Warning, NonAsciiByte, 33, 2),
            (Error, TagSyntax, 36, 24),
            (Warning, NonAsciiByte, 37, 2),
            (Error, BalanceMismatch, 40, 1),
        ],
        1,
        7,
        &[("HUF", 206663700, 1, 307885050, 6)],
    ),
    (
        "mt940/wolph-self-transaction_details_wrapped.sta",
        &[(Error, DateFormat, 6, 5), (Warning, UnknownTag, 9, 1)],
        1,
        1,
        &[("EUR", 0, 0, 600, 1)],
    ),
    (
        "mt940/wolph-self-whitespace.sta",
        &[(Error, TagSyntax, 5, 22), (Error, BalanceMismatch, 9, 1)],
        1,
        1,
        &[("EUR", 0, 0, 23315, 1)],
    ),
    (
        "mt940/wolph-self-wrapped_timestamp.sta",
        &[(Error, DateFormat, 5, 5), (Warning, UnknownTag, 8, 1)],
        1,
        1,
        &[("EUR", 0, 0, 600, 1)],
    ),
    (
        "mt942/wolph-self-mt942.sta",
        &[
            (Error, TagSyntax, 7, 20),
            (Error, ControlTotalMismatch, 11, 1),
        ],
        1,
        1,
        &[("EUR", 0, 0, 42, 1)],
    ),
];

#[test]
fn real_bank_dialects_refused_today_at_their_positions() {
    for (rel, findings, statements, entries, sums) in DIALECTS_REFUSED {
        let g = read_file(rel);
        assert_eq!(g.findings(), findings.to_vec(), "{rel}");
        assert_eq!(
            (g.r.statements, g.r.entries),
            (*statements, *entries),
            "{rel}"
        );
        assert_eq!(g.totals(), totals(sums), "{rel}");
    }
}
