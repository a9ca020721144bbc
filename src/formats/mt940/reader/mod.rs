//! The MT940/MT942 reader: lines from a `BufRead`, fields from lines, pages from fields,
//! statements from pages, and the checks between them. One file per concern:
//! - this file: the reader's state (fields, pages, envelope, accounts), the pass over the
//!   input, the findings;
//! - [`tags`]: the known tags, their order and their labels;
//! - [`lines`]: physical lines, the SWIFT envelope, tag and continuation lines into fields;
//! - [`values`]: a complete field's value into its page (references, balances, entries,
//!   details, control totals);
//! - [`pages`]: a message's page checked and joined to its statement (pages, balance and
//!   statement-number chains, control totals), statements emitted.

mod lines;
mod pages;
mod tags;
mod values;

use super::{LINE_BYTES_MAX, StatementRead};
use crate::findings::{Finding, FindingCode, FindingSink, TextPosition};
use crate::formats::statement::{Balance, Entry, Statement};
use chrono::NaiveDate;
use lines::next_line;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, BufRead};

/// One physical line of a field, its text after the tag (or the whole continuation line):
/// `data[start..end]` of the field.
#[derive(Debug)]
struct FieldLine {
    start: usize,
    end: usize,
    line: u64,
    /// Byte offset of `text[0]` in the file.
    offset: u64,
    /// 1-based column of `text[0]` on its line.
    column: u64,
    /// A tag-like line wrapped inside `:86:` (`:26:37`): the bank cut the text before it
    /// mid-word (a timestamp), so it joins the line before without a blank.
    glued: bool,
}

/// A field being gathered; its buffers are reused from field to field.
#[derive(Debug)]
struct Field {
    /// One of [`tags::KNOWN_TAGS`], its label and its bit in [`Page::seen`].
    tag: &'static str,
    label: &'static str,
    bit: u32,
    /// Where the tag itself starts.
    at: TextPosition,
    /// The text of its lines, one after another.
    data: Vec<u8>,
    lines: Vec<FieldLine>,
    dropped_lines: bool,
}

impl Field {
    fn pos(&self, line: usize, at: usize) -> TextPosition {
        match self.lines.get(line) {
            Some(l) => TextPosition {
                byte_offset: l.offset + at as u64,
                line: l.line,
                column: l.column + at as u64,
                tag: Some(Cow::Borrowed(self.label())),
            },
            None => self.at.clone(),
        }
    }
    fn label(&self) -> &'static str {
        self.label
    }
    fn text(&self, l: &FieldLine) -> &[u8] {
        self.data.get(l.start..l.end).unwrap_or_default()
    }
    fn line_text(&self, i: usize) -> Option<&[u8]> {
        self.lines.get(i).map(|l| self.text(l))
    }
    fn first(&self) -> &[u8] {
        self.line_text(0).unwrap_or_default()
    }
    fn push_line(&mut self, text: &[u8], line: u64, offset: u64, column: u64) {
        let start = self.data.len();
        self.data.extend_from_slice(text);
        self.lines.push(FieldLine {
            start,
            end: self.data.len(),
            line,
            offset,
            column,
            glued: false,
        });
    }
}

/// A control total `:90D:`/`:90C:`.
#[derive(Debug)]
struct Control {
    debit: bool,
    count: u32,
    amount_minor: Option<u64>,
    currency: String,
    position: TextPosition,
}

/// One message: one page of a statement.
#[derive(Debug)]
struct Page {
    /// From block 2 (`940`/`942`), when the message is wrapped.
    mt: Option<u16>,
    servicer: Option<String>,
    position: TextPosition,
    id: String,
    account: Option<String>,
    sequence: Option<String>,
    number: Option<(u32, Option<u32>)>,
    number_at: Option<TextPosition>,
    opening: Option<Balance>,
    closing: Option<Balance>,
    /// `60F`/`60M`, `62F`/`62M` as written, even when their value did not parse.
    opening_tag: Option<&'static str>,
    closing_tag: Option<&'static str>,
    others: Vec<Balance>,
    /// The statement's currency: the opening balance's (MT942: the floor limit's).
    currency: Option<String>,
    /// Its exponent, when the currency is one to post.
    exponent: Option<u32>,
    currency_bad: bool,
    /// The currency written after the account in `:25:` (a dialect).
    account_currency: Option<String>,
    /// An entry whose amount could not be read (its currency left empty): no sum over the
    /// entries can be checked.
    amount_failed: bool,
    /// The one finding for `:61:` before any field giving the currency was made.
    currency_missing_told: bool,
    entries: Vec<Entry>,
    /// An entry whose `:86:` may follow.
    open_entry: bool,
    /// The tags seen, a bit each ([`tags::tag_bit`]).
    seen: u32,
    rank: u8,
    mt942_fields: bool,
    date_time: Option<NaiveDate>,
    controls: Vec<Control>,
    dropped_entries: bool,
}

impl Page {
    fn format(&self) -> &'static str {
        match self.mt {
            Some(942) => "mt942",
            Some(_) => "mt940",
            None if self.mt942_fields => "mt942",
            None => "mt940",
        }
    }
}

/// Per account, across the file: the last closing balance and statement number.
#[derive(Debug, Default)]
struct AccountState {
    closing: Option<(i64, String, String)>,
    number: Option<u32>,
}

/// The SWIFT envelope of the message being read.
#[derive(Debug, Default)]
struct Envelope {
    /// A `{1:` was seen and `{4:` not yet.
    in_header: bool,
    /// Inside `{4:` … `-}`.
    in_block4: bool,
    mt: Option<u16>,
    servicer: Option<String>,
}

struct Reader<'a> {
    sink: FindingSink,
    on_statement: &'a mut dyn FnMut(Statement),
    statements: u64,
    entry_no: u64,
    /// Boxed, like the spare: moved for every field.
    field: Option<Box<Field>>,
    /// The last field read, its buffers kept for the next.
    spare_field: Option<Box<Field>>,
    /// Entries of the last statement: the room reserved for the next.
    entries_hint: usize,
    /// Scratch: a `:86:`'s lines joined, then collapsed.
    joined: String,
    text: String,
    /// Boxed: it is taken out and put back for every field.
    page: Option<Box<Page>>,
    /// A statement whose last page closed with `:62M:`, waiting for its next page.
    pending: Option<(Statement, u32, Option<u32>, TextPosition)>,
    envelope: Envelope,
    accounts: HashMap<String, AccountState>,
    /// Inside a known tag met outside any message: its continuation lines are skipped.
    skipping: bool,
    first_format: Option<&'static str>,
}

/// What [`super::read`] does.
pub(super) fn read<R: BufRead>(
    mut input: R,
    on_statement: &mut dyn FnMut(Statement),
) -> io::Result<StatementRead> {
    let mut r = Reader::new(on_statement);
    let mut buf = Vec::with_capacity(256);
    let (mut line_no, mut offset) = (0u64, 0u64);
    loop {
        // The whole lines the input holds, read where they are; a line the input's
        // buffer cuts (or a long one) is gathered into `buf` by `next_line`.
        let avail = match input.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let used = r.whole_lines(avail, &mut line_no, &mut offset);
        if used > 0 {
            input.consume(used);
            continue;
        }
        let start = offset;
        let (n, too_long) = next_line(&mut input, &mut buf)?;
        if n == 0 {
            break;
        }
        offset += n as u64;
        line_no += 1;
        r.physical_line(&buf, line_no, start, too_long);
    }
    r.finish(line_no.max(1), offset);
    let format = r.first_format.unwrap_or("mt940");
    Ok(StatementRead {
        format,
        statements: r.statements,
        entries: r.entry_no,
        findings: r.sink.finish(TextPosition {
            byte_offset: offset,
            line: line_no.max(1),
            column: 1,
            tag: None,
        }),
    })
}

impl<'a> Reader<'a> {
    fn new(on_statement: &'a mut dyn FnMut(Statement)) -> Self {
        Reader {
            sink: FindingSink::new(),
            on_statement,
            statements: 0,
            entry_no: 0,
            field: None,
            spare_field: None,
            joined: String::new(),
            text: String::new(),
            entries_hint: 0,
            page: None,
            pending: None,
            envelope: Envelope::default(),
            accounts: HashMap::new(),
            skipping: false,
            first_format: None,
        }
    }

    /// The lines `avail` holds whole (each at most [`LINE_BYTES_MAX`]), read in place;
    /// gives the bytes they took (0: the first line is cut or long, for `next_line`).
    fn whole_lines(&mut self, avail: &[u8], line_no: &mut u64, offset: &mut u64) -> usize {
        let mut used = 0;
        for p in memchr::memchr_iter(b'\n', avail) {
            if p - used > LINE_BYTES_MAX {
                break;
            }
            let mut l = &avail[used..p];
            if let Some(t) = l.strip_suffix(b"\r") {
                l = t;
            }
            *line_no += 1;
            self.physical_line(l, *line_no, *offset, false);
            *offset += (p + 1 - used) as u64;
            used = p + 1;
        }
        used
    }
}

impl Reader<'_> {
    fn at(line: u64, offset: u64, column: u64, tag: Option<&'static str>) -> TextPosition {
        Self::at_tagged(line, offset, column, tag.map(Cow::Borrowed))
    }

    fn at_tagged(
        line: u64,
        offset: u64,
        column: u64,
        tag: Option<Cow<'static, str>>,
    ) -> TextPosition {
        TextPosition {
            byte_offset: offset + column - 1,
            line,
            column,
            tag,
        }
    }

    fn push(&mut self, f: Finding) {
        self.sink.push(f);
    }

    fn error(
        &mut self,
        code: FindingCode,
        at: TextPosition,
        exp: impl Into<String>,
        found: impl Into<String>,
    ) {
        self.sink.push(Finding::error(code, at, None, exp, found));
    }

    fn warning(
        &mut self,
        code: FindingCode,
        at: TextPosition,
        exp: impl Into<String>,
        found: impl Into<String>,
    ) {
        self.sink.push(Finding::warning(code, at, None, exp, found));
    }

    fn finish(&mut self, line: u64, offset: u64) {
        self.end_message();
        if let Some((st, number, _, at)) = self.pending.take() {
            self.warning(
                FindingCode::MissingTag,
                at,
                format!(
                    "the next page (:60M:) of statement {number} of account {}",
                    st.account
                ),
                "end of file",
            );
            self.emit(st);
        }
        if self.statements == 0 {
            let at = TextPosition {
                byte_offset: offset,
                line,
                column: 1,
                tag: None,
            };
            if offset == 0 {
                self.error(FindingCode::EmptyFile, at, "an MT940/MT942 file", "0 bytes");
            } else {
                self.error(
                    FindingCode::NoStatements,
                    at,
                    "at least one message (:20: … :62F:)",
                    "none",
                );
            }
        }
    }
}
