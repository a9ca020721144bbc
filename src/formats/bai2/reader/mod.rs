//! The BAI2 reader: physical lines (bounded) into logical records (a record and its `88`
//! continuations), logical records through the file/group/account state machine into
//! statements, with the control totals and the balance checks.
//! One file per concern:
//! - this file: the reader's state (positions, records, file/group/account headers,
//!   place in the structure), the pass over the input, the findings;
//! - [`lines`]: physical lines (bounded) cut into records and fields, text fields, `88`
//!   continuations;
//! - [`records`]: a logical record complete, dispatched by its code; its field values
//!   (dates, currencies, amounts, counts);
//! - [`groups`]: the file, group and account headers and trailers (the structure);
//! - [`entries`]: an account's balances and summaries (`03`), its transaction details
//!   (`16`);
//! - [`totals`]: control totals and counts, the balance check and the chain between an
//!   account's statements, statements emitted.

mod entries;
mod groups;
mod lines;
mod records;
mod totals;

use super::lex;
use super::{FORMAT, StatementRead};
use crate::findings::{Finding, FindingCode, FindingSink, Position, TextPosition};
use crate::formats::statement::{Statement, StatementKind};
use chrono::NaiveDate;
use lines::read_line;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, BufRead};

/// Bytes one physical line may have: BAI2 lines are 80 bytes in most files; records joined
/// on one line or long texts (moov-sample4: 300) stay far below. Past it the file is
/// refused: nothing after an unbounded line can be positioned reliably.
const LINE_BYTES_MAX: usize = 1 << 20;

/// Bytes of fields and text one logical record (a record and its `88`s) may gather.
const RECORD_BYTES_MAX: usize = 1 << 20;

/// Fields one logical record may have (a `03` with its summaries has tens).
const RECORD_FIELDS_MAX: usize = 10_000;

/// Distributions a funds type `D` may announce (the spec's examples have 3).
const DISTRIBUTIONS_MAX: u64 = 1_000;

/// Accounts whose last closing balance is kept for the balance chain; past it, new
/// accounts are not chained (a file of millions of accounts stays bounded).
const CHAINED_ACCOUNTS_MAX: usize = 100_000;

/// A physical record is full at this length when the `01` gives none (NatWest writes
/// 80-byte records and splits text words at the boundary).
const RECORD_LENGTH_DEFAULT: usize = 80;

/// Where some bytes of the file are.
#[derive(Debug, Clone, Copy, Default)]
struct At {
    byte: u64,
    line: u64,
    column: u64,
}

impl At {
    fn pos(self, tag: &'static str) -> Position {
        self.pos_tagged(Cow::Borrowed(tag))
    }

    fn pos_tagged(self, tag: Cow<'static, str>) -> Position {
        TextPosition {
            byte_offset: self.byte,
            line: self.line,
            column: self.column,
            tag: Some(tag),
        }
        .into()
    }
}

/// The physical line being read: where it is, and its text when it is ASCII.
struct Phys<'a> {
    start: u64,
    line_no: u64,
    col_base: u64,
    text: Option<&'a str>,
}

impl Phys<'_> {
    /// Where byte `i` of the line is.
    fn at(&self, i: usize) -> At {
        At {
            byte: self.start + i as u64,
            line: self.line_no,
            column: self.col_base + i as u64 + 1,
        }
    }

    /// Bytes `a..b` of an ASCII line as text.
    fn str(&self, a: usize, b: usize) -> Option<&str> {
        self.text.and_then(|t| t.get(a..b))
    }
}

/// One comma-separated field of a logical record: its value is `data[start..end]` of
/// the record.
#[derive(Debug, Clone)]
struct Field {
    start: usize,
    end: usize,
    /// `data[trim_start..trim_end]` is the value trimmed ([`str::trim`]).
    trim_start: usize,
    trim_end: usize,
    at: At,
    /// 0 in the record itself, n in its n-th `88`.
    piece: u32,
}

/// The state of the text of a `16`, from its records and `88`s (the text itself is the
/// record's `text`).
#[derive(Debug, Clone)]
struct Text {
    /// Not closed by a `/`: a line with no record code continues it.
    open: bool,
    /// The last piece filled its physical record: the next joins without a space.
    last_full: bool,
}

/// A record and its `88` continuations, complete when the next record that is not an
/// `88` begins. Its buffers are reused from record to record (see [`Reader::logical`]).
#[derive(Debug, Clone)]
struct Logical {
    code: &'static str,
    at: At,
    /// The decoded values of its fields, one after another.
    data: String,
    fields: Vec<Field>,
    /// A `16`'s text so far, when `text` is `Some`.
    text_buf: String,
    text: Option<Text>,
    /// Physical records: 1 + its `88`s.
    pieces: u32,
    bytes: usize,
    too_big: bool,
}

impl Logical {
    fn new(code: &'static str, at: At) -> Self {
        Logical {
            code,
            at,
            data: String::new(),
            fields: Vec::new(),
            text_buf: String::new(),
            text: None,
            pieces: 1,
            bytes: 0,
            too_big: false,
        }
    }

    /// Empty again, for the record `code` at `at`, its buffers kept.
    fn reset(&mut self, code: &'static str, at: At) {
        self.code = code;
        self.at = at;
        self.data.clear();
        self.fields.clear();
        self.text_buf.clear();
        self.text = None;
        self.pieces = 1;
        self.bytes = 0;
        self.too_big = false;
    }

    /// Whether the next token is the `16` text: after type code, amount, funds type and
    /// its variant fields, bank reference and customer reference.
    fn next_is_text(&self) -> bool {
        self.code == "16"
            && (self.text.is_some() || self.text_index().is_some_and(|t| self.fields.len() >= t))
    }

    /// The number of fields before a `16`'s text, once the funds type says it.
    fn text_index(&self) -> Option<usize> {
        let funds = self.trimmed_value(self.fields.get(2)?);
        let variant = match funds {
            "S" => 3,
            "V" => 2,
            "D" => {
                let n = lex::count(self.trimmed_value(self.fields.get(3)?)).unwrap_or(0);
                1 + 2 * n.min(DISTRIBUTIONS_MAX) as usize
            }
            _ => 0,
        };
        Some(3 + variant + 2)
    }

    fn tag(&self, f: &Field) -> &'static str {
        if f.piece == 0 { self.code } else { "88" }
    }

    fn value(&self, f: &Field) -> &str {
        self.data.get(f.start..f.end).unwrap_or("")
    }

    /// [`str::trim`] of the value, found when the field was read.
    fn trimmed_value(&self, f: &Field) -> &str {
        self.data.get(f.trim_start..f.trim_end).unwrap_or("")
    }

    fn field(&self, i: usize) -> &str {
        self.fields.get(i).map_or("", |f| self.value(f))
    }

    /// Field `i` trimmed (`""` when absent).
    fn trimmed(&self, i: usize) -> &str {
        self.fields.get(i).map_or("", |f| self.trimmed_value(f))
    }

    /// Where field `i` is, or the end of the record when it is absent.
    fn field_pos(&self, i: usize) -> Position {
        match self.fields.get(i) {
            Some(f) => f.at.pos(self.tag(f)),
            None => self.at.pos(self.code),
        }
    }
}

/// The `01` as read.
#[derive(Debug, Default)]
struct FileHeader {
    file_id: String,
    record_length: usize,
    at: At,
    records: u64,
    groups: u64,
    /// Sum of the `98` control totals (as written; computed where blank).
    totals: i128,
}

/// The `02` as read.
#[derive(Debug)]
struct GroupHeader {
    originator: Option<String>,
    currency: Option<String>,
    as_of: Option<NaiveDate>,
    sequence: String,
    kind: StatementKind,
    records: u64,
    accounts: u64,
    /// Sum of the `49` control totals (as written; computed where blank).
    totals: i128,
}

/// An account group `03` … `49` being read.
#[derive(Debug)]
struct Account {
    statement: Statement,
    records: u64,
    /// Algebraic sum of the amounts of its `03` and `16` records.
    amounts: i128,
}

/// What the balance chain keeps of an account's last statement: its as-of date, its
/// closing booked balance and that balance's line.
type ChainLink = (Option<NaiveDate>, Option<(i64, u64)>);

/// Where in the file structure the reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Before the `01`.
    Start,
    /// After the `01` or a `98`.
    File,
    /// After a `02` or a `49`.
    Group,
    /// After a `03`.
    Account,
    /// After the `99`.
    End,
}

struct Reader<'a> {
    sink: FindingSink,
    on_statement: &'a mut dyn FnMut(Statement),
    place: Place,
    file: Option<FileHeader>,
    group: Option<GroupHeader>,
    account: Option<Account>,
    /// Boxed, like the spare: moved for every record.
    pending: Option<Box<Logical>>,
    /// A finished record, its buffers kept for the next.
    spare: Option<Box<Logical>>,
    /// Entries of the last statement: the room reserved for the next.
    entries_hint: usize,
    /// Skipping an unknown record and its `88`s.
    skipping: bool,
    statements: u64,
    entries: u64,
    /// Per account and currency: the as-of date, closing `015` and its line, of the last
    /// statement read.
    chain: HashMap<(String, String), ChainLink>,
    after_99_reported: bool,
    end: At,
    /// Reading stopped at a line past [`LINE_BYTES_MAX`].
    stopped: bool,
}

pub(super) fn read<R: BufRead>(
    mut input: R,
    on_statement: &mut dyn FnMut(Statement),
) -> io::Result<StatementRead> {
    let mut r = Reader::new(on_statement);
    let mut lines = Lines::default();
    let mut buf = Vec::new();
    loop {
        // The whole lines the input holds, read where they are; a line the input's
        // buffer cuts (or a long one) is gathered into `buf`.
        let avail = match input.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let used = r.whole_lines(&mut lines, avail);
        if used > 0 {
            input.consume(used);
            continue;
        }
        let (len, had_newline, too_long) = read_line(&mut input, &mut buf)?;
        if len == 0 && !had_newline {
            break;
        }
        if too_long {
            r.stop_at_long_line(&mut lines);
            return Ok(r.finish(true));
        }
        r.physical_line(&mut lines, &buf);
    }
    Ok(r.finish(lines.any_content))
}

impl<'a> Reader<'a> {
    fn new(on_statement: &'a mut dyn FnMut(Statement)) -> Self {
        Reader {
            sink: FindingSink::new(),
            on_statement,
            place: Place::Start,
            file: None,
            group: None,
            account: None,
            pending: None,
            spare: None,
            entries_hint: 0,
            skipping: false,
            statements: 0,
            entries: 0,
            chain: HashMap::new(),
            after_99_reported: false,
            end: At {
                byte: 0,
                line: 1,
                column: 1,
            },
            stopped: false,
        }
    }

    /// The lines `avail` holds whole (each within [`LINE_BYTES_MAX`]), read in place;
    /// gives the bytes they took (0: the first line is cut or long, for `read_line`).
    fn whole_lines(&mut self, lines: &mut Lines, avail: &[u8]) -> usize {
        let mut used = 0;
        for p in memchr::memchr_iter(b'\n', avail) {
            if p + 1 - used > LINE_BYTES_MAX + 2 {
                break;
            }
            self.physical_line(lines, &avail[used..=p]);
            used = p + 1;
        }
        used
    }

    /// A line past [`LINE_BYTES_MAX`]: reading stops there, the file refused for it.
    fn stop_at_long_line(&mut self, lines: &mut Lines) {
        lines.line_no += 1;
        let start = lines.byte;
        self.sink.push_at_end(Finding::error(
            FindingCode::SizeLimit,
            At {
                byte: start,
                line: lines.line_no,
                column: 1,
            }
            .pos("line"),
            None,
            format!("a line of at most {LINE_BYTES_MAX} bytes"),
            "a longer line: reading stopped",
        ));
        self.end = At {
            byte: start,
            line: lines.line_no,
            column: 1,
        };
        // What is open stays unchecked: the file is refused for the line.
        self.pending = None;
        self.account = None;
        self.place = Place::End;
        self.stopped = true;
    }
}

/// Where the physical lines read so far end.
#[derive(Debug, Default)]
struct Lines {
    /// Bytes read.
    byte: u64,
    line_no: u64,
    /// A line that is not blank was read.
    any_content: bool,
}

impl Reader<'_> {
    fn err(
        &mut self,
        code: FindingCode,
        pos: Position,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) {
        self.sink
            .push(Finding::error(code, pos, None, expected, found));
    }

    fn warn(
        &mut self,
        code: FindingCode,
        pos: Position,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) {
        self.sink
            .push(Finding::warning(code, pos, None, expected, found));
    }

    /// A control record's finding (a trailer's totals), kept past the findings limit.
    fn control(&mut self, code: FindingCode, pos: Position, expected: String, found: &str) {
        self.sink
            .push_control(Finding::error(code, pos, None, expected, found.to_string()));
    }

    fn finish(mut self, any_content: bool) -> StatementRead {
        self.finish_pending();
        let end = self.end;
        if !any_content && self.file.is_none() {
            self.sink.push_at_end(Finding::error(
                FindingCode::EmptyFile,
                end.pos("file"),
                None,
                "a BAI2 file (01 … 99)",
                "no record",
            ));
        } else if self.file.is_none() {
            self.sink.push_at_end(Finding::error(
                FindingCode::MissingTag,
                end.pos("01"),
                None,
                "a 01 file header",
                "no 01 record in the file",
            ));
        } else if self.place != Place::End {
            if self.place == Place::Account {
                self.sink.push_at_end(Finding::error(
                    FindingCode::MissingTag,
                    end.pos("49"),
                    None,
                    "a 49 account trailer",
                    "the end of the file",
                ));
                self.emit_account();
            }
            if self.group.is_some() {
                self.sink.push_at_end(Finding::error(
                    FindingCode::MissingTag,
                    end.pos("98"),
                    None,
                    "a 98 group trailer",
                    "the end of the file",
                ));
            }
            self.sink.push_at_end(Finding::error(
                FindingCode::MissingTag,
                end.pos("99"),
                None,
                "a 99 file trailer",
                "the end of the file",
            ));
        }
        if self.file.is_some() && self.statements == 0 && !self.stopped {
            let at = self.file.as_ref().map_or(end, |f| f.at);
            self.sink.push_at_end(Finding::error(
                FindingCode::NoStatements,
                at.pos("01"),
                None,
                "at least one account (03 … 49)",
                "none",
            ));
        }
        StatementRead {
            format: FORMAT,
            statements: self.statements,
            entries: self.entries,
            findings: self.sink.finish(end.pos("file")),
        }
    }
}

/// Bytes as text: ASCII (or UTF-8) as is, other bytes replaced (U+FFFD).
fn decode(b: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}
