//! The streaming walk over a camt document: quick-xml through the shared XML layer's
//! decoding and guard (`crate::formats::xml::open`: encodings, byte-order mark, event
//! size), the same depth limit, DOCTYPE and entity refusals, and a small state
//! machine: message → statement (`Stmt`/`Rpt`/`Ntfctn`) → balance, entry → entry details
//! (`NtryDtls`: `Btch`, `TxDtls`). Each statement is handed over as soon as its element
//! ends; nothing of it is kept after that but what the chain and sequence checks need.

use super::StatementRead;
use super::balance::BalanceB;
use super::details::{Batch, OpenDetail};
use super::entry::EntryB;
use super::statement::{Previous, StatementB};
use crate::findings::{Finding, FindingCode, FindingSink};
use crate::formats::statement::{Statement, StatementKind};
use crate::formats::xml::{self, DEPTH_MAX, EVENT_BYTES_MAX, Opened, Pos, REFERENCES, Resolved};
use chrono::{FixedOffset, NaiveDate};
use quick_xml::escape::{resolve_xml_entity, unescape_with};
use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use std::collections::HashMap;
use std::io::{self, BufRead};

/// The three camt messages read: the message element (its version suffix `V01`… dropped),
/// the statement element under it, the format string, the kind.
const MESSAGES: [(&str, &str, &str, StatementKind); 3] = [
    (
        "BkToCstmrAcctRpt",
        "Rpt",
        "camt.052",
        StatementKind::Intraday,
    ),
    ("BkToCstmrStmt", "Stmt", "camt.053", StatementKind::Final),
    (
        "BkToCstmrDbtCdtNtfctn",
        "Ntfctn",
        "camt.054",
        StatementKind::Notification,
    ),
];

const CAMT_NAMESPACE: &str = "urn:iso:std:iso:20022:tech:xsd:";

/// What a finding about an unrecognised document expects.
const SUPPORTED: &str = "a camt.052 (BkToCstmrAcctRpt), camt.053 (BkToCstmrStmt) or camt.054 \
     (BkToCstmrDbtCdtNtfctn) message, version 001.01 or later";

/// Elements whose index always shows in a path (they repeat).
fn indexed(name: &str) -> bool {
    matches!(
        name,
        "Stmt" | "Rpt" | "Ntfctn" | "Ntry" | "Bal" | "NtryDtls" | "TxDtls"
    )
}

pub(super) struct Frame {
    pub name: String,
    pub pos: Pos,
    pub index: u32,
    /// The names of the children seen so far, with their counts: the first `children`
    /// slots of `child_names` (kept beyond, for reuse: no allocation per element).
    pub child_names: Vec<(String, u32)>,
    pub children: usize,
    pub had_child: bool,
    pub text: String,
    /// The `Ccy` attribute, on amounts (`has_ccy`; the string is kept for reuse).
    pub ccy: String,
    pub has_ccy: bool,
}

/// The open elements; frames above the depth are kept for reuse. `names` holds the open
/// elements' names as `/A/B/C`, `starts[i]` where frame i's `/name` begins in it, so that
/// the path below a frame (`rel`) is a slice, never built.
#[derive(Default)]
pub(super) struct Stack {
    pub frames: Vec<Frame>,
    pub depth: usize,
    pub names: String,
    pub starts: Vec<usize>,
}

impl Stack {
    pub(super) fn open(&self) -> &[Frame] {
        &self.frames[..self.depth]
    }
    pub(super) fn top(&mut self) -> Option<&mut Frame> {
        self.depth.checked_sub(1).map(|i| &mut self.frames[i])
    }
    fn push(&mut self, name: &str, pos: Pos) {
        let index = match self.top() {
            Some(parent) => {
                parent.had_child = true;
                let seen = parent.children;
                match parent.child_names[..seen]
                    .iter_mut()
                    .find(|(n, _)| n == name)
                {
                    Some(c) => {
                        c.1 += 1;
                        c.1
                    }
                    None => {
                        if seen == parent.child_names.len() {
                            parent.child_names.push((name.to_string(), 1));
                        } else {
                            let slot = &mut parent.child_names[seen];
                            slot.0.clear();
                            slot.0.push_str(name);
                            slot.1 = 1;
                        }
                        parent.children += 1;
                        1
                    }
                }
            }
            None => 1,
        };
        if self.depth == self.frames.len() {
            self.frames.push(Frame {
                name: String::new(),
                pos,
                index,
                child_names: Vec::new(),
                children: 0,
                had_child: false,
                text: String::new(),
                ccy: String::new(),
                has_ccy: false,
            });
        }
        let f = &mut self.frames[self.depth];
        f.name.clear();
        f.name.push_str(name);
        f.pos = pos;
        f.index = index;
        f.children = 0;
        f.had_child = false;
        f.text.clear();
        f.has_ccy = false;
        if self.starts.len() == self.depth {
            self.starts.push(0);
        }
        self.starts[self.depth] = self.names.len();
        self.names.push('/');
        self.names.push_str(name);
        self.depth += 1;
    }
    fn pop(&mut self) {
        if self.depth > 0 {
            self.depth -= 1;
            self.names.truncate(self.starts[self.depth]);
        }
    }
    /// The absolute path with indices, down to the top frame.
    pub(super) fn path(&self) -> String {
        self.path_to(self.depth)
    }
    /// The absolute path of the first `n` frames.
    fn path_to(&self, n: usize) -> String {
        use std::fmt::Write;
        let mut s = String::with_capacity(self.names.len() + 16);
        for f in &self.frames[..n.min(self.depth)] {
            s.push('/');
            s.push_str(&f.name);
            if f.index > 1 || indexed(&f.name) {
                let _ = write!(s, "[{}]", f.index);
            }
        }
        if s.is_empty() {
            s.push('/');
        }
        s
    }
    /// The names of the frames after `from`, joined by `/`.
    pub(super) fn rel(&self, from: usize) -> &str {
        match self.starts.get(from + 1) {
            Some(&start) if from + 1 < self.depth => &self.names[start + 1..],
            _ => "",
        }
    }
}

pub(super) struct State<'a> {
    pub sink: FindingSink,
    pub on_statement: &'a mut dyn FnMut(Statement),
    /// The message element: its depth, format and kind.
    pub message: Option<(usize, &'static str, StatementKind)>,
    pub format: Option<&'static str>,
    pub seen_element: bool,
    /// `GrpHdr/CreDtTm`: the date of a statement without its own.
    pub group_created: Option<NaiveDate>,
    /// The time zone `GrpHdr/CreDtTm` is written in, if it says one.
    pub group_zone: Option<FixedOffset>,
    /// `GrpHdr/MsgId` of the open message: with the statement's number, what stands in
    /// for a missing statement `Id`.
    pub group_msg_id: Option<String>,
    /// A fatal finding stopped the walk.
    pub stopped: bool,
    pub first_element: Option<(String, Pos)>,
    pub statement: Option<StatementB>,
    pub balance: Option<BalanceB>,
    pub entry: Option<EntryB>,
    /// The open `TxDtls`: its depth, the detail, its amount.
    pub detail: Option<OpenDetail>,
    pub batch: Option<(usize, Batch)>,
    pub statements: u64,
    /// Entries read (their `entry_no`s), a statement dropped for want of a known
    /// message included.
    pub entries: u64,
    /// Entries of the statements handed out: the count reported.
    pub entries_out: u64,
    pub previous: HashMap<(String, Option<String>), Previous>,
}

/// The message element a local name is (its version suffix dropped).
fn message_of(name: &str) -> Option<(&'static str, &'static str, StatementKind)> {
    let base = match name.rfind('V') {
        Some(i)
            if i > 0 && name[i + 1..].bytes().all(|b| b.is_ascii_digit()) && i + 1 < name.len() =>
        {
            &name[..i]
        }
        _ => name,
    };
    MESSAGES
        .iter()
        .find(|(m, ..)| *m == base)
        .map(|(_, s, f, k)| (*s, *f, *k))
}

pub(super) fn read<R: BufRead>(
    input: R,
    on_statement: &mut dyn FnMut(Statement),
) -> io::Result<StatementRead> {
    let mut st = State::new(on_statement);
    let mut warnings = Vec::new();
    let opened = xml::open(input, &mut |f| warnings.push(f), None)?;
    st.sink.extend(warnings);
    let Opened {
        mut reader,
        since,
        lines,
        consumed,
        over_limit,
    } = match opened {
        Ok(o) => o,
        Err(end) => {
            st.fatal(end.fatal);
            return Ok(st.finish(1, end.bytes));
        }
    };
    let mut walk = Walk {
        st,
        stack: Stack::default(),
        name: String::new(),
        in_app_header: None,
    };
    let mut buf = Vec::with_capacity(8 * 1024);
    loop {
        since.set(0);
        let pos = Pos {
            byte_offset: consumed.get(),
            line: lines.get(),
        };
        match reader.read_resolved_event_into(&mut buf) {
            Ok((res, ev)) => {
                if !walk.event(&res, ev, pos) {
                    break;
                }
            }
            Err(e) => {
                let at = walk.stack.open().last().map(|f| f.pos).unwrap_or(pos);
                let path = walk.stack.path();
                walk.st
                    .fatal(xml::malformed(at, path, over_limit.get(), &e));
                break;
            }
        }
        buf.clear();
    }
    let total = reader.into_inner().total();
    Ok(walk.st.finish(lines.get(), total))
}

/// The walk between two events: the statements read so far, the open elements, the local
/// name of the element last started, and the depth of an open business application header
/// (nothing in it is read).
struct Walk<'a> {
    st: State<'a>,
    stack: Stack,
    name: String,
    in_app_header: Option<usize>,
}

impl Walk<'_> {
    /// Takes the event read at `pos` (its element's namespace `res`): `false` once the
    /// walk stops (at a fatal finding or at the end of the input).
    fn event(&mut self, res: &ResolveResult<'_>, ev: Event<'_>, pos: Pos) -> bool {
        match ev {
            Event::Start(e) => return self.start(res, &e, pos),
            Event::Text(t) => {
                if let Some(f) = self.stack.top()
                    && !f.had_child
                {
                    let text: &str = &t;
                    if !(f.text.is_empty() && text.bytes().all(|b| b.is_ascii_whitespace())) {
                        f.text.push_str(text);
                    }
                }
                return self.text_within_limit();
            }
            Event::GeneralRef(r) => {
                let Some(resolved) = xml::resolve_reference(&r) else {
                    self.st.fatal(xml::unresolved(pos, self.stack.path(), &r));
                    return false;
                };
                if let Some(f) = self.stack.top()
                    && !f.had_child
                {
                    match resolved {
                        Resolved::Char(c) => f.text.push(c),
                        Resolved::Entity(s) => f.text.push_str(s),
                    }
                }
                return self.text_within_limit();
            }
            Event::CData(t) => {
                if let Some(f) = self.stack.top() {
                    f.text.push_str(&t);
                }
                return self.text_within_limit();
            }
            Event::End(_) => self.end(),
            Event::DocType(_) => {
                self.st.fatal(xml::doctype(pos, self.stack.path()));
                return false;
            }
            Event::Eof => {
                // The input ended inside an element: a file cut short. What was read of it
                // is no statement file (its last statement and balances were never reached).
                if let Some(open) = self.stack.top() {
                    let (name, at) = (open.name.clone(), open.pos);
                    let path = self.stack.path();
                    self.st.fatal(xml::cut_short(pos, path, &name, at));
                }
                return false;
            }
            _ => {}
        }
        true
    }

    /// A start tag: the element pushed, its `Ccy` kept, the first element noted for a
    /// document that is no camt message, then the statement machine's start (not inside a
    /// business application header).
    fn start(&mut self, res: &ResolveResult<'_>, e: &BytesStart<'_>, pos: Pos) -> bool {
        if self.stack.depth >= DEPTH_MAX {
            self.st.fatal(xml::too_deep(pos, self.stack.path()));
            return false;
        }
        self.name.clear();
        self.name.push_str(e.local_name().as_ref());
        self.stack.push(&self.name, pos);
        self.st.seen_element = true;
        let depth = self.stack.depth - 1;
        if self.name == "AppHdr" && self.in_app_header.is_none() {
            self.in_app_header = Some(depth);
        }
        if let Some(f) = read_ccy(&mut self.stack, e, pos) {
            self.st.fatal(f);
            return false;
        }
        let name = self.name.as_str();
        if self.st.first_element.is_none() && name != "AppHdr" && self.in_app_header.is_none() {
            let is_wrapper =
                matches!(name, "Document") || (depth == 0 && message_of(name).is_none());
            if !is_wrapper {
                self.st.first_element = Some((name.to_string(), pos));
            }
        }
        if self.in_app_header.is_some() {
            return true;
        }
        let namespace = match res {
            ResolveResult::Bound(ns) => Some(ns.as_ref()),
            _ => None,
        };
        self.st.start(&self.stack, depth, name, pos, namespace);
        true
    }

    /// An end tag: the statement machine's end (not inside a business application header).
    fn end(&mut self) {
        if self.stack.depth == 0 {
            return;
        }
        let depth = self.stack.depth - 1;
        if self.in_app_header.is_none() {
            self.st.end(&self.stack, depth);
        }
        if self.in_app_header == Some(depth) {
            self.in_app_header = None;
        }
        self.stack.pop();
    }

    /// The text of the element open within [`EVENT_BYTES_MAX`]; else the walk stops there.
    fn text_within_limit(&mut self) -> bool {
        if text_too_long(&mut self.stack) {
            self.st.fatal(size_limit(&self.stack));
            return false;
        }
        true
    }
}

/// Reads the attributes of start tag `e` (at `pos`, the top of `stack`): each at most once,
/// references resolved, `Ccy` kept on the frame. The finding that stops the walk, if any.
fn read_ccy(stack: &mut Stack, e: &BytesStart<'_>, pos: Pos) -> Option<Finding> {
    let mut seen: Vec<&str> = Vec::new();
    for attr in e.attributes() {
        let attr = match attr {
            Ok(a) => a,
            Err(err) => return Some(xml::attribute_error(e, pos, &stack.path(), &err)),
        };
        let qualified = attr.key.into_inner();
        if qualified.starts_with("xmlns") || qualified.starts_with("xsi:") {
            continue;
        }
        let key = xml::local(qualified);
        if let Some(first) = seen.iter().find(|q| xml::local(q) == key) {
            return Some(Finding::error(
                FindingCode::DuplicateAttribute,
                pos.at(format!("{}@{key}", stack.path())),
                None,
                format!("one {key} attribute"),
                format!("{qualified} after {first}"),
            ));
        }
        seen.push(qualified);
        match unescape_with(&attr.value, resolve_xml_entity) {
            Ok(v) => {
                if key == "Ccy"
                    && let Some(f) = stack.top()
                {
                    f.has_ccy = true;
                    f.ccy.clear();
                    f.ccy.push_str(v.trim());
                }
            }
            Err(err) => {
                return Some(Finding::error(
                    FindingCode::XmlSyntax,
                    pos.at(format!("{}@{key}", stack.path())),
                    None,
                    REFERENCES,
                    err.to_string(),
                ));
            }
        }
    }
    None
}

fn text_too_long(stack: &mut Stack) -> bool {
    stack
        .top()
        .is_some_and(|f| f.text.len() as u64 > EVENT_BYTES_MAX)
}

fn size_limit(stack: &Stack) -> Finding {
    let at = stack.open().last().map(|f| f.pos).unwrap_or_default();
    Finding::error(
        FindingCode::SizeLimit,
        at.at(stack.path()),
        None,
        format!("a text of at most {EVENT_BYTES_MAX} bytes"),
        "a longer text",
    )
}

impl<'a> State<'a> {
    fn new(on_statement: &'a mut dyn FnMut(Statement)) -> Self {
        State {
            sink: FindingSink::new(),
            on_statement,
            message: None,
            format: None,
            seen_element: false,
            group_created: None,
            group_zone: None,
            group_msg_id: None,
            stopped: false,
            first_element: None,
            statement: None,
            balance: None,
            entry: None,
            detail: None,
            batch: None,
            statements: 0,
            entries: 0,
            entries_out: 0,
            previous: HashMap::new(),
        }
    }

    pub(super) fn fatal(&mut self, f: Finding) {
        self.stopped = true;
        self.sink.push_at_end(f);
    }

    /// An element starts at `depth`: a message, a statement, a balance or an entry opens,
    /// or a part of an entry's details.
    fn start(
        &mut self,
        stack: &Stack,
        depth: usize,
        name: &str,
        pos: Pos,
        namespace: Option<&str>,
    ) {
        let path = || stack.path();
        let Some((msg_at, msg_format, _)) = self.message else {
            if let Some((_, format, kind)) = message_of(name) {
                self.message_start(depth, name, format, kind, pos, &path(), namespace);
            }
            return;
        };
        let statement_name = MESSAGES
            .iter()
            .find(|m| m.2 == msg_format)
            .map_or("", |m| m.1);
        if depth == msg_at + 1 && name == statement_name {
            let number = stack.frames[depth].index;
            self.statement = Some(StatementB::new(pos.at(path()), depth, number));
            return;
        }
        let Some(s) = &self.statement else { return };
        if depth == s.at + 1 {
            match name {
                "Bal" => self.balance = Some(BalanceB::new(pos.at(path()), depth)),
                "Ntry" => self.entry = Some(EntryB::new(pos.at(path()), depth)),
                _ => {}
            }
            return;
        }
        let parent = depth.checked_sub(1).map(|i| stack.frames[i].name.as_str());
        self.details_start(depth, name, parent);
    }

    #[allow(clippy::too_many_arguments)]
    fn message_start(
        &mut self,
        depth: usize,
        name: &str,
        format: &'static str,
        kind: StatementKind,
        pos: Pos,
        path: &str,
        namespace: Option<&str>,
    ) {
        // The namespace, when there is one, must name the same message (any version).
        if let Some(ns) = &namespace {
            let version = ns.strip_prefix(CAMT_NAMESPACE).unwrap_or("");
            let ok = version
                .strip_prefix(format)
                .and_then(|v| v.strip_prefix(".001."))
                .is_some_and(|v| v.len() == 2 && v.bytes().all(|b| b.is_ascii_digit()));
            if !ok {
                self.sink.push(Finding::error(
                    FindingCode::UnsupportedMessage,
                    pos.at(path),
                    None,
                    format!("{name} in the namespace {CAMT_NAMESPACE}{format}.001.NN"),
                    format!("namespace {ns}"),
                ));
            }
        }
        match self.format {
            Some(f) if f != format => {
                self.sink.push(Finding::error(
                    FindingCode::UnsupportedMessage,
                    pos.at(path),
                    None,
                    format!("{f} messages only, as the file's first message"),
                    name.to_string(),
                ));
            }
            _ => self.format = Some(format),
        }
        self.group_msg_id = None;
        self.group_zone = None;
        self.message = Some((depth, format, kind));
    }

    /// An element at `depth` ended: the innermost open part (detail, batch, entry, balance,
    /// statement, message) closed, or the leaf read into it.
    fn end(&mut self, stack: &Stack, depth: usize) {
        let Some(frame) = stack.frames.get(depth) else {
            return;
        };
        let leaf = !frame.had_child;
        if let Some((at, ..)) = &self.detail {
            let at = *at;
            if depth == at {
                self.close_detail();
            } else if leaf {
                self.detail_leaf(stack, at, frame);
            }
            return;
        }
        if let Some((at, _)) = &self.batch {
            let at = *at;
            if depth == at {
                self.close_batch();
            } else if leaf {
                self.batch_leaf(stack, at, frame);
            }
            return;
        }
        if let Some(e) = &self.entry {
            let at = e.at;
            if depth == at {
                self.close_entry();
            } else if let Some((g_at, _)) = &e.group
                && *g_at == depth
                && *g_at != at
            {
                if let Some(e) = &mut self.entry
                    && let Some(g) = e.group.take()
                {
                    self.close_group(g);
                }
            } else if leaf {
                self.entry_leaf(stack, at, frame);
            }
            return;
        }
        if let Some(b) = &self.balance {
            let at = b.at;
            if depth == at {
                self.close_balance();
            } else if leaf {
                self.balance_leaf(stack, at, frame);
            }
            return;
        }
        if let Some(s) = &self.statement {
            let at = s.at;
            if depth == at {
                self.close_statement();
            } else if leaf {
                self.statement_leaf(stack, at, frame);
            }
            return;
        }
        if let Some((at, ..)) = self.message {
            if at == depth {
                self.message = None;
            } else if leaf && stack.rel(at) == "GrpHdr/CreDtTm" {
                self.group_created = self.date(frame, stack, true);
                self.group_zone = super::values::zone_of(frame.text.trim());
            } else if leaf && stack.rel(at) == "GrpHdr/MsgId" {
                self.group_msg_id = super::values::non_empty(&frame.text);
            }
        }
    }

    fn finish(mut self, lines: u64, bytes: u64) -> StatementRead {
        let end = Pos {
            byte_offset: bytes,
            line: lines,
        };
        if !self.stopped {
            if !self.seen_element {
                self.sink.push_at_end(Finding::error(
                    FindingCode::EmptyFile,
                    end.at("/"),
                    None,
                    SUPPORTED,
                    if bytes == 0 {
                        "an empty file".to_string()
                    } else {
                        "no XML element".to_string()
                    },
                ));
            } else if self.format.is_none() {
                let (found, at) = match &self.first_element {
                    Some((name, pos)) => (format!("<{name}>"), *pos),
                    None => ("no camt message element".to_string(), end),
                };
                self.sink.push_at_end(Finding::error(
                    FindingCode::UnsupportedMessage,
                    at.at("/"),
                    None,
                    SUPPORTED,
                    found,
                ));
            } else if self.statements == 0 {
                self.sink.push_at_end(Finding::error(
                    FindingCode::NoStatements,
                    end.at("/"),
                    None,
                    "at least one statement (Stmt, Rpt or Ntfctn)",
                    "none",
                ));
            }
        }
        StatementRead {
            format: self.format.unwrap_or("camt"),
            statements: self.statements,
            entries: self.entries_out,
            findings: self.sink.finish(end.at("/")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_with_and_without_version_suffix() {
        assert_eq!(message_of("BkToCstmrStmt").map(|m| m.1), Some("camt.053"));
        assert_eq!(
            message_of("BkToCstmrAcctRptV01").map(|m| m.1),
            Some("camt.052")
        );
        assert_eq!(
            message_of("BkToCstmrDbtCdtNtfctnV02").map(|m| m.1),
            Some("camt.054")
        );
        assert_eq!(message_of("BkToCstmrStmtV"), None);
        assert_eq!(message_of("FIToFICstmrCdtTrf"), None);
    }
}
