//! Entry detail rules: the fields every layout shares (transaction code against the
//! batch's service class, RDFI routing and check digit, addenda indicator), then the
//! rules of the batch's layout (`sec.rs`); the entry goes into the batch's totals and is
//! read by the same layout.

use super::batch::{Batch, Unknown};
use super::check::{Check, text};
use crate::findings::{FieldSpec, FindingCode, RecordPosition, show};
use crate::formats::nacha::ValidateOptions;
use crate::formats::nacha::assemble::Entry;
use crate::formats::nacha::record::*;
use crate::formats::nacha::sec::{BatchKind, EntryLayout, FieldRule};
use crate::formats::nacha::validate::{
    Direction, adv_transaction_direction, is_mmyy, is_return_or_change_code, parse_u64,
    routing_check_digit, transaction_direction,
};

/// An entry read, waiting for its addenda (the records that follow it).
#[derive(Debug)]
pub(crate) struct Pending {
    /// The entry as the ingest reads it; `None` when validating only (`check`), which
    /// keeps nothing of it but its position (boxed: a `Pending` is moved once an entry).
    pub(crate) entry: Option<Box<Entry>>,
    /// The entry detail record's position.
    pub(crate) position: RecordPosition,
    /// The addenda record indicator, column 79.
    pub(crate) indicator: u8,
    /// Declared addenda count (CTX), with its field.
    pub(crate) declared_addenda: Option<(u64, FieldSpec)>,
    /// Addenda seen so far of types 05, 17 and 18: each type numbers its own 1, 2, ...
    pub(crate) sequenced_addenda: [u64; 3],
    /// Addenda records that followed the entry.
    pub(crate) addenda_count: u64,
    /// An IAT entry (IAT layouts, addenda 10-18).
    pub(crate) iat: bool,
    /// An IAT notification of change (IATCOR): addenda 10-16, then one addenda 98.
    pub(crate) iat_noc: bool,
    /// IAT addenda types in the order they came (10-18, and 98).
    pub(crate) iat_types_seen: Vec<u8>,
    /// The trace number held a non-ASCII byte (already a finding): the addenda's entry
    /// detail sequence numbers are not compared with it.
    pub(crate) trace_unreadable: bool,
    /// The trace number's bytes (what `Entry::trace_number` holds when it is readable),
    /// kept without an allocation: the check's entries carry no text.
    pub(crate) trace: TraceBytes,
}

/// A trace number's bytes: its layout's fields, each with its trailing blanks trimmed,
/// joined (at most 15 bytes in every layout).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TraceBytes {
    bytes: [u8; 24],
    len: u8,
}

impl TraceBytes {
    fn of(record: &[u8; RECORD_LEN], fields: &[FieldSpec]) -> Self {
        let mut t = TraceBytes {
            bytes: [b' '; 24],
            len: 0,
        };
        // Each field copied whole and the length advanced past it without its trailing
        // blanks (the next field's bytes go over them): the bytes past `len` may be a
        // field's, so only `bytes[..len]` is read.
        for f in fields {
            let field = f.slice(record);
            let at = usize::from(t.len);
            let n = field.len().min(t.bytes.len() - at);
            t.bytes[at..at + n].copy_from_slice(&field[..n]);
            t.len += field[..n].trim_ascii_end().len() as u8;
        }
        t
    }
    /// The entry detail sequence number an addenda repeats: bytes 9 to the end.
    pub(crate) fn sequence(&self) -> &[u8] {
        self.bytes[..usize::from(self.len)].get(8..).unwrap_or(&[])
    }
}

/// Entry detail rules; the entry goes into `batch`'s totals and waits for its addenda.
/// With `keep` false no entry is built: what validation needs of it (its position, its
/// trace number) is in the `Pending`.
pub(crate) fn check_entry(
    c: &mut Check,
    batch: &mut Batch,
    record_no: u64,
    keep: bool,
    options: &ValidateOptions,
) -> Pending {
    let (code, direction) = check_transaction_code(c, batch);
    let rdfi = check_rdfi(c);
    let indicator = check_addenda_indicator(c);
    let (amount_minor, declared_addenda) = check_layout_fields(c, batch.layout);
    check_sec_rules(c, batch, code, options);
    batch.totals.add_entry(rdfi, direction, amount_minor);
    let unknown = unknown_totals(c, batch.layout, direction);
    batch.totals.unknown = batch.totals.unknown.or(unknown);
    let entry = keep.then(|| {
        let detail = Detail {
            record_no,
            position: c.pos(),
            transaction_code: code,
            direction,
            amount_minor,
            trace_number: joined(c.record(), batch.layout.trace),
        };
        Box::new(full_entry(batch, detail, c.record()))
    });
    Pending {
        entry,
        position: c.pos(),
        indicator,
        declared_addenda,
        sequenced_addenda: [0; 3],
        addenda_count: 0,
        iat: batch.kind() == BatchKind::Iat,
        iat_noc: batch.iat_noc,
        iat_types_seen: Vec::new(),
        trace_unreadable: batch.layout.trace.iter().any(|&f| c.unreadable(f)),
        trace: TraceBytes::of(c.record(), batch.layout.trace),
    }
}

/// The batch totals this entry makes unknown, a field that feeds them holding a
/// non-ASCII byte (see [`Unknown`]): the amount its direction's total, the transaction
/// code both, the RDFI routing number the entry hash.
fn unknown_totals(c: &Check, layout: &EntryLayout, direction: Direction) -> Unknown {
    let code = c.unreadable(ENTRY_DETAIL.transaction_code);
    let amount = layout
        .rules
        .iter()
        .any(|&(rule, field)| rule == FieldRule::Amount && c.unreadable(field));
    Unknown {
        entry_hash: c.unreadable(ENTRY_DETAIL.rdfi_identification),
        debit: code || amount && direction == Direction::Debit,
        credit: code || amount && direction == Direction::Credit,
        ..Unknown::default()
    }
}

/// The rules one SEC code adds to its layout's: what TEL, SHR and an IAT notification of
/// change allow.
fn check_sec_rules(c: &mut Check, batch: &Batch, code: u8, options: &ValidateOptions) {
    if batch.iat_noc {
        check_change_transaction_code(c, code);
        return;
    }
    match batch.sec_code.as_str() {
        "TEL" => {
            check_tel_debit(c, batch, code);
            let field = ENTRY_DETAIL.individual_name;
            let relax = options.allow_empty_individual_name;
            c.not_blank_or_zeros(field, "an individual name", relax);
        }
        "SHR" => check_card_expiration_date(c),
        _ => {}
    }
}

/// TEL entries are debits (the receiver authorised a debit by telephone); a credit only
/// reverses one, in a batch whose company entry description is `REVERSAL` (NACHA
/// Operating Rules, reversing entries). A credit in a 225 batch is already a finding.
fn check_tel_debit(c: &mut Check, batch: &Batch, code: u8) {
    let reversal = batch.company_entry_description.trim() == "REVERSAL";
    let credit = transaction_direction(code) == Some(Direction::Credit);
    if credit && !reversal && batch.service_class_code != "225" {
        c.error(
            FindingCode::TransactionCode,
            Some(ENTRY_DETAIL.transaction_code),
            "a debit transaction code (TEL entries are debits; credits only in a batch \
             whose company entry description is REVERSAL)",
            format!("{code:02} (credit)"),
        );
    }
}

/// SHR: the card expiration date, MMYY, month 01-12.
fn check_card_expiration_date(c: &mut Check) {
    let field = SHR_ENTRY_DETAIL.card_expiration_date;
    let v = c.value(field);
    if !is_mmyy(v) {
        let found = show(v);
        let expected = "a card expiration date MMYY (month 01-12)";
        c.error(FindingCode::FieldFormat, Some(field), expected, found);
    }
}

/// A notification of change carries a return or NOC transaction code (21, 26, 31, 36,
/// 41, 46, 51, 56), not a forward entry's. An unknown code is already a finding.
fn check_change_transaction_code(c: &mut Check, code: u8) {
    if transaction_direction(code).is_some() && !is_return_or_change_code(code) {
        c.error(
            FindingCode::TransactionCode,
            Some(ENTRY_DETAIL.transaction_code),
            "a return or NOC transaction code (21, 26, 31, 36, 41, 46, 51, 56) in an IAT \
             notification of change",
            format!("{code:02}"),
        );
    }
}

/// A known transaction code, of a direction the service class allows.
fn check_transaction_code(c: &mut Check, batch: &Batch) -> (u8, Direction) {
    let field = ENTRY_DETAIL.transaction_code;
    let code = c.digits(field).unwrap_or(0) as u8;
    let adv = batch.kind() == BatchKind::Adv;
    let direction = if adv {
        adv_transaction_direction(code)
    } else {
        transaction_direction(code)
    };
    let direction = direction.unwrap_or_else(|| {
        let expected = if adv {
            "an ADV transaction code (81-88)"
        } else {
            "a transaction code (21-24, 26-29, 31-34, 36-39, 41-44, 46-49, 51-56)"
        };
        c.mismatch(FindingCode::TransactionCode, field, expected);
        Direction::Credit
    });
    match (batch.service_class_code.as_str(), direction) {
        ("220", Direction::Debit) => c.error(
            FindingCode::DebitInCreditBatch,
            Some(field),
            "a credit transaction code (service class 220)",
            format!("{code:02} (debit)"),
        ),
        ("225", Direction::Credit) => c.error(
            FindingCode::CreditInDebitBatch,
            Some(field),
            "a debit transaction code (service class 225)",
            format!("{code:02} (credit)"),
        ),
        _ => {}
    }
    (code, direction)
}

/// The RDFI routing number (8 digits) and its check digit; returns the routing number
/// for the entry hash (0 when not digits).
fn check_rdfi(c: &mut Check) -> u64 {
    let l = ENTRY_DETAIL;
    let Some(rdfi) = c.digits(l.rdfi_identification) else {
        return 0;
    };
    let first8 = c.value(l.rdfi_identification);
    let want = routing_check_digit(first8).unwrap_or(0);
    let got = c.value(l.check_digit);
    if parse_u64(got) != Some(u64::from(want)) {
        c.error(
            FindingCode::CheckDigit,
            Some(l.check_digit),
            format!("{want} (check digit of RDFI {})", show(first8)),
            show(got),
        );
    }
    rdfi
}

/// The addenda record indicator: 0 or 1 (whether addenda follow is checked when they
/// have, see `addenda.rs`).
fn check_addenda_indicator(c: &mut Check) -> u8 {
    let field = ENTRY_DETAIL.addenda_record_indicator;
    let v = c.value(field);
    if !matches!(v, b"0" | b"1") {
        c.error(FindingCode::FieldFormat, Some(field), "0 or 1", show(v));
    }
    match v {
        [b] => *b,
        _ => b' ',
    }
}

/// The layout's own field rules, in its order; returns the amount (0 when not digits)
/// and the declared addenda count, if the layout has one.
fn check_layout_fields(c: &mut Check, layout: &EntryLayout) -> (u64, Option<(u64, FieldSpec)>) {
    let mut amount_minor = 0;
    let mut declared_addenda = None;
    for &(rule, field) in layout.rules {
        match rule {
            FieldRule::NonBlank => c.non_blank(field),
            FieldRule::Digits => {
                c.digits(field);
            }
            FieldRule::Amount => amount_minor = c.digits(field).unwrap_or(0),
            FieldRule::AddendaCount => declared_addenda = c.digits(field).map(|n| (n, field)),
        }
    }
    (amount_minor, declared_addenda)
}

/// The texts of `fields` in `record`, each with its trailing blanks trimmed, joined.
fn joined(record: &[u8; RECORD_LEN], fields: &[FieldSpec]) -> String {
    fields.iter().map(|f| text(f.slice(record))).collect()
}

fn field_text(record: &[u8; RECORD_LEN], field: Option<FieldSpec>) -> String {
    field.map_or_else(String::new, |f| text(f.slice(record)))
}

/// What the rules read of an entry, for the entry the ingest keeps.
struct Detail {
    record_no: u64,
    position: RecordPosition,
    transaction_code: u8,
    direction: Direction,
    amount_minor: u64,
    trace_number: String,
}

fn full_entry(batch: &Batch, d: Detail, record: &[u8; RECORD_LEN]) -> Entry {
    let (l, layout) = (ENTRY_DETAIL, batch.layout);
    Entry {
        record_no: d.record_no,
        position: d.position,
        batch_number: batch.batch_number.clone(),
        service_class_code: batch.service_class_code.clone(),
        sec_code: batch.sec_code.clone(),
        company_name: batch.company_name.clone(),
        company_identification: batch.company_identification.clone(),
        company_entry_description: batch.company_entry_description.clone(),
        effective_entry_date: batch.effective_entry_date,
        odfi_identification: batch.odfi_identification.clone(),
        transaction_code: d.transaction_code,
        direction: d.direction,
        rdfi_routing: joined(record, &[l.rdfi_identification, l.check_digit]),
        account: text(layout.account.slice(record)),
        amount_minor: d.amount_minor,
        individual_identification: field_text(record, layout.identification),
        individual_name: field_text(record, layout.name),
        discretionary_data: joined(record, layout.discretionary),
        trace_number: d.trace_number,
        addenda: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{
        FILE_HEADER_LINE, batch_header, build, entry, errors, findings_with, mutate, row,
    };
    use crate::findings::FindingCode::*;
    use crate::findings::Severity;
    use crate::formats::nacha::ValidateOptions;

    /// A file of one `sec` batch of service class `scc` and description `desc`, holding
    /// `entries`.
    fn one_batch(scc: &str, sec: &str, desc: &str, entries: &[String]) -> Vec<u8> {
        let mut lines = vec![
            FILE_HEADER_LINE.to_string(),
            batch_header(scc, sec, desc, 1),
        ];
        lines.extend_from_slice(entries);
        build(&lines)
    }

    #[test]
    fn tel_entries_are_debits_unless_the_batch_is_a_reversal() {
        let debit = entry(27, 12_500, "CUST 1", "JANE CALLER", false, 1);
        let credit = entry(22, 12_500, "CUST 2", "JOHN CALLER", false, 2);
        assert_eq!(
            errors(&one_batch(
                "225",
                "TEL",
                "PHONE PMT",
                std::slice::from_ref(&debit)
            )),
            vec![]
        );
        let mixed = [debit.clone(), credit.clone()];
        assert_eq!(
            errors(&one_batch("200", "TEL", "PHONE PMT", &mixed)),
            vec![row(
                TransactionCode,
                4,
                "transaction_code",
                "a debit transaction code (TEL entries are debits; credits only in a batch \
                 whose company entry description is REVERSAL)",
                "22 (credit)",
            )]
        );
        // A reversal may credit back what a TEL debit took.
        assert_eq!(errors(&one_batch("200", "TEL", "REVERSAL", &mixed)), vec![]);
        // In a debits-only batch the credit is one finding, the service class's.
        let in_225 = errors(&one_batch("225", "TEL", "PHONE PMT", &mixed));
        let codes: Vec<_> = in_225.iter().map(|r| (r.0, r.1)).collect();
        assert_eq!(codes, vec![(CreditInDebitBatch, 4)]);
        // Other SEC codes keep their credits.
        assert_eq!(
            errors(&one_batch("200", "WEB", "PHONE PMT", &mixed)),
            vec![]
        );
    }

    #[test]
    fn a_tel_individual_name_must_not_be_blank_or_zeros() {
        for name in ["", "0000000000000000000000", "000  "] {
            let e = entry(27, 12_500, "CUST 1", name, false, 1);
            let f = one_batch("225", "TEL", "PHONE PMT", &[e]);
            let found = format!("{name:<22}");
            let want = row(
                InvalidValue,
                3,
                "individual_name",
                "an individual name (not blank, not all zeros)",
                &found,
            );
            assert_eq!(errors(&f), vec![want.clone()], "{name:?}");
            // --allow-empty-individual-name: the same finding, as a warning.
            let relaxed = ValidateOptions {
                allow_empty_individual_name: true,
                ..ValidateOptions::default()
            };
            assert_eq!(findings_with(&f, relaxed), vec![(Severity::Warning, want)]);
        }
        // PPD does not ask for it here.
        let e = entry(22, 12_500, "CUST 1", "", false, 1);
        assert_eq!(errors(&one_batch("220", "PPD", "PAYROLL", &[e])), vec![]);
    }

    #[test]
    fn an_shr_card_expiration_month_is_01_to_12() {
        // Identification: card expiration date MMYY (40-43), document reference (44-54).
        for (id, ok) in [
            ("1227DOC00000001", true),
            ("0127", true),
            ("0027DOC1", false),
            ("1327", false),
            ("12AB", false),
            ("", false),
        ] {
            let e = entry(27, 4_000, id, "4000123412341234", false, 1);
            let got = errors(&one_batch("225", "SHR", "CARD TXN", &[e]));
            let want = if ok {
                vec![]
            } else {
                vec![row(
                    FieldFormat,
                    3,
                    "card_expiration_date",
                    "a card expiration date MMYY (month 01-12)",
                    &format!("{id:<4}")[..4],
                )]
            };
            assert_eq!(got, want, "{id:?}");
        }
    }

    #[test]
    fn entry_rules_report_their_exact_position() {
        let cases = vec![
            (
                3,
                12,
                "5",
                vec![row(
                    CheckDigit,
                    3,
                    "check_digit",
                    "4 (check digit of RDFI 23138010)",
                    "5",
                )],
            ),
            (
                3,
                2,
                "25",
                vec![row(
                    TransactionCode,
                    3,
                    "transaction_code",
                    "a transaction code (21-24, 26-29, 31-34, 36-39, 41-44, 46-49, 51-56)",
                    "25",
                )],
            ),
            (
                3,
                2,
                "27",
                vec![
                    row(
                        DebitInCreditBatch,
                        3,
                        "transaction_code",
                        "a credit transaction code (service class 220)",
                        "27 (debit)",
                    ),
                    row(
                        TotalDebitMismatch,
                        8,
                        "total_debit_entry_dollar_amount",
                        "000000250000",
                        "000000000000",
                    ),
                    row(
                        TotalCreditMismatch,
                        8,
                        "total_credit_entry_dollar_amount",
                        "000000537549",
                        "000000787549",
                    ),
                    row(
                        TotalDebitMismatch,
                        9,
                        "total_debit_entry_dollar_amount_in_file",
                        "000000250000",
                        "000000000000",
                    ),
                    row(
                        TotalCreditMismatch,
                        9,
                        "total_credit_entry_dollar_amount_in_file",
                        "000000537549",
                        "000000787549",
                    ),
                ],
            ),
            (
                3,
                30,
                "000025000A",
                vec![
                    row(FieldFormat, 3, "amount", "10 digits", "000025000A"),
                    row(
                        TotalCreditMismatch,
                        8,
                        "total_credit_entry_dollar_amount",
                        "000000537549",
                        "000000787549",
                    ),
                    row(
                        TotalCreditMismatch,
                        9,
                        "total_credit_entry_dollar_amount_in_file",
                        "000000537549",
                        "000000787549",
                    ),
                ],
            ),
            (
                3,
                80,
                "12104288000000X",
                vec![row(
                    FieldFormat,
                    3,
                    "trace_number",
                    "15 digits",
                    "12104288000000X",
                )],
            ),
        ];
        for (line, col, with, want) in cases {
            let got = errors(&mutate(line, col, with));
            assert_eq!(got, want, "line {line} col {col} := {with:?}");
        }
    }
}
