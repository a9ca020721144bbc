//! The console's sessions in the ledger's database (migrations/*/0018_console_sessions.sql).
//! A session row holds the SHA-256 of its token, never the token; reading one joins its API
//! key, so a revoked key ends its sessions at their next request.

use crate::ledger::store::{Columns, col};
use crate::ledger::{Ledger, Result, args, ts};
use crate::serve::store::ApiKey;
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

/// The SHA-256 (hex) a session token is stored and looked up by.
pub(crate) fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

const SESSION_KEY: Columns = Columns(&[
    "api_key_id",
    "tenant",
    "prefix",
    "label",
    "created_at",
    "revoked_at",
]);

impl Ledger {
    /// Stores a session of `key` whose token is `token`, until `expires`.
    pub(crate) async fn create_session(
        &mut self,
        token: &str,
        key: &ApiKey,
        now: DateTime<Utc>,
        expires: DateTime<Utc>,
    ) -> Result<()> {
        let (at, until) = (ts(&now), ts(&expires));
        self.store()
            .execute(
                "INSERT INTO console_sessions (token_sha256, tenant, api_key_id, created_at, \
                 expires_at) VALUES ($1, $2, $3, $4, $5)",
                &args![
                    token_hash(token).as_str(),
                    key.tenant.as_str(),
                    key.api_key_id,
                    at.as_str(),
                    until.as_str()
                ],
            )
            .await?;
        Ok(())
    }

    /// The live API key behind session `token` at `now`: the session not expired nor
    /// signed out, its key not revoked.
    pub(crate) async fn session_key(
        &mut self,
        token: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<ApiKey>> {
        let at = ts(&now);
        let row = self
            .store()
            .query_opt(
                SESSION_KEY.checked(
                    "SELECT k.api_key_id, k.tenant, k.prefix, k.label, k.created_at, \
                     k.revoked_at FROM console_sessions s \
                     JOIN api_keys k ON k.api_key_id = s.api_key_id AND k.tenant = s.tenant \
                     WHERE s.token_sha256 = $1 AND s.expires_at > $2 AND k.revoked_at IS NULL",
                ),
                &args![token_hash(token).as_str(), at.as_str()],
            )
            .await?;
        let Some(r) = row else { return Ok(None) };
        Ok(Some(ApiKey {
            api_key_id: r.int(col!(SESSION_KEY, "api_key_id"))?,
            tenant: r.text(col!(SESSION_KEY, "tenant"))?,
            prefix: r.text(col!(SESSION_KEY, "prefix"))?,
            label: r.opt_text(col!(SESSION_KEY, "label"))?,
            created_at: r.text(col!(SESSION_KEY, "created_at"))?,
            revoked_at: r.opt_text(col!(SESSION_KEY, "revoked_at"))?,
        }))
    }

    /// Ends session `token` (sign-out); nothing when it is gone already.
    pub(crate) async fn end_session(&mut self, token: &str) -> Result<()> {
        self.store()
            .execute(
                "DELETE FROM console_sessions WHERE token_sha256 = $1",
                &args![token_hash(token).as_str()],
            )
            .await?;
        Ok(())
    }

    /// Deletes the sessions expired at `now`; how many.
    pub(crate) async fn purge_expired_sessions(&mut self, now: DateTime<Utc>) -> Result<u64> {
        let at = ts(&now);
        self.store()
            .execute(
                "DELETE FROM console_sessions WHERE expires_at <= $1",
                &args![at.as_str()],
            )
            .await
    }
}

/// The runs of a day by status word, and their records by outcome (the overview).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct DayRuns {
    /// (status word, runs), in the order `runs_today` reads them.
    pub(crate) by_status: Vec<(String, i64)>,
    pub(crate) records: i64,
    pub(crate) posted: i64,
    pub(crate) duplicates: i64,
    pub(crate) conflicts: i64,
    pub(crate) held: i64,
}

const DAY_RUNS: Columns = Columns(&[
    "word",
    "runs",
    "records",
    "posted",
    "duplicates",
    "conflicts",
    "held",
]);

/// A reconciliation's latest run for one account, as the overview counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LatestReconciliation {
    pub(crate) run_id: i64,
    pub(crate) bank_account: String,
    pub(crate) needs_attention: i64,
}

const LATEST_RECON: Columns = Columns(&["run_id", "bank_account", "summary"]);

impl Ledger {
    /// The tenant's runs begun since `since` (an RFC 3339 UTC time), by status word.
    pub(crate) async fn runs_since(&mut self, tenant: &str, since: &str) -> Result<DayRuns> {
        let sum = |c: &str| format!("CAST(COALESCE(SUM({c}), 0) AS BIGINT) AS {c}");
        let sql = format!(
            "SELECT CASE WHEN status = 'completed' AND (conflicts > 0 OR held > 0 OR \
             unbalanced > 0) THEN 'needs_attention' ELSE status END AS word, \
             CAST(COUNT(*) AS BIGINT) AS runs, {}, {}, {}, {}, {} FROM runs \
             WHERE tenant = $1 AND started_at >= $2 GROUP BY 1 ORDER BY 1",
            sum("records"),
            sum("posted"),
            sum("duplicates"),
            sum("conflicts"),
            sum("held")
        );
        let rows = self
            .store()
            .query(DAY_RUNS.checked(&sql), &args![tenant, since])
            .await?;
        let mut d = DayRuns::default();
        for r in &rows {
            d.by_status.push((
                r.text(col!(DAY_RUNS, "word"))?,
                r.int(col!(DAY_RUNS, "runs"))?,
            ));
            d.records += r.int(col!(DAY_RUNS, "records"))?;
            d.posted += r.int(col!(DAY_RUNS, "posted"))?;
            d.duplicates += r.int(col!(DAY_RUNS, "duplicates"))?;
            d.conflicts += r.int(col!(DAY_RUNS, "conflicts"))?;
            d.held += r.int(col!(DAY_RUNS, "held"))?;
        }
        Ok(d)
    }

    /// Each bank account's latest reconciliation of the tenant, with its items needing
    /// attention (from the run's stored summary).
    pub(crate) async fn latest_reconciliations(
        &mut self,
        tenant: &str,
    ) -> Result<Vec<LatestReconciliation>> {
        let rows = self
            .store()
            .query(
                LATEST_RECON.checked(
                    "SELECT r.run_id, r.bank_account, r.summary FROM reconciliations r \
                     WHERE r.tenant = $1 AND r.run_id = (SELECT MAX(l.run_id) FROM \
                     reconciliations l WHERE l.tenant = $1 AND \
                     l.bank_account = r.bank_account) ORDER BY r.bank_account",
                ),
                &args![tenant],
            )
            .await?;
        rows.iter()
            .map(|r| {
                let summary: serde_json::Value =
                    serde_json::from_str(&r.text(col!(LATEST_RECON, "summary"))?)
                        .unwrap_or_default();
                Ok(LatestReconciliation {
                    run_id: r.int(col!(LATEST_RECON, "run_id"))?,
                    bank_account: r.text(col!(LATEST_RECON, "bank_account"))?,
                    needs_attention: summary["needs_attention"].as_i64().unwrap_or(0),
                })
            })
            .collect()
    }
}

/// What reversing a run would post: per currency, the postings not compensated yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReversePreview {
    /// (currency, postings, their amounts added up in minor units).
    pub(crate) by_currency: Vec<(String, i64, i64)>,
    /// The run's postings compensated before (they would be journaled as duplicates).
    pub(crate) compensated: i64,
    /// The run's postings are compensations themselves (a reversal is refused).
    pub(crate) of_compensation: bool,
}

const PREVIEW: Columns = Columns(&["currency", "n", "total"]);
const COUNT: Columns = Columns(&["n"]);
const SOURCE: Columns = Columns(&["file_id"]);

impl Ledger {
    /// What `reverse` of run `run_id` would post. A run none of whose postings' source was
    /// compensated yet (the usual case) is read from its stored totals at once; otherwise
    /// its postings are counted one by one against their compensations.
    pub(crate) async fn reverse_preview(
        &mut self,
        run: &crate::ledger::RunInfo,
    ) -> Result<ReversePreview> {
        let tenant = run.tenant.as_str();
        let of_compensation = run.kind == crate::ledger::RunKind::Reverse;
        // A run's postings share one source: an ingest's file, a reconciliation's
        // `reconcile:{run}`, a decision's held record's file. Its compensations' source is
        // `compensate:` and that: none there, none of this run's postings was compensated.
        let source = self
            .store()
            .query_opt(
                SOURCE.checked(
                    "SELECT file_id FROM postings WHERE run_id = $1 AND tenant = $2 \
                     ORDER BY record_no LIMIT 1",
                ),
                &args![run.run_id, tenant],
            )
            .await?;
        let compensations = match source {
            Some(r) => {
                let source = format!("compensate:{}", r.text(col!(SOURCE, "file_id"))?);
                self.store()
                    .query_one(
                        COUNT.checked(
                            "SELECT CAST(COUNT(*) AS BIGINT) AS n FROM postings \
                             WHERE tenant = $1 AND file_id = $2",
                        ),
                        &args![tenant, source.as_str()],
                    )
                    .await?
                    .int(col!(COUNT, "n"))?
            }
            None => 0,
        };
        if compensations == 0 || of_compensation {
            let by_currency = run
                .totals
                .iter()
                .map(|t| (t.currency.clone(), t.posted as i64, t.amount_minor))
                .collect();
            return Ok(ReversePreview {
                by_currency,
                compensated: 0,
                of_compensation,
            });
        }
        let rows = self
            .store()
            .query(
                PREVIEW.checked(
                    "SELECT p.currency, CAST(COUNT(*) AS BIGINT) AS n, \
                     CAST(COALESCE(SUM(p.amount_minor), 0) AS BIGINT) AS total FROM postings p \
                     WHERE p.tenant = $1 AND p.run_id = $2 AND NOT EXISTS (SELECT 1 FROM \
                     postings c WHERE c.tenant = $1 AND c.compensates = p.posting_id) \
                     GROUP BY p.currency ORDER BY p.currency",
                ),
                &args![tenant, run.run_id],
            )
            .await?;
        let mut by_currency = Vec::new();
        for r in &rows {
            by_currency.push((
                r.text(col!(PREVIEW, "currency"))?,
                r.int(col!(PREVIEW, "n"))?,
                r.int(col!(PREVIEW, "total"))?,
            ));
        }
        let left: i64 = by_currency.iter().map(|c| c.1).sum();
        Ok(ReversePreview {
            by_currency,
            compensated: run.posted - left,
            of_compensation,
        })
    }
}

/// A conflict of a run: the posting its key holds, and what differs in the new record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Conflict {
    pub(crate) differences: String,
    pub(crate) posting_id: i64,
    pub(crate) posting_key: String,
    pub(crate) file_id: String,
    pub(crate) record_no: i64,
    pub(crate) run_id: i64,
    pub(crate) posted_at: String,
    pub(crate) currency: String,
    /// The stored posting's fields (its detail), as a JSON object.
    pub(crate) detail: String,
}

const CONFLICT: Columns = Columns(&[
    "differences",
    "posting_id",
    "posting_key",
    "file_id",
    "record_no",
    "run_id",
    "posted_at",
    "currency",
    "detail",
]);

impl Ledger {
    /// Record `record_no` of run `run_id` when it was a conflict: the posting its key
    /// holds and the fields that differ. `None` for any other record, or another
    /// tenant's.
    pub(crate) async fn conflict(
        &mut self,
        tenant: &str,
        run_id: i64,
        record_no: i64,
    ) -> Result<Option<Conflict>> {
        let row = self
            .store()
            .query_opt(
                CONFLICT.checked(
                    "SELECT j.differences, p.posting_id, p.posting_key, p.file_id, p.record_no, \
                     p.run_id, p.posted_at, p.currency, p.detail FROM journal j \
                     JOIN postings p ON p.tenant = j.tenant AND p.posting_id = j.original_posting_id \
                     WHERE j.tenant = $1 AND j.run_id = $2 AND j.record_no = $3 \
                     AND j.outcome = 'conflict'",
                ),
                &args![tenant, run_id, record_no],
            )
            .await?;
        let Some(r) = row else { return Ok(None) };
        let posting_id = r.int(col!(CONFLICT, "posting_id"))?;
        Ok(Some(Conflict {
            differences: r
                .opt_text(col!(CONFLICT, "differences"))?
                .unwrap_or_default(),
            posting_id,
            posting_key: r.text(col!(CONFLICT, "posting_key"))?,
            file_id: r.text(col!(CONFLICT, "file_id"))?,
            record_no: r.int(col!(CONFLICT, "record_no"))?,
            run_id: r.int(col!(CONFLICT, "run_id"))?,
            posted_at: r.text(col!(CONFLICT, "posted_at"))?,
            currency: r.text(col!(CONFLICT, "currency"))?,
            detail: crate::ledger::detail_json(posting_id, r.detail(col!(CONFLICT, "detail"))?)?,
        }))
    }
}

/// An account's statements in brief (the statements page's index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AccountStatements {
    pub(crate) account: String,
    pub(crate) statements: i64,
    pub(crate) last_date: Option<String>,
    pub(crate) breaks: i64,
}

const ACCOUNTS: Columns = Columns(&["account", "n", "last_date", "breaks"]);

impl Ledger {
    /// The tenant's accounts with statements: how many, the last date, how many break.
    pub(crate) async fn statement_accounts(
        &mut self,
        tenant: &str,
    ) -> Result<Vec<AccountStatements>> {
        let rows = self
            .store()
            .query(
                ACCOUNTS.checked(
                    "SELECT account, CAST(COUNT(*) AS BIGINT) AS n, MAX(stmt_date) AS last_date, \
                     CAST(SUM(CASE WHEN balance_break IS NULL THEN 0 ELSE 1 END) AS BIGINT) \
                     AS breaks FROM statements WHERE tenant = $1 GROUP BY account \
                     ORDER BY account",
                ),
                &args![tenant],
            )
            .await?;
        rows.iter()
            .map(|r| {
                Ok(AccountStatements {
                    account: r.text(col!(ACCOUNTS, "account"))?,
                    statements: r.int(col!(ACCOUNTS, "n"))?,
                    last_date: r.opt_text(col!(ACCOUNTS, "last_date"))?,
                    breaks: r.int(col!(ACCOUNTS, "breaks"))?,
                })
            })
            .collect()
    }
}
