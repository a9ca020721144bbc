//! What the HTTP service keeps in the ledger's database (migrations/*/0011_http.sql): API keys, each bound to one tenant; the responses stored under an
//! `Idempotency-Key`; the journal of every repeat over HTTP.
//!
//! A stored response is written only inside the transaction of the run the request made
//! ([`Ledger::seal_next_run`], written by the run's COMMIT step), so the key's claim, the
//! run's postings and the answer commit together or not at all (docs/principles.md §6). A request
//! in progress holds no row; it holds a lock ([`Ledger::try_lock_key`]): a PostgreSQL
//! session-level advisory lock, so that workers on other machines see it too, and which the
//! server releases when the connection ends, a crash included.

use crate::ingest::FileDone;
use crate::ledger::store::{Columns, bad, checked, col};
use crate::ledger::ts;
use crate::ledger::{Arg, Dialect, args};
use crate::ledger::{CommitHook, During, HookFuture, Ledger, LedgerError, Result};
use crate::report::summary::Summary;
use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// An API key as stored (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiKey {
    pub api_key_id: i64,
    pub tenant: String,
    /// The key's public part: `clk_<prefix>_…`; names the key in `apikey list` and
    /// `apikey revoke`.
    pub prefix: String,
    pub label: Option<String>,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

/// A key just created: `key` is shown once and never stored.
#[derive(Debug, Clone)]
pub struct NewApiKey {
    pub key: String,
    pub info: ApiKey,
}

/// What an `Idempotency-Key` is scoped to (the IETF httpapi draft; Stripe): the same key
/// under another API key, method or route is another key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdemScope {
    pub tenant: String,
    pub api_key_id: i64,
    pub method: String,
    pub route: String,
    pub key: String,
}

/// The rows of one scope: its five columns bound as `$1`–`$5` ([`IdemScope::args_with`]).
const SCOPE_IS: &str =
    "tenant = $1 AND api_key_id = $2 AND method = $3 AND route = $4 AND idem_key = $5";

impl IdemScope {
    /// The scope's five columns as `$1`–`$5`, then `more` from `$6` on.
    fn args_with<'a>(&'a self, more: &[Arg<'a>]) -> Vec<Arg<'a>> {
        let mut a = args![
            self.tenant.as_str(),
            self.api_key_id,
            self.method.as_str(),
            self.route.as_str(),
            self.key.as_str()
        ]
        .to_vec();
        a.extend_from_slice(more);
        a
    }

    /// The name the in-progress lock is taken under.
    fn lock_name(&self) -> String {
        format!(
            "idempotency\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
            self.tenant, self.api_key_id, self.method, self.route, self.key
        )
    }
}

/// A response as stored, and answered again byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub content_type: String,
    pub location: Option<String>,
    pub body: Vec<u8>,
    /// SHA-256 (hex) of the request's file.
    pub fingerprint: String,
    pub run_id: Option<i64>,
    pub created_at: String,
}

/// The answer a run's request gets, built from the run as it stands inside its
/// transaction, just before COMMIT.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub location: Option<String>,
    pub body: Vec<u8>,
}

/// What a request's run writes at its COMMIT: the key's row and its response.
#[derive(Debug, Clone)]
pub(crate) struct Seal {
    pub scope: IdemScope,
    pub fingerprint: String,
    pub created_at: DateTime<Utc>,
    /// How long the stored response answers repeats, from the run's commit.
    pub window: chrono::Duration,
}

/// Makes a request's answer from the file's summary; `true` for a rejected file.
pub(super) type AnswerOf = fn(&Summary<'_>, bool) -> Answer;

/// The commit hook of a request's run: the response, built from the run as it stands
/// inside its transaction and from what the ingest learned of the file, is stored under
/// the request's key, so the key's claim, the run's postings and the answer commit
/// together or not at all (docs/principles.md §6).
pub(crate) struct SealHook {
    pub seal: Seal,
    pub done: FileDone,
    pub answer: AnswerOf,
}

impl CommitHook for SealHook {
    fn before_commit<'a>(
        &'a mut self,
        ledger: &'a mut Ledger,
        tenant: &'a str,
        run_id: i64,
    ) -> HookFuture<'a> {
        Box::pin(async move {
            let run = ledger.committing_run(tenant, run_id).await?;
            let d = &self.done;
            let summary = Summary {
                file: &d.file,
                run: &run,
                findings: &d.findings,
                bytes: d.bytes,
                seconds: d.since.elapsed().as_secs_f64(),
                fast_path: d.fast_path,
                statements: d.statements.as_ref(),
            };
            let answer = (self.answer)(&summary, d.rejected);
            ledger
                .write_seal(&self.seal, run_id, answer)
                .await
                .during("storing the response of the request")
        })
    }
}

/// What `/metrics` reads from the ledger ([`Ledger::metric_totals`]).
#[derive(Debug, Default, Clone)]
pub struct MetricTotals {
    /// (kind, status, runs)
    pub runs: Vec<(String, String, i64)>,
    /// (outcome, records)
    pub records: Vec<(&'static str, i64)>,
    /// (channel, repeats)
    pub repeats: Vec<(&'static str, i64)>,
}

/// A repeat over HTTP, as journaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepeatDecision {
    /// The stored response answered again.
    Replayed,
    /// Refused with 409: the first request with the key was still running.
    InProgress,
    /// Refused with 422: the key came back with another file.
    Mismatch,
}

impl RepeatDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            RepeatDecision::Replayed => "replayed",
            RepeatDecision::InProgress => "in_progress",
            RepeatDecision::Mismatch => "mismatch",
        }
    }
}

/// The SHA-256 (hex) a secret is stored and compared as.
fn secret_hash(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// Splits `clk_<prefix>_<secret>` into its prefix; `None` for anything else.
fn key_prefix(key: &str) -> Option<&str> {
    let rest = key.strip_prefix("clk_")?;
    let (prefix, secret) = rest.split_once('_')?;
    (prefix.len() == 12
        && secret.len() == 43
        && prefix.bytes().all(|b| b.is_ascii_hexdigit())
        && secret
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
    .then_some(prefix)
}

/// Equal in time independent of where the strings differ (digests, or tokens of one
/// length: an API key's hash, a console form's CSRF token).
pub(crate) fn same_digest(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

const API_KEY_COLUMNS: &str = "api_key_id, tenant, prefix, label, created_at, revoked_at";
const API_KEY: Columns = Columns(&[
    "api_key_id",
    "tenant",
    "prefix",
    "label",
    "created_at",
    "revoked_at",
]);
const _: () = API_KEY.check(API_KEY_COLUMNS);
/// `API_KEY`, and the hash of the key's secret (`authenticate`).
const API_KEY_AND_SECRET: Columns = Columns(&[
    "api_key_id",
    "tenant",
    "prefix",
    "label",
    "created_at",
    "revoked_at",
    "secret_sha256",
]);

fn api_key(r: &crate::ledger::Row) -> Result<ApiKey> {
    Ok(ApiKey {
        api_key_id: r.int(col!(API_KEY, "api_key_id"))?,
        tenant: r.text(col!(API_KEY, "tenant"))?,
        prefix: r.text(col!(API_KEY, "prefix"))?,
        label: r.opt_text(col!(API_KEY, "label"))?,
        created_at: r.text(col!(API_KEY, "created_at"))?,
        revoked_at: r.opt_text(col!(API_KEY, "revoked_at"))?,
    })
}

impl Ledger {
    /// Creates an API key for `tenant` (which must be known: the caller checks). The key
    /// is 32 bytes from the operating system's random source, in URL-safe base64.
    pub async fn create_api_key(
        &mut self,
        tenant: &str,
        label: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<NewApiKey> {
        use base64::Engine;
        let mut raw = [0u8; 38];
        getrandom::fill(&mut raw).map_err(|e| LedgerError::Random(e.to_string()))?;
        let prefix = hex::encode(&raw[..6]);
        let secret = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&raw[6..]);
        let key = format!("clk_{prefix}_{secret}");
        let at = ts(&now);
        let row = self
            .store()
            .query_one(
                &format!(
                    "INSERT INTO api_keys (tenant, prefix, secret_sha256, label, created_at) \
                     VALUES ($1, $2, $3, $4, $5) RETURNING {API_KEY_COLUMNS}"
                ),
                &args![
                    tenant,
                    prefix.as_str(),
                    secret_hash(&key).as_str(),
                    label,
                    at.as_str()
                ],
            )
            .await?;
        Ok(NewApiKey {
            key,
            info: api_key(&row)?,
        })
    }

    /// The API keys of `tenant` (every tenant's with `None`), oldest first.
    pub async fn api_keys(&mut self, tenant: Option<&str>) -> Result<Vec<ApiKey>> {
        let rows = match tenant {
            Some(t) => {
                self.store()
                    .query(
                        &format!(
                            "SELECT {API_KEY_COLUMNS} FROM api_keys WHERE tenant = $1 \
                             ORDER BY api_key_id"
                        ),
                        &args![t],
                    )
                    .await?
            }
            None => {
                self.store()
                    .query(
                        &format!("SELECT {API_KEY_COLUMNS} FROM api_keys ORDER BY api_key_id"),
                        &[],
                    )
                    .await?
            }
        };
        rows.iter().map(api_key).collect()
    }

    /// Revokes the key named by its prefix (or by the whole key); `None` when there is no
    /// such key. A key revoked already keeps its first revocation time.
    pub async fn revoke_api_key(
        &mut self,
        prefix_or_key: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<ApiKey>> {
        let prefix = key_prefix(prefix_or_key).unwrap_or(prefix_or_key);
        let at = ts(&now);
        self.store()
            .execute(
                "UPDATE api_keys SET revoked_at = $1 WHERE prefix = $2 AND revoked_at IS NULL",
                &args![at.as_str(), prefix],
            )
            .await?;
        let row = self
            .store()
            .query_opt(
                &format!("SELECT {API_KEY_COLUMNS} FROM api_keys WHERE prefix = $1"),
                &args![prefix],
            )
            .await?;
        row.as_ref().map(api_key).transpose()
    }

    /// The live key `presented` is, if it is one: well formed, known, its secret's hash
    /// equal, not revoked.
    pub async fn authenticate(&mut self, presented: &str) -> Result<Option<ApiKey>> {
        let Some(prefix) = key_prefix(presented) else {
            return Ok(None);
        };
        let row = self
            .store()
            .query_opt(
                API_KEY_AND_SECRET.checked(&format!(
                    "SELECT {API_KEY_COLUMNS}, secret_sha256 FROM api_keys \
                     WHERE prefix = $1 AND revoked_at IS NULL"
                )),
                &args![prefix],
            )
            .await?;
        let Some(row) = row else { return Ok(None) };
        let stored = row.text(col!(API_KEY_AND_SECRET, "secret_sha256"))?;
        if !same_digest(&stored, &secret_hash(presented)) {
            return Ok(None);
        }
        api_key(&row).map(Some)
    }

    /// The response stored under `scope`, unless it has expired at `now`.
    pub async fn stored_response(
        &mut self,
        scope: &IdemScope,
        now: DateTime<Utc>,
    ) -> Result<Option<StoredResponse>> {
        const STORED_RESPONSE: Columns = Columns(&[
            "status",
            "content_type",
            "location",
            "body",
            "fingerprint",
            "run_id",
            "created_at",
        ]);
        let at = ts(&now);
        let row = self
            .store()
            .query_opt(
                STORED_RESPONSE.checked(&format!(
                    "SELECT status, content_type, location, body, fingerprint, run_id, created_at \
                     FROM idempotency_keys WHERE {SCOPE_IS} AND expires_at > $6"
                )),
                &scope.args_with(&[Arg::Text(&at)]),
            )
            .await?;
        let Some(r) = row else { return Ok(None) };
        let status = col!(STORED_RESPONSE, "status");
        Ok(Some(StoredResponse {
            status: u16::try_from(r.int(status)?).map_err(|_| bad(status, "an HTTP status"))?,
            content_type: r.text(col!(STORED_RESPONSE, "content_type"))?,
            location: r.opt_text(col!(STORED_RESPONSE, "location"))?,
            body: r.bytes(col!(STORED_RESPONSE, "body"))?,
            fingerprint: r.text(col!(STORED_RESPONSE, "fingerprint"))?,
            run_id: r.opt_int(col!(STORED_RESPONSE, "run_id"))?,
            created_at: r.text(col!(STORED_RESPONSE, "created_at"))?,
        }))
    }

    /// Journals a repeat over HTTP (docs/principles.md §9), in a transaction of its own.
    pub async fn record_http_repeat(
        &mut self,
        scope: &IdemScope,
        decision: RepeatDecision,
        fingerprint: &str,
        run_id: Option<i64>,
        now: DateTime<Utc>,
    ) -> Result<()> {
        let at = ts(&now);
        self.store()
            .execute(
                "INSERT INTO http_repeats (tenant, api_key_id, method, route, idem_key, decision, \
                 fingerprint, run_id, seen_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                &scope.args_with(&args![decision.as_str(), fingerprint, run_id, at.as_str()]),
            )
            .await?;
        Ok(())
    }

    /// Deletes the stored responses expired at `now`; returns how many.
    pub async fn purge_expired_keys(&mut self, now: DateTime<Utc>) -> Result<u64> {
        let at = ts(&now);
        self.store()
            .execute(
                "DELETE FROM idempotency_keys WHERE expires_at <= $1",
                &args![at.as_str()],
            )
            .await
    }

    /// The ledger's totals `/metrics` reports, across tenants: runs by (kind, status);
    /// records of completed runs by outcome; repeats by channel (a file's duplicates and
    /// conflicts, HTTP replays of a stored response, webhook deliveries seen before).
    pub async fn metric_totals(&mut self) -> Result<MetricTotals> {
        const RUNS: Columns = Columns(&["kind", "status", "runs: count(*)"]);
        const RECORDS: Columns = Columns(&[
            "posted: CAST(coalesce(sum(posted), 0) AS BIGINT)",
            "duplicates: CAST(coalesce(sum(duplicates), 0) AS BIGINT)",
            "conflicts: CAST(coalesce(sum(conflicts), 0) AS BIGINT)",
            "held: CAST(coalesce(sum(held), 0) AS BIGINT)",
        ]);
        const REPLAYS: Columns = Columns(&["replays: count(*)"]);
        let runs = self
            .store()
            .query(
                checked!(
                    RUNS,
                    "SELECT kind, status, count(*) FROM runs GROUP BY kind, status ORDER BY kind, status"
                ),
                &[],
            )
            .await?
            .iter()
            .map(|r| {
                Ok((
                    r.text(col!(RUNS, "kind"))?,
                    r.text(col!(RUNS, "status"))?,
                    r.int(col!(RUNS, "runs"))?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let r = self
            .store()
            .query_one(
                checked!(RECORDS, "SELECT CAST(coalesce(sum(posted), 0) AS BIGINT),                  CAST(coalesce(sum(duplicates), 0) AS BIGINT),                  CAST(coalesce(sum(conflicts), 0) AS BIGINT),                  CAST(coalesce(sum(held), 0) AS BIGINT) FROM runs WHERE status = 'completed'"),
                &[],
            )
            .await?;
        let (posted, duplicates, conflicts, held) = (
            r.int(col!(RECORDS, "posted"))?,
            r.int(col!(RECORDS, "duplicates"))?,
            r.int(col!(RECORDS, "conflicts"))?,
            r.int(col!(RECORDS, "held"))?,
        );
        let replays = self
            .store()
            .query_one(
                checked!(
                    REPLAYS,
                    "SELECT count(*) FROM http_repeats WHERE decision = 'replayed'"
                ),
                &[],
            )
            .await?
            .int(col!(REPLAYS, "replays"))?;
        let webhook = self.webhook_repeat_count().await?;
        Ok(MetricTotals {
            runs,
            records: vec![
                ("posted", posted),
                ("duplicate", duplicates),
                ("conflict", conflicts),
                ("held", held),
            ],
            repeats: vec![
                ("file", duplicates.saturating_add(conflicts)),
                ("http_replay", replays),
                ("webhook", webhook),
            ],
        })
    }

    /// Takes the in-progress lock of `scope` without waiting: `false` when another
    /// session holds it. PostgreSQL: a session-level advisory lock (ended with the
    /// connection, so a crashed worker frees it). SQLite: always `true`; the server keeps
    /// the keys in progress itself (one process writes an SQLite ledger at a time), and a
    /// second process on the same file waits for the write lock and then finds the
    /// response stored.
    pub async fn try_lock_key(&mut self, scope: &IdemScope) -> Result<bool> {
        match self.store().dialect() {
            Dialect::Sqlite => Ok(true),
            Dialect::Postgres => {
                const TAKEN: Columns =
                    Columns(&["taken: pg_try_advisory_lock(hashtextextended($1, 0))::int"]);
                let name = scope.lock_name();
                let row = self
                    .store()
                    .query_one(
                        checked!(
                            TAKEN,
                            "SELECT pg_try_advisory_lock(hashtextextended($1, 0))::int"
                        ),
                        &[Arg::Text(&name)],
                    )
                    .await?;
                Ok(row.int(col!(TAKEN, "taken"))? == 1)
            }
        }
    }

    /// Releases what [`Self::try_lock_key`] took.
    pub async fn unlock_key(&mut self, scope: &IdemScope) -> Result<()> {
        if self.store().dialect() == Dialect::Postgres {
            let name = scope.lock_name();
            self.store()
                .query(
                    "SELECT pg_advisory_unlock(hashtextextended($1, 0))::int",
                    &[Arg::Text(&name)],
                )
                .await?;
        }
        Ok(())
    }

    /// Writes `seal` with `answer` for run `run_id`, inside the run's open transaction: an
    /// expired row under the same scope is replaced; a live one (another process took the
    /// key in the meantime) fails the run, which then rolls back whole.
    async fn write_seal(&mut self, seal: &Seal, run_id: i64, answer: Answer) -> Result<()> {
        let s = &seal.scope;
        let now = Utc::now();
        let (created, at, expires) = (ts(&seal.created_at), ts(&now), ts(&(now + seal.window)));
        self.store()
            .execute(
                &format!("DELETE FROM idempotency_keys WHERE {SCOPE_IS} AND expires_at <= $6"),
                &s.args_with(&[Arg::Text(&at)]),
            )
            .await?;
        let a = s.args_with(&args![
            seal.fingerprint.as_str(),
            run_id,
            i64::from(answer.status),
            answer.content_type,
            answer.location.as_deref(),
            answer.body.as_slice(),
            created.as_str(),
            expires.as_str()
        ]);
        let inserted = self
            .store()
            .execute(
                "INSERT INTO idempotency_keys (tenant, api_key_id, method, route, idem_key, \
                 fingerprint, run_id, status, content_type, location, body, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT DO NOTHING",
                &a,
            )
            .await?;
        if inserted == 0 {
            return Err(LedgerError::IdempotencyKeyTaken);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_recognised_only_in_its_own_shape() {
        let key = format!("clk_0123456789ab_{}", "A".repeat(43));
        assert_eq!(key_prefix(&key), Some("0123456789ab"));
        assert_eq!(key_prefix("clk_0123456789ab_short"), None);
        assert_eq!(
            key_prefix(&format!("clk_0123456789zz_{}", "A".repeat(43))),
            None
        );
        assert_eq!(
            key_prefix(&format!("xyz_0123456789ab_{}", "A".repeat(43))),
            None
        );
        assert_eq!(
            key_prefix(&format!("clk_0123456789ab_{}=", "A".repeat(42))),
            None
        );
    }

    #[test]
    fn digests_compare_equal_only_when_equal() {
        assert!(same_digest("abcd", "abcd"));
        assert!(!same_digest("abcd", "abce"));
        assert!(!same_digest("abcd", "abc"));
    }
}
