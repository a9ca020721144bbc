//! The JSON summary of one file's ingest: what `ingest --json` prints for it, and what
//! `POST /v1/files` answers (and stores under its `Idempotency-Key`). One function each for
//! a committed and a rejected file, so the two channels cannot drift apart.

use super::JsonFinding;
use crate::findings::{Finding, Severity};
use crate::ledger::RunInfo;
use crate::statements::StatementRun;
use serde_json::{Value, json};

/// What a summary is made of.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Summary<'a> {
    /// The input's name (a path, `-`, or an upload's name).
    pub file: &'a str,
    pub run: &'a RunInfo,
    /// Warnings of a committed file; every finding of a rejected one.
    pub findings: &'a [Finding],
    pub bytes: u64,
    pub seconds: f64,
    /// An exact re-upload, replayed from the earlier run without parsing.
    pub fast_path: bool,
    /// A statement file's counts.
    pub statements: Option<&'a StatementRun>,
}

/// Records per second, rounded (0 for no time).
pub(crate) fn rate(n: f64, secs: f64) -> f64 {
    if secs > 0.0 { (n / secs).round() } else { 0.0 }
}

/// A committed file.
pub(crate) fn completed(s: &Summary<'_>) -> Value {
    let run = s.run;
    let mut v = json!({
        "file": s.file, "status": run.status_word(), "run_id": run.run_id, "file_id": run.file_id,
        "sha256": run.sha256, "format": run.format, "tenant": run.tenant,
        "records": run.records, "posted": run.posted, "duplicates": run.duplicates,
        "conflicts": run.conflicts, "held": run.held,
        "posted_amount_minor": run.posted_amount_minor, "totals": run.totals,
        "warnings": run.warnings,
        "bytes": s.bytes, "seconds": s.seconds, "fast_path": s.fast_path,
        "records_per_second": rate(run.records as f64, s.seconds),
        "findings": s.findings.iter().map(JsonFinding::from).collect::<Vec<_>>(),
    });
    if let Some(st) = s.statements {
        v["kind"] = json!("statement");
        v["statements"] = json!({
            "total": st.statements, "new": st.statements_new,
            "duplicate": st.statements_duplicate, "conflict": st.statements_conflict,
            "unbalanced": st.unbalanced,
        });
        v["entries"] = json!(st.entries);
        v["recorded"] = json!(st.recorded);
        v["provisional"] = json!(st.provisional);
        v["confirmed"] = json!(st.confirmed);
    }
    v
}

/// A rejected file: nothing of it posted; `run_id` is the journaled rejection (none for a
/// dry run).
pub(crate) fn rejected(s: &Summary<'_>) -> Value {
    let run = s.run;
    let errors = s
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    json!({
        "file": s.file, "status": "rejected", "run_id": (run.run_id > 0).then_some(run.run_id),
        "file_id": run.file_id, "sha256": run.sha256, "format": run.format, "tenant": run.tenant,
        "records": run.records, "posted": 0, "duplicates": 0, "conflicts": 0, "held": 0,
        "errors": errors, "warnings": s.findings.len() - errors, "bytes": s.bytes, "seconds": s.seconds,
        "findings": s.findings.iter().map(JsonFinding::from).collect::<Vec<_>>(),
    })
}
