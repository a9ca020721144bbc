use super::*;
use crate::findings::{FindingCode, Severity};
use crate::formats::statement::{BalanceKind, EntryStatus, StatementKind};
use std::io::BufReader;
use std::path::PathBuf;

fn corpus(rel: &str) -> PathBuf {
    crate::test_support::corpus_dir().join("iso20022").join(rel)
}

/// Reads `xml` through reads of `chunk` bytes.
fn read_bytes(xml: &[u8], chunk: usize) -> (Vec<Statement>, StatementRead) {
    let mut out = Vec::new();
    let r = read(BufReader::with_capacity(chunk, xml), &mut |s| out.push(s)).unwrap();
    (out, r)
}

fn read_corpus(rel: &str) -> (Vec<Statement>, StatementRead) {
    let bytes = std::fs::read(corpus(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let whole = read_bytes(&bytes, 1 << 16);
    // Positions and results do not move with read sizes.
    for chunk in [1, 7] {
        assert_eq!(
            read_bytes(&bytes, chunk),
            whole,
            "{rel}: {chunk}-byte reads"
        );
    }
    whole
}

/// (code, severity, path) of each finding.
fn codes(r: &StatementRead) -> Vec<(FindingCode, Severity, String)> {
    r.findings
        .iter()
        .map(|f| {
            (
                f.code,
                f.severity,
                f.position.path().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Credits and debits in minor units per currency, with their counts.
fn totals(st: &[Statement]) -> Vec<(String, u64, u64, u64, u64)> {
    let mut t: Vec<(String, u64, u64, u64, u64)> = Vec::new();
    for e in st.iter().flat_map(|s| &s.entries) {
        let i = match t.iter().position(|x| x.0 == e.currency) {
            Some(i) => i,
            None => {
                t.push((e.currency.clone(), 0, 0, 0, 0));
                t.len() - 1
            }
        };
        if e.credit {
            t[i].1 += e.amount_minor;
            t[i].2 += 1;
        } else {
            t[i].3 += e.amount_minor;
            t[i].4 += 1;
        }
    }
    t
}

fn balances(s: &Statement) -> Vec<(&str, BalanceKind, i64, &str)> {
    s.balances
        .iter()
        .map(|b| (b.code.as_str(), b.kind, b.amount_minor, b.currency.as_str()))
        .collect()
}

const W: Severity = Severity::Warning;
const E: Severity = Severity::Error;

/// Every camt file of the corpus: format, statements, entries, totals per currency (from
/// the MANIFEST's FACTS) and exactly the findings we decide.
#[test]
fn every_corpus_file_reads_as_the_manifest_says() {
    type Row = (
        &'static str,
        &'static str,
        u64,
        u64,
        &'static [(&'static str, u64, u64, u64, u64)],
        &'static [(FindingCode, Severity, &'static str)],
    );
    use FindingCode::*;
    let rows: &[Row] = &[
        (
            "camt052/genkgo-camt052.v1.xml",
            "camt.052",
            1,
            1,
            &[("SEK", 0, 0, 20000000, 1)],
            &[],
        ),
        // Btch NbOfTxs 20 but one TxDtls: a warning (details are optional and may be a
        // subset of the batch; the entry's amount is what books).
        (
            "camt052/genkgo-camt052.v2.xml",
            "camt.052",
            1,
            1,
            &[("SEK", 0, 0, 20000000, 1)],
            &[(
                ControlCountMismatch,
                W,
                "/Document/BkToCstmrAcctRpt/Rpt[1]/Ntry[1]/NtryDtls[1]/Btch/NbOfTxs",
            )],
        ),
        (
            "camt052/genkgo-camt052.v4.xml",
            "camt.052",
            1,
            1,
            &[("SEK", 0, 0, 20000000, 1)],
            &[],
        ),
        // Btch NbOfTxs 20 without any TxDtls: nothing to count, no finding.
        (
            "camt052/genkgo-camt052.v8.xml",
            "camt.052",
            1,
            1,
            &[("SEK", 0, 0, 20000000, 1)],
            &[],
        ),
        (
            "camt053/bsp-camt.053.001.02.xml",
            "camt.053",
            1,
            3,
            &[("SEK", 13567850, 2, 20000000, 1)],
            &[],
        ),
        (
            "camt053/bsp-camt053_duplicate_same_day.xml",
            "camt.053",
            1,
            2,
            &[("EUR", 0, 0, 900, 2)],
            &[],
        ),
        (
            "camt053/bsp-camt053_multicurrency.xml",
            "camt.053",
            2,
            3,
            &[("EUR", 125050, 1, 50025, 1), ("USD", 0, 0, 9999, 1)],
            &[],
        ),
        // No namespace: the message element names the message; read (the peer reads it).
        (
            "camt053/bsp-camt053_no_namespace.xml",
            "camt.053",
            1,
            1,
            &[("GBP", 25000, 1, 0, 0)],
            &[],
        ),
        // The peer decodes it; we reject it: 18.150 + 8.850 = 27.000, the CLBD says 27.050.
        // (The 3-decimal amounts themselves are exact in cents: no amount finding.)
        (
            "camt053/genkgo-camt053.v2.five.decimals.xml",
            "camt.053",
            1,
            1,
            &[("EUR", 885, 1, 0, 0)],
            &[(BalanceMismatch, E, "/Document/BkToCstmrStmt/Stmt[1]/Bal[2]")],
        ),
        (
            "camt053/genkgo-camt053.v2.minimal.xml",
            "camt.053",
            1,
            1,
            &[("EUR", 885, 1, 0, 0)],
            &[],
        ),
        (
            "camt053/genkgo-camt053.v2.multi.statement.xml",
            "camt.053",
            2,
            2,
            &[("EUR", 885, 1, 700, 1)],
            &[],
        ),
        (
            "camt053/genkgo-camt053.v3.xml",
            "camt.053",
            1,
            1,
            &[("EUR", 885, 1, 0, 0)],
            &[],
        ),
        (
            "camt053/genkgo-camt053.v4.xml",
            "camt.053",
            1,
            1,
            &[("EUR", 885, 1, 0, 0)],
            &[],
        ),
        (
            "camt053/genkgo-camt053.v8.xml",
            "camt.053",
            1,
            1,
            &[("EUR", 885, 1, 0, 0)],
            &[],
        ),
        (
            "camt053/genkgo-camt53.only-Dt-with-DtTm.xml",
            "camt.053",
            1,
            0,
            &[],
            &[],
        ),
        (
            "camt053/prowide-camt.053.001.07-with-AppHdr.xml",
            "camt.053",
            1,
            0,
            &[],
            &[],
        ),
        (
            "camt054/ch-camt054-returns.xml",
            "camt.054",
            1,
            1,
            &[("CHF", 40000, 1, 0, 0)],
            &[],
        ),
        (
            "camt054/fi-camt_054_sample.xml",
            "camt.054",
            1,
            6,
            &[("EUR", 560000, 4, 523005, 2)],
            &[],
        ),
        (
            "camt054/genkgo-camt054.v2.with-account-name.xml",
            "camt.054",
            1,
            1,
            &[("SEK", 0, 0, 20000000, 1)],
            &[],
        ),
        (
            "camt054/genkgo-camt054.v2.xml",
            "camt.054",
            1,
            1,
            &[("SEK", 0, 0, 20000000, 1)],
            &[],
        ),
        // Btch says 2 transactions of 6.30 CHF, the 3 TxDtls sum to 9.50: warnings, as for
        // camt052.v2 (the peer accepts it; the batch describes the original payment batch,
        // the entry's 200000 SEK is what books).
        (
            "camt054/genkgo-camt054.v4.xml",
            "camt.054",
            1,
            1,
            &[("SEK", 0, 0, 20000000, 1)],
            &[
                (
                    ControlCountMismatch,
                    W,
                    "/Document/BkToCstmrDbtCdtNtfctn/Ntfctn[1]/Ntry[1]/NtryDtls[1]/Btch/NbOfTxs",
                ),
                (
                    ControlTotalMismatch,
                    W,
                    "/Document/BkToCstmrDbtCdtNtfctn/Ntfctn[1]/Ntry[1]/NtryDtls[1]/Btch/TtlAmt",
                ),
            ],
        ),
        (
            "camt054/genkgo-camt054.v8-with-UETR.xml",
            "camt.054",
            1,
            1,
            &[("SEK", 0, 0, 20000000, 1)],
            &[],
        ),
        (
            "invalid/bsp-camt053_garbled_amount.xml",
            "camt.053",
            1,
            1,
            &[("", 0, 1, 0, 0)],
            &[(
                AmountFormat,
                E,
                "/Document/BkToCstmrStmt/Stmt[1]/Ntry[1]/Amt",
            )],
        ),
        (
            "invalid/bsp-invalid.xml",
            "camt",
            0,
            0,
            &[],
            &[(UnsupportedMessage, E, "/")],
        ),
        (
            "invalid/genkgo-camt053.v2.wrong.xml",
            "camt.053",
            0,
            0,
            &[],
            &[(NoStatements, E, "/")],
        ),
    ];
    for (file, format, statements, entries, want_totals, want_findings) in rows {
        let (st, r) = read_corpus(file);
        assert_eq!(r.format, *format, "{file}");
        assert_eq!((r.statements, r.entries), (*statements, *entries), "{file}");
        assert_eq!(st.len() as u64, *statements, "{file}");
        let want: Vec<_> = want_totals
            .iter()
            .map(|(c, a, b, d, e)| (c.to_string(), *a, *b, *d, *e))
            .collect();
        assert_eq!(totals(&st), want, "{file}");
        let want: Vec<_> = want_findings
            .iter()
            .map(|(c, s, p)| (*c, *s, p.to_string()))
            .collect();
        assert_eq!(codes(&r), want, "{file}: {:#?}", r.findings);
        // Entries are numbered across the file.
        let nos: Vec<u64> = st
            .iter()
            .flat_map(|s| &s.entries)
            .map(|e| e.entry_no)
            .collect();
        assert_eq!(nos, (1..=*entries).collect::<Vec<_>>(), "{file}");
    }
    // Every camt file of the corpus is in the table.
    let mut seen = 0;
    for dir in ["camt052", "camt053", "camt054"] {
        for e in std::fs::read_dir(corpus(dir)).unwrap() {
            let n = e.unwrap().file_name().into_string().unwrap();
            if n.ends_with(".xml") {
                assert!(
                    rows.iter().any(|r| r.0 == format!("{dir}/{n}")),
                    "{dir}/{n}"
                );
                seen += 1;
            }
        }
    }
    assert_eq!(seen, 22);
}

#[test]
fn balances_and_statements_as_the_manifest_says() {
    // Two statements, two accounts, both balance (OPBD + net = CLBD).
    let (st, _) = read_corpus("camt053/bsp-camt053_multicurrency.xml");
    assert_eq!(
        (st[0].account.as_str(), st[1].account.as_str()),
        ("DE89370400440532013000", "US-ACCT-0099")
    );
    assert_eq!(
        balances(&st[0]),
        [
            ("OPBD", BalanceKind::OpeningBooked, 1000000, "EUR"),
            ("CLBD", BalanceKind::ClosingBooked, 1075025, "EUR")
        ]
    );
    assert_eq!(
        balances(&st[1]),
        [
            ("OPBD", BalanceKind::OpeningBooked, 250000, "USD"),
            ("CLBD", BalanceKind::ClosingBooked, 240001, "USD")
        ]
    );
    assert_eq!(
        st[0].entries[0].end_to_end_id.as_deref(),
        Some("EUR-E2E-001")
    );
    // Four balances in four currencies: no check is possible and none is invented.
    for v in ["v3", "v4", "v8", "v2.minimal"] {
        let (st, r) = read_corpus(&format!("camt053/genkgo-camt053.{v}.xml"));
        assert!(r.findings.is_empty(), "{v}");
        let s = &st[0];
        assert_eq!(
            balances(s),
            [
                ("OPBD", BalanceKind::OpeningBooked, 1815, "EUR"),
                ("CLBD", BalanceKind::ClosingBooked, -2700, "SEK"),
                ("OPAV", BalanceKind::OpeningAvailable, 3500, "CHF"),
                ("CLAV", BalanceKind::ClosingAvailable, -2700, "JPY")
            ],
            "{v}"
        );
        assert_eq!(
            (s.id.as_str(), s.account.as_str(), s.sequence.as_deref()),
            (
                "253EURNL26VAYB8060476890",
                "NL26VAYB8060476890",
                Some("12312")
            ),
            "{v}"
        );
        assert_eq!(s.kind, StatementKind::Final);
        assert_eq!(s.date, chrono::NaiveDate::from_ymd_opt(2015, 3, 10));
        let e = &s.entries[0];
        assert_eq!(
            (e.amount_minor, e.credit, e.status),
            (885, true, EntryStatus::Booked)
        );
        assert_eq!(
            e.booking_date,
            chrono::NaiveDate::from_ymd_opt(2014, 12, 31)
        );
        assert_eq!(e.value_date, chrono::NaiveDate::from_ymd_opt(2015, 1, 2));
    }
    // v3: a TxDtls amount of 105.750 EUR is exact in cents.
    let (st, _) = read_corpus("camt053/genkgo-camt053.v3.xml");
    assert_eq!(st[0].entries[0].details[0].amount_minor, Some(10575));
    assert_eq!(st[0].servicer.as_deref(), Some("KREDBEBB"));
    // The five-decimals file: the balance check names what was expected.
    let (_, r) = read_corpus("camt053/genkgo-camt053.v2.five.decimals.xml");
    let f = &r.findings[0];
    assert_eq!(
        (f.expected.as_str(), f.found.as_str(), f.position.line()),
        (
            "CLBD 2700 (opening OPBD 1815 + booked credits - debits 885)",
            "2705",
            49
        )
    );
    // 5442.09000 RON, dated with a DtTm inside Dt, nanoseconds, no time zone.
    let (st, _) = read_corpus("camt053/genkgo-camt53.only-Dt-with-DtTm.xml");
    assert_eq!(
        balances(&st[0]),
        [("OPBD", BalanceKind::OpeningBooked, 544209, "RON")]
    );
    assert_eq!(
        st[0].balances[0].date,
        chrono::NaiveDate::from_ymd_opt(2025, 7, 23)
    );
    assert_eq!(st[0].date, chrono::NaiveDate::from_ymd_opt(2025, 7, 24));
    // The Document after a head.001 AppHdr in an envelope.
    let (st, _) = read_corpus("camt053/prowide-camt.053.001.07-with-AppHdr.xml");
    assert_eq!(
        (st[0].id.as_str(), st[0].currency.as_deref()),
        ("SDFSDF", Some("USD"))
    );
    // Without a date of its own, the statement has the group header's.
    assert_eq!(st[0].date, chrono::NaiveDate::from_ymd_opt(2018, 4, 30));
    // The second genkgo statement opens at the first one's closing (2700): no chain finding.
    let (st, r) = read_corpus("camt053/genkgo-camt053.v2.multi.statement.xml");
    assert!(r.findings.is_empty());
    assert_eq!(st[1].balances[0].amount_minor, 2700);
    // A DtTm booking date, the bank's reference, the domain code.
    let (st, _) = read_corpus("camt053/bsp-camt.053.001.02.xml");
    let e = &st[0].entries[1];
    assert_eq!(
        (
            e.bank_ref.as_deref(),
            e.bank_tx_code.as_deref(),
            e.details.len()
        ),
        (Some("AAAASESS-FP-ACCR-01"), Some("PAYM/0001/0003"), 0)
    );
}

#[test]
fn intraday_entries_are_pending_and_notifications_keep_their_status() {
    for v in ["v1", "v2", "v4", "v8"] {
        let (st, _) = read_corpus(&format!("camt052/genkgo-camt052.{v}.xml"));
        let s = &st[0];
        assert_eq!((s.format, s.kind), ("camt.052", StatementKind::Intraday));
        assert_eq!(s.account, "CH2801234000123456789", "{v}");
        // BOOK (v1, v2, v8) or PDNG (v4): provisional either way.
        assert_eq!(s.entries[0].status, EntryStatus::Pending, "{v}");
        assert_eq!(s.entries[0].amount_minor, 20000000);
        assert!(!s.entries[0].credit);
    }
    // v4: only an ITBD in CHF; the TxDtls in USD.
    let (st, _) = read_corpus("camt052/genkgo-camt052.v4.xml");
    assert_eq!(
        balances(&st[0]),
        [("ITBD", BalanceKind::Other, 1002215, "CHF")]
    );
    let e = &st[0].entries[0];
    assert_eq!(
        (e.details[0].amount_minor, e.details[0].currency.as_deref()),
        (Some(410), Some("USD"))
    );
    assert_eq!(
        e.end_to_end_id.as_deref(),
        Some("UXC06140000015PI00001EE00001")
    );
    // camt.054 v8: Sts/Cd BOOK; a UETR.
    let (st, _) = read_corpus("camt054/genkgo-camt054.v8-with-UETR.xml");
    let e = &st[0].entries[0];
    assert_eq!(
        (st[0].kind, e.status),
        (StatementKind::Notification, EntryStatus::Booked)
    );
    assert_eq!(
        e.details[0].uetr.as_deref(),
        Some("255ae394-9965-4438-ac86-f406feada396")
    );
    // The Finnish sample: an INFO reversal, returns with reasons, a batch of three.
    let (st, _) = read_corpus("camt054/fi-camt_054_sample.xml");
    let s = &st[0];
    assert_eq!(
        (
            s.sequence.as_deref(),
            s.servicer.as_deref(),
            s.currency.as_deref()
        ),
        (Some("96"), Some("ESSEFIHX"), Some("EUR"))
    );
    let last = &s.entries[5];
    assert_eq!(
        (last.status, last.reversal, last.credit),
        (EntryStatus::Info, true, true)
    );
    let reasons: Vec<_> = last
        .details
        .iter()
        .map(|d| d.return_reason.as_deref())
        .collect();
    assert_eq!(reasons, [Some("AC01"), Some("CUST")]);
    let batch: Vec<_> = s.entries[3]
        .details
        .iter()
        .map(|d| d.amount_minor)
        .collect();
    assert_eq!(batch, [Some(200002), Some(100001), Some(123002)]);
    // Three TxDtls sharing one EndToEndId: kept on each detail, none on the entry.
    let (st, _) = read_corpus("camt054/genkgo-camt054.v2.xml");
    let e = &st[0].entries[0];
    assert_eq!(e.details.len(), 3);
    assert!(
        e.details
            .iter()
            .all(|d| d.end_to_end_id.as_deref() == Some("MUELL/FINP/RA12345"))
    );
    assert_eq!(e.end_to_end_id, None);
    // A return: its reason and the entry's narrative.
    let (st, _) = read_corpus("camt054/ch-camt054-returns.xml");
    let e = &st[0].entries[0];
    assert_eq!(e.details[0].return_reason.as_deref(), Some("AC01"));
    assert_eq!(e.end_to_end_id.as_deref(), Some("EndToEndId-004-01-01"));
    assert_eq!(e.bank_tx_code.as_deref(), Some("PMNT/ICDT/RRTN"));
}

#[test]
fn the_garbled_amount_is_refused_where_it_is() {
    let (_, r) = read_corpus("invalid/bsp-camt053_garbled_amount.xml");
    let f = &r.findings[0];
    assert_eq!(
        (
            f.found.as_str(),
            f.position.line(),
            f.position.byte_offset()
        ),
        ("12..34", 17, 409)
    );
}

const NS: &str = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.08";

/// A camt.053 of statements given as (id, sequence, opening, closing, entries).
fn stmt053(stmts: &[(&str, u64, &str, &str, &str)]) -> String {
    let mut x = format!(
        "<?xml version=\"1.0\"?>\n<Document xmlns=\"{NS}\"><BkToCstmrStmt><GrpHdr><MsgId>M</MsgId><CreDtTm>2026-01-02T10:00:00Z</CreDtTm></GrpHdr>\n"
    );
    for (id, seq, open, close, entries) in stmts {
        x.push_str(&format!(
            "<Stmt><Id>{id}</Id><ElctrncSeqNb>{seq}</ElctrncSeqNb><CreDtTm>2026-01-02T10:00:00Z</CreDtTm><Acct><Id><IBAN>NL26VAYB8060476890</IBAN></Id><Ccy>EUR</Ccy></Acct>\n\
             <Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">{open}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-01-01</Dt></Dt></Bal>\n\
             <Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">{close}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-01-02</Dt></Dt></Bal>\n{entries}</Stmt>\n"
        ));
    }
    x.push_str("</BkToCstmrStmt></Document>\n");
    x
}

fn ntry(amount: &str, ind: &str, date: &str) -> String {
    format!(
        "<Ntry><Amt Ccy=\"EUR\">{amount}</Amt><CdtDbtInd>{ind}</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>{date}</Dt></BookgDt></Ntry>\n"
    )
}

#[test]
fn a_consistent_file_has_no_findings() {
    let x = stmt053(&[
        (
            "S1",
            1,
            "10.00",
            "15.00",
            &ntry("5.00", "CRDT", "2026-01-02"),
        ),
        (
            "S2",
            2,
            "15.00",
            "14.50",
            &ntry("0.50", "DBIT", "2026-01-03"),
        ),
    ]);
    let (st, r) = read_bytes(x.as_bytes(), 1 << 16);
    assert_eq!(r.findings, []);
    assert_eq!((r.statements, r.entries), (2, 2));
    assert_eq!(st[1].entries[0].entry_no, 2);
}

#[test]
fn the_balance_chain_and_sequence_numbers_are_checked_per_account() {
    let x = stmt053(&[
        (
            "S1",
            1,
            "10.00",
            "15.00",
            &ntry("5.00", "CRDT", "2026-01-02"),
        ),
        ("S3", 3, "15.10", "15.10", ""),
    ]);
    let (_, r) = read_bytes(x.as_bytes(), 1 << 16);
    let got: Vec<_> = r
        .findings
        .iter()
        .map(|f| {
            (
                f.code,
                f.severity,
                f.position.path().unwrap().to_string(),
                f.found.clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                FindingCode::BalanceChain,
                E,
                "/Document/BkToCstmrStmt/Stmt[2]/Bal[1]".to_string(),
                "1510".to_string()
            ),
            (
                FindingCode::SequenceGap,
                W,
                "/Document/BkToCstmrStmt/Stmt[2]".to_string(),
                "3".to_string()
            ),
        ]
    );
    assert_eq!(
        r.findings[0].expected,
        "OPBD 1500 EUR (the previous statement's CLBD for NL26VAYB8060476890)"
    );
    assert_eq!(
        r.findings[1].expected,
        "sequence number 2 (after 1 for NL26VAYB8060476890)"
    );
}

#[test]
fn amounts_dates_and_codes_are_refused_where_they_are_wrong() {
    use FindingCode::*;
    for (entry, code, path) in [
        // Extra non-zero decimals for EUR; a trailing zero is fine.
        (
            ntry("5.001", "CRDT", "2026-01-02"),
            AmountFormat,
            "Ntry[1]/Amt",
        ),
        (
            ntry("-5.00", "CRDT", "2026-01-02"),
            AmountFormat,
            "Ntry[1]/Amt",
        ),
        (
            ntry("5.00", "CRDT", "2026-02-30"),
            DateFormat,
            "Ntry[1]/BookgDt/Dt",
        ),
        (
            ntry("5.00", "CREDIT", "2026-01-02"),
            InvalidValue,
            "Ntry[1]/CdtDbtInd",
        ),
        (
            ntry("5.00", "CRDT", "2026-01-02").replace("BOOK", "DONE"),
            InvalidValue,
            "Ntry[1]/Sts",
        ),
        (
            ntry("5.00", "CRDT", "2026-01-02").replace("EUR", "EURO"),
            CurrencyCode,
            "Ntry[1]/Amt@Ccy",
        ),
        (
            ntry("5.00", "CRDT", "2026-01-02").replace(" Ccy=\"EUR\"", ""),
            MissingElement,
            "Ntry[1]/Amt@Ccy",
        ),
    ] {
        let x = stmt053(&[("S1", 1, "10.00", "15.00", &entry)]);
        let (_, r) = read_bytes(x.as_bytes(), 1 << 16);
        let f = r
            .findings
            .iter()
            .find(|f| f.code == code)
            .unwrap_or_else(|| panic!("{entry}: {:#?}", r.findings));
        assert!(f.is_error());
        assert_eq!(
            f.position.path(),
            Some(format!("/Document/BkToCstmrStmt/Stmt[1]/{path}").as_str()),
            "{entry}"
        );
    }
    let x = stmt053(&[(
        "S1",
        1,
        "10.00",
        "15.00",
        &ntry("5.000", "CRDT", "2026-01-02"),
    )]);
    assert_eq!(read_bytes(x.as_bytes(), 1 << 16).1.findings, []);
}

#[test]
fn the_transaction_summary_is_checked_against_the_entries() {
    let entries = format!(
        "{}{}",
        ntry("5.00", "CRDT", "2026-01-02"),
        ntry("1.00", "DBIT", "2026-01-02")
    );
    let good = "<TxsSummry><TtlNtries><NbOfNtries>2</NbOfNtries><Sum>6.00</Sum></TtlNtries><TtlCdtNtries><NbOfNtries>1</NbOfNtries><Sum>5</Sum></TtlCdtNtries><TtlDbtNtries><NbOfNtries>1</NbOfNtries><Sum>1.0</Sum></TtlDbtNtries></TxsSummry>";
    let x = stmt053(&[("S1", 1, "10.00", "14.00", &format!("{good}{entries}"))]);
    assert_eq!(read_bytes(x.as_bytes(), 1 << 16).1.findings, []);
    let bad = good
        .replace("<NbOfNtries>2<", "<NbOfNtries>3<")
        .replace("<Sum>1.0<", "<Sum>1.5<");
    let x = stmt053(&[("S1", 1, "10.00", "14.00", &format!("{bad}{entries}"))]);
    let (_, r) = read_bytes(x.as_bytes(), 1 << 16);
    let got: Vec<_> = r
        .findings
        .iter()
        .map(|f| {
            (
                f.code,
                f.position.path().unwrap().to_string(),
                f.expected.clone(),
                f.found.clone(),
            )
        })
        .collect();
    let at = "/Document/BkToCstmrStmt/Stmt[1]/TxsSummry";
    assert_eq!(
        got,
        [
            (
                FindingCode::ControlCountMismatch,
                format!("{at}/TtlNtries/NbOfNtries"),
                "TxsSummry/TtlNtries/NbOfNtries 2 (the entries of the statement)".to_string(),
                "3".to_string()
            ),
            (
                FindingCode::ControlTotalMismatch,
                format!("{at}/TtlDbtNtries/Sum"),
                "TxsSummry/TtlDbtNtries/Sum 1 (the entries' amounts)".to_string(),
                "1.5".to_string()
            ),
        ]
    );
    assert!(r.findings.iter().all(|f| f.is_error()));
}

#[test]
fn hostile_documents_are_refused() {
    use FindingCode::*;
    let base = stmt053(&[("S1", 1, "10.00", "10.00", "")]);
    let doctype = base.replace(
        "<?xml version=\"1.0\"?>",
        "<?xml version=\"1.0\"?><!DOCTYPE d [<!ENTITY x \"y\">]>",
    );
    let entity = base.replace("<Id>S1</Id>", "<Id>&x;</Id>");
    let deep = base.replace(
        "<Id>S1</Id>",
        &format!("<Id>S1</Id>{}{}", "<a>".repeat(70), "</a>".repeat(70)),
    );
    let dup = base.replace("Ccy=\"EUR\"", "Ccy=\"EUR\" Ccy=\"USD\"");
    let broken = base.replace("</Stmt>", "</Stm>");
    for (x, code) in [
        (doctype, DoctypeForbidden),
        (entity, XmlSyntax),
        (deep, DepthLimit),
        (dup, DuplicateAttribute),
        (broken, XmlSyntax),
    ] {
        let (st, r) = read_bytes(x.as_bytes(), 1 << 16);
        assert_eq!(
            r.findings.iter().map(|f| f.code).collect::<Vec<_>>(),
            [code],
            "{x}"
        );
        assert!(st.is_empty());
    }
    let (_, r) = read_bytes(b"", 1 << 16);
    assert_eq!(
        r.findings.iter().map(|f| f.code).collect::<Vec<_>>(),
        [EmptyFile]
    );
    // A camt.053 namespace on a camt.052 message: refused by name.
    let x = base
        .replace("BkToCstmrStmt", "BkToCstmrAcctRpt")
        .replace("<Stmt>", "<Rpt>")
        .replace("</Stmt>", "</Rpt>");
    let (_, r) = read_bytes(x.as_bytes(), 1 << 16);
    assert_eq!(r.findings[0].code, UnsupportedMessage);
    assert_eq!(r.findings[0].found, format!("namespace {NS}"));
    // A pacs.008: not a statement.
    let (_, r) = read_bytes(
        b"<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08\"><FIToFICstmrCdtTrf/></Document>",
        1 << 16,
    );
    assert_eq!(
        (r.findings[0].code, r.findings[0].found.as_str()),
        (UnsupportedMessage, "<FIToFICstmrCdtTrf>")
    );
}

#[test]
fn utf16_and_latin1_documents_read_alike() {
    let x = stmt053(&[(
        "S1",
        1,
        "10.00",
        "15.00",
        &ntry("5.00", "CRDT", "2026-01-02"),
    )]);
    let want = read_bytes(x.as_bytes(), 1 << 16);
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(x.encode_utf16().flat_map(u16::to_le_bytes));
    let got = read_bytes(&utf16, 3);
    assert_eq!(got.1.findings, []);
    assert_eq!(
        got.0[0].entries[0].amount_minor,
        want.0[0].entries[0].amount_minor
    );
    assert_eq!(got.1.entries, 1);
}

#[test]
fn a_generated_statement_file_reads_back_without_findings() {
    for (entries, statements) in [(0u64, 1u64), (1, 1), (2_500, 3)] {
        let mut x = Vec::new();
        generate::generate_camt053(entries, 42, &mut x).unwrap();
        let (st, r) = read_bytes(&x, 1 << 16);
        assert_eq!(r.findings, [], "{entries}");
        assert_eq!(
            (r.format, r.statements, r.entries),
            ("camt.053", statements, entries)
        );
        // The balances chain.
        for w in st.windows(2) {
            assert_eq!(
                w[0].balance(BalanceKind::ClosingBooked)
                    .unwrap()
                    .amount_minor,
                w[1].balance(BalanceKind::OpeningBooked)
                    .unwrap()
                    .amount_minor
            );
        }
        let mut again = Vec::new();
        generate::generate_camt053(entries, 42, &mut again).unwrap();
        assert_eq!(x, again, "deterministic");
    }
    // A wrong closing balance in a generated file is found: the test can fail.
    let mut x = Vec::new();
    generate::generate_camt053(10, 7, &mut x).unwrap();
    let text = String::from_utf8(x).unwrap();
    let at = text
        .find("<Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">")
        .unwrap()
        + 45;
    let mut bytes = text.into_bytes();
    bytes[at] = if bytes[at] == b'9' { b'1' } else { b'9' };
    let (_, r) = read_bytes(&bytes, 1 << 16);
    assert_eq!(r.findings[0].code, FindingCode::BalanceMismatch);
}

#[test]
fn a_batch_names_its_payment_information_else_its_message() {
    let ntry_with = |amount: &str, ind: &str, details: &str| {
        ntry(amount, ind, "2026-01-02").replace("</Ntry>", &format!("{details}</Ntry>"))
    };
    let tx = |amount: &str, e2e: &str| {
        format!(
            "<TxDtls><Refs><EndToEndId>{e2e}</EndToEndId></Refs><AmtDtls><TxAmt><Amt Ccy=\"EUR\">{amount}</Amt></TxAmt></AmtDtls></TxDtls>"
        )
    };
    let entries = [
        // Both ids: the payment information wins (what a pain.001 batch is known by).
        ntry_with(
            "5.00",
            "CRDT",
            &format!(
                "<NtryDtls><Btch><MsgId>MSG-1</MsgId><PmtInfId> PMTINF-7 </PmtInfId><NbOfTxs>2</NbOfTxs></Btch>{}{}</NtryDtls>",
                tx("2.00", "E-1"),
                tx("3.00", "E-2")
            ),
        ),
        // The message id alone; an empty PmtInfId is none.
        ntry_with(
            "1.00",
            "CRDT",
            "<NtryDtls><Btch><MsgId>MSG-2</MsgId><PmtInfId> </PmtInfId></Btch></NtryDtls>",
        ),
        // No batch.
        ntry_with("0.50", "DBIT", &format!("<NtryDtls>{}</NtryDtls>", tx("0.50", "E-3"))),
    ]
    .concat();
    let x = stmt053(&[("S1", 1, "10.00", "15.50", &entries)]);
    let (st, r) = read_bytes(x.as_bytes(), 1 << 16);
    assert_eq!(r.findings, []);
    let got: Vec<(Option<&str>, usize)> = st[0]
        .entries
        .iter()
        .map(|e| (e.batch_ref.as_deref(), e.details.len()))
        .collect();
    assert_eq!(got, [(Some("PMTINF-7"), 2), (Some("MSG-2"), 0), (None, 1)]);
    // Read 1 and 7 bytes at a time, the same.
    for chunk in [1, 7] {
        assert_eq!(read_bytes(x.as_bytes(), chunk).0, st, "{chunk}-byte reads");
    }
}

// ---- bank dialects (formats/dialect.rs) and the local booking date ----

/// (code, severity, path, expected, found) of each finding.
fn said(r: &StatementRead) -> Vec<(FindingCode, Severity, String, String, String)> {
    r.findings
        .iter()
        .map(|f| {
            (
                f.code,
                f.severity,
                f.position.path().unwrap_or("").to_string(),
                f.expected.clone(),
                f.found.clone(),
            )
        })
        .collect()
}

/// A camt.053 message `MSG-7` created at `created` holding `stmts` (each the inside of a
/// `Stmt` after its account).
fn doc053(created: &str, stmts: &[&str]) -> String {
    let mut x = format!(
        "<?xml version=\"1.0\"?>\n<Document xmlns=\"{NS}\"><BkToCstmrStmt><GrpHdr><MsgId>MSG-7</MsgId><CreDtTm>{created}</CreDtTm></GrpHdr>\n"
    );
    for s in stmts {
        x.push_str(&format!("<Stmt>{s}</Stmt>\n"));
    }
    x.push_str("</BkToCstmrStmt></Document>\n");
    x
}

const ACCT: &str = "<Acct><Id><IBAN>NL26VAYB8060476890</IBAN></Id><Ccy>EUR</Ccy></Acct>";

fn bal(code: &str, amount: &str, ind: &str) -> String {
    format!(
        "<Bal><Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">{amount}</Amt>{ind}<Dt><Dt>2026-01-02</Dt></Dt></Bal>"
    )
}

const CRDT: &str = "<CdtDbtInd>CRDT</CdtDbtInd>";
const DBIT: &str = "<CdtDbtInd>DBIT</CdtDbtInd>";

#[test]
fn a_statement_without_id_is_read_as_msg_id_and_its_number() {
    let entry = ntry("5.00", "CRDT", "2026-01-02")
        .replace("</Sts>", "</Sts><AcctSvcrRef>BANK-1</AcctSvcrRef>");
    let first = format!(
        "{ACCT}{}{}{entry}",
        bal("OPBD", "10.00", CRDT),
        bal("CLBD", "15.00", CRDT)
    );
    let second = format!(
        "{ACCT}{}{}",
        bal("OPBD", "15.00", CRDT),
        bal("CLBD", "15.00", CRDT)
    );
    let x = doc053("2026-01-02T10:00:00", &[&first, &second]);
    let (st, r) = read_bytes(x.as_bytes(), 1 << 16);
    let rule = "no statement Id: the message's MsgId and the statement's number stand in";
    assert_eq!(
        said(&r),
        [
            (
                FindingCode::BankDialect,
                W,
                "/Document/BkToCstmrStmt/Stmt[1]".to_string(),
                rule.to_string(),
                "no Id (read as MSG-7/1)".to_string()
            ),
            (
                FindingCode::BankDialect,
                W,
                "/Document/BkToCstmrStmt/Stmt[2]".to_string(),
                rule.to_string(),
                "no Id (read as MSG-7/2)".to_string()
            ),
        ]
    );
    assert_eq!(r.findings[0].position.line(), 3);
    assert_eq!(
        st.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["MSG-7/1", "MSG-7/2"]
    );
    let e = &st[0].entries[0];
    assert_eq!(
        (
            e.amount_minor,
            e.credit,
            e.status,
            e.booking_date,
            e.bank_ref.as_deref()
        ),
        (
            500,
            true,
            EntryStatus::Booked,
            chrono::NaiveDate::from_ymd_opt(2026, 1, 2),
            Some("BANK-1")
        )
    );
    assert_eq!(st[1].entries, []);
    // Without a MsgId either nothing identifies it: one error at the statement.
    let x = x.replace("<MsgId>MSG-7</MsgId>", "");
    let (st, r) = read_bytes(x.as_bytes(), 1 << 16);
    let want = |n: u32| {
        (
            FindingCode::MissingElement,
            E,
            format!("/Document/BkToCstmrStmt/Stmt[{n}]"),
            "Id (or the message's GrpHdr/MsgId to stand in)".to_string(),
            "none".to_string(),
        )
    };
    assert_eq!(said(&r), [want(1), want(2)]);
    assert_eq!(st[0].id, "");
}

#[test]
fn an_entry_without_status_is_read_as_booked() {
    let entry = ntry("2.50", "DBIT", "2026-01-02").replace("<Sts>BOOK</Sts>", "");
    let stmt = format!(
        "<Id>S1</Id>{ACCT}{}{}{entry}",
        bal("OPBD", "10.00", CRDT),
        bal("CLBD", "7.50", CRDT)
    );
    let x = doc053("2026-01-02T10:00:00", &[&stmt]);
    let (st, r) = read_bytes(x.as_bytes(), 1 << 16);
    // Booked: it counts in the balance check, which holds (10.00 - 2.50 = 7.50).
    assert_eq!(
        said(&r),
        [(
            FindingCode::BankDialect,
            W,
            "/Document/BkToCstmrStmt/Stmt[1]/Ntry[1]".to_string(),
            "no entry status: read as booked".to_string(),
            "no Sts".to_string()
        )]
    );
    let e = &st[0].entries[0];
    assert_eq!(
        (e.amount_minor, e.credit, e.status, e.booking_date),
        (
            250,
            false,
            EntryStatus::Booked,
            chrono::NaiveDate::from_ymd_opt(2026, 1, 2)
        )
    );
    // Read as booked, it must balance: 10.00 - 2.50 is not 8.00.
    let x = x.replace(">7.50<", ">8.00<");
    let (_, r) = read_bytes(x.as_bytes(), 1 << 16);
    assert_eq!(
        codes(&r),
        [
            (
                FindingCode::BankDialect,
                W,
                "/Document/BkToCstmrStmt/Stmt[1]/Ntry[1]".to_string()
            ),
            (
                FindingCode::BalanceMismatch,
                E,
                "/Document/BkToCstmrStmt/Stmt[1]/Bal[2]".to_string()
            ),
        ]
    );
    // A wrong status is not a missing one: an error at it, no dialect warning, nothing
    // read as booked (so the balance check, which counts booked entries, misses 2.50).
    let x = doc053(
        "2026-01-02T10:00:00",
        &[&stmt.replace(
            "<Amt Ccy=\"EUR\">2.50</Amt>",
            "<Amt Ccy=\"EUR\">2.50</Amt><Sts>DONE</Sts>",
        )],
    );
    let (st, r) = read_bytes(x.as_bytes(), 1 << 16);
    assert_eq!(
        codes(&r),
        [
            (
                FindingCode::InvalidValue,
                E,
                "/Document/BkToCstmrStmt/Stmt[1]/Ntry[1]/Sts".to_string()
            ),
            (
                FindingCode::BalanceMismatch,
                E,
                "/Document/BkToCstmrStmt/Stmt[1]/Bal[2]".to_string()
            ),
        ]
    );
    assert_eq!(st[0].entries[0].status, EntryStatus::Info);
}

#[test]
fn a_balance_without_indicator_is_read_as_credit() {
    let stmt = format!(
        "<Id>S1</Id>{ACCT}{}{}{}",
        bal("OPBD", "10.00", ""),
        bal("CLBD", "7.50", CRDT),
        ntry("2.50", "DBIT", "2026-01-02")
    );
    let x = doc053("2026-01-02T10:00:00", &[&stmt]);
    let (st, r) = read_bytes(x.as_bytes(), 1 << 16);
    assert_eq!(
        said(&r),
        [(
            FindingCode::BankDialect,
            W,
            "/Document/BkToCstmrStmt/Stmt[1]/Bal[1]".to_string(),
            "no credit/debit indicator on a balance: read as credit".to_string(),
            "no CdtDbtInd".to_string()
        )]
    );
    assert_eq!(
        balances(&st[0]),
        [
            ("OPBD", BalanceKind::OpeningBooked, 1000, "EUR"),
            ("CLBD", BalanceKind::ClosingBooked, 750, "EUR")
        ]
    );
    assert_eq!(
        (st[0].entries[0].amount_minor, st[0].entries[0].credit),
        (250, false)
    );
    // A wrong indicator: one error at it, and no second one for a missing indicator.
    let x = doc053(
        "2026-01-02T10:00:00",
        &[&stmt.replacen("10.00</Amt>", "10.00</Amt><CdtDbtInd>CR</CdtDbtInd>", 1)],
    );
    let (_, r) = read_bytes(x.as_bytes(), 1 << 16);
    assert_eq!(
        codes(&r),
        [(
            FindingCode::InvalidValue,
            E,
            "/Document/BkToCstmrStmt/Stmt[1]/Bal[1]/CdtDbtInd".to_string()
        )]
    );
    // A debit balance says so and is read as one.
    let x = doc053(
        "2026-01-02T10:00:00",
        &[&format!("<Id>S1</Id>{ACCT}{}", bal("OPBD", "3.00", DBIT))],
    );
    let (st, r) = read_bytes(x.as_bytes(), 1 << 16);
    assert_eq!(r.findings, []);
    assert_eq!(st[0].balances[0].amount_minor, -300);
}

/// A statement created at `created` (its own CreDtTm, `None`: none) in a message created
/// at `group`, with one entry booked at `booked` (a DtTm) and valued 2014-01-05: the
/// entry's booking date.
fn booked_on(group: &str, created: Option<&str>, from_to: &str, booked: &str) -> chrono::NaiveDate {
    let created = created.map_or(String::new(), |c| format!("<CreDtTm>{c}</CreDtTm>"));
    let entry = format!(
        "<Ntry><Amt Ccy=\"EUR\">1.00</Amt>{CRDT}<Sts>BOOK</Sts><BookgDt><DtTm>{booked}</DtTm></BookgDt><ValDt><Dt>2014-01-05</Dt></ValDt></Ntry>"
    );
    let stmt = format!("<Id>S1</Id>{created}{from_to}{ACCT}{entry}");
    let x = doc053(group, &[&stmt]);
    let (st, r) = read_bytes(x.as_bytes(), 1 << 16);
    assert_eq!(r.findings, [], "{x}");
    let e = &st[0].entries[0];
    assert_eq!(e.value_date, chrono::NaiveDate::from_ymd_opt(2014, 1, 5));
    e.booking_date.unwrap()
}

#[test]
fn a_booking_date_time_is_booked_on_the_statements_local_date() {
    let d = |day| chrono::NaiveDate::from_ymd_opt(2014, 1, day).unwrap();
    let utc = "2014-01-04T23:00:00.000Z";
    let local = "2014-01-05T08:00:00";
    let ft = |from: &str, to: &str| {
        format!("<FrToDt><FrDtTm>{from}</FrDtTm><ToDtTm>{to}</ToDtTm></FrToDt>")
    };
    // The statement's CreDtTm says +01:00: 23:00 UTC is 00:00 on the 5th there.
    assert_eq!(
        booked_on(local, Some("2014-01-05T08:00:00+01:00"), "", utc),
        d(5)
    );
    // No CreDtTm offset: FrToDt says it (FrDtTm first).
    assert_eq!(
        booked_on(
            local,
            Some(local),
            &ft("2014-01-04T00:00:00+01:00", "2014-01-04T23:59:59"),
            utc
        ),
        d(5)
    );
    assert_eq!(
        booked_on(
            local,
            None,
            &ft("2014-01-04T00:00:00", "2014-01-04T23:59:59+02:00"),
            utc
        ),
        d(5)
    );
    // Else the message's CreDtTm.
    assert_eq!(booked_on("2014-01-05T08:00:00+01:00", None, "", utc), d(5));
    // The statement says no time zone anywhere: the date as written.
    assert_eq!(booked_on(local, Some(local), &ft(local, local), utc), d(4));
    // A statement in UTC books on the UTC date.
    assert_eq!(
        booked_on(local, Some("2014-01-05T08:00:00Z"), "", utc),
        d(4)
    );
    // West of UTC: 03:00 UTC on the 5th is still the 4th in New York.
    assert_eq!(
        booked_on(
            local,
            Some("2014-01-05T08:00:00-05:00"),
            "",
            "2014-01-05T03:00:00Z"
        ),
        d(4)
    );
    // An offset booking in another zone than the statement's: its instant counts.
    assert_eq!(
        booked_on(
            local,
            Some("2014-01-05T08:00:00+01:00"),
            "",
            "2014-01-05T06:30:00+08:00"
        ),
        d(4)
    );
    // A booking date-time without an offset is local already: as written.
    assert_eq!(
        booked_on(
            local,
            Some("2014-01-05T08:00:00+01:00"),
            "",
            "2014-01-04T23:00:00"
        ),
        d(4)
    );
}

/// Every entry of every camt statement file of the corpus: (amount in minor units, credit,
/// status, booking date, value date, AcctSvcrRef, the single TxDtls' EndToEndId). The
/// MANIFEST's peer values agree: bsp-camt.053.001.02 [105678.50, -200000, 30000] SEK,
/// AcctSvcrRef 3/3 and EndToEndId 2/3; bsp multicurrency [1250.50, -500.25, -99.99];
/// duplicate_same_day [-4.50, -4.50]; no_namespace 250.00 GBP; genkgo camt.053 885 EUR
/// booked 2014-12-31, valued 2015-01-02; genkgo camt.052/054 -20000000 SEK on 2007-10-18
/// (camt.052 entries provisional: an intraday report books nothing); camt054
/// with-account-name and v8-with-UETR have no dates and no reference of any kind.
#[test]
fn every_corpus_entry_as_read() {
    use EntryStatus::*;
    type E = (
        u64,
        bool,
        EntryStatus,
        Option<&'static str>,
        Option<&'static str>,
        Option<&'static str>,
        Option<&'static str>,
    );
    let rows: &[(&str, &[E])] = &[
        (
            "camt052/genkgo-camt052.v1.xml",
            &[(
                20000000,
                false,
                Pending,
                Some("2007-10-18"),
                Some("2007-10-18"),
                Some("AAAASESS-FP-ACCR-01"),
                None,
            )],
        ),
        (
            "camt052/genkgo-camt052.v2.xml",
            &[(
                20000000,
                false,
                Pending,
                Some("2007-10-18"),
                Some("2007-10-18"),
                Some("AAAASESS-FP-ACCR-01"),
                None,
            )],
        ),
        (
            "camt052/genkgo-camt052.v4.xml",
            &[(
                20000000,
                false,
                Pending,
                Some("2007-10-18"),
                Some("2007-10-18"),
                Some("ACSR160614165200001"),
                Some("UXC06140000015PI00001EE00001"),
            )],
        ),
        (
            "camt052/genkgo-camt052.v8.xml",
            &[(
                20000000,
                false,
                Pending,
                Some("2007-10-18"),
                Some("2007-10-18"),
                Some("AAAASESS-FP-ACCR-01"),
                None,
            )],
        ),
        (
            "camt053/bsp-camt.053.001.02.xml",
            &[
                (
                    10567850,
                    true,
                    Booked,
                    Some("2010-10-18"),
                    Some("2010-10-18"),
                    Some("AAAASESS-FP-CN_98765/01"),
                    Some("MUELL/FINP/RA12345"),
                ),
                (
                    20000000,
                    false,
                    Booked,
                    Some("2010-10-18"),
                    Some("2010-10-18"),
                    Some("AAAASESS-FP-ACCR-01"),
                    None,
                ),
                (
                    3000000,
                    true,
                    Booked,
                    Some("2010-10-18"),
                    Some("2010-10-18"),
                    Some("AAAASESS-FP-CONF-FX"),
                    Some("AAAASS1085FINPSS"),
                ),
            ],
        ),
        (
            "camt053/bsp-camt053_duplicate_same_day.xml",
            &[
                (
                    450,
                    false,
                    Booked,
                    Some("2026-04-07"),
                    Some("2026-04-07"),
                    None,
                    None,
                ),
                (
                    450,
                    false,
                    Booked,
                    Some("2026-04-07"),
                    Some("2026-04-07"),
                    None,
                    None,
                ),
            ],
        ),
        (
            "camt053/bsp-camt053_multicurrency.xml",
            &[
                (
                    125050,
                    true,
                    Booked,
                    Some("2026-04-10"),
                    Some("2026-04-10"),
                    None,
                    Some("EUR-E2E-001"),
                ),
                (
                    50025,
                    false,
                    Booked,
                    Some("2026-04-15"),
                    Some("2026-04-15"),
                    None,
                    Some("EUR-E2E-002"),
                ),
                (
                    9999,
                    false,
                    Booked,
                    Some("2026-04-20"),
                    Some("2026-04-21"),
                    None,
                    Some("USD-E2E-001"),
                ),
            ],
        ),
        (
            "camt053/bsp-camt053_no_namespace.xml",
            &[(
                25000,
                true,
                Booked,
                Some("2026-04-12"),
                Some("2026-04-12"),
                None,
                None,
            )],
        ),
        (
            "camt053/genkgo-camt053.v2.five.decimals.xml",
            &[(
                885,
                true,
                Booked,
                Some("2014-12-31"),
                Some("2015-01-02"),
                None,
                Some("000000001"),
            )],
        ),
        (
            "camt053/genkgo-camt053.v2.minimal.xml",
            &[(
                885,
                true,
                Booked,
                Some("2014-12-31"),
                Some("2015-01-02"),
                None,
                None,
            )],
        ),
        (
            "camt053/genkgo-camt053.v2.multi.statement.xml",
            &[
                (
                    885,
                    true,
                    Booked,
                    Some("2014-12-31"),
                    Some("2015-01-02"),
                    None,
                    Some("000000001"),
                ),
                (
                    700,
                    false,
                    Booked,
                    Some("2014-12-31"),
                    Some("2015-01-02"),
                    None,
                    Some("000000002"),
                ),
            ],
        ),
        (
            "camt053/genkgo-camt053.v3.xml",
            &[(
                885,
                true,
                Booked,
                Some("2014-12-31"),
                Some("2015-01-02"),
                Some("XXXXXXXXXXXXXXXXXXXXXXEUR"),
                None,
            )],
        ),
        (
            "camt053/genkgo-camt053.v4.xml",
            &[(
                885,
                true,
                Booked,
                Some("2014-12-31"),
                Some("2015-01-02"),
                Some("AAAASESS-FP-CN_98765/01"),
                None,
            )],
        ),
        (
            "camt053/genkgo-camt053.v8.xml",
            &[(
                885,
                true,
                Booked,
                Some("2014-12-31"),
                Some("2015-01-02"),
                Some("AAAASESS-FP-CN_98765/01"),
                Some("MUELL/FINP/RA12345"),
            )],
        ),
        ("camt053/genkgo-camt53.only-Dt-with-DtTm.xml", &[]),
        ("camt053/prowide-camt.053.001.07-with-AppHdr.xml", &[]),
        (
            "camt054/ch-camt054-returns.xml",
            &[(
                40000,
                true,
                Booked,
                Some("2019-05-20"),
                Some("2019-05-20"),
                Some("086820002PBWFX2U"),
                Some("EndToEndId-004-01-01"),
            )],
        ),
        (
            "camt054/fi-camt_054_sample.xml",
            &[
                (
                    200000,
                    true,
                    Booked,
                    Some("2009-10-29"),
                    Some("2009-10-29"),
                    Some("091029ACCTSTMTARCH04"),
                    None,
                ),
                (
                    50000,
                    true,
                    Booked,
                    Some("2009-10-29"),
                    Some("2009-10-29"),
                    Some("091029ACCTSTMTARCH21"),
                    None,
                ),
                (
                    300000,
                    true,
                    Booked,
                    Some("2009-10-29"),
                    Some("2009-10-29"),
                    Some("091029ACCTSTMTARCH05"),
                    None,
                ),
                (
                    423005,
                    false,
                    Booked,
                    Some("2009-10-29"),
                    Some("2009-10-29"),
                    Some("091029ACCTSTMTARCH03"),
                    None,
                ),
                (
                    100000,
                    false,
                    Booked,
                    Some("2009-10-30"),
                    None,
                    Some("091029NTFCTNXBCT010101"),
                    None,
                ),
                (
                    10000,
                    true,
                    Info,
                    Some("2009-10-29"),
                    None,
                    Some("091029ACCTSTMTERR01"),
                    None,
                ),
            ],
        ),
        (
            "camt054/genkgo-camt054.v2.with-account-name.xml",
            &[(20000000, false, Booked, None, None, None, None)],
        ),
        (
            "camt054/genkgo-camt054.v2.xml",
            &[(
                20000000,
                false,
                Booked,
                Some("2007-10-18"),
                Some("2007-10-18"),
                Some("AAAASESS-FP-ACCR001"),
                None,
            )],
        ),
        (
            "camt054/genkgo-camt054.v4.xml",
            &[(
                20000000,
                false,
                Booked,
                Some("2007-10-18"),
                Some("2007-10-18"),
                Some("ACSR160617103200001"),
                None,
            )],
        ),
        (
            "camt054/genkgo-camt054.v8-with-UETR.xml",
            &[(20000000, false, Booked, None, None, None, None)],
        ),
    ];
    for (file, want) in rows {
        let (st, _) = read_corpus(file);
        let d = |d: Option<chrono::NaiveDate>| d.map(|d| d.to_string());
        let got: Vec<_> = st
            .iter()
            .flat_map(|s| &s.entries)
            .map(|e| {
                (
                    e.amount_minor,
                    e.credit,
                    e.status,
                    d(e.booking_date),
                    d(e.value_date),
                    e.bank_ref.clone(),
                    e.end_to_end_id.clone(),
                )
            })
            .collect();
        let want: Vec<_> = want
            .iter()
            .map(|(a, c, s, b, v, r, e)| {
                (
                    *a,
                    *c,
                    *s,
                    b.map(String::from),
                    v.map(String::from),
                    r.map(String::from),
                    e.map(String::from),
                )
            })
            .collect();
        assert_eq!(got, want, "{file}");
    }
    assert_eq!(rows.len(), 22);
}
