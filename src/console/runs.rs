//! `/console/runs` and `/console/runs/{id}`: the tenant's runs, filtered and paged; a
//! run's summary, totals per currency, findings with their positions, and its records
//! by outcome, a page at a time, or whole as CSV or JSON lines (the API's report stream).

use super::page::{self, Chrome, amount};
use super::session::Operator;
use crate::keys::Outcome;
use crate::ledger::{ReportRow, RunFilter, RunInfo, StoredFinding};
use crate::serve::Shared;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use futures_util::FutureExt;

/// Runs a page lists.
const RUNS_PAGE: i64 = 50;
/// Records a page of a run lists.
const RECORDS_PAGE: i64 = 100;

/// A run as a row of the list.
struct RunRow {
    id: i64,
    kind: &'static str,
    status: &'static str,
    file_id: String,
    source: String,
    started: String,
    records: i64,
    posted: i64,
    duplicates: i64,
    conflicts: i64,
    held: i64,
    totals: Vec<String>,
}

impl RunRow {
    fn of(r: &RunInfo) -> RunRow {
        RunRow {
            id: r.run_id,
            kind: r.kind.as_str(),
            status: r.status_word(),
            file_id: r.file_id.clone().unwrap_or_default(),
            source: r.source_name.clone(),
            started: utc(&r.started_at),
            records: r.records,
            posted: r.posted,
            duplicates: r.duplicates,
            conflicts: r.conflicts,
            held: r.held,
            totals: r
                .totals
                .iter()
                .map(|t| amount(t.amount_minor, &t.currency))
                .collect(),
        }
    }
}

/// A stored time as a person reads it: `2026-12-06 14:03:11 UTC`.
pub(crate) fn utc(ts: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(ts) {
        Ok(t) => t
            .with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M:%S UTC")
            .to_string(),
        Err(_) => ts.to_string(),
    }
}

#[derive(Template)]
#[template(path = "runs.html")]
struct RunsPage {
    chrome: Option<Chrome>,
    runs: Vec<RunRow>,
    q: RunsQuery,
    /// The link to the next page, when there may be one.
    next: Option<String>,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
pub(crate) struct RunsQuery {
    #[serde(default)]
    status: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    date: String,
    #[serde(default)]
    file_id: String,
    before: Option<i64>,
}

impl RunsQuery {
    fn filter(&self) -> Result<RunFilter, String> {
        RunFilter::parse(&self.status, &self.kind, &self.date, &self.file_id)
    }

    /// This query's link to the page of runs older than `before`.
    fn page_link(&self, before: i64) -> String {
        let mut s = form_urlencoded::Serializer::new(String::new());
        for (k, v) in [
            ("status", &self.status),
            ("kind", &self.kind),
            ("date", &self.date),
            ("file_id", &self.file_id),
        ] {
            if !v.is_empty() {
                s.append_pair(k, v);
            }
        }
        s.append_pair("before", &before.to_string());
        format!("/console/runs?{}", s.finish())
    }
}

pub(crate) async fn list(
    State(app): State<Shared>,
    op: Operator,
    Query(q): Query<RunsQuery>,
) -> Response {
    let filter = match q.filter() {
        Ok(f) => f,
        Err(e) => return page::bad_request(&e),
    };
    let (tenant, before) = (op.tenant().to_string(), q.before);
    let res = page::read(&app, move |l| {
        async move { l.runs_page(&tenant, &filter, before, RUNS_PAGE + 1).await }.boxed()
    })
    .await;
    let mut runs = match res {
        Ok(r) => r,
        Err(r) => return r,
    };
    let more = runs.len() > RUNS_PAGE as usize;
    runs.truncate(RUNS_PAGE as usize);
    let next = more
        .then(|| runs.last().map(|r| q.page_link(r.run_id)))
        .flatten();
    page::render(&RunsPage {
        chrome: Chrome::of(&op, "runs"),
        runs: runs.iter().map(RunRow::of).collect(),
        q,
        next,
    })
}

/// A record of the run as a row.
struct RecordRow {
    no: i64,
    outcome: &'static str,
    kind: String,
    key: String,
    trace: String,
    amount: String,
    debit: String,
    credit: String,
    original: String,
    differences: Vec<String>,
    note: String,
}

impl RecordRow {
    fn of(r: &ReportRow) -> RecordRow {
        let original = match (&r.original_file_id, r.original_record_no, r.original_run_id) {
            (Some(f), Some(n), Some(run)) => format!("{f} record {n} (run {run})"),
            _ => String::new(),
        };
        RecordRow {
            no: r.record_no,
            outcome: r.outcome.as_str(),
            kind: r.kind.clone(),
            key: r.posting_key.clone(),
            trace: r.trace_number.clone().unwrap_or_default(),
            amount: amount(r.amount_minor, &r.currency),
            debit: r.debit_account.clone(),
            credit: r.credit_account.clone(),
            original,
            differences: r
                .differences
                .as_deref()
                .map(|d| d.split("; ").map(|d| shown(d, &r.currency)).collect())
                .unwrap_or_default(),
            note: r
                .decision
                .clone()
                .or_else(|| r.reason.clone())
                .unwrap_or_default(),
        }
    }
}

/// A difference (`name: stored != new`) with its values as a person reads them.
fn shown(d: &str, currency: &str) -> String {
    match d
        .split_once(": ")
        .and_then(|(n, r)| Some((n, r.split_once(" != ")?)))
    {
        Some((name, (old, new))) => format!(
            "{name}: {} != {}",
            page::field_value(name, old, currency),
            page::field_value(name, new, currency)
        ),
        None => d.to_string(),
    }
}

/// A finding as a row: where, what was expected, what was found.
struct FindingRow {
    severity: String,
    code: String,
    position: String,
    expected: String,
    found: String,
}

impl FindingRow {
    fn of(f: &StoredFinding) -> FindingRow {
        let mut position = format!(
            "record {}, line {}, byte {}",
            f.record_index, f.line, f.byte_offset
        );
        if let Some(field) = &f.field {
            position.push_str(&format!(", field {field}"));
        }
        if let Some(c) = &f.columns {
            position.push_str(&format!(", columns {c}"));
        }
        FindingRow {
            severity: f.severity.clone(),
            code: f.code.clone(),
            position,
            expected: f.expected.clone(),
            found: f.found.clone(),
        }
    }
}

#[derive(Template)]
#[template(path = "run.html")]
struct RunPage {
    chrome: Option<Chrome>,
    run: RunRow,
    format: String,
    finished: String,
    sha256: String,
    actor: String,
    reason: String,
    replayed: bool,
    findings: Vec<FindingRow>,
    records: Vec<RecordRow>,
    outcome: String,
    after: i64,
    next: Option<String>,
}

#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct RunQuery {
    #[serde(default)]
    outcome: String,
    #[serde(default)]
    after: i64,
    #[serde(default)]
    replayed: Option<String>,
}

/// Whether the run's own counts say it has no record of outcome `o`.
fn counted_none(run: &RunInfo, o: Outcome) -> bool {
    match o {
        Outcome::Posted => run.posted == 0,
        Outcome::Duplicate => run.duplicates == 0,
        Outcome::Conflict => run.conflicts == 0,
        Outcome::Held => run.held == 0,
        _ => false,
    }
}

/// What a run's page reads: the run, its findings, a page of its records.
type RunRead = Option<(RunInfo, Vec<StoredFinding>, Vec<ReportRow>)>;

pub(crate) async fn show(
    State(app): State<Shared>,
    op: Operator,
    Path(id): Path<i64>,
    Query(q): Query<RunQuery>,
) -> Response {
    let outcome = match q.outcome.as_str() {
        "" | "any" => None,
        o => match Outcome::parse(o) {
            Some(o) => Some(o),
            None => return page::bad_request(&format!("there is no outcome {o:?}")),
        },
    };
    let (tenant, after) = (op.tenant().to_string(), q.after);
    let res = page::read(&app, move |l| {
        async move {
            let Some(run) = l.run(&tenant, id).await? else {
                return Ok(None);
            };
            let findings = l.findings(&tenant, id).await?;
            // An outcome the run counts none of is not looked for among its rows.
            let rows = if outcome.is_some_and(|o| counted_none(&run, o)) {
                Vec::new()
            } else {
                l.report_page(&tenant, id, after, outcome, RECORDS_PAGE + 1)
                    .await?
            };
            Ok::<RunRead, _>(Some((run, findings, rows)))
        }
        .boxed()
    })
    .await;
    let (run, findings, mut rows) = match res {
        Ok(Some(r)) => r,
        Ok(None) => return page::not_found(&format!("no run {id} for this tenant")),
        Err(r) => return r,
    };
    let more = rows.len() > RECORDS_PAGE as usize;
    rows.truncate(RECORDS_PAGE as usize);
    let next = more.then(|| rows.last()).flatten().map(|r| {
        let o = outcome.map_or(String::new(), |o| format!("outcome={}&", o.as_str()));
        format!("/console/runs/{id}?{o}after={}", r.record_no)
    });
    page::render(&RunPage {
        chrome: Chrome::of(&op, "runs"),
        format: run.format.clone(),
        finished: run.finished_at.as_deref().map(utc).unwrap_or_default(),
        sha256: run.sha256.clone(),
        actor: run.actor.clone().unwrap_or_default(),
        reason: run.reason.clone().unwrap_or_default(),
        run: RunRow::of(&run),
        replayed: q.replayed.is_some(),
        findings: findings.iter().map(FindingRow::of).collect(),
        records: rows.iter().map(RecordRow::of).collect(),
        outcome: outcome.map_or(String::new(), |o| o.as_str().to_string()),
        after,
        next,
    })
}

pub(crate) async fn download_csv(
    State(app): State<Shared>,
    op: Operator,
    Path(id): Path<i64>,
) -> Response {
    download(&app, &op, id, true).await
}

pub(crate) async fn download_jsonl(
    State(app): State<Shared>,
    op: Operator,
    Path(id): Path<i64>,
) -> Response {
    download(&app, &op, id, false).await
}

/// The run's whole report, as the API streams it, saved under the run's name.
async fn download(app: &Shared, op: &Operator, id: i64, csv: bool) -> Response {
    let tenant = op.tenant().to_string();
    match crate::serve::reads::report_stream(app, tenant, id, None, csv).await {
        Ok(mut r) => {
            let name = format!(
                "attachment; filename=\"run-{id}.{}\"",
                if csv { "csv" } else { "jsonl" }
            );
            if let Ok(v) = axum::http::HeaderValue::from_str(&name) {
                r.headers_mut()
                    .insert(axum::http::header::CONTENT_DISPOSITION, v);
            }
            r
        }
        Err(None) => page::not_found(&format!("no run {id} for this tenant")),
        Err(Some(e)) => page::ledger_failed(&e),
    }
}
