//! The ISO 20022 walk on every core: the document is cut by transaction.
//!
//! Under the XML reader of [`super::reader::walk`], the [`Cutter`] reads the file ahead in
//! windows and a [`Scanner`] finds in them each transaction (`CdtTrfTxInf`, `TxInf`) where
//! the walk will take it for one (at its depth under a `Document`, or under a `PmtInf`).
//! Worker threads read each transaction's leaves ([`read_transaction`]); the walk reads the
//! rest, with each transaction a worker read standing as an empty element (`<CdtTrfTxInf/>`)
//! whose leaves are the worker's, and whose bytes and lines the reader's counters step over.
//!
//! What keeps the findings the walk's own, at their positions: a worker reads a transaction
//! with the same XML reader, the same configuration and the same rules as the walk (one
//! function of the reader module per rule: attributes, references), and gives up on anything
//! the walk would stop at — a syntax error, a reference it does not resolve, a depth past
//! the limit. A transaction given up on is handed to the walk as written, which reads it
//! and reports what it finds where it is. The scanner follows only well-formed markup and
//! stops cutting, for the rest of the file, at anything else it meets (a DOCTYPE, an
//! unusual comment, an end tag that does not match, the TCH RTP envelope): from there the
//! walk reads everything itself. Input that is not UTF-8 (decoded on the way in) is never
//! cut. The tests compare the cut walk with the sequential one, event by event, on
//! generated, corpus and broken files.
//!
//! Memory: a few windows in flight ([`LOOKAHEAD`] × [`WINDOW`]) and one transaction at most
//! [`TX_CUT_MAX`] long, whatever the file size.

use super::block::LEAVES_PER_BLOCK_MAX;
use super::scan::{Found, Scanner};
use crate::formats::xml::{
    DEPTH_MAX, Piece, Pieces, Pos, REFERENCES, Resolved, read_attributes, resolve_reference,
};
use quick_xml::NsReader;
use quick_xml::events::{BytesStart, Event};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{self, Read};
use std::ops::Range;
use std::rc::Rc;
use std::sync::{Mutex, mpsc};

/// Bytes read ahead per window.
pub(crate) const WINDOW: usize = 64 * 1024;
/// Windows whose transactions are being read while the walk reads the current one.
pub(crate) const LOOKAHEAD: usize = 4;
/// The longest transaction cut out: a longer one is read by the walk (a real one is a few
/// kilobytes; this keeps every event of a cut transaction under the walk's event limit).
pub(crate) const TX_CUT_MAX: usize = 256 * 1024;
/// Bytes the scanner may hold unscanned (an unfinished comment, a tag without end) before
/// it stops cutting and lets the walk read (and refuse) it.
const PENDING_MAX: usize = 2 * 1024 * 1024;

/// One leaf of a transaction read by a worker: its path relative to the transaction, its
/// text, and where its start tag is — the byte offset from the transaction's `<` and the
/// newlines between the two.
pub(crate) type RelLeaf = (String, String, Pos);

/// A transaction a worker read cleanly.
#[derive(Debug, PartialEq)]
pub(crate) struct CutTx {
    /// The qualified name as written (`CdtTrfTxInf`, `p:TxInf`).
    pub qname: String,
    pub leaves: Vec<RelLeaf>,
    /// Newlines in the transaction's bytes.
    pub lines: u64,
}

/// Reads one transaction, `bytes` from its `<` to the end of its end tag, as the walk
/// would, `depth` elements deep. `None` where the walk would stop with a finding, or where
/// the bytes are not exactly one element: the walk then reads them itself.
#[cfg(test)]
pub(crate) fn read_transaction(bytes: &[u8], depth: usize) -> Option<CutTx> {
    TxReader::default().read(bytes, depth)
}

/// One open element of a transaction being read: name, start position, whether a child
/// element was seen, text.
#[derive(Default)]
struct Open {
    name: String,
    pos: Pos,
    had_child: bool,
    text: String,
}

/// Reads the transactions of one job, one after the other, with one XML reader and one
/// set of buffers: the reader is handed each transaction's bytes in turn, as if they were
/// one stream (`buffer_position` goes on counting; positions are taken from where each
/// transaction starts). A transaction given up on leaves the reader in no known state:
/// the next one gets a new reader.
#[derive(Default)]
pub(crate) struct TxReader<'a> {
    reader: Option<NsReader<&'a [u8]>>,
    buf: Vec<u8>,
    /// Open elements; those past `depth` are kept for their buffers.
    frames: Vec<Open>,
}

impl<'a> TxReader<'a> {
    /// [`read_transaction`], reusing this reader's buffers.
    pub(crate) fn read(&mut self, bytes: &'a [u8], depth: usize) -> Option<CutTx> {
        let mut reader = match self.reader.take() {
            Some(mut r) => {
                *r.get_mut() = bytes;
                r
            }
            None => {
                let mut r = NsReader::from_reader(bytes);
                r.config_mut().trim_text(false);
                r.config_mut().expand_empty_elements = true;
                r
            }
        };
        let base = reader.buffer_position();
        let read = self.read_with(&mut reader, base, bytes, depth);
        if read.is_some() {
            self.reader = Some(reader);
        }
        read
    }

    fn read_with(
        &mut self,
        reader: &mut NsReader<&'a [u8]>,
        base: u64,
        bytes: &[u8],
        depth: usize,
    ) -> Option<CutTx> {
        let mut tx = Reading {
            frames: &mut self.frames,
            open: 0,
            leaves: Vec::with_capacity(48),
            qname: String::new(),
            line: 0,
            counted: 0,
        };
        loop {
            self.buf.clear();
            let at = usize::try_from(reader.buffer_position().checked_sub(base)?)
                .ok()?
                .min(bytes.len());
            tx.line += memchr::memchr_iter(b'\n', &bytes[tx.counted..at]).count() as u64;
            tx.counted = at;
            let pos = Pos {
                byte_offset: at as u64,
                line: tx.line,
            };
            match reader.read_event_into(&mut self.buf).ok()? {
                Event::Start(e) => tx.start(&e, pos, depth)?,
                Event::Text(t) => tx.text(&t)?,
                Event::GeneralRef(r) => tx.reference(resolve_reference(&r)?)?,
                Event::CData(t) => tx.frames[..tx.open].last_mut()?.text.push_str(&t),
                Event::End(_) => {
                    tx.end()?;
                    if tx.open == 0 {
                        // The element ends the bytes: nothing after it.
                        if reader.buffer_position() - base != bytes.len() as u64 {
                            return None;
                        }
                        return Some(tx.done(bytes));
                    }
                }
                // Anything before the element, a DOCTYPE, the end of the bytes: not one
                // transaction as the walk reads it.
                Event::DocType(_) | Event::Eof => return None,
                _ if tx.open == 0 => return None,
                _ => {}
            }
        }
    }
}

/// One transaction being read: its open elements (the first `open` of `frames`), its
/// leaves and name so far, and its newlines counted up to byte `counted`. Each step is
/// `None` where the walk would stop with a finding or the bytes are not one element.
struct Reading<'f> {
    frames: &'f mut Vec<Open>,
    open: usize,
    leaves: Vec<RelLeaf>,
    qname: String,
    line: u64,
    counted: usize,
}

impl Reading<'_> {
    fn start(&mut self, e: &BytesStart<'_>, pos: Pos, depth: usize) -> Option<()> {
        if depth + self.open >= DEPTH_MAX {
            return None;
        }
        if self.open == 0 {
            if pos.byte_offset != 0 {
                return None;
            }
            self.qname.push_str(e.name().as_ref());
        } else {
            self.frames[self.open - 1].had_child = true;
        }
        if self.open == self.frames.len() {
            self.frames.push(Open::default());
        }
        let f = &mut self.frames[self.open];
        f.name.clear();
        f.name.push_str(e.local_name().as_ref());
        f.pos = pos;
        f.had_child = false;
        f.text.clear();
        self.open += 1;
        let (frames, open, leaves) = (&*self.frames, self.open, &mut self.leaves);
        let refused = read_attributes(e, pos, &String::new, &mut |key, value| {
            if leaves.len() < LEAVES_PER_BLOCK_MAX {
                leaves.push((rel_path(frames, open, &format!("@{key}")), value, pos));
            }
        });
        refused.is_none().then_some(())
    }

    /// As the walk: whitespace before a leaf's text or between elements is not kept.
    fn text(&mut self, t: &str) -> Option<()> {
        let f = self.frames[..self.open].last_mut()?;
        let blank = f.text.is_empty() && t.bytes().all(|b| b.is_ascii_whitespace());
        if !f.had_child && !blank {
            f.text.push_str(t);
        }
        Some(())
    }

    fn reference(&mut self, resolved: Resolved) -> Option<()> {
        let f = self.frames[..self.open].last_mut()?;
        if !f.had_child {
            match resolved {
                Resolved::Char(c) => f.text.push(c),
                Resolved::Entity(s) => f.text.push_str(s),
            }
        }
        Some(())
    }

    /// An end tag: a leaf's text kept.
    fn end(&mut self) -> Option<()> {
        let f = self.frames[..self.open].last()?;
        if !f.had_child && self.leaves.len() < LEAVES_PER_BLOCK_MAX {
            let path = rel_path(self.frames, self.open, "");
            self.leaves.push((path, f.text.trim().to_string(), f.pos));
        }
        self.open -= 1;
        Some(())
    }

    /// The transaction read, its last newlines counted.
    fn done(self, bytes: &[u8]) -> CutTx {
        let line = self.line + memchr::memchr_iter(b'\n', &bytes[self.counted..]).count() as u64;
        CutTx {
            qname: self.qname,
            leaves: self.leaves,
            lines: line,
        }
    }
}

/// The path of the first `open` frames below the transaction's, ending in `suffix`.
fn rel_path(frames: &[Open], open: usize, suffix: &str) -> String {
    let mut p = String::with_capacity(48);
    for (i, f) in frames[1..open].iter().enumerate() {
        if i > 0 {
            p.push('/');
        }
        p.push_str(&f.name);
    }
    p.push_str(suffix);
    p
}

// `REFERENCES` is what the walk says of a reference it does not resolve; a worker gives
// up there instead, so it only names the rule it shares.
const _: &str = REFERENCES;

/// Transactions of one window, sent to a worker.
pub(crate) struct Job {
    bytes: Vec<u8>,
    txs: Vec<(Range<usize>, usize)>,
    reply: mpsc::SyncSender<Done>,
}

/// A window's transactions as the workers read them.
struct Done {
    bytes: Vec<u8>,
    txs: Vec<(Range<usize>, Option<CutTx>)>,
}

/// Reads jobs from `jobs` until it closes.
pub(crate) fn work(jobs: &Mutex<mpsc::Receiver<Job>>) {
    loop {
        let job = jobs.lock().map(|rx| rx.recv());
        let Ok(Ok(Job { bytes, txs, reply })) = job else {
            return;
        };
        let mut reader = TxReader::default();
        let txs = txs
            .into_iter()
            .map(|(range, depth)| {
                let tx = &bytes[range.clone()];
                // A worker that panicked reads nothing: the walk reads that transaction.
                let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    reader.read(tx, depth)
                }));
                if read.is_err() {
                    reader = TxReader::default();
                }
                (range, read.ok().flatten())
            })
            .collect();
        if reply.send(Done { bytes, txs }).is_err() {
            return;
        }
    }
}

/// What the reader hands the XML reader next (its bytes written to the buffer given).
pub(crate) enum Next {
    /// The end of the input.
    End,
    /// Bytes as written.
    Raw,
    /// Bytes as written, then the empty element standing for a transaction a worker read:
    /// the transaction, and how many of its bytes the buffer does not hold.
    Cut { beyond: u64, tx: CutTx },
}

enum Pending {
    /// That many bytes of `raw`.
    Raw(usize),
    /// That many bytes of `raw`, then the `index`th transaction of job `seq`.
    Tx { raw: usize, seq: u64, index: usize },
}

/// Transactions read ahead by workers, queued by the offset of their `<` as the XML
/// reader meets their placeholders; the walk takes each at its start tag.
#[derive(Default)]
pub(crate) struct ReadAhead {
    pub queue: VecDeque<(u64, CutTx)>,
    /// Transactions queued in all.
    pub count: u64,
}

/// The [`Cutter`] as the source of the XML reader's pieces: each transaction a worker
/// read is queued in `ahead` for the walk, its bytes and lines stepped over.
pub(crate) struct CutPieces {
    pub cutter: Cutter,
    pub ahead: Rc<RefCell<ReadAhead>>,
}

impl Pieces for CutPieces {
    fn next_piece(
        &mut self,
        inner: &mut dyn Read,
        out: &mut Vec<u8>,
        offset: u64,
    ) -> io::Result<Piece> {
        Ok(match self.cutter.next_piece(inner, out)? {
            Next::End => Piece::End,
            Next::Raw => Piece::Bytes,
            Next::Cut { beyond, tx } => {
                // The transaction's `<` is where the buffer's placeholder starts.
                let at = offset + (out.len() as u64 - tx.qname.len() as u64 - 3);
                let lines = tx.lines;
                let mut ahead = self.ahead.borrow_mut();
                ahead.count += 1;
                ahead.queue.push_back((at, tx));
                Piece::Standing {
                    bytes: beyond,
                    lines,
                }
            }
        })
    }
}

/// Reads the input ahead, cuts out its transactions for the workers and hands the XML
/// reader its pieces in order. The first transaction a worker gives up is handed on as
/// written, and so is everything after it (what was queued included): the scanner's
/// reading of the markup is trusted only while every worker agrees with it. Its buffers are kept and reused: fresh memory costs a page
/// fault per page (and a cleared huge page), more than the copy.
pub(crate) struct Cutter {
    jobs: mpsc::Sender<Job>,
    scanner: Scanner,
    window: usize,
    lookahead: usize,
    /// Bytes read and not yet handed on; byte 0 is at `carry_at` in the input.
    carry: Vec<u8>,
    carry_at: u64,
    scan_at: usize,
    found: Vec<Found>,
    pending: VecDeque<Pending>,
    /// The bytes as written that `pending` hands on, from `raw_at`.
    raw: Vec<u8>,
    raw_at: usize,
    waiting: VecDeque<(u64, mpsc::Receiver<Done>)>,
    current: Option<(u64, Done)>,
    /// Jobs' byte buffers back from the workers, for the next jobs.
    spare: Vec<Vec<u8>>,
    next_seq: u64,
    eof: bool,
    /// A worker gave a transaction up: from there on nothing is cut (see [`Cutter`]).
    verbatim: bool,
}

impl Cutter {
    pub(crate) fn new(jobs: mpsc::Sender<Job>, window: usize, lookahead: usize) -> Self {
        Cutter {
            jobs,
            scanner: Scanner::default(),
            window: window.max(1),
            lookahead: lookahead.max(1),
            carry: Vec::new(),
            carry_at: 0,
            scan_at: 0,
            found: Vec::new(),
            pending: VecDeque::new(),
            raw: Vec::new(),
            raw_at: 0,
            waiting: VecDeque::new(),
            current: None,
            spare: Vec::new(),
            next_seq: 0,
            eof: false,
            verbatim: false,
        }
    }

    /// Writes the next piece to `out` (cleared first).
    pub(crate) fn next_piece(
        &mut self,
        inner: &mut dyn Read,
        out: &mut Vec<u8>,
    ) -> io::Result<Next> {
        out.clear();
        loop {
            // Read ahead: `lookahead` windows of transactions, or of bytes as written (a
            // file with nothing to cut is not read whole into memory).
            while !self.eof
                && self.waiting.len() < self.lookahead
                && self.raw.len() - self.raw_at < self.lookahead * self.window
            {
                self.fill(inner)?;
            }
            match self.pending.pop_front() {
                Some(Pending::Raw(n)) => {
                    self.take_raw(n, out);
                    return Ok(Next::Raw);
                }
                Some(Pending::Tx { raw, seq, index }) => {
                    self.take_raw(raw, out);
                    return self.transaction(seq, index, out);
                }
                None if self.eof => return Ok(Next::End),
                None => self.fill(inner)?,
            }
        }
    }

    fn take_raw(&mut self, n: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.raw[self.raw_at..self.raw_at + n]);
        self.raw_at += n;
        if self.raw_at == self.raw.len() {
            self.raw.clear();
            self.raw_at = 0;
        }
    }

    fn transaction(&mut self, seq: u64, index: usize, out: &mut Vec<u8>) -> io::Result<Next> {
        let stopped = || io::Error::other("an XML reading thread stopped");
        while self.current.as_ref().is_none_or(|(s, _)| *s != seq) {
            let (s, rx) = self.waiting.pop_front().ok_or_else(stopped)?;
            let done = rx.recv().map_err(|_| stopped())?;
            if let Some((_, old)) = self.current.replace((s, done))
                && self.spare.len() <= self.lookahead
            {
                self.spare.push(old.bytes);
            }
        }
        let Some((range, read)) = self
            .current
            .as_mut()
            .and_then(|(_, done)| done.txs.get_mut(index))
        else {
            return Err(io::Error::other("no transaction read ahead"));
        };
        // Once one is given up, none is cut: the scanner may have misread the markup there
        // (it takes the first end tag of the name for the transaction's end), so the walk
        // reads the rest of the file itself.
        let read = read.take().filter(|_| !self.verbatim);
        if read.is_none() && !self.verbatim {
            self.verbatim = true;
            self.scanner.stop();
        }
        Ok(match read {
            Some(tx) => {
                out.push(b'<');
                out.extend_from_slice(tx.qname.as_bytes());
                out.extend_from_slice(b"/>");
                let placeholder = tx.qname.len() as u64 + 3;
                Next::Cut {
                    beyond: (range.len() as u64).saturating_sub(placeholder),
                    tx,
                }
            }
            None => {
                let range = range.clone();
                if let Some((_, done)) = self.current.as_ref() {
                    out.extend_from_slice(&done.bytes[range]);
                }
                Next::Raw
            }
        })
    }

    /// Reads one window, scans it, and queues its pieces (and its transactions' job).
    fn fill(&mut self, inner: &mut dyn Read) -> io::Result<()> {
        let old = self.carry.len();
        self.carry.resize(old + self.window, 0);
        let n = loop {
            match inner.read(&mut self.carry[old..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.carry.truncate(old);
                    return Err(e);
                }
                Ok(n) => break n,
            }
        };
        self.carry.truncate(old + n);
        self.eof = n == 0;
        self.found.clear();
        self.scanner.scan(
            &self.carry,
            self.carry_at,
            &mut self.scan_at,
            &mut self.found,
        );
        if !self.eof && self.carry.len() - self.scan_at > PENDING_MAX {
            self.scanner.stop();
        }
        // What can be handed on: all at the end or once stopped; else up to the
        // transaction being scanned, or to where the scan resumes.
        let keep_from = if self.eof || self.scanner.stopped() {
            self.carry.len()
        } else {
            match self.scanner.open_transaction() {
                Some(s) => (s - self.carry_at) as usize,
                None => self.scan_at,
            }
        };
        let at = self.queue_found()?;
        if keep_from > at {
            self.raw.extend_from_slice(&self.carry[at..keep_from]);
            self.pending.push_back(Pending::Raw(keep_from - at));
        }
        let keep_from = keep_from.max(at);
        self.carry.drain(..keep_from);
        self.carry_at += keep_from as u64;
        self.scan_at = self.scan_at.saturating_sub(keep_from);
        Ok(())
    }

    /// Queues the transactions found in the window, and the bytes as written before each,
    /// and sends them to a worker as one job; the index in `carry` after the last.
    fn queue_found(&mut self) -> io::Result<usize> {
        let rel = |abs: u64| (abs - self.carry_at) as usize;
        let mut at = 0;
        if let (Some(first), Some(last)) = (self.found.first(), self.found.last()) {
            let (from, to) = (rel(first.start), rel(last.end));
            let seq = self.next_seq;
            self.next_seq += 1;
            let mut txs = Vec::with_capacity(self.found.len());
            for (index, f) in self.found.iter().enumerate() {
                let (s, e) = (rel(f.start), rel(f.end));
                self.raw.extend_from_slice(&self.carry[at..s]);
                self.pending.push_back(Pending::Tx {
                    raw: s - at,
                    seq,
                    index,
                });
                txs.push((s - from..e - from, f.depth));
                at = e;
            }
            let mut bytes = self.spare.pop().unwrap_or_default();
            bytes.clear();
            bytes.extend_from_slice(&self.carry[from..to]);
            let (reply, rx) = mpsc::sync_channel(1);
            self.jobs
                .send(Job { bytes, txs, reply })
                .map_err(|_| io::Error::other("an XML reading thread stopped"))?;
            self.waiting.push_back((seq, rx));
        }
        Ok(at)
    }
}

#[cfg(test)]
mod tests {
    use super::super::reader::{CutPlan, WalkEvent, walk_with};
    use super::*;
    use std::io::BufReader;

    /// Everything a walk reports, written out, and how many transactions workers read.
    fn events(xml: &[u8], plan: Option<CutPlan>, chunk: usize) -> (Vec<String>, u64) {
        let mut out = Vec::new();
        let end = walk_with(BufReader::with_capacity(chunk, xml), plan, &mut |ev| {
            out.push(match ev {
                WalkEvent::Document {
                    namespace,
                    path,
                    pos,
                } => format!("document {namespace} {path} {pos:?}"),
                WalkEvent::Block {
                    kind,
                    block,
                    payment_info,
                } => format!(
                    "block {kind:?} {block:?} under {:?}",
                    payment_info.map(|p| &p.path)
                ),
                WalkEvent::PaymentInfoEnd(b) => format!("payment info end {b:?}"),
                WalkEvent::DocumentEnd => "document end".to_string(),
                WalkEvent::Warning(f) => format!("warning {f:?}"),
            })
        })
        .unwrap();
        out.push(format!(
            "end at byte {} line {}: {:?}",
            end.bytes, end.lines, end.fatal
        ));
        (out, end.cut)
    }

    fn plan(workers: usize, window: usize, lookahead: usize) -> Option<CutPlan> {
        Some(CutPlan {
            workers,
            window,
            lookahead,
        })
    }

    fn pacs008(transactions: u64) -> Vec<u8> {
        let mut out = Vec::new();
        super::super::generate::write_pacs008(&mut out, transactions, 7).unwrap();
        out
    }

    /// The cut walk against the walk in order: the same events, the same end; the cut
    /// count is returned.
    fn same(xml: &[u8], plan: Option<CutPlan>) -> u64 {
        let (want, none) = events(xml, None, 1 << 16);
        assert_eq!(none, 0);
        let (got, cut) = events(xml, plan, 1 << 16);
        assert_eq!(
            got.len(),
            want.len(),
            "{plan:?}: {}",
            String::from_utf8_lossy(xml)
        );
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g, w, "{plan:?}");
        }
        cut
    }

    #[test]
    fn every_transaction_is_cut_and_read_as_the_walk_reads_it() {
        let xml = pacs008(40);
        for workers in [1, 2, 3] {
            for (window, lookahead) in [(1, 1), (7, 2), (100, 1), (4096, 3), (WINDOW, LOOKAHEAD)] {
                let cut = same(&xml, plan(workers, window, lookahead));
                assert_eq!(cut, 40, "{workers} workers, {window}-byte windows");
            }
        }
        // Read through small buffers below, too.
        let (want, _) = events(&xml, None, 1 << 16);
        for chunk in [1, 5, 64] {
            assert_eq!(events(&xml, plan(2, 512, 2), chunk), (want.clone(), 40));
        }
    }

    #[test]
    fn corpus_payment_files_read_alike_cut_or_not() {
        let root = crate::test_support::corpus_dir().join("iso20022");
        let mut files = 0;
        let mut cut = 0;
        for dir in std::fs::read_dir(&root).unwrap() {
            let dir = dir.unwrap().path();
            for f in std::fs::read_dir(&dir).unwrap() {
                let f = f.unwrap().path();
                if f.extension().is_some_and(|e| e == "xml") {
                    let xml = std::fs::read(&f).unwrap();
                    for window in [13, 4096] {
                        cut += same(&xml, plan(2, window, 2));
                    }
                    files += 1;
                }
            }
        }
        assert!(files >= 20, "{files} corpus files");
        // The pain.001 and pacs.008 files of the corpus hold transactions to cut.
        assert!(cut >= 8, "{cut} transactions cut");
    }

    /// The third transaction of a five-transaction file with `edit` applied to it.
    fn edited(edit: impl Fn(&str) -> String) -> Vec<u8> {
        let xml = String::from_utf8(pacs008(5)).unwrap();
        let starts: Vec<usize> = xml.match_indices("<CdtTrfTxInf>").map(|(i, _)| i).collect();
        let end = xml[starts[2]..].find("</CdtTrfTxInf>").unwrap() + starts[2] + 14;
        format!(
            "{}{}{}",
            &xml[..starts[2]],
            edit(&xml[starts[2]..end]),
            &xml[end..]
        )
        .into_bytes()
    }

    #[test]
    fn a_transaction_a_worker_cannot_read_is_the_walks_to_read() {
        type Edit = Box<dyn Fn(&str) -> String>;
        let cases: Vec<(&str, Edit)> = vec![
            (
                "comment hiding an end tag",
                Box::new(|t| t.replacen("<PmtId>", "<!-- </CdtTrfTxInf> --><PmtId>", 1)),
            ),
            (
                "CDATA hiding an end tag",
                Box::new(|t| t.replacen("<InstrId>", "<InstrId><![CDATA[</CdtTrfTxInf>]]>", 1)),
            ),
            (
                "attribute value holding tags",
                Box::new(|t| t.replacen("<PmtId>", "<PmtId a=\"</CdtTrfTxInf><CdtTrfTxInf>\">", 1)),
            ),
            (
                "attribute value holding >",
                Box::new(|t| t.replacen("<PmtId>", "<PmtId a=\">\" b='x>y'>", 1)),
            ),
            (
                "text holding >",
                Box::new(|t| t.replacen("<InstrId>", "<InstrId>a > b", 1)),
            ),
            (
                "processing instruction",
                Box::new(|t| t.replacen("<PmtId>", "<?x </CdtTrfTxInf> ?><PmtId>", 1)),
            ),
            (
                "nested transaction",
                Box::new(|t| {
                    t.replacen("<PmtId>", "<CdtTrfTxInf><X>1</X></CdtTrfTxInf><PmtId>", 1)
                }),
            ),
            (
                "unknown entity",
                Box::new(|t| t.replacen("<InstrId>", "<InstrId>&bad;", 1)),
            ),
            (
                "forbidden character reference",
                Box::new(|t| t.replacen("<InstrId>", "<InstrId>&#0;", 1)),
            ),
            (
                "duplicate attribute",
                Box::new(|t| t.replacen("Ccy=\"EUR\"", "Ccy=\"EUR\" Ccy=\"USD\"", 1)),
            ),
            (
                "unquoted attribute",
                Box::new(|t| t.replacen("Ccy=\"EUR\"", "Ccy=EUR", 1)),
            ),
            (
                "mismatched end tag",
                Box::new(|t| t.replacen("</PmtId>", "</PmtIdX>", 1)),
            ),
            (
                "end tag with spaces",
                Box::new(|t| t.replacen("</CdtTrfTxInf>", "</CdtTrfTxInf \n >", 1)),
            ),
            (
                "start tag with attributes",
                Box::new(|t| {
                    t.replacen(
                        "<CdtTrfTxInf>",
                        "<CdtTrfTxInf\n x=\"1\" xmlns:p=\"urn:p\">",
                        1,
                    )
                }),
            ),
            (
                "prefixed",
                Box::new(|t| {
                    t.replace("CdtTrfTxInf>", "p:CdtTrfTxInf>").replacen(
                        "<p:CdtTrfTxInf>",
                        "<p:CdtTrfTxInf xmlns:p=\"urn:p\">",
                        1,
                    )
                }),
            ),
            ("self-closing", Box::new(|_| "<CdtTrfTxInf/>".to_string())),
            (
                "text only",
                Box::new(|_| "<CdtTrfTxInf> x &amp; y </CdtTrfTxInf>".to_string()),
            ),
            (
                "deep",
                Box::new(|t| {
                    t.replacen(
                        "<PmtId>",
                        &format!("{}{}<PmtId>", "<a>".repeat(70), "</a>".repeat(70)),
                        1,
                    )
                }),
            ),
            (
                "invalid UTF-8",
                Box::new(|t| t.replacen("<InstrId>", "<InstrId>\u{FFFD}", 1)),
            ),
            (
                "doctype inside",
                Box::new(|t| t.replacen("<PmtId>", "<!DOCTYPE x><PmtId>", 1)),
            ),
            (
                "unclosed",
                Box::new(|t| t.replacen("</CdtTrfTxInf>", "", 1)),
            ),
        ];
        for (what, edit) in &cases {
            let mut xml = edited(edit);
            if *what == "invalid UTF-8" {
                let at = xml
                    .windows(3)
                    .position(|w| w == "\u{FFFD}".as_bytes())
                    .unwrap();
                xml[at] = 0xFF;
            }
            for (window, lookahead) in [(64, 2), (4096, 1), (WINDOW, LOOKAHEAD)] {
                let cut = same(&xml, plan(2, window, lookahead));
                // What precedes the edited transaction is cut at least.
                assert!(cut >= 2, "{what}: {cut} cut");
            }
        }
    }

    #[test]
    fn broken_files_read_alike_cut_or_not() {
        let xml = pacs008(3);
        // Cut short anywhere; a byte of markup put anywhere.
        for at in (0..xml.len()).step_by(7) {
            same(&xml[..at], plan(2, 256, 2));
            for b in [b'<', b'>', b'"', b'&', b'/', b'!', b'?', b'\n'] {
                let mut x = xml.clone();
                x[at] = b;
                same(&x, plan(2, 256, 2));
            }
        }
        // Markup the scanner does not follow: it stops cutting there.
        let text = String::from_utf8(xml).unwrap();
        for (from, to) in [
            ("<Document", "<!DOCTYPE d [<!ENTITY e \"x\">]><Document"),
            ("<FIToFICstmrCdtTrf>", "<FIToFICstmrCdtTrf><!-->"),
            ("<FIToFICstmrCdtTrf>", "<FIToFICstmrCdtTrf><?>"),
            ("<FIToFICstmrCdtTrf>", "<FIToFICstmrCdtTrf><!-- - --->"),
        ] {
            same(text.replacen(from, to, 1).as_bytes(), plan(2, 64, 2));
        }
    }

    #[test]
    fn a_worker_reads_leaves_with_their_positions_or_gives_up() {
        let tx = b"<CdtTrfTxInf a=\"1\">\n <PmtId><EndToEndId>E &amp; 2</EndToEndId></PmtId>\n <Amt Ccy=\"EUR\">1.00</Amt></CdtTrfTxInf>";
        let read = read_transaction(tx, 2).unwrap();
        let leaves: Vec<(&str, &str, u64, u64)> = read
            .leaves
            .iter()
            .map(|(p, v, pos)| (p.as_str(), v.as_str(), pos.byte_offset, pos.line))
            .collect();
        assert_eq!(
            leaves,
            [
                ("@a", "1", 0, 0),
                ("PmtId/EndToEndId", "E & 2", 28, 1),
                ("Amt@Ccy", "EUR", 72, 2),
                ("Amt", "1.00", 72, 2),
            ]
        );
        assert_eq!((read.qname.as_str(), read.lines), ("CdtTrfTxInf", 2));
        // Not one element, or what the walk stops at: given up.
        for bad in [
            &b"<CdtTrfTxInf></CdtTrfTxInf><X/>"[..],
            b" <CdtTrfTxInf></CdtTrfTxInf>",
            b"<CdtTrfTxInf><A>&nbsp;</A></CdtTrfTxInf>",
            b"<CdtTrfTxInf><A></B></CdtTrfTxInf>",
            b"<CdtTrfTxInf>",
        ] {
            assert_eq!(
                read_transaction(bad, 2),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(read_transaction(b"<CdtTrfTxInf><A/></CdtTrfTxInf>", DEPTH_MAX - 2).is_some());
        assert_eq!(
            read_transaction(b"<CdtTrfTxInf><A/></CdtTrfTxInf>", DEPTH_MAX - 1),
            None
        );
    }
}
