//! Every MT940/MT942 file of the test corpus (its `mt940/` and `mt942/`), with the
//! facts we assert: statements, entries, totals per currency, balances, findings with their
//! positions, and the mt940-rs golden parses (`*.expected.json`) compared entry by entry.

use super::*;
use crate::findings::{FindingCode, Severity};
use crate::formats::dialect::DialectRule;
use crate::formats::statement::BalanceKind;
use std::collections::BTreeMap;
use std::path::PathBuf;

use FindingCode::*;
use Severity::{Error, Warning};

fn corpus() -> PathBuf {
    crate::test_support::corpus_dir()
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
    /// The `bank_dialect` warnings: (line, column, rule, found), in file order; each one's
    /// `expected` is checked to be its rule's words.
    fn dialects(&self) -> Vec<(u64, u64, DialectRule, String)> {
        let mut v: Vec<_> = self
            .r
            .findings
            .iter()
            .filter(|f| f.code == BankDialect)
            .map(|f| {
                assert_eq!(f.severity, Warning, "{f:?}");
                let rule = *crate::formats::dialect::RULES
                    .iter()
                    .find(|r| r.says() == f.expected)
                    .unwrap_or_else(|| panic!("no rule says {:?}", f.expected));
                (
                    f.position.line(),
                    f.position.column().unwrap_or(0),
                    rule,
                    f.found.clone(),
                )
            })
            .collect();
        v.sort_by_key(|x| (x.0, x.1));
        v
    }
    /// Every entry, in order: `C`/`D`, minor units, currency, value date, booking date,
    /// customer and bank reference (`-` for none).
    fn entries(&self) -> Vec<String> {
        let o = |x: Option<String>| x.unwrap_or_else(|| "-".into());
        self.sts
            .iter()
            .flat_map(|s| &s.entries)
            .map(|e| {
                format!(
                    "{} {} {} v{} b{} c{} k{}",
                    if e.credit { "C" } else { "D" },
                    e.amount_minor,
                    e.currency,
                    o(e.value_date.map(|d| d.to_string())),
                    o(e.booking_date.map(|d| d.to_string())),
                    o(e.customer_ref.clone()),
                    o(e.bank_ref.clone()),
                )
            })
            .collect()
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
            // ASN Bank's export is named `.940.txt`.
            if p.extension().is_some_and(|x| x == "sta" || x == "txt") {
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
    "mt940/wolph-asnb-0708271685.940.txt",
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
fn raphaelm_is_read_its_closing_balances_in_the_statement_currency() {
    // WoLpH reads it (lenient) but takes '105' of `:62M:C020315105000,00` for the currency.
    // The closings have no currency; the statement's (DEM, from :60F:) is meant, and the
    // balances then add up, statement by statement: read, told three times. What else is
    // clear is read with warnings: DEM in its historic decimals (once per statement), the
    // :61: lines without a reference, :NS: skipped, :28: read as :28C:.
    let g = read_file("mt940/raphaelm.sta");
    assert_eq!((g.r.statements, g.r.entries), (2, 9));
    let errors: Vec<_> = g.findings().into_iter().filter(|f| f.0 == Error).collect();
    assert_eq!(errors, vec![]);
    let closings: Vec<_> = g
        .sts
        .iter()
        .map(|s| {
            let c = s.balance(BalanceKind::ClosingBooked).unwrap();
            (c.amount_minor, c.currency.as_str())
        })
        .collect();
    assert_eq!(closings, [(14_500_000, "DEM"), (9_500_000, "DEM")]);
    let no_ccy = |line| {
        (
            line,
            13,
            DialectRule::NoBalanceCurrency,
            "no currency".to_string(),
        )
    };
    let no_ref = |line| {
        (
            line,
            25,
            DialectRule::NoReference,
            "end of line".to_string(),
        )
    };
    let dem = |line| (line, 13, DialectRule::WithdrawnCurrency, "DEM".to_string());
    assert_eq!(
        g.dialects(),
        vec![
            dem(13),
            no_ref(22),
            no_ref(23),
            no_ref(24),
            no_ref(25),
            no_ref(26),
            no_ccy(27),
            dem(32),
            no_ref(33),
            no_ref(34),
            no_ccy(35),
            dem(43),
            no_ref(44),
            no_ccy(47),
        ]
    );
    let others: Vec<_> = g
        .findings()
        .into_iter()
        .filter(|f| f.0 == Warning && f.1 != BankDialect)
        .collect();
    assert_eq!(
        others,
        vec![
            (Warning, TagSyntax, 3, 1),
            (Warning, UnknownTag, 4, 1),
            (Warning, UnknownTag, 15, 1),
            (Warning, NonAsciiByte, 17, 7),
            (Warning, TagSyntax, 30, 1),
            (Warning, SequenceGap, 30, 1),
            (Warning, UnknownTag, 31, 1),
            (Warning, TagSyntax, 38, 1),
            (Warning, UnknownTag, 39, 1),
            (Warning, UnknownTag, 45, 1),
        ],
        "3 :28:, 5 :NS:, 1 non-ASCII (UTF-8 ä), 1 page 1/1 again"
    );
    assert_eq!(g.totals(), totals(&[("DEM", 14500000, 8, 5000000, 1)]));
    assert_eq!(
        g.entries()[..2],
        [
            "C 500000 DEM v2002-03-17 b2002-03-20 c68790452 k-",
            "C 2000000 DEM v2002-03-22 b- c- k-",
        ]
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
    // 30 February 2016 (mt940-rs: an error): German 30/360 dating, read as 29 February
    // with a dialect warning at the value date; the balance holds.
    let g = read_file("mt940/special-february_30.sta");
    assert_eq!(g.findings(), vec![(Warning, BankDialect, 6, 5)]);
    assert_eq!(
        g.dialects(),
        vec![(6, 5, DialectRule::ThirtyDayMonth, "160230".into())]
    );
    assert_eq!(g.entries(), vec!["D 600 EUR v2016-02-29 b2016-03-01 c- k-"]);
    // :61: ends after NMSC: no customer reference, read as NONREF (a warning at column
    // 22); the statement does not add up (234,01 EUR off): its BalanceMismatch stays.
    let g = read_file("mt940/special-incomplete_tag_61.sta");
    assert_eq!(
        g.findings(),
        vec![
            (Warning, BankDialect, 5, 22),
            (Error, BalanceMismatch, 12, 1)
        ]
    );
    assert_eq!(
        g.dialects(),
        vec![(5, 22, DialectRule::NoReference, "end of line".into())]
    );
    assert_eq!(g.entries(), vec!["D 23315 EUR v2017-09-14 b- c- k-"]);
    // `:12:11` (mt940-rs: an unknown tag) is the end of a timestamp wrapped inside :86:
    // (`…2017-01-01T13` / `:12:11`): read as the text's continuation, a warning.
    let g = read_file("mt940/special-unknown_tag.sta");
    assert_eq!(g.findings(), vec![(Warning, BankDialect, 9, 1)]);
    assert_eq!(
        g.dialects(),
        vec![(9, 1, DialectRule::WrappedTagLikeLine, ":12:11".into())]
    );
    assert_eq!(
        g.shape(),
        vec![s("STARTUMSE", "00000/001", 1, 120000, 119400)]
    );
    assert_eq!(
        g.sts[0].entries[0].remittance.as_deref(),
        Some(
            "805?00ENTGELTABSCHLUSS?106666?20Pauschalen?3012345678?112233445566?602017-01-01T13:12:11"
        )
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
fn invalid_utf8_is_read_as_latin1_and_unbalanced() {
    // mt940-rs never gets past read_to_string; we read the bytes (a warning per line with
    // a byte above 0x7F), the 7 :61: without a customer reference as NONREF (a warning
    // each), and the statement does not add up: 1123264,00 HUF off, its BalanceMismatch.
    // The same file as WoLpH's raiffeisen-cmi (pinned below with every finding).
    let g = read_file("mt940/special-invalid_utf8.sta");
    assert_eq!(g.totals(), totals(&[("HUF", 206663700, 1, 307885050, 6)]));
    let f = g.findings();
    assert_eq!(
        f.iter()
            .filter(|x| x.1 == NonAsciiByte && x.0 == Warning)
            .count(),
        8
    );
    assert_eq!(f[0], (Warning, BankDialect, 6, 27));
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
    assert_eq!(
        g.dialects()
            .iter()
            .filter(|d| d.2 == DialectRule::NoReference)
            .count(),
        7
    );
    assert_eq!(f.iter().filter(|x| x.0 == Error).count(), 1);
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
    // The real MT942: pending entries, :90D: says 2,30 for one 0,42 debit; type MCI0
    // (not N, F or S: no dialect rule covers it). Refused for both.
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
    // MT940-shaped despite its folder; DEM, withdrawn in 2002, read in its historic 2
    // decimals (one warning, at the statement's currency, not again at :62F:); balanced.
    let g = read_file("mt942/mBank-mt942.sta");
    assert_eq!(g.r.format, "mt940");
    assert_eq!(
        g.findings(),
        vec![(Warning, TagSyntax, 3, 1), (Warning, BankDialect, 4, 13)]
    );
    assert_eq!(
        g.dialects(),
        vec![(4, 13, DialectRule::WithdrawnCurrency, "DEM".into())]
    );
    assert_eq!(g.totals(), totals(&[("DEM", 4939674, 4, 4930944, 7)]));
    assert_eq!(g.shape(), vec![s("131110", "27/01", 11, 8434974, 8443704)]);
    assert_eq!(g.sts[0].currency.as_deref(), Some("DEM"));
    assert_eq!(
        g.entries()[..3],
        [
            "D 680000 DEM v2013-10-17 b- c16703074 k-",
            "D 62030 DEM v2013-10-17 b- cN k-",
            "C 1850000 DEM v2013-10-17 b- cN k-",
        ]
    );
    assert_eq!(
        g.entries()[10],
        "D 586214 DEM v2013-10-27 b- cN k-",
        "620,3 and 6800, read with their decimals"
    );
    assert_eq!(
        g.sts[0]
            .entries
            .iter()
            .filter(|e| e.customer_ref.as_deref() == Some("N"))
            .count(),
        10
    );
}

/// A real-bank file read by the dialect rules: (file, every finding, the dialect
/// warnings among them, statements, every entry as [`Got::entries`] gives it).
type DialectFile = (
    &'static str,
    &'static [(Severity, FindingCode, u64, u64)],
    &'static [(u64, u64, DialectRule, &'static str)],
    u64,
    &'static [&'static str],
);

/// The peer (WoLpH/mt940) reads every one of these; so do we, telling each dialect. Those
/// that do not add up keep their BalanceMismatch (the peer's expected balances say the
/// same: opening + entries != closing); two are refused for a cause no rule covers.
const DIALECT_FILES: &[DialectFile] = &[
    // Peer: 2 credits PLN 89,00; 0,46 -> 860,17: unbalanced (the text wraps, no dialect).
    (
        "mt940/wolph-mbank-with_newline_in_tnr.sta",
        &[(Error, BalanceMismatch, 19, 1)],
        &[],
        1,
        &[
            "C 4500 PLN v2017-02-01 b2017-02-01 c- kMB170201323000",
            "C 4400 PLN v2017-02-01 b2017-02-01 c- kMB170201327968",
        ],
    ),
    // Peer: 1 debit EUR 233,15; 12345,12 -> 12345,98: no reference; unbalanced.
    (
        "mt940/wolph-self-details_60-63.sta",
        &[
            (Warning, BankDialect, 5, 22),
            (Error, BalanceMismatch, 12, 1),
        ],
        &[(5, 22, DialectRule::NoReference, "end of line")],
        1,
        &["D 23315 EUR v2017-09-14 b- c- k-"],
    ),
    // Peer: 2 debits EUR 257,45, no closing balance: refused for the missing :62F: (no
    // rule makes one up); the reference-less :61: and the long :86: are read.
    (
        "mt940/wolph-self-gv_codes.sta",
        &[
            (Error, MissingTag, 1, 1),
            (Warning, BankDialect, 5, 22),
            (Warning, TagSyntax, 6, 1),
        ],
        &[(5, 22, DialectRule::NoReference, "end of line")],
        1,
        &[
            "D 23315 EUR v2017-09-14 b- c- k-",
            "D 2430 EUR v2019-10-25 b2019-10-25 c- k-",
        ],
    ),
    // Peer: 0 transactions, TRY 0 -> 0: the 10-digit :28: and the 19-character
    // zero-padded balances read; :28: read as :28C: (its own warning); balanced.
    (
        "mt940/wolph-self-long_statement_number.sta",
        &[
            (Warning, TagSyntax, 3, 1),
            (Warning, BankDialect, 3, 5),
            (Warning, BankDialect, 4, 16),
            (Warning, BankDialect, 5, 16),
        ],
        &[
            (3, 5, DialectRule::LongStatementNumber, "1810118101"),
            (4, 16, DialectRule::LongAmount, "0000000000000000,00"),
            (5, 16, DialectRule::LongAmount, "0000000000000000,00"),
        ],
        1,
        &[],
    ),
    // Peer: 1 debit EUR 233,15: no reference, 9-line :86: kept whole; unbalanced.
    (
        "mt940/wolph-self-malformed_details.sta",
        &[
            (Warning, BankDialect, 5, 22),
            (Warning, TagSyntax, 6, 1),
            (Error, BalanceMismatch, 15, 1),
        ],
        &[(5, 22, DialectRule::NoReference, "end of line")],
        1,
        &["D 23315 EUR v2017-09-14 b- c- k-"],
    ),
    // Peer: the same as malformed_details.
    (
        "mt940/wolph-self-overly_long_details.sta",
        &[
            (Warning, BankDialect, 5, 22),
            (Warning, TagSyntax, 6, 1),
            (Error, BalanceMismatch, 15, 1),
        ],
        &[(5, 22, DialectRule::NoReference, "end of line")],
        1,
        &["D 23315 EUR v2017-09-14 b- c- k-"],
    ),
    // Peer: credits HUF 2066637,00, debits 3078850,50; 25170637,10 -> 25281687,60:
    // 7 :61: without a reference, Latin-1 text; unbalanced.
    (
        "mt940/wolph-self-raiffeisen-cmi.sta",
        &[
            (Warning, BankDialect, 6, 27),
            (Warning, NonAsciiByte, 7, 11),
            (Warning, NonAsciiByte, 11, 10),
            (Warning, BankDialect, 13, 25),
            (Warning, NonAsciiByte, 14, 11),
            (Warning, BankDialect, 19, 27),
            (Warning, NonAsciiByte, 20, 8),
            (Warning, BankDialect, 24, 24),
            (Warning, NonAsciiByte, 25, 2),
            (Warning, BankDialect, 28, 23),
            (Warning, NonAsciiByte, 29, 2),
            (Warning, BankDialect, 32, 24),
            (Warning, NonAsciiByte, 33, 2),
            (Warning, BankDialect, 36, 24),
            (Warning, NonAsciiByte, 37, 2),
            (Error, BalanceMismatch, 40, 1),
        ],
        &[
            (6, 27, DialectRule::NoReference, "end of line"),
            (13, 25, DialectRule::NoReference, "end of line"),
            (19, 27, DialectRule::NoReference, "end of line"),
            (24, 24, DialectRule::NoReference, "end of line"),
            (28, 23, DialectRule::NoReference, "end of line"),
            (32, 24, DialectRule::NoReference, "end of line"),
            (36, 24, DialectRule::NoReference, "end of line"),
        ],
        1,
        &[
            "C 206663700 HUF v2018-04-17 b- c- k-",
            "D 1479000 HUF v2018-04-17 b- c- k-",
            "D 305180000 HUF v2018-04-17 b- c- k-",
            "D 389277 HUF v2018-04-17 b- c- k-",
            "D 78924 HUF v2018-04-17 b- c- k-",
            "D 157849 HUF v2018-04-17 b- c- k-",
            "D 600000 HUF v2018-04-17 b- c- k-",
        ],
    ),
    // Peer: 1 debit EUR 6,00, value date 2016-02-29; 1200,00 -> 1194,00: read clean but
    // for the 30 February value date and the `:12:11` wrapped inside :86:.
    (
        "mt940/wolph-self-transaction_details_wrapped.sta",
        &[(Warning, BankDialect, 6, 5), (Warning, BankDialect, 9, 1)],
        &[
            (6, 5, DialectRule::ThirtyDayMonth, "160230"),
            (9, 1, DialectRule::WrappedTagLikeLine, ":12:11"),
        ],
        1,
        &["D 600 EUR v2016-02-29 b2016-03-01 c- k-"],
    ),
    // Peer: 1 debit EUR 233,15: no reference; unbalanced (blank-led :86: lines, no dialect).
    (
        "mt940/wolph-self-whitespace.sta",
        &[
            (Warning, BankDialect, 5, 22),
            (Error, BalanceMismatch, 9, 1),
        ],
        &[(5, 22, DialectRule::NoReference, "end of line")],
        1,
        &["D 23315 EUR v2017-09-14 b- c- k-"],
    ),
    // Peer: 1 debit EUR 6,00, 1200,00 -> 1194,00; a timestamp wrapped as `:26:37 Fo…`.
    (
        "mt940/wolph-self-wrapped_timestamp.sta",
        &[(Warning, BankDialect, 5, 5), (Warning, BankDialect, 8, 1)],
        &[
            (5, 5, DialectRule::ThirtyDayMonth, "160230"),
            (
                8,
                1,
                DialectRule::WrappedTagLikeLine,
                ":26:37 Fo?25lgenr. 007",
            ),
        ],
        1,
        &["D 600 EUR v2016-02-29 b2016-03-01 c- k-"],
    ),
    // Peer: 1 debit EUR 0,42. Refused: transaction type MCI0 (no rule: not N, F or S) and
    // :90D: says 2,30 where the one debit is 0,42.
    (
        "mt942/wolph-self-mt942.sta",
        &[
            (Error, TagSyntax, 7, 20),
            (Error, ControlTotalMismatch, 11, 1),
        ],
        &[],
        1,
        &["D 42 EUR v2016-10-30 b2016-10-31 c- k055001022000001"],
    ),
];

#[test]
fn real_bank_dialects_are_read_and_told() {
    for (rel, findings, dialects, statements, entries) in DIALECT_FILES {
        let g = read_file(rel);
        assert_eq!(g.findings(), findings.to_vec(), "{rel}");
        let want: Vec<_> = dialects
            .iter()
            .map(|d| (d.0, d.1, d.2, d.3.to_string()))
            .collect();
        assert_eq!(g.dialects(), want, "{rel}");
        assert_eq!(g.r.statements, *statements, "{rel}");
        assert_eq!(g.entries(), entries.to_vec(), "{rel}");
    }
}

#[test]
fn wrapped_details_keep_their_text() {
    let g = read_file("mt940/wolph-self-wrapped_timestamp.sta");
    assert_eq!(
        g.sts[0].entries[0].remittance.as_deref(),
        Some(
            "106?000000/661?20EREF+VZ0000000000000000?21MREF+000000?22CRED+XX0000000000000000\
             ?23ABCDEFGHIJKLMNOPQRSTUVW?24/PL 12-09-2014T16:26:37 Fo?25lgenr. 007"
        ),
        "the timestamp whole again"
    );
    let g = read_file("mt940/wolph-self-long_statement_number.sta");
    assert_eq!(g.shape(), vec![s("12345678", "1810118101", 0, 0, 0)]);
    assert_eq!(g.sts[0].currency.as_deref(), Some("TRY"));
}

#[test]
fn asn_bank_ibans_in_the_reference_are_read_whole() {
    // Peer (WoLpH, only with its ASN tags): 8 transactions, the last statement 404,81 ->
    // 501,23 EUR. 31 statements, one a day; every one balances and continues the last.
    let g = read_file("mt940/wolph-asnb-0708271685.940.txt");
    let long = |line, col, found: &str| (line, col, DialectRule::LongReference, found.to_string());
    assert_eq!(
        g.dialects(),
        vec![
            long(6, 25, "NL47INGB9999999999"),
            long(42, 27, "NL56ASNB9999999999"),
            long(50, 26, "NL08ABNA9999999999"),
            (198, 24, DialectRule::NoReference, "end of line".into()),
            long(233, 26, "NL25INGB9999999999"),
            long(241, 27, "NL08ABNA9999999999"),
            long(263, 27, "NL56ASNB9999999999"),
            long(271, 26, "NL08ABNA9999999999"),
        ]
    );
    assert_eq!(
        g.findings().iter().filter(|f| f.1 != BankDialect).count(),
        0
    );
    assert_eq!(g.r.statements, 31);
    assert_eq!(
        g.entries(),
        vec![
            "D 6500 EUR v2020-01-01 b2020-01-01 cNL47INGB9999999999 k-",
            "C 100000 EUR v2020-01-05 b2020-01-05 cNL56ASNB9999999999 k-",
            "D 80155 EUR v2020-01-05 b2020-01-05 cNL08ABNA9999999999 k-",
            "D 165 EUR v2020-01-25 b2020-01-25 c- k-",
            "C 82872 EUR v2020-01-29 b2020-01-29 cNL25INGB9999999999 k-",
            "D 100000 EUR v2020-01-29 b2020-01-29 cNL08ABNA9999999999 k-",
            "C 100018 EUR v2020-01-31 b2020-01-31 cNL56ASNB9999999999 k-",
            "D 90376 EUR v2020-01-31 b2020-01-31 cNL08ABNA9999999999 k-",
        ]
    );
    let shape = g.shape();
    assert_eq!(shape[0], s("0000000000", "1/1", 1, 44429, 37929));
    assert_eq!(shape[30], s("0000000000", "31/1", 2, 40481, 50123));
    assert_eq!(g.sts[0].account, "NL81ASNB9999999999");
    assert_eq!(g.sts[0].servicer.as_deref(), Some("ASNBNL21"));
}
/// Every corpus file with entries: their number, the first and the last as
/// [`Got::entries`] gives them (direction, amount, currency, dates, references), so a
/// change to any file's reading shows here, whatever its own test pins.
const FIRST_AND_LAST: &[(&str, usize, &str, &str)] = &[
    (
        "mt940/wolph-asnb-0708271685.940.txt",
        8,
        "D 6500 EUR v2020-01-01 b2020-01-01 cNL47INGB9999999999 k-",
        "D 90376 EUR v2020-01-31 b2020-01-31 cNL08ABNA9999999999 k-",
    ),
    (
        "mt940/betterplace-sepa_snippet.sta",
        11,
        "C 5099005 EUR v2007-09-07 b2007-09-04 c- k0724710333343453",
        "D 357256903 EUR v2007-09-04 b2007-09-04 c- k-",
    ),
    (
        "mt940/danske-MT940_DK_Example.sta",
        89,
        "D 82941978 DKK v2009-09-29 b2009-09-29 cDansken k-",
        "D 300951 DKK v2009-10-20 b2009-10-20 cDBT.Pet Van Park k-",
    ),
    (
        "mt940/jejik-knab.sta",
        3,
        "C 50000 EUR v2014-05-07 b2014-05-07 c- kB4E07XM00J000023",
        "C 50000 EUR v2014-07-29 b2014-07-29 c29-07-2014 10:05 kB4G29PGDCK1QFV3E",
    ),
    (
        "mt940/jejik-postfinance.sta",
        4,
        "C 7970 CHF v2013-12-09 b2013-12-09 c01916 k-",
        "C 1010 CHF v2013-12-18 b2013-12-18 c01651 k-",
    ),
    (
        "mt940/jejik-rabobank-iban.sta",
        4,
        "D 2500 EUR v2013-01-01 b- cEREF k-",
        "D 1000 EUR v2013-01-09 b- c- k-",
    ),
    (
        "mt940/jejik-sns.sta",
        2,
        "D 2000 EUR v2012-06-07 b2012-06-08 c0987654321 k-",
        "D 500 EUR v2012-06-08 b2012-06-08 c0987654321 k-",
    ),
    (
        "mt940/mBank-mt940.sta",
        3,
        "C 1 PLN v2017-01-19 b2017-01-19 c- kMB170119012058",
        "C 1 PLN v2017-01-19 b2017-01-19 c- kMB170119012121",
    ),
    (
        "mt940/raphaelm.sta",
        9,
        "C 500000 DEM v2002-03-17 b2002-03-20 c68790452 k-",
        "D 5000000 DEM v2002-03-24 b- c- k-",
    ),
    (
        "mt940/special-february_30.sta",
        1,
        "D 600 EUR v2016-02-29 b2016-03-01 c- k-",
        "D 600 EUR v2016-02-29 b2016-03-01 c- k-",
    ),
    (
        "mt940/special-incomplete_tag_61.sta",
        1,
        "D 23315 EUR v2017-09-14 b- c- k-",
        "D 23315 EUR v2017-09-14 b- c- k-",
    ),
    (
        "mt940/special-invalid_utf8.sta",
        7,
        "C 206663700 HUF v2018-04-17 b- c- k-",
        "D 600000 HUF v2018-04-17 b- c- k-",
    ),
    (
        "mt940/special-overly_long_details.sta",
        1,
        "D 23315 EUR v2017-09-14 b- cASDAD kQEE",
        "D 23315 EUR v2017-09-14 b- cASDAD kQEE",
    ),
    (
        "mt940/special-unknown_tag.sta",
        1,
        "D 600 EUR v2016-01-30 b2016-03-01 c- k-",
        "D 600 EUR v2016-01-30 b2016-03-01 c- k-",
    ),
    (
        "mt942/mBank-mt942.sta",
        11,
        "D 680000 DEM v2013-10-17 b- c16703074 k-",
        "D 586214 DEM v2013-10-27 b- cN k-",
    ),
    (
        "mt942/special-mt942.sta",
        1,
        "D 42 EUR v2016-10-30 b2016-10-31 c- k055001022000001",
        "D 42 EUR v2016-10-30 b2016-10-31 c- k055001022000001",
    ),
    (
        "mt940/wolph-mbank-with_newline_in_tnr.sta",
        2,
        "C 4500 PLN v2017-02-01 b2017-02-01 c- kMB170201323000",
        "C 4400 PLN v2017-02-01 b2017-02-01 c- kMB170201327968",
    ),
    (
        "mt940/wolph-self-details_60-63.sta",
        1,
        "D 23315 EUR v2017-09-14 b- c- k-",
        "D 23315 EUR v2017-09-14 b- c- k-",
    ),
    (
        "mt940/wolph-self-gv_codes.sta",
        2,
        "D 23315 EUR v2017-09-14 b- c- k-",
        "D 2430 EUR v2019-10-25 b2019-10-25 c- k-",
    ),
    (
        "mt940/wolph-self-malformed_details.sta",
        1,
        "D 23315 EUR v2017-09-14 b- c- k-",
        "D 23315 EUR v2017-09-14 b- c- k-",
    ),
    (
        "mt940/wolph-self-overly_long_details.sta",
        1,
        "D 23315 EUR v2017-09-14 b- c- k-",
        "D 23315 EUR v2017-09-14 b- c- k-",
    ),
    (
        "mt940/wolph-self-raiffeisen-cmi.sta",
        7,
        "C 206663700 HUF v2018-04-17 b- c- k-",
        "D 600000 HUF v2018-04-17 b- c- k-",
    ),
    (
        "mt940/wolph-self-transaction_details_wrapped.sta",
        1,
        "D 600 EUR v2016-02-29 b2016-03-01 c- k-",
        "D 600 EUR v2016-02-29 b2016-03-01 c- k-",
    ),
    (
        "mt940/wolph-self-whitespace.sta",
        1,
        "D 23315 EUR v2017-09-14 b- c- k-",
        "D 23315 EUR v2017-09-14 b- c- k-",
    ),
    (
        "mt940/wolph-self-wrapped_timestamp.sta",
        1,
        "D 600 EUR v2016-02-29 b2016-03-01 c- k-",
        "D 600 EUR v2016-02-29 b2016-03-01 c- k-",
    ),
    (
        "mt942/wolph-self-mt942.sta",
        1,
        "D 42 EUR v2016-10-30 b2016-10-31 c- k055001022000001",
        "D 42 EUR v2016-10-30 b2016-10-31 c- k055001022000001",
    ),
];

#[test]
fn every_file_s_entries_first_and_last() {
    for (rel, n, first, last) in FIRST_AND_LAST {
        let e = read_file(rel).entries();
        assert_eq!(
            (
                e.len(),
                e.first().map(String::as_str),
                e.last().map(String::as_str)
            ),
            (*n, Some(*first), Some(*last)),
            "{rel}"
        );
    }
    // The files without entries: no statement, or statements of none.
    for rel in [
        "mt940/invalid_statement.sta",
        "mt940/sparkassen.sta",
        "mt942/cmxl-mt942_1-empty.sta",
        "mt940/wolph-self-long_statement_number.sta",
    ] {
        assert_eq!(read_file(rel).entries(), Vec::<String>::new(), "{rel}");
    }
    assert_eq!(FIRST_AND_LAST.len() + 4, ASSERTED.len());
}
