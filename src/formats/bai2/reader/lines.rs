//! Physical lines into logical records: a line bounded and checked (ASCII, record
//! length), cut at record codes into fields (a `16`'s text to the end of its line), `88`
//! continuations joined to the record they continue.

use super::{
    At, Field, LINE_BYTES_MAX, Lines, Logical, Phys, RECORD_BYTES_MAX, RECORD_FIELDS_MAX, Reader,
    Text, decode,
};
use crate::findings::{Finding, FindingCode, show};
use crate::formats::bai2::lex;
use crate::formats::dialect::DialectRule;
use std::borrow::Cow;
use std::io::{self, BufRead};

/// Reads one physical line (its `\n` included) into `buf`, keeping at most
/// [`LINE_BYTES_MAX`] bytes: (bytes read, whether it ended with `\n`, whether it was too
/// long).
pub(super) fn read_line<R: BufRead>(
    input: &mut R,
    buf: &mut Vec<u8>,
) -> io::Result<(usize, bool, bool)> {
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
    pub(super) fn physical_line(&mut self, lines: &mut Lines, raw: &[u8]) {
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

    /// A physical line (`blank`: [`lex::is_blank`] of it).
    pub(super) fn line(
        &mut self,
        line: &[u8],
        blank: bool,
        line_no: u64,
        start: u64,
        col_base: u64,
    ) {
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
        if self.skipped_line(line, blank, &at) {
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

    /// A line of DOS end-of-file bytes or a blank line: skipped, with a warning.
    fn skipped_line(&mut self, line: &[u8], blank: bool, at: &Phys<'_>) -> bool {
        if line.iter().all(|&b| b == 0x1A) && !line.is_empty() {
            self.warn(
                FindingCode::EndOfFileMarker,
                at.at(0).pos("line"),
                "no DOS end-of-file byte (0x1A)",
                "0x1A (skipped)",
            );
            return true;
        }
        if blank {
            self.warn(
                FindingCode::BlankLine,
                at.at(0).pos("line"),
                "a record",
                "a blank line (skipped)",
            );
            return true;
        }
        false
    }

    /// A `16` text not closed by `/` is being read.
    pub(super) fn text_open(&self) -> bool {
        self.pending
            .as_ref()
            .is_some_and(|p| p.text.as_ref().is_some_and(|t| t.open))
    }

    /// The record whose code is at `line[i..]`; gives where a record joined after it on
    /// the same line starts.
    pub(super) fn record_at(&mut self, line: &[u8], i: usize, at: &Phys<'_>) -> Option<usize> {
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
    pub(super) fn scan_fields(
        &mut self,
        line: &[u8],
        mut j: usize,
        at: &Phys<'_>,
    ) -> Option<usize> {
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
    pub(super) fn after_slash(&mut self, line: &[u8], j: usize, at: &Phys<'_>) -> Option<usize> {
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
    pub(super) fn scan_text(&mut self, line: &[u8], j: usize, at: &Phys<'_>) -> Option<usize> {
        let lex::TextEnd { len, next, slash } = lex::text_end(&line[j..]);
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
        if let Some(p) = slash {
            // The text runs on past a `/` and a record code that cannot come there: read as
            // text, said once, at that `/`.
            let tag = match &self.pending {
                Some(l) if l.pieces > 1 => "88",
                _ => "16",
            };
            self.sink.push(
                DialectRule::SlashInText.finding(at.at(j + p).pos(tag), value.trim().to_string()),
            );
        }
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
    pub(super) fn push_field(&mut self, tok: &[u8], at: At, text: Option<&str>) {
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
    pub(super) fn logical(&mut self, code: &'static str, at: At) -> Box<Logical> {
        match self.spare.take() {
            Some(mut l) => {
                l.reset(code, at);
                l
            }
            None => Box::new(Logical::new(code, at)),
        }
    }

    pub(super) fn size_check(&mut self) {
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
    pub(super) fn check_ascii(&mut self, b: &[u8], at: At, text: bool) {
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
}

/// Where [`str::trim`] of `v` starts and ends in it.
pub(super) fn trim_bounds(v: &str) -> (usize, usize) {
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
pub(super) fn grow(p: &mut Logical, n: usize) -> bool {
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
