//! The store. One protocol (`protocol.rs`) and its SQL (`sql.rs`), written once, over a
//! small backend interface (`store.rs`) with SQLite (`sqlite.rs`, through rusqlite) and
//! PostgreSQL (`postgres.rs`, through sqlx) behind it. Both arbitrate with `INSERT … ON
//! CONFLICT DO NOTHING` against the same unique indexes: SQLite one prepared statement per
//! record (its change count says what inserted), PostgreSQL a chunk of arrays through
//! `unnest` with `RETURNING`. The decisions on what did not insert live in `classify.rs`.
//!
//! The contract (PRINCIPLES.md §6, §7):
//! - [`Ledger::begin_run`] opens ONE transaction, records the run and claims the file
//!   identity; [`Ledger::apply`] inserts postings inside it, the unique indexes deciding
//!   what is new; [`Ledger::commit_run`] writes the completion mark and commits. A crash
//!   anywhere before the commit leaves nothing; after it, everything.
//! - Deduplication is insert-first: rows that did not insert are then classified as
//!   duplicate / conflict / held, and journaled. Never select-then-insert.
//!
//! One driver per backend: rusqlite for every SQLite statement, sqlx for PostgreSQL. The
//! bulk SQLite paths already ran on rusqlite (sqlx hands every statement and row between
//! threads: ≈9 µs a row read, README "Performance"), through sqlx's raw handle and an
//! `unsafe` borrow; running all SQLite work on rusqlite removes both, and the measured
//! rates did not drop (README, Architecture).

mod classify;
mod postgres;
mod protocol;
mod sql;
mod sqlite;
mod store;
mod tenants;

pub use tenants::{TENANT_NAME_MAX, Tenant, TenantName, TenantNameError};

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
    /// The same, from SQLite.
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
    /// A statement that returns a row returned none (a bug or a concurrent schema change).
    #[error("the database returned no row where one was expected")]
    NoRow,
    /// The run's posted amounts add up to more than a 64-bit total holds: nothing of the
    /// run is committed (the file is refused, not retried: it will not fit next time
    /// either). Split the file.
    #[error(
        "the amounts posted by this run add up to more than 9,223,372,036,854,775,807 minor units; \
         nothing posted: split the file"
    )]
    TotalOverflow,
    /// The connection was lost while COMMIT was under way: the run may or may not have
    /// committed, and only the database knows. A rerun is safe either way: had it
    /// committed, its keys find every record and nothing posts twice.
    #[error(
        "the connection to the database was lost during COMMIT{}: the outcome is unknown; \
         a rerun is safe (what committed is found by its keys and posts nothing twice), and \
         `clearledger runs` shows the run if it committed ({source})",
        run_id.map(|id| format!(" of run {id}")).unwrap_or_default()
    )]
    CommitUnknown {
        run_id: Option<i64>,
        source: Box<LedgerError>,
    },
    /// Run `run_id` committed; what failed came after (reading it back). Not "nothing
    /// committed": the CLI's post-commit exit code.
    #[error("{source}")]
    AfterCommit {
        run_id: i64,
        /// The run journaled a rejected file (nothing of it posted).
        rejected: bool,
        source: Box<LedgerError>,
    },
    /// A column of an unexpected type (a database not written by this program?).
    #[error("column {column} of a result: expected {expected}")]
    Decode {
        column: usize,
        expected: &'static str,
    },
}

pub type Result<T> = std::result::Result<T, LedgerError>;

use crate::findings::Finding;
use crate::model::{FileIdentity, Outcome};
use chrono::{DateTime, Utc};
use serde::Serialize;

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

/// Names the protocol step a database error happened in ("claiming the file identity"),
/// in place of the statement-level context the store gave it.
pub(crate) trait During<T> {
    fn during(self, step: &'static str) -> Result<T>;
}

impl<T> During<T> for Result<T> {
    fn during(self, step: &'static str) -> Result<T> {
        self.map_err(|e| match e {
            LedgerError::Database { source, .. } => LedgerError::Database {
                context: step,
                source,
            },
            LedgerError::Sqlite { source, .. } => LedgerError::Sqlite {
                context: step,
                source,
            },
            other => other,
        })
    }
}

/// What a run is about to ingest.
#[derive(Debug, Clone)]
pub struct RunStart {
    pub tenant: String,
    pub file: FileIdentity,
    pub source_name: String,
    pub started_at: DateTime<Utc>,
    /// Re-sent NACHA entries: `Some(days)` holds an entry equal to one posted from another
    /// file of the same origin with an effective date at most `days` apart
    /// ([`crate::model::resent_match`]); `None` accepts such entries knowingly.
    pub resend_window_days: Option<u32>,
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
    /// The re-sent entry check, when it applies to this run: the window in days. Set only
    /// for a new NACHA file identity whose origin has other files in the tenant.
    pub resend_window_days: Option<u32>,
    /// Postings below this id carry the keys of the earlier ISO 20022 keying rule
    /// (migrations/*/0004_key_rules.sql): records are also looked up by their
    /// [`crate::model::LegacyKey`] among them. `None`: no such posting exists.
    pub legacy_below: Option<i64>,
    /// Records held so far as re-sent entries.
    pub resent_held: u64,
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
    /// Counts one record; a posted total past `i64::MAX` is an error, never a wrapped number.
    pub fn add(&mut self, outcome: Outcome, amount_minor: i64) -> Result<()> {
        self.records += 1;
        match outcome {
            Outcome::Posted => {
                self.posted += 1;
                self.posted_amount_minor = self
                    .posted_amount_minor
                    .checked_add(amount_minor)
                    .ok_or(LedgerError::TotalOverflow)?;
            }
            Outcome::Duplicate => self.duplicates += 1,
            Outcome::Conflict => self.conflicts += 1,
            Outcome::Held => self.held += 1,
        }
        Ok(())
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
    pub status: RunStatus,
    pub records: i64,
    pub posted: i64,
    pub duplicates: i64,
    pub conflicts: i64,
    pub held: i64,
    pub posted_amount_minor: i64,
    pub errors: i64,
    pub warnings: i64,
}

impl RunInfo {
    /// The word the ingest summary, `runs` and `report` say a run's status with: a
    /// completed run with conflicts or held records is `needs_attention` (the ingest's exit
    /// code 1); otherwise its stored status.
    pub fn status_word(&self) -> &'static str {
        match self.status {
            RunStatus::Completed if self.conflicts > 0 || self.held > 0 => "needs_attention",
            s => s.as_str(),
        }
    }
}

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Its transaction is open. A run that dies before its commit leaves nothing, not
    /// even this row.
    Running,
    Completed,
    Rejected,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Rejected => "rejected",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "running" => RunStatus::Running,
            "completed" => RunStatus::Completed,
            "rejected" => RunStatus::Rejected,
            _ => return None,
        })
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of the per-record report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportRow {
    pub run_id: i64,
    pub file_id: String,
    pub record_no: i64,
    pub outcome: Outcome,
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
    /// The same, by what each sighting was.
    pub repeats_by_outcome: RepeatCounts,
}

/// Sightings of a posting again, by outcome (`Posting::repeats_by_outcome`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RepeatCounts {
    pub duplicate: i64,
    pub conflict: i64,
    pub held: i64,
}

/// Ways to find a posting: every write has a read (PRINCIPLES.md §8).
#[derive(Debug, Clone)]
pub enum Lookup {
    TraceNumber(String),
    /// Every posting whose key is the UETR's, or derived from it (`uetr:U`, each leg of a
    /// chain `uetr:U:{leg}`, their returns `…:return`); the UETR compared case-insensitively.
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

/// The ledger: one connection to the backend named by the URL, and the protocol
/// (`protocol.rs`) on top of it. Calls are sequential.
pub struct Ledger {
    store: store::Store,
}

/// Opens the ledger named by `url` (`sqlite://PATH` or `postgres://…`), creating and
/// migrating it on first use.
pub async fn open(url: &str, opts: &DbOptions) -> Result<Ledger> {
    let store = if url.starts_with("sqlite:") {
        store::Store::Sqlite(sqlite::SqliteStore::connect(url, opts.lock_timeout).await?)
    } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        let t = postgres::PgTimeouts {
            connect: opts.connect_timeout,
            lock: opts.lock_timeout,
            statement: opts.statement_timeout,
        };
        store::Store::Postgres(postgres::PgStore::connect(url, t).await?)
    } else {
        return Err(LedgerError::UnsupportedUrl(url.to_string()));
    };
    let mut l = Ledger { store };
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
