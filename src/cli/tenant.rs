//! `clearledger tenant add NAME`, `clearledger tenant list`: the tenants a ledger knows.
//! Every other command refuses a `--tenant` that is not one of them (`require_tenant`).

use super::{GlobalOpts, exit, infra_error, out, with_ledger};
use crate::operator::{Tenant, TenantName};
use clap::{Args, Subcommand};
use serde_json::json;

#[derive(Debug, Args)]
pub(crate) struct TenantArgs {
    #[command(subcommand)]
    pub command: TenantCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum TenantCommand {
    /// Add a tenant (1 to 64 characters of A-Z a-z 0-9 . _ -). Adding one that exists
    /// already changes nothing and is not an error.
    Add {
        name: String,
        /// One JSON object: name, created_at, status (`added` or `exists`).
        #[arg(long)]
        json: bool,
    },
    /// Every known tenant, oldest first.
    List {
        /// One JSON object per tenant: name, created_at.
        #[arg(long)]
        json: bool,
    },
}

pub(crate) async fn run(g: &GlobalOpts, a: &TenantArgs) -> u8 {
    match &a.command {
        TenantCommand::Add { name, json } => {
            // Refused before the database is opened: a usage error needs no ledger.
            let name = match TenantName::parse(name) {
                Ok(n) => n,
                Err(e) => {
                    errln!("clearledger: invalid tenant name {name:?}: {e}");
                    return exit::USAGE;
                }
            };
            with_ledger(g, async |ledger| {
                match ledger.add_tenant(&name, chrono::Utc::now()).await {
                    Ok((t, added)) => print_added(g, &t, added, *json),
                    Err(e) => infra_error(&e),
                }
            })
            .await
        }
        TenantCommand::List { json } => {
            with_ledger(g, async |ledger| match ledger.known_tenants().await {
                Ok(ts) => print_list(&ts, *json),
                Err(e) => infra_error(&e),
            })
            .await
        }
    }
}

fn print_added(g: &GlobalOpts, t: &Tenant, added: bool, json: bool) -> u8 {
    let status = if added { "added" } else { "exists" };
    let res = if json {
        outln!(
            "{}",
            json!({"name": t.name, "created_at": t.created_at, "status": status})
        )
    } else if g.quiet {
        Ok(())
    } else if added {
        outln!("tenant {:?} added", t.name)
    } else {
        outln!(
            "tenant {:?} already exists (created {}); nothing changed",
            t.name,
            t.created_at
        )
    };
    match res {
        Ok(()) => exit::OK,
        Err(e) => out::stdout_failed(&e, exit::OK),
    }
}

fn print_list(tenants: &[Tenant], json: bool) -> u8 {
    let res = (|| {
        if json {
            for t in tenants {
                outln!("{}", serde_json::to_string(t).unwrap_or_default())?;
            }
        } else {
            let w = tenants.iter().map(|t| t.name.len()).max().unwrap_or(0);
            outln!("{:<w$}  created", "tenant")?;
            for t in tenants {
                outln!("{:<w$}  {}", t.name, t.created_at)?;
            }
        }
        Ok(())
    })();
    match res {
        Ok(()) => exit::OK,
        Err(e) => out::stdout_failed(&e, exit::OK),
    }
}
