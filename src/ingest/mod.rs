//! The only place that reads files, runs the parser thread and calls the ledger.
//!
//! One file is one run: a parser thread frames, parses and validates the file and
//! sends posting records in chunks through a bounded channel; the writer (async, on
//! the runtime) applies each chunk inside the run's single transaction as it arrives,
//! so parsing and inserting overlap. When the parser reaches the end:
//! - no error finding: the run commits (postings, journal, claim and completion mark
//!   together) — or, with `--dry-run`, the report is read inside the transaction and
//!   the transaction is rolled back;
//! - any error finding: the transaction is rolled back (nothing posted) and the
//!   rejection with all its findings is journaled in a small transaction of its own.

mod parse;
mod prehash;
mod statements;

use crate::findings::{Finding, Severity};
use crate::formats::detect::{self, Detected, FileFormat};
use crate::formats::nacha;
use crate::keys::FileIdentity;
use crate::ledger::{
    CommitHook, Counts, Ledger, LedgerError, OpenRun, Rejection, ReportRow, RunFinish, RunInfo,
    RunStart,
};
use chrono::{DateTime, Utc};
use parse::{CHUNKS_IN_FLIGHT, Msg, ParseDone, parse_thread};
use prehash::PreHashed;
use std::io::Read;
use std::path::PathBuf;
use tokio::sync::mpsc;

/// Records per chunk sent from the parser to the writer.
pub(crate) const CHUNK_RECORDS: usize = 2_000;

/// Where the bytes come from.
#[derive(Debug, Clone)]
pub(crate) enum Input {
    Path(PathBuf),
    Stdin,
    /// A file received over HTTP, spooled to `path`; its runs are named `name`.
    Upload {
        path: PathBuf,
        name: String,
    },
}

impl Input {
    pub(crate) fn name(&self) -> String {
        match self {
            Input::Path(p) => p.display().to_string(),
            Input::Stdin => "-".to_string(),
            Input::Upload { name, .. } => name.clone(),
        }
    }
    fn open(&self) -> std::io::Result<(Box<dyn Read + Send>, Option<u64>)> {
        match self {
            Input::Path(p) | Input::Upload { path: p, .. } => {
                let meta = std::fs::metadata(p)?;
                if meta.is_dir() {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        "is a directory, not a file",
                    ));
                }
                let f = std::fs::File::open(p)?;
                Ok((Box::new(f), Some(meta.len())))
            }
            Input::Stdin => Ok((Box::new(std::io::stdin()), None)),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum IngestError {
    /// The input could not be read (missing, unreadable, a directory): nothing posted.
    #[error("{path}: cannot read: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The file changed between its hash and its parse (still being written?): nothing
    /// posted, and safe to retry once it is complete (the inbox leaves it in place).
    #[error("{path}: {detail}")]
    Changed { path: String, detail: String },
    /// The database failed: nothing of this run was committed; safe to retry.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error("internal error: {0}")]
    Internal(String),
}

#[derive(Debug, Clone)]
pub(crate) struct IngestOptions {
    pub tenant: String,
    pub dry_run: bool,
    pub validate: nacha::ValidateOptions,
    /// Re-sent NACHA entries held within this many days of effective date; `None` posts
    /// them knowingly (`--accept-resent`). See [`crate::keys::resent_match`].
    pub resend_window_days: Option<u32>,
    /// `None`: detected from the first bytes ([`detect::detect`]); a file of a kind no
    /// reader reads is then rejected with one finding saying what it is.
    pub format: Option<FileFormat>,
    /// A statement whose balances do not add up refuses its file (by default it is
    /// recorded, marked unbalanced: [`crate::formats::statement::ReadOptions`]).
    pub strict_balances: bool,
    /// What a run's commit also writes, made from what the file came to: an HTTP
    /// request's stored answer. `None` for the CLI.
    pub on_commit: Option<OnCommit>,
}

/// Makes the hook a run's commit calls ([`Ledger::on_next_run`]) from what the file came
/// to before it.
#[derive(Clone)]
#[allow(clippy::type_complexity)]
pub(crate) struct OnCommit(
    pub std::sync::Arc<dyn Fn(FileDone) -> Box<dyn CommitHook> + Send + Sync>,
);

impl std::fmt::Debug for OnCommit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnCommit")
    }
}

/// What a file came to beyond its run, just before the run's commit: what a summary of
/// the file needs besides the run itself.
pub(crate) struct FileDone {
    /// The file's name as given.
    pub file: String,
    pub findings: Vec<Finding>,
    pub bytes: u64,
    /// When the file's work began.
    pub since: std::time::Instant,
    /// The exact re-upload fast path answered it.
    pub fast_path: bool,
    /// A statement file's counts; `None` for payments.
    pub statements: Option<crate::statements::StatementRun>,
    /// The file was refused (journaled, nothing posted).
    pub rejected: bool,
}

/// Registers the run's commit hook, when the ingest was given one, before a commit.
pub(crate) fn arm_answer(ledger: &mut Ledger, opts: &IngestOptions, done: FileDone) {
    if let Some(f) = &opts.on_commit {
        ledger.on_next_run((f.0)(done));
    }
}

/// The stages of one file's run, in order, as a progress display names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Reading the file: parsing, validating, and applying each chunk to the open run.
    Parsing,
    /// The whole file read: the completion mark, COMMIT, the run read back (PostgreSQL:
    /// fresh statistics after a bulk run). Reads no byte, however long it takes.
    Committing,
    /// The committed run's per-record report, read back and written (`--report`).
    WritingReport,
}

impl Stage {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Stage::Parsing => "parsing",
            Stage::Committing => "committing",
            Stage::WritingReport => "writing report",
        }
    }
}

/// Where an ingest tells its progress (the CLI's progress bar): the input's length when
/// known, the bytes read so far, and each stage as it begins.
pub(crate) trait Progress: Send + Sync {
    fn set_length(&self, bytes: u64);
    fn read(&self, bytes: u64);
    fn stage(&self, stage: Stage);
}

/// A [`Progress`] shared by the writer and the parser thread.
pub(crate) type ProgressSink = std::sync::Arc<dyn Progress>;

/// How a file's ingest ended.
#[derive(Debug)]
pub(crate) enum IngestOutcome {
    /// Committed. `findings` are warnings only. `fast_path`: an exact re-upload, replayed
    /// from the earlier run without parsing (see [`ingest_file`]).
    Completed {
        run: RunInfo,
        findings: Vec<Finding>,
        bytes: u64,
        fast_path: bool,
        /// A statement file's counts; `None` for payments.
        statements: Option<Box<crate::statements::StatementRun>>,
    },
    /// Dry run: classified, nothing kept. `rows` is the would-be report (its `run_id` 0:
    /// a dry run has no run).
    DryRun {
        file: FileIdentity,
        counts: Counts,
        sha256: String,
        rows: Vec<ReportRow>,
        findings: Vec<Finding>,
        bytes: u64,
    },
    /// Rejected by validation; nothing posted. `run` is the journaled rejection.
    Rejected {
        run: RunInfo,
        findings: Vec<Finding>,
        bytes: u64,
    },
}

/// Ingests one file (NACHA or ISO 20022). `now` is the clock (passed in so runs are reproducible in
/// tests); `progress` is told the bytes read so far and each [`Stage`].
pub(crate) async fn ingest_file(
    ledger: &mut Ledger,
    input: &Input,
    opts: &IngestOptions,
    now: &(dyn Fn() -> DateTime<Utc> + Sync),
    progress: Option<ProgressSink>,
) -> Result<IngestOutcome, IngestError> {
    let job = Job {
        opts,
        name: input.name(),
        started_at: now(),
        since: std::time::Instant::now(),
        now,
    };
    let (source, size, prehashed) = match open_input(ledger, input, &job).await? {
        Opened::Replayed(outcome) => return Ok(*outcome),
        Opened::Source(source, size, prehashed) => (source, size, prehashed),
    };
    if let (Some(p), Some(size)) = (&progress, size) {
        p.set_length(size);
    }
    // A bank statement goes to the statement readers and the statement tables,
    // not to the posting path.
    // A dry run is not hashed first: a statement file is hashed as it is read.
    let source = match opts.format {
        None => {
            let (head, source) = detect::read_head(source).map_err(|e| job.read_error(e))?;
            match detect::detect(&head) {
                Detected::Statement(kind) => {
                    let sha256 = prehashed.as_ref().map(|h| h.sha256.clone());
                    let bytes = prehashed.as_ref().map(|h| h.bytes);
                    let Job {
                        name,
                        started_at,
                        since,
                        ..
                    } = job;
                    return statements::ingest(
                        ledger, kind, source, sha256, bytes, opts, name, started_at, since,
                    )
                    .await;
                }
                _ => Box::new(source) as Box<dyn Read + Send>,
            }
        }
        Some(_) => source,
    };
    let stages = progress.clone();
    let hash = prehashed.is_none();
    let (read, run, overflowed) = parse_and_apply(ledger, source, &job, hash, progress).await?;
    // The bytes parsed must be the bytes hashed: a file written to while it was read is
    // refused whole (nothing posted), and the next attempt reads it again.
    if let Some(p) = &prehashed
        && let Err(detail) = p.unchanged(read.bytes)
    {
        rollback(ledger, run).await?;
        return Err(IngestError::Changed {
            path: job.name,
            detail,
        });
    }
    let sha256 = match (&prehashed, read.sha256) {
        (Some(p), _) => p.sha256.clone(),
        (None, Some(sha)) => hex::encode(sha),
        (None, None) => return Err(IngestError::Internal("the parse hashed nothing".into())),
    };
    conclude(ledger, job, run, overflowed, read, sha256, stages).await
}

/// One file's ingest under way: what each of its steps needs to know of it.
struct Job<'a> {
    opts: &'a IngestOptions,
    /// The file's name as given.
    name: String,
    started_at: DateTime<Utc>,
    since: std::time::Instant,
    now: &'a (dyn Fn() -> DateTime<Utc> + Sync),
}

impl Job<'_> {
    fn read_error(&self, source: std::io::Error) -> IngestError {
        IngestError::Read {
            path: self.name.clone(),
            source,
        }
    }

    /// What the file came to, for the hook a run's commit calls.
    fn done(&self, findings: &[Finding], bytes: u64, rejected: bool) -> FileDone {
        FileDone {
            file: self.name.clone(),
            findings: findings.to_vec(),
            bytes,
            since: self.since,
            fast_path: false,
            statements: None,
            rejected,
        }
    }
}

/// The input, opened for its parse — or the whole answer, when its bytes were ingested
/// before.
enum Opened {
    Replayed(Box<IngestOutcome>),
    Source(Box<dyn Read + Send>, Option<u64>, Option<PreHashed>),
}

/// Opens the input. Exact re-upload fast path: the same bytes (SHA-256) already ingested
/// by a completed run whose records all posted or were duplicates. Those bytes passed
/// validation then, and postings never change, so every record is a duplicate of what
/// that run posted or matched: the run is replayed set-based, without parsing. The unique
/// indexes are not involved (nothing is inserted into postings), and the report is as
/// complete as ever.
///
/// A file on disk (not stdin, not a dry run) is opened once and hashed first; the parse
/// then reads the same open file from its start without hashing it again. Input that
/// cannot be read twice (stdin, a pipe, a FIFO, `<(…)`) is spooled to an anonymous
/// temporary file first, hashed on the way: read once, and read whole before the run's
/// transaction begins, so a slow or stalled input never holds the write lock.
async fn open_input(
    ledger: &mut Ledger,
    input: &Input,
    job: &Job<'_>,
) -> Result<Opened, IngestError> {
    let opts = job.opts;
    if opts.dry_run {
        let (source, size) = input.open().map_err(|e| job.read_error(e))?;
        return Ok(Opened::Source(source, size, None));
    }
    let owned = input.clone();
    let hashed = tokio::task::spawn_blocking(move || PreHashed::of_input(&owned))
        .await
        .map_err(|e| IngestError::Internal(e.to_string()))?
        .map_err(|e| job.read_error(e))?;
    if let Some(prior) = ledger
        .find_exact_upload(&opts.tenant, &hashed.sha256)
        .await?
    {
        let outcome = replay(ledger, &prior, hashed, job).await?;
        return Ok(Opened::Replayed(Box::new(outcome)));
    }
    let file = hashed.file.try_clone().map_err(|e| job.read_error(e))?;
    Ok(Opened::Source(
        Box::new(file),
        Some(hashed.bytes),
        Some(hashed),
    ))
}

/// Runs the parser thread and, on this task, applies each chunk it sends to the run it
/// opens: the parse's result, the open run (none if the file had no header) and whether
/// the file's totals overflowed. On any failure the run is rolled back.
async fn parse_and_apply(
    ledger: &mut Ledger,
    source: Box<dyn Read + Send>,
    job: &Job<'_>,
    hash: bool,
    progress: Option<ProgressSink>,
) -> Result<(ParseDone, Option<OpenRun>, bool), IngestError> {
    let (tx, mut rx) = mpsc::channel::<Msg>(CHUNKS_IN_FLIGHT);
    let parser = std::thread::Builder::new()
        .name("parser".into())
        .spawn({
            let (validate, format) = (job.opts.validate, job.opts.format);
            move || parse_thread(source, format, validate, hash, tx, progress)
        })
        .map_err(|e| IngestError::Internal(format!("cannot start the parser thread: {e}")))?;
    let mut run: Option<OpenRun> = None;
    let mut overflowed = false;
    let result = apply_chunks(ledger, &mut rx, job, &mut run, &mut overflowed).await;
    drop(rx);
    let _ = parser.join();
    match result {
        Ok(Ok(read)) => Ok((read, run, overflowed)),
        Ok(Err(io)) => {
            rollback(ledger, run).await?;
            Err(IngestError::Read {
                path: job.name.clone(),
                source: io,
            })
        }
        Err(e) => {
            // The connection may be gone; the transaction then dies with it.
            let _ = rollback(ledger, run).await;
            Err(e)
        }
    }
}

/// The writer: opens the run at the file's header and applies each chunk of records as
/// it arrives, until the parser says it is done.
async fn apply_chunks(
    ledger: &mut Ledger,
    rx: &mut mpsc::Receiver<Msg>,
    job: &Job<'_>,
    run: &mut Option<OpenRun>,
    overflowed: &mut bool,
) -> Result<std::io::Result<ParseDone>, IngestError> {
    loop {
        let Some(msg) = rx.recv().await else {
            return Err(IngestError::Internal(
                "parser thread ended without a result".into(),
            ));
        };
        match msg {
            Msg::Header(file, known_as) => {
                if run.is_none() {
                    let start = RunStart {
                        tenant: job.opts.tenant.clone(),
                        file,
                        source_name: job.name.clone(),
                        started_at: job.started_at,
                        resend_window_days: job.opts.resend_window_days,
                    };
                    let open = ledger.begin_run(&start).await?;
                    tracing::debug!(file = %job.name, run_id = open.run_id, file_id = %open.file.file_id, "run started");
                    // The parser waits for this answer; it is gone only if it ended.
                    let _ = known_as.send((open.file.clone(), open.legacy_below.is_some()));
                    *run = Some(open);
                }
            }
            Msg::Records(records) => {
                if let Some(r) = run.as_mut()
                    && !*overflowed
                {
                    match ledger.apply(r, &records).await {
                        // The file's totals, not the database: read on, so that the
                        // validation findings (which explain it) are reported if any.
                        Err(LedgerError::TotalOverflow) => *overflowed = true,
                        res => {
                            res?;
                        }
                    }
                    crate::fault::point("after_parse_start");
                }
                // Freed off the writer's thread: a chunk is thousands of records of
                // some twenty allocations each, and the writer is the bottleneck.
                rayon::spawn(move || drop(records));
            }
            Msg::Done(res) => return Ok(res),
        }
    }
}

async fn rollback(ledger: &mut Ledger, run: Option<OpenRun>) -> Result<(), IngestError> {
    if let Some(r) = run {
        ledger.rollback_run(r).await?;
    }
    Ok(())
}

/// The whole file read: rejected on any error finding (or no header), refused on a total
/// that overflowed, rolled back after its report on a dry run, else committed.
async fn conclude(
    ledger: &mut Ledger,
    job: Job<'_>,
    mut run: Option<OpenRun>,
    overflowed: bool,
    read: ParseDone,
    sha256: String,
    stages: Option<ProgressSink>,
) -> Result<IngestOutcome, IngestError> {
    let findings = &read.summary.findings;
    if findings.iter().any(|f| f.severity == Severity::Error) || run.is_none() {
        return reject(ledger, job, run, read, sha256).await;
    }
    if overflowed {
        rollback(ledger, run).await?;
        return Err(IngestError::Ledger(LedgerError::TotalOverflow));
    }
    let open = run.take().expect("checked above");
    if job.opts.dry_run {
        return dry_run(ledger, open, read, sha256).await;
    }
    let finish = RunFinish {
        sha256,
        finished_at: (job.now)(),
        findings: read.summary.findings.clone(),
    };
    if let Some(p) = &stages {
        p.stage(Stage::Committing);
    }
    arm_answer(
        ledger,
        job.opts,
        job.done(&finish.findings, read.bytes, false),
    );
    let info = ledger.commit_run(open, &finish).await?;
    Ok(IngestOutcome::Completed {
        run: info,
        findings: read.summary.findings,
        bytes: read.bytes,
        fast_path: false,
        statements: None,
    })
}

/// A file with an error finding (or no header): the run rolled back, the rejection with
/// all its findings journaled in a small transaction of its own — or, on a dry run,
/// nothing journaled.
async fn reject(
    ledger: &mut Ledger,
    job: Job<'_>,
    run: Option<OpenRun>,
    read: ParseDone,
    sha256: String,
) -> Result<IngestOutcome, IngestError> {
    let file_id = run.as_ref().map(|r| r.file.file_id.clone());
    rollback(ledger, run).await?;
    let findings = read.summary.findings;
    let rejection = Rejection {
        tenant: job.opts.tenant.clone(),
        file_id,
        format: read.summary.format,
        sha256,
        source_name: job.name.clone(),
        started_at: job.started_at,
        finished_at: (job.now)(),
        records: read.summary.records,
        findings: findings.clone(),
    };
    let run = if job.opts.dry_run {
        unjournaled_rejection(rejection)
    } else {
        arm_answer(ledger, job.opts, job.done(&findings, read.bytes, true));
        ledger.record_rejection(&rejection).await?
    };
    Ok(IngestOutcome::Rejected {
        run,
        findings,
        bytes: read.bytes,
    })
}

/// A dry run's rejection, as the run it would have journaled (run 0: none).
fn unjournaled_rejection(r: Rejection) -> RunInfo {
    let count = |s: Severity| r.findings.iter().filter(|f| f.severity == s).count() as i64;
    RunInfo {
        run_id: 0,
        errors: count(Severity::Error),
        warnings: count(Severity::Warning),
        tenant: r.tenant,
        file_id: r.file_id,
        sha256: r.sha256,
        format: r.format.into(),
        source_name: r.source_name,
        started_at: String::new(),
        finished_at: None,
        status: crate::ledger::RunStatus::Rejected,
        records: r.records as i64,
        posted: 0,
        duplicates: 0,
        conflicts: 0,
        held: 0,
        posted_amount_minor: 0,
        kind: crate::ledger::RunKind::Ingest,
        reason: None,
        actor: None,
        unbalanced: 0,
        totals: Vec::new(),
    }
}

/// A dry run: the would-be report read inside the run's transaction, then rolled back.
async fn dry_run(
    ledger: &mut Ledger,
    open: OpenRun,
    read: ParseDone,
    sha256: String,
) -> Result<IngestOutcome, IngestError> {
    let mut rows = Vec::new();
    let res = ledger
        .report_rows(&open.tenant, open.run_id, &mut |row| {
            rows.push(row.clone());
            Ok(())
        })
        .await;
    let (file, counts) = (open.file.clone(), open.counts.clone());
    let run_id = open.run_id;
    ledger.rollback_run(open).await?;
    res?.map_err(|e| IngestError::Internal(e.to_string()))?;
    // Nothing of the dry run stays: no row names its run (0: none), nor a record of
    // this file as an original in it (the next real run will take that id).
    for r in &mut rows {
        r.run_id = 0;
        if r.original_run_id == Some(run_id) {
            r.original_run_id = None;
            r.original_posted_at = None;
        }
    }
    Ok(IngestOutcome::DryRun {
        file,
        counts,
        sha256,
        rows,
        findings: read.summary.findings,
        bytes: read.bytes,
    })
}

/// The exact re-upload fast path: one transaction journals every record as a duplicate
/// of what the earlier run posted or matched.
async fn replay(
    ledger: &mut Ledger,
    prior: &crate::ledger::ExactUpload,
    hashed: PreHashed,
    job: &Job<'_>,
) -> Result<IngestOutcome, IngestError> {
    let Job {
        opts,
        started_at,
        since,
        now,
        ..
    } = *job;
    let name = job.name.clone();
    let start = RunStart {
        tenant: opts.tenant.clone(),
        file: prior.file.clone(),
        source_name: name.clone(),
        started_at,
        resend_window_days: opts.resend_window_days,
    };
    let finish = RunFinish {
        sha256: hashed.sha256,
        finished_at: now(),
        findings: Vec::new(),
    };
    arm_answer(
        ledger,
        opts,
        FileDone {
            file: name.clone(),
            findings: Vec::new(),
            bytes: hashed.bytes,
            since,
            fast_path: true,
            statements: None,
            rejected: false,
        },
    );
    let run = ledger.replay_run(&start, prior, &finish).await?;
    tracing::debug!(file = %name, run_id = run.run_id, prior_run = prior.first_run_id, "exact re-upload replayed");
    Ok(IngestOutcome::Completed {
        run,
        findings: Vec::new(),
        bytes: hashed.bytes,
        fast_path: true,
        statements: None,
    })
}
