//! `/console/upload`: a file in through the API's own upload path (`serve::files`), under an
//! `Idempotency-Key` drawn when the form is rendered.
//!
//! The key and the form's CSRF token ride in the form's `action` query, not in its body:
//! both are known before a byte of the file is read, so the upload is refused or taken as
//! a repeat exactly as the API refuses or takes it, and the file's bytes go to the same
//! spool unchanged. (The token in a URL is harmless here: it is worth nothing without the
//! session cookie, and `Referrer-Policy: same-origin` keeps it from other sites.) A double
//! click, a reload of the answer, or the form sent again from the browser's history all
//! carry the same key, so the first answer is replayed instead of a second run made; the
//! form page may be kept in the browser's history cache for that reason.

use super::page::{self, Chrome};
use super::session::Operator;
use crate::serve::Shared;
use crate::serve::files::{self, FileQuery};
use crate::serve::store::IdemScope;
use askama::Template;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

/// The route console uploads' keys are scoped to (the API's are `/v1/files`'s).
pub(crate) const ROUTE: &str = "/console/upload";

#[derive(Template)]
#[template(path = "upload.html")]
struct UploadPage {
    chrome: Option<Chrome>,
    action: String,
    key: String,
}

pub(crate) async fn form(op: Operator) -> Response {
    let Ok(key) = super::session::new_token() else {
        return page::refused(
            StatusCode::SERVICE_UNAVAILABLE,
            "No random source",
            "the operating system's random source failed; try again",
        );
    };
    let action = format!("{ROUTE}?idempotency_key={key}&csrf={}", op.csrf());
    let mut r = page::render(&UploadPage {
        chrome: Chrome::of(&op, "upload"),
        action,
        key,
    });
    // Not `no-store`: going back to this form must show the same key.
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=0"),
    );
    r
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct UploadQuery {
    idempotency_key: Option<String>,
    csrf: Option<String>,
}

pub(crate) async fn submit(
    State(app): State<Shared>,
    op: Result<Operator, Response>,
    Query(q): Query<UploadQuery>,
    req: Request,
) -> Response {
    // A refusal is sent after the body is read (and dropped): a browser still sending the
    // file when the answer comes sees a broken connection instead of the page.
    let op = match op {
        Ok(op) => op,
        Err(r) => {
            files::drain(&app, req).await;
            return r;
        }
    };
    if let Some(r) = op.csrf_refusal(q.csrf.as_deref()) {
        files::drain(&app, req).await;
        return r;
    }
    let key = match q.idempotency_key {
        Some(k) if !k.is_empty() && k.len() <= files::IDEMPOTENCY_KEY_MAX => k,
        _ => {
            return page::bad_request(
                "the upload form's idempotency key is missing; open the form again",
            );
        }
    };
    let scope = IdemScope {
        tenant: op.key.tenant.clone(),
        api_key_id: op.key.api_key_id,
        method: "POST".into(),
        route: ROUTE.into(),
        key,
    };
    let answer = files::upload(app, scope, FileQuery::default(), req).await;
    as_page(answer).await
}

/// The API's answer as the console shows it: a run (made now or replayed) is its page;
/// anything else is the problem's title and detail.
async fn as_page(answer: Response) -> Response {
    let h = answer.headers();
    let replayed = h.contains_key("idempotent-replayed");
    let run = h
        .get(header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|l| l.strip_prefix("/v1/runs/"))
        .and_then(|id| id.parse::<i64>().ok());
    if let Some(id) = run {
        let to = if replayed {
            format!("/console/runs/{id}?replayed=1")
        } else {
            format!("/console/runs/{id}")
        };
        return Redirect::to(&to).into_response();
    }
    let status = answer.status();
    let body = axum::body::to_bytes(answer.into_body(), 1 << 20)
        .await
        .unwrap_or_default();
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let title = v["title"].as_str().unwrap_or("The upload was refused");
    let detail = v["detail"].as_str().unwrap_or("");
    page::refused(status, title, detail)
}
