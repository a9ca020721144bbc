//! The HTTP feature's tables, over the ledger's database: API keys and the answers stored
//! under an `Idempotency-Key` with the journal of repeats over HTTP (`http.rs`); webhook
//! intake, posting statuses, notification endpoints and the outbox (`webhooks.rs`); a
//! posting's status and the events that moved it, as the API reads them (`status.rs`). Their
//! rows that must commit with a run are written by commit hooks ([`SealHook`],
//! [`webhooks::OutboxHook`]), never named by the ledger's core.

mod http;
mod status;
mod webhooks;

pub(crate) use http::{
    Answer, ApiKey, IdemScope, MetricTotals, NewApiKey, RepeatDecision, Seal, SealHook,
    StoredResponse, same_digest,
};
pub(crate) use webhooks::{OutboxMessage, Received, notify_on_commit};
