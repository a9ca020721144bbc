//! The statement tables read back: the statements of an account (`clearledger
//! statements`) and their continuity, entries by the bank's reference (`lookup
//! --bank-ref`).

use crate::ledger::store::args;
use crate::ledger::{Ledger, Result};

/// A statement as stored (`clearledger statements`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredStatement {
    pub statement_id: i64,
    pub statement_key: String,
    pub format: String,
    pub kind: String,
    pub account: String,
    pub currency: Option<String>,
    pub stmt_id: String,
    pub sequence: Option<String>,
    pub date: Option<String>,
    pub opening_minor: Option<i64>,
    pub closing_minor: Option<i64>,
    pub balance_currency: Option<String>,
    pub entries: i64,
    pub copy: bool,
    pub run_id: i64,
    pub recorded_at: String,
}

/// A statement entry as stored (`lookup --bank-ref`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredEntry {
    pub entry_id: i64,
    pub statement_key: String,
    pub account: String,
    pub entry_key: String,
    pub entry_no: i64,
    pub amount_minor: i64,
    pub currency: String,
    pub credit: bool,
    pub reversal: bool,
    pub status: String,
    pub booking_date: Option<String>,
    pub value_date: Option<String>,
    pub bank_ref: Option<String>,
    pub customer_ref: Option<String>,
    pub end_to_end_id: Option<String>,
    pub run_id: i64,
    pub recorded_at: String,
}

impl Ledger {
    /// The tenant's statements (of one account), by account, date and sequence.
    pub async fn statements(
        &mut self,
        tenant: &str,
        account: Option<&str>,
    ) -> Result<Vec<StoredStatement>> {
        let sql = format!(
            "SELECT statement_id, statement_key, format, kind, account, currency, stmt_id, sequence, \
             stmt_date, opening_minor, closing_minor, balance_currency, entries, copy, run_id, recorded_at \
             FROM statements WHERE tenant = $1 {} ORDER BY account, stmt_date, sequence, statement_id",
            if account.is_some() {
                "AND account = $2"
            } else {
                ""
            }
        );
        let rows = match account {
            Some(a) => self.store().query(&sql, &args![tenant, a]).await?,
            None => self.store().query(&sql, &args![tenant]).await?,
        };
        rows.iter()
            .map(|r| {
                Ok(StoredStatement {
                    statement_id: r.int(0)?,
                    statement_key: r.text(1)?,
                    format: r.text(2)?,
                    kind: r.text(3)?,
                    account: r.text(4)?,
                    currency: r.opt_text(5)?,
                    stmt_id: r.text(6)?,
                    sequence: r.opt_text(7)?,
                    date: r.opt_text(8)?,
                    opening_minor: r.opt_int(9)?,
                    closing_minor: r.opt_int(10)?,
                    balance_currency: r.opt_text(11)?,
                    entries: r.int(12)?,
                    copy: r.int(13)? != 0,
                    run_id: r.int(14)?,
                    recorded_at: r.text(15)?,
                })
            })
            .collect()
    }

    /// Statement entries by the bank's reference (camt `AcctSvcrRef`, BAI2 bank reference,
    /// MT940 `//` reference).
    pub async fn entries_by_bank_ref(
        &mut self,
        tenant: &str,
        bank_ref: &str,
    ) -> Result<Vec<StoredEntry>> {
        let rows = self
            .store()
            .query(
                "SELECT e.entry_id, s.statement_key, e.account, e.entry_key, e.entry_no, e.amount_minor, \
                 e.currency, e.credit, e.reversal, e.status, e.booking_date, e.value_date, e.bank_ref, \
                 e.customer_ref, e.end_to_end_id, e.run_id, e.recorded_at \
                 FROM statement_entries e JOIN statements s ON s.statement_id = e.statement_id \
                 WHERE e.tenant = $1 AND e.bank_ref = $2 ORDER BY e.entry_id",
                &args![tenant, bank_ref],
            )
            .await?;
        rows.iter()
            .map(|r| {
                Ok(StoredEntry {
                    entry_id: r.int(0)?,
                    statement_key: r.text(1)?,
                    account: r.text(2)?,
                    entry_key: r.text(3)?,
                    entry_no: r.int(4)?,
                    amount_minor: r.int(5)?,
                    currency: r.text(6)?,
                    credit: r.int(7)? != 0,
                    reversal: r.int(8)? != 0,
                    status: r.text(9)?,
                    booking_date: r.opt_text(10)?,
                    value_date: r.opt_text(11)?,
                    bank_ref: r.opt_text(12)?,
                    customer_ref: r.opt_text(13)?,
                    end_to_end_id: r.opt_text(14)?,
                    run_id: r.int(15)?,
                    recorded_at: r.text(16)?,
                })
            })
            .collect()
    }
}

/// The continuity of an account's statements, in order: for each, `None`, or why it does
/// not follow the one before (its opening booked balance ≠ the previous closing).
pub fn continuity(statements: &[StoredStatement]) -> Vec<Option<String>> {
    let mut out = Vec::with_capacity(statements.len());
    let mut prev: Option<&StoredStatement> = None;
    for s in statements {
        let finding = match prev {
            Some(p)
                if p.account == s.account
                    && p.kind == "final"
                    && s.kind == "final"
                    && p.balance_currency == s.balance_currency =>
            {
                match (p.closing_minor, s.opening_minor) {
                    (Some(c), Some(o)) if c != o => Some(format!(
                        "opening balance {o} != the previous statement's closing balance {c} ({})",
                        p.statement_key
                    )),
                    _ => None,
                }
            }
            _ => None,
        };
        if s.kind == "final" {
            prev = Some(s);
        }
        out.push(finding);
    }
    out
}
