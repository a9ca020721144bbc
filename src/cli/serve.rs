//! `clearledger serve --listen ADDR`: the HTTP service (src/serve). Runs until SIGTERM or
//! SIGINT, then finishes the requests in flight and exits 0.

use super::{GlobalOpts, exit, infra_error};
use crate::serve::{ServeConfig, serve, shutdown_signal};
use clap::Args;
use std::time::Duration;

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on (port 0: any free port; the address bound is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Ledger connections open at once (SQLite: writers still take turns on its one
    /// write lock).
    #[arg(long, default_value_t = 8)]
    pub connections: usize,
    /// How long a stored response answers a repeat of its Idempotency-Key: a number
    /// with s, m, h or d (24h). After it, the same file again is a new run whose every
    /// record is a duplicate.
    #[arg(long, default_value = "24h", value_parser = parse_duration)]
    pub idempotency_window: Duration,
    /// The largest upload accepted, in bytes (413 beyond).
    #[arg(long, default_value_t = 4 * 1024 * 1024 * 1024)]
    pub max_upload_bytes: u64,
    /// The longest pause in an upload's body, and the longest a read may take (408).
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub request_timeout: u64,
    /// The time a client has to send a request's header fields; a connection that takes
    /// longer (a slow or stalled client) is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub header_timeout: u64,
    /// The time an upload's whole body may take to arrive, however steadily it comes (408
    /// beyond): a client trickling a byte a minute cannot hold a connection for ever.
    #[arg(long, value_name = "SECONDS", default_value_t = 900,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub body_deadline: u64,
    /// Where uploads wait while they are ingested (the system's temporary directory).
    #[arg(long)]
    pub spool_dir: Option<std::path::PathBuf>,
    /// A webhook event inserted but not yet applied for this long (a crash between the
    /// two) is applied by the sweeper.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub sweep_after: u64,
    /// Serve /metrics on this address only (e.g. an interface the monitoring network
    /// reaches), not beside the API: it needs no API key and carries ledger-wide totals.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,
    /// How long a console session lasts from its sign-in (the browser console at
    /// /console/): a number with s, m, h or d, at most 30d. Signing out, or revoking the
    /// API key signed in with, ends it sooner.
    #[arg(long, default_value = "8h", value_parser = parse_session)]
    pub console_session: Duration,
    /// Print the address bound as one JSON object on standard output
    /// (`{"listening":"127.0.0.1:8080"}`).
    #[arg(long)]
    pub json: bool,
}

/// `90s`, `15m`, `24h`, `7d`, or plain seconds.
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let (num, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("expected a number with s, m, h or d (e.g. 24h); found {s:?}"))?;
    let secs = match unit {
        "s" => n,
        "m" => n.saturating_mul(60),
        "h" => n.saturating_mul(3600),
        "d" => n.saturating_mul(86_400),
        _ => {
            return Err(format!(
                "expected a unit s, m, h or d; found {unit:?} in {s:?}"
            ));
        }
    };
    if secs == 0 {
        return Err("the window must be at least one second".into());
    }
    Ok(Duration::from_secs(secs))
}

/// A console session's length: a duration of at most 30 days (a session is a person at a
/// screen, not a credential to keep).
fn parse_session(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d > Duration::from_secs(30 * 86_400) {
        return Err(format!("a console session lasts at most 30d; found {s:?}"));
    }
    Ok(d)
}

pub(crate) async fn run(g: &GlobalOpts, a: &ServeArgs) -> u8 {
    let listener = match tokio::net::TcpListener::bind(&a.listen).await {
        Ok(l) => l,
        Err(e) => {
            errln!("clearledger: cannot listen on {}: {e}", a.listen);
            return exit::CONFIG;
        }
    };
    let addr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => {
            errln!("clearledger: cannot read the address bound: {e}");
            return exit::INFRASTRUCTURE;
        }
    };
    let metrics = match &a.metrics_listen {
        None => None,
        Some(m) => match tokio::net::TcpListener::bind(m).await {
            Ok(l) => Some(l),
            Err(e) => {
                errln!("clearledger: cannot listen on {m} (--metrics-listen): {e}");
                return exit::CONFIG;
            }
        },
    };
    let metrics_addr = metrics
        .as_ref()
        .and_then(|l| l.local_addr().ok())
        .map(|a| a.to_string());
    let config = ServeConfig {
        db_url: g.db_url(),
        db: g.db_options(),
        connections: a.connections,
        idempotency_window: a.idempotency_window,
        max_upload_bytes: a.max_upload_bytes,
        request_timeout: Duration::from_secs(a.request_timeout.max(1)),
        header_timeout: Duration::from_secs(a.header_timeout),
        body_deadline: Duration::from_secs(a.body_deadline),
        spool_dir: a.spool_dir.clone(),
        sweep_after: Duration::from_secs(a.sweep_after),
        sweep_interval: Duration::from_secs(a.sweep_after.clamp(1, 10)),
        outbox_interval: Duration::from_millis(500),
        console_session: a.console_session,
    };
    let said = if a.json {
        outln!(
            "{}",
            serde_json::json!({ "listening": addr.to_string(), "metrics": metrics_addr })
        )
    } else {
        errln!(info: "clearledger: listening on http://{addr} (database {}); the console: http://{addr}/console/", crate::ledger::redact_url(&config.db_url));
        Ok(())
    };
    if let Err(e) = said {
        return super::out::stdout_failed(&e, exit::INFRASTRUCTURE);
    }
    match serve(config, listener, metrics, shutdown_signal()).await {
        Ok(()) => {
            errln!(info: "clearledger: stopped; every request in flight finished");
            exit::OK
        }
        Err(e) => infra_error(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn windows_are_read_with_their_unit() {
        assert_eq!(parse_duration("24h"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(604_800)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("1w").is_err());
        assert!(parse_duration("h").is_err());
    }
}
