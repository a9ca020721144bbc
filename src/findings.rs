//! Findings: every problem found in an input file, with its exact position. The one
//! vocabulary every format speaks (NACHA today, ISO 20022, the statement formats next).
//!
//! A finding is a value, never a panic. Readers collect all findings of a file instead of
//! stopping at the first, into a bounded [`FindingSink`]; a file with at least one finding
//! of severity [`Severity::Error`] is rejected whole.

use serde::Serialize;
use std::borrow::Cow;
use std::fmt;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Accepted, but worth telling (a record with trailing blanks trimmed, say).
    Warning,
    /// The file is rejected whole.
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Where a physical record of a fixed-width file (NACHA) sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct RecordPosition {
    /// 0-based index of the physical 94-byte record in the file (padding records count).
    pub record_index: u64,
    /// 1-based line number (in a file without separators, several records share a line).
    pub line: u64,
    /// 0-based byte offset of the record's first byte in the file; for a finding about
    /// one byte of the record (`non_ascii_byte`), of that byte.
    pub byte_offset: u64,
}

impl RecordPosition {
    /// The position `n` records further on, each on a line of its own `stride` bytes long
    /// (separator included).
    pub(crate) fn advanced(self, n: u64, stride: u64) -> Self {
        RecordPosition {
            record_index: self.record_index + n,
            line: self.line + n,
            byte_offset: self.byte_offset + n * stride,
        }
    }
}

/// Where an element of an XML document (ISO 20022) sits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct XmlPosition {
    /// 0-based byte offset of the element's start tag (or of the offending event).
    pub byte_offset: u64,
    /// 1-based line of that byte.
    pub line: u64,
    /// The element path with indices, e.g.
    /// `/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[3]/IntrBkSttlmAmt`.
    pub path: String,
}

/// Where a finding in a line-oriented tag grammar sits (BAI2 records, SWIFT MT940/MT942
/// fields): the line and column of the offending text, its byte, and the record or tag it
/// belongs to (`16`, `:61:`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TextPosition {
    /// 0-based byte offset of the offending text.
    pub byte_offset: u64,
    /// 1-based line.
    pub line: u64,
    /// 1-based column (in bytes) on that line.
    pub column: u64,
    /// The BAI2 record code or MT tag the text belongs to (`88`, `:61:`), when known
    /// (borrowed when it is one of the format's own: no allocation per position).
    pub tag: Option<Cow<'static, str>>,
}

/// Where a finding about the file as a whole sits (a file of a kind no reader reads):
/// a byte and its line, in no record and no element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct FilePosition {
    /// 0-based byte offset.
    pub byte_offset: u64,
    /// 1-based line of that byte.
    pub line: u64,
}

/// Where a finding is. Each format has its own kind of place; the accessors give what
/// every kind has (a line and a byte offset).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Position {
    Record(RecordPosition),
    Xml(XmlPosition),
    File(FilePosition),
    Text(TextPosition),
}

impl Position {
    /// 1-based line.
    pub fn line(&self) -> u64 {
        match self {
            Position::Record(p) => p.line,
            Position::Xml(p) => p.line,
            Position::File(p) => p.line,
            Position::Text(p) => p.line,
        }
    }
    /// 0-based byte offset.
    pub fn byte_offset(&self) -> u64 {
        match self {
            Position::Record(p) => p.byte_offset,
            Position::Xml(p) => p.byte_offset,
            Position::File(p) => p.byte_offset,
            Position::Text(p) => p.byte_offset,
        }
    }
    /// The physical record's 0-based index, in a record file.
    pub fn record_index(&self) -> Option<u64> {
        match self {
            Position::Record(p) => Some(p.record_index),
            Position::Xml(_) | Position::File(_) | Position::Text(_) => None,
        }
    }
    /// The element path, in an XML document.
    pub fn path(&self) -> Option<&str> {
        match self {
            Position::Record(_) | Position::File(_) => None,
            Position::Xml(p) => Some(&p.path),
            Position::Text(p) => p.tag.as_deref(),
        }
    }
}

impl From<RecordPosition> for Position {
    fn from(p: RecordPosition) -> Self {
        Position::Record(p)
    }
}

impl From<XmlPosition> for Position {
    fn from(p: XmlPosition) -> Self {
        Position::Xml(p)
    }
}

impl Position {
    /// The 1-based column of a tag grammar's position.
    pub fn column(&self) -> Option<u64> {
        match self {
            Position::Text(p) => Some(p.column),
            _ => None,
        }
    }
}

impl From<TextPosition> for Position {
    fn from(p: TextPosition) -> Self {
        Position::Text(p)
    }
}

impl From<FilePosition> for Position {
    fn from(p: FilePosition) -> Self {
        Position::File(p)
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Record(p) => write!(
                f,
                "line {}, record {}, byte {}",
                p.line, p.record_index, p.byte_offset
            ),
            Position::Xml(p) => write!(f, "line {}, byte {}, {}", p.line, p.byte_offset, p.path),
            Position::File(p) => write!(f, "line {}, byte {}", p.line, p.byte_offset),
            Position::Text(p) => {
                write!(
                    f,
                    "line {}, column {}, byte {}",
                    p.line, p.column, p.byte_offset
                )?;
                match &p.tag {
                    Some(t) => write!(f, ", {t}"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// A field of a fixed-width record layout: its name and its 1-based inclusive column range.
/// A finding about one column of a field (`non_ascii_byte`) carries the field narrowed to
/// that column: `entry_detail.individual_name`, columns `59-59`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FieldSpec {
    /// The record layout the field belongs to, e.g. `entry_detail`.
    pub record: &'static str,
    /// The field's name in snake_case, e.g. `amount`.
    pub name: &'static str,
    /// First column, 1-based.
    pub start: u16,
    /// Last column, 1-based, inclusive.
    pub end: u16,
}

impl FieldSpec {
    pub fn width(&self) -> usize {
        usize::from(self.end - self.start + 1)
    }
    /// The field's bytes in a record at least `end` bytes long (a framed record is).
    pub fn slice<'a>(&self, record: &'a [u8]) -> &'a [u8] {
        let end = usize::from(self.end).min(record.len());
        let start = usize::from(self.start - 1).min(end);
        &record[start..end]
    }
    pub fn columns(&self) -> String {
        format!("{}-{}", self.start, self.end)
    }
    /// `entry_detail.amount`
    pub fn label(&self) -> String {
        format!("{}.{}", self.record, self.name)
    }
}

/// What is wrong. The snake_case name (`as_str`) is stable: it is journaled and
/// printed in `--json` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FindingCode {
    // Any format.
    EmptyFile,
    /// The file is of a kind this build cannot read (gzip, PDF, BAI2, …).
    UnsupportedFormat,
    // NACHA (fixed-width records).
    RecordLength,
    TrimmedRecord,
    LongRecord,
    BlankLine,
    NonAsciiByte,
    /// A UTF-8 byte-order mark before the first record (skipped, with a warning).
    ByteOrderMark,
    /// DOS end-of-file bytes (0x1A, Ctrl-Z) after the last record (skipped, with a warning).
    EndOfFileMarker,
    UnknownRecordType,
    FieldFormat,
    InvalidValue,
    CheckDigit,
    TransactionCode,
    ServiceClass,
    SecCode,
    MissingFileHeader,
    FileHeaderNotFirst,
    DuplicateFileHeader,
    RecordOutsideBatch,
    BatchNotClosed,
    MissingFileControl,
    RecordAfterFileControl,
    AddendaOutsideEntry,
    AddendaIndicator,
    AddendaType,
    AddendaCount,
    AddendaSequence,
    AddendaEntrySequence,
    ReturnReasonCode,
    ChangeCode,
    DebitInCreditBatch,
    CreditInDebitBatch,
    EntryAddendaCountMismatch,
    EntryHashMismatch,
    TotalDebitMismatch,
    TotalCreditMismatch,
    ServiceClassMismatch,
    CompanyIdMismatch,
    OdfiMismatch,
    BatchNumberMismatch,
    BatchNumberSequence,
    BatchCountMismatch,
    BlockCountMismatch,
    AmountOverflow,
    /// More findings than a file may keep ([`FindingSink`]).
    TooManyFindings,
    // ISO 20022 (XML).
    /// A byte-order mark and an XML declaration naming another encoding (read as the
    /// mark says, with a warning).
    EncodingMismatch,
    XmlSyntax,
    DoctypeForbidden,
    DepthLimit,
    SizeLimit,
    UnsupportedMessage,
    MissingElement,
    /// A message (Document) holding no transaction: nothing to post.
    NoTransactions,
    /// An attribute written twice on one element (`Ccy="EUR" Ccy="JPY"`).
    DuplicateAttribute,
    NbOfTxsMismatch,
    CtrlSumMismatch,
    AmountFormat,
    CurrencyCode,
    DateFormat,
    BicFormat,
    IbanFormat,
    UetrFormat,
    // Bank statements (camt.052/053/054, BAI2, MT940/MT942).
    /// A line or field that breaks the tag grammar (BAI2, MT940): the expected token.
    TagSyntax,
    /// A required record or tag is missing (`:20:`, `:25:`, `:60F:`, BAI2 `49`).
    MissingTag,
    /// A record or tag out of its place (a `16` before its account's `03`).
    RecordOrder,
    /// A record or tag no reader knows (a warning: skipped).
    UnknownTag,
    /// Opening balance + credits − debits ≠ closing balance.
    BalanceMismatch,
    /// A statement's opening balance ≠ the previous statement's closing balance of the
    /// same account (or a page's `:60M:` ≠ the previous page's `:62M:`).
    BalanceChain,
    /// A statement sequence number skipped for the account (a warning).
    SequenceGap,
    /// A control total (BAI2 49/98/99, MT942 `:90D:`/`:90C:`, camt `TtlNtries`) ≠ the sum
    /// of what it controls.
    ControlTotalMismatch,
    /// A control count (records, accounts, groups, entries) ≠ what it counts.
    ControlCountMismatch,
    /// A file with no statement in it.
    NoStatements,
}

impl FindingCode {
    /// The code as reports, JSON and the docs name it.
    #[allow(
        clippy::too_many_lines,
        reason = "a table: one finding code a line, read whole"
    )]
    pub fn as_str(self) -> &'static str {
        use FindingCode::*;
        match self {
            EmptyFile => "empty_file",
            UnsupportedFormat => "unsupported_format",
            RecordLength => "record_length",
            TrimmedRecord => "trimmed_record",
            LongRecord => "long_record",
            BlankLine => "blank_line",
            NonAsciiByte => "non_ascii_byte",
            ByteOrderMark => "byte_order_mark",
            EndOfFileMarker => "end_of_file_marker",
            UnknownRecordType => "unknown_record_type",
            FieldFormat => "field_format",
            InvalidValue => "invalid_value",
            CheckDigit => "check_digit",
            TransactionCode => "transaction_code",
            ServiceClass => "service_class",
            SecCode => "sec_code",
            MissingFileHeader => "missing_file_header",
            FileHeaderNotFirst => "file_header_not_first",
            DuplicateFileHeader => "duplicate_file_header",
            RecordOutsideBatch => "record_outside_batch",
            BatchNotClosed => "batch_not_closed",
            MissingFileControl => "missing_file_control",
            RecordAfterFileControl => "record_after_file_control",
            AddendaOutsideEntry => "addenda_outside_entry",
            AddendaIndicator => "addenda_indicator",
            AddendaType => "addenda_type",
            AddendaCount => "addenda_count",
            AddendaSequence => "addenda_sequence",
            AddendaEntrySequence => "addenda_entry_sequence",
            ReturnReasonCode => "return_reason_code",
            ChangeCode => "change_code",
            DebitInCreditBatch => "debit_in_credit_batch",
            CreditInDebitBatch => "credit_in_debit_batch",
            EntryAddendaCountMismatch => "entry_addenda_count_mismatch",
            EntryHashMismatch => "entry_hash_mismatch",
            TotalDebitMismatch => "total_debit_mismatch",
            TotalCreditMismatch => "total_credit_mismatch",
            ServiceClassMismatch => "service_class_mismatch",
            CompanyIdMismatch => "company_id_mismatch",
            OdfiMismatch => "odfi_mismatch",
            BatchNumberMismatch => "batch_number_mismatch",
            BatchNumberSequence => "batch_number_sequence",
            BatchCountMismatch => "batch_count_mismatch",
            BlockCountMismatch => "block_count_mismatch",
            AmountOverflow => "amount_overflow",
            TooManyFindings => "too_many_findings",
            EncodingMismatch => "encoding_mismatch",
            XmlSyntax => "xml_syntax",
            DoctypeForbidden => "doctype_forbidden",
            DepthLimit => "depth_limit",
            SizeLimit => "size_limit",
            UnsupportedMessage => "unsupported_message",
            MissingElement => "missing_element",
            NoTransactions => "no_transactions",
            DuplicateAttribute => "duplicate_attribute",
            NbOfTxsMismatch => "nb_of_txs_mismatch",
            CtrlSumMismatch => "ctrl_sum_mismatch",
            AmountFormat => "amount_format",
            CurrencyCode => "currency_code",
            DateFormat => "date_format",
            BicFormat => "bic_format",
            IbanFormat => "iban_format",
            UetrFormat => "uetr_format",
            TagSyntax => "tag_syntax",
            MissingTag => "missing_tag",
            RecordOrder => "record_order",
            UnknownTag => "unknown_tag",
            BalanceMismatch => "balance_mismatch",
            BalanceChain => "balance_chain",
            SequenceGap => "sequence_gap",
            ControlTotalMismatch => "control_total_mismatch",
            ControlCountMismatch => "control_count_mismatch",
            NoStatements => "no_statements",
        }
    }
}

impl fmt::Display for FindingCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem found in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub code: FindingCode,
    pub position: Position,
    /// The field concerned, with its column range, when the finding is about one field
    /// of a fixed-width record.
    pub field: Option<FieldSpec>,
    /// What the spec (or the computed total) expects.
    pub expected: String,
    /// What the file holds.
    pub found: String,
}

impl Finding {
    pub fn new(
        severity: Severity,
        code: FindingCode,
        position: impl Into<Position>,
        field: Option<FieldSpec>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        Finding {
            severity,
            code,
            position: position.into(),
            field,
            expected: expected.into(),
            found: found.into(),
        }
    }
    pub fn error(
        code: FindingCode,
        position: impl Into<Position>,
        field: Option<FieldSpec>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Error, code, position, field, expected, found)
    }
    pub fn warning(
        code: FindingCode,
        position: impl Into<Position>,
        field: Option<FieldSpec>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Warning, code, position, field, expected, found)
    }
    /// Whether this finding rejects the file.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} [{}]",
            self.position,
            self.severity.as_str(),
            self.code
        )?;
        if let Some(field) = &self.field {
            write!(f, " {} columns {}", field.label(), field.columns())?;
        }
        write!(f, ": expected {}, found {:?}", self.expected, self.found)
    }
}

/// Errors among `findings`.
pub fn count_errors(findings: &[Finding]) -> usize {
    findings.iter().filter(|f| f.is_error()).count()
}

/// Findings kept per file, so that a garbage file cannot exhaust memory; past the limit
/// one more finding ([`FindingCode::TooManyFindings`]) says how many were dropped.
pub const FINDINGS_MAX: usize = 10_000;

/// Room kept past [`FINDINGS_MAX`] for the findings about control records (a NACHA batch
/// control, an entry's addenda count: [`FindingSink::push_control`]), so that a flood of
/// findings about the records before a control cannot hide what the control says.
pub const CONTROL_FINDINGS_RESERVE: usize = 1_000;

/// The bounded collection every reader pushes its findings into.
#[derive(Debug, Default)]
pub struct FindingSink {
    findings: Vec<Finding>,
    /// How each kept finding was pushed, for [`FindingSink::replay`].
    kinds: Vec<PushKind>,
    dropped: u64,
    errors: u64,
    /// Control findings kept past [`FINDINGS_MAX`].
    control_past_max: usize,
}

/// Which of [`FindingSink`]'s pushes a finding came through: what a replay calls again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PushKind {
    Capped,
    Control,
    AtEnd,
}

/// A sink's findings taken apart to be pushed again into another ([`FindingSink::replay`]).
#[derive(Debug)]
pub struct Replay {
    items: std::iter::Zip<std::vec::IntoIter<Finding>, std::vec::IntoIter<PushKind>>,
    /// Items replayed so far.
    replayed: usize,
    /// Errors the sink counted but did not keep, and findings it dropped.
    errors_not_kept: u64,
    dropped: u64,
}

impl FindingSink {
    pub fn new() -> Self {
        Self::default()
    }
    fn keep(&mut self, f: Finding, kind: PushKind) {
        if f.is_error() {
            self.errors += 1;
        }
        self.findings.push(f);
        self.kinds.push(kind);
    }
    /// Keeps `f` while under [`FINDINGS_MAX`], else counts it as dropped. An error
    /// counts as an error either way: a dropped error still rejects the file.
    pub fn push(&mut self, f: Finding) {
        if self.findings.len() < FINDINGS_MAX {
            self.keep(f, PushKind::Capped);
        } else {
            self.errors += u64::from(f.is_error());
            self.dropped += 1;
        }
    }
    /// Keeps `f` while under [`FINDINGS_MAX`], else within the room reserved past it for
    /// control findings ([`CONTROL_FINDINGS_RESERVE`]), else counts it as dropped: for the
    /// findings about a control record (a batch control's totals), which the findings
    /// about the records it controls must not crowd out.
    pub fn push_control(&mut self, f: Finding) {
        if self.findings.len() < FINDINGS_MAX {
            self.keep(f, PushKind::Control);
        } else if self.control_past_max < CONTROL_FINDINGS_RESERVE {
            self.control_past_max += 1;
            self.keep(f, PushKind::Control);
        } else {
            self.push(f);
        }
    }
    /// Keeps `f` whatever the limit: for the few findings about the end of a file (a
    /// missing control, the file control's totals), which a caller pushes a fixed number
    /// of times.
    pub fn push_at_end(&mut self, f: Finding) {
        self.keep(f, PushKind::AtEnd);
    }
    /// This sink taken apart, to be pushed again into the sink of the part of the file
    /// before it ([`FindingSink::replay`]).
    pub fn into_replay(self) -> Replay {
        let errors_not_kept = self.errors - count_errors(&self.findings) as u64;
        Replay {
            items: self.findings.into_iter().zip(self.kinds),
            replayed: 0,
            errors_not_kept,
            dropped: self.dropped,
        }
    }
    /// Pushes `r`'s findings again, each through the push that first took it, until
    /// `upto` of them have been (all, and its dropped count, with `None`): as if they had
    /// been pushed here in the first place. This is how a part of a file read apart (a
    /// NACHA chunk checked on another core) joins the part before it: `r`'s sink started
    /// empty, so it dropped nothing this sink would have kept (its counts never exceed
    /// this one's), and every keep-or-drop decision is made again against this sink's.
    pub fn replay(&mut self, r: &mut Replay, upto: Option<usize>) {
        while upto.is_none_or(|n| r.replayed < n) {
            let Some((f, kind)) = r.items.next() else {
                break;
            };
            r.replayed += 1;
            match kind {
                PushKind::Capped => self.push(f),
                PushKind::Control => self.push_control(f),
                PushKind::AtEnd => self.push_at_end(f),
            }
        }
        if upto.is_none() {
            self.errors += std::mem::take(&mut r.errors_not_kept);
            self.dropped += std::mem::take(&mut r.dropped);
        }
    }
    /// Counts `n` warnings as pushed and dropped: findings a reader did not keep because no
    /// sink would (past [`FINDINGS_MAX`] of them in a row).
    pub fn count_dropped_warnings(&mut self, n: u64) {
        self.dropped += n;
    }
    pub fn extend(&mut self, findings: impl IntoIterator<Item = Finding>) {
        for f in findings {
            self.push(f);
        }
    }
    /// Findings kept so far.
    pub fn len(&self) -> usize {
        self.findings.len()
    }
    pub fn is_empty(&self) -> bool {
        self.findings.is_empty() && self.dropped == 0
    }
    /// Error findings pushed so far (kept or dropped).
    pub fn errors(&self) -> u64 {
        self.errors
    }
    /// Whether the file will be rejected: an error was pushed, or findings were dropped
    /// (then [`FindingSink::finish`] adds an error saying so).
    pub fn has_errors(&self) -> bool {
        self.errors > 0 || self.dropped > 0
    }
    /// The findings kept from index `from` on, to amend (a rule that refines what an
    /// earlier check said about the same record).
    pub fn kept_since_mut(&mut self, from: usize) -> &mut [Finding] {
        let from = from.min(self.findings.len());
        &mut self.findings[from..]
    }
    pub fn as_slice(&self) -> &[Finding] {
        &self.findings
    }
    /// The findings kept; if some were dropped, one more error at `end` says how many.
    pub fn finish(mut self, end: impl Into<Position>) -> Vec<Finding> {
        if self.dropped > 0 {
            self.findings.push(Finding::error(
                FindingCode::TooManyFindings,
                end,
                None,
                format!("at most {FINDINGS_MAX} findings"),
                format!("{} more findings not kept", self.dropped),
            ));
        }
        self.findings
    }
}

/// Printable form of raw field bytes for messages: ASCII as is, other bytes escaped.
pub fn show(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(i: u64) -> RecordPosition {
        RecordPosition {
            record_index: i,
            line: i + 1,
            byte_offset: i * 94,
        }
    }

    #[test]
    fn sink_keeps_the_limit_and_says_how_many_were_dropped() {
        let mut s = FindingSink::new();
        for i in 0..(FINDINGS_MAX as u64 + 5) {
            s.push(Finding::warning(
                FindingCode::BlankLine,
                at(i),
                None,
                "a record",
                "blank",
            ));
        }
        s.push(Finding::error(
            FindingCode::FieldFormat,
            at(1),
            None,
            "digits",
            "x",
        ));
        assert_eq!(s.errors(), 1, "a dropped error still counts");
        let v = s.finish(at(99));
        assert_eq!(v.len(), FINDINGS_MAX + 1);
        let last = v.last().unwrap();
        assert_eq!(last.code, FindingCode::TooManyFindings);
        assert_eq!(last.found, "6 more findings not kept");
        assert_eq!(last.position.record_index(), Some(99));
    }

    #[test]
    fn control_findings_have_room_past_the_limit_and_a_bound() {
        let mut s = FindingSink::new();
        let warning = |i| Finding::warning(FindingCode::BlankLine, at(i), None, "a", "b");
        let control = |i| Finding::error(FindingCode::EntryHashMismatch, at(i), None, "1", "2");
        for i in 0..(FINDINGS_MAX as u64 + 3) {
            s.push(warning(i));
        }
        for i in 0..(CONTROL_FINDINGS_RESERVE as u64 + 2) {
            s.push_control(control(i));
        }
        s.push(warning(0));
        s.push_at_end(warning(1));
        assert_eq!(s.errors(), CONTROL_FINDINGS_RESERVE as u64 + 2);
        let v = s.finish(at(99));
        assert_eq!(v.len(), FINDINGS_MAX + CONTROL_FINDINGS_RESERVE + 2);
        assert_eq!(v[FINDINGS_MAX].code, FindingCode::EntryHashMismatch);
        assert_eq!(v[v.len() - 2].code, FindingCode::BlankLine);
        // 3 warnings past the limit, 2 control findings past the reserve, 1 more warning.
        assert_eq!(v.last().unwrap().found, "6 more findings not kept");
    }

    #[test]
    fn positions_say_where_in_their_own_terms() {
        let r: Position = at(2).into();
        assert_eq!(r.to_string(), "line 3, record 2, byte 188");
        assert_eq!((r.line(), r.byte_offset(), r.path()), (3, 188, None));
        let x: Position = XmlPosition {
            byte_offset: 410,
            line: 12,
            path: "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[2]/IntrBkSttlmAmt".into(),
        }
        .into();
        assert_eq!(
            x.to_string(),
            "line 12, byte 410, /Document/FIToFICstmrCdtTrf/CdtTrfTxInf[2]/IntrBkSttlmAmt"
        );
        assert_eq!(x.record_index(), None);
    }

    #[test]
    fn field_slice_never_panics_on_a_short_record() {
        let f = FieldSpec {
            record: "entry_detail",
            name: "amount",
            start: 30,
            end: 39,
        };
        assert_eq!(f.slice(b"short"), b"");
        assert_eq!(f.slice(&[b'1'; 94]).len(), 10);
        assert_eq!(f.label(), "entry_detail.amount");
    }
}
