//! An entry's details (`NtryDtls`): its batch (`Btch`: count, total, what it belongs to)
//! and transaction details (`TxDtls`), and the batch against the details it reports.

use super::reader::{Frame, Stack, State};
use super::values::{append, non_empty};
use crate::findings::{Finding, FindingCode, XmlPosition};
use crate::formats::statement::Detail;

/// A batch (`Btch`) of an entry's details.
#[derive(Default)]
pub(super) struct Batch {
    pub nb_of_txs: Option<(u64, XmlPosition)>,
    pub total: Option<(i64, String, XmlPosition)>,
    /// `PmtInfId`, `MsgId`: what the batch belongs to ([`Entry::batch_ref`]).
    pub pmt_inf_id: Option<String>,
    pub msg_id: Option<String>,
}

/// One `NtryDtls` (or, in version 01, the entry itself): its batch and its details.
#[derive(Default)]
pub(super) struct Group {
    pub batch: Option<Batch>,
    pub details: u64,
    /// Detail amounts by currency; `None` once a detail has no amount.
    pub amounts: Option<Vec<(String, i64)>>,
}

/// An open `TxDtls`: its depth, the detail so far, its amount and currency.
pub(super) type OpenDetail = (usize, Detail, Option<(i64, String)>);

impl State<'_> {
    /// An element at `depth` under the open entry: a `NtryDtls` (the previous one closed),
    /// a `Btch` or a `TxDtls` (in version 01 directly under the entry, which then stands
    /// for the group).
    pub(super) fn details_start(&mut self, depth: usize, name: &str, parent: Option<&str>) {
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

    /// A batch ended: what it belongs to is the entry's (the first batch's), the batch its
    /// group's.
    pub(super) fn close_batch(&mut self) {
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
    }

    pub(super) fn batch_leaf(&mut self, stack: &Stack, at: usize, frame: &Frame) {
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

    pub(super) fn detail_leaf(&mut self, stack: &Stack, at: usize, frame: &Frame) {
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

    pub(super) fn close_detail(&mut self) {
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
    pub(super) fn close_group(&mut self, (_, g): (usize, Group)) {
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
}
