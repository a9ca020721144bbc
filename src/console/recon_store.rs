//! The reads the reconciliation pages make: a tenant's reconciliation runs, a page of a
//! run's items (by item number: the report's order, `missing_ours` first), one item, and
//! its members on both sides — read by the unique indexes on a posting's key and an
//! entry's key, never by scanning a run.

use crate::ledger::store::{Columns, col};
use crate::ledger::{Ledger, Result, args};
use crate::reconcile::{ITEM_COLUMNS, ItemRow, stored_item};

/// A reconciliation run as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReconRun {
    pub(crate) run_id: i64,
    pub(crate) bank_account: String,
    pub(crate) from: Option<String>,
    pub(crate) to: Option<String>,
    pub(crate) started_at: String,
    /// The stored summary (JSON).
    pub(crate) summary: String,
    /// The rules it ran with (`Rules::canonical`), for runs recorded since they are kept.
    pub(crate) rules: Option<String>,
    pub(crate) rules_hash: String,
}

const RECON_RUN: Columns = Columns(&[
    "run_id",
    "bank_account",
    "from_date",
    "to_date",
    "started_at",
    "summary",
    "rules",
    "rules_hash",
]);
const RECON_RUN_SQL: &str = "SELECT r.run_id, r.bank_account, r.from_date, r.to_date, \
     u.started_at, r.summary, r.rules, r.rules_hash FROM reconciliations r \
     JOIN runs u ON u.tenant = r.tenant AND u.run_id = r.run_id WHERE r.tenant = $1";

fn recon_run(r: &crate::ledger::Row) -> Result<ReconRun> {
    Ok(ReconRun {
        run_id: r.int(col!(RECON_RUN, "run_id"))?,
        bank_account: r.text(col!(RECON_RUN, "bank_account"))?,
        from: r.opt_text(col!(RECON_RUN, "from_date"))?,
        to: r.opt_text(col!(RECON_RUN, "to_date"))?,
        started_at: r.text(col!(RECON_RUN, "started_at"))?,
        summary: r.text(col!(RECON_RUN, "summary"))?,
        rules: r.opt_text(col!(RECON_RUN, "rules"))?,
        rules_hash: r.text(col!(RECON_RUN, "rules_hash"))?,
    })
}

/// A run's items, by `recon_items`' own columns (decoded by `reconcile::store::stored_item`).
fn item_sql(and: &str) -> String {
    format!("SELECT {ITEM_COLUMNS} FROM recon_items WHERE tenant = $1 AND run_id = $2 {and}")
}

/// A statement entry as an item's member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EntryBrief {
    pub(crate) entry_key: String,
    pub(crate) amount_minor: i64,
    pub(crate) currency: String,
    pub(crate) credit: bool,
    pub(crate) booking_date: Option<String>,
    pub(crate) value_date: Option<String>,
    pub(crate) bank_ref: Option<String>,
    pub(crate) status: String,
}

const ENTRY: Columns = Columns(&[
    "entry_key",
    "amount_minor",
    "currency",
    "credit",
    "booking_date",
    "value_date",
    "bank_ref",
    "status",
]);

impl Ledger {
    /// The tenant's latest reconciliation runs, newest first.
    pub(crate) async fn recon_runs(&mut self, tenant: &str, limit: i64) -> Result<Vec<ReconRun>> {
        let sql = format!("{RECON_RUN_SQL} ORDER BY r.run_id DESC LIMIT $2");
        let rows = self
            .store()
            .query(RECON_RUN.checked(&sql), &args![tenant, limit])
            .await?;
        rows.iter().map(recon_run).collect()
    }

    /// Reconciliation run `run_id` of the tenant.
    pub(crate) async fn recon_run(
        &mut self,
        tenant: &str,
        run_id: i64,
    ) -> Result<Option<ReconRun>> {
        let sql = format!("{RECON_RUN_SQL} AND r.run_id = $2");
        let row = self
            .store()
            .query_opt(RECON_RUN.checked(&sql), &args![tenant, run_id])
            .await?;
        row.as_ref().map(recon_run).transpose()
    }

    /// A page of run `run_id`'s items after item `after`, of `outcome` only when given
    /// (the caller has checked the run is the tenant's).
    pub(crate) async fn recon_items(
        &mut self,
        tenant: &str,
        run_id: i64,
        after: i64,
        outcome: Option<&str>,
        limit: i64,
    ) -> Result<Vec<ItemRow>> {
        let rows = match outcome {
            Some(o) => {
                let sql = item_sql("AND item_no > $3 AND outcome = $4 ORDER BY item_no LIMIT $5");
                self.store()
                    .query(&sql, &args![tenant, run_id, after, o, limit])
                    .await?
            }
            None => {
                let sql = item_sql("AND item_no > $3 ORDER BY item_no LIMIT $4");
                self.store()
                    .query(&sql, &args![tenant, run_id, after, limit])
                    .await?
            }
        };
        rows.iter().map(stored_item).collect()
    }

    /// Item `item_no` of run `run_id` (the caller has checked the run is the tenant's).
    pub(crate) async fn recon_item(
        &mut self,
        tenant: &str,
        run_id: i64,
        item_no: i64,
    ) -> Result<Option<ItemRow>> {
        let sql = item_sql("AND item_no = $3");
        let row = self
            .store()
            .query_opt(&sql, &args![tenant, run_id, item_no])
            .await?;
        row.as_ref().map(stored_item).transpose()
    }

    /// The statement entry `entry_key` of `account`, if there is one.
    pub(crate) async fn entry_by_key(
        &mut self,
        tenant: &str,
        account: &str,
        entry_key: &str,
    ) -> Result<Option<EntryBrief>> {
        let row = self
            .store()
            .query_opt(
                ENTRY.checked(
                    "SELECT entry_key, amount_minor, currency, credit, booking_date, value_date, \
                     bank_ref, status FROM statement_entries \
                     WHERE tenant = $1 AND account = $2 AND entry_key = $3",
                ),
                &args![tenant, account, entry_key],
            )
            .await?;
        let Some(r) = row else { return Ok(None) };
        Ok(Some(EntryBrief {
            entry_key: r.text(col!(ENTRY, "entry_key"))?,
            amount_minor: r.int(col!(ENTRY, "amount_minor"))?,
            currency: r.text(col!(ENTRY, "currency"))?,
            credit: r.int(col!(ENTRY, "credit"))? != 0,
            booking_date: r.opt_text(col!(ENTRY, "booking_date"))?,
            value_date: r.opt_text(col!(ENTRY, "value_date"))?,
            bank_ref: r.opt_text(col!(ENTRY, "bank_ref"))?,
            status: r.text(col!(ENTRY, "status"))?,
        }))
    }
}
