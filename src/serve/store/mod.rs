//! The HTTP feature's tables, over the ledger's database: API keys and the answers stored
//! under an `Idempotency-Key` with the journal of repeats over HTTP (`http.rs`); webhook
//! intake, posting statuses, notification endpoints and the outbox (`webhooks.rs`). Their
//! rows that must commit with a run are written by commit hooks ([`SealHook`],
//! [`OutboxHook`]), never named by the ledger's core.

mod http;
mod webhooks;

pub use http::{
    Answer, AnswerOf, ApiKey, IdemScope, MetricTotals, NewApiKey, RepeatDecision, Seal, SealHook,
    StoredResponse,
};
pub use webhooks::{
    Applied, NotifyEndpoint, OutboxHook, OutboxMessage, PostingStatus, Received, WebhookProvider,
    notify_on_commit,
};
