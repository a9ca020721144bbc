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
use crate::formats::detect::{self, Detected, FileFormat};
use crate::formats::iso20022::{self, IsoEvent};
use crate::formats::nacha::{self, Event};
use crate::ledger::{
    Counts, Ledger, LedgerError, OpenRun, Rejection, ReportRow, RunFinish, RunInfo, RunStart,
};
use crate::model::{FileIdentity, PostingRecord, iso_identity, iso_posting, nacha_posting};
use chrono::{DateTime, Utc};
use rayon::prelude::*;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use tokio::sync::mpsc;

/// Records per chunk sent from the parser to the writer.
pub const CHUNK_RECORDS: usize = 2_000;
/// Chunks in flight between parser and writer: bounds memory whatever the file size.
pub const CHUNKS_IN_FLIGHT: usize = 4;

/// Where the bytes come from.
#[derive(Debug, Clone)]
pub enum Input {
    Path(PathBuf),
    Stdin,
}

impl Input {
    pub fn name(&self) -> String {
        match self {
            Input::Path(p) => p.display().to_string(),
            Input::Stdin => "-".to_string(),
        }
    }
    fn open(&self) -> std::io::Result<(Box<dyn Read + Send>, Option<u64>)> {
        match self {
            Input::Path(p) => {
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
    /// `None`: detected from the first bytes ([`detect::detect`]); a file of a kind no
    /// reader reads is then rejected with one finding saying what it is.
    pub format: Option<FileFormat>,
}

/// What the parser thread learned of the whole file.
#[derive(Debug)]
pub struct ParseDone {
    /// The format read (`nacha`, `iso20022`), or the kind of an unsupported file (`gzip`).
    pub format: &'static str,
    pub findings: Vec<Finding>,
    pub sha256: [u8; 32],
    pub bytes: u64,
    pub records: u64,
}

/// Counts the bytes read, for the progress bar.
struct Counted<R> {
    inner: R,
    bytes: u64,
    progress: Option<indicatif::ProgressBar>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        if let Some(pb) = &self.progress {
            pb.set_position(self.bytes);
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
    },
    /// Dry run: classified, nothing kept. `rows` is the would-be report.
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
    Header(FileIdentity),
    Records(Vec<PostingRecord>),
    Done(std::io::Result<ParseDone>),
}

/// Ingests one file (NACHA or ISO 20022). `now` is the clock (passed in so runs are reproducible in
/// tests); `progress` is told the bytes read so far.
pub async fn ingest_file(
    ledger: &mut Ledger,
    input: &Input,
    opts: &IngestOptions,
    now: &(dyn Fn() -> DateTime<Utc> + Sync),
    progress: Option<indicatif::ProgressBar>,
) -> Result<IngestOutcome, IngestError> {
    let started_at = now();
    let name = input.name();
    // Exact re-upload fast path: the same bytes (SHA-256) already ingested by a completed run
    // whose records all posted or were duplicates. Those bytes passed validation then, and
    // postings never change, so every record is a duplicate of what that run posted or
    // matched: the run is replayed set-based, without parsing. The unique indexes are not
    // involved (nothing is inserted into postings), and the report is as complete as ever.
    // Costs one extra read of the file on a first upload; not for stdin or dry runs.
    if let (Input::Path(path), false) = (input, opts.dry_run) {
        let path = path.clone();
        let hashed = tokio::task::spawn_blocking(move || hash_file(&path))
            .await
            .map_err(|e| IngestError::Internal(e.to_string()))?
            .map_err(|source| IngestError::Read {
                path: name.clone(),
                source,
            })?;
        let (sha, bytes) = hashed;
        if let Some(prior) = ledger.find_exact_upload(&opts.tenant, &sha).await? {
            let start = RunStart {
                tenant: opts.tenant.clone(),
                file: prior.file.clone(),
                source_name: name.clone(),
                started_at,
            };
            let finish = RunFinish {
                sha256: sha,
                finished_at: now(),
                findings: Vec::new(),
            };
            let run = ledger.replay_run(&start, &prior, &finish).await?;
            tracing::debug!(file = %name, run_id = run.run_id, prior_run = prior.first_run_id, "exact re-upload replayed");
            return Ok(IngestOutcome::Completed {
                run,
                findings: Vec::new(),
                bytes,
                fast_path: true,
            });
        }
    }
    let (source, size) = input.open().map_err(|source| IngestError::Read {
        path: name.clone(),
        source,
    })?;
    if let (Some(pb), Some(size)) = (&progress, size) {
        pb.set_length(size);
    }
    let (tx, mut rx) = mpsc::channel::<Msg>(CHUNKS_IN_FLIGHT);
    let parser = std::thread::Builder::new()
        .name("parser".into())
        .spawn({
            let (validate, format) = (opts.validate, opts.format);
            move || parse_thread(source, format, validate, tx, progress)
        })
        .map_err(|e| IngestError::Internal(format!("cannot start the parser thread: {e}")))?;

    let mut run: Option<OpenRun> = None;
    let result = async {
        loop {
            let Some(msg) = rx.recv().await else {
                return Err(IngestError::Internal("parser thread ended without a result".into()));
            };
            match msg {
                Msg::Header(file) => {
                    if run.is_none() {
                        let start = RunStart { tenant: opts.tenant.clone(), file, source_name: name.clone(), started_at };
                        run = Some(ledger.begin_run(&start).await?);
                        tracing::debug!(file = %name, run_id = run.as_ref().map(|r| r.run_id), "run started");
                    }
                }
                Msg::Records(records) => {
                    if let Some(r) = run.as_mut() {
                        ledger.apply(r, &records).await?;
                        crate::fault::point("after_parse_start");
                    }
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
    let sha256 = hex::encode(read.sha256);
    let format = read.format;
    let records = read.records;
    let findings = read.findings;
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
            };
            return Ok(IngestOutcome::Rejected {
                run,
                findings,
                bytes: read.bytes,
            });
        }
        let run = ledger.record_rejection(&rejection).await?;
        return Ok(IngestOutcome::Rejected {
            run,
            findings,
            bytes: read.bytes,
        });
    }
    let open = run.take().expect("checked above");
    if opts.dry_run {
        let mut rows = Vec::new();
        let res = ledger
            .report_rows(&opts.tenant, open.run_id, &mut |row| {
                rows.push(row);
                Ok(())
            })
            .await;
        let (file, counts) = (open.file.clone(), open.counts);
        ledger.rollback_run(open).await?;
        res?.map_err(|e| IngestError::Internal(e.to_string()))?;
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
    let info = ledger.commit_run(open, &finish).await?;
    Ok(IngestOutcome::Completed {
        run: info,
        findings,
        bytes: read.bytes,
        fast_path: false,
    })
}

/// The posting records of a batch of parsed records, in order, built across the cores;
/// the batch is emptied for the next chunk.
fn build<T: Sync>(
    batch: &mut Vec<T>,
    posting: impl Fn(&T) -> PostingRecord + Sync + Send,
) -> Vec<PostingRecord> {
    let out = batch.par_iter().map(posting).collect();
    batch.clear();
    out
}

fn parse_thread(
    source: Box<dyn Read + Send>,
    format: Option<FileFormat>,
    validate: nacha::ValidateOptions,
    tx: mpsc::Sender<Msg>,
    progress: Option<indicatif::ProgressBar>,
) {
    let counted = Counted {
        inner: source,
        bytes: 0,
        progress,
    };
    let (detected, source) = match detect::read_head(counted) {
        Ok((head, source)) => (
            format.map_or_else(|| detect::detect(&head), Detected::Format),
            source,
        ),
        Err(e) => {
            let _ = tx.blocking_send(Msg::Done(Err(e)));
            return;
        }
    };
    let mut source = BufReader::with_capacity(256 * 1024, source);
    let format = match detected {
        Detected::Format(f) => f,
        Detected::Unsupported(kind) => {
            // Nothing to parse: the file is hashed for the journal and rejected whole.
            let res = crate::hash::hash_reader(&mut source).map(|(sha256, bytes)| ParseDone {
                format: kind.as_str(),
                findings: vec![kind.finding()],
                sha256,
                bytes,
                records: 0,
            });
            let _ = tx.blocking_send(Msg::Done(res));
            return;
        }
    };
    let mut file: Option<FileIdentity> = None;
    let mut receiver_gone = false;
    // Parsed records wait here, in file order, until a chunk is full; then their posting
    // records (keys, fingerprints, stored detail) are built across the cores by rayon and
    // the chunk goes to the writer. Parsing stays one sequential pass (structure and
    // control totals are file-order state); building a chunk is independent per record.
    let mut entries: Vec<nacha::Entry> = Vec::with_capacity(CHUNK_RECORDS);
    let mut txs: Vec<iso20022::IsoTx> = Vec::with_capacity(CHUNK_RECORDS);
    // Sends the identity once.
    let send_header = |id: FileIdentity, file: &mut Option<FileIdentity>, gone: &mut bool| {
        if file.is_none() && !*gone {
            *file = Some(id.clone());
            *gone = tx.blocking_send(Msg::Header(id)).is_err();
        }
    };
    let send = |chunk: Vec<PostingRecord>, gone: &mut bool| {
        if !*gone && !chunk.is_empty() {
            *gone = tx.blocking_send(Msg::Records(chunk)).is_err();
        }
    };
    let res: std::io::Result<ParseDone> = match format {
        FileFormat::Nacha => {
            let mut on_event = |ev: Event| match ev {
                Event::Header(h) => {
                    send_header(FileIdentity::nacha(&h), &mut file, &mut receiver_gone)
                }
                Event::Entry(e) => {
                    // Entries before any header belong to a file that will be rejected.
                    if let Some(id) = &file
                        && !receiver_gone
                    {
                        entries.push(e);
                        if entries.len() >= CHUNK_RECORDS {
                            send(
                                build(&mut entries, |e| nacha_posting(id, e)),
                                &mut receiver_gone,
                            );
                        }
                    }
                }
            };
            let r = nacha::read_file(&mut source, validate, &mut on_event, &mut |_| {});
            if let Some(id) = &file {
                send(
                    build(&mut entries, |e| nacha_posting(id, e)),
                    &mut receiver_gone,
                );
            }
            r.map(|r| ParseDone {
                format: format.as_str(),
                findings: r.summary.findings,
                sha256: r.sha256,
                bytes: r.bytes,
                records: r.summary.entries,
            })
        }
        FileFormat::Iso20022 => {
            let mut on_event = |ev: IsoEvent| match ev {
                IsoEvent::Header(h) => send_header(iso_identity(&h), &mut file, &mut receiver_gone),
                IsoEvent::Transaction(t) => {
                    if let Some(id) = &file
                        && !receiver_gone
                    {
                        txs.push(t);
                        if txs.len() >= CHUNK_RECORDS {
                            send(build(&mut txs, |t| iso_posting(id, t)), &mut receiver_gone);
                        }
                    }
                }
            };
            let r = iso20022::read_file(&mut source, &mut on_event);
            if let Some(id) = &file {
                send(build(&mut txs, |t| iso_posting(id, t)), &mut receiver_gone);
            }
            r.map(|r| ParseDone {
                format: format.as_str(),
                findings: r.findings,
                sha256: r.sha256,
                bytes: r.bytes,
                records: r.transactions,
            })
        }
    };
    if !receiver_gone {
        let _ = tx.blocking_send(Msg::Done(res));
    }
}

/// SHA-256 and size of a file, read in 1 MiB blocks.
fn hash_file(path: &Path) -> std::io::Result<(String, u64)> {
    use sha2::{Digest, Sha256};
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "is a directory, not a file",
        ));
    }
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        total += n as u64;
    }
    Ok((hex::encode(h.finalize()), total))
}

/// Path to show for a file in messages.
pub fn display_path(p: &Path) -> String {
    p.display().to_string()
}
