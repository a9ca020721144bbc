//! Command-line interface: one file per subcommand, no business logic here.
//!
//! Nothing here prints with `println!` or `eprintln!`: they panic when standard output or
//! error is closed or full (exit 101), and a panic after a commit hides that the run
//! committed. `outln!` returns the write's error for the caller to classify (`out`);
//! `errln!` writes to standard error and ignores a failure (there is nowhere left to say it;
//! the exit code still tells).

/// Writes one line on standard output and flushes it; the error (a closed pipe, a full
/// disk) is returned, never a panic.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::out::line(format_args!($($arg)*))
    };
}

/// Writes one line on standard error; a failure is ignored, never a panic. Under
/// `--log-format json` it is one JSON event (`events`), at level `error`, or the level
/// named first: `errln!(info: "…")`, `errln!(warn: "…")`.
macro_rules! errln {
    (info: $($arg:tt)*) => {
        $crate::cli::out::err_line(tracing::Level::INFO, format_args!($($arg)*))
    };
    (warn: $($arg:tt)*) => {
        $crate::cli::out::err_line(tracing::Level::WARN, format_args!($($arg)*))
    };
    ($($arg:tt)*) => {
        $crate::cli::out::err_line(tracing::Level::ERROR, format_args!($($arg)*))
    };
}

pub(crate) mod account;
pub(crate) mod actions;
pub(crate) mod apikey;
pub(crate) mod check;
pub(crate) mod db;
pub(crate) mod events;
pub(crate) mod generate;
pub(crate) mod inbox;
pub(crate) mod ingest;
pub(crate) mod lookup;
pub(crate) mod out;
pub(crate) mod reconcile;
pub(crate) mod report;
pub(crate) mod runs;
pub(crate) mod serve;
pub(crate) mod signals;
pub(crate) mod statements;
pub(crate) mod tenant;
pub(crate) mod webhook;

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::process::ExitCode;
use std::time::Duration;

/// The program: parses the command line, sets up logging, the signal handlers and the
/// runtime, and runs the command. `src/main.rs` calls it and nothing else.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A refused command line under `--log-format json` is a JSON event too.
        Err(e) if e.use_stderr() && events::json_requested(std::env::args_os()) => {
            events::init(LogFormat::Json);
            let text = e.render().to_string();
            out::err_line(tracing::Level::ERROR, format_args!("{}", text.trim_end()));
            return ExitCode::from(exit::USAGE);
        }
        Err(e) => e.exit(),
    };
    events::init(cli.global.log_format);
    signals::install(cli.global.log_format == LogFormat::Json);
    // The server answers many requests at once: a runtime with a worker per core.
    let mut builder = match cli.command {
        Command::Serve(_) => tokio::runtime::Builder::new_multi_thread(),
        _ => tokio::runtime::Builder::new_current_thread(),
    };
    let rt = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            out::err_line(
                tracing::Level::ERROR,
                format_args!("clearledger: cannot start the runtime: {e}"),
            );
            return ExitCode::from(exit::INFRASTRUCTURE);
        }
    };
    ExitCode::from(rt.block_on(dispatch(&cli)))
}

/// Runs the command: one file a subcommand.
async fn dispatch(cli: &Cli) -> u8 {
    let g = &cli.global;
    match &cli.command {
        Command::Ingest(a) => ingest::run(g, a).await,
        Command::Check(a) => check::run(g, a),
        Command::Report(a) => report::run(g, a).await,
        Command::Runs(a) => runs::run(g, a).await,
        Command::Lookup(a) => lookup::run(g, a).await,
        Command::Held(a) => actions::held(g, a).await,
        Command::Resolve(a) => actions::resolve(g, a).await,
        Command::Reverse(a) => actions::reverse(g, a).await,
        Command::Tenant(a) => tenant::run(g, a).await,
        Command::Statements(a) => statements::run(g, a).await,
        Command::Account(a) => account::run(g, a).await,
        Command::Reconcile(a) => reconcile::run(g, a).await,
        Command::Serve(a) => serve::run(g, a).await,
        Command::Apikey(a) => apikey::run(g, a).await,
        Command::Webhook(a) => webhook::run(g, a).await,
        Command::Db(a) => db::run(g, a).await,
        Command::Generate(a) => generate::run(a),
    }
}

/// Exit codes (also in the README and `--help`).
pub mod exit {
    /// Every file processed; every record posted or a true duplicate.
    pub const OK: u8 = 0;
    /// Processed, but needs attention: conflicts or held records (or, for `check`,
    /// warnings only).
    pub const ATTENTION: u8 = 1;
    /// Command-line usage error (from clap), or a `--tenant` the ledger does not know.
    pub const USAGE: u8 = 2;
    /// A file was rejected: it failed validation or could not be read. Nothing of it
    /// was posted.
    pub const REJECTED: u8 = 3;
    /// Infrastructure failure (database unreachable, locked, disk full, report not
    /// writable): nothing of the failed run was committed; safe to retry (a mistake in the
    /// configuration is [`CONFIG`] instead). Two cases where the process cannot know
    /// whether its COMMIT took effect say so in their message and are exit 4 too, since a
    /// rerun is safe either way (the natural keys find what committed): the PostgreSQL
    /// connection lost during COMMIT, and SQLite's WAL index (`-shm`) truncated under the
    /// process (SIGBUS).
    pub const INFRASTRUCTURE: u8 = 4;
    /// Not found (`report`, `lookup`): no such run or posting for this tenant.
    pub const NOT_FOUND: u8 = 5;
    /// A failure after a commit: the run is in the ledger, and a step after it failed (the
    /// report or the summary could not be written, standard output closed or full, the
    /// database lost while the report was read, the inbox could not archive). The message
    /// names the run; `clearledger report N` prints its report again. Ingesting the file
    /// again would post nothing (a new run, every record a duplicate).
    pub const AFTER_COMMIT: u8 = 6;
    /// Configuration error, not retryable: a mistake only the operator can fix (an
    /// unsupported or unparsable database URL, a wrong user or password, a PostgreSQL
    /// database that does not exist, a missing privilege such as CREATE on schema
    /// public, an SQLite file or directory that cannot be opened, created or written).
    /// Nothing was committed; the message says what to fix. A retry loop should stop.
    pub const CONFIG: u8 = 7;
}

const AFTER_HELP: &str = "\
EXIT CODES:
    0  processed: every record posted or a true duplicate
    1  processed with conflicts or held records: needs attention (check: warnings only)
    2  usage error (also an unknown --tenant: `clearledger tenant add NAME`, or a value
       the database refuses to store: not retryable)
    3  file rejected: failed validation or unreadable; nothing of it posted
    4  infrastructure failure (database unreachable or locked, disk full): nothing of
       the failed run committed; safe to retry. Also when the outcome of a COMMIT is
       unknown (the PostgreSQL connection lost during it; SQLite's -shm truncated:
       SIGBUS): the message says so; a rerun is safe either way
    5  not found (report, lookup)
    6  failure after a commit (report or output not written, database lost while the
       report was read): the run is in the ledger; the message names it, and
       `clearledger report N` prints its report again
    7  configuration error, not retryable (database URL, user or password, missing
       database, missing privilege, SQLite file or directory): the message says
       what to fix; nothing committed

ENVIRONMENT:
    CLEARLEDGER_DB, DATABASE_URL   database URL when --db is not given
    CLEARLEDGER_TENANT             tenant when --tenant is not given
    RUST_LOG                       log filter (tracing), e.g. RUST_LOG=clearledger=debug";

/// clearledger: clearing files into an exactly-once ledger.
///
/// Parses NACHA ACH files, ISO 20022 messages (pain.001, pacs.008, pacs.004) and bank
/// statements (camt.052/053/054, BAI2, MT940/MT942), validates every field and control
/// total, and posts each record exactly once behind the ledger's unique index (SQLite, or
/// PostgreSQL for many workers). A file uploaded again posts nothing and reports, record by
/// record, the original each one duplicates; a record whose key was seen with other content
/// is a conflict, never posted. The ledger is reconciled with the bank's statements
/// (`reconcile`) and served over HTTP (`serve`).
#[derive(Debug, Parser)]
#[command(name = "clearledger", version, after_help = AFTER_HELP)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalOpts,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The options every command takes, listed under their own heading in each `--help`, after
/// the command's own.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub(crate) struct GlobalOpts {
    /// Database URL: sqlite://PATH (default sqlite://clearledger.db) or
    /// postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=require|verify-full]
    /// (password also from PGPASSWORD); also from CLEARLEDGER_DB or DATABASE_URL.
    /// Printed with its password as `***`.
    #[arg(long, global = true, env = "CLEARLEDGER_DB", hide_env_values = true)]
    pub(crate) db: Option<String>,
    /// Tenant the keys are scoped to: the same file under two tenants is two files. It
    /// must be known to the ledger (`clearledger tenant add NAME`; `default` always is).
    #[arg(
        long,
        global = true,
        env = "CLEARLEDGER_TENANT",
        default_value = "default"
    )]
    pub(crate) tenant: String,
    /// How long to wait for a lock another process holds (SQLite: the write lock;
    /// PostgreSQL: `lock_timeout`, e.g. another worker's claim on the same file).
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 300)]
    pub(crate) lock_timeout: u64,
    /// PostgreSQL `statement_timeout` for any one statement.
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 600)]
    pub(crate) statement_timeout: u64,
    /// PostgreSQL connect timeout.
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 10)]
    pub(crate) connect_timeout: u64,
    /// No progress bar, no text summary (errors still go to stderr).
    #[arg(long, short, global = true)]
    pub(crate) quiet: bool,
    /// Log format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    Text,
    Json,
}

impl GlobalOpts {
    pub(crate) fn db_url(&self) -> String {
        self.db
            .clone()
            .or_else(|| std::env::var("DATABASE_URL").ok().filter(|s| !s.is_empty()))
            .unwrap_or_else(|| "sqlite://clearledger.db".to_string())
    }
    pub(crate) fn db_options(&self) -> crate::ledger::DbOptions {
        crate::ledger::DbOptions {
            lock_timeout: Duration::from_secs(self.lock_timeout),
            statement_timeout: Duration::from_secs(self.statement_timeout),
            connect_timeout: Duration::from_secs(self.connect_timeout),
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Ingest clearing files: post each record exactly once, report every record.
    Ingest(ingest::IngestArgs),
    /// Parse and validate files without a database; print every finding.
    Check(check::CheckArgs),
    /// Print the per-record report of a run (RUN_ID) or of every run of a file (FILE_ID).
    Report(report::ReportArgs),
    /// List recent runs.
    Runs(runs::RunsArgs),
    /// Find postings by trace number, file_id and record_no, posting key, UETR or EndToEndId.
    Lookup(lookup::LookupArgs),
    /// Every held record waiting for a decision (run, record, key, amount, reason, the
    /// posting it resembles).
    Held(actions::HeldArgs),
    /// Decide on a held record: post it under its own key, or reject it; journaled with
    /// who, when and why. The same decision again is "already resolved" (exit 0); the
    /// opposite one is refused (exit 1).
    Resolve(actions::ResolveArgs),
    /// Compensate a run's postings (or one posting, --key): new postings with the accounts
    /// swapped and key `{posting_key}:compensate`; reversing again posts nothing.
    Reverse(actions::ReverseArgs),
    /// The tenants this ledger knows: add one, list them.
    Tenant(tenant::TenantArgs),
    /// Bank statements recorded: balances and continuity per account (exit 1 when an
    /// account's chain breaks).
    Statements(statements::StatementsArgs),
    /// Which ledger accounts a bank account's statements are reconciled with: map, list.
    Account(account::AccountArgs),
    /// Reconcile a bank account: every posting of its mapped ledger accounts and every
    /// booked statement entry matched or explained (missing_ours first), the balance
    /// checked, corrections posted on request (exit 1 when an item needs attention).
    Reconcile(reconcile::ReconcileArgs),
    /// Serve the ledger over HTTP: uploads with Idempotency-Key, a read for every write,
    /// /metrics, and the operator console for people at /console/ (sign in with an API
    /// key) (until SIGTERM; requests in flight finish first).
    Serve(serve::ServeArgs),
    /// API keys for `serve`, one tenant each: create (printed once), list, revoke.
    Apikey(apikey::ApiKeyArgs),
    /// Webhooks for `serve`: providers whose signed events move postings' status, and the
    /// endpoint a tenant's notifications are delivered to.
    Webhook(webhook::WebhookArgs),
    /// Database maintenance.
    Db(db::DbArgs),
    /// Write synthetic files for performance runs.
    Generate(generate::GenerateArgs),
}

/// The NACHA rules a user may relax, shared by `check` and `ingest` (flattened into both).
/// Each flag is named after moov-io/ach's `ValidateOpts` field of the same effect; a
/// relaxed rule still reports what it found, as a warning.
#[derive(Debug, Clone, Args)]
pub(crate) struct NachaRuleArgs {
    /// Accept an immediate destination that is not a valid routing number (vendors'
    /// return files carry placeholders): reported as a warning instead of rejecting.
    #[arg(long)]
    pub(crate) bypass_destination_check: bool,
    /// Accept a batch header whose company name or company entry description is blank
    /// or all zeros (ACH operator edits 2l, 2m): reported as a warning instead of
    /// rejecting.
    #[arg(long)]
    pub(crate) skip_batch_header_company_validation: bool,
    /// Accept a TEL entry whose individual name is blank or all zeros (ACH operator edit
    /// 3f): reported as a warning instead of rejecting.
    #[arg(long)]
    pub(crate) allow_empty_individual_name: bool,
}

impl NachaRuleArgs {
    pub(crate) fn options(&self) -> crate::formats::nacha::ValidateOptions {
        crate::formats::nacha::ValidateOptions {
            bypass_destination_check: self.bypass_destination_check,
            skip_batch_header_company_validation: self.skip_batch_header_company_validation,
            allow_empty_individual_name: self.allow_empty_individual_name,
        }
    }
}

/// Opens the ledger, runs `body` on it and closes it whatever `body` returned (PostgreSQL
/// then sees a Terminate message, not a reset connection). A ledger that cannot be opened
/// is an infrastructure failure, or a configuration error ([`infra_error`]).
pub(crate) async fn with_ledger(
    g: &GlobalOpts,
    body: impl AsyncFnOnce(&mut crate::ledger::Ledger) -> u8,
) -> u8 {
    let mut ledger = match crate::ledger::open(&g.db_url(), &g.db_options()).await {
        Ok(l) => l,
        Err(e) => return infra_error(&e),
    };
    crate::serve::store::notify_on_commit(&mut ledger);
    let code = body(&mut ledger).await;
    ledger.close().await;
    code
}

/// How many known tenants the message about an unknown one names (the rest are counted:
/// `clearledger tenant list` shows them all); a ledger of thousands of tenants would
/// otherwise print them all for one typo.
const TENANTS_NAMED_MAX: usize = 20;

/// The check a command that writes to or reads from `--tenant` makes once, after the
/// ledger is opened and before anything else: `None` when the tenant is known; else the
/// exit code, the message said (an unknown tenant is a usage error, naming the known ones;
/// a database failure an infrastructure one).
pub(crate) async fn require_tenant(
    g: &GlobalOpts,
    ledger: &mut crate::ledger::Ledger,
) -> Option<u8> {
    match ledger.tenant_known(&g.tenant).await {
        Ok(true) => return None,
        Ok(false) => {}
        Err(e) => return Some(infra_error(&e)),
    }
    let known = match ledger.known_tenants().await {
        Ok(t) => t,
        Err(e) => return Some(infra_error(&e)),
    };
    errln!(
        "clearledger: {}",
        unknown_tenant(&g.tenant, known.iter().map(|t| t.name.as_str()))
    );
    Some(exit::USAGE)
}

/// `unknown tenant "defualt"; known tenants: default, acme; add one with …`.
fn unknown_tenant<'a>(tenant: &str, known: impl ExactSizeIterator<Item = &'a str>) -> String {
    let n = known.len();
    let mut names: Vec<&str> = known.take(TENANTS_NAMED_MAX).collect();
    let more = format!("and {} more", n.saturating_sub(TENANTS_NAMED_MAX));
    if n > TENANTS_NAMED_MAX {
        names.push(&more);
    }
    let names = if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    };
    format!(
        "unknown tenant {tenant:?}; known tenants: {names}; add one with `clearledger tenant add NAME`"
    )
}

/// Prints an error for a database failure and returns its exit code: a value the database
/// refused ([`crate::ledger::LedgerError::is_unstorable_input`]) is [`exit::USAGE`]; a
/// configuration mistake ([`crate::ledger::LedgerError::is_configuration`]) is [`exit::CONFIG`], said
/// "not retryable" with what to fix; anything else [`exit::INFRASTRUCTURE`], "safe to
/// retry". Only for a failure before anything was committed.
pub(crate) fn infra_error(e: &crate::ledger::LedgerError) -> u8 {
    if e.is_unstorable_input() {
        errln!(
            "clearledger: the database refused a value given to it (not retryable): {e}; \
             remove it from the input (a NUL character, for one, cannot be stored)"
        );
        return exit::USAGE;
    }
    match e.configuration_fix() {
        Some(fix) => {
            errln!("clearledger: configuration error (not retryable): {e}; {fix}");
            exit::CONFIG
        }
        None => {
            errln!("clearledger: infrastructure failure (safe to retry): {e}");
            exit::INFRASTRUCTURE
        }
    }
}

/// "run 3", or "runs 3, 4".
pub(crate) fn run_list(ids: &[i64]) -> String {
    let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
    match ids.len() {
        1 => format!("run {}", ids[0]),
        _ => format!("runs {}", ids.join(", ")),
    }
}

/// Prints that `what` failed after run `run_id` committed, and returns the post-commit exit
/// code.
pub(crate) fn after_commit(what: &dyn std::fmt::Display, run_id: i64) -> u8 {
    errln!(
        "clearledger: {what}; committed as run {run_id}; the report can be printed again with \
         `clearledger report {run_id}`"
    );
    exit::AFTER_COMMIT
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_unknown_tenant_names_the_known_ones() {
        assert_eq!(
            super::unknown_tenant("defualt", ["default", "acme"].into_iter()),
            "unknown tenant \"defualt\"; known tenants: default, acme; add one with \
             `clearledger tenant add NAME`"
        );
        let many: Vec<String> = (0..25).map(|i| format!("t{i}")).collect();
        let msg = super::unknown_tenant("x", many.iter().map(String::as_str));
        assert!(
            msg.contains(
                "known tenants: t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, \
                          t14, t15, t16, t17, t18, t19, and 5 more;"
            ),
            "{msg}"
        );
    }
}
