//! The store: one trait, with the SQLite (`sqlite.rs`) and PostgreSQL (`postgres.rs`)
//! backends behind it. Both arbitrate with `INSERT … ON CONFLICT DO NOTHING` against the
//! same unique indexes: SQLite one prepared statement per record (its change count says
//! what inserted), PostgreSQL a chunk of arrays through `unnest` with `RETURNING`.
//!
//! The contract (PRINCIPLES.md §6, §7):
//! - [`Ledger::begin_run`] opens ONE transaction, records the run and claims the file
//!   identity; [`Ledger::apply`] inserts postings inside it, the unique indexes deciding
//!   what is new; [`Ledger::commit_run`] writes the completion mark and commits. A crash
//!   anywhere before the commit leaves nothing; after it, everything.
//! - Deduplication is insert-first: rows that did not insert are then classified as
//!   duplicate / conflict / held, and journaled. Never select-then-insert.

mod classify;
pub mod postgres;
pub mod sqlite;

use crate::findings::Finding;
use crate::model::{FileIdentity, Outcome, PostingRecord};
use chrono::{DateTime, Utc};
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// The database could not be reached or failed: safe to retry.
    #[error("database error while {context}: {source}")]
    Database {
        context: &'static str,
        #[source]
        source: sqlx::Error,
    },
    /// The same, from the bulk paths that run on the SQLite handle directly.
    #[error("database error while {context}: {source}")]
    Sqlite {
        context: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error("migration {version} was changed after it was applied to this database")]
    MigrationChanged { version: i64 },
    #[error("unsupported database URL {0:?}: expected sqlite://PATH or postgres://USER@HOST/DB")]
    UnsupportedUrl(String),
    #[error("could not connect to the database within {after:?}")]
    ConnectTimeout { after: std::time::Duration },
}

pub type Result<T> = std::result::Result<T, LedgerError>;

pub(crate) trait Context<T> {
    fn ctx(self, context: &'static str) -> Result<T>;
}
impl<T> Context<T> for std::result::Result<T, sqlx::Error> {
    fn ctx(self, context: &'static str) -> Result<T> {
        self.map_err(|source| LedgerError::Database { context, source })
    }
}

impl<T> Context<T> for std::result::Result<T, rusqlite::Error> {
    fn ctx(self, context: &'static str) -> Result<T> {
        self.map_err(|source| LedgerError::Sqlite { context, source })
    }
}

/// What a run is about to ingest.
#[derive(Debug, Clone)]
pub struct RunStart {
    pub tenant: String,
    pub file: FileIdentity,
    pub source_name: String,
    pub started_at: DateTime<Utc>,
}

/// An ingest in progress, inside its transaction.
#[derive(Debug)]
pub struct OpenRun {
    pub run_id: i64,
    pub tenant: String,
    pub file: FileIdentity,
    /// The file identity was already claimed by an earlier completed run.
    pub prior_run_id: Option<i64>,
    pub started_at: DateTime<Utc>,
    pub counts: Counts,
}

/// Per-outcome counts of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub records: u64,
    pub posted: u64,
    pub duplicates: u64,
    pub conflicts: u64,
    pub held: u64,
    pub posted_amount_minor: i64,
}

impl Counts {
    pub fn add(&mut self, outcome: Outcome, amount_minor: i64) {
        self.records += 1;
        match outcome {
            Outcome::Posted => {
                self.posted += 1;
                self.posted_amount_minor += amount_minor;
            }
            Outcome::Duplicate => self.duplicates += 1,
            Outcome::Conflict => self.conflicts += 1,
            Outcome::Held => self.held += 1,
        }
    }
}

/// An earlier, completed ingest of the same bytes.
#[derive(Debug, Clone)]
pub struct ExactUpload {
    pub file: FileIdentity,
    pub first_run_id: i64,
}

/// How a run ends.
#[derive(Debug, Clone)]
pub struct RunFinish {
    pub sha256: String,
    pub finished_at: DateTime<Utc>,
    /// Warnings found while reading (errors would have rejected the file).
    pub findings: Vec<Finding>,
}

/// A file rejected by validation (or unreadable): journaled, nothing posted.
#[derive(Debug, Clone)]
pub struct Rejection {
    pub tenant: String,
    pub file_id: Option<String>,
    pub format: &'static str,
    pub sha256: String,
    pub source_name: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub records: u64,
    pub findings: Vec<Finding>,
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunInfo {
    pub run_id: i64,
    pub tenant: String,
    pub file_id: Option<String>,
    pub sha256: String,
    pub format: String,
    pub source_name: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: String,
    pub records: i64,
    pub posted: i64,
    pub duplicates: i64,
    pub conflicts: i64,
    pub held: i64,
    pub posted_amount_minor: i64,
    pub errors: i64,
    pub warnings: i64,
}

/// One line of the per-record report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportRow {
    pub run_id: i64,
    pub file_id: String,
    pub record_no: i64,
    pub outcome: String,
    pub posting_key: String,
    pub trace_number: Option<String>,
    pub amount_minor: i64,
    pub currency: String,
    pub debit_account: String,
    pub credit_account: String,
    pub original_file_id: Option<String>,
    pub original_record_no: Option<i64>,
    pub original_run_id: Option<i64>,
    pub original_posted_at: Option<String>,
    pub differences: Option<String>,
    pub reason: Option<String>,
}

/// A finding as stored with its run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredFinding {
    pub run_id: i64,
    pub seq: i64,
    pub severity: String,
    pub code: String,
    pub record_index: i64,
    pub line: i64,
    pub byte_offset: i64,
    pub field: Option<String>,
    pub columns: Option<String>,
    pub expected: String,
    pub found: String,
}

/// A posting as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Posting {
    pub posting_id: i64,
    pub tenant: String,
    pub operation: String,
    pub posting_key: String,
    pub file_id: String,
    pub record_no: i64,
    pub trace_number: Option<String>,
    pub debit_account: String,
    pub credit_account: String,
    pub amount_minor: i64,
    pub currency: String,
    pub effective_date: Option<String>,
    pub fingerprint: String,
    pub run_id: i64,
    pub posted_at: String,
    /// How many times the key was seen again (journal rows naming it).
    pub repeats: i64,
}

/// Ways to find a posting: every write has a read (PRINCIPLES.md §8).
#[derive(Debug, Clone)]
pub enum Lookup {
    TraceNumber(String),
    /// Every posting whose key is the UETR's, or derived from it (`uetr:U`, `uetr:U:return`).
    Uetr(String),
    /// Every posting whose EndToEndId (or, for a return, original EndToEndId) is this one,
    /// whoever assigned it. A scan of the stored details: an operator's tool, not a hot path.
    EndToEndId(String),
    Source {
        file_id: String,
        record_no: i64,
    },
    PostingKey(String),
}

/// The store contract. Implementations hold one connection; calls are sequential.
#[allow(async_fn_in_trait)]
pub trait Ledger {
    async fn migrate(&mut self) -> Result<()>;
    /// Opens the run's transaction, records the run, claims the file identity.
    async fn begin_run(&mut self, start: &RunStart) -> Result<OpenRun>;
    /// Inserts what is new, classifies and journals the rest. Returns each record's outcome.
    async fn apply(&mut self, run: &mut OpenRun, records: &[PostingRecord])
    -> Result<Vec<Outcome>>;
    /// Writes the completion mark and commits; returns the run as stored.
    async fn commit_run(&mut self, run: OpenRun, finish: &RunFinish) -> Result<RunInfo>;
    /// A completed earlier ingest of exactly these bytes (same SHA-256, same tenant) whose
    /// records were all posted or duplicates: the exact re-upload fast path can replay it.
    async fn find_exact_upload(
        &mut self,
        tenant: &str,
        sha256: &str,
    ) -> Result<Option<ExactUpload>>;
    /// The exact re-upload fast path: one transaction records a run whose every record is a
    /// duplicate of what the earlier run posted or matched, journaled set-based from that
    /// run's outcomes (no parse, no per-record statements); returns the run as stored.
    async fn replay_run(
        &mut self,
        start: &RunStart,
        prior: &ExactUpload,
        finish: &RunFinish,
    ) -> Result<RunInfo>;
    /// Rolls the run back: nothing of it remains.
    async fn rollback_run(&mut self, run: OpenRun) -> Result<()>;
    /// Records a rejected file and its findings (its own small transaction).
    async fn record_rejection(&mut self, rejection: &Rejection) -> Result<RunInfo>;
    /// Calls `row` for each record of a run, in record order (also inside an open run).
    async fn report_rows(
        &mut self,
        tenant: &str,
        run_id: i64,
        row: &mut (dyn FnMut(ReportRow) -> std::io::Result<()> + Send),
    ) -> Result<std::io::Result<()>>;
    async fn run(&mut self, tenant: &str, run_id: i64) -> Result<Option<RunInfo>>;
    async fn runs(
        &mut self,
        tenant: &str,
        file_id: Option<&str>,
        limit: i64,
    ) -> Result<Vec<RunInfo>>;
    async fn findings(&mut self, tenant: &str, run_id: i64) -> Result<Vec<StoredFinding>>;
    async fn lookup(&mut self, tenant: &str, lookup: &Lookup) -> Result<Vec<Posting>>;
}

/// Connection settings common to the backends, with the CLI's defaults.
#[derive(Debug, Clone, Copy)]
pub struct DbOptions {
    /// SQLite: busy timeout (waiting for another process's write lock).
    /// PostgreSQL: `lock_timeout` (waiting for another worker's claim or rows).
    pub lock_timeout: std::time::Duration,
    /// PostgreSQL `statement_timeout`.
    pub statement_timeout: std::time::Duration,
    /// PostgreSQL connect timeout.
    pub connect_timeout: std::time::Duration,
}

/// The backend chosen by the URL.
pub enum AnyLedger {
    Sqlite(sqlite::SqliteLedger),
    Postgres(postgres::PgLedger),
}

macro_rules! delegate {
    ($self:ident, $l:ident => $e:expr) => {
        match $self {
            AnyLedger::Sqlite($l) => $e,
            AnyLedger::Postgres($l) => $e,
        }
    };
}

impl Ledger for AnyLedger {
    async fn migrate(&mut self) -> Result<()> {
        delegate!(self, l => l.migrate().await)
    }
    async fn begin_run(&mut self, start: &RunStart) -> Result<OpenRun> {
        delegate!(self, l => l.begin_run(start).await)
    }
    async fn apply(
        &mut self,
        run: &mut OpenRun,
        records: &[PostingRecord],
    ) -> Result<Vec<Outcome>> {
        delegate!(self, l => l.apply(run, records).await)
    }
    async fn commit_run(&mut self, run: OpenRun, finish: &RunFinish) -> Result<RunInfo> {
        delegate!(self, l => l.commit_run(run, finish).await)
    }
    async fn rollback_run(&mut self, run: OpenRun) -> Result<()> {
        delegate!(self, l => l.rollback_run(run).await)
    }
    async fn find_exact_upload(
        &mut self,
        tenant: &str,
        sha256: &str,
    ) -> Result<Option<ExactUpload>> {
        delegate!(self, l => l.find_exact_upload(tenant, sha256).await)
    }
    async fn replay_run(
        &mut self,
        start: &RunStart,
        prior: &ExactUpload,
        finish: &RunFinish,
    ) -> Result<RunInfo> {
        delegate!(self, l => l.replay_run(start, prior, finish).await)
    }
    async fn record_rejection(&mut self, rejection: &Rejection) -> Result<RunInfo> {
        delegate!(self, l => l.record_rejection(rejection).await)
    }
    async fn report_rows(
        &mut self,
        tenant: &str,
        run_id: i64,
        row: &mut (dyn FnMut(ReportRow) -> std::io::Result<()> + Send),
    ) -> Result<std::io::Result<()>> {
        delegate!(self, l => l.report_rows(tenant, run_id, row).await)
    }
    async fn run(&mut self, tenant: &str, run_id: i64) -> Result<Option<RunInfo>> {
        delegate!(self, l => l.run(tenant, run_id).await)
    }
    async fn runs(
        &mut self,
        tenant: &str,
        file_id: Option<&str>,
        limit: i64,
    ) -> Result<Vec<RunInfo>> {
        delegate!(self, l => l.runs(tenant, file_id, limit).await)
    }
    async fn findings(&mut self, tenant: &str, run_id: i64) -> Result<Vec<StoredFinding>> {
        delegate!(self, l => l.findings(tenant, run_id).await)
    }
    async fn lookup(&mut self, tenant: &str, lookup: &Lookup) -> Result<Vec<Posting>> {
        delegate!(self, l => l.lookup(tenant, lookup).await)
    }
}

/// Opens the ledger named by `url` (`sqlite://PATH` or `postgres://…`), creating and
/// migrating it on first use.
pub async fn open(url: &str, opts: &DbOptions) -> Result<AnyLedger> {
    let mut l = if url.starts_with("sqlite:") {
        AnyLedger::Sqlite(sqlite::SqliteLedger::connect(url, opts.lock_timeout).await?)
    } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        let t = postgres::PgTimeouts {
            connect: opts.connect_timeout,
            lock: opts.lock_timeout,
            statement: opts.statement_timeout,
        };
        AnyLedger::Postgres(postgres::PgLedger::connect(url, t).await?)
    } else {
        return Err(LedgerError::UnsupportedUrl(url.to_string()));
    };
    l.migrate().await?;
    Ok(l)
}

impl LedgerError {
    /// A failure worth retrying as a whole run: deadlock, serialization failure.
    pub fn is_retryable(&self) -> bool {
        match self {
            LedgerError::Database {
                source: sqlx::Error::Database(d),
                ..
            } => {
                matches!(d.code().as_deref(), Some("40P01") | Some("40001"))
            }
            _ => false,
        }
    }
}
