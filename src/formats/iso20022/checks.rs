//! The checks of a payment document beyond its transactions: the format of every BIC,
//! IBAN, UETR and date leaf, the group header, and the counts and totals of each payment
//! information and of the message against the transactions read.

use super::block::Block;
use super::validate::{is_bic, is_iban, is_iso_date, is_uetr};
use super::{Doc, Kind, State};
use crate::findings::{Finding, FindingCode};
use crate::formats::xml::amount::{parse_amount_syntax, parse_decimal};
use rust_decimal::Decimal;

/// Checks every BIC, IBAN, UETR and date leaf of a block.
pub(super) fn check_leaves(st: &mut State, b: &Block) {
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

pub(super) fn check_leaves_group(st: &mut State, b: Block) {
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
pub(super) fn payment_info_end(st: &mut State, p: &Block) {
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

/// A Document ended: a message without transactions refused, its group header's counts
/// and totals against its transactions.
pub(super) fn document_end(st: &mut State) {
    let Some(doc) = st.doc.take() else { return };
    if doc.count == 0 {
        no_transactions(st, &doc);
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
    group_totals(st, &doc, g);
}

/// Valid as XML, but nothing to post: a bank's intake refuses it (pacs.008 and pain.001
/// require at least one transaction), and so does a ledger.
fn no_transactions(st: &mut State, doc: &Doc) {
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

/// The group header `g`'s NbOfTxs, CtrlSum and settlement total against the transactions
/// of `doc`, and their total against the 18 digits of an ISO 20022 total.
fn group_totals(st: &mut State, doc: &Doc, g: &Block) {
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
