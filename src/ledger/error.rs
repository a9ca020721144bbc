//! Why a ledger call failed, said so that an operator can act on it: a mistake only the
//! operator can fix (a configuration error, with what to fix) told apart from a failure a
//! retry may fix, and no database password in any message (`redact_url`).

use super::backend::Dialect;

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
    /// The server is a Citus worker node: a ledger connects to the coordinator, where its
    /// identities are drawn and its advisory locks taken.
    #[error(
        "the server is a Citus worker node (group {group}), not the coordinator: a ledger's run \
         numbers and locks are only right on the coordinator"
    )]
    CitusWorker {
        /// The worker's group id (`pg_dist_local_group`).
        group: i64,
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
    /// A reconciliation's items could not be written to or read back from their
    /// temporary file (`$TMPDIR`, a disk full?): nothing of the run was recorded.
    #[error(
        "cannot keep the reconciliation's items in a temporary file in {dir} (set TMPDIR to a directory with room): {0}",
        dir = std::env::temp_dir().display()
    )]
    TempFile(#[source] std::io::Error),
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

/// A ledger call's result.
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
         it to the owner only; docs/postgres-production.md)",
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
            LedgerError::CitusWorker { .. } => Some(
                "connect to the Citus coordinator (the node where citus_add_node added the \
                 workers), never to a worker",
            ),
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

    /// The database refused a text the caller gave: PostgreSQL's "data exception"s of
    /// characters and lengths (a NUL character, `22021`; a character the encoding lacks,
    /// `22P05`; a string too long, `22001`, `22026`). A retry sends the same text and fails
    /// the same way: it is the caller's to fix, never "safe to retry". The edges refuse what
    /// they can name before the database (`serve::text`); this is the last line for what
    /// they cannot. Other data exceptions (an overflow in a sum, a division by zero) are the
    /// server's, not the caller's.
    pub fn is_unstorable_input(&self) -> bool {
        const TEXT_REFUSED: [&str; 4] = ["22021", "22P05", "22001", "22026"];
        match self {
            LedgerError::Database { source, .. } => {
                pg_code(source).is_some_and(|c| TEXT_REFUSED.contains(&c.as_str()))
            }
            _ => false,
        }
    }

    /// The database's storage is full: SQLite's `SQLITE_FULL` (its volume, or its temporary
    /// files'), PostgreSQL's `53100 disk_full`. Nothing was committed; a retry fails the
    /// same way until an operator frees space.
    pub fn is_storage_full(&self) -> bool {
        match self {
            LedgerError::Database { source, .. } => pg_code(source).as_deref() == Some("53100"),
            LedgerError::Sqlite { source, .. } => matches!(
                source,
                rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::DiskFull
            ),
            _ => false,
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
