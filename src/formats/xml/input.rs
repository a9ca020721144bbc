//! The input as the XML reader reads it: its encoding sniffed and decoded to UTF-8
//! ([`super::decode`]), behind a guard that counts bytes and lines and refuses an event
//! longer than [`EVENT_BYTES_MAX`].

use super::decode::{Decoder, Encoding, HEAD_BYTES_MAX, READ, Sniffed, sniff};
use super::{EVENT_BYTES_MAX, Pos};
use crate::findings::{Finding, FindingCode};
use quick_xml::NsReader;
use std::cell::Cell;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

/// The input as the XML reader sees it: UTF-8 as read, or decoded to UTF-8.
pub(crate) enum Input<R> {
    Plain(R),
    Decoded(Decoder<R>),
}

impl<R: BufRead> io::Read for Input<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::Plain(r) => r.read(out),
            Input::Decoded(r) => r.read(out),
        }
    }
}

impl<R: BufRead> BufRead for Input<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            Input::Plain(r) => r.fill_buf(),
            Input::Decoded(r) => r.fill_buf(),
        }
    }
    fn consume(&mut self, amt: usize) {
        match self {
            Input::Plain(r) => r.consume(amt),
            Input::Decoded(r) => r.consume(amt),
        }
    }
}

/// What a [`Pieces`] source wrote for the XML reader.
pub(crate) enum Piece {
    /// The end of the input.
    End,
    /// Bytes as written.
    Bytes,
    /// Bytes that stand for more of the input than they hold: that many bytes and
    /// newlines more, counted once the piece is consumed.
    Standing { bytes: u64, lines: u64 },
}

/// A reader of the input that hands the XML reader its bytes in pieces of its own making
/// (the ISO 20022 payment walk, cut by transaction: `super::super::iso20022::cut`). It
/// reads UTF-8 as written: decoded input is never handed to one.
pub(crate) trait Pieces {
    /// Writes the next piece to `out` (cleared first), reading `inner`; `offset` is the
    /// input offset of the piece's first byte.
    fn next_piece(
        &mut self,
        inner: &mut dyn Read,
        out: &mut Vec<u8>,
        offset: u64,
    ) -> io::Result<Piece>;
}

/// Counts consumed bytes (per event and in all) and lines. It keeps its own buffer,
/// filled by one `read` of the layers below (decoding, the hash, the file) per
/// [`GUARD_BUFFER`] bytes: quick-xml asks for the buffer several times an event, and each
/// ask would otherwise go down every layer.
pub(crate) struct Guard<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    since_reset: Rc<Cell<u64>>,
    /// Set when an event outgrew [`EVENT_BYTES_MAX`]: the walk reports a size limit, not
    /// a syntax error (quick-xml wraps the I/O error it gets).
    over_limit: Rc<Cell<bool>>,
    lines: Rc<Cell<u64>>,
    /// Bytes consumed: the file offset of what the XML reader reads next (a BOM included,
    /// which quick-xml's own position may or may not count depending on read sizes).
    consumed: Rc<Cell<u64>>,
    total: u64,
    /// What hands out the input in pieces, if not the input itself, and what the piece in
    /// the buffer stands for beyond its own bytes (bytes, newlines), counted once it is
    /// consumed.
    pieces: Option<Box<dyn Pieces>>,
    jump: Option<(u64, u64)>,
}

impl<R> Guard<R> {
    /// Bytes consumed in all.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }
}

impl<R: BufRead> io::Read for Guard<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        super::decode::read_through(self, out)
    }
}

/// The size of [`Guard`]'s buffer.
const GUARD_BUFFER: usize = 64 * 1024;

impl<R: BufRead> BufRead for Guard<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.since_reset.get() > EVENT_BYTES_MAX {
            self.over_limit.set(true);
            return Err(io::Error::other(format!(
                "an XML event longer than {EVENT_BYTES_MAX} bytes"
            )));
        }
        if self.pos == self.end
            && let Some(pieces) = self.pieces.as_mut()
        {
            self.pos = 0;
            self.end = 0;
            while self.end == 0 {
                match pieces.next_piece(&mut self.inner, &mut self.buf, self.total)? {
                    Piece::End => break,
                    Piece::Bytes => {}
                    Piece::Standing { bytes, lines } => self.jump = Some((bytes, lines)),
                }
                self.end = self.buf.len();
            }
        } else if self.pos == self.end {
            self.end = loop {
                match io::Read::read(&mut self.inner, &mut self.buf) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    r => break r?,
                }
            };
            self.pos = 0;
        }
        Ok(&self.buf[self.pos..self.end])
    }
    fn consume(&mut self, amt: usize) {
        let amt = amt.min(self.end - self.pos);
        let b = &self.buf[self.pos..self.pos + amt];
        self.lines
            .set(self.lines.get() + memchr::memchr_iter(b'\n', b).count() as u64);
        self.pos += amt;
        self.since_reset.set(self.since_reset.get() + amt as u64);
        self.total += amt as u64;
        if self.pos == self.end
            && let Some((bytes, lines)) = self.jump.take()
        {
            self.total += bytes;
            self.lines.set(self.lines.get() + lines);
        }
        self.consumed.set(self.total);
    }
}

/// The XML reader every ISO 20022 walk drives (payments in `super::super::iso20022`,
/// statements in `super::super::camt`): the input decoded to UTF-8, behind the guard that
/// counts lines and bytes and refuses an event longer than [`EVENT_BYTES_MAX`].
pub(crate) type XmlReader<R> = NsReader<Guard<Input<io::Chain<io::Cursor<Vec<u8>>, R>>>>;

/// A document opened for a walk: the reader and the guard's counters.
pub(crate) struct Opened<R> {
    pub reader: XmlReader<R>,
    /// Bytes consumed since the counter was last reset (set it to 0 before each event).
    pub since: Rc<Cell<u64>>,
    /// 1-based line of the next byte.
    pub lines: Rc<Cell<u64>>,
    /// Bytes consumed: the file offset of the next event.
    pub consumed: Rc<Cell<u64>>,
    /// Set when an event outgrew [`EVENT_BYTES_MAX`].
    pub over_limit: Rc<Cell<bool>>,
}

/// A document whose walk cannot start (an encoding not read): the bytes looked at (all on
/// line 1) and the finding that says why.
pub(crate) struct Unopened {
    pub bytes: u64,
    pub fatal: Finding,
}

/// Opens `source` for a walk: its encoding from the byte-order mark or the declaration
/// (a contradiction is passed to `on_warning`), decoded to UTF-8 when it is not, behind
/// the guard. `Err` is a walk that cannot start (an encoding not read).
///
/// With `pieces`, input in UTF-8 is read through them ([`Pieces`]); other input is read
/// as it comes.
pub(crate) fn open<R: BufRead>(
    mut source: R,
    on_warning: &mut dyn FnMut(Finding),
    pieces: Option<Box<dyn Pieces>>,
) -> io::Result<Result<Opened<R>, Unopened>> {
    let head = read_head(&mut source)?;
    let encoding = match encoding_of(&head, on_warning) {
        Ok(encoding) => encoding,
        Err(label) => {
            return Ok(Err(Unopened {
                bytes: head.len() as u64,
                fatal: Finding::error(
                    FindingCode::UnsupportedFormat,
                    Pos::default().at("/"),
                    None,
                    READ,
                    format!("XML declaring encoding=\"{label}\""),
                ),
            }));
        }
    };
    let source = io::Cursor::new(head).chain(source);
    let pieces = pieces.filter(|_| encoding == Encoding::Utf8);
    let source = match encoding {
        Encoding::Utf8 => Input::Plain(source),
        other => Input::Decoded(Decoder::new(source, other)),
    };
    let guard = Guard::new(source, pieces);
    let opened = Opened {
        since: guard.since_reset.clone(),
        lines: guard.lines.clone(),
        consumed: guard.consumed.clone(),
        over_limit: guard.over_limit.clone(),
        reader: NsReader::from_reader(guard),
    };
    Ok(Ok(configured(opened)))
}

impl<R> Guard<R> {
    fn new(inner: R, pieces: Option<Box<dyn Pieces>>) -> Self {
        Guard {
            inner,
            buf: if pieces.is_some() {
                Vec::new()
            } else {
                vec![0; GUARD_BUFFER]
            },
            pos: 0,
            end: 0,
            since_reset: Rc::new(Cell::new(0u64)),
            over_limit: Rc::new(Cell::new(false)),
            lines: Rc::new(Cell::new(1u64)),
            consumed: Rc::new(Cell::new(0u64)),
            total: 0,
            pieces,
            jump: None,
        }
    }
}

/// The reader configured for a walk.
fn configured<R: BufRead>(mut opened: Opened<R>) -> Opened<R> {
    // Whitespace is kept and trimmed per leaf: quick-xml's own trimming makes event
    // positions depend on read sizes.
    opened.reader.config_mut().trim_text(false);
    opened.reader.config_mut().expand_empty_elements = true;
    opened
}

/// The start of the input, for its encoding: up to the first `>` and the byte after it
/// (the rest of a UTF-16 code unit), at most [`HEAD_BYTES_MAX`] bytes.
fn read_head(source: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(256);
    while head.len() < HEAD_BYTES_MAX {
        let buf = source.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let n = buf.len().min(HEAD_BYTES_MAX - head.len());
        head.extend_from_slice(&buf[..n]);
        source.consume(n);
        if memchr::memchr(b'>', &head).is_some_and(|i| head.len() > i + 1) {
            break;
        }
    }
    Ok(head)
}

/// The encoding `head` says the document is in (a byte-order mark the declaration
/// contradicts passed to `on_warning`); `Err`, the declared name of an encoding not read.
fn encoding_of(head: &[u8], on_warning: &mut dyn FnMut(Finding)) -> Result<Encoding, String> {
    // Sniffed up to the first `>` whatever was read beyond it, so that the answer does not
    // depend on how the input arrived (a pipe's short reads).
    let upto = memchr::memchr(b'>', head).map_or(head.len(), |i| (i + 2).min(head.len()));
    match sniff(&head[..upto]) {
        Ok(Sniffed {
            encoding,
            contradicted,
        }) => {
            if let Some((mark, label)) = contradicted {
                on_warning(Finding::warning(
                    FindingCode::EncodingMismatch,
                    Pos {
                        byte_offset: 0,
                        line: 1,
                    }
                    .at("/"),
                    None,
                    format!("an XML declaration agreeing with the {mark} byte-order mark"),
                    format!(
                        "encoding=\"{label}\" after a {mark} byte-order mark (read as {mark}, \
                         as the mark says)"
                    ),
                ));
            }
            Ok(encoding)
        }
        Err(label) => Err(label),
    }
}
