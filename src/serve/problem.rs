//! Errors over HTTP as `application/problem+json` (RFC 9457). `type` is a relative URI,
//! `/problems/{code}`, and `code` repeats its last segment for machines that match on a
//! word (`idempotency_key_reuse`, docs/principles.md §5).

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

pub(crate) const PROBLEM_JSON: &str = "application/problem+json";

#[derive(Debug, Clone)]
pub(crate) struct Problem {
    pub status: StatusCode,
    pub code: &'static str,
    pub title: &'static str,
    pub detail: String,
    /// More members of the object (RFC 9457 extensions).
    pub extra: Map<String, Value>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl Problem {
    pub(crate) fn new(
        status: StatusCode,
        code: &'static str,
        title: &'static str,
        detail: impl Into<String>,
    ) -> Self {
        Problem {
            status,
            code,
            title,
            detail: detail.into(),
            extra: Map::new(),
            headers: Vec::new(),
        }
    }

    pub(crate) fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.extra.insert(key.to_string(), value.into());
        self
    }

    pub(crate) fn header(mut self, name: HeaderName, value: &str) -> Self {
        if let Ok(v) = HeaderValue::from_str(value) {
            self.headers.push((name, v));
        }
        self
    }

    /// The JSON body. The members RFC 9457 defines (and `code`) are always the problem's
    /// own: an extension of the same name is dropped.
    pub(crate) fn body(&self) -> Vec<u8> {
        let mut o = self.extra.clone();
        for (k, v) in [
            ("type", json!(format!("/problems/{}", self.code))),
            ("title", json!(self.title)),
            ("status", json!(self.status.as_u16())),
            ("detail", json!(self.detail)),
            ("code", json!(self.code)),
        ] {
            o.insert(k.to_string(), v);
        }
        serde_json::to_vec(&Value::Object(o)).unwrap_or_default()
    }

    pub(crate) fn not_found(what: impl Into<String>) -> Self {
        Problem::new(StatusCode::NOT_FOUND, "not_found", "Not found", what.into())
    }

    pub(crate) fn bad_request(code: &'static str, detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::BAD_REQUEST, code, "Bad request", detail)
    }

    /// A ledger call failed: a value the database refused (`LedgerError::is_unstorable_input`)
    /// is the client's to fix, `422`; anything else is the database failing, `503`.
    pub(crate) fn ledger(e: &crate::ledger::LedgerError) -> Self {
        if e.is_unstorable_input() {
            return Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "unstorable_input",
                "The request holds a value the ledger cannot store",
                format!(
                    "{e}; nothing was committed; a retry with the same input fails the same way"
                ),
            );
        }
        if e.is_storage_full() {
            // An operator must act first: a retry a second later fails the same way.
            return Problem::new(
                StatusCode::INSUFFICIENT_STORAGE,
                "storage_full",
                "The ledger's storage is full; nothing of this request was committed",
                format!("{e}; free space or grow the volume, then retry with the same key"),
            )
            .header(header::RETRY_AFTER, "60");
        }
        Problem::unavailable(e)
    }

    /// The database failed: nothing of the request committed; safe to retry.
    pub(crate) fn unavailable(e: &crate::ledger::LedgerError) -> Self {
        Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "database_unavailable",
            "The database failed; nothing of this request was committed",
            format!("{e}; safe to retry"),
        )
        .header(header::RETRY_AFTER, "1")
    }
}

/// Every error answer as problem+json: what axum answers by itself (an unparsable path or
/// query parameter, a method the route does not take, a timeout) comes as plain text or
/// empty; it is rewritten here, its text kept as `detail`. Answers that are problem+json
/// already, and successes, pass as they are.
pub(crate) async fn as_problem(res: Response) -> Response {
    let status = res.status();
    let is_problem = res
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(PROBLEM_JSON.as_bytes()));
    if !(status.is_client_error() || status.is_server_error()) || is_problem {
        return res;
    }
    let (parts, body) = res.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let (code, title) = match status {
        StatusCode::BAD_REQUEST => ("bad_request", "Bad request"),
        StatusCode::METHOD_NOT_ALLOWED => ("method_not_allowed", "Method not allowed"),
        StatusCode::REQUEST_TIMEOUT => ("request_timeout", "The request took too long"),
        StatusCode::PAYLOAD_TOO_LARGE => ("payload_too_large", "The body is too large"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ("unsupported_media_type", "Unsupported media type"),
        StatusCode::UNPROCESSABLE_ENTITY => ("unprocessable", "The request could not be read"),
        s if s.is_client_error() => ("client_error", "The request was refused"),
        _ => ("server_error", "The server failed"),
    };
    let detail = if text.is_empty() {
        status.canonical_reason().unwrap_or("").to_string()
    } else {
        text
    };
    let mut p = Problem::new(status, code, title, detail);
    // Keep what the answer said beside its body (Allow on a 405, Retry-After).
    for (k, v) in parts.headers.iter() {
        if k != header::CONTENT_TYPE && k != header::CONTENT_LENGTH {
            p.headers.push((k.clone(), v.clone()));
        }
    }
    p.into_response()
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        for (k, v) in &self.headers {
            headers.insert(k.clone(), v.clone());
        }
        (self.status, headers, self.body()).into_response()
    }
}
