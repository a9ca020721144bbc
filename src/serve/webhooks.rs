//! Webhooks both ways (docs/principles.md §12), signed as Standard Webhooks sign them:
//! `webhook-signature: v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`,
//! the key being the secret's bytes (a `whsec_` secret is base64 after its prefix).
//!
//! In: `POST /v1/webhooks/{provider}`. The signature and a timestamp within 5 minutes are
//! checked (`401` otherwise); the body's `type` is the event type. The raw event is
//! inserted first (`Ledger::receive_event`) and answered at once: `202` for a new event,
//! `200` for a repeat (journaled). A worker applies new events in the order they came; a
//! sweeper finishes events inserted but left unapplied for longer than `--sweep-after`
//! (the process died between the insert and the apply).
//!
//! Out: the outbox (`OutboxHook`, written in each run's own transaction) is
//! delivered by a task here, at least once, each message under its stable `webhook-id`,
//! retried with backoff until the endpoint answers 2xx.

use super::problem::Problem;
use super::{App, Shared};
use crate::serve::store::{OutboxMessage, Received};
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use chrono::Utc;
use futures_util::FutureExt;
use hmac::{Hmac, Mac};
use serde_json::json;
use sha2::Sha256;
use std::time::Duration;

/// How far a delivery's timestamp may be from our clock (Standard Webhooks: 5 minutes).
pub const TIMESTAMP_TOLERANCE_SECS: i64 = 300;
/// The challenge of a webhook's `401` (RFC 9110 §11.6.1).
pub const WEBHOOK_CHALLENGE: &str = "StandardWebhooks realm=\"clearledger\", headers=\"webhook-id webhook-timestamp webhook-signature\"";
/// The largest event body accepted.
pub const EVENT_MAX_BYTES: usize = 1024 * 1024;

/// The HMAC key of a secret: a `whsec_` secret's base64, else the secret's bytes.
fn key_of(secret: &str) -> Vec<u8> {
    secret
        .strip_prefix("whsec_")
        .and_then(|b| B64.decode(b).ok())
        .unwrap_or_else(|| secret.as_bytes().to_vec())
}

fn mac(secret: &str, id: &str, timestamp: &str, body: &[u8]) -> Hmac<Sha256> {
    // An HMAC takes a key of any length.
    let mut m = Hmac::<Sha256>::new_from_slice(&key_of(secret)).expect("HMAC takes any key");
    m.update(id.as_bytes());
    m.update(b".");
    m.update(timestamp.as_bytes());
    m.update(b".");
    m.update(body);
    m
}

/// `v1,<base64>`: the signature of one delivery.
pub fn sign(secret: &str, id: &str, timestamp: &str, body: &[u8]) -> String {
    format!(
        "v1,{}",
        B64.encode(mac(secret, id, timestamp, body).finalize().into_bytes())
    )
}

/// Whether any `v1,` signature of the (space-separated) header is the delivery's,
/// compared in constant time.
pub fn verify(secret: &str, id: &str, timestamp: &str, body: &[u8], header: &str) -> bool {
    header.split(' ').any(|s| {
        s.strip_prefix("v1,")
            .and_then(|b| B64.decode(b).ok())
            .is_some_and(|sig| mac(secret, id, timestamp, body).verify_slice(&sig).is_ok())
    })
}

fn unauthorized(code: &'static str, detail: String) -> Response {
    Problem::new(
        StatusCode::UNAUTHORIZED,
        code,
        "The webhook's signature was not accepted",
        detail,
    )
    // RFC 9110 §15.5.2: a 401 names its scheme. Standard Webhooks registers none; this
    // one says which headers carry the signature.
    .header(header::WWW_AUTHENTICATE, WEBHOOK_CHALLENGE)
    .into_response()
}

/// `POST /v1/webhooks/{provider}`: the signature checked, the event inserted first and
/// answered at once (`202` new, `200` a repeat).
pub(crate) async fn receive(
    State(app): State<Shared>,
    Path(provider): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(e) => {
            return Problem::new(
                e.status(),
                "webhook_body_unreadable",
                "The webhook's body could not be read",
                format!("{e} (at most {EVENT_MAX_BYTES} bytes)"),
            )
            .into_response();
        }
    };
    let p = provider.clone();
    let known = match app
        .readers
        .run(move |l| async move { l.webhook_provider(&p).await }.boxed())
        .await
    {
        Ok(Ok(k)) => k,
        Ok(Err(e)) | Err(e) => return Problem::ledger(&e).into_response(),
    };
    let Some(known) = known else {
        app.metrics.webhook("refused");
        return Problem::not_found(format!("no webhook provider {provider:?}")).into_response();
    };
    let id = match check_signature(&known.secret, &provider, &headers, &body) {
        Ok(id) => id,
        Err((code, detail)) => {
            app.metrics.webhook("refused");
            return unauthorized(code, detail);
        }
    };
    let event = serde_json::from_slice::<serde_json::Value>(&body).ok();
    if let Some(refused) = event.as_ref().and_then(super::text::refuse_nul_json) {
        app.metrics.webhook("refused");
        return refused;
    }
    let event_type = event.and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_string));
    let Some(event_type) = event_type else {
        app.metrics.webhook("refused");
        return Problem::bad_request(
            "webhook_body_invalid",
            "the body must be a JSON object with a string `type` (e.g. payment.settled)",
        )
        .into_response();
    };
    let (tenant, body_v) = (known.tenant.clone(), body.to_vec());
    let (prov, ty) = (provider.clone(), event_type.clone());
    let received = app
        .pool
        .run(move |l| {
            async move {
                l.receive_event(&tenant, &prov, &id, &ty, &body_v, Utc::now())
                    .await
            }
            .boxed()
        })
        .await;
    match received {
        Ok(Ok(r)) => received_response(&app, &known.tenant, (&provider, &event_type), r),
        Ok(Err(e)) | Err(e) => Problem::ledger(&e).into_response(),
    }
}

/// The delivery's `webhook-id` once its headers, its timestamp and its signature are
/// accepted; else the code and detail of the 401.
fn check_signature(
    secret: &str,
    provider: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<String, (&'static str, String)> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let (Some(id), Some(timestamp), Some(signature)) = (
        header("webhook-id"),
        header("webhook-timestamp"),
        header("webhook-signature"),
    ) else {
        return Err((
            "webhook_headers_missing",
            "webhook-id, webhook-timestamp and webhook-signature are required".into(),
        ));
    };
    let now = Utc::now();
    match timestamp.parse::<i64>() {
        Ok(t) if now.timestamp().abs_diff(t) <= TIMESTAMP_TOLERANCE_SECS as u64 => {}
        _ => {
            return Err((
                "webhook_timestamp",
                format!(
                    "webhook-timestamp {timestamp:?} is not within {TIMESTAMP_TOLERANCE_SECS} s of \
                     the server's clock ({})",
                    now.timestamp()
                ),
            ));
        }
    }
    if !verify(secret, id, timestamp, body, signature) {
        return Err((
            "webhook_signature",
            format!("no v1 signature of {provider:?}'s secret matches this delivery"),
        ));
    }
    Ok(id.to_string())
}

/// The answer to an event inserted: 202 when new (the worker is woken), 200 for a repeat.
fn received_response(
    app: &App,
    tenant: &str,
    (provider, event_type): (&str, &str),
    r: Received,
) -> Response {
    match r {
        Received::New { event_no } => {
            app.metrics.webhook("new");
            let _ = app.events.send((tenant.to_string(), event_no));
            (
                StatusCode::ACCEPTED,
                Json(json!({"status": "accepted", "event_no": event_no, "type": event_type})),
            )
                .into_response()
        }
        Received::Repeat {
            event_no,
            same_payload,
        } => {
            app.metrics.webhook("repeat");
            if !same_payload {
                tracing::warn!(
                    provider,
                    event_no,
                    "a repeated webhook event came with another body; the first is kept"
                );
            }
            (
                StatusCode::OK,
                Json(
                    json!({"status": "repeat", "event_no": event_no, "type": event_type,
                            "same_payload": same_payload}),
                ),
            )
                .into_response()
        }
    }
}

/// Applies one event; logs what it did. A failure (the database busy or gone) is tried
/// again a few times before the next event, so that events of one posting keep their
/// order; after that the sweeper retries it.
async fn apply(app: &App, tenant: &str, event_no: i64) {
    for attempt in 1..=APPLY_ATTEMPTS {
        let tenant = tenant.to_string();
        let res = app
            .pool
            .run(move |l| async move { l.apply_event(&tenant, event_no, Utc::now()).await }.boxed())
            .await;
        match res {
            Ok(Ok(Some(a))) => {
                tracing::info!(event_no, outcome = a.outcome, detail = %a.detail, "webhook event applied");
                return;
            }
            Ok(Ok(None)) => return,
            Ok(Err(e)) | Err(e) => {
                tracing::warn!(event_no, attempt, error = %e, "applying a webhook event failed");
                tokio::time::sleep(Duration::from_millis(200 * attempt)).await;
            }
        }
    }
    tracing::warn!(event_no, "the event is left to the sweeper");
}

/// Tries of one event before the worker goes on to the next.
const APPLY_ATTEMPTS: u64 = 3;

/// Whether a secret is usable: a `whsec_` secret must be base64 after its prefix.
pub fn secret_ok(secret: &str) -> bool {
    match secret.strip_prefix("whsec_") {
        Some(b) => B64.decode(b).is_ok_and(|k| !k.is_empty()),
        None => !secret.is_empty(),
    }
}

/// The worker: applies new events in the order they were received.
pub(crate) async fn worker(
    app: Shared,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<(String, i64)>,
) {
    while let Some((tenant, event_no)) = rx.recv().await {
        apply(&app, &tenant, event_no).await;
    }
}

/// The sweeper: every `interval`, the events older than `after` still unapplied.
pub(crate) async fn sweeper(app: Shared, after: Duration, interval: Duration) {
    let after = chrono::Duration::from_std(after).unwrap_or(chrono::Duration::seconds(30));
    loop {
        let cut = Utc::now() - after;
        let due = app
            .readers
            .run(move |l| async move { l.unprocessed_events(cut, Utc::now(), 1000).await }.boxed())
            .await;
        match due {
            Ok(Ok(events)) => {
                for (tenant, event_no) in events {
                    tracing::info!(event_no, "sweeper: an event inserted but not applied");
                    apply(&app, &tenant, event_no).await;
                }
            }
            Ok(Err(e)) | Err(e) => tracing::warn!(error = %e, "sweeper: reading the inbox failed"),
        }
        tokio::time::sleep(interval).await;
    }
}

/// Delivers one message to its tenant's endpoint.
async fn deliver(app: &App, client: &reqwest::Client, m: &OutboxMessage) -> Result<(), String> {
    let tenant = m.tenant.clone();
    let endpoint = app
        .readers
        .run(move |l| async move { l.notify_endpoint(&tenant).await }.boxed())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?
        .ok_or("the tenant has no notification endpoint any more")?;
    let ts = Utc::now().timestamp().to_string();
    let r = client
        .post(&endpoint.url)
        .header("content-type", "application/json")
        .header("webhook-id", &m.webhook_id)
        .header("webhook-timestamp", &ts)
        .header(
            "webhook-signature",
            sign(&endpoint.secret, &m.webhook_id, &ts, &m.payload),
        )
        .body(m.payload.clone())
        .send()
        .await
        .map_err(|e| format!("POST {}: {e}", endpoint.url))?;
    if r.status().is_success() {
        Ok(())
    } else {
        Err(format!("POST {}: answered {}", endpoint.url, r.status()))
    }
}

/// The outbox's delivery loop.
pub(crate) async fn outbox(app: Shared, interval: Duration) {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_default();
    // A claimed message is another worker's for this long.
    let lease = chrono::Duration::seconds(60);
    loop {
        let claimed = app
            .pool
            // One at a time: each delivery starts well within its own lease.
            .run(move |l| async move { l.claim_outbox(Utc::now(), lease, 1).await }.boxed())
            .await;
        let messages = match claimed {
            Ok(Ok(m)) => m,
            Ok(Err(e)) | Err(e) => {
                tracing::warn!(error = %e, "outbox: claiming messages failed");
                Vec::new()
            }
        };
        let idle = messages.is_empty();
        for m in messages {
            let res = deliver(&app, &client, &m).await;
            let outcome = match &res {
                Ok(()) => Ok(Utc::now()),
                Err(e) => {
                    // 1 s, 2 s, 4 s … up to an hour.
                    let backoff = 1i64 << m.attempts.clamp(1, 12).saturating_sub(1);
                    let retry = Utc::now() + chrono::Duration::seconds(backoff.min(3600));
                    tracing::warn!(webhook_id = %m.webhook_id, attempt = m.attempts, error = %e, "outbox: delivery failed; retried later");
                    Err((e.clone(), retry))
                }
            };
            if res.is_ok() {
                app.metrics.outbox_delivered();
                tracing::info!(webhook_id = %m.webhook_id, "outbox: delivered");
            }
            let (tenant, id) = (m.tenant.clone(), m.message_id);
            let _ = app
                .pool
                .run(move |l| async move { l.outbox_result(&tenant, id, outcome).await }.boxed())
                .await;
        }
        if idle {
            tokio::time::sleep(interval).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification (its test vector).
    #[test]
    fn signatures_are_standard_webhooks_signatures() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let ts = "1614265330";
        let body = br#"{"test": 2432232314}"#;
        let sig = sign(secret, id, ts, body);
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert!(verify(secret, id, ts, body, &format!("v1,bm90IGl0 {sig}")));
        assert!(!verify(secret, id, ts, b"{}", &sig));
        assert!(!verify(secret, id, "1614265331", body, &sig));
        assert!(!verify("whsec_b3RoZXI=", id, ts, body, &sig));
    }
}
