//! `GET /metrics`, in the format the scraper asks for (`Accept`): OpenMetrics 1.0 (what
//! Prometheus asks for first), else the Prometheus text format 0.0.4 (what `curl`, older
//! scrapers and `promtool check metrics` read). Two kinds of figure:
//! - this server's own counters since it started: idempotency decisions, unique-index
//!   rejections that got past the classification (target 0, docs/principles.md §7), the ingest
//!   duration histogram;
//! - the ledger's totals, read from the database at each scrape, so that every worker
//!   sharing one PostgreSQL reports the same truth: runs by kind and status, records by
//!   outcome, repeats by channel (a file's duplicates and conflicts, HTTP replays, webhook
//!   repeats).

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

type Labels = Vec<(String, String)>;

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// This server's counters (cheap to clone: each metric shares its value).
#[derive(Clone)]
pub(crate) struct Metrics {
    idempotency: Family<Labels, Counter>,
    unique_rejections: Counter,
    ingest_seconds: Histogram,
    webhooks: Family<Labels, Counter>,
    outbox_delivered: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            idempotency: Family::default(),
            unique_rejections: Counter::default(),
            // 10 ms to ~330 s.
            ingest_seconds: Histogram::new(
                prometheus_client::metrics::histogram::exponential_buckets(0.01, 2.0, 16),
            ),
            webhooks: Family::default(),
            outbox_delivered: Counter::default(),
        }
    }
}

use crate::serve::store::MetricTotals as LedgerTotals;

impl Metrics {
    /// `decision`: first, replayed, in_progress, mismatch, missing_key.
    pub(crate) fn idempotency(&self, decision: &str) {
        self.idempotency
            .get_or_create(&labels(&[("decision", decision)]))
            .inc();
    }
    pub(crate) fn unique_rejection(&self) {
        self.unique_rejections.inc();
    }

    /// The unique-index rejections this server has counted since it started.
    pub(crate) fn unique_rejections(&self) -> u64 {
        self.unique_rejections.get()
    }
    pub(crate) fn ingest_took(&self, seconds: f64) {
        self.ingest_seconds.observe(seconds);
    }
    /// `decision`: new, repeat, refused.
    pub(crate) fn webhook(&self, decision: &str) {
        self.webhooks
            .get_or_create(&labels(&[("decision", decision)]))
            .inc();
    }

    pub(crate) fn outbox_delivered(&self) {
        self.outbox_delivered.inc();
    }

    /// The text exposition of this server's counters and the ledger's totals.
    pub(crate) fn render(&self, totals: &LedgerTotals) -> String {
        let mut r = Registry::default();
        r.register(
            "clearledger_idempotency_requests",
            "Requests with an Idempotency-Key, by decision (this server since it started)",
            self.idempotency.clone(),
        );
        r.register(
            "clearledger_unique_index_rejections",
            "Inserts a unique index refused with an error instead of being classified (target 0)",
            self.unique_rejections.clone(),
        );
        r.register(
            "clearledger_ingest_duration_seconds",
            "Time of one HTTP upload's ingest, from its first byte parsed to its commit",
            self.ingest_seconds.clone(),
        );
        r.register(
            "clearledger_webhook_deliveries",
            "Webhook deliveries received, by decision (this server since it started)",
            self.webhooks.clone(),
        );
        r.register(
            "clearledger_outbox_deliveries",
            "Outbox messages delivered (answered 2xx) by this server since it started",
            self.outbox_delivered.clone(),
        );
        let runs = Family::<Labels, Gauge>::default();
        for (kind, status, n) in &totals.runs {
            runs.get_or_create(&labels(&[("kind", kind), ("status", status)]))
                .set(*n);
        }
        r.register(
            "clearledger_runs",
            "Runs in the ledger, by kind and status",
            runs,
        );
        let records = Family::<Labels, Gauge>::default();
        for (outcome, n) in &totals.records {
            records
                .get_or_create(&labels(&[("outcome", outcome)]))
                .set(*n);
        }
        r.register(
            "clearledger_records",
            "Records of completed runs, by outcome",
            records,
        );
        let repeats = Family::<Labels, Gauge>::default();
        for (channel, n) in &totals.repeats {
            repeats
                .get_or_create(&labels(&[("channel", channel)]))
                .set(*n);
        }
        r.register(
            "clearledger_repeats",
            "Repeats journaled, by channel: file (duplicates and conflicts), http_replay, webhook",
            repeats,
        );
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut out, &r);
        out
    }
}

/// The two expositions `GET /metrics` answers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exposition {
    OpenMetrics,
    Text004,
}

impl Exposition {
    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Exposition::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Exposition::Text004 => "text/plain; version=0.0.4; charset=utf-8",
        }
    }

    /// By `Accept` (RFC 9110 §12.5.1): OpenMetrics when it is weighted at least as high as
    /// plain text; the text format when there is no `Accept`, or OpenMetrics is not in it.
    pub(crate) fn negotiate(accept: Option<&str>) -> Exposition {
        let Some(accept) = accept else {
            return Exposition::Text004;
        };
        let (mut open, mut text) = (0.0f32, 0.0f32);
        for range in accept.split(',') {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or("").to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.strip_prefix("q="))
                .find_map(|q| q.parse::<f32>().ok())
                .unwrap_or(1.0);
            match media.as_str() {
                "application/openmetrics-text" => open = open.max(q),
                "text/plain" | "text/*" | "*/*" => text = text.max(q),
                _ => {}
            }
        }
        if open > 0.0 && open >= text {
            Exposition::OpenMetrics
        } else {
            Exposition::Text004
        }
    }
}

/// The Prometheus text format 0.0.4 of an OpenMetrics exposition: a counter's HELP and
/// TYPE name its samples (`…_total`), as that format has no family name apart from its
/// samples; no `# EOF`, no `# UNIT`.
pub(crate) fn to_text_004(open_metrics: &str) -> String {
    let counters: Vec<&str> = open_metrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(open_metrics.len());
    for line in open_metrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|p| {
            let rest = line.strip_prefix(p)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .contains(&name)
                .then(|| format!("{p}{name}_total {tail}"))
        });
        out.push_str(renamed.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scraper_gets_the_format_it_asks_for() {
        use Exposition::*;
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                          version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Exposition::negotiate(Some(prometheus)), OpenMetrics);
        assert_eq!(
            Exposition::negotiate(Some("text/plain;version=0.0.4")),
            Text004
        );
        assert_eq!(Exposition::negotiate(Some("*/*")), Text004);
        assert_eq!(Exposition::negotiate(None), Text004);
        assert_eq!(
            Exposition::negotiate(Some("text/plain;q=0.9, application/openmetrics-text")),
            OpenMetrics
        );
        assert_eq!(
            Exposition::negotiate(Some("application/openmetrics-text;q=0.2, text/plain")),
            Text004
        );
    }

    #[test]
    fn counters_are_named_by_their_samples_in_the_text_format() {
        let m = Metrics::default();
        m.idempotency("first");
        let open = m.render(&LedgerTotals::default());
        assert!(open.contains("# TYPE clearledger_idempotency_requests counter\n"));
        assert!(open.ends_with("# EOF\n"));
        let text = to_text_004(&open);
        assert!(text.contains(
            "# HELP clearledger_idempotency_requests_total Requests with an Idempotency-Key"
        ));
        assert!(text.contains("# TYPE clearledger_idempotency_requests_total counter\n"));
        assert!(text.contains("clearledger_idempotency_requests_total{decision=\"first\"} 1\n"));
        assert!(text.contains("# TYPE clearledger_ingest_duration_seconds histogram\n"));
        assert!(!text.contains("# EOF"));
    }
}
