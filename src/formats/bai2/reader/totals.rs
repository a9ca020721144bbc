//! Control totals and counts of the trailers, and a complete account's statement:
//! its balance check, the chain from the account's previous statement, emitted.

use super::{CHAINED_ACCOUNTS_MAX, Logical, Reader};
use crate::findings::{Finding, FindingCode};
use crate::formats::statement::{
    BalanceKind, EntryStatus, Statement, StatementKind, chain_break, check_balance, fit_entries,
};

impl Reader<'_> {
    /// `found` against `want`, a control total finding when they differ.
    pub(super) fn check_total(
        &mut self,
        rec: &Logical,
        i: usize,
        want: i128,
        what: &str,
    ) -> Option<i64> {
        let v = rec.trimmed(i);
        if v.is_empty() {
            self.warn(
                FindingCode::TagSyntax,
                rec.field_pos(i),
                format!("{what} (not checked when blank)"),
                "blank",
            );
            return None;
        }
        let got = self.amount(rec, i, true, what)?;
        if i128::from(got) != want {
            self.control(
                FindingCode::ControlTotalMismatch,
                rec.field_pos(i),
                format!("{want} ({what})"),
                v,
            );
        }
        Some(got)
    }

    pub(super) fn check_count(&mut self, rec: &Logical, i: usize, want: u64, what: &str) {
        let v = rec.trimmed(i).to_string();
        if let Some(got) = self.count(rec, i, what, false)
            && got != want
        {
            self.control(
                FindingCode::ControlCountMismatch,
                rec.field_pos(i),
                format!("{want} ({what})"),
                &v,
            );
        }
    }

    pub(super) fn emit_account(&mut self) {
        let Some(acct) = self.account.take() else {
            return;
        };
        let mut s = acct.statement;
        fit_entries(&mut s.entries, &mut self.entries_hint);
        let f = match s.kind {
            StatementKind::Intraday if !s.entries.is_empty() => {
                // The shared check counts booked entries; a same-day report's entries are
                // pending, and its 010/015 move by them.
                let mut all = s.clone();
                for e in &mut all.entries {
                    e.status = EntryStatus::Booked;
                }
                let f = check_balance(&mut all);
                s.balance_breaks = all.balance_breaks;
                f
            }
            _ => check_balance(&mut s),
        };
        if let Some(f) = f {
            self.sink.push(f);
        }
        self.chain_check(&mut s);
        self.statements += 1;
        (self.on_statement)(s);
    }

    pub(super) fn chain_check(&mut self, s: &mut Statement) {
        let ccy = s.currency.clone().unwrap_or_default();
        let key = (s.account.clone(), ccy);
        let open = s.balance(BalanceKind::OpeningBooked);
        let close = s
            .balance(BalanceKind::ClosingBooked)
            .map(|b| (b.amount_minor, b.position.line()));
        if let (Some((Some(prev_date), Some((prev_close, prev_line)))), Some(open), Some(date)) =
            (self.chain.get(&key), open, s.date)
            && *prev_date < date
            && *prev_close != open.amount_minor
        {
            let f = Finding::error(
                FindingCode::BalanceChain,
                open.position.clone(),
                None,
                format!(
                    "{} {prev_close} (the 015 of account {} as of {prev_date}, line {prev_line})",
                    open.code, s.account
                ),
                open.amount_minor.to_string(),
            );
            let (found, ccy) = (open.amount_minor, open.currency.clone());
            let f = chain_break(s, *prev_close, found, &ccy, f);
            self.sink.push(f);
        }
        if self.chain.len() < CHAINED_ACCOUNTS_MAX || self.chain.contains_key(&key) {
            self.chain.insert(key, (s.date, close));
        }
    }
}
