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
//! The reader counts the bytes it reads; hashing them is the caller's (src/hash.rs).

use super::record::RECORD_LEN;
use crate::findings::{Finding, FindingCode, RecordPosition, show};
use std::io::{self, Read};

/// Longest run of trailing blanks accepted after a 94-byte record, so that a line of
/// blanks cannot make the reader buffer without bound.
pub const TRAILING_BLANKS_MAX: usize = 4096;
/// Bytes the reader wants buffered before framing a record: a record, its blanks and CRLF.
const LOOKAHEAD: usize = RECORD_LEN + TRAILING_BLANKS_MAX + 2;
/// Size of one read from the source.
const READ_CHUNK: usize = 256 * 1024;

/// One framed record: always exactly 94 bytes (trimmed records are padded with blanks).
#[derive(Debug)]
pub struct RawRecord<'a> {
    pub bytes: &'a [u8],
    pub position: RecordPosition,
}

/// Pulls records from a byte source. Not an `Iterator`: each record borrows the reader.
pub struct RecordReader<R> {
    source: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// File offset of `buf[start]`.
    offset: u64,
    /// 1-based line of `buf[start]`.
    line: u64,
    record_index: u64,
    /// True while inside a line whose records have no separators.
    unseparated: bool,
    record: [u8; RECORD_LEN],
    bytes_read: u64,
    findings: Vec<Finding>,
}

impl<R: Read> RecordReader<R> {
    pub fn new(source: R) -> Self {
        RecordReader {
            source,
            buf: vec![0; READ_CHUNK + LOOKAHEAD],
            start: 0,
            end: 0,
            eof: false,
            offset: 0,
            line: 1,
            record_index: 0,
            unseparated: false,
            record: [b' '; RECORD_LEN],
            bytes_read: 0,
            findings: Vec::new(),
        }
    }

    /// Bytes read from the source so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The position just past the last byte read: where "missing" findings point.
    pub fn end_position(&self) -> RecordPosition {
        RecordPosition {
            record_index: self.record_index,
            line: self.line,
            byte_offset: self.offset,
        }
    }

    /// Framing findings gathered since the last call.
    pub fn take_findings(&mut self) -> Vec<Finding> {
        std::mem::take(&mut self.findings)
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
    pub fn next_record(&mut self) -> io::Result<Option<RawRecord<'_>>> {
        loop {
            self.fill()?;
            if self.start == self.end {
                return Ok(None);
            }
            let pos = self.position();
            if self.frame(pos) == Framed::Record {
                return Ok(Some(self.emit(pos)));
            }
        }
    }

    /// Frames what starts at `buf[start]` into `record`, or skips an empty line.
    fn frame(&mut self, pos: RecordPosition) -> Framed {
        let avail = &self.buf[self.start..self.end];
        let window = &avail[..avail.len().min(RECORD_LEN + 2)];
        let newline = memchr::memchr2(b'\n', b'\r', window);
        // Length of the line's content up to a separator within reach, if any.
        let content_len = newline.unwrap_or(avail.len());
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
            self.findings.push(Finding::warning(
                FindingCode::BlankLine,
                pos,
                None,
                "a 94-byte record",
                "an empty line",
            ));
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

    fn emit(&mut self, pos: RecordPosition) -> RawRecord<'_> {
        self.record_index += 1;
        // All printable (a branch-free pass), else find the first byte that is not.
        let printable = self
            .record
            .iter()
            .fold(true, |ok, &b| ok & (b.wrapping_sub(0x20) < 0x5f));
        if !printable
            && let Some(col) = self
                .record
                .iter()
                .position(|&b| !(0x20..=0x7e).contains(&b))
        {
            self.findings.push(Finding::error(
                FindingCode::NonAsciiByte,
                pos,
                None,
                format!("printable ASCII at column {}", col + 1),
                show(&self.record[col..col + 1]),
            ));
        }
        RawRecord {
            bytes: &self.record,
            position: pos,
        }
    }
}

/// What one framing step gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framed {
    /// A record is in `record`.
    Record,
    /// Nothing yet (an empty line skipped): frame again.
    Nothing,
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
mod tests {
    use super::*;
    use crate::findings::Severity;

    /// Reads `data` through a source that hands out `chunk` bytes at a time.
    struct Trickle<'a> {
        data: &'a [u8],
        chunk: usize,
    }
    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.chunk.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn frame(data: &[u8], chunk: usize) -> (Vec<(Vec<u8>, RecordPosition)>, Vec<Finding>) {
        let mut r = RecordReader::new(Trickle { data, chunk });
        let mut out = Vec::new();
        let mut findings = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            out.push((rec.bytes.to_vec(), rec.position));
            findings.extend(r.take_findings());
        }
        findings.extend(r.take_findings());
        assert_eq!(r.bytes_read(), data.len() as u64);
        (out, findings)
    }

    fn rec(c: u8) -> Vec<u8> {
        let mut v = vec![c; RECORD_LEN];
        v[0] = c;
        v
    }

    #[test]
    fn lf_crlf_cr_and_none_give_the_same_records() {
        let (a, b, c) = (rec(b'1'), rec(b'5'), rec(b'9'));
        for sep in [&b"\n"[..], b"\r\n", b"\r", b""] {
            for trailing in [true, false] {
                let mut data = Vec::new();
                for (i, r) in [&a, &b, &c].iter().enumerate() {
                    data.extend_from_slice(r);
                    if i < 2 || trailing {
                        data.extend_from_slice(sep);
                    }
                }
                for chunk in [1, 7, 95, 4096] {
                    let (recs, findings) = frame(&data, chunk);
                    assert_eq!(recs.len(), 3, "sep {sep:?} chunk {chunk}");
                    assert_eq!(recs[1].0, b);
                    assert!(findings.is_empty(), "{findings:?}");
                    let off = (RECORD_LEN + sep.len()) as u64;
                    assert_eq!(recs[2].1.byte_offset, 2 * off);
                    assert_eq!(recs[2].1.record_index, 2);
                    let line = if sep.is_empty() { 1 } else { 3 };
                    assert_eq!(recs[2].1.line, line);
                }
            }
        }
    }

    #[test]
    fn trimmed_record_is_padded_with_a_warning() {
        let mut data = rec(b'1');
        data.push(b'\n');
        data.extend_from_slice(&b"9000001"[..]);
        data.push(b'\n');
        let (recs, findings) = frame(&data, 3);
        assert_eq!(recs.len(), 2);
        assert_eq!(&recs[1].0[..7], b"9000001");
        assert!(recs[1].0[7..].iter().all(|&b| b == b' '));
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].code, FindingCode::TrimmedRecord);
        assert_eq!(findings[0].severity, Severity::Warning);
        assert_eq!(findings[0].found, "7 bytes");
        assert_eq!(
            findings[0].position,
            RecordPosition {
                record_index: 1,
                line: 2,
                byte_offset: 95
            }
            .into()
        );
    }

    #[test]
    fn long_record_of_trailing_blanks_is_trimmed_with_a_warning() {
        let mut data = rec(b'1');
        data.extend_from_slice(b"    \r\n");
        data.extend_from_slice(&rec(b'5'));
        let (recs, findings) = frame(&data, 5);
        assert_eq!(recs.len(), 2);
        assert_eq!(
            recs[1].1,
            RecordPosition {
                record_index: 1,
                line: 2,
                byte_offset: 100
            }
        );
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].code, FindingCode::LongRecord);
        assert_eq!(findings[0].found, "98 bytes");
    }

    #[test]
    fn unseparated_line_with_extra_byte_is_an_error_at_the_remainder() {
        let mut data = Vec::new();
        data.extend_from_slice(&rec(b'1'));
        data.extend_from_slice(&rec(b'5'));
        data.push(b'X');
        data.push(b'\n');
        let (recs, findings) = frame(&data, 64);
        assert_eq!(recs.len(), 3);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].code, FindingCode::RecordLength);
        assert_eq!(findings[0].severity, Severity::Error);
        assert_eq!(findings[0].found, "1 bytes");
        assert_eq!(
            findings[0].position,
            RecordPosition {
                record_index: 2,
                line: 1,
                byte_offset: 188
            }
            .into()
        );
    }

    #[test]
    fn non_ascii_byte_names_its_column() {
        let mut data = rec(b'6');
        data[44] = 0xE9;
        let (_, findings) = frame(&data, 94);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].code, FindingCode::NonAsciiByte);
        assert_eq!(findings[0].expected, "printable ASCII at column 45");
        assert_eq!(findings[0].found, "\\xe9");
    }

    #[test]
    fn empty_input_gives_no_records() {
        let (recs, findings) = frame(b"", 10);
        assert!(recs.is_empty());
        assert!(findings.is_empty());
    }

    #[test]
    fn blank_lines_are_skipped_with_a_warning() {
        let mut data = rec(b'1');
        data.extend_from_slice(b"\n\n");
        data.extend_from_slice(&rec(b'9'));
        let (recs, findings) = frame(&data, 2);
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].1.line, 3);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].code, FindingCode::BlankLine);
        assert_eq!(findings[0].position.line(), 2);
    }
}
