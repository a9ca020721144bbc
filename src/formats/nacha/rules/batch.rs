//! Batch rules: the batch header (standard and IAT layouts), and the batch control
//! against the header it closes and the totals of the entries in between.

use super::check::{Check, text};
use crate::findings::{FieldSpec, FindingCode, show};
use crate::formats::nacha::ValidateOptions;
use crate::formats::nacha::record::NonAsciiColumns;
use crate::formats::nacha::record::*;
use crate::formats::nacha::sec::{self, BatchKind, EntryLayout, entry_layout};
use crate::formats::nacha::validate::{
    Direction, IATCOR, SEC_CODES, SERVICE_CLASS_CODES, parse_u64,
};
use chrono::NaiveDate;

/// The entry hash is the sum of the RDFI routing numbers, kept to its 10 digits.
const HASH_MODULUS: u64 = 10_000_000_000;

/// What a control record counts and sums: a batch's entries, or the whole file's.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Totals {
    pub(crate) entry_addenda_count: u64,
    pub(crate) entry_hash: u64,
    pub(crate) debit_minor: u128,
    pub(crate) credit_minor: u128,
    /// The totals a non-ASCII byte made unknown: not compared with the control's.
    pub(crate) unknown: Unknown,
}

/// Which computed totals are unknown because a record they add up held a non-ASCII
/// byte in a field that feeds them (already one `non_ascii_byte` finding; comparing
/// would only repeat it as a control total mismatch):
/// - an entry's amount: the debit or credit total of its direction (both if its
///   transaction code is unreadable too);
/// - an entry's transaction code: both totals (its direction is unknown);
/// - an entry's RDFI routing number (columns 4-11): the entry hash;
/// - a record's type (column 1): every total of its batch, and the file's batch count
///   (it may have been any record).
///
/// A non-ASCII byte anywhere else (a name, an identification number, a trace number)
/// feeds no total: the totals are still compared, and a wrong one is still a finding.
/// A batch's unknown totals are the file's too.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unknown {
    pub(crate) entry_addenda_count: bool,
    pub(crate) entry_hash: bool,
    pub(crate) debit: bool,
    pub(crate) credit: bool,
    /// The file's batch count (only the file's totals use it).
    pub(crate) batches: bool,
}

impl Unknown {
    /// Every total.
    pub(crate) const ALL: Unknown = Unknown {
        entry_addenda_count: true,
        entry_hash: true,
        debit: true,
        credit: true,
        batches: true,
    };
    pub(crate) fn or(self, o: Unknown) -> Unknown {
        Unknown {
            entry_addenda_count: self.entry_addenda_count || o.entry_addenda_count,
            entry_hash: self.entry_hash || o.entry_hash,
            debit: self.debit || o.debit,
            credit: self.credit || o.credit,
            batches: self.batches || o.batches,
        }
    }
}

impl Totals {
    /// One entry: its RDFI routing number (8 digits) goes into the hash, its amount into
    /// the debit or credit total.
    pub(crate) fn add_entry(&mut self, rdfi: u64, direction: Direction, amount_minor: u64) {
        self.entry_addenda_count += 1;
        self.entry_hash = (self.entry_hash + rdfi) % HASH_MODULUS;
        match direction {
            Direction::Debit => self.debit_minor += u128::from(amount_minor),
            Direction::Credit => self.credit_minor += u128::from(amount_minor),
        }
    }
    pub(crate) fn add_addenda(&mut self) {
        self.entry_addenda_count += 1;
    }
    /// A closed batch's totals, into the file's.
    pub(crate) fn add(&mut self, batch: &Totals) {
        self.entry_addenda_count += batch.entry_addenda_count;
        self.entry_hash = (self.entry_hash + batch.entry_hash) % HASH_MODULUS;
        self.debit_minor += batch.debit_minor;
        self.credit_minor += batch.credit_minor;
        self.unknown = self.unknown.or(batch.unknown);
    }
}

/// An open batch: its header's fields and the totals of its entries so far.
#[derive(Debug)]
pub(crate) struct Batch {
    /// The entry detail layout of the batch's SEC code.
    pub(crate) layout: &'static EntryLayout,
    pub(crate) service_class_code: String,
    pub(crate) sec_code: String,
    pub(crate) company_name: String,
    pub(crate) company_identification: String,
    pub(crate) company_entry_description: String,
    pub(crate) effective_entry_date: Option<NaiveDate>,
    pub(crate) odfi_identification: String,
    pub(crate) batch_number: String,
    /// An IAT notification of change: IAT layouts, IAT indicator `IATCOR`, SEC code COR.
    pub(crate) iat_noc: bool,
    pub(crate) totals: Totals,
    /// Columns of the batch header that held a non-ASCII byte: a field the control
    /// repeats (service class, company identification, ODFI, batch number) is not
    /// compared when the header's is unreadable.
    pub(crate) header_non_ascii: NonAsciiColumns,
}

impl Batch {
    pub(crate) fn kind(&self) -> BatchKind {
        self.layout.kind
    }
}

/// Batch header rules (the layout chosen by the SEC code); returns the opened batch.
/// IAT's layout serves SEC code IAT and IAT notifications of change: SEC code COR with
/// `IATCOR` as IAT indicator (columns 5-20), as the NACHA rules and moov-io/ach read them.
pub(crate) fn check_batch_header(c: &mut Check, options: &ValidateOptions) -> Batch {
    if is_iat_batch_header(c.record()) {
        check_iat_header(c, options)
    } else {
        check_standard_header(c, options)
    }
}

/// Whether a batch header is read with the IAT layout: SEC code IAT, or `IATCOR` as IAT
/// indicator.
pub(crate) fn is_iat_batch_header(record: &[u8; RECORD_LEN]) -> bool {
    BATCH_HEADER.standard_entry_class_code.slice(record) == b"IAT"
        || IAT_BATCH_HEADER.iat_indicator.slice(record).trim_ascii() == IATCOR
}

/// A batch number must grow from batch to batch (a warning: some originators restart).
pub(crate) fn check_batch_number_sequence(c: &mut Check, batch: &Batch, last: &mut Option<u64>) {
    let Some(n) = parse_u64(batch.batch_number.as_bytes()) else {
        return;
    };
    if let Some(last) = *last
        && n <= last
    {
        c.warning(
            FindingCode::BatchNumberSequence,
            Some(BATCH_HEADER.batch_number),
            format!("a batch number greater than {last}"),
            n.to_string(),
        );
    }
    *last = Some(n);
}

fn check_standard_header(c: &mut Check, options: &ValidateOptions) -> Batch {
    let h = parse_batch_header(c.record());
    let l = BATCH_HEADER;
    let scc = h.service_class_code;
    if !SERVICE_CLASS_CODES.iter().any(|s| &s[..] == scc) {
        c.error(
            FindingCode::ServiceClass,
            Some(l.service_class_code),
            "200, 220, 225 or 280",
            show(scc),
        );
    }
    let relax = options.skip_batch_header_company_validation;
    c.not_blank_or_zeros(l.company_name, "a company name", relax);
    c.non_blank(l.company_identification);
    let layout = check_sec_code(c, &h);
    let what = "a company entry description";
    c.not_blank_or_zeros(l.company_entry_description, what, relax);
    let effective = c.date(l.effective_entry_date, true);
    if !matches!(h.originator_status_code, b"0" | b"1" | b"2") {
        c.error(
            FindingCode::FieldFormat,
            Some(l.originator_status_code),
            "0, 1 or 2",
            show(h.originator_status_code),
        );
    }
    c.digits(l.odfi_identification);
    c.digits(l.batch_number);
    Batch {
        layout,
        service_class_code: text(scc),
        sec_code: text(h.standard_entry_class_code),
        company_name: text(h.company_name),
        company_identification: text(h.company_identification),
        company_entry_description: text(h.company_entry_description),
        effective_entry_date: effective,
        odfi_identification: text(h.odfi_identification),
        batch_number: text(h.batch_number),
        iat_noc: false,
        totals: Totals::default(),
        header_non_ascii: c.non_ascii(),
    }
}

/// A known SEC code, and service class 280 exactly for ADV; returns the entries' layout.
fn check_sec_code(c: &mut Check, h: &BatchHeader) -> &'static EntryLayout {
    let l = BATCH_HEADER;
    let sec = h.standard_entry_class_code;
    if !SEC_CODES.iter().any(|s| &s[..] == sec) {
        c.error(
            FindingCode::SecCode,
            Some(l.standard_entry_class_code),
            "a NACHA SEC code (PPD, CCD, CTX, WEB, TEL, POS, ADV, IAT, COR, ...)",
            show(sec),
        );
    }
    let is_adv = sec == b"ADV";
    // An unreadable SEC code is already a finding: whether it is ADV is unknown.
    if is_adv != (h.service_class_code == b"280") && !c.unreadable(l.standard_entry_class_code) {
        c.error(
            FindingCode::ServiceClass,
            Some(l.service_class_code),
            "280 exactly for ADV batches",
            show(h.service_class_code),
        );
    }
    entry_layout(sec)
}

fn check_iat_header(c: &mut Check, options: &ValidateOptions) -> Batch {
    let h = parse_iat_batch_header(c.record());
    let l = IAT_BATCH_HEADER;
    let iat_noc = h.iat_indicator.trim_ascii() == IATCOR;
    let sec = h.standard_entry_class_code;
    if iat_noc && sec != b"COR" {
        c.error(
            FindingCode::SecCode,
            Some(l.standard_entry_class_code),
            "COR (the IAT indicator IATCOR makes the batch an IAT notification of change)",
            show(sec),
        );
    }
    let scc = h.service_class_code;
    if !matches!(scc, b"200" | b"220" | b"225") {
        c.error(
            FindingCode::ServiceClass,
            Some(l.service_class_code),
            "200, 220 or 225",
            show(scc),
        );
    }
    c.non_blank(l.originator_identification);
    let currencies = [
        l.iso_originating_currency_code,
        l.iso_destination_currency_code,
    ];
    for f in currencies {
        uppercase_code(c, f, "an ISO 4217 currency code");
    }
    uppercase_code(
        c,
        l.iso_destination_country_code,
        "an ISO 3166 country code",
    );
    let what = "a company entry description";
    let relax = options.skip_batch_header_company_validation;
    c.not_blank_or_zeros(l.company_entry_description, what, relax);
    let effective = c.date(l.effective_entry_date, true);
    c.digits(l.odfi_identification);
    c.digits(l.batch_number);
    Batch {
        layout: &sec::IAT,
        service_class_code: text(scc),
        sec_code: text(sec),
        company_name: String::new(),
        company_identification: text(h.originator_identification),
        company_entry_description: text(h.company_entry_description),
        effective_entry_date: effective,
        odfi_identification: text(h.odfi_identification),
        batch_number: text(h.batch_number),
        iat_noc,
        totals: Totals::default(),
        header_non_ascii: c.non_ascii(),
    }
}

/// An ISO code field: upper-case letters only.
fn uppercase_code(c: &mut Check, field: FieldSpec, expected: &str) {
    let v = c.value(field);
    if !v.iter().all(u8::is_ascii_uppercase) {
        let found = show(v);
        c.error(FindingCode::FieldFormat, Some(field), expected, found);
    }
}

/// The batch control fields the rules compare, in the standard or the ADV layout.
struct ControlFields {
    service_class_code: FieldSpec,
    entry_addenda_count: FieldSpec,
    entry_hash: FieldSpec,
    total_debit: FieldSpec,
    total_credit: FieldSpec,
    odfi_identification: FieldSpec,
    batch_number: FieldSpec,
}

const STANDARD_CONTROL: ControlFields = ControlFields {
    service_class_code: BATCH_CONTROL.service_class_code,
    entry_addenda_count: BATCH_CONTROL.entry_addenda_count,
    entry_hash: BATCH_CONTROL.entry_hash,
    total_debit: BATCH_CONTROL.total_debit_entry_dollar_amount,
    total_credit: BATCH_CONTROL.total_credit_entry_dollar_amount,
    odfi_identification: BATCH_CONTROL.odfi_identification,
    batch_number: BATCH_CONTROL.batch_number,
};

const ADV_CONTROL: ControlFields = ControlFields {
    service_class_code: ADV_BATCH_CONTROL.service_class_code,
    entry_addenda_count: ADV_BATCH_CONTROL.entry_addenda_count,
    entry_hash: ADV_BATCH_CONTROL.entry_hash,
    total_debit: ADV_BATCH_CONTROL.total_debit_entry_dollar_amount,
    total_credit: ADV_BATCH_CONTROL.total_credit_entry_dollar_amount,
    odfi_identification: ADV_BATCH_CONTROL.odfi_identification,
    batch_number: ADV_BATCH_CONTROL.batch_number,
};

/// Batch control rules: what repeats the header must match it, the totals must match
/// the batch's entries.
pub(crate) fn check_batch_control(c: &mut Check, batch: &Batch) {
    let l = if batch.kind() == BatchKind::Adv {
        ADV_CONTROL
    } else {
        check_company_identification(c, batch);
        STANDARD_CONTROL
    };
    let t = &batch.totals;
    let (u, h) = (t.unknown, BATCH_HEADER);
    let known = |field: FieldSpec| !batch.header_non_ascii.in_field(field);
    if known(h.service_class_code) {
        let header = FindingCode::ServiceClassMismatch;
        c.same_as_header(header, l.service_class_code, &batch.service_class_code);
    }
    if !u.entry_addenda_count {
        let count = FindingCode::EntryAddendaCountMismatch;
        c.total(count, l.entry_addenda_count, t.entry_addenda_count);
    }
    if !u.entry_hash {
        c.total(FindingCode::EntryHashMismatch, l.entry_hash, t.entry_hash);
    }
    if !u.debit {
        let debit = FindingCode::TotalDebitMismatch;
        c.total(debit, l.total_debit, t.debit_minor);
    }
    if !u.credit {
        let credit = FindingCode::TotalCreditMismatch;
        c.total(credit, l.total_credit, t.credit_minor);
    }
    if known(h.odfi_identification) {
        let odfi = FindingCode::OdfiMismatch;
        c.same_as_header(odfi, l.odfi_identification, &batch.odfi_identification);
    }
    if known(h.batch_number) {
        let number = FindingCode::BatchNumberMismatch;
        c.same_as_header(number, l.batch_number, &batch.batch_number);
    }
}

/// The company identification repeats the header's (ADV controls have none).
fn check_company_identification(c: &mut Check, batch: &Batch) {
    let field = BATCH_CONTROL.company_identification;
    let stated = c.value(field).trim_ascii();
    // IAT batch controls in the wild leave the originator identification blank.
    let skip = batch.kind() == BatchKind::Iat && stated.is_empty()
        // (IAT's originator identification has the same columns.)
        || batch.header_non_ascii.in_field(BATCH_HEADER.company_identification);
    if !skip && stated != batch.company_identification.trim().as_bytes() {
        let expected = format!("{:?} (batch header)", batch.company_identification);
        c.mismatch(FindingCode::CompanyIdMismatch, field, expected);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{errors, findings_with, mutate, row};
    use crate::findings::FindingCode::*;
    use crate::findings::Severity;
    use crate::formats::nacha::ValidateOptions;

    #[test]
    fn a_company_entry_description_must_not_be_blank_or_zeros() {
        // ACH operator edit 2m: company entry description, columns 54-63.
        for desc in ["0000000000", "          ", "000       "] {
            let f = mutate(2, 54, desc);
            let want = row(
                InvalidValue,
                2,
                "company_entry_description",
                "a company entry description (not blank, not all zeros)",
                desc,
            );
            assert_eq!(errors(&f), vec![want.clone()], "{desc:?}");
            // --skip-batch-header-company-validation: the same finding, as a warning.
            let relaxed = ValidateOptions {
                skip_batch_header_company_validation: true,
                ..ValidateOptions::default()
            };
            assert_eq!(findings_with(&f, relaxed), vec![(Severity::Warning, want)]);
        }
        // Zeros among other characters are a description.
        assert_eq!(errors(&mutate(2, 54, "PAYROLL 01")), vec![]);
        // The option relaxes the company name's rule (edit 2l) too.
        let relaxed = ValidateOptions {
            skip_batch_header_company_validation: true,
            ..ValidateOptions::default()
        };
        let f = findings_with(&mutate(2, 5, "0000000000000000"), relaxed);
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].0, f[0].1.2), (Severity::Warning, "company_name"));
    }

    #[test]
    fn batch_header_rules_report_their_exact_position() {
        let cases = vec![
            (
                2,
                51,
                "XYZ",
                vec![row(
                    SecCode,
                    2,
                    "standard_entry_class_code",
                    "a NACHA SEC code (PPD, CCD, CTX, WEB, TEL, POS, ADV, IAT, COR, ...)",
                    "XYZ",
                )],
            ),
            (
                2,
                2,
                "221",
                vec![
                    row(
                        ServiceClass,
                        2,
                        "service_class_code",
                        "200, 220, 225 or 280",
                        "221",
                    ),
                    row(
                        ServiceClassMismatch,
                        8,
                        "service_class_code",
                        "221 (batch header)",
                        "220",
                    ),
                ],
            ),
            (
                2,
                5,
                "0000000000000000",
                vec![row(
                    InvalidValue,
                    2,
                    "company_name",
                    "a company name (not blank, not all zeros)",
                    "0000000000000000",
                )],
            ),
            (
                2,
                70,
                "261131",
                vec![row(
                    FieldFormat,
                    2,
                    "effective_entry_date",
                    "a calendar date YYMMDD",
                    "261131",
                )],
            ),
            (
                2,
                79,
                "7",
                vec![row(
                    FieldFormat,
                    2,
                    "originator_status_code",
                    "0, 1 or 2",
                    "7",
                )],
            ),
        ];
        for (line, col, with, want) in cases {
            let got = errors(&mutate(line, col, with));
            assert_eq!(got, want, "line {line} col {col} := {with:?}");
        }
    }

    #[test]
    fn batch_control_rules_report_their_exact_position() {
        let cases = vec![
            (
                8,
                5,
                "000009",
                vec![row(
                    EntryAddendaCountMismatch,
                    8,
                    "entry_addenda_count",
                    "000005",
                    "000009",
                )],
            ),
            (
                8,
                11,
                "0000000000",
                vec![row(
                    EntryHashMismatch,
                    8,
                    "entry_hash",
                    "0063016146",
                    "0000000000",
                )],
            ),
            (
                8,
                45,
                "1111111111",
                vec![row(
                    CompanyIdMismatch,
                    8,
                    "company_identification",
                    "\"1234567890\" (batch header)",
                    "1111111111",
                )],
            ),
            (
                8,
                80,
                "23138010",
                vec![row(
                    OdfiMismatch,
                    8,
                    "odfi_identification",
                    "12104288 (batch header)",
                    "23138010",
                )],
            ),
            (
                8,
                88,
                "0000002",
                vec![row(
                    BatchNumberMismatch,
                    8,
                    "batch_number",
                    "0000001 (batch header)",
                    "0000002",
                )],
            ),
            (
                8,
                2,
                "200",
                vec![row(
                    ServiceClassMismatch,
                    8,
                    "service_class_code",
                    "220 (batch header)",
                    "200",
                )],
            ),
        ];
        for (line, col, with, want) in cases {
            let got = errors(&mutate(line, col, with));
            assert_eq!(got, want, "line {line} col {col} := {with:?}");
        }
    }
}
