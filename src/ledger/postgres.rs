//! The PostgreSQL ledger: the same tables, statements and outcomes as SQLite.
//!
//! How concurrent workers meet (READ COMMITTED, the default; nothing stronger is used):
//! - every run claims its file identity first (`INSERT … ON CONFLICT DO NOTHING` on
//!   `files`). A second worker on the same file blocks on that row until the first commits
//!   or rolls back. Committed: the claim is taken, the second worker inserts nothing and
//!   classifies every record against the committed postings (all duplicates). Rolled back:
//!   the second worker's claim goes through and it posts everything.
//! - postings are inserted with `ON CONFLICT DO NOTHING RETURNING`: the unique indexes are
//!   the only arbiter; a row being inserted by another open transaction makes the insert
//!   wait for that transaction's outcome, never guess.
//! - no SERIALIZABLE, so no serialization failures; a deadlock (only possible between
//!   runs whose keys overlap in different orders) fails the run as retryable.
//! - `lock_timeout` and `statement_timeout` bound every wait (see `connect`).

use super::classify::{
    JOURNAL_COLUMNS, Original, Originals, classify, conflicting_ids, like_escape,
    migrations_to_apply, replay_sql, report_sql, tally, ts,
};
use super::*;
use futures_util::TryStreamExt;
use sqlx::postgres::{PgConnectOptions, PgConnection, Postgres};
use sqlx::{ConnectOptions, Connection, QueryBuilder, Row};
use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

/// Rows per statement: the journal's 15 binds a row stay under PostgreSQL's 65,535 limit
/// (postings go as arrays, whatever the count).
const ROWS_PER_STATEMENT: usize = 2_000;

/// Timeouts of a PostgreSQL session, with their defaults in the CLI.
#[derive(Debug, Clone, Copy)]
pub struct PgTimeouts {
    /// Connecting (TCP, TLS, authentication).
    pub connect: Duration,
    /// Waiting for a lock held by another transaction (another worker's claim).
    pub lock: Duration,
    /// Any one statement.
    pub statement: Duration,
}

pub struct PgLedger {
    conn: PgConnection,
}

const RUN_COLUMNS: &str = "run_id, tenant, file_id, sha256, format, source_name, started_at, finished_at, status, records, posted, duplicates, conflicts, held, posted_amount_minor, errors, warnings";

fn run_info(row: &sqlx::postgres::PgRow) -> RunInfo {
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

impl PgLedger {
    /// Connects to the server named by `url` (`postgres://user:password@host:port/db?sslmode=…`;
    /// the password may come from `PGPASSWORD`; `sslmode=require|verify-ca|verify-full` use
    /// rustls). Session settings: `lock_timeout` and `statement_timeout` from `timeouts`,
    /// `application_name=clearledger`, `jit=off` (our statements are short or index-driven;
    /// JIT compiled a 1 M-row report's query for a third of a second, and gains nothing back),
    /// `work_mem=64MB` (the report's sort of a 1 M-record run spills less).
    pub async fn connect(url: &str, timeouts: PgTimeouts) -> Result<Self> {
        let ms = |d: Duration| format!("{}ms", d.as_millis());
        let opts = PgConnectOptions::from_str(url)
            .ctx("parsing the database URL")?
            .application_name("clearledger")
            .options([
                ("lock_timeout", ms(timeouts.lock)),
                ("statement_timeout", ms(timeouts.statement)),
                ("jit", "off".to_string()),
                ("work_mem", "64MB".to_string()),
            ])
            .log_statements(log::LevelFilter::Trace)
            .log_slow_statements(log::LevelFilter::Debug, Duration::from_secs(1));
        let conn =
            match tokio::time::timeout(timeouts.connect, PgConnection::connect_with(&opts)).await {
                Ok(c) => c.ctx("connecting to PostgreSQL")?,
                Err(_) => {
                    return Err(LedgerError::ConnectTimeout {
                        after: timeouts.connect,
                    });
                }
            };
        Ok(PgLedger { conn })
    }

    async fn insert_findings(&mut self, run_id: i64, findings: &[Finding]) -> Result<()> {
        for (chunk_no, chunk) in findings.chunks(ROWS_PER_STATEMENT).enumerate() {
            let mut qb = QueryBuilder::<Postgres>::new(
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
        let row = sqlx::query(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE run_id = $1"))
            .bind(run_id)
            .fetch_one(&mut self.conn)
            .await
            .ctx("reading the run")?;
        Ok(run_info(&row))
    }
}

impl Ledger for PgLedger {
    /// Applies the embedded migrations inside one write transaction, so that processes
    /// opening a new database at the same moment apply them once: the first takes the
    /// lock and migrates, the others wait and find the work done.
    async fn migrate(&mut self) -> Result<()> {
        let migrator = sqlx::migrate!("migrations/postgres");
        sqlx::query("BEGIN")
            .execute(&mut self.conn)
            .await
            .ctx("starting the migration")?;
        let res = async {
            // Serialise concurrent migrators; released at COMMIT or ROLLBACK.
            sqlx::query("SELECT pg_advisory_xact_lock(7265736962)")
                .execute(&mut self.conn)
                .await
                .ctx("locking to migrate")?;
            sqlx::query(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, \
                 description TEXT NOT NULL, checksum BYTEA NOT NULL, applied_at TEXT NOT NULL)",
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
                sqlx::query("INSERT INTO schema_migrations (version, description, checksum, applied_at) VALUES ($1, $2, $3, $4)")
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
        sqlx::query("BEGIN ISOLATION LEVEL READ COMMITTED")
            .execute(&mut self.conn)
            .await
            .ctx("starting the ingest transaction")?;
        let started = ts(&start.started_at);
        let run_id: i64 = sqlx::query_scalar(
            "INSERT INTO runs (tenant, file_id, sha256, format, source_name, started_at, status) \
             VALUES ($1, $2, '', $3, $4, $5, 'running') RETURNING run_id",
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
             VALUES ($1, $2, $3, NULL, $4, $5) ON CONFLICT DO NOTHING RETURNING first_run_id",
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
                    "SELECT first_run_id FROM files WHERE tenant = $1 AND file_id = $2",
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
        for chunk in records.chunks(ROWS_PER_STATEMENT) {
            // 1. Insert what is new; the unique indexes decide. A file identity seen before
            //    posts nothing new: its new keys are held (see `Outcome::Held`).
            let mut inserted: Vec<i64> = Vec::new();
            if run.prior_run_id.is_none() {
                // One statement per chunk, the rows as arrays through `unnest`: a handful of
                // binds instead of 15 per row, the same ON CONFLICT arbitration.
                // Columns borrowed from the records: no copy of the text per row.
                fn col<'a>(
                    chunk: &'a [PostingRecord],
                    f: impl Fn(&'a PostingRecord) -> &'a str,
                ) -> Vec<&'a str> {
                    chunk.iter().map(f).collect()
                }
                let operations = col(chunk, |r| r.operation);
                let keys = col(chunk, |r| &r.posting_key);
                let record_nos: Vec<i64> = chunk.iter().map(|r| r.record_no as i64).collect();
                let traces: Vec<Option<&str>> =
                    chunk.iter().map(|r| r.trace_number.as_deref()).collect();
                let debits = col(chunk, |r| &r.debit_account);
                let credits = col(chunk, |r| &r.credit_account);
                let amounts: Vec<i64> = chunk.iter().map(|r| r.amount_minor).collect();
                let currencies = col(chunk, |r| &r.currency);
                let dates: Vec<Option<String>> = chunk
                    .iter()
                    .map(|r| r.effective_date.map(|d| d.to_string()))
                    .collect();
                let fingerprints = col(chunk, |r| &r.fingerprint);
                let details = col(chunk, |r| &r.detail);
                inserted = sqlx::query_scalar(
                    "INSERT INTO postings (tenant, operation, posting_key, file_id, record_no, trace_number, \
                     debit_account, credit_account, amount_minor, currency, effective_date, fingerprint, detail, \
                     run_id, posted_at) \
                     SELECT $1, u.operation, u.posting_key, $2, u.record_no, u.trace_number, u.debit_account, \
                     u.credit_account, u.amount_minor, u.currency, u.effective_date, u.fingerprint, u.detail, $3, $4 \
                     FROM unnest($5::text[], $6::text[], $7::bigint[], $8::text[], $9::text[], $10::text[], $11::bigint[], \
                     $12::text[], $13::text[], $14::text[], $15::text[]) \
                     AS u(operation, posting_key, record_no, trace_number, debit_account, credit_account, amount_minor, \
                     currency, effective_date, fingerprint, detail) \
                     ON CONFLICT DO NOTHING RETURNING record_no",
                )
                .bind(run.tenant.as_str())
                .bind(run.file.file_id.as_str())
                .bind(run.run_id)
                .bind(posted_at.as_str())
                .bind(&operations)
                .bind(&keys)
                .bind(&record_nos)
                .bind(&traces)
                .bind(&debits)
                .bind(&credits)
                .bind(&amounts)
                .bind(&currencies)
                .bind(&dates)
                .bind(&fingerprints)
                .bind(&details)
                .fetch_all(&mut self.conn)
                .await
                .ctx("inserting postings")?;
                inserted.sort_unstable();
            }
            // 2. Classify the rest in bulk against what the index kept.
            let rest: Vec<&PostingRecord> = chunk
                .iter()
                .filter(|r| inserted.binary_search(&(r.record_no as i64)).is_err())
                .collect();
            // Keyed by (operation, posting key): a chunk may mix operations (several
            // Documents of different kinds in one file).
            let mut originals: Originals = HashMap::new();
            if !rest.is_empty() {
                let mut qb = QueryBuilder::<Postgres>::new(
                    "SELECT posting_id, operation, posting_key, run_id, fingerprint \
                     FROM postings WHERE tenant = ",
                );
                qb.push_bind(run.tenant.as_str());
                qb.push(" AND posting_key IN (");
                let mut sep = qb.separated(", ");
                for r in &rest {
                    sep.push_bind(r.posting_key.as_str());
                }
                qb.push(")");
                let rows = qb
                    .build()
                    .fetch_all(&mut self.conn)
                    .await
                    .ctx("reading the originals")?;
                for row in rows {
                    originals.insert(
                        (row.get("operation"), row.get("posting_key")),
                        Original {
                            posting_id: row.get("posting_id"),
                            run_id: row.get("run_id"),
                            fingerprint: row.get("fingerprint"),
                            detail: String::new(),
                        },
                    );
                }
                // Only conflicts need the originals' fields (to name what differs): fetch
                // those alone, so a re-upload of duplicates reads no detail at all.
                let conflicting = conflicting_ids(&rest, &originals);
                if !conflicting.is_empty() {
                    let mut qb = QueryBuilder::<Postgres>::new(
                        "SELECT posting_id, detail FROM postings WHERE posting_id IN (",
                    );
                    let mut sep = qb.separated(", ");
                    for id in &conflicting {
                        sep.push_bind(*id);
                    }
                    qb.push(")");
                    let rows = qb
                        .build()
                        .fetch_all(&mut self.conn)
                        .await
                        .ctx("reading the originals' fields")?;
                    let details: HashMap<i64, String> = rows
                        .iter()
                        .map(|r| (r.get("posting_id"), r.get("detail")))
                        .collect();
                    for o in originals.values_mut() {
                        if let Some(d) = details.get(&o.posting_id) {
                            o.detail = d.clone();
                        }
                    }
                }
            }
            // 3. Journal every record that did not post.
            let journal = classify(run, &rest, &originals);
            if !journal.is_empty() {
                let mut qb = QueryBuilder::<Postgres>::new(format!(
                    "INSERT INTO journal ({JOURNAL_COLUMNS}) "
                ));
                qb.push_values(&journal, |mut b, j| {
                    let seen = j.seen();
                    b.push_bind(run.run_id)
                        .push_bind(j.r.record_no as i64)
                        .push_bind(run.tenant.as_str())
                        .push_bind(j.outcome.as_str())
                        .push_bind(j.original.map(|o| o.posting_id))
                        .push_bind(seen.map(|r| r.operation))
                        .push_bind(seen.map(|r| r.posting_key.as_str()))
                        .push_bind(seen.and_then(|r| r.trace_number.as_deref()))
                        .push_bind(seen.map(|r| r.debit_account.as_str()))
                        .push_bind(seen.map(|r| r.credit_account.as_str()))
                        .push_bind(seen.map(|r| r.amount_minor))
                        .push_bind(seen.map(|r| r.currency.as_str()))
                        .push_bind(seen.map(|r| r.fingerprint.as_str()))
                        .push_bind(j.differences.as_deref())
                        .push_bind(j.reason.as_deref());
                });
                qb.build()
                    .execute(&mut self.conn)
                    .await
                    .ctx("journaling repeats")?;
            }
            let journaled: Vec<(u64, Outcome)> =
                journal.iter().map(|j| (j.r.record_no, j.outcome)).collect();
            tally(run, chunk, &journaled, &mut outcomes);
        }
        Ok(outcomes)
    }

    async fn commit_run(&mut self, run: OpenRun, finish: &RunFinish) -> Result<RunInfo> {
        let c = run.counts;
        let warnings = finish.findings.len() as i64;
        sqlx::query(
            "UPDATE runs SET status = 'completed', finished_at = $1, sha256 = $2, records = $3, posted = $4, \
             duplicates = $5, conflicts = $6, held = $7, posted_amount_minor = $8, errors = 0, warnings = $9 WHERE run_id = $10",
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
            "UPDATE files SET sha256 = $1 WHERE tenant = $2 AND file_id = $3 AND first_run_id = $4",
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
             WHERE f.tenant = $1 AND f.sha256 = $2 AND r.status = 'completed' AND r.conflicts = 0 AND r.held = 0 \
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
        sqlx::query("BEGIN ISOLATION LEVEL READ COMMITTED")
            .execute(&mut self.conn)
            .await
            .ctx("starting the ingest transaction")?;
        let res = async {
            let started = ts(&start.started_at);
            let run_id: i64 = sqlx::query_scalar(
                "INSERT INTO runs (tenant, file_id, sha256, format, source_name, started_at, status) \
                 VALUES ($1, $2, $3, $4, $5, $6, 'running') RETURNING run_id",
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
            let replayed = sqlx::query(&replay_sql("$1", "$2", "$3"))
            .bind(run_id)
            .bind(prior.first_run_id)
            .bind(&start.tenant)
            .execute(&mut self.conn)
            .await
            .ctx("replaying the earlier run's outcomes")?
            .rows_affected() as i64;
            sqlx::query(
                "UPDATE runs SET status = 'completed', finished_at = $1, records = $2, duplicates = $2, \
                 posted = 0, conflicts = 0, held = 0, posted_amount_minor = 0, errors = 0, warnings = 0 WHERE run_id = $3",
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
        sqlx::query("BEGIN")
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
             VALUES ($1, $2, $3, $4, $5, $6, $7, 'rejected', $8, $9, $10) RETURNING run_id",
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
        let sql = report_sql("$1", "$2");
        let mut stream = sqlx::query(&sql)
            .bind(run_id)
            .bind(tenant)
            .fetch(&mut self.conn);
        while let Some(r) = stream.try_next().await.ctx("reading the report")? {
            let rr = ReportRow {
                run_id: r.get("run_id"),
                file_id: r.get("file_id"),
                record_no: r.get("record_no"),
                outcome: r.get("outcome"),
                posting_key: r.get("posting_key"),
                trace_number: r.get("trace_number"),
                amount_minor: r.get("amount_minor"),
                currency: r.get("currency"),
                debit_account: r.get("debit_account"),
                credit_account: r.get("credit_account"),
                original_file_id: r.get("original_file_id"),
                original_record_no: r.get("original_record_no"),
                original_run_id: r.get("original_run_id"),
                original_posted_at: r.get("original_posted_at"),
                differences: r.get("differences"),
                reason: r.get("reason"),
            };
            if let Err(e) = row(rr) {
                return Ok(Err(e));
            }
        }
        Ok(Ok(()))
    }

    async fn run(&mut self, tenant: &str, run_id: i64) -> Result<Option<RunInfo>> {
        let row = sqlx::query(&format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE run_id = $1 AND tenant = $2"
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
                "SELECT {RUN_COLUMNS} FROM runs WHERE tenant = $1 AND file_id = $2 ORDER BY run_id DESC LIMIT $3"
            ),
            None => format!(
                "SELECT {RUN_COLUMNS} FROM runs WHERE tenant = $1 ORDER BY run_id DESC LIMIT $2"
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
             FROM findings f JOIN runs r ON r.run_id = f.run_id WHERE f.run_id = $1 AND r.tenant = $2 ORDER BY f.seq",
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
                    FROM postings p WHERE p.tenant = $1 AND ";
        let cond = match lookup {
            Lookup::TraceNumber(_) => "p.trace_number = $2",
            Lookup::Uetr(_) => "(p.posting_key = $2 OR p.posting_key LIKE $3 ESCAPE '\\')",
            Lookup::EndToEndId(_) => {
                "(p.detail LIKE $2 ESCAPE '\\' OR p.detail LIKE $3 ESCAPE '\\')"
            }
            Lookup::Source { .. } => "p.file_id = $2 AND p.record_no = $3",
            Lookup::PostingKey(_) => "p.posting_key = $2",
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
