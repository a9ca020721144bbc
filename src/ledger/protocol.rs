//! The protocol, written once for both backends (docs/principles.md §6–§9): claim the file
//! identity, insert postings insert-first, classify and journal what did not insert,
//! write the completion mark and commit — or roll back whole. Replays, rejections and
//! every read (run, runs, findings, report, lookup) too.

use super::classify::{
    Held, JournalRow, Originals, Seen, TraceCandidate, classify, conflicting_ids, legacy_of,
    migrations_to_apply, tally, ts,
};
use super::sql::{self, FindingRow};
use super::store::{Arg, Begin, Columns, args, checked, col};
use super::{
    Counts, CurrencyTotal, ExactUpload, Ledger, Lookup, OpenRun, Posting, Rejection, ReportRow,
    Result, RunFinish, RunInfo, RunStart, StoredFinding,
};
use super::{During, LedgerError};
use crate::findings::{Finding, count_errors};
use crate::keys::{self, FileIdentity, Outcome, PostingRecord};
use chrono::Utc;

/// A run of at least this many records refreshes the planner's statistics after its
/// commit (PostgreSQL; nothing on SQLite, whose plans do not depend on them here).
pub(crate) const ANALYZE_AFTER_RECORDS: u64 = 10_000;

/// The migration after whose script existing postings are compacted (`compact_details`).
const COMPACT_DETAIL_MIGRATION: i64 = 13;

impl Ledger {
    /// Applies the embedded migrations inside one write transaction, so that processes
    /// opening a new database at the same moment apply them once: the first takes the
    /// lock and migrates, the others wait and find the work done.
    ///
    /// A database already up to date is seen so without any lock (a plain read, which a
    /// SQLite writer does not block), so `runs`, `report` and `lookup` never wait behind an
    /// ingest; only a database with migrations pending takes the write lock.
    pub(crate) async fn migrate(&mut self) -> Result<()> {
        if self.up_to_date().await? {
            return Ok(());
        }
        self.store
            .begin(Begin::Migrate)
            .await
            .during("locking the database to migrate")?;
        let res = self.apply_migrations().await;
        self.end(res).await
    }

    /// Whether every embedded migration is recorded, unchanged (a changed one is an error);
    /// `false` when the migrations table is not there yet (or cannot be read: the locked
    /// path then says why).
    async fn up_to_date(&mut self) -> Result<bool> {
        let s = &mut self.store;
        let Ok(rows) = s.query(sql::APPLIED_MIGRATIONS, &[]).await else {
            return Ok(false);
        };
        let applied = rows
            .iter()
            .map(sql::applied_migration)
            .collect::<Result<Vec<_>>>()?;
        Ok(migrations_to_apply(s.migrator(), &applied)?.is_empty())
    }

    async fn apply_migrations(&mut self) -> Result<()> {
        let s = &mut self.store;
        s.execute(s.migrations_table_ddl(), &[]).await?;
        let applied = s
            .query(sql::APPLIED_MIGRATIONS, &[])
            .await?
            .iter()
            .map(sql::applied_migration)
            .collect::<Result<Vec<_>>>()?;
        for m in migrations_to_apply(s.migrator(), &applied)? {
            s.script(&m.sql).await.during("applying a migration")?;
            let applied_at = ts(&Utc::now());
            let a = args![
                m.version,
                m.description.as_ref(),
                m.checksum.as_ref(),
                applied_at.as_str()
            ];
            s.execute(sql::RECORD_MIGRATION, &a)
                .await
                .during("recording a migration")?;
            if m.version == COMPACT_DETAIL_MIGRATION {
                compact_details(s).await?;
            }
            tracing::info!(version = m.version, description = %m.description, "migration applied");
        }
        Ok(())
    }

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
    pub(crate) async fn end_run(&mut self, res: Result<i64>) -> Result<i64> {
        match res {
            Ok(run_id) => {
                self.commit(Some(run_id)).await?;
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
    async fn commit(&mut self, run_id: Option<i64>) -> Result<()> {
        if let Some(id) = run_id {
            if let Err(e) = self.call_hooks(id).await {
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
                    run_id,
                    source: Box::new(LedgerError::Database { source, context }),
                }
            }
            e => e,
        })?;
        if run_id.is_some() {
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
    pub(crate) async fn committed(&mut self, run_id: i64, rejected: bool) -> Result<RunInfo> {
        self.fetch_run(run_id)
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

    /// Inserts what is new, classifies and journals the rest. Returns each record's
    /// outcome, in order.
    pub async fn apply(
        &mut self,
        run: &mut OpenRun,
        records: &[PostingRecord],
    ) -> Result<Vec<Outcome>> {
        let mut outcomes = Vec::with_capacity(records.len());
        for chunk in records.chunks(self.store.chunk_rows()) {
            self.apply_chunk(run, chunk, &mut outcomes).await?;
        }
        Ok(outcomes)
    }

    /// [`Self::apply`] of one chunk (as many records as one statement of the backend takes).
    async fn apply_chunk(
        &mut self,
        run: &mut OpenRun,
        chunk: &[PostingRecord],
        outcomes: &mut Vec<Outcome>,
    ) -> Result<()> {
        // 1. What must not insert although its key is new: an entry re-sent in another
        //    file of the same origin (held), a record posted under the earlier keying
        //    rule (classified against that posting), a record an operator rejected.
        let resent = match run.resend_window_days {
            Some(days) => self
                .resent(run, chunk, days)
                .await
                .during("looking for re-sent entries")?,
            None => Held::new(),
        };
        let mut legacy = match run.legacy_below {
            Some(below) => self
                .legacy_originals(&run.tenant, chunk, below)
                .await
                .during("reading the originals of the earlier keying rule")?,
            None => Originals::new(),
        };
        let rejected = self.rejected(run, chunk).await?;
        let held_back = |r: &PostingRecord| {
            resent.contains_key(&r.record_no)
                || legacy_of(&legacy, r).is_some()
                || rejected.contains_key(&r.record_no)
        };
        // 2. Insert what is new; the unique indexes decide (docs/principles.md §7). A file
        //    identity seen before posts nothing new: its new keys are held.
        let inserted = match run.prior_run_id {
            None => {
                let new: Vec<&PostingRecord> = chunk.iter().filter(|r| !held_back(r)).collect();
                self.store
                    .insert_postings(run, &new)
                    .await
                    .during("inserting postings")?
            }
            Some(_) => Vec::new(),
        };
        let rest: Vec<&PostingRecord> = chunk
            .iter()
            .filter(|r| inserted.binary_search(&r.record_no).is_err())
            .collect();
        // 3. Classify the rest against what the index kept.
        let mut originals = self
            .originals(&run.tenant, &rest)
            .await
            .during("reading the originals")?;
        self.fill_details(&rest, &mut legacy, &mut originals)
            .await
            .during("reading the originals")?;
        let seen = Seen {
            originals: &originals,
            resent: &resent,
            legacy: &legacy,
            rejected: &rejected,
        };
        // 4. Journal every record that did not post (docs/principles.md §9).
        let journal = classify(run, &rest, &seen);
        self.journal(run, &journal).await?;
        run.resent_held += journal
            .iter()
            .filter(|j| j.outcome == Outcome::Held && resent.contains_key(&j.r.record_no))
            .count() as u64;
        let journaled: Vec<(u64, Outcome)> =
            journal.iter().map(|j| (j.r.record_no, j.outcome)).collect();
        tally(run, chunk, &journaled, outcomes)
    }

    /// The chunk's records an operator rejected before (`resolve --reject`), each with
    /// the decision as one text: they never post.
    async fn rejected(
        &mut self,
        run: &OpenRun,
        chunk: &[PostingRecord],
    ) -> Result<std::collections::HashMap<u64, String>> {
        const DECISION: Columns = Columns(&[
            "decision",
            "reason",
            "decided_by",
            "decided_at",
            "run_id",
            "posting_id",
            "held_run_id",
            "held_record_no",
        ]);
        let mut rejected = std::collections::HashMap::new();
        if !run.rejections {
            return Ok(rejected);
        }
        for r in chunk {
            let a = args![run.tenant.as_str(), r.operation, r.posting_key.as_str()];
            let decision_of_key = checked!(DECISION, sql::DECISION_OF_KEY);
            if let Some(d) = self.store.query_opt(decision_of_key, &a).await?
                && d.text(col!(DECISION, "decision"))? == "reject"
            {
                let what = format!(
                    "reject by {} at {} (run {}): {}",
                    d.text(col!(DECISION, "decided_by"))?,
                    d.text(col!(DECISION, "decided_at"))?,
                    d.int(col!(DECISION, "run_id"))?,
                    d.text(col!(DECISION, "reason"))?
                );
                rejected.insert(r.record_no, what);
            }
        }
        Ok(rejected)
    }

    /// Writes the journal rows of the records that did not post.
    async fn journal(&mut self, run: &OpenRun, journal: &[JournalRow<'_>]) -> Result<()> {
        // A held record's date and fields, as the journal keeps them (JSON: held records
        // are rare, and `held` / `resolve` read them as such).
        let held: Vec<Option<(Option<String>, String)>> = journal
            .iter()
            .map(|j| {
                (j.outcome == Outcome::Held).then(|| {
                    (
                        j.r.effective_date.map(|d| d.to_string()),
                        keys::detail::to_json(&j.r.detail).unwrap_or_default(),
                    )
                })
            })
            .collect();
        let rows: Vec<[Arg; 17]> = journal
            .iter()
            .zip(&held)
            .map(|(j, h)| {
                let h = h
                    .as_ref()
                    .map(|(d, detail)| (d.as_deref(), detail.as_str()));
                sql::journal_args(run, j, h)
            })
            .collect();
        self.store
            .insert_rows(sql::INSERT_JOURNAL, &rows, "journaling repeats")
            .await
    }

    /// The chunk's entries equal to an entry another file of the same origin posted
    /// (`keys::resent_match`), each with that posting: one lookup by trace number.
    async fn resent(&mut self, run: &OpenRun, chunk: &[PostingRecord], days: u32) -> Result<Held> {
        let dates: Vec<Option<String>> = chunk
            .iter()
            .map(|r| r.effective_date.map(|d| d.to_string()))
            .collect();
        let keys: Vec<(&str, &str)> = chunk
            .iter()
            .zip(&dates)
            .filter(|(r, _)| r.operation == keys::OPERATION_ACH_ENTRY)
            .filter_map(|(r, d)| Some((r.trace_number.as_deref()?, d.as_deref()?)))
            .collect();
        let mut held = Held::new();
        if keys.is_empty() {
            return Ok(held);
        }
        let candidates = self
            .store
            .by_trace(&run.tenant, keys::OPERATION_ACH_ENTRY, &keys)
            .await?;
        let mut by_key: std::collections::HashMap<
            (&str, Option<chrono::NaiveDate>),
            Vec<&TraceCandidate>,
        > = std::collections::HashMap::new();
        for c in &candidates {
            by_key
                .entry((c.trace_number.as_str(), c.effective_date))
                .or_default()
                .push(c);
        }
        let created = keys::nacha_created_of(&run.file.file_id);
        let within = |file_id: &str| match (created, keys::nacha_created_of(file_id)) {
            (Some(a), Some(b)) => (a - b).num_days().unsigned_abs() <= u64::from(days),
            _ => true,
        };
        for r in chunk {
            let Some(trace) = r.trace_number.as_deref() else {
                continue;
            };
            let Some(found) = by_key.get(&(trace, r.effective_date)) else {
                continue;
            };
            let found = found.iter().find(|c| {
                let f = c.original.file_id.as_str();
                f != run.file.file_id
                    && keys::nacha_origin_of(f).as_deref() == Some(run.file.origin.as_str())
                    && within(f)
                    && keys::resent_match(r, &c.original.detail)
            });
            if let Some(c) = found {
                let reason = format!(
                    "re-sent: equals record {} of file {} (run {}): same company, trace number, transaction \
                     code, RDFI routing and account, amount and effective entry date, in a file of the same \
                     origin created within {days} days; not posted",
                    c.record_no, c.original.file_id, c.original.run_id
                );
                held.insert(r.record_no, (c.original.clone(), reason));
            }
        }
        Ok(held)
    }

    /// The postings made under the earlier keying rule that the chunk's records match by
    /// their legacy key, keyed by that legacy key.
    async fn legacy_originals(
        &mut self,
        tenant: &str,
        chunk: &[PostingRecord],
        below: i64,
    ) -> Result<Originals> {
        let keys: Vec<(&str, &str)> = chunk
            .iter()
            .filter_map(|r| {
                r.legacy
                    .as_ref()
                    .map(|l| (r.operation, l.posting_key.as_str()))
            })
            .collect();
        if keys.is_empty() {
            return Ok(Originals::new());
        }
        let mut found = self.store.originals(tenant, &keys).await?;
        found.retain(|_, o| o.posting_id < below);
        Ok(found)
    }

    /// The originals `rest` collided with (fields not yet read: [`Self::fill_details`]).
    async fn originals(&mut self, tenant: &str, rest: &[&PostingRecord]) -> Result<Originals> {
        if rest.is_empty() {
            return Ok(Originals::new());
        }
        let keys: Vec<(&str, &str)> = rest
            .iter()
            .map(|r| (r.operation, r.posting_key.as_str()))
            .collect();
        self.store.originals(tenant, &keys).await
    }

    /// Only conflicts need their original's stored fields (to name what differs), so a
    /// re-upload of duplicates reads no detail at all.
    async fn fill_details(
        &mut self,
        rest: &[&PostingRecord],
        legacy: &mut Originals,
        originals: &mut Originals,
    ) -> Result<()> {
        let mut conflicting = conflicting_ids(rest, originals);
        conflicting.extend(rest.iter().filter_map(|r| {
            let (l, o) = (r.legacy.as_ref()?, legacy_of(legacy, r)?);
            (o.fingerprint != l.fingerprint).then_some(o.posting_id)
        }));
        if conflicting.is_empty() {
            return Ok(());
        }
        let details = self.store.details(&conflicting).await?;
        for o in originals.values_mut().chain(legacy.values_mut()) {
            if let Some(d) = details.get(&o.posting_id) {
                o.detail = d.clone();
            }
        }
        Ok(())
    }

    /// Writes the completion mark and commits; returns the run as stored.
    pub async fn commit_run(&mut self, run: OpenRun, finish: &RunFinish) -> Result<RunInfo> {
        let res = self.complete(&run, finish).await;
        if res.is_err() {
            let _ = self.store.rollback().await;
        }
        res?;
        crate::fault::point("before_commit");
        self.commit(Some(run.run_id)).await?;
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
        self.committed(run.run_id, false).await
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
        let totals: Vec<[Arg; 4]> = c
            .by_currency
            .iter()
            .map(|t| {
                args![
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
        self.insert_findings(run.run_id, &finish.findings).await
    }

    pub(crate) async fn insert_findings_of(
        &mut self,
        run_id: i64,
        findings: &[Finding],
    ) -> Result<()> {
        self.insert_findings(run_id, findings).await
    }

    async fn insert_findings(&mut self, run_id: i64, findings: &[Finding]) -> Result<()> {
        let stored: Vec<FindingRow> = findings
            .iter()
            .enumerate()
            .map(|(i, f)| FindingRow::of(i, f))
            .collect();
        let rows: Vec<[Arg; 11]> = stored
            .iter()
            .zip(findings)
            .map(|(s, f)| s.args(run_id, f))
            .collect();
        self.store
            .insert_rows(sql::INSERT_FINDINGS, &rows, "writing findings")
            .await
    }

    /// Run `run_id` as it stands, whichever tenant's: for the core and the commit hooks,
    /// which read the run inside its transaction.
    pub(crate) async fn fetch_run(&mut self, run_id: i64) -> Result<RunInfo> {
        let row = self
            .store
            .query_one(&sql::run_by_id(), &args![run_id])
            .await?;
        self.with_totals(sql::run_info(&row)?).await
    }

    /// The run with its per-currency totals.
    async fn with_totals(&mut self, mut run: RunInfo) -> Result<RunInfo> {
        let rows = self
            .store
            .query(sql::RUN_TOTALS, &args![run.run_id])
            .await?;
        run.totals = rows
            .iter()
            .map(|r| {
                Ok(CurrencyTotal {
                    currency: r.text(col!(sql::RUN_TOTAL, "currency"))?,
                    posted: r.int(col!(sql::RUN_TOTAL, "posted"))? as u64,
                    amount_minor: r.int(col!(sql::RUN_TOTAL, "amount_minor"))?,
                })
            })
            .collect::<Result<_>>()?;
        Ok(run)
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
        let run_id = self.end_run(res).await?;
        crate::fault::point("after_commit");
        self.committed(run_id, false).await
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
        let replayed = self
            .store
            .execute(sql::REPLAY_JOURNAL, &a)
            .await
            .during("replaying the earlier run's outcomes")? as i64;
        let finished = ts(&finish.finished_at);
        let a = args![finished.as_str(), replayed, run_id];
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
        let run_id = self.end_run(res).await?;
        self.committed(run_id, true).await
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
        self.insert_findings(run_id, &rej.findings).await?;
        Ok(run_id)
    }

    /// Calls `row` for each record of a run, in record order (also inside an open run). The
    /// row is lent: on SQLite its buffers are reused for the next one (no allocation per row).
    pub async fn report_rows(
        &mut self,
        tenant: &str,
        run_id: i64,
        row: &mut (dyn FnMut(&ReportRow) -> std::io::Result<()> + Send),
    ) -> Result<std::io::Result<()>> {
        self.store.fault_drop("pg_drop_before_report").await;
        self.store
            .report_rows(&sql::report(), &args![run_id, tenant], row)
            .await
    }

    pub async fn run(&mut self, tenant: &str, run_id: i64) -> Result<Option<RunInfo>> {
        let row = self
            .store
            .query_opt(&sql::run_of_tenant(), &args![run_id, tenant])
            .await?;
        match row {
            Some(r) => Ok(Some(self.with_totals(sql::run_info(&r)?).await?)),
            None => Ok(None),
        }
    }

    pub async fn runs(
        &mut self,
        tenant: &str,
        file_id: Option<&str>,
        limit: i64,
    ) -> Result<Vec<RunInfo>> {
        let rows = match file_id {
            Some(f) => {
                let a = args![tenant, f, limit];
                self.store.query(&sql::runs_of_tenant(true), &a).await?
            }
            None => {
                let a = args![tenant, limit];
                self.store.query(&sql::runs_of_tenant(false), &a).await?
            }
        };
        let mut runs = Vec::with_capacity(rows.len());
        for r in &rows {
            runs.push(self.with_totals(sql::run_info(r)?).await?);
        }
        Ok(runs)
    }

    pub async fn findings(&mut self, tenant: &str, run_id: i64) -> Result<Vec<StoredFinding>> {
        let rows = self
            .store
            .query(sql::FINDINGS_OF_RUN, &args![run_id, tenant])
            .await?;
        rows.iter().map(sql::stored_finding).collect()
    }

    /// Every write has a read (docs/principles.md §8): the postings a lookup names.
    pub async fn lookup(&mut self, tenant: &str, lookup: &Lookup) -> Result<Vec<Posting>> {
        let source_cond: String;
        let e2e_ids: String;
        let (cond, binds): (&str, Vec<String>) = match lookup {
            Lookup::TraceNumber(t) => {
                let (lo, hi) = sql::key_prefix_range(&format!("uetr:{t}"));
                (sql::LOOKUP_BY_TRACE.as_str(), vec![t.clone(), lo, hi])
            }
            // Keys hold the UETR in lower case.
            Lookup::Uetr(u) => {
                let own = format!("uetr:{}", u.trim().to_ascii_lowercase());
                let (lo, hi) = sql::key_prefix_range(&own);
                (sql::LOOKUP_BY_UETR.as_str(), vec![own, lo, hi])
            }
            Lookup::EndToEndId(e) => {
                let ids = self.postings_by_e2e(tenant, e).await?;
                e2e_ids = if ids.is_empty() {
                    "p.tenant = $1 AND FALSE".to_string()
                } else {
                    let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
                    format!("p.tenant = $1 AND p.posting_id IN ({})", ids.join(", "))
                };
                (e2e_ids.as_str(), vec![])
            }
            Lookup::Source { file_id, .. } => {
                // A NACHA file named in any spelling of its routing numbers.
                let spellings = keys::file_id_spellings(file_id);
                let list: Vec<String> = (0..spellings.len())
                    .map(|i| format!("${}", i + 2))
                    .collect();
                source_cond = format!(
                    "p.tenant = $1 AND p.file_id IN ({}) AND p.record_no = ${}",
                    list.join(", "),
                    spellings.len() + 2
                );
                (source_cond.as_str(), spellings)
            }
            Lookup::PostingKey(k) => ("p.tenant = $1 AND p.posting_key = $2", vec![k.clone()]),
        };
        let mut a: Vec<Arg> = vec![Arg::Text(tenant)];
        a.extend(binds.iter().map(|b| Arg::Text(b)));
        if let Lookup::Source { record_no, .. } = lookup {
            a.push(Arg::Int(*record_no));
        }
        let rows = self.store.query(&sql::lookup(cond), &a).await?;
        rows.iter().map(sql::posting).collect()
    }
}

/// Migration 0013's conversion (migrations/*/0013_compact_detail.sql): every posting's
/// JSON `detail` rewritten in the compact form (`keys::detail`), in the migration's
/// transaction, a thousand postings at a time in posting order. A JSON text the compact
/// form would not give back byte for byte is left as it is (it reads as itself).
async fn compact_details(s: &mut super::store::Store) -> Result<()> {
    let (mut after, mut converted) = (0i64, 0u64);
    const TO_COMPACT: Columns = Columns(&["posting_id", "detail"]);
    let (posting_id, detail) = (col!(TO_COMPACT, "posting_id"), col!(TO_COMPACT, "detail"));
    loop {
        let rows = s
            .query(
                checked!(
                    TO_COMPACT,
                    "SELECT posting_id, detail FROM postings WHERE posting_id > $1 \
                     ORDER BY posting_id LIMIT 1000"
                ),
                &args![after],
            )
            .await
            .during("reading postings to compact")?;
        let Some(last) = rows.last() else { break };
        after = last.int(posting_id)?;
        for r in &rows {
            let stored = r.detail(detail)?;
            if stored.first() != Some(&b'{') {
                continue;
            }
            let json = super::detail_json(r.int(posting_id)?, stored)?;
            let compact = keys::detail::encode_json(&json);
            s.execute(
                "UPDATE postings SET detail = $1 WHERE posting_id = $2",
                &args![compact.as_slice(), r.int(posting_id)?],
            )
            .await
            .during("compacting postings")?;
            converted += 1;
        }
    }
    tracing::info!(postings = converted, "posting details compacted");
    Ok(())
}

impl Ledger {
    /// The postings whose fields name `e2e` as their EndToEndId or original EndToEndId:
    /// a scan of the tenant's stored details for the field's bytes (compact or JSON form),
    /// then each candidate's fields read to keep the exact matches. An operator's tool,
    /// not a hot path.
    async fn postings_by_e2e(&mut self, tenant: &str, e2e: &str) -> Result<Vec<i64>> {
        const BY_E2E: Columns = Columns(&["posting_id", "detail"]);
        let json = |key: &str| format!("\"{key}\":{}", serde_json::Value::String(e2e.to_string()));
        let needles = [
            keys::detail::needle("end_to_end_id", e2e),
            keys::detail::needle("original_end_to_end_id", e2e),
            json("end_to_end_id").into_bytes(),
            json("original_end_to_end_id").into_bytes(),
        ];
        let postgres = matches!(self.store, super::store::Store::Postgres(_));
        let found = |n: usize| {
            if postgres {
                format!("position(${n} in p.detail) > 0")
            } else {
                format!("instr(p.detail, ${n}) > 0")
            }
        };
        let sql = format!(
            "SELECT p.posting_id, p.detail FROM postings p WHERE p.tenant = $1 AND ({} OR {} OR {} OR {}) \
             ORDER BY p.posting_id",
            found(2),
            found(3),
            found(4),
            found(5)
        );
        let mut a: Vec<Arg> = vec![Arg::Text(tenant)];
        a.extend(needles.iter().map(|n| Arg::Bytes(n)));
        let mut ids = Vec::new();
        for r in self.store.query(BY_E2E.checked(&sql), &a).await? {
            let id = r.int(col!(BY_E2E, "posting_id"))?;
            let stored = r.detail(col!(BY_E2E, "detail"))?;
            let get = |key| {
                keys::detail::get(stored, key).map_err(|source| LedgerError::BadDetail {
                    posting_id: id,
                    source,
                })
            };
            if get("end_to_end_id")?.as_deref() == Some(e2e)
                || get("original_end_to_end_id")?.as_deref() == Some(e2e)
            {
                ids.push(id);
            }
        }
        Ok(ids)
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
