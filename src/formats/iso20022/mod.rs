//! ISO 20022 payment messages: pain.001, pacs.008, pacs.004.
//!
//! Pure: bytes in, transactions and findings (with byte offset, line and element path)
//! out. The message type and version come from the `Document` element's namespace, never
//! from `xsi:schemaLocation` or the file name. A Business Application Header before the
//! Document, an envelope around it, several Documents in one file, namespace prefixes or
//! none, a UTF-8 BOM, CRLF: all read. DOCTYPE (and so every entity trick) is refused;
//! depth and event size are bounded (see `reader`).

pub(crate) mod block;
pub(crate) mod cut;
pub mod generate;
pub(crate) mod reader;
pub(crate) mod validate;

use crate::findings::{Finding, FindingCode, FindingSink, Severity};
use crate::formats::xml::Pos;
use crate::formats::xml::amount::{parse_amount, parse_amount_syntax, parse_decimal};
use crate::money::{Currency, CurrencyError};
use block::{Block, BlockKind};
use chrono::NaiveDate;
use reader::WalkEvent;
use rust_decimal::Decimal;
use std::io::{BufRead, BufReader, Read};
use validate::*;

pub use validate::is_iban;

/// The message kinds read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Pain001,
    Pacs008,
    Pacs004,
}

impl Kind {
    /// The operation keys are scoped to: the message kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Pain001 => "pain.001",
            Kind::Pacs008 => "pacs.008",
            Kind::Pacs004 => "pacs.004",
        }
    }
}

/// Versions read, per kind.
pub const SUPPORTED: &str =
    "pain.001.001.03 to .12, pacs.008.001.02 to .13, pacs.004.001.02 to .13";

/// `urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08` → (Pacs008, 8).
pub fn detect(namespace: &str) -> Result<(Kind, u32), String> {
    let id = namespace
        .strip_prefix("urn:iso:std:iso:20022:tech:xsd:")
        .unwrap_or(namespace);
    let parts: Vec<&str> = id.split('.').collect();
    if parts.len() == 4 {
        let version: u32 = parts[3].parse().unwrap_or(0);
        let kind = match (parts[0], parts[1], parts[2]) {
            ("pain", "001", "001") if (3..=12).contains(&version) => Some(Kind::Pain001),
            ("pacs", "008", "001") if (2..=13).contains(&version) => Some(Kind::Pacs008),
            ("pacs", "004", "001") if (2..=13).contains(&version) => Some(Kind::Pacs004),
            _ => None,
        };
        if let Some(k) = kind {
            return Ok((k, version));
        }
    }
    Err(if namespace.is_empty() {
        "a Document without namespace".to_string()
    } else {
        namespace.to_string()
    })
}

/// One transaction, with what its posting needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IsoTx {
    /// 1-based ordinal of the transaction in the file, across documents.
    pub record_no: u64,
    pub byte_offset: u64,
    pub line: u64,
    pub path: String,
    pub kind: Option<Kind>,
    pub msg_id: String,
    pub sender: String,
    pub pmt_inf_id: String,
    pub instr_id: String,
    pub end_to_end_id: String,
    pub tx_id: String,
    pub uetr: String,
    pub amount_minor: i64,
    pub currency: String,
    pub date: Option<NaiveDate>,
    pub debtor_name: String,
    pub debtor_account: String,
    pub debtor_agent: String,
    pub creditor_name: String,
    pub creditor_account: String,
    pub creditor_agent: String,
    /// The leg: the instructing and instructed agent of the transaction, else of the group
    /// header (pacs messages; empty in pain.001), as `agent_of` names them.
    pub instructing_agent: String,
    pub instructed_agent: String,
    pub remittance: String,
    /// pacs.004: the original transaction's identifiers and parties.
    pub original_end_to_end_id: String,
    pub original_uetr: String,
    pub original_tx_id: String,
    pub return_reason: String,
    /// What the first keying rule (v1, before keys by leg) took from the same transaction,
    /// where it differs: BIC-only agents, a pacs.004's parties from OrgnlTxRef only. The
    /// legacy key and fingerprint are computed from it (`keys::iso_posting`).
    pub v1: IsoTxV1,
}

/// The inputs of the previous keying rule (see [`IsoTx::v1`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IsoTxV1 {
    /// The file's header as read then (its sender by BIC only).
    pub file: Option<std::sync::Arc<IsoHeader>>,
    pub sender: String,
    pub debtor_name: String,
    pub debtor_account: String,
    pub debtor_agent: String,
    pub creditor_name: String,
    pub creditor_account: String,
    pub creditor_agent: String,
}

/// The file's identity fields: message kind, its sender, its MsgId.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IsoHeader {
    pub kind: Kind,
    /// The sender as `agent_of` names it (pacs) or the initiating party (pain.001).
    pub version: u32,
    pub sender: String,
    pub msg_id: String,
}

#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum IsoEvent {
    Header(IsoHeader),
    Transaction(IsoTx),
}

#[derive(Debug, Default)]
pub struct IsoSummary {
    pub findings: Vec<Finding>,
    pub documents: u64,
    pub transactions: u64,
    pub bytes: u64,
}

impl IsoSummary {
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }
}

struct Doc {
    kind: Kind,
    version: u32,
    path: String,
    /// Where the Document element starts.
    pos: Pos,
    group: Option<Block>,
    count: u64,
    sum: Decimal,
    header_sent: bool,
}

struct State {
    findings: FindingSink,
    doc: Option<Doc>,
    record_no: u64,
    documents: u64,
    stopped: bool,
    first_header: bool,
    /// The first header as the v1 rule read it (its sender by BIC only), for the legacy keys.
    header_v1: Option<std::sync::Arc<IsoHeader>>,
    /// Transactions and amount sum of the open payment information block (pain.001).
    pmt_count: u64,
    pmt_sum: Decimal,
}

impl State {
    fn push(&mut self, f: Finding) {
        self.findings.push(f);
    }
    fn err(
        &mut self,
        code: FindingCode,
        pos: Pos,
        path: String,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) {
        let f = Finding::error(code, pos.at(path), None, expected, found);
        self.push(f);
    }
}

/// The value of the first leaf `{prefix}/{suffix}` present, for each suffix in order;
/// compares without building the joined path.
fn first_under(b: &Block, prefix: &str, suffixes: &[&str]) -> String {
    for suffix in suffixes {
        for (rel, v, _) in &b.leaves {
            if rel.len() == prefix.len() + 1 + suffix.len()
                && rel.starts_with(prefix)
                && rel.as_bytes()[prefix.len()] == b'/'
                && rel.ends_with(suffix)
            {
                return v.clone();
            }
        }
    }
    String::new()
}

fn bic_of(b: &Block, prefix: &str) -> String {
    first_under(b, prefix, &["FinInstnId/BICFI", "FinInstnId/BIC"])
}

/// An agent (`{prefix}/FinInstnId`): its BIC; else its clearing system member id with the
/// system (`USABA:021000021`, the system from `ClrSysId/Cd`, else `ClrSysId/Prtry`; the
/// member id alone when neither is given); else its `Othr/Id`. Empty when none is given.
///
/// A BIC is written in its 8-character form when its branch code is `XXX` (the primary
/// office: `DEUTDEFFXXX` and `DEUTDEFF` are one agent), upper case, so that two systems
/// spelling one bank differently give one key.
fn agent_of(b: &Block, prefix: &str) -> String {
    let bic = bic_of(b, prefix);
    if !bic.is_empty() {
        return canonical_bic(&bic);
    }
    let member = first_under(b, prefix, &["FinInstnId/ClrSysMmbId/MmbId"]);
    if !member.is_empty() {
        let system = first_under(
            b,
            prefix,
            &[
                "FinInstnId/ClrSysMmbId/ClrSysId/Cd",
                "FinInstnId/ClrSysMmbId/ClrSysId/Prtry",
            ],
        );
        return if system.is_empty() {
            member
        } else {
            format!("{system}:{member}")
        };
    }
    first_under(b, prefix, &["FinInstnId/Othr/Id"])
}

/// A BIC as [`agent_of`] names it: upper case, a primary office's `XXX` branch dropped.
pub fn canonical_bic(bic: &str) -> String {
    let up = bic.trim().to_ascii_uppercase();
    match up.strip_suffix("XXX") {
        Some(eight) if up.len() == 11 => eight.to_string(),
        _ => up,
    }
}

fn account_of(b: &Block, prefix: &str) -> String {
    first_under(b, prefix, &["Id/IBAN", "Id/Othr/Id"])
}

fn party_name(b: &Block, prefix: &str) -> String {
    first_under(b, prefix, &["Nm", "Pty/Nm"])
}

/// Checks every BIC, IBAN, UETR and date leaf of a block.
fn check_leaves(st: &mut State, b: &Block) {
    for (rel, v, pos) in &b.leaves {
        let path = || format!("{}/{}", b.path, rel);
        let last = rel.rsplit('/').next().unwrap_or("");
        match last {
            "BIC" | "BICFI" | "AnyBIC" | "BICOrBEI" if !is_bic(v) => {
                st.err(FindingCode::BicFormat, *pos, path(), "a BIC (4 letters, 2-letter country, 2 letters or digits, optional 3-character branch)", v.clone())
            }
            "IBAN" if !is_iban(v) => st.err(FindingCode::IbanFormat, *pos, path(), "an IBAN with valid mod-97 check digits", v.clone()),
            "UETR" | "OrgnlUETR" if !is_uetr(v) => st.err(FindingCode::UetrFormat, *pos, path(), "a UUID v4 in lowercase (8-4-4-4-12)", v.clone()),
            "IntrBkSttlmDt" | "ReqdExctnDt" | "Dt" if !is_iso_date(v) => {
                st.err(FindingCode::DateFormat, *pos, path(), "an ISO date YYYY-MM-DD", v.clone())
            }
            _ => {}
        }
    }
}

/// Reads an ISO 20022 file, calling `on_event` for its header (first document) and each
/// transaction. All findings are in the summary; a file with an error is to be rejected.
pub fn read_file<R: Read>(
    source: R,
    on_event: &mut dyn FnMut(IsoEvent),
) -> std::io::Result<IsoSummary> {
    let source = BufReader::with_capacity(256 * 1024, source);
    read_buffered(source, on_event)
}

fn read_buffered<R: BufRead>(
    source: R,
    on_event: &mut dyn FnMut(IsoEvent),
) -> std::io::Result<IsoSummary> {
    let mut st = State {
        findings: FindingSink::new(),
        doc: None,
        record_no: 0,
        documents: 0,
        stopped: false,
        first_header: true,
        header_v1: None,
        pmt_count: 0,
        pmt_sum: Decimal::ZERO,
    };
    let end = reader::walk(source, &mut |ev| {
        if st.stopped {
            return;
        }
        match ev {
            WalkEvent::Document {
                namespace,
                path,
                pos,
            } => match detect(&namespace) {
                Ok((kind, version)) => {
                    st.documents += 1;
                    st.doc = Some(Doc {
                        kind,
                        version,
                        path,
                        pos,
                        group: None,
                        count: 0,
                        sum: Decimal::ZERO,
                        header_sent: false,
                    });
                }
                Err(found) => {
                    st.err(
                        FindingCode::UnsupportedMessage,
                        pos,
                        path,
                        format!("a Document namespace of {SUPPORTED}"),
                        found,
                    );
                    st.stopped = true;
                }
            },
            WalkEvent::Block {
                kind: BlockKind::Group,
                block,
                ..
            } => {
                let Some(doc) = st.doc.as_mut() else { return };
                if block.path.ends_with("/GrpHdr") || doc.group.is_none() {
                    let b = block;
                    check_leaves_group(&mut st, b);
                }
            }
            WalkEvent::Block {
                kind: BlockKind::Transaction,
                block,
                payment_info,
            } => {
                transaction(&mut st, &block, payment_info, on_event);
            }
            WalkEvent::Block {
                kind: BlockKind::PaymentInfo,
                ..
            } => {}
            WalkEvent::PaymentInfoEnd(b) => payment_info_end(&mut st, &b),
            WalkEvent::DocumentEnd => document_end(&mut st),
            WalkEvent::Warning(f) => st.push(f),
        }
    })?;
    tracing::debug!(transactions = end.cut, "transactions read by workers");
    if let Some(f) = end.fatal {
        st.findings.push(f);
    } else if st.documents == 0
        && !st
            .findings
            .as_slice()
            .iter()
            .any(|f| f.code == FindingCode::UnsupportedMessage)
    {
        st.findings.push(Finding::error(
            FindingCode::MissingElement,
            Pos {
                byte_offset: 0,
                line: 1,
            }
            .at("/"),
            None,
            "a Document element",
            "none",
        ));
    }
    let _ = &mut st.first_header;
    Ok(IsoSummary {
        findings: st.findings.finish(
            Pos {
                byte_offset: end.bytes,
                line: end.lines,
            }
            .at("/"),
        ),
        documents: st.documents,
        transactions: st.record_no,
        bytes: end.bytes,
    })
}

fn check_leaves_group(st: &mut State, b: Block) {
    check_leaves(st, &b);
    if b.path.ends_with("/GrpHdr") {
        if b.get("MsgId").is_none_or(str::is_empty) {
            st.err(
                FindingCode::MissingElement,
                b.pos,
                format!("{}/MsgId", b.path),
                "a MsgId",
                "none",
            );
        }
        if let Some((v, pos)) = b.get_pos("NbOfTxs")
            && !(v.chars().all(|c| c.is_ascii_digit()) && !v.is_empty() && v.len() <= 15)
        {
            st.err(
                FindingCode::NbOfTxsMismatch,
                pos,
                format!("{}/NbOfTxs", b.path),
                "a count of up to 15 digits",
                v,
            );
        }
        // A total is an amount like any other: at most 18 digits (ISO 20022 DecimalNumber,
        // totalDigits 18), which also bounds what the ledger has to add up.
        for name in ["CtrlSum", "TtlIntrBkSttlmAmt", "TtlRtrdIntrBkSttlmAmt"] {
            check_total(st, &b, name);
        }
        if let Some(doc) = st.doc.as_mut() {
            doc.group = Some(b);
        }
    }
}

/// The file's sender: pain.001, the initiating party's identification, else its name,
/// else the first debtor agent; pacs, the group header's instructing agent, else the
/// transaction's, else its debtor agent. `agent` names an agent (`agent_of`, or `bic_of`
/// for the v1 rule).
fn sender_of(
    kind: Kind,
    group: &Block,
    tx: &Block,
    pmtinf: Option<&Block>,
    agent: fn(&Block, &str) -> String,
) -> String {
    match kind {
        Kind::Pain001 => group
            .first(&[
                "InitgPty/Id/OrgId/AnyBIC",
                "InitgPty/Id/OrgId/BICOrBEI",
                "InitgPty/Id/OrgId/Othr/Id",
                "InitgPty/Id/PrvtId/Othr/Id",
                "InitgPty/Nm",
            ])
            .map(|(_, v, _)| v.to_string())
            .or_else(|| pmtinf.map(|p| agent(p, "DbtrAgt")))
            .unwrap_or_default(),
        _ => [agent(group, "InstgAgt"), agent(tx, "InstgAgt")]
            .into_iter()
            .find(|a| !a.is_empty())
            .unwrap_or_else(|| agent(tx, "DbtrAgt")),
    }
}

fn transaction(
    st: &mut State,
    b: &Block,
    pmtinf: Option<&Block>,
    on_event: &mut dyn FnMut(IsoEvent),
) {
    let Some(doc) = st.doc.as_ref() else { return };
    let (kind, version) = (doc.kind, doc.version);
    let group = doc.group.clone().unwrap_or_default();
    st.record_no += 1;
    check_leaves(st, b);
    let path = b.path.clone();
    let mut tx = IsoTx {
        record_no: st.record_no,
        byte_offset: b.pos.byte_offset,
        line: b.pos.line,
        path: path.clone(),
        kind: Some(kind),
        msg_id: group.get("MsgId").unwrap_or_default().to_string(),
        sender: sender_of(kind, &group, b, pmtinf, agent_of),
        ..IsoTx::default()
    };
    tx.v1.sender = sender_of(kind, &group, b, pmtinf, bic_of);
    if kind != Kind::Pain001 {
        let leg = |rel: &str| {
            [agent_of(b, rel), agent_of(&group, rel)]
                .into_iter()
                .find(|a| !a.is_empty())
                .unwrap_or_default()
        };
        tx.instructing_agent = leg("InstgAgt");
        tx.instructed_agent = leg("InstdAgt");
    }
    let get = |rel: &str| b.get(rel).unwrap_or_default().to_string();
    let amount_paths: &[&str] = match kind {
        Kind::Pain001 => &["Amt/InstdAmt"],
        Kind::Pacs008 => &["IntrBkSttlmAmt"],
        Kind::Pacs004 => &["RtrdIntrBkSttlmAmt"],
    };
    match b.first(amount_paths) {
        Some((rel, text, pos)) => {
            let ccy = b.get(&format!("{rel}@Ccy")).unwrap_or_default().to_string();
            let apath = format!("{path}/{rel}");
            match Currency::parse(&ccy) {
                Ok(currency) => match parse_amount(text, currency) {
                    Ok(minor) => tx.amount_minor = minor,
                    Err(why) => st.err(FindingCode::AmountFormat, pos, apath, why, text),
                },
                Err(e) => {
                    let found = match e {
                        CurrencyError::Unknown => ccy.clone(),
                        _ => format!("{ccy} ({e})"),
                    };
                    st.err(
                        FindingCode::CurrencyCode,
                        pos,
                        apath.clone(),
                        "an active ISO 4217 currency code with minor units in @Ccy",
                        found,
                    );
                    // Without a currency there is no exponent; the digits are still checked.
                    if let Err(why) = parse_amount_syntax(text) {
                        st.err(FindingCode::AmountFormat, pos, apath, why, text);
                    }
                }
            }
            tx.currency = ccy;
            if let (Some(doc), Some(d)) = (st.doc.as_mut(), parse_decimal(text)) {
                doc.sum += d;
                if pmtinf.is_some() {
                    st.pmt_sum += d;
                }
            }
        }
        None => st.err(
            FindingCode::MissingElement,
            b.pos,
            path.clone(),
            format!("an amount ({})", amount_paths.join(" or ")),
            "none",
        ),
    }
    if let Some(doc) = st.doc.as_mut() {
        doc.count += 1;
    }
    if pmtinf.is_some() {
        st.pmt_count += 1;
    }
    tx.instr_id = get("PmtId/InstrId");
    tx.end_to_end_id = get("PmtId/EndToEndId");
    tx.tx_id = get("PmtId/TxId");
    tx.uetr = get("PmtId/UETR");
    tx.remittance = b
        .leaves
        .iter()
        .filter(|(p, _, _)| p == "RmtInf/Ustrd")
        .map(|(_, v, _)| v.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let date_of = |blk: &Block, rels: &[&str]| {
        blk.first(rels)
            .and_then(|(_, v, _)| NaiveDate::parse_from_str(v, "%Y-%m-%d").ok())
    };
    match kind {
        Kind::Pain001 => {
            if let Some(p) = pmtinf {
                tx.pmt_inf_id = p.get("PmtInfId").unwrap_or_default().to_string();
                parties(&mut tx, p, "", Side::Debtor);
                tx.date = date_of(p, &["ReqdExctnDt", "ReqdExctnDt/Dt"]);
            }
            parties(&mut tx, b, "", Side::Creditor);
        }
        Kind::Pacs008 => {
            parties(&mut tx, b, "", Side::Debtor);
            parties(&mut tx, b, "", Side::Creditor);
            tx.date =
                date_of(b, &["IntrBkSttlmDt"]).or_else(|| date_of(&group, &["IntrBkSttlmDt"]));
        }
        Kind::Pacs004 => {
            tx.tx_id = get("RtrId");
            tx.original_end_to_end_id = get("OrgnlEndToEndId");
            tx.original_uetr = get("OrgnlUETR");
            tx.original_tx_id = get("OrgnlTxId");
            tx.return_reason = get("RtrRsnInf/Rsn/Cd");
            return_parties(st, &mut tx, b);
            tx.date =
                date_of(b, &["IntrBkSttlmDt"]).or_else(|| date_of(&group, &["IntrBkSttlmDt"]));
        }
    }
    if kind != Kind::Pacs004 && tx.end_to_end_id.is_empty() {
        st.err(
            FindingCode::MissingElement,
            b.pos,
            format!("{path}/PmtId"),
            "PmtId/EndToEndId (NOTPROVIDED if none)",
            "none",
        );
    }
    if kind == Kind::Pacs004
        && tx.original_end_to_end_id.is_empty()
        && tx.original_uetr.is_empty()
        && tx.original_tx_id.is_empty()
    {
        st.err(
            FindingCode::MissingElement,
            b.pos,
            path.clone(),
            "OrgnlEndToEndId, OrgnlUETR or OrgnlTxId",
            "none",
        );
    }
    let Some(doc) = st.doc.as_mut() else { return };
    if !doc.header_sent {
        doc.header_sent = true;
        if st.first_header {
            st.first_header = false;
            st.header_v1 = Some(std::sync::Arc::new(IsoHeader {
                kind,
                version,
                sender: tx.v1.sender.clone(),
                msg_id: tx.msg_id.clone(),
            }));
            on_event(IsoEvent::Header(IsoHeader {
                kind,
                version,
                sender: tx.sender.clone(),
                msg_id: tx.msg_id.clone(),
            }));
        }
    }
    tx.v1.file = st.header_v1.clone();
    on_event(IsoEvent::Transaction(tx));
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Debtor,
    Creditor,
}

/// The debtor's or creditor's name, account and agent under `{prefix}` of block `b`
/// (`Dbtr`, `DbtrAcct`, `DbtrAgt` or the creditor's), as read now and as the v1 rule read them.
fn parties(tx: &mut IsoTx, b: &Block, prefix: &str, side: Side) {
    let (party, account, agent) = match side {
        Side::Debtor => ("Dbtr", "DbtrAcct", "DbtrAgt"),
        Side::Creditor => ("Cdtr", "CdtrAcct", "CdtrAgt"),
    };
    let (party, account, agent) = (
        format!("{prefix}{party}"),
        format!("{prefix}{account}"),
        format!("{prefix}{agent}"),
    );
    let name = party_name(b, &party);
    let acct = account_of(b, &account);
    let (now, bic) = (agent_of(b, &agent), bic_of(b, &agent));
    match side {
        Side::Debtor => {
            tx.v1.debtor_name = name.clone();
            tx.v1.debtor_account = acct.clone();
            tx.v1.debtor_agent = bic;
            (tx.debtor_name, tx.debtor_account, tx.debtor_agent) = (name, acct, now);
        }
        Side::Creditor => {
            tx.v1.creditor_name = name.clone();
            tx.v1.creditor_account = acct.clone();
            tx.v1.creditor_agent = bic;
            (tx.creditor_name, tx.creditor_account, tx.creditor_agent) = (name, acct, now);
        }
    }
}

/// A return's parties (the original payment's): from `RtrChain` when the return has one
/// (pacs.004.001.09 on), else from `OrgnlTxRef`, each element present taking precedence
/// over the other source; a missing agent is the return's instructed agent (debtor side)
/// or instructing agent (creditor side), which they are on a return of a direct payment.
/// A side none of these identifies is an error at its element. The previous rule
/// (`IsoTx::v1`) read `OrgnlTxRef` only, with the BIC of the transaction's agents.
fn return_parties(st: &mut State, tx: &mut IsoTx, b: &Block) {
    parties(tx, b, "OrgnlTxRef/", Side::Debtor);
    parties(tx, b, "OrgnlTxRef/", Side::Creditor);
    let v1_instd = bic_of(b, "InstdAgt");
    let v1_instg = bic_of(b, "InstgAgt");
    if tx.v1.debtor_agent.is_empty() {
        tx.v1.debtor_agent = v1_instd;
    }
    if tx.v1.creditor_agent.is_empty() {
        tx.v1.creditor_agent = v1_instg;
    }
    let chain = b.leaves.iter().any(|(p, _, _)| p.starts_with("RtrChain/"));
    if chain {
        let v1 = tx.v1.clone();
        let from_ref = tx.clone();
        parties(tx, b, "RtrChain/", Side::Debtor);
        parties(tx, b, "RtrChain/", Side::Creditor);
        tx.v1 = v1;
        let keep = |now: &mut String, before: &str| {
            if now.is_empty() {
                *now = before.to_string();
            }
        };
        keep(&mut tx.debtor_name, &from_ref.debtor_name);
        keep(&mut tx.debtor_account, &from_ref.debtor_account);
        keep(&mut tx.debtor_agent, &from_ref.debtor_agent);
        keep(&mut tx.creditor_name, &from_ref.creditor_name);
        keep(&mut tx.creditor_account, &from_ref.creditor_account);
        keep(&mut tx.creditor_agent, &from_ref.creditor_agent);
        if tx.debtor_name.is_empty() {
            tx.debtor_name = party_name(b, "RtrChain/InitgPty");
        }
    }
    if tx.debtor_agent.is_empty() {
        tx.debtor_agent = tx.instructed_agent.clone();
    }
    if tx.creditor_agent.is_empty() {
        tx.creditor_agent = tx.instructing_agent.clone();
    }
    let source = if chain { "RtrChain" } else { "OrgnlTxRef" };
    for (side, name, account, agent) in [
        (
            "Dbtr",
            &tx.debtor_name,
            &tx.debtor_account,
            &tx.debtor_agent,
        ),
        (
            "Cdtr",
            &tx.creditor_name,
            &tx.creditor_account,
            &tx.creditor_agent,
        ),
    ] {
        if name.is_empty() && account.is_empty() && agent.is_empty() {
            st.err(
                FindingCode::MissingElement,
                b.pos,
                format!("{}/{source}/{side}", b.path),
                format!(
                    "the original {} ({source}/{side}, {side}Acct or {side}Agt, or the return's {})",
                    if side == "Dbtr" { "debtor" } else { "creditor" },
                    if side == "Dbtr" { "InstdAgt" } else { "InstgAgt" },
                ),
                "none",
            );
        }
    }
}

/// A total (`CtrlSum`, `TtlIntrBkSttlmAmt`) of block `b`, when given, is an amount like
/// any other: at most 18 digits.
fn check_total(st: &mut State, b: &Block, name: &str) {
    if let Some((v, pos)) = b.get_pos(name)
        && let Err(why) = parse_amount_syntax(v)
    {
        st.err(
            FindingCode::AmountFormat,
            pos,
            format!("{}/{name}", b.path),
            why,
            v,
        );
    }
}

/// The digits a decimal is written with (integer and fraction, no trailing zeros).
fn decimal_digits(d: Decimal) -> u32 {
    let n = d.normalize();
    let mantissa = n.mantissa().unsigned_abs();
    let digits = mantissa.checked_ilog10().map_or(1, |l| l + 1);
    digits.max(n.scale() + 1)
}

/// NbOfTxs and CtrlSum of a payment information block, against its transactions.
fn payment_info_end(st: &mut State, p: &Block) {
    check_leaves(st, p);
    let (count, sum) = (
        std::mem::take(&mut st.pmt_count),
        std::mem::replace(&mut st.pmt_sum, Decimal::ZERO),
    );
    if let Some((v, pos)) = p.get_pos("NbOfTxs")
        && v.parse::<u64>().ok() != Some(count)
    {
        st.err(
            FindingCode::NbOfTxsMismatch,
            pos,
            format!("{}/NbOfTxs", p.path),
            format!("{count} (transactions in this PmtInf)"),
            v,
        );
    }
    check_total(st, p, "CtrlSum");
    if let Some((v, pos)) = p.get_pos("CtrlSum")
        && let Some(d) = parse_decimal(v)
        && d != sum
    {
        st.err(
            FindingCode::CtrlSumMismatch,
            pos,
            format!("{}/CtrlSum", p.path),
            format!("{} (sum of this PmtInf's amounts)", sum.normalize()),
            v,
        );
    }
}

fn document_end(st: &mut State) {
    let Some(doc) = st.doc.take() else { return };
    if doc.count == 0 {
        // Valid as XML, but nothing to post: a bank's intake refuses it (pacs.008 and
        // pain.001 require at least one transaction), and so does a ledger.
        let what = match doc.kind {
            Kind::Pain001 => "CstmrCdtTrfInitn/PmtInf/CdtTrfTxInf",
            Kind::Pacs008 => "FIToFICstmrCdtTrf/CdtTrfTxInf",
            Kind::Pacs004 => "PmtRtr/TxInf",
        };
        st.err(
            FindingCode::NoTransactions,
            doc.pos,
            doc.path.clone(),
            format!(
                "at least one transaction ({what}) in a {} message",
                doc.kind.as_str()
            ),
            match doc.group.as_ref().and_then(|g| g.get("NbOfTxs")) {
                Some(n) => format!("none (NbOfTxs {n})"),
                None => "none".to_string(),
            },
        );
    }
    let Some(g) = doc.group.as_ref() else {
        st.err(
            FindingCode::MissingElement,
            doc.pos,
            format!("{}/*/GrpHdr", doc.path),
            "a group header (GrpHdr)",
            "none",
        );
        return;
    };
    let gp = g.path.clone();
    // However many transactions, their total must be writable as an ISO 20022 total (18
    // digits): ten amounts of 999999999999999999 JPY are refused here, not wrapped later.
    if decimal_digits(doc.sum) > 18 {
        let f = Finding::error(
            FindingCode::AmountFormat,
            doc.pos.at(format!("{gp}/CtrlSum")),
            None,
            "transactions whose amounts total at most 18 digits (the largest ISO 20022 total)",
            format!(
                "a total of {} ({} digits)",
                doc.sum.normalize(),
                decimal_digits(doc.sum)
            ),
        );
        st.push(f);
    }
    if let Some((v, pos)) = g.get_pos("NbOfTxs")
        && v.parse::<u64>().ok() != Some(doc.count)
    {
        let f = Finding::error(
            FindingCode::NbOfTxsMismatch,
            pos.at(format!("{gp}/NbOfTxs")),
            None,
            format!("{} (transactions in the message)", doc.count),
            v,
        );
        st.push(f);
    }
    if let Some((v, pos)) = g.get_pos("CtrlSum")
        && let Some(d) = parse_decimal(v)
        && d != doc.sum
    {
        let f = Finding::error(
            FindingCode::CtrlSumMismatch,
            pos.at(format!("{gp}/CtrlSum")),
            None,
            format!("{} (sum of the transactions' amounts)", doc.sum.normalize()),
            v,
        );
        st.push(f);
    }
    if let Some((_, v, pos)) = g.first(&["TtlIntrBkSttlmAmt", "TtlRtrdIntrBkSttlmAmt"])
        && let Some(d) = parse_decimal(v)
        && d != doc.sum
    {
        let f = Finding::error(
            FindingCode::CtrlSumMismatch,
            pos.at(format!("{gp}/TtlIntrBkSttlmAmt")),
            None,
            format!(
                "{} (sum of the transactions' settlement amounts)",
                doc.sum.normalize()
            ),
            v,
        );
        st.push(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(leaves: &[(&str, &str)]) -> Block {
        Block {
            path: "/x".into(),
            pos: Pos::default(),
            leaves: leaves
                .iter()
                .map(|(p, v)| (p.to_string(), v.to_string(), Pos::default()))
                .collect(),
        }
    }

    #[test]
    fn a_message_without_transactions_is_one_error_at_its_document() {
        let ns = |id: &str| format!("urn:iso:std:iso:20022:tech:xsd:{id}");
        let grp = "<GrpHdr><MsgId>M1</MsgId><NbOfTxs>0</NbOfTxs></GrpHdr>";
        for (xml, expected, found) in [
            (
                format!(
                    "<Document xmlns=\"{}\"><FIToFICstmrCdtTrf>{grp}</FIToFICstmrCdtTrf></Document>",
                    ns("pacs.008.001.08")
                ),
                "at least one transaction (FIToFICstmrCdtTrf/CdtTrfTxInf) in a pacs.008 message",
                "none (NbOfTxs 0)",
            ),
            (
                format!(
                    "<Document xmlns=\"{}\"><CstmrCdtTrfInitn>{grp}<PmtInf><PmtInfId>P</PmtInfId></PmtInf></CstmrCdtTrfInitn></Document>",
                    ns("pain.001.001.09")
                ),
                "at least one transaction (CstmrCdtTrfInitn/PmtInf/CdtTrfTxInf) in a pain.001 message",
                "none (NbOfTxs 0)",
            ),
            (
                format!(
                    "<Document xmlns=\"{}\"><PmtRtr><GrpHdr><MsgId>R</MsgId></GrpHdr></PmtRtr></Document>",
                    ns("pacs.004.001.09")
                ),
                "at least one transaction (PmtRtr/TxInf) in a pacs.004 message",
                "none",
            ),
        ] {
            let mut events = 0;
            let s = read_file(xml.as_bytes(), &mut |_| events += 1).unwrap();
            let got: Vec<_> = s
                .findings
                .iter()
                .map(|f| {
                    (
                        f.severity,
                        f.code,
                        f.position.byte_offset(),
                        f.position.path(),
                        f.expected.as_str(),
                        f.found.as_str(),
                    )
                })
                .collect();
            assert_eq!(
                got,
                [(
                    Severity::Error,
                    FindingCode::NoTransactions,
                    0,
                    Some("/Document"),
                    expected,
                    found
                )],
                "{xml}"
            );
            assert_eq!((events, s.transactions), (0, 0));
        }
    }

    #[test]
    fn an_agent_is_its_bic_else_its_clearing_member_id_else_its_other_id() {
        for (leaves, agent) in [
            (
                &[
                    ("DbtrAgt/FinInstnId/BICFI", "COBADEFFXXX"),
                    ("DbtrAgt/FinInstnId/ClrSysMmbId/MmbId", "10040000"),
                ][..],
                // A primary office's BIC11 is its BIC8: one agent, however spelled.
                "COBADEFF",
            ),
            (&[("DbtrAgt/FinInstnId/BIC", "COBADEFF")][..], "COBADEFF"),
            (
                &[("DbtrAgt/FinInstnId/BICFI", "DEUTDEFF500")][..],
                "DEUTDEFF500",
            ),
            (
                &[
                    ("DbtrAgt/FinInstnId/ClrSysMmbId/ClrSysId/Cd", "USABA"),
                    ("DbtrAgt/FinInstnId/ClrSysMmbId/MmbId", "021000021"),
                ][..],
                "USABA:021000021",
            ),
            (
                &[
                    ("DbtrAgt/FinInstnId/ClrSysMmbId/ClrSysId/Prtry", "FEDNOW"),
                    ("DbtrAgt/FinInstnId/ClrSysMmbId/MmbId", "021000021"),
                ][..],
                "FEDNOW:021000021",
            ),
            (
                &[("DbtrAgt/FinInstnId/ClrSysMmbId/MmbId", "021000021")][..],
                "021000021",
            ),
            (
                &[("DbtrAgt/FinInstnId/Othr/Id", "payer-dfsp")][..],
                "payer-dfsp",
            ),
            (&[("CdtrAgt/FinInstnId/BICFI", "INGBNL2AXXX")][..], ""),
        ] {
            assert_eq!(agent_of(&block(leaves), "DbtrAgt"), agent, "{leaves:?}");
        }
        // The v1 rule: the BIC or nothing.
        let aba = block(&[("DbtrAgt/FinInstnId/ClrSysMmbId/MmbId", "021000021")]);
        assert_eq!(bic_of(&aba, "DbtrAgt"), "");
    }
}
