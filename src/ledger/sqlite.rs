//! The embedded SQLite ledger.
//!
//! Connection settings and why:
//! - WAL journal: readers (`report`, `lookup`) never block the ingest, and the ingest
//!   commits with few fsyncs.
//! - `synchronous = FULL`: a committed run survives a power cut. In one big transaction
//!   FULL costs the same as NORMAL (PERFORMANCE.md).
//! - `cache_size` 128 MiB: bulk inserts into the unique indexes thrash the default 2 MB
//!   page cache (PERFORMANCE.md: 256 MiB nearly doubles the rate). Measured here on 1 M
//!   NACHA rows (examples/sqlite_ceiling.rs): 256 MiB 11.5 s, 128 MiB 10.0 s, 64 MiB 9.9 s
//!   fresh; all-conflict 1.6 / 1.7 / 2.5 s. 128 MiB keeps peak RSS near 200 MB whatever
//!   the file's size.
//! - `BEGIN IMMEDIATE`: the ingest takes the write lock when it starts, so two processes
//!   on one database serialise: the second waits (up to the busy timeout) and then finds
//!   every record already posted. A deferred transaction would instead fail on upgrade.

use super::classify::{
    JOURNAL_COLUMNS, Original, Originals, classify, conflicting_ids, like_escape,
    migrations_to_apply, replay_sql, report_sql, tally, ts,
};
use super::*;
use rusqlite::OptionalExtension;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection, QueryBuilder, Row, Sqlite, SqliteConnection};
use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

/// Rows per multi-row statement: 16 binds a row stays under SQLite's 32,766-variable limit.
const ROWS_PER_STATEMENT: usize = 500;

pub struct SqliteLedger {
    conn: SqliteConnection,
}

const RUN_COLUMNS: &str = "run_id, tenant, file_id, sha256, format, source_name, started_at, finished_at, status, records, posted, duplicates, conflicts, held, posted_amount_minor, errors, warnings";

fn run_info(row: &sqlx::sqlite::SqliteRow) -> RunInfo {
    RunInfo {
        run_id: row.get("run_id"),
        tenant: row.get("tenant"),
        file_id: row.get("file_id"),
        sha256: row.get("sha256"),
        format: row.get("format"),
        source_name: row.get("source_name"),
        started_at: row.get("started_at"),
        finished_at: row.get("finished_at"),
        status: row.get("status"),
        records: row.get("records"),
        posted: row.get("posted"),
        duplicates: row.get("duplicates"),
        conflicts: row.get("conflicts"),
        held: row.get("held"),
        posted_amount_minor: row.get("posted_amount_minor"),
        errors: row.get("errors"),
        warnings: row.get("warnings"),
    }
}

impl SqliteLedger {
    /// Runs `f` on sqlx's own SQLite handle, through rusqlite, inside whatever transaction
    /// the connection has open. The bulk paths (postings, journal, report) go this way:
    /// sqlx hands every statement and every row between threads, which cost more than
    /// SQLite's own work (≈9 µs a row read; see README, Performance).
    async fn with_handle<T>(
        &mut self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T>,
    ) -> Result<T> {
        let mut locked = self
            .conn
            .lock_handle()
            .await
            .ctx("locking the connection")?;
        let raw = locked.as_raw_handle().as_ptr();
        // SAFETY: `locked` holds sqlx's lock on this handle until it is dropped, after `c`:
        // sqlx's worker does not touch the handle meanwhile. rusqlite's `from_handle` does
        // not own the handle (never closes it); statements prepared through `c` are
        // finalized when `c` is dropped, which happens before the lock is released.
        let c = unsafe { rusqlite::Connection::from_handle(raw) }
            .ctx("borrowing the connection handle")?;
        let out = f(&c);
        drop(c);
        drop(locked);
        out
    }

    /// Opens (creating if missing) the database at `url` (`sqlite://PATH`).
    pub async fn connect(url: &str, busy_timeout: Duration) -> Result<Self> {
        let opts = SqliteConnectOptions::from_str(url)
            .ctx("parsing the database URL")?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(busy_timeout)
            .foreign_keys(true)
            .pragma("cache_size", "-131072")
            // Statement logs go to tracing at trace/debug level, not as warnings on stderr.
            .log_statements(log::LevelFilter::Trace)
            .log_slow_statements(log::LevelFilter::Debug, Duration::from_secs(1));
        // Opening a database another process is creating can report SQLITE_BUSY at once
        // (switching to WAL needs an exclusive lock, and SQLite's busy handler is not
        // called then): retry, bounded by the busy timeout.
        let deadline = std::time::Instant::now() + busy_timeout;
        let conn = loop {
            match SqliteConnection::connect_with(&opts).await {
                Ok(c) => break c,
                Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                Err(e) => return Err(e).ctx("opening the database"),
            }
        };
        Ok(SqliteLedger { conn })
    }

    async fn insert_findings(&mut self, run_id: i64, findings: &[Finding]) -> Result<()> {
        for (chunk_no, chunk) in findings.chunks(ROWS_PER_STATEMENT).enumerate() {
            let mut qb = QueryBuilder::<Sqlite>::new(
                "INSERT INTO findings (run_id, seq, severity, code, record_index, line, byte_offset, field, columns, expected, found) ",
            );
            qb.push_values(chunk.iter().enumerate(), |mut b, (i, f)| {
                b.push_bind(run_id)
                    .push_bind((chunk_no * ROWS_PER_STATEMENT + i + 1) as i64)
                    .push_bind(f.severity.as_str())
                    .push_bind(f.code.as_str())
                    .push_bind(f.position.record_index().unwrap_or(0) as i64)
                    .push_bind(f.position.line() as i64)
                    .push_bind(f.position.byte_offset() as i64)
                    .push_bind(
                        f.field
                            .map(|x| format!("{}.{}", x.record, x.name))
                            .or_else(|| f.position.path().map(str::to_string)),
                    )
                    .push_bind(f.field.map(|x| x.columns()))
                    .push_bind(f.expected.clone())
                    .push_bind(f.found.clone());
            });
            qb.build()
                .execute(&mut self.conn)
                .await
                .ctx("writing findings")?;
        }
        Ok(())
    }

    async fn fetch_run(&mut self, run_id: i64) -> Result<RunInfo> {
        let row = sqlx::query(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ?"))
            .bind(run_id)
            .fetch_one(&mut self.conn)
            .await
            .ctx("reading the run")?;
        Ok(run_info(&row))
    }
}

fn is_busy(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(d) => {
            d.code().is_some_and(|c| c == "5" || c == "6") || d.message().contains("locked")
        }
        _ => false,
    }
}

impl Ledger for SqliteLedger {
    /// Applies the embedded migrations inside one write transaction, so that processes
    /// opening a new database at the same moment apply them once: the first takes the
    /// lock and migrates, the others wait and find the work done.
    async fn migrate(&mut self) -> Result<()> {
        let migrator = sqlx::migrate!("migrations/sqlite");
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut self.conn)
            .await
            .ctx("locking the database to migrate")?;
        let res = async {
            sqlx::query(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, \
                 description TEXT NOT NULL, checksum BLOB NOT NULL, applied_at TEXT NOT NULL)",
            )
            .execute(&mut self.conn)
            .await
            .ctx("creating schema_migrations")?;
            let applied: Vec<(i64, Vec<u8>)> = sqlx::query_as("SELECT version, checksum FROM schema_migrations")
                .fetch_all(&mut self.conn)
                .await
                .ctx("reading schema_migrations")?;
            for m in migrations_to_apply(&migrator, &applied)? {
                sqlx::raw_sql(&m.sql).execute(&mut self.conn).await.ctx("applying a migration")?;
                sqlx::query("INSERT INTO schema_migrations (version, description, checksum, applied_at) VALUES (?, ?, ?, ?)")
                    .bind(m.version)
                    .bind(m.description.as_ref())
                    .bind(m.checksum.as_ref())
                    .bind(ts(&Utc::now()))
                    .execute(&mut self.conn)
                    .await
                    .ctx("recording a migration")?;
                tracing::info!(version = m.version, description = %m.description, "migration applied");
            }
            Ok(())
        }
        .await;
        match res {
            Ok(()) => {
                sqlx::query("COMMIT")
                    .execute(&mut self.conn)
                    .await
                    .ctx("committing migrations")?;
                Ok(())
            }
            Err(e) => {
                let _ = sqlx::query("ROLLBACK").execute(&mut self.conn).await;
                Err(e)
            }
        }
    }

    async fn begin_run(&mut self, start: &RunStart) -> Result<OpenRun> {
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut self.conn)
            .await
            .ctx("starting the ingest transaction")?;
        let started = ts(&start.started_at);
        let run_id: i64 = sqlx::query_scalar(
            "INSERT INTO runs (tenant, file_id, sha256, format, source_name, started_at, status) \
             VALUES (?, ?, '', ?, ?, ?, 'running') RETURNING run_id",
        )
        .bind(&start.tenant)
        .bind(&start.file.file_id)
        .bind(start.file.format)
        .bind(&start.source_name)
        .bind(&started)
        .fetch_one(&mut self.conn)
        .await
        .ctx("recording the run")?;
        // The claim: insert-first; the primary key decides who saw the file first.
        let claimed: Option<i64> = sqlx::query_scalar(
            "INSERT INTO files (tenant, file_id, format, sha256, first_run_id, first_seen_at) \
             VALUES (?, ?, ?, NULL, ?, ?) ON CONFLICT DO NOTHING RETURNING first_run_id",
        )
        .bind(&start.tenant)
        .bind(&start.file.file_id)
        .bind(start.file.format)
        .bind(run_id)
        .bind(&started)
        .fetch_optional(&mut self.conn)
        .await
        .ctx("claiming the file identity")?;
        let prior_run_id = match claimed {
            Some(_) => None,
            None => Some(
                sqlx::query_scalar(
                    "SELECT first_run_id FROM files WHERE tenant = ? AND file_id = ?",
                )
                .bind(&start.tenant)
                .bind(&start.file.file_id)
                .fetch_one(&mut self.conn)
                .await
                .ctx("reading the file claim")?,
            ),
        };
        Ok(OpenRun {
            run_id,
            tenant: start.tenant.clone(),
            file: start.file.clone(),
            prior_run_id,
            started_at: start.started_at,
            counts: Counts::default(),
        })
    }

    async fn apply(
        &mut self,
        run: &mut OpenRun,
        records: &[PostingRecord],
    ) -> Result<Vec<Outcome>> {
        let mut outcomes = Vec::with_capacity(records.len());
        let posted_at = ts(&run.started_at);
        let claimed = run.prior_run_id.is_none();
        let run_ro: &OpenRun = run;
        let journal_counts = self
            .with_handle(|c| {
                // 1. Insert what is new; the unique indexes decide. A file identity seen
                //    before posts nothing new: its new keys are held (see `Outcome::Held`).
                let mut rest: Vec<&PostingRecord> = Vec::new();
                if claimed {
                    let mut insert = c
                        .prepare_cached(
                            "INSERT INTO postings (tenant, operation, posting_key, file_id, record_no, trace_number, \
                             debit_account, credit_account, amount_minor, currency, effective_date, fingerprint, \
                             detail, run_id, posted_at) \
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) \
                             ON CONFLICT DO NOTHING",
                        )
                        .ctx("preparing the posting insert")?;
                    for r in records {
                        let n = insert
                            .execute(rusqlite::params![
                                run_ro.tenant,
                                r.operation,
                                r.posting_key,
                                run_ro.file.file_id,
                                r.record_no as i64,
                                r.trace_number,
                                r.debit_account,
                                r.credit_account,
                                r.amount_minor,
                                r.currency,
                                r.effective_date.map(|d| d.to_string()),
                                r.fingerprint,
                                r.detail,
                                run_ro.run_id,
                                posted_at,
                            ])
                            .ctx("inserting postings")?;
                        if n == 0 {
                            rest.push(r);
                        }
                    }
                } else {
                    rest.extend(records.iter());
                }
                // 2. Classify the rest against what the index kept: one index probe each.
                let mut originals: Originals = HashMap::new();
                if !rest.is_empty() {
                    let mut find = c
                        .prepare_cached(
                            "SELECT posting_id, run_id, fingerprint \
                             FROM postings WHERE tenant = ?1 AND operation = ?2 AND posting_key = ?3",
                        )
                        .ctx("preparing the originals' lookup")?;
                    for r in &rest {
                        let key = (r.operation.to_string(), r.posting_key.clone());
                        if originals.contains_key(&key) {
                            continue;
                        }
                        let found = find
                            .query_row(
                                rusqlite::params![run_ro.tenant, r.operation, r.posting_key],
                                |row| {
                                    Ok(Original {
                                        posting_id: row.get(0)?,
                                        run_id: row.get(1)?,
                                        fingerprint: row.get(2)?,
                                        detail: String::new(),
                                    })
                                },
                            )
                            .optional()
                            .ctx("reading the originals")?;
                        if let Some(o) = found {
                            originals.insert(key, o);
                        }
                    }
                    // Only conflicts need the originals' fields (to name what differs).
                    let conflicting = conflicting_ids(&rest, &originals);
                    if !conflicting.is_empty() {
                        let mut detail = c
                            .prepare_cached("SELECT detail FROM postings WHERE posting_id = ?1")
                            .ctx("preparing the originals' fields")?;
                        let mut details: HashMap<i64, String> = HashMap::new();
                        for id in conflicting {
                            let d: String = detail
                                .query_row([id], |row| row.get(0))
                                .ctx("reading the originals' fields")?;
                            details.insert(id, d);
                        }
                        for o in originals.values_mut() {
                            if let Some(d) = details.remove(&o.posting_id) {
                                o.detail = d;
                            }
                        }
                    }
                }
                // 3. Journal every record that did not post.
                let journal = classify(run_ro, &rest, &originals);
                if !journal.is_empty() {
                    let mut insert = c
                        .prepare_cached(&format!(
                            "INSERT INTO journal ({JOURNAL_COLUMNS}) \
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
                        ))
                        .ctx("preparing the journal insert")?;
                    for j in &journal {
                        let seen = j.seen();
                        insert
                            .execute(rusqlite::params![
                                run_ro.run_id,
                                j.r.record_no as i64,
                                run_ro.tenant,
                                j.outcome.as_str(),
                                j.original.map(|o| o.posting_id),
                                seen.map(|r| r.operation),
                                seen.map(|r| r.posting_key.as_str()),
                                seen.and_then(|r| r.trace_number.as_deref()),
                                seen.map(|r| r.debit_account.as_str()),
                                seen.map(|r| r.credit_account.as_str()),
                                seen.map(|r| r.amount_minor),
                                seen.map(|r| r.currency.as_str()),
                                seen.map(|r| r.fingerprint.as_str()),
                                j.differences,
                                j.reason,
                            ])
                            .ctx("journaling repeats")?;
                    }
                }
                Ok(journal
                    .iter()
                    .map(|j| (j.r.record_no, j.outcome))
                    .collect::<Vec<_>>())
            })
            .await?;
        tally(run, records, &journal_counts, &mut outcomes);
        Ok(outcomes)
    }

    async fn commit_run(&mut self, run: OpenRun, finish: &RunFinish) -> Result<RunInfo> {
        let c = run.counts;
        let warnings = finish.findings.len() as i64;
        sqlx::query(
            "UPDATE runs SET status = 'completed', finished_at = ?, sha256 = ?, records = ?, posted = ?, \
             duplicates = ?, conflicts = ?, held = ?, posted_amount_minor = ?, errors = 0, warnings = ? WHERE run_id = ?",
        )
        .bind(ts(&finish.finished_at))
        .bind(&finish.sha256)
        .bind(c.records as i64)
        .bind(c.posted as i64)
        .bind(c.duplicates as i64)
        .bind(c.conflicts as i64)
        .bind(c.held as i64)
        .bind(c.posted_amount_minor)
        .bind(warnings)
        .bind(run.run_id)
        .execute(&mut self.conn)
        .await
        .ctx("writing the completion mark")?;
        sqlx::query(
            "UPDATE files SET sha256 = ? WHERE tenant = ? AND file_id = ? AND first_run_id = ?",
        )
        .bind(&finish.sha256)
        .bind(&run.tenant)
        .bind(&run.file.file_id)
        .bind(run.run_id)
        .execute(&mut self.conn)
        .await
        .ctx("completing the file claim")?;
        self.insert_findings(run.run_id, &finish.findings).await?;
        crate::fault::point("before_commit");
        sqlx::query("COMMIT")
            .execute(&mut self.conn)
            .await
            .ctx("committing the run")?;
        crate::fault::point("after_commit");
        self.fetch_run(run.run_id).await
    }

    async fn find_exact_upload(
        &mut self,
        tenant: &str,
        sha256: &str,
    ) -> Result<Option<ExactUpload>> {
        let row = sqlx::query(
            "SELECT f.file_id, f.format, f.first_run_id FROM files f JOIN runs r ON r.run_id = f.first_run_id \
             WHERE f.tenant = ?1 AND f.sha256 = ?2 AND r.status = 'completed' AND r.conflicts = 0 AND r.held = 0 \
             ORDER BY f.first_run_id LIMIT 1",
        )
        .bind(tenant)
        .bind(sha256)
        .fetch_optional(&mut self.conn)
        .await
        .ctx("looking for an exact earlier upload")?;
        Ok(row.map(|r| {
            let format: String = r.get("format");
            ExactUpload {
                file: FileIdentity {
                    format: if format == "iso20022" {
                        "iso20022"
                    } else {
                        "nacha"
                    },
                    file_id: r.get("file_id"),
                },
                first_run_id: r.get("first_run_id"),
            }
        }))
    }

    async fn replay_run(
        &mut self,
        start: &RunStart,
        prior: &ExactUpload,
        finish: &RunFinish,
    ) -> Result<RunInfo> {
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut self.conn)
            .await
            .ctx("starting the ingest transaction")?;
        let res = async {
            let started = ts(&start.started_at);
            let run_id: i64 = sqlx::query_scalar(
                "INSERT INTO runs (tenant, file_id, sha256, format, source_name, started_at, status) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running') RETURNING run_id",
            )
            .bind(&start.tenant)
            .bind(&prior.file.file_id)
            .bind(&finish.sha256)
            .bind(prior.file.format)
            .bind(&start.source_name)
            .bind(&started)
            .fetch_one(&mut self.conn)
            .await
            .ctx("recording the run")?;
            // Every record of the earlier run: what it posted, and what it found duplicated.
            let replayed = sqlx::query(&replay_sql("?1", "?2", "?3"))
            .bind(run_id)
            .bind(prior.first_run_id)
            .bind(&start.tenant)
            .execute(&mut self.conn)
            .await
            .ctx("replaying the earlier run's outcomes")?
            .rows_affected() as i64;
            sqlx::query(
                "UPDATE runs SET status = 'completed', finished_at = ?1, records = ?2, duplicates = ?2, \
                 posted = 0, conflicts = 0, held = 0, posted_amount_minor = 0, errors = 0, warnings = 0 WHERE run_id = ?3",
            )
            .bind(ts(&finish.finished_at))
            .bind(replayed)
            .bind(run_id)
            .execute(&mut self.conn)
            .await
            .ctx("writing the completion mark")?;
            crate::fault::point("before_commit");
            Ok::<i64, LedgerError>(run_id)
        }
        .await;
        match res {
            Ok(run_id) => {
                sqlx::query("COMMIT")
                    .execute(&mut self.conn)
                    .await
                    .ctx("committing the run")?;
                crate::fault::point("after_commit");
                self.fetch_run(run_id).await
            }
            Err(e) => {
                let _ = sqlx::query("ROLLBACK").execute(&mut self.conn).await;
                Err(e)
            }
        }
    }

    async fn rollback_run(&mut self, _run: OpenRun) -> Result<()> {
        sqlx::query("ROLLBACK")
            .execute(&mut self.conn)
            .await
            .ctx("rolling back the run")?;
        Ok(())
    }

    async fn record_rejection(&mut self, rej: &Rejection) -> Result<RunInfo> {
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut self.conn)
            .await
            .ctx("starting the rejection transaction")?;
        let errors = rej
            .findings
            .iter()
            .filter(|f| f.severity == crate::findings::Severity::Error)
            .count() as i64;
        let warnings = rej.findings.len() as i64 - errors;
        let run_id: i64 = sqlx::query_scalar(
            "INSERT INTO runs (tenant, file_id, sha256, format, source_name, started_at, finished_at, status, records, errors, warnings) \
             VALUES (?, ?, ?, ?, ?, ?, ?, 'rejected', ?, ?, ?) RETURNING run_id",
        )
        .bind(&rej.tenant)
        .bind(rej.file_id.as_deref())
        .bind(&rej.sha256)
        .bind(rej.format)
        .bind(&rej.source_name)
        .bind(ts(&rej.started_at))
        .bind(ts(&rej.finished_at))
        .bind(rej.records as i64)
        .bind(errors)
        .bind(warnings)
        .fetch_one(&mut self.conn)
        .await
        .ctx("recording the rejected run")?;
        self.insert_findings(run_id, &rej.findings).await?;
        sqlx::query("COMMIT")
            .execute(&mut self.conn)
            .await
            .ctx("committing the rejection")?;
        self.fetch_run(run_id).await
    }

    async fn report_rows(
        &mut self,
        tenant: &str,
        run_id: i64,
        row: &mut (dyn FnMut(ReportRow) -> std::io::Result<()> + Send),
    ) -> Result<std::io::Result<()>> {
        let sql = report_sql("?1", "?2");
        self.with_handle(|c| {
            let mut stmt = c.prepare(&sql).ctx("preparing the report")?;
            let mut rows = stmt
                .query(rusqlite::params![run_id, tenant])
                .ctx("reading the report")?;
            while let Some(r) = rows.next().ctx("reading the report")? {
                let rr = (|| {
                    Ok::<_, rusqlite::Error>(ReportRow {
                        run_id: r.get(0)?,
                        file_id: r.get(1)?,
                        record_no: r.get(2)?,
                        outcome: r.get(3)?,
                        posting_key: r.get(4)?,
                        trace_number: r.get(5)?,
                        amount_minor: r.get(6)?,
                        currency: r.get(7)?,
                        debit_account: r.get(8)?,
                        credit_account: r.get(9)?,
                        original_file_id: r.get(10)?,
                        original_record_no: r.get(11)?,
                        original_run_id: r.get(12)?,
                        original_posted_at: r.get(13)?,
                        differences: r.get(14)?,
                        reason: r.get(15)?,
                    })
                })()
                .ctx("reading the report")?;
                if let Err(e) = row(rr) {
                    return Ok(Err(e));
                }
            }
            Ok(Ok(()))
        })
        .await
    }

    async fn run(&mut self, tenant: &str, run_id: i64) -> Result<Option<RunInfo>> {
        let row = sqlx::query(&format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ? AND tenant = ?"
        ))
        .bind(run_id)
        .bind(tenant)
        .fetch_optional(&mut self.conn)
        .await
        .ctx("reading the run")?;
        Ok(row.as_ref().map(run_info))
    }

    async fn runs(
        &mut self,
        tenant: &str,
        file_id: Option<&str>,
        limit: i64,
    ) -> Result<Vec<RunInfo>> {
        let sql = match file_id {
            Some(_) => format!(
                "SELECT {RUN_COLUMNS} FROM runs WHERE tenant = ? AND file_id = ? ORDER BY run_id DESC LIMIT ?"
            ),
            None => format!(
                "SELECT {RUN_COLUMNS} FROM runs WHERE tenant = ? ORDER BY run_id DESC LIMIT ?"
            ),
        };
        let mut q = sqlx::query(&sql).bind(tenant);
        if let Some(f) = file_id {
            q = q.bind(f);
        }
        let rows = q
            .bind(limit)
            .fetch_all(&mut self.conn)
            .await
            .ctx("listing runs")?;
        Ok(rows.iter().map(run_info).collect())
    }

    async fn findings(&mut self, tenant: &str, run_id: i64) -> Result<Vec<StoredFinding>> {
        let rows = sqlx::query(
            "SELECT f.run_id, f.seq, f.severity, f.code, f.record_index, f.line, f.byte_offset, f.field, f.columns, f.expected, f.found \
             FROM findings f JOIN runs r ON r.run_id = f.run_id WHERE f.run_id = ? AND r.tenant = ? ORDER BY f.seq",
        )
        .bind(run_id)
        .bind(tenant)
        .fetch_all(&mut self.conn)
        .await
        .ctx("reading findings")?;
        Ok(rows
            .iter()
            .map(|r| StoredFinding {
                run_id: r.get("run_id"),
                seq: r.get("seq"),
                severity: r.get("severity"),
                code: r.get("code"),
                record_index: r.get("record_index"),
                line: r.get("line"),
                byte_offset: r.get("byte_offset"),
                field: r.get("field"),
                columns: r.get("columns"),
                expected: r.get("expected"),
                found: r.get("found"),
            })
            .collect())
    }

    async fn lookup(&mut self, tenant: &str, lookup: &Lookup) -> Result<Vec<Posting>> {
        let base = "SELECT p.posting_id, p.tenant, p.operation, p.posting_key, p.file_id, p.record_no, p.trace_number, \
                    p.debit_account, p.credit_account, p.amount_minor, p.currency, p.effective_date, p.fingerprint, \
                    p.run_id, p.posted_at, \
                    (SELECT count(*) FROM journal j WHERE j.original_posting_id = p.posting_id) AS repeats \
                    FROM postings p WHERE p.tenant = ? AND ";
        let cond = match lookup {
            Lookup::TraceNumber(_) => "p.trace_number = ?",
            Lookup::Uetr(_) => "(p.posting_key = ? OR p.posting_key LIKE ? ESCAPE '\\')",
            Lookup::EndToEndId(_) => "(p.detail LIKE ? ESCAPE '\\' OR p.detail LIKE ? ESCAPE '\\')",
            Lookup::Source { .. } => "p.file_id = ? AND p.record_no = ?",
            Lookup::PostingKey(_) => "p.posting_key = ?",
        };
        let sql = format!("{base}{cond} ORDER BY p.posting_id");
        let q = sqlx::query(&sql).bind(tenant);
        let q = match lookup {
            Lookup::TraceNumber(t) => q.bind(t.as_str()),
            Lookup::Uetr(u) => q
                .bind(format!("uetr:{u}"))
                .bind(format!("uetr:{}:%", like_escape(u))),
            Lookup::EndToEndId(e) => {
                let e = like_escape(&serde_json::Value::String(e.clone()).to_string());
                q.bind(format!("%\"end_to_end_id\":{e}%"))
                    .bind(format!("%\"original_end_to_end_id\":{e}%"))
            }
            Lookup::Source { file_id, record_no } => q.bind(file_id.as_str()).bind(*record_no),
            Lookup::PostingKey(k) => q.bind(k.as_str()),
        };
        let rows = q
            .fetch_all(&mut self.conn)
            .await
            .ctx("looking up postings")?;
        Ok(rows
            .iter()
            .map(|r| Posting {
                posting_id: r.get("posting_id"),
                tenant: r.get("tenant"),
                operation: r.get("operation"),
                posting_key: r.get("posting_key"),
                file_id: r.get("file_id"),
                record_no: r.get("record_no"),
                trace_number: r.get("trace_number"),
                debit_account: r.get("debit_account"),
                credit_account: r.get("credit_account"),
                amount_minor: r.get("amount_minor"),
                currency: r.get("currency"),
                effective_date: r.get("effective_date"),
                fingerprint: r.get("fingerprint"),
                run_id: r.get("run_id"),
                posted_at: r.get("posted_at"),
                repeats: r.get("repeats"),
            })
            .collect())
    }
}
