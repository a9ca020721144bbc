//! A read for every write (docs/principles.md §8): whatever an upload did can be looked up, by the
//! run (`Location`), by the file's records, by a posting's key or identifiers. Every read
//! is scoped to the caller's tenant; anything else's is `404`.

use super::problem::Problem;
use super::{App, Caller, Shared};
use crate::keys::Outcome;
use crate::ledger::{Ledger, LedgerError, Lookup};
use crate::report::{ReportFormat, ReportWriter};
use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

/// The most runs `GET /v1/runs` lists at once.
pub(crate) const RUNS_LIMIT_MAX: i64 = 1000;

/// Runs `read` on a connection; a database failure is `503`.
async fn read<T, F>(app: &Shared, read: F) -> Result<T, Response>
where
    T: Send + 'static,
    F: for<'a> FnOnce(&'a mut Ledger) -> BoxFuture<'a, Result<T, LedgerError>> + Send + 'static,
{
    match app.readers.run(read).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) | Err(e) => Err(Problem::ledger(&e).into_response()),
    }
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct RunsQuery {
    pub file_id: Option<String>,
    pub limit: Option<i64>,
    /// As `status_word` says it: running, completed, needs_attention, rejected.
    pub status: Option<String>,
    /// ingest, resolve, reverse, reconcile.
    pub kind: Option<String>,
    /// Runs begun on this day (UTC), YYYY-MM-DD.
    pub date: Option<String>,
    /// Only runs older than this one (the next page: the last run's id).
    pub before: Option<i64>,
}

pub(crate) async fn runs(
    State(app): State<Shared>,
    Caller(k): Caller,
    Query(q): Query<RunsQuery>,
) -> Response {
    let limit = q.limit.unwrap_or(50);
    if !(1..=RUNS_LIMIT_MAX).contains(&limit) {
        return Problem::bad_request(
            "invalid_parameter",
            format!("limit must be 1 to {RUNS_LIMIT_MAX}; found {limit}"),
        )
        .into_response();
    }
    let filter = match runs_filter(&q) {
        Ok(f) => f,
        Err(detail) => return Problem::bad_request("invalid_parameter", detail).into_response(),
    };
    let (tenant, before) = (k.tenant, q.before);
    match read(&app, move |l| {
        async move { l.runs_page(&tenant, &filter, before, limit).await }.boxed()
    })
    .await
    {
        Ok(runs) => Json(json!({ "runs": runs })).into_response(),
        Err(r) => r,
    }
}

/// `GET /v1/runs`' filter. A parameter given is a value of its own (the console's forms
/// send an empty one for "any"; the API's schema has none).
fn runs_filter(q: &RunsQuery) -> Result<crate::ledger::RunFilter, String> {
    let given = |name: &str, w: &Option<String>, any: &[&str]| match w.as_deref() {
        None => Ok(String::new()),
        Some(v) if v.is_empty() || any.contains(&v) => Err(format!(
            "{name} must be one of its values when given; found {v:?}"
        )),
        Some(v) => Ok(v.to_string()),
    };
    if let Some(b) = q.before.filter(|b| *b < 1) {
        return Err(format!("before must be a run id (1 or more); found {b}"));
    }
    crate::ledger::RunFilter::parse(
        &given("status", &q.status, &["any"])?,
        &given("kind", &q.kind, &["any"])?,
        &given("date", &q.date, &[])?,
        q.file_id.as_deref().unwrap_or(""),
    )
}

fn run_not_found(id: i64) -> Response {
    Problem::not_found(format!("no run {id} for this API key's tenant")).into_response()
}

pub(crate) async fn run(
    State(app): State<Shared>,
    Caller(k): Caller,
    Path(id): Path<i64>,
) -> Response {
    let tenant = k.tenant;
    let res = read(&app, move |l| {
        async move {
            let Some(run) = l.run(&tenant, id).await? else {
                return Ok(None);
            };
            let findings = l.findings(&tenant, id).await?;
            Ok(Some((run, findings)))
        }
        .boxed()
    })
    .await;
    match res {
        Ok(Some((run, findings))) => {
            let mut v = serde_json::to_value(&run).unwrap_or(Value::Null);
            v["status_word"] = json!(run.status_word());
            v["findings"] = json!(findings);
            Json(v).into_response()
        }
        Ok(None) => run_not_found(id),
        Err(r) => r,
    }
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct RecordsQuery {
    pub outcome: Option<String>,
}

/// The per-record report of a run: JSON lines (`application/x-ndjson`), or CSV when the
/// `Accept` header asks for `text/csv`. Streamed as it is read: a run of a million records
/// is never held in memory.
pub(crate) async fn records(
    State(app): State<Shared>,
    Caller(k): Caller,
    Path(id): Path<i64>,
    Query(q): Query<RecordsQuery>,
    headers: HeaderMap,
) -> Response {
    let outcome = match outcome_param(q.outcome.as_deref()) {
        Ok(o) => o,
        Err(detail) => return Problem::bad_request("invalid_parameter", detail).into_response(),
    };
    let csv = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/csv"));
    match report_stream(&app, k.tenant, id, outcome, csv).await {
        Ok(r) => r,
        Err(None) => run_not_found(id),
        Err(Some(e)) => Problem::ledger(&e).into_response(),
    }
}

/// Run `id`'s report streamed (CSV or JSON lines), for the API and the console's
/// downloads; `Err(None)` when the tenant has no such run, `Err(Some(_))` when the
/// database failed before the first byte.
pub(crate) async fn report_stream(
    app: &Shared,
    tenant: String,
    id: i64,
    outcome: Option<Outcome>,
    csv: bool,
) -> Result<Response, Option<LedgerError>> {
    let t = tenant.clone();
    match app
        .readers
        .run(move |l| async move { l.run(&t, id).await }.boxed())
        .await
    {
        Ok(Ok(Some(_))) => {}
        Ok(Ok(None)) => return Err(None),
        Ok(Err(e)) | Err(e) => return Err(Some(e)),
    }
    let rx = spawn_rows(app, tenant, id, outcome, csv);
    let stream = futures_util::stream::unfold(rx, |rx| async move {
        let (next, rx) = tokio::task::spawn_blocking(move || (rx.recv(), rx))
            .await
            .ok()?;
        next.ok().map(|b| (Ok::<_, std::io::Error>(b), rx))
    });
    let content_type = if csv {
        "text/csv; charset=utf-8"
    } else {
        "application/x-ndjson"
    };
    Ok((
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        Body::from_stream(stream),
    )
        .into_response())
}

/// `?outcome=`: the one outcome the rows are filtered to; another word is a 400 (this
/// detail).
fn outcome_param(o: Option<&str>) -> Result<Option<Outcome>, String> {
    match o.map(|o| (o, Outcome::parse(o))) {
        None => Ok(None),
        Some((_, Some(o))) => Ok(Some(o)),
        Some((o, None)) => Err(format!(
            "outcome must be posted, duplicate, conflict, held, recorded, provisional or \
             confirmed; found {o:?}"
        )),
    }
}

/// Writes the run's rows (CSV or JSON lines) from a reader connection, in a task of their
/// own, to the channel the response body reads.
fn spawn_rows(
    app: &App,
    tenant: String,
    id: i64,
    outcome: Option<Outcome>,
    csv: bool,
) -> std::sync::mpsc::Receiver<Bytes> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Bytes>(8);
    let pool = app.readers.clone();
    tokio::spawn(async move {
        let res = pool
            .run(move |l| {
                async move {
                    let format = if csv {
                        ReportFormat::Csv
                    } else {
                        ReportFormat::Jsonl
                    };
                    let mut w = match ReportWriter::new(
                        format,
                        Box::new(ChannelWriter {
                            tx,
                            buf: Vec::with_capacity(CHUNK),
                        }),
                        false,
                    ) {
                        Ok(w) => w,
                        Err(e) => return Ok(Err(e)),
                    };
                    let res = l
                        .report_rows(&tenant, id, &mut |row| match outcome {
                            Some(o) if row.outcome != o => Ok(()),
                            _ => w.write(row),
                        })
                        .await?;
                    Ok(res.and_then(|()| w.finish()))
                }
                .boxed()
            })
            .await;
        match res {
            Ok(Ok(Ok(()))) => {}
            // The client went away (the channel closed), or the database failed midway:
            // the body ends short, which the client sees as a broken transfer.
            Ok(Ok(Err(e))) => {
                tracing::debug!(run_id = id, error = %e, "records stream ended early")
            }
            Ok(Err(e)) | Err(e) => tracing::warn!(run_id = id, error = %e, "records stream failed"),
        }
    });
    rx
}

const CHUNK: usize = 64 * 1024;

/// Hands the report's bytes to the response body in 64 KiB pieces; a closed body (the
/// client gone) is a write error, which ends the read.
struct ChannelWriter {
    tx: std::sync::mpsc::SyncSender<Bytes>,
    buf: Vec<u8>,
}

impl std::io::Write for ChannelWriter {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK)));
        self.tx
            .send(chunk)
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "client gone"))
    }
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct PostingsQuery {
    pub trace: Option<String>,
    pub uetr: Option<String>,
    pub end_to_end_id: Option<String>,
    pub file_id: Option<String>,
    pub record_no: Option<i64>,
    pub key: Option<String>,
}

pub(crate) async fn postings(
    State(app): State<Shared>,
    Caller(k): Caller,
    Query(q): Query<PostingsQuery>,
) -> Response {
    let mut ways = Vec::new();
    if let Some(t) = q.trace {
        ways.push(Lookup::TraceNumber(t));
    }
    if let Some(u) = q.uetr {
        ways.push(Lookup::Uetr(u));
    }
    if let Some(e) = q.end_to_end_id {
        ways.push(Lookup::EndToEndId(e));
    }
    if let Some(key) = q.key {
        ways.push(Lookup::PostingKey(key));
    }
    match (q.file_id, q.record_no) {
        (Some(file_id), Some(record_no)) => ways.push(Lookup::Source { file_id, record_no }),
        (None, None) => {}
        _ => {
            return Problem::bad_request("invalid_parameter", "file_id and record_no go together")
                .into_response();
        }
    }
    if ways.len() != 1 {
        return Problem::bad_request(
            "invalid_parameter",
            format!(
                "name exactly one of trace, uetr, end_to_end_id, key, or file_id with record_no; \
                 found {}",
                ways.len()
            ),
        )
        .into_response();
    }
    let lookup = ways.remove(0);
    let tenant = k.tenant;
    match read(&app, move |l| {
        async move {
            let postings = l.lookup(&tenant, &lookup).await?;
            let ids: Vec<i64> = postings.iter().map(|p| p.posting_id).collect();
            let moved = l.moved_statuses(&tenant, &ids).await?;
            let with_status = |p: &crate::ledger::Posting| {
                let mut v = json!(p);
                v["status"] = json!(moved.get(&p.posting_id).map_or("posted", String::as_str));
                v
            };
            Ok(postings.iter().map(with_status).collect::<Vec<_>>())
        }
        .boxed()
    })
    .await
    {
        Ok(p) => Json(json!({ "postings": p })).into_response(),
        Err(r) => r,
    }
}

/// `GET /v1/postings/{id}/events`: a posting's status and every webhook event that moved
/// it, oldest first.
pub(crate) async fn posting_events(
    State(app): State<Shared>,
    Caller(k): Caller,
    Path(id): Path<i64>,
) -> Response {
    let tenant = k.tenant;
    let found = read(&app, move |l| {
        async move {
            if !l.is_tenants_posting(&tenant, id).await? {
                return Ok(None);
            }
            // The status is the last move's, read with the moves: a webhook applied between
            // two reads cannot make them disagree.
            let events = l.status_changes(&tenant, id).await?;
            let status = match events.last() {
                Some(last) => json!(last.to_status),
                None => json!(l.posting_status(&tenant, id).await?),
            };
            Ok(Some((status, events)))
        }
        .boxed()
    })
    .await;
    match found {
        Ok(Some((status, events))) => {
            Json(json!({"posting_id": id, "status": status, "events": events})).into_response()
        }
        Ok(None) => Problem::not_found(format!("no posting {id} for this tenant")).into_response(),
        Err(r) => r,
    }
}

pub(crate) async fn held(State(app): State<Shared>, Caller(k): Caller) -> Response {
    let tenant = k.tenant;
    match read(&app, move |l| async move { l.held(&tenant).await }.boxed()).await {
        Ok(h) => Json(json!({ "held": h })).into_response(),
        Err(r) => r,
    }
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct StatementsQuery {
    pub account: Option<String>,
}

pub(crate) async fn statements(
    State(app): State<Shared>,
    Caller(k): Caller,
    Query(q): Query<StatementsQuery>,
) -> Response {
    let tenant = k.tenant;
    match read(&app, move |l| {
        async move { l.statements(&tenant, q.account.as_deref()).await }.boxed()
    })
    .await
    {
        Ok(s) => Json(json!({ "statements": s })).into_response(),
        Err(r) => r,
    }
}

pub(crate) async fn reconciliation(
    State(app): State<Shared>,
    Caller(k): Caller,
    Path(id): Path<i64>,
) -> Response {
    let tenant = k.tenant;
    match read(&app, move |l| {
        async move { l.stored_reconciliation(&tenant, id).await }.boxed()
    })
    .await
    {
        Ok(Some(r)) => reconciliation_body(&r),
        Ok(None) => Problem::not_found(format!(
            "no reconciliation run {id} for this API key's tenant"
        ))
        .into_response(),
        Err(r) => r,
    }
}

/// A reconciliation's summary and items as one JSON object: the items are read from their
/// temporary file as they are written out (never built as one JSON value), and a file that
/// cannot be read is the database's kind of failure, not a panic.
fn reconciliation_body(r: &crate::reconcile::Reconciliation) -> Response {
    #[derive(serde::Serialize)]
    struct Reply<'a> {
        summary: &'a crate::reconcile::Summary,
        items: &'a crate::reconcile::Items,
    }
    let body = Reply {
        summary: &r.summary,
        items: &r.items,
    };
    match serde_json::to_vec(&body) {
        Ok(bytes) => ([(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        Err(e) => {
            let e = crate::ledger::LedgerError::TempFile(std::io::Error::other(e));
            Problem::ledger(&e).into_response()
        }
    }
}

/// The OpenAPI document of this server: `/metrics` in it only when it is served here (not
/// on a listener of its own, `--metrics-listen`).
pub(crate) async fn openapi(with_metrics: bool) -> Response {
    Json(super::openapi::document(with_metrics)).into_response()
}
