//! `/console/statements`: the tenant's accounts with statements; for one account its
//! balance chain in date order — each statement's opening and closing, its entries, and
//! the breaks marked: a closing that its opening and entries do not add up to, an opening
//! that is not the previous closing.

use super::page::{self, Chrome, amount};
use super::session::Operator;
use super::store::AccountStatements;
use crate::serve::Shared;
use crate::statements::StoredStatement;
use askama::Template;
use axum::extract::{Query, State};
use axum::response::Response;
use futures_util::FutureExt;

/// A statement as a link of the chain.
struct Link {
    date: String,
    id: String,
    kind: String,
    format: String,
    opening: String,
    closing: String,
    entries: i64,
    copy: bool,
    run_id: i64,
    /// Empty when the balances add up; else what broke, expected and found.
    broken: String,
}

fn link(s: &StoredStatement) -> Link {
    let cur = s
        .balance_currency
        .clone()
        .or_else(|| s.currency.clone())
        .unwrap_or_default();
    let bal = |m: Option<i64>| m.map_or(String::new(), |m| amount(m, &cur));
    let broken = match s.balance_break.as_deref() {
        None => String::new(),
        Some(kind) => {
            let what = if kind == "chain" {
                "the opening is not the previous closing"
            } else {
                "opening + entries is not the closing"
            };
            format!(
                "{what}: expected {}, the statement says {}",
                bal(s.balance_expected_minor),
                bal(s.balance_found_minor)
            )
        }
    };
    Link {
        date: s.date.clone().unwrap_or_default(),
        id: match &s.sequence {
            Some(q) => format!("{} / {q}", s.stmt_id),
            None => s.stmt_id.clone(),
        },
        kind: s.kind.clone(),
        format: s.format.clone(),
        opening: bal(s.opening_minor),
        closing: bal(s.closing_minor),
        entries: s.entries,
        copy: s.copy,
        run_id: s.run_id,
        broken,
    }
}

#[derive(Template)]
#[template(path = "statements.html")]
struct StatementsPage {
    chrome: Option<Chrome>,
    accounts: Vec<AccountStatements>,
    account: String,
    chain: Vec<Link>,
}

#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct StatementsQuery {
    #[serde(default)]
    account: String,
}

pub(crate) async fn page(
    State(app): State<Shared>,
    op: Operator,
    Query(q): Query<StatementsQuery>,
) -> Response {
    let tenant = op.tenant().to_string();
    let account = q.account.trim().to_string();
    let a = account.clone();
    let res = page::read(&app, move |l| {
        async move {
            let accounts = l.statement_accounts(&tenant).await?;
            let chain = if a.is_empty() {
                Vec::new()
            } else {
                l.statements(&tenant, Some(&a)).await?
            };
            Ok((accounts, chain))
        }
        .boxed()
    })
    .await;
    let (accounts, chain) = match res {
        Ok(r) => r,
        Err(r) => return r,
    };
    page::render(&StatementsPage {
        chrome: Chrome::of(&op, "statements"),
        accounts,
        account,
        chain: chain.iter().map(link).collect(),
    })
}
