//! What a backend must do, and nothing more: run a statement, read rows, insert many
//! rows, open and end the run's transaction, and the few bulk paths whose fastest form
//! differs by database. The protocol on top (`protocol.rs`) and its SQL (`sql.rs`) are
//! written once.
//!
//! Statements are written once with PostgreSQL's `$1, $2 …` placeholders; the SQLite
//! store rewrites them to SQLite's numbered `?1, ?2 …` (same numbers, same binds).

use super::classify::{Originals, TraceCandidate};
use super::{OpenRun, ReportRow, Result, postgres::PgStore, sqlite::SqliteStore};
use crate::keys::PostingRecord;
use std::collections::HashMap;

/// A value bound to a statement. Nulls carry their type: PostgreSQL needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg<'a> {
    Int(i64),
    OptInt(Option<i64>),
    Text(&'a str),
    OptText(Option<&'a str>),
    Bytes(&'a [u8]),
}

impl From<i64> for Arg<'_> {
    fn from(v: i64) -> Self {
        Arg::Int(v)
    }
}
impl From<Option<i64>> for Arg<'_> {
    fn from(v: Option<i64>) -> Self {
        Arg::OptInt(v)
    }
}
impl<'a> From<&'a str> for Arg<'a> {
    fn from(v: &'a str) -> Self {
        Arg::Text(v)
    }
}
impl<'a> From<&'a String> for Arg<'a> {
    fn from(v: &'a String) -> Self {
        Arg::Text(v)
    }
}
impl<'a> From<Option<&'a str>> for Arg<'a> {
    fn from(v: Option<&'a str>) -> Self {
        Arg::OptText(v)
    }
}
impl<'a> From<&'a [u8]> for Arg<'a> {
    fn from(v: &'a [u8]) -> Self {
        Arg::Bytes(v)
    }
}

/// `[Arg::from(a), Arg::from(b), …]`
macro_rules! args {
    ($($v:expr),* $(,)?) => { [$($crate::ledger::store::Arg::from($v)),*] };
}
pub(crate) use args;

/// One value read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Text(String),
    Bytes(Vec<u8>),
}

/// One row read back, decoded by column index (the order of the SELECT).
#[derive(Debug, Clone, Default)]
pub(crate) struct Row(pub Vec<Cell>);

impl Row {
    fn cell(&self, i: usize) -> Result<&Cell> {
        self.0.get(i).ok_or(super::LedgerError::Decode {
            column: i,
            expected: "a column",
        })
    }
    pub fn int(&self, i: usize) -> Result<i64> {
        match self.cell(i)? {
            Cell::Int(v) => Ok(*v),
            _ => Err(super::LedgerError::Decode {
                column: i,
                expected: "an integer",
            }),
        }
    }
    pub fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        match self.cell(i)? {
            Cell::Null => Ok(None),
            _ => self.int(i).map(Some),
        }
    }
    pub fn text(&self, i: usize) -> Result<String> {
        match self.cell(i)? {
            Cell::Text(v) => Ok(v.clone()),
            _ => Err(super::LedgerError::Decode {
                column: i,
                expected: "text",
            }),
        }
    }
    /// [`Self::text`], moved out of the row (left empty): no copy of a row read once.
    pub fn take_text(&mut self, i: usize) -> Result<String> {
        match self.0.get_mut(i) {
            Some(Cell::Text(v)) => Ok(std::mem::take(v)),
            _ => self.text(i),
        }
    }
    /// [`Self::opt_text`], moved out of the row.
    pub fn take_opt_text(&mut self, i: usize) -> Result<Option<String>> {
        match self.cell(i)? {
            Cell::Null => Ok(None),
            _ => self.take_text(i).map(Some),
        }
    }
    pub fn opt_text(&self, i: usize) -> Result<Option<String>> {
        match self.cell(i)? {
            Cell::Null => Ok(None),
            _ => self.text(i).map(Some),
        }
    }
    /// A posting's stored fields (`postings.detail`): a BLOB in the compact form, or the
    /// JSON text of rows written before it (SQLite keeps both as stored).
    pub fn detail(&self, i: usize) -> Result<&[u8]> {
        match self.cell(i)? {
            Cell::Bytes(v) => Ok(v),
            Cell::Text(v) => Ok(v.as_bytes()),
            _ => Err(super::LedgerError::Decode {
                column: i,
                expected: "a posting's detail",
            }),
        }
    }
    /// A posting's fingerprint as hex: stored as 32 bytes (migration 0013), or as the hex
    /// text of rows written before it.
    pub fn fingerprint(&self, i: usize) -> Result<String> {
        match self.cell(i)? {
            Cell::Bytes(v) => Ok(hex::encode(v)),
            Cell::Text(v) => Ok(v.clone()),
            _ => Err(super::LedgerError::Decode {
                column: i,
                expected: "a fingerprint",
            }),
        }
    }
    pub fn bytes(&self, i: usize) -> Result<Vec<u8>> {
        match self.cell(i)? {
            Cell::Bytes(v) => Ok(v.clone()),
            _ => Err(super::LedgerError::Decode {
                column: i,
                expected: "bytes",
            }),
        }
    }
}

/// Why a transaction is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Begin {
    /// A run or a rejection: takes what the backend needs to serialise writers early.
    Write,
    /// Applying migrations: also serialises concurrent migrators.
    Migrate,
}

/// The backend chosen by the URL.
pub(crate) enum Store {
    Sqlite(SqliteStore),
    Postgres(PgStore),
}

macro_rules! delegate {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            Store::Sqlite($s) => $e,
            Store::Postgres($s) => $e,
        }
    };
}

impl Store {
    /// The embedded migrations of this backend (`migrations/sqlite` or `migrations/postgres`).
    pub fn migrator(&self) -> &'static sqlx::migrate::Migrator {
        static SQLITE: sqlx::migrate::Migrator = sqlx::migrate!("migrations/sqlite");
        static POSTGRES: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");
        match self {
            Store::Sqlite(_) => &SQLITE,
            Store::Postgres(_) => &POSTGRES,
        }
    }
    /// The `schema_migrations` table in the backend's types.
    pub fn migrations_table_ddl(&self) -> &'static str {
        match self {
            Store::Sqlite(_) => {
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, \
                 description TEXT NOT NULL, checksum BLOB NOT NULL, applied_at TEXT NOT NULL)"
            }
            Store::Postgres(_) => {
                "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, \
                 description TEXT NOT NULL, checksum BYTEA NOT NULL, applied_at TEXT NOT NULL)"
            }
        }
    }
    /// Records per call of the bulk paths.
    pub fn chunk_rows(&self) -> usize {
        match self {
            // One prepared statement per record: no reason to cut.
            Store::Sqlite(_) => usize::MAX,
            Store::Postgres(_) => super::postgres::ROWS_PER_STATEMENT,
        }
    }
    /// Serialises, until the transaction ends, every transaction that takes the same
    /// `name`: PostgreSQL's transaction-scoped advisory lock (bounded by `lock_timeout`).
    /// SQLite serialises every write transaction already: nothing to do.
    pub async fn lock_name(&mut self, name: &str) -> Result<()> {
        match self {
            Store::Sqlite(_) => Ok(()),
            Store::Postgres(s) => s
                .query(
                    "SELECT 1 FROM pg_advisory_xact_lock(hashtextextended($1, 0))",
                    &[Arg::Text(name)],
                )
                .await
                .map(|_| ()),
        }
    }
    /// Ends the session: PostgreSQL gets its Terminate message (without it the server logs
    /// every invocation as a connection reset); SQLite closes the file.
    pub async fn close(self) {
        match self {
            Store::Sqlite(s) => drop(s),
            Store::Postgres(s) => s.close().await,
        }
    }
    /// Test fault (see `crate::fault`): when `point` is armed, the PostgreSQL server ends
    /// this session; the next statement fails as after a lost connection.
    pub async fn fault_drop(&mut self, point: &str) {
        if let Store::Postgres(s) = self
            && crate::fault::armed(point)
        {
            let _ = s
                .execute("SELECT pg_terminate_backend(pg_backend_pid())", &[])
                .await;
        }
    }
    /// Whether the connection enforces foreign keys (SQLite's `PRAGMA foreign_keys`).
    pub async fn foreign_keys_enforced(&mut self) -> Result<bool> {
        match self {
            Store::Sqlite(s) => Ok(s
                .query("PRAGMA foreign_keys", &[])
                .await?
                .first()
                .map(|r| r.int(0))
                .transpose()?
                == Some(1)),
            Store::Postgres(_) => Ok(true),
        }
    }
    /// A consistent copy of the database in the new file `path` (SQLite's `VACUUM INTO`).
    pub async fn vacuum_into(&mut self, path: &str) -> Result<()> {
        match self {
            Store::Sqlite(s) => s
                .execute("VACUUM INTO $1", &[Arg::Text(path)])
                .await
                .map(|_| ()),
            Store::Postgres(_) => Err(super::LedgerError::BackupUnsupported),
        }
    }
    /// Refreshes the planner's statistics of the tables a run writes (PostgreSQL).
    pub async fn analyze(&mut self) -> Result<()> {
        match self {
            Store::Sqlite(_) => Ok(()),
            Store::Postgres(s) => s
                .execute("ANALYZE postings, journal", &[])
                .await
                .map(|_| ()),
        }
    }
    pub async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64> {
        delegate!(self, s => s.execute(sql, args).await)
    }
    pub async fn query(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>> {
        delegate!(self, s => s.query(sql, args).await)
    }
    pub async fn query_opt(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Option<Row>> {
        Ok(self.query(sql, args).await?.into_iter().next())
    }
    pub async fn query_one(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Row> {
        self.query_opt(sql, args)
            .await?
            .ok_or(super::LedgerError::NoRow)
    }
    /// Inserts every row of `rows` with `insert` (`INSERT INTO t (c1, …, cN)`).
    pub async fn insert_rows<const N: usize>(
        &mut self,
        insert: &str,
        rows: &[[Arg<'_>; N]],
        context: &'static str,
    ) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        delegate!(self, s => s.insert_rows(insert, rows, context).await)
    }
    /// A script of several statements (a migration).
    pub async fn script(&mut self, sql: &str) -> Result<()> {
        delegate!(self, s => s.script(sql).await)
    }
    pub async fn begin(&mut self, why: Begin) -> Result<()> {
        delegate!(self, s => s.begin(why).await)
    }
    /// Commits (SQLite: a migration's transaction checks its foreign keys first, and turns
    /// them on again after: `sqlite.rs`).
    pub async fn commit(&mut self) -> Result<()> {
        match self {
            Store::Sqlite(s) => s.commit().await,
            Store::Postgres(s) => s.execute("COMMIT", &[]).await.map(|_| ()),
        }
    }
    pub async fn rollback(&mut self) -> Result<()> {
        match self {
            Store::Sqlite(s) => s.rollback().await,
            Store::Postgres(s) => s.execute("ROLLBACK", &[]).await.map(|_| ()),
        }
    }
    /// Inserts the chunk's postings, the unique indexes deciding (`ON CONFLICT DO
    /// NOTHING`); returns the record numbers that inserted, ascending.
    pub async fn insert_postings(
        &mut self,
        run: &OpenRun,
        chunk: &[&PostingRecord],
    ) -> Result<Vec<u64>> {
        delegate!(self, s => s.insert_postings(run, chunk).await)
    }
    /// The postings under these `(operation, key)`s, by (operation, key); their detail is
    /// not read.
    pub async fn originals(&mut self, tenant: &str, keys: &[(&str, &str)]) -> Result<Originals> {
        delegate!(self, s => s.originals(tenant, keys).await)
    }
    /// The postings of `operation` with one of these (trace number, effective date)
    /// pairs, detail included.
    pub async fn by_trace(
        &mut self,
        tenant: &str,
        operation: &str,
        keys: &[(&str, &str)],
    ) -> Result<Vec<TraceCandidate>> {
        delegate!(self, s => s.by_trace(tenant, operation, keys).await)
    }
    /// The stored detail of each posting in `ids`.
    pub async fn details(&mut self, ids: &[i64]) -> Result<HashMap<i64, String>> {
        delegate!(self, s => s.details(ids).await)
    }
    /// Streams the rows of `sql` to `f`, one at a time (a large read in bounded memory);
    /// the first error `f` returns stops the read and is returned.
    pub async fn each_row(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        f: &mut (dyn FnMut(&Row) -> Result<()> + Send),
    ) -> Result<()> {
        delegate!(self, s => s.each_row(sql, args, f).await)
    }
    /// Streams the rows of the report query `sql` (binds: run id, tenant) to `row`.
    pub async fn report_rows(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        row: &mut (dyn FnMut(&ReportRow) -> std::io::Result<()> + Send),
    ) -> Result<std::io::Result<()>> {
        delegate!(self, s => s.report_rows(sql, args, row).await)
    }
}
