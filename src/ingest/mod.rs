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

use crate::findings::{Finding, Severity};
use crate::formats::ParseSummary;
mod statements;

use crate::formats::detect::{self, Detected, FileFormat};
use crate::formats::iso20022::{self, IsoEvent};
use crate::formats::nacha::{self, Event};
use crate::hash::HashingReader;
use crate::keys::{FileIdentity, PostingRecord, iso_identity, iso_posting, nacha_posting};
use crate::ledger::{
    CommitHook, Counts, Ledger, LedgerError, OpenRun, Rejection, ReportRow, RunFinish, RunInfo,
    RunStart,
};
use chrono::{DateTime, Utc};
use rayon::prelude::*;
use std::io::{BufReader, Read};
use std::path::PathBuf;
use tokio::sync::mpsc;

/// Records per chunk sent from the parser to the writer.
pub const CHUNK_RECORDS: usize = 2_000;
/// Chunks in flight between parser and writer: bounds memory whatever the file size.
const CHUNKS_IN_FLIGHT: usize = 4;

/// Where the bytes come from.
#[derive(Debug, Clone)]
pub enum Input {
    Path(PathBuf),
    Stdin,
    /// A file received over HTTP, spooled to `path`; its runs are named `name`.
    Upload {
        path: PathBuf,
        name: String,
    },
}

impl Input {
    pub fn name(&self) -> String {
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
pub enum IngestError {
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
pub struct IngestOptions {
    pub tenant: String,
    pub dry_run: bool,
    pub validate: nacha::ValidateOptions,
    /// Re-sent NACHA entries held within this many days of effective date; `None` posts
    /// them knowingly (`--accept-resent`). See [`crate::keys::resent_match`].
    pub resend_window_days: Option<u32>,
    /// `None`: detected from the first bytes ([`detect::detect`]); a file of a kind no
    /// reader reads is then rejected with one finding saying what it is.
    pub format: Option<FileFormat>,
    /// What a run's commit also writes, made from what the file came to: an HTTP
    /// request's stored answer. `None` for the CLI.
    pub on_commit: Option<OnCommit>,
}

/// Makes the hook a run's commit calls ([`Ledger::on_next_run`]) from what the file came
/// to before it.
#[derive(Clone)]
#[allow(clippy::type_complexity)]
pub struct OnCommit(pub std::sync::Arc<dyn Fn(FileDone) -> Box<dyn CommitHook> + Send + Sync>);

impl std::fmt::Debug for OnCommit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnCommit")
    }
}

/// What a file came to beyond its run, just before the run's commit: what a summary of
/// the file needs besides the run itself.
pub struct FileDone {
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

/// What the parser thread learned of the whole file.
#[derive(Debug)]
pub(crate) struct ParseDone {
    summary: ParseSummary,
    /// SHA-256 of the whole input, when the parse hashed it (not when it was hashed
    /// before: [`PreHashed`]).
    sha256: Option<[u8; 32]>,
    /// Bytes of the whole input.
    bytes: u64,
}

/// The stages of one file's run, in order, as a progress display names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Reading the file: parsing, validating, and applying each chunk to the open run.
    Parsing,
    /// The whole file read: the completion mark, COMMIT, the run read back (PostgreSQL:
    /// fresh statistics after a bulk run). Reads no byte, however long it takes.
    Committing,
    /// The committed run's per-record report, read back and written (`--report`).
    WritingReport,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Parsing => "parsing",
            Stage::Committing => "committing",
            Stage::WritingReport => "writing report",
        }
    }
}

/// Where an ingest tells its progress (the CLI's progress bar): the input's length when
/// known, the bytes read so far, and each stage as it begins.
pub trait Progress: Send + Sync {
    fn set_length(&self, bytes: u64);
    fn read(&self, bytes: u64);
    fn stage(&self, stage: Stage);
}

/// A [`Progress`] shared by the writer and the parser thread.
pub type ProgressSink = std::sync::Arc<dyn Progress>;

/// Counts the bytes read, for the progress bar.
struct Counted<R> {
    inner: R,
    progress: Option<ProgressSink>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(p) = &self.progress {
            p.read(n as u64);
        }
        Ok(n)
    }
}

/// How a file's ingest ended.
#[derive(Debug)]
pub enum IngestOutcome {
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

#[allow(clippy::large_enum_variant)]
enum Msg {
    /// The file's identity as parsed; the writer answers with the identity the ledger
    /// knows the file under (an alias for a file ingested under an earlier spelling,
    /// `FileIdentity::aliases`), from which the parser then builds every key, and whether
    /// the ledger holds postings keyed by the earlier ISO 20022 rule (`OpenRun::legacy_below`:
    /// only then are the records' legacy keys built).
    Header(
        FileIdentity,
        std::sync::mpsc::SyncSender<(FileIdentity, bool)>,
    ),
    Records(Vec<PostingRecord>),
    Done(std::io::Result<ParseDone>),
}

/// Ingests one file (NACHA or ISO 20022). `now` is the clock (passed in so runs are reproducible in
/// tests); `progress` is told the bytes read so far and each [`Stage`].
pub async fn ingest_file(
    ledger: &mut Ledger,
    input: &Input,
    opts: &IngestOptions,
    now: &(dyn Fn() -> DateTime<Utc> + Sync),
    progress: Option<ProgressSink>,
) -> Result<IngestOutcome, IngestError> {
    let started_at = now();
    let since = std::time::Instant::now();
    let name = input.name();
    // Exact re-upload fast path: the same bytes (SHA-256) already ingested by a completed run
    // whose records all posted or were duplicates. Those bytes passed validation then, and
    // postings never change, so every record is a duplicate of what that run posted or
    // matched: the run is replayed set-based, without parsing. The unique indexes are not
    // involved (nothing is inserted into postings), and the report is as complete as ever.
    // A file on disk (not stdin, not a dry run) is opened once and hashed first; the parse
    // then reads the same open file from its start without hashing it again.
    // Input that cannot be read twice (stdin, a pipe, a FIFO, `<(…)`) is spooled to an
    // anonymous temporary file first, hashed on the way: read once, and read whole before
    // the run's transaction begins, so a slow or stalled input never holds the write lock.
    let (source, size, prehashed) = match (input, opts.dry_run) {
        (_, false) => {
            let read_err = |source| IngestError::Read {
                path: name.clone(),
                source,
            };
            let input = input.clone();
            let hashed = tokio::task::spawn_blocking(move || PreHashed::of_input(&input))
                .await
                .map_err(|e| IngestError::Internal(e.to_string()))?
                .map_err(read_err)?;
            if let Some(prior) = ledger
                .find_exact_upload(&opts.tenant, &hashed.sha256)
                .await?
            {
                return replay(ledger, &prior, hashed, opts, name, (started_at, since), now).await;
            }
            let file = hashed.file.try_clone().map_err(read_err)?;
            (
                Box::new(file) as Box<dyn Read + Send>,
                Some(hashed.bytes),
                Some(hashed),
            )
        }
        _ => {
            let (source, size) = input.open().map_err(|source| IngestError::Read {
                path: name.clone(),
                source,
            })?;
            (source, size, None)
        }
    };
    if let (Some(p), Some(size)) = (&progress, size) {
        p.set_length(size);
    }
    // A bank statement goes to the statement readers and the statement tables,
    // not to the posting path.
    // A dry run is not hashed first: a statement file is hashed as it is read.
    let source = match opts.format {
        None => {
            let (head, source) = detect::read_head(source).map_err(|source| IngestError::Read {
                path: name.clone(),
                source,
            })?;
            match detect::detect(&head) {
                Detected::Statement(kind) => {
                    let sha256 = prehashed.as_ref().map(|h| h.sha256.clone());
                    let bytes = prehashed.as_ref().map(|h| h.bytes);
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
    let (tx, mut rx) = mpsc::channel::<Msg>(CHUNKS_IN_FLIGHT);
    let parser = std::thread::Builder::new()
        .name("parser".into())
        .spawn({
            let (validate, format, hash) = (opts.validate, opts.format, prehashed.is_none());
            move || parse_thread(source, format, validate, hash, tx, progress)
        })
        .map_err(|e| IngestError::Internal(format!("cannot start the parser thread: {e}")))?;

    let mut run: Option<OpenRun> = None;
    let mut overflowed = false;
    let result = async {
        loop {
            let Some(msg) = rx.recv().await else {
                return Err(IngestError::Internal("parser thread ended without a result".into()));
            };
            match msg {
                Msg::Header(file, known_as) => {
                    if run.is_none() {
                        let start = RunStart {
                            tenant: opts.tenant.clone(),
                            file,
                            source_name: name.clone(),
                            started_at,
                            resend_window_days: opts.resend_window_days,
                        };
                        let open = ledger.begin_run(&start).await?;
                        tracing::debug!(file = %name, run_id = open.run_id, file_id = %open.file.file_id, "run started");
                        // The parser waits for this answer; it is gone only if it ended.
                        let _ = known_as.send((open.file.clone(), open.legacy_below.is_some()));
                        run = Some(open);
                    }
                }
                Msg::Records(records) => {
                    if let Some(r) = run.as_mut()
                        && !overflowed
                    {
                        match ledger.apply(r, &records).await {
                            // The file's totals, not the database: read on, so that the
                            // validation findings (which explain it) are reported if any.
                            Err(LedgerError::TotalOverflow) => overflowed = true,
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
    .await;
    drop(rx);
    let _ = parser.join();
    let read = match result {
        Ok(Ok(read)) => read,
        Ok(Err(io)) => {
            if let Some(r) = run.take() {
                ledger.rollback_run(r).await?;
            }
            return Err(IngestError::Read {
                path: name,
                source: io,
            });
        }
        Err(e) => {
            if let Some(r) = run.take() {
                // The connection may be gone; the transaction then dies with it.
                let _ = ledger.rollback_run(r).await;
            }
            return Err(e);
        }
    };
    // The bytes parsed must be the bytes hashed: a file written to while it was read is
    // refused whole (nothing posted), and the next attempt reads it again.
    if let Some(p) = &prehashed
        && let Err(detail) = p.unchanged(read.bytes)
    {
        if let Some(r) = run.take() {
            ledger.rollback_run(r).await?;
        }
        return Err(IngestError::Changed { path: name, detail });
    }
    let sha256 = match (&prehashed, read.sha256) {
        (Some(p), _) => p.sha256.clone(),
        (None, Some(sha)) => hex::encode(sha),
        (None, None) => return Err(IngestError::Internal("the parse hashed nothing".into())),
    };
    let format = read.summary.format;
    let records = read.summary.records;
    let findings = read.summary.findings;
    let has_errors = findings.iter().any(|f| f.severity == Severity::Error);
    if has_errors || run.is_none() {
        let file_id = run.as_ref().map(|r| r.file.file_id.clone());
        if let Some(r) = run.take() {
            ledger.rollback_run(r).await?;
        }
        let rejection = Rejection {
            tenant: opts.tenant.clone(),
            file_id,
            format,
            sha256,
            source_name: name,
            started_at,
            finished_at: now(),
            records,
            findings: findings.clone(),
        };
        if opts.dry_run {
            // A dry run journals nothing, not even a rejection.
            let run = RunInfo {
                run_id: 0,
                tenant: rejection.tenant,
                file_id: rejection.file_id,
                sha256: rejection.sha256,
                format: format.into(),
                source_name: rejection.source_name,
                started_at: String::new(),
                finished_at: None,
                status: crate::ledger::RunStatus::Rejected,
                records: records as i64,
                posted: 0,
                duplicates: 0,
                conflicts: 0,
                held: 0,
                posted_amount_minor: 0,
                errors: findings
                    .iter()
                    .filter(|f| f.severity == Severity::Error)
                    .count() as i64,
                warnings: findings
                    .iter()
                    .filter(|f| f.severity == Severity::Warning)
                    .count() as i64,
                kind: crate::ledger::RunKind::Ingest,
                reason: None,
                actor: None,
                totals: Vec::new(),
            };
            return Ok(IngestOutcome::Rejected {
                run,
                findings,
                bytes: read.bytes,
            });
        }
        arm_answer(
            ledger,
            opts,
            FileDone {
                file: rejection.source_name.clone(),
                findings: findings.clone(),
                bytes: read.bytes,
                since,
                fast_path: false,
                statements: None,
                rejected: true,
            },
        );
        let run = ledger.record_rejection(&rejection).await?;
        return Ok(IngestOutcome::Rejected {
            run,
            findings,
            bytes: read.bytes,
        });
    }
    if overflowed {
        if let Some(r) = run.take() {
            ledger.rollback_run(r).await?;
        }
        return Err(IngestError::Ledger(LedgerError::TotalOverflow));
    }
    let open = run.take().expect("checked above");
    if opts.dry_run {
        let mut rows = Vec::new();
        let res = ledger
            .report_rows(&opts.tenant, open.run_id, &mut |row| {
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
        return Ok(IngestOutcome::DryRun {
            file,
            counts,
            sha256,
            rows,
            findings,
            bytes: read.bytes,
        });
    }
    let finish = RunFinish {
        sha256,
        finished_at: now(),
        findings: findings.clone(),
    };
    if let Some(p) = &stages {
        p.stage(Stage::Committing);
    }
    arm_answer(
        ledger,
        opts,
        FileDone {
            file: name.clone(),
            findings: findings.clone(),
            bytes: read.bytes,
            since,
            fast_path: false,
            statements: None,
            rejected: false,
        },
    );
    let info = ledger.commit_run(open, &finish).await?;
    Ok(IngestOutcome::Completed {
        run: info,
        findings,
        bytes: read.bytes,
        fast_path: false,
        statements: None,
    })
}

/// The posting records of a batch of parsed records, in order, built across the cores;
/// the batch is emptied for the next chunk.
fn build<T: Send>(
    batch: &mut Vec<T>,
    posting: impl Fn(T) -> PostingRecord + Sync + Send,
) -> Vec<PostingRecord> {
    batch.par_drain(..).map(posting).collect()
}

/// Reads the whole input (hashing it when `hash`), parses it in its format, and sends
/// the identity, the posting records in chunks, and at the end what the parse gave.
fn parse_thread(
    source: Box<dyn Read + Send>,
    format: Option<FileFormat>,
    validate: nacha::ValidateOptions,
    hash: bool,
    tx: mpsc::Sender<Msg>,
    progress: Option<ProgressSink>,
) {
    let mut input = if hash {
        HashingReader::new(source)
    } else {
        HashingReader::counting(source)
    };
    let res = parse(&mut input, format, validate, &tx, progress).and_then(|summary| {
        input.drain()?;
        let (sha256, bytes) = input.finish();
        Ok(ParseDone {
            summary,
            sha256,
            bytes,
        })
    });
    let _ = tx.blocking_send(Msg::Done(res));
}

fn parse(
    input: &mut HashingReader<Box<dyn Read + Send>>,
    format: Option<FileFormat>,
    validate: nacha::ValidateOptions,
    tx: &mpsc::Sender<Msg>,
    progress: Option<ProgressSink>,
) -> std::io::Result<ParseSummary> {
    let counted = Counted {
        inner: input,
        progress,
    };
    let (head, source) = detect::read_head(counted)?;
    let detected = format.map_or_else(|| detect::detect(&head), Detected::Payment);
    let mut source = BufReader::with_capacity(256 * 1024, source);
    let format = match detected {
        Detected::Payment(f) => f,
        // Nothing to parse: the file is hashed (to its end, by the caller) for the
        // journal and rejected whole.
        Detected::Statement(kind) => return Ok(kind.refused()),
        Detected::Refused(kind) => return Ok(kind.refused()),
    };
    let mut file: Option<FileIdentity> = None;
    let mut legacy_keys = false;
    let mut receiver_gone = false;
    // Parsed records wait here, in file order, until a chunk is full; then their posting
    // records (keys, fingerprints, stored detail) are built across the cores by rayon and
    // the chunk goes to the writer. Parsing stays one sequential pass (structure and
    // control totals are file-order state); building a chunk is independent per record.
    let mut entries: Vec<nacha::Entry> = Vec::with_capacity(CHUNK_RECORDS);
    let mut txs: Vec<iso20022::IsoTx> = Vec::with_capacity(CHUNK_RECORDS);
    // Sends the identity once and keys the records by the identity the ledger answers.
    let send_header =
        |id: FileIdentity, file: &mut Option<FileIdentity>, legacy: &mut bool, gone: &mut bool| {
            if file.is_none() && !*gone {
                let (answer, known_as) = std::sync::mpsc::sync_channel(1);
                *gone = tx.blocking_send(Msg::Header(id, answer)).is_err();
                match known_as.recv() {
                    Ok((known, wanted)) if !*gone => {
                        *file = Some(known);
                        *legacy = wanted;
                    }
                    _ => *gone = true,
                }
            }
        };
    let send = |chunk: Vec<PostingRecord>, gone: &mut bool| {
        if !*gone && !chunk.is_empty() {
            *gone = tx.blocking_send(Msg::Records(chunk)).is_err();
        }
    };
    match format {
        FileFormat::Nacha => {
            let mut on_event = |ev: Event| match ev {
                Event::Header(h) => send_header(
                    FileIdentity::nacha(&h),
                    &mut file,
                    &mut legacy_keys,
                    &mut receiver_gone,
                ),
                Event::Entry(e) => {
                    // Entries before any header belong to a file that will be rejected.
                    if let Some(id) = &file
                        && !receiver_gone
                    {
                        entries.push(e);
                        if entries.len() >= CHUNK_RECORDS {
                            send(
                                build(&mut entries, |e| nacha_posting(id, &e)),
                                &mut receiver_gone,
                            );
                        }
                    }
                }
            };
            let r = nacha::read_file(&mut source, validate, &mut on_event, &mut |_| {});
            if let Some(id) = &file {
                send(
                    build(&mut entries, |e| nacha_posting(id, &e)),
                    &mut receiver_gone,
                );
            }
            r.map(|r| ParseSummary {
                format: format.as_str(),
                records: r.summary.entries,
                findings: r.summary.findings,
            })
        }
        FileFormat::Iso20022 => {
            let mut on_event = |ev: IsoEvent| match ev {
                IsoEvent::Header(h) => send_header(
                    iso_identity(&h),
                    &mut file,
                    &mut legacy_keys,
                    &mut receiver_gone,
                ),
                IsoEvent::Transaction(t) => {
                    if let Some(id) = &file
                        && !receiver_gone
                    {
                        txs.push(t);
                        if txs.len() >= CHUNK_RECORDS {
                            send(
                                build(&mut txs, |t| iso_posting(id, t, legacy_keys)),
                                &mut receiver_gone,
                            );
                        }
                    }
                }
            };
            let r = iso20022::read_file(&mut source, &mut on_event);
            if let Some(id) = &file {
                send(
                    build(&mut txs, |t| iso_posting(id, t, legacy_keys)),
                    &mut receiver_gone,
                );
            }
            r.map(|r| ParseSummary {
                format: format.as_str(),
                records: r.transactions,
                findings: r.findings,
            })
        }
    }
}

/// A file on disk, opened once and hashed before its parse.
struct PreHashed {
    file: std::fs::File,
    sha256: String,
    bytes: u64,
    stamp: Stamp,
}

/// What tells that a file was written to: its inode, size, and modification and change
/// times (to the nanosecond where the file system keeps them). A rewrite of the same size
/// within one tick of the file system's clock could still pass: the parse is refused only
/// on what the file system shows.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    inode_ctime: (u64, i64, i64),
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            #[cfg(unix)]
            inode_ctime: (meta.ino(), meta.ctime(), meta.ctime_nsec()),
        }
    }
}

impl PreHashed {
    /// A regular file: opened once, hashed, rewound. Anything else (stdin, a pipe, a FIFO,
    /// a character device): spooled to an anonymous temporary file while hashed.
    fn of_input(input: &Input) -> std::io::Result<Self> {
        match input {
            Input::Stdin => Self::spooled(std::io::stdin().lock()),
            Input::Path(path) | Input::Upload { path, .. } => {
                let file = std::fs::File::open(path)?;
                let meta = file.metadata()?;
                if meta.is_dir() {
                    Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        "is a directory, not a file",
                    ))
                } else if meta.is_file() {
                    Self::of(file, &meta)
                } else {
                    Self::spooled(file)
                }
            }
        }
    }

    /// Hashes `file` to its end (1 MiB reads) and rewinds it for the parse.
    fn of(mut file: std::fs::File, meta: &std::fs::Metadata) -> std::io::Result<Self> {
        use std::io::{Seek, SeekFrom};
        let (sha256, bytes) = hash_copy(&mut file, &mut std::io::sink())?;
        file.seek(SeekFrom::Start(0))?;
        Ok(PreHashed {
            file,
            sha256,
            bytes,
            stamp: Stamp::of(meta),
        })
    }

    /// Copies `source` into an anonymous temporary file (gone when closed), hashing it.
    fn spooled(mut source: impl Read) -> std::io::Result<Self> {
        use std::io::{Seek, SeekFrom};
        let mut file = tempfile::tempfile()?;
        let (sha256, bytes) = {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut file);
            let r = hash_copy(&mut source, &mut w)?;
            std::io::Write::flush(&mut w)?;
            r
        };
        file.seek(SeekFrom::Start(0))?;
        let meta = file.metadata()?;
        Ok(PreHashed {
            file,
            sha256,
            bytes,
            stamp: Stamp::of(&meta),
        })
    }

    /// Whether the parse read what was hashed: as many bytes, and the file not written to
    /// since it was opened ([`Stamp`]); else why not.
    fn unchanged(&self, bytes_parsed: u64) -> Result<(), String> {
        let now = self.file.metadata().map(|m| Stamp::of(&m)).ok();
        if bytes_parsed == self.bytes && now.as_ref() == Some(&self.stamp) {
            Ok(())
        } else {
            Err(format!(
                "the file changed while it was being read ({} bytes hashed, {bytes_parsed} parsed); nothing posted",
                self.bytes
            ))
        }
    }
}

/// Reads `source` to its end (1 MiB reads), writing it to `sink` and hashing it: (hex
/// SHA-256, bytes).
fn hash_copy(
    source: &mut impl Read,
    sink: &mut impl std::io::Write,
) -> std::io::Result<(String, u64)> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = match source.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        h.update(&buf[..n]);
        sink.write_all(&buf[..n])?;
        bytes += n as u64;
    }
    Ok((hex::encode(h.finalize()), bytes))
}

/// The exact re-upload fast path: one transaction journals every record as a duplicate
/// of what the earlier run posted or matched.
async fn replay(
    ledger: &mut Ledger,
    prior: &crate::ledger::ExactUpload,
    hashed: PreHashed,
    opts: &IngestOptions,
    name: String,
    (started_at, since): (DateTime<Utc>, std::time::Instant),
    now: &(dyn Fn() -> DateTime<Utc> + Sync),
) -> Result<IngestOutcome, IngestError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    #[test]
    fn a_file_is_hashed_once_and_read_again_from_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.ach");
        std::fs::write(&path, b"0123456789").unwrap();
        let mut p = PreHashed::of_input(&Input::Path(path.clone())).unwrap();
        assert_eq!(p.sha256, hex::encode(Sha256::digest(b"0123456789")));
        assert_eq!(p.bytes, 10);
        let mut again = Vec::new();
        p.file.read_to_end(&mut again).unwrap();
        assert_eq!(again, b"0123456789", "rewound for the parse");
        assert!(p.unchanged(10).is_ok());
        // Fewer or more bytes parsed than hashed: refused.
        let e = p.unchanged(12).unwrap_err();
        assert_eq!(
            e,
            "the file changed while it was being read (10 bytes hashed, 12 parsed); nothing posted"
        );
    }

    #[test]
    fn a_file_written_to_after_its_hash_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.ach");
        std::fs::write(&path, b"first").unwrap();
        let p = PreHashed::of_input(&Input::Path(path.clone())).unwrap();
        // Same length, other bytes, a later modification time.
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        assert!(p.unchanged(5).is_err());
    }
}
