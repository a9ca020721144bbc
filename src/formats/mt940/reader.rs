//! The MT940/MT942 reader: lines from a `BufRead`, fields from lines, pages from fields,
//! statements from pages, and the checks between them.

use super::fields::{self, Bad};
use super::{
    ENTRIES_PER_STATEMENT_MAX, FIELD_LINES_MAX, LINE_BYTES_MAX, StatementRead, decode, decode_cow,
    remittance_text_into,
};
use crate::findings::{Finding, FindingCode, FindingSink, Position, TextPosition, show};
use crate::formats::statement::{
    Balance, BalanceKind, Entry, EntryStatus, Statement, StatementKind, check_balance,
    collapse_whitespace, collapse_whitespace_into, fit_entries,
};
use crate::money::{Currency, CurrencyError};
use chrono::NaiveDate;
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
}

/// A field being gathered; its buffers are reused from field to field.
#[derive(Debug)]
struct Field {
    /// One of [`KNOWN_TAGS`], its label and its bit in [`Page::seen`].
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
        });
    }
}

/// Tags this reader knows (MT940 and MT942, and the old `:28:`), with their labels.
const KNOWN_TAGS: &[(&str, &str)] = &[
    ("20", ":20:"),
    ("21", ":21:"),
    ("25", ":25:"),
    ("25P", ":25P:"),
    ("28", ":28:"),
    ("28C", ":28C:"),
    ("34F", ":34F:"),
    ("13D", ":13D:"),
    ("60F", ":60F:"),
    ("60M", ":60M:"),
    ("61", ":61:"),
    ("86", ":86:"),
    ("62F", ":62F:"),
    ("62M", ":62M:"),
    ("64", ":64:"),
    ("65", ":65:"),
    ("90D", ":90D:"),
    ("90C", ":90C:"),
];

/// The known tag `tag`, as a `'static` string, and its index in [`KNOWN_TAGS`].
fn known_tag(tag: &str) -> Option<(usize, &'static str)> {
    known_tag_bytes(tag.as_bytes())
}

/// [`known_tag`] of the tag's bytes.
fn known_tag_bytes(tag: &[u8]) -> Option<(usize, &'static str)> {
    let i = match tag {
        b"20" => 0,
        b"21" => 1,
        b"25" => 2,
        b"25P" => 3,
        b"28" => 4,
        b"28C" => 5,
        b"34F" => 6,
        b"13D" => 7,
        b"60F" => 8,
        b"60M" => 9,
        b"61" => 10,
        b"86" => 11,
        b"62F" => 12,
        b"62M" => 13,
        b"64" => 14,
        b"65" => 15,
        b"90D" => 16,
        b"90C" => 17,
        _ => return None,
    };
    KNOWN_TAGS.get(i).map(|(t, _)| (i, *t))
}

/// `:TAG:` of a known tag.
fn label(tag: &str) -> &'static str {
    known_tag(tag)
        .and_then(|(i, _)| KNOWN_TAGS.get(i))
        .map_or("", |(_, l)| l)
}

/// The bit of a known tag in [`Page::seen`].
fn tag_bit(tag: &str) -> u32 {
    known_tag(tag).map_or(0, |(i, _)| 1 << i)
}

/// Place of a tag in the message; a tag may not come after one of a higher rank.
fn rank(tag: &str) -> Option<u8> {
    Some(match tag {
        "20" => 0,
        "21" => 1,
        "25" | "25P" => 2,
        "28" | "28C" => 3,
        "34F" => 4,
        "13D" => 5,
        "60F" | "60M" => 6,
        "61" => 7,
        "62F" | "62M" | "90D" | "90C" => 8,
        "64" => 9,
        "65" => 10,
        _ => return None,
    })
}

/// Tags a message holds at most once.
fn once(tag: &str) -> bool {
    matches!(
        tag,
        "21" | "25"
            | "25P"
            | "28"
            | "28C"
            | "13D"
            | "60F"
            | "60M"
            | "62F"
            | "62M"
            | "64"
            | "90D"
            | "90C"
    )
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
    entries: Vec<Entry>,
    /// An entry whose `:86:` may follow.
    open_entry: bool,
    /// The tags seen, a bit each ([`tag_bit`]).
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
    let mut r = Reader {
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
    };
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
        let mut used = 0;
        for p in memchr::memchr_iter(b'\n', avail) {
            if p - used > LINE_BYTES_MAX {
                break;
            }
            let mut l = &avail[used..p];
            if let Some(t) = l.strip_suffix(b"\r") {
                l = t;
            }
            line_no += 1;
            r.physical_line(l, line_no, offset, false);
            offset += (p + 1 - used) as u64;
            used = p + 1;
        }
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

/// The next line into `buf` without its end (LF or CRLF), at most [`LINE_BYTES_MAX`]
/// bytes kept; gives the bytes consumed (0 at the end) and whether the line was longer.
fn next_line<R: BufRead>(input: &mut R, buf: &mut Vec<u8>) -> io::Result<(usize, bool)> {
    buf.clear();
    let mut consumed = 0;
    let mut too_long = false;
    loop {
        let avail = match input.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            break;
        }
        let (n, done) = match memchr::memchr(b'\n', avail) {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        let room = (LINE_BYTES_MAX + 2).saturating_sub(buf.len());
        buf.extend_from_slice(&avail[..n.min(room)]);
        too_long |= n > room;
        input.consume(n);
        consumed += n;
        if done {
            break;
        }
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    if buf.len() > LINE_BYTES_MAX {
        buf.truncate(LINE_BYTES_MAX);
        too_long = true;
    }
    Ok((consumed, too_long))
}

/// A tag line `:TAG:`: the tag (2 to 4 digits or capitals) and where its value starts.
fn tag_of(text: &[u8]) -> Option<(&[u8], usize)> {
    if text.first() != Some(&b':') {
        return None;
    }
    let close = text[1..].iter().position(|&c| c == b':')? + 1;
    let t = &text[1..close];
    if !(2..=4).contains(&t.len())
        || !t
            .iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
    {
        return None;
    }
    Some((t, close + 1))
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

    fn physical_line(&mut self, raw: &[u8], line: u64, offset: u64, too_long: bool) {
        let mut text = raw;
        let mut col: u64 = 1;
        if line == 1 && text.starts_with(b"\xEF\xBB\xBF") {
            self.warning(
                FindingCode::ByteOrderMark,
                Self::at(line, offset, 1, None),
                "no byte-order mark (skipped)",
                "EF BB BF",
            );
            text = &text[3..];
            col += 3;
        }
        // The FIN transmission frame: SOH before a message, ETX after it.
        while let Some(rest) = text.strip_prefix(b"\x01") {
            text = rest;
            col += 1;
        }
        while let Some(rest) = text.strip_suffix(b"\x03") {
            text = rest;
        }
        if too_long {
            self.error(
                FindingCode::SizeLimit,
                Self::at(line, offset, LINE_BYTES_MAX as u64 + 1, None),
                format!("a line of at most {LINE_BYTES_MAX} bytes (the rest is skipped)"),
                "a longer line",
            );
        }
        // Below space (but the tab) or from DEL up: or-ed over the whole line without a
        // branch (vectorised), searched only when one is there.
        let outside = |c: u8| u8::from(c.wrapping_sub(0x20) >= 0x5F) & u8::from(c != b'\t');
        if text.iter().fold(0u8, |any, &c| any | outside(c)) != 0
            && let Some(i) = text.iter().position(|&c| outside(c) != 0)
        {
            self.warning(
                FindingCode::NonAsciiByte,
                Self::at(line, offset, col + i as u64, None),
                "SWIFT characters (printable ASCII); text is read as UTF-8 when valid, else Latin-1",
                format!("byte 0x{:02X}", text[i]),
            );
        }
        self.logical_line(text, line, offset, col);
    }

    fn logical_line(&mut self, text: &[u8], line: u64, offset: u64, col: u64) {
        if text.first() == Some(&b'{') && !self.envelope.in_block4 {
            return self.header(text, line, offset, col);
        }
        if text.starts_with(b"-}") || text.trim_ascii_end() == b"-" {
            self.end_message();
            self.envelope.in_block4 = false;
            return;
        }
        if text.first() == Some(&b'{') {
            // A new envelope while block 4 is open: the message ended without `-}`.
            self.end_message();
            self.envelope.in_block4 = false;
            return self.header(text, line, offset, col);
        }
        if text.is_empty() {
            return;
        }
        match tag_of(text) {
            Some((tag, value)) => {
                self.tag_line(tag, &text[value..], line, offset, col, col + value as u64)
            }
            None => self.continuation(text, line, offset, col),
        }
    }

    /// `{1:…}{2:…}{3:{…}}{4:`: the envelope's basic, application and user headers.
    fn header(&mut self, text: &[u8], line: u64, offset: u64, col: u64) {
        let mut i = 0;
        while i < text.len() {
            if text[i] != b'{' {
                break;
            }
            let Some(colon) = text[i..].iter().position(|&c| c == b':') else {
                break;
            };
            let id = &text[i + 1..i + colon];
            let body_start = i + colon + 1;
            if id == b"4" {
                self.end_message();
                self.envelope.in_header = false;
                self.envelope.in_block4 = true;
                let rest = &text[body_start..];
                if !rest.is_empty() {
                    self.logical_line(rest, line, offset, col + body_start as u64);
                }
                return;
            }
            // The block's end, nested blocks (3, 5) included.
            let mut depth = 1;
            let mut j = body_start;
            while j < text.len() && depth > 0 {
                match text[j] {
                    b'{' => depth += 1,
                    b'}' => depth -= 1,
                    _ => {}
                }
                j += 1;
            }
            let body = &text[body_start..j.saturating_sub(1).max(body_start)];
            match id {
                b"1" => {
                    self.end_message();
                    self.envelope = Envelope {
                        in_header: true,
                        ..Envelope::default()
                    };
                    // F01 + LT address (BIC8, terminal, branch): the sender of an input.
                    if body.len() >= 15 {
                        self.envelope.servicer = Some(bic_of_lt(&body[3..15]));
                    }
                }
                b"2" => self.block2(body, line, offset, col + body_start as u64),
                _ => {}
            }
            i = j;
        }
    }

    /// `{2:O940…}` (output: the MIR names the sender) or `{2:I940…}` (input: the
    /// receiver; the sender is block 1's).
    fn block2(&mut self, body: &[u8], line: u64, offset: u64, col: u64) {
        let mt = body.get(1..4).filter(|d| d.iter().all(u8::is_ascii_digit));
        let Some(mt) = mt else {
            return self.error(
                FindingCode::TagSyntax,
                Self::at(line, offset, col, Some("{2:")),
                "application header I or O and a message type (940, 942)",
                show(body),
            );
        };
        let n = (mt[0] - b'0') as u16 * 100 + (mt[1] - b'0') as u16 * 10 + (mt[2] - b'0') as u16;
        if n != 940 && n != 942 {
            self.error(
                FindingCode::UnsupportedMessage,
                Self::at(line, offset, col + 1, Some("{2:")),
                "MT940 or MT942",
                format!("MT{n}"),
            );
        }
        self.envelope.mt = Some(n);
        if body.first() == Some(&b'O') && body.len() >= 26 {
            self.envelope.servicer = Some(bic_of_lt(&body[14..26]));
        }
    }

    fn tag_line(
        &mut self,
        tag: &[u8],
        value: &[u8],
        line: u64,
        offset: u64,
        tag_col: u64,
        col: u64,
    ) {
        let known = known_tag_bytes(tag);
        // Digits and capitals (`tag_of`): as text, it is ASCII.
        let tag_text = || String::from_utf8_lossy(tag);
        if tag == b"20" {
            self.end_message();
            self.start_page(line, offset, tag_col);
        } else if self.page.is_none() {
            // Outside a message: bank headers and trailers (`:940:`, free text) are
            // skipped; a known tag belongs to no statement.
            self.skipping = known.is_some();
            if let Some((_, t)) = known {
                self.error(
                    FindingCode::RecordOrder,
                    Self::at(line, offset, tag_col, Some(label(t))),
                    "a message starting with :20:",
                    format!(":{t}: outside any message"),
                );
            }
            return;
        }
        self.end_field();
        let Some((index, tag)) = known else {
            let label = format!(":{}:", tag_text());
            let at = Self::at_tagged(line, offset, tag_col, Some(label.clone().into()));
            self.warning(
                FindingCode::UnknownTag,
                at,
                "an MT940/MT942 tag (skipped with its lines)",
                label,
            );
            self.skipping = true;
            return;
        };
        let label = KNOWN_TAGS.get(index).map_or("", |(_, l)| l);
        let at = Self::at(line, offset, tag_col, Some(label));
        self.skipping = false;
        let mut f = match self.spare_field.take() {
            Some(mut f) => {
                f.tag = tag;
                f.label = label;
                f.bit = 1 << index;
                f.at = at;
                f.data.clear();
                f.lines.clear();
                f.dropped_lines = false;
                f
            }
            None => Box::new(Field {
                tag,
                label,
                bit: 1 << index,
                at,
                data: Vec::new(),
                lines: Vec::new(),
                dropped_lines: false,
            }),
        };
        f.push_line(value, line, offset + col - 1, col);
        self.field = Some(f);
    }

    fn continuation(&mut self, text: &[u8], line: u64, offset: u64, col: u64) {
        if self.skipping || self.page.is_none() {
            return;
        }
        match self.field.as_mut() {
            Some(f) if f.lines.len() < FIELD_LINES_MAX => {
                f.push_line(text, line, offset + col - 1, col)
            }
            Some(f) => {
                if !f.dropped_lines {
                    f.dropped_lines = true;
                    let at = Self::at(line, offset, col, Some(f.label()));
                    self.error(
                        FindingCode::SizeLimit,
                        at,
                        format!("a field of at most {FIELD_LINES_MAX} lines (the rest is skipped)"),
                        "more lines",
                    );
                }
            }
            None => self.error(
                FindingCode::TagSyntax,
                Self::at(line, offset, col, None),
                "a tag line (:20:, :61:, …)",
                show(&text[..text.len().min(24)]),
            ),
        }
    }

    fn start_page(&mut self, line: u64, offset: u64, col: u64) {
        self.page = Some(Box::new(Page {
            mt: self.envelope.mt,
            servicer: self.envelope.servicer.clone(),
            position: Self::at(line, offset, col, Some(":20:")),
            id: String::new(),
            account: None,
            sequence: None,
            number: None,
            number_at: None,
            opening: None,
            closing: None,
            opening_tag: None,
            closing_tag: None,
            others: Vec::new(),
            currency: None,
            exponent: None,
            currency_bad: false,
            entries: Vec::with_capacity(self.entries_hint),
            open_entry: false,
            seen: 0,
            rank: 0,
            mt942_fields: false,
            date_time: None,
            controls: Vec::new(),
            dropped_entries: false,
        }));
    }

    fn end_field(&mut self) {
        let Some(f) = self.field.take() else {
            return;
        };
        let Some(mut page) = self.page.take() else {
            self.spare_field = Some(f);
            return;
        };
        self.field_into(&mut page, &f);
        self.page = Some(page);
        self.spare_field = Some(f);
    }

    fn bad(&mut self, f: &Field, line: usize, b: Bad) {
        let pos = f.pos(line, b.at);
        self.error(b.code, pos, b.expected, b.found);
    }

    fn field_into(&mut self, page: &mut Page, f: &Field) {
        let tag = f.tag;
        let mut out_of_order = false;
        if let Some(r) = rank(tag) {
            if r < page.rank {
                out_of_order = true;
                self.error(
                    FindingCode::RecordOrder,
                    f.at.clone(),
                    "MT940 field order (:20: :25: :28C: :60a: :61:/:86: :62a: :64: :65:)",
                    format!("{} after a later field", f.label()),
                );
            } else {
                page.rank = r;
            }
        }
        if once(tag) && page.seen & f.bit != 0 {
            if out_of_order {
                return;
            }
            self.error(
                FindingCode::RecordOrder,
                f.at.clone(),
                format!("one {} per message", f.label()),
                format!("a second {}", f.label()),
            );
            return;
        }
        page.seen |= f.bit;
        let was_open = std::mem::replace(&mut page.open_entry, false);
        let v = f.first().trim_ascii_end();
        if !matches!(tag, "61" | "86" | "25P") && f.lines.len() > 1 {
            let pos = f.pos(1, 0);
            self.error(
                FindingCode::TagSyntax,
                pos,
                format!("{} on one line", f.label()),
                format!("{} lines", f.lines.len()),
            );
        }
        match tag {
            "20" => {
                page.id = decode(v).trim().to_string();
                self.check_len(f, v, 16, "transaction reference (16x)");
            }
            "21" => {}
            "25" | "25P" => {
                page.account = Some(decode(v).trim().to_string());
                self.check_len(f, v, 35, "account identification (35x)");
            }
            "28" | "28C" => {
                if tag == "28" {
                    self.warning(
                        FindingCode::TagSyntax,
                        f.at.clone(),
                        ":28C: (statement number/sequence number; the old :28: is read as it)",
                        ":28:",
                    );
                }
                match fields::parse_statement_number(v) {
                    Ok(n) => page.number = Some(n),
                    Err(b) => self.bad(f, 0, b),
                }
                page.sequence = Some(decode(v).trim().to_string());
                page.number_at = Some(f.at.clone());
            }
            "34F" => {
                page.mt942_fields = true;
                match fields::parse_floor_limit(v) {
                    Ok(c) if page.currency.is_none() => self.set_currency(page, f, c, 0),
                    Ok(_) => {}
                    Err(b) => self.bad(f, 0, b),
                }
            }
            "13D" => {
                page.mt942_fields = true;
                let (d, bad) = fields::parse_date_time(v);
                page.date_time = d;
                for b in bad {
                    self.bad(f, 0, b);
                }
            }
            "60F" | "60M" | "62F" | "62M" | "64" | "65" => self.balance(page, f, v),
            "61" => self.entry(page, f, v),
            "86" => {
                // Information to the account owner: the entry's when it follows a
                // `:61:`, else about the statement (not kept: the model has no place).
                self.check_details(f);
                if was_open && let Some(e) = page.entries.last_mut() {
                    match (f.lines.len(), std::str::from_utf8(f.first())) {
                        // One line (most): nothing to join.
                        (1, Ok(one)) => {
                            self.text.clear();
                            collapse_whitespace_into(&mut self.text, one);
                        }
                        _ => {
                            let lines = f.lines.iter().map(|l| {
                                let t = f.text(l);
                                (t, l.column as usize - 1 + t.len())
                            });
                            remittance_text_into(lines, &mut self.joined, &mut self.text);
                        }
                    }
                    let text = self.text.as_str();
                    e.remittance = match e.remittance.take() {
                        Some(mut supp) if !text.is_empty() => {
                            supp.reserve_exact(1 + text.len());
                            supp.push(' ');
                            supp.push_str(text);
                            Some(supp)
                        }
                        Some(supp) => Some(supp),
                        None => (!text.is_empty()).then(|| text.to_string()),
                    };
                }
            }
            "90D" | "90C" => {
                page.mt942_fields = true;
                match fields::parse_control(v) {
                    Ok(c) => {
                        let amount_minor = fields::to_minor(
                            &c.amount,
                            Currency::parse(c.currency).map_or(2, Currency::exponent),
                            c.currency,
                        );
                        let amount_minor = match amount_minor {
                            Ok(a) => Some(a),
                            Err(b) => {
                                self.bad(f, 0, b);
                                None
                            }
                        };
                        page.controls.push(Control {
                            debit: tag == "90D",
                            count: c.count,
                            amount_minor,
                            currency: c.currency.to_string(),
                            position: f.at.clone(),
                        });
                    }
                    Err(b) => self.bad(f, 0, b),
                }
            }
            _ => {}
        }
    }

    fn check_len(&mut self, f: &Field, v: &[u8], max: usize, what: &str) {
        let t = v.trim_ascii();
        if t.is_empty() || t.len() > max {
            let pos = f.pos(0, 0);
            self.error(FindingCode::TagSyntax, pos, what.to_string(), show(t));
        }
    }

    /// `:86:` is `6*65x`: longer text is kept whole, with a warning.
    fn check_details(&mut self, f: &Field) {
        let longest = f.lines.iter().map(|l| l.end - l.start).max().unwrap_or(0);
        if f.lines.len() > 6 || longest > 65 {
            self.warning(
                FindingCode::TagSyntax,
                f.at.clone(),
                ":86: of at most 6 lines of 65 characters (kept whole)",
                format!("{} lines, longest {longest} characters", f.lines.len()),
            );
        }
    }

    /// The statement's currency from its first balance: its exponent, or a finding.
    fn set_currency(&mut self, page: &mut Page, f: &Field, code: &str, at: usize) {
        page.currency = Some(code.to_string());
        match Currency::parse(code) {
            Ok(c) => page.exponent = Some(c.exponent()),
            Err(e) => {
                page.currency_bad = true;
                self.currency_error(f, at, code, e);
            }
        }
    }

    fn currency_error(&mut self, f: &Field, at: usize, code: &str, e: CurrencyError) {
        let found = match e {
            CurrencyError::Unknown => code.to_string(),
            _ => format!("{code} ({e})"),
        };
        let pos = f.pos(0, at);
        self.error(
            FindingCode::CurrencyCode,
            pos,
            "an active ISO 4217 currency code with minor units",
            found,
        );
    }

    fn balance(&mut self, page: &mut Page, f: &Field, v: &[u8]) {
        let tag = f.tag;
        match tag {
            "60F" | "60M" => page.opening_tag = Some(tag),
            "62F" | "62M" => page.closing_tag = Some(tag),
            _ => {}
        }
        let (b, bad) = fields::parse_balance(v);
        for x in bad {
            self.bad(f, 0, x);
        }
        let Some(b) = b else {
            return;
        };
        // The currency starts at offset 7 (mark and date before it).
        let exponent = if page.currency.is_none() && matches!(tag, "60F" | "60M") {
            self.set_currency(page, f, b.currency, 7);
            page.exponent
        } else {
            match Currency::parse(b.currency) {
                Ok(c) => Some(c.exponent()),
                Err(e) => {
                    self.currency_error(f, 7, b.currency, e);
                    None
                }
            }
        };
        let amount_minor = match exponent.map(|e| fields::to_minor(&b.amount, e, b.currency)) {
            Some(Ok(a)) => a as i64,
            Some(Err(x)) => {
                self.bad(f, 0, x);
                return;
            }
            None => return,
        };
        let kind = match tag {
            "60F" => BalanceKind::OpeningBooked,
            "60M" => BalanceKind::IntermediateOpening,
            "62F" => BalanceKind::ClosingBooked,
            "62M" => BalanceKind::IntermediateClosing,
            "64" => BalanceKind::ClosingAvailable,
            _ => BalanceKind::Other,
        };
        let balance = Balance {
            kind,
            code: f.label().to_string(),
            amount_minor: if b.debit { -amount_minor } else { amount_minor },
            currency: b.currency.to_string(),
            date: b.date,
            position: f.at.clone().into(),
        };
        match tag {
            "60F" | "60M" => page.opening = Some(balance),
            "62F" | "62M" => page.closing = Some(balance),
            _ => page.others.push(balance),
        }
    }

    fn entry(&mut self, page: &mut Page, f: &Field, v: &[u8]) {
        let (line, bad) = fields::parse_statement_line(v);
        for b in bad {
            self.bad(f, 0, b);
        }
        // Supplementary details: the second line, `34x`.
        let supp = f.line_text(1).map(|l| decode_cow(l.trim_ascii()));
        if f.lines.len() > 2
            || f.line_text(1)
                .is_some_and(|l| l.trim_ascii_end().len() > 34)
        {
            let pos = f.pos(1, 0);
            self.warning(
                FindingCode::TagSyntax,
                pos,
                ":61: supplementary details: one line of at most 34 characters (kept whole)",
                format!("{} more lines", f.lines.len() - 1),
            );
        }
        let Some(line) = line else {
            return;
        };
        if page.entries.len() >= ENTRIES_PER_STATEMENT_MAX {
            if !page.dropped_entries {
                page.dropped_entries = true;
                self.error(
                    FindingCode::SizeLimit,
                    f.at.clone(),
                    format!("at most {ENTRIES_PER_STATEMENT_MAX} entries in a statement"),
                    "more",
                );
            }
            return;
        }
        let currency = page.currency.clone().unwrap_or_default();
        let amount_minor = match page.exponent {
            Some(e) => match fields::to_minor(&line.amount, e, &currency) {
                Ok(a) => a,
                Err(b) => {
                    self.bad(f, 0, b);
                    0
                }
            },
            // No currency to post (reported at the balance): no exponent, no amount.
            None => 0,
        };
        if page.currency.is_none() {
            let pos = f.pos(0, line.amount.at);
            self.error(
                FindingCode::MissingTag,
                pos,
                "an opening balance (:60F:/:60M:; MT942 :34F:) giving the currency before :61:",
                "none",
            );
        }
        // The line validated once; its subfields are slices of it.
        let v_text = std::str::from_utf8(v).ok();
        let reference = |r: Option<&[u8]>| {
            r.filter(|b| !b.eq_ignore_ascii_case(b"NONREF"))
                .map(|b| decode_part(v, v_text, b))
        };
        self.entry_no += 1;
        // One line: its text, whitespace runs collapsed.
        let text = supp
            .filter(|s| !s.is_empty())
            .map(|s| collapse_whitespace(&s));
        page.entries.push(Entry {
            entry_no: self.entry_no,
            amount_minor,
            currency,
            credit: line.mark.credit(),
            reversal: line.mark.reversal(),
            status: EntryStatus::Booked,
            booking_date: line.entry_date,
            value_date: line.value_date,
            bank_ref: reference(line.bank_ref),
            customer_ref: reference(line.customer_ref),
            end_to_end_id: None,
            bank_tx_code: line.tx_type.map(|t| decode_part(v, v_text, t)),
            remittance: text,
            batch_ref: None,
            details: Vec::new(),
            position: f.at.clone().into(),
        });
        page.open_entry = true;
    }

    /// A message ends: `-`, `-}`, the next `:20:`, a new envelope or the end of the file.
    fn end_message(&mut self) {
        self.end_field();
        self.skipping = false;
        if let Some(page) = self.page.take() {
            self.finish_page(*page);
        }
    }

    fn missing(&mut self, page: &Page, what: &str) {
        self.error(
            FindingCode::MissingTag,
            page.position.clone(),
            format!("{what} in message {}", page.id),
            "none",
        );
    }

    fn finish_page(&mut self, mut page: Page) {
        let format = page.format();
        self.first_format.get_or_insert(format);
        if page.account.is_none() {
            self.missing(&page, ":25: (account identification)");
        }
        if page.sequence.is_none() {
            self.missing(&page, ":28C: (statement number)");
        }
        if format == "mt942" {
            if page.seen & tag_bit("34F") == 0 {
                self.missing(&page, ":34F: (floor limit)");
            }
            if page.seen & tag_bit("13D") == 0 {
                self.missing(&page, ":13D: (date/time indication)");
            }
        } else {
            if page.opening_tag.is_none() {
                self.missing(&page, ":60F: or :60M: (opening balance)");
            }
            if page.closing_tag.is_none() {
                self.missing(&page, ":62F: or :62M: (closing balance)");
            }
        }
        let status = if format == "mt942" {
            EntryStatus::Pending
        } else {
            EntryStatus::Booked
        };
        for e in &mut page.entries {
            e.status = status;
        }
        self.check_controls(&page);
        let (number, page_no) = page.number.unwrap_or((0, None));
        let continues = page.opening_tag == Some("60M");
        if let Some((mut st, p_number, p_page, p_at)) = self.pending.take() {
            let same = continues
                && st.format == format
                && Some(&st.account) == page.account.as_ref()
                && p_number == number;
            if same {
                self.join(&mut st, p_page, page_no, &mut page);
                return self.after_page(st, page.closing_tag, number, page_no);
            }
            self.warning(
                FindingCode::MissingTag,
                p_at,
                format!(
                    "the next page (:60M:) of statement {} of account {}",
                    p_number, st.account
                ),
                format!("message {} (statement {number})", page.id),
            );
            self.emit(st);
        } else if continues {
            self.warning(
                FindingCode::MissingTag,
                page.opening
                    .as_ref()
                    .map_or(page.position.clone(), |b| match &b.position {
                        Position::Text(t) => t.clone(),
                        _ => page.position.clone(),
                    }),
                "the previous page (ending :62M:) of this statement in the file",
                format!("message {} opens with :60M:", page.id),
            );
        }
        let closing_tag = page.closing_tag;
        let st = self.statement(page, format);
        self.after_page(st, closing_tag, number, page_no);
    }

    /// A page ending `:62M:` waits for the next; else the statement is complete.
    fn after_page(
        &mut self,
        st: Statement,
        closing: Option<&str>,
        number: u32,
        page_no: Option<u32>,
    ) {
        if closing == Some("62M") {
            let at = match st
                .balance(BalanceKind::IntermediateClosing)
                .map(|b| &b.position)
            {
                Some(Position::Text(t)) => t.clone(),
                _ => match &st.position {
                    Position::Text(t) => t.clone(),
                    _ => TextPosition {
                        byte_offset: 0,
                        line: 1,
                        column: 1,
                        tag: None,
                    },
                },
            };
            self.pending = Some((st, number, page_no, at));
        } else {
            self.emit(st);
        }
    }

    /// The next page of `st`: its `:60M:` must continue the last `:62M:`.
    fn join(
        &mut self,
        st: &mut Statement,
        prev_page: Option<u32>,
        page_no: Option<u32>,
        page: &mut Page,
    ) {
        let prev_close = st.balance(BalanceKind::IntermediateClosing).cloned();
        if let (Some(close), Some(open)) = (&prev_close, &page.opening)
            && (close.amount_minor != open.amount_minor || close.currency != open.currency)
        {
            self.push(Finding::error(
                FindingCode::BalanceChain,
                open.position.clone(),
                None,
                format!(
                    ":60M: = the previous page's :62M: {} {}",
                    close.amount_minor, close.currency
                ),
                format!("{} {}", open.amount_minor, open.currency),
            ));
        }
        if let (Some(p), Some(n)) = (prev_page, page_no)
            && n != p + 1
        {
            let at = page.number_at.clone().unwrap_or(page.position.clone());
            self.warning(
                FindingCode::SequenceGap,
                at,
                format!("page {}", p + 1),
                format!("page {n}"),
            );
        }
        // The joined statement keeps the first page's opening and the last page's
        // closing; the pages' :62M:/:60M: pair was checked above.
        st.balances
            .retain(|b| b.kind != BalanceKind::IntermediateClosing);
        if let Some(c) = page.closing.take() {
            st.balances.push(c);
        }
        st.balances.append(&mut page.others);
        st.date = st
            .balances
            .iter()
            .find(|b| {
                matches!(
                    b.kind,
                    BalanceKind::ClosingBooked | BalanceKind::IntermediateClosing
                )
            })
            .and_then(|b| b.date);
        let room = ENTRIES_PER_STATEMENT_MAX.saturating_sub(st.entries.len());
        if page.entries.len() > room {
            self.push(Finding::error(
                FindingCode::SizeLimit,
                page.position.clone(),
                None,
                format!("at most {ENTRIES_PER_STATEMENT_MAX} entries in a statement"),
                "more",
            ));
            page.entries.truncate(room);
        }
        st.entries.append(&mut page.entries);
    }

    fn statement(&mut self, mut page: Page, format: &'static str) -> Statement {
        let mut balances = Vec::new();
        balances.extend(page.opening.take());
        balances.extend(page.closing.take());
        balances.append(&mut page.others);
        let date = balances
            .iter()
            .find(|b| {
                matches!(
                    b.kind,
                    BalanceKind::ClosingBooked | BalanceKind::IntermediateClosing
                )
            })
            .and_then(|b| b.date)
            .or(page.date_time);
        Statement {
            format,
            kind: if format == "mt942" {
                StatementKind::Intraday
            } else {
                StatementKind::Final
            },
            account: page.account.unwrap_or_default(),
            currency: page.currency,
            servicer: page.servicer,
            id: page.id,
            sequence: page.sequence,
            date,
            from_date: None,
            to_date: None,
            copy: false,
            balances,
            entries: page.entries,
            position: page.position.into(),
        }
    }

    /// MT942 `:90D:`/`:90C:`: number and sum of the debit/credit entries.
    fn check_controls(&mut self, page: &Page) {
        for c in &page.controls {
            let (count, sum) = page.entries.iter().filter(|e| e.credit != c.debit).fold(
                (0u64, 0u64),
                |(n, s), e| {
                    (
                        n + 1,
                        if e.currency == c.currency {
                            s.saturating_add(e.amount_minor)
                        } else {
                            s
                        },
                    )
                },
            );
            let side = if c.debit { "debit" } else { "credit" };
            if u64::from(c.count) != count {
                self.push(Finding::error(
                    FindingCode::ControlCountMismatch,
                    c.position.clone(),
                    None,
                    format!("{count} ({side} entries counted)"),
                    c.count.to_string(),
                ));
            }
            if let Some(a) = c.amount_minor
                && a != sum
                && !page.currency_bad
            {
                self.push(Finding::error(
                    FindingCode::ControlTotalMismatch,
                    c.position.clone(),
                    None,
                    format!(
                        "{sum} {} (sum of the {side} entries in minor units)",
                        c.currency
                    ),
                    a.to_string(),
                ));
            }
        }
    }

    /// A statement is complete: the balance check, the chain and the sequence per
    /// account, then the caller's.
    fn emit(&mut self, mut st: Statement) {
        fit_entries(&mut st.entries, &mut self.entries_hint);
        let amounts_known = st
            .currency
            .as_deref()
            .is_some_and(|c| Currency::parse(c).is_ok());
        if amounts_known && let Some(f) = check_balance(&st) {
            self.push(f);
        }
        let key = format!("{}\u{0}{}", st.format, st.account);
        let number = st
            .sequence
            .as_deref()
            .and_then(|s| fields::parse_statement_number(s.as_bytes()).ok())
            .map(|(n, _)| n);
        let state = self.accounts.entry(key).or_default();
        let mut findings = Vec::new();
        if let (Some(prev), Some(n)) = (state.number, number)
            && n > prev.saturating_add(1)
        {
            findings.push(Finding::warning(
                FindingCode::SequenceGap,
                st.position.clone(),
                None,
                format!("statement number {} of account {}", prev + 1, st.account),
                n.to_string(),
            ));
        }
        if number.is_some() {
            state.number = number;
        }
        if st.kind == StatementKind::Final && amounts_known {
            let open = st
                .balance(BalanceKind::OpeningBooked)
                .or_else(|| st.balance(BalanceKind::IntermediateOpening));
            if let (Some((amount, ccy, id)), Some(open)) = (&state.closing, open)
                && (*amount != open.amount_minor || *ccy != open.currency)
            {
                findings.push(Finding::error(
                        FindingCode::BalanceChain,
                        open.position.clone(),
                        None,
                        format!(
                            "{} = the closing balance {amount} {ccy} of the previous statement {id} of account {}",
                            open.code, st.account
                        ),
                        format!("{} {}", open.amount_minor, open.currency),
                    ));
            }
            let close = st
                .balance(BalanceKind::ClosingBooked)
                .or_else(|| st.balance(BalanceKind::IntermediateClosing));
            if let Some(c) = close {
                state.closing = Some((c.amount_minor, c.currency.clone(), st.id.clone()));
            }
        }
        for f in findings {
            self.push(f);
        }
        self.statements += 1;
        (self.on_statement)(st);
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

/// [`decode`] of `part`, a slice of `whole`: cut from `whole_text` (`whole` as text, when
/// it is UTF-8) rather than validated again.
fn decode_part(whole: &[u8], whole_text: Option<&str>, part: &[u8]) -> String {
    let at = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    let within = at <= whole.len() && part.len() <= whole.len() - at;
    match whole_text
        .filter(|_| within)
        .and_then(|t| t.get(at..at + part.len()))
    {
        Some(s) => s.to_string(),
        None => decode(part),
    }
}

/// A logical terminal address (BIC8, terminal code, branch) as a BIC: 8 characters for
/// the head office (`XXX`), else 11.
fn bic_of_lt(lt: &[u8]) -> String {
    let bic8 = decode(&lt[..8]);
    match lt.get(9..12) {
        Some(b"XXX") | None => bic8,
        Some(branch) => format!("{bic8}{}", decode(branch)),
    }
}
