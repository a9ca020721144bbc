//! The per-record report of a run as the ledger holds it: its query, over the postings and
//! journal of the core, the decisions on held records and the statement tables, and its
//! read. The rows stream through the store's report path (`ledger::backend::Backend::report_rows`),
//! which decodes the columns of [`ReportRow`] by the names of `ledger::sql::REPORT`.

use crate::ledger::store::args;
use crate::ledger::{Ledger, ReportRow, Result};
use crate::statements::REPORT_ROWS;

impl Ledger {
    /// Calls `row` for each record of a run, in record order (also inside an open run). The
    /// row is lent: on SQLite its buffers are reused for the next one (no allocation per row).
    pub(crate) async fn report_rows(
        &mut self,
        tenant: &str,
        run_id: i64,
        row: &mut (dyn FnMut(&ReportRow) -> std::io::Result<()> + Send),
    ) -> Result<std::io::Result<()>> {
        self.store().fault_drop("pg_drop_before_report").await;
        self.store()
            .report_rows(&report(), &args![run_id, tenant], row)
            .await
    }
}

/// The per-record report of a run, one row per record in record order: what posted, and
/// every journal row with what it matched. A duplicate's key, accounts and amount are its
/// original's. Binds: run id, tenant.
fn report() -> String {
    let seen = |c: &str| format!("CASE WHEN j.posting_key IS NULL THEN o.{c} ELSE j.{c} END");
    // A decision on a held record, as one text (`Decision::describe`).
    let decision = "(SELECT d.decision || ' by ' || d.decided_by || ' at ' || d.decided_at || ' (run ' || \
         CAST(d.run_id AS TEXT) || '): ' || d.reason FROM decisions d WHERE d.tenant = j.tenant \
         AND d.operation = j.operation AND d.posting_key = j.posting_key)";
    // A compensation names the posting it compensates in the original_* columns.
    let sql = format!(
        "SELECT p.run_id, p.file_id, p.record_no, 'posted' AS outcome, p.posting_key, p.trace_number, \
         p.amount_minor, p.currency, p.debit_account, p.credit_account, c.file_id AS original_file_id, \
         c.record_no AS original_record_no, c.run_id AS original_run_id, c.posted_at AS original_posted_at, \
         NULL AS differences, NULL AS reason, \
         CASE WHEN p.operation = 'correction' THEN 'correction' WHEN p.compensates IS NULL THEN 'record' \
         ELSE 'compensation' END AS kind, NULL AS decision \
         FROM postings p LEFT JOIN postings c ON c.posting_id = p.compensates \
         WHERE p.run_id = $1 AND p.tenant = $2 \
         UNION ALL \
         SELECT j.run_id, r.file_id, j.record_no, j.outcome, {}, {}, {}, {}, {}, {}, \
         o.file_id, o.record_no, o.run_id, o.posted_at, j.differences, j.reason, \
         CASE WHEN o.operation = 'correction' THEN 'correction' WHEN o.compensates IS NULL THEN 'record' \
         ELSE 'compensation' END, \
         CASE WHEN j.outcome = 'held' THEN {decision} END \
         FROM journal j JOIN runs r ON r.run_id = j.run_id \
         LEFT JOIN postings o ON o.posting_id = j.original_posting_id \
         WHERE j.run_id = $1 AND j.tenant = $2 \
         UNION ALL {REPORT_ROWS} \
         ORDER BY 3",
        seen("posting_key"),
        seen("trace_number"),
        seen("amount_minor"),
        seen("currency"),
        seen("debit_account"),
        seen("credit_account"),
    );
    crate::ledger::sql::REPORT.checked(&sql);
    sql
}

impl Ledger {
    /// A page of a run's report: the rows after record `after`, of `outcome` only when
    /// given, at most `limit`, in record order. Each branch of the report reads its rows by
    /// the run's index in record order, so a page deep in a run of a million records is
    /// as quick as the first.
    pub(crate) async fn report_page(
        &mut self,
        tenant: &str,
        run_id: i64,
        after: i64,
        outcome: Option<crate::keys::Outcome>,
        limit: i64,
    ) -> Result<Vec<ReportRow>> {
        let mut sql = format!(
            "SELECT * FROM ({}) q WHERE q.record_no > $3",
            report().trim_end_matches(" ORDER BY 3")
        );
        let word = outcome.map(|o| o.as_str());
        if word.is_some() {
            sql.push_str(" AND q.outcome = $5");
        }
        sql.push_str(" ORDER BY q.record_no LIMIT $4");
        let mut rows = Vec::new();
        let a = args![run_id, tenant, after, limit, word];
        let a = if word.is_some() { &a[..] } else { &a[..4] };
        self.store()
            .report_rows(&sql, a, &mut |r| {
                rows.push(r.clone());
                Ok(())
            })
            .await?
            .map_err(|e| crate::ledger::LedgerError::Internal(format!("a report page: {e}")))?;
        Ok(rows)
    }
}
