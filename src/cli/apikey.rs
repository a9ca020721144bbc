//! `clearledger apikey create | list | revoke`: the keys `clearledger serve` accepts, each
//! bound to one tenant (`--tenant`). A key is printed once, when it is created; the ledger
//! keeps only its SHA-256 and its public prefix (`clk_<prefix>_…`).

use super::{GlobalOpts, exit, infra_error, out, require_tenant, with_ledger};
use crate::serve::store::{ApiKey, NewApiKey};
use clap::{Args, Subcommand};
use serde_json::json;

#[derive(Debug, Args)]
pub(crate) struct ApiKeyArgs {
    #[command(subcommand)]
    pub command: ApiKeyCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ApiKeyCommand {
    /// Create a key for --tenant and print it (the only time it is shown).
    Create {
        /// A note on whom the key is for (shown by `apikey list`).
        #[arg(long)]
        label: Option<String>,
        /// One JSON object: key, prefix, tenant, label, created_at.
        #[arg(long)]
        json: bool,
    },
    /// The keys of --tenant (every tenant's with --all), oldest first; never the keys
    /// themselves.
    List {
        #[arg(long)]
        all: bool,
        /// One JSON object per key.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a key, named by its prefix (or the whole key): requests with it are refused
    /// with 401 from then on. Revoking a revoked key changes nothing.
    Revoke {
        prefix: String,
        #[arg(long)]
        json: bool,
    },
}

pub(crate) async fn run(g: &GlobalOpts, a: &ApiKeyArgs) -> u8 {
    with_ledger(g, async |ledger| match &a.command {
        ApiKeyCommand::Create { label, json } => {
            if let Some(code) = require_tenant(g, ledger).await {
                return code;
            }
            match ledger
                .create_api_key(&g.tenant, label.as_deref(), chrono::Utc::now())
                .await
            {
                Ok(k) => print_created(g, &k, *json),
                Err(e) => infra_error(&e),
            }
        }
        ApiKeyCommand::List { all, json } => {
            if !*all && let Some(code) = require_tenant(g, ledger).await {
                return code;
            }
            let tenant = (!*all).then_some(g.tenant.as_str());
            match ledger.api_keys(tenant).await {
                Ok(keys) => print_list(&keys, *json),
                Err(e) => infra_error(&e),
            }
        }
        ApiKeyCommand::Revoke { prefix, json } => {
            match ledger.revoke_api_key(prefix, chrono::Utc::now()).await {
                Ok(Some(k)) => print_revoked(g, &k, *json),
                Ok(None) => {
                    errln!("clearledger: no API key with prefix {prefix:?}");
                    exit::NOT_FOUND
                }
                Err(e) => infra_error(&e),
            }
        }
    })
    .await
}

/// The new key on stdout (alone, or in its JSON object), said once.
fn print_created(g: &GlobalOpts, k: &NewApiKey, json: bool) -> u8 {
    let res = if json {
        outln!(
            "{}",
            json!({"key": k.key, "prefix": k.info.prefix, "tenant": k.info.tenant,
                   "label": k.info.label, "created_at": k.info.created_at})
        )
    } else {
        outln!("{}", k.key).and_then(|()| {
            if !g.quiet {
                errln!(info:
                    "clearledger: API key {} created for tenant {:?}; it is shown this once \
                     (the ledger keeps only its hash)",
                    k.info.prefix,
                    k.info.tenant
                );
            }
            Ok(())
        })
    };
    match res {
        Ok(()) => exit::OK,
        Err(e) => out::stdout_failed(&e, exit::OK),
    }
}

fn print_revoked(g: &GlobalOpts, k: &ApiKey, json: bool) -> u8 {
    let res = if json {
        outln!("{}", serde_json::to_string(k).unwrap_or_default())
    } else if g.quiet {
        Ok(())
    } else {
        outln!(
            "API key {} of tenant {:?} revoked at {}",
            k.prefix,
            k.tenant,
            k.revoked_at.as_deref().unwrap_or("-")
        )
    };
    match res {
        Ok(()) => exit::OK,
        Err(e) => out::stdout_failed(&e, exit::OK),
    }
}

fn print_list(keys: &[ApiKey], json: bool) -> u8 {
    let res = (|| {
        if json {
            for k in keys {
                outln!("{}", serde_json::to_string(k).unwrap_or_default())?;
            }
        } else {
            outln!("prefix        tenant  created                      revoked  label")?;
            for k in keys {
                outln!(
                    "{}  {}  {}  {}  {}",
                    k.prefix,
                    k.tenant,
                    k.created_at,
                    k.revoked_at.as_deref().unwrap_or("-"),
                    k.label.as_deref().unwrap_or("")
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
