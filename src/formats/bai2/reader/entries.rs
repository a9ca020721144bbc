//! An account's figures: the balances and summaries of its `03` (with their funds
//! types) and its transaction details `16`.

use super::{Account, DISTRIBUTIONS_MAX, Logical, Place, Reader};
use crate::findings::FindingCode;
use crate::formats::bai2::lex;
use crate::formats::statement::{
    Balance, BalanceKind, Entry, EntryStatus, StatementKind, collapse_whitespace,
};
use chrono::NaiveDate;

impl Reader<'_> {
    /// The `03` type-code groups: type code, amount, item count, funds type (+ its
    /// fields).
    pub(super) fn summaries(
        &mut self,
        rec: &Logical,
        acct: &mut Account,
        currency: &str,
        date: Option<NaiveDate>,
    ) {
        let n = rec.fields.len();
        let mut i = 2;
        while i < n {
            let t = rec.trimmed(i);
            if t.is_empty() {
                // A defaulted group (`,,,,`), or the empty field a record ends on.
                if let Some(k) = defaulted_group_end(rec, i) {
                    i = k;
                    continue;
                }
                self.err(
                    FindingCode::TagSyntax,
                    rec.field_pos(i),
                    "a type code before the amount",
                    "blank",
                );
                return;
            }
            let Some(code) = lex::type_code(t) else {
                self.err(
                    FindingCode::TagSyntax,
                    rec.field_pos(i),
                    "a type code (3 digits)",
                    t.to_string(),
                );
                return;
            };
            if code == 0 {
                self.err(
                    FindingCode::TagSyntax,
                    rec.field_pos(i),
                    "a type code 001-999",
                    t.to_string(),
                );
            }
            let amount = self.amount(rec, i + 1, true, "an amount");
            if code >= 100 {
                self.count(rec, i + 2, "an item count", true);
            }
            let Some(used) = self.funds(rec, i + 3, true) else {
                return;
            };
            if let Some(a) = amount {
                acct.amounts += i128::from(a);
                if code < 100 {
                    acct.statement.balances.push(Balance {
                        kind: balance_kind(code),
                        code: t.to_string(),
                        amount_minor: a,
                        currency: currency.to_string(),
                        date,
                        position: rec.field_pos(i),
                    });
                }
            }
            i += 3 + used;
        }
    }

    /// A funds type at field `i` and its fields; gives the fields used (the funds type
    /// included), or `None` after a finding that leaves the rest unreadable.
    pub(super) fn funds(&mut self, rec: &Logical, i: usize, signed: bool) -> Option<usize> {
        Some(self.funds_value_date(rec, i, signed)?.0)
    }

    /// [`Self::funds`], with the value date of a funds type `V`.
    pub(super) fn funds_value_date(
        &mut self,
        rec: &Logical,
        i: usize,
        signed: bool,
    ) -> Option<(usize, Option<NaiveDate>)> {
        let f = rec.trimmed(i);
        match f {
            "" | "0" | "1" | "2" | "Z" => Some((1, None)),
            "S" => {
                for k in 1..=3 {
                    self.amount(rec, i + k, signed, "an availability amount");
                }
                Some((4, None))
            }
            "V" => {
                let d = rec.trimmed(i + 1);
                let date = if d.is_empty() {
                    None
                } else {
                    self.date(rec, i + 1, "a value date")
                };
                let t = rec.trimmed(i + 2);
                if !t.is_empty() && !lex::hhmm(t) {
                    self.err(
                        FindingCode::DateFormat,
                        rec.field_pos(i + 2),
                        "a value time HHMM (0000-2400, 9999) or blank",
                        t.to_string(),
                    );
                }
                Some((3, date))
            }
            "D" => {
                let n = self.count(rec, i + 1, "a number of distributions", false)?;
                if n > DISTRIBUTIONS_MAX {
                    self.err(
                        FindingCode::TagSyntax,
                        rec.field_pos(i + 1),
                        format!("at most {DISTRIBUTIONS_MAX} distributions"),
                        n.to_string(),
                    );
                    return None;
                }
                let n = n as usize;
                for k in 0..n {
                    self.count(rec, i + 2 + 2 * k, "a distribution's days", false);
                    self.amount(rec, i + 3 + 2 * k, signed, "a distribution amount");
                }
                Some((2 + 2 * n, None))
            }
            _ => {
                self.err(
                    FindingCode::TagSyntax,
                    rec.field_pos(i),
                    "a funds type 0, 1, 2, S, V, D, Z or blank",
                    f.to_string(),
                );
                None
            }
        }
    }

    pub(super) fn detail(&mut self, rec: &Logical) {
        if self.place != Place::Account {
            self.err(
                FindingCode::RecordOrder,
                rec.at.pos("16"),
                "a 16 inside an account (after its 03)",
                "a 16 outside any account",
            );
            self.count_records(u64::from(rec.pieces));
            return;
        }
        self.count_records(u64::from(rec.pieces));
        let t = rec.trimmed(0);
        let credit = self.detail_credit(rec);
        let amount = self.detail_amount(rec);
        let Some((used, value_date)) = self.funds_value_date(rec, 2, false) else {
            return;
        };
        let refs = 2 + used;
        let opt = |s: &str| (!s.is_empty()).then(|| s.to_string());
        let bank_ref = opt(rec.trimmed(refs));
        let customer_ref = opt(rec.trimmed(refs + 1));
        let remittance = rec.text.as_ref().and_then(|_| {
            let s = collapse_whitespace(&rec.text_buf);
            (!s.is_empty()).then_some(s)
        });
        let (Some(credit), Some(amount), Some(acct)) = (credit, amount, self.account.as_mut())
        else {
            return;
        };
        acct.amounts += i128::from(amount);
        let s = &acct.statement;
        let status = match s.kind {
            StatementKind::Intraday => EntryStatus::Pending,
            _ => EntryStatus::Booked,
        };
        self.entries += 1;
        let entry = Entry {
            entry_no: self.entries,
            amount_minor: amount.unsigned_abs(),
            currency: s.currency.clone().unwrap_or_default(),
            credit,
            reversal: false,
            status,
            booking_date: s.date,
            value_date,
            bank_ref,
            customer_ref,
            end_to_end_id: None,
            bank_tx_code: Some(t.to_string()),
            remittance,
            batch_ref: None,
            details: Vec::new(),
            position: rec.at.pos("16"),
        };
        acct.statement.entries.push(entry);
    }

    /// A `16`'s type code: 100-399 a credit, 400-699 a debit; `None` after a finding.
    fn detail_credit(&mut self, rec: &Logical) -> Option<bool> {
        let t = rec.trimmed(0);
        match lex::type_code(t) {
            Some(100..=399) => Some(true),
            Some(400..=699) => Some(false),
            _ => {
                self.err(
                    FindingCode::TagSyntax,
                    rec.field_pos(0),
                    "a detail type code 100-399 (credit) or 400-699 (debit)",
                    t.to_string(),
                );
                None
            }
        }
    }

    /// A `16`'s amount, which may not be blank.
    fn detail_amount(&mut self, rec: &Logical) -> Option<i64> {
        let amount = self.amount(rec, 1, false, "a detail amount");
        if rec.trimmed(1).is_empty() {
            self.err(
                FindingCode::AmountFormat,
                rec.field_pos(1),
                "a detail amount",
                "blank",
            );
        }
        amount
    }
}

/// Where the fields after a blank type code at field `i` go on: past a defaulted group
/// (`,,,,`: four blank fields of one physical piece) or the blank fields a record ends on;
/// `None` when the group goes on with a value (a type code missing before it).
fn defaulted_group_end(rec: &Logical, i: usize) -> Option<usize> {
    let n = rec.fields.len();
    let piece = rec.fields[i].piece;
    let mut k = i;
    while k < n && k < i + 4 && rec.trimmed(k).is_empty() && rec.fields[k].piece == piece {
        k += 1;
    }
    (k == i + 4 || k == n || rec.fields[k].piece != piece).then_some(k)
}

fn balance_kind(code: u16) -> BalanceKind {
    match code {
        10 => BalanceKind::OpeningBooked,
        15 => BalanceKind::ClosingBooked,
        40 => BalanceKind::OpeningAvailable,
        45 => BalanceKind::ClosingAvailable,
        _ => BalanceKind::Other,
    }
}
