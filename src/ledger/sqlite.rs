//! The embedded SQLite store, on rusqlite (every statement; no second driver).
//!
//! Connection settings and why:
//! - WAL journal: readers (`report`, `lookup`) never block the ingest, and the ingest
//!   commits with few fsyncs.
//! - `synchronous = FULL`: a committed run survives a power cut. In one big transaction
//!   FULL costs the same as NORMAL (docs/performance.md).
//! - `cache_size` 128 MiB: bulk inserts into the unique indexes thrash the default 2 MB
//!   page cache (docs/performance.md: 256 MiB nearly doubles the rate). Measured here on 1 M
//!   NACHA rows (examples/sqlite_ceiling.rs): 256 MiB 11.5 s, 128 MiB 10.0 s, 64 MiB 9.9 s
//!   fresh; all-conflict 1.6 / 1.7 / 2.5 s. 128 MiB keeps peak RSS near 200 MB whatever
//!   the file's size.
//! - `BEGIN IMMEDIATE`: the ingest takes the write lock when it starts, so two processes
//!   on one database serialise: the second waits (up to the busy timeout) and then finds
//!   every record already posted. A deferred transaction would instead fail on upgrade.
//! - Foreign keys on, except in the transaction that applies migrations: a migration may
//!   rebuild a table others reference (0009 rebuilds `runs` to widen a CHECK), which
//!   SQLite's procedure does with foreign keys off. The pragma does nothing inside a
//!   transaction, so it is turned off before that BEGIN, every foreign key is checked
//!   before its COMMIT (`PRAGMA foreign_key_check`: a violation is an error and the
//!   migration rolls back), and it is turned on again once the transaction has ended,
//!   committed or not.
//!
//! rusqlite is synchronous: a call blocks the calling thread for as long as SQLite works
//! (or waits for the busy timeout). The CLI runs the ledger on its own runtime thread,
//! with parsing on another thread, so nothing else waits on it.

use super::backend::{Backend, Begin, Dialect};
use super::bulk::Column;
use super::bulk::Forms;
use super::classify::{
    Original, Originals, TRACE_CANDIDATE, TRACE_CANDIDATE_COLUMNS, TraceCandidate,
};
use super::store::{Arg, Cell, Columns, Row, checked, col};
use super::{Context, LedgerError, OpenRun, ReportRow, Result, sql};
use crate::keys::PostingRecord;
use async_trait::async_trait;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{OpenFlags, OptionalExtension, ToSql};
use std::borrow::Cow;
use std::collections::HashMap;
use std::time::{Duration, Instant};

pub(crate) struct SqliteStore {
    conn: rusqlite::Connection,
    /// A migration transaction is open, begun with foreign keys off: its end turns them
    /// on again.
    migrating: bool,
}

impl ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match *self {
            Arg::Int(v) => ValueRef::Integer(v),
            Arg::OptInt(Some(v)) => ValueRef::Integer(v),
            Arg::Text(v) | Arg::OptText(Some(v)) => ValueRef::Text(v.as_bytes()),
            Arg::Bytes(v) => ValueRef::Blob(v),
            Arg::OptInt(None) | Arg::OptText(None) => ValueRef::Null,
        }))
    }
}

/// `$1` → `?1`: the shared statements are written with PostgreSQL's placeholders; SQLite's
/// numbered form takes the same numbers. Only a `$` followed by a digit is one (a JSON path
/// literal such as `'$.x'` is left alone).
fn placeholders(sql: &str) -> Cow<'_, str> {
    let b = sql.as_bytes();
    let is_placeholder = |i: usize| b[i] == b'$' && b.get(i + 1).is_some_and(u8::is_ascii_digit);
    let mut dollars = memchr::memchr_iter(b'$', b).filter(|&i| is_placeholder(i));
    let Some(first) = dollars.next() else {
        return Cow::Borrowed(sql);
    };
    // `$` and `?` are both one byte: the text between placeholders is copied as it is.
    let mut out = String::with_capacity(sql.len());
    let mut from = 0;
    for i in std::iter::once(first).chain(dollars) {
        out.push_str(&sql[from..i]);
        out.push('?');
        from = i + 1;
    }
    out.push_str(&sql[from..]);
    Cow::Owned(out)
}

/// `%XX` escapes of a URL's path, decoded (as sqlx did): `ledger%20prod.db` is the file
/// `ledger prod.db`, never a new one named with the escape. A `%` not followed by two hex
/// digits is refused.
pub(crate) fn percent_decode(path: &str) -> Option<String> {
    let b = path.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn cells(row: &rusqlite::Row<'_>, n: usize) -> rusqlite::Result<Row> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(match row.get_ref(i)? {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(v) => Cell::Int(v),
            ValueRef::Real(v) => Cell::Text(v.to_string()),
            ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Cell::Bytes(b.to_vec()),
        });
    }
    Ok(Row(out))
}

/// Cells of a report row read in place (into the row's reused buffers).
mod report_cells {
    use super::{Context, Result, ValueRef};
    use crate::ledger::store::{Col, bad};

    pub(super) fn get<'a>(r: &'a rusqlite::Row<'_>, c: Col) -> Result<ValueRef<'a>> {
        r.get_ref(c.index).ctx("reading the report")
    }
    pub(super) fn int(r: &rusqlite::Row<'_>, c: Col) -> Result<Option<i64>> {
        match get(r, c)? {
            ValueRef::Null => Ok(None),
            ValueRef::Integer(v) => Ok(Some(v)),
            _ => Err(bad(c, "an integer")),
        }
    }
    /// [`int`], not null.
    pub(super) fn required(r: &rusqlite::Row<'_>, c: Col) -> Result<i64> {
        int(r, c)?.ok_or_else(|| bad(c, "an integer"))
    }
    fn put(dst: &mut String, t: &[u8]) {
        dst.clear();
        match std::str::from_utf8(t) {
            Ok(s) => dst.push_str(s),
            Err(_) => dst.push_str(&String::from_utf8_lossy(t)),
        }
    }
    pub(super) fn text(dst: &mut String, r: &rusqlite::Row<'_>, c: Col) -> Result<()> {
        match get(r, c)? {
            ValueRef::Text(t) => {
                put(dst, t);
                Ok(())
            }
            _ => Err(bad(c, "text")),
        }
    }
    pub(super) fn opt_text(dst: &mut Option<String>, r: &rusqlite::Row<'_>, c: Col) -> Result<()> {
        match get(r, c)? {
            ValueRef::Null => *dst = None,
            ValueRef::Text(t) => put(dst.get_or_insert_with(String::new), t),
            _ => {
                return Err(bad(c, "text"));
            }
        }
        Ok(())
    }
}

/// A report row (the report query's columns, in [`ReportRow`]'s order) read into `rr`, reusing its buffers: a re-upload's
/// report is a million rows of a dozen texts each.
fn report_row_into(rr: &mut ReportRow, r: &rusqlite::Row<'_>) -> Result<()> {
    use crate::ledger::store::{bad, col};
    use report_cells::{get, int, opt_text, required, text};
    use sql::REPORT;
    rr.run_id = required(r, col!(REPORT, "run_id"))?;
    text(&mut rr.file_id, r, col!(REPORT, "file_id"))?;
    rr.record_no = required(r, col!(REPORT, "record_no"))?;
    let outcome = col!(REPORT, "outcome");
    let ValueRef::Text(text_of_outcome) = get(r, outcome)? else {
        return Err(bad(outcome, "an outcome"));
    };
    rr.outcome = std::str::from_utf8(text_of_outcome)
        .ok()
        .and_then(crate::keys::Outcome::parse)
        .ok_or_else(|| bad(outcome, "an outcome"))?;
    text(&mut rr.posting_key, r, col!(REPORT, "posting_key"))?;
    opt_text(&mut rr.trace_number, r, col!(REPORT, "trace_number"))?;
    rr.amount_minor = required(r, col!(REPORT, "amount_minor"))?;
    text(&mut rr.currency, r, col!(REPORT, "currency"))?;
    text(&mut rr.debit_account, r, col!(REPORT, "debit_account"))?;
    text(&mut rr.credit_account, r, col!(REPORT, "credit_account"))?;
    opt_text(
        &mut rr.original_file_id,
        r,
        col!(REPORT, "original_file_id"),
    )?;
    rr.original_record_no = int(r, col!(REPORT, "original_record_no"))?;
    rr.original_run_id = int(r, col!(REPORT, "original_run_id"))?;
    opt_text(
        &mut rr.original_posted_at,
        r,
        col!(REPORT, "original_posted_at"),
    )?;
    opt_text(&mut rr.differences, r, col!(REPORT, "differences"))?;
    opt_text(&mut rr.reason, r, col!(REPORT, "reason"))?;
    text(&mut rr.kind, r, col!(REPORT, "kind"))?;
    opt_text(&mut rr.decision, r, col!(REPORT, "decision"))?;
    Ok(())
}

/// A posting's fingerprint as hex: 32 bytes since migration 0013, hex text before.
fn stored_fingerprint(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Blob(b) => hex::encode(b),
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        _ => String::new(),
    }
}

/// A posting's stored fields as JSON (`ledger::detail_json`), from a BLOB in the compact
/// form or the JSON text of a row written before it.
fn stored_detail(posting_id: i64, v: ValueRef<'_>) -> rusqlite::Result<String> {
    let bytes = match v {
        ValueRef::Blob(b) | ValueRef::Text(b) => b,
        other => {
            return Err(rusqlite::Error::InvalidColumnType(
                0,
                "detail".to_string(),
                other.data_type(),
            ));
        }
    };
    super::detail_json(posting_id, bytes).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Blob, Box::new(e))
    })
}

/// The database path (or `:memory:`) and open flags of `sqlite://PATH[?mode=ro|rw|rwc]`
/// (also `sqlite:PATH`). Without `mode` the file is created if missing.
fn parse_url(url: &str) -> Result<(String, OpenFlags)> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .ok_or_else(|| LedgerError::unsupported_url(url))?;
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let base = OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
    let mut flags = base | OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    for kv in query.split('&').filter(|s| !s.is_empty()) {
        flags = match kv {
            "mode=ro" => base | OpenFlags::SQLITE_OPEN_READ_ONLY,
            "mode=rw" => base | OpenFlags::SQLITE_OPEN_READ_WRITE,
            "mode=rwc" => base | OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
            _ => return Err(LedgerError::unsupported_url(url)),
        };
    }
    match percent_decode(path) {
        Some(p) if !p.is_empty() => Ok((p, flags)),
        _ => Err(LedgerError::unsupported_url(url)),
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

impl SqliteStore {
    /// Opens (creating if missing) the database at `url` (`sqlite://PATH`).
    pub(crate) async fn connect(url: &str, busy_timeout: Duration) -> Result<Self> {
        let (path, flags) = parse_url(url)?;
        // Opening a database another process is creating can report SQLITE_BUSY at once
        // (switching to WAL needs an exclusive lock, and SQLite's busy handler is not
        // called then): retry, bounded by the busy timeout.
        let deadline = Instant::now() + busy_timeout;
        loop {
            match Self::open(&path, flags, busy_timeout) {
                Ok(conn) => {
                    return Ok(SqliteStore {
                        conn,
                        migrating: false,
                    });
                }
                Err(e) if is_busy(&e) && Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                Err(e) => return Err(e).ctx("opening the database"),
            }
        }
    }

    fn open(
        path: &str,
        flags: OpenFlags,
        busy_timeout: Duration,
    ) -> rusqlite::Result<rusqlite::Connection> {
        let c = rusqlite::Connection::open_with_flags(path, flags)?;
        c.busy_timeout(busy_timeout)?;
        c.set_prepared_statement_cache_capacity(64);
        if !flags.contains(OpenFlags::SQLITE_OPEN_READ_ONLY) {
            // 16 KiB pages for a new ledger (an existing one keeps its own: the size is fixed
            // by the first write, and changed only by a VACUUM outside WAL mode). Measured
            // with examples/sqlite_ceiling.rs on 1 M NACHA posting rows: a fresh
            // insert 12.0 s with 4 KiB pages, 8.9 s with 8 KiB, 8.1 s with 16 KiB.
            c.execute_batch("PRAGMA page_size = 16384")?;
            let mode: String = c.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
            tracing::trace!(%mode, "journal mode");
        }
        c.execute_batch(
            "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -131072;",
        )?;
        Ok(c)
    }

    /// After a migration's transaction has ended (a COMMIT that failed may leave it open:
    /// then its ROLLBACK does this), foreign keys on again.
    fn foreign_keys_back_on(&mut self) -> Result<()> {
        if self.migrating && self.conn.is_autocommit() {
            self.migrating = false;
            self.conn
                .execute_batch("PRAGMA foreign_keys = ON")
                .ctx("turning foreign keys back on after migrating")?;
        }
        Ok(())
    }

    /// Every foreign key of the database, checked (one probe of the parent's index per
    /// referencing row: done once, when migrations are applied). The tables with rows that
    /// reference a missing row, in the order SQLite reports them, with their counts.
    fn check_foreign_keys(&mut self) -> Result<()> {
        // The pragma's columns, as SQLite documents them.
        const FOREIGN_KEY_CHECK: Columns = Columns(&["table", "rowid", "parent", "fkid"]);
        let mut st = self
            .conn
            .prepare("PRAGMA foreign_key_check")
            .ctx("checking foreign keys after migrating")?;
        let mut rows = st.query([]).ctx("checking foreign keys after migrating")?;
        let mut tables: Vec<(String, u64)> = Vec::new();
        while let Some(r) = rows.next().ctx("checking foreign keys after migrating")? {
            let table: String = r
                .get(col!(FOREIGN_KEY_CHECK, "table").index)
                .ctx("checking foreign keys after migrating")?;
            match tables.iter_mut().find(|(t, _)| *t == table) {
                Some((_, n)) => *n += 1,
                None => tables.push((table, 1)),
            }
        }
        match tables.into_iter().next() {
            None => Ok(()),
            Some((table, rows)) => Err(LedgerError::ForeignKeyViolation { table, rows }),
        }
    }
}

#[async_trait]
impl Backend for SqliteStore {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn migrator(&self) -> &'static sqlx::migrate::Migrator {
        static SQLITE: sqlx::migrate::Migrator = sqlx::migrate!("migrations/sqlite");
        &SQLITE
    }

    fn migrations_table_ddl(&self) -> &'static str {
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, \
         description TEXT NOT NULL, checksum BLOB NOT NULL, applied_at TEXT NOT NULL)"
    }

    /// One prepared statement per record: no reason to cut.
    fn chunk_rows(&self) -> usize {
        usize::MAX
    }

    async fn close(self: Box<Self>) {}

    async fn foreign_keys_enforced(&mut self) -> Result<bool> {
        const FOREIGN_KEYS: Columns = Columns(&["foreign_keys"]);
        Ok(self
            .query("PRAGMA foreign_keys", &[])
            .await?
            .first()
            .map(|r| r.int(col!(FOREIGN_KEYS, "foreign_keys")))
            .transpose()?
            == Some(1))
    }

    async fn vacuum_into(&mut self, path: &str) -> Result<()> {
        self.execute("VACUUM INTO $1", &[Arg::Text(path)])
            .await
            .map(|_| ())
    }

    async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64> {
        let mut st = self
            .conn
            .prepare_cached(&placeholders(sql))
            .ctx("preparing a statement")?;
        let n = st
            .execute(rusqlite::params_from_iter(args))
            .ctx("running a statement")?;
        Ok(n as u64)
    }

    async fn query(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>> {
        let mut st = self
            .conn
            .prepare_cached(&placeholders(sql))
            .ctx("preparing a query")?;
        let n = st.column_count();
        let rows = st
            .query_map(rusqlite::params_from_iter(args), |r| cells(r, n))
            .ctx("running a query")?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .ctx("reading a query's rows")
    }

    /// One prepared statement executed per row: SQLite's fastest bulk form.
    async fn insert_values(
        &mut self,
        insert: &str,
        width: usize,
        values: &[Arg<'_>],
        context: &'static str,
    ) -> Result<()> {
        let mut st = self
            .conn
            .prepare_cached(&with_values(insert, width))
            .ctx(context)?;
        for r in values.chunks_exact(width) {
            st.execute(rusqlite::params_from_iter(r)).ctx(context)?;
        }
        Ok(())
    }

    async fn script(&mut self, sql: &str) -> Result<()> {
        self.conn.execute_batch(sql).ctx("applying a migration")
    }

    async fn begin(&mut self, why: Begin) -> Result<()> {
        match why {
            Begin::Write | Begin::Exclusive => self
                .conn
                .execute_batch("BEGIN IMMEDIATE")
                .ctx("starting the transaction"),
            // A deferred transaction: its first read fixes the WAL snapshot it reads.
            Begin::Snapshot => self
                .conn
                .execute_batch("BEGIN DEFERRED")
                .ctx("starting the transaction"),
            Begin::Migrate => {
                // Outside any transaction, or the pragma does nothing (see the module docs).
                self.conn
                    .execute_batch("PRAGMA foreign_keys = OFF")
                    .ctx("turning foreign keys off to migrate")?;
                self.migrating = true;
                if let Err(e) = self.conn.execute_batch("BEGIN IMMEDIATE") {
                    let _ = self.foreign_keys_back_on();
                    return Err(e).ctx("locking the database to migrate");
                }
                Ok(())
            }
        }
    }

    /// Commits. A migration's transaction is first checked: a row that references one
    /// missing (`PRAGMA foreign_key_check`) is [`LedgerError::ForeignKeyViolation`] and
    /// nothing is committed (the caller rolls back). Foreign keys are on again once the
    /// transaction has ended.
    async fn commit(&mut self) -> Result<()> {
        if self.migrating {
            self.check_foreign_keys()?;
        }
        let res = self.execute("COMMIT", &[]).await.map(|_| ());
        let on = self.foreign_keys_back_on();
        res.and(on)
    }

    async fn rollback(&mut self) -> Result<()> {
        let res = self.execute("ROLLBACK", &[]).await.map(|_| ());
        let on = self.foreign_keys_back_on();
        res.and(on)
    }

    /// [`Backend::rows_by_keys`]: `select` once a key.
    async fn rows_by_keys(
        &mut self,
        select: &Forms<'_>,
        fixed: &[Arg<'_>],
        keys: &[&str],
    ) -> Result<Vec<Row>> {
        let mut out = Vec::new();
        let mut binds = fixed.to_vec();
        for k in keys {
            binds.truncate(fixed.len());
            binds.push(Arg::Text(k));
            out.extend(self.query(select.each, &binds).await?);
        }
        Ok(out)
    }

    /// [`Backend::insert_new`]: one prepared statement a row (`ON CONFLICT DO
    /// NOTHING`); the `key` values of the rows inserted, in the order given.
    async fn insert_new(
        &mut self,
        insert: &Forms<'_>,
        fixed: &[Arg<'_>],
        columns: &[Column<'_>],
        key: usize,
        context: &'static str,
    ) -> Result<Vec<i64>> {
        let mut st = self
            .conn
            .prepare_cached(&placeholders(insert.each))
            .ctx(context)?;
        let rows = columns.first().map_or(0, Column::len);
        let mut inserted = Vec::with_capacity(rows);
        let mut binds = fixed.to_vec();
        for i in 0..rows {
            binds.truncate(fixed.len());
            binds.extend(columns.iter().map(|c| c.arg(i)));
            let n = st
                .execute(rusqlite::params_from_iter(&binds))
                .ctx(context)?;
            if n == 1
                && let Arg::Int(v) = columns[key].arg(i)
            {
                inserted.push(v);
            }
        }
        Ok(inserted)
    }

    async fn insert_postings(
        &mut self,
        run: &OpenRun,
        chunk: &[&PostingRecord],
    ) -> Result<Vec<u64>> {
        let posted_at = super::classify::ts(&run.started_at);
        let mut insert = self
            .conn
            .prepare_cached(&insert_posting_sql())
            .ctx("preparing the posting insert")?;
        // What is the same for every row of the run is bound once: a statement keeps its
        // bindings from one execution to the next (the cache clears them when it takes the
        // statement back). Binding copies each text (SQLITE_TRANSIENT), and the writer is
        // the ingest's bottleneck.
        let bind = "binding a posting";
        insert.raw_bind_parameter(1, &run.tenant).ctx(bind)?;
        insert.raw_bind_parameter(4, &run.file.file_id).ctx(bind)?;
        insert.raw_bind_parameter(14, run.run_id).ctx(bind)?;
        insert.raw_bind_parameter(15, &posted_at).ctx(bind)?;
        let mut inserted = Vec::with_capacity(chunk.len());
        let mut date = DateText::default();
        for r in chunk {
            insert.raw_bind_parameter(2, r.operation).ctx(bind)?;
            insert.raw_bind_parameter(3, &r.posting_key).ctx(bind)?;
            insert.raw_bind_parameter(5, r.record_no as i64).ctx(bind)?;
            insert.raw_bind_parameter(6, &r.trace_number).ctx(bind)?;
            insert.raw_bind_parameter(7, &r.debit_account).ctx(bind)?;
            insert.raw_bind_parameter(8, &r.credit_account).ctx(bind)?;
            insert.raw_bind_parameter(9, r.amount_minor).ctx(bind)?;
            insert.raw_bind_parameter(10, &r.currency).ctx(bind)?;
            insert
                .raw_bind_parameter(11, r.effective_date.map(|d| date.of(d)))
                .ctx(bind)?;
            insert.raw_bind_parameter(12, &r.digest[..]).ctx(bind)?;
            insert.raw_bind_parameter(13, &r.detail).ctx(bind)?;
            let n = insert.raw_execute().ctx("inserting postings")?;
            if n == 1 {
                inserted.push(r.record_no);
            }
        }
        // Records arrive in record order; keep the contract whatever the caller sends.
        if !inserted.is_sorted() {
            inserted.sort_unstable();
        }
        Ok(inserted)
    }

    /// One index probe per distinct key.
    async fn originals(&mut self, tenant: &str, keys: &[(&str, &str)]) -> Result<Originals> {
        const ORIGINAL: Columns = Columns(&["posting_id", "run_id", "fingerprint", "file_id"]);
        let mut find = self
            .conn
            .prepare_cached(checked!(
                ORIGINAL,
                "SELECT posting_id, run_id, fingerprint, file_id \
                 FROM postings WHERE tenant = ?1 AND operation = ?2 AND posting_key = ?3"
            ))
            .ctx("preparing the originals' lookup")?;
        let mut originals = Originals::new();
        for &(operation, posting_key) in keys {
            let key = (operation.to_string(), posting_key.to_string());
            if originals.contains_key(&key) {
                continue;
            }
            let found = find
                .query_row(rusqlite::params![tenant, operation, posting_key], |row| {
                    Ok(Original {
                        posting_id: row.get(col!(ORIGINAL, "posting_id").index)?,
                        run_id: row.get(col!(ORIGINAL, "run_id").index)?,
                        fingerprint: stored_fingerprint(
                            row.get_ref(col!(ORIGINAL, "fingerprint").index)?,
                        ),
                        file_id: row.get(col!(ORIGINAL, "file_id").index)?,
                        detail: String::new(),
                    })
                })
                .optional()
                .ctx("reading the originals")?;
            if let Some(o) = found {
                originals.insert(key, o);
            }
        }
        Ok(originals)
    }

    /// One probe of the trace index per distinct (trace number, effective date).
    async fn by_trace(
        &mut self,
        tenant: &str,
        operation: &str,
        keys: &[(&str, &str)],
    ) -> Result<Vec<TraceCandidate>> {
        let mut find = self
            .conn
            .prepare_cached(&by_trace_sql())
            .ctx("preparing the lookup by trace number")?;
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for &(trace, date) in keys {
            if !seen.insert((trace, date)) {
                continue;
            }
            let rows = find
                .query_map(rusqlite::params![tenant, trace, date, operation], |row| {
                    let date: Option<String> =
                        row.get(col!(TRACE_CANDIDATE, "effective_date").index)?;
                    let posting_id: i64 = row.get(col!(TRACE_CANDIDATE, "posting_id").index)?;
                    Ok(TraceCandidate {
                        original: Original {
                            posting_id,
                            run_id: row.get(col!(TRACE_CANDIDATE, "run_id").index)?,
                            fingerprint: stored_fingerprint(
                                row.get_ref(col!(TRACE_CANDIDATE, "fingerprint").index)?,
                            ),
                            detail: stored_detail(
                                posting_id,
                                row.get_ref(col!(TRACE_CANDIDATE, "detail").index)?,
                            )?,
                            file_id: row.get(col!(TRACE_CANDIDATE, "file_id").index)?,
                        },
                        trace_number: row.get(col!(TRACE_CANDIDATE, "trace_number").index)?,
                        record_no: row.get(col!(TRACE_CANDIDATE, "record_no").index)?,
                        effective_date: date.and_then(|d| d.parse().ok()),
                    })
                })
                .ctx("reading postings by trace number")?;
            for r in rows {
                out.push(r.ctx("reading postings by trace number")?);
            }
        }
        Ok(out)
    }

    async fn details(&mut self, tenant: &str, ids: &[i64]) -> Result<HashMap<i64, String>> {
        const DETAIL: Columns = Columns(&["detail"]);
        let mut detail = self
            .conn
            .prepare_cached(checked!(
                DETAIL,
                "SELECT detail FROM postings WHERE posting_id = ?1 AND tenant = ?2"
            ))
            .ctx("preparing the originals' fields")?;
        let mut out = HashMap::with_capacity(ids.len());
        for &id in ids {
            let d = detail
                .query_row(rusqlite::params![id, tenant], |row| {
                    stored_detail(id, row.get_ref(col!(DETAIL, "detail").index)?)
                })
                .ctx("reading the originals' fields")?;
            out.insert(id, d);
        }
        Ok(out)
    }

    async fn each_row(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        f: &mut (dyn for<'r> FnMut(&'r Row) -> Result<()> + Send),
    ) -> Result<()> {
        let mut st = self
            .conn
            .prepare(&placeholders(sql))
            .ctx("preparing a read")?;
        let n = st.column_count();
        let mut rows = st
            .query(rusqlite::params_from_iter(args))
            .ctx("reading rows")?;
        while let Some(r) = rows.next().ctx("reading rows")? {
            f(&cells(r, n).ctx("reading rows")?)?;
        }
        Ok(())
    }

    async fn report_rows(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        row: &mut (dyn for<'r> FnMut(&'r ReportRow) -> std::io::Result<()> + Send),
    ) -> Result<std::io::Result<()>> {
        let mut st = self
            .conn
            .prepare(&placeholders(sql))
            .ctx("preparing the report")?;
        let mut rows = st
            .query(rusqlite::params_from_iter(args))
            .ctx("reading the report")?;
        // The rows are written (CSV, JSON lines: a third of a report's time) on a thread of
        // their own while this one reads the next ones: batches go to the writer and come
        // back to be filled again, their buffers reused (no allocation per row).
        const BATCH: usize = 1_024;
        let (full, to_write) = std::sync::mpsc::sync_channel::<Vec<ReportRow>>(4);
        let (written, empty) = std::sync::mpsc::channel::<Vec<ReportRow>>();
        std::thread::scope(|scope| {
            let writer = std::thread::Builder::new()
                .name("report-writer".into())
                .spawn_scoped(scope, move || -> std::io::Result<()> {
                    for batch in to_write {
                        for r in &batch {
                            row(r)?;
                        }
                        let _ = written.send(batch);
                    }
                    Ok(())
                })
                .map_err(|e| LedgerError::Internal(format!("starting the report's writer: {e}")))?;
            let mut batch: Vec<ReportRow> = Vec::new();
            let mut n = 0;
            let read = (|| -> Result<()> {
                while let Some(r) = rows.next().ctx("reading the report")? {
                    if n == batch.len() {
                        batch.push(ReportRow::default());
                    }
                    report_row_into(&mut batch[n], r)?;
                    n += 1;
                    if n == BATCH {
                        n = 0;
                        let next = empty.try_recv().unwrap_or_default();
                        if full.send(std::mem::replace(&mut batch, next)).is_err() {
                            return Ok(()); // the writer stopped: its error is the answer
                        }
                    }
                }
                Ok(())
            })();
            // What was read is written, also before a read that failed (as row by row).
            batch.truncate(n);
            if n > 0 {
                let _ = full.send(batch);
            }
            drop(full);
            let out = match writer.join() {
                Ok(out) => out,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            // A write that failed is the answer, whatever the read did after it.
            if out.is_err() {
                return Ok(out);
            }
            read?;
            Ok(out)
        })
    }
}

/// `insert` (an `INSERT INTO t (columns)`) with `n` placeholders for its values.
fn with_values(insert: &str, n: usize) -> String {
    let values: Vec<String> = (1..=n).map(|i| format!("?{i}")).collect();
    format!("{insert} VALUES ({})", values.join(", "))
}

/// The posting insert (`insert_postings`): one row, its binds in `POSTING_COLUMNS`' order;
/// a key or source already taken inserts nothing.
fn insert_posting_sql() -> String {
    let insert = format!("INSERT INTO postings ({})", super::sql::POSTING_COLUMNS);
    format!("{} ON CONFLICT DO NOTHING", with_values(&insert, 15))
}

/// A date as `NaiveDate`'s `Display` writes it (`2026-12-03`), without a `String` per
/// posting: four-digit years in a buffer, any other year as `Display` has it.
#[derive(Default)]
struct DateText {
    buf: [u8; 10],
    other: String,
}

impl DateText {
    fn of(&mut self, d: chrono::NaiveDate) -> &str {
        use chrono::Datelike;
        let (y, m, day) = (d.year(), d.month(), d.day());
        if !(0..=9999).contains(&y) {
            self.other = d.to_string();
            return &self.other;
        }
        let digit = |v: u32| b'0' + (v % 10) as u8;
        let y = y as u32;
        self.buf = [
            digit(y / 1000),
            digit(y / 100),
            digit(y / 10),
            digit(y),
            b'-',
            digit(m / 10),
            digit(m),
            b'-',
            digit(day / 10),
            digit(day),
        ];
        std::str::from_utf8(&self.buf).unwrap_or_default()
    }
}

/// The re-sent check's probe: one (trace number, effective date) of one operation.
fn by_trace_sql() -> String {
    format!(
        "SELECT {TRACE_CANDIDATE_COLUMNS} FROM postings \
         WHERE tenant = ?1 AND trace_number = ?2 AND effective_date = ?3 AND operation = ?4 AND {}",
        sql::TRACE_INDEXED
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The posting insert's dates read as `NaiveDate`'s `Display` writes them, every day
    /// of a leap year and of the years at the edges of four digits and past them.
    #[test]
    fn date_text_is_display() {
        let mut t = DateText::default();
        let mut n = 0;
        for y in [-1, 0, 7, 999, 1000, 2024, 2026, 9999, 10000, 262142] {
            let mut d = chrono::NaiveDate::from_ymd_opt(y, 1, 1).unwrap();
            while chrono::Datelike::year(&d) == y {
                assert_eq!(t.of(d), d.to_string());
                n += 1;
                let Some(next) = d.succ_opt() else { break };
                d = next;
            }
        }
        assert_eq!(n, 10 * 365 + 3); // leap: 0, 2024, 10000
    }

    /// The inserts made once a record (a posting, a journal row) build no ephemeral table
    /// on a ledger with every migration: an `IN (…)` list in a partial index's predicate or
    /// a CHECK is one, opened and closed for every row (migrations 0015 and 0016).
    #[test]
    fn per_record_inserts_build_no_ephemeral_table() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        for m in sqlx::migrate!("migrations/sqlite").iter() {
            conn.execute_batch(&m.sql).unwrap();
        }
        let opcodes = |q: &str| -> Vec<String> {
            let mut st = conn.prepare(&format!("EXPLAIN {q}")).unwrap();
            let nulls = vec![rusqlite::types::Null; st.parameter_count()];
            st.query_map(rusqlite::params_from_iter(nulls), |r| r.get::<_, String>(1))
                .unwrap()
                .collect::<std::result::Result<Vec<_>, _>>()
                .unwrap()
        };
        // The statements as the writer prepares them (`insert_postings`, `insert_rows`).
        let journal = with_values(sql::INSERT_JOURNAL, 17);
        for q in [insert_posting_sql(), journal] {
            let ops = opcodes(&q);
            assert!(ops.iter().any(|o| o == "IdxInsert"), "{q}: {ops:?}");
            assert!(!ops.iter().any(|o| o == "OpenEphemeral"), "{q}: {ops:?}");
        }
    }

    /// The plans of every query by trace number or UETR, on a ledger with every migration:
    /// each reads the trace-number index (with the partial index's predicate) or the
    /// natural key, none scans `postings` (migration 0014).
    #[test]
    fn lookups_by_trace_and_uetr_read_an_index() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        for m in sqlx::migrate!("migrations/sqlite").iter() {
            conn.execute_batch(&m.sql).unwrap();
        }
        let plan = |q: &str| -> String {
            let mut st = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {}", placeholders(q)))
                .unwrap();
            let rows = st
                .query_map(
                    rusqlite::params_from_iter(vec![rusqlite::types::Null; st.parameter_count()]),
                    |r| r.get::<_, String>(3),
                )
                .unwrap()
                .collect::<std::result::Result<Vec<_>, _>>()
                .unwrap();
            rows.join("\n")
        };
        let d = crate::ledger::Dialect::Sqlite;
        let trace = plan(&sql::lookup(d, &sql::lookup_by_trace(d)));
        assert!(
            trace.contains(
                "SEARCH postings USING INDEX postings_trace (tenant=? AND trace_number=?)"
            ),
            "{trace}"
        );
        assert!(
            trace.contains(
                "SEARCH postings USING INDEX postings_natural_key (tenant=? AND operation=? AND posting_key>? AND posting_key<?)"
            ),
            "{trace}"
        );
        assert!(
            trace.starts_with("SEARCH p USING INTEGER PRIMARY KEY (rowid=?)"),
            "{trace}"
        );
        let uetr = plan(&sql::lookup(d, &sql::LOOKUP_BY_UETR));
        assert!(
            uetr.contains(
                "SEARCH p USING INDEX postings_natural_key (tenant=? AND operation=? AND posting_key>? AND posting_key<?)"
            ),
            "{uetr}"
        );
        let resent = plan(&by_trace_sql());
        assert_eq!(
            resent,
            "SEARCH postings USING INDEX postings_trace (tenant=? AND trace_number=? AND effective_date=?)"
        );
        // Without the predicate the index cannot be read: the check above is the one that counts.
        let bare = plan(
            "SELECT posting_id FROM postings WHERE tenant = ?1 AND trace_number = ?2 AND effective_date = ?3",
        );
        assert!(!bare.contains("postings_trace"), "{bare}");
        for (q, p) in [(&trace, "trace"), (&uetr, "uetr"), (&resent, "resent")] {
            assert!(
                !q.contains("SCAN p\n") && !q.ends_with("SCAN p") && !q.contains("SCAN postings"),
                "{p}: {q}"
            );
        }
    }

    #[test]
    fn urls_name_a_path_and_a_mode() {
        let (p, f) = parse_url("sqlite://dir/ledger.db").unwrap();
        assert_eq!(p, "dir/ledger.db");
        assert!(f.contains(OpenFlags::SQLITE_OPEN_CREATE));
        let (p, f) = parse_url("sqlite:/abs/l.db?mode=ro").unwrap();
        assert_eq!(p, "/abs/l.db");
        assert!(f.contains(OpenFlags::SQLITE_OPEN_READ_ONLY));
        assert!(!f.contains(OpenFlags::SQLITE_OPEN_CREATE));
        assert!(parse_url("sqlite://l.db?cache=shared").is_err());
        assert!(parse_url("sqlite://").is_err());
        assert_eq!(placeholders("a = $1 AND b = $12"), "a = ?1 AND b = ?12");
        assert_eq!(
            placeholders("json_extract(d, '$.x') = $1"),
            "json_extract(d, '$.x') = ?1"
        );
        let (p, _) = parse_url("sqlite:///srv/ledger%20prod.db").unwrap();
        assert_eq!(p, "/srv/ledger prod.db");
        assert!(parse_url("sqlite://a%2.db").is_err());
    }
}
