//! The BAI2 reader: physical lines (bounded) into logical records (a record and its `88`
//! continuations), logical records through the file/group/account state machine into
//! statements, with the control totals and the balance checks.

use super::lex::{self, AmountError};
use super::{FORMAT, StatementRead, kind_of_modifier};
use crate::findings::{Finding, FindingCode, FindingSink, Position, TextPosition, show};
use crate::formats::statement::{
    Balance, BalanceKind, Entry, EntryStatus, Statement, StatementKind, check_balance,
    collapse_whitespace, fit_entries,
};
use chrono::NaiveDate;
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
    let mut r = Reader {
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
    };
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
        let mut used = 0;
        for p in memchr::memchr_iter(b'\n', avail) {
            if p + 1 - used > LINE_BYTES_MAX + 2 {
                break;
            }
            r.physical_line(&mut lines, &avail[used..=p]);
            used = p + 1;
        }
        if used > 0 {
            input.consume(used);
            continue;
        }
        let (len, had_newline, too_long) = read_line(&mut input, &mut buf)?;
        if len == 0 && !had_newline {
            break;
        }
        if too_long {
            lines.line_no += 1;
            let start = lines.byte;
            r.sink.push_at_end(Finding::error(
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
            r.end = At {
                byte: start,
                line: lines.line_no,
                column: 1,
            };
            // What is open stays unchecked: the file is refused for the line.
            r.pending = None;
            r.account = None;
            r.place = Place::End;
            r.stopped = true;
            return Ok(r.finish(true));
        }
        r.physical_line(&mut lines, &buf);
    }
    Ok(r.finish(lines.any_content))
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

/// Reads one physical line (its `\n` included) into `buf`, keeping at most
/// [`LINE_BYTES_MAX`] bytes: (bytes read, whether it ended with `\n`, whether it was too
/// long).
fn read_line<R: BufRead>(input: &mut R, buf: &mut Vec<u8>) -> io::Result<(usize, bool, bool)> {
    buf.clear();
    let mut total = 0;
    loop {
        let avail = match input.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok((total, false, false));
        }
        let (take, done) = match memchr::memchr(b'\n', avail) {
            Some(p) => (p + 1, true),
            None => (avail.len(), false),
        };
        if buf.len() + take > LINE_BYTES_MAX + 2 {
            return Ok((total + take, done, true));
        }
        buf.extend_from_slice(&avail[..take]);
        input.consume(take);
        total += take;
        if done {
            return Ok((total, true, false));
        }
    }
}

impl Reader<'_> {
    /// One physical line, its `\n` (if any) included.
    fn physical_line(&mut self, lines: &mut Lines, raw: &[u8]) {
        lines.line_no += 1;
        let line_no = lines.line_no;
        let start = lines.byte;
        lines.byte += raw.len() as u64;
        let mut line = raw;
        if line.last() == Some(&b'\n') {
            line = &line[..line.len() - 1];
        }
        if line.last() == Some(&b'\r') {
            line = &line[..line.len() - 1];
        }
        let mut skip = 0;
        if line_no == 1 && line.starts_with(b"\xEF\xBB\xBF") {
            self.sink.push(Finding::warning(
                FindingCode::ByteOrderMark,
                At {
                    byte: 0,
                    line: 1,
                    column: 1,
                }
                .pos("line"),
                None,
                "no byte-order mark (BAI2 is ASCII)",
                "EF BB BF (skipped)",
            ));
            skip = 3;
        }
        let blank = lex::is_blank(&line[skip..]);
        lines.any_content |= !blank;
        self.line(
            &line[skip..],
            blank,
            line_no,
            start + skip as u64,
            skip as u64,
        );
        self.end = At {
            byte: lines.byte,
            line: line_no,
            column: line.len() as u64 + 1,
        };
    }

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

    // ---- physical lines ----

    /// A physical line (`blank`: [`lex::is_blank`] of it).
    fn line(&mut self, line: &[u8], blank: bool, line_no: u64, start: u64, col_base: u64) {
        let at = Phys {
            start,
            line_no,
            col_base,
            // An ASCII line (nearly all) is text once: its fields are slices of it.
            text: if line.is_ascii() {
                std::str::from_utf8(line).ok()
            } else {
                None
            },
        };
        if line.iter().all(|&b| b == 0x1A) && !line.is_empty() {
            self.warn(
                FindingCode::EndOfFileMarker,
                at.at(0).pos("line"),
                "no DOS end-of-file byte (0x1A)",
                "0x1A (skipped)",
            );
            return;
        }
        if blank {
            self.warn(
                FindingCode::BlankLine,
                at.at(0).pos("line"),
                "a record",
                "a blank line (skipped)",
            );
            return;
        }
        let mut next = match lex::record_code(line) {
            Ok((_, code)) if lex::known(code).is_some() => Some(0),
            Ok((_, code)) if !self.text_open() => {
                self.finish_pending();
                self.skipping = true;
                self.count_records(1);
                self.warn(
                    FindingCode::UnknownTag,
                    at.at(0).pos_tagged(show(code).into()),
                    "a BAI2 record code (01, 02, 03, 16, 49, 88, 98, 99)",
                    format!("{} (record skipped)", show(code)),
                );
                None
            }
            _ if self.text_open() => {
                let tag = self.pending.as_ref().map_or("16", |p| p.code);
                self.warn(
                    FindingCode::TagSyntax,
                    at.at(0).pos(tag),
                    "a record code (88 to continue a text)",
                    format!(
                        "{:?}: read as the text of the record before",
                        show(&line[..line.len().min(24)])
                    ),
                );
                self.scan_text(line, 0, &at)
            }
            _ => {
                self.err(
                    FindingCode::TagSyntax,
                    at.at(0).pos("line"),
                    "a record code (01, 02, 03, 16, 49, 88, 98, 99) and a comma",
                    format!("{:?}", show(&line[..line.len().min(24)])),
                );
                None
            }
        };
        while let Some(i) = next {
            next = self.record_at(line, i, &at);
        }
    }

    /// A `16` text not closed by `/` is being read.
    fn text_open(&self) -> bool {
        self.pending
            .as_ref()
            .is_some_and(|p| p.text.as_ref().is_some_and(|t| t.open))
    }

    /// The record whose code is at `line[i..]`; gives where a record joined after it on
    /// the same line starts.
    fn record_at(&mut self, line: &[u8], i: usize, at: &Phys<'_>) -> Option<usize> {
        let code = lex::known(&line[i..(i + 2).min(line.len())])?;
        if code == "88" {
            match self.pending.as_mut() {
                Some(p) => p.pieces += 1,
                None => {
                    if !self.skipping {
                        self.err(
                            FindingCode::RecordOrder,
                            at.at(i).pos("88"),
                            "an 88 after the record it continues",
                            "an 88 with no record before it",
                        );
                    }
                    self.count_records(1);
                    // Read into a record that is thrown away, to find where it ends.
                    self.pending = Some(self.logical("88", at.at(i)));
                    let next = self.scan_fields(line, i + 2, at);
                    self.spare = self.pending.take();
                    return next;
                }
            }
        } else {
            self.finish_pending();
            self.skipping = false;
            self.pending = Some(self.logical(code, at.at(i)));
        }
        self.scan_fields(line, i + 2, at)
    }

    /// The fields of the pending record from `line[j..]` (at its code's end).
    fn scan_fields(&mut self, line: &[u8], mut j: usize, at: &Phys<'_>) -> Option<usize> {
        match line.get(j) {
            Some(b',') => j += 1,
            Some(b'/') => return self.after_slash(line, j + 1, at),
            _ => return None,
        }
        loop {
            if self.pending.as_ref().is_some_and(|p| p.next_is_text()) {
                return self.scan_text(line, j, at);
            }
            let rest = &line[j..];
            let tok = match lex::plain_field(rest) {
                Ok((_, tok)) => tok,
                Err(_) => rest,
            };
            self.push_field(tok, at.at(j), at.str(j, j + tok.len()));
            let k = j + tok.len();
            match line.get(k) {
                Some(b',') => j = k + 1,
                Some(b'/') => return self.after_slash(line, k + 1, at),
                _ => return None,
            }
        }
    }

    /// After a record's `/`: blanks, then the end of the line or a record joined to it.
    fn after_slash(&mut self, line: &[u8], j: usize, at: &Phys<'_>) -> Option<usize> {
        let mut k = j;
        while k < line.len() && (line[k] == b' ' || line[k] == b'\t') {
            k += 1;
        }
        if k >= line.len() {
            return None;
        }
        if let Ok((_, code)) = lex::record_code(&line[k..])
            && lex::known(code).is_some()
        {
            return Some(k);
        }
        let tag = self.pending.as_ref().map_or("line", |p| p.code);
        self.err(
            FindingCode::TagSyntax,
            at.at(k).pos(tag),
            "the end of the line or a record code after '/'",
            format!("{:?}", show(&line[k..line.len().min(k + 24)])),
        );
        None
    }

    /// A `16` text from `line[j..]`; gives where a record joined after it starts.
    fn scan_text(&mut self, line: &[u8], j: usize, at: &Phys<'_>) -> Option<usize> {
        let (len, next) = lex::text_end(&line[j..]);
        let mut text = &line[j..j + len];
        let mut closed = next.is_some();
        if !closed {
            let trimmed = text.trim_ascii_end();
            if let Some(t) = trimmed.strip_suffix(b"/") {
                text = t;
                closed = true;
            }
        }
        let full = next.is_none() && line.len() == self.record_length();
        let at_j = at.at(j);
        let value = match at.str(j, j + text.len()) {
            Some(s) => Cow::Borrowed(s),
            None => {
                self.check_ascii(text, at_j, true);
                decode(text)
            }
        };
        if let Some(p) = self.pending.as_mut() {
            if !grow(p, value.len()) {
                return next.map(|o| j + o);
            }
            match p.text.as_mut() {
                Some(t) => {
                    if !t.last_full {
                        p.text_buf.push(' ');
                    }
                    p.text_buf.push_str(&value);
                    t.open = !closed;
                    t.last_full = full;
                }
                None => {
                    p.text_buf.clear();
                    p.text_buf.push_str(&value);
                    p.text = Some(Text {
                        open: !closed,
                        last_full: full,
                    })
                }
            }
        }
        self.size_check();
        next.map(|o| j + o)
    }

    /// A field `tok` at `at`; `text` is it as text when its line is ASCII.
    fn push_field(&mut self, tok: &[u8], at: At, text: Option<&str>) {
        let value = match text {
            Some(s) => Cow::Borrowed(s),
            None => {
                self.check_ascii(tok, at, false);
                decode(tok)
            }
        };
        if let Some(p) = self.pending.as_mut() {
            let piece = p.pieces - 1;
            if grow(p, value.len()) {
                let start = p.data.len();
                p.data.push_str(&value);
                let (lead, trail) = trim_bounds(&value);
                p.fields.push(Field {
                    start,
                    end: p.data.len(),
                    trim_start: start + lead,
                    trim_end: start + trail,
                    at,
                    piece,
                });
            }
        }
        self.size_check();
    }

    /// A record `code` at `at`, in the buffers of the last one finished.
    fn logical(&mut self, code: &'static str, at: At) -> Box<Logical> {
        match self.spare.take() {
            Some(mut l) => {
                l.reset(code, at);
                l
            }
            None => Box::new(Logical::new(code, at)),
        }
    }

    fn size_check(&mut self) {
        let Some(p) = self.pending.as_mut() else {
            return;
        };
        if p.too_big && p.bytes != usize::MAX {
            p.bytes = usize::MAX;
            let pos = p.at.pos(p.code);
            self.err(
                FindingCode::SizeLimit,
                pos,
                format!(
                    "a record and its 88s of at most {RECORD_BYTES_MAX} bytes and {RECORD_FIELDS_MAX} fields"
                ),
                "more (the rest is not read)",
            );
        }
    }

    /// ASCII as is; other bytes are an error in a field, a warning in a text.
    fn check_ascii(&mut self, b: &[u8], at: At, text: bool) {
        if b.is_ascii() {
            return;
        }
        if let Some(i) = b.iter().position(|&c| !c.is_ascii()) {
            let tag = self.pending.as_ref().map_or("line", |p| p.code);
            let pos = At {
                byte: at.byte + i as u64,
                line: at.line,
                column: at.column + i as u64,
            }
            .pos(tag);
            let found = format!("byte 0x{:02X}", b[i]);
            if text {
                self.warn(FindingCode::NonAsciiByte, pos, "ASCII text", found);
            } else {
                self.err(FindingCode::NonAsciiByte, pos, "ASCII", found);
            }
        }
    }

    fn record_length(&self) -> usize {
        match self.file.as_ref().map(|f| f.record_length) {
            Some(n) if n > 0 => n,
            _ => RECORD_LENGTH_DEFAULT,
        }
    }

    /// Counts `n` physical records in every open level (file, group, account).
    fn count_records(&mut self, n: u64) {
        if let Some(f) = self.file.as_mut() {
            f.records += n;
        }
        if let Some(g) = self.group.as_mut() {
            g.records += n;
        }
        if let Some(a) = self.account.as_mut() {
            a.records += n;
        }
    }

    // ---- logical records ----

    fn finish_pending(&mut self) {
        let Some(rec) = self.pending.take() else {
            return;
        };
        self.finish_record(&rec);
        self.spare = Some(rec);
    }

    fn finish_record(&mut self, rec: &Logical) {
        if self.place == Place::End {
            if !self.after_99_reported {
                self.after_99_reported = true;
                self.err(
                    FindingCode::RecordOrder,
                    rec.at.pos(rec.code),
                    "nothing after the 99 file trailer",
                    format!("a {} record", rec.code),
                );
            }
            return;
        }
        if self.place == Place::Start && rec.code != "01" {
            self.err(
                FindingCode::MissingTag,
                rec.at.pos(rec.code),
                "a 01 file header first",
                format!("a {} record", rec.code),
            );
            // Read on as if the header were there, to find what else is wrong.
            self.file = Some(FileHeader {
                at: rec.at,
                ..FileHeader::default()
            });
            self.place = Place::File;
        }
        match rec.code {
            "01" => self.file_header(rec),
            "02" => self.group_header(rec),
            "03" => self.account_header(rec),
            "16" => self.detail(rec),
            "49" => self.account_trailer(rec),
            "98" => self.group_trailer(rec),
            "99" => self.file_trailer(rec),
            _ => {}
        }
    }

    /// Non-empty fields past the `n` a record has.
    fn no_more_fields(&mut self, rec: &Logical, n: usize) {
        if let Some(i) = (n..rec.fields.len()).find(|&i| !rec.trimmed(i).is_empty()) {
            self.err(
                FindingCode::TagSyntax,
                rec.field_pos(i),
                format!("the end of the {} record ({n} fields)", rec.code),
                rec.field(i).to_string(),
            );
        }
    }

    fn required(&mut self, rec: &Logical, i: usize, what: &str) -> Option<String> {
        let v = rec.trimmed(i);
        if v.is_empty() {
            self.err(
                FindingCode::TagSyntax,
                rec.field_pos(i),
                what.to_string(),
                "blank",
            );
            None
        } else {
            Some(v.to_string())
        }
    }

    fn date(&mut self, rec: &Logical, i: usize, what: &str) -> Option<NaiveDate> {
        let v = rec.trimmed(i);
        let d = lex::yymmdd(v);
        if d.is_none() {
            self.err(
                FindingCode::DateFormat,
                rec.field_pos(i),
                format!("{what} (YYMMDD, a calendar date)"),
                v.to_string(),
            );
        }
        d
    }

    fn currency(&mut self, rec: &Logical, i: usize) -> Option<String> {
        let v = rec.trimmed(i);
        if v.is_empty() {
            return None;
        }
        if let Err(e) = crate::money::Currency::parse(v) {
            self.err(
                FindingCode::CurrencyCode,
                rec.field_pos(i),
                format!("an ISO 4217 currency code with minor units ({e})"),
                v.to_string(),
            );
        }
        Some(v.to_string())
    }

    /// A signed or unsigned amount field; `None` when blank (or wrong: the finding is
    /// pushed).
    fn amount(&mut self, rec: &Logical, i: usize, signed: bool, what: &str) -> Option<i64> {
        let v = rec.trimmed(i);
        if v.is_empty() {
            return None;
        }
        match lex::amount(v, signed) {
            Ok(a) => Some(a),
            Err(e) => {
                let (code, expected) = match e {
                    AmountError::Syntax if signed => (
                        FindingCode::AmountFormat,
                        format!("{what}: digits with an optional sign, no decimal point"),
                    ),
                    AmountError::Syntax => (
                        FindingCode::AmountFormat,
                        format!("{what}: digits, no sign and no decimal point"),
                    ),
                    AmountError::Overflow => (
                        FindingCode::AmountOverflow,
                        format!("{what}: at most 18 digits"),
                    ),
                };
                self.err(code, rec.field_pos(i), expected, v.to_string());
                None
            }
        }
    }

    /// A count field; `None` when blank (with `blank_ok`) or wrong (finding pushed).
    fn count(&mut self, rec: &Logical, i: usize, what: &str, blank_ok: bool) -> Option<u64> {
        let v = rec.trimmed(i);
        if v.is_empty() && blank_ok {
            return None;
        }
        let c = lex::count(v);
        if c.is_none() {
            self.err(
                FindingCode::TagSyntax,
                rec.field_pos(i),
                format!("{what} (digits)"),
                if v.is_empty() {
                    "blank".to_string()
                } else {
                    v.to_string()
                },
            );
        }
        c
    }

    fn file_header(&mut self, rec: &Logical) {
        if self.place != Place::Start {
            self.err(
                FindingCode::RecordOrder,
                rec.at.pos("01"),
                "one 01 file header, first in the file",
                "another 01",
            );
            self.count_records(u64::from(rec.pieces));
            return;
        }
        self.required(rec, 0, "a sender identification");
        self.required(rec, 1, "a receiver identification");
        self.date(rec, 2, "a file creation date");
        let t = rec.trimmed(3);
        if !lex::hhmm(t) {
            // The creation time is not used; NatWest writes `14:59:35`.
            self.warn(
                FindingCode::DateFormat,
                rec.field_pos(3),
                "a file creation time HHMM (0000-2400, 9999)",
                t.to_string(),
            );
        }
        let file_id = self
            .required(rec, 4, "a file identification number")
            .unwrap_or_default();
        let record_length = self
            .count(rec, 5, "a physical record length", true)
            .unwrap_or(0);
        self.count(rec, 6, "a block size", true);
        let version = rec.trimmed(7);
        if version != "2" {
            self.err(
                FindingCode::TagSyntax,
                rec.field_pos(7),
                "version number 2 (BAI2)",
                if version.is_empty() { "blank" } else { version }.to_string(),
            );
        }
        self.no_more_fields(rec, 8);
        self.file = Some(FileHeader {
            file_id,
            record_length: usize::try_from(record_length).unwrap_or(0),
            at: rec.at,
            records: u64::from(rec.pieces),
            groups: 0,
            totals: 0,
        });
        self.place = Place::File;
    }

    /// Closes what is open below the file level, saying which trailer is missing.
    fn close_open(&mut self, upto: Place, at: &Logical) {
        if self.place == Place::Account {
            self.err(
                FindingCode::MissingTag,
                at.at.pos(at.code),
                "a 49 account trailer before this record",
                format!("a {} record", at.code),
            );
            self.emit_account();
            self.place = Place::Group;
        }
        if upto == Place::File && self.place == Place::Group {
            self.err(
                FindingCode::MissingTag,
                at.at.pos(at.code),
                "a 98 group trailer before this record",
                format!("a {} record", at.code),
            );
            self.group = None;
            self.place = Place::File;
        }
    }

    fn group_header(&mut self, rec: &Logical) {
        self.close_open(Place::File, rec);
        self.required(rec, 1, "an originator identification");
        let originator = rec.trimmed(1);
        let status = rec.trimmed(2);
        match status {
            "1" | "3" => {}
            "2" | "4" => self.err(
                FindingCode::TagSyntax,
                rec.field_pos(2),
                "group status 1 (update) or 3 (correction): 2 (deletion) and 4 (test only) are not posted",
                status.to_string(),
            ),
            _ => self.err(
                FindingCode::TagSyntax,
                rec.field_pos(2),
                "group status 1, 2, 3 or 4",
                status.to_string(),
            ),
        }
        let as_of = self.date(rec, 3, "an as-of date");
        let time = rec.trimmed(4);
        if !time.is_empty() && !lex::hhmm(time) {
            self.err(
                FindingCode::DateFormat,
                rec.field_pos(4),
                "an as-of time HHMM (0000-2400, 9999) or blank",
                time.to_string(),
            );
        }
        let currency = self.currency(rec, 5);
        let modifier = rec.trimmed(6);
        let kind = match kind_of_modifier(modifier) {
            Some(k) => k,
            None => {
                self.err(
                    FindingCode::TagSyntax,
                    rec.field_pos(6),
                    "an as-of-date modifier 1, 2, 3, 4 or blank",
                    modifier.to_string(),
                );
                StatementKind::Final
            }
        };
        self.no_more_fields(rec, 7);
        self.group = Some(GroupHeader {
            originator: (!originator.is_empty()).then(|| originator.to_string()),
            currency,
            as_of,
            sequence: format!("{},{time},{modifier}", rec.trimmed(3)),
            kind,
            records: 0,
            accounts: 0,
            totals: 0,
        });
        self.count_records(u64::from(rec.pieces));
        self.place = Place::Group;
    }

    fn account_header(&mut self, rec: &Logical) {
        self.close_open(Place::Group, rec);
        if self.place != Place::Group {
            self.err(
                FindingCode::RecordOrder,
                rec.at.pos("03"),
                "a 03 inside a group (after a 02)",
                "a 03 outside any group",
            );
        }
        let account = self
            .required(rec, 0, "a customer account number")
            .unwrap_or_default();
        let own = self.currency(rec, 1);
        let group = self.group.as_ref();
        let currency = own
            .or_else(|| group.and_then(|g| g.currency.clone()))
            .unwrap_or_else(|| "USD".to_string());
        let kind = group.map_or(StatementKind::Final, |g| g.kind);
        let date = group.and_then(|g| g.as_of);
        let statement = Statement {
            format: FORMAT,
            kind,
            account,
            currency: Some(currency.clone()),
            servicer: group.and_then(|g| g.originator.clone()),
            id: self
                .file
                .as_ref()
                .map(|f| f.file_id.clone())
                .unwrap_or_default(),
            sequence: group.map(|g| g.sequence.clone()),
            date,
            from_date: None,
            to_date: None,
            copy: false,
            balances: Vec::new(),
            entries: Vec::with_capacity(self.entries_hint),
            position: rec.at.pos("03"),
        };
        let mut acct = Account {
            statement,
            records: 0,
            amounts: 0,
        };
        self.summaries(rec, &mut acct, &currency, date);
        if let Some(g) = self.group.as_mut() {
            g.accounts += 1;
        }
        self.account = Some(acct);
        self.count_records(u64::from(rec.pieces));
        self.place = Place::Account;
    }

    /// The `03` type-code groups: type code, amount, item count, funds type (+ its
    /// fields).
    fn summaries(
        &mut self,
        rec: &Logical,
        acct: &mut Account,
        currency: &str,
        date: Option<NaiveDate>,
    ) {
        let n = rec.fields.len();
        let mut i = 2;
        while i < n {
            let t = rec.trimmed(i);
            if t.is_empty() {
                // A defaulted group (`,,,,`), or the empty field a record ends on.
                let piece = rec.fields[i].piece;
                let mut k = i;
                while k < n
                    && k < i + 4
                    && rec.trimmed(k).is_empty()
                    && rec.fields[k].piece == piece
                {
                    k += 1;
                }
                if k == i + 4 || k == n || rec.fields[k].piece != piece {
                    i = k;
                    continue;
                }
                self.err(
                    FindingCode::TagSyntax,
                    rec.field_pos(i),
                    "a type code before the amount",
                    "blank",
                );
                return;
            }
            let Some(code) = lex::type_code(t) else {
                self.err(
                    FindingCode::TagSyntax,
                    rec.field_pos(i),
                    "a type code (3 digits)",
                    t.to_string(),
                );
                return;
            };
            if code == 0 {
                self.err(
                    FindingCode::TagSyntax,
                    rec.field_pos(i),
                    "a type code 001-999",
                    t.to_string(),
                );
            }
            let amount = self.amount(rec, i + 1, true, "an amount");
            if code >= 100 {
                self.count(rec, i + 2, "an item count", true);
            }
            let Some(used) = self.funds(rec, i + 3, true) else {
                return;
            };
            if let Some(a) = amount {
                acct.amounts += i128::from(a);
                if code < 100 {
                    acct.statement.balances.push(Balance {
                        kind: balance_kind(code),
                        code: t.to_string(),
                        amount_minor: a,
                        currency: currency.to_string(),
                        date,
                        position: rec.field_pos(i),
                    });
                }
            }
            i += 3 + used;
        }
    }

    /// A funds type at field `i` and its fields; gives the fields used (the funds type
    /// included), or `None` after a finding that leaves the rest unreadable.
    fn funds(&mut self, rec: &Logical, i: usize, signed: bool) -> Option<usize> {
        Some(self.funds_value_date(rec, i, signed)?.0)
    }

    /// [`Self::funds`], with the value date of a funds type `V`.
    fn funds_value_date(
        &mut self,
        rec: &Logical,
        i: usize,
        signed: bool,
    ) -> Option<(usize, Option<NaiveDate>)> {
        let f = rec.trimmed(i);
        match f {
            "" | "0" | "1" | "2" | "Z" => Some((1, None)),
            "S" => {
                for k in 1..=3 {
                    self.amount(rec, i + k, signed, "an availability amount");
                }
                Some((4, None))
            }
            "V" => {
                let d = rec.trimmed(i + 1);
                let date = if d.is_empty() {
                    None
                } else {
                    self.date(rec, i + 1, "a value date")
                };
                let t = rec.trimmed(i + 2);
                if !t.is_empty() && !lex::hhmm(t) {
                    self.err(
                        FindingCode::DateFormat,
                        rec.field_pos(i + 2),
                        "a value time HHMM (0000-2400, 9999) or blank",
                        t.to_string(),
                    );
                }
                Some((3, date))
            }
            "D" => {
                let n = self.count(rec, i + 1, "a number of distributions", false)?;
                if n > DISTRIBUTIONS_MAX {
                    self.err(
                        FindingCode::TagSyntax,
                        rec.field_pos(i + 1),
                        format!("at most {DISTRIBUTIONS_MAX} distributions"),
                        n.to_string(),
                    );
                    return None;
                }
                let n = n as usize;
                for k in 0..n {
                    self.count(rec, i + 2 + 2 * k, "a distribution's days", false);
                    self.amount(rec, i + 3 + 2 * k, signed, "a distribution amount");
                }
                Some((2 + 2 * n, None))
            }
            _ => {
                self.err(
                    FindingCode::TagSyntax,
                    rec.field_pos(i),
                    "a funds type 0, 1, 2, S, V, D, Z or blank",
                    f.to_string(),
                );
                None
            }
        }
    }

    fn detail(&mut self, rec: &Logical) {
        if self.place != Place::Account {
            self.err(
                FindingCode::RecordOrder,
                rec.at.pos("16"),
                "a 16 inside an account (after its 03)",
                "a 16 outside any account",
            );
            self.count_records(u64::from(rec.pieces));
            return;
        }
        self.count_records(u64::from(rec.pieces));
        let t = rec.trimmed(0);
        let credit = match lex::type_code(t) {
            Some(100..=399) => Some(true),
            Some(400..=699) => Some(false),
            _ => {
                self.err(
                    FindingCode::TagSyntax,
                    rec.field_pos(0),
                    "a detail type code 100-399 (credit) or 400-699 (debit)",
                    t.to_string(),
                );
                None
            }
        };
        let amount = self.amount(rec, 1, false, "a detail amount");
        if rec.trimmed(1).is_empty() {
            self.err(
                FindingCode::AmountFormat,
                rec.field_pos(1),
                "a detail amount",
                "blank",
            );
        }
        let Some((used, value_date)) = self.funds_value_date(rec, 2, false) else {
            return;
        };
        let refs = 2 + used;
        let opt = |s: &str| (!s.is_empty()).then(|| s.to_string());
        let bank_ref = opt(rec.trimmed(refs));
        let customer_ref = opt(rec.trimmed(refs + 1));
        let remittance = rec.text.as_ref().and_then(|_| {
            let s = collapse_whitespace(&rec.text_buf);
            (!s.is_empty()).then_some(s)
        });
        let (Some(credit), Some(amount), Some(acct)) = (credit, amount, self.account.as_mut())
        else {
            return;
        };
        acct.amounts += i128::from(amount);
        let s = &acct.statement;
        let status = match s.kind {
            StatementKind::Intraday => EntryStatus::Pending,
            _ => EntryStatus::Booked,
        };
        self.entries += 1;
        let entry = Entry {
            entry_no: self.entries,
            amount_minor: amount.unsigned_abs(),
            currency: s.currency.clone().unwrap_or_default(),
            credit,
            reversal: false,
            status,
            booking_date: s.date,
            value_date,
            bank_ref,
            customer_ref,
            end_to_end_id: None,
            bank_tx_code: Some(t.to_string()),
            remittance,
            batch_ref: None,
            details: Vec::new(),
            position: rec.at.pos("16"),
        };
        acct.statement.entries.push(entry);
    }

    /// `found` against `want`, a control total finding when they differ.
    fn check_total(&mut self, rec: &Logical, i: usize, want: i128, what: &str) -> Option<i64> {
        let v = rec.trimmed(i);
        if v.is_empty() {
            self.warn(
                FindingCode::TagSyntax,
                rec.field_pos(i),
                format!("{what} (not checked when blank)"),
                "blank",
            );
            return None;
        }
        let got = self.amount(rec, i, true, what)?;
        if i128::from(got) != want {
            self.control(
                FindingCode::ControlTotalMismatch,
                rec.field_pos(i),
                format!("{want} ({what})"),
                v,
            );
        }
        Some(got)
    }

    fn check_count(&mut self, rec: &Logical, i: usize, want: u64, what: &str) {
        let v = rec.trimmed(i).to_string();
        if let Some(got) = self.count(rec, i, what, false)
            && got != want
        {
            self.control(
                FindingCode::ControlCountMismatch,
                rec.field_pos(i),
                format!("{want} ({what})"),
                &v,
            );
        }
    }

    fn account_trailer(&mut self, rec: &Logical) {
        if self.place != Place::Account {
            self.err(
                FindingCode::RecordOrder,
                rec.at.pos("49"),
                "a 49 closing an account (after its 03)",
                "a 49 outside any account",
            );
            self.count_records(u64::from(rec.pieces));
            return;
        }
        self.count_records(u64::from(rec.pieces));
        let (amounts, records) = self
            .account
            .as_ref()
            .map_or((0, 0), |a| (a.amounts, a.records));
        let total = self.check_total(
            rec,
            0,
            amounts,
            "the sum of the amounts of the account's 03 and 16 records",
        );
        self.check_count(
            rec,
            1,
            records,
            "records of the account, 03 to 49, 88s included",
        );
        self.no_more_fields(rec, 2);
        if let Some(g) = self.group.as_mut() {
            g.totals += total.map_or(amounts, i128::from);
        }
        self.emit_account();
        self.place = Place::Group;
    }

    fn group_trailer(&mut self, rec: &Logical) {
        self.close_open(Place::Group, rec);
        if self.place != Place::Group {
            self.err(
                FindingCode::RecordOrder,
                rec.at.pos("98"),
                "a 98 closing a group (after its 02)",
                "a 98 outside any group",
            );
            self.count_records(u64::from(rec.pieces));
            return;
        }
        self.count_records(u64::from(rec.pieces));
        let (totals, accounts, records) = self
            .group
            .as_ref()
            .map_or((0, 0, 0), |g| (g.totals, g.accounts, g.records));
        let total = self.check_total(rec, 0, totals, "the sum of the group's 49 control totals");
        self.check_count(rec, 1, accounts, "accounts in the group");
        self.check_count(
            rec,
            2,
            records,
            "records of the group, 02 to 98, 88s included",
        );
        self.no_more_fields(rec, 3);
        if let Some(f) = self.file.as_mut() {
            f.totals += total.map_or(totals, i128::from);
            f.groups += 1;
        }
        self.group = None;
        self.place = Place::File;
    }

    fn file_trailer(&mut self, rec: &Logical) {
        self.close_open(Place::File, rec);
        self.count_records(u64::from(rec.pieces));
        let (totals, groups, records) = self
            .file
            .as_ref()
            .map_or((0, 0, 0), |f| (f.totals, f.groups, f.records));
        self.check_total(rec, 0, totals, "the sum of the file's 98 control totals");
        self.check_count(rec, 1, groups, "groups in the file");
        self.check_count(
            rec,
            2,
            records,
            "records of the file, 01 to 99, 88s included",
        );
        self.no_more_fields(rec, 3);
        self.place = Place::End;
    }

    // ---- statements ----

    fn emit_account(&mut self) {
        let Some(acct) = self.account.take() else {
            return;
        };
        let mut s = acct.statement;
        fit_entries(&mut s.entries, &mut self.entries_hint);
        let f = match s.kind {
            StatementKind::Intraday if !s.entries.is_empty() => {
                // The shared check counts booked entries; a same-day report's entries are
                // pending, and its 010/015 move by them.
                let mut all = s.clone();
                for e in &mut all.entries {
                    e.status = EntryStatus::Booked;
                }
                check_balance(&all)
            }
            _ => check_balance(&s),
        };
        if let Some(f) = f {
            self.sink.push(f);
        }
        self.chain_check(&s);
        self.statements += 1;
        (self.on_statement)(s);
    }

    fn chain_check(&mut self, s: &Statement) {
        let ccy = s.currency.clone().unwrap_or_default();
        let key = (s.account.clone(), ccy);
        let open = s.balance(BalanceKind::OpeningBooked);
        let close = s
            .balance(BalanceKind::ClosingBooked)
            .map(|b| (b.amount_minor, b.position.line()));
        if let (Some((Some(prev_date), Some((prev_close, prev_line)))), Some(open), Some(date)) =
            (self.chain.get(&key), open, s.date)
            && *prev_date < date
            && *prev_close != open.amount_minor
        {
            let f = Finding::error(
                FindingCode::BalanceChain,
                open.position.clone(),
                None,
                format!(
                    "{} {prev_close} (the 015 of account {} as of {prev_date}, line {prev_line})",
                    open.code, s.account
                ),
                open.amount_minor.to_string(),
            );
            self.sink.push(f);
        }
        if self.chain.len() < CHAINED_ACCOUNTS_MAX || self.chain.contains_key(&key) {
            self.chain.insert(key, (s.date, close));
        }
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

/// Where [`str::trim`] of `v` starts and ends in it.
fn trim_bounds(v: &str) -> (usize, usize) {
    let b = v.as_bytes();
    // An ASCII character at either end that is not blank (`char::is_whitespace`: tab to
    // carriage return, space): nothing to trim, as in nearly every field.
    let solid = |c: u8| c.is_ascii() && c != b' ' && c.wrapping_sub(9) >= 5;
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) if solid(f) && solid(l) => (0, b.len()),
        _ => {
            let lead = v.len() - v.trim_start().len();
            (lead, lead + v.trim().len())
        }
    }
}

/// Grows a record's size by `n` bytes and a field; false past the limits.
fn grow(p: &mut Logical, n: usize) -> bool {
    if p.too_big {
        return false;
    }
    p.bytes = p.bytes.saturating_add(n);
    if p.bytes > RECORD_BYTES_MAX || p.fields.len() >= RECORD_FIELDS_MAX {
        p.too_big = true;
        return false;
    }
    true
}

fn balance_kind(code: u16) -> BalanceKind {
    match code {
        10 => BalanceKind::OpeningBooked,
        15 => BalanceKind::ClosingBooked,
        40 => BalanceKind::OpeningAvailable,
        45 => BalanceKind::ClosingAvailable,
        _ => BalanceKind::Other,
    }
}
