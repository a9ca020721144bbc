//! `/console/held`: each held record beside the posting it resembles; a decision (post or
//! reject, with a reason and a name) asked, shown for confirmation (`…/confirm`, a page
//! that changes nothing), then posted with the form's CSRF token and made by the same
//! `Ledger::resolve` as `clearledger resolve`. The same decision sent twice is answered
//! "already resolved" (the decision's primary key is the held record's key).

use super::page::{self, Chrome, amount};
use super::runs::utc;
use super::session::Operator;
use crate::ledger::{Lookup, Posting};
use crate::operator::{Actor, DecisionKind, HeldRecord, Resolution};
use crate::serve::Shared;
use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use futures_util::FutureExt;

/// The longest reason or name a form takes (a paragraph; a person's name).
const REASON_MAX: usize = 2000;
const NAME_MAX: usize = 200;

/// One line of the comparison: the field, the held record's value, the posting's, and
/// whether they differ.
struct Line {
    field: &'static str,
    held: String,
    posting: String,
    differs: bool,
}

/// A held record as the page shows it.
struct HeldView {
    run_id: i64,
    record_no: i64,
    file_id: String,
    key: String,
    reason: String,
    held_at: String,
    /// The posting it resembles (`file record N (run R)`), or empty.
    resembles: String,
    lines: Vec<Line>,
    decision: String,
}

fn view(h: &HeldRecord, like: Option<&Posting>) -> HeldView {
    let line = |field, held: String, posting: Option<String>| Line {
        field,
        differs: posting.as_ref().is_some_and(|p| *p != held),
        posting: posting.unwrap_or_default(),
        held,
    };
    let p = |f: fn(&Posting) -> String| like.map(f);
    HeldView {
        run_id: h.run_id,
        record_no: h.record_no,
        file_id: h.file_id.clone().unwrap_or_default(),
        key: h.posting_key.clone(),
        reason: h.reason.clone().unwrap_or_else(|| "held".into()),
        held_at: utc(&h.held_at),
        resembles: h.resembles.as_ref().map_or(String::new(), |r| {
            format!("{} record {} (run {})", r.file_id, r.record_no, r.run_id)
        }),
        lines: vec![
            line(
                "amount",
                amount(h.amount_minor, &h.currency),
                p(|p| amount(p.amount_minor, &p.currency)),
            ),
            line(
                "debit",
                h.debit_account.clone(),
                p(|p| p.debit_account.clone()),
            ),
            line(
                "credit",
                h.credit_account.clone(),
                p(|p| p.credit_account.clone()),
            ),
            line(
                "effective date",
                h.effective_date.clone().unwrap_or_default(),
                p(|p| p.effective_date.clone().unwrap_or_default()),
            ),
            line(
                "trace number",
                h.trace_number.clone().unwrap_or_default(),
                p(|p| p.trace_number.clone().unwrap_or_default()),
            ),
            line("key", h.posting_key.clone(), p(|p| p.posting_key.clone())),
        ],
        decision: h
            .decision
            .as_ref()
            .map(|d| d.describe())
            .or_else(|| h.posted_as.map(|p| format!("posted since as posting {p}")))
            .unwrap_or_default(),
    }
}

#[derive(Template)]
#[template(path = "held.html")]
struct HeldPage {
    chrome: Option<Chrome>,
    open: Vec<HeldView>,
    decided: Vec<HeldView>,
}

/// The tenant's held records, each with the posting it resembles.
async fn read_held(
    app: &Shared,
    tenant: String,
    only: Option<(i64, i64)>,
) -> Result<Vec<(HeldRecord, Option<Posting>)>, Response> {
    page::read(app, move |l| {
        async move {
            let mut out = Vec::new();
            for h in l.held(&tenant).await? {
                if only.is_some_and(|o| o != (h.run_id, h.record_no)) {
                    continue;
                }
                // Only an open record is shown beside the posting it resembles.
                let like = match h.resembles.as_ref().filter(|_| h.is_open()) {
                    Some(r) => {
                        let by = Lookup::Source {
                            file_id: r.file_id.clone(),
                            record_no: r.record_no,
                        };
                        l.lookup(&tenant, &by).await?.into_iter().next()
                    }
                    None => None,
                };
                out.push((h, like));
            }
            Ok(out)
        }
        .boxed()
    })
    .await
}

pub(crate) async fn list(State(app): State<Shared>, op: Operator) -> Response {
    let held = match read_held(&app, op.tenant().to_string(), None).await {
        Ok(h) => h,
        Err(r) => return r,
    };
    let (open, decided): (Vec<_>, Vec<_>) = held.iter().partition(|(h, _)| h.is_open());
    page::render(&HeldPage {
        chrome: Chrome::of(&op, "held"),
        open: open.iter().map(|(h, p)| view(h, p.as_ref())).collect(),
        decided: decided
            .iter()
            .rev()
            .take(50)
            .map(|(h, p)| view(h, p.as_ref()))
            .collect(),
    })
}

#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct DecideForm {
    csrf: Option<String>,
    decision: Option<String>,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    by: String,
}

impl DecideForm {
    /// The decision asked, its reason and name, or why the form cannot be taken.
    fn read(&self) -> Result<(DecisionKind, String, String), String> {
        let d = match self.decision.as_deref() {
            Some("post") => DecisionKind::Post,
            Some("reject") => DecisionKind::Reject,
            _ => return Err("choose post or reject".into()),
        };
        let reason = page::typed("a reason", &self.reason, REASON_MAX)?;
        let by = page::typed("your name", &self.by, NAME_MAX)?;
        Ok((d, reason, by))
    }
}

#[derive(Template)]
#[template(path = "held_confirm.html")]
struct ConfirmPage {
    chrome: Option<Chrome>,
    held: HeldView,
    decision: &'static str,
    reason: String,
    by: String,
    csrf: String,
}

/// The decision asked, shown with the record for confirmation; nothing is done yet (a
/// GET: going back to it from the answer shows it again, and sending it again is answered
/// "already resolved").
pub(crate) async fn confirm(
    State(app): State<Shared>,
    op: Operator,
    Path((run_id, record_no)): Path<(i64, i64)>,
    Query(f): Query<DecideForm>,
) -> Response {
    let (decision, reason, by) = match f.read() {
        Ok(d) => d,
        Err(why) => return page::bad_request(&why),
    };
    let held = match read_held(&app, op.tenant().to_string(), Some((run_id, record_no))).await {
        Ok(h) => h,
        Err(r) => return r,
    };
    let Some((h, like)) = held.first() else {
        return page::not_found(&format!("no held record {record_no} in run {run_id}"));
    };
    page::render(&ConfirmPage {
        chrome: Chrome::of(&op, "held"),
        held: view(h, like.as_ref()),
        decision: decision.as_str(),
        reason,
        by,
        csrf: op.csrf(),
    })
}

#[derive(Template)]
#[template(path = "held_done.html")]
struct DonePage {
    chrome: Option<Chrome>,
    title: String,
    detail: String,
    run: Option<i64>,
}

/// The decision made (`Ledger::resolve`), and what came of it.
pub(crate) async fn decide(
    State(app): State<Shared>,
    op: Operator,
    Path((run_id, record_no)): Path<(i64, i64)>,
    Form(f): Form<DecideForm>,
) -> Response {
    if let Some(r) = op.csrf_refusal(f.csrf.as_deref()) {
        return r;
    }
    let (decision, reason, by) = match f.read() {
        Ok(d) => d,
        Err(why) => return page::bad_request(&why),
    };
    let tenant = op.tenant().to_string();
    let res = page::write(&app, move |l| {
        async move {
            let who = Actor {
                tenant: &tenant,
                reason: &reason,
                by: &by,
                at: chrono::Utc::now(),
            };
            l.resolve(&who, run_id, record_no, decision).await
        }
        .boxed()
    })
    .await;
    let r = match res {
        Ok(r) => r,
        Err(r) => return r,
    };
    let (status, title, detail, run) = answer(&format!("run {run_id} record {record_no}"), r);
    page::render_status(
        status,
        &DonePage {
            chrome: Chrome::of(&op, "held"),
            title: title.to_string(),
            detail,
            run,
        },
    )
}

/// What a resolution says: its status, title, detail and the run to look at.
fn answer(what: &str, r: Resolution) -> (StatusCode, &'static str, String, Option<i64>) {
    match r {
        Resolution::Decided {
            decision,
            run,
            found_posted,
        } => {
            let mut d = format!("{what}: {}", decision.describe());
            if found_posted {
                d.push_str(
                    "; its key had posted with the same content, so nothing more was posted",
                );
            }
            (StatusCode::OK, "Resolved", d, Some(run.run_id))
        }
        Resolution::AlreadyResolved(d) => (
            StatusCode::OK,
            "Already resolved",
            format!(
                "{what} was resolved before: {}. Nothing was done.",
                d.describe()
            ),
            Some(d.run_id),
        ),
        Resolution::Contradicts(d) => (
            StatusCode::CONFLICT,
            "Decided otherwise before",
            format!(
                "{what} was decided before: {}. Nothing was done.",
                d.describe()
            ),
            Some(d.run_id),
        ),
        Resolution::NotHeld { outcome } => (
            StatusCode::CONFLICT,
            "Not a held record",
            format!("{what} is a {outcome}: only held records are resolved"),
            None,
        ),
        Resolution::NotFound => (
            StatusCode::NOT_FOUND,
            "Not found",
            format!("no {what} for this tenant"),
            None,
        ),
        Resolution::Refused { why } => (
            StatusCode::CONFLICT,
            "Refused",
            format!("{what}: {why}"),
            None,
        ),
    }
}
