//! The HTTP service's targets: its header parsers alone, and whole requests through the
//! real router over a real SQLite ledger (uploads raw and multipart, webhook deliveries,
//! reads), in process.

use crate::serve::{self, ServeConfig, Shared, files, webhooks};
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, Request, header};
use std::sync::OnceLock;
use std::time::Duration;

/// The `Idempotency-Key` parser on any field lines, and the Standard Webhooks signature
/// check on any header: an accepted key is 1 to 255 visible characters; a signature made
/// for a delivery verifies, and the same with one character changed does not.
pub fn http_headers(data: &[u8]) {
    let mut headers = HeaderMap::new();
    for line in data.split(|b| *b == b'\n').take(4) {
        if let Ok(v) = HeaderValue::from_bytes(line) {
            headers.append("idempotency-key", v);
        }
    }
    if let Ok(key) = files::idempotency_key(&headers) {
        assert!(
            (1..=files::IDEMPOTENCY_KEY_MAX).contains(&key.len()),
            "{key:?}"
        );
    }
    let text = String::from_utf8_lossy(data);
    let mut it = text.splitn(4, '\n');
    let (id, ts, sig, body) = (
        it.next().unwrap_or(""),
        it.next().unwrap_or(""),
        it.next().unwrap_or(""),
        it.next().unwrap_or(""),
    );
    let secret = "whsec_fuzz";
    let _ = webhooks::verify(secret, id, ts, body.as_bytes(), sig);
    let signed = webhooks::sign(secret, id, ts, body.as_bytes());
    assert!(webhooks::verify(secret, id, ts, body.as_bytes(), &signed));
    let forged = format!(
        "{}{}",
        &signed[..signed.len() - 2],
        if signed.ends_with("A=") { "B=" } else { "A=" }
    );
    assert!(
        !webhooks::verify(secret, id, ts, body.as_bytes(), &forged),
        "{forged}"
    );
}

/// A server on a SQLite ledger of its own (a temporary directory), with one tenant, its
/// API key and a webhook provider: built once per process.
struct Server {
    runtime: tokio::runtime::Runtime,
    app: Shared,
    key: String,
    _dir: tempfile::TempDir,
}

const PROVIDER: &str = "bank";
const SECRET: &str = "whsec_fuzz";

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let url = format!("sqlite://{}", dir.path().join("fuzz.db").display());
        let (app, key) = runtime.block_on(async {
            let opts = crate::ledger::DbOptions {
                lock_timeout: Duration::from_secs(30),
                statement_timeout: Duration::from_secs(30),
                connect_timeout: Duration::from_secs(10),
            };
            let mut l = crate::ledger::open(&url, &opts).await.expect("the ledger");
            let now = chrono::Utc::now();
            let key = l.create_api_key("default", None, now).await.expect("a key");
            l.add_webhook_provider("default", PROVIDER, SECRET, now)
                .await
                .expect("a provider");
            let started = serve::start(config(url, opts)).await.expect("the server");
            (started.app, key.key)
        });
        Server {
            runtime,
            app,
            key,
            _dir: dir,
        }
    })
}

fn config(db_url: String, db: crate::ledger::DbOptions) -> ServeConfig {
    ServeConfig {
        db_url,
        db,
        connections: 2,
        idempotency_window: Duration::from_secs(3600),
        max_upload_bytes: 1 << 20,
        request_timeout: Duration::from_secs(5),
        header_timeout: Duration::from_secs(5),
        body_deadline: Duration::from_secs(5),
        spool_dir: None,
        sweep_after: Duration::from_secs(60),
        sweep_interval: Duration::from_secs(10),
        outbox_interval: Duration::from_secs(1),
        console_session: Duration::from_secs(3600),
    }
}

/// Any request through the router: the first byte chooses its shape (a raw upload, a
/// multipart upload with the boundary `B`, a webhook delivery, a read), the next one the
/// `Idempotency-Key` (a small space, so that repeats and reuses happen), the rest is the
/// body, or the header lines and body of a delivery, or the path of a read. Whatever
/// comes in, the answer is never a 5xx (the ledger is a healthy local file), and every
/// 4xx is a problem+json document with its own status.
pub fn http_request(data: &[u8]) {
    let (shape, key, rest) = match data {
        [s, k, rest @ ..] => (*s, *k, rest),
        _ => return,
    };
    let s = server();
    let req = request(s, shape, key, rest);
    let Some(req) = req else { return };
    let router = serve::router(s.app.clone(), true);
    let (status, headers, body) = s.runtime.block_on(async move {
        use tower::ServiceExt;
        let res = router.oneshot(req).await.expect("the router is infallible");
        let (parts, body) = res.into_parts();
        let body = axum::body::to_bytes(body, 1 << 22).await.expect("a body");
        (parts.status, parts.headers, body)
    });
    assert!(
        !status.is_server_error(),
        "{status}: {}",
        String::from_utf8_lossy(&body)
    );
    if status.is_client_error() {
        assert_eq!(
            headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok()),
            Some("application/problem+json"),
            "{status}"
        );
        let doc: serde_json::Value = serde_json::from_slice(&body).expect("a JSON problem");
        assert_eq!(doc["status"], status.as_u16(), "{doc}");
    }
}

fn request(s: &Server, shape: u8, key: u8, rest: &[u8]) -> Option<Request<Body>> {
    let auth = format!("Bearer {}", s.key);
    let b = Request::builder().header(header::AUTHORIZATION, auth);
    let req = match shape % 4 {
        0 => b
            .method(Method::POST)
            .uri("/v1/files")
            .header("idempotency-key", format!("k{key}"))
            .body(Body::from(rest.to_vec())),
        1 => b
            .method(Method::POST)
            .uri("/v1/files")
            .header("idempotency-key", format!("m{key}"))
            .header(header::CONTENT_TYPE, "multipart/form-data; boundary=B")
            .body(Body::from(rest.to_vec())),
        2 => return delivery(rest),
        _ => {
            let path = std::str::from_utf8(rest).ok()?;
            b.method(Method::GET)
                .uri(format!("/v1/{path}"))
                .body(Body::empty())
        }
    };
    req.ok()
}

/// A webhook delivery: header lines (`name: value`) up to an empty line, then the body;
/// signed when no `webhook-signature` line was given, so that the event reaches the ledger.
fn delivery(rest: &[u8]) -> Option<Request<Body>> {
    let split = rest.windows(2).position(|w| w == b"\n\n");
    let (head, body) = match split {
        Some(i) => (&rest[..i], &rest[i + 2..]),
        None => (&[][..], rest),
    };
    let mut b = Request::builder()
        .method(Method::POST)
        .uri(format!("/v1/webhooks/{PROVIDER}"));
    let (mut id, mut ts, mut signed) = (String::new(), String::new(), false);
    for line in head.split(|c| *c == b'\n') {
        let text = std::str::from_utf8(line).ok()?;
        let (name, value) = text.split_once(':')?;
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "webhook-id" => id = value.to_string(),
            "webhook-timestamp" => ts = value.to_string(),
            "webhook-signature" => signed = true,
            _ => {}
        }
        b = b.header(name.trim(), value);
    }
    if !signed {
        if ts.is_empty() {
            ts = chrono::Utc::now().timestamp().to_string();
            b = b.header("webhook-timestamp", ts.as_str());
        }
        if id.is_empty() {
            id = format!(
                "evt_{}",
                hex::encode(<sha2::Sha256 as sha2::Digest>::digest(body))
            );
            b = b.header("webhook-id", id.as_str());
        }
        b = b.header("webhook-signature", webhooks::sign(SECRET, &id, &ts, body));
    }
    b.body(Body::from(body.to_vec())).ok()
}
