//! `POST /v1/files`: a clearing file in, under an `Idempotency-Key` (the IETF httpapi
//! draft, Stripe's practice, docs/principles.md §2, §6, §8).
//!
//! The body is the file's bytes, or one part of a `multipart/form-data` body (the first
//! part with a file name, or named `file`). The key is scoped to (tenant, API key, method,
//! route); the request's fingerprint is the SHA-256 of the file's bytes (for multipart, of
//! the part, so a client library that draws another boundary on its retry is still the same
//! request).
//!
//! - No key: `400 idempotency_key_missing`.
//! - The key's first request still running (in this process, or on PostgreSQL in any
//!   worker holding its advisory lock): `409 idempotency_key_in_progress` with
//!   `Retry-After` (half the time the first has run so far, 1 to 30 s); its body is read
//!   and dropped, never spooled.
//! - The key answered already, within its window: the stored status, headers and body,
//!   byte for byte, plus `Idempotent-Replayed: true` — or, when the file differs,
//!   `422 idempotency_key_reuse` (the old answer would say the new file went in).
//! - Otherwise the file is ingested like any other; the response (`201` with the
//!   `ingest --json` summary and `Location: /v1/runs/{id}`, or `422 file_rejected` with its
//!   findings) is stored by the run's own COMMIT, with its postings and its file claim.
//!   A database failure (`503`) stores nothing: the retry runs again, and the natural keys
//!   make sure nothing posts twice.
//!
//! After the window (`--idempotency-window`, 24 h) the key is new again, and the same file
//! gets a new run whose every record is a duplicate: the natural keys hold forever
//! (docs/principles.md §7).
//!
//! Every repeat is journaled (`http_repeats`, docs/principles.md §9). The journal is written by a
//! task of its own (`Repeats`): a 409 must not wait for the SQLite write lock the running
//! ingest holds.

use super::problem::{PROBLEM_JSON, Problem};
use super::{App, Caller, Shared};
use crate::ingest::{IngestError, IngestOptions, Input, OnCommit, ingest_file};
use crate::ledger::LedgerError;
use crate::report::summary::{self, Summary};
use crate::serve::store::{Answer, IdemScope, RepeatDecision, Seal, SealHook, StoredResponse};
use axum::body::Body;
use axum::extract::{FromRequest, Multipart, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use futures_util::{FutureExt, StreamExt};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::sync::Arc;

/// The longest `Idempotency-Key` accepted (the draft sets none; Stripe: 255).
pub(crate) const IDEMPOTENCY_KEY_MAX: usize = 255;
pub(crate) const ROUTE: &str = "/v1/files";

#[derive(Debug, serde::Deserialize, Default)]
pub(crate) struct FileQuery {
    /// The name the run is given (`source_name`, shown by `runs`); the multipart part's
    /// file name when not given.
    pub name: Option<String>,
}

/// A journaled repeat, waiting for its write.
#[derive(Debug)]
pub(crate) struct RepeatEntry {
    pub scope: IdemScope,
    pub decision: RepeatDecision,
    pub fingerprint: String,
    pub run_id: Option<i64>,
    pub at: chrono::DateTime<Utc>,
}

/// Takes a key out of the in-flight set when dropped (the run ended, or the request was
/// dropped before its run began).
struct InFlight {
    app: Shared,
    scope: IdemScope,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Ok(mut map) = self.app.in_flight.lock() {
            map.remove(&self.scope);
        }
    }
}

/// What the ledger work of one upload came to, and whether its connection may serve
/// again (not when its key's lock could not be released: the session still holds it).
struct Work(Decided, bool);

enum Decided {
    InProgress,
    Stored(StoredResponse),
    /// The run may have committed (or did), and its answer cannot be given now.
    Uncertain(String),
    Ran(Result<StoredResponse, IngestError>),
}

impl crate::serve::pool::Reusable for Work {
    fn connection_ok(&self) -> bool {
        self.1
            && !matches!(
                &self.0,
                Decided::Ran(Err(IngestError::Ledger(
                    LedgerError::Database { .. } | LedgerError::CommitUnknown { .. }
                )))
            )
    }
}

/// The key of `Idempotency-Key`, an RFC 8941 Item whose value is a String (§3.3.3): its
/// escapes read, its parameters ignored, 1 to 255 characters. Repeated field lines are
/// their comma-joined form (RFC 9110 §5.3), so two of them are a list and refused, as the
/// same two values on one line are.
///
/// A bare value (`8e03978e-40d5…`, not in quotes) is accepted too, as itself: most clients
/// send the key bare, as Stripe's API taught them, and refusing them would help nobody. It
/// must not hold what would make it ambiguous (`,` `;` `"` or a space): those need quotes.
pub(crate) fn idempotency_key(headers: &HeaderMap) -> Result<String, Problem> {
    let lines: Vec<&HeaderValue> = headers.get_all("idempotency-key").iter().collect();
    if lines.is_empty() {
        return Err(Problem::bad_request(
            "idempotency_key_missing",
            "POST /v1/files requires an Idempotency-Key header (a unique value per file, e.g. a \
             UUID); a retry of the same upload sends the same key",
        ));
    }
    let invalid = |why: String| Problem::bad_request("idempotency_key_invalid", why);
    let joined = lines
        .iter()
        .map(|v| v.to_str())
        .collect::<Result<Vec<&str>, _>>()
        .map_err(|_| invalid("the Idempotency-Key holds bytes that are not visible ASCII".into()))?
        .join(", ");
    let key = if joined.starts_with('"') {
        sf_string(&joined).map_err(invalid)?
    } else if let Some(c) = joined
        .chars()
        .find(|c| matches!(c, ',' | ';' | '"') || !c.is_ascii_graphic())
    {
        return Err(invalid(format!(
            "the Idempotency-Key {joined:?} holds {c:?}: send one key per request, as an RFC 8941 \
             sf-string (\"…\", §3.3.3) when it holds a comma, semicolon, quote or space (two \
             Idempotency-Key lines are one comma-separated list, RFC 9110 §5.3)"
        )));
    } else {
        joined
    };
    if key.is_empty() || key.len() > IDEMPOTENCY_KEY_MAX {
        return Err(invalid(format!(
            "the Idempotency-Key must be 1 to {IDEMPOTENCY_KEY_MAX} characters; found {}",
            key.len()
        )));
    }
    Ok(key)
}

/// The String of an RFC 8941 Item (parameters ignored), or why the value is not one.
fn sf_string(value: &str) -> Result<String, String> {
    let not = |why: String| {
        format!(
            "the Idempotency-Key {value:?} is not an RFC 8941 sf-string (§3.3.3: \"…\" with \\\" \
             and \\\\ as its only escapes, then parameters): {why}"
        )
    };
    match sfv::Parser::new(value).parse_item::<sfv::Item>() {
        Ok(sfv::Item {
            bare_item: sfv::BareItem::String(s),
            ..
        }) => Ok(s.as_str().to_string()),
        Ok(_) => Err(not("it is another kind of item".into())),
        Err(e) => Err(not(e.to_string())),
    }
}

pub(crate) async fn post_file(
    State(app): State<Shared>,
    Caller(caller): Caller,
    Query(q): Query<FileQuery>,
    req: Request,
) -> Response {
    let key = match idempotency_key(req.headers()) {
        Ok(k) => k,
        Err(p) => {
            app.metrics.idempotency("missing_key");
            return p.into_response();
        }
    };
    let scope = IdemScope {
        tenant: caller.tenant.clone(),
        api_key_id: caller.api_key_id,
        method: "POST".into(),
        route: ROUTE.into(),
        key,
    };
    upload(app, scope, q, req).await
}

/// An upload under `scope`, whoever sent it (the API, or the console's upload form, whose
/// answer it turns into a page): the same spool, the same ingest, the same stored answer.
pub(crate) async fn upload(app: Shared, scope: IdemScope, q: FileQuery, req: Request) -> Response {
    // A repeat while the first runs here: 409, its body not kept.
    if let Some(elapsed) = running_for(&app, &scope) {
        // The body is read (and dropped) before the answer: a server that answers while
        // the client is still sending breaks the connection under it, and the client
        // would see a broken pipe where a 409 is meant.
        drain(&app, req).await;
        return in_progress(&app, scope, String::new(), retry_after(elapsed));
    }
    let guard = InFlight {
        app: app.clone(),
        scope: scope.clone(),
    };
    let spooled = match spool(&app, q, req).await {
        Ok(s) => s,
        Err(p) => return p.into_response(),
    };
    let fingerprint = spooled.sha256.clone();
    let window = chrono::Duration::from_std(app.config.idempotency_window)
        .unwrap_or(chrono::Duration::hours(24));
    let (work_scope, work_fp) = (scope.clone(), fingerprint.clone());
    let started = std::time::Instant::now();
    let decided = app
        .pool
        .run(move |ledger| {
            async move {
                // The guard and the spooled file live until the run has ended.
                let _guard = guard;
                let upload = spooled;
                if !ledger.try_lock_key(&work_scope).await? {
                    return Ok::<_, LedgerError>(Work(Decided::InProgress, true));
                }
                let out = decide(ledger, &work_scope, work_fp, window, &upload).await;
                let unlocked = ledger.unlock_key(&work_scope).await.is_ok();
                out.map(|d| Work(d, unlocked))
            }
            .map(|r: Result<Work, LedgerError>| match r {
                Ok(w) => w,
                Err(e) => Work(Decided::Ran(Err(IngestError::Ledger(e))), true),
            })
            .boxed()
        })
        .await
        .map(|w| w.0);
    decided_response(&app, decided, scope, fingerprint, started)
}

/// The answer to an upload, from what its ledger work came to.
fn decided_response(
    app: &App,
    decided: Result<Decided, LedgerError>,
    scope: IdemScope,
    fingerprint: String,
    started: std::time::Instant,
) -> Response {
    match decided {
        // Another process holds the key: how long it has run is not known here.
        Ok(Decided::InProgress) => in_progress(app, scope, fingerprint, 1),
        Ok(Decided::Stored(stored)) => repeat(app, scope, fingerprint, stored),
        Ok(Decided::Ran(Ok(stored))) => {
            app.metrics.idempotency("first");
            app.metrics.ingest_took(started.elapsed().as_secs_f64());
            respond(&stored, false)
        }
        Ok(Decided::Uncertain(why)) => uncertain(why),
        Ok(Decided::Ran(Err(e))) => failed(app, e),
        Err(e) => failed(app, IngestError::Ledger(e)),
    }
}

/// How long the key's first request has been running in this process; `None` (and the
/// key taken for this request) when none is.
fn running_for(app: &App, scope: &IdemScope) -> Option<std::time::Duration> {
    app.in_flight
        .lock()
        .ok()
        .and_then(|mut map| match map.entry(scope.clone()) {
            std::collections::hash_map::Entry::Occupied(e) => Some(e.get().elapsed()),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(std::time::Instant::now());
                None
            }
        })
}

/// Under the key's lock: the answer stored for the key, or this upload's run, its answer
/// sealed with its commit.
async fn decide(
    ledger: &mut crate::ledger::Ledger,
    scope: &IdemScope,
    fingerprint: String,
    window: chrono::Duration,
    upload: &Spooled,
) -> Result<Decided, LedgerError> {
    let now = Utc::now();
    if let Some(stored) = ledger.stored_response(scope, now).await? {
        return Ok(Decided::Stored(stored));
    }
    let seal = Seal {
        scope: scope.clone(),
        fingerprint,
        created_at: now,
        window,
    };
    let on_commit = OnCommit(Arc::new(move |done| {
        Box::new(SealHook {
            seal: seal.clone(),
            done,
            answer,
        })
    }));
    let opts = IngestOptions {
        tenant: scope.tenant.clone(),
        dry_run: false,
        validate: Default::default(),
        resend_window_days: Some(10),
        format: None,
        strict_balances: false,
        on_commit: Some(on_commit),
    };
    let input = Input::Upload {
        path: upload.file.path().to_path_buf(),
        name: upload.name.clone(),
    };
    let clock = Utc::now;
    let res = ingest_file(ledger, &input, &opts, &clock, None).await;
    ledger.clear_next_run();
    Ok(match res {
        // Read as of the request's start: the row written by the commit answers this
        // request whatever the window.
        Ok(_) => match ledger.stored_response(scope, now).await {
            Ok(Some(s)) => Decided::Ran(Ok(s)),
            Ok(None) => Decided::Uncertain(
                "the run committed, but its stored response was not found".into(),
            ),
            Err(e) => Decided::Uncertain(format!(
                "the run committed, but its stored response could not be read: {e}"
            )),
        },
        // Another process answered the key while this run waited for the write lock: this
        // run rolled back; the answer is that one's.
        Err(IngestError::Ledger(LedgerError::IdempotencyKeyTaken)) => {
            match ledger.stored_response(scope, Utc::now()).await? {
                Some(s) => Decided::Stored(s),
                None => Decided::Ran(Err(IngestError::Internal(
                    "the key was taken, but no response is stored".into(),
                ))),
            }
        }
        Err(e) => Decided::Ran(Err(e)),
    })
}

/// The outcome is not known here (docs/principles.md §8: uncertain is missing information, not
/// failure): the same request again, with the same key, learns it: a committed run is
/// replayed, one that did not commit runs now.
fn uncertain(why: String) -> Response {
    tracing::warn!(reason = %why, "upload outcome unknown to this request");
    Problem::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "outcome_unknown",
        "The outcome of this upload is not known yet",
        format!(
            "{why}; send the same request again with the same Idempotency-Key to learn it (a \
             committed run is answered as stored, one that did not commit runs now; nothing \
             posts twice)"
        ),
    )
    .header(header::RETRY_AFTER, "1")
    .into_response()
}

/// A request whose ingest failed: before its commit (nothing stored, nothing posted),
/// or with its commit's outcome unknown.
fn failed(app: &App, e: IngestError) -> Response {
    if let IngestError::Ledger(l) = &e
        && l.is_unique_violation()
    {
        app.metrics.unique_rejection();
    }
    match e {
        IngestError::Ledger(
            l @ (LedgerError::CommitUnknown { .. } | LedgerError::AfterCommit { .. }),
        ) => uncertain(l.to_string()),
        // The file's own totals: it will not fit next time either (not stored: the same
        // file is refused the same way).
        IngestError::Ledger(LedgerError::TotalOverflow) => Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "total_overflow",
            "The file's posted amounts do not fit a 64-bit total; nothing was posted",
            LedgerError::TotalOverflow.to_string(),
        )
        .into_response(),
        IngestError::Ledger(l) => {
            tracing::warn!(error = %l, "upload failed; nothing committed");
            Problem::ledger(&l).into_response()
        }
        e => Problem::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "Internal error; nothing of this request was committed",
            e.to_string(),
        )
        .into_response(),
    }
}

/// How long a repeat is told to wait: half as long as the first has run so far, 1 to 30 s
/// (a big file's clients do not send it again every second while it is ingested).
pub(crate) fn retry_after(running_for: std::time::Duration) -> u64 {
    (running_for.as_secs() / 2).clamp(1, 30)
}

fn in_progress(app: &App, scope: IdemScope, fingerprint: String, retry_after: u64) -> Response {
    app.metrics.idempotency("in_progress");
    journal(app, scope, RepeatDecision::InProgress, fingerprint, None);
    Problem::new(
        StatusCode::CONFLICT,
        "idempotency_key_in_progress",
        "A request with this Idempotency-Key is still being processed",
        "the first request with this key has not finished; retry after a moment to get its \
         response",
    )
    .header(header::RETRY_AFTER, &retry_after.to_string())
    .into_response()
}

/// A key answered before: its response again, or 422 when the file is another.
fn repeat(app: &App, scope: IdemScope, fingerprint: String, stored: StoredResponse) -> Response {
    if stored.fingerprint != fingerprint {
        app.metrics.idempotency("mismatch");
        journal(
            app,
            scope,
            RepeatDecision::Mismatch,
            fingerprint.clone(),
            stored.run_id,
        );
        return Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "idempotency_key_reuse",
            "This Idempotency-Key was used with another file",
            format!(
                "the key was first used at {} with a file of SHA-256 {}; this file's is {}. \
                 Nothing was done: send a new file with a new key",
                stored.created_at, stored.fingerprint, fingerprint
            ),
        )
        .with("original_sha256", stored.fingerprint.clone())
        .with("sha256", fingerprint)
        .into_response();
    }
    app.metrics.idempotency("replayed");
    journal(
        app,
        scope,
        RepeatDecision::Replayed,
        fingerprint,
        stored.run_id,
    );
    respond(&stored, true)
}

fn journal(
    app: &App,
    scope: IdemScope,
    decision: RepeatDecision,
    fingerprint: String,
    run_id: Option<i64>,
) {
    app.repeats.send(RepeatEntry {
        scope,
        decision,
        fingerprint,
        run_id,
        at: Utc::now(),
    });
}

/// A stored response as an HTTP response.
fn respond(stored: &StoredResponse, replayed: bool) -> Response {
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
    let mut headers = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(&stored.content_type) {
        headers.insert(header::CONTENT_TYPE, v);
    }
    if let Some(loc) = stored
        .location
        .as_deref()
        .and_then(|l| HeaderValue::from_str(l).ok())
    {
        headers.insert(header::LOCATION, loc);
    }
    if replayed {
        headers.insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    (status, headers, Body::from(stored.body.clone())).into_response()
}

/// The answer a run gets, made inside its transaction (`AnswerFn`).
fn answer(s: &Summary<'_>, rejected: bool) -> Answer {
    let location = (s.run.run_id > 0).then(|| format!("/v1/runs/{}", s.run.run_id));
    if rejected {
        let errors = s
            .findings
            .iter()
            .filter(|f| f.severity == crate::findings::Severity::Error)
            .count();
        let mut p = Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "file_rejected",
            "The file was rejected; nothing of it was posted",
            format!(
                "{} failed validation: {errors} error(s); the findings name each position",
                s.file
            ),
        );
        if let serde_json::Value::Object(mut o) = summary::rejected(s) {
            // The problem's `status` is the HTTP status; the run's is `run_status`.
            if let Some(st) = o.remove("status") {
                o.insert("run_status".into(), st);
            }
            p.extra = o;
        }
        Answer {
            status: 422,
            content_type: PROBLEM_JSON,
            location,
            body: p.body(),
        }
    } else {
        Answer {
            status: 201,
            content_type: "application/json",
            location,
            body: serde_json::to_vec(&summary::completed(s)).unwrap_or_default(),
        }
    }
}

/// An upload on disk, hashed.
pub(crate) struct Spooled {
    pub file: tempfile::NamedTempFile,
    pub name: String,
    pub sha256: String,
}

/// Writes the upload's bytes to a temporary file, hashing them, within the size limit and
/// the pause limit.
async fn spool(app: &App, q: FileQuery, req: Request) -> Result<Spooled, Problem> {
    let is_multipart = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"));
    let mut sink = Sink {
        file: temp_file(app)?,
        hash: Sha256::new(),
        bytes: 0,
        max: app.config.max_upload_bytes,
    };
    let pause = app.config.request_timeout;
    let deadline = app.config.body_deadline;
    let mut name = q.name;
    let read = async {
        if is_multipart {
            sink.multipart(req, pause).await
        } else {
            sink.body(req, pause).await.map(|()| None)
        }
    };
    let part_name = tokio::time::timeout(deadline, read)
        .await
        .map_err(|_| late(deadline))??;
    if name.is_none() {
        name = part_name;
    }
    sink.file.flush().map_err(|e| {
        Problem::new(
            StatusCode::INSUFFICIENT_STORAGE,
            "spool_failed",
            "The upload could not be stored for its ingest",
            format!("cannot write the temporary file: {e}"),
        )
    })?;
    let name = format!("http:{}", name.unwrap_or_else(|| "upload".into()));
    Ok(Spooled {
        file: sink.file,
        name,
        sha256: hex::encode(sink.hash.finalize()),
    })
}

/// The upload's temporary file, in `serve --spool-dir` when given.
fn temp_file(app: &App) -> Result<tempfile::NamedTempFile, Problem> {
    match &app.config.spool_dir {
        Some(d) => tempfile::NamedTempFile::new_in(d),
        None => tempfile::NamedTempFile::new(),
    }
    .map_err(|e| {
        Problem::new(
            StatusCode::INSUFFICIENT_STORAGE,
            "spool_failed",
            "The upload could not be stored for its ingest",
            format!("cannot create a temporary file: {e}"),
        )
    })
}

/// Reads a body to its end, dropping it, within the upload limits (beyond them the
/// connection is closed instead).
pub(crate) async fn drain(app: &App, req: Request) {
    let mut stream = req.into_body().into_data_stream();
    let mut seen = 0u64;
    let read = async {
        while let Ok(Some(Ok(c))) =
            tokio::time::timeout(app.config.request_timeout, stream.next()).await
        {
            seen += c.len() as u64;
            if seen > app.config.max_upload_bytes {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(app.config.body_deadline, read).await;
}

/// The `408` of an upload whose body took longer than `serve --body-deadline`.
fn late(deadline: std::time::Duration) -> Problem {
    Problem::new(
        StatusCode::REQUEST_TIMEOUT,
        "body_deadline",
        "The upload took too long",
        format!(
            "the body did not arrive whole within {} s (`serve --body-deadline`); nothing was done",
            deadline.as_secs()
        ),
    )
}

fn timeout(pause: std::time::Duration) -> Problem {
    Problem::new(
        StatusCode::REQUEST_TIMEOUT,
        "body_timeout",
        "The upload paused too long",
        format!(
            "no byte of the body arrived for {} s; nothing was done",
            pause.as_secs()
        ),
    )
}

struct Sink {
    file: tempfile::NamedTempFile,
    hash: Sha256,
    bytes: u64,
    max: u64,
}

impl Sink {
    fn write(&mut self, chunk: &[u8]) -> Result<(), Problem> {
        self.bytes += chunk.len() as u64;
        if self.bytes > self.max {
            return Err(Problem::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "upload_too_large",
                "The upload is larger than the server accepts",
                format!(
                    "uploads are limited to {} bytes (`serve --max-upload-bytes`)",
                    self.max
                ),
            ));
        }
        self.hash.update(chunk);
        self.file.write_all(chunk).map_err(|e| {
            Problem::new(
                StatusCode::INSUFFICIENT_STORAGE,
                "spool_failed",
                "The upload could not be stored for its ingest",
                format!("cannot write the temporary file: {e}"),
            )
        })
    }

    /// Writes the file of a multipart body: its first part with a file name, or named
    /// `file`. The part's file name.
    async fn multipart(
        &mut self,
        req: Request,
        pause: std::time::Duration,
    ) -> Result<Option<String>, Problem> {
        let mut parts = Multipart::from_request(req, &()).await.map_err(|e| {
            Problem::bad_request("multipart_invalid", format!("a multipart body: {e}"))
        })?;
        loop {
            let next = tokio::time::timeout(pause, parts.next_field())
                .await
                .map_err(|_| timeout(pause))?;
            let mut field = match next {
                Ok(Some(f)) => f,
                Ok(None) => {
                    return Err(Problem::bad_request(
                        "multipart_no_file",
                        "the multipart body has no part with a file name, nor one named `file`",
                    ));
                }
                Err(e) => {
                    return Err(Problem::bad_request(
                        "multipart_invalid",
                        format!("a multipart body: {e}"),
                    ));
                }
            };
            if field.file_name().is_none() && field.name() != Some("file") {
                continue;
            }
            let file_name = field.file_name().map(str::to_string);
            loop {
                let chunk = tokio::time::timeout(pause, field.chunk())
                    .await
                    .map_err(|_| timeout(pause))?
                    .map_err(|e| {
                        Problem::bad_request("multipart_invalid", format!("a multipart body: {e}"))
                    })?;
                match chunk {
                    Some(c) => self.write(&c)?,
                    None => return Ok(file_name),
                }
            }
        }
    }

    /// Writes a body that is the file itself.
    async fn body(&mut self, req: Request, pause: std::time::Duration) -> Result<(), Problem> {
        let mut stream = req.into_body().into_data_stream();
        loop {
            let next = tokio::time::timeout(pause, stream.next())
                .await
                .map_err(|_| timeout(pause))?;
            match next {
                Some(Ok(c)) => self.write(&c)?,
                Some(Err(e)) => {
                    return Err(Problem::bad_request(
                        "body_unreadable",
                        format!("the request body could not be read: {e}"),
                    ));
                }
                None => return Ok(()),
            }
        }
    }
}

/// Writes journaled repeats in order, on a task of its own (see the module's comment).
pub(crate) struct Repeats {
    tx: std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedSender<RepeatEntry>>>,
}

impl Repeats {
    /// The journal and the task that writes it; the task ends once [`Repeats::close`]
    /// was called and every entry is written.
    pub(crate) fn start(app_pool: Arc<super::pool::Pool>) -> (Self, tokio::task::JoinHandle<()>) {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<RepeatEntry>();
        let task = tokio::spawn(async move {
            while let Some(e) = rx.recv().await {
                let mut attempt = 0;
                loop {
                    let entry = RepeatEntry {
                        scope: e.scope.clone(),
                        decision: e.decision,
                        fingerprint: e.fingerprint.clone(),
                        run_id: e.run_id,
                        at: e.at,
                    };
                    let res = app_pool
                        .run(move |l| {
                            async move {
                                l.record_http_repeat(
                                    &entry.scope,
                                    entry.decision,
                                    &entry.fingerprint,
                                    entry.run_id,
                                    entry.at,
                                )
                                .await
                            }
                            .boxed()
                        })
                        .await;
                    match res {
                        Ok(Ok(())) => break,
                        Ok(Err(err)) | Err(err) => {
                            attempt += 1;
                            if attempt >= 5 {
                                tracing::error!(error = %err, key = %e.scope.key, decision = e.decision.as_str(), "a repeat could not be journaled");
                                break;
                            }
                            tokio::time::sleep(std::time::Duration::from_millis(200 * attempt))
                                .await;
                        }
                    }
                }
            }
        });
        (
            Repeats {
                tx: std::sync::Mutex::new(Some(tx)),
            },
            task,
        )
    }

    pub(crate) fn send(&self, e: RepeatEntry) {
        if let Ok(guard) = self.tx.lock()
            && let Some(tx) = guard.as_ref()
        {
            let _ = tx.send(e);
        }
    }

    /// No more entries: the task writes what it has and ends.
    pub(crate) fn close(&self) {
        if let Ok(mut guard) = self.tx.lock() {
            guard.take();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_repeat_waits_longer_the_longer_the_first_has_run() {
        assert_eq!(retry_after(Duration::from_millis(300)), 1);
        assert_eq!(retry_after(Duration::from_secs(10)), 5);
        assert_eq!(retry_after(Duration::from_secs(600)), 30);
    }

    fn key_of(lines: &[&str]) -> Result<String, &'static str> {
        let mut h = HeaderMap::new();
        for v in lines {
            h.append("idempotency-key", HeaderValue::from_str(v).unwrap());
        }
        idempotency_key(&h).map_err(|p| p.code)
    }

    #[test]
    fn a_key_is_an_sf_string_or_a_bare_value() {
        let key = |v: &str| key_of(&[v]);
        assert_eq!(key("abc-1"), Ok("abc-1".to_string()));
        assert_eq!(key("\"abc-1\""), Ok("abc-1".to_string()));
        // RFC 8941 §3.3.3: a space is a character of a String; the escapes are read.
        assert_eq!(key("\"a b\""), Ok("a b".to_string()));
        assert_eq!(key(r#""a\"b\\c""#), Ok(r#"a"b\c"#.to_string()));
        // Parameters are not part of the key.
        assert_eq!(key("\"abc\";v=1;x"), Ok("abc".to_string()));
        for bad in [
            "a b",
            "a\tb",
            "\"\"",
            "\"abc",
            "\"a\\qb\"",
            "\"abc\" junk",
            "abc;v=1",
            "\"a\", \"b\"",
        ] {
            assert_eq!(key(bad), Err("idempotency_key_invalid"), "{bad}");
        }
        assert_eq!(key(&"k".repeat(255)).map(|k| k.len()), Ok(255));
        assert_eq!(key(&"k".repeat(256)), Err("idempotency_key_invalid"));
        assert_eq!(key_of(&[]), Err("idempotency_key_missing"));
    }

    /// RFC 9110 §5.3: two field lines mean their comma-joined value, a list of two keys.
    #[test]
    fn two_key_lines_are_one_list_and_refused() {
        assert_eq!(key_of(&["abc", "abc"]), Err("idempotency_key_invalid"));
        assert_eq!(
            key_of(&["\"abc\"", "\"abc\""]),
            Err("idempotency_key_invalid")
        );
    }
}
