//! The streaming walk over a camt document: quick-xml through the shared XML layer's
//! decoding and guard (`crate::formats::xml::open`: encodings, byte-order mark, event
//! size), the same depth limit, DOCTYPE and entity refusals, and a small state
//! machine: message → statement (`Stmt`/`Rpt`/`Ntfctn`) → balance, entry → entry details
//! (`NtryDtls`: `Btch`, `TxDtls`). Each statement is handed over as soon as its element
//! ends; nothing of it is kept after that but what the chain and sequence checks need.

use super::StatementRead;
use crate::findings::{Finding, FindingCode, FindingSink, XmlPosition};
use crate::formats::statement::{
    Balance, BalanceKind, Detail, Entry, EntryStatus, Statement, StatementKind, check_balance,
};
use crate::formats::xml::amount::{parse_amount, parse_decimal};
use crate::formats::xml::{self, DEPTH_MAX, EVENT_BYTES_MAX, Opened, Pos, REFERENCES, Resolved};
use crate::money::{Currency, CurrencyError, minor_exponent};
use chrono::NaiveDate;
use quick_xml::escape::{resolve_xml_entity, unescape_with};
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use rust_decimal::Decimal;
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

struct Frame {
    name: String,
    pos: Pos,
    index: u32,
    /// The names of the children seen so far, with their counts: the first `children`
    /// slots of `child_names` (kept beyond, for reuse: no allocation per element).
    child_names: Vec<(String, u32)>,
    children: usize,
    had_child: bool,
    text: String,
    /// The `Ccy` attribute, on amounts (`has_ccy`; the string is kept for reuse).
    ccy: String,
    has_ccy: bool,
}

/// The open elements; frames above the depth are kept for reuse. `names` holds the open
/// elements' names as `/A/B/C`, `starts[i]` where frame i's `/name` begins in it, so that
/// the path below a frame (`rel`) is a slice, never built.
#[derive(Default)]
struct Stack {
    frames: Vec<Frame>,
    depth: usize,
    names: String,
    starts: Vec<usize>,
}

impl Stack {
    fn open(&self) -> &[Frame] {
        &self.frames[..self.depth]
    }
    fn top(&mut self) -> Option<&mut Frame> {
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
    fn path(&self) -> String {
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
    fn rel(&self, from: usize) -> &str {
        match self.starts.get(from + 1) {
            Some(&start) if from + 1 < self.depth => &self.names[start + 1..],
            _ => "",
        }
    }
}

/// A batch (`Btch`) of an entry's details.
#[derive(Default)]
struct Batch {
    nb_of_txs: Option<(u64, XmlPosition)>,
    total: Option<(i64, String, XmlPosition)>,
    /// `PmtInfId`, `MsgId`: what the batch belongs to ([`Entry::batch_ref`]).
    pmt_inf_id: Option<String>,
    msg_id: Option<String>,
}

/// One `NtryDtls` (or, in version 01, the entry itself): its batch and its details.
#[derive(Default)]
struct Group {
    batch: Option<Batch>,
    details: u64,
    /// Detail amounts by currency; `None` once a detail has no amount.
    amounts: Option<Vec<(String, i64)>>,
}

struct EntryB {
    pos: XmlPosition,
    at: usize,
    amount: Option<u64>,
    currency: Option<String>,
    credit: Option<bool>,
    /// `Amt`, `CdtDbtInd`, `Sts` were written (a wrong value has its own finding).
    seen: [bool; 3],
    reversal: bool,
    status: Option<EntryStatus>,
    booking: Option<NaiveDate>,
    value: Option<NaiveDate>,
    bank_ref: Option<String>,
    customer_ref: Option<String>,
    domain: Option<String>,
    family: Option<String>,
    sub_family: Option<String>,
    proprietary: Option<String>,
    additional: Option<String>,
    /// The first batch's `PmtInfId`, else its `MsgId` ([`Entry::batch_ref`]).
    batch_ref: Option<String>,
    details: Vec<Detail>,
    group: Option<(usize, Group)>,
}

struct StatementB {
    pos: XmlPosition,
    at: usize,
    id: Option<String>,
    electronic_seq: Option<String>,
    legal_seq: Option<String>,
    created: Option<NaiveDate>,
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
    copy: bool,
    iban: Option<String>,
    other_id: Option<String>,
    currency: Option<String>,
    servicer: Option<String>,
    balances: Vec<Balance>,
    entries: Vec<Entry>,
    /// `TxsSummry`: (leaf, value, position) for the counts and sums.
    counts: Vec<(&'static str, u64, XmlPosition)>,
    sums: Vec<(&'static str, Decimal, XmlPosition)>,
}

struct BalanceB {
    pos: XmlPosition,
    at: usize,
    code: Option<String>,
    amount: Option<(i64, String)>,
    debit: Option<bool>,
    date: Option<NaiveDate>,
}

/// An open `TxDtls`: its depth, the detail so far, its amount and currency.
type OpenDetail = (usize, Detail, Option<(i64, String)>);

/// The previous statement of an account: its closing booked balance and sequence number.
struct Previous {
    closing: Option<(i64, String, String)>,
    sequence: Option<(u64, String)>,
}

struct State<'a> {
    sink: FindingSink,
    on_statement: &'a mut dyn FnMut(Statement),
    /// The message element: its depth, format and kind.
    message: Option<(usize, &'static str, StatementKind)>,
    format: Option<&'static str>,
    seen_element: bool,
    /// `GrpHdr/CreDtTm`: the date of a statement without its own.
    group_created: Option<NaiveDate>,
    /// A fatal finding stopped the walk.
    stopped: bool,
    first_element: Option<(String, Pos)>,
    statement: Option<StatementB>,
    balance: Option<BalanceB>,
    entry: Option<EntryB>,
    /// The open `TxDtls`: its depth, the detail, its amount.
    detail: Option<OpenDetail>,
    batch: Option<(usize, Batch)>,
    statements: u64,
    entries: u64,
    previous: HashMap<(String, Option<String>), Previous>,
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
    let mut st = State {
        sink: FindingSink::new(),
        on_statement,
        message: None,
        format: None,
        seen_element: false,
        group_created: None,
        stopped: false,
        first_element: None,
        statement: None,
        balance: None,
        entry: None,
        detail: None,
        batch: None,
        statements: 0,
        entries: 0,
        previous: HashMap::new(),
    };
    let mut warnings = Vec::new();
    let opened = xml::open(input, &mut |f| warnings.push(f), None)?;
    st.sink.extend(warnings);
    let Opened {
        mut reader,
        since,
        lines,
        consumed,
        over_limit,
        ..
    } = match opened {
        Ok(o) => o,
        Err(end) => {
            st.fatal(end.fatal);
            return Ok(st.finish(1, end.bytes));
        }
    };
    let mut buf = Vec::with_capacity(8 * 1024);
    let mut stack = Stack::default();
    let mut name = String::new();
    let mut in_app_header: Option<usize> = None;
    loop {
        since.set(0);
        let pos = Pos {
            byte_offset: consumed.get(),
            line: lines.get(),
        };
        let ev = match reader.read_resolved_event_into(&mut buf) {
            Ok(ev) => ev,
            Err(e) => {
                let at = stack.open().last().map(|f| f.pos).unwrap_or(pos);
                let code = if over_limit.get() {
                    FindingCode::SizeLimit
                } else {
                    FindingCode::XmlSyntax
                };
                st.fatal(Finding::error(
                    code,
                    at.at(stack.path()),
                    None,
                    "well-formed XML within the limits",
                    e.to_string(),
                ));
                break;
            }
        };
        match ev {
            (res, Event::Start(e)) => {
                if stack.depth >= DEPTH_MAX {
                    st.fatal(Finding::error(
                        FindingCode::DepthLimit,
                        pos.at(stack.path()),
                        None,
                        format!("at most {DEPTH_MAX} nested elements"),
                        "deeper nesting",
                    ));
                    break;
                }
                name.clear();
                name.push_str(e.local_name().as_ref());
                stack.push(&name, pos);
                st.seen_element = true;
                let depth = stack.depth - 1;
                if name == "AppHdr" && in_app_header.is_none() {
                    in_app_header = Some(depth);
                }
                // Attributes: each at most once; `Ccy` kept on the frame.
                let mut seen: Vec<&str> = Vec::new();
                let mut failed = None;
                for attr in e.attributes() {
                    let attr = match attr {
                        Ok(a) => a,
                        Err(err) => {
                            failed = Some(xml::attribute_error(&e, pos, &stack.path(), &err));
                            break;
                        }
                    };
                    let qualified = attr.key.into_inner();
                    if qualified.starts_with("xmlns") || qualified.starts_with("xsi:") {
                        continue;
                    }
                    let key = xml::local(qualified);
                    if let Some(first) = seen.iter().find(|q| xml::local(q) == key) {
                        failed = Some(Finding::error(
                            FindingCode::DuplicateAttribute,
                            pos.at(format!("{}@{key}", stack.path())),
                            None,
                            format!("one {key} attribute"),
                            format!("{qualified} after {first}"),
                        ));
                        break;
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
                            failed = Some(Finding::error(
                                FindingCode::XmlSyntax,
                                pos.at(format!("{}@{key}", stack.path())),
                                None,
                                REFERENCES,
                                err.to_string(),
                            ));
                            break;
                        }
                    }
                }
                if let Some(f) = failed {
                    st.fatal(f);
                    break;
                }
                if st.first_element.is_none() && name != "AppHdr" && in_app_header.is_none() {
                    let is_wrapper = matches!(name.as_str(), "Document")
                        || (depth == 0 && message_of(&name).is_none());
                    if !is_wrapper {
                        st.first_element = Some((name.clone(), pos));
                    }
                }
                if in_app_header.is_some() {
                    continue;
                }
                let namespace = match &res {
                    ResolveResult::Bound(ns) => Some(ns.as_ref()),
                    _ => None,
                };
                st.start(&stack, depth, &name, pos, namespace);
            }
            (_, Event::Text(t)) => {
                if let Some(f) = stack.top()
                    && !f.had_child
                {
                    let text: &str = &t;
                    if !(f.text.is_empty() && text.bytes().all(|b| b.is_ascii_whitespace())) {
                        f.text.push_str(text);
                    }
                }
                if text_too_long(&mut stack) {
                    st.fatal(size_limit(&stack));
                    break;
                }
            }
            (_, Event::GeneralRef(r)) => {
                let Some(resolved) = xml::resolve_reference(&r) else {
                    st.fatal(Finding::error(
                        FindingCode::XmlSyntax,
                        pos.at(stack.path()),
                        None,
                        REFERENCES,
                        format!("&{};", &*r),
                    ));
                    break;
                };
                if let Some(f) = stack.top()
                    && !f.had_child
                {
                    match resolved {
                        Resolved::Char(c) => f.text.push(c),
                        Resolved::Entity(s) => f.text.push_str(s),
                    }
                }
                if text_too_long(&mut stack) {
                    st.fatal(size_limit(&stack));
                    break;
                }
            }
            (_, Event::CData(t)) => {
                if let Some(f) = stack.top() {
                    f.text.push_str(&t);
                }
                if text_too_long(&mut stack) {
                    st.fatal(size_limit(&stack));
                    break;
                }
            }
            (_, Event::End(_)) => {
                if stack.depth == 0 {
                    continue;
                }
                let depth = stack.depth - 1;
                if in_app_header.is_none() {
                    st.end(&stack, depth);
                }
                if in_app_header == Some(depth) {
                    in_app_header = None;
                }
                stack.pop();
            }
            (_, Event::DocType(_)) => {
                st.fatal(Finding::error(
                    FindingCode::DoctypeForbidden,
                    pos.at(stack.path()),
                    None,
                    "no DOCTYPE (entities and external references are refused)",
                    "<!DOCTYPE ...>",
                ));
                break;
            }
            (_, Event::Eof) => {
                // The input ended inside an element: a file cut short. What was read of it
                // is no statement file (its last statement and balances were never reached).
                if let Some(open) = stack.top() {
                    let (name, at) = (open.name.clone(), open.pos);
                    st.fatal(Finding::error(
                        FindingCode::XmlSyntax,
                        pos.at(stack.path()),
                        None,
                        "a complete document: every element closed",
                        format!(
                            "the end of the input inside <{name}> (opened at line {}, byte {}): the file is cut short",
                            at.line, at.byte_offset
                        ),
                    ));
                }
                break;
            }
            _ => {}
        }
        buf.clear();
    }
    let total = reader.into_inner().total();
    Ok(st.finish(lines.get(), total))
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

/// `YYYY-MM-DD`, a real date.
fn parse_date(text: &str) -> Option<NaiveDate> {
    match text.as_bytes() {
        [y @ .., b'-', m1, m2, b'-', d1, d2] if y.len() == 4 => {
            let n = |d: &[u8]| {
                d.iter().try_fold(0u32, |n, &b| {
                    b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
                })
            };
            NaiveDate::from_ymd_opt(n(y)? as i32, n(&[*m1, *m2])?, n(&[*d1, *d2])?)
        }
        _ => None,
    }
}

/// An ISO 8601 date-time as ISO 20022 writes it (`2025-07-23T00:00:00.000000000`,
/// `…+01:00`, `…Z`): its date as written (no time zone conversion).
fn parse_date_time(text: &str) -> Option<NaiveDate> {
    let date = parse_date(text.get(..10)?)?;
    let rest = text.get(10..)?.strip_prefix('T')?;
    let time_ok = match rest.as_bytes() {
        [h1, h2, b':', m1, m2, b':', s1, s2, ..] => {
            let two = |a: u8, b: u8| {
                (a.is_ascii_digit() && b.is_ascii_digit()).then(|| (a - b'0') * 10 + (b - b'0'))
            };
            // As chrono's `%H:%M:%S`: a leap second (`:60`) is a real time.
            matches!((two(*h1, *h2), two(*m1, *m2), two(*s1, *s2)),
                (Some(h), Some(m), Some(s)) if h < 24 && m < 60 && s <= 60)
        }
        _ => false,
    };
    if !time_ok {
        return None;
    }
    let mut rest = rest.get(8..)?;
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        rest = &r[n..];
    }
    let zone_ok = match rest.as_bytes() {
        [] | [b'Z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            [h1, h2, m1, m2].iter().all(|b| b.is_ascii_digit())
                && (h1 - b'0') * 10 + (h2 - b'0') <= 14
                && (m1 - b'0') * 10 + (m2 - b'0') < 60
        }
        _ => false,
    };
    zone_ok.then_some(date)
}

/// Whitespace runs collapsed to one blank.
fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

fn append(slot: &mut Option<String>, text: &str) {
    let text = collapse(text);
    if text.is_empty() {
        return;
    }
    match slot {
        Some(s) => {
            s.push(' ');
            s.push_str(&text);
        }
        None => *slot = Some(text),
    }
}

fn non_empty(text: &str) -> Option<String> {
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_string())
}

impl State<'_> {
    fn fatal(&mut self, f: Finding) {
        self.stopped = true;
        self.sink.push_at_end(f);
    }

    fn start(
        &mut self,
        stack: &Stack,
        depth: usize,
        name: &str,
        pos: Pos,
        namespace: Option<&str>,
    ) {
        let path = || stack.path();
        let parent = depth.checked_sub(1).map(|i| stack.frames[i].name.as_str());
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
            self.statement = Some(StatementB {
                pos: pos.at(path()),
                at: depth,
                id: None,
                electronic_seq: None,
                legal_seq: None,
                created: None,
                from: None,
                to: None,
                copy: false,
                iban: None,
                other_id: None,
                currency: None,
                servicer: None,
                balances: Vec::new(),
                entries: Vec::new(),
                counts: Vec::new(),
                sums: Vec::new(),
            });
            return;
        }
        let Some(s) = &self.statement else { return };
        if depth == s.at + 1 {
            match name {
                "Bal" => {
                    self.balance = Some(BalanceB {
                        pos: pos.at(path()),
                        at: depth,
                        code: None,
                        amount: None,
                        debit: None,
                        date: None,
                    })
                }
                "Ntry" => {
                    self.entry = Some(EntryB {
                        pos: pos.at(path()),
                        at: depth,
                        amount: None,
                        currency: None,
                        credit: None,
                        seen: [false; 3],
                        reversal: false,
                        status: None,
                        booking: None,
                        value: None,
                        bank_ref: None,
                        customer_ref: None,
                        domain: None,
                        family: None,
                        sub_family: None,
                        proprietary: None,
                        additional: None,
                        batch_ref: None,
                        details: Vec::new(),
                        group: None,
                    })
                }
                _ => {}
            }
            return;
        }
        let Some(e) = &mut self.entry else { return };
        let under_entry = depth == e.at + 1;
        let under_details = depth == e.at + 2 && parent == Some("NtryDtls");
        match name {
            "NtryDtls" if under_entry => {
                if let Some((_, g)) = e.group.take() {
                    let g = (e.at, g);
                    self.close_group(g);
                }
                if let Some(e) = &mut self.entry {
                    e.group = Some((depth, Group::default()));
                }
            }
            "Btch" if under_entry || under_details => {
                if e.group.is_none() {
                    e.group = Some((e.at, Group::default()));
                }
                self.batch = Some((depth, Batch::default()));
            }
            "TxDtls" if under_entry || under_details => {
                if e.group.is_none() {
                    e.group = Some((e.at, Group::default()));
                }
                self.detail = Some((depth, Detail::default(), None));
            }
            _ => {}
        }
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
        self.message = Some((depth, format, kind));
    }

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
                if let Some((_, mut b)) = self.batch.take()
                    && let Some(e) = &mut self.entry
                {
                    if e.batch_ref.is_none() {
                        e.batch_ref = b.pmt_inf_id.take().or_else(|| b.msg_id.take());
                    }
                    if let Some((_, g)) = &mut e.group {
                        g.batch = Some(b);
                    }
                }
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
            }
        }
    }

    /// An amount with its `Ccy`, in minor units; a finding when it is not one.
    fn amount(&mut self, frame: &Frame, stack: &Stack) -> Option<(i64, String)> {
        let path = || stack.path();
        let Some(code) = frame.has_ccy.then(|| frame.ccy.clone()) else {
            self.sink.push(Finding::error(
                FindingCode::MissingElement,
                frame.pos.at(format!("{}@Ccy", path())),
                None,
                "a Ccy attribute",
                "none",
            ));
            return None;
        };
        let currency = match Currency::parse(&code) {
            Ok(c) => c,
            Err(e) => {
                let why = match e {
                    CurrencyError::Superseded { by } => format!(" (withdrawn, superseded by {by})"),
                    _ => String::new(),
                };
                self.sink.push(Finding::error(
                    FindingCode::CurrencyCode,
                    frame.pos.at(format!("{}@Ccy", path())),
                    None,
                    "an active ISO 4217 currency code with minor units",
                    format!("{code}{why}"),
                ));
                return None;
            }
        };
        let text = frame.text.trim();
        match parse_amount(text, currency) {
            Ok(minor) => Some((minor, code)),
            Err(why) => {
                self.sink.push(Finding::error(
                    FindingCode::AmountFormat,
                    frame.pos.at(path()),
                    None,
                    why,
                    text.to_string(),
                ));
                None
            }
        }
    }

    fn date(&mut self, frame: &Frame, stack: &Stack, date_time: bool) -> Option<NaiveDate> {
        let path = || stack.path();
        let text = frame.text.trim();
        let d = if date_time {
            parse_date_time(text)
        } else {
            parse_date(text)
        };
        if d.is_none() {
            self.sink.push(Finding::error(
                FindingCode::DateFormat,
                frame.pos.at(path()),
                None,
                if date_time {
                    "a real date-time YYYY-MM-DDThh:mm:ss[.f][Z|+hh:mm]"
                } else {
                    "a real date YYYY-MM-DD"
                },
                text.to_string(),
            ));
        }
        d
    }

    fn count(&mut self, frame: &Frame, stack: &Stack) -> Option<u64> {
        let path = || stack.path();
        let text = frame.text.trim();
        let n = (!text.is_empty() && text.len() <= 15 && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse::<u64>().ok())
            .flatten();
        if n.is_none() {
            self.sink.push(Finding::error(
                FindingCode::InvalidValue,
                frame.pos.at(path()),
                None,
                "a count: 1 to 15 digits",
                text.to_string(),
            ));
        }
        n
    }

    fn credit_debit(&mut self, frame: &Frame, stack: &Stack) -> Option<bool> {
        let path = || stack.path();
        match frame.text.trim() {
            "CRDT" => Some(true),
            "DBIT" => Some(false),
            other => {
                self.sink.push(Finding::error(
                    FindingCode::InvalidValue,
                    frame.pos.at(path()),
                    None,
                    "CRDT or DBIT",
                    other.to_string(),
                ));
                None
            }
        }
    }

    fn statement_leaf(&mut self, stack: &Stack, at: usize, frame: &Frame) {
        let rel = stack.rel(at);
        let text = frame.text.trim();
        let path = || stack.path();
        match rel {
            "Id"
            | "ElctrncSeqNb"
            | "LglSeqNb"
            | "CpyDplctInd"
            | "Acct/Id/IBAN"
            | "Acct/Id/Othr/Id"
            | "Acct/Id/PrtryAcct/Id"
            | "Acct/Id/BBAN"
            | "Acct/Id/UPIC"
            | "Acct/Ccy"
            | "Acct/Svcr/FinInstnId/BICFI"
            | "Acct/Svcr/FinInstnId/BIC" => {
                let Some(s) = &mut self.statement else { return };
                let v = non_empty(text);
                match rel {
                    "Id" => s.id = v,
                    "ElctrncSeqNb" => s.electronic_seq = v,
                    "LglSeqNb" => s.legal_seq = v,
                    "CpyDplctInd" => s.copy = matches!(text, "COPY" | "DUPL" | "CODU"),
                    "Acct/Id/IBAN" => s.iban = v,
                    "Acct/Id/Othr/Id"
                    | "Acct/Id/PrtryAcct/Id"
                    | "Acct/Id/BBAN"
                    | "Acct/Id/UPIC" => {
                        if s.other_id.is_none() {
                            s.other_id = v
                        }
                    }
                    "Acct/Ccy" => s.currency = v,
                    _ => {
                        if s.servicer.is_none() {
                            s.servicer = v
                        }
                    }
                }
            }
            "CreDtTm" => {
                let d = self.date(frame, stack, true);
                if let Some(s) = &mut self.statement {
                    s.created = d;
                }
            }
            "FrToDt/FrDtTm" | "FrToDt/ToDtTm" => {
                let d = self.date(frame, stack, true);
                if let Some(s) = &mut self.statement {
                    if rel.ends_with("FrDtTm") {
                        s.from = d;
                    } else {
                        s.to = d;
                    }
                }
            }
            "TxsSummry/TtlNtries/NbOfNtries"
            | "TxsSummry/TtlCdtNtries/NbOfNtries"
            | "TxsSummry/TtlDbtNtries/NbOfNtries" => {
                let which = summary_of(rel);
                if let Some(n) = self.count(frame, stack)
                    && let Some(s) = &mut self.statement
                {
                    s.counts.push((which, n, frame.pos.at(path())));
                }
            }
            "TxsSummry/TtlNtries/Sum"
            | "TxsSummry/TtlCdtNtries/Sum"
            | "TxsSummry/TtlDbtNtries/Sum" => {
                let which = summary_of(rel);
                match parse_decimal(text) {
                    Some(d) => {
                        if let Some(s) = &mut self.statement {
                            s.sums.push((which, d, frame.pos.at(path())));
                        }
                    }
                    None => self.sink.push(Finding::error(
                        FindingCode::AmountFormat,
                        frame.pos.at(path()),
                        None,
                        "a decimal sum like 1234.56",
                        text.to_string(),
                    )),
                }
            }
            _ => {}
        }
    }

    fn balance_leaf(&mut self, stack: &Stack, at: usize, frame: &Frame) {
        let rel = stack.rel(at);
        match rel {
            "Tp/CdOrPrtry/Cd" | "Tp/CdOrPrtry/Prtry" | "Tp/Cd" | "Tp/Prtry" => {
                if let Some(b) = &mut self.balance
                    && b.code.is_none()
                {
                    b.code = non_empty(&frame.text);
                }
            }
            "Amt" => {
                let a = self.amount(frame, stack);
                if let Some(b) = &mut self.balance {
                    b.amount = a;
                }
            }
            "CdtDbtInd" => {
                let c = self.credit_debit(frame, stack);
                if let Some(b) = &mut self.balance {
                    b.debit = c.map(|c| !c);
                }
            }
            "Dt/Dt" | "Dt/DtTm" => {
                let d = self.date(frame, stack, rel == "Dt/DtTm");
                if let Some(b) = &mut self.balance {
                    b.date = d;
                }
            }
            _ => {}
        }
    }

    fn entry_leaf(&mut self, stack: &Stack, at: usize, frame: &Frame) {
        let rel = stack.rel(at);
        let text = frame.text.trim();
        let path = || stack.path();
        match rel {
            "Amt" => {
                let a = self.amount(frame, stack);
                if let Some(e) = &mut self.entry {
                    e.seen[0] = true;
                    if let Some((minor, ccy)) = a {
                        e.amount = u64::try_from(minor).ok();
                        e.currency = Some(ccy);
                    }
                }
            }
            "CdtDbtInd" => {
                let c = self.credit_debit(frame, stack);
                if let Some(e) = &mut self.entry {
                    e.seen[1] = true;
                    e.credit = c;
                }
            }
            "RvslInd" => {
                let r = match text {
                    "true" | "1" => Some(true),
                    "false" | "0" => Some(false),
                    _ => None,
                };
                if r.is_none() {
                    self.sink.push(Finding::error(
                        FindingCode::InvalidValue,
                        frame.pos.at(path()),
                        None,
                        "true or false",
                        text.to_string(),
                    ));
                }
                if let Some(e) = &mut self.entry {
                    e.reversal = r.unwrap_or(false);
                }
            }
            "Sts" | "Sts/Cd" | "Sts/Prtry" => {
                let s = match text {
                    "BOOK" => Some(EntryStatus::Booked),
                    // Future-dated: not booked yet.
                    "PDNG" | "FUTR" => Some(EntryStatus::Pending),
                    "INFO" => Some(EntryStatus::Info),
                    _ => None,
                };
                if s.is_none() {
                    self.sink.push(Finding::error(
                        FindingCode::InvalidValue,
                        frame.pos.at(path()),
                        None,
                        "an entry status BOOK, PDNG, INFO or FUTR",
                        text.to_string(),
                    ));
                }
                if let Some(e) = &mut self.entry {
                    e.seen[2] = true;
                    e.status = s;
                }
            }
            "BookgDt/Dt" | "BookgDt/DtTm" | "ValDt/Dt" | "ValDt/DtTm" => {
                let d = self.date(frame, stack, rel.ends_with("DtTm"));
                if let Some(e) = &mut self.entry {
                    if rel.starts_with("BookgDt") {
                        e.booking = d;
                    } else {
                        e.value = d;
                    }
                }
            }
            "AcctSvcrRef"
            | "NtryRef"
            | "BkTxCd/Domn/Cd"
            | "BkTxCd/Domn/Fmly/Cd"
            | "BkTxCd/Domn/Fmly/SubFmlyCd"
            | "BkTxCd/Prtry/Cd" => {
                let v = non_empty(text);
                if let Some(e) = &mut self.entry {
                    match rel {
                        "AcctSvcrRef" => e.bank_ref = v,
                        "NtryRef" => e.customer_ref = v,
                        "BkTxCd/Domn/Cd" => e.domain = v,
                        "BkTxCd/Domn/Fmly/Cd" => e.family = v,
                        "BkTxCd/Domn/Fmly/SubFmlyCd" => e.sub_family = v,
                        _ => e.proprietary = v,
                    }
                }
            }
            "AddtlNtryInf" => {
                if let Some(e) = &mut self.entry {
                    append(&mut e.additional, text);
                }
            }
            _ => {}
        }
    }

    fn batch_leaf(&mut self, stack: &Stack, at: usize, frame: &Frame) {
        let rel = stack.rel(at);
        let path = || stack.path();
        match rel {
            "NbOfTxs" => {
                if let Some(n) = self.count(frame, stack)
                    && let Some((_, b)) = &mut self.batch
                {
                    b.nb_of_txs = Some((n, frame.pos.at(path())));
                }
            }
            "TtlAmt" => {
                if let Some((minor, ccy)) = self.amount(frame, stack)
                    && let Some((_, b)) = &mut self.batch
                {
                    b.total = Some((minor, ccy, frame.pos.at(path())));
                }
            }
            "PmtInfId" | "MsgId" => {
                if let Some((_, b)) = &mut self.batch {
                    let v = non_empty(&frame.text);
                    if rel == "PmtInfId" {
                        b.pmt_inf_id = v;
                    } else {
                        b.msg_id = v;
                    }
                }
            }
            _ => {}
        }
    }

    fn detail_leaf(&mut self, stack: &Stack, at: usize, frame: &Frame) {
        let rel = stack.rel(at);
        let text = frame.text.trim();
        match rel {
            "Amt" | "AmtDtls/TxAmt/Amt" => {
                let a = self.amount(frame, stack);
                if let Some((_, _, amount)) = &mut self.detail
                    && (rel == "Amt" || amount.is_none())
                {
                    *amount = a;
                }
            }
            "Refs/EndToEndId" | "Refs/InstrId" | "Refs/UETR" | "Refs/AcctSvcrRef"
            | "RtrInf/Rsn/Cd" | "RtrInf/Rsn/Prtry" => {
                let v = non_empty(text);
                if let Some((_, d, _)) = &mut self.detail {
                    match rel {
                        "Refs/EndToEndId" => d.end_to_end_id = v,
                        "Refs/InstrId" => d.instr_id = v,
                        "Refs/UETR" => d.uetr = v,
                        "Refs/AcctSvcrRef" => d.account_servicer_ref = v,
                        _ => {
                            if d.return_reason.is_none() {
                                d.return_reason = v
                            }
                        }
                    }
                }
            }
            "RmtInf/Ustrd" => {
                if let Some((_, d, _)) = &mut self.detail {
                    append(&mut d.remittance, text);
                }
            }
            _ => {}
        }
    }

    fn close_detail(&mut self) {
        let Some((_, mut d, amount)) = self.detail.take() else {
            return;
        };
        let Some(e) = &mut self.entry else { return };
        if let Some((minor, ccy)) = &amount {
            d.amount_minor = Some(*minor);
            d.currency = Some(ccy.clone());
        }
        if let Some((_, g)) = &mut e.group {
            g.details += 1;
            if g.details == 1 {
                g.amounts = Some(Vec::new());
            }
            match (&mut g.amounts, amount) {
                (Some(sums), Some((minor, ccy))) => {
                    match sums.iter_mut().find(|(c, _)| *c == ccy) {
                        Some((_, s)) => *s = s.saturating_add(minor),
                        None => sums.push((ccy, minor)),
                    }
                }
                (slot, None) => *slot = None,
                _ => {}
            }
        }
        e.details.push(d);
    }

    /// The batch of a group against its details: warnings (see the module docs).
    fn close_group(&mut self, (_, g): (usize, Group)) {
        let Some(b) = g.batch else { return };
        if g.details == 0 {
            return;
        }
        if let Some((n, pos)) = b.nb_of_txs
            && n != g.details
        {
            self.sink.push_control(Finding::warning(
                FindingCode::ControlCountMismatch,
                pos,
                None,
                format!("Btch/NbOfTxs {} (the TxDtls reported)", g.details),
                n.to_string(),
            ));
        }
        if let Some((total, ccy, pos)) = b.total
            && let Some(sums) = g.amounts
            && let [(c, sum)] = sums.as_slice()
            && *c == ccy
            && *sum != total
        {
            self.sink.push_control(Finding::warning(
                FindingCode::ControlTotalMismatch,
                pos,
                None,
                format!("Btch/TtlAmt {sum} {ccy} minor units (the TxDtls amounts)"),
                format!("{total} {ccy}"),
            ));
        }
    }

    fn close_entry(&mut self) {
        let Some(mut e) = self.entry.take() else {
            return;
        };
        if let Some(g) = e.group.take() {
            self.close_group(g);
        }
        let mut missing = |what: &str, ok: bool| {
            if !ok {
                self.sink.push(Finding::error(
                    FindingCode::MissingElement,
                    e.pos.clone(),
                    None,
                    format!("Ntry/{what}"),
                    "none",
                ));
            }
        };
        missing("Amt", e.seen[0]);
        missing("CdtDbtInd", e.seen[1]);
        missing("Sts", e.seen[2]);
        let kind = self.message.map(|m| m.2);
        let mut status = e.status.unwrap_or(EntryStatus::Info);
        // An intraday report's entries are provisional, whatever their status says: the
        // day's final statement books them.
        if kind == Some(StatementKind::Intraday) {
            status = EntryStatus::Pending;
        }
        let bank_tx_code = match (&e.domain, &e.family, &e.sub_family) {
            (Some(d), f, s) => Some(
                [Some(d), f.as_ref(), s.as_ref()]
                    .into_iter()
                    .flatten()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("/"),
            ),
            _ => e.proprietary.clone(),
        };
        let single = (e.details.len() == 1).then(|| &e.details[0]);
        let end_to_end_id = single.and_then(|d| d.end_to_end_id.clone());
        let remittance = e
            .additional
            .take()
            .or_else(|| single.and_then(|d| d.remittance.clone()));
        self.entries += 1;
        let entry = Entry {
            entry_no: self.entries,
            amount_minor: e.amount.unwrap_or(0),
            currency: e.currency.unwrap_or_default(),
            credit: e.credit.unwrap_or(false),
            reversal: e.reversal,
            status,
            booking_date: e.booking,
            value_date: e.value,
            bank_ref: e.bank_ref,
            customer_ref: e.customer_ref,
            end_to_end_id,
            bank_tx_code,
            remittance,
            batch_ref: e.batch_ref,
            details: e.details,
            position: e.pos.into(),
        };
        if let Some(s) = &mut self.statement {
            s.entries.push(entry);
        }
    }

    fn close_balance(&mut self) {
        let Some(b) = self.balance.take() else {
            return;
        };
        let mut missing = |what: &str| {
            self.sink.push(Finding::error(
                FindingCode::MissingElement,
                b.pos.clone(),
                None,
                format!("Bal/{what}"),
                "none",
            ))
        };
        if b.code.is_none() {
            missing("Tp/CdOrPrtry/Cd");
        }
        if b.debit.is_none() {
            missing("CdtDbtInd");
        }
        let Some((amount, currency)) = b.amount else {
            return;
        };
        let code = b.code.unwrap_or_default();
        let kind = match code.as_str() {
            "OPBD" | "PRCD" => BalanceKind::OpeningBooked,
            "CLBD" => BalanceKind::ClosingBooked,
            "OPAV" => BalanceKind::OpeningAvailable,
            "CLAV" => BalanceKind::ClosingAvailable,
            _ => BalanceKind::Other,
        };
        let amount_minor = if b.debit == Some(true) {
            -amount
        } else {
            amount
        };
        if let Some(s) = &mut self.statement {
            s.balances.push(Balance {
                kind,
                code,
                amount_minor,
                currency,
                date: b.date,
                position: b.pos.into(),
            });
        }
    }

    fn close_statement(&mut self) {
        let Some(s) = self.statement.take() else {
            return;
        };
        let (format, kind) = match self.message {
            Some((_, f, k)) => (f, k),
            None => return,
        };
        let account = s.iban.or(s.other_id);
        if account.is_none() {
            self.sink.push(Finding::error(
                FindingCode::MissingElement,
                s.pos.clone(),
                None,
                "Acct/Id/IBAN or Acct/Id/Othr/Id",
                "none",
            ));
        }
        if s.id.is_none() {
            self.sink.push(Finding::error(
                FindingCode::MissingElement,
                s.pos.clone(),
                None,
                "Id",
                "none",
            ));
        }
        // TxsSummry against the entries.
        for (which, n, pos) in s.counts {
            let counted = s
                .entries
                .iter()
                .filter(|e| summary_counts(which, e))
                .count() as u64;
            if counted != n {
                self.sink.push_control(Finding::error(
                    FindingCode::ControlCountMismatch,
                    pos,
                    None,
                    format!("{which}/NbOfNtries {counted} (the entries of the statement)"),
                    n.to_string(),
                ));
            }
        }
        for (which, sum, pos) in s.sums {
            let mut total = Decimal::ZERO;
            for e in s.entries.iter().filter(|e| summary_counts(which, e)) {
                let exp = minor_exponent(&e.currency).unwrap_or(0);
                let a = i64::try_from(e.amount_minor).unwrap_or(i64::MAX);
                total = total.saturating_add(Decimal::new(a, exp));
            }
            if total != sum {
                self.sink.push_control(Finding::error(
                    FindingCode::ControlTotalMismatch,
                    pos,
                    None,
                    format!("{which}/Sum {} (the entries' amounts)", total.normalize()),
                    sum.to_string(),
                ));
            }
        }
        let sequence = s.electronic_seq.or(s.legal_seq);
        let statement = Statement {
            format,
            kind,
            account: account.unwrap_or_default(),
            currency: s.currency,
            servicer: s.servicer,
            id: s.id.unwrap_or_default(),
            sequence,
            date: s.created.or(s.to).or(self.group_created),
            from_date: s.from,
            to_date: s.to,
            copy: s.copy,
            balances: s.balances,
            entries: s.entries,
            position: s.pos.into(),
        };
        if let Some(f) = check_balance(&statement) {
            self.sink.push_control(f);
        }
        self.chain(&statement);
        self.statements += 1;
        (self.on_statement)(statement);
    }

    /// The balance chain and the sequence numbers of the account, against its previous
    /// statement in the file.
    fn chain(&mut self, s: &Statement) {
        let key = (s.account.clone(), s.currency.clone());
        let closing = s
            .balance(BalanceKind::ClosingBooked)
            .map(|b| (b.amount_minor, b.currency.clone(), b.code.clone()));
        let sequence = s
            .sequence
            .as_deref()
            .and_then(|q| q.parse::<u64>().ok().map(|n| (n, q.to_string())));
        if let Some(prev) = self.previous.get(&key) {
            if let Some(open) = s.balance(BalanceKind::OpeningBooked)
                && let Some((amount, ccy, code)) = &prev.closing
                && *ccy == open.currency
                && *amount != open.amount_minor
            {
                self.sink.push_control(Finding::error(
                    FindingCode::BalanceChain,
                    open.position.clone(),
                    None,
                    format!(
                        "{} {amount} {ccy} (the previous statement's {code} for {})",
                        open.code, s.account
                    ),
                    open.amount_minor.to_string(),
                ));
            }
            if let (Some((n, _)), Some((p, written))) = (&sequence, &prev.sequence)
                && *n != *p
                && Some(*n) != p.checked_add(1)
            {
                self.sink.push(Finding::warning(
                    FindingCode::SequenceGap,
                    s.position.clone(),
                    None,
                    format!(
                        "sequence number {} (after {written} for {})",
                        p.saturating_add(1),
                        s.account
                    ),
                    n.to_string(),
                ));
            }
        }
        let entry = self.previous.entry(key).or_insert(Previous {
            closing: None,
            sequence: None,
        });
        if closing.is_some() {
            entry.closing = closing;
        }
        if sequence.is_some() {
            entry.sequence = sequence;
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
            entries: self.entries,
            findings: self.sink.finish(end.at("/")),
        }
    }
}

/// `TtlNtries`, `TtlCdtNtries` or `TtlDbtNtries` of a `TxsSummry` leaf path.
fn summary_of(rel: &str) -> &'static str {
    if rel.contains("TtlCdtNtries") {
        "TxsSummry/TtlCdtNtries"
    } else if rel.contains("TtlDbtNtries") {
        "TxsSummry/TtlDbtNtries"
    } else {
        "TxsSummry/TtlNtries"
    }
}

/// Whether a summary counts entry `e`.
fn summary_counts(which: &str, e: &Entry) -> bool {
    match which {
        "TxsSummry/TtlCdtNtries" => e.credit,
        "TxsSummry/TtlDbtNtries" => !e.credit,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_date_times_must_be_real() {
        assert_eq!(
            parse_date("2026-02-28"),
            NaiveDate::from_ymd_opt(2026, 2, 28)
        );
        assert_eq!(parse_date("2026-02-30"), None);
        assert_eq!(parse_date("2026-2-28"), None);
        // ISO 20022's ISODate is the XML Schema date: four-digit year, two-digit month and
        // day, nothing else (chrono's `%Y-%m-%d`, used before, also took these).
        for bad in [
            "+2025-7-23",
            "-999-07-23",
            "2025- 7-23",
            "2025-07-2 ",
            "２０２５-07-23",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
        assert_eq!(
            parse_date_time("2016-12-31T23:59:60"),
            NaiveDate::from_ymd_opt(2016, 12, 31),
            "a leap second is a real time"
        );
        for ok in [
            "2025-07-23T00:00:00.000000000",
            "2007-10-18T12:30:00+01:00",
            "2018-04-29T17:31:51Z",
            "2019-05-20T23:59:59",
            "2010-10-18T17:00:00-05:00",
        ] {
            assert!(parse_date_time(ok).is_some(), "{ok}");
        }
        for bad in [
            "2026-02-30T10:00:00",
            "2026-01-01",
            "2026-01-01T25:00:00",
            "2026-01-01T10:00",
            "2026-01-01T10:00:00.",
            "2026-01-01T10:00:00+1:00",
            "2026-01-01T10:00:00+15:00",
            "2026-01-01T10:00:00 ",
            "2025-07-23T 9:30:00",
            "2025-07-23T09:30:61",
        ] {
            assert_eq!(parse_date_time(bad), None, "{bad}");
        }
    }

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
