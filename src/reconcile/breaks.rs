//! The bank account's statements whose balances do not add up, in the period: the first
//! thing a reconciliation shows. Their entries are reconciled as any others; the break
//! itself (closing ≠ opening + entries, or an opening that does not continue the previous
//! closing) is a difference the entries alone cannot explain, so it leads the report.

use super::store::ReconcileRequest;
use crate::ledger::store::{Columns, args, checked, col};
use crate::ledger::{During, Ledger, Result};
use serde::{Deserialize, Serialize};

/// A statement of the account recorded unbalanced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StatementBreak {
    /// The bank's identifier of the statement.
    pub(crate) stmt_id: String,
    /// Its sequence (page, electronic sequence), when given.
    pub(crate) sequence: Option<String>,
    /// Its date (the period's end, else the statement's date).
    pub(crate) date: Option<String>,
    /// `closing` or `chain`.
    pub(crate) kind: String,
    /// What the balance should be, in minor units.
    pub(crate) expected_minor: i64,
    /// What the statement says, in minor units.
    pub(crate) found_minor: i64,
    /// Found minus expected.
    pub(crate) difference_minor: i64,
    /// The balance's currency.
    pub(crate) currency: Option<String>,
}

const BREAKS: Columns = Columns(&[
    "stmt_id",
    "sequence",
    "day: coalesce(to_date, stmt_date)",
    "balance_break",
    "balance_expected_minor",
    "balance_found_minor",
    "balance_currency",
]);

impl Ledger {
    /// The account's statements recorded unbalanced, dated in the period, by date.
    pub(crate) async fn balance_breaks(
        &mut self,
        req: &ReconcileRequest<'_>,
    ) -> Result<Vec<StatementBreak>> {
        let (from, to) = (
            req.from.map(|d| d.to_string()),
            req.to.map(|d| d.to_string()),
        );
        let rows = self
            .store()
            .query(
                checked!(
                    BREAKS,
                    "SELECT stmt_id, sequence, coalesce(to_date, stmt_date), balance_break, \
                     balance_expected_minor, balance_found_minor, balance_currency FROM statements \
                     WHERE tenant = $1 AND account = $2 AND balance_break IS NOT NULL \
                     AND ($3 = '' OR coalesce(to_date, stmt_date) >= $3) \
                     AND ($4 = '' OR coalesce(to_date, stmt_date) <= $4) \
                     ORDER BY coalesce(to_date, stmt_date), statement_id"
                ),
                &args![
                    req.tenant,
                    req.bank_account,
                    from.as_deref().unwrap_or(""),
                    to.as_deref().unwrap_or("")
                ],
            )
            .await
            .during("reading the statements recorded unbalanced")?;
        rows.iter()
            .map(|r| {
                let expected = r
                    .opt_int(col!(BREAKS, "balance_expected_minor"))?
                    .unwrap_or(0);
                let found = r.opt_int(col!(BREAKS, "balance_found_minor"))?.unwrap_or(0);
                Ok(StatementBreak {
                    stmt_id: r.text(col!(BREAKS, "stmt_id"))?,
                    sequence: r.opt_text(col!(BREAKS, "sequence"))?,
                    date: r.opt_text(col!(BREAKS, "day"))?,
                    kind: r.text(col!(BREAKS, "balance_break"))?,
                    expected_minor: expected,
                    found_minor: found,
                    difference_minor: found.saturating_sub(expected),
                    currency: r.opt_text(col!(BREAKS, "balance_currency"))?,
                })
            })
            .collect()
    }
}
