//! `clearledger account map --bank-account A --ledger-account L`, `clearledger account
//! list [--bank-account A]`: which ledger accounts a bank account's statements are
//! reconciled with. The mappings are the tenant's, kept in the database.

use super::{GlobalOpts, exit, infra_error, out, require_tenant, with_ledger};
use crate::operator::{AccountMapping, check_account_name};
use clap::{Args, Subcommand};
use serde_json::json;

#[derive(Debug, Args)]
pub(crate) struct AccountArgs {
    #[command(subcommand)]
    pub command: AccountCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum AccountCommand {
    /// Map ledger accounts (`odfi:…`, `rdfi:…`, `acct:…`, as postings name them) to a bank
    /// account (as its statements name it: an IBAN, `:25:`, a BAI2 account number). A pair
    /// mapped before is left as it is and is not an error.
    Map {
        /// The bank account, as its statements name it.
        #[arg(long, value_name = "ACCOUNT")]
        bank_account: String,
        /// A ledger account; give it several times to map several.
        #[arg(long, value_name = "ACCOUNT", required = true)]
        ledger_account: Vec<String>,
        /// One JSON object per pair: bank_account, ledger_account, created_at, status
        /// (`added` or `exists`).
        #[arg(long)]
        json: bool,
    },
    /// The mappings, ordered by bank account, then ledger account.
    List {
        /// Only this bank account's.
        #[arg(long, value_name = "ACCOUNT")]
        bank_account: Option<String>,
        /// One JSON object per pair: bank_account, ledger_account, created_at.
        #[arg(long)]
        json: bool,
    },
}

pub(crate) async fn run(g: &GlobalOpts, a: &AccountArgs) -> u8 {
    match &a.command {
        AccountCommand::Map {
            bank_account,
            ledger_account,
            json,
        } => {
            // `NL34RABO0142623393 EUR`, as an MT940 `:25:` writes it, is the IBAN's account.
            let bank_account = crate::formats::statement::account_name(bank_account);
            map(g, bank_account, ledger_account, *json).await
        }
        AccountCommand::List { bank_account, json } => {
            with_ledger(g, async |ledger| {
                if let Some(code) = require_tenant(g, ledger).await {
                    return code;
                }
                match ledger
                    .account_mappings(
                        &g.tenant,
                        bank_account
                            .as_deref()
                            .map(crate::formats::statement::account_name),
                    )
                    .await
                {
                    Ok(ms) => print_list(&ms, *json),
                    Err(e) => infra_error(&e),
                }
            })
            .await
        }
    }
}

/// `account map`: each pair mapped (or found mapped before) and said.
async fn map(g: &GlobalOpts, bank_account: &str, ledger_account: &[String], json: bool) -> u8 {
    // Refused before the database is opened: a usage error needs no ledger.
    for (what, name) in std::iter::once(("bank", bank_account))
        .chain(ledger_account.iter().map(|l| ("ledger", l.as_str())))
    {
        if let Err(e) = check_account_name(name) {
            errln!("clearledger: invalid {what} account {name:?}: {e}");
            return exit::USAGE;
        }
    }
    with_ledger(g, async |ledger| {
        if let Some(code) = require_tenant(g, ledger).await {
            return code;
        }
        let now = chrono::Utc::now();
        let mut res = Ok(());
        for l in ledger_account {
            let (m, added) = match ledger.map_account(&g.tenant, bank_account, l, now).await {
                Ok(x) => x,
                Err(e) => return infra_error(&e),
            };
            res = res.and_then(|()| print_mapped(g, &m, added, json));
        }
        match res {
            Ok(()) => exit::OK,
            Err(e) => out::stdout_failed(&e, exit::OK),
        }
    })
    .await
}

fn print_mapped(
    g: &GlobalOpts,
    m: &AccountMapping,
    added: bool,
    json: bool,
) -> std::io::Result<()> {
    let status = if added { "added" } else { "exists" };
    if json {
        outln!(
            "{}",
            json!({"bank_account": m.bank_account, "ledger_account": m.ledger_account,
                   "created_at": m.created_at, "status": status})
        )
    } else if g.quiet {
        Ok(())
    } else if added {
        outln!("{} -> {}: mapped", m.bank_account, m.ledger_account)
    } else {
        outln!(
            "{} -> {}: mapped before ({}); nothing changed",
            m.bank_account,
            m.ledger_account,
            m.created_at
        )
    }
}

fn print_list(ms: &[AccountMapping], json: bool) -> u8 {
    let res = (|| {
        if json {
            for m in ms {
                outln!("{}", serde_json::to_string(m).unwrap_or_default())?;
            }
        } else {
            let w = ms
                .iter()
                .map(|m| m.bank_account.len())
                .max()
                .unwrap_or(0)
                .max("bank account".len());
            let v = ms
                .iter()
                .map(|m| m.ledger_account.len())
                .max()
                .unwrap_or(0)
                .max("ledger account".len());
            outln!("{:<w$}  {:<v$}  mapped", "bank account", "ledger account")?;
            for m in ms {
                outln!(
                    "{:<w$}  {:<v$}  {}",
                    m.bank_account,
                    m.ledger_account,
                    m.created_at
                )?;
            }
        }
        Ok(())
    })();
    match res {
        Ok(()) => exit::OK,
        Err(e) => out::stdout_failed(&e, exit::OK),
    }
}
