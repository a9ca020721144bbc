//! The SQL of the operator's tables and runs, written once for both backends (`$n`
//! placeholders: `ledger::store`): tenants (`tenants.rs`), held records and decisions,
//! compensations and the runs that record an operator's action (`actions.rs`; a
//! reconciliation's run is one too: `reconcile::store`).

use crate::ledger::sql::POSTING_COLUMNS;

// ---- tenants --------------------------------------------------------------------------

/// Every known tenant, oldest first (migrations/*/0006_tenants.sql).
pub(crate) const KNOWN_TENANTS: &str =
    "SELECT name, created_at FROM tenants ORDER BY created_at, name";

/// One tenant by name. Binds: name.
pub(crate) const TENANT_BY_NAME: &str = "SELECT name, created_at FROM tenants WHERE name = $1";

/// A new tenant, insert-first: the primary key decides. Binds: name, created_at.
pub(crate) const ADD_TENANT: &str =
    "INSERT INTO tenants (name, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING";

// ---- operator actions (actions.rs) ----------------------------------------------------

/// A run recording an operator's action (`resolve`, `reverse`). Binds: tenant, file_id,
/// format, source_name, started_at, kind, reason, actor.
pub(crate) const INSERT_ACTION_RUN: &str = "INSERT INTO runs (tenant, file_id, sha256, format, source_name, started_at, \
     status, kind, reason, actor) VALUES ($1, $2, '', $3, $4, $5, 'running', $6, $7, $8) RETURNING run_id";

/// An action's completion mark. Binds: finished_at, records, posted, duplicates,
/// posted_amount_minor, run_id, tenant.
pub(crate) const COMPLETE_ACTION_RUN: &str = "UPDATE runs SET status = 'completed', finished_at = $1, records = $2, \
     posted = $3, duplicates = $4, conflicts = 0, held = 0, posted_amount_minor = $5, errors = 0, warnings = 0 \
     WHERE run_id = $6 AND tenant = $7";

/// An action run's totals, from what it posted. Binds: tenant, run_id.
pub(crate) const ACTION_RUN_TOTALS: &str = "INSERT INTO run_totals (tenant, run_id, currency, posted, amount_minor) \
     SELECT tenant, run_id, currency, count(*), sum(amount_minor) FROM postings WHERE tenant = $1 AND run_id = $2 \
     GROUP BY tenant, run_id, currency";

/// The columns of a held record as `held` and `resolve` read it, from `j` (journal), `r`
/// (its run), `o` (the posting it resembles, if any), `d` (a decision on its key, if any).
const HELD_COLUMNS: &str = "j.run_id, j.record_no, r.file_id, r.format, j.operation, j.posting_key, j.trace_number, \
     j.debit_account, j.credit_account, j.amount_minor, j.currency, j.fingerprint, j.effective_date, j.detail, \
     j.reason, r.started_at, o.posting_id, o.file_id, o.record_no, o.run_id, \
     d.decision, d.reason, d.decided_by, d.decided_at, d.run_id, d.posting_id, d.held_run_id, d.held_record_no, \
     (SELECT p.posting_id FROM postings p WHERE p.tenant = $1 AND p.operation = j.operation \
      AND p.posting_key = j.posting_key)";

const HELD_FROM: &str = "FROM journal j JOIN runs r ON r.tenant = j.tenant AND r.run_id = j.run_id \
     LEFT JOIN postings o ON o.tenant = j.tenant AND o.posting_id = j.original_posting_id \
     LEFT JOIN decisions d ON d.tenant = j.tenant AND d.operation = j.operation AND d.posting_key = j.posting_key";

/// Every held record of the tenant, in run and record order (the open ones are those
/// without a decision and whose key did not post since). Binds: tenant.
pub(crate) fn held_of_tenant() -> String {
    format!(
        "SELECT {HELD_COLUMNS} {HELD_FROM} WHERE j.tenant = $1 AND j.outcome = 'held' ORDER BY j.run_id, j.record_no"
    )
}

/// One record of a run as the journal has it, held or not. Binds: tenant, run_id,
/// record_no.
pub(crate) fn journal_record() -> String {
    format!(
        "SELECT {HELD_COLUMNS}, j.outcome {HELD_FROM} WHERE j.tenant = $1 AND j.run_id = $2 AND j.record_no = $3"
    )
}

/// Held records of a file's record, for `lookup --file-id F --record-no N`. Binds:
/// tenant, file_id, record_no.
pub(crate) fn held_of_source() -> String {
    format!(
        "SELECT {HELD_COLUMNS} {HELD_FROM} WHERE j.tenant = $1 AND r.file_id = $2 AND j.record_no = $3 \
         AND j.outcome = 'held' ORDER BY j.run_id"
    )
}

/// The decision, insert-first: its primary key (tenant, operation, key) decides which of
/// two concurrent decisions stands. Binds: tenant, operation, posting_key, held_run_id,
/// held_record_no, decision, reason, decided_by, decided_at, run_id.
pub(crate) const INSERT_DECISION: &str = "INSERT INTO decisions (tenant, operation, posting_key, held_run_id, \
     held_record_no, decision, reason, decided_by, decided_at, run_id) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING RETURNING run_id";

pub(crate) const SET_DECISION_POSTING: &str = "UPDATE decisions SET posting_id = $1 \
     WHERE tenant = $2 AND operation = $3 AND posting_key = $4";

/// A held record posted by decision, under its own key, behind the same unique indexes.
/// Binds: POSTING_COLUMNS' order.
pub(crate) fn insert_decided_posting() -> String {
    format!(
        "INSERT INTO postings ({POSTING_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
         ON CONFLICT DO NOTHING RETURNING posting_id"
    )
}

/// A posting by natural key, or by its source: what took a decided posting's place.
/// Binds: tenant, operation, posting_key, file_id, record_no.
pub(crate) const POSTING_IN_THE_WAY: &str = "SELECT posting_id, fingerprint, run_id, posting_key FROM postings \
     WHERE tenant = $1 AND ((operation = $2 AND posting_key = $3) OR (file_id = $4 AND record_no = $5)) \
     ORDER BY posting_id LIMIT 1";

/// Compensations of the postings `{cond}` selects from `p` (its binds from `$4`): accounts
/// swapped, key `{posting_key}:compensate`, source `compensate:{file_id}` and the same
/// record number, the same unique indexes; one per posting (`postings_compensates`).
/// Binds: tenant, run_id, posted_at.
///
/// The tenant is also written into the statement as a literal (a tenant name is letters,
/// digits, `.`, `_`, `-`): an `INSERT … SELECT` into `postings` (an identity column) runs
/// through a Citus coordinator, which reads its `SELECT` before it binds parameters, and
/// reads only the tenant's shard when the tenant is a constant (every shard otherwise).
pub(crate) fn insert_compensations(tenant: &str, cond: &str) -> String {
    let t = format!("'{}'", tenant.replace('\'', "''"));
    format!(
        "INSERT INTO postings ({POSTING_COLUMNS}, compensates) \
         SELECT $1, p.operation, p.posting_key || ':compensate', 'compensate:' || p.file_id, p.record_no, \
         p.trace_number, p.credit_account, p.debit_account, p.amount_minor, p.currency, p.effective_date, \
         p.fingerprint, p.detail, $2, $3, p.posting_id \
         FROM postings p WHERE p.tenant = {t} AND p.tenant = $1 AND {cond} ORDER BY p.posting_id \
         ON CONFLICT DO NOTHING"
    )
}

/// The postings `{cond}` selects that this run did not compensate because an earlier
/// compensation did: journaled as duplicates of it. Binds: tenant, run_id, then `{cond}`'s
/// (from `$3`).
pub(crate) fn journal_compensated(cond: &str) -> String {
    format!(
        "INSERT INTO journal (run_id, record_no, tenant, outcome, original_posting_id) \
         SELECT $2, p.record_no, $1, 'duplicate', c.posting_id \
         FROM postings p JOIN postings c ON c.tenant = p.tenant AND c.compensates = p.posting_id \
         WHERE p.tenant = $1 AND {cond} AND c.run_id <> $2"
    )
}

/// How many postings `{cond}` selects, a file id
/// and a run of theirs. Binds: tenant, then `{cond}`'s (from `$2`).
pub(crate) fn count_targets(cond: &str) -> String {
    format!(
        "SELECT count(*), min(p.file_id), min(p.run_id), count(p.compensates) FROM postings p \
         WHERE p.tenant = $1 AND {cond}"
    )
}

/// What a compensating run posted: count and sum. Binds: tenant, run_id.
pub(crate) const POSTED_BY_RUN: &str = "SELECT count(*), CAST(coalesce(sum(amount_minor), 0) AS BIGINT) FROM postings \
     WHERE tenant = $1 AND run_id = $2";
