//! Errors over HTTP as `application/problem+json` (RFC 9457). `type` is a relative URI,
//! `/problems/{code}`, and `code` repeats its last segment for machines that match on a
//! word (`idempotency_key_reuse`, PRINCIPLES §5).

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

pub const PROBLEM_JSON: &str = "application/problem+json";

#[derive(Debug, Clone)]
pub struct Problem {
    pub status: StatusCode,
    pub code: &'static str,
    pub title: &'static str,
    pub detail: String,
    /// More members of the object (RFC 9457 extensions).
    pub extra: Map<String, Value>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl Problem {
    pub fn new(
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

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.extra.insert(key.to_string(), value.into());
        self
    }

    pub fn header(mut self, name: HeaderName, value: &str) -> Self {
        if let Ok(v) = HeaderValue::from_str(value) {
            self.headers.push((name, v));
        }
        self
    }

    /// The JSON body.
    pub fn body(&self) -> Vec<u8> {
        let mut v = json!({
            "type": format!("/problems/{}", self.code),
            "title": self.title,
            "status": self.status.as_u16(),
            "detail": self.detail,
            "code": self.code,
        });
        if let Value::Object(o) = &mut v {
            for (k, x) in &self.extra {
                o.insert(k.clone(), x.clone());
            }
        }
        serde_json::to_vec(&v).unwrap_or_default()
    }

    pub fn not_found(what: impl Into<String>) -> Self {
        Problem::new(StatusCode::NOT_FOUND, "not_found", "Not found", what.into())
    }

    pub fn bad_request(code: &'static str, detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::BAD_REQUEST, code, "Bad request", detail)
    }

    /// The database failed: nothing of the request committed; safe to retry.
    pub fn unavailable(e: &crate::ledger::LedgerError) -> Self {
        Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "database_unavailable",
            "The database failed; nothing of this request was committed",
            format!("{e}; safe to retry"),
        )
        .header(header::RETRY_AFTER, "1")
    }
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
