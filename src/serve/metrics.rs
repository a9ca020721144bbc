//! `GET /metrics`, Prometheus text (prometheus-client). Two kinds of figure:
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
