//! The per-record report of a run as the ledger holds it: its query, over the postings and
//! journal of the core, the decisions on held records and the statement tables, and its
//! read. The rows stream through the store's report path (`ledger::backend::Backend::report_rows`),
//! which decodes the columns of [`ReportRow`] by the names of `ledger::sql::REPORT`.

use crate::ledger::store::args;
use crate::ledger::{Ledger, ReportRow, Result};
use crate::statements::{REPORT_ENTRIES, REPORT_JOURNAL, report_rows};

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
    let [posted, journal] = payment_arms();
    let sql = format!(
        "{posted} UNION ALL {journal} UNION ALL {} ORDER BY 3",
        report_rows()
    );
    crate::ledger::sql::REPORT.checked(&sql);
    sql
}

/// The report's two parts over the core tables: what posted (`p`), and the journal (`j`)
/// with what each row matched. Each ends in its `WHERE` on the run and tenant (binds 1, 2).
fn payment_arms() -> [String; 2] {
    let seen = |c: &str| format!("CASE WHEN j.posting_key IS NULL THEN o.{c} ELSE j.{c} END");
    // A decision on a held record, as one text (`Decision::describe`).
    let decision = "(SELECT d.decision || ' by ' || d.decided_by || ' at ' || d.decided_at || ' (run ' || \
         CAST(d.run_id AS TEXT) || '): ' || d.reason FROM decisions d WHERE d.tenant = $2 \
         AND d.operation = j.operation AND d.posting_key = j.posting_key)";
    // A compensation names the posting it compensates in the original_* columns.
    let posted = "SELECT p.run_id, p.file_id, p.record_no, 'posted' AS outcome, p.posting_key, p.trace_number, \
         p.amount_minor, p.currency, p.debit_account, p.credit_account, c.file_id AS original_file_id, \
         c.record_no AS original_record_no, c.run_id AS original_run_id, c.posted_at AS original_posted_at, \
         NULL AS differences, NULL AS reason, \
         CASE WHEN p.operation = 'correction' THEN 'correction' WHEN p.compensates IS NULL THEN 'record' \
         ELSE 'compensation' END AS kind, NULL AS decision \
         FROM postings p LEFT JOIN postings c ON c.tenant = p.tenant AND c.posting_id = p.compensates \
         WHERE p.run_id = $1 AND p.tenant = $2"
        .to_string();
    let journal = format!(
        "SELECT j.run_id, r.file_id, j.record_no, j.outcome, {}, {}, {}, {}, {}, {}, \
         o.file_id, o.record_no, o.run_id, o.posted_at, j.differences, j.reason, \
         CASE WHEN o.operation = 'correction' THEN 'correction' WHEN o.compensates IS NULL THEN 'record' \
         ELSE 'compensation' END, \
         CASE WHEN j.outcome = 'held' THEN {decision} END \
         FROM journal j JOIN runs r ON r.tenant = j.tenant AND r.run_id = j.run_id \
         LEFT JOIN postings o ON o.tenant = j.tenant AND o.posting_id = j.original_posting_id \
         WHERE j.run_id = $1 AND j.tenant = $2",
        seen("posting_key"),
        seen("trace_number"),
        seen("amount_minor"),
        seen("currency"),
        seen("debit_account"),
        seen("credit_account"),
    );
    [posted, journal]
}

/// A page of the report (binds: run, tenant, after, limit, and the outcome when `filtered`):
/// each part read on its own, by its run's index in record order, from after the page's
/// start, at most a page of it (of the outcome asked); the page is the first `limit` of
/// those together. No part reads past its page, however many rows the run has.
fn report_page_sql(filtered: bool) -> String {
    let [posted, journal] = payment_arms();
    let status = "CASE WHEN e.status = 'provisional' THEN 'provisional' ELSE 'recorded' END";
    let arms = [
        (posted, "p.record_no", "'posted'"),
        (journal, "j.record_no", "j.outcome"),
        (REPORT_ENTRIES.to_string(), "e.entry_no", status),
        (REPORT_JOURNAL.to_string(), "j.entry_no", "j.outcome"),
    ];
    let parts: Vec<String> = arms
        .iter()
        .map(|(arm, no, outcome)| {
            let only = if filtered {
                format!(" AND {outcome} = $5")
            } else {
                String::new()
            };
            format!("SELECT * FROM ({arm} AND {no} > $3{only} ORDER BY {no} LIMIT $4) q")
        })
        .collect();
    format!("{} ORDER BY 3 LIMIT $4", parts.join(" UNION ALL "))
}
impl Ledger {
    /// A page of a run's report: the rows after record `after`, of `outcome` only when
    /// given, at most `limit`, in record order (`report_page_sql`): a page deep in a run of
    /// millions of records is as quick as the first.
    pub(crate) async fn report_page(
        &mut self,
        tenant: &str,
        run_id: i64,
        after: i64,
        outcome: Option<crate::keys::Outcome>,
        limit: i64,
    ) -> Result<Vec<ReportRow>> {
        let word = outcome.map(|o| o.as_str());
        let sql = report_page_sql(word.is_some());
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
