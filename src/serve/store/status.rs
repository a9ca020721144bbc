//! A posting's status as webhooks moved it, for the reads of the HTTP API: the status
//! beside each posting `GET /v1/postings` finds, and the events that moved one posting
//! (`GET /v1/postings/{id}/events`). A posting no event moved has no row: it is `posted`.

use crate::ledger::args;
use crate::ledger::store::{Columns, col};
use crate::ledger::{Ledger, Result};
use serde::Serialize;

/// One move of a posting's status, with the webhook event that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct StatusChange {
    pub(crate) change_no: i64,
    pub(crate) from_status: String,
    pub(crate) to_status: String,
    pub(crate) changed_at: String,
    pub(crate) event_no: i64,
    pub(crate) provider: String,
    /// The delivery's `webhook-id`.
    pub(crate) webhook_id: String,
    pub(crate) event_type: String,
    pub(crate) received_at: String,
}

const CHANGE: Columns = Columns(&[
    "change_no",
    "from_status",
    "to_status",
    "changed_at",
    "event_no",
    "provider",
    "event_id",
    "event_type",
    "received_at",
]);

impl Ledger {
    /// Whether posting `posting_id` is `tenant`'s (another tenant's is not found).
    pub(crate) async fn is_tenants_posting(
        &mut self,
        tenant: &str,
        posting_id: i64,
    ) -> Result<bool> {
        let row = self
            .store()
            .query_opt(
                "SELECT 1 AS one FROM postings WHERE tenant = $2 AND posting_id = $1",
                &args![posting_id, tenant],
            )
            .await?;
        Ok(row.is_some())
    }

    /// The status of each of `ids` that an event moved (a posting without one is `posted`),
    /// in one query.
    pub(crate) async fn moved_statuses(
        &mut self,
        tenant: &str,
        ids: &[i64],
    ) -> Result<std::collections::HashMap<i64, String>> {
        const STATUS: Columns = Columns(&["posting_id", "status"]);
        if ids.is_empty() {
            return Ok(Default::default());
        }
        let list: Vec<String> = ids.iter().map(i64::to_string).collect();
        let sql = format!(
            "SELECT posting_id, status FROM posting_status WHERE tenant = $1 AND posting_id IN ({})",
            list.join(", ")
        );
        let rows = self
            .store()
            .query(STATUS.checked(&sql), &args![tenant])
            .await?;
        rows.iter()
            .map(|r| {
                Ok((
                    r.int(col!(STATUS, "posting_id"))?,
                    r.text(col!(STATUS, "status"))?,
                ))
            })
            .collect()
    }

    /// Every move of posting `posting_id`'s status, oldest first.
    pub(crate) async fn status_changes(
        &mut self,
        tenant: &str,
        posting_id: i64,
    ) -> Result<Vec<StatusChange>> {
        let sql = CHANGE.checked(
            "SELECT c.change_no, c.from_status, c.to_status, c.changed_at, c.event_no, e.provider, \
             e.event_id, e.event_type, e.received_at FROM posting_status_changes c \
             JOIN webhook_events e ON e.tenant = c.tenant AND e.event_no = c.event_no \
             WHERE c.tenant = $1 AND c.posting_id = $2 ORDER BY c.change_no",
        );
        let rows = self.store().query(sql, &args![tenant, posting_id]).await?;
        rows.iter()
            .map(|r| {
                Ok(StatusChange {
                    change_no: r.int(col!(CHANGE, "change_no"))?,
                    from_status: r.text(col!(CHANGE, "from_status"))?,
                    to_status: r.text(col!(CHANGE, "to_status"))?,
                    changed_at: r.text(col!(CHANGE, "changed_at"))?,
                    event_no: r.int(col!(CHANGE, "event_no"))?,
                    provider: r.text(col!(CHANGE, "provider"))?,
                    webhook_id: r.text(col!(CHANGE, "event_id"))?,
                    event_type: r.text(col!(CHANGE, "event_type"))?,
                    received_at: r.text(col!(CHANGE, "received_at"))?,
                })
            })
            .collect()
    }
}
