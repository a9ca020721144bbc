//! What every console page shares: the frame around it (`Chrome`: the tenant, the
//! navigation, the sign-out form with its CSRF token), rendering a template into a
//! response, the pages that say no, and the headers every console response carries.

use super::session::Operator;
use crate::ledger::{Ledger, LedgerError};
use crate::serve::Shared;
use askama::Template;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use futures_util::future::BoxFuture;

/// The console's Content-Security-Policy: its own stylesheet and script and nothing else
/// (no inline script or style, no other origin, no frames, forms only to itself).
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; \
     base-uri 'none'";

/// The frame of a signed-in page.
pub(crate) struct Chrome {
    pub(crate) tenant: String,
    pub(crate) csrf: String,
    /// Which navigation entry is this page's (`runs`, `held`, …).
    pub(crate) nav: &'static str,
}

impl Chrome {
    pub(crate) fn of(op: &Operator, nav: &'static str) -> Option<Chrome> {
        Some(Chrome {
            tenant: op.tenant().to_string(),
            csrf: op.csrf(),
            nav,
        })
    }
}

/// Runs `f` on a connection that only reads; a database failure is its page.
pub(crate) async fn read<T, F>(app: &Shared, f: F) -> Result<T, Response>
where
    T: Send + 'static,
    F: for<'a> FnOnce(&'a mut Ledger) -> BoxFuture<'a, Result<T, LedgerError>> + Send + 'static,
{
    match app.readers.run(f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) | Err(e) => Err(ledger_failed(&e)),
    }
}

/// Runs `f` on a connection that writes; a database failure is its page.
pub(crate) async fn write<T, F>(app: &Shared, f: F) -> Result<T, Response>
where
    T: Send + 'static,
    F: for<'a> FnOnce(&'a mut Ledger) -> BoxFuture<'a, Result<T, LedgerError>> + Send + 'static,
{
    match app.pool.run(f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) | Err(e) => Err(ledger_failed(&e)),
    }
}

/// A page, `200`.
pub(crate) fn render(t: &impl Template) -> Response {
    render_status(StatusCode::OK, t)
}

/// A page with `status`; a template that fails to render is a plain `500`.
pub(crate) fn render_status(status: StatusCode, t: &impl Template) -> Response {
    match t.render() {
        Ok(body) => (status, Html(body)).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "a console page failed to render");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the page failed to render",
            )
                .into_response()
        }
    }
}

#[derive(Template)]
#[template(path = "refused.html")]
struct Refused<'a> {
    chrome: Option<Chrome>,
    status: u16,
    title: &'a str,
    detail: &'a str,
}

/// A page saying why a request was refused (what was done: nothing).
pub(crate) fn refused(status: StatusCode, title: &str, detail: &str) -> Response {
    render_status(
        status,
        &Refused {
            chrome: None,
            status: status.as_u16(),
            title,
            detail,
        },
    )
}

/// `404`: nothing of this tenant's by that name (another tenant's is not said to exist).
pub(crate) fn not_found(detail: &str) -> Response {
    refused(StatusCode::NOT_FOUND, "Not found", detail)
}

/// `400`: a parameter the page cannot read.
pub(crate) fn bad_request(detail: &str) -> Response {
    refused(
        StatusCode::BAD_REQUEST,
        "The request could not be read",
        detail,
    )
}

/// `503`: the database failed; nothing was committed (`422` for a value the ledger cannot
/// store, which a retry would not change).
pub(crate) fn ledger_failed(e: &LedgerError) -> Response {
    if e.is_unstorable_input() {
        return refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            "The form holds a value the ledger cannot store",
            &format!("{e}. Nothing was done; change the value and send it again."),
        );
    }
    tracing::warn!(error = %e, "a console request failed on the ledger");
    let mut r = refused(
        StatusCode::SERVICE_UNAVAILABLE,
        "The database failed",
        &format!("{e}. Nothing of this request was committed; try again."),
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// Headers on every console response: the CSP, no sniffing, no framing, no referrer
/// outside the console, and no caching of pages that show ledger data.
pub(crate) async fn headers(mut res: Response) -> Response {
    let h = res.headers_mut();
    let set = |h: &mut axum::http::HeaderMap, k: &'static str, v: &'static str| {
        h.entry(k).or_insert(HeaderValue::from_static(v));
    };
    set(h, "content-security-policy", CSP);
    set(h, "x-content-type-options", "nosniff");
    set(h, "x-frame-options", "DENY");
    set(h, "referrer-policy", "same-origin");
    set(h, "cache-control", "no-store");
    res
}

/// The time the server took, as `Server-Timing: app;dur=MS` (what the console's speed
/// is measured by: docs/performance.md), on every console response.
pub(crate) async fn timed(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let started = std::time::Instant::now();
    let mut res = next.run(req).await;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    if let Ok(v) = HeaderValue::from_str(&format!("app;dur={ms:.1}")) {
        res.headers_mut().insert("server-timing", v);
    }
    res
}

/// A text a person typed into a form (a reason, a name): trimmed, 1 to `max` characters,
/// no control character but line breaks and tabs; otherwise why not.
pub(crate) fn typed(name: &str, value: &str, max: usize) -> Result<String, String> {
    let v = value.trim();
    if v.is_empty() {
        return Err(format!("{name} is required"));
    }
    if v.chars().count() > max {
        return Err(format!("{name} is at most {max} characters"));
    }
    if v.chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err(format!("{name} holds a control character"));
    }
    Ok(v.to_string())
}

/// A field's value as a person reads it: an `amount` in minor units (as a record's fields
/// keep it) by its currency's exponent; any other as it is.
pub(crate) fn field_value(name: &str, value: &str, currency: &str) -> String {
    match value.parse::<i64>() {
        Ok(minor) if name == "amount" => amount(minor, currency),
        _ => value.to_string(),
    }
}

/// An amount for a person, by its currency's exponent (`1234.56 USD`).
pub(crate) fn amount(minor: i64, currency: &str) -> String {
    crate::money::format_amount(minor, currency)
}
