//! A statement's balances (`Bal`): type, amount, credit or debit, date.

use super::reader::{Frame, Stack, State};
use super::values::non_empty;
use crate::findings::{Finding, FindingCode, XmlPosition};
use crate::formats::dialect::DialectRule;
use crate::formats::statement::{Balance, BalanceKind};
use chrono::NaiveDate;

pub(super) struct BalanceB {
    pub pos: XmlPosition,
    pub at: usize,
    pub code: Option<String>,
    pub amount: Option<(i64, String)>,
    pub debit: Option<bool>,
    /// `CdtDbtInd` was written (a wrong value has its own finding).
    pub indicator_seen: bool,
    pub date: Option<NaiveDate>,
}

impl BalanceB {
    pub(super) fn new(pos: XmlPosition, at: usize) -> Self {
        BalanceB {
            pos,
            at,
            code: None,
            amount: None,
            debit: None,
            indicator_seen: false,
            date: None,
        }
    }
}

impl State<'_> {
    pub(super) fn balance_leaf(&mut self, stack: &Stack, at: usize, frame: &Frame) {
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
                    b.indicator_seen = true;
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

    pub(super) fn close_balance(&mut self) {
        let Some(mut b) = self.balance.take() else {
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
        // No indicator at all: banks that leave it out write the balance's sign in its
        // type or not at all, and mean a credit balance (a wrong indicator is an error of
        // its own, at it).
        if !b.indicator_seen {
            b.debit = Some(false);
            self.sink
                .push(DialectRule::NoBalanceIndicator.finding(b.pos.clone(), "no CdtDbtInd"));
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
}
