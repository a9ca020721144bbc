//! `/console/reconciliations`: the tenant's reconciliation runs and a form to start one
//! (bank account, period, rules) — the same `Ledger::reconcile` as `clearledger
//! reconcile`, recorded; `/console/reconciliations/{id}`: its totals per outcome and its
//! items, filtered, a page at a time, `missing_ours` first (the report's order); and
//! `…/items/{no}`: one item's explanation criterion by criterion and its members on both
//! sides, an ambiguous item's candidates side by side.

use super::page::{self, Chrome, amount};
use super::recon_store::{EntryBrief, ReconRun};
use super::runs::utc;
use super::session::Operator;
use crate::ledger::{Lookup, Posting};
use crate::reconcile::ItemRow;
use crate::reconcile::rules::Rules;
use crate::reconcile::{ReconcileOutcome, ReconcileRequest};
use crate::serve::Shared;
use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use futures_util::FutureExt;

/// Items a page lists.
const ITEMS_PAGE: i64 = 100;

/// A run as a row of the list.
struct RunRow {
    id: i64,
    account: String,
    period: String,
    started: String,
    items: i64,
    attention: i64,
}

fn run_row(r: &ReconRun) -> RunRow {
    let s: serde_json::Value = serde_json::from_str(&r.summary).unwrap_or_default();
    RunRow {
        id: r.run_id,
        account: r.bank_account.clone(),
        period: format!(
            "{}..{}",
            r.from.as_deref().unwrap_or(""),
            r.to.as_deref().unwrap_or("")
        ),
        started: utc(&r.started_at),
        items: s["items"].as_i64().unwrap_or(0),
        attention: s["needs_attention"].as_i64().unwrap_or(0),
    }
}

#[derive(Template)]
#[template(path = "reconciliations.html")]
struct ListPage {
    chrome: Option<Chrome>,
    csrf: String,
    runs: Vec<RunRow>,
    accounts: Vec<String>,
}

pub(crate) async fn list(State(app): State<Shared>, op: Operator) -> Response {
    let tenant = op.tenant().to_string();
    let res = page::read(&app, move |l| {
        async move {
            let runs = l.recon_runs(&tenant, 50).await?;
            let mapped = l.account_mappings(&tenant, None).await?;
            Ok((runs, mapped))
        }
        .boxed()
    })
    .await;
    let (runs, mapped) = match res {
        Ok(r) => r,
        Err(r) => return r,
    };
    let mut accounts: Vec<String> = mapped.into_iter().map(|m| m.bank_account).collect();
    accounts.dedup();
    page::render(&ListPage {
        chrome: Chrome::of(&op, "reconciliations"),
        csrf: op.csrf(),
        runs: runs.iter().map(run_row).collect(),
        accounts,
    })
}

#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct StartForm {
    csrf: Option<String>,
    #[serde(default)]
    bank_account: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    rules: String,
}

/// A date field: empty is no bound.
fn date(s: &str, name: &str) -> Result<Option<chrono::NaiveDate>, String> {
    match s.trim() {
        "" => Ok(None),
        d => chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
            .map(Some)
            .map_err(|_| format!("{name} must be a date YYYY-MM-DD; found {d:?}")),
    }
}

/// The form read: account, period and rules, or why not.
fn read_start(
    f: &StartForm,
) -> Result<
    (
        String,
        Option<chrono::NaiveDate>,
        Option<chrono::NaiveDate>,
        Rules,
    ),
    String,
> {
    let account = f.bank_account.trim().to_string();
    crate::operator::check_account_name(&account)
        .map_err(|e| format!("invalid bank account {account:?}: {e}"))?;
    let (from, to) = (date(&f.from, "from")?, date(&f.to, "to")?);
    if let (Some(a), Some(b)) = (from, to)
        && a > b
    {
        return Err(format!("the period begins ({a}) after it ends ({b})"));
    }
    let rules = if f.rules.trim().is_empty() {
        Rules::default()
    } else {
        Rules::parse("the rules field", &f.rules).map_err(|e| e.to_string())?
    };
    Ok((account, from, to, rules))
}

pub(crate) async fn start(
    State(app): State<Shared>,
    op: Operator,
    Form(f): Form<StartForm>,
) -> Response {
    if let Some(r) = op.csrf_refusal(f.csrf.as_deref()) {
        return r;
    }
    let (account, from, to, rules) = match read_start(&f) {
        Ok(r) => r,
        Err(why) => return page::bad_request(&why),
    };
    let tenant = op.tenant().to_string();
    let a = account.clone();
    let res = page::write(&app, move |l| {
        async move {
            let req = ReconcileRequest {
                tenant: &tenant,
                bank_account: crate::formats::statement::account_name(&a),
                from,
                to,
                rules: &rules,
                dry_run: false,
                corrections: None,
                at: chrono::Utc::now(),
                on_stage: None,
                part_rows: 20_000,
            };
            l.reconcile(&req).await
        }
        .boxed()
    })
    .await;
    match res {
        Ok(ReconcileOutcome::Done(r)) => match r.repeat_of.or(r.summary.run_id) {
            Some(id) => Redirect::to(&format!("/console/reconciliations/{id}")).into_response(),
            None => page::bad_request("the reconciliation recorded no run"),
        },
        Ok(ReconcileOutcome::NotMapped) => page::refused(
            StatusCode::BAD_REQUEST,
            "No ledger account is mapped",
            &format!(
                "no ledger account is mapped to bank account {account:?}; map one with \
                 `clearledger account map --bank-account {account} --ledger-account ACCOUNT`"
            ),
        ),
        Ok(ReconcileOutcome::UnknownItems(_) | ReconcileOutcome::BadCorrectionAccounts(_)) => {
            page::bad_request("no correction was asked")
        }
        Err(r) => r,
    }
}

/// An item as a row of a run's page.
struct ItemLine {
    no: i64,
    outcome: String,
    ours: String,
    theirs: String,
    delta: String,
    explanation: String,
    previous: String,
}

fn item_line(i: &ItemRow) -> ItemLine {
    ItemLine {
        no: i.item_no,
        outcome: i.outcome.clone(),
        ours: amount(i.our_amount_minor, &i.currency),
        theirs: amount(i.their_amount_minor, &i.currency),
        delta: amount(i.delta_minor, &i.currency),
        explanation: i.explanation.clone(),
        previous: i.previous_outcome.clone().unwrap_or_default(),
    }
}

#[derive(Template)]
#[template(path = "reconciliation.html")]
struct RunPage {
    chrome: Option<Chrome>,
    run: RunRow,
    /// (outcome, items), every outcome with items, in report order.
    outcomes: Vec<(String, i64)>,
    balances: Vec<String>,
    items: Vec<ItemLine>,
    outcome: String,
    next: Option<String>,
    corrected: Option<i64>,
}

#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct ItemsQuery {
    #[serde(default)]
    outcome: String,
    #[serde(default)]
    after: i64,
    /// The run whose item a correction was just asked from (this run posted it).
    corrected: Option<i64>,
}

/// The outcomes with items, and the balance lines, from a run's stored summary.
fn summary_lines(summary: &str) -> (Vec<(String, i64)>, Vec<String>) {
    let s: serde_json::Value = serde_json::from_str(summary).unwrap_or_default();
    let outcomes = s["outcomes"]
        .as_object()
        .map(|o| {
            o.iter()
                .filter(|(_, t)| t["items"].as_i64().unwrap_or(0) > 0)
                .map(|(k, t)| (k.clone(), t["items"].as_i64().unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default();
    let balances = s["balances"]
        .as_array()
        .map(|b| {
            b.iter()
                .map(|r| {
                    let cur = r["currency"].as_str().unwrap_or("");
                    let m = |k: &str| r[k].as_i64().map_or("—".into(), |v| amount(v, cur));
                    format!(
                        "{cur}: ledger {}, statement {} ({}), drift {}",
                        m("ledger_balance_minor"),
                        m("statement_closing_minor"),
                        r["statement_date"].as_str().unwrap_or("no statement"),
                        m("drift_minor")
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    (outcomes, balances)
}

pub(crate) async fn show(
    State(app): State<Shared>,
    op: Operator,
    Path(id): Path<i64>,
    Query(q): Query<ItemsQuery>,
) -> Response {
    let tenant = op.tenant().to_string();
    let outcome = Some(q.outcome.trim().to_string()).filter(|o| !o.is_empty());
    let (after, o) = (q.after, outcome.clone());
    let res = page::read(&app, move |l| {
        async move {
            let Some(run) = l.recon_run(&tenant, id).await? else {
                return Ok(None);
            };
            let items = l
                .recon_items(&tenant, id, after, o.as_deref(), ITEMS_PAGE + 1)
                .await?;
            Ok(Some((run, items)))
        }
        .boxed()
    })
    .await;
    let (run, mut items) = match res {
        Ok(Some(r)) => r,
        Ok(None) => return page::not_found(&format!("no reconciliation {id} for this tenant")),
        Err(r) => return r,
    };
    let more = items.len() > ITEMS_PAGE as usize;
    items.truncate(ITEMS_PAGE as usize);
    let next = more.then(|| items.last()).flatten().map(|i| {
        let o = outcome
            .as_deref()
            .map_or(String::new(), |o| format!("outcome={o}&"));
        format!("/console/reconciliations/{id}?{o}after={}", i.item_no)
    });
    let (outcomes, balances) = summary_lines(&run.summary);
    page::render(&RunPage {
        chrome: Chrome::of(&op, "reconciliations"),
        run: run_row(&run),
        outcomes,
        balances,
        items: items.iter().map(item_line).collect(),
        outcome: outcome.unwrap_or_default(),
        next,
        corrected: q.corrected,
    })
}

/// A member of an item: a posting of ours, or an entry of theirs (or only its key, when
/// it is not a single posting or entry: a batch's key, say).
struct Member {
    key: String,
    amount: String,
    date: String,
    detail: String,
}

/// A posting of ours, its amount signed as the bank account sees it (as the items are):
/// money out of a mapped ledger account negative, into one positive.
fn ours(key: &str, p: Option<&Posting>, mapped: &[String]) -> Member {
    match p {
        Some(p) => Member {
            key: key.to_string(),
            amount: amount(
                if mapped.contains(&p.debit_account) {
                    -p.amount_minor
                } else {
                    p.amount_minor
                },
                &p.currency,
            ),
            date: p.effective_date.clone().unwrap_or_default(),
            detail: format!(
                "{} → {} · {} record {} (run {})",
                p.debit_account, p.credit_account, p.file_id, p.record_no, p.run_id
            ),
        },
        None => Member {
            key: key.to_string(),
            amount: String::new(),
            date: String::new(),
            detail: String::new(),
        },
    }
}

fn theirs(key: &str, e: Option<&EntryBrief>) -> Member {
    match e {
        Some(e) => Member {
            key: key.to_string(),
            amount: amount(
                if e.credit {
                    e.amount_minor
                } else {
                    -e.amount_minor
                },
                &e.currency,
            ),
            date: e
                .booking_date
                .clone()
                .or_else(|| e.value_date.clone())
                .unwrap_or_default(),
            detail: format!(
                "{} · bank reference {}",
                e.status,
                e.bank_ref.as_deref().unwrap_or("none")
            ),
        },
        None => Member {
            key: key.to_string(),
            amount: String::new(),
            date: String::new(),
            detail: String::new(),
        },
    }
}

#[derive(Template)]
#[template(path = "recon_item.html")]
struct ItemPage {
    chrome: Option<Chrome>,
    run_id: i64,
    account: String,
    item: ItemRow,
    row: ItemLine,
    criteria: Vec<String>,
    ours: Vec<Member>,
    theirs: Vec<Member>,
    correctable: bool,
}

/// An item and its members, read: the postings by their keys, the entries by theirs.
type ItemRead = Option<(ReconRun, ItemRow, Vec<Member>, Vec<Member>)>;

pub(crate) async fn item(
    State(app): State<Shared>,
    op: Operator,
    Path((id, no)): Path<(i64, i64)>,
) -> Response {
    let tenant = op.tenant().to_string();
    let res = page::read(&app, move |l| {
        async move {
            let Some(run) = l.recon_run(&tenant, id).await? else {
                return Ok::<ItemRead, _>(None);
            };
            let Some(it) = l.recon_item(&tenant, id, no).await? else {
                return Ok(None);
            };
            let mapped: Vec<String> = l
                .account_mappings(&tenant, Some(&run.bank_account))
                .await?
                .into_iter()
                .map(|m| m.ledger_account)
                .collect();
            let mut o = Vec::new();
            for k in &it.our_keys {
                let p = match k.split_once(':') {
                    Some((_, key)) => {
                        let found = l.lookup(&tenant, &Lookup::PostingKey(key.into())).await?;
                        found
                            .into_iter()
                            .find(|p| format!("{}:{}", p.operation, p.posting_key) == *k)
                    }
                    None => None,
                };
                o.push(ours(k, p.as_ref(), &mapped));
            }
            let mut t = Vec::new();
            for k in &it.their_keys {
                let e = l.entry_by_key(&tenant, &run.bank_account, k).await?;
                t.push(theirs(k, e.as_ref()));
            }
            Ok(Some((run, it, o, t)))
        }
        .boxed()
    })
    .await;
    let (run, it, ours, theirs) = match res {
        Ok(Some(r)) => r,
        Ok(None) => {
            return page::not_found(&format!(
                "no item {no} of reconciliation {id} for this tenant"
            ));
        }
        Err(r) => return r,
    };
    page::render(&ItemPage {
        chrome: Chrome::of(&op, "reconciliations"),
        run_id: id,
        account: run.bank_account.clone(),
        criteria: it.explanation.split("; ").map(str::to_string).collect(),
        correctable: super::correction::not_correctable(&run, &it).is_none(),
        row: item_line(&it),
        item: it,
        ours,
        theirs,
    })
}
