//! The console's stylesheet, script and icon, embedded in the binary (no CDN, no web font).

use axum::extract::Path;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

const CSS: &str = include_str!("assets/console.css");
const JS: &str = include_str!("assets/console.js");
const ICON: &str = include_str!("assets/favicon.svg");

pub(crate) async fn asset(Path(name): Path<String>) -> Response {
    let (body, kind) = match name.as_str() {
        "console.css" => (CSS, "text/css; charset=utf-8"),
        "console.js" => (JS, "text/javascript; charset=utf-8"),
        "favicon.svg" => (ICON, "image/svg+xml"),
        _ => return super::page::not_found("there is no such asset"),
    };
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    // Kept for a few minutes: a new binary's assets reach browsers soon after a restart.
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    r
}
