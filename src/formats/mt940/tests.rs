//! Unit tests of the MT940/MT942 reader: envelopes, pages, checks, positions, streaming.

use super::*;
use crate::findings::{FindingCode, Severity};
use crate::formats::statement::{BalanceKind, EntryStatus, StatementKind};

fn run_with(input: &[u8], capacity: usize) -> (StatementRead, Vec<Statement>) {
    let mut sts = Vec::new();
    let r = read(
        std::io::BufReader::with_capacity(capacity, input),
        &mut |s| sts.push(s),
    )
    .unwrap();
    (r, sts)
}

fn run(input: &str) -> (StatementRead, Vec<Statement>) {
    run_with(input.as_bytes(), 8192)
}

/// (severity, code, line, column, tag) of every finding, in file order.
fn found(r: &StatementRead) -> Vec<(Severity, FindingCode, u64, u64, Option<String>)> {
    let mut v: Vec<_> = r
        .findings
        .iter()
        .map(|f| {
            (
                f.severity,
                f.code,
                f.position.line(),
                f.position.column().unwrap_or(0),
                f.position.path().map(str::to_string),
            )
        })
        .collect();
    v.sort_by_key(|x| (x.2, x.3));
    v
}

fn tag(t: &str) -> Option<String> {
    Some(t.to_string())
}

const ONE: &str = ":20:REF1\n:25:NL01BANK0123456789\n:28C:00001/001\n:60F:C250101EUR100,00\n\
:61:2501020102C50,00NTRFCUST1//BANK1\n:86:first line\nsecond line\n\
:61:2501020102D20,5NTRFNONREF\n:62F:C250102EUR129,50\n-\n";

#[test]
fn a_plain_statement_maps_onto_the_model() {
    let (r, sts) = run(ONE);
    assert_eq!(found(&r), vec![]);
    assert_eq!((r.format, r.statements, r.entries), ("mt940", 1, 2));
    let s = &sts[0];
    assert_eq!((s.format, s.kind), ("mt940", StatementKind::Final));
    assert_eq!(
        (s.id.as_str(), s.account.as_str(), s.sequence.as_deref()),
        ("REF1", "NL01BANK0123456789", Some("00001/001"))
    );
    assert_eq!(s.currency.as_deref(), Some("EUR"));
    assert_eq!(s.date, NaiveDate::from_ymd_opt(2025, 1, 2));
    assert_eq!(
        s.balance(BalanceKind::OpeningBooked).unwrap().amount_minor,
        10000
    );
    assert_eq!(
        s.balance(BalanceKind::ClosingBooked).unwrap().amount_minor,
        12950
    );
    let e = &s.entries[0];
    assert_eq!(
        (e.entry_no, e.amount_minor, e.credit, e.reversal),
        (1, 5000, true, false)
    );
    assert_eq!(e.status, EntryStatus::Booked);
    assert_eq!(
        (
            e.customer_ref.as_deref(),
            e.bank_ref.as_deref(),
            e.bank_tx_code.as_deref()
        ),
        (Some("CUST1"), Some("BANK1"), Some("NTRF"))
    );
    assert_eq!(e.remittance.as_deref(), Some("first line second line"));
    let e = &s.entries[1];
    assert_eq!((e.entry_no, e.amount_minor, e.credit), (2, 2050, false));
    assert_eq!(
        (
            e.customer_ref.as_deref(),
            e.bank_ref.as_deref(),
            e.remittance.as_deref()
        ),
        (None, None, None)
    );
    assert_eq!(e.position.line(), 8);
}

use chrono::NaiveDate;

#[test]
fn reading_one_byte_at_a_time_gives_the_same() {
    let crlf = ONE.replace('\n', "\r\n");
    let (a, sa) = run(ONE);
    let (b, sb) = run_with(crlf.as_bytes(), 1);
    assert_eq!((a.statements, a.entries), (b.statements, b.entries));
    assert_eq!(sa[0].entries.len(), sb[0].entries.len());
    assert_eq!(sa[0].entries[0].remittance, sb[0].entries[0].remittance);
    let at = crlf.find("\r\n:61:2501020102D").unwrap() as u64 + 2;
    assert_eq!(sb[0].entries[1].position.byte_offset(), at, "CRLF counted");
    assert_eq!(b.findings, vec![]);
}

#[test]
fn the_envelope_gives_type_and_sender() {
    let output = "{1:F01RECVBEBBAXXX0000000000}{2:O9401200250102SNDRDEFFAXXX00000000002501021200N}{3:{108:X}}{4:\r\n\
:20:REF1\r\n:25:ACC\r\n:28C:1\r\n:60F:C250101EUR0,\r\n:62F:C250101EUR0,\r\n-}{5:{CHK:ABC}}\r\n";
    let (r, sts) = run(output);
    assert_eq!(found(&r), vec![]);
    assert_eq!(sts[0].servicer.as_deref(), Some("SNDRDEFF"));
    let input = "{1:F01SNDRDEFFA123000000000}{2:I942RECVBEBBXXXXN}{4:\n:20:R\n:25:ACC\n:28C:1/1\n\
:34F:EURD0,00\n:13D:2501021200+0100\n:61:2501020102D1,00NTRFA//B\n:90D:1EUR1,00\n-}\n";
    let (r, sts) = run(input);
    assert_eq!(found(&r), vec![]);
    assert_eq!(r.format, "mt942");
    let s = &sts[0];
    assert_eq!(
        (s.format, s.kind, s.servicer.as_deref()),
        ("mt942", StatementKind::Intraday, Some("SNDRDEFF123"))
    );
    assert_eq!(s.date, NaiveDate::from_ymd_opt(2025, 1, 2));
    assert_eq!(s.entries[0].status, EntryStatus::Pending);
    // `:20:` on the `{4:` line itself: its column counts the envelope.
    let (r, sts) = run(
        "{1:F01SNDRDEFFAXXX0000000000}{2:I950RECVBEBBXXXXN}{4::20:R\n:25:A\n:28C:1\n:60F:C250101EUR0,\n:62F:C250101EUR0,\n-}\n",
    );
    assert_eq!(sts[0].id, "R");
    assert_eq!(
        found(&r),
        vec![(
            Severity::Error,
            FindingCode::UnsupportedMessage,
            1,
            34,
            tag("{2:")
        )]
    );
}

#[test]
fn pages_are_joined_and_chained() {
    let pages = ":20:P1\n:25:ACC\n:28C:7/1\n:60F:C250101EUR10,\n:61:250102C5,NTRFA\n:62M:C250102EUR15,\n-\n\
:20:P2\n:25:ACC\n:28C:7/2\n:60M:C250102EUR15,\n:61:250102D1,NTRFB\n:62F:C250102EUR14,\n-\n";
    let (r, sts) = run(pages);
    assert_eq!(found(&r), vec![]);
    assert_eq!((r.statements, r.entries), (1, 2));
    let s = &sts[0];
    assert_eq!((s.id.as_str(), s.sequence.as_deref()), ("P1", Some("7/1")));
    let codes: Vec<_> = s
        .balances
        .iter()
        .map(|b| (b.code.as_str(), b.amount_minor))
        .collect();
    assert_eq!(codes, vec![(":60F:", 1000), (":62F:", 1400)]);
    assert_eq!(
        s.entries.iter().map(|e| e.entry_no).collect::<Vec<_>>(),
        vec![1, 2]
    );
    // A broken page chain and a page gap (the total across pages still adds up).
    let bad = pages
        .replace(":60M:C250102EUR15,", ":60M:C250102EUR16,")
        .replace("7/2", "7/3");
    let (r, sts) = run(&bad);
    assert_eq!(sts.len(), 1);
    assert_eq!(
        found(&r),
        vec![
            (
                Severity::Warning,
                FindingCode::SequenceGap,
                10,
                1,
                tag(":28C:")
            ),
            (
                Severity::Error,
                FindingCode::BalanceChain,
                11,
                1,
                tag(":60M:")
            ),
        ]
    );
    // A last page that never comes: the statement is given with its :62M:, and a warning.
    let (r, sts) = run(pages.split(":20:P2").next().unwrap());
    assert_eq!(
        sts[0]
            .balance(BalanceKind::IntermediateClosing)
            .unwrap()
            .amount_minor,
        1500
    );
    assert_eq!(
        found(&r),
        vec![(
            Severity::Warning,
            FindingCode::MissingTag,
            6,
            1,
            tag(":62M:")
        )]
    );
}

#[test]
fn statements_chain_and_number_per_account() {
    let st = |n: u32, open: &str, close: &str| {
        format!(":20:S{n}\n:25:ACC\n:28C:{n}\n:60F:C250101EUR{open}\n:62F:C250101EUR{close}\n")
    };
    let file = [st(1, "1,", "1,"), st(2, "1,", "1,"), st(4, "2,", "2,")].concat();
    let (r, sts) = run(&file);
    assert_eq!(sts.len(), 3);
    assert_eq!(
        found(&r),
        vec![
            (
                Severity::Warning,
                FindingCode::SequenceGap,
                11,
                1,
                tag(":20:")
            ),
            (
                Severity::Error,
                FindingCode::BalanceChain,
                14,
                1,
                tag(":60F:")
            ),
        ]
    );
    let chain = r
        .findings
        .iter()
        .find(|f| f.code == FindingCode::BalanceChain)
        .unwrap();
    assert_eq!(chain.found, "200 EUR");
    assert!(
        chain
            .expected
            .contains("closing balance 100 EUR of the previous statement S2")
    );
}

#[test]
fn reversals_and_funds_codes() {
    let file = ":20:R\n:25:A\n:28C:1\n:60F:C250101EUR0,\n:61:250101RD1,NTRFA\n:61:250101RC2,NTRFA\n\
:61:250101DR4,NTRFA\n:61:250101CR8,NTRFA\n:62F:C250101EUR3,\n";
    let (r, sts) = run(file);
    assert_eq!(found(&r), vec![]);
    let e: Vec<_> = sts[0]
        .entries
        .iter()
        .map(|e| (e.amount_minor, e.credit, e.reversal))
        .collect();
    assert_eq!(
        e,
        vec![
            (100, true, true),
            (200, false, true),
            (400, false, false),
            (800, true, false)
        ]
    );
}

#[test]
fn mt942_controls_are_counted_and_summed() {
    let file = ":20:R\n:25:A\n:28C:1\n:34F:EURD0,\n:13D:2501021200+0100\n:61:250102D1,NTRFA\n\
:61:250102C2,NTRFA\n:61:250102RD3,NTRFA\n:90D:2EUR1,\n:90C:2EUR5,01\n";
    let (r, _) = run(file);
    assert_eq!(
        found(&r),
        vec![
            (
                Severity::Error,
                FindingCode::ControlCountMismatch,
                9,
                1,
                tag(":90D:")
            ),
            (
                Severity::Error,
                FindingCode::ControlTotalMismatch,
                10,
                1,
                tag(":90C:")
            ),
        ]
    );
    let total = r
        .findings
        .iter()
        .find(|f| f.code == FindingCode::ControlTotalMismatch)
        .unwrap();
    assert_eq!(
        (total.expected.as_str(), total.found.as_str()),
        ("500 EUR (sum of the credit entries in minor units)", "501")
    );
}

#[test]
fn grammar_faults_have_line_column_and_tag() {
    let file = "junk before\n:20:R\n:25:A\n:28C:1\n:60F:C250101EUR1,001\n:61:250101C1,00NTRFA\n\
:99:x\ny\n:61:25013XC1,NTRFA\n:62F:C250101EUR2,\n:60F:C250101EUR1,\n";
    let (r, sts) = run(file);
    assert_eq!(sts[0].entries.len(), 1);
    assert_eq!(
        found(&r),
        vec![
            (
                Severity::Error,
                FindingCode::AmountFormat,
                5,
                16,
                tag(":60F:")
            ),
            (
                Severity::Warning,
                FindingCode::UnknownTag,
                7,
                1,
                tag(":99:")
            ),
            (Severity::Error, FindingCode::TagSyntax, 9, 5, tag(":61:")),
            (
                Severity::Error,
                FindingCode::RecordOrder,
                11,
                1,
                tag(":60F:")
            ),
        ]
    );
    // Missing tags, a field out of order, a known tag outside any message.
    let (r, _) = run(":61:250101C1,NTRFA\n:20:R\n:28C:1\n:25:A\n:62F:C250101EUR2,\n");
    assert_eq!(
        found(&r),
        vec![
            (Severity::Error, FindingCode::RecordOrder, 1, 1, tag(":61:")),
            (Severity::Error, FindingCode::MissingTag, 2, 1, tag(":20:")),
            (Severity::Error, FindingCode::RecordOrder, 4, 1, tag(":25:")),
        ]
    );
}

#[test]
fn limits_bound_lines_and_fields() {
    let long = format!("{ONE}{}\n", "x".repeat(LINE_BYTES_MAX + 10));
    let (r, _) = run(&long);
    assert_eq!(
        found(&r),
        vec![(
            Severity::Error,
            FindingCode::SizeLimit,
            11,
            LINE_BYTES_MAX as u64 + 1,
            None
        )]
    );
    let many = ONE.replace("second line\n", &"more\n".repeat(FIELD_LINES_MAX + 5));
    let (r, _) = run(&many);
    let f = found(&r);
    assert_eq!(
        f[0],
        (Severity::Warning, FindingCode::TagSyntax, 6, 1, tag(":86:"))
    );
    assert_eq!(
        f[1],
        (
            Severity::Error,
            FindingCode::SizeLimit,
            6 + FIELD_LINES_MAX as u64,
            1,
            tag(":86:")
        )
    );
}

#[test]
fn empty_and_messageless_files() {
    let (r, _) = run("");
    assert_eq!(
        found(&r),
        vec![(Severity::Error, FindingCode::EmptyFile, 1, 1, None)]
    );
    let (r, _) = run("hello\n\n");
    assert_eq!(
        found(&r),
        vec![(Severity::Error, FindingCode::NoStatements, 2, 1, None)]
    );
}

#[test]
fn narrative_lines_join_at_full_lines_only() {
    let full = "x".repeat(61);
    assert_eq!(
        remittance_text(&[(b"a b".as_slice(), 7), (b"c".as_slice(), 1)]),
        "a b c"
    );
    assert_eq!(
        remittance_text(&[(full.as_bytes(), 65), (b"yz".as_slice(), 2)]),
        format!("{full}yz")
    );
    assert_eq!(
        remittance_text(&[
            (b"  a   ".as_slice(), 6),
            (b"   ".as_slice(), 65),
            (b"b".as_slice(), 1)
        ]),
        "a b"
    );
    assert_eq!(decode(b"caf\xe9"), "caf\u{e9}");
    assert_eq!(decode("café".as_bytes()), "café");
}

#[test]
fn generated_file_reads_back_without_findings() {
    let mut out = Vec::new();
    generate_mt940(9, 30, 42, &mut out).unwrap();
    let (r, sts) = run_with(&out, 8192);
    assert_eq!(r.findings, vec![], "{}", String::from_utf8_lossy(&out));
    assert_eq!((r.format, r.statements, r.entries), ("mt940", 9, 270));
    assert_eq!(sts.len(), 9);
    assert!(sts.iter().all(|s| s.entries.len() == 30));
    // Round-robin over the accounts, each statement opening on the one before's closing.
    assert_eq!(sts[0].account, sts[4].account);
    assert_ne!(sts[0].account, sts[1].account);
    assert_eq!(
        sts[0]
            .balance(BalanceKind::ClosingBooked)
            .unwrap()
            .amount_minor,
        sts[4]
            .balance(BalanceKind::OpeningBooked)
            .unwrap()
            .amount_minor
    );
    assert_eq!(sts[0].servicer.as_deref(), Some("CLRLNL2A"));
    assert_eq!(
        crate::formats::detect::detect(&out),
        crate::formats::detect::Detected::Statement(crate::formats::detect::StatementFormat::Mt940)
    );
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains(":61:") && text.contains("\n/OCMT/EUR"),
        "details"
    );
    assert!(sts.iter().flat_map(|s| &s.entries).any(|e| e.reversal));
    for seed in 1..4 {
        let mut out = Vec::new();
        generate_mt940(13, 50, seed, &mut out).unwrap();
        let (r, _) = run_with(&out, 100);
        assert_eq!(
            (r.findings.len(), r.statements, r.entries),
            (0, 13, 650),
            "seed {seed}"
        );
    }
}

/// (severity, code, line, column, expected, found) of every finding, in file order.
fn said(r: &StatementRead) -> Vec<(Severity, FindingCode, u64, u64, String, String)> {
    let mut v: Vec<_> = r
        .findings
        .iter()
        .map(|f| {
            (
                f.severity,
                f.code,
                f.position.line(),
                f.position.column().unwrap_or(0),
                f.expected.clone(),
                f.found.clone(),
            )
        })
        .collect();
    v.sort_by_key(|x| (x.2, x.3));
    v
}

/// The warning a dialect rule gives at line and column.
fn told(
    rule: DialectRule,
    line: u64,
    column: u64,
    found: &str,
) -> (Severity, FindingCode, u64, u64, String, String) {
    (
        Severity::Warning,
        FindingCode::BankDialect,
        line,
        column,
        rule.says().to_string(),
        found.to_string(),
    )
}

/// An entry as (credit, minor units, currency, value date, booking date, customer
/// reference, bank reference, transaction type).
type Seen = (
    bool,
    u64,
    String,
    Option<NaiveDate>,
    Option<NaiveDate>,
    Option<String>,
    Option<String>,
    Option<String>,
);

fn seen(e: &crate::formats::statement::Entry) -> Seen {
    (
        e.credit,
        e.amount_minor,
        e.currency.clone(),
        e.value_date,
        e.booking_date,
        e.customer_ref.clone(),
        e.bank_ref.clone(),
        e.bank_tx_code.clone(),
    )
}

fn ymd(y: i32, m: u32, d: u32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(y, m, d)
}

fn st(s: Option<&str>) -> Option<String> {
    s.map(str::to_string)
}

use crate::formats::dialect::DialectRule;

#[test]
fn a_reference_longer_than_16_is_read_whole() {
    // ASN Bank: the counterparty's 18-character IBAN as the customer reference.
    let (r, sts) = run(
        ":20:ASN1\n:25:NL81ASNB9999999999\n:28C:1/1\n:60F:C200101EUR444,29\n\
         :61:2001010101D65,00NOVBNL47INGB9999999999\n\
         :61:2001010101C1,00NTRFNONREF//BANKREF1234567890\n:62F:C200101EUR380,29\n-\n",
    );
    assert_eq!(
        said(&r),
        vec![
            told(DialectRule::LongReference, 5, 25, "NL47INGB9999999999"),
            told(DialectRule::LongReference, 6, 32, "BANKREF1234567890"),
        ]
    );
    assert_eq!(
        sts[0].entries.iter().map(seen).collect::<Vec<_>>(),
        vec![
            (
                false,
                6500,
                "EUR".into(),
                ymd(2020, 1, 1),
                ymd(2020, 1, 1),
                st(Some("NL47INGB9999999999")),
                None,
                st(Some("NOVB"))
            ),
            (
                true,
                100,
                "EUR".into(),
                ymd(2020, 1, 1),
                ymd(2020, 1, 1),
                None,
                st(Some("BANKREF1234567890")),
                st(Some("NTRF"))
            ),
        ]
    );
}

#[test]
fn a_statement_line_without_reference_is_nonref() {
    let (r, sts) = run(
        ":20:S\n:25:12345678/1020304050\n:28C:0\n:60F:C170914EUR500,00\n\
         :61:170914D233,15NMSC\n:62F:C170914EUR266,85\n-\n",
    );
    assert_eq!(
        said(&r),
        vec![told(DialectRule::NoReference, 5, 22, "end of line")]
    );
    assert_eq!(
        seen(&sts[0].entries[0]),
        (
            false,
            23315,
            "EUR".into(),
            ymd(2017, 9, 14),
            None,
            None,
            None,
            st(Some("NMSC"))
        )
    );
}

#[test]
fn transaction_type_s_with_blanks_is_nmsc() {
    let (r, sts) = run(":20:S\n:25:A1\n:28C:1\n:60F:C170914EUR100,00\n\
         :61:1709140914D12,00S   NONREF//B1\n:62F:C170914EUR88,00\n-\n");
    assert_eq!(
        said(&r),
        vec![told(DialectRule::BlankTransactionType, 5, 21, "S   ")]
    );
    assert_eq!(
        seen(&sts[0].entries[0]),
        (
            false,
            1200,
            "EUR".into(),
            ymd(2017, 9, 14),
            ymd(2017, 9, 14),
            None,
            st(Some("B1")),
            st(Some("NMSC"))
        )
    );
}

#[test]
fn a_ten_digit_statement_number_is_read_whole() {
    let (r, sts) = run(":20:S\n:25:A1\n:28C:1810118101/12\n:60F:C180410TRY1,00\n\
         :61:180410C1,00NTRFR1\n:62F:C180410TRY2,00\n-\n");
    assert_eq!(
        said(&r),
        vec![told(DialectRule::LongStatementNumber, 3, 6, "1810118101")]
    );
    assert_eq!(sts[0].sequence.as_deref(), Some("1810118101/12"));
    assert_eq!(
        seen(&sts[0].entries[0]),
        (
            true,
            100,
            "TRY".into(),
            ymd(2018, 4, 10),
            None,
            st(Some("R1")),
            None,
            st(Some("NTRF"))
        )
    );
}

#[test]
fn zero_padded_amounts_past_15_characters_are_read() {
    // Old Rabobank layout: 16 integer digits and more.
    let (r, sts) = run(
        ":20:S\n:25:A1\n:28C:1\n:60F:C180410EUR0000000000000100,00\n\
         :61:1804100410C0000000000000050,00NTRFREF1\n:62F:C180410EUR150,00\n-\n",
    );
    assert_eq!(
        said(&r),
        vec![
            told(DialectRule::LongAmount, 4, 16, "0000000000000100,00"),
            told(DialectRule::LongAmount, 5, 16, "0000000000000050,00"),
        ]
    );
    assert_eq!(
        sts[0]
            .balance(BalanceKind::OpeningBooked)
            .unwrap()
            .amount_minor,
        10000
    );
    assert_eq!(
        seen(&sts[0].entries[0]),
        (
            true,
            5000,
            "EUR".into(),
            ymd(2018, 4, 10),
            ymd(2018, 4, 10),
            st(Some("REF1")),
            None,
            st(Some("NTRF"))
        )
    );
}

#[test]
fn amounts_without_a_comma_are_whole_units() {
    let (r, sts) = run(":20:S\n:25:A1\n:28C:1\n:60F:C180417EUR100,00\n\
         :61:1804170417C500NTRFREF1\n:62F:C180417EUR600\n-\n");
    assert_eq!(
        said(&r),
        vec![
            told(DialectRule::NoDecimalComma, 5, 16, "500"),
            told(DialectRule::NoDecimalComma, 6, 16, "600"),
        ]
    );
    assert_eq!(
        seen(&sts[0].entries[0]),
        (
            true,
            50000,
            "EUR".into(),
            ymd(2018, 4, 17),
            ymd(2018, 4, 17),
            st(Some("REF1")),
            None,
            st(Some("NTRF"))
        )
    );
}

/// An MT942 whose `:34F:` is `floor`, three entries and both control totals.
fn mt942_with_floor(floor: &str) -> String {
    format!(
        ":20:X\n:25:PL1\n:28C:1/1\n:34F:{floor}\n:13D:1610301730+0000\n\
         :61:1610301030D1,50NTRFA\n:61:1610301030D2,50NTRFB\n:61:1610301030C3,00NTRFC\n\
         :90D:2PLN4,00\n:90C:1PLN3,00\n-\n"
    )
}

#[test]
fn a_floor_limit_without_a_comma_gives_its_currency_and_no_cascade() {
    // `:34F:PLN0`: read as 0 PLN; the entries are in PLN and the totals hold.
    let (r, sts) = run(&mt942_with_floor("PLN0"));
    assert_eq!(said(&r), vec![told(DialectRule::NoDecimalComma, 4, 9, "0")]);
    let amounts: Vec<_> = sts[0]
        .entries
        .iter()
        .map(|e| (e.credit, e.amount_minor, e.currency.as_str()))
        .collect();
    assert_eq!(
        amounts,
        vec![(false, 150, "PLN"), (false, 250, "PLN"), (true, 300, "PLN")]
    );
    // A floor limit whose amount is bad: one error there; its currency still holds, so
    // no "missing currency" per entry and no control total thrown off by it.
    let (r, sts) = run(&mt942_with_floor("PLNX"));
    assert_eq!(
        said(&r),
        vec![(
            Severity::Error,
            FindingCode::TagSyntax,
            4,
            9,
            "an amount like 1234,56 (digits, a decimal comma, at most 15 characters)".into(),
            "X".into()
        )]
    );
    assert_eq!(sts[0].entries[2].amount_minor, 300);
}

#[test]
fn thirty_february_is_the_last_day_of_february() {
    let (r, sts) = run(":20:S\n:25:A1\n:28C:1\n:60F:C160229EUR1200,00\n\
         :61:1602300301DR6,00N024NONREF\n:62F:C160301EUR1194,00\n-\n");
    assert_eq!(
        said(&r),
        vec![told(DialectRule::ThirtyDayMonth, 5, 5, "160230")]
    );
    assert_eq!(
        seen(&sts[0].entries[0]),
        (
            false,
            600,
            "EUR".into(),
            ymd(2016, 2, 29),
            ymd(2016, 3, 1),
            None,
            None,
            st(Some("N024"))
        )
    );
    // 31 February no dating writes: no date, an error.
    let (r, _) = run(":20:S\n:25:A1\n:28C:1\n:60F:C160229EUR1200,00\n\
         :61:1602310301DR6,00N024NONREF\n:62F:C160301EUR1194,00\n-\n");
    assert_eq!(
        found(&r),
        vec![(Severity::Error, FindingCode::DateFormat, 5, 5, tag(":61:"))]
    );
}

#[test]
fn a_withdrawn_currency_is_read_in_its_historic_decimals() {
    // DEM, withdrawn in 2002: 2 decimals; told once, at the statement's currency.
    let (r, sts) = run(":20:S\n:25:A1\n:28C:1\n:60F:C131016DEM100,00\n\
         :61:1310171017D20,5NTRFN\n:62F:C131017DEM79,50\n:64:C131017ITL1500\n-\n");
    assert_eq!(
        said(&r),
        vec![
            told(DialectRule::WithdrawnCurrency, 4, 13, "DEM"),
            told(DialectRule::WithdrawnCurrency, 7, 12, "ITL"),
            told(DialectRule::NoDecimalComma, 7, 15, "1500"),
        ]
    );
    assert_eq!(sts[0].currency.as_deref(), Some("DEM"));
    assert_eq!(
        seen(&sts[0].entries[0]),
        (
            false,
            2050,
            "DEM".into(),
            ymd(2013, 10, 17),
            ymd(2013, 10, 17),
            st(Some("N")),
            None,
            st(Some("NTRF"))
        )
    );
    assert_eq!(
        sts[0]
            .balance(BalanceKind::ClosingAvailable)
            .unwrap()
            .amount_minor,
        1500,
        "ITL has no decimals"
    );
}

#[test]
fn a_currency_after_the_account_is_split_off() {
    let (r, sts) = run(
        ":20:S\n:25:NL34RABO0142623393 EUR\n:28C:1\n:60F:C250101EUR10,00\n\
         :61:2501010101C1,00NTRFR\n:62F:C250101EUR11,00\n-\n",
    );
    assert_eq!(
        said(&r),
        vec![told(
            DialectRule::AccountCurrencySuffix,
            2,
            24,
            "NL34RABO0142623393 EUR"
        )]
    );
    assert_eq!(
        (sts[0].account.as_str(), sts[0].currency.as_deref()),
        ("NL34RABO0142623393", Some("EUR"))
    );
    assert_eq!(
        seen(&sts[0].entries[0]),
        (
            true,
            100,
            "EUR".into(),
            ymd(2025, 1, 1),
            ymd(2025, 1, 1),
            st(Some("R")),
            None,
            st(Some("NTRF"))
        )
    );
    // The account and its balances disagree on the currency: which one is meant is not
    // clear, one error at the balance; the amounts are not read (no mismatch follows).
    let (r, sts) = run(
        ":20:S\n:25:NL34RABO0142623393 USD\n:28C:1\n:60F:C250101EUR10,00\n\
         :61:2501010101C1,00NTRFR\n:62F:C250101EUR11,00\n-\n",
    );
    assert_eq!(
        said(&r),
        vec![
            told(
                DialectRule::AccountCurrencySuffix,
                2,
                24,
                "NL34RABO0142623393 USD"
            ),
            (
                Severity::Error,
                FindingCode::CurrencyCode,
                4,
                13,
                "the currency :25: names after the account, USD".into(),
                "EUR".into()
            ),
        ]
    );
    assert_eq!(
        (
            sts[0].entries[0].amount_minor,
            sts[0].entries[0].currency.as_str()
        ),
        (0, "")
    );
    // Not a currency code: the account as written.
    let (r, sts) =
        run(":20:S\n:25:ACCOUNT ABC\n:28C:1\n:60F:C250101EUR10,00\n:62F:C250101EUR10,00\n-\n");
    assert_eq!(said(&r), vec![]);
    assert_eq!(sts[0].account, "ACCOUNT ABC");
}

#[test]
fn tag_like_lines_inside_details_continue_them() {
    // `:12:11` and `:25:00` are text (a wrapped timestamp; :25: cannot follow :86:);
    // :61:, :86:, :62F: and :20: still start their fields.
    let (r, sts) = run(":20:S\n:25:A1\n:28C:1\n:60F:C250101EUR10,00\n\
         :61:2501010101C1,00NTRFR1\n:86:paid 2017-01-01T13\n:12:11 ok\n:25:00 more\n\
         :61:2501010101C2,00NTRFR2\n:86:second\n:62F:C250101EUR13,00\n-\n\
         :20:T\n:25:A1\n:28C:2\n:60F:C250101EUR13,00\n:62F:C250101EUR13,00\n-\n");
    assert_eq!(
        said(&r),
        vec![
            told(DialectRule::WrappedTagLikeLine, 7, 1, ":12:11 ok"),
            told(DialectRule::WrappedTagLikeLine, 8, 1, ":25:00 more"),
        ]
    );
    assert_eq!((r.statements, r.entries), (2, 2));
    let texts: Vec<_> = sts[0]
        .entries
        .iter()
        .map(|e| e.remittance.as_deref())
        .collect();
    assert_eq!(
        texts,
        vec![
            Some("paid 2017-01-01T13:12:11 ok:25:00 more"),
            Some("second")
        ]
    );
    assert_eq!(sts[0].account, "A1");
}

#[test]
fn an_amount_not_read_leaves_no_sum_to_mismatch() {
    // 1,234 EUR has a decimal too many: one error at the amount. The entry stays (it is
    // counted) with no amount and no currency; no balance or control total follows.
    let (r, sts) = run(":20:S\n:25:A1\n:28C:1\n:60F:C250101EUR10,00\n\
         :61:2501010101C1,234NTRFR1\n:62F:C250101EUR11,23\n-\n");
    assert_eq!(
        found(&r),
        vec![(
            Severity::Error,
            FindingCode::AmountFormat,
            5,
            16,
            tag(":61:")
        )]
    );
    assert_eq!(
        (
            sts[0].entries[0].amount_minor,
            sts[0].entries[0].currency.as_str()
        ),
        (0, "")
    );
    let (r, _) = run(
        ":20:X\n:25:PL1\n:28C:1/1\n:34F:EUR0,00\n:13D:1610301730+0000\n\
         :61:1610301030D1,505NTRFA\n:90D:1EUR1,50\n-\n",
    );
    assert_eq!(
        found(&r),
        vec![(
            Severity::Error,
            FindingCode::AmountFormat,
            6,
            16,
            tag(":61:")
        )]
    );
    // No field gives the currency at all: one finding, at the first :61:, not one each.
    let (r, _) = run(":20:S\n:25:A1\n:28C:1\n:61:2501010101C1,00NTRFR1\n\
         :61:2501010101C2,00NTRFR2\n:62F:C250101EUR13,00\n-\n");
    assert_eq!(
        found(&r),
        vec![
            (Severity::Error, FindingCode::MissingTag, 1, 1, tag(":20:")),
            (Severity::Error, FindingCode::MissingTag, 4, 16, tag(":61:")),
        ]
    );
}

#[test]
fn a_balance_without_its_currency_is_in_the_statements() {
    let (r, sts) = run(":20:S\n:25:1234\n:28C:1\n:60F:C250101EUR10,00\n\
         :61:2501010101C1,00NTRFR\n:62F:C25010111,00\n-\n");
    assert_eq!(
        said(&r),
        vec![told(DialectRule::NoBalanceCurrency, 6, 13, "no currency")]
    );
    let c = sts[0].balance(BalanceKind::ClosingBooked).unwrap();
    assert_eq!((c.amount_minor, c.currency.as_str()), (1_100, "EUR"));
    // No currency anywhere before it: which one is meant is not clear, one error at each.
    let (r, _) = run(":20:S\n:25:1234\n:28C:1\n:60F:C25010110,00\n:62F:C25010110,00\n-\n");
    let errors: Vec<_> = found(&r)
        .into_iter()
        .filter(|f| f.0 == Severity::Error)
        .collect();
    assert_eq!(
        errors,
        vec![
            (
                Severity::Error,
                FindingCode::MissingTag,
                4,
                13,
                tag(":60F:")
            ),
            (
                Severity::Error,
                FindingCode::MissingTag,
                5,
                13,
                tag(":62F:")
            ),
        ]
    );
}

#[test]
fn one_account_in_two_currencies_chains_each_currency_apart() {
    // The currency split off `:25:` leaves one account name; its EUR and USD statements
    // are two chains, each continuous.
    let (r, sts) = run(
        ":20:A\n:25:NL34RABO0142623393 EUR\n:28C:1\n:60F:C250101EUR10,00\n:62F:C250101EUR10,00\n-\n\
         :20:B\n:25:NL34RABO0142623393 USD\n:28C:1\n:60F:C250101USD99,00\n:62F:C250101USD99,00\n-\n\
         :20:C\n:25:NL34RABO0142623393 EUR\n:28C:2\n:60F:C250102EUR10,00\n:62F:C250102EUR10,00\n-\n",
    );
    assert_eq!(sts.len(), 3);
    assert!(sts.iter().all(|s| s.balance_breaks.is_empty()), "{sts:?}");
    let faults: Vec<_> = found(&r)
        .into_iter()
        .filter(|f| f.1 != FindingCode::BankDialect)
        .collect();
    assert_eq!(faults, vec![]);
}
