//! The PostgreSQL store, on sqlx: the same tables, statements and outcomes as SQLite.
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

use super::backend::{Backend, Begin, Dialect};
use super::bulk;
use super::bulk::Forms;
use super::classify::{Original, Originals, TRACE_CANDIDATE_COLUMNS, TraceCandidate};
use super::sql::PROBE_EACH_KEY;
use super::store::{Arg, Cell, Row};
use super::{Context, LedgerError, OpenRun, ReportRow, Result, sql};
use crate::keys::PostingRecord;
use async_trait::async_trait;
use futures_util::TryStreamExt;
use sqlx::postgres::{PgArguments, PgConnectOptions, PgConnection, PgRow, Postgres};
use sqlx::query::Query;
use sqlx::{
    Column, ConnectOptions, Connection, Executor, QueryBuilder, Row as _, TypeInfo, ValueRef,
};
use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

/// Rows per statement: the journal's 15 binds a row stay under PostgreSQL's 65,535 limit
/// (postings go as arrays, whatever the count).
pub(crate) const ROWS_PER_STATEMENT: usize = 2_000;

/// Timeouts of a PostgreSQL session, with their defaults in the CLI.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PgTimeouts {
    /// Connecting (TCP, TLS, authentication).
    pub connect: Duration,
    /// Waiting for a lock held by another transaction (another worker's claim).
    pub lock: Duration,
    /// Any one statement.
    pub statement: Duration,
}

pub(crate) struct PgStore {
    conn: PgConnection,
    /// The server is a Citus coordinator.
    citus: bool,
    /// What every transaction sets first (`SET LOCAL …`; see [`PgStore::connect`]).
    settings: String,
}

fn bind<'q>(q: Query<'q, Postgres, PgArguments>, a: Arg<'q>) -> Query<'q, Postgres, PgArguments> {
    match a {
        Arg::Int(v) => q.bind(v),
        Arg::OptInt(v) => q.bind(v),
        Arg::Text(v) => q.bind(v),
        Arg::OptText(v) => q.bind(v),
        Arg::Bytes(v) => q.bind(v),
    }
}

fn push_bind<'q>(
    b: &mut sqlx::query_builder::Separated<'_, 'q, Postgres, &'static str>,
    a: Arg<'q>,
) {
    match a {
        Arg::Int(v) => b.push_bind(v),
        Arg::OptInt(v) => b.push_bind(v),
        Arg::Text(v) => b.push_bind(v),
        Arg::OptText(v) => b.push_bind(v),
        Arg::Bytes(v) => b.push_bind(v),
    };
}

/// The query parameters sqlx-postgres 0.8 reads from a URL (`options/parse.rs`), besides
/// `options[NAME]`. It ignores any other with a warning that logs the parameter's value,
/// which may be a password under a misspelt key (`pasword=`): such parameters are taken
/// out here and logged by their key alone.
const PG_URL_PARAMETERS: &[&str] = &[
    "sslmode",
    "ssl-mode",
    "sslrootcert",
    "ssl-root-cert",
    "ssl-ca",
    "sslcert",
    "ssl-cert",
    "sslkey",
    "ssl-key",
    "statement-cache-capacity",
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "application_name",
    "options",
];

/// `url` without the query parameters sqlx would ignore (see [`PG_URL_PARAMETERS`]).
fn known_parameters_only(url: &str) -> std::borrow::Cow<'_, str> {
    let Some((base, query)) = url.split_once('?') else {
        return url.into();
    };
    let mut kept = Vec::new();
    for kv in query.split('&').filter(|kv| !kv.is_empty()) {
        let raw = kv.split_once('=').map_or(kv, |(k, _)| k);
        let key = super::sqlite::percent_decode(&raw.replace('+', " "))
            .unwrap_or_else(|| raw.to_string());
        if PG_URL_PARAMETERS.contains(&key.as_str()) || key.starts_with("options[") {
            kept.push(kv);
        } else {
            tracing::warn!(%key, "ignoring unrecognized connect parameter (value not shown)");
        }
    }
    if kept.len() == query.split('&').filter(|kv| !kv.is_empty()).count() {
        return url.into();
    }
    match kept.as_slice() {
        [] => base.to_string().into(),
        _ => format!("{base}?{}", kept.join("&")).into(),
    }
}

/// The session options of `url` (see [`PgStore::connect`]).
fn connect_options(url: &str, timeouts: PgTimeouts) -> Result<PgConnectOptions> {
    let ms = |d: Duration| format!("{}ms", d.as_millis());
    Ok(PgConnectOptions::from_str(&known_parameters_only(url))
        .ctx("parsing the database URL")?
        .application_name("clearledger")
        .options([
            ("lock_timeout", ms(timeouts.lock)),
            ("statement_timeout", ms(timeouts.statement)),
            ("jit", "off".to_string()),
            ("work_mem", "64MB".to_string()),
        ])
        .log_statements(log::LevelFilter::Trace)
        .log_slow_statements(log::LevelFilter::Debug, Duration::from_secs(1)))
}

/// Connects within `timeout`.
async fn connect_with(opts: &PgConnectOptions, timeout: Duration) -> Result<PgConnection> {
    match tokio::time::timeout(timeout, PgConnection::connect_with(opts)).await {
        Ok(c) => c.ctx("connecting to PostgreSQL"),
        Err(_) => Err(LedgerError::ConnectTimeout { after: timeout }),
    }
}

/// Creates the database `url` names (`db migrate` on a server without it), connected with
/// the same credentials to the maintenance database `postgres` (`template1` where there
/// is none, as `createdb` does). A database another process created meanwhile
/// (`42P04`) is fine.
pub(crate) async fn create_database(url: &str, timeouts: PgTimeouts) -> Result<()> {
    let opts = connect_options(url, timeouts)?;
    // Without a name in the URL the server takes the user's.
    let name = opts
        .get_database()
        .unwrap_or(opts.get_username())
        .to_string();
    let maintenance = |db: &str| opts.clone().database(db);
    let mut conn = match connect_with(&maintenance("postgres"), timeouts.connect).await {
        Err(e) if e.is_missing_database() => {
            connect_with(&maintenance("template1"), timeouts.connect).await?
        }
        other => other?,
    };
    let sql = format!("CREATE DATABASE \"{}\"", name.replace('"', "\"\""));
    let res = conn.execute(sql.as_str()).await;
    if let Err(e) = conn.close().await {
        tracing::debug!(error = %e, "closing the PostgreSQL connection");
    }
    match res {
        Ok(_) => {
            tracing::info!(database = %name, "database created");
            Ok(())
        }
        Err(sqlx::Error::Database(d)) if d.code().as_deref() == Some("42P04") => Ok(()),
        Err(source) => Err(LedgerError::CreateDatabase {
            database: name,
            source,
        }),
    }
}

/// A row's values by their PostgreSQL type, read from the bytes as sent (binary for a
/// prepared statement, text for a simple query) instead of through `try_get`'s type check
/// and conversion per cell: a report of a million records reads 18 million cells (the
/// client's CPU for a 1 M-row report 1.8 -> 1.2-1.6 s). Text columns are UTF-8 in either
/// form; any type but integers, `bytea` and text goes through `try_get::<String>`, which
/// refuses it as before.
fn cells(r: &PgRow) -> Result<Row> {
    use sqlx::postgres::PgValueFormat;
    let mut out = Vec::with_capacity(r.len());
    for (i, col) in r.columns().iter().enumerate() {
        let raw = r.try_get_raw(i).ctx("reading a row")?;
        if raw.is_null() {
            out.push(Cell::Null);
            continue;
        }
        let column = || std::borrow::Cow::Owned(col.name().to_string());
        let bad = |_| LedgerError::Decode {
            column: column(),
            expected: "a value of the column's type",
        };
        let name = col.type_info().name();
        out.push(match name {
            "INT8" | "INT4" | "INT2" => {
                let b = raw.as_bytes().map_err(bad)?;
                let v = match raw.format() {
                    PgValueFormat::Text => std::str::from_utf8(b).ok().and_then(|t| t.parse().ok()),
                    PgValueFormat::Binary => match b.len() {
                        8 => b.try_into().ok().map(i64::from_be_bytes),
                        4 => b.try_into().ok().map(i32::from_be_bytes).map(i64::from),
                        2 => b.try_into().ok().map(i16::from_be_bytes).map(i64::from),
                        _ => None,
                    },
                };
                Cell::Int(v.ok_or_else(|| LedgerError::Decode {
                    column: column(),
                    expected: "an integer",
                })?)
            }
            "BYTEA" => Cell::Bytes(r.try_get::<Vec<u8>, _>(i).ctx("reading a row")?),
            "TEXT" | "VARCHAR" | "NAME" | "UNKNOWN" => {
                Cell::Text(raw.as_str().map_err(bad)?.to_owned())
            }
            _ => Cell::Text(r.try_get::<String, _>(i).ctx("reading a row")?),
        });
    }
    Ok(Row(out))
}

impl PgStore {
    /// Connects to the server named by `url` (`postgres://user:password@host:port/db?sslmode=…`;
    /// the password may come from `PGPASSWORD`; `sslmode=require|verify-ca|verify-full` use
    /// rustls). Session settings: `lock_timeout` and `statement_timeout` from `timeouts`,
    /// `application_name=clearledger`, `jit=off` (our statements are short or index-driven;
    /// JIT compiled a 1 M-row report's query for a third of a second, and gains nothing back),
    /// `work_mem=64MB` (the report's sort of a 1 M-record run spills less).
    ///
    /// The two timeouts are set again at the start of every transaction (`SET LOCAL`): on
    /// Citus, the coordinator sends a transaction's `SET LOCAL`s to the workers it opens
    /// (`citus.propagate_set_commands = 'local'`), where a startup option never arrives. A
    /// Citus worker is refused ([`LedgerError::CitusWorker`]).
    pub(crate) async fn connect(url: &str, timeouts: PgTimeouts) -> Result<Self> {
        let mut conn = connect_with(&connect_options(url, timeouts)?, timeouts.connect).await?;
        let group = match super::citus::node_group(&mut conn).await {
            Ok(g) => g,
            Err(e) => return Err(super::citus::close_refused(conn, e).await),
        };
        let citus = match super::citus::refuse_worker(group) {
            Ok(c) => c,
            Err(e) => return Err(super::citus::close_refused(conn, e).await),
        };
        let ms = |d: Duration| d.as_millis();
        let settings = format!(
            "{}SET LOCAL lock_timeout = '{}ms'; SET LOCAL statement_timeout = '{}ms'",
            if citus {
                "SET LOCAL citus.propagate_set_commands = 'local'; "
            } else {
                ""
            },
            ms(timeouts.lock),
            ms(timeouts.statement)
        );
        Ok(PgStore {
            conn,
            citus,
            settings,
        })
    }

    /// `begin` (a `BEGIN …`) and the transaction's settings, in one round trip (two on
    /// Citus, which sends a `SET`'s whole query text to the workers: `BEGIN` included, it
    /// would warn there that a transaction is in progress); nothing left open when it fails.
    async fn begin_with_settings(&mut self, begin: &str) -> Result<()> {
        let res = match self.citus {
            false => {
                let sql = format!("{begin}; {}", self.settings);
                self.conn.execute(sqlx::raw_sql(&sql)).await.map(|_| ())
            }
            true => match self.conn.execute(sqlx::raw_sql(begin)).await {
                Ok(_) => {
                    let settings = sqlx::raw_sql(&self.settings);
                    self.conn.execute(settings).await.map(|_| ())
                }
                Err(e) => Err(e),
            },
        };
        if let Err(e) = res {
            let _ = self.execute("ROLLBACK", &[]).await;
            return Err(e).ctx("starting a transaction");
        }
        Ok(())
    }
}

#[async_trait]
impl Backend for PgStore {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    async fn needs_distribution(&mut self) -> Result<bool> {
        match self.citus {
            true => super::citus::needs_distribution(&mut self.conn).await,
            false => Ok(false),
        }
    }

    async fn distribute(&mut self) -> Result<usize> {
        match self.citus {
            true => super::citus::distribute(&mut self.conn).await,
            false => Ok(0),
        }
    }

    fn migrator(&self) -> &'static sqlx::migrate::Migrator {
        static POSTGRES: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");
        &POSTGRES
    }

    fn migrations_table_ddl(&self) -> &'static str {
        "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, \
         description TEXT NOT NULL, checksum BYTEA NOT NULL, applied_at TEXT NOT NULL)"
    }

    fn chunk_rows(&self) -> usize {
        ROWS_PER_STATEMENT
    }

    async fn commit(&mut self) -> Result<()> {
        self.execute("COMMIT", &[]).await.map(|_| ())
    }

    async fn rollback(&mut self) -> Result<()> {
        self.execute("ROLLBACK", &[]).await.map(|_| ())
    }

    async fn lock_name(&mut self, name: &str) -> Result<()> {
        self.query(
            "SELECT 1 FROM pg_advisory_xact_lock(hashtextextended($1, 0))",
            &[Arg::Text(name)],
        )
        .await
        .map(|_| ())
    }

    async fn fault_drop(&mut self, point: &str) {
        if crate::fault::armed(point) {
            let _ = self
                .execute("SELECT pg_terminate_backend(pg_backend_pid())", &[])
                .await;
        }
    }

    async fn analyze(&mut self) -> Result<()> {
        self.execute("ANALYZE postings, journal", &[])
            .await
            .map(|_| ())
    }

    /// Sends Terminate and closes the socket; a failure (the server already gone) changes
    /// nothing for the caller.
    async fn close(self: Box<Self>) {
        if let Err(e) = self.conn.close().await {
            tracing::debug!(error = %e, "closing the PostgreSQL connection");
        }
    }

    async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64> {
        let q = args.iter().fold(sqlx::query(sql), |q, a| bind(q, *a));
        let done = q.execute(&mut self.conn).await.ctx("running a statement")?;
        Ok(done.rows_affected())
    }

    async fn query(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>> {
        let q = args.iter().fold(sqlx::query(sql), |q, a| bind(q, *a));
        let rows = q.fetch_all(&mut self.conn).await.ctx("running a query")?;
        rows.iter().map(cells).collect()
    }

    /// Multi-row `VALUES`, [`ROWS_PER_STATEMENT`] rows a statement.
    async fn insert_values(
        &mut self,
        insert: &str,
        width: usize,
        values: &[Arg<'_>],
        context: &'static str,
    ) -> Result<()> {
        for chunk in values.chunks(ROWS_PER_STATEMENT * width) {
            let mut qb = QueryBuilder::<Postgres>::new(format!("{insert} "));
            qb.push_values(chunk.chunks_exact(width), |mut b, row| {
                for a in row {
                    push_bind(&mut b, *a);
                }
            });
            qb.build().execute(&mut self.conn).await.ctx(context)?;
        }
        Ok(())
    }

    async fn script(&mut self, sql: &str) -> Result<()> {
        self.conn
            .execute(sqlx::raw_sql(sql))
            .await
            .map(|_| ())
            .ctx("applying a migration")
    }

    async fn begin(&mut self, why: Begin) -> Result<()> {
        match why {
            Begin::Write | Begin::Exclusive => {
                self.begin_with_settings("BEGIN ISOLATION LEVEL READ COMMITTED")
                    .await?;
                // Writers share the lock; an exclusive transaction has it alone. Released at
                // COMMIT or ROLLBACK; one not had within lock_timeout leaves no transaction.
                let lock = match why {
                    Begin::Exclusive => "SELECT pg_advisory_xact_lock(7265736963)",
                    _ => "SELECT pg_advisory_xact_lock_shared(7265736963)",
                };
                if let Err(e) = self.execute(lock, &[]).await {
                    let _ = self.execute("ROLLBACK", &[]).await;
                    return Err(e);
                }
            }
            Begin::Snapshot => {
                self.begin_with_settings("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    .await?;
            }
            Begin::Migrate => {
                self.begin_with_settings("BEGIN").await?;
                // Serialise concurrent migrators; released at COMMIT or ROLLBACK. A lock not
                // had within lock_timeout leaves no transaction open behind it.
                let locked = self
                    .execute("SELECT pg_advisory_xact_lock(7265736962)", &[])
                    .await;
                if let Err(e) = locked {
                    let _ = self.execute("ROLLBACK", &[]).await;
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// One statement per chunk, the rows as arrays through `unnest`: a handful of binds
    /// instead of 15 per row, the same ON CONFLICT arbitration. Columns borrowed from the
    /// records: no copy of the text per row.
    async fn insert_postings(
        &mut self,
        run: &OpenRun,
        chunk: &[&PostingRecord],
    ) -> Result<Vec<u64>> {
        fn col<'a>(
            chunk: &[&'a PostingRecord],
            f: impl Fn(&'a PostingRecord) -> &'a str,
        ) -> Vec<&'a str> {
            chunk.iter().map(|r| f(r)).collect()
        }
        let posted_at = super::classify::ts(&run.started_at);
        let operations = col(chunk, |r| r.operation);
        let keys = col(chunk, |r| &r.posting_key);
        let record_nos: Vec<i64> = chunk.iter().map(|r| r.record_no as i64).collect();
        let traces: Vec<Option<&str>> = chunk.iter().map(|r| r.trace_number.as_deref()).collect();
        let debits = col(chunk, |r| &r.debit_account);
        let credits = col(chunk, |r| &r.credit_account);
        let amounts: Vec<i64> = chunk.iter().map(|r| r.amount_minor).collect();
        let currencies = col(chunk, |r| &r.currency);
        let dates: Vec<Option<String>> = chunk
            .iter()
            .map(|r| r.effective_date.map(|d| d.to_string()))
            .collect();
        let fingerprints: Vec<&[u8]> = chunk.iter().map(|r| &r.digest[..]).collect();
        let details: Vec<&[u8]> = chunk.iter().map(|r| r.detail.as_slice()).collect();
        let mut inserted: Vec<i64> = sqlx::query_scalar(
            &format!(
            "INSERT INTO postings ({}) \
             SELECT $1, u.operation, u.posting_key, $2, u.record_no, u.trace_number, u.debit_account, \
             u.credit_account, u.amount_minor, u.currency, u.effective_date, u.fingerprint, u.detail, $3, $4 \
             FROM unnest($5::text[], $6::text[], $7::bigint[], $8::text[], $9::text[], $10::text[], $11::bigint[], \
             $12::text[], $13::text[], $14::bytea[], $15::bytea[]) \
             AS u(operation, posting_key, record_no, trace_number, debit_account, credit_account, amount_minor, \
             currency, effective_date, fingerprint, detail) \
             ON CONFLICT DO NOTHING RETURNING record_no",
            super::sql::POSTING_COLUMNS
        ),
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
        Ok(inserted.into_iter().map(|n| n as u64).collect())
    }

    /// [`Backend::insert_new`]: a statement a chunk of [`ROWS_PER_STATEMENT`] rows,
    /// each column one array (a fixed handful of binds, whatever the count); the values
    /// `insert` returns for the rows it inserted.
    async fn insert_new(
        &mut self,
        insert: &Forms<'_>,
        fixed: &[Arg<'_>],
        columns: &[bulk::Column<'_>],
        _key: usize,
        context: &'static str,
    ) -> Result<Vec<i64>> {
        let rows = columns.first().map_or(0, bulk::Column::len);
        let mut inserted = Vec::new();
        for from in (0..rows).step_by(ROWS_PER_STATEMENT) {
            let to = (from + ROWS_PER_STATEMENT).min(rows);
            let q = fixed
                .iter()
                .fold(sqlx::query(insert.unnest), |q, a| bind(q, *a));
            let q = columns.iter().fold(q, |q, c| match c {
                bulk::Column::Int(v) => q.bind(&v[from..to]),
                bulk::Column::Text(v) => q.bind(&v[from..to]),
            });
            for r in q.fetch_all(&mut self.conn).await.ctx(context)? {
                inserted.push(r.try_get::<i64, _>(0).ctx(context)?);
            }
        }
        Ok(inserted)
    }

    /// [`Backend::rows_by_keys`]: one statement, the keys one `text[]` joined
    /// through `unnest`.
    async fn rows_by_keys(
        &mut self,
        select: &Forms<'_>,
        fixed: &[Arg<'_>],
        keys: &[&str],
    ) -> Result<Vec<Row>> {
        let q = fixed
            .iter()
            .fold(sqlx::query(select.unnest), |q, a| bind(q, *a));
        let rows = q
            .bind(keys)
            .fetch_all(&mut self.conn)
            .await
            .ctx("running a query")?;
        rows.iter().map(cells).collect()
    }

    /// One statement for the chunk's keys, joined from arrays through `unnest`: a fixed
    /// handful of binds, one probe of the natural-key index per key.
    async fn originals(&mut self, tenant: &str, keys: &[(&str, &str)]) -> Result<Originals> {
        let operations: Vec<&str> = keys.iter().map(|k| k.0).collect();
        let posting_keys: Vec<&str> = keys.iter().map(|k| k.1).collect();
        let rows = sqlx::query(&format!(
            "SELECT p.posting_id, p.operation, p.posting_key, p.run_id, p.fingerprint, p.file_id \
             FROM unnest($2::text[], $3::text[]) AS k(operation, posting_key) \
             CROSS JOIN LATERAL (SELECT * FROM postings p WHERE p.tenant = $1 \
             AND p.operation = k.operation AND p.posting_key = k.posting_key {PROBE_EACH_KEY}) p"
        ))
        .bind(tenant)
        .bind(&operations)
        .bind(&posting_keys)
        .fetch_all(&mut self.conn)
        .await
        .ctx("reading the originals")?;
        let mut originals = Originals::new();
        for row in rows {
            originals.insert(
                (row.get("operation"), row.get("posting_key")),
                Original {
                    posting_id: row.get("posting_id"),
                    run_id: row.get("run_id"),
                    fingerprint: hex::encode(
                        row.try_get::<Vec<u8>, _>("fingerprint")
                            .ctx("reading the originals")?,
                    ),
                    file_id: row.get("file_id"),
                    detail: String::new(),
                },
            );
        }
        Ok(originals)
    }

    /// One statement for the chunk's (trace number, effective date) pairs.
    async fn by_trace(
        &mut self,
        tenant: &str,
        operation: &str,
        keys: &[(&str, &str)],
    ) -> Result<Vec<TraceCandidate>> {
        let traces: Vec<&str> = keys.iter().map(|k| k.0).collect();
        let dates: Vec<&str> = keys.iter().map(|k| k.1).collect();
        let cols: Vec<String> = TRACE_CANDIDATE_COLUMNS
            .split(", ")
            .map(|c| format!("p.{c}"))
            .collect();
        let rows = sqlx::query(&format!(
            "SELECT DISTINCT {} FROM unnest($3::text[], $4::text[]) AS k(trace_number, effective_date) \
             CROSS JOIN LATERAL (SELECT * FROM postings p WHERE p.tenant = $1 \
             AND p.trace_number = k.trace_number AND p.effective_date = k.effective_date \
             AND p.operation = $2 AND {} {PROBE_EACH_KEY}) p",
            cols.join(", "),
            sql::trace_indexed("p")
        ))
        .bind(tenant)
        .bind(operation)
        .bind(&traces)
        .bind(&dates)
        .fetch_all(&mut self.conn)
        .await
        .ctx("reading postings by trace number")?;
        rows.iter()
            .map(|row| {
                let posting_id: i64 = row.get("posting_id");
                Ok(TraceCandidate {
                    original: Original {
                        posting_id,
                        run_id: row.get("run_id"),
                        fingerprint: hex::encode(
                            row.try_get::<Vec<u8>, _>("fingerprint")
                                .ctx("reading the originals")?,
                        ),
                        detail: super::detail_json(
                            posting_id,
                            &row.try_get::<Vec<u8>, _>("detail")
                                .ctx("reading postings by trace number")?,
                        )?,
                        file_id: row.get("file_id"),
                    },
                    trace_number: row.get("trace_number"),
                    record_no: row.get("record_no"),
                    effective_date: row
                        .get::<Option<String>, _>("effective_date")
                        .and_then(|d| d.parse().ok()),
                })
            })
            .collect()
    }

    async fn details(&mut self, tenant: &str, ids: &[i64]) -> Result<HashMap<i64, String>> {
        let rows = sqlx::query(
            "SELECT posting_id, detail FROM postings WHERE tenant = $1 AND posting_id = ANY($2)",
        )
        .bind(tenant)
        .bind(ids)
        .fetch_all(&mut self.conn)
        .await
        .ctx("reading the originals' fields")?;
        rows.iter()
            .map(|r| {
                let id: i64 = r.get("posting_id");
                let d: Vec<u8> = r.try_get("detail").ctx("reading the originals' fields")?;
                Ok((id, super::detail_json(id, &d)?))
            })
            .collect()
    }

    async fn each_row(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        f: &mut (dyn for<'r> FnMut(&'r Row) -> Result<()> + Send),
    ) -> Result<()> {
        let q = args.iter().fold(sqlx::query(sql), |q, a| bind(q, *a));
        let mut stream = q.fetch(&mut self.conn);
        while let Some(r) = stream.try_next().await.ctx("reading rows")? {
            f(&cells(&r)?)?;
        }
        Ok(())
    }

    async fn report_rows(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        row: &mut (dyn for<'r> FnMut(&'r ReportRow) -> std::io::Result<()> + Send),
    ) -> Result<std::io::Result<()>> {
        let q = args.iter().fold(sqlx::query(sql), |q, a| bind(q, *a));
        let mut stream = q.fetch(&mut self.conn);
        while let Some(r) = stream.try_next().await.ctx("reading the report")? {
            let rr = super::sql::report_row(cells(&r)?)?;
            if let Err(e) = row(&rr) {
                return Ok(Err(e));
            }
        }
        Ok(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::known_parameters_only;

    #[test]
    fn parameters_sqlx_would_ignore_are_taken_out() {
        let table = [
            ("postgres://u@h/d", "postgres://u@h/d"),
            (
                "postgres://u@h/d?sslmode=require",
                "postgres://u@h/d?sslmode=require",
            ),
            ("postgres://u@h/d?pasword=s3cret", "postgres://u@h/d"),
            (
                "postgres://u@h/d?sslmode=require&pasword=s3cret&options[search_path]=x",
                "postgres://u@h/d?sslmode=require&options[search_path]=x",
            ),
            (
                "postgres://u@h/d?options%5Bsearch_path%5D=x&connect_timeout=5",
                "postgres://u@h/d?options%5Bsearch_path%5D=x",
            ),
            (
                "postgres://u@h/d?password=p&",
                "postgres://u@h/d?password=p&",
            ),
        ];
        for (url, want) in table {
            assert_eq!(known_parameters_only(url), want, "{url}");
        }
    }
}
