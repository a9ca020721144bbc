//! The operator console: HTML pages under `/console/`, served by `clearledger serve` in
//! the same process and over the same ledger reads and writes as the HTTP API (an upload
//! goes through `serve::files`, a run is read by `Ledger::run`), so that what an operator
//! sees is what the API answers.
//!
//! - Who: `session.rs` (sign in with an API key → a session cookie; a CSRF token on every
//!   form; one tenant's data only, anything else's `404` as in the API).
//! - Pages: one file each (`overview.rs`, `runs.rs`, `upload.rs`, …), their templates in
//!   `templates/` — askama, compiled into the binary and checked when it is built, every
//!   value HTML-escaped unless a template says otherwise. (askama over maud or a runtime
//!   engine: the pages stay HTML a designer can read, and a missing field or a typo is a
//!   build error rather than a blank on a page.)
//! - Assets (`assets/`): one stylesheet and one small script, embedded with
//!   `include_str!`; nothing from another origin, no web font. Every page is whole without
//!   the script, which only asks for confirmations and copies ids.
//! - Every response carries a Content-Security-Policy that allows the console's own assets
//!   and nothing else (`page::CSP`), and is never cached.

mod assets;
mod conflicts;
mod correction;
mod held;
mod lookup;
mod overview;
mod page;
mod recon;
mod recon_store;
mod reverse;
mod runs;
pub(crate) mod session;
mod sign_in;
mod statements;
pub(crate) mod store;
mod upload;

use crate::serve::Shared;
use axum::Router;
use axum::response::Redirect;
use axum::routing::{get, post};

/// Every console route (the contract: these names stay).
pub const ROUTES: &[&str] = &[
    "/console/sign-in",
    "/console/sign-out",
    "/console/",
    "/console/upload",
    "/console/runs",
    "/console/runs/{id}",
    "/console/runs/{id}/conflicts/{record}",
    "/console/runs/{id}/reverse",
    "/console/runs/{id}/records.csv",
    "/console/runs/{id}/records.jsonl",
    "/console/held",
    "/console/lookup",
    "/console/statements",
    "/console/reconciliations",
    "/console/reconciliations/{id}",
    "/console/reconciliations/{id}/items/{item}",
    "/console/reconciliations/{id}/items/{item}/correct",
    "/console/held/{run}/{record}/confirm",
    "/console/held/{run}/{record}",
    "/console/assets/{name}",
];

/// The console's routes, each answered with HTML and the console's headers.
pub(crate) fn router() -> Router<Shared> {
    Router::new()
        .route(
            "/console",
            get(|| async { Redirect::permanent("/console/") }),
        )
        .route("/console/sign-in", get(sign_in::show).post(sign_in::submit))
        .route("/console/sign-out", post(sign_in::sign_out))
        .route("/console/", get(overview::page))
        .route(
            "/console/upload",
            get(upload::form)
                .post(upload::submit)
                .layer(axum::extract::DefaultBodyLimit::disable()),
        )
        .route("/console/runs", get(runs::list))
        .route("/console/runs/{id}", get(runs::show))
        .route(
            "/console/runs/{id}/conflicts/{record}",
            get(conflicts::show),
        )
        .route(
            "/console/runs/{id}/reverse",
            get(reverse::preview).post(reverse::submit),
        )
        .route("/console/runs/{id}/records.csv", get(runs::download_csv))
        .route(
            "/console/runs/{id}/records.jsonl",
            get(runs::download_jsonl),
        )
        .route("/console/held", get(held::list))
        .route("/console/lookup", get(lookup::page))
        .route("/console/statements", get(statements::page))
        .route(
            "/console/reconciliations",
            get(recon::list).post(recon::start),
        )
        .route("/console/reconciliations/{id}", get(recon::show))
        .route(
            "/console/reconciliations/{id}/items/{item}",
            get(recon::item),
        )
        .route(
            "/console/reconciliations/{id}/items/{item}/correct",
            get(correction::preview).post(correction::post),
        )
        .route("/console/held/{run}/{record}/confirm", get(held::confirm))
        .route("/console/held/{run}/{record}", post(held::decide))
        .route("/console/assets/{name}", get(assets::asset))
        .layer(axum::middleware::map_response(page::headers))
        .layer(axum::middleware::from_fn(page::timed))
}

/// The answer to a path under `/console/` that names no page.
pub(crate) async fn not_found() -> axum::response::Response {
    page::headers(page::not_found("there is no such console page")).await
}
