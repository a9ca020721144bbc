//! The protocol's run, written once for both backends (docs/principles.md §6, §8): open
//! the run's one transaction, record the run and claim the file identity (`begin_run`);
//! the records go through `apply.rs`; write the completion mark and commit — or roll back
//! whole (`commit_run`, `rollback_run`). Exact re-uploads replayed set-based, rejected
//! files journaled.

use super::backend::Begin;
use super::classify::ts;
use super::sql::{self, FindingRow};
use super::store::{Arg, args, col};
use super::{
    Counts, ExactUpload, Ledger, OpenRun, Rejection, Result, RunFinish, RunInfo, RunStart,
};
use super::{During, LedgerError};
use crate::findings::{Finding, count_errors};
use crate::keys::{self, FileIdentity};

/// A run of at least this many records refreshes the planner's statistics after its
/// commit (PostgreSQL; nothing on SQLite, whose plans do not depend on them here).
pub(crate) const ANALYZE_AFTER_RECORDS: u64 = 10_000;

impl Ledger {
    /// Commits if `res` is a success, rolls back otherwise (the error kept).
    pub(crate) async fn end<T>(&mut self, res: Result<T>) -> Result<T> {
        match res {
            Ok(v) => {
                self.commit(None).await?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.store.rollback().await;
                Err(e)
            }
        }
    }

    /// [`Self::end`] of a run's transaction: a COMMIT whose answer was lost names the run.
    pub(crate) async fn end_run(&mut self, tenant: &str, res: Result<i64>) -> Result<i64> {
        match res {
            Ok(run_id) => {
                self.commit(Some((tenant, run_id))).await?;
                Ok(run_id)
            }
            Err(e) => {
                let _ = self.store.rollback().await;
                Err(e)
            }
        }
    }

    /// Commits; a failed COMMIT is followed by a ROLLBACK (its error ignored), so that the
    /// connection is never left inside a transaction SQLite kept open. A COMMIT that failed
    /// with the connection (not with an error the server sent) may have committed or not:
    /// [`LedgerError::CommitUnknown`].
    async fn commit(&mut self, run: Option<(&str, i64)>) -> Result<()> {
        if let Some((tenant, id)) = run {
            if let Err(e) = self.call_hooks(tenant, id).await {
                let _ = self.store.rollback().await;
                return Err(e);
            }
            self.store.fault_drop("pg_drop_at_commit").await;
        }
        let res = self.store.commit().await.during("committing");
        if res.is_err() {
            let _ = self.store.rollback().await;
        }
        res.map_err(|e| match e {
            LedgerError::Database { source, context } if lost_connection(&source) => {
                LedgerError::CommitUnknown {
                    run_id: run.map(|(_, id)| id),
                    source: Box::new(LedgerError::Database { source, context }),
                }
            }
            e => e,
        })?;
        if run.is_some() {
            self.store.fault_drop("pg_drop_after_commit").await;
        }
        Ok(())
    }

    /// Ends the session cleanly (PostgreSQL: a Terminate message). Dropping a ledger
    /// without it is safe, only noisy in the server's log.
    pub async fn close(self) {
        self.store.close().await
    }

    /// Whether this connection enforces foreign keys: SQLite's `PRAGMA foreign_keys`, off
    /// only while migrations are applied (`sqlite.rs`); PostgreSQL always does.
    pub async fn foreign_keys_enforced(&mut self) -> Result<bool> {
        self.store.foreign_keys_enforced().await
    }

    /// Writes a consistent copy of an SQLite ledger to the new file `path` (`VACUUM INTO`:
    /// one read transaction, so writers go on meanwhile and the copy holds every committed
    /// run, those still in the `-wal` file too). PostgreSQL: [`LedgerError::BackupUnsupported`].
    pub async fn backup_into(&mut self, path: &str) -> Result<()> {
        self.store
            .vacuum_into(path)
            .await
            .during("writing the backup")
    }

    /// Reads run `run_id` back after its commit: a failure here is
    /// [`LedgerError::AfterCommit`], never "nothing committed".
    pub(crate) async fn committed(
        &mut self,
        tenant: &str,
        run_id: i64,
        rejected: bool,
    ) -> Result<RunInfo> {
        self.fetch_run(tenant, run_id)
            .await
            .map_err(|e| LedgerError::AfterCommit {
                run_id,
                rejected,
                source: Box::new(e),
            })
    }

    /// Opens the run's transaction, records the run, claims the file identity.
    pub async fn begin_run(&mut self, start: &RunStart) -> Result<OpenRun> {
        self.store
            .begin(Begin::Write)
            .await
            .during("starting the ingest transaction")?;
        let res = self.claim(start).await;
        if res.is_err() {
            let _ = self.store.rollback().await;
        }
        res
    }

    /// Records the run and claims its file identity, then reads what the run's records
    /// are judged against: the re-sent entry check, the earlier keying rule, rejections.
    async fn claim(&mut self, start: &RunStart) -> Result<OpenRun> {
        let started = ts(&start.started_at);
        let tenant = start.tenant.as_str();
        let file = self.known_spelling(tenant, &start.file).await?;
        let file_id = file.file_id.as_str();
        let a = args![
            tenant,
            file_id,
            "",
            file.format,
            start.source_name.as_str(),
            started.as_str()
        ];
        let run_id = self
            .store
            .query_one(sql::INSERT_RUN, &a)
            .await
            .during("recording the run")?
            .int(col!(sql::NEW_RUN, "run_id"))?;
        let a = args![tenant, file_id, file.format, run_id, started.as_str()];
        let claimed = self
            .store
            .query_opt(sql::CLAIM_FILE, &a)
            .await
            .during("claiming the file identity")?;
        let prior_run_id = match claimed {
            Some(_) => None,
            None => {
                let a = args![tenant, file_id];
                Some(
                    self.store
                        .query_one(sql::FILE_CLAIMED_BY, &a)
                        .await?
                        .int(col!(sql::CLAIM, "first_run_id"))?,
                )
            }
        };
        // A file identity seen before posts nothing new (its keys decide); a new NACHA one
        // is checked for re-sent entries when its origin has other files here.
        let resend_window_days = match (prior_run_id, start.resend_window_days) {
            (None, Some(days)) if file.format == "nacha" && !file.origin.is_empty() => self
                .origin_has_other_files(tenant, &file)
                .await?
                .then_some(days),
            _ => None,
        };
        Ok(OpenRun {
            run_id,
            tenant: start.tenant.clone(),
            file,
            prior_run_id,
            started_at: start.started_at,
            counts: Counts::default(),
            resend_window_days,
            legacy_below: self.legacy_below().await?,
            resent_held: 0,
            rejections: self.has_rejections(tenant).await?,
        })
    }

    /// Whether the NACHA file's origin has other files in the tenant (the re-sent entry
    /// check then applies). Takes the origin's turn first: two files of one origin
    /// ingested at once by two workers would not see each other's entries (PostgreSQL;
    /// SQLite writers take turns anyway).
    async fn origin_has_other_files(&mut self, tenant: &str, file: &FileIdentity) -> Result<bool> {
        let lock = format!("clearledger:origin:{tenant}:{}", file.origin);
        self.store
            .lock_name(&lock)
            .await
            .during("waiting for the origin's other runs")?;
        // Only identities spelling this origin in one of its ways are read back (a LIKE on
        // the origin's place); each is then confirmed by its parse.
        let patterns: Vec<String> = keys::nacha_spellings(&file.origin)
            .iter()
            .map(|o| format!("nacha:%:{}:%", sql::like_escape(o)))
            .collect();
        let last = patterns.last().map_or("", String::as_str);
        let a = args![tenant, file.file_id.as_str(), patterns[0].as_str(), last];
        let others = self
            .store
            .query(sql::OTHER_NACHA_FILES, &a)
            .await
            .during("reading the origin's other files")?;
        for r in &others {
            let file_id = r.text(col!(sql::OTHER_NACHA_FILE, "file_id"))?;
            if keys::nacha_origin_of(&file_id).as_deref() == Some(file.origin.as_str()) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Postings below this id carry the earlier ISO 20022 keys (`OpenRun::legacy_below`).
    async fn legacy_below(&mut self) -> Result<Option<i64>> {
        let row = self
            .store
            .query_opt(sql::ISO_V1_KEYS_BELOW, &[])
            .await
            .during("reading the keying rules")?;
        row.map(|r| r.int(col!(sql::META_VALUE, "value")))
            .transpose()
    }

    /// Whether the tenant has rejected a held record (`OpenRun::rejections`).
    async fn has_rejections(&mut self, tenant: &str) -> Result<bool> {
        Ok(self
            .store
            .query_opt(
                "SELECT 1 FROM decisions WHERE tenant = $1 AND decision = 'reject' LIMIT 1",
                &args![tenant],
            )
            .await?
            .is_some())
    }

    /// The spelling under which this ledger knows the file: its own `file_id` when that is
    /// claimed or no alias is, else the first alias already claimed (a file ingested
    /// before its identity's spelling was normalised, `FileIdentity::aliases`), so its
    /// keys are the ones its records were posted under.
    async fn known_spelling(&mut self, tenant: &str, file: &FileIdentity) -> Result<FileIdentity> {
        if file.aliases.is_empty() {
            return Ok(file.clone());
        }
        let own = args![tenant, file.file_id.as_str()];
        if self
            .store
            .query_opt(sql::FILE_CLAIMED_BY, &own)
            .await?
            .is_some()
        {
            return Ok(file.clone());
        }
        for alias in &file.aliases {
            if self
                .store
                .query_opt(sql::FILE_CLAIMED_BY, &args![tenant, alias.as_str()])
                .await?
                .is_some()
            {
                tracing::info!(file_id = %file.file_id, known_as = %alias, "file known under an earlier spelling");
                return Ok(FileIdentity {
                    file_id: alias.clone(),
                    aliases: Vec::new(),
                    ..file.clone()
                });
            }
        }
        Ok(file.clone())
    }

    /// Writes the completion mark and commits; returns the run as stored.
    pub async fn commit_run(&mut self, run: OpenRun, finish: &RunFinish) -> Result<RunInfo> {
        let res = self.complete(&run, finish).await;
        if res.is_err() {
            let _ = self.store.rollback().await;
        }
        res?;
        crate::fault::point("before_commit");
        self.commit(Some((&run.tenant, run.run_id))).await?;
        crate::fault::point("after_commit");
        if run.counts.records >= ANALYZE_AFTER_RECORDS {
            // Fresh statistics before the report is read: a planner that believes
            // `postings` empty (autovacuum ran while a bulk insert was in flight) joins the
            // journal to it with a scan per row. Committed already: a failure
            // here is only logged.
            if let Err(e) = self.store.analyze().await {
                tracing::warn!(error = %e, "ANALYZE after a bulk run failed");
            }
        }
        self.committed(&run.tenant, run.run_id, false).await
    }

    async fn complete(&mut self, run: &OpenRun, finish: &RunFinish) -> Result<()> {
        let c = &run.counts;
        let finished = ts(&finish.finished_at);
        let sha = finish.sha256.as_str();
        let a = args![
            finished.as_str(),
            sha,
            c.records as i64,
            c.posted as i64,
            c.duplicates as i64,
            c.conflicts as i64,
            c.held as i64,
            c.posted_amount_minor,
            finish.findings.len() as i64,
            run.run_id,
            run.tenant.as_str(),
        ];
        self.store
            .execute(sql::COMPLETE_RUN, &a)
            .await
            .during("writing the completion mark")?;
        // A new identity whose every record was held as re-sent posted nothing under it:
        // it does not keep the identity, so the same file, sent again with
        // `--accept-resent` once an operator has decided, is read afresh (and held again
        // without it). A file that posted anything keeps its claim, as always.
        let (tenant, file_id) = (run.tenant.as_str(), run.file.file_id.as_str());
        let all_resent =
            run.prior_run_id.is_none() && c.posted == 0 && c.held > 0 && c.held == run.resent_held;
        let claim = if all_resent {
            self.store
                .execute(sql::RELEASE_CLAIM, &args![tenant, file_id, run.run_id])
                .await
        } else {
            self.store
                .execute(
                    sql::COMPLETE_CLAIM,
                    &args![sha, tenant, file_id, run.run_id],
                )
                .await
        };
        claim.during("completing the file claim")?;
        let totals: Vec<[Arg; 5]> = c
            .by_currency
            .iter()
            .map(|t| {
                args![
                    run.tenant.as_str(),
                    run.run_id,
                    t.currency.as_str(),
                    t.posted as i64,
                    t.amount_minor
                ]
            })
            .collect();
        self.store
            .insert_rows(sql::INSERT_RUN_TOTALS, &totals, "writing the run's totals")
            .await?;
        self.insert_findings(&run.tenant, run.run_id, &finish.findings)
            .await
    }

    pub(crate) async fn insert_findings_of(
        &mut self,
        tenant: &str,
        run_id: i64,
        findings: &[Finding],
    ) -> Result<()> {
        self.insert_findings(tenant, run_id, findings).await
    }

    async fn insert_findings(
        &mut self,
        tenant: &str,
        run_id: i64,
        findings: &[Finding],
    ) -> Result<()> {
        let stored: Vec<FindingRow> = findings
            .iter()
            .enumerate()
            .map(|(i, f)| FindingRow::of(i, f))
            .collect();
        let rows: Vec<[Arg; 12]> = stored
            .iter()
            .zip(findings)
            .map(|(s, f)| s.args(tenant, run_id, f))
            .collect();
        self.store
            .insert_rows(sql::INSERT_FINDINGS, &rows, "writing findings")
            .await
    }

    /// A completed earlier ingest of exactly these bytes (same SHA-256, same tenant) whose
    /// records were all posted or duplicates: the exact re-upload fast path can replay it.
    pub async fn find_exact_upload(
        &mut self,
        tenant: &str,
        sha256: &str,
    ) -> Result<Option<ExactUpload>> {
        let row = self
            .store
            .query_opt(sql::FIND_EXACT_UPLOAD, &args![tenant, sha256])
            .await?;
        let Some(r) = row else { return Ok(None) };
        let format = match r.text(col!(sql::EXACT_UPLOAD, "format"))?.as_str() {
            "iso20022" => "iso20022",
            _ => "nacha",
        };
        Ok(Some(ExactUpload {
            file: FileIdentity::stored(format, r.text(col!(sql::EXACT_UPLOAD, "file_id"))?),
            first_run_id: r.int(col!(sql::EXACT_UPLOAD, "first_run_id"))?,
        }))
    }

    /// The exact re-upload fast path: one transaction records a run whose every record is a
    /// duplicate of what the earlier run posted or matched, journaled set-based from that
    /// run's outcomes (no parse, no per-record statements); returns the run as stored.
    pub async fn replay_run(
        &mut self,
        start: &RunStart,
        prior: &ExactUpload,
        finish: &RunFinish,
    ) -> Result<RunInfo> {
        self.store
            .begin(Begin::Write)
            .await
            .during("starting the ingest transaction")?;
        let res = self.replay(start, prior, finish).await;
        let run_id = self.end_run(&start.tenant, res).await?;
        crate::fault::point("after_commit");
        self.committed(&start.tenant, run_id, false).await
    }

    async fn replay(
        &mut self,
        start: &RunStart,
        prior: &ExactUpload,
        finish: &RunFinish,
    ) -> Result<i64> {
        let started = ts(&start.started_at);
        let tenant = start.tenant.as_str();
        let a = args![
            tenant,
            prior.file.file_id.as_str(),
            finish.sha256.as_str(),
            prior.file.format,
            start.source_name.as_str(),
            started.as_str(),
        ];
        let run_id = self
            .store
            .query_one(sql::INSERT_RUN, &a)
            .await?
            .int(col!(sql::NEW_RUN, "run_id"))?;
        // Every record of the earlier run: what it posted, and what it found duplicated.
        let a = args![run_id, prior.first_run_id, tenant];
        let replay = sql::replay_journal(self.store.dialect());
        let replayed = self
            .store
            .execute(&replay, &a)
            .await
            .during("replaying the earlier run's outcomes")? as i64;
        let finished = ts(&finish.finished_at);
        let a = args![finished.as_str(), replayed, run_id, tenant];
        self.store.execute(sql::COMPLETE_REPLAY, &a).await?;
        crate::fault::point("before_commit");
        Ok(run_id)
    }

    /// Rolls the run back: nothing of it remains.
    pub async fn rollback_run(&mut self, _run: OpenRun) -> Result<()> {
        self.store.rollback().await.during("rolling back the run")
    }

    /// Records a rejected file and its findings (its own small transaction).
    pub async fn record_rejection(&mut self, rej: &Rejection) -> Result<RunInfo> {
        self.store
            .begin(Begin::Write)
            .await
            .during("starting the rejection transaction")?;
        let res = self.reject(rej).await;
        let run_id = self.end_run(&rej.tenant, res).await?;
        self.committed(&rej.tenant, run_id, true).await
    }

    async fn reject(&mut self, rej: &Rejection) -> Result<i64> {
        let errors = count_errors(&rej.findings) as i64;
        let warnings = rej.findings.len() as i64 - errors;
        let (started, finished) = (ts(&rej.started_at), ts(&rej.finished_at));
        let a = args![
            rej.tenant.as_str(),
            rej.file_id.as_deref(),
            rej.sha256.as_str(),
            rej.format,
            rej.source_name.as_str(),
            started.as_str(),
            finished.as_str(),
            rej.records as i64,
            errors,
            warnings,
        ];
        let run_id = self
            .store
            .query_one(sql::INSERT_REJECTED_RUN, &a)
            .await?
            .int(col!(sql::NEW_RUN, "run_id"))?;
        self.insert_findings(&rej.tenant, run_id, &rej.findings)
            .await?;
        Ok(run_id)
    }
}

/// A PostgreSQL failure of the connection itself (the socket closed, the session ended),
/// as against an error the server answered with.
fn lost_connection(e: &sqlx::Error) -> bool {
    matches!(
        e,
        sqlx::Error::Io(_) | sqlx::Error::Protocol(_) | sqlx::Error::WorkerCrashed
    ) || matches!(e, sqlx::Error::Database(d) if d.code().as_deref() == Some("57P01"))
}
