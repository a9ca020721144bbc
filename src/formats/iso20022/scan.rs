//! The scanner that finds the transactions of a document in the bytes read ahead, for the
//! workers to read ([`super::cut`]): it follows the markup only as far as it needs to, and
//! stops cutting for good at anything it does not follow.

use super::cut::TX_CUT_MAX;
use crate::formats::xml::DEPTH_MAX;

/// A transaction found by the scanner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// Absolute byte offsets of its `<` and of the byte after its end tag.
    pub start: u64,
    pub end: u64,
    /// Elements around it (the walk's depth at its start tag).
    pub depth: usize,
}

/// Follows the markup of a document well enough to find its transactions: element names
/// and depth, comments, CDATA sections, processing instructions and quoted attribute
/// values stepped over. Anything else stops it for good ([`Scanner::stopped`]).
#[derive(Default)]
pub(crate) struct Scanner {
    /// Qualified names of the open elements, back to back, and where each starts.
    names: Vec<u8>,
    stack: Vec<usize>,
    /// Stack index of the open `Document` element (the walk's `document_at`).
    document: Option<usize>,
    /// The transaction being scanned: its start and stack index.
    tx: Option<(u64, usize)>,
    stopped: bool,
    /// Searchers for the last transaction name seen ([`Scanner::skip_transaction`]).
    fast: Option<Fast>,
}

/// What [`Scanner::skip_transaction`] looks for: the name's start and end tags, and the
/// markup that makes it read tag by tag instead.
struct Fast {
    name: Vec<u8>,
    open: memchr::memmem::Finder<'static>,
    close: memchr::memmem::Finder<'static>,
    bang: memchr::memmem::Finder<'static>,
    question: memchr::memmem::Finder<'static>,
}

/// What the scanner needs next.
enum Step {
    /// More bytes: the construct at the index is not complete.
    More(usize),
    /// Go on from the index.
    At(usize),
    /// Stop cutting.
    Stop,
}

impl Scanner {
    pub(crate) fn stopped(&self) -> bool {
        self.stopped
    }

    /// The start of the transaction being scanned, if one is.
    pub(crate) fn open_transaction(&self) -> Option<u64> {
        self.tx.map(|(s, _)| s)
    }

    /// Stops cutting: the rest of the file goes to the walk as written.
    pub(crate) fn stop(&mut self) {
        self.stopped = true;
        self.tx = None;
    }

    /// Scans `buf` (whose byte 0 is at absolute offset `base`) from `*at`, pushing each
    /// transaction that ends in it to `found`; `*at` is left where the scan must resume
    /// (an incomplete construct starts there, or the end).
    pub(crate) fn scan(&mut self, buf: &[u8], base: u64, at: &mut usize, found: &mut Vec<Found>) {
        while !self.stopped {
            let Some(lt) = memchr::memchr(b'<', &buf[*at..]) else {
                *at = buf.len();
                return;
            };
            let lt = *at + lt;
            match self.step(buf, base, lt, found) {
                Step::More(i) => {
                    *at = i;
                    return;
                }
                Step::At(i) => *at = i,
                Step::Stop => self.stop(),
            }
            if let Some((start, _)) = self.tx
                && base + *at as u64 - start > TX_CUT_MAX as u64
            {
                // Too long to cut: the walk reads it.
                self.tx = None;
            }
        }
    }

    fn step(&mut self, buf: &[u8], base: u64, lt: usize, found: &mut Vec<Found>) -> Step {
        let rest = &buf[lt..];
        if rest.len() < 2 {
            return Step::More(lt);
        }
        match rest[1] {
            b'!' => comment_or_cdata(buf, lt),
            b'?' => {
                if rest.len() < 3 {
                    return Step::More(lt);
                }
                if rest[2] == b'>' {
                    return Step::Stop;
                }
                find_after(buf, lt, 2, b"?>").map_or(Step::More(lt), Step::At)
            }
            b'/' => self.end_tag(buf, base, lt, found),
            _ => self.start_tag(buf, base, lt, found),
        }
    }

    /// An end tag at `lt`: it must close the element open, which may end a transaction or
    /// the Document.
    fn end_tag(&mut self, buf: &[u8], base: u64, lt: usize, found: &mut Vec<Found>) -> Step {
        let rest = &buf[lt..];
        let Some(gt) = memchr::memchr(b'>', rest) else {
            return Step::More(lt);
        };
        let content = &rest[2..gt];
        let name_end = content
            .iter()
            .rposition(|b| !is_whitespace(*b))
            .map_or(0, |i| i + 1);
        let name = &content[..name_end];
        let Some(&open_at) = self.stack.last() else {
            return Step::Stop;
        };
        if &self.names[open_at..] != name {
            return Step::Stop;
        }
        self.names.truncate(open_at);
        self.stack.pop();
        let depth = self.stack.len();
        let end = lt + gt + 1;
        if let Some((start, at)) = self.tx
            && at == depth
        {
            found.push(Found {
                start,
                end: base + end as u64,
                depth,
            });
            self.tx = None;
        }
        if self.document == Some(depth) {
            self.document = None;
        }
        Step::At(end)
    }

    /// A start tag at `lt`: to its `>`, stepping over quoted values; a transaction starts
    /// there, read in one step when it can be ([`Scanner::skip_transaction`]).
    fn start_tag(&mut self, buf: &[u8], base: u64, lt: usize, found: &mut Vec<Found>) -> Step {
        let Some(gt) = tag_end(buf, lt) else {
            return Step::More(lt);
        };
        let content = &buf[lt + 1..gt];
        let (content, empty) = match content.strip_suffix(b"/") {
            Some(c) => (c, true),
            None => (content, false),
        };
        let name_len = content
            .iter()
            .position(|b| is_whitespace(*b))
            .unwrap_or(content.len());
        let name = &content[..name_len];
        if name.is_empty() || self.stack.len() >= DEPTH_MAX {
            return Step::Stop;
        }
        let local = local_of(name);
        let depth = self.stack.len();
        if depth == 0 && local == b"Message" {
            // The TCH RTP envelope: its document is found by namespace; not cut.
            return Step::Stop;
        }
        if empty {
            return Step::At(gt + 1);
        }
        if self.tx.is_none() && self.starts_transaction(local, depth) {
            let start = base + lt as u64;
            if let Some(end) = self.skip_transaction(buf, lt, gt + 1, name) {
                found.push(Found {
                    start,
                    end: base + end as u64,
                    depth,
                });
                return Step::At(end);
            }
            self.tx = Some((start, depth));
        }
        if local == b"Document" && self.document.is_none() {
            self.document = Some(depth);
        }
        self.stack.push(self.names.len());
        self.names.extend_from_slice(name);
        Step::At(gt + 1)
    }

    /// Whether an element `local`, `depth` elements deep, is a transaction to the walk: at
    /// its depth under the Document, or under a `PmtInf`.
    fn starts_transaction(&self, local: &[u8], depth: usize) -> bool {
        let Some(d) = self.document else {
            return false;
        };
        let parent = self.stack.last().map(|&p| local_of(&self.names[p..]));
        match (local, depth - d) {
            (b"CdtTrfTxInf" | b"TxInf", 2) => true,
            (b"CdtTrfTxInf", 3) => parent == Some(&b"PmtInf"[..]),
            _ => false,
        }
    }
}

/// A comment or CDATA section at `lt`, stepped over; anything else after `<!` (a DOCTYPE,
/// refused by the walk, or markup that is not XML) stops the cutting.
fn comment_or_cdata(buf: &[u8], lt: usize) -> Step {
    let rest = &buf[lt..];
    for (open, close) in [(&b"<!--"[..], &b"-->"[..]), (b"<![CDATA[", b"]]>")] {
        if rest.len() < open.len() && open.starts_with(rest) {
            return Step::More(lt);
        }
        if rest.starts_with(open) {
            // `<!-->` and `<!--->`: comments the reader may end otherwise.
            if open == b"<!--" && (rest.len() < 6) {
                return Step::More(lt);
            }
            if open == b"<!--" && (rest[4] == b'>' || rest[4..].starts_with(b"->")) {
                return Step::Stop;
            }
            return find_after(buf, lt, open.len(), close).map_or(Step::More(lt), Step::At);
        }
    }
    Step::Stop
}

/// The index after the first `what` in `buf` from `lt + from`.
fn find_after(buf: &[u8], lt: usize, from: usize, what: &[u8]) -> Option<usize> {
    memchr::memmem::find(buf.get(lt + from..).unwrap_or(&[]), what)
        .map(|i| lt + from + i + what.len())
}

/// The `>` of the start tag at `lt`, quoted attribute values stepped over; `None` when it
/// is not in `buf` yet.
fn tag_end(buf: &[u8], lt: usize) -> Option<usize> {
    let mut i = lt + 1;
    loop {
        let j = i + memchr::memchr3(b'>', b'"', b'\'', &buf[i..])?;
        if buf[j] == b'>' {
            return Some(j);
        }
        let q = memchr::memchr(buf[j], &buf[j + 1..])?;
        i = j + 1 + q + 1;
    }
}

/// The local part of a qualified name (`p:TxInf` → `TxInf`).
fn local_of(name: &[u8]) -> &[u8] {
    name.rsplit(|b| *b == b':').next().unwrap_or(name)
}

impl Scanner {
    /// A transaction read in one step, not tag by tag: the first end tag of its name after
    /// its start tag (at `lt`, its content from `body`), where nothing between could hide
    /// or fake one — no comment, CDATA section or processing instruction (`<!`, `<?`), no
    /// start tag of the same name. `None` (read tag by tag) where that does not hold or the
    /// end is not in `buf` yet. What it gives is checked again by the worker, which reads
    /// the bytes as one element or gives up (and the cutter then stops cutting: see
    /// [`Cutter`]), so a start tag whose attribute value holds `</CdtTrfTxInf>` costs the
    /// cut, never a finding.
    fn skip_transaction(
        &mut self,
        buf: &[u8],
        lt: usize,
        body: usize,
        name: &[u8],
    ) -> Option<usize> {
        if self.fast.as_ref().is_none_or(|f| f.name != name) {
            let with = |prefix: &[u8]| {
                let mut p = prefix.to_vec();
                p.extend_from_slice(name);
                memchr::memmem::Finder::new(&p).into_owned()
            };
            self.fast = Some(Fast {
                name: name.to_vec(),
                open: with(b"<"),
                close: with(b"</"),
                bang: memchr::memmem::Finder::new(b"<!").into_owned(),
                question: memchr::memmem::Finder::new(b"<?").into_owned(),
            });
        }
        let fast = self.fast.as_ref()?;
        let limit = buf.len().min(lt + TX_CUT_MAX);
        let region = buf.get(body..limit)?;
        let close = fast.close.find(region)?;
        let after = body + close + 2 + name.len();
        let gt = after + buf.get(after..)?.iter().position(|b| !is_whitespace(*b))?;
        if buf[gt] != b'>' {
            return None;
        }
        let inside = &region[..close];
        if fast.bang.find(inside).is_some()
            || fast.question.find(inside).is_some()
            || fast.open.find(inside).is_some()
        {
            return None;
        }
        Some(gt + 1)
    }
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\r' | b'\n' | b'\t')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scanner_finds_transactions_at_the_walks_depths() {
        let xml = b"<?xml version=\"1.0\"?><!-- <CdtTrfTxInf> --><Document><CstmrCdtTrfInitn>\
            <GrpHdr><CdtTrfTxInf>no</CdtTrfTxInf></GrpHdr>\
            <PmtInf><CdtTrfTxInf><A b='>'>1</A></CdtTrfTxInf><X><CdtTrfTxInf/></X></PmtInf>\
            <CdtTrfTxInf><![CDATA[<]]></CdtTrfTxInf></CstmrCdtTrfInitn></Document>";
        let mut found = Vec::new();
        let mut at = 0;
        let mut scanner = Scanner::default();
        scanner.scan(xml, 100, &mut at, &mut found);
        let text = String::from_utf8_lossy(xml);
        let spans: Vec<&str> = found
            .iter()
            .map(|f| &text[(f.start - 100) as usize..(f.end - 100) as usize])
            .collect();
        assert_eq!(
            spans,
            [
                "<CdtTrfTxInf><A b='>'>1</A></CdtTrfTxInf>",
                "<CdtTrfTxInf><![CDATA[<]]></CdtTrfTxInf>"
            ]
        );
        assert_eq!(found.iter().map(|f| f.depth).collect::<Vec<_>>(), [3, 2]);
        assert_eq!(at, xml.len());
        assert!(!scanner.stopped());
        // The RTP envelope is not cut.
        let mut scanner = Scanner::default();
        let (mut at, mut found) = (0, Vec::new());
        scanner.scan(
            b"<Message xmlns=\"urn:tch\"><CreditTransfer>",
            0,
            &mut at,
            &mut found,
        );
        assert!(scanner.stopped());
    }
}
