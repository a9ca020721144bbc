//! One transaction block read into an [`IsoTx`]: its identity (message, sender, leg), its
//! amount, its identifiers and remittance, its parties and date by message kind, the
//! identifiers it must have; the file's header handed over before its first transaction.

use super::block::Block;
use super::checks::check_leaves;
use super::parties::{Side, agent_of, bic_of, parties, return_parties, sender_of};
use super::{IsoEvent, IsoHeader, IsoTx, Kind, State};
use crate::findings::FindingCode;
use crate::formats::xml::amount::{parse_amount, parse_amount_syntax, parse_decimal};
use crate::money::{Currency, CurrencyError};
use chrono::NaiveDate;

/// Reads transaction block `b` (under payment information `pmtinf` in a pain.001) and
/// hands it over, after the file's header if it is the first.
pub(super) fn transaction(
    st: &mut State,
    b: &Block,
    pmtinf: Option<&Block>,
    on_event: &mut dyn FnMut(IsoEvent),
) {
    let Some(doc) = st.doc.as_ref() else { return };
    let (kind, version) = (doc.kind, doc.version);
    let group = doc.group.clone().unwrap_or_default();
    st.record_no += 1;
    let errors_before = st.findings.errors();
    check_leaves(st, b);
    let mut tx = identity(st.record_no, kind, &group, b, pmtinf);
    amount(st, &mut tx, kind, b, pmtinf);
    if let Some(doc) = st.doc.as_mut() {
        doc.count += 1;
    }
    if pmtinf.is_some() {
        st.pmt_count += 1;
    }
    let get = |rel: &str| b.get(rel).unwrap_or_default().to_string();
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
    by_kind(st, &mut tx, kind, &group, b, pmtinf);
    required_ids(st, &tx, kind, b);
    tx.invalid = st.findings.errors() > errors_before;
    hand_over(st, tx, kind, version, on_event);
}

/// Where the transaction is and what it belongs to: its ordinal, position, message, the
/// file's sender (as now and as the v1 rule read it) and, in pacs messages, its leg.
fn identity(record_no: u64, kind: Kind, group: &Block, b: &Block, pmtinf: Option<&Block>) -> IsoTx {
    let mut tx = IsoTx {
        record_no,
        byte_offset: b.pos.byte_offset,
        line: b.pos.line,
        path: b.path.clone(),
        kind: Some(kind),
        msg_id: group.get("MsgId").unwrap_or_default().to_string(),
        sender: sender_of(kind, group, b, pmtinf, agent_of),
        ..IsoTx::default()
    };
    tx.v1.sender = sender_of(kind, group, b, pmtinf, bic_of);
    if kind != Kind::Pain001 {
        let leg = |rel: &str| {
            [agent_of(b, rel), agent_of(group, rel)]
                .into_iter()
                .find(|a| !a.is_empty())
                .unwrap_or_default()
        };
        tx.instructing_agent = leg("InstgAgt");
        tx.instructed_agent = leg("InstdAgt");
    }
    tx
}

/// The amount of the message kind with its `Ccy`, exactly, added to the document's (and
/// the payment information's) sum; a finding where it is missing or not an amount.
fn amount(st: &mut State, tx: &mut IsoTx, kind: Kind, b: &Block, pmtinf: Option<&Block>) {
    let amount_paths: &[&str] = match kind {
        Kind::Pain001 => &["Amt/InstdAmt"],
        Kind::Pacs008 => &["IntrBkSttlmAmt"],
        Kind::Pacs004 => &["RtrdIntrBkSttlmAmt"],
    };
    let Some((rel, text, pos)) = b.first(amount_paths) else {
        st.err(
            FindingCode::MissingElement,
            b.pos,
            b.path.clone(),
            format!("an amount ({})", amount_paths.join(" or ")),
            "none",
        );
        return;
    };
    let ccy = b.get(&format!("{rel}@Ccy")).unwrap_or_default().to_string();
    let apath = format!("{}/{rel}", b.path);
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

/// What depends on the message kind: the parties (a pain.001's debtor is its payment
/// information's), the date, a return's original identifiers.
fn by_kind(
    st: &mut State,
    tx: &mut IsoTx,
    kind: Kind,
    group: &Block,
    b: &Block,
    pmtinf: Option<&Block>,
) {
    let get = |rel: &str| b.get(rel).unwrap_or_default().to_string();
    let date_of = |blk: &Block, rels: &[&str]| {
        blk.first(rels)
            .and_then(|(_, v, _)| NaiveDate::parse_from_str(v, "%Y-%m-%d").ok())
    };
    match kind {
        Kind::Pain001 => {
            if let Some(p) = pmtinf {
                tx.pmt_inf_id = p.get("PmtInfId").unwrap_or_default().to_string();
                parties(tx, p, "", Side::Debtor);
                tx.date = date_of(p, &["ReqdExctnDt", "ReqdExctnDt/Dt"]);
            }
            parties(tx, b, "", Side::Creditor);
        }
        Kind::Pacs008 => {
            parties(tx, b, "", Side::Debtor);
            parties(tx, b, "", Side::Creditor);
            tx.date = date_of(b, &["IntrBkSttlmDt"]).or_else(|| date_of(group, &["IntrBkSttlmDt"]));
        }
        Kind::Pacs004 => {
            tx.tx_id = get("RtrId");
            tx.original_end_to_end_id = get("OrgnlEndToEndId");
            tx.original_uetr = get("OrgnlUETR");
            tx.original_tx_id = get("OrgnlTxId");
            tx.return_reason = get("RtrRsnInf/Rsn/Cd");
            return_parties(st, tx, b);
            tx.date = date_of(b, &["IntrBkSttlmDt"]).or_else(|| date_of(group, &["IntrBkSttlmDt"]));
        }
    }
}

/// A payment's end-to-end id, a return's reference to the original: required.
fn required_ids(st: &mut State, tx: &IsoTx, kind: Kind, b: &Block) {
    if kind != Kind::Pacs004 && tx.end_to_end_id.is_empty() {
        st.err(
            FindingCode::MissingElement,
            b.pos,
            format!("{}/PmtId", b.path),
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
            b.path.clone(),
            "OrgnlEndToEndId, OrgnlUETR or OrgnlTxId",
            "none",
        );
    }
}

/// The transaction handed over; before it, the file's header if this is the file's first
/// transaction (kept as the v1 rule read it too, for the legacy keys).
fn hand_over(
    st: &mut State,
    mut tx: IsoTx,
    kind: Kind,
    version: u32,
    on_event: &mut dyn FnMut(IsoEvent),
) {
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
