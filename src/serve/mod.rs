//! `clearledger serve`: the ledger over HTTP, axum on tokio.
//!
//! The data path is the CLI's: an upload is spooled to a temporary file and goes through
//! `ingest::ingest_file` like any file, into the same ledger core; the HTTP layer
//! adds only who is asking (an API key, one tenant), the `Idempotency-Key` contract
//! (`files.rs`), a read for every write (`reads.rs`), and metrics (`metrics.rs`).
//!
//! - `auth`: `Authorization: Bearer KEY`; the tenant comes from the key. Another tenant's
//!   run, posting or held record is `404`, never `403` (nothing says it exists).
//! - Errors are `application/problem+json` (`problem.rs`).
//! - Ledger work runs on blocking threads through a small pool of connections (`pool.rs`).
//! - SIGTERM or SIGINT: the listener stops accepting, requests in flight finish (a run in
//!   flight commits or rolls back whole), then the process exits 0.

pub(crate) mod files;
pub(crate) mod listen;
pub(crate) mod metrics;
pub(crate) mod openapi;
pub(crate) mod pool;
pub(crate) mod problem;
pub(crate) mod problem_types;
pub(crate) mod reads;
pub(crate) mod store;
pub(crate) mod text;
pub mod webhooks;

use crate::ledger::{DbOptions, LedgerError};
use crate::serve::store::{ApiKey, IdemScope};
use axum::Router;
use axum::extract::{FromRequestParts, State};
use axum::http::{StatusCode, header, request::Parts};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::FutureExt;
use problem::Problem;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the server runs (`clearledger serve`'s flags).
#[derive(Debug, Clone)]
pub(crate) struct ServeConfig {
    pub(crate) db_url: String,
    pub(crate) db: DbOptions,
    /// Ledger connections open at once.
    pub(crate) connections: usize,
    /// How long a stored response answers a repeat of its `Idempotency-Key`.
    pub(crate) idempotency_window: Duration,
    /// The largest upload accepted, in bytes (`413` beyond).
    pub(crate) max_upload_bytes: u64,
    /// The longest pause between two pieces of an upload's body, and the time a read
    /// request may take (`408` beyond).
    pub(crate) request_timeout: Duration,
    /// The time a client has to send a request's header fields (the connection is closed
    /// beyond).
    pub(crate) header_timeout: Duration,
    /// The time an upload's whole body may take to arrive, however steadily it comes
    /// (`408` beyond).
    pub(crate) body_deadline: Duration,
    /// Where uploads are spooled while they are ingested (the system's temporary
    /// directory when `None`).
    pub(crate) spool_dir: Option<std::path::PathBuf>,
    /// A webhook event inserted but not applied for this long is applied by the sweeper.
    pub(crate) sweep_after: Duration,
    /// How often the sweeper looks.
    pub(crate) sweep_interval: Duration,
    /// How often the outbox is looked at for messages due.
    pub(crate) outbox_interval: Duration,
    /// How long a console session lasts from its sign-in.
    pub(crate) console_session: Duration,
}

/// What every handler shares.
pub(crate) struct App {
    pub(crate) config: ServeConfig,
    /// The connections that write (uploads, webhook events, journals, the outbox).
    pub(crate) pool: Arc<pool::Pool>,
    /// The connections that only read (the caller's key, every GET, `/metrics`): on SQLite
    /// a reader never waits for the write lock, so a long ingest holding it, with writers
    /// queued behind it, never keeps a read or a 409 waiting for a connection.
    pub(crate) readers: Arc<pool::Pool>,
    pub(crate) metrics: metrics::Metrics,
    /// The journal of repeats over HTTP, written by a task of its own.
    pub(crate) repeats: files::Repeats,
    /// New webhook events, for the worker that applies them in order.
    pub(crate) events: tokio::sync::mpsc::UnboundedSender<(String, i64)>,
    /// The `Idempotency-Key`s whose first request is running in this process, with when
    /// it began: a repeat is `409`, its body dropped. Across processes on PostgreSQL, a
    /// session advisory lock says the same (`Ledger::try_lock_key`).
    pub(crate) in_flight: Mutex<HashMap<IdemScope, std::time::Instant>>,
}

pub(crate) type Shared = Arc<App>;

/// Every route of `router` (the OpenAPI document is checked against this list).
pub const ROUTES: &[&str] = &[
    "/v1/files",
    "/v1/webhooks/{provider}",
    "/v1/runs",
    "/v1/runs/{id}",
    "/v1/runs/{id}/records",
    "/v1/postings",
    "/v1/postings/{id}/events",
    "/v1/held",
    "/v1/statements",
    "/v1/reconciliations/{id}",
    "/v1/openapi.json",
    "/metrics",
    "/healthz",
    "/problems/{code}",
];

/// The router, with every route and layer; `/metrics` only when `with_metrics` (else it
/// has a listener of its own: `serve --metrics-listen`).
pub(crate) fn router(app: Shared, with_metrics: bool) -> Router {
    let timeout = app.config.request_timeout;
    let reads = Router::new()
        .route("/v1/runs", get(reads::runs))
        .route("/v1/runs/{id}", get(reads::run))
        .route("/v1/runs/{id}/records", get(reads::records))
        .route("/v1/postings", get(reads::postings))
        .route("/v1/postings/{id}/events", get(reads::posting_events))
        .route("/v1/held", get(reads::held))
        .route("/v1/statements", get(reads::statements))
        .route("/v1/reconciliations/{id}", get(reads::reconciliation))
        .route(
            "/v1/openapi.json",
            get(move || reads::openapi(with_metrics)),
        )
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/problems/{code}", get(problem_types::page));
    let reads = if with_metrics {
        reads.route("/metrics", get(metrics_text))
    } else {
        reads
    };
    let reads = reads.layer(tower_http::timeout::TimeoutLayer::with_status_code(
        StatusCode::REQUEST_TIMEOUT,
        timeout,
    ));
    Router::new()
        // An upload's time is its ingest's: no overall deadline (a pause in its body, and
        // the whole body's arrival, are bounded instead, `files.rs`).
        // Its own limit (`--max-upload-bytes`) is counted as the body is spooled; axum's
        // default 2 MiB (which multipart bodies are held to) does not apply.
        .route(
            "/v1/files",
            post(files::post_file).layer(axum::extract::DefaultBodyLimit::disable()),
        )
        .route(
            "/v1/webhooks/{provider}",
            post(webhooks::receive)
                .layer::<_, std::convert::Infallible>(axum::extract::DefaultBodyLimit::max(
                    webhooks::EVENT_MAX_BYTES,
                ))
                // Its body within the read timeout; on SQLite its insert may also wait for
                // the write lock a long ingest holds, up to --lock-timeout.
                .layer::<_, std::convert::Infallible>(
                    tower_http::timeout::TimeoutLayer::with_status_code(
                        StatusCode::REQUEST_TIMEOUT,
                        timeout + app.config.db.lock_timeout,
                    ),
                ),
        )
        .merge(reads)
        .layer(axum::middleware::map_response(problem::as_problem))
        // The console answers in HTML: not under the API's problem+json.
        .merge(crate::console::router())
        .fallback(|uri: axum::http::Uri| async move {
            if uri.path().starts_with("/console/") {
                return crate::console::not_found().await;
            }
            Problem::not_found("no such route; the routes are listed at /v1/openapi.json")
                .into_response()
        })
        .layer(axum::middleware::from_fn(text::refuse_nul))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(app)
}

/// Serves until `shutdown` resolves, then lets the requests in flight finish.
pub(crate) async fn serve(
    config: ServeConfig,
    listener: tokio::net::TcpListener,
    metrics_listener: Option<tokio::net::TcpListener>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), LedgerError> {
    let Started {
        app,
        tasks,
        journal,
    } = start(config).await?;
    let metrics_server = metrics_listener.map(|l| {
        let r = Router::new()
            .route("/metrics", get(metrics_text))
            .layer(axum::middleware::map_response(problem::as_problem))
            .with_state(app.clone());
        let header_timeout = app.config.header_timeout;
        tokio::spawn(listen::serve(l, r, header_timeout, std::future::pending()))
    });
    let routes = router(app.clone(), metrics_server.is_none());
    listen::serve(listener, routes, app.config.header_timeout, shutdown).await;
    if let Some(m) = metrics_server {
        m.abort();
    }
    // The background tasks stop between two pieces of work: an event being applied or a
    // message being delivered is finished on its blocking thread, whole; what is left is
    // found again by the next server (the sweeper, the outbox's due messages).
    for t in &tasks {
        t.abort();
    }
    app.repeats.close();
    let _ = journal.await;
    app.pool.close().await;
    app.readers.close().await;
    Ok(())
}

/// The state every handler shares, and the tasks serving it.
pub(crate) struct Started {
    pub(crate) app: Shared,
    /// The purge, the webhook worker, its sweeper, the outbox.
    pub(crate) tasks: [tokio::task::JoinHandle<()>; 4],
    /// The journal of repeats' writer, which ends once `app.repeats` is closed.
    pub(crate) journal: tokio::task::JoinHandle<()>,
}

/// Opens the connections and starts the background tasks (on the runtime it is called in).
pub(crate) async fn start(config: ServeConfig) -> Result<Started, LedgerError> {
    let pool = Arc::new(pool::Pool::open(&config.db_url, config.db, config.connections).await?);
    let readers = Arc::new(pool::Pool::open(&config.db_url, config.db, config.connections).await?);
    let (repeats, journal) = files::Repeats::start(pool.clone());
    let (events, events_rx) = tokio::sync::mpsc::unbounded_channel();
    let app = Arc::new(App {
        config,
        pool,
        readers,
        metrics: metrics::Metrics::default(),
        repeats,
        events,
        in_flight: Mutex::new(HashMap::new()),
    });
    let c = &app.config;
    let tasks = [
        tokio::spawn(purge_expired(app.clone())),
        tokio::spawn(webhooks::worker(app.clone(), events_rx)),
        tokio::spawn(webhooks::sweeper(
            app.clone(),
            c.sweep_after,
            c.sweep_interval,
        )),
        tokio::spawn(webhooks::outbox(app.clone(), c.outbox_interval)),
    ];
    Ok(Started {
        app,
        tasks,
        journal,
    })
}

/// Deletes expired idempotency rows and console sessions, at start and then hourly (an
/// expired row is also replaced by the next request with its key, and an expired session
/// refused, whatever this does).
async fn purge_expired(app: Shared) {
    loop {
        let res = app
            .pool
            .run(|l| l.purge_expired_keys(chrono::Utc::now()).boxed())
            .await;
        match res {
            Ok(Ok(n)) if n > 0 => tracing::info!(rows = n, "expired idempotency keys deleted"),
            Ok(Ok(_)) => {}
            Ok(Err(e)) | Err(e) => {
                tracing::warn!(error = %e, "purging expired idempotency keys failed")
            }
        }
        let res = app
            .pool
            .run(|l| l.purge_expired_sessions(chrono::Utc::now()).boxed())
            .await;
        match res {
            Ok(Ok(n)) if n > 0 => tracing::info!(rows = n, "expired console sessions deleted"),
            Ok(Ok(_)) => {}
            Ok(Err(e)) | Err(e) => {
                tracing::warn!(error = %e, "purging expired console sessions failed")
            }
        }
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}

/// Resolves on SIGTERM or SIGINT.
pub(crate) async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        // No signal handling: run until killed.
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM: finishing the requests in flight"),
        _ = int.recv() => tracing::info!("SIGINT: finishing the requests in flight"),
    }
}

/// The caller, from `Authorization: Bearer KEY`.
pub(crate) struct Caller(pub(crate) ApiKey);

impl FromRequestParts<Shared> for Caller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &Shared) -> Result<Self, Self::Rejection> {
        let unauthorized = |detail: &str| {
            Problem::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "Unauthorized",
                detail.to_string(),
            )
            .header(header::WWW_AUTHENTICATE, "Bearer")
            .into_response()
        };
        let Some(value) = parts.headers.get(header::AUTHORIZATION) else {
            return Err(unauthorized(
                "an Authorization: Bearer KEY header is required (`clearledger apikey create`)",
            ));
        };
        let Some(key) = value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(|k| k.trim().to_string())
        else {
            return Err(unauthorized(
                "the Authorization header must be `Bearer KEY`",
            ));
        };
        match app
            .readers
            .run(move |l| async move { l.authenticate(&key).await }.boxed())
            .await
        {
            Ok(Ok(Some(k))) => Ok(Caller(k)),
            Ok(Ok(None)) => Err(unauthorized("unknown or revoked API key")),
            Ok(Err(e)) | Err(e) => Err(Problem::ledger(&e).into_response()),
        }
    }
}

async fn metrics_text(State(app): State<Shared>, headers: axum::http::HeaderMap) -> Response {
    let format =
        metrics::Exposition::negotiate(headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()));
    match app.readers.run(|l| l.metric_totals().boxed()).await {
        Ok(Ok(totals)) => {
            let open = app.metrics.render(&totals);
            let body = match format {
                metrics::Exposition::OpenMetrics => open,
                metrics::Exposition::Text004 => metrics::to_text_004(&open),
            };
            (
                [
                    (header::CONTENT_TYPE, format.content_type()),
                    (header::VARY, "Accept"),
                ],
                body,
            )
                .into_response()
        }
        Ok(Err(e)) | Err(e) => Problem::ledger(&e).into_response(),
    }
}
