//! `/console/reconciliations/{id}/items/{no}/correct`: a correction for one item — first
//! its preview (the posting key it derives, its amount, the accounts), then, posted with
//! the form's CSRF token, the reconciliation of the same account, period and rules again
//! asking that item's correction (`clearledger reconcile --correct ITEM_KEY`). The key is
//! derived from the item, never drawn: sending the form twice cannot post twice (the
//! second reconciliation finds the item corrected and nothing left to post).

use super::page::{self, Chrome, amount};
use super::recon_store::ReconRun;
use super::session::Operator;
use crate::reconcile::ItemRow;
use crate::reconcile::rules::Rules;
use crate::reconcile::{Outcome, ReconcileOutcome, ReconcileRequest};
use crate::serve::Shared;
use askama::Template;
use axum::Form;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use futures_util::FutureExt;

/// Why item `it` of `run` cannot be corrected from here, if it cannot.
pub(crate) fn not_correctable(run: &ReconRun, it: &ItemRow) -> Option<String> {
    if it.delta_minor == 0 {
        return Some("its difference is zero: there is nothing to correct".into());
    }
    if !Outcome::parse(&it.outcome).is_some_and(Outcome::correctable) {
        return Some(format!(
            "a {} item is not corrected by a posting (decide it, or wait for the bank)",
            it.outcome
        ));
    }
    if run
        .rules
        .as_deref()
        .and_then(|r| Rules::from_stored(r, &run.rules_hash))
        .is_none()
    {
        return Some(
            "this run was recorded before runs kept their rules: reconcile again, then correct"
                .into(),
        );
    }
    None
}

/// The posting key a correction of `it` gets: `{bank account}:{item key}:{n}`, n one
/// more than the corrections already folded into the item (as the engine derives it).
pub(crate) fn correction_key(bank_account: &str, it: &ItemRow) -> String {
    format!(
        "{bank_account}:{}:{}",
        it.item_key,
        it.corrections.len() + 1
    )
}

#[derive(Template)]
#[template(path = "correction.html")]
struct Preview {
    chrome: Option<Chrome>,
    csrf: String,
    run_id: i64,
    item_no: i64,
    item_key: String,
    outcome: String,
    key: String,
    amount: String,
    suspense: String,
    refusal: Option<String>,
    delta_minor: i64,
    direction: &'static str,
}

/// The run and item, or the page that says there is none.
async fn read(
    app: &Shared,
    op: &Operator,
    id: i64,
    no: i64,
) -> Result<(ReconRun, ItemRow), Response> {
    let tenant = op.tenant().to_string();
    let res = page::read(app, move |l| {
        async move {
            let Some(run) = l.recon_run(&tenant, id).await? else {
                return Ok(None);
            };
            Ok(l.recon_item(&tenant, id, no).await?.map(|it| (run, it)))
        }
        .boxed()
    })
    .await;
    match res {
        Ok(Some(r)) => Ok(r),
        Ok(None) => Err(page::not_found(&format!(
            "no item {no} of reconciliation {id} for this tenant"
        ))),
        Err(r) => Err(r),
    }
}

pub(crate) async fn preview(
    State(app): State<Shared>,
    op: Operator,
    Path((id, no)): Path<(i64, i64)>,
) -> Response {
    let (run, it) = match read(&app, &op, id, no).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let rules = run
        .rules
        .as_deref()
        .and_then(|r| Rules::from_stored(r, &run.rules_hash));
    let suspense = rules
        .and_then(|r| r.corrections.suspense_account)
        .unwrap_or_else(|| format!("suspense:{}", run.bank_account));
    page::render(&Preview {
        chrome: Chrome::of(&op, "reconciliations"),
        csrf: op.csrf(),
        run_id: id,
        item_no: no,
        key: correction_key(&run.bank_account, &it),
        amount: amount(it.delta_minor.abs(), &it.currency),
        direction: if it.delta_minor > 0 {
            "the bank holds more than the ledger: the ledger account is credited, the \
             suspense account debited"
        } else {
            "the bank holds less than the ledger: the ledger account is debited, the \
             suspense account credited"
        },
        item_key: it.item_key.clone(),
        outcome: it.outcome.clone(),
        suspense,
        refusal: not_correctable(&run, &it),
        delta_minor: it.delta_minor,
    })
}

#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct CorrectForm {
    csrf: Option<String>,
    /// The posting key the preview showed.
    #[serde(default)]
    key: String,
    /// The difference (minor units) the preview showed.
    delta_minor: Option<i64>,
}

/// What the reconciliation asked for the item would post now: its correction's posting
/// key and the item's difference; `None` when it has no such item, or would post none.
async fn would_post(
    l: &mut crate::ledger::Ledger,
    req: &ReconcileRequest<'_>,
    item_key: &str,
) -> crate::ledger::Result<Option<(String, i64)>> {
    let dry = ReconcileRequest {
        dry_run: true,
        ..req.clone()
    };
    let ReconcileOutcome::Done(r) = l.reconcile(&dry).await? else {
        return Ok(None);
    };
    let mut found = None;
    let prefix = format!("{}:", crate::keys::OPERATION_CORRECTION);
    r.items
        .try_for_each(|row| {
            if row.item_key == item_key {
                let key = row
                    .correction_key
                    .as_deref()
                    .and_then(|k| k.strip_prefix(&prefix));
                found = key.map(|k| (k.to_string(), row.delta_minor));
            }
            Ok(())
        })
        .map_err(crate::ledger::LedgerError::TempFile)?;
    Ok(found)
}

pub(crate) async fn post(
    State(app): State<Shared>,
    op: Operator,
    Path((id, no)): Path<(i64, i64)>,
    Form(f): Form<CorrectForm>,
) -> Response {
    if let Some(r) = op.csrf_refusal(f.csrf.as_deref()) {
        return r;
    }
    let (run, it) = match read(&app, &op, id, no).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    if let Some(why) = not_correctable(&run, &it) {
        return page::refused(StatusCode::CONFLICT, "Not corrected", &why);
    }
    let rules = run
        .rules
        .as_deref()
        .and_then(|r| Rules::from_stored(r, &run.rules_hash));
    let Some(rules) = rules else {
        return page::refused(
            StatusCode::CONFLICT,
            "Not corrected",
            "the run's rules are not kept",
        );
    };
    let date = |d: &Option<String>| {
        d.as_deref()
            .and_then(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
    };
    let (from, to) = (date(&run.from), date(&run.to));
    let (tenant, account, key) = (op.tenant().to_string(), run.bank_account, it.item_key);
    let expected = (f.key.clone(), f.delta_minor.unwrap_or(0));
    let res = page::write(&app, move |l| {
        async move {
            let req = ReconcileRequest {
                tenant: &tenant,
                bank_account: &account,
                from,
                to,
                rules: &rules,
                dry_run: false,
                corrections: Some(vec![key.clone()]),
                at: chrono::Utc::now(),
                on_stage: None,
                part_rows: 20_000,
            };
            // What the operator confirmed, or nothing: the account's rows may have
            // moved since the preview was drawn.
            let now = would_post(l, &req, &key).await?;
            if now != Some(expected.clone()) {
                return Ok(Err(now));
            }
            l.reconcile(&req).await.map(Ok)
        }
        .boxed()
    })
    .await;
    answered(id, res)
}

/// A recorded reconciliation's outcome, or — the item's correction no longer what the
/// preview showed — what it would be now.
type Outcome2 = Result<ReconcileOutcome, Option<(String, i64)>>;

/// `409`: the correction would not be the one previewed (nothing was posted).
fn changed(now: Option<(String, i64)>) -> Response {
    let detail = match now {
        Some((key, delta)) => format!(
            "the account's postings or entries changed since the preview: the correction would \
             now be {key} of {delta} minor units. Nothing was posted; open the item again"
        ),
        None => "the item needs no correction now (corrected already — this form was sent \
                 before — or the account's rows changed since the preview). Nothing was posted"
            .to_string(),
    };
    page::refused(
        StatusCode::CONFLICT,
        "The item changed since its preview",
        &detail,
    )
}

/// The page after a correction's reconciliation.
fn answered(id: i64, res: Result<Outcome2, Response>) -> Response {
    match res {
        Ok(Err(now)) => changed(now),
        Ok(Ok(ReconcileOutcome::Done(r))) => match r.repeat_of.or(r.summary.run_id) {
            Some(run) => Redirect::to(&format!("/console/reconciliations/{run}?corrected={id}"))
                .into_response(),
            None => page::bad_request("the reconciliation recorded no run"),
        },
        Ok(Ok(ReconcileOutcome::UnknownItems(_))) => page::refused(
            StatusCode::CONFLICT,
            "The item is gone",
            "the account's postings or entries changed since, and this item is no longer one: \
             open the latest reconciliation",
        ),
        Ok(Ok(ReconcileOutcome::BadCorrectionAccounts(why))) => {
            page::refused(StatusCode::CONFLICT, "Not corrected", &why)
        }
        Ok(Ok(ReconcileOutcome::NotMapped)) => page::refused(
            StatusCode::CONFLICT,
            "Not corrected",
            "the account is no longer mapped",
        ),
        Err(r) => r,
    }
}
