//! Webhook intake and the outbox (migrations/*/0012_webhooks.sql,
//! docs/principles.md §12).
//!
//! Intake is insert-first: [`Ledger::receive_event`] inserts the raw event behind its
//! unique (tenant, provider, event id, event type) and commits; the answer is given at
//! once, a repeat included (journaled in `webhook_repeats`). [`Ledger::apply_event`] then
//! applies it in a transaction of its own: it claims the event (`processed_at IS NULL`),
//! moves the posting's status with a conditional update (`… WHERE status IN (allowed
//! predecessors)`: zero rows changed means nothing to do), and sets `processed_at` in the
//! same transaction. An event inserted but never applied (the process died between the
//! two) is found by [`Ledger::unprocessed_events`], the sweeper's query, and finished.
//!
//! The outbox: [`Ledger::commit`] writes a run's notification in the run's own
//! transaction when the tenant has an endpoint; `serve` delivers it at least once under its
//! stable `webhook-id`.

use crate::ledger::args;
use crate::ledger::backend::Begin;
use crate::ledger::store::{Columns, bad, checked, col};
use crate::ledger::ts;
use crate::ledger::{CommitHook, During, HookFuture, Ledger, LedgerError, Lookup, Result, RunInfo};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// How long an event naming a posting the ledger does not hold waits for it (its file may
/// be uploaded after the event came), tried again with backoff up to an hour apart.
pub(super) const WAIT_DAYS: i64 = 7;

/// Attempts that fail (an error, rolled back: not `waiting`) before an event ends
/// `failed`.
pub(super) const APPLY_ATTEMPTS_MAX: i64 = 10;

enum Attempt {
    /// Applied already (by another worker, or given up).
    Done,
    GaveUp(Applied),
    Go,
}

/// The statuses a posting moves through. No row in `posting_status` means `posted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PostingStatus {
    Posted,
    Settled,
    Returned,
    Rejected,
}

impl PostingStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PostingStatus::Posted => "posted",
            PostingStatus::Settled => "settled",
            PostingStatus::Returned => "returned",
            PostingStatus::Rejected => "rejected",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "posted" => PostingStatus::Posted,
            "settled" => PostingStatus::Settled,
            "returned" => PostingStatus::Returned,
            "rejected" => PostingStatus::Rejected,
            _ => return None,
        })
    }
    /// The status an event type moves a posting to: `payment.settled`,
    /// `payment.returned`, `payment.rejected`.
    pub fn of_event(event_type: &str) -> Option<Self> {
        Some(match event_type {
            "payment.settled" => PostingStatus::Settled,
            "payment.returned" => PostingStatus::Returned,
            "payment.rejected" => PostingStatus::Rejected,
            _ => return None,
        })
    }
    /// The statuses a posting may move to `self` from: a settled payment can still be
    /// returned; a returned or rejected one is final.
    pub fn allowed_from(self) -> &'static [PostingStatus] {
        match self {
            PostingStatus::Posted => &[],
            PostingStatus::Settled => &[PostingStatus::Posted],
            PostingStatus::Returned => &[PostingStatus::Posted, PostingStatus::Settled],
            PostingStatus::Rejected => &[PostingStatus::Posted],
        }
    }
}

/// A provider as registered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WebhookProvider {
    pub provider: String,
    pub tenant: String,
    #[serde(skip)]
    pub secret: String,
    pub created_at: String,
}

/// What a delivery was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// First seen: inserted, to be applied.
    New { event_no: i64 },
    /// Seen before (journaled); `same_payload` false when the body differs from the first.
    Repeat { event_no: i64, same_payload: bool },
}

/// What applying an event did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Applied {
    pub event_no: i64,
    /// `applied`, `nothing_to_do` (the posting's status was not one it moves from),
    /// `waiting` (no such posting yet: tried again later, for [`WAIT_DAYS`]),
    /// `no_such_posting` (none after that), `ambiguous`, `ignored` (an event type that moves nothing),
    /// `invalid` (no identifier of a posting in its data).
    pub outcome: &'static str,
    pub detail: String,
    pub posting_id: Option<i64>,
}

/// A tenant's notification endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotifyEndpoint {
    pub tenant: String,
    pub url: String,
    pub secret: String,
}

/// An outbox message due for delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxMessage {
    pub message_id: i64,
    pub tenant: String,
    pub webhook_id: String,
    pub event_type: String,
    pub payload: Vec<u8>,
    pub created_at: String,
    pub attempts: i64,
}

/// The event's payload as clearledger reads it: `{"type": …, "data": {…}}` (Standard
/// Webhooks' shape); `data` names the posting by one of `posting_key`, `uetr`,
/// `end_to_end_id`, `trace_number`.
#[derive(Debug, serde::Deserialize)]
struct EventBody {
    #[serde(default)]
    data: EventData,
}

#[derive(Debug, Default, serde::Deserialize)]
struct EventData {
    posting_key: Option<String>,
    uetr: Option<String>,
    end_to_end_id: Option<String>,
    trace_number: Option<String>,
}

/// The posting an event's data names: by posting key, UETR, end-to-end id or trace
/// number, the first given; `None` when it names none.
fn event_lookup(payload: &[u8]) -> Option<Lookup> {
    let data = serde_json::from_slice::<EventBody>(payload)
        .map(|b| b.data)
        .unwrap_or_default();
    // A blank identifier, or NOTPROVIDED, identifies nothing (docs/principles.md §3).
    let given = |v: Option<String>| {
        v.as_deref()
            .and_then(crate::keys::provided)
            .map(str::to_string)
    };
    if let Some(k) = given(data.posting_key) {
        Some(Lookup::PostingKey(k))
    } else if let Some(u) = given(data.uetr) {
        Some(Lookup::Uetr(u))
    } else if let Some(e) = given(data.end_to_end_id) {
        Some(Lookup::EndToEndId(e))
    } else {
        given(data.trace_number).map(Lookup::TraceNumber)
    }
}

/// A `webhook_providers` row (provider, tenant, secret, created_at).
/// A posting's status as `posting_status` holds it.
const STATUS: Columns = Columns(&["status"]);

/// A webhook provider as `webhook_provider(s)` read it.
const PROVIDER: Columns = Columns(&["provider", "tenant", "secret", "created_at"]);

fn provider_of(r: &crate::ledger::Row) -> Result<WebhookProvider> {
    Ok(WebhookProvider {
        provider: r.text(col!(PROVIDER, "provider"))?,
        tenant: r.text(col!(PROVIDER, "tenant"))?,
        secret: r.text(col!(PROVIDER, "secret"))?,
        created_at: r.text(col!(PROVIDER, "created_at"))?,
    })
}

fn sha256_hex(b: &[u8]) -> String {
    hex::encode(Sha256::digest(b))
}

/// The commit hook that notifies: a run of a tenant with a notification endpoint writes
/// its message to the outbox in its own transaction (docs/principles.md §12), sent after
/// the commit. Every program that runs on a ledger registers it ([`notify_on_commit`]).
pub(super) struct OutboxHook;

impl CommitHook for OutboxHook {
    fn before_commit<'a>(
        &'a mut self,
        ledger: &'a mut Ledger,
        tenant: &'a str,
        run_id: i64,
    ) -> HookFuture<'a> {
        Box::pin(async move {
            let notify = ledger
                .store()
                .query_opt(
                    "SELECT 1 FROM notify_endpoints WHERE tenant = $1",
                    &args![tenant],
                )
                .await
                .during("reading the notification endpoint")?
                .is_some();
            if !notify {
                return Ok(());
            }
            let run = ledger.committing_run(tenant, run_id).await?;
            ledger
                .write_outbox(&run, Utc::now())
                .await
                .during("writing the run's notification to the outbox")
        })
    }
}

/// Registers the outbox's commit hook on `ledger`: from now on its runs notify.
pub(crate) fn notify_on_commit(ledger: &mut Ledger) {
    ledger.on_every_run(Box::new(OutboxHook));
}

impl Ledger {
    /// Registers `provider` for `tenant` with its signing secret, or replaces the secret of
    /// a provider the tenant has (a rotation). `Ok(None)`: the name is another tenant's.
    pub async fn add_webhook_provider(
        &mut self,
        tenant: &str,
        provider: &str,
        secret: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<WebhookProvider>> {
        let at = ts(&now);
        self.store()
            .execute(
                "INSERT INTO webhook_providers (provider, tenant, secret, created_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (provider) DO UPDATE SET secret = excluded.secret \
                 WHERE webhook_providers.tenant = excluded.tenant",
                &args![provider, tenant, secret, at.as_str()],
            )
            .await?;
        Ok(self
            .webhook_provider(provider)
            .await?
            .filter(|p| p.tenant == tenant && p.secret == secret))
    }

    /// The webhook provider named `provider`, whichever tenant's; `None` if unknown.
    pub(crate) async fn webhook_provider(
        &mut self,
        provider: &str,
    ) -> Result<Option<WebhookProvider>> {
        let row = self
            .store()
            .query_opt(
                checked!(PROVIDER, "SELECT provider, tenant, secret, created_at FROM webhook_providers WHERE provider = $1"),
                &args![provider],
            )
            .await?;
        row.as_ref().map(provider_of).transpose()
    }

    /// The tenant's webhook providers, by name.
    pub(crate) async fn webhook_providers(&mut self, tenant: &str) -> Result<Vec<WebhookProvider>> {
        let rows = self
            .store()
            .query(
                checked!(
                    PROVIDER,
                    "SELECT provider, tenant, secret, created_at FROM webhook_providers \
                 WHERE tenant = $1 ORDER BY provider"
                ),
                &args![tenant],
            )
            .await?;
        rows.iter().map(provider_of).collect()
    }

    /// Inserts a delivered event first, its unique key deciding (one small transaction).
    pub async fn receive_event(
        &mut self,
        tenant: &str,
        provider: &str,
        event_id: &str,
        event_type: &str,
        payload: &[u8],
        now: DateTime<Utc>,
    ) -> Result<Received> {
        self.store()
            .begin(Begin::Write)
            .await
            .during("starting the webhook transaction")?;
        let res = self
            .insert_event(tenant, provider, event_id, event_type, payload, now)
            .await;
        let received = self.end(res).await?;
        if matches!(received, Received::New { .. }) {
            crate::fault::point("webhook_after_insert");
        }
        Ok(received)
    }

    async fn insert_event(
        &mut self,
        tenant: &str,
        provider: &str,
        event_id: &str,
        event_type: &str,
        payload: &[u8],
        now: DateTime<Utc>,
    ) -> Result<Received> {
        const NEW_EVENT: Columns = Columns(&["event_no"]);
        const FIRST_EVENT: Columns = Columns(&["event_no", "payload_sha256"]);
        let at = ts(&now);
        let sha = sha256_hex(payload);
        let inserted = self
            .store()
            .query_opt(
                checked!(
                    NEW_EVENT,
                    "INSERT INTO webhook_events (tenant, provider, event_id, event_type, payload, \
                 payload_sha256, received_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT DO NOTHING RETURNING event_no"
                ),
                &args![
                    tenant,
                    provider,
                    event_id,
                    event_type,
                    payload,
                    sha.as_str(),
                    at.as_str()
                ],
            )
            .await?;
        if let Some(r) = inserted {
            return Ok(Received::New {
                event_no: r.int(col!(NEW_EVENT, "event_no"))?,
            });
        }
        let first = self
            .store()
            .query_one(
                checked!(
                    FIRST_EVENT,
                    "SELECT event_no, payload_sha256 FROM webhook_events WHERE tenant = $1 AND \
                 provider = $2 AND event_id = $3 AND event_type = $4"
                ),
                &args![tenant, provider, event_id, event_type],
            )
            .await?;
        let (event_no, same) = (
            first.int(col!(FIRST_EVENT, "event_no"))?,
            first.text(col!(FIRST_EVENT, "payload_sha256"))? == sha,
        );
        self.store()
            .execute(
                "INSERT INTO webhook_repeats (tenant, event_no, same_payload, seen_at) VALUES ($1, $2, $3, $4)",
                &args![tenant, event_no, i64::from(same), at.as_str()],
            )
            .await?;
        Ok(Received::Repeat {
            event_no,
            same_payload: same,
        })
    }

    /// Applies event `event_no` of `tenant` if nobody has: `Ok(None)` when it was
    /// processed already.
    pub async fn apply_event(
        &mut self,
        tenant: &str,
        event_no: i64,
        now: DateTime<Utc>,
    ) -> Result<Option<Applied>> {
        // The attempt is counted in a transaction of its own, so that an apply that fails
        // (and rolls back) still counts; past the cap the event ends `failed`, for an
        // operator, instead of being tried for ever.
        self.store()
            .begin(Begin::Write)
            .await
            .during("counting the event's attempt")?;
        let res = self.count_attempt(tenant, event_no, now).await;
        match self.end(res).await? {
            Attempt::Done => return Ok(None),
            Attempt::GaveUp(a) => return Ok(Some(a)),
            Attempt::Go => {}
        }
        self.store()
            .begin(Begin::Write)
            .await
            .during("starting the event's transaction")?;
        let res = self.apply_in_tx(tenant, event_no, now).await;
        self.end(res).await
    }

    async fn count_attempt(
        &mut self,
        tenant: &str,
        event_no: i64,
        now: DateTime<Utc>,
    ) -> Result<Attempt> {
        const ATTEMPT: Columns = Columns(&["attempts", "outcome"]);
        let Some(r) = self
            .store()
            .query_opt(
                checked!(
                    ATTEMPT,
                    "UPDATE webhook_events SET attempts = attempts + 1 \
                 WHERE tenant = $1 AND event_no = $2 AND processed_at IS NULL RETURNING attempts, outcome"
                ),
                &args![tenant, event_no],
            )
            .await?
        else {
            return Ok(Attempt::Done);
        };
        let attempts = r.int(col!(ATTEMPT, "attempts"))?;
        // A waiting event's attempts found no posting yet: its own horizon ends it.
        if attempts <= APPLY_ATTEMPTS_MAX
            || r.opt_text(col!(ATTEMPT, "outcome"))?.as_deref() == Some("waiting")
        {
            return Ok(Attempt::Go);
        }
        let detail = format!(
            "gave up after {APPLY_ATTEMPTS_MAX} attempts that failed (see the server's log)"
        );
        let at = ts(&now);
        self.store()
            .execute(
                "UPDATE webhook_events SET processed_at = $1, outcome = 'failed', detail = $2 \
                 WHERE tenant = $3 AND event_no = $4",
                &args![at.as_str(), detail.as_str(), tenant, event_no],
            )
            .await?;
        Ok(Attempt::GaveUp(Applied {
            event_no,
            outcome: "failed",
            detail,
            posting_id: None,
        }))
    }

    async fn apply_in_tx(
        &mut self,
        tenant: &str,
        event_no: i64,
        now: DateTime<Utc>,
    ) -> Result<Option<Applied>> {
        const CLAIMED_EVENT: Columns =
            Columns(&["event_type", "payload", "received_at", "attempts"]);
        let at = ts(&now);
        // The claim: one worker's transaction holds the row until it commits; another
        // finds `processed_at` set and does nothing.
        let Some(ev) = self
            .store()
            .query_opt(
                checked!(
                    CLAIMED_EVENT,
                    "UPDATE webhook_events SET attempts = attempts \
                 WHERE tenant = $1 AND event_no = $2 AND processed_at IS NULL \
                 RETURNING event_type, payload, received_at, attempts"
                ),
                &args![tenant, event_no],
            )
            .await?
        else {
            return Ok(None);
        };
        let (event_type, payload) = (
            ev.text(col!(CLAIMED_EVENT, "event_type"))?,
            ev.bytes(col!(CLAIMED_EVENT, "payload"))?,
        );
        let (received_at, attempts) = (
            ev.text(col!(CLAIMED_EVENT, "received_at"))?,
            ev.int(col!(CLAIMED_EVENT, "attempts"))?,
        );
        if crate::fault::armed("webhook_apply_fails") {
            return Err(LedgerError::Internal(
                "test fault webhook_apply_fails (CLEARLEDGER_FAULT)".into(),
            ));
        }
        let mut applied = self
            .move_posting(tenant, event_no, &event_type, &payload, &at)
            .await?;
        // The posting may come later (its file not uploaded yet): the event waits, tried
        // again with backoff, until the horizon; after it, it is final.
        let horizon = ts(&(now - chrono::Duration::days(WAIT_DAYS)));
        if applied.outcome == "no_such_posting" && received_at > horizon {
            let backoff = (1i64 << attempts.clamp(1, 12).saturating_sub(1)).min(3600);
            let next = ts(&(now + chrono::Duration::seconds(backoff)));
            applied.outcome = "waiting";
            self.event_waits(tenant, event_no, &applied.detail, &next)
                .await?;
            return Ok(Some(applied));
        }
        self.store()
            .execute(
                "UPDATE webhook_events SET processed_at = $1, outcome = $2, detail = $3, \
                 posting_id = $4 WHERE tenant = $5 AND event_no = $6",
                &args![
                    at.as_str(),
                    applied.outcome,
                    applied.detail.as_str(),
                    applied.posting_id,
                    tenant,
                    event_no
                ],
            )
            .await?;
        Ok(Some(applied))
    }

    /// The event found no posting yet: tried again at `next`.
    async fn event_waits(
        &mut self,
        tenant: &str,
        event_no: i64,
        detail: &str,
        next: &str,
    ) -> Result<()> {
        self.store()
            .execute(
                "UPDATE webhook_events SET outcome = 'waiting', detail = $1, next_attempt_at = $2 \
                 WHERE tenant = $3 AND event_no = $4",
                &args![detail, next, tenant, event_no],
            )
            .await
            .map(|_| ())
    }

    async fn move_posting(
        &mut self,
        tenant: &str,
        event_no: i64,
        event_type: &str,
        payload: &[u8],
        at: &str,
    ) -> Result<Applied> {
        let done = |outcome, detail: String, posting_id| Applied {
            event_no,
            outcome,
            detail,
            posting_id,
        };
        let Some(to) = PostingStatus::of_event(event_type) else {
            return Ok(done(
                "ignored",
                format!("event type {event_type:?} moves no posting"),
                None,
            ));
        };
        let Some(lookup) = event_lookup(payload) else {
            return Ok(done(
                "invalid",
                "data names no posting: expected one of posting_key, uetr, end_to_end_id, trace_number"
                    .into(),
                None,
            ));
        };
        let posting_id = match self.event_posting(tenant, &lookup).await? {
            Ok(id) => id,
            Err((outcome, detail)) => return Ok(done(outcome, detail, None)),
        };
        let (outcome, detail) = self
            .move_status(tenant, posting_id, to, event_no, at)
            .await?;
        Ok(done(outcome, detail, Some(posting_id)))
    }

    /// The one posting an event names; else the event's outcome (`no_such_posting`,
    /// `ambiguous`) and detail.
    async fn event_posting(
        &mut self,
        tenant: &str,
        lookup: &Lookup,
    ) -> Result<std::result::Result<i64, (&'static str, String)>> {
        let mut found = self.lookup(tenant, lookup).await?;
        // A UETR names its chain's legs and returns too: the payment is the key itself.
        if let Lookup::Uetr(u) = lookup {
            let own = format!("uetr:{}", u.trim().to_ascii_lowercase());
            if found.iter().any(|p| p.posting_key == own) {
                found.retain(|p| p.posting_key == own);
            }
        }
        Ok(match found.as_slice() {
            [] => Err(("no_such_posting", format!("no posting by {lookup:?}"))),
            [p] => Ok(p.posting_id),
            many => {
                let ids: Vec<String> = many.iter().map(|p| p.posting_id.to_string()).collect();
                Err((
                    "ambiguous",
                    format!("{lookup:?} names postings {}", ids.join(", ")),
                ))
            }
        })
    }

    /// Moves the posting's status to `to` when it is one `to` moves from, journaling the
    /// change; the event's outcome (`applied`, `nothing_to_do`) and detail.
    async fn move_status(
        &mut self,
        tenant: &str,
        posting_id: i64,
        to: PostingStatus,
        event_no: i64,
        at: &str,
    ) -> Result<(&'static str, String)> {
        // One posting's moves one at a time (PostgreSQL: workers on other machines).
        self.store()
            .lock_name(&format!("posting_status:{posting_id}"))
            .await?;
        self.store()
            .execute(
                "INSERT INTO posting_status (tenant, posting_id, status, changed_at) \
                 VALUES ($1, $2, 'posted', $3) ON CONFLICT DO NOTHING",
                &args![tenant, posting_id, at],
            )
            .await?;
        let from = self
            .store()
            .query_one(
                checked!(
                    STATUS,
                    "SELECT status FROM posting_status WHERE tenant = $1 AND posting_id = $2"
                ),
                &args![tenant, posting_id],
            )
            .await?
            .text(col!(STATUS, "status"))?;
        let allowed: Vec<String> = to
            .allowed_from()
            .iter()
            .map(|s| format!("'{}'", s.as_str()))
            .collect();
        let changed = self
            .store()
            .execute(
                &format!(
                    "UPDATE posting_status SET status = $1, changed_at = $2, event_no = $3 \
                     WHERE tenant = $4 AND posting_id = $5 AND status IN ({})",
                    allowed.join(", ")
                ),
                &args![to.as_str(), at, event_no, tenant, posting_id],
            )
            .await?;
        if changed == 0 {
            return Ok((
                "nothing_to_do",
                format!(
                    "posting {posting_id} is {from}; {} moves only from {}",
                    to.as_str(),
                    allowed.join(" or ").replace('\'', "")
                ),
            ));
        }
        self.store()
            .execute(
                "INSERT INTO posting_status_changes (tenant, posting_id, from_status, to_status, event_no, \
                 changed_at) VALUES ($1, $2, $3, $4, $5, $6)",
                &args![tenant, posting_id, from.as_str(), to.as_str(), event_no, at],
            )
            .await?;
        Ok((
            "applied",
            format!("posting {posting_id}: {from} → {}", to.as_str()),
        ))
    }

    /// Events inserted before `cut` and not yet applied, whose next attempt is due at
    /// `now`, oldest first (the sweeper), each with its tenant: every tenant's, read once.
    pub async fn unprocessed_events(
        &mut self,
        cut: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<(String, i64)>> {
        const EVENT: Columns = Columns(&["tenant", "event_no"]);
        let (c, n) = (ts(&cut), ts(&now));
        let rows = self
            .store()
            .query(
                checked!(EVENT, "SELECT tenant, event_no FROM webhook_events WHERE processed_at IS NULL AND received_at < $1 \
                 AND (next_attempt_at IS NULL OR next_attempt_at <= $2) ORDER BY event_no LIMIT $3"),
                &args![c.as_str(), n.as_str(), limit],
            )
            .await?;
        rows.iter()
            .map(|r| {
                Ok((
                    r.text(col!(EVENT, "tenant"))?,
                    r.int(col!(EVENT, "event_no"))?,
                ))
            })
            .collect()
    }

    /// A posting's status (`posted` when no event moved it).
    pub async fn posting_status(&mut self, tenant: &str, posting_id: i64) -> Result<PostingStatus> {
        let row = self
            .store()
            .query_opt(
                checked!(
                    STATUS,
                    "SELECT status FROM posting_status WHERE tenant = $1 AND posting_id = $2"
                ),
                &args![tenant, posting_id],
            )
            .await?;
        Ok(match row {
            Some(r) => {
                let status = col!(STATUS, "status");
                PostingStatus::parse(&r.text(status)?)
                    .ok_or_else(|| bad(status, "a posting status"))?
            }
            None => PostingStatus::Posted,
        })
    }

    /// Sets the tenant's notification endpoint (replacing one set before).
    pub async fn set_notify_endpoint(
        &mut self,
        tenant: &str,
        url: &str,
        secret: &str,
        now: DateTime<Utc>,
    ) -> Result<()> {
        let at = ts(&now);
        self.store()
            .execute(
                "INSERT INTO notify_endpoints (tenant, url, secret, created_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (tenant) DO UPDATE SET url = excluded.url, secret = excluded.secret",
                &args![tenant, url, secret, at.as_str()],
            )
            .await?;
        Ok(())
    }

    /// The endpoint the tenant's notifications are delivered to; `None` if none is set.
    pub(crate) async fn notify_endpoint(&mut self, tenant: &str) -> Result<Option<NotifyEndpoint>> {
        const ENDPOINT: Columns = Columns(&["tenant", "url", "secret"]);
        let row = self
            .store()
            .query_opt(
                checked!(
                    ENDPOINT,
                    "SELECT tenant, url, secret FROM notify_endpoints WHERE tenant = $1"
                ),
                &args![tenant],
            )
            .await?;
        row.map(|r| {
            Ok(NotifyEndpoint {
                tenant: r.text(col!(ENDPOINT, "tenant"))?,
                url: r.text(col!(ENDPOINT, "url"))?,
                secret: r.text(col!(ENDPOINT, "secret"))?,
            })
        })
        .transpose()
    }

    /// Inside the run's transaction: its notification ([`OutboxHook`] calls it for a
    /// tenant with an endpoint). `run.completed`, `run.needs_attention` (conflicts, held records or statements recorded
    /// unbalanced) or
    /// `run.rejected`; the webhook id `{tenant}:run:{run_id}:{type}` is unique, so a
    /// notification is written once whatever happens.
    async fn write_outbox(&mut self, run: &RunInfo, now: DateTime<Utc>) -> Result<()> {
        let event_type = match run.status_word() {
            "needs_attention" => "run.needs_attention",
            "rejected" => "run.rejected",
            _ => "run.completed",
        };
        let at = ts(&now);
        let payload = serde_json::to_vec(&serde_json::json!({
            "type": event_type,
            "timestamp": at,
            "data": {
                "run_id": run.run_id, "tenant": run.tenant, "kind": run.kind, "status": run.status_word(),
                "file_id": run.file_id, "sha256": run.sha256, "format": run.format, "source_name": run.source_name,
                "records": run.records, "posted": run.posted, "duplicates": run.duplicates,
                "conflicts": run.conflicts, "held": run.held, "errors": run.errors, "warnings": run.warnings,
                "totals": run.totals,
            }
        }))
        .unwrap_or_default();
        let webhook_id = format!("{}:run:{}:{event_type}", run.tenant, run.run_id);
        self.store()
            .execute(
                "INSERT INTO outbox (tenant, webhook_id, event_type, run_id, payload, created_at, next_attempt_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT DO NOTHING",
                &args![
                    run.tenant.as_str(),
                    webhook_id.as_str(),
                    event_type,
                    run.run_id,
                    payload.as_slice(),
                    at.as_str()
                ],
            )
            .await?;
        Ok(())
    }

    /// Claims up to `limit` messages due at `now` for `lease` (another worker skips them
    /// until it ends; a worker that dies leaves them due again after it).
    pub async fn claim_outbox(
        &mut self,
        now: DateTime<Utc>,
        lease: chrono::Duration,
        limit: i64,
    ) -> Result<Vec<OutboxMessage>> {
        const DUE: Columns = Columns(&["tenant", "message_id"]);
        const MESSAGE: Columns = Columns(&[
            "message_id",
            "tenant",
            "webhook_id",
            "event_type",
            "payload",
            "created_at",
            "attempts",
        ]);
        let (at, until) = (ts(&now), ts(&(now + lease)));
        let due = self
            .store()
            .query(
                checked!(DUE, "SELECT tenant, message_id FROM outbox WHERE delivered_at IS NULL AND next_attempt_at <= $1 \
                 ORDER BY message_id LIMIT $2"),
                &args![at.as_str(), limit],
            )
            .await?;
        let mut out = Vec::new();
        for r in &due {
            let (tenant, id) = (
                r.text(col!(DUE, "tenant"))?,
                r.int(col!(DUE, "message_id"))?,
            );
            let claimed = self
                .store()
                .query_opt(
                    checked!(MESSAGE, "UPDATE outbox SET next_attempt_at = $1, attempts = attempts + 1 \
                     WHERE tenant = $2 AND message_id = $3 AND delivered_at IS NULL AND next_attempt_at <= $4 \
                     RETURNING message_id, tenant, webhook_id, event_type, payload, created_at, attempts"),
                    &args![until.as_str(), tenant.as_str(), id, at.as_str()],
                )
                .await?;
            if let Some(m) = claimed {
                out.push(OutboxMessage {
                    message_id: m.int(col!(MESSAGE, "message_id"))?,
                    tenant: m.text(col!(MESSAGE, "tenant"))?,
                    webhook_id: m.text(col!(MESSAGE, "webhook_id"))?,
                    event_type: m.text(col!(MESSAGE, "event_type"))?,
                    payload: m.bytes(col!(MESSAGE, "payload"))?,
                    created_at: m.text(col!(MESSAGE, "created_at"))?,
                    attempts: m.int(col!(MESSAGE, "attempts"))?,
                });
            }
        }
        Ok(out)
    }

    /// A delivery's end: delivered, or failed and due again at `retry_at`.
    pub async fn outbox_result(
        &mut self,
        tenant: &str,
        message_id: i64,
        delivered: std::result::Result<DateTime<Utc>, (String, DateTime<Utc>)>,
    ) -> Result<()> {
        match delivered {
            Ok(at) => {
                let at = ts(&at);
                self.store()
                    .execute(
                        "UPDATE outbox SET delivered_at = $1, last_error = NULL \
                         WHERE tenant = $2 AND message_id = $3",
                        &args![at.as_str(), tenant, message_id],
                    )
                    .await?;
            }
            Err((error, retry_at)) => {
                let at = ts(&retry_at);
                self.store()
                    .execute(
                        "UPDATE outbox SET last_error = $1, next_attempt_at = $2 \
                         WHERE tenant = $3 AND message_id = $4",
                        &args![error.as_str(), at.as_str(), tenant, message_id],
                    )
                    .await?;
            }
        }
        Ok(())
    }

    /// Deliveries of an event already in the inbox (`/metrics`).
    pub(crate) async fn webhook_repeat_count(&mut self) -> Result<i64> {
        const REPEATS: Columns = Columns(&["repeats: count(*)"]);
        self.store()
            .query_one(
                checked!(REPEATS, "SELECT count(*) FROM webhook_repeats"),
                &[],
            )
            .await?
            .int(col!(REPEATS, "repeats"))
    }
}

#[cfg(test)]
mod tests {
    use super::PostingStatus::*;

    #[test]
    fn a_status_moves_only_from_its_predecessors() {
        assert_eq!(Settled.allowed_from(), &[Posted]);
        assert_eq!(Returned.allowed_from(), &[Posted, Settled]);
        assert_eq!(Rejected.allowed_from(), &[Posted]);
        assert_eq!(
            super::PostingStatus::of_event("payment.settled"),
            Some(Settled)
        );
        assert_eq!(super::PostingStatus::of_event("payment.refunded"), None);
    }
}
