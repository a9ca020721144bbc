//! `/console/`: what needs an operator today — runs by status, records by outcome, the held
//! records still open, reconciliation items needing attention, and the unique-index
//! rejections this server has counted (which should stay zero: every duplicate is meant to
//! be classified before the index sees it).

use super::page::{self, Chrome};
use super::session::Operator;
use super::store::{DayRuns, LatestReconciliation};
use crate::serve::Shared;
use askama::Template;
use axum::extract::State;
use axum::response::Response;
use futures_util::FutureExt;

#[derive(Template)]
#[template(path = "overview.html")]
struct Overview {
    chrome: Option<Chrome>,
    today: String,
    runs: DayRuns,
    open_held: usize,
    reconciliations: Vec<LatestReconciliation>,
    attention: i64,
    unique_rejections: u64,
}

pub(crate) async fn page(State(app): State<Shared>, op: Operator) -> Response {
    let now = chrono::Utc::now();
    let today = now.date_naive();
    let since = format!("{today}T00:00:00");
    let tenant = op.tenant().to_string();
    let res = page::read(&app, move |l| {
        async move {
            let runs = l.runs_since(&tenant, &since).await?;
            let held = l.held(&tenant).await?;
            let recs = l.latest_reconciliations(&tenant).await?;
            Ok((runs, held.iter().filter(|h| h.is_open()).count(), recs))
        }
        .boxed()
    })
    .await;
    let (runs, open_held, reconciliations) = match res {
        Ok(r) => r,
        Err(r) => return r,
    };
    page::render(&Overview {
        chrome: Chrome::of(&op, "overview"),
        today: today.to_string(),
        runs,
        open_held,
        attention: reconciliations.iter().map(|r| r.needs_attention).sum(),
        reconciliations,
        unique_rejections: app.metrics.unique_rejections(),
    })
}
