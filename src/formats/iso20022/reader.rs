//! Streaming XML walk with quick-xml: one reused buffer, bounded depth and event size,
//! DOCTYPE refused (the XML layer is [`crate::formats::xml`]). It cuts the document into
//! *blocks* — the group header, each payment information (pain.001) and each transaction —
//! and hands each block over as a flat list of leaves (relative path → text) with their
//! positions, as soon as the block ends ([`super::block`]).

use super::block::{Block, BlockKind, OpenBlocks, Stack, is_block};
use super::cut::{CutPieces, Cutter, ReadAhead};
use crate::findings::Finding;
use crate::formats::xml::{
    self, DEPTH_MAX, Opened, Pieces, Pos, Resolved, Unopened, read_attributes, resolve_reference,
};
use quick_xml::events::{BytesStart, Event};
use quick_xml::name::{NamespaceResolver, ResolveResult};
use std::cell::RefCell;
use std::io::{self, BufRead};
use std::rc::Rc;
use std::sync::{Mutex, mpsc};

/// The namespace of the TCH RTP envelope (`<Message xmlns="urn:tch">`).
pub(crate) const RTP_NAMESPACE: &str = "urn:tch";

/// What the walk reports, in document order.
pub(crate) enum WalkEvent<'a> {
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

/// The walk's outcome: the bytes and lines consumed (to the end of the document, or to
/// where a fatal finding stopped the walk), and that fatal finding (syntax error,
/// DOCTYPE, a limit).
pub(crate) struct WalkEnd {
    pub bytes: u64,
    /// Lines in the bytes read (1-based line of the last byte).
    pub lines: u64,
    pub fatal: Option<Finding>,
    /// Transactions read by workers ([`super::cut`]); 0 for a walk read in order.
    pub cut: u64,
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
pub(crate) const WORKERS_VAR: &str = "CLEARLEDGER_XML_WORKERS";

/// Walks `source`, calling `on` for each document, block and end. Stops at the first
/// fatal problem, reported in the result. On a machine of more than one core, the
/// transactions are read by workers ([`super::cut`]): the events are the same.
pub(crate) fn walk<R: BufRead>(
    source: R,
    on: &mut dyn FnMut(WalkEvent<'_>),
) -> io::Result<WalkEnd> {
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
    let ahead = Rc::new(RefCell::new(ReadAhead::default()));
    let pieces = cutter.map(|cutter| {
        Box::new(CutPieces {
            cutter,
            ahead: ahead.clone(),
        }) as Box<dyn Pieces>
    });
    let Opened {
        mut reader,
        since,
        lines,
        consumed,
        over_limit,
    } = match xml::open(source, &mut |f| on(WalkEvent::Warning(f)), pieces)? {
        Ok(opened) => opened,
        Err(Unopened { bytes, fatal }) => {
            return Ok(WalkEnd {
                bytes,
                lines: 1,
                fatal: Some(fatal),
                cut: 0,
            });
        }
    };
    let mut walk = Walk::new(on, ahead);
    let mut buf = Vec::with_capacity(8 * 1024);
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
        match reader.read_event_into(&mut buf) {
            Ok(ev) => {
                if !walk.event(ev, pos, reader.resolver())? {
                    break;
                }
            }
            Err(e) => {
                // Where the element being read started: stable whatever the read sizes were
                // (quick-xml's error position depends on its buffer boundaries).
                let at = walk.stack.last().map(|f| f.pos).unwrap_or(pos);
                let path = walk.stack.path();
                walk.fatal = Some(xml::malformed(at, path, over_limit.get(), &e));
                break;
            }
        }
        buf.clear();
    }
    // What follows a fatal finding is not read here: the caller, which hashes the input,
    // reads it to its end (src/hash.rs, `HashingReader::drain`).
    walk.end_of_walk(reader.into_inner().total(), lines.get())
}

/// One walk between two events: the open elements, where the Document is, the blocks
/// open, and the finding that stopped it.
struct Walk<'a> {
    on: &'a mut dyn FnMut(WalkEvent<'_>),
    /// Transactions workers read, for the walk to take at their start tags.
    ahead: Rc<RefCell<ReadAhead>>,
    stack: Stack,
    /// The local name of the element last started.
    name: String,
    /// Index in `stack` of the Document element (or of what stands for it).
    document_at: Option<usize>,
    open: OpenBlocks,
    rtp_envelope: bool,
    fatal: Option<Finding>,
}

impl<'a> Walk<'a> {
    fn new(on: &'a mut dyn FnMut(WalkEvent<'_>), ahead: Rc<RefCell<ReadAhead>>) -> Self {
        Walk {
            on,
            ahead,
            stack: Stack::default(),
            name: String::new(),
            document_at: None,
            open: OpenBlocks::default(),
            rtp_envelope: false,
            fatal: None,
        }
    }

    /// The walk's outcome once it stopped, `bytes` and `lines` read; `Err` if a transaction
    /// a worker read was never reached (an internal error).
    fn end_of_walk(self, bytes: u64, lines: u64) -> io::Result<WalkEnd> {
        let cut = self.ahead.borrow().count;
        if self.fatal.is_none() && !self.ahead.borrow().queue.is_empty() {
            return Err(io::Error::other(
                "internal error: a transaction read ahead was never reached by the walk",
            ));
        }
        tracing::debug!(transactions = cut, "transactions read by workers");
        Ok(WalkEnd {
            bytes,
            lines,
            fatal: self.fatal,
            cut,
        })
    }

    /// Takes the event read at `pos`: `false` once the walk stops (at a fatal finding or
    /// at the end of the input). `Err` is an internal error.
    fn event(&mut self, ev: Event<'_>, pos: Pos, ns: &NamespaceResolver) -> io::Result<bool> {
        match ev {
            Event::Start(e) => return self.start(&e, pos, ns),
            Event::Text(t) => {
                // Text as written (quick-xml hands references over as their own events).
                // Whitespace between elements, or before a leaf's text (trimmed anyway):
                // nothing to keep. Whitespace after a reference is kept (`&amp; &amp;`).
                if let Some(f) = self.stack.last_mut()
                    && !f.had_child
                    && !(f.text.is_empty() && t.bytes().all(|b| b.is_ascii_whitespace()))
                {
                    f.text.push_str(&t);
                }
            }
            Event::GeneralRef(r) => {
                let Some(resolved) = resolve_reference(&r) else {
                    self.fatal = Some(xml::unresolved(pos, self.stack.path(), &r));
                    return Ok(false);
                };
                if let Some(f) = self.stack.last_mut()
                    && !f.had_child
                {
                    match resolved {
                        Resolved::Char(c) => f.text.push(c),
                        Resolved::Entity(s) => f.text.push_str(s),
                    }
                }
            }
            Event::CData(t) => {
                if let Some(f) = self.stack.last_mut() {
                    f.text.push_str(&t);
                }
            }
            Event::End(_) => self.end(),
            Event::DocType(_) => {
                self.fatal = Some(xml::doctype(pos, self.stack.path()));
                return Ok(false);
            }
            Event::Eof => {
                // The input ended inside an element: a file cut short (an upload that
                // stopped, a copy of a file still being written). What was read of it is
                // no file, and its control totals were never reached: refused whole.
                if let Some(open) = self.stack.last() {
                    let path = self.stack.path();
                    self.fatal = Some(xml::cut_short(pos, path, &open.name, open.pos));
                }
                return Ok(false);
            }
            _ => {}
        }
        Ok(true)
    }

    /// A start tag: the element pushed, a Document or a block opened, its attributes read
    /// as leaves `path@Name`.
    fn start(&mut self, e: &BytesStart<'_>, pos: Pos, ns: &NamespaceResolver) -> io::Result<bool> {
        if self.stack.len() >= DEPTH_MAX {
            self.fatal = Some(xml::too_deep(pos, self.stack.path()));
            return Ok(false);
        }
        self.name.clear();
        self.name.push_str(e.local_name().as_ref());
        let index = match self.stack.last_mut() {
            Some(parent) => parent.child(&self.name),
            None => 1,
        };
        self.stack.push(&self.name, pos, index);
        let namespace = || match ns.resolve_element(e.name()).0 {
            ResolveResult::Bound(ns) => ns.as_ref().to_string(),
            _ => String::new(),
        };
        if self.stack.len() == 1 && self.name == "Message" && namespace() == RTP_NAMESPACE {
            self.rtp_envelope = true;
        }
        if self.name == "Document" && self.document_at.is_none() {
            self.document_at = Some(self.stack.len() - 1);
            let path = self.stack.path();
            (self.on)(WalkEvent::Document {
                namespace: namespace(),
                path,
                pos,
            });
            return Ok(true);
        }
        if self.stands_for_document() {
            self.document_at = Some(self.stack.len() - 2);
            let path = self.stack.path();
            (self.on)(WalkEvent::Document {
                namespace: namespace(),
                path,
                pos,
            });
        }
        self.open_block(pos);
        self.check_read_ahead(pos)?;
        let (stack, open) = (&self.stack, &mut self.open);
        if let Some(f) = read_attributes(e, pos, &|| stack.path(), &mut |key, value| {
            open.add_leaf(stack, &format!("@{key}"), value, pos)
        }) {
            self.fatal = Some(f);
        }
        Ok(self.fatal.is_none())
    }

    /// The parent of the element just started, if any.
    fn parent_name(&self) -> Option<&str> {
        let i = self.stack.len().checked_sub(2)?;
        Some(self.stack[i].name.as_str())
    }

    /// The TCH RTP envelope: `Message` holds the `AppHdr` and one business element
    /// (`CreditTransfer`, ...) holding the message itself, without a Document. The business
    /// element stands for the Document; the message's namespace says what it is (another
    /// kind than those read is refused by name).
    fn stands_for_document(&self) -> bool {
        self.rtp_envelope
            && self.document_at.is_none()
            && self.stack.len() == 3
            && self.parent_name() != Some("AppHdr")
    }

    /// The block the element just started opens, if it opens one; a transaction a worker
    /// read gets its leaves, at their places here.
    fn open_block(&mut self, pos: Pos) {
        let Some(d) = self.document_at else { return };
        let depth = self.stack.len() - 1 - d;
        let Some(kind) = is_block(&self.name, self.parent_name(), depth) else {
            return;
        };
        let mut block = Block {
            path: self.stack.path(),
            pos,
            leaves: Vec::new(),
        };
        if kind == BlockKind::Transaction
            && let Some((_, tx)) = self
                .ahead
                .borrow_mut()
                .queue
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
            if let Some(f) = self.stack.last_mut() {
                f.had_child = true;
            }
        }
        let at = self.stack.len() - 1;
        match kind {
            BlockKind::PaymentInfo => self.open.pmtinf = Some((at, block)),
            _ => self.open.block = Some((kind, at, block)),
        }
    }

    /// A transaction read ahead that the walk went past without taking it: the scanner and
    /// the walk disagree on what a transaction is, a bug, never a transaction dropped in
    /// silence.
    fn check_read_ahead(&self, pos: Pos) -> io::Result<()> {
        if self
            .ahead
            .borrow()
            .queue
            .front()
            .is_some_and(|(at, _)| *at <= pos.byte_offset)
        {
            return Err(io::Error::other(format!(
                "internal error: a transaction read ahead at byte {} is not one to the walk \
                 (<{}>)",
                pos.byte_offset, self.name
            )));
        }
        Ok(())
    }

    /// An end tag: a leaf's text kept, the blocks (and the Document) it closes reported.
    fn end(&mut self) {
        let Some(frame) = self.stack.last() else {
            return;
        };
        if !frame.had_child {
            // A leaf's position is its start tag's.
            let (text, start) = (frame.text.trim().to_string(), frame.pos);
            self.open.add_leaf(&self.stack, "", text, start);
        }
        let depth_index = self.stack.len() - 1;
        if let Some((kind, _, block)) = self.open.block.take_if(|(_, at, _)| *at == depth_index) {
            let payment_info = self.open.pmtinf.as_ref().map(|(_, b)| b);
            (self.on)(WalkEvent::Block {
                kind,
                block,
                payment_info,
            });
        }
        if let Some((_, block)) = self.open.pmtinf.take_if(|(at, _)| *at == depth_index) {
            (self.on)(WalkEvent::PaymentInfoEnd(block));
        }
        if self.document_at == Some(depth_index) {
            self.document_at = None;
            (self.on)(WalkEvent::DocumentEnd);
        }
        self.stack.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::FindingCode;
    use crate::formats::xml::{EVENT_BYTES_MAX, REFERENCES};
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
