//! Lines into fields: physical lines read (bounded), the SWIFT envelope (`{1:}{2:}{4:`
//! … `-}`), tag lines opening a field and continuation lines adding to it.

use super::tags::{KNOWN_TAGS, known_tag_bytes, label, tag_of};
use super::{Envelope, Field, Page, Reader};
use crate::findings::{FindingCode, show};
use crate::formats::dialect::DialectRule;
use crate::formats::mt940::{FIELD_LINES_MAX, LINE_BYTES_MAX, decode};
use std::io::{self, BufRead};

/// The next line into `buf` without its end (LF or CRLF), at most [`LINE_BYTES_MAX`]
/// bytes kept; gives the bytes consumed (0 at the end) and whether the line was longer.
pub(super) fn next_line<R: BufRead>(input: &mut R, buf: &mut Vec<u8>) -> io::Result<(usize, bool)> {
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

impl Reader<'_> {
    pub(super) fn physical_line(&mut self, raw: &[u8], line: u64, offset: u64, too_long: bool) {
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

    pub(super) fn logical_line(&mut self, text: &[u8], line: u64, offset: u64, col: u64) {
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
            Some((tag, _)) if self.wrapped_in_details(tag) => {
                let at = Self::at(line, offset, col, Some(":86:"));
                self.push(
                    DialectRule::WrappedTagLikeLine.finding(at, show(&text[..text.len().min(24)])),
                );
                self.continuation(text, line, offset, col);
                if let Some(l) = self.field.as_mut().and_then(|f| f.lines.last_mut()) {
                    l.glued = true;
                }
            }
            Some((tag, value)) => {
                self.tag_line(tag, &text[value..], line, offset, col, col + value as u64)
            }
            None => self.continuation(text, line, offset, col),
        }
    }

    /// A line inside `:86:` that begins like a tag but is not one of those that may follow
    /// `:86:` (`:61:`, `:86:`, the closing balances, `:90D:`/`:90C:`, or the next
    /// message's `:20:`): the narrative wrapped there (`…T13` / `:12:11`, a timestamp). The
    /// tags that may not come after `:86:` (`:25:`, `:28:`, `:60F:`, …) are text here too:
    /// as fields they would be out of order, and wrapped minutes look just like them.
    fn wrapped_in_details(&self, tag: &[u8]) -> bool {
        self.page.is_some()
            && !self.skipping
            && self.field.as_ref().is_some_and(|f| f.tag == "86")
            && !matches!(
                tag,
                b"20" | b"61" | b"86" | b"62F" | b"62M" | b"64" | b"65" | b"90D" | b"90C"
            )
    }

    /// `{1:…}{2:…}{3:{…}}{4:`: the envelope's basic, application and user headers.
    pub(super) fn header(&mut self, text: &[u8], line: u64, offset: u64, col: u64) {
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
    pub(super) fn block2(&mut self, body: &[u8], line: u64, offset: u64, col: u64) {
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

    pub(super) fn tag_line(
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

    pub(super) fn continuation(&mut self, text: &[u8], line: u64, offset: u64, col: u64) {
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

    pub(super) fn start_page(&mut self, line: u64, offset: u64, col: u64) {
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
            account_currency: None,
            amount_failed: false,
            currency_missing_told: false,
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

    pub(super) fn end_field(&mut self) {
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
