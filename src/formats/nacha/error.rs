//! Findings: every problem found in a NACHA file, with its exact position.
//!
//! A finding is a value, never a panic. The reader and the assembler collect all
//! findings of a file instead of stopping at the first; a file with at least one
//! finding of severity [`Severity::Error`] is rejected whole.

use serde::Serialize;
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

/// Where a physical record sits in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Position {
    /// 0-based index of the physical 94-byte record in the file (padding records count).
    pub record_index: u64,
    /// 1-based line number (in a file without separators, several records share a line).
    pub line: u64,
    /// 0-based byte offset of the record's first byte in the file.
    pub byte_offset: u64,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, record {}, byte {}",
            self.line, self.record_index, self.byte_offset
        )
    }
}

/// A field of a record layout: its name and its 1-based inclusive column range.
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
    /// The field's bytes in a 94-byte record.
    pub fn slice<'a>(&self, record: &'a [u8]) -> &'a [u8] {
        &record[usize::from(self.start - 1)..usize::from(self.end)]
    }
    pub fn columns(&self) -> String {
        format!("{}-{}", self.start, self.end)
    }
}

/// What is wrong. The snake_case name (`as_str`) is stable: it is journaled and
/// printed in `--json` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FindingCode {
    EmptyFile,
    RecordLength,
    TrimmedRecord,
    LongRecord,
    BlankLine,
    NonAsciiByte,
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
    // ISO 20022 (XML) findings.
    XmlSyntax,
    DoctypeForbidden,
    DepthLimit,
    SizeLimit,
    UnsupportedMessage,
    MissingElement,
    NbOfTxsMismatch,
    CtrlSumMismatch,
    AmountFormat,
    CurrencyCode,
    DateFormat,
    BicFormat,
    IbanFormat,
    UetrFormat,
}

impl FindingCode {
    pub fn as_str(self) -> &'static str {
        use FindingCode::*;
        match self {
            EmptyFile => "empty_file",
            RecordLength => "record_length",
            TrimmedRecord => "trimmed_record",
            LongRecord => "long_record",
            BlankLine => "blank_line",
            NonAsciiByte => "non_ascii_byte",
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
            XmlSyntax => "xml_syntax",
            DoctypeForbidden => "doctype_forbidden",
            DepthLimit => "depth_limit",
            SizeLimit => "size_limit",
            UnsupportedMessage => "unsupported_message",
            MissingElement => "missing_element",
            NbOfTxsMismatch => "nb_of_txs_mismatch",
            CtrlSumMismatch => "ctrl_sum_mismatch",
            AmountFormat => "amount_format",
            CurrencyCode => "currency_code",
            DateFormat => "date_format",
            BicFormat => "bic_format",
            IbanFormat => "iban_format",
            UetrFormat => "uetr_format",
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
    /// The field concerned, with its column range, when the finding is about one field.
    pub field: Option<FieldSpec>,
    /// What the spec (or the computed total) expects.
    pub expected: String,
    /// What the file holds.
    pub found: String,
    /// XML files: the element path, e.g. `/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[3]/IntrBkSttlmAmt`.
    pub path: Option<String>,
}

impl Finding {
    pub fn error(
        code: FindingCode,
        position: Position,
        field: Option<FieldSpec>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        Finding {
            severity: Severity::Error,
            code,
            position,
            field,
            expected: expected.into(),
            found: found.into(),
            path: None,
        }
    }
    pub fn warning(
        code: FindingCode,
        position: Position,
        field: Option<FieldSpec>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        Finding {
            severity: Severity::Warning,
            code,
            position,
            field,
            expected: expected.into(),
            found: found.into(),
            path: None,
        }
    }
    /// The same finding about an XML element path.
    pub fn at_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
    /// `entry_detail.amount (columns 30-39)` or an empty string.
    pub fn field_label(&self) -> String {
        match &self.field {
            Some(f) => format!("{}.{} (columns {})", f.record, f.name, f.columns()),
            None => String::new(),
        }
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
            write!(
                f,
                " {}.{} columns {}",
                field.record,
                field.name,
                field.columns()
            )?;
        }
        write!(f, ": expected {}, found {:?}", self.expected, self.found)
    }
}

/// Printable form of raw field bytes for messages: ASCII as is, other bytes escaped.
pub fn show(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}
