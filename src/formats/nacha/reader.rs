//! Framing: pulls 94-byte records out of any `Read`, with their positions.
//!
//! Accepted framings (all may mix within a file):
//! - records separated by LF, CRLF or a lone CR, with or without a final separator;
//! - no separator at all: a line holding several 94-byte records back to back;
//! - a record with trailing blanks trimmed (shorter than 94 bytes, then padded back with
//!   blanks) or padded past 94 with blanks: accepted, with a warning finding.
//!
//! Anything else is an error finding with its position: a piece of a separator-less line
//! that is not 94 bytes, or a record followed by more than [`TRAILING_BLANKS_MAX`] blanks.
//!
//! Common noise around the records is skipped with one warning each, so that it does not
//! shift every column after it:
//! - a UTF-8 byte-order mark (`EF BB BF`) at byte 0 ([`FindingCode::ByteOrderMark`]);
//! - DOS end-of-file bytes (0x1A, Ctrl-Z) after the last record, one or more, mixed with
//!   CR and LF, up to the end of the input ([`FindingCode::EndOfFileMarker`]), if that
//!   tail is at most 4 KiB (the reader's lookahead); a 0x1A anywhere else is a byte like any
//!   other (not printable ASCII: a `non_ascii_byte` finding in its record).
//!
//! Non-ASCII: NACHA records are ASCII, so any other byte is an error
//! ([`FindingCode::NonAsciiByte`], one finding per record, at the column of the first
//! such byte) and the file is rejected. The finding's byte offset is that of the offending
//! byte itself (not the record's start), its field that one column (`59-59`), named by
//! the field of the record's layout it falls in (`entry_detail.individual_name`, by
//! `Assembler::field_at`). The record's non-ASCII columns go with it ([`RawRecord`]): the
//! rules say nothing more about the fields they fall in, nor compare the control totals
//! those fields feed (`rules/check.rs`), so one letter is one finding. A line that is valid UTF-8 with multi-byte
//! characters (`é` is 2 bytes) is framed by characters, not bytes: each character is one
//! column, as the sender meant it, so a 94-character line of 95 or more bytes is one
//! record whose fields sit at their columns. Each multi-byte character is replaced by `?`
//! in the framed record, and the one finding names the record, line, column and the
//! bytes found, instead of a cascade of length and field findings. (Rejecting the line
//! as one record-length finding was the alternative; reading it by characters says which
//! letter is wrong, and a wrong digit field still gets its own finding.) This needs the
//! line's separator within [`UTF8_LINE_MAX`] bytes; in a file without separators records
//! are framed by bytes.
//!
//! The reader counts every byte it reads, skipped ones included: hashing them is the
//! caller's (src/hash.rs), so a file's identity and SHA-256 stay over its real bytes, and
//! byte offsets in positions are offsets in the real file.

use super::record::{NonAsciiColumns, RECORD_LEN};
use crate::findings::{FINDINGS_MAX, FieldSpec, Finding, FindingCode, RecordPosition, show};
use std::io::{self, Read};

/// Longest run of trailing blanks accepted after a 94-byte record, so that a line of
/// blanks cannot make the reader buffer without bound.
pub(super) const TRAILING_BLANKS_MAX: usize = 4096;
/// Bytes the reader wants buffered before framing a record: a record, its blanks and CRLF.
const LOOKAHEAD: usize = RECORD_LEN + TRAILING_BLANKS_MAX + 2;
/// Size of one read from the source.
const READ_CHUNK: usize = 256 * 1024;
/// Longest line, in bytes, framed by UTF-8 characters: 94 characters of at most 4 bytes.
pub(super) const UTF8_LINE_MAX: usize = RECORD_LEN * 4;
// The buffer always holds a UTF-8 line and its separator when not at the end of input.
const _: () = assert!(UTF8_LINE_MAX < LOOKAHEAD);
/// The UTF-8 byte-order mark some editors write at the start of a text file.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
/// The DOS end-of-file marker (Ctrl-Z) some systems append to a text file.
const DOS_EOF: u8 = 0x1A;
/// What stands in a framed record for a multi-byte UTF-8 character (already a finding).
const NON_ASCII_STANDIN: u8 = b'?';

/// One framed record: always exactly 94 bytes (trimmed records are padded with blanks).
#[derive(Debug)]
pub(super) struct RawRecord<'a> {
    pub bytes: &'a [u8],
    pub position: RecordPosition,
    /// The columns that held a non-ASCII byte or character (each multi-byte character is
    /// a `?` in `bytes`): the rules skip the fields they fall in.
    pub(crate) non_ascii: NonAsciiColumns,
}

/// Consecutive plain records as the buffer holds them, each followed by its separator
/// ([`RecordReader::plain_run`]): the fast path of the parallel check's framing thread.
pub(crate) struct PlainRun<'a> {
    /// The first record's position; the next ones follow a line and `stride` bytes apart.
    pub(crate) first: RecordPosition,
    /// The separator's length: 1 (LF) or 2 (CR LF).
    pub(crate) sep: usize,
    bytes: &'a [u8],
}

impl<'a> PlainRun<'a> {
    fn empty(first: RecordPosition) -> Self {
        PlainRun {
            first,
            sep: 1,
            bytes: &[],
        }
    }
    /// Bytes from one record's first byte to the next one's.
    pub(crate) fn stride(&self) -> usize {
        RECORD_LEN + self.sep
    }
    /// Record `i` of the run; `None` past its end.
    pub(crate) fn record(&self, i: usize) -> Option<&'a [u8; RECORD_LEN]> {
        let at = i * self.stride();
        self.bytes.get(at..at + RECORD_LEN)?.try_into().ok()
    }
    /// Record `i`'s position, as `next_record` gives it.
    pub(crate) fn position(&self, i: usize) -> RecordPosition {
        self.first.advanced(i as u64, self.stride() as u64)
    }
}

/// What a `non_ascii_byte` finding names as its field before the assembler names the
/// field of the record's layout the column falls in (`Assembler::field_at`): the column
/// alone.
pub(crate) fn column_of_record(col: u16) -> FieldSpec {
    FieldSpec {
        record: "record",
        name: "column",
        start: col,
        end: col,
    }
}

/// The `non_ascii_byte` finding of the record at `pos`: at 0-based column `col`, whose
/// first byte is `byte_in_record` bytes after the record's first (the position's byte
/// offset is that byte's, the field its one column).
fn non_ascii_finding(
    pos: RecordPosition,
    col: usize,
    byte_in_record: usize,
    found: String,
) -> Finding {
    let at = RecordPosition {
        byte_offset: pos.byte_offset + byte_in_record as u64,
        ..pos
    };
    let column = col as u16 + 1;
    Finding::error(
        FindingCode::NonAsciiByte,
        at,
        Some(column_of_record(column)),
        format!("printable ASCII at column {column}"),
        found,
    )
}

/// Pulls records from a byte source. Not an `Iterator`: each record borrows the reader.
pub(super) struct RecordReader<R> {
    source: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// File offset where the end-of-file marker starts (the input's length if it has
    /// none); known once `eof` is set, `u64::MAX` before.
    marker_offset: u64,
    /// File offset of `buf[start]`.
    offset: u64,
    /// 1-based line of `buf[start]`.
    line: u64,
    record_index: u64,
    /// True while inside a line whose records have no separators.
    unseparated: bool,
    record: [u8; RECORD_LEN],
    /// Columns of `record` that held a multi-byte UTF-8 character (now `?`), already
    /// reported.
    utf8_columns: NonAsciiColumns,
    bytes_read: u64,
    findings: Vec<Finding>,
    /// Empty lines past [`FINDINGS_MAX`] since the last record, counted and not kept: no
    /// sink would keep them (it keeps [`FINDINGS_MAX`] at most), and a file of newlines
    /// alone must not fill memory.
    blank_lines_dropped: u64,
}

impl<R: Read> RecordReader<R> {
    pub(super) fn new(source: R) -> Self {
        RecordReader {
            source,
            buf: vec![0; READ_CHUNK + LOOKAHEAD],
            start: 0,
            end: 0,
            eof: false,
            marker_offset: u64::MAX,
            offset: 0,
            line: 1,
            record_index: 0,
            unseparated: false,
            record: [b' '; RECORD_LEN],
            utf8_columns: NonAsciiColumns::default(),
            bytes_read: 0,
            findings: Vec::new(),
            blank_lines_dropped: 0,
        }
    }

    /// Bytes read from the source so far.
    pub(super) fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The position just past the last byte read: where "missing" findings point.
    pub(super) fn end_position(&self) -> RecordPosition {
        RecordPosition {
            record_index: self.record_index,
            line: self.line,
            byte_offset: self.offset,
        }
    }

    /// Framing findings gathered since the last call.
    pub(super) fn take_findings(&mut self) -> Vec<Finding> {
        std::mem::take(&mut self.findings)
    }

    /// `blank_line` warnings not kept since the last call (past [`FINDINGS_MAX`] of them
    /// in a row): the sink counts them as dropped, after the findings taken with them.
    pub(super) fn take_dropped(&mut self) -> u64 {
        std::mem::take(&mut self.blank_lines_dropped)
    }

    fn fill(&mut self) -> io::Result<()> {
        while !self.eof && self.end - self.start < LOOKAHEAD {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            let n = loop {
                match self.source.read(&mut self.buf[self.end..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            if n == 0 {
                self.eof = true;
                // The whole rest of the input is buffered now: find the marker once.
                let rest = &self.buf[self.start..self.end];
                self.marker_offset = self.offset + marker_start(rest) as u64;
            } else {
                self.bytes_read += n as u64;
                self.end += n;
            }
        }
        Ok(())
    }

    fn consume(&mut self, n: usize, newlines: u64) {
        self.start += n;
        self.offset += n as u64;
        self.line += newlines;
    }

    fn position(&self) -> RecordPosition {
        RecordPosition {
            record_index: self.record_index,
            line: self.line,
            byte_offset: self.offset,
        }
    }

    /// The next record, or `None` at the end of the input.
    pub(super) fn next_record(&mut self) -> io::Result<Option<RawRecord<'_>>> {
        loop {
            self.fill()?;
            if self.start == self.end {
                return Ok(None);
            }
            let pos = self.position();
            if let Some(sep_len) = self.plain_line() {
                // The common case, framed in one test: what `frame` would conclude.
                self.record_index += 1;
                let at = self.start;
                self.unseparated = false;
                self.consume(RECORD_LEN + sep_len, 1);
                return Ok(Some(RawRecord {
                    bytes: &self.buf[at..at + RECORD_LEN],
                    position: pos,
                    non_ascii: NonAsciiColumns::default(),
                }));
            }
            if self.frame(pos) == Framed::Record {
                return Ok(Some(self.emit(pos)));
            }
        }
    }

    /// The plain records (see [`Self::plain_line`]) from here on that the buffer holds,
    /// all with the same separator: what `next_record` would frame, one by one, with no
    /// finding and no non-ASCII column. Nothing is consumed: the caller takes the first
    /// `k` with [`Self::skip_plain`]. Empty when the next line is not plain (or the buffer
    /// has less than a line and one byte left: `next_record` frames those).
    pub(crate) fn plain_run(&mut self) -> io::Result<PlainRun<'_>> {
        self.fill()?;
        let first = self.position();
        let Some(sep) = self.plain_line() else {
            return Ok(PlainRun::empty(first));
        };
        let stride = RECORD_LEN + sep;
        let mut count = 1;
        while self.plain_line_at(self.start + count * stride) == Some(sep) {
            count += 1;
        }
        let at = self.start;
        Ok(PlainRun {
            first,
            sep,
            bytes: &self.buf[at..at + count * stride],
        })
    }

    /// Consumes the first `k` records of the last [`Self::plain_run`], whose separators
    /// were `sep` bytes long: as `k` calls of `next_record` would.
    pub(crate) fn skip_plain(&mut self, k: usize, sep: usize) {
        if k == 0 {
            return;
        }
        self.record_index += k as u64;
        self.unseparated = false;
        self.consume(k * (RECORD_LEN + sep), k as u64);
    }

    /// The separator's length if the line at `buf[start]` is a plain record: 94 printable
    /// ASCII bytes, then LF or CR LF. Such a line has no byte-order mark, no end-of-file
    /// marker and no multi-byte character (none is printable ASCII), so `frame` would
    /// frame it as a 94-byte record with no finding; this says so in one pass.
    fn plain_line(&self) -> Option<usize> {
        self.plain_line_at(self.start)
    }

    /// [`Self::plain_line`] for the line at `buf[at]`.
    fn plain_line_at(&self, at: usize) -> Option<usize> {
        let line = self.buf[..self.end].get(at..at + RECORD_LEN + 2)?;
        let printable = all_printable(&line[..RECORD_LEN]);
        match &line[RECORD_LEN..] {
            [b'\n', _] if printable => Some(1),
            [b'\r', b'\n'] if printable => Some(2),
            _ => None,
        }
    }

    /// Frames what starts at `buf[start]` into `record`, or skips an empty line, a
    /// byte-order mark or the end-of-file marker.
    fn frame(&mut self, pos: RecordPosition) -> Framed {
        if self.skip_noise(pos) {
            return Framed::Nothing;
        }
        if let Some(len) = self.utf8_line_len() {
            return self.frame_utf8(pos, len);
        }
        let avail = &self.buf[self.start..self.end];
        let window = &avail[..avail.len().min(RECORD_LEN + 2)];
        let newline = memchr::memchr2(b'\n', b'\r', window);
        // Length of the line's content up to a separator within reach, if any; near the
        // end, up to the end-of-file marker (a last record trimmed, then Ctrl-Z).
        let mut content_len = newline.unwrap_or(avail.len());
        content_len = content_len.min(self.to_marker());
        if content_len <= RECORD_LEN && (newline.is_some() || self.eof) {
            return self.frame_line(pos, content_len);
        }
        if avail.len() < RECORD_LEN {
            // Only reachable when the buffer is short and not at EOF; fill() prevents it.
            return Framed::Nothing;
        }
        self.frame_long(pos)
    }

    /// A line of at most 94 bytes up to its separator (or the end of the input): a
    /// record, padded with blanks when shorter; an empty line is skipped with a warning.
    fn frame_line(&mut self, pos: RecordPosition, content_len: usize) -> Framed {
        let avail = &self.buf[self.start..self.end];
        let sep_len = separator_len(&avail[content_len..]);
        let newlines = u64::from(sep_len > 0);
        if content_len == 0 {
            // An empty line carries nothing: tell, and go on.
            if self.findings.len() < FINDINGS_MAX {
                self.findings.push(Finding::warning(
                    FindingCode::BlankLine,
                    pos,
                    None,
                    "a 94-byte record",
                    "an empty line",
                ));
            } else {
                self.blank_lines_dropped += 1;
            }
            self.consume(sep_len, newlines);
            self.unseparated = false;
            return Framed::Nothing;
        }
        if content_len == RECORD_LEN {
            self.record.copy_from_slice(&avail[..RECORD_LEN]);
        } else {
            self.record = [b' '; RECORD_LEN];
            self.record[..content_len].copy_from_slice(&avail[..content_len]);
        }
        if content_len < RECORD_LEN {
            let found = format!("{content_len} bytes");
            self.findings.push(if self.unseparated {
                Finding::error(
                    FindingCode::RecordLength,
                    pos,
                    None,
                    "94 bytes (a line without separators must hold whole 94-byte records)",
                    found,
                )
            } else {
                Finding::warning(
                    FindingCode::TrimmedRecord,
                    pos,
                    None,
                    "94 bytes (padded with trailing blanks)",
                    found,
                )
            });
        }
        self.unseparated = false;
        self.consume(content_len + sep_len, newlines);
        Framed::Record
    }

    /// At least 94 bytes and no separator right after them: a record padded past 94 with
    /// blanks, or one of several records on a line without separators.
    fn frame_long(&mut self, pos: RecordPosition) -> Framed {
        let avail = &self.buf[self.start..self.end];
        let mut blanks_end = RECORD_LEN;
        let blank_limit = avail.len().min(RECORD_LEN + TRAILING_BLANKS_MAX + 1);
        while blanks_end < blank_limit && avail[blanks_end] == b' ' {
            blanks_end += 1;
        }
        let at_line_end = blanks_end == avail.len() && self.eof
            || (blanks_end < avail.len() && matches!(avail[blanks_end], b'\n' | b'\r'));
        self.record.copy_from_slice(&avail[..RECORD_LEN]);
        if blanks_end > RECORD_LEN && at_line_end {
            let sep_len = separator_len(&avail[blanks_end..]);
            self.findings.push(Finding::warning(
                FindingCode::LongRecord,
                pos,
                None,
                "94 bytes (trailing blanks dropped)",
                format!("{} bytes", blanks_end),
            ));
            self.unseparated = false;
            self.consume(blanks_end + sep_len, u64::from(sep_len > 0));
            return Framed::Record;
        }
        if blanks_end > RECORD_LEN + TRAILING_BLANKS_MAX {
            self.findings.push(Finding::error(
                FindingCode::RecordLength,
                pos,
                None,
                format!("at most {TRAILING_BLANKS_MAX} trailing blanks after a record"),
                format!("more than {TRAILING_BLANKS_MAX}"),
            ));
            // Skip the blanks so the next record starts after them.
            self.consume(blanks_end, 0);
            self.unseparated = true;
            return Framed::Record;
        }
        // No separator: the next record starts right after this one, on the same line.
        self.unseparated = true;
        self.consume(RECORD_LEN, 0);
        Framed::Record
    }

    /// Skips a byte-order mark at byte 0, or the end-of-file marker with what follows it
    /// to the end of the input, with one warning; true if it did.
    fn skip_noise(&mut self, pos: RecordPosition) -> bool {
        let avail = &self.buf[self.start..self.end];
        if self.offset == 0 && avail.starts_with(UTF8_BOM) {
            self.findings.push(Finding::warning(
                FindingCode::ByteOrderMark,
                pos,
                None,
                "a record at byte 0 (no byte-order mark)",
                format!("a UTF-8 byte-order mark {} (skipped)", show(UTF8_BOM)),
            ));
            self.consume(UTF8_BOM.len(), 0);
            return true;
        }
        // The marker runs from `marker_offset` to the end of the input, all buffered.
        if self.offset != self.marker_offset || avail.is_empty() {
            return false;
        }
        let markers = avail.iter().filter(|&&b| b == DOS_EOF).count();
        self.findings.push(Finding::warning(
            FindingCode::EndOfFileMarker,
            pos,
            None,
            "the end of the input after the last record",
            format!(
                "{markers} DOS end-of-file byte(s) 0x1A (Ctrl-Z): {} (skipped)",
                show_start(avail)
            ),
        ));
        let newlines = avail.iter().filter(|&&b| b == b'\n').count() as u64;
        self.consume(avail.len(), newlines);
        true
    }

    /// Bytes from `buf[start]` to the end-of-file marker (`usize::MAX` before the end).
    fn to_marker(&self) -> usize {
        usize::try_from(self.marker_offset.saturating_sub(self.offset)).unwrap_or(usize::MAX)
    }

    /// The length of the line at `buf[start]` if it is to be framed by UTF-8 characters:
    /// it holds multi-byte characters, is valid UTF-8, and its characters (trailing blanks
    /// aside) fit one record. `None` (framed by bytes) for every ASCII record.
    fn utf8_line_len(&self) -> Option<usize> {
        let avail = &self.buf[self.start..self.end];
        if avail[..avail.len().min(RECORD_LEN)].is_ascii() {
            return None;
        }
        let window = &avail[..avail.len().min(UTF8_LINE_MAX + 1)];
        let mut len = match memchr::memchr2(b'\n', b'\r', window) {
            Some(n) => n,
            None if self.eof && avail.len() <= UTF8_LINE_MAX => avail.len(),
            None => return None,
        };
        len = len.min(self.to_marker());
        let line = std::str::from_utf8(&avail[..len]).ok()?;
        let chars = line.trim_end_matches(' ').chars().count();
        (chars <= RECORD_LEN && !line.is_ascii()).then_some(len)
    }

    /// A line of `len` bytes holding multi-byte UTF-8 characters, framed by characters:
    /// one non-ASCII finding at the first such character's column, each read as `?`.
    fn frame_utf8(&mut self, pos: RecordPosition, len: usize) -> Framed {
        let avail = &self.buf[self.start..self.end];
        let Ok(line) = std::str::from_utf8(&avail[..len]) else {
            // utf8_line_len() checked it; frame by bytes if not.
            return self.frame_long(pos);
        };
        let sep_len = separator_len(&avail[len..]);
        self.record = [b' '; RECORD_LEN];
        // (column, byte of the line, character) of the first non-ASCII character.
        let mut first: Option<(usize, usize, char)> = None;
        let mut others = 0usize;
        let mut cols = NonAsciiColumns::default();
        let columns = line.trim_end_matches(' ').char_indices();
        for (slot, (col, (at, ch))) in self.record.iter_mut().zip(columns.enumerate()) {
            *slot = if ch.is_ascii() {
                ch as u8
            } else {
                cols.insert(col as u16 + 1);
                if first.is_none() {
                    first = Some((col, at, ch));
                } else {
                    others += 1;
                }
                NON_ASCII_STANDIN
            };
        }
        self.utf8_columns = cols;
        if let Some((col, at, ch)) = first {
            let mut utf8 = [0u8; 4];
            let bytes = ch.encode_utf8(&mut utf8).as_bytes();
            let more = match others {
                0 => String::new(),
                n => format!("; {n} more non-ASCII character(s) in the record"),
            };
            let found = format!(
                "{} (the UTF-8 character {ch:?}, {} bytes read as one column){more}",
                show(bytes),
                bytes.len()
            );
            self.findings.push(non_ascii_finding(pos, col, at, found));
        }
        let chars = line.chars().count();
        if chars != RECORD_LEN {
            let (code, expected) = if chars < RECORD_LEN {
                (
                    FindingCode::TrimmedRecord,
                    "94 characters (padded with trailing blanks)",
                )
            } else {
                (
                    FindingCode::LongRecord,
                    "94 characters (trailing blanks dropped)",
                )
            };
            let found = format!("{chars} characters");
            self.findings
                .push(Finding::warning(code, pos, None, expected, found));
        }
        self.unseparated = false;
        self.consume(len + sep_len, u64::from(sep_len > 0));
        Framed::Record
    }

    /// The framed record, with its non-ASCII finding (one per record: a record framed by
    /// UTF-8 characters has had its own).
    fn emit(&mut self, pos: RecordPosition) -> RawRecord<'_> {
        self.record_index += 1;
        let utf8 = std::mem::take(&mut self.utf8_columns);
        // All printable (a branch-free pass), else find the bytes that are not.
        let printable = all_printable(&self.record);
        let mut non_ascii = utf8;
        if !printable {
            non_ascii = non_ascii.union(NonAsciiColumns::of(&self.record));
            if utf8.is_empty()
                && let Some(col) = self
                    .record
                    .iter()
                    .position(|&b| !(0x20..=0x7e).contains(&b))
            {
                // Framed by bytes: column `col` is byte `col` of the record.
                let found = show(&self.record[col..col + 1]);
                self.findings.push(non_ascii_finding(pos, col, col, found));
            }
        }
        RawRecord {
            bytes: &self.record,
            position: pos,
            non_ascii,
        }
    }
}

/// Whether every byte is printable ASCII (0x20-0x7E): one branch-free pass.
fn all_printable(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .fold(true, |ok, &b| ok & (b.wrapping_sub(0x20) < 0x5f))
}

/// What one framing step gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framed {
    /// A record is in `record`.
    Record,
    /// Nothing yet (an empty line skipped): frame again.
    Nothing,
}

/// Where the end-of-file marker starts in `rest` (the rest of the input): the first 0x1A
/// of its trailing run of 0x1A, CR and LF bytes, or `rest.len()` if that run has none.
fn marker_start(rest: &[u8]) -> usize {
    let run = rest
        .iter()
        .rev()
        .take_while(|&&b| matches!(b, DOS_EOF | b'\r' | b'\n'))
        .count();
    let from = rest.len() - run;
    match rest[from..].iter().position(|&b| b == DOS_EOF) {
        Some(i) => from + i,
        None => rest.len(),
    }
}

/// Bytes shown of a run of noise in a finding: enough to see what it is.
const SHOWN_MAX: usize = 16;

/// `bytes` for a message: at most [`SHOWN_MAX`] of them, then how many there were.
fn show_start(bytes: &[u8]) -> String {
    if bytes.len() <= SHOWN_MAX {
        show(bytes)
    } else {
        format!("{}... ({} bytes)", show(&bytes[..SHOWN_MAX]), bytes.len())
    }
}

/// Length of the separator at the start of `rest`: CRLF, LF, CR or nothing.
fn separator_len(rest: &[u8]) -> usize {
    match rest {
        [b'\r', b'\n', ..] => 2,
        [b'\n', ..] | [b'\r', ..] => 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests;
