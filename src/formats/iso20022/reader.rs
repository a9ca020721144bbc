//! Streaming XML walk with quick-xml: one reused buffer, bounded depth and event size,
//! DOCTYPE refused. It cuts the document into *blocks* — the group header, each payment
//! information (pain.001) and each transaction — and hands each block over as a flat list
//! of leaves (relative path → text) with their positions, as soon as the block ends.

use super::cut::{CutTx, Cutter, Next};
use super::decode::{Decoder, Encoding, HEAD_BYTES_MAX, READ, Sniffed, sniff};
use crate::findings::{Finding, FindingCode, XmlPosition};
use quick_xml::NsReader;
use quick_xml::escape::{resolve_xml_entity, unescape_with};
use quick_xml::events::{BytesRef, Event};
use quick_xml::name::ResolveResult;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io::{self, BufRead, Read};
use std::rc::Rc;
use std::sync::{Mutex, mpsc};

/// The namespace of the TCH RTP envelope (`<Message xmlns="urn:tch">`).
pub const RTP_NAMESPACE: &str = "urn:tch";
/// Deepest element nesting accepted; ISO 20022 messages stay well under 20.
pub const DEPTH_MAX: usize = 64;
/// Largest single XML event (a start tag, a text node): 1 MiB. A text node of 10 MB or a
/// tag without end is refused before it fills memory.
pub const EVENT_BYTES_MAX: u64 = 1 << 20;
/// Leaves kept per block: a transaction has a few dozen.
pub const LEAVES_PER_BLOCK_MAX: usize = 10_000;

/// Where a block or a leaf sits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pos {
    pub byte_offset: u64,
    pub line: u64,
}

impl Pos {
    /// The position of element `path` starting here.
    pub fn at(&self, path: impl Into<String>) -> XmlPosition {
        XmlPosition {
            byte_offset: self.byte_offset,
            line: self.line,
            path: path.into(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    Group,
    PaymentInfo,
    Transaction,
}

/// One block: its absolute path (with indices) and its leaves.
#[derive(Debug, Clone, Default)]
pub struct Block {
    pub path: String,
    pub pos: Pos,
    /// (relative path, text, position). Attributes appear as `path@Name`.
    pub leaves: Vec<(String, String, Pos)>,
}

impl Block {
    pub fn get(&self, rel: &str) -> Option<&str> {
        self.leaves
            .iter()
            .find(|(p, _, _)| p == rel)
            .map(|(_, v, _)| v.as_str())
    }
    pub fn get_pos(&self, rel: &str) -> Option<(&str, Pos)> {
        self.leaves
            .iter()
            .find(|(p, _, _)| p == rel)
            .map(|(_, v, pos)| (v.as_str(), *pos))
    }
    /// The first of several relative paths present.
    pub fn first<'a, 'r>(&'a self, rels: &[&'r str]) -> Option<(&'r str, &'a str, Pos)> {
        rels.iter()
            .find_map(|r| self.get_pos(r).map(|(v, p)| (*r, v, p)))
    }
}

/// What the walk reports, in document order.
pub enum WalkEvent<'a> {
    /// A `Document` element with its namespace (empty if none).
    Document {
        namespace: String,
        path: String,
        pos: Pos,
    },
    Block {
        kind: BlockKind,
        block: Block,
        payment_info: Option<&'a Block>,
    },
    /// A `PmtInf` ended (its transactions were reported before).
    PaymentInfoEnd(Block),
    DocumentEnd,
    /// A finding that does not stop the walk (an XML declaration the byte-order mark
    /// contradicts), reported before any element.
    Warning(Finding),
}

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
    /// When the walk is cut by transaction: what hands out the pieces, the transactions
    /// read ahead (by the offset of their `<`) for the walk to take, and what the piece in
    /// the buffer stands for beyond its own bytes (the rest of a cut transaction's bytes,
    /// its newlines), counted once it is consumed.
    cutter: Option<Cutter>,
    cuts: Rc<RefCell<VecDeque<(u64, CutTx)>>>,
    jump: Option<(u64, u64)>,
    cut_count: u64,
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
            && let Some(cutter) = self.cutter.as_mut()
        {
            self.pos = 0;
            self.end = 0;
            while self.end == 0 {
                match cutter.next_piece(&mut self.inner, &mut self.buf)? {
                    Next::End => break,
                    Next::Raw => {}
                    Next::Cut { beyond, tx } => {
                        // The transaction's `<` is where the buffer's placeholder starts.
                        let at = self.total + (self.buf.len() as u64 - tx.qname.len() as u64 - 3);
                        self.jump = Some((beyond, tx.lines));
                        self.cut_count += 1;
                        self.cuts.borrow_mut().push_back((at, tx));
                    }
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

/// The walk's outcome: the bytes and lines consumed (to the end of the document, or to
/// where a fatal finding stopped the walk), and that fatal finding (syntax error,
/// DOCTYPE, a limit).
pub struct WalkEnd {
    pub bytes: u64,
    /// Lines in the bytes read (1-based line of the last byte).
    pub lines: u64,
    pub fatal: Option<Finding>,
    /// Transactions read by workers ([`super::cut`]); 0 for a walk read in order.
    pub cut: u64,
}

struct Frame {
    name: String,
    pos: Pos,
    index: u32,
    /// Names of the children seen so far, back to back in `child_names`, each with its
    /// count: `(start, len, count)`.
    children: Vec<(u32, u32, u32)>,
    child_names: String,
    had_child: bool,
    text: String,
}

impl Frame {
    /// Counts one more child called `name`; returns its 1-based index among its namesakes.
    fn child(&mut self, name: &str) -> u32 {
        self.had_child = true;
        let names = &self.child_names;
        if let Some(c) = self
            .children
            .iter_mut()
            .find(|(at, len, _)| &names[*at as usize..(*at + *len) as usize] == name)
        {
            c.2 += 1;
            return c.2;
        }
        self.children
            .push((self.child_names.len() as u32, name.len() as u32, 1));
        self.child_names.push_str(name);
        1
    }
}

/// The open elements. Frames above the depth are kept for reuse, with their buffers: a
/// walk allocates per nesting level, not per element.
#[derive(Default)]
struct Stack {
    frames: Vec<Frame>,
    depth: usize,
}

impl Stack {
    fn push(&mut self, name: &str, pos: Pos, index: u32) {
        if self.depth == self.frames.len() {
            self.frames.push(Frame {
                name: String::new(),
                pos,
                index,
                children: Vec::new(),
                child_names: String::new(),
                had_child: false,
                text: String::new(),
            });
        }
        let f = &mut self.frames[self.depth];
        f.name.clear();
        f.name.push_str(name);
        f.pos = pos;
        f.index = index;
        f.children.clear();
        f.child_names.clear();
        f.had_child = false;
        f.text.clear();
        self.depth += 1;
    }

    fn pop(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}

impl std::ops::Deref for Stack {
    type Target = [Frame];
    fn deref(&self) -> &[Frame] {
        &self.frames[..self.depth]
    }
}

impl std::ops::DerefMut for Stack {
    fn deref_mut(&mut self) -> &mut [Frame] {
        &mut self.frames[..self.depth]
    }
}

fn is_block(name: &str, parent: Option<&str>, in_document_depth: usize) -> Option<BlockKind> {
    // Depth 2 under Document is the message root's children; 3 is PmtInf's children.
    match (name, in_document_depth) {
        ("GrpHdr", 2) => Some(BlockKind::Group),
        ("OrgnlGrpInf", 2) => Some(BlockKind::Group),
        ("PmtInf", 2) => Some(BlockKind::PaymentInfo),
        ("CdtTrfTxInf" | "TxInf", 2) => Some(BlockKind::Transaction),
        ("CdtTrfTxInf", 3) if parent == Some("PmtInf") => Some(BlockKind::Transaction),
        _ => None,
    }
}

/// The XML reader every ISO 20022 walk drives (pacs/pain here, camt statements in
/// `crate::formats::camt`): the input decoded to UTF-8, behind the guard that counts lines
/// and bytes and refuses an event longer than [`EVENT_BYTES_MAX`].
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
    /// Transactions read ahead by workers, by the offset of their `<` (empty unless the
    /// walk is cut, [`super::cut`]).
    pub cuts: Rc<RefCell<VecDeque<(u64, CutTx)>>>,
}

/// Opens `source` for a walk: its encoding from the byte-order mark or the declaration
/// (a contradiction is passed to `on_warning`), decoded to UTF-8 when it is not, behind
/// the guard. `Err` is the end of a walk that cannot start (an encoding not read).
///
/// With a `cutter`, input in UTF-8 is cut by transaction ([`super::cut`]); other input is
/// read whole by the walk.
pub(crate) fn open<R: BufRead>(
    mut source: R,
    on_warning: &mut dyn FnMut(Finding),
    cutter: Option<Cutter>,
) -> io::Result<Result<Opened<R>, WalkEnd>> {
    // The encoding, from the byte-order mark or the declaration (within its first bytes).
    let mut head = Vec::with_capacity(256);
    while head.len() < HEAD_BYTES_MAX {
        let buf = source.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let n = buf.len().min(HEAD_BYTES_MAX - head.len());
        head.extend_from_slice(&buf[..n]);
        source.consume(n);
        // The first `>` and the byte after it (the rest of a UTF-16 code unit).
        if memchr::memchr(b'>', &head).is_some_and(|i| head.len() > i + 1) {
            break;
        }
    }
    // Sniffed up to the first `>` whatever was read beyond it, so that the answer does not
    // depend on how the input arrived (a pipe's short reads).
    let upto = memchr::memchr(b'>', &head).map_or(head.len(), |i| (i + 2).min(head.len()));
    let encoding = match sniff(&head[..upto]) {
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
            encoding
        }
        Err(label) => {
            return Ok(Err(WalkEnd {
                bytes: head.len() as u64,
                lines: 1,
                cut: 0,
                fatal: Some(Finding::error(
                    FindingCode::UnsupportedFormat,
                    Pos::default().at("/"),
                    None,
                    READ,
                    format!("XML declaring encoding=\"{label}\""),
                )),
            }));
        }
    };
    let source = io::Cursor::new(head).chain(source);
    let cutter = cutter.filter(|_| encoding == Encoding::Utf8);
    let source = match encoding {
        Encoding::Utf8 => Input::Plain(source),
        other => Input::Decoded(Decoder::new(source, other)),
    };
    let since = Rc::new(Cell::new(0u64));
    let lines = Rc::new(Cell::new(1u64));
    let consumed = Rc::new(Cell::new(0u64));
    let over_limit = Rc::new(Cell::new(false));
    let cuts = Rc::new(RefCell::new(VecDeque::new()));
    let guard = Guard {
        inner: source,
        buf: if cutter.is_some() {
            Vec::new()
        } else {
            vec![0; GUARD_BUFFER]
        },
        pos: 0,
        end: 0,
        since_reset: since.clone(),
        over_limit: over_limit.clone(),
        lines: lines.clone(),
        consumed: consumed.clone(),
        total: 0,
        cutter,
        cuts: cuts.clone(),
        jump: None,
        cut_count: 0,
    };
    let mut reader = NsReader::from_reader(guard);
    // Whitespace is kept and trimmed per leaf: quick-xml's own trimming makes event
    // positions depend on read sizes.
    reader.config_mut().trim_text(false);
    reader.config_mut().expand_empty_elements = true;
    Ok(Ok(Opened {
        reader,
        since,
        lines,
        consumed,
        over_limit,
        cuts,
    }))
}

/// How a walk is cut by transaction ([`super::cut`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CutPlan {
    pub workers: usize,
    pub window: usize,
    pub lookahead: usize,
}

/// How many threads read an ISO 20022 file's transactions (default: the cores this process
/// may run on; `0` or `1`: the walk reads in order on its own thread).
pub const WORKERS_VAR: &str = "CLEARLEDGER_XML_WORKERS";

/// Walks `source`, calling `on` for each document, block and end. Stops at the first
/// fatal problem, reported in the result. On a machine of more than one core, the
/// transactions are read by workers ([`super::cut`]): the events are the same.
pub fn walk<R: BufRead>(source: R, on: &mut dyn FnMut(WalkEvent<'_>)) -> io::Result<WalkEnd> {
    let workers = std::env::var(WORKERS_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let plan = (workers > 1).then_some(CutPlan {
        workers,
        window: super::cut::WINDOW,
        lookahead: super::cut::LOOKAHEAD,
    });
    walk_with(source, plan, on)
}

/// [`walk`], cut as `plan` says (`None`: read in order by this thread alone).
pub(crate) fn walk_with<R: BufRead>(
    source: R,
    plan: Option<CutPlan>,
    on: &mut dyn FnMut(WalkEvent<'_>),
) -> io::Result<WalkEnd> {
    let Some(plan) = plan else {
        return walk_in(source, None, on);
    };
    let (jobs, queue) = mpsc::channel();
    let queue = Mutex::new(queue);
    std::thread::scope(|scope| {
        let mut started = 0;
        for i in 0..plan.workers.max(1) {
            let queue = &queue;
            let spawned = std::thread::Builder::new()
                .name(format!("xml-{i}"))
                .spawn_scoped(scope, move || super::cut::work(queue));
            match spawned {
                Ok(_) => started += 1,
                Err(e) => tracing::debug!(error = %e, "no XML reading thread"),
            }
        }
        // No worker to be had: read in order.
        let cutter = (started > 0).then(|| Cutter::new(jobs, plan.window, plan.lookahead));
        // The cutter (and with it the queue's sender) goes with the reader: the workers
        // stop when the walk ends.
        walk_in(source, cutter, on)
    })
}

fn walk_in<R: BufRead>(
    source: R,
    cutter: Option<Cutter>,
    on: &mut dyn FnMut(WalkEvent<'_>),
) -> io::Result<WalkEnd> {
    let Opened {
        mut reader,
        since,
        lines,
        consumed,
        over_limit,
        cuts,
    } = match open(source, &mut |f| on(WalkEvent::Warning(f)), cutter)? {
        Ok(opened) => opened,
        Err(end) => return Ok(end),
    };
    let mut buf = Vec::with_capacity(8 * 1024);
    let mut stack = Stack::default();
    let mut name = String::new();
    // Index in `stack` of the Document element, and of the open blocks.
    let mut document_at: Option<usize> = None;
    let mut open_block: Option<(BlockKind, usize, Block)> = None;
    let mut open_pmtinf: Option<(usize, Block)> = None;
    let mut fatal: Option<Finding> = None;
    let mut rtp_envelope = false;
    let path_of = |stack: &[Frame]| -> String {
        let mut s = String::new();
        for f in stack {
            s.push('/');
            s.push_str(&f.name);
            if f.index > 1 || matches!(f.name.as_str(), "CdtTrfTxInf" | "TxInf" | "PmtInf") {
                s.push_str(&format!("[{}]", f.index));
            }
        }
        if s.is_empty() {
            s.push('/');
        }
        s
    };
    loop {
        since.set(0);
        // quick-xml stops a text event before the `<` or `&` that ends it, and a reference
        // after its `;`: every event starts at what was consumed so far, whatever the read
        // sizes.
        let pos = Pos {
            byte_offset: consumed.get(),
            line: lines.get(),
        };
        // Events unresolved: only a Document's (or an envelope's) namespace is looked up,
        // not every element's (resolving each was 6 % of a pacs.008 `check`).
        let ev = match reader.read_event_into(&mut buf) {
            Ok(ev) => ev,
            Err(e) => {
                // Where the element being read started: stable whatever the read sizes were
                // (quick-xml's error position depends on its buffer boundaries).
                let at = stack.last().map(|f| f.pos).unwrap_or(pos);
                let code = if over_limit.get() {
                    FindingCode::SizeLimit
                } else {
                    FindingCode::XmlSyntax
                };
                fatal = Some(Finding::error(
                    code,
                    at.at(path_of(&stack)),
                    None,
                    "well-formed XML within the limits",
                    e.to_string(),
                ));
                break;
            }
        };
        match ev {
            Event::Start(e) => {
                if stack.len() >= DEPTH_MAX {
                    fatal = Some(Finding::error(
                        FindingCode::DepthLimit,
                        pos.at(path_of(&stack)),
                        None,
                        format!("at most {DEPTH_MAX} nested elements"),
                        "deeper nesting",
                    ));
                    break;
                }
                name.clear();
                name.push_str(e.local_name().as_ref());
                let index = match stack.last_mut() {
                    Some(parent) => parent.child(&name),
                    None => 1,
                };
                stack.push(&name, pos, index);
                let parent_name = stack.len().checked_sub(2).map(|i| stack[i].name.as_str());
                let namespace = || match reader.resolver().resolve_element(e.name()).0 {
                    ResolveResult::Bound(ns) => ns.as_ref().to_string(),
                    _ => String::new(),
                };
                if stack.len() == 1 && name == "Message" && namespace() == RTP_NAMESPACE {
                    rtp_envelope = true;
                }
                if name == "Document" && document_at.is_none() {
                    document_at = Some(stack.len() - 1);
                    on(WalkEvent::Document {
                        namespace: namespace(),
                        path: path_of(&stack),
                        pos,
                    });
                    continue;
                }
                // The TCH RTP envelope: `Message` holds the `AppHdr` and one business element
                // (`CreditTransfer`, ...) holding the message itself, without a Document.
                // The business element stands for the Document; the message's namespace
                // says what it is (another kind than those read is refused by name).
                if rtp_envelope
                    && document_at.is_none()
                    && stack.len() == 3
                    && parent_name != Some("AppHdr")
                {
                    document_at = Some(stack.len() - 2);
                    on(WalkEvent::Document {
                        namespace: namespace(),
                        path: path_of(&stack),
                        pos,
                    });
                }
                if let Some(d) = document_at {
                    let depth = stack.len() - 1 - d;
                    if let Some(kind) = is_block(&name, parent_name, depth) {
                        let mut block = Block {
                            path: path_of(&stack),
                            pos,
                            leaves: Vec::new(),
                        };
                        // A transaction a worker read: its leaves, at their places here.
                        if kind == BlockKind::Transaction
                            && let Some((_, tx)) = cuts
                                .borrow_mut()
                                .pop_front_if(|(at, _)| *at == pos.byte_offset)
                        {
                            block.leaves = tx
                                .leaves
                                .into_iter()
                                .map(|(path, text, rel)| {
                                    let at = Pos {
                                        byte_offset: pos.byte_offset + rel.byte_offset,
                                        line: pos.line + rel.line,
                                    };
                                    (path, text, at)
                                })
                                .collect();
                            if let Some(f) = stack.last_mut() {
                                f.had_child = true;
                            }
                        }
                        match kind {
                            BlockKind::PaymentInfo => open_pmtinf = Some((stack.len() - 1, block)),
                            _ => open_block = Some((kind, stack.len() - 1, block)),
                        }
                    }
                }
                if cuts
                    .borrow()
                    .front()
                    .is_some_and(|(at, _)| *at <= pos.byte_offset)
                {
                    // The scanner and the walk disagree on what a transaction is: a bug,
                    // never a transaction dropped in silence.
                    return Err(io::Error::other(format!(
                        "internal error: a transaction read ahead at byte {} is not one \
                         to the walk (<{name}>)",
                        pos.byte_offset
                    )));
                }
                // Attributes (Ccy="EUR") become leaves `path@Name`.
                if let Some(f) = read_attributes(&e, pos, &|| path_of(&stack), &mut |key, value| {
                    add_leaf(
                        &stack,
                        &mut open_block,
                        &mut open_pmtinf,
                        &format!("@{key}"),
                        value,
                        pos,
                    )
                }) {
                    fatal = Some(f);
                }
                if fatal.is_some() {
                    break;
                }
            }
            Event::Text(t) => {
                // Text as written (quick-xml hands references over as their own events).
                // Whitespace between elements, or before a leaf's text (trimmed anyway):
                // nothing to keep. Whitespace after a reference is kept (`&amp; &amp;`).
                if let Some(f) = stack.last_mut()
                    && !f.had_child
                    && !(f.text.is_empty() && t.bytes().all(|b| b.is_ascii_whitespace()))
                {
                    f.text.push_str(&t);
                }
            }
            Event::GeneralRef(r) => {
                let Some(resolved) = resolve_reference(&r) else {
                    fatal = Some(Finding::error(
                        FindingCode::XmlSyntax,
                        pos.at(path_of(&stack)),
                        None,
                        REFERENCES,
                        format!("&{};", &*r),
                    ));
                    break;
                };
                if let Some(f) = stack.last_mut()
                    && !f.had_child
                {
                    match resolved {
                        Resolved::Char(c) => f.text.push(c),
                        Resolved::Entity(s) => f.text.push_str(s),
                    }
                }
            }
            Event::CData(t) => {
                if let Some(f) = stack.last_mut() {
                    f.text.push_str(&t);
                }
            }
            Event::End(_) => {
                let Some(frame) = stack.last() else { continue };
                if !frame.had_child {
                    // A leaf's position is its start tag's.
                    let (text, start) = (frame.text.trim().to_string(), frame.pos);
                    add_leaf(&stack, &mut open_block, &mut open_pmtinf, "", text, start);
                }
                let depth_index = stack.len() - 1;
                if let Some((kind, _, block)) = open_block.take_if(|(_, at, _)| *at == depth_index)
                {
                    let payment_info = open_pmtinf.as_ref().map(|(_, b)| b);
                    on(WalkEvent::Block {
                        kind,
                        block,
                        payment_info,
                    });
                }
                if let Some((_, block)) = open_pmtinf.take_if(|(at, _)| *at == depth_index) {
                    on(WalkEvent::PaymentInfoEnd(block));
                }
                if document_at == Some(depth_index) {
                    document_at = None;
                    on(WalkEvent::DocumentEnd);
                }
                stack.pop();
            }
            Event::DocType(_) => {
                fatal = Some(Finding::error(
                    FindingCode::DoctypeForbidden,
                    pos.at(path_of(&stack)),
                    None,
                    "no DOCTYPE (entities and external references are refused)",
                    "<!DOCTYPE ...>",
                ));
                break;
            }
            Event::Eof => {
                // The input ended inside an element: a file cut short (an upload that
                // stopped, a copy of a file still being written). What was read of it is
                // no file, and its control totals were never reached: refused whole.
                if let Some(open) = stack.last() {
                    fatal = Some(Finding::error(
                        FindingCode::XmlSyntax,
                        pos.at(path_of(&stack)),
                        None,
                        "a complete document: every element closed",
                        format!(
                            "the end of the input inside <{}> (opened at line {}, byte {}): the file is cut short",
                            open.name, open.pos.line, open.pos.byte_offset
                        ),
                    ));
                }
                break;
            }
            _ => {}
        }
        buf.clear();
    }
    if fatal.is_none() && !cuts.borrow().is_empty() {
        return Err(io::Error::other(
            "internal error: a transaction read ahead was never reached by the walk",
        ));
    }
    // What follows a fatal finding is not read here: the caller, which hashes the input,
    // reads it to its end (src/hash.rs, `HashingReader::drain`).
    let guard = reader.into_inner();
    tracing::debug!(
        transactions = guard.cut_count,
        "transactions read by workers"
    );
    Ok(WalkEnd {
        bytes: guard.total,
        lines: lines.get(),
        fatal,
        cut: guard.cut_count,
    })
}

/// Reads the attributes of the start tag `e` (at `pos`, element `path`), handing each to
/// `add` as (local name, value): xmlns and xsi attributes skipped, references resolved.
/// Each at most once (XML 1.0, "Unique Att Spec"; two prefixes of one local name would read
/// as one leaf too): a second one is refused, never read over the first. The finding that
/// stops the walk, if any. The walk and the workers that read transactions for it
/// (`super::cut`) share this one reading.
pub(crate) fn read_attributes(
    e: &quick_xml::events::BytesStart<'_>,
    pos: Pos,
    path: &dyn Fn() -> String,
    add: &mut dyn FnMut(&str, String),
) -> Option<Finding> {
    let mut seen: Vec<&str> = Vec::new();
    for attr in e.attributes() {
        let attr = match attr {
            Ok(a) => a,
            Err(err) => return Some(attribute_error(e, pos, &path(), &err)),
        };
        let qualified: &str = attr.key.into_inner();
        if qualified.starts_with("xmlns") || qualified.starts_with("xsi:") {
            continue;
        }
        let key = attr.key.local_name().into_inner();
        if let Some(first) = seen.iter().find(|q| local(q) == key) {
            return Some(Finding::error(
                FindingCode::DuplicateAttribute,
                pos.at(format!("{}@{key}", path())),
                None,
                format!("one {key} attribute"),
                format!("{qualified} after {first}"),
            ));
        }
        seen.push(qualified);
        // As written, references resolved (no whitespace normalization, as before
        // quick-xml 0.38); only XML's own entities, never an HTML table.
        let value = match unescape_with(&attr.value, resolve_xml_entity) {
            Ok(v) => v.into_owned(),
            Err(err) => {
                return Some(Finding::error(
                    FindingCode::XmlSyntax,
                    pos.at(format!("{}@{key}", path())),
                    None,
                    REFERENCES,
                    err.to_string(),
                ));
            }
        };
        add(key, value);
    }
    None
}

/// The local part of a qualified name (`ct:Ccy` → `Ccy`).
pub(crate) fn local(qualified: &str) -> &str {
    qualified.rsplit(':').next().unwrap_or(qualified)
}

/// A malformed attribute list of the start tag `tag` read at `pos`: a duplicate
/// (`duplicate_attribute`) at the second occurrence's byte, anything else (a value
/// without quotes, a key without `=`) an `xml_syntax` error at its byte.
pub(crate) fn attribute_error(
    tag: &quick_xml::events::BytesStart<'_>,
    pos: Pos,
    path: &str,
    err: &quick_xml::events::attributes::AttrError,
) -> Finding {
    use quick_xml::events::attributes::AttrError;
    let text: &str = tag;
    let at = match *err {
        AttrError::ExpectedEq(at)
        | AttrError::ExpectedValue(at)
        | AttrError::UnquotedValue(at)
        | AttrError::ExpectedQuote(at, _)
        | AttrError::Duplicated(at, _) => at.min(text.len()),
    };
    // The tag's text starts after its `<`.
    let before = &text.as_bytes()[..at];
    let here = Pos {
        byte_offset: pos.byte_offset + 1 + at as u64,
        line: pos.line + memchr::memchr_iter(b'\n', before).count() as u64,
    };
    match *err {
        AttrError::Duplicated(at, prev) => {
            let (again, first) = (written(text, at), written(text, prev));
            let key = again.split('=').next().unwrap_or("").trim();
            Finding::error(
                FindingCode::DuplicateAttribute,
                here.at(format!("{path}@{}", local(key))),
                None,
                format!("one {key} attribute"),
                format!("{again} after {first}"),
            )
        }
        _ => Finding::error(
            FindingCode::XmlSyntax,
            here.at(path.to_string()),
            None,
            "well-formed attributes (name=\"value\")",
            // quick-xml's message without its own offset (the finding has the byte).
            err.to_string()
                .split_once(": ")
                .map_or_else(|| err.to_string(), |(_, why)| why.to_string()),
        ),
    }
}

/// The attribute written from byte `from` of a tag's text, to its closing quote
/// (`Ccy="JPY"`).
fn written(text: &str, from: usize) -> &str {
    let rest = text.get(from..).unwrap_or("");
    let end = rest.find(['"', '\'']).and_then(|q| {
        let quote = rest[q..].chars().next()?;
        rest[q + 1..].find(quote).map(|e| q + 1 + e + 1)
    });
    &rest[..end.unwrap_or(rest.len())]
}

/// What a finding about a reference expects.
pub(crate) const REFERENCES: &str = "a character reference (&#65; or &#x41;) or one of XML's predefined entities \
     (&amp; &lt; &gt; &quot; &apos;): no other entity can be declared without a DOCTYPE";

/// The text a reference stands for.
pub(crate) enum Resolved {
    Char(char),
    Entity(&'static str),
}

/// A character reference (`&#65;`, `&#x41;`) to a character XML allows, or one of the five
/// entities XML predefines. Any other entity could only be declared in a DTD, and a DOCTYPE
/// is refused: `None`.
pub(crate) fn resolve_reference(r: &BytesRef<'_>) -> Option<Resolved> {
    if r.is_char_ref() {
        // XML 1.0 `Char`: tab, LF, CR, and from U+0020 on, less U+FFFE and U+FFFF (`char`
        // already excludes the surrogates).
        return match r.resolve_char_ref() {
            Ok(Some(c))
                if matches!(c, '\t' | '\n' | '\r')
                    || (c >= ' ' && !matches!(c, '\u{FFFE}' | '\u{FFFF}')) =>
            {
                Some(Resolved::Char(c))
            }
            _ => None,
        };
    }
    resolve_xml_entity(r).map(Resolved::Entity)
}

fn add_leaf(
    stack: &[Frame],
    open_block: &mut Option<(BlockKind, usize, Block)>,
    open_pmtinf: &mut Option<(usize, Block)>,
    suffix: &str,
    value: String,
    pos: Pos,
) {
    let target = match (open_block.as_mut(), open_pmtinf.as_mut()) {
        (Some((_, at, b)), _) => Some((*at, b)),
        (None, Some((at, b))) => Some((*at, b)),
        _ => None,
    };
    let Some((at, block)) = target else { return };
    if block.leaves.len() >= LEAVES_PER_BLOCK_MAX {
        return;
    }
    let mut path = String::with_capacity(48);
    for (i, f) in stack[at + 1..].iter().enumerate() {
        if i > 0 {
            path.push('/');
        }
        path.push_str(&f.name);
    }
    path.push_str(suffix);
    block.leaves.push((path, value, pos));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    const PACS: &str = "urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08";

    /// One transaction whose debtor name is `name` (as written) and currency `ccy`.
    fn doc(name: &str, ccy: &str) -> String {
        format!(
            "\u{FEFF}<?xml version=\"1.0\"?>\r\n<Document xmlns=\"{PACS}\"><FIToFICstmrCdtTrf>\r\n<CdtTrfTxInf><!-- c -->\r\n  <IntrBkSttlmAmt Ccy=\"{ccy}\">1.00</IntrBkSttlmAmt>\r\n  <Dbtr><Nm>{name}</Nm></Dbtr><RmtInf><Ustrd><![CDATA[x & y]]></Ustrd></RmtInf>\r\n</CdtTrfTxInf></FIToFICstmrCdtTrf></Document>\r\n"
        )
    }

    /// The leaves of the transaction and the fatal finding, reading through a buffer of
    /// `chunk` bytes.
    fn walk_leaves(xml: &[u8], chunk: usize) -> (Vec<(String, String, Pos)>, Option<Finding>) {
        let mut leaves = Vec::new();
        let end = walk(BufReader::with_capacity(chunk, xml), &mut |ev| {
            if let WalkEvent::Block { block, .. } = ev {
                leaves.extend(block.leaves);
            }
        })
        .unwrap();
        (leaves, end.fatal)
    }

    fn leaf(xml: &str, rel: &str) -> String {
        let (leaves, fatal) = walk_leaves(xml.as_bytes(), 1 << 16);
        assert!(fatal.is_none(), "{fatal:?}");
        leaves
            .into_iter()
            .find(|(p, _, _)| p == rel)
            .map(|(_, v, _)| v)
            .unwrap_or_else(|| panic!("no leaf {rel}"))
    }

    #[test]
    fn predefined_entities_and_character_references_give_their_text() {
        for (written, text) in [
            ("A &amp; B &#x43;", "A & B C"),
            ("&lt;&gt;&quot;&apos;&amp;", "<>\"'&"),
            ("&#65;&#x42;&#x0043;", "ABC"),
            ("&amp; &amp;", "& &"),
            ("  &amp;  ", "&"),
            ("a&#10;b", "a\nb"),
            ("caf&#xE9; &#x1F600;", "café 😀"),
            ("plain", "plain"),
            ("", ""),
        ] {
            assert_eq!(leaf(&doc(written, "EUR"), "Dbtr/Nm"), text, "{written}");
        }
        assert_eq!(leaf(&doc("n", "E&#x55;R"), "IntrBkSttlmAmt@Ccy"), "EUR");
        assert_eq!(leaf(&doc("n", "EUR"), "RmtInf/Ustrd"), "x & y");
    }

    #[test]
    fn any_other_reference_is_refused_at_its_element() {
        let nm = "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]/Dbtr/Nm";
        for (written, found) in [
            ("&xxe;", Some("&xxe;")),
            ("A &nbsp; B", Some("&nbsp;")),
            ("&#0;", Some("&#0;")),
            ("&#1;", Some("&#1;")),
            ("&#xFFFE;", Some("&#xFFFE;")),
            ("&#xZZ;", Some("&#xZZ;")),
            ("A & B", None),
        ] {
            let xml = doc(written, "EUR");
            let (_, fatal) = walk_leaves(xml.as_bytes(), 1 << 16);
            let f = fatal.unwrap_or_else(|| panic!("{written}: accepted"));
            assert_eq!(f.code, FindingCode::XmlSyntax, "{written}");
            assert_eq!(f.position.path(), Some(nm), "{written}");
            if let Some(found) = found {
                assert_eq!(f.found, found, "{written}");
                assert_eq!(f.expected, REFERENCES);
                // The reference's own byte.
                let at = xml.find(written).unwrap() + written.find('&').unwrap();
                assert_eq!(f.position.byte_offset(), at as u64, "{written}");
            }
        }
        let (_, fatal) = walk_leaves(doc("n", "&eur;").as_bytes(), 1 << 16);
        let f = fatal.expect("refused");
        assert_eq!(f.code, FindingCode::XmlSyntax);
        assert_eq!(
            f.position.path(),
            Some("/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]/IntrBkSttlmAmt@Ccy")
        );
    }

    #[test]
    fn positions_do_not_move_with_read_sizes() {
        for name in ["A &amp; B &#x43;", "plain", "&#x1F600;&lt;x&gt;", "&bad;"] {
            let xml = doc(name, "EUR");
            let whole = walk_leaves(xml.as_bytes(), 1 << 16);
            for chunk in [1, 2, 3, 5, 7, 16, 64] {
                let (leaves, fatal) = walk_leaves(xml.as_bytes(), chunk);
                assert_eq!(leaves, whole.0, "{name}, {chunk}-byte reads");
                assert_eq!(fatal, whole.1, "{name}, {chunk}-byte reads");
            }
            // Every leaf sits at its start tag, the BOM counted.
            for (rel, _, pos) in &whole.0 {
                let tag = rel.rsplit('/').next().unwrap().split('@').next().unwrap();
                assert!(
                    xml.as_bytes()[pos.byte_offset as usize..]
                        .starts_with(format!("<{tag}").as_bytes()),
                    "{name}: {rel} at {}",
                    pos.byte_offset
                );
                let line = 1 + xml[..pos.byte_offset as usize].matches('\n').count() as u64;
                assert_eq!(pos.line, line, "{name}: {rel}");
            }
        }
    }

    #[test]
    fn an_attribute_written_twice_is_refused_at_the_second_one() {
        let amt = "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]/IntrBkSttlmAmt@Ccy";
        for (ccy, code, path, found, at) in [
            (
                "EUR\" Ccy=\"JPY",
                FindingCode::DuplicateAttribute,
                amt,
                "Ccy=\"JPY\" after Ccy=\"EUR\"",
                "Ccy=\"JPY",
            ),
            (
                "EUR\"\r\n   Ccy='E U R' y=\"",
                FindingCode::DuplicateAttribute,
                amt,
                "Ccy='E U R' after Ccy=\"EUR\"",
                "Ccy='E",
            ),
            // Two prefixes of one local name would read as one leaf: refused too, at the
            // element.
            (
                "EUR\" x:Ccy=\"JPY\" xmlns:x=\"urn:x",
                FindingCode::DuplicateAttribute,
                amt,
                "x:Ccy after Ccy",
                "<IntrBkSttlmAmt",
            ),
            // An attribute without quotes was dropped silently: a syntax error at its value.
            (
                "EUR\" Ccy2=JPY x=\"",
                FindingCode::XmlSyntax,
                "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]/IntrBkSttlmAmt",
                "attribute value must be enclosed in `\"` or `'`",
                "JPY",
            ),
        ] {
            let xml = doc("n", ccy);
            let whole = walk_leaves(xml.as_bytes(), 1 << 16);
            for chunk in [1, 3, 64] {
                assert_eq!(walk_leaves(xml.as_bytes(), chunk).1, whole.1, "{ccy}");
            }
            let f = whole.1.unwrap_or_else(|| panic!("{ccy}: accepted"));
            assert_eq!(
                (f.code, f.position.path(), f.found.as_str()),
                (code, Some(path), found),
                "{ccy}"
            );
            let byte = xml.find(at).unwrap();
            assert_eq!(f.position.byte_offset(), byte as u64, "{ccy}");
            let line = 1 + xml[..byte].matches('\n').count() as u64;
            assert_eq!(f.position.line(), line, "{ccy}");
        }
        assert_eq!(leaf(&doc("n", "EUR"), "IntrBkSttlmAmt@Ccy"), "EUR");
    }

    fn utf16le(text: &str) -> Vec<u8> {
        let mut b = vec![0xFF, 0xFE];
        b.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        b
    }

    #[test]
    fn the_limits_hold_on_decoded_text() {
        // A text node over the event limit, in UTF-16 and in ISO-8859-1: a size limit.
        let big = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-16\"?><Document xmlns=\"{PACS}\"><a>{}</a></Document>",
            "x".repeat(4 * EVENT_BYTES_MAX as usize)
        );
        let (_, fatal) = walk_leaves(&utf16le(&big), 1 << 16);
        assert_eq!(fatal.map(|f| f.code), Some(FindingCode::SizeLimit));
        let latin1 = big.replace("UTF-16", "ISO-8859-1");
        let (_, fatal) = walk_leaves(latin1.as_bytes(), 1 << 16);
        assert_eq!(fatal.map(|f| f.code), Some(FindingCode::SizeLimit));
        // Nesting past the depth limit, in UTF-16: a depth limit.
        let deep = format!(
            "<Document xmlns=\"{PACS}\">{}{}</Document>",
            "<a>".repeat(DEPTH_MAX + 1),
            "</a>".repeat(DEPTH_MAX + 1)
        );
        let (_, fatal) = walk_leaves(&utf16le(&deep), 7);
        assert_eq!(fatal.map(|f| f.code), Some(FindingCode::DepthLimit));
    }

    #[test]
    fn decoded_and_enveloped_documents_read_alike_whatever_the_read_sizes() {
        let plain = doc("J\u{fc}rgen &amp; Co", "EUR");
        let want = walk_leaves(plain.as_bytes(), 1 << 16);
        assert!(want.1.is_none());
        let values = |l: &[(String, String, Pos)]| {
            l.iter()
                .map(|(p, v, _)| (p.clone(), v.clone()))
                .collect::<Vec<_>>()
        };
        let latin1: Vec<u8> = plain
            .trim_start_matches('\u{FEFF}')
            .replace(
                "<?xml version=\"1.0\"?>",
                "<?xml version=\"1.0\" encoding=\"latin1\"?>",
            )
            .chars()
            .map(|c| c as u8)
            .collect();
        let utf16 = utf16le(plain.trim_start_matches('\u{FEFF}'));
        let rtp = plain
            .replace(
                &format!("<Document xmlns=\"{PACS}\">"),
                &format!("<Message xmlns=\"urn:tch\" xmlns:ct=\"{PACS}\"><AppHdr><MsgDefIdr>pacs.008.001.08</MsgDefIdr></AppHdr><CreditTransfer>"),
            )
            .replace("</Document>", "</CreditTransfer></Message>")
            .replace("<FIToFICstmrCdtTrf>", "<ct:FIToFICstmrCdtTrf>")
            .replace("</FIToFICstmrCdtTrf>", "</ct:FIToFICstmrCdtTrf>");
        for input in [latin1, utf16, rtp.into_bytes()] {
            for chunk in [1, 2, 3, 7, 64, 1 << 16] {
                let (leaves, fatal) = walk_leaves(&input, chunk);
                assert!(fatal.is_none(), "{fatal:?}");
                assert_eq!(values(&leaves), values(&want.0), "{chunk}-byte reads");
            }
        }
    }
}
