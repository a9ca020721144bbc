//! The file's structure: batches, entries with their addenda, controls and totals.
//!
//! [`Assembler`] consumes framed records in order and emits [`Event`]s: the file header
//! once, then every entry when its addenda are complete. It checks every field rule and
//! every control total on the way and keeps all findings; the caller decides (a file with
//! an error finding is rejected whole). Memory is bounded by one batch's state and one
//! entry's addenda (at most [`ADDENDA_PER_ENTRY_MAX`]), whatever the file's size.

use super::record::*;
use super::validate::*;
use crate::findings::{
    FieldSpec, Finding, FindingCode, FindingSink, RecordPosition, Severity, show,
};
use chrono::NaiveDate;

/// Addenda kept per entry: CTX allows 9,999; past that the file is wrong.
pub const ADDENDA_PER_ENTRY_MAX: usize = 9_999;
const HASH_MODULUS: u64 = 10_000_000_000;

/// The file header's fields that identify the file, trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeaderInfo {
    pub immediate_destination: String,
    pub immediate_origin: String,
    pub file_creation_date: String,
    pub file_creation_time: String,
    pub file_id_modifier: String,
    pub immediate_destination_name: String,
    pub immediate_origin_name: String,
}

/// One entry detail record with its batch context and its addenda.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// 1-based ordinal of this entry detail (type 6) record among all entry detail
    /// records of the file, in file order, across batches. Addenda, headers, controls
    /// and padding are not counted.
    pub record_no: u64,
    pub position: RecordPosition,
    pub batch_number: String,
    pub service_class_code: String,
    pub sec_code: String,
    pub company_name: String,
    pub company_identification: String,
    pub company_entry_description: String,
    pub effective_entry_date: Option<NaiveDate>,
    pub odfi_identification: String,
    pub transaction_code: u8,
    pub direction: Direction,
    /// RDFI routing number, 9 digits with the check digit.
    pub rdfi_routing: String,
    pub account: String,
    pub amount_minor: u64,
    pub individual_identification: String,
    pub individual_name: String,
    pub discretionary_data: String,
    /// Trace number (ADV: ACH operator routing, Julian day and sequence number).
    pub trace_number: String,
    /// The entry's addenda records, trailing blanks trimmed.
    pub addenda: Vec<String>,
}

#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Event {
    Header(FileHeaderInfo),
    Entry(Entry),
}

/// What the assembler learned of the whole file.
#[derive(Debug, Default)]
pub struct FileSummary {
    pub header: Option<FileHeaderInfo>,
    pub findings: Vec<Finding>,
    pub entries: u64,
    pub addenda: u64,
    pub batches: u64,
    pub total_debit_minor: u128,
    pub total_credit_minor: u128,
    pub records: u64,
}

impl FileSummary {
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }
    pub fn warnings(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BatchKind {
    Standard,
    Ctx,
    Iat,
    Adv,
}

#[derive(Debug)]
struct Batch {
    kind: BatchKind,
    service_class_code: String,
    sec_code: String,
    company_name: String,
    company_identification: String,
    company_entry_description: String,
    effective_entry_date: Option<NaiveDate>,
    odfi_identification: String,
    batch_number: String,
    entry_addenda_count: u64,
    entry_hash: u64,
    debit_minor: u128,
    credit_minor: u128,
}

#[derive(Debug)]
struct Pending {
    entry: Entry,
    indicator: u8,
    /// Declared addenda count (CTX, IAT), with its field.
    declared_addenda: Option<(u64, FieldSpec)>,
    /// Addenda seen so far of types 05, 17 and 18: each type numbers its own 1, 2, ...
    sequenced_addenda: [u64; 3],
    /// Addenda records that followed the entry.
    addenda_count: u64,
    iat_types_seen: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    BeforeHeader,
    InFile,
    InBatch,
    AfterFileControl,
}

/// Relaxations a user can ask for, each named after the rule it relaxes. The defaults
/// follow the NACHA rules.
#[derive(Debug, Clone, Copy, Default)]
pub struct ValidateOptions {
    /// Accept an immediate destination that is not a routing number with a valid check
    /// digit (vendors' return files carry placeholders such as `YYYYYYYYY`): a warning
    /// instead of an error.
    pub bypass_destination_check: bool,
}

/// The NACHA structure checker; feed it records with [`Assembler::push`].
pub struct Assembler {
    options: ValidateOptions,
    /// Build full entries for the caller (false: validation only, fewer allocations).
    keep_entries: bool,
    state: State,
    findings: FindingSink,
    header: Option<FileHeaderInfo>,
    batch: Option<Batch>,
    pending: Option<Pending>,
    record_no: u64,
    records: u64,
    non_padding_records: u64,
    batches: u64,
    adv_batches: u64,
    entries: u64,
    addenda: u64,
    entry_addenda_count: u64,
    entry_hash: u64,
    debit_minor: u128,
    credit_minor: u128,
    last_batch_number: Option<u64>,
    saw_file_control: bool,
    header_out_of_place_reported: bool,
}

impl Default for Assembler {
    fn default() -> Self {
        Self::new()
    }
}

/// Pushes findings with the current record's position.
struct Check<'a> {
    findings: &'a mut FindingSink,
    pos: RecordPosition,
    record: &'a [u8],
}

impl<'a> Check<'a> {
    fn push(&mut self, f: Finding) {
        self.findings.push(f);
    }
    fn error(
        &mut self,
        code: FindingCode,
        field: Option<FieldSpec>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) {
        let f = Finding::error(code, self.pos, field, expected, found);
        self.push(f);
    }
    fn warning(
        &mut self,
        code: FindingCode,
        field: Option<FieldSpec>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) {
        let f = Finding::warning(code, self.pos, field, expected, found);
        self.push(f);
    }
    fn value(&self, field: FieldSpec) -> &'a [u8] {
        field.slice(self.record)
    }
    /// An all-digit field; reports and returns `None` otherwise.
    fn digits(&mut self, field: FieldSpec) -> Option<u64> {
        let v = field.slice(self.record);
        match parse_u64(v) {
            Some(n) => Some(n),
            None => {
                let expected = format!("{} digits", field.width());
                let found = show(v);
                self.error(FindingCode::FieldFormat, Some(field), expected, found);
                None
            }
        }
    }
    fn digits_wide(&mut self, field: FieldSpec) -> Option<u128> {
        let v = field.slice(self.record);
        match parse_u128(v) {
            Some(n) => Some(n),
            None => {
                let expected = format!("{} digits", field.width());
                let found = show(v);
                self.error(FindingCode::FieldFormat, Some(field), expected, found);
                None
            }
        }
    }
    fn exact(&mut self, field: FieldSpec, expected: &[u8]) {
        let v = field.slice(self.record);
        if v != expected {
            let (e, f) = (format!("{:?}", show(expected)), show(v));
            self.error(FindingCode::InvalidValue, Some(field), e, f);
        }
    }
    fn non_blank(&mut self, field: FieldSpec) {
        let v = field.slice(self.record);
        if is_blank(v) {
            self.error(
                FindingCode::FieldFormat,
                Some(field),
                "a non-blank value",
                show(v),
            );
        }
    }
    /// A YYMMDD date; with `absent_ok`, blanks or zeros mean "not given" (returns and
    /// notifications of change carry 000000 as their effective entry date).
    fn date(&mut self, field: FieldSpec, absent_ok: bool) -> Option<NaiveDate> {
        let v = field.slice(self.record);
        if absent_ok && (is_blank(v) || v.iter().all(|&b| b == b'0')) {
            return None;
        }
        let d = parse_yymmdd(v);
        if d.is_none() {
            self.error(
                FindingCode::FieldFormat,
                Some(field),
                "a calendar date YYMMDD",
                show(v),
            );
        }
        d
    }
    fn mismatch(&mut self, code: FindingCode, field: FieldSpec, computed: impl ToString) {
        let found = show(field.slice(self.record));
        self.error(code, Some(field), computed.to_string(), found);
    }
}

fn text(b: &[u8]) -> String {
    // Bytes were checked by the reader; non-ASCII ones show escaped.
    match std::str::from_utf8(b) {
        Ok(s) => s.trim_end().to_string(),
        Err(_) => show(b).trim_end().to_string(),
    }
}

fn padded(n: u128, width: usize) -> String {
    format!("{n:0width$}")
}

impl Assembler {
    pub fn new() -> Self {
        Self::with_options(ValidateOptions::default())
    }

    pub fn with_options(options: ValidateOptions) -> Self {
        Assembler {
            options,
            keep_entries: true,
            state: State::BeforeHeader,
            findings: FindingSink::new(),
            header: None,
            batch: None,
            pending: None,
            record_no: 0,
            records: 0,
            non_padding_records: 0,
            batches: 0,
            adv_batches: 0,
            entries: 0,
            addenda: 0,
            entry_addenda_count: 0,
            entry_hash: 0,
            debit_minor: 0,
            credit_minor: 0,
            last_batch_number: None,
            saw_file_control: false,
            header_out_of_place_reported: false,
        }
    }

    /// Validation only: entries are still emitted (with their position, record_no, trace
    /// number and amount) but without their text fields and addenda, to save allocations.
    pub fn without_entry_details(mut self) -> Self {
        self.keep_entries = false;
        self
    }

    /// Adds findings found elsewhere (the reader's framing findings), within the limit.
    pub fn add_findings(&mut self, findings: impl IntoIterator<Item = Finding>) {
        self.findings.extend(findings);
    }

    /// Entries counted so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// True if an error finding was recorded so far.
    pub fn has_errors(&self) -> bool {
        self.findings.has_errors()
    }

    /// Takes one 94-byte record; calls `emit` for the header and for each completed entry.
    pub fn push(&mut self, record: &[u8], pos: RecordPosition, emit: &mut dyn FnMut(Event)) {
        self.records += 1;
        let Ok(record) = <&[u8; RECORD_LEN]>::try_from(record) else {
            self.findings.push(Finding::error(
                FindingCode::RecordLength,
                pos,
                None,
                "94 bytes",
                format!("{} bytes", record.len()),
            ));
            return;
        };
        if is_padding(record) {
            // Padding fills the last block; it counts towards no control total.
            return;
        }
        self.non_padding_records += 1;
        if self.state == State::AfterFileControl {
            let mut c = self.check(record, pos);
            c.error(
                FindingCode::RecordAfterFileControl,
                None,
                "only padding records (all 9s) after the file control",
                format!("a record of type {}", show(&record[..1])),
            );
            return;
        }
        let kind = record[0];
        if self.state == State::BeforeHeader && kind != b'1' && !self.header_out_of_place_reported {
            self.header_out_of_place_reported = true;
            let mut c = self.check(record, pos);
            c.error(
                FindingCode::FileHeaderNotFirst,
                Some(FILE_HEADER.record_type),
                "a file header (type 1) as the first record",
                format!("a record of type {}", show(&record[..1])),
            );
            self.state = State::InFile;
        }
        if kind != b'7' {
            self.finish_entry(emit);
        }
        match kind {
            b'1' => self.file_header(record, pos, emit),
            b'5' => self.batch_header(record, pos),
            b'6' => self.entry(record, pos),
            b'7' => self.addenda_record(record, pos),
            b'8' => self.batch_control(record, pos),
            b'9' => self.file_control(record, pos),
            _ => {
                let mut c = self.check(record, pos);
                c.error(
                    FindingCode::UnknownRecordType,
                    Some(ENTRY_DETAIL.record_type),
                    "one of 1, 5, 6, 7, 8, 9",
                    show(&record[..1]),
                );
            }
        }
    }

    /// Ends the file: checks what must have been seen, and returns every finding.
    /// `end` is the position just past the last byte (findings about what is missing
    /// point there).
    pub fn finish(mut self, end: RecordPosition, emit: &mut dyn FnMut(Event)) -> FileSummary {
        self.finish_entry(emit);
        if self.records == 0 {
            self.findings.push(Finding::error(
                FindingCode::EmptyFile,
                end,
                None,
                "a NACHA file",
                "no records",
            ));
        } else {
            if self.header.is_none() && !self.header_out_of_place_reported {
                self.findings.push_at_end(Finding::error(
                    FindingCode::MissingFileHeader,
                    end,
                    None,
                    "a file header (type 1)",
                    "none",
                ));
            }
            if self.state == State::InBatch {
                self.findings.push_at_end(Finding::error(
                    FindingCode::BatchNotClosed,
                    end,
                    None,
                    "a batch control (type 8)",
                    "end of file",
                ));
            }
            if !self.saw_file_control {
                self.findings.push_at_end(Finding::error(
                    FindingCode::MissingFileControl,
                    end,
                    None,
                    "a file control (type 9)",
                    "end of file",
                ));
            }
        }
        FileSummary {
            header: self.header,
            findings: self.findings.finish(end),
            entries: self.entries,
            addenda: self.addenda,
            batches: self.batches,
            total_debit_minor: self.debit_minor,
            total_credit_minor: self.credit_minor,
            records: self.records,
        }
    }

    fn check<'a>(&'a mut self, record: &'a [u8], pos: RecordPosition) -> Check<'a> {
        Check {
            findings: &mut self.findings,
            pos,
            record,
        }
    }

    fn file_header(
        &mut self,
        record: &[u8; RECORD_LEN],
        pos: RecordPosition,
        emit: &mut dyn FnMut(Event),
    ) {
        let state = self.state;
        let h = parse_file_header(record);
        let mut c = self.check(record, pos);
        if state != State::BeforeHeader {
            c.error(
                FindingCode::DuplicateFileHeader,
                Some(FILE_HEADER.record_type),
                "one file header, first in the file",
                "another file header",
            );
            return;
        }
        let l = FILE_HEADER;
        let bypass = self.options.bypass_destination_check;
        let mut c = self.check(record, pos);
        c.exact(l.priority_code, b"01");
        let findings_before = c.findings.len();
        let dest = text(h.immediate_destination.trim_ascii());
        let dest_b = h.immediate_destination.trim_ascii();
        if dest_b.len() == 9 && is_digits(dest_b) {
            let want = routing_check_digit(&dest_b[..8]).unwrap_or(0);
            if dest_b[8] - b'0' != want {
                c.error(
                    FindingCode::CheckDigit,
                    Some(l.immediate_destination),
                    format!("check digit {want} for routing {}", show(&dest_b[..8])),
                    show(dest_b),
                );
            }
        } else if !(dest_b.len() == 10 && is_digits(dest_b)) {
            c.error(
                FindingCode::FieldFormat,
                Some(l.immediate_destination),
                "a 9-digit routing number (blank first)",
                show(h.immediate_destination),
            );
        }
        if bypass {
            for f in c.findings.kept_since_mut(findings_before) {
                f.severity = Severity::Warning;
            }
        }
        c.non_blank(l.immediate_origin);
        c.date(l.file_creation_date, false);
        if !is_blank(h.file_creation_time) && !is_hhmm(h.file_creation_time) {
            c.error(
                FindingCode::FieldFormat,
                Some(l.file_creation_time),
                "HHMM or blank",
                show(h.file_creation_time),
            );
        }
        let m = h.file_id_modifier[0];
        if !(m.is_ascii_uppercase() || m.is_ascii_digit()) {
            c.error(
                FindingCode::FieldFormat,
                Some(l.file_id_modifier),
                "A-Z or 0-9",
                show(h.file_id_modifier),
            );
        }
        c.exact(l.record_size, b"094");
        c.exact(l.blocking_factor, b"10");
        c.exact(l.format_code, b"1");
        let info = FileHeaderInfo {
            immediate_destination: dest,
            immediate_origin: text(h.immediate_origin.trim_ascii()),
            file_creation_date: text(h.file_creation_date),
            file_creation_time: text(h.file_creation_time.trim_ascii()),
            file_id_modifier: text(h.file_id_modifier),
            immediate_destination_name: text(h.immediate_destination_name),
            immediate_origin_name: text(h.immediate_origin_name),
        };
        self.state = State::InFile;
        self.header = Some(info.clone());
        emit(Event::Header(info));
    }

    fn batch_header(&mut self, record: &[u8; RECORD_LEN], pos: RecordPosition) {
        if self.state == State::InBatch {
            let mut c = self.check(record, pos);
            c.error(
                FindingCode::BatchNotClosed,
                Some(BATCH_HEADER.record_type),
                "a batch control (type 8) before the next batch header",
                "a batch header",
            );
        }
        let sec = &record[50..53];
        let batch = if sec == b"IAT" {
            self.iat_batch_header(record, pos)
        } else {
            self.standard_batch_header(record, pos)
        };
        if let Some(n) = parse_u64(batch.batch_number.as_bytes()) {
            if let Some(last) = self.last_batch_number
                && n <= last
            {
                let mut c = self.check(record, pos);
                c.warning(
                    FindingCode::BatchNumberSequence,
                    Some(BATCH_HEADER.batch_number),
                    format!("a batch number greater than {last}"),
                    n.to_string(),
                );
            }
            self.last_batch_number = Some(n);
        }
        self.batches += 1;
        if batch.kind == BatchKind::Adv {
            self.adv_batches += 1;
        }
        self.batch = Some(batch);
        self.state = State::InBatch;
    }

    fn standard_batch_header(&mut self, record: &[u8; RECORD_LEN], pos: RecordPosition) -> Batch {
        let h = parse_batch_header(record);
        let l = BATCH_HEADER;
        let mut c = self.check(record, pos);
        let scc = h.service_class_code;
        if !SERVICE_CLASS_CODES.iter().any(|s| &s[..] == scc) {
            c.error(
                FindingCode::ServiceClass,
                Some(l.service_class_code),
                "200, 220, 225 or 280",
                show(scc),
            );
        }
        let name = h.company_name;
        if is_blank(name) || name.iter().all(|&b| b == b'0' || b == b' ') {
            c.error(
                FindingCode::InvalidValue,
                Some(l.company_name),
                "a company name (not blank, not all zeros)",
                show(name),
            );
        }
        c.non_blank(l.company_identification);
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
        if is_adv != (scc == b"280") {
            c.error(
                FindingCode::ServiceClass,
                Some(l.service_class_code),
                "280 exactly for ADV batches",
                show(scc),
            );
        }
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
            kind: if is_adv {
                BatchKind::Adv
            } else if sec == b"CTX" {
                BatchKind::Ctx
            } else {
                BatchKind::Standard
            },
            service_class_code: text(scc),
            sec_code: text(sec),
            company_name: text(h.company_name),
            company_identification: text(h.company_identification),
            company_entry_description: text(h.company_entry_description),
            effective_entry_date: effective,
            odfi_identification: text(h.odfi_identification),
            batch_number: text(h.batch_number),
            entry_addenda_count: 0,
            entry_hash: 0,
            debit_minor: 0,
            credit_minor: 0,
        }
    }

    fn iat_batch_header(&mut self, record: &[u8; RECORD_LEN], pos: RecordPosition) -> Batch {
        let h = parse_iat_batch_header(record);
        let l = IAT_BATCH_HEADER;
        let mut c = self.check(record, pos);
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
        for f in [
            l.iso_originating_currency_code,
            l.iso_destination_currency_code,
        ] {
            let v = c.value(f);
            if !v.iter().all(u8::is_ascii_uppercase) {
                let found = show(v);
                c.error(
                    FindingCode::FieldFormat,
                    Some(f),
                    "an ISO 4217 currency code",
                    found,
                );
            }
        }
        let v = c.value(l.iso_destination_country_code);
        if !v.iter().all(u8::is_ascii_uppercase) {
            let found = show(v);
            c.error(
                FindingCode::FieldFormat,
                Some(l.iso_destination_country_code),
                "an ISO 3166 country code",
                found,
            );
        }
        let effective = c.date(l.effective_entry_date, true);
        c.digits(l.odfi_identification);
        c.digits(l.batch_number);
        Batch {
            kind: BatchKind::Iat,
            service_class_code: text(scc),
            sec_code: "IAT".into(),
            company_name: String::new(),
            company_identification: text(h.originator_identification),
            company_entry_description: text(h.company_entry_description),
            effective_entry_date: effective,
            odfi_identification: text(h.odfi_identification),
            batch_number: text(h.batch_number),
            entry_addenda_count: 0,
            entry_hash: 0,
            debit_minor: 0,
            credit_minor: 0,
        }
    }

    fn entry(&mut self, record: &[u8; RECORD_LEN], pos: RecordPosition) {
        self.record_no += 1;
        self.entries += 1;
        let record_no = self.record_no;
        let Some(batch) = self.batch.take().filter(|_| self.state == State::InBatch) else {
            let mut c = self.check(record, pos);
            c.error(
                FindingCode::RecordOutsideBatch,
                Some(ENTRY_DETAIL.record_type),
                "an entry inside a batch (after a batch header)",
                "an entry outside any batch",
            );
            return;
        };
        let mut c = Check {
            findings: &mut self.findings,
            pos,
            record,
        };
        // Fields common to every layout: 1-12 and 79-94 (80-94 differ only in name for ADV).
        let l = ENTRY_DETAIL;
        let code = c.digits(l.transaction_code).unwrap_or(0) as u8;
        let direction = if batch.kind == BatchKind::Adv {
            adv_transaction_direction(code)
        } else {
            transaction_direction(code)
        };
        let direction = match direction {
            Some(d) => d,
            None => {
                let expected = if batch.kind == BatchKind::Adv {
                    "an ADV transaction code (81-88)"
                } else {
                    "a transaction code (21-24, 26-29, 31-34, 36-39, 41-44, 46-49, 51-56)"
                };
                c.mismatch(FindingCode::TransactionCode, l.transaction_code, expected);
                Direction::Credit
            }
        };
        match (batch.service_class_code.as_str(), direction) {
            ("220", Direction::Debit) => c.error(
                FindingCode::DebitInCreditBatch,
                Some(l.transaction_code),
                "a credit transaction code (service class 220)",
                format!("{code:02} (debit)"),
            ),
            ("225", Direction::Credit) => c.error(
                FindingCode::CreditInDebitBatch,
                Some(l.transaction_code),
                "a debit transaction code (service class 225)",
                format!("{code:02} (credit)"),
            ),
            _ => {}
        }
        let rdfi = c.value(l.rdfi_identification);
        if c.digits(l.rdfi_identification).is_some() {
            let want = routing_check_digit(rdfi).unwrap_or(0);
            let got = c.value(l.check_digit);
            if parse_u64(got) != Some(u64::from(want)) {
                let found = show(got);
                c.error(
                    FindingCode::CheckDigit,
                    Some(l.check_digit),
                    format!("{want} (check digit of RDFI {})", show(rdfi)),
                    found,
                );
            }
        }
        let rdfi_hash = parse_u64(rdfi).unwrap_or(0);
        let indicator = c.value(l.addenda_record_indicator)[0];
        if !matches!(indicator, b'0' | b'1') {
            c.error(
                FindingCode::FieldFormat,
                Some(l.addenda_record_indicator),
                "0 or 1",
                show(&[indicator]),
            );
        }
        let mut declared_addenda = None;
        // The text fields stay borrowed until the entry is kept: `check` keeps only the trace.
        let (amount, trace);
        let (account, ident, name): (&[u8], &[u8], &[u8]);
        let disc: [&[u8]; 2];
        match batch.kind {
            BatchKind::Standard => {
                let e = parse_entry_detail(record);
                c.non_blank(l.dfi_account_number);
                amount = c.digits(l.amount).unwrap_or(0);
                c.digits(l.trace_number);
                account = e.dfi_account_number;
                ident = e.individual_identification_number;
                name = e.individual_name;
                disc = [e.discretionary_data, b""];
                trace = text(e.trace_number);
            }
            BatchKind::Ctx => {
                let e = parse_ctx_entry_detail(record);
                let l = CTX_ENTRY_DETAIL;
                c.non_blank(l.dfi_account_number);
                amount = c.digits(l.amount).unwrap_or(0);
                c.digits(l.trace_number);
                if let Some(n) = c.digits(l.number_of_addenda_records) {
                    declared_addenda = Some((n, l.number_of_addenda_records));
                }
                account = e.dfi_account_number;
                ident = e.identification_number;
                name = e.receiving_company_name;
                disc = [e.discretionary_data, b""];
                trace = text(e.trace_number);
            }
            BatchKind::Iat => {
                let e = parse_iat_entry_detail(record);
                let l = IAT_ENTRY_DETAIL;
                c.digits(l.number_of_addenda_records);
                c.non_blank(l.foreign_receiver_account_number);
                amount = c.digits(l.amount).unwrap_or(0);
                c.digits(l.trace_number);
                account = e.foreign_receiver_account_number;
                ident = b"";
                name = b"";
                disc = [
                    e.gateway_operator_ofac_screening_indicator,
                    e.secondary_ofac_screening_indicator,
                ];
                trace = text(e.trace_number);
            }
            BatchKind::Adv => {
                let e = parse_adv_entry_detail(record);
                let l = ADV_ENTRY_DETAIL;
                c.non_blank(l.dfi_account_number);
                amount = c.digits(l.amount).unwrap_or(0);
                c.digits(l.advice_routing_number);
                c.digits(l.ach_operator_routing_number);
                c.digits(l.julian_day);
                c.digits(l.sequence_number);
                account = e.dfi_account_number;
                ident = e.advice_routing_number;
                name = e.individual_name;
                disc = [e.discretionary_data, b""];
                trace = format!(
                    "{}{}{}",
                    text(e.ach_operator_routing_number),
                    text(e.julian_day),
                    text(e.sequence_number)
                );
            }
        }
        let mut batch = batch;
        batch.entry_addenda_count += 1;
        batch.entry_hash = (batch.entry_hash + rdfi_hash) % HASH_MODULUS;
        match direction {
            Direction::Debit => batch.debit_minor += u128::from(amount),
            Direction::Credit => batch.credit_minor += u128::from(amount),
        }
        let entry = if !self.keep_entries {
            Entry {
                record_no,
                position: pos,
                batch_number: String::new(),
                service_class_code: String::new(),
                sec_code: if batch.kind == BatchKind::Iat {
                    batch.sec_code.clone()
                } else {
                    String::new()
                },
                company_name: String::new(),
                company_identification: String::new(),
                company_entry_description: String::new(),
                effective_entry_date: batch.effective_entry_date,
                odfi_identification: String::new(),
                transaction_code: code,
                direction,
                rdfi_routing: String::new(),
                account: String::new(),
                amount_minor: amount,
                individual_identification: String::new(),
                individual_name: String::new(),
                discretionary_data: String::new(),
                trace_number: trace,
                addenda: Vec::new(),
            }
        } else {
            Entry {
                record_no,
                position: pos,
                batch_number: batch.batch_number.clone(),
                service_class_code: batch.service_class_code.clone(),
                sec_code: batch.sec_code.clone(),
                company_name: batch.company_name.clone(),
                company_identification: batch.company_identification.clone(),
                company_entry_description: batch.company_entry_description.clone(),
                effective_entry_date: batch.effective_entry_date,
                odfi_identification: batch.odfi_identification.clone(),
                transaction_code: code,
                direction,
                rdfi_routing: format!("{}{}", text(rdfi), text(l.check_digit.slice(record))),
                account: text(account),
                amount_minor: amount,
                individual_identification: text(ident),
                individual_name: text(name),
                discretionary_data: if disc[1].is_empty() {
                    text(disc[0])
                } else {
                    format!("{}{}", text(disc[0]), text(disc[1]))
                },
                trace_number: trace,
                addenda: Vec::new(),
            }
        };
        self.batch = Some(batch);
        self.pending = Some(Pending {
            entry,
            indicator,
            declared_addenda,
            sequenced_addenda: [0; 3],
            addenda_count: 0,
            iat_types_seen: Vec::new(),
        });
    }

    fn addenda_record(&mut self, record: &[u8; RECORD_LEN], pos: RecordPosition) {
        let keep = self.keep_entries;
        self.addenda += 1;
        if let Some(b) = self.batch.as_mut() {
            b.entry_addenda_count += 1;
        }
        let sec = self
            .batch
            .as_ref()
            .map(|b| b.sec_code.clone())
            .unwrap_or_default();
        let Some(p) = self.pending.as_mut() else {
            let mut c = Check {
                findings: &mut self.findings,
                pos,
                record,
            };
            c.error(
                FindingCode::AddendaOutsideEntry,
                Some(ADDENDA.record_type),
                "an addenda record right after its entry detail",
                "an addenda with no entry before it",
            );
            return;
        };
        let mut c = Check {
            findings: &mut self.findings,
            pos,
            record,
        };
        let l = ADDENDA;
        let Some(ty) = c.digits(l.addenda_type_code) else {
            return;
        };
        let ty = ty as u8;
        let allowed = match ty {
            2 => matches!(sec.as_str(), "POS" | "SHR" | "MTE"),
            5 => !matches!(sec.as_str(), "IAT" | "ADV" | "POS" | "SHR" | "MTE"),
            10..=18 => sec == "IAT",
            98 => sec == "COR" || sec == "IAT",
            99 => true,
            _ => false,
        };
        if !allowed {
            c.error(
                FindingCode::AddendaType,
                Some(l.addenda_type_code),
                format!("an addenda type allowed in a {sec} batch"),
                format!("{ty:02}"),
            );
        }
        let trace_tail = p.entry.trace_number.get(8..).unwrap_or("").to_string();
        match ty {
            5 | 17 | 18 => {
                let slot = match ty {
                    5 => 0,
                    17 => 1,
                    _ => 2,
                };
                p.sequenced_addenda[slot] += 1;
                let want = p.sequenced_addenda[slot];
                if let Some(n) = c.digits(l.addenda_sequence_number)
                    && n != want
                {
                    c.mismatch(
                        FindingCode::AddendaSequence,
                        l.addenda_sequence_number,
                        format!("{want:04}"),
                    );
                }
                if c.digits(l.entry_detail_sequence_number).is_some()
                    && c.value(l.entry_detail_sequence_number) != trace_tail.as_bytes()
                {
                    c.mismatch(
                        FindingCode::AddendaEntrySequence,
                        l.entry_detail_sequence_number,
                        format!("{trace_tail} (last 7 digits of the entry's trace number)"),
                    );
                }
            }
            10..=16
                if c.digits(l.entry_detail_sequence_number).is_some()
                    && c.value(l.entry_detail_sequence_number) != trace_tail.as_bytes() =>
            {
                c.mismatch(
                    FindingCode::AddendaEntrySequence,
                    l.entry_detail_sequence_number,
                    format!("{trace_tail} (last 7 digits of the entry's trace number)"),
                );
            }
            98 => {
                let l = ADDENDA98;
                let code = c.value(l.change_code);
                if !is_change_code(code) {
                    let found = show(code);
                    c.error(
                        FindingCode::ChangeCode,
                        Some(l.change_code),
                        "a change code C01-C14 or C61-C69",
                        found,
                    );
                }
                c.digits(l.original_entry_trace_number);
                c.digits(l.original_rdfi_identification);
            }
            99 => {
                let l = ADDENDA99;
                let code = c.value(l.return_reason_code);
                if !is_return_reason_code(code) {
                    let found = show(code);
                    c.error(
                        FindingCode::ReturnReasonCode,
                        Some(l.return_reason_code),
                        "a return reason code R01-R53, R61-R77 or R80-R85",
                        found,
                    );
                }
                c.digits(l.original_entry_trace_number);
                c.digits(l.original_rdfi_identification);
            }
            _ => {}
        }
        if (10..=18).contains(&ty) {
            p.iat_types_seen.push(ty);
        }
        if p.addenda_count >= ADDENDA_PER_ENTRY_MAX as u64 {
            c.error(
                FindingCode::AddendaCount,
                Some(l.record_type),
                format!("at most {ADDENDA_PER_ENTRY_MAX} addenda per entry"),
                "more",
            );
            return;
        }
        p.addenda_count += 1;
        if keep {
            p.entry.addenda.push(text(record));
        }
    }

    /// Checks the pending entry's addenda as a whole, and emits it.
    fn finish_entry(&mut self, emit: &mut dyn FnMut(Event)) {
        let Some(p) = self.pending.take() else { return };
        let pos = p.entry.position;
        let n = p.addenda_count;
        let mut push = |f: Finding| {
            self.findings.push(f);
        };
        let ind = ENTRY_DETAIL.addenda_record_indicator;
        match (p.indicator, n) {
            (b'0', 1..) => push(Finding::error(
                FindingCode::AddendaIndicator,
                pos,
                Some(ind),
                "1 (the entry is followed by addenda)",
                "0",
            )),
            (b'1', 0) => push(Finding::error(
                FindingCode::AddendaIndicator,
                pos,
                Some(ind),
                "0 (no addenda follow the entry)",
                "1",
            )),
            _ => {}
        }
        if let Some((declared, field)) = p.declared_addenda
            && declared != n
        {
            push(Finding::error(
                FindingCode::AddendaCount,
                pos,
                Some(field),
                format!("{n:04} (addenda records that follow)"),
                format!("{declared:04}"),
            ));
        }
        if p.entry.sec_code == "IAT" {
            let mandatory: Vec<u8> = p
                .iat_types_seen
                .iter()
                .copied()
                .filter(|t| (10..=16).contains(t))
                .collect();
            if mandatory != [10, 11, 12, 13, 14, 15, 16] {
                let found = mandatory
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(",");
                push(Finding::error(
                    FindingCode::AddendaCount,
                    pos,
                    Some(IAT_ENTRY_DETAIL.number_of_addenda_records),
                    "addenda 10,11,12,13,14,15,16 in order",
                    found,
                ));
            }
        }
        emit(Event::Entry(p.entry));
    }

    fn batch_control(&mut self, record: &[u8; RECORD_LEN], pos: RecordPosition) {
        let Some(batch) = self.batch.take().filter(|_| self.state == State::InBatch) else {
            let mut c = self.check(record, pos);
            c.error(
                FindingCode::RecordOutsideBatch,
                Some(BATCH_CONTROL.record_type),
                "a batch control closing a batch",
                "a batch control with no open batch",
            );
            return;
        };
        self.state = State::InFile;
        let mut c = Check {
            findings: &mut self.findings,
            pos,
            record,
        };
        let (scc, count, hash, debit, credit, odfi, number) = if batch.kind == BatchKind::Adv {
            let l = ADV_BATCH_CONTROL;
            (
                l.service_class_code,
                l.entry_addenda_count,
                l.entry_hash,
                l.total_debit_entry_dollar_amount,
                l.total_credit_entry_dollar_amount,
                l.odfi_identification,
                l.batch_number,
            )
        } else {
            let l = BATCH_CONTROL;
            let stated = c.value(l.company_identification).trim_ascii();
            // IAT batch controls in the wild leave the originator identification blank.
            let skip = batch.kind == BatchKind::Iat && stated.is_empty();
            if !skip && stated != batch.company_identification.trim().as_bytes() {
                c.mismatch(
                    FindingCode::CompanyIdMismatch,
                    l.company_identification,
                    format!("{:?} (batch header)", batch.company_identification),
                );
            }
            (
                l.service_class_code,
                l.entry_addenda_count,
                l.entry_hash,
                l.total_debit_entry_dollar_amount,
                l.total_credit_entry_dollar_amount,
                l.odfi_identification,
                l.batch_number,
            )
        };
        if c.value(scc) != batch.service_class_code.as_bytes() {
            c.mismatch(
                FindingCode::ServiceClassMismatch,
                scc,
                format!("{} (batch header)", batch.service_class_code),
            );
        }
        if let Some(v) = c.digits(count)
            && v != batch.entry_addenda_count
        {
            c.mismatch(
                FindingCode::EntryAddendaCountMismatch,
                count,
                padded(batch.entry_addenda_count.into(), count.width()),
            );
        }
        if let Some(v) = c.digits(hash)
            && v != batch.entry_hash
        {
            c.mismatch(
                FindingCode::EntryHashMismatch,
                hash,
                padded(batch.entry_hash.into(), hash.width()),
            );
        }
        if let Some(v) = c.digits_wide(debit)
            && v != batch.debit_minor
        {
            c.mismatch(
                FindingCode::TotalDebitMismatch,
                debit,
                padded(batch.debit_minor, debit.width()),
            );
        }
        if let Some(v) = c.digits_wide(credit)
            && v != batch.credit_minor
        {
            c.mismatch(
                FindingCode::TotalCreditMismatch,
                credit,
                padded(batch.credit_minor, credit.width()),
            );
        }
        if c.value(odfi) != batch.odfi_identification.as_bytes() {
            c.mismatch(
                FindingCode::OdfiMismatch,
                odfi,
                format!("{} (batch header)", batch.odfi_identification),
            );
        }
        if c.value(number) != batch.batch_number.as_bytes() {
            c.mismatch(
                FindingCode::BatchNumberMismatch,
                number,
                format!("{} (batch header)", batch.batch_number),
            );
        }
        self.entry_addenda_count += batch.entry_addenda_count;
        self.entry_hash = (self.entry_hash + batch.entry_hash) % HASH_MODULUS;
        self.debit_minor += batch.debit_minor;
        self.credit_minor += batch.credit_minor;
    }

    fn file_control(&mut self, record: &[u8; RECORD_LEN], pos: RecordPosition) {
        if self.state == State::InBatch {
            let mut c = self.check(record, pos);
            c.error(
                FindingCode::BatchNotClosed,
                Some(FILE_CONTROL.record_type),
                "a batch control (type 8) before the file control",
                "a file control",
            );
            self.batch = None;
        }
        self.state = State::AfterFileControl;
        self.saw_file_control = true;
        let adv = self.batches > 0 && self.adv_batches == self.batches;
        let (batches, blocks, count, hash, debit, credit) = if adv {
            let l = ADV_FILE_CONTROL;
            (
                l.batch_count,
                l.block_count,
                l.entry_addenda_count,
                l.entry_hash,
                l.total_debit_entry_dollar_amount_in_file,
                l.total_credit_entry_dollar_amount_in_file,
            )
        } else {
            let l = FILE_CONTROL;
            (
                l.batch_count,
                l.block_count,
                l.entry_addenda_count,
                l.entry_hash,
                l.total_debit_entry_dollar_amount_in_file,
                l.total_credit_entry_dollar_amount_in_file,
            )
        };
        let block_count = self.non_padding_records.div_ceil(10);
        let (n_batches, n_count, n_hash, n_debit, n_credit) = (
            self.batches,
            self.entry_addenda_count,
            self.entry_hash,
            self.debit_minor,
            self.credit_minor,
        );
        let mut c = self.check(record, pos);
        if let Some(v) = c.digits(batches)
            && v != n_batches
        {
            c.mismatch(
                FindingCode::BatchCountMismatch,
                batches,
                padded(n_batches.into(), batches.width()),
            );
        }
        if let Some(v) = c.digits(blocks)
            && v != block_count
        {
            c.mismatch(
                FindingCode::BlockCountMismatch,
                blocks,
                padded(block_count.into(), blocks.width()),
            );
        }
        if let Some(v) = c.digits(count)
            && v != n_count
        {
            c.mismatch(
                FindingCode::EntryAddendaCountMismatch,
                count,
                padded(n_count.into(), count.width()),
            );
        }
        if let Some(v) = c.digits(hash)
            && v != n_hash
        {
            c.mismatch(
                FindingCode::EntryHashMismatch,
                hash,
                padded(n_hash.into(), hash.width()),
            );
        }
        if let Some(v) = c.digits_wide(debit)
            && v != n_debit
        {
            c.mismatch(
                FindingCode::TotalDebitMismatch,
                debit,
                padded(n_debit, debit.width()),
            );
        }
        if let Some(v) = c.digits_wide(credit)
            && v != n_credit
        {
            c.mismatch(
                FindingCode::TotalCreditMismatch,
                credit,
                padded(n_credit, credit.width()),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::FINDINGS_MAX;
    use crate::formats::nacha::check;

    /// The payroll sample: header, batch header (220 PPD), entries on lines 3, 4, 6, 7
    /// (line 4 with an addenda 05 on line 5), batch control 8, file control 9, padding 10.
    const PAYROLL: &[u8] = include_bytes!("../../../samples/ppd-payroll-credits.ach");

    fn mutate(line: usize, col: usize, with: &str) -> Vec<u8> {
        let mut f = PAYROLL.to_vec();
        let at = (line - 1) * 95 + (col - 1);
        f[at..at + with.len()].copy_from_slice(with.as_bytes());
        f
    }

    type Row = (FindingCode, u64, &'static str, String, String);

    fn errors(data: &[u8]) -> Vec<Row> {
        let r = check(data, ValidateOptions::default()).unwrap();
        r.summary
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| {
                (
                    f.code,
                    f.position.line(),
                    f.field.map(|x| x.name).unwrap_or(""),
                    f.expected.clone(),
                    f.found.clone(),
                )
            })
            .collect()
    }

    fn row(code: FindingCode, line: u64, field: &'static str, expected: &str, found: &str) -> Row {
        (code, line, field, expected.to_string(), found.to_string())
    }

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
    fn each_rule_reports_its_exact_position() {
        use FindingCode::*;
        let cases: Vec<(usize, usize, &str, Vec<Row>)> = vec![
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
                79,
                "1",
                vec![row(
                    AddendaIndicator,
                    3,
                    "addenda_record_indicator",
                    "0 (no addenda follow the entry)",
                    "1",
                )],
            ),
            (
                4,
                79,
                "0",
                vec![row(
                    AddendaIndicator,
                    4,
                    "addenda_record_indicator",
                    "1 (the entry is followed by addenda)",
                    "0",
                )],
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
            (
                5,
                84,
                "0002",
                vec![row(
                    AddendaSequence,
                    5,
                    "addenda_sequence_number",
                    "0001",
                    "0002",
                )],
            ),
            (
                5,
                88,
                "0000009",
                vec![row(
                    AddendaEntrySequence,
                    5,
                    "entry_detail_sequence_number",
                    "0000002 (last 7 digits of the entry's trace number)",
                    "0000009",
                )],
            ),
            (
                5,
                2,
                "02",
                vec![row(
                    AddendaType,
                    5,
                    "addenda_type_code",
                    "an addenda type allowed in a PPD batch",
                    "02",
                )],
            ),
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
            (
                9,
                2,
                "000002",
                vec![row(
                    BatchCountMismatch,
                    9,
                    "batch_count",
                    "000001",
                    "000002",
                )],
            ),
            (
                9,
                8,
                "000002",
                vec![row(
                    BlockCountMismatch,
                    9,
                    "block_count",
                    "000001",
                    "000002",
                )],
            ),
            (
                9,
                14,
                "00000006",
                vec![row(
                    EntryAddendaCountMismatch,
                    9,
                    "entry_addenda_count",
                    "00000005",
                    "00000006",
                )],
            ),
            (
                9,
                22,
                "0000000001",
                vec![row(
                    EntryHashMismatch,
                    9,
                    "entry_hash",
                    "0063016146",
                    "0000000001",
                )],
            ),
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
            (
                1,
                2,
                "02",
                vec![row(InvalidValue, 1, "priority_code", "\"01\"", "02")],
            ),
            (
                1,
                13,
                "5",
                vec![row(
                    CheckDigit,
                    1,
                    "immediate_destination",
                    "check digit 4 for routing 23138010",
                    "231380105",
                )],
            ),
            (
                1,
                24,
                "260230",
                vec![row(
                    FieldFormat,
                    1,
                    "file_creation_date",
                    "a calendar date YYMMDD",
                    "260230",
                )],
            ),
            (
                1,
                30,
                "2460",
                vec![row(
                    FieldFormat,
                    1,
                    "file_creation_time",
                    "HHMM or blank",
                    "2460",
                )],
            ),
            (
                1,
                34,
                "a",
                vec![row(FieldFormat, 1, "file_id_modifier", "A-Z or 0-9", "a")],
            ),
            (
                1,
                35,
                "095",
                vec![row(InvalidValue, 1, "record_size", "\"094\"", "095")],
            ),
            (
                1,
                38,
                "20",
                vec![row(InvalidValue, 1, "blocking_factor", "\"10\"", "20")],
            ),
            (
                1,
                40,
                "2",
                vec![row(InvalidValue, 1, "format_code", "\"1\"", "2")],
            ),
        ];
        for (line, col, with, want) in cases {
            assert_eq!(
                errors(&mutate(line, col, with)),
                want,
                "line {line} col {col} := {with:?}"
            );
        }
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
    fn structure_errors() {
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
        // Empty.
        assert_eq!(
            errors(b""),
            vec![row(EmptyFile, 1, "", "a NACHA file", "no records")]
        );
    }

    #[test]
    fn a_declared_ctx_addenda_count_must_match() {
        let ctx = include_bytes!("../../../samples/ctx-remittance.ach");
        let mut f = ctx.to_vec();
        // Entry on line 3; number of addenda records at columns 55-58.
        f[2 * 95 + 54..2 * 95 + 58].copy_from_slice(b"0002");
        assert_eq!(
            errors(&f),
            vec![row(
                FindingCode::AddendaCount,
                3,
                "number_of_addenda_records",
                "0003 (addenda records that follow)",
                "0002"
            )]
        );
    }

    #[test]
    fn return_and_change_codes_are_checked() {
        let ret = include_bytes!("../../../samples/web-returns.ach");
        let mut f = ret.to_vec();
        // Addenda 99 on line 4, return reason code at columns 4-6.
        f[3 * 95 + 3..3 * 95 + 6].copy_from_slice(b"R99");
        assert_eq!(
            errors(&f),
            vec![row(
                FindingCode::ReturnReasonCode,
                4,
                "return_reason_code",
                "a return reason code R01-R53, R61-R77 or R80-R85",
                "R99"
            )]
        );
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
}
