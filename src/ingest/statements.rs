//! A bank statement file (issue #13): read by its statement reader
//! (`formats::statement::read`) on a thread of its own, each statement keyed
//! (`model::StatementKeys`) and recorded as it completes, all in one run's transaction
//! (`Ledger::begin_statements` … `commit_statements`), so memory holds a few statements,
//! never the file. A file with an error finding is rolled back whole and its rejection
//! journaled, as for any file.

use super::{IngestError, IngestOptions, IngestOutcome};
use crate::findings::{FilePosition, Finding, FindingCode, count_errors};
use crate::formats::detect::Unsupported;
use crate::formats::statement::{self, StatementRead};
use crate::ledger::{Ledger, OpenStatements, Rejection, StatementStart};
use crate::model::{StatementKeys, StatementRecord};
use chrono::{DateTime, Utc};
use std::io::{BufReader, Read};
use tokio::sync::mpsc;

/// Statements in flight between the reader and the ledger.
const STATEMENTS_IN_FLIGHT: usize = 4;

enum Msg {
    Statement(Box<StatementRecord>),
    Done(std::io::Result<StatementRead>),
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn ingest(
    ledger: &mut Ledger,
    kind: Unsupported,
    source: impl Read + Send + 'static,
    sha256: &str,
    bytes: u64,
    opts: &IngestOptions,
    name: String,
    started_at: DateTime<Utc>,
) -> Result<IngestOutcome, IngestError> {
    let (tx, mut rx) = mpsc::channel::<Msg>(STATEMENTS_IN_FLIGHT);
    let reader = std::thread::Builder::new()
        .name("statements".into())
        .spawn(move || {
            let mut input = BufReader::with_capacity(256 * 1024, source);
            let mut keys = StatementKeys::default();
            let mut gone = false;
            let r = statement::read(kind, &mut input, &mut |s| {
                if !gone {
                    let record = Box::new(keys.record(s));
                    gone = tx.blocking_send(Msg::Statement(record)).is_err();
                }
            });
            let _ = tx.blocking_send(Msg::Done(r));
        })
        .map_err(|e| IngestError::Internal(e.to_string()))?;
    let no_findings: Vec<Finding> = Vec::new();
    let mut start = StatementStart {
        tenant: &opts.tenant,
        format: kind.as_str(),
        sha256,
        source_name: &name,
        started_at,
        findings: &no_findings,
    };
    let mut open: Option<OpenStatements> = None;
    let mut failed = None;
    let summary = loop {
        match rx.recv().await {
            Some(Msg::Statement(r)) => {
                if failed.is_some() {
                    continue;
                }
                if open.is_none() {
                    match ledger
                        .begin_statements(&start, Some(&r.statement_key))
                        .await
                    {
                        Ok(o) => open = Some(o),
                        Err(e) => {
                            failed = Some(e);
                            continue;
                        }
                    }
                }
                if let Some(o) = open.as_mut()
                    && let Err(e) = ledger.record_statement(o, &start, &r).await
                {
                    failed = Some(e);
                }
            }
            Some(Msg::Done(r)) => break r,
            None => break Err(std::io::Error::other("the statement reader stopped")),
        }
    };
    let _ = reader.join();
    if let Some(e) = failed {
        if let Some(o) = open {
            let _ = ledger.rollback_statements(o).await;
        }
        return Err(IngestError::Ledger(e));
    }
    let summary = match summary {
        Ok(s) => s,
        Err(source) => {
            if let Some(o) = open {
                let _ = ledger.rollback_statements(o).await;
            }
            return Err(IngestError::Read {
                path: name.clone(),
                source,
            });
        }
    };
    let rejected = count_errors(&summary.findings) > 0 || summary.statements == 0;
    match open {
        Some(o) if !rejected => {
            start.format = summary.format;
            start.findings = &summary.findings;
            let done = ledger.commit_statements(o, &start).await?;
            Ok(IngestOutcome::Completed {
                run: done.run.clone(),
                findings: summary.findings.clone(),
                bytes,
                fast_path: false,
                statements: Some(Box::new(done)),
            })
        }
        open => {
            if let Some(o) = open {
                ledger.rollback_statements(o).await?;
            }
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
            let rejection = Rejection {
                tenant: opts.tenant.clone(),
                file_id: None,
                format: summary.format,
                sha256: sha256.to_string(),
                source_name: name,
                started_at,
                finished_at: Utc::now(),
                records: summary.entries,
                findings: findings.clone(),
            };
            let run = ledger.record_rejection(&rejection).await?;
            Ok(IngestOutcome::Rejected {
                run,
                findings,
                bytes,
            })
        }
    }
}
