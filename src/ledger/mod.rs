//! The exactly-once core; it names no feature. One protocol (`protocol.rs`, the run;
//! `apply.rs`, the insert-first pass; `reads.rs`; `migrate.rs`) and its SQL (`sql.rs`),
//! written once against one trait (`backend.rs`; `bulk.rs` for a feature's many rows) that
//! SQLite (`sqlite.rs`, through rusqlite) and PostgreSQL (`postgres.rs`, through sqlx)
//! implement. Both arbitrate with `INSERT … ON CONFLICT DO NOTHING` against the same unique
//! indexes: SQLite one prepared statement per record (its change count says what inserted),
//! PostgreSQL a chunk of arrays through `unnest` with `RETURNING`. The decisions on what did
//! not insert live in `classify.rs`.
//!
//! The contract (docs/principles.md §6, §7):
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

mod apply;
pub(crate) mod backend;
pub(crate) mod bulk;
mod classify;
mod hooks;
mod migrate;
mod postgres;
mod protocol;
mod reads;
pub(crate) mod sql;
mod sqlite;
pub(crate) mod store;

pub(crate) use backend::{Dialect, Store};
/// What a feature's own SQL is written with (`store.rs`): statements with `$n`
/// placeholders run on either backend, rows read back by column.
pub(crate) use classify::ts;
pub use hooks::{CommitHook, HookFuture};
pub(crate) use store::{Arg, Row, args};

/// Why a ledger call failed. [`LedgerError::is_configuration`] tells a mistake only the
/// operator can fix from a failure a retry may fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// The database could not be reached or failed: safe to retry, unless
    /// [`LedgerError::is_configuration`] says the server refused what it was configured
    /// with (authentication, a missing database, a privilege).
    #[error("database error while {context}: {source}")]
    Database {
        /// The step that failed ("claiming the file identity").
        context: &'static str,
        /// PostgreSQL's (sqlx's) error.
        #[source]
        source: sqlx::Error,
    },
    /// The same, from SQLite.
    #[error("database error while {context}: {source}")]
    Sqlite {
        /// The step that failed.
        context: &'static str,
        /// SQLite's (rusqlite's) error.
        #[source]
        source: rusqlite::Error,
    },
    /// A migration this database recorded as applied differs from the one this build
    /// carries (its checksum): nothing is migrated.
    #[error("migration {version} was changed after it was applied to this database")]
    MigrationChanged {
        /// The migration's number (`migrations/*/NNNN_…sql`).
        version: i64,
    },
    /// The URL names no backend (or a malformed SQLite URL). Holds the URL redacted
    /// ([`redact_url`]): build it with `LedgerError::unsupported_url`.
    #[error("unsupported database URL {0:?}: expected sqlite://PATH or postgres://USER@HOST/DB")]
    UnsupportedUrl(String),
    /// `db migrate` could not create the missing PostgreSQL database `database`.
    #[error("cannot create the database {database:?}: {source}")]
    CreateDatabase {
        /// The database's name, from the URL.
        database: String,
        /// PostgreSQL's refusal.
        #[source]
        source: sqlx::Error,
    },
    /// `db backup` on PostgreSQL: not done by clearledger (pg_dump is).
    #[error("clearledger backs up SQLite ledgers only; back up PostgreSQL with pg_dump")]
    BackupUnsupported,
    /// PostgreSQL did not answer within the connect timeout (`--connect-timeout`): safe
    /// to retry.
    #[error("could not connect to the database within {after:?}")]
    ConnectTimeout {
        /// The timeout that passed.
        after: std::time::Duration,
    },
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
        /// The run whose COMMIT was under way, when known.
        run_id: Option<i64>,
        /// The failure that cut the connection.
        source: Box<LedgerError>,
    },
    /// Run `run_id` committed; what failed came after (reading it back). Not "nothing
    /// committed": the CLI's post-commit exit code.
    #[error("{source}")]
    AfterCommit {
        /// The run that committed.
        run_id: i64,
        /// The run journaled a rejected file (nothing of it posted).
        rejected: bool,
        /// What failed after the commit.
        source: Box<LedgerError>,
    },
    /// A compensation could not be posted for every posting it was asked for (something
    /// else holds a compensation's key or source): nothing of it committed.
    #[error(
        "{compensated} of {targets} postings could be compensated (another posting holds the key or \
         source of the rest); nothing was posted"
    )]
    CompensationIncomplete {
        /// The postings asked to be compensated.
        targets: i64,
        /// Those that could be.
        compensated: i64,
    },
    /// Applying migrations left rows of `table` referencing rows that do not exist
    /// (SQLite's `PRAGMA foreign_key_check`, run before the migrations commit): nothing
    /// was migrated.
    #[error(
        "migrating would leave {rows} row(s) of table {table} referencing missing rows \
         (PRAGMA foreign_key_check); nothing was migrated"
    )]
    ForeignKeyViolation {
        /// The table holding the rows.
        table: String,
        /// How many of its rows reference a missing row.
        rows: u64,
    },
    /// A task of the HTTP server failed (a bug): what it did rolled back with its
    /// connection.
    #[error("internal error: {0}")]
    Internal(String),
    /// The operating system's random source failed (creating an API key).
    #[error("cannot read random bytes from the operating system: {0}")]
    Random(String),
    /// An `Idempotency-Key`'s response was stored by another request while this one ran
    /// (another process on the same SQLite file): this run rolled back whole; the stored
    /// response is the answer.
    #[error(
        "the idempotency key was completed by another request meanwhile; nothing of this run committed"
    )]
    IdempotencyKeyTaken,
    /// A column of an unexpected type (a database not written by this program?), by its
    /// name in the statement's column list (`store::Columns`).
    #[error("column {column} of a result: expected {expected}")]
    Decode {
        /// The column's name.
        column: std::borrow::Cow<'static, str>,
        /// What it should have held ("a run status").
        expected: &'static str,
    },
    /// A posting's stored fields (`postings.detail`) that neither form reads (a database
    /// damaged or not written by this program).
    #[error("posting {posting_id}: {source}")]
    BadDetail {
        /// The posting whose fields are unreadable.
        posting_id: i64,
        /// Where reading stopped, and what was expected there.
        #[source]
        source: crate::keys::detail::BadDetail,
    },
}

/// A record's hex fingerprint as a posting row stores it (32 bytes).
pub(crate) fn fingerprint_bytes(hex: &str) -> Result<[u8; 32]> {
    crate::keys::fingerprint_bytes(hex).ok_or(LedgerError::Decode {
        column: std::borrow::Cow::Borrowed("fingerprint"),
        expected: "a hex SHA-256 fingerprint",
    })
}

/// A posting's stored fields as the JSON object reports, conflicts and reconciliation read
/// (either stored form: `keys::detail`).
pub(crate) fn detail_json(posting_id: i64, stored: &[u8]) -> Result<String> {
    crate::keys::detail::to_json(stored)
        .map_err(|source| LedgerError::BadDetail { posting_id, source })
}

/// A ledger call's result.
pub type Result<T> = std::result::Result<T, LedgerError>;

use crate::findings::Finding;
use crate::keys::{FileIdentity, Outcome};
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
    /// The tenant the run's keys are scoped to (docs/principles.md §4).
    pub tenant: String,
    /// The file's identity, which the run claims.
    pub file: FileIdentity,
    /// The name the file came under (its path, an upload's name), as reports show it.
    pub source_name: String,
    /// When the run began.
    pub started_at: DateTime<Utc>,
    /// Re-sent NACHA entries: `Some(days)` holds an entry equal to one posted from another
    /// file of the same origin with an effective date at most `days` apart
    /// ([`crate::keys::resent_match`]); `None` accepts such entries knowingly.
    pub resend_window_days: Option<u32>,
}

/// An ingest in progress, inside its transaction.
#[derive(Debug)]
pub struct OpenRun {
    /// The run's id, as it will be stored if the run commits.
    pub run_id: i64,
    /// The tenant of [`RunStart::tenant`].
    pub tenant: String,
    /// The identity claimed: [`RunStart::file`], or the earlier spelling of it the ledger
    /// already knew.
    pub file: FileIdentity,
    /// The file identity was already claimed by an earlier completed run.
    pub prior_run_id: Option<i64>,
    /// When the run began.
    pub started_at: DateTime<Utc>,
    /// What the run's records came to so far.
    pub counts: Counts,
    /// The re-sent entry check, when it applies to this run: the window in days. Set only
    /// for a new NACHA file identity whose origin has other files in the tenant.
    pub resend_window_days: Option<u32>,
    /// Postings below this id carry the keys of the earlier ISO 20022 keying rule
    /// (migrations/*/0004_key_rules.sql): records are also looked up by their
    /// [`crate::keys::LegacyKey`] among them. `None`: no such posting exists.
    pub legacy_below: Option<i64>,
    /// Records held so far as re-sent entries.
    pub resent_held: u64,
    /// The tenant has rejected held records (`resolve --reject`): each record's key is
    /// looked up among the decisions, so a rejected record never posts.
    pub rejections: bool,
}

/// Per-outcome counts of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Records seen.
    pub records: u64,
    /// Records posted by this run.
    pub posted: u64,
    /// Records already posted with the same content: nothing new.
    pub duplicates: u64,
    /// Records whose key was posted with other content: not posted.
    pub conflicts: u64,
    /// Records held for an operator's decision: not posted.
    pub held: u64,
    /// The posted amounts added up across currencies: kept for older readers of `runs`;
    /// [`Counts::by_currency`] is the figure to use.
    pub posted_amount_minor: i64,
    /// What posted, per currency, in the order the currencies first appeared.
    pub by_currency: Vec<CurrencyTotal>,
}

/// What a run posted in one currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CurrencyTotal {
    /// The ISO 4217 code.
    pub currency: String,
    /// Postings in this currency.
    pub posted: u64,
    /// Their amounts added up, in minor units of the currency.
    pub amount_minor: i64,
}

impl Counts {
    /// Counts one record; a posted total past `i64::MAX` is an error, never a wrapped number.
    pub fn add(&mut self, outcome: Outcome, amount_minor: i64, currency: &str) -> Result<()> {
        self.records += 1;
        match outcome {
            Outcome::Posted => {
                self.posted += 1;
                self.posted_amount_minor = self
                    .posted_amount_minor
                    .checked_add(amount_minor)
                    .ok_or(LedgerError::TotalOverflow)?;
                let t = match self.by_currency.iter().position(|t| t.currency == currency) {
                    Some(i) => &mut self.by_currency[i],
                    None => {
                        self.by_currency.push(CurrencyTotal {
                            currency: currency.to_string(),
                            posted: 0,
                            amount_minor: 0,
                        });
                        self.by_currency.last_mut().ok_or(LedgerError::NoRow)?
                    }
                };
                t.posted += 1;
                // Never past the sum across currencies, which was checked just above.
                t.amount_minor += amount_minor;
            }
            Outcome::Duplicate => self.duplicates += 1,
            Outcome::Conflict => self.conflicts += 1,
            Outcome::Held => self.held += 1,
            // Statement entries are counted by their own feature, never as postings.
            Outcome::Recorded | Outcome::Provisional | Outcome::Confirmed => {}
        }
        Ok(())
    }
}

/// An earlier, completed ingest of the same bytes.
#[derive(Debug, Clone)]
pub struct ExactUpload {
    /// The identity the file was ingested under.
    pub file: FileIdentity,
    /// The run that first ingested it.
    pub first_run_id: i64,
}

/// How a run ends.
#[derive(Debug, Clone)]
pub struct RunFinish {
    /// Hex SHA-256 of the file's bytes: how a later upload of the same bytes is found.
    pub sha256: String,
    /// When the run ended.
    pub finished_at: DateTime<Utc>,
    /// Warnings found while reading (errors would have rejected the file).
    pub findings: Vec<Finding>,
}

/// A file rejected by validation (or unreadable): journaled, nothing posted.
#[derive(Debug, Clone)]
pub struct Rejection {
    /// The tenant the file was sent under.
    pub tenant: String,
    /// The file's identity; `None` when it was rejected before one was read.
    pub file_id: Option<String>,
    /// The reader's name (`nacha`, `iso20022`, a statement format).
    pub format: &'static str,
    /// Hex SHA-256 of the file's bytes.
    pub sha256: String,
    /// The name the file came under.
    pub source_name: String,
    /// When the run began.
    pub started_at: DateTime<Utc>,
    /// When it ended.
    pub finished_at: DateTime<Utc>,
    /// Records the reader counted in the file.
    pub records: u64,
    /// Every finding kept, the errors that rejected the file among them.
    pub findings: Vec<Finding>,
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunInfo {
    /// The run's id, unique in the ledger.
    pub run_id: i64,
    /// The tenant it ran under.
    pub tenant: String,
    /// The file's identity; `None` when the run has none (a file rejected before its
    /// identity was read, say).
    pub file_id: Option<String>,
    /// Hex SHA-256 of the file's bytes; empty for an operator's or a reconciliation's run.
    pub sha256: String,
    /// The reader's name (`nacha`, `iso20022`, a statement format), or `reconciliation`.
    pub format: String,
    /// The name the file came under, or what an operator's run did.
    pub source_name: String,
    /// When the run began: UTC, RFC 3339 with microseconds.
    pub started_at: String,
    /// When it ended, in the same form; `None` while it runs.
    pub finished_at: Option<String>,
    /// Where the run stands.
    pub status: RunStatus,
    /// Records seen.
    pub records: i64,
    /// Records posted.
    pub posted: i64,
    /// Records already posted with the same content.
    pub duplicates: i64,
    /// Records whose key was posted with other content: not posted.
    pub conflicts: i64,
    /// Records held for an operator's decision: not posted.
    pub held: i64,
    /// The posted amounts added up across currencies, in minor units: kept for older
    /// readers; [`RunInfo::totals`] is the figure to use.
    pub posted_amount_minor: i64,
    /// Error findings (a rejected file has at least one).
    pub errors: i64,
    /// Warning findings.
    pub warnings: i64,
    /// What the run was: an ingest, a decision on a held record, a compensation.
    pub kind: RunKind,
    /// An operator's run: why, and who (`--reason`, `--by`).
    pub reason: Option<String>,
    /// Who ran an operator's run (`--by`); `None` otherwise.
    pub actor: Option<String>,
    /// What it posted per currency.
    pub totals: Vec<CurrencyTotal>,
}

impl RunInfo {
    /// A value to fill in before the run is read back.
    pub(crate) fn placeholder() -> Self {
        RunInfo {
            run_id: 0,
            tenant: String::new(),
            file_id: None,
            sha256: String::new(),
            format: String::new(),
            source_name: String::new(),
            started_at: String::new(),
            finished_at: None,
            status: RunStatus::Running,
            records: 0,
            posted: 0,
            duplicates: 0,
            conflicts: 0,
            held: 0,
            posted_amount_minor: 0,
            errors: 0,
            warnings: 0,
            kind: RunKind::Ingest,
            reason: None,
            actor: None,
            totals: Vec::new(),
        }
    }
}

/// What a run was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    /// A file ingested (`clearledger ingest`).
    Ingest,
    /// An operator's decision on a held record (`clearledger resolve`).
    Resolve,
    /// Compensating postings (`clearledger reverse`).
    Reverse,
    /// A reconciliation of a bank account: its statement entries matched against the
    /// ledger's postings (`clearledger reconcile`).
    Reconcile,
}

impl RunKind {
    /// The kind as stored and printed: `ingest`, `resolve`, `reverse`, `reconcile`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Ingest => "ingest",
            RunKind::Resolve => "resolve",
            RunKind::Reverse => "reverse",
            RunKind::Reconcile => "reconcile",
        }
    }
    /// The kind [`RunKind::as_str`] spells `s`; `None` for any other word.
    pub(crate) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "ingest" => RunKind::Ingest,
            "resolve" => RunKind::Resolve,
            "reverse" => RunKind::Reverse,
            "reconcile" => RunKind::Reconcile,
            _ => return None,
        })
    }
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
    /// Committed: its postings and journal are in the ledger.
    Completed,
    /// The file was rejected by validation (or unreadable): journaled with its findings,
    /// nothing posted.
    Rejected,
}

impl RunStatus {
    /// The status as stored and printed: `running`, `completed`, `rejected`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Rejected => "rejected",
        }
    }
    /// The status [`RunStatus::as_str`] spells `s`; `None` for any other word.
    pub(crate) fn parse(s: &str) -> Option<Self> {
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct ReportRow {
    pub(crate) run_id: i64,
    pub(crate) file_id: String,
    pub(crate) record_no: i64,
    pub(crate) outcome: Outcome,
    pub(crate) posting_key: String,
    pub(crate) trace_number: Option<String>,
    pub(crate) amount_minor: i64,
    pub(crate) currency: String,
    pub(crate) debit_account: String,
    pub(crate) credit_account: String,
    pub(crate) original_file_id: Option<String>,
    pub(crate) original_record_no: Option<i64>,
    pub(crate) original_run_id: Option<i64>,
    pub(crate) original_posted_at: Option<String>,
    pub(crate) differences: Option<String>,
    pub(crate) reason: Option<String>,
    /// `record` (a record of a file, or a held one posted by decision), `compensation`
    /// (a reversing posting made by `clearledger reverse`; a NACHA return or a pacs.004 is
    /// a `record`), or `correction` (a correction `reconcile` posted).
    pub(crate) kind: String,
    /// A held record's decision (`post by NAME at TIME (run N): REASON`), if one was made.
    pub(crate) decision: Option<String>,
}

/// A finding as stored with its run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct StoredFinding {
    pub(crate) run_id: i64,
    pub(crate) seq: i64,
    pub(crate) severity: String,
    pub(crate) code: String,
    pub(crate) record_index: i64,
    pub(crate) line: i64,
    pub(crate) byte_offset: i64,
    pub(crate) field: Option<String>,
    pub(crate) columns: Option<String>,
    pub(crate) expected: String,
    pub(crate) found: String,
}

/// A posting as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Posting {
    pub(crate) posting_id: i64,
    pub(crate) tenant: String,
    pub(crate) operation: String,
    pub(crate) posting_key: String,
    pub(crate) file_id: String,
    pub(crate) record_no: i64,
    pub(crate) trace_number: Option<String>,
    pub(crate) debit_account: String,
    pub(crate) credit_account: String,
    pub(crate) amount_minor: i64,
    pub(crate) currency: String,
    pub(crate) effective_date: Option<String>,
    pub(crate) fingerprint: String,
    pub(crate) run_id: i64,
    pub(crate) posted_at: String,
    /// How many times the key was seen again (journal rows naming it).
    pub(crate) repeats: i64,
    /// The same, by what each sighting was.
    pub(crate) repeats_by_outcome: RepeatCounts,
}

/// Sightings of a posting again, by outcome (`Posting::repeats_by_outcome`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct RepeatCounts {
    pub(crate) duplicate: i64,
    pub(crate) conflict: i64,
    pub(crate) held: i64,
}

/// Ways to find a posting: every write has a read (docs/principles.md §8).
#[derive(Debug, Clone)]
pub(crate) enum Lookup {
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
    store: Store,
    /// What features write at a run's commit (`hooks.rs`).
    hooks: hooks::Hooks,
}

impl Ledger {
    /// The database, for a feature's own tables: statements written once for both
    /// backends, inside the run's transaction when called from a [`CommitHook`].
    pub(crate) fn store(&mut self) -> &mut Store {
        &mut self.store
    }
}

impl DbOptions {
    fn pg_timeouts(&self) -> postgres::PgTimeouts {
        postgres::PgTimeouts {
            connect: self.connect_timeout,
            lock: self.lock_timeout,
            statement: self.statement_timeout,
        }
    }
}

/// Opens the ledger named by `url` (`sqlite://PATH` or `postgres://…`), creating and
/// migrating it on first use. A PostgreSQL database that does not exist is an error
/// (`3D000`, a configuration error): [`open_creating`] creates it.
pub async fn open(url: &str, opts: &DbOptions) -> Result<Ledger> {
    let store = connect(url, opts).await?;
    let mut l = Ledger {
        store,
        hooks: Default::default(),
    };
    l.migrate().await?;
    Ok(l)
}

/// The store `url` names, connected.
async fn connect(url: &str, opts: &DbOptions) -> Result<Store> {
    Ok(match Dialect::of_url(url) {
        Some(Dialect::Sqlite) => {
            Store::new(sqlite::SqliteStore::connect(url, opts.lock_timeout).await?)
        }
        Some(Dialect::Postgres) => {
            Store::new(postgres::PgStore::connect(url, opts.pg_timeouts()).await?)
        }
        None => return Err(LedgerError::unsupported_url(url)),
    })
}

/// Opens the ledger without applying any pending migration: `db backup` copies a ledger as
/// it is (back up, then upgrade), even one whose migration cannot run.
pub async fn open_as_is(url: &str, opts: &DbOptions) -> Result<Ledger> {
    let store = connect(url, opts).await?;
    Ok(Ledger {
        store,
        hooks: Default::default(),
    })
}

/// [`open`], first creating the PostgreSQL database the URL names when it does not exist
/// (through the maintenance database, with the same credentials: the role needs CREATEDB).
/// Returns the ledger and whether the database was created (`db migrate`).
pub async fn open_creating(url: &str, opts: &DbOptions) -> Result<(Ledger, bool)> {
    match open(url, opts).await {
        Err(e) if e.is_missing_database() => {
            postgres::create_database(url, opts.pg_timeouts()).await?;
            Ok((open(url, opts).await?, true))
        }
        other => other.map(|l| (l, false)),
    }
}

/// `url` with its password replaced by `***`, for every URL that is printed or logged: the
/// userinfo's (`scheme://user:password@host…`; an SQLite URL is a path and has none) and
/// any query parameter named `password` (or ending in it: `sslpassword`). A password
/// holding `@`, `/`, `?` or `#` unescaped is still hidden whole (the userinfo ends at the
/// last `@` before the path; over-redacting is the safe side).
pub fn redact_url(url: &str) -> String {
    let (scheme, rest) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => ("", url),
    };
    let before_query = &rest[..rest.find('?').unwrap_or(rest.len())];
    let authority = &before_query[..before_query.find('/').unwrap_or(before_query.len())];
    // An SQLite URL is a path, with no userinfo.
    let at = if scheme.is_empty() || Dialect::of_url(url) == Some(Dialect::Sqlite) {
        None
    } else {
        authority
            .rfind('@')
            .or_else(|| before_query.rfind('@'))
            .or_else(|| rest.rfind('@'))
    };
    // No `://` (a typo such as `postgres//u:pw@h/d` or `sqlit:u:pw@h`): whatever stands
    // before an `@` may be a password.
    if scheme.is_empty()
        && Dialect::of_url(url) != Some(Dialect::Sqlite)
        && let Some(at) = url.rfind('@')
    {
        return format!("***{}", &url[at..]);
    }
    let mut out = String::with_capacity(url.len());
    out.push_str(scheme);
    let tail = match at {
        Some(at) => {
            let userinfo = &rest[..at];
            match userinfo.split_once(':') {
                Some((user, password)) if !password.is_empty() => {
                    out.push_str(user);
                    out.push_str(":***");
                }
                _ => out.push_str(userinfo),
            }
            &rest[at..]
        }
        None => rest,
    };
    match tail.split_once('?') {
        Some((path, query)) => {
            out.push_str(path);
            out.push('?');
            let params: Vec<String> = query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, v))
                        if !v.is_empty() && k.to_ascii_lowercase().ends_with("password") =>
                    {
                        format!("{k}=***")
                    }
                    _ => kv.to_string(),
                })
                .collect();
            out.push_str(&params.join("&"));
        }
        None => out.push_str(tail),
    }
    out
}

/// SQLSTATEs of a PostgreSQL refusal no retry can fix, and what to fix.
const PG_CONFIGURATION_ERRORS: &[(&str, &str)] = &[
    (
        "28P01",
        "check the user name and password in the database URL (or PGPASSWORD)",
    ),
    (
        "28000",
        "the server refuses this role from this host: check the user in the database URL, \
         that the role may log in, and the server's pg_hba.conf",
    ),
    (
        "3D000",
        "create it with `clearledger db migrate` (the role needs CREATEDB; otherwise an \
         administrator runs CREATE DATABASE … OWNER the role), or fix the database name in the URL",
    ),
    (
        "42501",
        "give the role the privilege: make it the owner of the database (CREATE DATABASE … \
         OWNER the role) or GRANT CREATE ON SCHEMA public TO the role (PostgreSQL 15 grants \
         it to the owner only; README, Backends)",
    ),
];

/// What to fix when an SQLite file cannot be opened or written.
const SQLITE_CANNOT_OPEN: &str = "check that the file's directory exists and that this user may \
     create and write files in it";
const SQLITE_READ_ONLY: &str = "the SQLite file or its directory is not writable by this user, \
     or the URL says mode=ro: fix the permissions or the URL";
const SQLITE_NOT_A_DATABASE: &str =
    "the file the URL names is not a SQLite database: check the path in the URL";
const BAD_URL: &str = "fix the database URL (--db, CLEARLEDGER_DB or DATABASE_URL): \
     sqlite://PATH or postgres://USER[:PASSWORD]@HOST[:PORT]/DB";

fn pg_code(e: &sqlx::Error) -> Option<String> {
    match e {
        sqlx::Error::Database(d) => d.code().map(|c| c.into_owned()),
        _ => None,
    }
}

fn pg_configuration_fix(e: &sqlx::Error) -> Option<&'static str> {
    if let sqlx::Error::Configuration(_) = e {
        return Some(BAD_URL);
    }
    let code = pg_code(e)?;
    PG_CONFIGURATION_ERRORS
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, fix)| *fix)
}

fn sqlite_configuration_fix(e: &rusqlite::Error) -> Option<&'static str> {
    use rusqlite::ErrorCode;
    /// SQLITE_READONLY itself (a write-protected file, `mode=ro`) and
    /// SQLITE_READONLY_DIRECTORY; not its other extended codes (a hot journal to recover,
    /// a lock not had, a file moved under the process), which a retry may fix.
    const READONLY_CODES: [std::ffi::c_int; 2] = [8, 8 | (6 << 8)];
    let err = e.sqlite_error()?;
    match err.code {
        ErrorCode::CannotOpen | ErrorCode::PermissionDenied => Some(SQLITE_CANNOT_OPEN),
        ErrorCode::ReadOnly if READONLY_CODES.contains(&err.extended_code) => {
            Some(SQLITE_READ_ONLY)
        }
        ErrorCode::NotADatabase => Some(SQLITE_NOT_A_DATABASE),
        _ => None,
    }
}

impl LedgerError {
    /// An unsupported URL, redacted.
    pub(crate) fn unsupported_url(url: &str) -> Self {
        LedgerError::UnsupportedUrl(redact_url(url))
    }

    /// A configuration mistake that no retry can fix (CLI exit 7): an unsupported or
    /// unparsable URL, an authentication failure (`28P01`, `28000`), a missing database
    /// (`3D000`), a missing privilege (`42501`, e.g. CREATE on schema public), an SQLite
    /// file that cannot be opened or created (missing directory, no permission),
    /// written (read-only) or is not a database. A server down, a timeout, a lock, a
    /// deadlock or a full disk are not: a retry may fix them.
    pub fn is_configuration(&self) -> bool {
        self.configuration_fix().is_some()
    }

    /// What the operator has to fix, for a configuration error; `None` otherwise.
    pub fn configuration_fix(&self) -> Option<&'static str> {
        match self {
            LedgerError::UnsupportedUrl(_) => Some(BAD_URL),
            LedgerError::Database { source, .. } => pg_configuration_fix(source),
            LedgerError::Sqlite { source, .. } => sqlite_configuration_fix(source),
            LedgerError::CreateDatabase { source, .. } => {
                if pg_code(source).as_deref() == Some("42501") {
                    Some(
                        "the role may not create databases: grant it CREATEDB, or have an \
                         administrator run CREATE DATABASE … OWNER the role",
                    )
                } else {
                    pg_configuration_fix(source)
                }
            }
            _ => None,
        }
    }

    /// The PostgreSQL database the URL names does not exist (`3D000`).
    pub fn is_missing_database(&self) -> bool {
        match self {
            LedgerError::Database { source, .. } => pg_code(source).as_deref() == Some("3D000"),
            _ => false,
        }
    }

    /// A unique index refused an insert with an error (SQLSTATE 23505, SQLite's
    /// SQLITE_CONSTRAINT_UNIQUE or _PRIMARYKEY) instead of `ON CONFLICT` classifying it:
    /// a path that escaped the insert-first protocol (docs/principles.md §7; a metric, target 0).
    pub fn is_unique_violation(&self) -> bool {
        match self {
            LedgerError::Database { source, .. } => matches!(
                source,
                sqlx::Error::Database(d) if d.code().as_deref() == Some("23505")
            ),
            LedgerError::Sqlite { source, .. } => matches!(
                source,
                rusqlite::Error::SqliteFailure(f, _) if f.extended_code == 2067 || f.extended_code == 1555
            ),
            LedgerError::AfterCommit { source, .. } | LedgerError::CommitUnknown { source, .. } => {
                source.is_unique_violation()
            }
            _ => false,
        }
    }

    /// A failure worth retrying as a whole run: a PostgreSQL deadlock (`40P01`) or
    /// serialization failure (`40001`).
    pub(crate) fn is_retryable(&self) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_url_hides_every_password() {
        let table = [
            (
                "postgres://ledger:s3cret@db:5432/ledger?sslmode=require",
                "postgres://ledger:***@db:5432/ledger?sslmode=require",
            ),
            ("postgres://ledger@db/ledger", "postgres://ledger@db/ledger"),
            (
                "postgres://ledger:@db/ledger",
                "postgres://ledger:@db/ledger",
            ),
            ("postgres://db/ledger", "postgres://db/ledger"),
            ("postgres://db:5432", "postgres://db:5432"),
            ("postgresql://u:p%40ss@h/d", "postgresql://u:***@h/d"),
            // Unescaped @ / ? # inside the password: hidden whole.
            ("postgres://u:p@ss@h/d", "postgres://u:***@h/d"),
            ("postgres://u:pa/ss@h/d", "postgres://u:***@h/d"),
            ("postgres://u:pa?ss@h/d", "postgres://u:***@h/d"),
            ("postgres://u:pa#ss@h/d", "postgres://u:***@h/d"),
            (
                "postgres://u@h/d?user=u&password=s3cret&sslmode=require",
                "postgres://u@h/d?user=u&password=***&sslmode=require",
            ),
            (
                "postgres://u:a@h/d?sslpassword=k&PASSWORD=x",
                "postgres://u:***@h/d?sslpassword=***&PASSWORD=***",
            ),
            (
                "postgres://u@h/d?sslrootcert=/etc/ca@x.pem",
                "postgres://u@h/d?sslrootcert=/etc/ca@x.pem",
            ),
            ("postgress://u:s3cret@h/d", "postgress://u:***@h/d"),
            ("sqlite://clearledger.db", "sqlite://clearledger.db"),
            (
                "sqlite:///srv/a@b.db?mode=ro",
                "sqlite:///srv/a@b.db?mode=ro",
            ),
            ("sqlite:l.db", "sqlite:l.db"),
            ("sqlite:///srv/a:b@c.db", "sqlite:///srv/a:b@c.db"),
            // No `://`: everything before the `@` hidden.
            ("postgres//u:S3cret@h/d", "***@h/d"),
            ("sqlit:u:pw@h/d", "***@h/d"),
            ("postgres:/u:pw@h/d", "***@h/d"),
        ];
        for (url, want) in table {
            assert_eq!(redact_url(url), want, "{url}");
        }
    }
}
