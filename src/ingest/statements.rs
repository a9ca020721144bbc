//! A bank statement file: read by its statement reader
//! (`formats::statement::read`) on a thread of its own, each statement keyed
//! (`keys::StatementKeys`) and recorded as it completes, all in one run's transaction
//! (`Ledger::begin_statements` … `commit_statements` of the `statements` feature), so
//! memory holds a few statements, never the file. A file with an error finding is rolled
//! back whole and its rejection journaled, as for any file.

use super::{IngestError, IngestOptions, IngestOutcome};
use crate::findings::{FilePosition, Finding, FindingCode, count_errors};
use crate::formats::detect::StatementFormat;
use crate::formats::statement::{self, StatementRead};
use crate::keys::{StatementKeys, StatementRecord};
use crate::ledger::{Ledger, Rejection};
use crate::statements::{OpenStatements, StatementStart};
use chrono::{DateTime, Utc};
use std::io::{BufReader, Read};
use tokio::sync::mpsc;

/// Statements in flight between the reader and the ledger.
const STATEMENTS_IN_FLIGHT: usize = 4;

enum Msg {
    Statement(Box<StatementRecord>),
    /// What the reader found, and the input's SHA-256 and size when it hashed them.
    Done(std::io::Result<StatementRead>, Option<(String, u64)>),
}

/// A statement file once read: what its outcome is made of.
struct ReadFile<'a> {
    opts: &'a IngestOptions,
    name: String,
    sha256: String,
    bytes: u64,
    started_at: DateTime<Utc>,
    since: std::time::Instant,
    summary: StatementRead,
}

/// What the recording loop left: the open run (if a statement came), the first error
/// recording one, what the reader found and the hash it computed.
struct Recorded {
    open: Option<OpenStatements>,
    failed: Option<crate::ledger::LedgerError>,
    summary: std::io::Result<StatementRead>,
    hashed: Option<(String, u64)>,
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn ingest(
    ledger: &mut Ledger,
    kind: StatementFormat,
    source: impl Read + Send + 'static,
    sha256: Option<String>,
    bytes: Option<u64>,
    opts: &IngestOptions,
    name: String,
    started_at: DateTime<Utc>,
    since: std::time::Instant,
) -> Result<IngestOutcome, IngestError> {
    let (tx, rx) = mpsc::channel::<Msg>(STATEMENTS_IN_FLIGHT);
    let read = statement::ReadOptions {
        strict_balances: opts.strict_balances,
    };
    let reader = spawn_reader(kind, read, source, tx)?;
    let no_findings: Vec<Finding> = Vec::new();
    let start = StatementStart {
        tenant: &opts.tenant,
        format: kind.as_str(),
        sha256: "",
        source_name: &name,
        started_at,
        findings: &no_findings,
    };
    let recorded = record_as_read(ledger, rx, &start).await;
    let _ = reader.join();
    let mut sha256 = sha256.unwrap_or_default();
    let mut bytes = bytes.unwrap_or_default();
    if sha256.is_empty()
        && let Some((h, n)) = recorded.hashed
    {
        sha256 = h;
        bytes = n;
    }
    let (open, summary) = settle(
        ledger,
        recorded.open,
        recorded.failed,
        recorded.summary,
        &name,
    )
    .await?;
    let rejected = count_errors(&summary.findings) > 0 || summary.statements == 0;
    let file = ReadFile {
        opts,
        name,
        sha256,
        bytes,
        started_at,
        since,
        summary,
    };
    match open {
        Some(o) if !rejected && opts.dry_run => dry_run(ledger, o, file).await,
        Some(o) if !rejected => commit(ledger, o, file).await,
        open => reject(ledger, open, file).await,
    }
}

/// Reads the file on a thread of its own, each statement keyed and sent as it completes,
/// then what the reader found.
fn spawn_reader(
    kind: StatementFormat,
    opts: statement::ReadOptions,
    source: impl Read + Send + 'static,
    tx: mpsc::Sender<Msg>,
) -> Result<std::thread::JoinHandle<()>, IngestError> {
    std::thread::Builder::new()
        .name("statements".into())
        .spawn(move || {
            // Hashed here when the caller has not (a dry run).
            let mut hashing = crate::hash::HashingReader::new(source);
            let mut keys = StatementKeys::default();
            let mut gone = false;
            let r = {
                let mut input = BufReader::with_capacity(256 * 1024, &mut hashing);
                statement::read(kind, &mut input, opts, &mut |s| {
                    if !gone {
                        let record = Box::new(keys.record(s));
                        gone = tx.blocking_send(Msg::Statement(record)).is_err();
                    }
                })
            };
            let r = r.and_then(|r| hashing.drain().map(|()| r));
            let (sha, n) = hashing.finish();
            let hashed = sha.map(|h| (hex::encode(h), n));
            let _ = tx.blocking_send(Msg::Done(r, hashed));
        })
        .map_err(|e| IngestError::Internal(e.to_string()))
}

/// Records each statement as it arrives, in one run opened by the first; after a failure
/// the rest are read and dropped (the reader finishes, its findings and hash are kept).
async fn record_as_read(
    ledger: &mut Ledger,
    mut rx: mpsc::Receiver<Msg>,
    start: &StatementStart<'_>,
) -> Recorded {
    let mut open: Option<OpenStatements> = None;
    let mut failed = None;
    let mut hashed = None;
    let summary = loop {
        match rx.recv().await {
            Some(Msg::Statement(r)) => {
                if failed.is_some() {
                    continue;
                }
                if open.is_none() {
                    match ledger.begin_statements(start, Some(&r.statement_key)).await {
                        Ok(o) => open = Some(o),
                        Err(e) => {
                            failed = Some(e);
                            continue;
                        }
                    }
                }
                if let Some(o) = open.as_mut()
                    && let Err(e) = ledger.record_statement(o, start, &r).await
                {
                    failed = Some(e);
                }
            }
            Some(Msg::Done(r, h)) => {
                hashed = h;
                break r;
            }
            None => break Err(std::io::Error::other("the statement reader stopped")),
        }
    };
    Recorded {
        open,
        failed,
        summary,
        hashed,
    }
}

/// A failure recording or reading rolls the run back and is the answer; otherwise the open
/// run (if any) and what the reader found.
async fn settle(
    ledger: &mut Ledger,
    open: Option<OpenStatements>,
    failed: Option<crate::ledger::LedgerError>,
    summary: std::io::Result<StatementRead>,
    name: &str,
) -> Result<(Option<OpenStatements>, StatementRead), IngestError> {
    if let Some(e) = failed {
        if let Some(o) = open {
            let _ = ledger.rollback_statements(o).await;
        }
        return Err(IngestError::Ledger(e));
    }
    match summary {
        Ok(s) => Ok((open, s)),
        Err(source) => {
            if let Some(o) = open {
                let _ = ledger.rollback_statements(o).await;
            }
            Err(IngestError::Read {
                path: name.to_string(),
                source,
            })
        }
    }
}

/// A dry run: classified inside the run's transaction, its report read there, then rolled
/// back: nothing recorded, nothing journaled.
async fn dry_run(
    ledger: &mut Ledger,
    o: OpenStatements,
    f: ReadFile<'_>,
) -> Result<IngestOutcome, IngestError> {
    let mut rows = Vec::new();
    let res = ledger
        .report_rows(&f.opts.tenant, o.run_id(), &mut |row| {
            let mut row = row.clone();
            row.run_id = 0;
            rows.push(row);
            Ok(())
        })
        .await;
    let c = o.counts().clone();
    let first = rows.first().map(|r| r.file_id.clone()).unwrap_or_default();
    ledger.rollback_statements(o).await?;
    res?.map_err(|e| IngestError::Internal(e.to_string()))?;
    Ok(IngestOutcome::DryRun {
        file: crate::keys::FileIdentity {
            format: f.summary.format,
            file_id: format!("statement:{first}"),
            origin: String::new(),
            aliases: Vec::new(),
        },
        counts: crate::ledger::Counts {
            records: c.entries,
            posted: c.recorded + c.provisional + c.confirmed,
            duplicates: c.duplicates,
            conflicts: c.conflicts,
            held: c.held,
            posted_amount_minor: 0,
            by_currency: Vec::new(),
        },
        sha256: f.sha256,
        rows,
        findings: f.summary.findings,
        bytes: f.bytes,
    })
}

/// Commits the run: its completion mark and findings, the caller's hook armed first.
async fn commit(
    ledger: &mut Ledger,
    o: OpenStatements,
    f: ReadFile<'_>,
) -> Result<IngestOutcome, IngestError> {
    let (opts, summary) = (f.opts, &f.summary);
    let start = StatementStart {
        tenant: &opts.tenant,
        format: summary.format,
        sha256: &f.sha256,
        source_name: &f.name,
        started_at: f.started_at,
        findings: &summary.findings,
    };
    super::arm_answer(
        ledger,
        opts,
        super::FileDone {
            file: f.name.clone(),
            findings: summary.findings.clone(),
            bytes: f.bytes,
            since: f.since,
            fast_path: false,
            statements: Some(o.counts().clone()),
            rejected: false,
        },
    );
    let done = ledger.commit_statements(o, &start).await?;
    Ok(IngestOutcome::Completed {
        run: done.run.clone(),
        findings: summary.findings.clone(),
        bytes: f.bytes,
        fast_path: false,
        statements: Some(Box::new(done)),
    })
}

/// A file with an error finding, or without a statement: the run (if any) rolled back,
/// the rejection journaled (not in a dry run).
async fn reject(
    ledger: &mut Ledger,
    open: Option<OpenStatements>,
    f: ReadFile<'_>,
) -> Result<IngestOutcome, IngestError> {
    if let Some(o) = open {
        ledger.rollback_statements(o).await?;
    }
    let (opts, summary) = (f.opts, f.summary);
    let mut findings = summary.findings;
    if findings.is_empty() {
        findings.push(Finding::error(
            FindingCode::NoStatements,
            FilePosition {
                byte_offset: 0,
                line: 1,
            },
            None,
            "at least one statement",
            "none",
        ));
    }
    if opts.dry_run {
        // A dry run journals nothing, not even a rejection.
        let mut run = crate::ledger::RunInfo::placeholder();
        run.tenant = opts.tenant.clone();
        run.sha256 = f.sha256;
        run.format = summary.format.to_string();
        run.source_name = f.name;
        run.status = crate::ledger::RunStatus::Rejected;
        run.records = summary.entries as i64;
        return Ok(IngestOutcome::Rejected {
            run,
            findings,
            bytes: f.bytes,
        });
    }
    let rejection = Rejection {
        tenant: opts.tenant.clone(),
        file_id: None,
        format: summary.format,
        sha256: f.sha256.clone(),
        source_name: f.name,
        started_at: f.started_at,
        finished_at: Utc::now(),
        records: summary.entries,
        findings: findings.clone(),
    };
    super::arm_answer(
        ledger,
        opts,
        super::FileDone {
            file: rejection.source_name.clone(),
            findings: findings.clone(),
            bytes: f.bytes,
            since: f.since,
            fast_path: false,
            statements: None,
            rejected: true,
        },
    );
    let run = ledger.record_rejection(&rejection).await?;
    Ok(IngestOutcome::Rejected {
        run,
        findings,
        bytes: f.bytes,
    })
}
