//! `clearledger webhook add PROVIDER --secret S | list | endpoint URL --secret S`: who may
//! send events to `serve` (each provider named once in the ledger, bound to --tenant), and
//! where --tenant's notifications (the outbox) are delivered.

use super::{GlobalOpts, exit, infra_error, out, require_tenant, with_ledger};
use crate::ledger::Ledger;
use clap::{Args, Subcommand};
use serde_json::json;

#[derive(Debug, Args)]
pub(crate) struct WebhookArgs {
    #[command(subcommand)]
    pub command: WebhookCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum WebhookCommand {
    /// Accept events at POST /v1/webhooks/PROVIDER for --tenant, signed with SECRET
    /// (Standard Webhooks; a `whsec_` secret is base64 after its prefix). Adding it again
    /// with another secret rotates the secret.
    Add {
        provider: String,
        #[arg(long)]
        secret: String,
        #[arg(long)]
        json: bool,
    },
    /// The providers of --tenant.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Deliver --tenant's notifications (a run completed, needs attention, was rejected)
    /// to URL, signed with SECRET; replaces the endpoint set before.
    Endpoint {
        url: String,
        #[arg(long)]
        secret: String,
        #[arg(long)]
        json: bool,
    },
}

/// 1 to 64 characters of A-Z a-z 0-9 . _ - (a path segment as it is).
fn provider_ok(p: &str) -> bool {
    (1..=64).contains(&p.len())
        && p.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

pub(crate) async fn run(g: &GlobalOpts, a: &WebhookArgs) -> u8 {
    if let Some(code) = check_args(&a.command) {
        return code;
    }
    with_ledger(g, async |ledger| {
        if let Some(code) = require_tenant(g, ledger).await {
            return code;
        }
        let now = chrono::Utc::now();
        let printed = match &a.command {
            WebhookCommand::Add {
                provider,
                secret,
                json,
            } => match add_provider(g, ledger, (provider, secret), *json, now).await {
                Ok(printed) => printed,
                Err(code) => return code,
            },
            WebhookCommand::List { json } => match ledger.webhook_providers(&g.tenant).await {
                Ok(list) => (|| {
                    for p in &list {
                        if *json {
                            outln!("{}", serde_json::to_string(p).unwrap_or_default())?;
                        } else {
                            outln!("{}  {}  {}", p.provider, p.tenant, p.created_at)?;
                        }
                    }
                    Ok(())
                })(),
                Err(e) => return infra_error(&e),
            },
            WebhookCommand::Endpoint { url, secret, json } => {
                match ledger
                    .set_notify_endpoint(&g.tenant, url, secret, now)
                    .await
                {
                    Ok(()) if *json => outln!("{}", json!({"tenant": g.tenant, "url": url})),
                    Ok(()) => outln!("notifications of tenant {:?} go to {url}", g.tenant),
                    Err(e) => return infra_error(&e),
                }
            }
        };
        match printed {
            Ok(()) => exit::OK,
            Err(e) => out::stdout_failed(&e, exit::OK),
        }
    })
    .await
}

/// Refused before the database is opened: a provider name, a secret or an endpoint that
/// cannot be used is a usage error.
fn check_args(command: &WebhookCommand) -> Option<u8> {
    if let WebhookCommand::Add { provider, .. } = command
        && !provider_ok(provider)
    {
        errln!(
            "clearledger: invalid provider name {provider:?}: 1 to 64 characters of A-Z a-z 0-9 . _ -"
        );
        return Some(exit::USAGE);
    }
    if let WebhookCommand::Add { secret, .. } | WebhookCommand::Endpoint { secret, .. } = command
        && !crate::serve::webhooks::secret_ok(secret)
    {
        errln!(
            "clearledger: invalid secret: a whsec_ secret is base64 after its prefix (Standard \
             Webhooks); any other non-empty string is used as it is"
        );
        return Some(exit::USAGE);
    }
    if let WebhookCommand::Endpoint { url, .. } = command
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        errln!("clearledger: invalid endpoint {url:?}: expected an http:// or https:// URL");
        return Some(exit::USAGE);
    }
    None
}

/// `webhook add`: the provider added (or found the tenant's already) and said; the exit
/// code when it is another tenant's, or the database failed.
async fn add_provider(
    g: &GlobalOpts,
    ledger: &mut Ledger,
    (provider, secret): (&str, &str),
    json: bool,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<std::io::Result<()>, u8> {
    match ledger
        .add_webhook_provider(&g.tenant, provider, secret, now)
        .await
    {
        Ok(Some(p)) if json => Ok(outln!(
            "{}",
            json!({"provider": p.provider, "tenant": p.tenant, "created_at": p.created_at})
        )),
        Ok(Some(p)) => Ok(outln!(
            "webhook provider {:?} accepted for tenant {:?} at POST /v1/webhooks/{}",
            p.provider,
            p.tenant,
            p.provider
        )),
        Ok(None) => {
            errln!(
                "clearledger: the webhook provider {provider:?} belongs to another tenant; \
                 choose another name"
            );
            Err(exit::USAGE)
        }
        Err(e) => Err(infra_error(&e)),
    }
}
