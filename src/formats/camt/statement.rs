//! A statement (`Stmt`, `Rpt`, `Ntfctn`) as a whole: its header (identification, sequence,
//! dates, account), its transaction summary against its entries, and the balance chain and
//! sequence numbers against the account's previous statement in the file.

use super::reader::{Frame, Stack, State};
use super::values::{non_empty, zone_of};
use crate::findings::{Finding, FindingCode, XmlPosition};
use crate::formats::dialect::DialectRule;
use crate::formats::statement::{
    Balance, BalanceKind, Entry, Statement, chain_break, check_balance,
};
use crate::formats::xml::amount::parse_decimal;
use crate::money::minor_exponent;
use chrono::{DateTime, FixedOffset, NaiveDate};
use rust_decimal::Decimal;

pub(super) struct StatementB {
    pub pos: XmlPosition,
    pub at: usize,
    /// The statement's number in its message (the index of its `Stmt`/`Rpt`/`Ntfctn`).
    pub number: u32,
    pub id: Option<String>,
    pub electronic_seq: Option<String>,
    pub legal_seq: Option<String>,
    pub created: Option<NaiveDate>,
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    pub copy: bool,
    pub iban: Option<String>,
    pub other_id: Option<String>,
    pub currency: Option<String>,
    pub servicer: Option<String>,
    pub balances: Vec<Balance>,
    pub entries: Vec<Entry>,
    /// `TxsSummry`: (leaf, value, position) for the counts and sums.
    pub counts: Vec<(&'static str, u64, XmlPosition)>,
    pub sums: Vec<(&'static str, Decimal, XmlPosition)>,
    /// The time zones `CreDtTm`, `FrToDt/FrDtTm` and `FrToDt/ToDtTm` are written in, where
    /// they say one: the statement's local time, in that order of preference.
    pub zones: [Option<FixedOffset>; 3],
    /// The entries (their index in `entries`) booked at a date-time with a time zone, and
    /// that instant: their booking date is the statement's local date of it.
    pub booked_at: Vec<(usize, DateTime<FixedOffset>)>,
}

/// The previous statement of an account: its closing booked balance and sequence number.
pub(super) struct Previous {
    pub closing: Option<(i64, String, String)>,
    pub sequence: Option<(u64, String)>,
}

impl StatementB {
    pub(super) fn new(pos: XmlPosition, at: usize, number: u32) -> Self {
        StatementB {
            pos,
            at,
            number,
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
            zones: [None; 3],
            booked_at: Vec::new(),
        }
    }

    /// A booking date-time with a time zone (`BookgDt/DtTm`, `2014-01-04T23:00:00.000Z`) is
    /// booked on the statement's local date: the date of that instant in the time zone the
    /// statement is written in (its `CreDtTm`, else its `FrToDt/FrDtTm`, else its
    /// `FrToDt/ToDtTm`, else the message's `GrpHdr/CreDtTm`, the first that carries an
    /// offset). A statement that says no time zone keeps the date as written, as does a
    /// booking date-time without one. The value date, a plain date, is the bank's local
    /// date already; reading the booking as written would book such an entry on the UTC
    /// date, a day before the one the bank means.
    fn book_on_local_dates(&mut self, group_zone: Option<FixedOffset>) {
        let zone = self.zones.iter().flatten().next().copied().or(group_zone);
        let Some(zone) = zone else { return };
        for (i, at) in self.booked_at.drain(..) {
            if let Some(e) = self.entries.get_mut(i) {
                e.booking_date = Some(at.with_timezone(&zone).date_naive());
            }
        }
    }
}

impl State<'_> {
    pub(super) fn statement_leaf(&mut self, stack: &Stack, at: usize, frame: &Frame) {
        let rel = stack.rel(at);
        let text = frame.text.trim();
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
            | "Acct/Svcr/FinInstnId/BIC" => self.statement_id_leaf(rel, text),
            "CreDtTm" | "FrToDt/FrDtTm" | "FrToDt/ToDtTm" => {
                let d = self.date(frame, stack, true);
                let zone = zone_of(text);
                if let Some(s) = &mut self.statement {
                    let (slot, i) = match rel {
                        "CreDtTm" => (&mut s.created, 0),
                        "FrToDt/FrDtTm" => (&mut s.from, 1),
                        _ => (&mut s.to, 2),
                    };
                    *slot = d;
                    s.zones[i] = zone;
                }
            }
            "TxsSummry/TtlNtries/NbOfNtries"
            | "TxsSummry/TtlCdtNtries/NbOfNtries"
            | "TxsSummry/TtlDbtNtries/NbOfNtries"
            | "TxsSummry/TtlNtries/Sum"
            | "TxsSummry/TtlCdtNtries/Sum"
            | "TxsSummry/TtlDbtNtries/Sum" => self.summary_leaf(rel, frame, stack),
            _ => {}
        }
    }

    /// The statement's identification, sequence numbers, copy indicator and account.
    fn statement_id_leaf(&mut self, rel: &str, text: &str) {
        let Some(s) = &mut self.statement else { return };
        let v = non_empty(text);
        match rel {
            "Id" => s.id = v,
            "ElctrncSeqNb" => s.electronic_seq = v,
            "LglSeqNb" => s.legal_seq = v,
            "CpyDplctInd" => s.copy = matches!(text, "COPY" | "DUPL" | "CODU"),
            "Acct/Id/IBAN" => s.iban = v,
            "Acct/Id/Othr/Id" | "Acct/Id/PrtryAcct/Id" | "Acct/Id/BBAN" | "Acct/Id/UPIC" => {
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

    /// A count or sum of the transaction summary (`TxsSummry`), kept with its position for
    /// the check against the entries.
    fn summary_leaf(&mut self, rel: &str, frame: &Frame, stack: &Stack) {
        let path = || stack.path();
        let text = frame.text.trim();
        let which = summary_of(rel);
        if rel.ends_with("/NbOfNtries") {
            if let Some(n) = self.count(frame, stack)
                && let Some(s) = &mut self.statement
            {
                s.counts.push((which, n, frame.pos.at(path())));
            }
            return;
        }
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

    pub(super) fn close_statement(&mut self) {
        let Some(mut s) = self.statement.take() else {
            return;
        };
        s.book_on_local_dates(self.group_zone);
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
        let id = self.statement_id(s.id, s.number, &s.pos);
        self.check_summary(s.counts, s.sums, &s.entries);
        let sequence = s.electronic_seq.or(s.legal_seq);
        let mut statement = Statement {
            format,
            kind,
            account: account.unwrap_or_default(),
            currency: s.currency,
            servicer: s.servicer,
            id: id.unwrap_or_default(),
            sequence,
            date: s.created.or(s.to).or(self.group_created),
            from_date: s.from,
            to_date: s.to,
            copy: s.copy,
            balances: s.balances,
            entries: s.entries,
            position: s.pos.into(),
            balance_breaks: Vec::new(),
        };
        if let Some(f) = check_balance(&mut statement) {
            self.sink.push_control(f);
        }
        self.chain(&mut statement);
        self.statements += 1;
        self.entries_out += statement.entries.len() as u64;
        (self.on_statement)(statement);
    }

    /// The statement's `Id`; without one, the message's `MsgId` and the statement's number
    /// in the message (`MSGID/2`), with a [`DialectRule::NoStatementId`] warning: the same
    /// file gives the same id again, and two statements of one message never share one.
    /// Without a `MsgId` either, nothing identifies the statement: refused at it.
    fn statement_id(
        &mut self,
        id: Option<String>,
        number: u32,
        pos: &XmlPosition,
    ) -> Option<String> {
        if id.is_some() {
            return id;
        }
        let Some(msg_id) = &self.group_msg_id else {
            self.sink.push(Finding::error(
                FindingCode::MissingElement,
                pos.clone(),
                None,
                "Id (or the message's GrpHdr/MsgId to stand in)",
                "none",
            ));
            return None;
        };
        let id = format!("{msg_id}/{number}");
        self.sink
            .push(DialectRule::NoStatementId.finding(pos.clone(), format!("no Id (read as {id})")));
        Some(id)
    }

    /// The transaction summary (`TxsSummry`) against the entries: each count and sum.
    fn check_summary(
        &mut self,
        counts: Vec<(&'static str, u64, XmlPosition)>,
        sums: Vec<(&'static str, Decimal, XmlPosition)>,
        entries: &[Entry],
    ) {
        for (which, n, pos) in counts {
            let counted = entries.iter().filter(|e| summary_counts(which, e)).count() as u64;
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
        for (which, sum, pos) in sums {
            let mut total = Decimal::ZERO;
            for e in entries.iter().filter(|e| summary_counts(which, e)) {
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
    }

    /// The balance chain and the sequence numbers of the account, against its previous
    /// statement in the file.
    pub(super) fn chain(&mut self, s: &mut Statement) {
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
                let f = Finding::error(
                    FindingCode::BalanceChain,
                    open.position.clone(),
                    None,
                    format!(
                        "{} {amount} {ccy} (the previous statement's {code} for {})",
                        open.code, s.account
                    ),
                    open.amount_minor.to_string(),
                );
                let found = open.amount_minor;
                self.sink
                    .push_control(chain_break(s, *amount, found, ccy, f));
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
