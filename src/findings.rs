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
    /// `warning` or `error`, as reports and JSON spell it.
    pub(crate) fn as_str(self) -> &'static str {
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
    /// A physical record of a fixed-width file (NACHA).
    Record(RecordPosition),
    /// An element of an XML document (ISO 20022, camt).
    Xml(XmlPosition),
    /// The file as a whole.
    File(FilePosition),
    /// A line and column of a tag grammar (BAI2, MT940/MT942).
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
    /// The field's width in columns.
    pub(crate) fn width(&self) -> usize {
        usize::from(self.end - self.start + 1)
    }
    /// The field's bytes in a record at least `end` bytes long (a framed record is).
    pub fn slice<'a>(&self, record: &'a [u8]) -> &'a [u8] {
        let end = usize::from(self.end).min(record.len());
        let start = usize::from(self.start - 1).min(end);
        &record[start..end]
    }
    /// The column range as reports print it: `21-32`.
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
    /// The file holds nothing to read: no record, no element, or no byte at all.
    EmptyFile,
    /// The file is of a kind this build cannot read (gzip, PDF, BAI2, …).
    UnsupportedFormat,
    // NACHA (fixed-width records).
    /// A NACHA record of a length that cannot be read as 94 bytes.
    RecordLength,
    /// A NACHA record shorter than 94 bytes, padded back with blanks (a warning).
    TrimmedRecord,
    /// A NACHA record longer than 94 bytes by trailing blanks only, which were dropped (a warning).
    LongRecord,
    /// An empty line between records, skipped (a warning).
    BlankLine,
    /// A byte outside ASCII where the format allows ASCII only (in a BAI2 text, a warning).
    NonAsciiByte,
    /// A UTF-8 byte-order mark before the first record (skipped, with a warning).
    ByteOrderMark,
    /// DOS end-of-file bytes (0x1A, Ctrl-Z) after the last record (skipped, with a warning).
    EndOfFileMarker,
    /// A NACHA record whose type code is none of 1, 5, 6, 7, 8, 9.
    UnknownRecordType,
    /// A NACHA field whose characters break its format (digits, letters, a date, a time).
    FieldFormat,
    /// A camt field holding a value outside its list (an entry status, a credit/debit code, a count).
    InvalidValue,
    /// A NACHA routing number whose check digit does not match its first eight digits.
    CheckDigit,
    /// An entry's transaction code is not one the NACHA rules allow here.
    TransactionCode,
    /// A batch's service class code is not one the NACHA rules allow here (200, 220, 225, 280).
    ServiceClass,
    /// A batch's standard entry class (SEC) code is unknown, or wrong for the batch.
    SecCode,
    /// No NACHA file header (type 1) in the file.
    MissingFileHeader,
    /// The NACHA file header is not the first record.
    FileHeaderNotFirst,
    /// A second NACHA file header in the same file.
    DuplicateFileHeader,
    /// An entry or a batch control with no open batch (no batch header before it).
    RecordOutsideBatch,
    /// A batch with no batch control (type 8) before the next batch header or the file control.
    BatchNotClosed,
    /// No NACHA file control (type 9) at the end of the file.
    MissingFileControl,
    /// A record other than padding (all 9s) after the NACHA file control.
    RecordAfterFileControl,
    /// An addenda record with no entry detail right before it.
    AddendaOutsideEntry,
    /// An entry's addenda record indicator disagrees with whether addenda follow it.
    AddendaIndicator,
    /// An addenda type code not allowed in the batch's SEC code.
    AddendaType,
    /// An entry with more addenda than its SEC code allows, or a count that disagrees with the addenda that follow.
    AddendaCount,
    /// An addenda sequence number out of order (1, 2, 3, … per entry).
    AddendaSequence,
    /// An addenda's entry detail sequence number is not the last 7 digits of its entry's trace number.
    AddendaEntrySequence,
    /// A return addenda (99) whose reason code is not a known R code.
    ReturnReasonCode,
    /// A notification-of-change addenda (98) whose change code is not a known C code.
    ChangeCode,
    /// A debit entry in a credits-only batch (service class 220).
    DebitInCreditBatch,
    /// A credit entry in a debits-only batch (service class 225).
    CreditInDebitBatch,
    /// A batch or file control's entry/addenda count differs from the records counted.
    EntryAddendaCountMismatch,
    /// A batch or file control's entry hash differs from the sum of the entries' receiving
    /// routing numbers (their first eight digits).
    EntryHashMismatch,
    /// A batch or file control's total debit amount differs from the entries' sum.
    TotalDebitMismatch,
    /// A batch or file control's total credit amount differs from the entries' sum.
    TotalCreditMismatch,
    /// A batch control's service class code differs from its batch header's.
    ServiceClassMismatch,
    /// A batch control's company identification differs from its batch header's.
    CompanyIdMismatch,
    /// A batch control's originating DFI identification differs from its batch header's.
    OdfiMismatch,
    /// A batch control's batch number differs from its batch header's.
    BatchNumberMismatch,
    /// A batch number not greater than the previous batch's.
    BatchNumberSequence,
    /// The file control's batch count differs from the batches in the file.
    BatchCountMismatch,
    /// The file control's block count differs from the file's blocks of ten records.
    BlockCountMismatch,
    /// A BAI2 amount of more than 18 digits, past what 64-bit minor units hold.
    AmountOverflow,
    /// More findings than a file may keep ([`FindingSink`]).
    TooManyFindings,
    // ISO 20022 (XML).
    /// A byte-order mark and an XML declaration naming another encoding (read as the
    /// mark says, with a warning).
    EncodingMismatch,
    /// XML that is not well formed: a syntax error, an unresolved reference, a document cut short.
    XmlSyntax,
    /// A DOCTYPE declaration: refused, with every entity and external reference it could bring.
    DoctypeForbidden,
    /// Elements nested deeper than the reader allows.
    DepthLimit,
    /// A text, a line or a record larger than the reader allows: reading stops there.
    SizeLimit,
    /// An XML message of a kind or version no reader reads.
    UnsupportedMessage,
    /// A required XML element is missing.
    MissingElement,
    /// A message (Document) holding no transaction: nothing to post.
    NoTransactions,
    /// An attribute written twice on one element (`Ccy="EUR" Ccy="JPY"`).
    DuplicateAttribute,
    /// A stated number of transactions (`NbOfTxs`) differs from the transactions counted.
    NbOfTxsMismatch,
    /// A stated control sum (`CtrlSum`) differs from the sum of the amounts.
    CtrlSumMismatch,
    /// An amount written wrongly for its format (a sign, a stray character, more decimal
    /// places than its currency has).
    AmountFormat,
    /// A currency code that is not an active ISO 4217 code with minor units.
    CurrencyCode,
    /// A date (or date and time) that is not valid in the format's notation.
    DateFormat,
    /// A BIC that is not 4 letters, a 2-letter country, 2 letters or digits and an optional
    /// 3-character branch.
    BicFormat,
    /// An IBAN malformed or whose mod-97 check digits do not verify.
    IbanFormat,
    /// A UETR that is not a lowercase UUID v4.
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
    /// A bank's dialect read by one of the rules of `formats::dialect` (a warning naming
    /// the rule: the meaning was clear).
    BankDialect,
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
            BankDialect => "bank_dialect",
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
    /// Whether the finding rejects the file ([`Severity::Error`]) or is only told.
    pub severity: Severity,
    /// What is wrong.
    pub code: FindingCode,
    /// Where in the file.
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
    /// A finding of `severity`.
    pub(crate) fn new(
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
    /// A finding that rejects the file.
    pub(crate) fn error(
        code: FindingCode,
        position: impl Into<Position>,
        field: Option<FieldSpec>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Error, code, position, field, expected, found)
    }
    /// A finding told but accepted.
    pub(crate) fn warning(
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
    /// An empty sink.
    pub(crate) fn new() -> Self {
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
    /// Pushes each of `findings` ([`FindingSink::push`]).
    pub(crate) fn extend(&mut self, findings: impl IntoIterator<Item = Finding>) {
        for f in findings {
            self.push(f);
        }
    }
    /// Findings kept so far.
    pub fn len(&self) -> usize {
        self.findings.len()
    }
    /// Nothing kept and nothing dropped.
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
    /// The findings kept so far.
    pub(crate) fn as_slice(&self) -> &[Finding] {
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
