//! A bank statement file (issue #13): read whole by its statement reader
//! (`formats::statement::read`), keyed (`model::statement_record`), then recorded in one
//! run (`Ledger::record_statements`) — or, with an error finding, rejected whole and the
//! rejection journaled, as for any file.

use super::{IngestError, IngestOptions, IngestOutcome};
use crate::findings::count_errors;
use crate::formats::detect::Unsupported;
use crate::formats::statement::{self, Statement};
use crate::ledger::{Ledger, Rejection, StatementStart};
use crate::model::statement_records;
use chrono::{DateTime, Utc};
use std::io::{BufReader, Read};

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
    // Parsing is CPU work on a blocking thread; memory is the statements of one file (a
    // statement reader streams, the recording does not yet: README "Bank statements").
    let read = tokio::task::spawn_blocking(move || {
        let mut input = BufReader::with_capacity(256 * 1024, source);
        let mut statements: Vec<Statement> = Vec::new();
        let r = statement::read(kind, &mut input, &mut |s| statements.push(s));
        r.map(|r| (r, statements))
    })
    .await
    .map_err(|e| IngestError::Internal(e.to_string()))?;
    let (summary, statements) = read.map_err(|source| IngestError::Read {
        path: name.clone(),
        source,
    })?;
    if count_errors(&summary.findings) > 0 || statements.is_empty() {
        let mut findings = summary.findings;
        if findings.is_empty() {
            findings.push(crate::findings::Finding::error(
                crate::findings::FindingCode::NoStatements,
                crate::findings::FilePosition {
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
        return Ok(IngestOutcome::Rejected {
            run,
            findings,
            bytes,
        });
    }
    let records = statement_records(statements);
    let start = StatementStart {
        tenant: &opts.tenant,
        format: summary.format,
        sha256,
        source_name: &name,
        started_at,
        findings: &summary.findings,
    };
    let done = ledger.record_statements(&start, &records).await?;
    Ok(IngestOutcome::Completed {
        run: done.run.clone(),
        findings: summary.findings,
        bytes,
        fast_path: false,
        statements: Some(Box::new(done)),
    })
}
