//! The file's structure: batches, entries with their addenda, controls and totals.
//!
//! [`Assembler`] consumes framed records in order and emits [`Event`]s: the file header
//! once, then every entry when its addenda are complete. It holds the file-order state
//! machine (header, batches, entries and their addenda, control, padding) and what spans
//! records; the rules of each record type live in `rules/` (file, batch, entry, addenda).
//! It keeps all findings; the caller decides (a file with an error finding is rejected
//! whole). Memory is bounded by one batch's state and one entry's addenda (at most
//! [`ADDENDA_PER_ENTRY_MAX`]), whatever the file's size.

use super::record::*;
use super::rules::addenda::{check_addenda, check_entry_addenda};
use super::rules::batch::{
    Batch, Totals, Unknown, check_batch_control, check_batch_header, check_batch_number_sequence,
    is_iat_batch_header,
};
use super::rules::check::Check;
use super::rules::entry::{Pending, check_entry};
use super::rules::file::{FileCounts, check_file_control, check_file_header};
use super::sec::BatchKind;
use super::validate::*;
use crate::findings::{
    FieldSpec, Finding, FindingCode, FindingSink, RecordPosition, Severity, show,
};
use chrono::NaiveDate;

/// Addenda kept per entry: CTX allows 9,999; past that the file is wrong.
pub(super) const ADDENDA_PER_ENTRY_MAX: usize = 9_999;

/// The file header's fields that identify the file, trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeaderInfo {
    /// The receiving point (file header columns 4-13): usually a 9-digit routing number
    /// after a blank.
    pub immediate_destination: String,
    /// The sending point (columns 14-23): a routing number or a company id.
    pub immediate_origin: String,
    /// File creation date as written, YYMMDD (columns 24-29).
    pub file_creation_date: String,
    /// File creation time as written, HHMM (columns 30-33); may be empty.
    pub file_creation_time: String,
    /// File ID modifier (column 34): tells apart files of one origin, destination and day.
    pub file_id_modifier: String,
    /// Name of the receiving point (columns 41-63).
    pub immediate_destination_name: String,
    /// Name of the sending point (columns 64-86).
    pub immediate_origin_name: String,
}

/// One entry detail record with its batch context and its addenda.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// 1-based ordinal of this entry detail (type 6) record among all entry detail
    /// records of the file, in file order, across batches. Addenda, headers, controls
    /// and padding are not counted.
    pub record_no: u64,
    /// Where the entry detail record is: record index, line and byte offset.
    pub position: RecordPosition,
    /// The batch header's batch number (columns 88-94), ascending within the file.
    pub batch_number: String,
    /// The batch's service class code: `200` mixed, `220` credits only, `225` debits only,
    /// `280` ADV.
    pub service_class_code: String,
    /// The batch's standard entry class code (`PPD`, `CCD`, `WEB`, `CTX`, `IAT`, …):
    /// which layout the entry has and what kind of payment it is.
    pub sec_code: String,
    /// The originator's name from the batch header (IAT: empty, the originator is in its
    /// addenda).
    pub company_name: String,
    /// The originator's identification from the batch header (usually `1` and an IRS
    /// employer id).
    pub company_identification: String,
    /// The batch's entry description shown to the receiver (`PAYROLL`, `REVERSAL`, …).
    pub company_entry_description: String,
    /// The batch's effective entry date: the day the originator asked for settlement.
    /// `None` when blank or not a date.
    pub effective_entry_date: Option<NaiveDate>,
    /// The originating bank's 8-digit routing number (without its check digit).
    pub odfi_identification: String,
    /// The transaction code (columns 2-3): account type and direction (`22` checking
    /// credit, `27` checking debit, `32`/`37` savings, `x3`/`x8` prenotes).
    pub transaction_code: u8,
    /// Debit or credit for the receiver, from the transaction code.
    pub direction: Direction,
    /// RDFI routing number, 9 digits with the check digit.
    pub rdfi_routing: String,
    /// The receiver's account number at the RDFI, trimmed.
    pub account: String,
    /// The amount in cents (every NACHA amount is USD).
    pub amount_minor: u64,
    /// Individual identification number, or what the SEC code's layout keeps in its
    /// place (identification number, check serial number, original trace number, …):
    /// columns 40-54 as a rule, 55-76 for CIE and MTE (`sec.rs`).
    pub individual_identification: String,
    /// Individual name, or what the SEC code's layout keeps in its place (receiving
    /// company, card account number, …): columns 55-76 as a rule, 40-54 for CIE and MTE.
    pub individual_name: String,
    /// The entry's discretionary data, for the ODFI's own use (WEB: the payment type code).
    pub discretionary_data: String,
    /// Trace number (ADV: ACH operator routing, Julian day and sequence number).
    pub trace_number: String,
    /// The entry's addenda records, trailing blanks trimmed.
    pub addenda: Vec<String>,
}

/// What the reader hands over as it reads: the file header once, then each entry as soon
/// as its addenda are complete, in file order.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Event {
    /// The file header's identity fields, before any entry.
    Header(FileHeaderInfo),
    /// One entry detail with its batch context and addenda.
    Entry(Entry),
}

/// What the assembler learned of the whole file.
#[derive(Debug, Default)]
pub struct FileSummary {
    /// The file header, `None` when the file had none.
    pub header: Option<FileHeaderInfo>,
    /// Every finding in file order (bounded: `crate::findings::FINDINGS_MAX`).
    pub findings: Vec<Finding>,
    /// Entry detail records (type 6) read.
    pub entries: u64,
    /// Addenda records (type 7) read.
    pub addenda: u64,
    /// Batches read (batch headers).
    pub batches: u64,
    /// The sum of the debit entries' amounts read, in cents (what the file control's total
    /// debit amount must equal).
    pub total_debit_minor: u128,
    /// The sum of the credit entries' amounts read, in cents.
    pub total_credit_minor: u128,
    /// Records read, padding included.
    pub records: u64,
}

impl FileSummary {
    /// The findings of severity error: any rejects the file.
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }
    /// The findings of severity warning.
    pub fn warnings(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    BeforeHeader,
    InFile,
    InBatch,
    AfterFileControl,
}

/// Relaxations a user can ask for, each named after the rule it relaxes (and after
/// moov-io/ach's `ValidateOpts` field of the same effect). The defaults follow the NACHA
/// rules; a relaxed rule still reports what it found, as a warning instead of an error.
#[derive(Debug, Clone, Copy, Default)]
pub struct ValidateOptions {
    /// Accept an immediate destination that is not a routing number with a valid check
    /// digit (vendors' return files carry placeholders such as `YYYYYYYYY`): a warning
    /// instead of an error. moov-io: `BypassDestinationValidation`.
    pub bypass_destination_check: bool,
    /// Accept a batch header whose company name or company entry description is blank
    /// or all zeros (ACH operator edits 2l, 2m): a warning instead of an error. moov-io:
    /// `SkipBatchHeaderCompanyValidation`.
    pub skip_batch_header_company_validation: bool,
    /// Accept a TEL entry whose individual name is blank or all zeros (ACH operator edit
    /// 3f): a warning instead of an error. moov-io: `AllowEmptyIndividualName`.
    pub allow_empty_individual_name: bool,
}

/// The NACHA structure checker; feed it records with [`Assembler::push`].
pub struct Assembler {
    options: ValidateOptions,
    /// Build full entries for the caller (false: validation only, fewer allocations).
    keep_entries: bool,
    state: State,
    findings: FindingSink,
    header: Option<FileHeaderInfo>,
    /// The open batch: `Some` exactly in [`State::InBatch`].
    batch: Option<Batch>,
    pending: Option<Pending>,
    record_no: u64,
    records: u64,
    non_padding_records: u64,
    batches: u64,
    adv_batches: u64,
    entries: u64,
    addenda: u64,
    /// The closed batches' totals.
    totals: Totals,
    last_batch_number: Option<u64>,
    saw_file_control: bool,
    header_out_of_place_reported: bool,
    /// Columns of the record being read that held a non-ASCII byte (see
    /// [`Assembler::push_framed`]).
    non_ascii: NonAsciiColumns,
    /// Record index of the batch header that opened the open batch.
    batch_origin: Option<u64>,
    /// Set when this assembler reads a chunk of a file from its middle
    /// ([`Assembler::resume`]): what it took as the state before the chunk.
    resumed: Option<Resume>,
    /// The open batch is the one [`Assembler::resume`] was handed (its totals lack the
    /// entries before the chunk).
    resumed_batch_open: bool,
    /// The control of the batch [`Assembler::resume`] was handed, not checked here: its
    /// totals are known only when the chunk joins the part of the file before it.
    deferred_control: Option<DeferredControl>,
}

/// What a chunk read apart ([`Assembler::resume`]) takes as the state of the file before
/// it; [`Assembler::absorb`] checks it against the state that file really left.
#[derive(Debug, Clone)]
pub(crate) struct Resume {
    /// The batch open before the chunk, as its header: record index, bytes, position, the
    /// columns that held a non-ASCII byte. `None`: no batch is open (state "in file").
    pub(crate) open_batch: Option<(u64, [u8; RECORD_LEN], RecordPosition, NonAsciiColumns)>,
    /// The last batch number read (what the next header's number must exceed).
    pub(crate) last_batch_number: Option<u64>,
}

/// A batch control met in a chunk for the batch open before it, checked at the join.
#[derive(Debug)]
struct DeferredControl {
    /// Findings kept before it in the chunk's sink.
    at: usize,
    record: [u8; RECORD_LEN],
    pos: RecordPosition,
    non_ascii: NonAsciiColumns,
    /// The batch's totals over the chunk's entries.
    totals: Totals,
}

impl Default for Assembler {
    fn default() -> Self {
        Self::new()
    }
}

impl Assembler {
    /// An assembler with the default options (every rule strict).
    pub fn new() -> Self {
        Self::with_options(ValidateOptions::default())
    }

    /// An assembler whose rules are relaxed as `options` say.
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
            totals: Totals::default(),
            last_batch_number: None,
            saw_file_control: false,
            header_out_of_place_reported: false,
            non_ascii: NonAsciiColumns::default(),
            batch_origin: None,
            resumed: None,
            resumed_batch_open: false,
            deferred_control: None,
        }
    }

    /// Readies this fresh assembler to read a chunk of a file from its middle, taking
    /// `resume` as the state the records before the chunk left (a header read, the batch
    /// open or none, the last batch number). The chunk must start at an entry detail or a
    /// batch header, with no framing finding of its own (a cut made by `parallel.rs`):
    /// then reading it from this state and [`Assembler::absorb`]ing it into the assembler
    /// of the records before gives exactly what reading the file in one pass gives.
    pub(crate) fn resume(&mut self, resume: Resume) {
        self.state = State::InFile;
        self.last_batch_number = resume.last_batch_number;
        if let Some((index, record, pos, non_ascii)) = resume.open_batch {
            // The header's findings were the earlier part's; only the batch is wanted.
            let mut scratch = FindingSink::new();
            let mut c = Check::new(&mut scratch, pos, &record).with_non_ascii(non_ascii);
            self.batch = Some(check_batch_header(&mut c, &self.options));
            self.batch_origin = Some(index);
            self.resumed_batch_open = true;
            self.state = State::InBatch;
        }
        self.resumed = Some(resume);
    }

    /// Joins `chunk` (an assembler [`Assembler::resume`]d, fed the records that follow
    /// this one's) to this one, as if this one had read them: the chunk's findings go in
    /// after this one's, its counts and totals add up, a control of the batch open across
    /// the cut is checked with the whole batch's totals. `Err(chunk)` when the chunk's
    /// assumed state is not the one this assembler is in (a file broken right at the cut):
    /// the caller reads the chunk's records again, here.
    pub(crate) fn absorb(
        &mut self,
        mut chunk: Assembler,
        emit: &mut dyn FnMut(Event),
    ) -> Result<(), Box<Assembler>> {
        let Some(resume) = chunk.resumed.as_ref() else {
            return Err(Box::new(chunk));
        };
        let same_state = match &resume.open_batch {
            Some((index, ..)) => self.state == State::InBatch && self.batch_origin == Some(*index),
            None => self.state == State::InFile,
        };
        if !same_state || self.last_batch_number != resume.last_batch_number {
            return Err(Box::new(chunk));
        }
        // The chunk's first record is not an addenda: this one's last entry ends here.
        self.finish_entry(emit);
        let mut replay = std::mem::take(&mut chunk.findings).into_replay();
        let mut open = self.batch.take();
        // A deferred control means a batch open at the cut: the state matched, so here too.
        if let Some(d) = chunk.deferred_control.take()
            && let Some(mut batch) = open.take()
        {
            self.findings.replay(&mut replay, Some(d.at));
            batch.totals.add(&d.totals);
            self.batch = Some(batch);
            self.non_ascii = d.non_ascii;
            self.batch_control(&d.record, d.pos);
        }
        self.findings.replay(&mut replay, None);
        if chunk.resumed_batch_open
            && let (Some(b), Some(before)) = (chunk.batch.as_mut(), open.as_ref())
        {
            b.totals.add(&before.totals);
        }
        self.state = chunk.state;
        self.batch = chunk.batch;
        self.batch_origin = chunk.batch_origin;
        self.pending = chunk.pending;
        self.record_no += chunk.record_no;
        self.records += chunk.records;
        self.non_padding_records += chunk.non_padding_records;
        self.batches += chunk.batches;
        self.adv_batches += chunk.adv_batches;
        self.entries += chunk.entries;
        self.addenda += chunk.addenda;
        self.totals.add(&chunk.totals);
        self.last_batch_number = chunk.last_batch_number;
        self.saw_file_control |= chunk.saw_file_control;
        Ok(())
    }

    /// Validation only: entries are checked but not emitted (the header still is), and
    /// built without their text fields and addenda, to save allocations and copies.
    pub fn without_entry_details(mut self) -> Self {
        self.keep_entries = false;
        self
    }

    /// Adds findings found elsewhere (the reader's framing findings), within the limit.
    pub fn add_findings(&mut self, findings: impl IntoIterator<Item = Finding>) {
        self.findings.extend(findings);
    }

    /// Counts warnings the reader dropped (empty lines past the findings limit).
    pub(crate) fn count_dropped_warnings(&mut self, n: u64) {
        self.findings.count_dropped_warnings(n);
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
    /// Its non-printable bytes are taken as non-ASCII ones (`Assembler::push_framed`),
    /// whose finding is the reader's.
    pub fn push(&mut self, record: &[u8], pos: RecordPosition, emit: &mut dyn FnMut(Event)) {
        self.push_framed(record, pos, NonAsciiColumns::of(record), emit);
    }

    /// [`Assembler::push`] of a record whose columns `non_ascii` held a non-ASCII byte or
    /// character (the reader's `non_ascii_byte` finding, one per record): no cascade.
    /// Findings about a field holding such a column are dropped, and the control totals
    /// such a field feeds are not compared (`rules/check.rs`, `rules/batch.rs`).
    pub(crate) fn push_framed(
        &mut self,
        record: &[u8],
        pos: RecordPosition,
        non_ascii: NonAsciiColumns,
        emit: &mut dyn FnMut(Event),
    ) {
        self.non_ascii = non_ascii;
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
        if !self.in_file_order(record, pos) {
            return;
        }
        let kind = record[0];
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
            _ if self.non_ascii.contains(1) => self.unreadable_record_type(),
            _ => Check::new(&mut self.findings, pos, record)
                .with_non_ascii(self.non_ascii)
                .error(
                    FindingCode::UnknownRecordType,
                    Some(ENTRY_DETAIL.record_type),
                    "one of 1, 5, 6, 7, 8, 9",
                    show(&record[..1]),
                ),
        }
    }

    /// A record whose type (column 1) is a non-ASCII byte, already a finding: it may have
    /// been any record, so what the open batch and the file count is unknown.
    fn unreadable_record_type(&mut self) {
        match self.batch.as_mut() {
            Some(b) => b.totals.unknown = Unknown::ALL,
            None => self.totals.unknown = Unknown::ALL,
        }
        self.totals.unknown.batches = true;
    }

    /// The field of `record`'s layout (as this point of the file reads it: the open
    /// batch's SEC code picks the entry layout) holding 1-based column `col`, narrowed to
    /// that column: what a `non_ascii_byte` finding names. `None` for a record of no
    /// known type.
    pub(crate) fn field_at(&self, record: &[u8; RECORD_LEN], col: u16) -> Option<FieldSpec> {
        let batch = self.batch.as_ref();
        let fields = match record[0] {
            b'1' => FILE_HEADER.fields(),
            b'5' if is_iat_batch_header(record) => IAT_BATCH_HEADER.fields(),
            b'5' => BATCH_HEADER.fields(),
            b'6' => match batch {
                Some(b) if b.kind() == BatchKind::Iat => IAT_ENTRY_DETAIL.fields(),
                Some(b) if b.kind() == BatchKind::Adv => ADV_ENTRY_DETAIL.fields(),
                Some(b) if b.kind() == BatchKind::Ctx => CTX_ENTRY_DETAIL.fields(),
                Some(b) if matches!(b.sec_code.as_str(), "CIE" | "MTE") => {
                    CIE_ENTRY_DETAIL.fields()
                }
                Some(b) if b.sec_code == "SHR" => SHR_ENTRY_DETAIL.fields(),
                _ => ENTRY_DETAIL.fields(),
            },
            b'7' => match ADDENDA.addenda_type_code.slice(record) {
                b"02" => ADDENDA02.fields(),
                b"10" => ADDENDA10.fields(),
                b"98" => ADDENDA98.fields(),
                b"99" => ADDENDA99.fields(),
                _ => ADDENDA.fields(),
            },
            b'8' if batch.is_some_and(|b| b.kind() == BatchKind::Adv) => ADV_BATCH_CONTROL.fields(),
            b'8' => BATCH_CONTROL.fields(),
            b'9' if self.batches > 0 && self.adv_batches == self.batches => {
                ADV_FILE_CONTROL.fields()
            }
            b'9' => FILE_CONTROL.fields(),
            _ => return None,
        };
        let f = fields
            .into_iter()
            .find(|f| f.start <= col && col <= f.end)?;
        Some(FieldSpec {
            start: col,
            end: col,
            ..f
        })
    }

    /// The order rules a record's type alone decides: only padding after the file
    /// control (false: the record is not read), a file header first (reported once).
    fn in_file_order(&mut self, record: &[u8; RECORD_LEN], pos: RecordPosition) -> bool {
        let mut c = Check::new(&mut self.findings, pos, record).with_non_ascii(self.non_ascii);
        let found = || format!("a record of type {}", show(&record[..1]));
        if self.state == State::AfterFileControl {
            c.error(
                FindingCode::RecordAfterFileControl,
                None,
                "only padding records (all 9s) after the file control",
                found(),
            );
            return false;
        }
        if self.state == State::BeforeHeader
            && record[0] != b'1'
            && !self.header_out_of_place_reported
        {
            self.header_out_of_place_reported = true;
            c.error(
                FindingCode::FileHeaderNotFirst,
                Some(FILE_HEADER.record_type),
                "a file header (type 1) as the first record",
                found(),
            );
            self.state = State::InFile;
        }
        true
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
            self.missing_at_end(end);
        }
        FileSummary {
            header: self.header,
            findings: self.findings.finish(end),
            entries: self.entries,
            addenda: self.addenda,
            batches: self.batches,
            total_debit_minor: self.totals.debit_minor,
            total_credit_minor: self.totals.credit_minor,
            records: self.records,
        }
    }

    /// What a file must have had by its end: a header, its last batch closed, a control.
    fn missing_at_end(&mut self, end: RecordPosition) {
        let mut missing = |code, expected, found| {
            let f = Finding::error(code, end, None, expected, found);
            self.findings.push_at_end(f);
        };
        if self.header.is_none() && !self.header_out_of_place_reported {
            missing(
                FindingCode::MissingFileHeader,
                "a file header (type 1)",
                "none",
            );
        }
        if self.state == State::InBatch {
            missing(
                FindingCode::BatchNotClosed,
                "a batch control (type 8)",
                "end of file",
            );
        }
        if !self.saw_file_control {
            missing(
                FindingCode::MissingFileControl,
                "a file control (type 9)",
                "end of file",
            );
        }
    }

    fn file_header(
        &mut self,
        record: &[u8; RECORD_LEN],
        pos: RecordPosition,
        emit: &mut dyn FnMut(Event),
    ) {
        let mut c = Check::new(&mut self.findings, pos, record).with_non_ascii(self.non_ascii);
        if self.state != State::BeforeHeader {
            c.error(
                FindingCode::DuplicateFileHeader,
                Some(FILE_HEADER.record_type),
                "one file header, first in the file",
                "another file header",
            );
            return;
        }
        let info = check_file_header(&mut c, self.options.bypass_destination_check);
        self.state = State::InFile;
        self.header = Some(info.clone());
        emit(Event::Header(info));
    }

    fn batch_header(&mut self, record: &[u8; RECORD_LEN], pos: RecordPosition) {
        let mut c = Check::new(&mut self.findings, pos, record).with_non_ascii(self.non_ascii);
        if self.state == State::InBatch {
            c.error(
                FindingCode::BatchNotClosed,
                Some(BATCH_HEADER.record_type),
                "a batch control (type 8) before the next batch header",
                "a batch header",
            );
        }
        let batch = check_batch_header(&mut c, &self.options);
        check_batch_number_sequence(&mut c, &batch, &mut self.last_batch_number);
        self.batch_origin = Some(pos.record_index);
        self.resumed_batch_open = false;
        self.batches += 1;
        if batch.kind() == BatchKind::Adv {
            self.adv_batches += 1;
        }
        self.batch = Some(batch);
        self.state = State::InBatch;
    }

    fn entry(&mut self, record: &[u8; RECORD_LEN], pos: RecordPosition) {
        self.record_no += 1;
        self.entries += 1;
        let mut c = Check::new(&mut self.findings, pos, record).with_non_ascii(self.non_ascii);
        let Some(batch) = self.batch.as_mut() else {
            c.error(
                FindingCode::RecordOutsideBatch,
                Some(ENTRY_DETAIL.record_type),
                "an entry inside a batch (after a batch header)",
                "an entry outside any batch",
            );
            return;
        };
        let keep = self.keep_entries;
        let p = check_entry(&mut c, batch, self.record_no, keep, &self.options);
        self.pending = Some(p);
    }

    fn addenda_record(&mut self, record: &[u8; RECORD_LEN], pos: RecordPosition) {
        self.addenda += 1;
        if let Some(b) = self.batch.as_mut() {
            b.totals.add_addenda();
        }
        let sec = self.batch.as_ref().map_or("", |b| b.sec_code.as_str());
        let mut c = Check::new(&mut self.findings, pos, record).with_non_ascii(self.non_ascii);
        let Some(p) = self.pending.as_mut() else {
            c.error(
                FindingCode::AddendaOutsideEntry,
                Some(ADDENDA.record_type),
                "an addenda record right after its entry detail",
                "an addenda with no entry before it",
            );
            return;
        };
        check_addenda(&mut c, p, sec);
    }

    /// Checks the pending entry's addenda as a whole, and emits it.
    fn finish_entry(&mut self, emit: &mut dyn FnMut(Event)) {
        let Some(p) = self.pending.as_ref() else {
            return;
        };
        check_entry_addenda(&mut self.findings, p);
        // Validation only (`check`) built no entry: nothing to hand over.
        if let Some(entry) = self.pending.take().and_then(|p| p.entry) {
            emit(Event::Entry(*entry));
        }
    }

    fn batch_control(&mut self, record: &[u8; RECORD_LEN], pos: RecordPosition) {
        let mut c = Check::new(&mut self.findings, pos, record)
            .with_non_ascii(self.non_ascii)
            .for_batch_control();
        let Some(batch) = self.batch.take() else {
            c.error(
                FindingCode::RecordOutsideBatch,
                Some(BATCH_CONTROL.record_type),
                "a batch control closing a batch",
                "a batch control with no open batch",
            );
            return;
        };
        self.state = State::InFile;
        if std::mem::take(&mut self.resumed_batch_open) {
            // Its entries before the chunk are not in these totals: checked at the join.
            let (record, non_ascii) = (*record, self.non_ascii);
            let (at, totals) = (c.kept(), batch.totals);
            let d = DeferredControl {
                at,
                record,
                pos,
                non_ascii,
                totals,
            };
            self.deferred_control = Some(d);
            return;
        }
        check_batch_control(&mut c, &batch);
        self.totals.add(&batch.totals);
    }

    fn file_control(&mut self, record: &[u8; RECORD_LEN], pos: RecordPosition) {
        let mut c = Check::new(&mut self.findings, pos, record)
            .with_non_ascii(self.non_ascii)
            .for_file_control();
        if self.state == State::InBatch {
            c.error(
                FindingCode::BatchNotClosed,
                Some(FILE_CONTROL.record_type),
                "a batch control (type 8) before the file control",
                "a file control",
            );
            self.batch = None;
            self.resumed_batch_open = false;
        }
        self.state = State::AfterFileControl;
        self.saw_file_control = true;
        let adv = self.batches > 0 && self.adv_batches == self.batches;
        let counts = FileCounts {
            batches: self.batches,
            blocks: self.non_padding_records.div_ceil(10),
            totals: self.totals,
        };
        check_file_control(&mut c, adv, &counts);
    }
}

#[cfg(test)]
mod tests;
