//! Every statement of the core both backends run, written once (`$n` placeholders; see
//! `store.rs`), and the decoding of what they return.

use super::backend::Dialect;
use super::store::{Arg, Columns, Row, args, bad, col};
use super::{
    Posting, RepeatCounts, ReportRow, Result, RunInfo, RunKind, RunStatus, StoredFinding,
    classify::JournalRow,
};
use crate::findings::Finding;
use crate::keys::Outcome;

// ---- runs and file claims -------------------------------------------------------------

pub(crate) const RUN_COLUMNS: &str = "run_id, tenant, file_id, sha256, format, source_name, started_at, \
     finished_at, status, records, posted, duplicates, conflicts, held, posted_amount_minor, errors, warnings, kind, \
     reason, actor, unbalanced";

/// `RUN_COLUMNS` by name, for `run_info`.
pub(crate) const RUN: Columns = Columns(&[
    "run_id",
    "tenant",
    "file_id",
    "sha256",
    "format",
    "source_name",
    "started_at",
    "finished_at",
    "status",
    "records",
    "posted",
    "duplicates",
    "conflicts",
    "held",
    "posted_amount_minor",
    "errors",
    "warnings",
    "kind",
    "reason",
    "actor",
    "unbalanced",
]);
const _: () = RUN.check(RUN_COLUMNS);

/// A new run, `running` until its completion mark. Binds: tenant, file_id, sha256,
/// format, source_name, started_at.
pub(crate) const INSERT_RUN: &str = "INSERT INTO runs (tenant, file_id, sha256, format, source_name, started_at, status) \
     VALUES ($1, $2, $3, $4, $5, $6, 'running') RETURNING run_id";

/// What a run's insert returns (`INSERT_RUN`, `INSERT_REJECTED_RUN`).
pub(crate) const NEW_RUN: Columns = Columns(&["run_id"]);
const _: () = NEW_RUN.check(INSERT_RUN);

/// The claim: insert-first; the primary key decides who saw the file identity first.
/// Binds: tenant, file_id, format, run_id, first_seen_at.
pub(crate) const CLAIM_FILE: &str = "INSERT INTO files (tenant, file_id, format, sha256, first_run_id, first_seen_at) \
     VALUES ($1, $2, $3, NULL, $4, $5) ON CONFLICT DO NOTHING RETURNING first_run_id";

pub(crate) const FILE_CLAIMED_BY: &str =
    "SELECT first_run_id FROM files WHERE tenant = $1 AND file_id = $2";

/// The run that claimed a file identity (`CLAIM_FILE`, `FILE_CLAIMED_BY`).
pub(crate) const CLAIM: Columns = Columns(&["first_run_id"]);
const _: () = CLAIM.check(CLAIM_FILE);
const _: () = CLAIM.check(FILE_CLAIMED_BY);

/// The tenant's other NACHA file identities whose origin may be this one (two LIKE
/// patterns, one per spelling; confirmed by `keys::nacha_origin_of`). Binds: tenant,
/// file_id, pattern, pattern.
pub(crate) const OTHER_NACHA_FILES: &str = "SELECT file_id FROM files WHERE tenant = $1 AND format = 'nacha' \
     AND file_id <> $2 AND (file_id LIKE $3 ESCAPE '\\' OR file_id LIKE $4 ESCAPE '\\')";
pub(crate) const OTHER_NACHA_FILE: Columns = Columns(&["file_id"]);
const _: () = OTHER_NACHA_FILE.check(OTHER_NACHA_FILES);

/// Where the earlier ISO 20022 keying rule ends (migrations/*/0004_key_rules.sql).
pub(crate) const ISO_V1_KEYS_BELOW: &str =
    "SELECT value FROM ledger_meta WHERE name = 'iso_v1_keys_below'";
pub(crate) const META_VALUE: Columns = Columns(&["value"]);
const _: () = META_VALUE.check(ISO_V1_KEYS_BELOW);

/// The completion mark. Binds: finished_at, sha256, records, posted, duplicates,
/// conflicts, held, posted_amount_minor, warnings, run_id, tenant.
pub(crate) const COMPLETE_RUN: &str = "UPDATE runs SET status = 'completed', finished_at = $1, sha256 = $2, records = $3, \
     posted = $4, duplicates = $5, conflicts = $6, held = $7, posted_amount_minor = $8, errors = 0, warnings = $9 \
     WHERE run_id = $10 AND tenant = $11";

/// A run's posted count and amount per currency (`runs`, the summary).
pub(crate) const INSERT_RUN_TOTALS: &str =
    "INSERT INTO run_totals (tenant, run_id, currency, posted, amount_minor)";

pub(crate) const RUN_TOTALS: &str = "SELECT currency, posted, amount_minor FROM run_totals WHERE tenant = $1 AND run_id = $2 ORDER BY currency";
pub(crate) const RUN_TOTAL: Columns = Columns(&["currency", "posted", "amount_minor"]);
const _: () = RUN_TOTAL.check(RUN_TOTALS);

/// The claim's fingerprint of the bytes, once its run completes. Binds: sha256,
/// tenant, file_id, run_id.
pub(crate) const COMPLETE_CLAIM: &str =
    "UPDATE files SET sha256 = $1 WHERE tenant = $2 AND file_id = $3 AND first_run_id = $4";

/// The claim of a run that posted nothing under a new identity (all its records held as
/// re-sent), given up at its completion. Binds: tenant, file_id, run_id.
pub(crate) const RELEASE_CLAIM: &str =
    "DELETE FROM files WHERE tenant = $1 AND file_id = $2 AND first_run_id = $3";

/// A run that replayed an exact re-upload: every record a duplicate. Binds:
/// finished_at, records, run_id, tenant.
pub(crate) const COMPLETE_REPLAY: &str = "UPDATE runs SET status = 'completed', finished_at = $1, records = $2, \
     duplicates = $2, posted = 0, conflicts = 0, held = 0, posted_amount_minor = 0, errors = 0, warnings = 0 \
     WHERE run_id = $3 AND tenant = $4";

/// A rejected file's run. Binds: tenant, file_id, sha256, format, source_name,
/// started_at, finished_at, records, errors, warnings.
pub(crate) const INSERT_REJECTED_RUN: &str = "INSERT INTO runs (tenant, file_id, sha256, format, source_name, started_at, \
     finished_at, status, records, errors, warnings) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'rejected', $8, $9, $10) RETURNING run_id";
const _: () = NEW_RUN.check(INSERT_REJECTED_RUN);

/// The earliest completed run of exactly these bytes whose records all posted or were
/// duplicates. Binds: tenant, sha256.
pub(crate) const FIND_EXACT_UPLOAD: &str = "SELECT f.file_id, f.format, f.first_run_id FROM files f \
     JOIN runs r ON r.tenant = f.tenant AND r.run_id = f.first_run_id \
     WHERE f.tenant = $1 AND f.sha256 = $2 AND r.status = 'completed' AND r.conflicts = 0 AND r.held = 0 \
     ORDER BY f.first_run_id LIMIT 1";
pub(crate) const EXACT_UPLOAD: Columns = Columns(&["file_id", "format", "first_run_id"]);
const _: () = EXACT_UPLOAD.check(FIND_EXACT_UPLOAD);

/// An exact re-upload's journal, set-based: every record of the earlier run is a
/// duplicate of what it posted, or of what it had itself found duplicated. Binds: new run,
/// prior run, tenant (under which the prior run was found).
///
/// On SQLite the postings are read from the index on (run_id, record_no) alone, which holds
/// the posting's id too: the run id names them (ids are the ledger's own) and the tenant is
/// not read. PostgreSQL names the tenant of the postings, as a distributed PostgreSQL needs
/// to send the statement to the tenant's node.
pub(crate) fn replay_journal(d: Dialect) -> String {
    let of_tenant = match d {
        Dialect::Sqlite => "",
        Dialect::Postgres => "p.tenant = $3 AND ",
    };
    format!(
        "INSERT INTO journal (run_id, record_no, tenant, outcome, original_posting_id) \
         SELECT $1, p.record_no, $3, 'duplicate', p.posting_id FROM postings p WHERE {of_tenant}p.run_id = $2 \
         UNION ALL \
         SELECT $1, j.record_no, $3, 'duplicate', j.original_posting_id FROM journal j \
         WHERE j.tenant = $3 AND j.run_id = $2 AND j.outcome = 'duplicate'"
    )
}

pub(crate) fn run_of_tenant() -> String {
    format!("SELECT {RUN_COLUMNS} FROM runs WHERE run_id = $1 AND tenant = $2")
}

pub(crate) fn run_info(r: &Row) -> Result<RunInfo> {
    let status = col!(RUN, "status");
    let kind = col!(RUN, "kind");
    Ok(RunInfo {
        run_id: r.int(col!(RUN, "run_id"))?,
        tenant: r.text(col!(RUN, "tenant"))?,
        file_id: r.opt_text(col!(RUN, "file_id"))?,
        sha256: r.text(col!(RUN, "sha256"))?,
        format: r.text(col!(RUN, "format"))?,
        source_name: r.text(col!(RUN, "source_name"))?,
        started_at: r.text(col!(RUN, "started_at"))?,
        finished_at: r.opt_text(col!(RUN, "finished_at"))?,
        status: RunStatus::parse(&r.text(status)?).ok_or_else(|| bad(status, "a run status"))?,
        records: r.int(col!(RUN, "records"))?,
        posted: r.int(col!(RUN, "posted"))?,
        duplicates: r.int(col!(RUN, "duplicates"))?,
        conflicts: r.int(col!(RUN, "conflicts"))?,
        held: r.int(col!(RUN, "held"))?,
        posted_amount_minor: r.int(col!(RUN, "posted_amount_minor"))?,
        errors: r.int(col!(RUN, "errors"))?,
        warnings: r.int(col!(RUN, "warnings"))?,
        kind: RunKind::parse(&r.text(kind)?).ok_or_else(|| bad(kind, "a run kind"))?,
        reason: r.opt_text(col!(RUN, "reason"))?,
        actor: r.opt_text(col!(RUN, "actor"))?,
        unbalanced: r.int(col!(RUN, "unbalanced"))?,
        totals: Vec::new(),
    })
}

// ---- migrations -----------------------------------------------------------------------

pub(crate) const APPLIED_MIGRATIONS: &str = "SELECT version, checksum FROM schema_migrations";
const APPLIED_MIGRATION: Columns = Columns(&["version", "checksum"]);
const _: () = APPLIED_MIGRATION.check(APPLIED_MIGRATIONS);

/// An applied migration: its version and checksum.
pub(crate) fn applied_migration(r: &Row) -> Result<(i64, Vec<u8>)> {
    Ok((
        r.int(col!(APPLIED_MIGRATION, "version"))?,
        r.bytes(col!(APPLIED_MIGRATION, "checksum"))?,
    ))
}
pub(crate) const RECORD_MIGRATION: &str = "INSERT INTO schema_migrations (version, description, checksum, applied_at) \
     VALUES ($1, $2, $3, $4)";

// ---- findings -------------------------------------------------------------------------

pub(crate) const INSERT_FINDINGS: &str = "INSERT INTO findings (tenant, run_id, seq, severity, code, record_index, line, \
     byte_offset, field, columns, expected, found)";

/// The stored form of a finding: `record_index` is the physical record of a record file
/// and 0 elsewhere; `field` is the record field (`entry_detail.amount`) or the XML
/// element path.
pub(crate) struct FindingRow {
    pub seq: i64,
    pub record_index: i64,
    pub line: i64,
    pub byte_offset: i64,
    pub field: Option<String>,
    pub columns: Option<String>,
}

impl FindingRow {
    pub(crate) fn of(seq: usize, f: &Finding) -> Self {
        FindingRow {
            seq: seq as i64 + 1,
            record_index: f.position.record_index().unwrap_or(0) as i64,
            line: f.position.line() as i64,
            byte_offset: f.position.byte_offset() as i64,
            field: f
                .field
                .map(|x| x.label())
                .or_else(|| f.position.path().map(str::to_string)),
            columns: f
                .field
                .map(|x| x.columns())
                .or_else(|| f.position.column().map(|c| c.to_string())),
        }
    }
    pub(crate) fn args<'a>(
        &'a self,
        tenant: &'a str,
        run_id: i64,
        f: &'a Finding,
    ) -> [Arg<'a>; 12] {
        args![
            tenant,
            run_id,
            self.seq,
            f.severity.as_str(),
            f.code.as_str(),
            self.record_index,
            self.line,
            self.byte_offset,
            self.field.as_deref(),
            self.columns.as_deref(),
            f.expected.as_str(),
            f.found.as_str(),
        ]
    }
}

pub(crate) const FINDINGS_OF_RUN: &str = "SELECT f.run_id, f.seq, f.severity, f.code, f.record_index, f.line, \
     f.byte_offset, f.field, f.columns, f.expected, f.found \
     FROM findings f WHERE f.run_id = $1 AND f.tenant = $2 ORDER BY f.seq";

const FINDING: Columns = Columns(&[
    "run_id",
    "seq",
    "severity",
    "code",
    "record_index",
    "line",
    "byte_offset",
    "field",
    "columns",
    "expected",
    "found",
]);
const _: () = FINDING.check(FINDINGS_OF_RUN);

pub(crate) fn stored_finding(r: &Row) -> Result<StoredFinding> {
    Ok(StoredFinding {
        run_id: r.int(col!(FINDING, "run_id"))?,
        seq: r.int(col!(FINDING, "seq"))?,
        severity: r.text(col!(FINDING, "severity"))?,
        code: r.text(col!(FINDING, "code"))?,
        record_index: r.int(col!(FINDING, "record_index"))?,
        line: r.int(col!(FINDING, "line"))?,
        byte_offset: r.int(col!(FINDING, "byte_offset"))?,
        field: r.opt_text(col!(FINDING, "field"))?,
        columns: r.opt_text(col!(FINDING, "columns"))?,
        expected: r.text(col!(FINDING, "expected"))?,
        found: r.text(col!(FINDING, "found"))?,
    })
}

// ---- postings and the journal ---------------------------------------------------------

/// The columns of `postings` a run writes, in bind order (both bulk paths).
pub(crate) const POSTING_COLUMNS: &str = "tenant, operation, posting_key, file_id, record_no, trace_number, \
     debit_account, credit_account, amount_minor, currency, effective_date, fingerprint, detail, run_id, posted_at";

pub(crate) const INSERT_JOURNAL: &str = "INSERT INTO journal (run_id, record_no, tenant, outcome, original_posting_id, \
     operation, posting_key, trace_number, debit_account, credit_account, amount_minor, currency, fingerprint, \
     differences, reason, effective_date, detail)";

/// One journal row's binds, in `INSERT_JOURNAL`'s order. A duplicate names only its
/// original (its content is the original's: migrations/*/0003_slim_journal.sql). A held
/// record also keeps its effective date (as text) and fields (as JSON): `held`, what
/// posting it needs once an operator decides so (migrations/*/0005_operator_actions.sql).
pub(crate) fn journal_args<'a>(
    run: &'a super::OpenRun,
    j: &'a JournalRow<'a>,
    held: Option<(Option<&'a str>, &'a str)>,
) -> [Arg<'a>; 17] {
    let seen = j.seen();
    let held = held.filter(|_| j.outcome == Outcome::Held);
    args![
        run.run_id,
        j.r.record_no as i64,
        run.tenant.as_str(),
        j.outcome.as_str(),
        j.original.map(|o| o.posting_id),
        seen.map(|r| r.operation),
        seen.map(|r| r.posting_key.as_str()),
        seen.and_then(|r| r.trace_number.as_deref()),
        seen.map(|r| r.debit_account.as_str()),
        seen.map(|r| r.credit_account.as_str()),
        seen.map(|r| r.amount_minor),
        seen.map(|r| r.currency.as_str()),
        seen.map(|r| r.fingerprint.as_str()),
        j.differences.as_deref(),
        j.reason.as_deref(),
        held.and_then(|(date, _)| date),
        held.map(|(_, detail)| detail),
    ]
}

/// The report's columns (`crate::report::read`), by the names of its first SELECT (a
/// UNION's): the backends stream its rows.
pub(crate) const REPORT: Columns = Columns(&[
    "run_id",
    "file_id",
    "record_no",
    "outcome",
    "posting_key",
    "trace_number",
    "amount_minor",
    "currency",
    "debit_account",
    "credit_account",
    "original_file_id",
    "original_record_no",
    "original_run_id",
    "original_posted_at",
    "differences",
    "reason",
    "kind",
    "decision",
]);

/// A report row, its text moved out of the row read (each is read once).
pub(crate) fn report_row(mut r: Row) -> Result<ReportRow> {
    let outcome = col!(REPORT, "outcome");
    Ok(ReportRow {
        run_id: r.int(col!(REPORT, "run_id"))?,
        file_id: r.take_text(col!(REPORT, "file_id"))?,
        record_no: r.int(col!(REPORT, "record_no"))?,
        outcome: Outcome::parse(&r.take_text(outcome)?)
            .ok_or_else(|| bad(outcome, "an outcome"))?,
        posting_key: r.take_text(col!(REPORT, "posting_key"))?,
        trace_number: r.take_opt_text(col!(REPORT, "trace_number"))?,
        amount_minor: r.int(col!(REPORT, "amount_minor"))?,
        currency: r.take_text(col!(REPORT, "currency"))?,
        debit_account: r.take_text(col!(REPORT, "debit_account"))?,
        credit_account: r.take_text(col!(REPORT, "credit_account"))?,
        original_file_id: r.take_opt_text(col!(REPORT, "original_file_id"))?,
        original_record_no: r.opt_int(col!(REPORT, "original_record_no"))?,
        original_run_id: r.opt_int(col!(REPORT, "original_run_id"))?,
        original_posted_at: r.take_opt_text(col!(REPORT, "original_posted_at"))?,
        differences: r.take_opt_text(col!(REPORT, "differences"))?,
        reason: r.take_opt_text(col!(REPORT, "reason"))?,
        kind: r.take_text(col!(REPORT, "kind"))?,
        decision: r.take_opt_text(col!(REPORT, "decision"))?,
    })
}

// ---- lookups --------------------------------------------------------------------------

/// Postings by one of the lookup conditions: `{cond}` names the tenant (`$1`) and binds from
/// `$2` (the tenant's term is the condition's: `lookup_by_trace` keeps it in its subqueries).
///
/// The journal is read by `original_posting_id` (its index): its tenant is compared as
/// [`Dialect::scanned`] spells it, so that SQLite does not walk a tenant's index instead.
pub(crate) fn lookup(d: Dialect, cond: &str) -> String {
    let j_tenant = d.scanned("j.tenant");
    let sql = format!(
        "SELECT p.posting_id, p.tenant, p.operation, p.posting_key, p.file_id, p.record_no, p.trace_number, \
         p.debit_account, p.credit_account, p.amount_minor, p.currency, p.effective_date, p.fingerprint, \
         p.run_id, p.posted_at, \
         (SELECT count(*) FROM journal j WHERE {j_tenant} = $1 AND j.original_posting_id = p.posting_id) AS repeats, \
         {} AS repeat_duplicates, {} AS repeat_conflicts, {} AS repeat_held \
         FROM postings p WHERE {cond} ORDER BY p.posting_id",
        repeats_of(&j_tenant, "duplicate"),
        repeats_of(&j_tenant, "conflict"),
        repeats_of(&j_tenant, "held"),
    );
    POSTING.checked(&sql);
    sql
}

/// Ends the `LATERAL` subquery through which PostgreSQL reads the rows of an array of keys
/// (`unnest($n) AS k CROSS JOIN LATERAL (SELECT … WHERE … = k.… OFFSET 0)`): one probe of
/// the index on the key per key, whatever the statistics say. Written as a plain join, the
/// statement's generic plan (sqlx prepares it; PostgreSQL keeps a generic plan after five
/// runs) was chosen while the table was small, and read every row of the tenant's
/// operation for each chunk once the run's own rows had filled it: a million-entry NACHA
/// file's trace lookups grew quadratic (40 s a chunk). `OFFSET 0` keeps the planner from
/// flattening the subquery back into that join.
pub(crate) const PROBE_EACH_KEY: &str = "OFFSET 0";

/// The operations whose postings may be keyed by a UETR (`uetr:{UETR}:…`): the ISO 20022
/// kinds (`formats::iso20022::Kind::as_str`), as an SQL list.
pub(crate) const UETR_KEYED_OPERATIONS: &str = "'pacs.008', 'pacs.004', 'pain.001'";

/// The postings the trace-number index holds (migrations/*/0014_trace_index_partial.sql,
/// written as migrations/*/0015_trace_index_predicate.sql has it), its predicate word for
/// word: a query must carry it for either engine to read the index. Left out: a posting
/// keyed `uetr:` followed by its own trace number (its UETR), which the natural key already
/// finds (`trace_is`). The operations are three comparisons, not `NOT IN (…)`: SQLite builds
/// an ephemeral table for such a list each time it evaluates the predicate, i.e. on every
/// insert into `postings`.
pub(crate) const TRACE_INDEXED: &str = "((operation <> 'pacs.008' AND operation <> 'pacs.004' AND operation <> 'pain.001') OR \
     substr(posting_key, 1, length(trace_number) + 5) <> 'uetr:' || trace_number)";

/// `TRACE_INDEXED` with its columns qualified by `alias` (a query that joins `postings`
/// to a table with a column of the same name).
pub(crate) fn trace_indexed(alias: &str) -> String {
    TRACE_INDEXED
        .replace("operation ", &format!("{alias}.operation "))
        .replace("posting_key,", &format!("{alias}.posting_key,"))
        .replace("trace_number", &format!("{alias}.trace_number"))
}

/// The condition "posting `p`'s trace number is `t`" (of tenant `tenant`), read from an
/// index either way: the postings the trace-number index holds, and — those it leaves out —
/// a range of natural keys under each ISO operation, from `lo` to `hi`
/// (`key_prefix_range("uetr:" + t)`). `tenant`, `t`, `lo` and `hi` are placeholders (`$2`…).
/// As a set of posting ids: written as an `OR`, SQLite's planner (no statistics) reads
/// the whole tenant instead.
///
/// `p`'s own tenant is compared as [`Dialect::scanned`] spells it: SQLite would otherwise
/// walk the tenant's postings by an index instead of looking up the ids the subquery gives.
pub(crate) fn trace_is(d: Dialect, p: &str, tenant: &str, t: &str, lo: &str, hi: &str) -> String {
    let p_tenant = d.scanned(&format!("{p}.tenant"));
    format!(
        "{p_tenant} = {tenant} AND {p}.posting_id IN (SELECT posting_id FROM postings WHERE tenant = {tenant} AND trace_number = {t} \
         AND {TRACE_INDEXED} UNION ALL SELECT posting_id FROM postings WHERE tenant = {tenant} \
         AND operation IN ({UETR_KEYED_OPERATIONS}) AND posting_key >= {lo} AND posting_key < {hi} \
         AND trace_number = {t})"
    )
}

/// `lookup`'s condition for `lookup --trace` (binds: tenant, the trace number, then
/// `key_prefix_range("uetr:" + trace number)`).
pub(crate) fn lookup_by_trace(d: Dialect) -> String {
    trace_is(d, "p", "$1", "$2", "$3", "$4")
}

/// `lookup`'s condition for `lookup --uetr` (binds: tenant, `uetr:` + the UETR in lower case,
/// then `key_prefix_range` of that): the payment keyed by it, its chain's legs
/// (`uetr:U:{leg}`) and their returns (`…:return`), all keys that start `uetr:U:` — a range
/// of the natural key under each ISO operation, which alone key by UETR.
pub(crate) static LOOKUP_BY_UETR: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "p.tenant = $1 AND p.operation IN ({UETR_KEYED_OPERATIONS}) AND p.posting_key >= $3 AND p.posting_key < $4 \
         AND (p.posting_key = $2 OR substr(p.posting_key, 1, length($2) + 1) = $2 || ':')"
    )
});

/// The bounds of the keys that start with `prefix`, for `key >= lo AND key < hi`: both
/// engines compare keys byte by byte (SQLite's BINARY; PostgreSQL's "C" collation), and no
/// key holds U+10FFFF, the greatest character, after the prefix.
pub(crate) fn key_prefix_range(prefix: &str) -> (String, String) {
    (prefix.to_string(), format!("{prefix}\u{10FFFF}"))
}

/// How many journal rows name posting `p` with this outcome (the `journal_original`
/// index, as the total).
fn repeats_of(j_tenant: &str, outcome: &str) -> String {
    format!(
        "(SELECT count(*) FROM journal j WHERE {j_tenant} = $1 AND j.original_posting_id = p.posting_id \
         AND j.outcome = '{outcome}')"
    )
}

/// `lookup`'s columns.
const POSTING: Columns = Columns(&[
    "posting_id",
    "tenant",
    "operation",
    "posting_key",
    "file_id",
    "record_no",
    "trace_number",
    "debit_account",
    "credit_account",
    "amount_minor",
    "currency",
    "effective_date",
    "fingerprint",
    "run_id",
    "posted_at",
    "repeats",
    "repeat_duplicates",
    "repeat_conflicts",
    "repeat_held",
]);

pub(crate) fn posting(r: &Row) -> Result<Posting> {
    Ok(Posting {
        posting_id: r.int(col!(POSTING, "posting_id"))?,
        tenant: r.text(col!(POSTING, "tenant"))?,
        operation: r.text(col!(POSTING, "operation"))?,
        posting_key: r.text(col!(POSTING, "posting_key"))?,
        file_id: r.text(col!(POSTING, "file_id"))?,
        record_no: r.int(col!(POSTING, "record_no"))?,
        trace_number: r.opt_text(col!(POSTING, "trace_number"))?,
        debit_account: r.text(col!(POSTING, "debit_account"))?,
        credit_account: r.text(col!(POSTING, "credit_account"))?,
        amount_minor: r.int(col!(POSTING, "amount_minor"))?,
        currency: r.text(col!(POSTING, "currency"))?,
        effective_date: r.opt_text(col!(POSTING, "effective_date"))?,
        fingerprint: r.fingerprint(col!(POSTING, "fingerprint"))?,
        run_id: r.int(col!(POSTING, "run_id"))?,
        posted_at: r.text(col!(POSTING, "posted_at"))?,
        repeats: r.int(col!(POSTING, "repeats"))?,
        repeats_by_outcome: RepeatCounts {
            duplicate: r.int(col!(POSTING, "repeat_duplicates"))?,
            conflict: r.int(col!(POSTING, "repeat_conflicts"))?,
            held: r.int(col!(POSTING, "repeat_held"))?,
        },
    })
}

/// Escapes `%`, `_` and `\` for a LIKE pattern with `ESCAPE '\'`.
pub(crate) fn like_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

// ---- decisions ------------------------------------------------------------------------

/// The decision on a held record's key, if one was made: the classification reads it (a
/// rejected key never posts); `resolve` writes it. Binds: tenant, operation, posting_key.
pub(crate) const DECISION_OF_KEY: &str = "SELECT decision, reason, decided_by, decided_at, run_id, posting_id, \
     held_run_id, held_record_no FROM decisions WHERE tenant = $1 AND operation = $2 AND posting_key = $3";
