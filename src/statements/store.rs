//! The SQL of the statement tables (`statements`, `statement_entries`,
//! `statement_journal`: migrations/*/0007), and their rows handed to the core's bulk paths
//! (`ledger::bulk`) in each backend's fastest form: SQLite one prepared statement an entry,
//! PostgreSQL a chunk of entries as arrays through `unnest`, the same `ON CONFLICT DO
//! NOTHING` against the same unique index.

use crate::ledger::Result;
use crate::ledger::Store;
use crate::ledger::bulk::{Column, Forms};
use crate::ledger::store::{Columns, args, col};
use std::collections::HashMap;

/// A statement, insert-first (unique on tenant and statement key).
pub(super) const INSERT_STATEMENT: &str = "INSERT INTO statements (tenant, statement_key, format, kind, account, currency, \
     servicer, stmt_id, sequence, stmt_date, from_date, to_date, copy, opening_minor, closing_minor, \
     balance_currency, entries, fingerprint, detail, run_id, recorded_at, balance_break, \
     balance_expected_minor, balance_found_minor) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, \
     $22, $23, $24) \
     ON CONFLICT DO NOTHING RETURNING statement_id";
/// What [`INSERT_STATEMENT`] returns.
pub(super) const NEW_STATEMENT: Columns = Columns(&["statement_id"]);
const _: () = NEW_STATEMENT.check(INSERT_STATEMENT);

/// How many statements a run recorded unbalanced. Binds: count, run_id, tenant.
pub(super) const SET_UNBALANCED: &str =
    "UPDATE runs SET unbalanced = $1 WHERE run_id = $2 AND tenant = $3";

/// The statement recorded before under a key. Binds: tenant, statement_key.
pub(super) const STATEMENT_BY_KEY: &str =
    "SELECT statement_id, fingerprint FROM statements WHERE tenant = $1 AND statement_key = $2";
/// What [`STATEMENT_BY_KEY`] returns.
pub(super) const STATEMENT_OF_KEY: Columns = Columns(&["statement_id", "fingerprint"]);
const _: () = STATEMENT_OF_KEY.check(STATEMENT_BY_KEY);

/// A statement's entries, insert-first against (tenant, account, entry_key). Binds: tenant,
/// account, statement_id, run_id, recorded_at, then the entry's columns in
/// [`EntryRow::columns`]' order.
const INSERT_ENTRIES: Forms<'static> = Forms {
    each: "INSERT INTO statement_entries (tenant, account, entry_key, statement_id, run_id, \
     entry_no, amount_minor, currency, credit, reversal, status, booking_date, value_date, bank_ref, \
     customer_ref, end_to_end_id, bank_tx_code, fingerprint, detail, recorded_at, refs) \
     VALUES ($1, $2, $6, $3, $4, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $5, $21) \
     ON CONFLICT DO NOTHING",
    unnest: "INSERT INTO statement_entries (tenant, account, entry_key, statement_id, run_id, entry_no, \
     amount_minor, currency, credit, reversal, status, booking_date, value_date, bank_ref, \
     customer_ref, end_to_end_id, bank_tx_code, fingerprint, detail, recorded_at, refs) \
     SELECT $1, $2, u.k, $3, $4, u.n, u.a, u.c, u.cr, u.rv, u.st, u.bd, u.vd, u.br, u.cu, u.ee, \
     u.tc, u.fp, u.dt, $5, u.rf \
     FROM unnest($6::text[], $7::bigint[], $8::bigint[], $9::text[], $10::bigint[], $11::bigint[], \
     $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], \
     $19::text[], $20::text[], $21::text[]) AS u(k, n, a, c, cr, rv, st, bd, vd, br, cu, ee, tc, fp, dt, rf) \
     ON CONFLICT DO NOTHING RETURNING entry_no",
};

/// The entries of an account recorded before under some keys. Binds: tenant, account, then
/// the key (SQLite) or the keys (PostgreSQL), a probe each (`ledger::sql::PROBE_EACH_KEY`).
const ENTRIES_BY_KEY: Forms<'static> = Forms {
    each: "SELECT entry_key, entry_id, fingerprint, status, detail FROM statement_entries \
     WHERE tenant = $1 AND account = $2 AND entry_key = $3",
    unnest: "SELECT e.entry_key, e.entry_id, e.fingerprint, e.status, e.detail \
     FROM unnest($3::text[]) AS k(entry_key) \
     CROSS JOIN LATERAL (SELECT * FROM statement_entries e WHERE e.tenant = $1 \
     AND e.account = $2 AND e.entry_key = k.entry_key OFFSET 0) e",
};
/// The columns of both forms of [`ENTRIES_BY_KEY`].
const EXISTING_ENTRY: Columns =
    Columns(&["entry_key", "entry_id", "fingerprint", "status", "detail"]);
const _: () = EXISTING_ENTRY.check(ENTRIES_BY_KEY.each);
const _: () = EXISTING_ENTRY.check(ENTRIES_BY_KEY.unnest);

/// The report rows of a statement run (`report::read` adds them to every run's report, in
/// the columns of `ledger::ReportRow`): its entries recorded, and its journal with the
/// entries they matched. `file_id` is the statement's key, `posting_key` the
/// entry's, `trace_number` the bank's reference; the account is the debit or the credit
/// account as the entry debits or credits it.
pub(crate) fn report_rows() -> String {
    format!("{REPORT_ENTRIES} UNION ALL {REPORT_JOURNAL}")
}

/// The entries a statement run recorded (`REPORT_ROWS`' first part; `e`).
pub(crate) const REPORT_ENTRIES: &str = "SELECT e.run_id, s.statement_key, e.entry_no, \
     CASE WHEN e.status = 'provisional' THEN 'provisional' ELSE 'recorded' END, e.entry_key, e.bank_ref, \
     e.amount_minor, e.currency, CASE WHEN e.credit = 0 THEN e.account ELSE '' END, \
     CASE WHEN e.credit = 0 THEN '' ELSE e.account END, NULL, CAST(NULL AS BIGINT), \
     CAST(NULL AS BIGINT), NULL, NULL, NULL, 'statement_entry', NULL \
     FROM statement_entries e JOIN statements s ON s.tenant = e.tenant AND s.statement_id = e.statement_id \
     WHERE e.run_id = $1 AND e.tenant = $2";

/// A statement run's journal, with the entries it matched (`REPORT_ROWS`' second part; `j`).
pub(crate) const REPORT_JOURNAL: &str = "SELECT j.run_id, coalesce(os.statement_key, ''), j.entry_no, j.outcome, j.entry_key, o.bank_ref, \
     j.amount_minor, j.currency, CASE WHEN j.credit = 0 THEN j.account ELSE '' END, \
     CASE WHEN j.credit = 0 THEN '' ELSE j.account END, os.statement_key, o.entry_no, o.run_id, o.recorded_at, \
     j.differences, j.reason, 'statement_entry', NULL \
     FROM statement_journal j \
     LEFT JOIN statement_entries o ON o.tenant = j.tenant AND o.entry_id = j.original_entry_id \
     LEFT JOIN statements os ON os.tenant = o.tenant AND os.statement_id = o.statement_id \
     WHERE j.run_id = $1 AND j.tenant = $2";

/// A provisional entry confirmed by a booked one. Binds: tenant, entry_id.
pub(super) const CONFIRM_ENTRY: &str =
    "UPDATE statement_entries SET status = 'booked' WHERE tenant = $1 AND entry_id = $2";

pub(super) const INSERT_STATEMENT_JOURNAL: &str = "INSERT INTO statement_journal (run_id, entry_no, tenant, outcome, \
     original_entry_id, account, entry_key, amount_minor, currency, credit, differences, reason)";

/// Inserts a chunk of statement entries, the unique index on (tenant, account, key)
/// deciding; returns the entry numbers that inserted.
pub(super) async fn insert_entries(
    s: &mut Store,
    tenant: &str,
    account: &str,
    statement_id: i64,
    run_id: i64,
    at: &str,
    rows: &[EntryRow<'_>],
) -> Result<Vec<i64>> {
    let fixed = args![tenant, account, statement_id, run_id, at];
    let columns = EntryRow::columns(rows);
    let context = "recording statement entries";
    s.insert_new(&INSERT_ENTRIES, &fixed, &columns, 1, context)
        .await
}

/// The entries of an account recorded before under these keys.
pub(super) async fn entries_by_key(
    s: &mut Store,
    tenant: &str,
    account: &str,
    keys: &[&str],
) -> Result<HashMap<String, ExistingEntry>> {
    let rows = s
        .rows_by_keys(&ENTRIES_BY_KEY, &args![tenant, account], keys)
        .await?;
    let mut out = HashMap::with_capacity(rows.len());
    for r in &rows {
        out.insert(
            r.text(col!(EXISTING_ENTRY, "entry_key"))?,
            ExistingEntry {
                entry_id: r.int(col!(EXISTING_ENTRY, "entry_id"))?,
                fingerprint: r.text(col!(EXISTING_ENTRY, "fingerprint"))?,
                status: r.text(col!(EXISTING_ENTRY, "status"))?,
                detail: r.text(col!(EXISTING_ENTRY, "detail"))?,
            },
        );
    }
    Ok(out)
}

/// An entry's columns as `statement_entries` stores them, borrowed from its record.
pub(super) struct EntryRow<'a> {
    pub entry_key: &'a str,
    pub entry_no: i64,
    pub amount_minor: i64,
    pub currency: &'a str,
    pub credit: i64,
    pub reversal: i64,
    pub status: &'a str,
    pub booking_date: Option<String>,
    pub value_date: Option<String>,
    pub bank_ref: Option<&'a str>,
    pub customer_ref: Option<&'a str>,
    pub end_to_end_id: Option<&'a str>,
    pub bank_tx_code: Option<&'a str>,
    pub fingerprint: &'a str,
    pub detail: &'a str,
    /// [`crate::keys::EntryRecord::refs`].
    pub refs: Option<&'a str>,
}

impl<'a> EntryRow<'a> {
    pub(super) fn of(
        e: &'a crate::formats::statement::Entry,
        k: &'a crate::keys::EntryRecord,
    ) -> Self {
        let d = |d: Option<chrono::NaiveDate>| d.map(|d| d.to_string());
        EntryRow {
            entry_key: &k.entry_key,
            entry_no: e.entry_no as i64,
            amount_minor: e.amount_minor as i64,
            currency: &e.currency,
            credit: i64::from(e.credit),
            reversal: i64::from(e.reversal),
            status: k.status,
            booking_date: d(e.booking_date),
            value_date: d(e.value_date),
            bank_ref: e.bank_ref.as_deref(),
            customer_ref: e.customer_ref.as_deref(),
            end_to_end_id: e.end_to_end_id.as_deref(),
            bank_tx_code: e.bank_tx_code.as_deref(),
            fingerprint: &k.fingerprint,
            detail: &k.detail,
            refs: k.refs.as_deref(),
        }
    }

    /// The rows as columns, in `INSERT_ENTRIES`' bind order.
    fn columns<'r>(rows: &'r [EntryRow<'a>]) -> Vec<Column<'r>> {
        let int = |f: fn(&EntryRow<'a>) -> i64| Column::Int(rows.iter().map(f).collect());
        let text =
            |f: fn(&'r EntryRow<'a>) -> Option<&'r str>| Column::Text(rows.iter().map(f).collect());
        vec![
            text(|e| Some(e.entry_key)),
            int(|e| e.entry_no),
            int(|e| e.amount_minor),
            text(|e| Some(e.currency)),
            int(|e| e.credit),
            int(|e| e.reversal),
            text(|e| Some(e.status)),
            text(|e| e.booking_date.as_deref()),
            text(|e| e.value_date.as_deref()),
            text(|e| e.bank_ref),
            text(|e| e.customer_ref),
            text(|e| e.end_to_end_id),
            text(|e| e.bank_tx_code),
            text(|e| Some(e.fingerprint)),
            text(|e| Some(e.detail)),
            text(|e| e.refs),
        ]
    }
}

/// An entry recorded before, as a new entry of the same key meets it.
pub(super) struct ExistingEntry {
    pub entry_id: i64,
    pub fingerprint: String,
    pub status: String,
    pub detail: String,
}
