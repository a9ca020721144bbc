//! A statement's entries (`Ntry`): amount, direction, status, dates, references, bank
//! transaction code; its details are read in [`super::details`].

use super::details::Group;
use super::reader::{Frame, Stack, State};
use super::values::{append, instant_of, non_empty};
use crate::findings::{Finding, FindingCode, XmlPosition};
use crate::formats::dialect::DialectRule;
use crate::formats::statement::{Detail, Entry, EntryStatus, StatementKind};
use chrono::{DateTime, FixedOffset, NaiveDate};

pub(super) struct EntryB {
    pub pos: XmlPosition,
    pub at: usize,
    pub amount: Option<u64>,
    pub currency: Option<String>,
    pub credit: Option<bool>,
    /// `Amt`, `CdtDbtInd`, `Sts` were written (a wrong value has its own finding).
    pub seen: [bool; 3],
    pub reversal: bool,
    pub status: Option<EntryStatus>,
    pub booking: Option<NaiveDate>,
    /// `BookgDt/DtTm` with a time zone: the instant, booked on the statement's local date
    /// when the statement closes (`StatementB::book_on_local_dates`).
    pub booked_at: Option<DateTime<FixedOffset>>,
    pub value: Option<NaiveDate>,
    pub bank_ref: Option<String>,
    pub customer_ref: Option<String>,
    pub domain: Option<String>,
    pub family: Option<String>,
    pub sub_family: Option<String>,
    pub proprietary: Option<String>,
    pub additional: Option<String>,
    /// The first batch's `PmtInfId`, else its `MsgId` ([`Entry::batch_ref`]).
    pub batch_ref: Option<String>,
    pub details: Vec<Detail>,
    pub group: Option<(usize, Group)>,
}

impl EntryB {
    pub(super) fn new(pos: XmlPosition, at: usize) -> Self {
        EntryB {
            pos,
            at,
            amount: None,
            currency: None,
            credit: None,
            seen: [false; 3],
            reversal: false,
            status: None,
            booking: None,
            booked_at: None,
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
        }
    }
}

impl EntryB {
    /// `Domn/Cd`, `Fmly/Cd` and `SubFmlyCd` joined by `/`; else the proprietary code.
    fn bank_tx_code(&self) -> Option<String> {
        match (&self.domain, &self.family, &self.sub_family) {
            (Some(d), f, s) => Some(
                [Some(d), f.as_ref(), s.as_ref()]
                    .into_iter()
                    .flatten()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("/"),
            ),
            _ => self.proprietary.clone(),
        }
    }
}

impl State<'_> {
    pub(super) fn entry_leaf(&mut self, stack: &Stack, at: usize, frame: &Frame) {
        let rel = stack.rel(at);
        let text = frame.text.trim();
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
            "RvslInd" => self.reversal_leaf(frame, stack),
            "Sts" | "Sts/Cd" | "Sts/Prtry" => self.status_leaf(frame, stack),
            "BookgDt/Dt" | "BookgDt/DtTm" | "ValDt/Dt" | "ValDt/DtTm" => {
                let d = self.date(frame, stack, rel.ends_with("DtTm"));
                if let Some(e) = &mut self.entry {
                    if rel.starts_with("BookgDt") {
                        e.booking = d;
                        e.booked_at = d.and_then(|_| instant_of(text));
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
                if let Some(e) = &mut self.entry {
                    let v = non_empty(text);
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

    /// `RvslInd`: `true` or `false` (`1`, `0`).
    fn reversal_leaf(&mut self, frame: &Frame, stack: &Stack) {
        let text = frame.text.trim();
        let r = match text {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        };
        if r.is_none() {
            self.sink.push(Finding::error(
                FindingCode::InvalidValue,
                frame.pos.at(stack.path()),
                None,
                "true or false",
                text.to_string(),
            ));
        }
        if let Some(e) = &mut self.entry {
            e.reversal = r.unwrap_or(false);
        }
    }

    /// `Sts`: booked, pending or information.
    fn status_leaf(&mut self, frame: &Frame, stack: &Stack) {
        let text = frame.text.trim();
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
                frame.pos.at(stack.path()),
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

    pub(super) fn close_entry(&mut self) {
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
        // No status at all: an entry of a statement is what the bank booked (a wrong
        // status is an error of its own, at it, and is not read as booked).
        if !e.seen[2] {
            e.status = Some(EntryStatus::Booked);
            self.sink
                .push(DialectRule::NoEntryStatus.finding(e.pos.clone(), "no Sts"));
        }
        let kind = self.message.map(|m| m.2);
        let mut status = e.status.unwrap_or(EntryStatus::Info);
        // An intraday report's entries are provisional, whatever their status says: the
        // day's final statement books them.
        if kind == Some(StatementKind::Intraday) {
            status = EntryStatus::Pending;
        }
        let bank_tx_code = e.bank_tx_code();
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
            if let Some(at) = e.booked_at {
                s.booked_at.push((s.entries.len(), at));
            }
            s.entries.push(entry);
        }
    }
}
