//! `/console/runs/{id}/reverse`: what reversing a run would post (count and totals per
//! currency), a confirmation with a reason and a name, then the compensation run that
//! `clearledger reverse --run-id` makes (`Ledger::reverse`).

use super::page::{self, Chrome, amount};
use super::session::Operator;
use super::store::ReversePreview;
use crate::operator::{Actor, Reversal, ReverseTarget};
use crate::serve::Shared;
use askama::Template;
use axum::Form;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use futures_util::FutureExt;

#[derive(Template)]
#[template(path = "reverse.html")]
struct ReversePage {
    chrome: Option<Chrome>,
    csrf: String,
    run_id: i64,
    posted: i64,
    /// (currency, postings, total as shown).
    lines: Vec<(String, i64, String)>,
    to_post: i64,
    preview: ReversePreview,
}

pub(crate) async fn preview(
    State(app): State<Shared>,
    op: Operator,
    Path(id): Path<i64>,
) -> Response {
    let tenant = op.tenant().to_string();
    let res = page::read(&app, move |l| {
        async move {
            let Some(run) = l.run(&tenant, id).await? else {
                return Ok(None);
            };
            let p = l.reverse_preview(&run).await?;
            Ok(Some((run.posted, p)))
        }
        .boxed()
    })
    .await;
    let (posted, preview) = match res {
        Ok(Some(p)) => p,
        Ok(None) => return page::not_found(&format!("no run {id} for this tenant")),
        Err(r) => return r,
    };
    page::render(&ReversePage {
        chrome: Chrome::of(&op, "runs"),
        csrf: op.csrf(),
        run_id: id,
        posted,
        lines: preview
            .by_currency
            .iter()
            .map(|(c, n, t)| (c.clone(), *n, amount(*t, c)))
            .collect(),
        to_post: preview.by_currency.iter().map(|c| c.1).sum(),
        preview,
    })
}

#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct ReverseForm {
    csrf: Option<String>,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    by: String,
}

pub(crate) async fn submit(
    State(app): State<Shared>,
    op: Operator,
    Path(id): Path<i64>,
    Form(f): Form<ReverseForm>,
) -> Response {
    if let Some(r) = op.csrf_refusal(f.csrf.as_deref()) {
        return r;
    }
    let typed = page::typed("a reason", &f.reason, 2000)
        .and_then(|r| Ok((r, page::typed("your name", &f.by, 200)?)));
    let (reason, by) = match typed {
        Ok(t) => t,
        Err(why) => return page::bad_request(&why),
    };
    let tenant = op.tenant().to_string();
    let res = page::write(&app, move |l| {
        async move {
            let Some(run) = l.run(&tenant, id).await? else {
                return Ok(None);
            };
            // Sent again (a double submit, the back button): every posting is
            // compensated already, and a second run of duplicates says nothing new.
            let p = l.reverse_preview(&run).await?;
            if p.compensated > 0 && p.by_currency.iter().all(|c| c.1 == 0) {
                return Ok(Some(Err(p.compensated)));
            }
            let who = Actor {
                tenant: &tenant,
                reason: &reason,
                by: &by,
                at: chrono::Utc::now(),
            };
            l.reverse(&who, &ReverseTarget::Run(id))
                .await
                .map(|r| Some(Ok(r)))
        }
        .boxed()
    })
    .await;
    answered(id, res)
}

/// The page after a reversal was asked.
fn answered(id: i64, res: Result<Option<Result<Reversal, i64>>, Response>) -> Response {
    match res {
        Ok(Some(Err(n))) => page::refused(
            StatusCode::CONFLICT,
            "Already reversed",
            &format!("every posting of run {id} was compensated before ({n}); nothing was done"),
        ),
        Ok(Some(Ok(Reversal::Reversed(run)))) => {
            Redirect::to(&format!("/console/runs/{}", run.run_id)).into_response()
        }
        Ok(Some(Ok(Reversal::NothingToReverse | Reversal::Ambiguous(_)))) => page::refused(
            StatusCode::CONFLICT,
            "Nothing to reverse",
            &format!("run {id} posted nothing (its records were duplicates, or it was rejected)"),
        ),
        Ok(Some(Ok(Reversal::OfCompensation))) => page::refused(
            StatusCode::CONFLICT,
            "A compensation is not reversed",
            &format!(
                "run {id} is a compensation: reversing it would move the money back under a \
                 compensation's name; post the movement anew instead"
            ),
        ),
        Ok(None) => page::not_found(&format!("no run {id} for this tenant")),
        Err(r) => r,
    }
}
