//! [`Check`]: the findings about one framed record, each with the record's position and
//! the field concerned, and the few shapes every rule file uses (digits, dates, exact
//! values, control totals).
//!
//! A non-ASCII byte is one finding at its column, no cascade: the reader reports it
//! (`non_ascii_byte`, with the field it falls in), and a [`Check`] made
//! [`Check::with_non_ascii`] drops every other finding about a field of that record that
//! holds such a column (the field's format, its value, a control field compared with its
//! computed total). What the unreadable field would have fed into a control total (an
//! amount, a transaction code, an RDFI routing number; see `batch.rs`) is marked unknown
//! there, so that the batch and file controls do not compare it either; a non-ASCII
//! letter in a text field (a name) feeds no total, and the totals are still compared.

use crate::findings::{
    FieldSpec, Finding, FindingCode, FindingSink, RecordPosition, Severity, show,
};
use crate::formats::nacha::record::{NonAsciiColumns, RECORD_LEN};
use crate::formats::nacha::validate::{
    is_blank, is_blank_or_zeros, parse_u64, parse_u128, parse_yymmdd,
};
use chrono::NaiveDate;

/// How the findings of a [`Check`] go into the sink past its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Within [`crate::findings::FINDINGS_MAX`] ([`FindingSink::push`]).
    Capped,
    /// A batch control's: within the room reserved for controls
    /// ([`FindingSink::push_control`]).
    Control,
    /// The file control's, read once per file: always ([`FindingSink::push_at_end`]).
    Always,
}

/// Pushes findings about one record, with its position, into the file's sink.
pub(crate) struct Check<'a> {
    findings: &'a mut FindingSink,
    pos: RecordPosition,
    record: &'a [u8; RECORD_LEN],
    /// Columns that held a non-ASCII byte (already a finding).
    non_ascii: NonAsciiColumns,
    keep: Keep,
}

impl<'a> Check<'a> {
    pub(crate) fn new(
        findings: &'a mut FindingSink,
        pos: RecordPosition,
        record: &'a [u8; RECORD_LEN],
    ) -> Self {
        Check {
            findings,
            pos,
            record,
            non_ascii: NonAsciiColumns::default(),
            keep: Keep::Capped,
        }
    }
    /// The findings of a batch control: kept past the findings limit, within the room
    /// reserved for controls, so that the records before it cannot hide them.
    pub(crate) fn for_batch_control(mut self) -> Self {
        self.keep = Keep::Control;
        self
    }
    /// The findings of the file control (read once per file): always kept.
    pub(crate) fn for_file_control(mut self) -> Self {
        self.keep = Keep::Always;
        self
    }
    /// The columns of the record that held a non-ASCII byte: findings about the fields
    /// they fall in are dropped (the `non_ascii_byte` finding says it all).
    pub(crate) fn with_non_ascii(mut self, non_ascii: NonAsciiColumns) -> Self {
        self.non_ascii = non_ascii;
        self
    }
    /// The columns of the record that held a non-ASCII byte.
    pub(crate) fn non_ascii(&self) -> NonAsciiColumns {
        self.non_ascii
    }
    /// Whether `field` holds a non-ASCII byte: its value is unreadable, and already a
    /// finding.
    pub(crate) fn unreadable(&self, field: FieldSpec) -> bool {
        self.non_ascii.in_field(field)
    }
    /// Keeps `f` unless it is about a field holding a non-ASCII byte.
    fn push(&mut self, f: Finding) {
        if f.field.is_some_and(|field| self.unreadable(field)) {
            return;
        }
        match self.keep {
            Keep::Capped => self.findings.push(f),
            Keep::Control => self.findings.push_control(f),
            Keep::Always => self.findings.push_at_end(f),
        }
    }
    pub(crate) fn record(&self) -> &'a [u8; RECORD_LEN] {
        self.record
    }
    pub(crate) fn pos(&self) -> RecordPosition {
        self.pos
    }
    /// Findings kept so far, to amend the ones a rule adds next ([`Check::kept_since_mut`]).
    pub(crate) fn kept(&self) -> usize {
        self.findings.len()
    }
    pub(crate) fn kept_since_mut(&mut self, from: usize) -> &mut [Finding] {
        self.findings.kept_since_mut(from)
    }
    /// An error, or with `relax` (a rule the user relaxed with an option) a warning that
    /// still reports what was found.
    pub(crate) fn error_unless(
        &mut self,
        relax: bool,
        code: FindingCode,
        field: Option<FieldSpec>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) {
        let severity = if relax {
            Severity::Warning
        } else {
            Severity::Error
        };
        let f = Finding::new(severity, code, self.pos, field, expected, found);
        self.push(f);
    }
    /// A mandatory text field neither blank nor all zeros (the ACH operators' edits);
    /// `what` names it in the finding, relaxed to a warning with `relax`.
    pub(crate) fn not_blank_or_zeros(&mut self, field: FieldSpec, what: &str, relax: bool) {
        let v = self.value(field);
        if is_blank_or_zeros(v) {
            let expected = format!("{what} (not blank, not all zeros)");
            let found = show(v);
            self.error_unless(
                relax,
                FindingCode::InvalidValue,
                Some(field),
                expected,
                found,
            );
        }
    }
    pub(crate) fn error(
        &mut self,
        code: FindingCode,
        field: Option<FieldSpec>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) {
        let f = Finding::error(code, self.pos, field, expected, found);
        self.push(f);
    }
    pub(crate) fn warning(
        &mut self,
        code: FindingCode,
        field: Option<FieldSpec>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) {
        let f = Finding::warning(code, self.pos, field, expected, found);
        self.push(f);
    }
    /// The field's bytes in this record.
    pub(crate) fn value(&self, field: FieldSpec) -> &'a [u8] {
        field.slice(self.record)
    }
    /// An all-digit field; reports and returns `None` otherwise.
    pub(crate) fn digits(&mut self, field: FieldSpec) -> Option<u64> {
        let n = parse_u64(self.value(field));
        if n.is_none() {
            self.not_digits(field);
        }
        n
    }
    fn not_digits(&mut self, field: FieldSpec) {
        let expected = format!("{} digits", field.width());
        let found = show(self.value(field));
        self.error(FindingCode::FieldFormat, Some(field), expected, found);
    }
    pub(crate) fn exact(&mut self, field: FieldSpec, expected: &[u8]) {
        let v = self.value(field);
        if v != expected {
            let (e, f) = (format!("{:?}", show(expected)), show(v));
            self.error(FindingCode::InvalidValue, Some(field), e, f);
        }
    }
    pub(crate) fn non_blank(&mut self, field: FieldSpec) {
        let v = self.value(field);
        if is_blank(v) {
            let found = show(v);
            self.error(
                FindingCode::FieldFormat,
                Some(field),
                "a non-blank value",
                found,
            );
        }
    }
    /// A YYMMDD date; with `absent_ok`, blanks or zeros mean "not given" (returns and
    /// notifications of change carry 000000 as their effective entry date).
    pub(crate) fn date(&mut self, field: FieldSpec, absent_ok: bool) -> Option<NaiveDate> {
        let v = self.value(field);
        if absent_ok && (is_blank(v) || v.iter().all(|&b| b == b'0')) {
            return None;
        }
        let d = parse_yymmdd(v);
        if d.is_none() {
            let found = show(v);
            self.error(
                FindingCode::FieldFormat,
                Some(field),
                "a calendar date YYMMDD",
                found,
            );
        }
        d
    }
    /// The field holds something else than `expected`: one finding, found = the field.
    pub(crate) fn mismatch(
        &mut self,
        code: FindingCode,
        field: FieldSpec,
        expected: impl ToString,
    ) {
        let found = show(self.value(field));
        self.error(code, Some(field), expected.to_string(), found);
    }
    /// A control field against the value computed from the records it covers: a field
    /// that is not all digits is a format finding; another value is one `code` finding,
    /// expected = `computed` zero-filled to the field's width, found = the field.
    pub(crate) fn total(&mut self, code: FindingCode, field: FieldSpec, computed: impl Into<u128>) {
        let computed = computed.into();
        match parse_u128(self.value(field)) {
            None => self.not_digits(field),
            Some(stated) if stated != computed => {
                let expected = format!("{computed:0width$}", width = field.width());
                self.mismatch(code, field, expected);
            }
            Some(_) => {}
        }
    }
    /// A batch control field that repeats the batch header's `header` value.
    pub(crate) fn same_as_header(&mut self, code: FindingCode, field: FieldSpec, header: &str) {
        if self.value(field) != header.as_bytes() {
            self.mismatch(code, field, format!("{header} (batch header)"));
        }
    }
}

/// A field's text with trailing blanks trimmed. Bytes were checked by the reader;
/// non-ASCII ones show escaped.
pub(crate) fn text(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.trim_end().to_string(),
        Err(_) => show(b).trim_end().to_string(),
    }
}
