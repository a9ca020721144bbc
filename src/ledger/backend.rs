//! The two backends behind one trait. [`Backend`] is everything the ledger asks of a
//! database — run a statement, read rows, insert many rows, open and end the run's
//! transaction, and the few bulk paths whose fastest form differs by database — declared
//! once here and implemented once by each of `sqlite.rs` and `postgres.rs`. [`Store`] is
//! the one the URL chose; the protocol on top (`protocol.rs`) and its SQL (`sql.rs`) are
//! written once against it.
//!
//! The trait's futures are boxed (`async_trait`) so that a `Store` holds either backend
//! as a trait object: one allocation per call, against a database round trip or a bulk
//! insert of thousands of rows, and no generic parameter on every type that holds a
//! ledger.

use super::bulk::{Column, Forms};
use super::classify::{Originals, TraceCandidate};
use super::store::{Arg, Row};
use super::{LedgerError, OpenRun, ReportRow, Result};
use crate::keys::PostingRecord;
use async_trait::async_trait;
use std::collections::HashMap;
use std::ops::{Deref, DerefMut};

/// Why a transaction is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Begin {
    /// A run or a rejection: takes what the backend needs to serialise writers early.
    Write,
    /// A write transaction no other write transaction runs beside: what it reads stays as
    /// it read it until it commits (a reconciliation posting corrections from what it read).
    /// SQLite's write lock is that already; on PostgreSQL every `Write` holds a shared
    /// advisory lock this one takes exclusively, so it waits for the writers in flight and
    /// new ones wait for it.
    Exclusive,
    /// Applying migrations: also serialises concurrent migrators.
    Migrate,
    /// Reads only, all of them from one state of the ledger whatever commits meanwhile (a
    /// dry-run reconciliation reading its rows twice); writers are not held up.
    Snapshot,
}

/// Which backend a database URL names, and so which SQL dialect it speaks (a feature
/// writes a few statements in two forms: a substring test, a session-level lock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// `sqlite:…`, through rusqlite.
    Sqlite,
    /// `postgres://…` or `postgresql://…`, through sqlx.
    Postgres,
}

impl Dialect {
    /// `sqlite:…` or `postgres://…` / `postgresql://…`; `None` for any other scheme (a
    /// PostgreSQL URL without `//` would reach the server with its userinfo taken for a
    /// database name, and an error naming it, password included).
    pub(crate) fn of_url(url: &str) -> Option<Dialect> {
        if url.starts_with("sqlite:") {
            Some(Dialect::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Some(Dialect::Postgres)
        } else {
            None
        }
    }

    /// `column` compared in a query meant to scan the table: SQLite (no statistics) would
    /// walk an index that leads with it and fetch each row apart, so there the column is
    /// spelt `column || ''`, which no index serves; PostgreSQL's planner chooses by its
    /// statistics, and a distributed PostgreSQL sends a statement to the tenant's node
    /// only when `tenant` is compared as itself.
    pub(crate) fn scanned(self, column: &str) -> String {
        match self {
            Dialect::Sqlite => format!("{column} || ''"),
            Dialect::Postgres => column.to_string(),
        }
    }
}

/// What a ledger database does. Statements are written with PostgreSQL's `$1, $2 …`
/// placeholders; SQLite rewrites them to its own numbered form.
#[async_trait]
pub(crate) trait Backend: Send {
    /// The dialect of this backend's SQL.
    fn dialect(&self) -> Dialect;
    /// Whether any table is yet to be distributed (a Citus coordinator; never elsewhere).
    async fn needs_distribution(&mut self) -> Result<bool> {
        Ok(false)
    }
    /// Distributes the tables not distributed yet, inside the open transaction (a Citus
    /// coordinator: `citus::distribute`; nothing elsewhere); how many.
    async fn distribute(&mut self) -> Result<usize> {
        Ok(0)
    }
    /// The embedded migrations of this backend (`migrations/sqlite` or `migrations/postgres`).
    fn migrator(&self) -> &'static sqlx::migrate::Migrator;
    /// The `schema_migrations` table in the backend's types.
    fn migrations_table_ddl(&self) -> &'static str;
    /// Records per call of the bulk paths.
    fn chunk_rows(&self) -> usize;
    /// Ends the session: PostgreSQL gets its Terminate message (without it the server logs
    /// every invocation as a connection reset); SQLite closes the file.
    async fn close(self: Box<Self>);

    /// Runs one statement; the number of rows it changed.
    async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64>;
    /// Runs one query; all its rows.
    async fn query(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>>;
    /// Inserts rows of `width` values each, laid end to end in `values`, with `insert`
    /// (`INSERT INTO t (c1, …, cN)`).
    async fn insert_values(
        &mut self,
        insert: &str,
        width: usize,
        values: &[Arg<'_>],
        context: &'static str,
    ) -> Result<()>;
    /// A script of several statements (a migration).
    async fn script(&mut self, sql: &str) -> Result<()>;
    /// Opens the transaction.
    async fn begin(&mut self, why: Begin) -> Result<()>;
    /// Commits (SQLite: a migration's transaction checks its foreign keys first, and turns
    /// them on again after: `sqlite.rs`).
    async fn commit(&mut self) -> Result<()>;
    /// Rolls the transaction back.
    async fn rollback(&mut self) -> Result<()>;

    /// Serialises, until the transaction ends, every transaction that takes the same
    /// `name`: PostgreSQL's transaction-scoped advisory lock (bounded by `lock_timeout`).
    /// SQLite serialises every write transaction already: nothing to do.
    async fn lock_name(&mut self, _name: &str) -> Result<()> {
        Ok(())
    }
    /// Test fault (see `crate::fault`): when `point` is armed, the PostgreSQL server ends
    /// this session; the next statement fails as after a lost connection.
    async fn fault_drop(&mut self, _point: &str) {}
    /// Whether the connection enforces foreign keys (SQLite's `PRAGMA foreign_keys`).
    async fn foreign_keys_enforced(&mut self) -> Result<bool> {
        Ok(true)
    }
    /// A consistent copy of the database in the new file `path` (SQLite's `VACUUM INTO`).
    async fn vacuum_into(&mut self, _path: &str) -> Result<()> {
        Err(LedgerError::BackupUnsupported)
    }
    /// Refreshes the planner's statistics of the tables a run writes (PostgreSQL).
    async fn analyze(&mut self) -> Result<()> {
        Ok(())
    }

    /// Inserts the chunk's postings, the unique indexes deciding (`ON CONFLICT DO
    /// NOTHING`); returns the record numbers that inserted, ascending.
    async fn insert_postings(
        &mut self,
        run: &OpenRun,
        chunk: &[&PostingRecord],
    ) -> Result<Vec<u64>>;
    /// The postings under these `(operation, key)`s, by (operation, key); their detail is
    /// not read.
    async fn originals(&mut self, tenant: &str, keys: &[(&str, &str)]) -> Result<Originals>;
    /// The postings of `operation` with one of these (trace number, effective date)
    /// pairs, detail included.
    async fn by_trace(
        &mut self,
        tenant: &str,
        operation: &str,
        keys: &[(&str, &str)],
    ) -> Result<Vec<TraceCandidate>>;
    /// The stored detail of each of the tenant's postings in `ids`.
    async fn details(&mut self, tenant: &str, ids: &[i64]) -> Result<HashMap<i64, String>>;
    /// Streams the rows of `sql` to `f`, one at a time (a large read in bounded memory);
    /// the first error `f` returns stops the read and is returned.
    async fn each_row(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        f: &mut (dyn for<'r> FnMut(&'r Row) -> Result<()> + Send),
    ) -> Result<()>;
    /// Streams the rows of the report query `sql` (binds: run id, tenant) to `row`.
    async fn report_rows(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        row: &mut (dyn for<'r> FnMut(&'r ReportRow) -> std::io::Result<()> + Send),
    ) -> Result<std::io::Result<()>>;
    /// Inserts the rows of `columns` (all of one length) with the form of `insert` this
    /// backend runs, `ON CONFLICT DO NOTHING` letting the unique indexes decide; returns
    /// the value of column `key` (a [`Column::Int`]) of each row that inserted.
    /// `insert.unnest` returns that value (`RETURNING`) for each row it inserted.
    async fn insert_new(
        &mut self,
        insert: &Forms<'_>,
        fixed: &[Arg<'_>],
        columns: &[Column<'_>],
        key: usize,
        context: &'static str,
    ) -> Result<Vec<i64>>;
    /// The rows `select` reads for each of `keys`: SQLite once a key (bound after
    /// `fixed`), PostgreSQL once for all (the keys bound as one `text[]`).
    async fn rows_by_keys(
        &mut self,
        select: &Forms<'_>,
        fixed: &[Arg<'_>],
        keys: &[&str],
    ) -> Result<Vec<Row>>;
}

/// The backend chosen by the URL.
pub(crate) struct Store(Box<dyn Backend>);

impl Store {
    /// Holds `backend`.
    pub(crate) fn new(backend: impl Backend + 'static) -> Self {
        Store(Box::new(backend))
    }
    /// Ends the session (see [`Backend::close`]).
    pub(crate) async fn close(self) {
        self.0.close().await;
    }
    /// The first row of a query, if any.
    pub(crate) async fn query_opt(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Option<Row>> {
        Ok(self.query(sql, args).await?.into_iter().next())
    }
    /// The first row of a query; none is [`LedgerError::NoRow`].
    pub(crate) async fn query_one(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Row> {
        self.query_opt(sql, args).await?.ok_or(LedgerError::NoRow)
    }
    /// Inserts every row of `rows` with `insert` (`INSERT INTO t (c1, …, cN)`).
    pub(crate) async fn insert_rows<const N: usize>(
        &mut self,
        insert: &str,
        rows: &[[Arg<'_>; N]],
        context: &'static str,
    ) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        self.0
            .insert_values(insert, N, rows.as_flattened(), context)
            .await
    }
}

impl Deref for Store {
    type Target = dyn Backend;
    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl DerefMut for Store {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut *self.0
    }
}
