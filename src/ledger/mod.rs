//! The exactly-once core; it names no feature. One protocol (`protocol.rs`, the run;
//! `apply.rs`, the insert-first pass; `reads.rs`; `migrate.rs`) and its SQL (`sql.rs`),
//! written once against one trait (`backend.rs`; `bulk.rs` for a feature's many rows) that
//! SQLite (`sqlite.rs`, through rusqlite) and PostgreSQL (`postgres.rs`, through sqlx;
//! `citus.rs` on a Citus coordinator) implement. Both arbitrate with `INSERT … ON CONFLICT DO NOTHING` against the same unique
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
//! threads: ≈9 µs a row read, docs/performance.md), through sqlx's raw handle and an
//! `unsafe` borrow; running all SQLite work on rusqlite removes both, and the measured
//! rates did not drop (docs/architecture.md).

mod apply;
pub(crate) mod backend;
pub(crate) mod bulk;
mod citus;
mod classify;
mod error;
mod hooks;
mod migrate;
mod postgres;
mod protocol;
mod reads;
pub(crate) use reads::{CONFLICT_COLUMNS, RunFilter};
pub(crate) mod sql;
mod sqlite;
pub(crate) mod store;

use crate::findings::Finding;
use crate::keys::{FileIdentity, Outcome};
pub(crate) use backend::{Dialect, Store};
use chrono::{DateTime, Utc};
/// What a feature's own SQL is written with (`store.rs`): statements with `$n`
/// placeholders run on either backend, rows read back by column.
pub(crate) use classify::ts;
pub(crate) use error::{Context, During};
pub use error::{LedgerError, Result, redact_url};
pub use hooks::{CommitHook, HookFuture};
use serde::Serialize;
pub(crate) use store::{Arg, Row, args};

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
    /// Statements it recorded whose balances do not add up (statement runs only).
    pub unbalanced: i64,
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
            unbalanced: 0,
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
    /// completed run with conflicts, held records or statements recorded unbalanced is
    /// `needs_attention` (the ingest's exit
    /// code 1); otherwise its stored status.
    pub fn status_word(&self) -> &'static str {
        match self.status {
            RunStatus::Completed if self.conflicts > 0 || self.held > 0 || self.unbalanced > 0 => {
                "needs_attention"
            }
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
