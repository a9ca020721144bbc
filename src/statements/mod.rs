//! Bank statements: the bank's side of the ledger, in tables of their own
//! (`statements`, `statement_entries`, `statement_journal`: migrations/*/0007), recorded
//! in a run's one transaction like any file, behind unique indexes on the natural keys
//! `keys::statement_record` derives.
//!
//! Per entry, insert-first into `statement_entries` (unique on tenant, account, key):
//! - inserted: `recorded` (a booked entry) or `provisional` (pending, or of an intraday
//!   statement);
//! - not inserted, same fingerprint: `duplicate` — unless the stored entry is provisional
//!   and this one booked: then it is `confirmed` and the stored entry becomes booked (the
//!   end-of-day statement absorbs the intraday one: counted once, never twice);
//! - not inserted, other fingerprint: `conflict`, naming the fields that differ;
//! - a statement already recorded with other content (a corrected statement): its entries
//!   whose key is new are `held`, never recorded. A copy (`CpyDplctInd`) is recorded like
//!   any statement: of a statement recorded before, it is all duplicates.
//!
//! A feature over the core (`ledger`), read through its API: a statement run opens,
//! records and commits like any run (`mod.rs`); `rules.rs` decides each entry's outcome;
//! `store.rs` holds the SQL of the statement tables and hands their rows to the core's
//! bulk paths (`ledger::bulk`); `reads.rs` reads them back (`clearledger statements`,
//! `lookup --bank-ref`, the continuity of an account's statements). The file is read by
//! `ingest::statements`.

mod reads;
mod rules;
mod store;

pub use reads::{StoredEntry, StoredStatement, continuity};
pub(crate) use store::{REPORT_ENTRIES, REPORT_JOURNAL, report_rows};

use crate::findings::Finding;
use crate::keys::StatementRecord;
use crate::ledger::backend::Begin;
use crate::ledger::store::{args, checked, col};
use crate::ledger::{During, Ledger, Result, RunInfo, sql, ts};
use chrono::{DateTime, Utc};

/// A statement file about to be recorded.
#[derive(Debug, Clone)]
pub struct StatementStart<'a> {
    /// The tenant the statements are recorded for.
    pub tenant: &'a str,
    /// The file's format (`camt.053`, `mt940`, `bai2` …).
    pub format: &'static str,
    /// The file's SHA-256, hex: its identity.
    pub sha256: &'a str,
    /// The name the file came under (a path, an upload's file name).
    pub source_name: &'a str,
    /// When the run began.
    pub started_at: DateTime<Utc>,
    /// Warnings found while reading (an error would have rejected the file).
    pub findings: &'a [Finding],
}

/// What a statement run did.
#[derive(Debug, Clone)]
pub struct StatementRun {
    /// The run as recorded.
    pub run: RunInfo,
    /// Statements in the file.
    pub statements: u64,
    /// Statements new to the ledger / already recorded with the same content / with other
    /// content.
    pub statements_new: u64,
    /// Statements already recorded with the same content.
    pub statements_duplicate: u64,
    /// Statements already recorded under the same key with other content.
    pub statements_conflict: u64,
    /// Statements this run recorded whose balances do not add up (marked, for an
    /// operator: `clearledger statements`).
    pub unbalanced: u64,
    /// Entries in the file.
    pub entries: u64,
    /// Entries recorded by this run.
    pub recorded: u64,
    /// Entries recorded as provisional (an intraday report's: a later statement confirms them).
    pub provisional: u64,
    /// Provisional entries this run confirmed.
    pub confirmed: u64,
    /// Entries already recorded with the same content.
    pub duplicates: u64,
    /// Entries already recorded under the same key with other content.
    pub conflicts: u64,
    /// Entries held for an operator.
    pub held: u64,
}

/// A statement run in progress, inside its transaction.
pub struct OpenStatements {
    run_id: i64,
    at: String,
    counts: StatementRun,
}

impl OpenStatements {
    /// The run's id (inside its transaction: a dry run reads its report rows, then rolls
    /// back).
    pub fn run_id(&self) -> i64 {
        self.run_id
    }
    /// The counts so far.
    pub fn counts(&self) -> &StatementRun {
        &self.counts
    }
}

impl Ledger {
    /// Records the statements of one file: one run, one transaction.
    pub async fn record_statements(
        &mut self,
        start: &StatementStart<'_>,
        records: &[StatementRecord],
    ) -> Result<StatementRun> {
        let file_id = records.first().map(|r| r.statement_key.as_str());
        let mut open = self.begin_statements(start, file_id).await?;
        for r in records {
            if let Err(e) = self.record_statement(&mut open, start, r).await {
                let _ = self.store().rollback().await;
                return Err(e);
            }
        }
        self.commit_statements(open, start).await
    }

    /// Opens a statement run's transaction and records the run (`file_id`: the first
    /// statement's key, `statement:{key}`).
    pub async fn begin_statements(
        &mut self,
        start: &StatementStart<'_>,
        first_key: Option<&str>,
    ) -> Result<OpenStatements> {
        self.store()
            .begin(Begin::Write)
            .await
            .during("starting the statement transaction")?;
        let at = ts(&start.started_at);
        let file_id = first_key.map(|k| format!("statement:{k}"));
        let a = args![
            start.tenant,
            file_id.as_deref(),
            start.sha256,
            start.format,
            start.source_name,
            at.as_str(),
        ];
        let run_id = match self
            .store()
            .query_one(checked!(sql::NEW_RUN, sql::INSERT_RUN), &a)
            .await
        {
            Ok(r) => r.int(col!(sql::NEW_RUN, "run_id"))?,
            Err(e) => {
                let _ = self.store().rollback().await;
                return Err(e);
            }
        };
        let counts = StatementRun {
            run: RunInfo::placeholder(),
            statements: 0,
            statements_new: 0,
            statements_duplicate: 0,
            statements_conflict: 0,
            unbalanced: 0,
            entries: 0,
            recorded: 0,
            provisional: 0,
            confirmed: 0,
            duplicates: 0,
            conflicts: 0,
            held: 0,
        };
        Ok(OpenStatements { run_id, at, counts })
    }

    /// Rolls a statement run back: nothing of it remains.
    pub async fn rollback_statements(&mut self, _open: OpenStatements) -> Result<()> {
        self.store().rollback().await.during("rolling back the run")
    }

    /// Writes the completion mark and the findings, and commits.
    pub async fn commit_statements(
        &mut self,
        open: OpenStatements,
        start: &StatementStart<'_>,
    ) -> Result<StatementRun> {
        let (run_id, mut c) = (open.run_id, open.counts);
        let res = self.complete_statements(run_id, &c, start).await;
        if let Err(e) = res {
            let _ = self.store().rollback().await;
            return Err(e);
        }
        crate::fault::point("before_commit");
        self.end_run(start.tenant, Ok(run_id)).await?;
        crate::fault::point("after_commit");
        c.run = self.committed(start.tenant, run_id, false).await?;
        Ok(c)
    }

    async fn complete_statements(
        &mut self,
        run_id: i64,
        c: &StatementRun,
        start: &StatementStart<'_>,
    ) -> Result<()> {
        let finished = ts(&Utc::now());
        let a = args![
            finished.as_str(),
            start.sha256,
            c.entries as i64,
            (c.recorded + c.provisional + c.confirmed) as i64,
            c.duplicates as i64,
            c.conflicts as i64,
            c.held as i64,
            0i64,
            start.findings.len() as i64,
            run_id,
            start.tenant,
        ];
        self.store().execute(sql::COMPLETE_RUN, &a).await?;
        if c.unbalanced > 0 {
            let a = args![c.unbalanced as i64, run_id, start.tenant];
            self.store().execute(store::SET_UNBALANCED, &a).await?;
        }
        self.insert_findings_of(start.tenant, run_id, start.findings)
            .await
    }
}
