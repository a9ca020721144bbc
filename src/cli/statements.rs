//! `clearledger statements`: the bank statements recorded, with their balances and their
//! continuity (each final statement's opening balance against the previous one's closing,
//! per account).

use super::{GlobalOpts, exit, infra_error, out, require_tenant, with_ledger};
use crate::money::format_amount;
use crate::statements::{StoredStatement, continuity};
use clap::Args;
use serde_json::json;

#[derive(Debug, Args)]
pub(crate) struct StatementsArgs {
    /// Only this account (IBAN, account id, BAI2 account number, MT940 `:25:`).
    #[arg(long, value_name = "ACCOUNT")]
    pub account: Option<String>,
    /// One JSON object per statement.
    #[arg(long)]
    pub json: bool,
}

pub(crate) async fn run(g: &GlobalOpts, a: &StatementsArgs) -> u8 {
    with_ledger(g, async |ledger| {
        if let Some(code) = require_tenant(g, ledger).await {
            return code;
        }
        let account = a
            .account
            .as_deref()
            .map(crate::formats::statement::account_name);
        let list = match ledger.statements(&g.tenant, account).await {
            Ok(l) => l,
            Err(e) => return infra_error(&e),
        };
        let gaps = continuity(&list);
        let money = |m: Option<i64>, c: &Option<String>| match (m, c) {
            (Some(m), Some(c)) => format_amount(m, c),
            (Some(m), None) => m.to_string(),
            _ => "-".to_string(),
        };
        let mut res = Ok(());
        for (s, gap) in list.iter().zip(&gaps) {
            res = if a.json {
                let mut v = serde_json::to_value(s).unwrap_or_default();
                v["continuity"] = json!(gap.as_deref().unwrap_or("ok"));
                v["balance_difference_minor"] = json!(difference(s));
                outln!("{v}")
            } else {
                outln!(
                    "{} {} {} {} seq {} of {}: opening {}, closing {}, {} entries (run {}){}{}",
                    s.account,
                    s.kind,
                    s.format,
                    s.stmt_id,
                    s.sequence.as_deref().unwrap_or("-"),
                    s.date.as_deref().unwrap_or("-"),
                    money(s.opening_minor, &s.balance_currency),
                    money(s.closing_minor, &s.balance_currency),
                    s.entries,
                    s.run_id,
                    unbalanced(s, &money),
                    gap.as_ref()
                        .map(|g| format!("; continuity: {g}"))
                        .unwrap_or_default()
                )
            };
            if res.is_err() {
                break;
            }
        }
        match res {
            Err(e) => out::stdout_failed(&e, exit::OK),
            // A break in an account's chain, or a statement whose balances do not add
            // up, needs an operator's eye.
            Ok(()) if gaps.iter().any(Option::is_some) => exit::ATTENTION,
            Ok(()) if list.iter().any(|s| s.balance_break.is_some()) => exit::ATTENTION,
            Ok(()) => exit::OK,
        }
    })
    .await
}

/// Found minus expected, when the statement is recorded unbalanced.
fn difference(s: &StoredStatement) -> Option<i64> {
    Some(
        s.balance_found_minor?
            .saturating_sub(s.balance_expected_minor?),
    )
}

/// `; UNBALANCED (closing): expected X, found Y, difference Z`, or nothing.
fn unbalanced(
    s: &StoredStatement,
    money: &dyn Fn(Option<i64>, &Option<String>) -> String,
) -> String {
    let Some(kind) = &s.balance_break else {
        return String::new();
    };
    let c = &s.balance_currency;
    format!(
        "; UNBALANCED ({kind}): expected {}, found {}, difference {}",
        money(s.balance_expected_minor, c),
        money(s.balance_found_minor, c),
        money(difference(s), c)
    )
}
