//! Reconciliation runs in the ledger (migrations/*/0010_reconciliations.sql):
//! reads both sides of a bank account and period, has `crate::reconcile` judge them, and
//! records the run, its items and their members, and — when asked — the corrections, in
//! one transaction.
//!
//! Ours: the postings crediting or debiting a ledger account mapped to the bank account
//! (`account map`), dated (effective date) within the period widened by the day window;
//! a posting and its compensation (`reverse`) cancel out and are left out together; a
//! posting between two mapped accounts never reaches the bank and is left out. Theirs: the
//! booked and provisional entries of the bank account (booking date, else value date),
//! likewise widened. Every posting and entry read is counted in the inputs hash, with its
//! fingerprint (and an entry's status), and so is every mapped account.
//!
//! A run's identity is sha256 of tenant, bank account, period, rule-set hash, inputs hash
//! and whether corrections are posted. The same identity again is the earlier run,
//! reported again: nothing is created. Otherwise the run says what changed since the
//! previous reconciliation of the same account and period (per item key).

mod parted;
mod spill;

use super::breaks::StatementBreak;
use crate::ledger::backend::Begin;
use crate::ledger::store::{Arg, Col, Columns, Row, args, bad, checked, col};
use crate::ledger::ts;
use crate::ledger::{During, Ledger, LedgerError, Result};
use crate::reconcile::{BatchKey, Inputs, Item, Ours, Outcome, TheirDetail, Theirs, rules::Rules};
use chrono::{DateTime, NaiveDate, Utc};
use parted::Decided;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
pub(crate) use spill::Items;
use spill::Sorted;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

/// What `clearledger reconcile` asks for.
#[derive(Clone)]
pub(crate) struct ReconcileRequest<'a> {
    pub(crate) tenant: &'a str,
    pub(crate) bank_account: &'a str,
    pub(crate) from: Option<NaiveDate>,
    pub(crate) to: Option<NaiveDate>,
    pub(crate) rules: &'a Rules,
    pub(crate) dry_run: bool,
    /// Post corrections: `Some(empty)` for every correctable item, `Some(keys)` for
    /// these items only, `None` for none.
    pub(crate) corrections: Option<Vec<String>>,
    pub(crate) at: DateTime<Utc>,
    /// Told each step as it starts (`reading postings and entries`, `matching`,
    /// `recording`): the CLI's progress spinner.
    pub(crate) on_stage: Option<&'a (dyn Fn(&'static str) + Sync)>,
    /// The most postings and entries matched at once (`--part-rows`): a part of the
    /// inputs is read, matched and let go before the next (`store/parted.rs`).
    pub(crate) part_rows: usize,
}

/// One item as stored and reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ItemRow {
    pub(crate) run_id: Option<i64>,
    pub(crate) item_no: i64,
    pub(crate) outcome: String,
    pub(crate) matched_by: Option<String>,
    pub(crate) tolerance: Option<String>,
    pub(crate) currency: String,
    pub(crate) our_amount_minor: i64,
    pub(crate) their_amount_minor: i64,
    pub(crate) delta_minor: i64,
    pub(crate) delta_days: Option<i64>,
    pub(crate) our_keys: Vec<String>,
    pub(crate) our_dates: Vec<String>,
    pub(crate) their_keys: Vec<String>,
    pub(crate) their_dates: Vec<String>,
    /// A posting the item names without consuming it (a return's original, the posting a
    /// duplicate entry repeats).
    pub(crate) refers_to: Option<String>,
    /// Correction postings folded into the item.
    pub(crate) corrections: Vec<String>,
    pub(crate) explanation: String,
    /// The outcome of the same item (key) in the previous reconciliation of this account
    /// and period; `None` when it is new (or there was none).
    pub(crate) previous_outcome: Option<String>,
    /// The correction this run posted (or found posted) for the item.
    pub(crate) correction_key: Option<String>,
    pub(crate) item_key: String,
}

/// The ledger's balance of the mapped accounts against the statement's, per currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BalanceRow {
    pub(crate) currency: String,
    /// Σ credits − Σ debits of the mapped accounts, every posting dated on or before the
    /// cut-off (the period's end; every posting without one).
    pub(crate) ledger_balance_minor: i64,
    /// The closing booked balance of the last final statement of the account in this
    /// currency dated on or before the cut-off.
    pub(crate) statement_closing_minor: Option<i64>,
    pub(crate) statement_date: Option<String>,
    /// statement − ledger.
    pub(crate) drift_minor: Option<i64>,
}

/// Counts and amounts of one outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OutcomeTotals {
    pub(crate) items: u64,
    pub(crate) our_amount_minor: i64,
    pub(crate) their_amount_minor: i64,
    pub(crate) delta_minor: i64,
}

/// What changed since the previous reconciliation of the same account and period.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Changes {
    pub(crate) previous_run_id: Option<i64>,
    /// Items whose key the previous run did not have.
    pub(crate) new_items: u64,
    /// Items of the same key whose outcome changed.
    pub(crate) changed_outcomes: u64,
    /// Items of the previous run whose key this one does not have.
    pub(crate) gone_items: u64,
}

/// A reconciliation run's summary (`--json`; stored with the run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Summary {
    pub(crate) run_id: Option<i64>,
    pub(crate) tenant: String,
    pub(crate) bank_account: String,
    pub(crate) ledger_accounts: Vec<String>,
    pub(crate) from: Option<String>,
    pub(crate) to: Option<String>,
    pub(crate) as_of: Option<String>,
    pub(crate) rules_hash: String,
    pub(crate) inputs_hash: String,
    pub(crate) identity: String,
    pub(crate) postings_read: u64,
    pub(crate) entries_read: u64,
    pub(crate) items: u64,
    /// Per outcome, every outcome named (zeros included), in report order.
    pub(crate) outcomes: BTreeMap<String, OutcomeTotals>,
    /// Items that need an operator (outcomes other than matched, matched within
    /// tolerance, many_to_one, one_to_many, expected, provisional).
    pub(crate) needs_attention: u64,
    pub(crate) changes: Changes,
    pub(crate) balances: Vec<BalanceRow>,
    /// The account's statements in the period recorded unbalanced: they need an
    /// operator whatever the items say (a summary stored before they were kept has none).
    #[serde(default)]
    pub(crate) balance_breaks: Vec<StatementBreak>,
    pub(crate) corrections_posted: u64,
    pub(crate) corrections_duplicate: u64,
    pub(crate) corrections_amount_minor: i64,
}

/// A reconciliation as `reconcile` and `report` print it.
#[derive(Debug)]
pub(crate) struct Reconciliation {
    pub(crate) summary: Summary,
    pub(crate) items: Items,
    /// Per outcome and currency (the summary's totals add currencies up): what the text
    /// summary prints by each currency's exponent.
    pub(crate) by_currency: ByCurrency,
    /// `Some(run)`: these inputs were reconciled before, by that run; nothing was created.
    pub(crate) repeat_of: Option<i64>,
}

/// Items read back and recorded at a time (each backend then inserts them in chunks
/// of the rows one statement takes).
const RECORDED_AT_ONCE: usize = 4096;

/// The next items read back in order, at most [`RECORDED_AT_ONCE`], into `chunk`;
/// `false` when none are left.
fn next_chunk(
    items: &mut impl Iterator<Item = std::io::Result<Decided>>,
    chunk: &mut Vec<Decided>,
) -> Result<bool> {
    chunk.clear();
    for d in items.by_ref().take(RECORDED_AT_ONCE) {
        chunk.push(d.map_err(LedgerError::TempFile)?);
    }
    Ok(!chunk.is_empty())
}

/// Totals by (outcome, currency).
pub(crate) type ByCurrency = BTreeMap<(String, String), OutcomeTotals>;

/// Adds an item to its outcome's totals.
fn add(t: &mut OutcomeTotals, r: &ItemRow) {
    t.items += 1;
    t.our_amount_minor = t.our_amount_minor.saturating_add(r.our_amount_minor);
    t.their_amount_minor = t.their_amount_minor.saturating_add(r.their_amount_minor);
    t.delta_minor = t.delta_minor.saturating_add(r.delta_minor);
}

/// What a reconciliation came to, and whether the transaction it ran in was ended.
struct Ended(ReconcileOutcome, bool);

/// Why a reconciliation was not made.
#[derive(Debug)]
pub(crate) enum ReconcileOutcome {
    Done(Box<Reconciliation>),
    /// No ledger account is mapped to the bank account.
    NotMapped,
    /// `--correct KEY` names an item this reconciliation does not have.
    UnknownItems(Vec<String>),
    /// Corrections would post where this reconciliation does not read them.
    BadCorrectionAccounts(String),
}

/// The fields of a posting's `detail` the cascade reads (unknown ones ignored), borrowed
/// from the detail's text where it has no escapes (no allocation for a field not kept).
#[derive(Debug, Default, Deserialize)]
struct PostingDetail<'a> {
    #[serde(borrow, default)]
    uetr: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    end_to_end_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    instr_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tx_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    original_uetr: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    original_end_to_end_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pmt_inf_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    debtor_name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    creditor_name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    company_identification: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    company_name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    batch_number: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    effective_entry_date: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    individual_identification: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    individual_name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    addenda: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    corrects: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    bank_account: Option<Cow<'a, str>>,
}

impl<'a> PostingDetail<'a> {
    /// The fields of a stored detail, borrowed from it: the compact form read field by
    /// field (no JSON built), a JSON-form detail parsed (a malformed one reads as no fields,
    /// as before the compact form).
    fn read(posting_id: i64, stored: &'a [u8]) -> crate::ledger::Result<Self> {
        let fields = crate::keys::detail::fields(stored)
            .map_err(|source| crate::ledger::LedgerError::BadDetail { posting_id, source })?;
        let Some(fields) = fields else {
            return Ok(serde_json::from_slice(stored).unwrap_or_default());
        };
        let mut d = PostingDetail::default();
        for (k, v) in fields {
            let slot = match k {
                "uetr" => &mut d.uetr,
                "end_to_end_id" => &mut d.end_to_end_id,
                "instr_id" => &mut d.instr_id,
                "tx_id" => &mut d.tx_id,
                "original_uetr" => &mut d.original_uetr,
                "original_end_to_end_id" => &mut d.original_end_to_end_id,
                "pmt_inf_id" => &mut d.pmt_inf_id,
                "debtor_name" => &mut d.debtor_name,
                "creditor_name" => &mut d.creditor_name,
                "company_identification" => &mut d.company_identification,
                "company_name" => &mut d.company_name,
                "batch_number" => &mut d.batch_number,
                "effective_entry_date" => &mut d.effective_entry_date,
                "individual_identification" => &mut d.individual_identification,
                "individual_name" => &mut d.individual_name,
                "addenda" => &mut d.addenda,
                "corrects" => &mut d.corrects,
                "bank_account" => &mut d.bank_account,
                _ => continue,
            };
            *slot = Some(Cow::Borrowed(v));
        }
        Ok(d)
    }
}

/// An entry's `refs` (migrations/*/0009).
#[derive(Debug, Default, Deserialize)]
struct EntryRefs {
    batch_ref: Option<String>,
    uetr: Option<String>,
    instr_id: Option<String>,
    return_reason: Option<String>,
    #[serde(default)]
    details: Vec<EntryRefDetail>,
}

#[derive(Debug, Default, Deserialize)]
struct EntryRefDetail {
    amount_minor: Option<i64>,
    uetr: Option<String>,
    end_to_end_id: Option<String>,
    instr_id: Option<String>,
    return_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct EntryDetail {
    remittance: Option<String>,
}

fn non_empty<S: AsRef<str>>(v: Option<S>) -> Option<String> {
    v.as_ref()
        .map(|s| s.as_ref().trim())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn date(v: Option<&str>) -> Option<NaiveDate> {
    v.and_then(|s| NaiveDate::parse_from_str(s.get(..10).unwrap_or(s), "%Y-%m-%d").ok())
}

fn placeholders(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) const ITEM_COLUMNS: &str = "run_id, item_no, item_key, outcome, matched_by, tolerance, currency, our_amount_minor, \
     their_amount_minor, delta_minor, delta_days, our_keys, our_dates, their_keys, their_dates, refers_to, corrections, \
     explanation, previous_outcome, correction_key";
const ITEM: Columns = Columns(&[
    "run_id",
    "item_no",
    "item_key",
    "outcome",
    "matched_by",
    "tolerance",
    "currency",
    "our_amount_minor",
    "their_amount_minor",
    "delta_minor",
    "delta_days",
    "our_keys",
    "our_dates",
    "their_keys",
    "their_dates",
    "refers_to",
    "corrections",
    "explanation",
    "previous_outcome",
    "correction_key",
]);
const _: () = ITEM.check(ITEM_COLUMNS);

/// The postings a reconciliation reads (`read_ours`, decoded by `our_side`).
const OURS: Columns = Columns(&[
    "posting_id",
    "operation",
    "posting_key",
    "file_id",
    "trace_number",
    "debit_account",
    "credit_account",
    "amount_minor",
    "currency",
    "effective_date",
    "fingerprint",
    "detail",
    "compensates",
]);

/// A posting a late return may return (`late_returns`): its key, amount, whether it
/// credited a mapped account, its date.
const RETURNED_ORIGINAL: Columns = Columns(&[
    "key: operation || ':' || posting_key",
    "amount_minor",
    "on_credit: CAST(CASE WHEN credit_account IN (…) THEN 1 ELSE 0 END AS BIGINT)",
    "effective_date",
]);

/// The ledger's balance per currency over the mapped accounts, and the statements'
/// closing balances (`balances`).
const LEDGER_BALANCE: Columns = Columns(&[
    "currency",
    "credits: CAST(coalesce(sum(CASE WHEN credit_account IN (…) THEN amount_minor ELSE 0 END), 0) AS BIGINT)",
    "debits: CAST(coalesce(sum(CASE WHEN debit_account IN (…) THEN amount_minor ELSE 0 END), 0) AS BIGINT)",
]);
const CLOSING_BALANCE: Columns = Columns(&[
    "balance_currency",
    "closing_minor",
    "closing_date: coalesce(to_date, stmt_date)",
]);

/// A reconciliation found by its identity, or by its account and period.
const RECON_RUN: Columns = Columns(&["run_id"]);

/// The statement entries a reconciliation reads (`read_theirs`, decoded by `their_side`).
const THEIRS: Columns = Columns(&[
    "entry_id",
    "entry_key",
    "amount_minor",
    "currency",
    "credit",
    "reversal",
    "status",
    "booking_date",
    "value_date",
    "bank_ref",
    "customer_ref",
    "end_to_end_id",
    "fingerprint",
    "detail",
    "refs",
]);

/// The last reconciliation of the same account and period: its run id and how many items
/// it has (its items' outcomes are looked up by key a chunk at a time, never held).
type Previous = Option<(i64, u64)>;

/// Logs how long a step took, and the process's peak resident memory so far where the
/// system tells it (`RUST_LOG=clearledger=debug`): what the performance page's figures
/// are broken down by.
fn took(t0: std::time::Instant, step: &str) {
    if !tracing::enabled!(tracing::Level::DEBUG) {
        return;
    }
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status.lines().find_map(|l| l.strip_prefix("VmHWM:"));
    let peak = peak.map(str::trim).unwrap_or("unknown");
    tracing::debug!(ms, peak, "reconcile: {step}");
}

fn date_text(v: Option<NaiveDate>) -> Option<String> {
    v.map(|d| d.to_string())
}

impl Ledger {
    /// Reconciles a bank account over a period (see the module's doc): the accounts
    /// mapped to it, both sides read, the run's identity (the same identity again is the
    /// earlier run), the engine's items, and — unless a dry run — the run recorded.
    ///
    /// A recorded run reads its inputs inside the transaction that records it, no other
    /// write transaction beside it until it commits (`Begin::Exclusive`): an ingest
    /// committing meanwhile would otherwise have the run post a correction for a posting it
    /// never saw (docs/principles.md §11). Writers wait for it, up to their
    /// `--lock-timeout`.
    pub(crate) async fn reconcile(
        &mut self,
        req: &ReconcileRequest<'_>,
    ) -> Result<ReconcileOutcome> {
        let mapped = match self.mapped_accounts(req).await? {
            Ok(mapped) => mapped,
            Err(refused) => return Ok(refused),
        };
        if req.dry_run {
            // Its rows are read twice (scanned, then each part by id): from one snapshot.
            self.store()
                .begin(Begin::Snapshot)
                .await
                .during("starting the reconciliation's transaction")?;
            let res = self.reconcile_read(req, &mapped).await;
            let _ = self.store().rollback().await;
            return res.map(|e| e.0);
        }
        self.begin_reconciliation().await?;
        let res = self.reconcile_read(req, &mapped).await;
        if !matches!(res, Ok(Ended(_, true))) {
            let _ = self.store().rollback().await;
        }
        res.map(|e| e.0)
    }

    /// The write transaction of a recorded run, no other writer beside it.
    async fn begin_reconciliation(&mut self) -> Result<()> {
        self.store()
            .begin(Begin::Exclusive)
            .await
            .during("starting the reconciliation's transaction")
    }

    /// Reads both sides, matches them and (unless a dry run) records the run, inside the
    /// transaction the caller began; the answer, and whether that transaction was ended
    /// (committed, or rolled back by [`Ledger::record`]).
    async fn reconcile_read(
        &mut self,
        req: &ReconcileRequest<'_>,
        mapped: &[String],
    ) -> Result<Ended> {
        let stage = |s: &'static str| {
            if let Some(f) = req.on_stage {
                f(s)
            }
        };
        stage("reading postings and entries");
        let t0 = std::time::Instant::now();
        let scan = self.scan_sides(req, mapped).await?;
        took(t0, "both sides scanned");
        let balances = self.balances(req, mapped).await?;
        let breaks = self.balance_breaks(req).await?;
        crate::fault::point("reconcile_after_read");
        let identity = run_identity(req, &scan.inputs_hash, &balances, &breaks);
        if let Some(earlier) = self.earlier_run(req.tenant, &identity).await? {
            return Ok(Ended(ReconcileOutcome::Done(earlier), false));
        }
        let head = Head {
            mapped,
            as_of: req.to.or(scan.latest),
            postings_read: scan.postings_read,
            entries_read: scan.entries_read,
            inputs_hash: scan.inputs_hash.clone(),
            identity,
            balances,
            breaks,
        };
        stage("matching");
        let t0 = std::time::Instant::now();
        let previous = self.previous_run(req).await?;
        let sorted = self.match_in_parts(req, mapped, scan, head.as_of).await?;
        let sorted = self.with_previous(req.tenant, &previous, sorted).await?;
        took(t0, "matched");
        let mut summary = new_summary(req, head);
        let t0 = std::time::Instant::now();
        let (unknown, by_currency) = summarize(req, &sorted, &previous, &mut summary)?;
        took(t0, "items counted");
        if let Some(unknown) = unknown {
            return Ok(Ended(ReconcileOutcome::UnknownItems(unknown), false));
        }
        if req.dry_run {
            return Ok(Ended(done(summary, sorted, by_currency), false));
        }
        stage("recording");
        let t0 = std::time::Instant::now();
        let recorded = self.record(req, (sorted, by_currency), summary).await?;
        took(t0, "recorded");
        Ok(Ended(recorded, true))
    }

    /// The ledger accounts mapped to the bank account, in byte order whatever the
    /// database's collation (the inputs hash and the default correction account are then
    /// the same on both backends); `Err` with the outcome that refuses the run: none
    /// mapped, or corrections that would post where the next run does not read them.
    async fn mapped_accounts(
        &mut self,
        req: &ReconcileRequest<'_>,
    ) -> Result<std::result::Result<Vec<String>, ReconcileOutcome>> {
        let mut mapped: Vec<String> = self
            .account_mappings(req.tenant, Some(req.bank_account))
            .await?
            .into_iter()
            .map(|m| m.ledger_account)
            .collect();
        if mapped.is_empty() {
            return Ok(Err(ReconcileOutcome::NotMapped));
        }
        mapped.sort();
        if req.corrections.is_some()
            && let Some(why) = corrections_unreadable(req, &mapped)
        {
            return Ok(Err(ReconcileOutcome::BadCorrectionAccounts(why)));
        }
        Ok(Ok(mapped))
    }

    /// The run recorded earlier under `identity`, reported again as a repeat of it.
    async fn earlier_run(
        &mut self,
        tenant: &str,
        identity: &str,
    ) -> Result<Option<Box<Reconciliation>>> {
        let Some(run_id) = self.reconciliation_of_identity(tenant, identity).await? else {
            return Ok(None);
        };
        let mut r = self
            .stored_reconciliation(tenant, run_id)
            .await?
            .ok_or(LedgerError::NoRow)?;
        r.repeat_of = Some(run_id);
        Ok(Some(Box::new(r)))
    }

    /// Records the run, its items and (when asked) its corrections in the transaction
    /// begun for it, and ends it: committed, or rolled back.
    async fn record(
        &mut self,
        req: &ReconcileRequest<'_>,
        (sorted, by_currency): (Sorted, ByCurrency),
        mut summary: Summary,
    ) -> Result<ReconcileOutcome> {
        let res = self.record_reconciliation(req, &sorted, &mut summary).await;
        match res {
            Ok(true) => {}
            Ok(false) => {
                // Another process recorded the same identity first: its run is this one.
                let _ = self.store().rollback().await;
                let earlier = self.earlier_run(req.tenant, &summary.identity).await?;
                return Ok(ReconcileOutcome::Done(earlier.ok_or(LedgerError::NoRow)?));
            }
            Err(e) => {
                let _ = self.store().rollback().await;
                return Err(e);
            }
        }
        let run_id = summary.run_id.unwrap_or_default();
        self.end_run(req.tenant, Ok(run_id)).await?;
        Ok(done(summary, sorted, by_currency))
    }

    /// A return booked after the day window of the payment it returns: its original is
    /// not among the postings read for the period. Each entry left `missing_ours` that is a
    /// return (flagged, or quoting a posting of ours of the other sign) is looked up by its
    /// identifiers in the trace-number index (ISO postings keep their UETR or EndToEndId
    /// there), on any date: found, the item is `returned`, naming the posting (by key, in
    /// `refers_to`). Returns the keys found, by item key; the items are put back in report
    /// order (a stable sort by outcome keeps each outcome's own order).
    async fn late_returns(
        &mut self,
        req: &ReconcileRequest<'_>,
        mapped: &[String],
        inputs: &Inputs,
        items: &mut [Item],
    ) -> Result<HashMap<String, String>> {
        let mut found = HashMap::new();
        let list = placeholders(5, mapped.len());
        let sql = format!(
            "SELECT operation || ':' || posting_key, amount_minor, \
             CAST(CASE WHEN credit_account IN ({list}) THEN 1 ELSE 0 END AS BIGINT), effective_date \
             FROM postings p WHERE {trace} \
             AND (debit_account IN ({list}) OR credit_account IN ({list})) ORDER BY posting_id LIMIT 20",
            trace =
                crate::ledger::sql::trace_is(self.store().dialect(), "p", "$1", "$2", "$3", "$4")
        );
        for it in items.iter_mut() {
            if it.outcome != Outcome::MissingOurs || it.theirs.len() != 1 {
                continue;
            }
            let e = &inputs.theirs[it.theirs[0]];
            let values = [&e.uetr, &e.end_to_end_id, &e.customer_ref, &e.bank_ref];
            let mut hit = None;
            for (name, v) in ["uetr", "end_to_end_id", "reference", "reference"]
                .into_iter()
                .zip(values)
            {
                let Some(v) = v.as_deref().filter(|v| !v.trim().is_empty()) else {
                    continue;
                };
                let (lo, hi) = crate::ledger::sql::key_prefix_range(&format!("uetr:{v}"));
                let mut a: Vec<Arg> = vec![
                    Arg::Text(req.tenant),
                    Arg::Text(v),
                    Arg::Text(&lo),
                    Arg::Text(&hi),
                ];
                a.extend(mapped.iter().map(|m| Arg::Text(m)));
                for r in self
                    .store()
                    .query(RETURNED_ORIGINAL.checked(&sql), &a)
                    .await
                    .during("looking up a return's original")?
                {
                    if let Some((key, date)) = returned_original(&r, e)? {
                        hit = Some((key, date, name, v.to_string()));
                        break;
                    }
                }
                if hit.is_some() {
                    break;
                }
            }
            if let Some((key, date, name, v)) = hit {
                it.outcome = Outcome::Returned;
                it.explanation = format!(
                    "returns posting {key} by {name}={v} (dated {}, before the period read); no return of it is \
                     posted; amount {}{} {}",
                    date.unwrap_or_default(),
                    if e.amount_minor > 0 { "+" } else { "" },
                    crate::money::format_minor(e.amount_minor, &e.currency),
                    e.currency
                );
                found.insert(it.key.clone(), key);
            }
        }
        if !found.is_empty() {
            items.sort_by_key(|i| i.outcome);
        }
        Ok(found)
    }

    async fn balances(
        &mut self,
        req: &ReconcileRequest<'_>,
        mapped: &[String],
    ) -> Result<Vec<BalanceRow>> {
        let n = mapped.len();
        let list = placeholders(3, n);
        let sql = format!(
            "SELECT currency, CAST(coalesce(sum(CASE WHEN credit_account IN ({list}) THEN amount_minor ELSE 0 END), 0) AS BIGINT), \
             CAST(coalesce(sum(CASE WHEN debit_account IN ({list}) THEN amount_minor ELSE 0 END), 0) AS BIGINT) \
             FROM postings WHERE {tenant} = $1 AND (debit_account IN ({list}) OR credit_account IN ({list})) \
             AND ($2 = '' OR effective_date IS NULL OR effective_date <= $2) GROUP BY currency ORDER BY currency",
            tenant = self.store().dialect().scanned("tenant"),
        );
        let cut = req.to.map(|t| t.to_string());
        let mut a: Vec<Arg> = vec![
            Arg::Text(req.tenant),
            Arg::Text(cut.as_deref().unwrap_or("")),
        ];
        a.extend(mapped.iter().map(|m| Arg::Text(m)));
        let mut by: BTreeMap<String, BalanceRow> = BTreeMap::new();
        for r in self
            .store()
            .query(LEDGER_BALANCE.checked(&sql), &a)
            .await
            .during("summing the ledger balance")?
        {
            let c = r.text(col!(LEDGER_BALANCE, "currency"))?;
            by.insert(
                c.clone(),
                BalanceRow {
                    currency: c,
                    ledger_balance_minor: r
                        .int(col!(LEDGER_BALANCE, "credits"))?
                        .saturating_sub(r.int(col!(LEDGER_BALANCE, "debits"))?),
                    statement_closing_minor: None,
                    statement_date: None,
                    drift_minor: None,
                },
            );
        }
        let rows = self
            .store()
            .query(
                checked!(
                    CLOSING_BALANCE,
                    "SELECT balance_currency, closing_minor, coalesce(to_date, stmt_date) FROM statements \
                     WHERE tenant = $1 AND account = $2 AND kind = 'final' AND closing_minor IS NOT NULL \
                     AND balance_currency IS NOT NULL AND ($3 = '' OR coalesce(to_date, stmt_date) <= $3) \
                     ORDER BY coalesce(to_date, stmt_date), statement_id"
                ),
                &args![req.tenant, req.bank_account, cut.as_deref().unwrap_or("")],
            )
            .await
            .during("reading the statements' closing balances")?;
        for r in rows {
            let c = r.text(col!(CLOSING_BALANCE, "balance_currency"))?;
            let b = by.entry(c.clone()).or_insert(BalanceRow {
                currency: c,
                ledger_balance_minor: 0,
                statement_closing_minor: None,
                statement_date: None,
                drift_minor: None,
            });
            // The last one (ordered by date) stays.
            b.statement_closing_minor = r.opt_int(col!(CLOSING_BALANCE, "closing_minor"))?;
            b.statement_date = r.opt_text(col!(CLOSING_BALANCE, "closing_date"))?;
        }
        for b in by.values_mut() {
            b.drift_minor = b
                .statement_closing_minor
                .map(|c| c.saturating_sub(b.ledger_balance_minor));
        }
        Ok(by.into_values().collect())
    }

    async fn reconciliation_of_identity(
        &mut self,
        tenant: &str,
        identity: &str,
    ) -> Result<Option<i64>> {
        self.store()
            .query_opt(
                checked!(
                    RECON_RUN,
                    "SELECT run_id FROM reconciliations WHERE tenant = $1 AND identity = $2"
                ),
                &args![tenant, identity],
            )
            .await?
            .map(|r| r.int(col!(RECON_RUN, "run_id")))
            .transpose()
    }

    /// The latest reconciliation of the same account and period, and how many items it
    /// has.
    async fn previous_run(&mut self, req: &ReconcileRequest<'_>) -> Result<Previous> {
        let d = |v: Option<NaiveDate>| v.map(|d| d.to_string()).unwrap_or_default();
        let (from, to) = (d(req.from), d(req.to));
        let Some(r) = self
            .store()
            .query_opt(
                checked!(
                    RECON_RUN,
                    "SELECT run_id FROM reconciliations WHERE tenant = $1 AND bank_account = $2 \
                     AND coalesce(from_date, '') = $3 AND coalesce(to_date, '') = $4 ORDER BY run_id DESC LIMIT 1"
                ),
                &args![req.tenant, req.bank_account, from.as_str(), to.as_str()],
            )
            .await?
        else {
            return Ok(None);
        };
        let run_id = r.int(col!(RECON_RUN, "run_id"))?;
        const COUNT: Columns = Columns(&["n"]);
        let n = self
            .store()
            .query_one(
                checked!(
                    COUNT,
                    "SELECT count(*) AS n FROM recon_items WHERE tenant = $1 AND run_id = $2"
                ),
                &args![req.tenant, run_id],
            )
            .await?
            .int(col!(COUNT, "n"))?;
        Ok(Some((run_id, n as u64)))
    }

    /// The items, each with the outcome its key had in the previous run, looked up a
    /// chunk at a time (the previous run's items are never all held).
    async fn with_previous(
        &mut self,
        tenant: &str,
        previous: &Previous,
        sorted: Sorted,
    ) -> Result<Sorted> {
        let Some((run_id, _)) = *previous else {
            return Ok(sorted);
        };
        let mut out = spill::Sorter::in_order();
        let mut items = sorted.iter().map_err(LedgerError::TempFile)?;
        let mut chunk: Vec<Decided> = Vec::with_capacity(RECORDED_AT_ONCE);
        while next_chunk(&mut items, &mut chunk)? {
            let was = self.outcomes_of(tenant, run_id, &chunk).await?;
            for mut d in chunk.drain(..) {
                d.row.previous_outcome = was.get(&d.row.item_key).cloned();
                out.push(d).map_err(LedgerError::TempFile)?;
            }
        }
        out.finish().map_err(LedgerError::TempFile)
    }

    /// The outcomes run `run_id` gave these items' keys (the keys it had), by key.
    async fn outcomes_of(
        &mut self,
        tenant: &str,
        run_id: i64,
        items: &[Decided],
    ) -> Result<HashMap<String, String>> {
        let keys: Vec<&str> = items.iter().map(|d| d.row.item_key.as_str()).collect();
        let (filter, list) =
            parted::in_list(self.store().dialect(), ("item_key", 3, "TEXT"), &keys);
        const OUTCOME: Columns = Columns(&["item_key", "outcome"]);
        let sql = format!(
            "SELECT item_key, outcome FROM recon_items WHERE tenant = $1 AND run_id = $2 {filter}"
        );
        let mut was = HashMap::with_capacity(items.len());
        self.store()
            .each_row(
                OUTCOME.checked(&sql),
                &args![tenant, run_id, list.as_str()],
                &mut |r| {
                    let key = r.text(col!(OUTCOME, "item_key"))?;
                    was.insert(key, r.text(col!(OUTCOME, "outcome"))?);
                    Ok(())
                },
            )
            .await
            .during("reading the previous run's outcomes")?;
        Ok(was)
    }

    /// Records the run inside the open transaction; `false` when the identity was taken.
    async fn record_reconciliation(
        &mut self,
        req: &ReconcileRequest<'_>,
        sorted: &Sorted,
        summary: &mut Summary,
    ) -> Result<bool> {
        let at = ts(&req.at);
        let run_id = self.insert_recon_run(req, &at).await?;
        summary.run_id = Some(run_id);
        // The claim first: the same identity recorded by another process wins.
        if !self.claim_identity(req, run_id, summary).await? {
            return Ok(false);
        }
        // Read back in report order a chunk at a time: the chunk's corrections posted,
        // then its items and their members.
        let mut items = sorted.iter().map_err(LedgerError::TempFile)?;
        let mut chunk = Vec::with_capacity(RECORDED_AT_ONCE);
        while next_chunk(&mut items, &mut chunk)? {
            self.post_corrections(req, run_id, &at, &mut chunk, summary)
                .await?;
            self.insert_items(req.tenant, run_id, &chunk).await?;
            self.insert_members(req.tenant, run_id, &chunk).await?;
        }
        self.complete_recon_run(req.tenant, run_id, sorted.len(), summary)
            .await?;
        crate::fault::point("before_commit");
        Ok(true)
    }

    /// The run's row, of kind `reconcile`, named by the account and period.
    async fn insert_recon_run(&mut self, req: &ReconcileRequest<'_>, at: &str) -> Result<i64> {
        let d = |v: Option<NaiveDate>| date_text(v).unwrap_or_default();
        let (from, to) = (d(req.from), d(req.to));
        let file_id = format!("reconcile:{}:{from}:{to}", req.bank_account);
        let source = format!("reconcile {} {from}..{to}", req.bank_account);
        let a = [
            Arg::Text(req.tenant),
            Arg::OptText(Some(&file_id)),
            Arg::Text("reconciliation"),
            Arg::Text(&source),
            Arg::Text(at),
            Arg::Text("reconcile"),
            Arg::OptText(None),
            Arg::OptText(None),
        ];
        use crate::ledger::sql::NEW_RUN;
        self.store()
            .query_one(
                checked!(NEW_RUN, crate::operator::sql::INSERT_ACTION_RUN),
                &a,
            )
            .await?
            .int(col!(NEW_RUN, "run_id"))
    }

    /// Claims the run's identity (the unique index decides); `false`: another process
    /// recorded it first.
    async fn claim_identity(
        &mut self,
        req: &ReconcileRequest<'_>,
        run_id: i64,
        summary: &Summary,
    ) -> Result<bool> {
        let claimed = self
            .store()
            .execute(
                "INSERT INTO reconciliations (run_id, tenant, bank_account, from_date, to_date, rules_hash, \
                 inputs_hash, identity, previous_run_id, summary, rules) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, '{}', $10) ON CONFLICT DO NOTHING",
                &[
                    Arg::Int(run_id),
                    Arg::Text(req.tenant),
                    Arg::Text(req.bank_account),
                    Arg::OptText(summary.from.as_deref()),
                    Arg::OptText(summary.to.as_deref()),
                    Arg::Text(&summary.rules_hash),
                    Arg::Text(&summary.inputs_hash),
                    Arg::Text(&summary.identity),
                    Arg::OptInt(summary.changes.previous_run_id),
                    Arg::Text(&req.rules.canonical()),
                ],
            )
            .await
            .during("claiming the reconciliation's identity")?;
        Ok(claimed != 0)
    }

    /// The run's items, in chunks the backend takes in one statement.
    async fn insert_items(&mut self, tenant: &str, run_id: i64, decided: &[Decided]) -> Result<()> {
        let rows: Vec<&ItemRow> = decided.iter().map(|d| &d.row).collect();
        let texts: Vec<[String; 5]> = rows
            .iter()
            .map(|r| {
                let j = |v: &Vec<String>| serde_json::to_string(v).unwrap_or_default();
                [
                    j(&r.our_keys),
                    j(&r.our_dates),
                    j(&r.their_keys),
                    j(&r.their_dates),
                    j(&r.corrections),
                ]
            })
            .collect();
        let item_rows: Vec<[Arg; 21]> = rows
            .iter()
            .zip(&texts)
            .map(|(r, t)| item_args(tenant, run_id, r, t))
            .collect();
        let insert = format!("INSERT INTO recon_items (tenant, {ITEM_COLUMNS})");
        for chunk in item_rows.chunks(self.store().chunk_rows().max(1)) {
            self.store()
                .insert_rows(&insert, chunk, "recording the reconciliation's items")
                .await?;
        }
        Ok(())
    }

    /// Which postings and entries each item holds.
    async fn insert_members(
        &mut self,
        tenant: &str,
        run_id: i64,
        decided: &[Decided],
    ) -> Result<()> {
        let mut members: Vec<[Arg; 5]> = Vec::new();
        for d in decided {
            let no = d.row.item_no;
            for &id in &d.our_ids {
                members.push([
                    Arg::Text(tenant),
                    Arg::Int(run_id),
                    Arg::Text("ours"),
                    Arg::Int(id),
                    Arg::Int(no),
                ]);
            }
            for &id in &d.their_ids {
                members.push([
                    Arg::Text(tenant),
                    Arg::Int(run_id),
                    Arg::Text("theirs"),
                    Arg::Int(id),
                    Arg::Int(no),
                ]);
            }
        }
        for chunk in members.chunks(self.store().chunk_rows().max(1)) {
            self.store()
                .insert_rows(
                    "INSERT INTO recon_members (tenant, run_id, side, member_id, item_no)",
                    chunk,
                    "recording the reconciliation's members",
                )
                .await?;
        }
        Ok(())
    }

    /// The summary stored with the run, and the run completed with its totals.
    async fn complete_recon_run(
        &mut self,
        tenant: &str,
        run_id: i64,
        items: usize,
        summary: &Summary,
    ) -> Result<()> {
        let json = serde_json::to_string(summary).unwrap_or_default();
        self.store()
            .execute(
                "UPDATE reconciliations SET summary = $1 WHERE tenant = $2 AND run_id = $3",
                &args![json.as_str(), tenant, run_id],
            )
            .await?;
        let finished = ts(&Utc::now());
        let a = args![
            finished.as_str(),
            items as i64,
            summary.corrections_posted as i64,
            summary.corrections_duplicate as i64,
            summary.corrections_amount_minor,
            run_id,
            tenant
        ];
        self.store()
            .execute(crate::operator::sql::COMPLETE_ACTION_RUN, &a)
            .await?;
        self.store()
            .execute(
                crate::operator::sql::ACTION_RUN_TOTALS,
                &args![tenant, run_id],
            )
            .await?;
        Ok(())
    }

    async fn post_corrections(
        &mut self,
        req: &ReconcileRequest<'_>,
        run_id: i64,
        at: &str,
        decided: &mut [Decided],
        summary: &mut Summary,
    ) -> Result<()> {
        for d in decided.iter_mut() {
            let Some(c) = &mut d.correction else {
                continue;
            };
            c.file_id = format!("reconcile:{run_id}");
            if self.post_correction(req, run_id, at, c).await? {
                summary.corrections_posted += 1;
                summary.corrections_amount_minor =
                    summary.corrections_amount_minor.saturating_add(c.amount);
            } else {
                self.journal_correction_repeat(req, run_id, d.row.item_no, &c.key)
                    .await?;
                summary.corrections_duplicate += 1;
            }
        }
        Ok(())
    }

    /// Posts one correction under its key; `false`: the key posted before (a correction
    /// is a money movement with its own key, docs/principles.md §11).
    async fn post_correction(
        &mut self,
        req: &ReconcileRequest<'_>,
        run_id: i64,
        at: &str,
        c: &Correction,
    ) -> Result<bool> {
        let fp = crate::keys::fingerprint("correction-v1", &c.fields);
        let detail = crate::keys::detail::encode(&c.fields);
        let fp = crate::ledger::fingerprint_bytes(&fp)?;
        let a = [
            Arg::Text(req.tenant),
            Arg::Text(crate::keys::OPERATION_CORRECTION),
            Arg::Text(&c.key),
            Arg::Text(&c.file_id),
            Arg::Int(c.item_no),
            Arg::OptText(None),
            Arg::Text(&c.debit),
            Arg::Text(&c.credit),
            Arg::Int(c.amount),
            Arg::Text(&c.currency),
            Arg::OptText(c.date.as_deref()),
            Arg::Bytes(&fp),
            Arg::Bytes(&detail),
            Arg::Int(run_id),
            Arg::Text(at),
        ];
        let insert = crate::operator::sql::insert_decided_posting();
        let posted = self
            .store()
            .query_opt(&insert, &a)
            .await
            .during("posting a correction")?;
        Ok(posted.is_some())
    }

    /// A correction whose key posted before: journaled as a duplicate of that posting.
    async fn journal_correction_repeat(
        &mut self,
        req: &ReconcileRequest<'_>,
        run_id: i64,
        item_no: i64,
        key: &str,
    ) -> Result<()> {
        const ORIGINAL: Columns = Columns(&["posting_id"]);
        let original = self
            .store()
            .query_one(
                checked!(
                    ORIGINAL,
                    "SELECT posting_id FROM postings WHERE tenant = $1 AND operation = $2 AND posting_key = $3"
                ),
                &args![req.tenant, crate::keys::OPERATION_CORRECTION, key],
            )
            .await?
            .int(col!(ORIGINAL, "posting_id"))?;
        self.store()
            .execute(
                "INSERT INTO journal (run_id, record_no, tenant, outcome, original_posting_id) \
                 VALUES ($1, $2, $3, 'duplicate', $4)",
                &args![run_id, item_no, req.tenant, original],
            )
            .await
            .during("journaling a correction posted before")?;
        Ok(())
    }

    /// A reconciliation run as recorded (`report RUN`).
    pub(crate) async fn stored_reconciliation(
        &mut self,
        tenant: &str,
        run_id: i64,
    ) -> Result<Option<Reconciliation>> {
        const SUMMARY: Columns = Columns(&["summary"]);
        let Some(r) = self
            .store()
            .query_opt(
                checked!(
                    SUMMARY,
                    "SELECT summary FROM reconciliations WHERE tenant = $1 AND run_id = $2"
                ),
                &args![tenant, run_id],
            )
            .await?
        else {
            return Ok(None);
        };
        let summary = col!(SUMMARY, "summary");
        let summary: Summary = serde_json::from_str(&r.text(summary)?)
            .map_err(|_| bad(summary, "a reconciliation summary"))?;
        let mut items = spill::Sorter::in_order();
        let mut by_currency = ByCurrency::new();
        let sql = format!(
            "SELECT {ITEM_COLUMNS} FROM recon_items WHERE tenant = $1 AND run_id = $2 ORDER BY item_no"
        );
        self.store()
            .each_row(&sql, &args![tenant, run_id], &mut |r| {
                let item = stored_item(r)?;
                add(
                    by_currency
                        .entry((item.outcome.clone(), item.currency.clone()))
                        .or_default(),
                    &item,
                );
                items
                    .push(Decided::stored(item))
                    .map_err(LedgerError::TempFile)
            })
            .await
            .during("reading the reconciliation's items")?;
        let sorted = items.finish().map_err(LedgerError::TempFile)?;
        Ok(Some(Reconciliation {
            summary,
            by_currency,
            items: Items {
                sorted,
                run_id: Some(run_id),
            },
            repeat_of: None,
        }))
    }
}

/// An item as `recon_items` stores it (a row of `ITEM_COLUMNS`).
pub(crate) fn stored_item(r: &Row) -> Result<ItemRow> {
    let list = |c: Col| -> Result<Vec<String>> {
        serde_json::from_str(&r.text(c)?).map_err(|_| bad(c, "a JSON list"))
    };
    Ok(ItemRow {
        run_id: Some(r.int(col!(ITEM, "run_id"))?),
        item_no: r.int(col!(ITEM, "item_no"))?,
        item_key: r.text(col!(ITEM, "item_key"))?,
        outcome: r.text(col!(ITEM, "outcome"))?,
        matched_by: r.opt_text(col!(ITEM, "matched_by"))?,
        tolerance: r.opt_text(col!(ITEM, "tolerance"))?,
        currency: r.text(col!(ITEM, "currency"))?,
        our_amount_minor: r.int(col!(ITEM, "our_amount_minor"))?,
        their_amount_minor: r.int(col!(ITEM, "their_amount_minor"))?,
        delta_minor: r.int(col!(ITEM, "delta_minor"))?,
        delta_days: r.opt_int(col!(ITEM, "delta_days"))?,
        our_keys: list(col!(ITEM, "our_keys"))?,
        our_dates: list(col!(ITEM, "our_dates"))?,
        their_keys: list(col!(ITEM, "their_keys"))?,
        their_dates: list(col!(ITEM, "their_dates"))?,
        refers_to: r.opt_text(col!(ITEM, "refers_to"))?,
        corrections: list(col!(ITEM, "corrections"))?,
        explanation: r.text(col!(ITEM, "explanation"))?,
        previous_outcome: r.opt_text(col!(ITEM, "previous_outcome"))?,
        correction_key: r.opt_text(col!(ITEM, "correction_key"))?,
    })
}

/// Why corrections could not be read back by the next run, if they could not: the
/// correction account must be mapped, the suspense account must not be.
fn corrections_unreadable(req: &ReconcileRequest<'_>, mapped: &[String]) -> Option<String> {
    let c = &req.rules.corrections;
    if let Some(l) = &c.ledger_account
        && !mapped.contains(l)
    {
        return Some(format!(
            "[corrections] ledger_account {l:?} is not mapped to bank account {:?} (mapped: {}): \
             its corrections would never be read back",
            req.bank_account,
            mapped.join(", ")
        ));
    }
    let suspense = c
        .suspense_account
        .clone()
        .unwrap_or_else(|| format!("suspense:{}", req.bank_account));
    mapped.contains(&suspense).then(|| {
        format!(
            "the suspense account {suspense:?} is mapped to bank account {:?}: a correction \
             between two mapped accounts never reaches the bank and would never be read back",
            req.bank_account
        )
    })
}

/// A run's identity: tenant, bank account, period, rules, inputs, the corrections asked
/// for and the balances read (a change in any is a new run).
fn run_identity(
    req: &ReconcileRequest<'_>,
    inputs_hash: &str,
    balances: &[BalanceRow],
    breaks: &[StatementBreak],
) -> String {
    let corrections = match &req.corrections {
        None => "no-corrections".to_string(),
        Some(keys) => {
            let mut k = keys.clone();
            k.sort();
            k.dedup();
            format!("corrections:{}", k.join(","))
        }
    };
    let mut h = Sha256::new();
    for part in [
        req.tenant.to_string(),
        req.bank_account.to_string(),
        date_text(req.from).unwrap_or_default(),
        date_text(req.to).unwrap_or_default(),
        req.rules.hash(),
        inputs_hash.to_string(),
        corrections,
        // The balance check reads postings before the period and the statements'
        // closing balances: a change there is a new run too.
        serde_json::to_string(&balances).unwrap_or_default(),
    ] {
        h.update(part.as_bytes());
        h.update([0x1f]);
    }
    // A statement recorded unbalanced since is a new run too (nothing added when there is
    // none: the identities of runs recorded before breaks were kept stay as they were).
    if !breaks.is_empty() {
        h.update(serde_json::to_string(breaks).unwrap_or_default().as_bytes());
        h.update([0x1f]);
    }
    hex::encode(h.finalize())
}

/// What a run's summary is made of besides its items.
struct Head<'a> {
    mapped: &'a [String],
    as_of: Option<NaiveDate>,
    postings_read: u64,
    entries_read: u64,
    inputs_hash: String,
    identity: String,
    balances: Vec<BalanceRow>,
    breaks: Vec<StatementBreak>,
}

/// The run's summary before it is tallied and recorded, with what changed since the
/// previous run of the same account and period.
fn new_summary(req: &ReconcileRequest<'_>, head: Head<'_>) -> Summary {
    Summary {
        run_id: None,
        tenant: req.tenant.to_string(),
        bank_account: req.bank_account.to_string(),
        ledger_accounts: head.mapped.to_vec(),
        from: date_text(req.from),
        to: date_text(req.to),
        as_of: date_text(head.as_of),
        rules_hash: req.rules.hash(),
        inputs_hash: head.inputs_hash,
        identity: head.identity,
        postings_read: head.postings_read,
        entries_read: head.entries_read,
        items: 0,
        outcomes: BTreeMap::new(),
        needs_attention: 0,
        changes: Changes::default(),
        balances: head.balances,
        balance_breaks: head.breaks,
        corrections_posted: 0,
        corrections_duplicate: 0,
        corrections_amount_minor: 0,
    }
}

/// An item's row as bound to `INSERT INTO recon_items ({ITEM_COLUMNS})`; `texts` are its
/// JSON lists (our keys and dates, their keys and dates, corrections).
fn item_args<'a>(
    tenant: &'a str,
    run_id: i64,
    r: &'a ItemRow,
    t: &'a [String; 5],
) -> [Arg<'a>; 21] {
    [
        Arg::Text(tenant),
        Arg::Int(run_id),
        Arg::Int(r.item_no),
        Arg::Text(&r.item_key),
        Arg::Text(&r.outcome),
        Arg::OptText(r.matched_by.as_deref()),
        Arg::OptText(r.tolerance.as_deref()),
        Arg::Text(&r.currency),
        Arg::Int(r.our_amount_minor),
        Arg::Int(r.their_amount_minor),
        Arg::Int(r.delta_minor),
        Arg::OptInt(r.delta_days),
        Arg::Text(&t[0]),
        Arg::Text(&t[1]),
        Arg::Text(&t[2]),
        Arg::Text(&t[3]),
        Arg::OptText(r.refers_to.as_deref()),
        Arg::Text(&t[4]),
        Arg::Text(&r.explanation),
        Arg::OptText(r.previous_outcome.as_deref()),
        Arg::OptText(r.correction_key.as_deref()),
    ]
}

/// A correction an item asks for: which accounts, how much, dated when, and the fields
/// its fingerprint and detail are made of.
#[derive(Clone)]
struct Correction {
    key: String,
    /// The reconciliation run's, and the item's number in it: the posting's source.
    file_id: String,
    item_no: i64,
    currency: String,
    debit: String,
    credit: String,
    amount: i64,
    date: Option<String>,
    fields: Vec<(&'static str, String)>,
}

/// The correction of item `it`: between the rules' (or the item's, or the first mapped)
/// ledger account and the suspense account, by the item's difference.
fn correction_of(
    req: &ReconcileRequest<'_>,
    inputs: &Inputs,
    it: &Item,
    row: &ItemRow,
    mapped: &[String],
) -> Correction {
    let rules = &req.rules.corrections;
    let suspense = rules
        .suspense_account
        .clone()
        .unwrap_or_else(|| format!("suspense:{}", req.bank_account));
    let account = rules
        .ledger_account
        .clone()
        .or_else(|| {
            it.ours
                .first()
                .map(|&x| inputs.ours[x].ledger_account.clone())
        })
        .unwrap_or_else(|| mapped[0].clone());
    let delta = it.delta_minor;
    // Δ > 0: the bank holds more than the ledger says: credit the account.
    let (debit, credit) = if delta > 0 {
        (suspense.clone(), account.clone())
    } else {
        (account.clone(), suspense.clone())
    };
    // The item's earliest date, within the period: the next run of the period reads it
    // back.
    let date = row
        .their_dates
        .iter()
        .chain(&row.our_dates)
        .filter_map(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
        .min()
        .map(|d| {
            let d = req.from.map_or(d, |f| d.max(f));
            req.to.map_or(d, |t| d.min(t)).to_string()
        });
    let fields = vec![
        ("bank_account", req.bank_account.to_string()),
        ("corrects", it.key.clone()),
        ("outcome", it.outcome.as_str().to_string()),
        ("delta_minor", delta.to_string()),
        ("currency", it.currency.clone()),
        ("ledger_account", account),
        ("suspense_account", suspense),
    ];
    Correction {
        key: correction_key(req.bank_account, it),
        file_id: String::new(),
        item_no: row.item_no,
        currency: it.currency.clone(),
        debit,
        credit,
        amount: delta.unsigned_abs().min(i64::MAX as u64) as i64,
        date,
        fields,
    }
}

fn done(summary: Summary, sorted: Sorted, by_currency: ByCurrency) -> ReconcileOutcome {
    let run_id = summary.run_id;
    ReconcileOutcome::Done(Box::new(Reconciliation {
        summary,
        items: Items { sorted, run_id },
        by_currency,
        repeat_of: None,
    }))
}

/// Whether this run posts a correction for the item.
fn wants_correction(req: &ReconcileRequest<'_>, it: &Item) -> bool {
    let Some(keys) = &req.corrections else {
        return false;
    };
    it.delta_minor != 0 && it.outcome.correctable() && (keys.is_empty() || keys.contains(&it.key))
}

/// A correction's posting key: `{bank account}:{item key}:{n}`, n = one more than the
/// corrections already folded into the item — derived from the item, never random,
/// never the clock.
fn correction_key(bank_account: &str, it: &Item) -> String {
    format!("{bank_account}:{}:{}", it.key, it.corrections.len() + 1)
}

/// One pass over the items in report order: the totals per outcome, what changed since
/// the previous run, and the item keys asked to be corrected that no item has.
fn summarize(
    req: &ReconcileRequest<'_>,
    sorted: &Sorted,
    previous: &Previous,
    summary: &mut Summary,
) -> Result<(Option<Vec<String>>, ByCurrency)> {
    let mut outcomes: BTreeMap<String, OutcomeTotals> = Outcome::ALL
        .iter()
        .map(|o| (o.as_str().to_string(), OutcomeTotals::default()))
        .collect();
    let mut unknown: HashSet<&str> = req
        .corrections
        .iter()
        .flatten()
        .map(String::as_str)
        .collect();
    let mut changes = Changes::default();
    let mut kept = 0;
    let mut by_currency = ByCurrency::new();
    for d in sorted.iter().map_err(LedgerError::TempFile)? {
        let r = d.map_err(LedgerError::TempFile)?.row;
        unknown.remove(r.item_key.as_str());
        add(outcomes.entry(r.outcome.clone()).or_default(), &r);
        let of = (r.outcome.clone(), r.currency.clone());
        add(by_currency.entry(of).or_default(), &r);
        if Outcome::parse(&r.outcome).is_some_and(|o| !o.settled()) {
            summary.needs_attention += 1;
        }
        match &r.previous_outcome {
            None => changes.new_items += 1,
            Some(p) => {
                kept += 1;
                changes.changed_outcomes += u64::from(*p != r.outcome);
            }
        }
    }
    if let Some((prev_run, prev_items)) = previous {
        // Item keys are unique in a run: the previous run's keys not met again are gone.
        changes.previous_run_id = Some(*prev_run);
        changes.gone_items = prev_items.saturating_sub(kept);
        summary.changes = changes;
    }
    summary.outcomes = outcomes;
    summary.items = sorted.len() as u64;
    let keys = req.corrections.iter().flatten();
    let unknown: Vec<String> = keys
        .filter(|k| unknown.contains(k.as_str()))
        .cloned()
        .collect();
    Ok(((!unknown.is_empty()).then_some(unknown), by_currency))
}

fn item_row(inputs: &Inputs, it: &Item, item_no: i64) -> ItemRow {
    let d = |v: Option<NaiveDate>| v.map(|d| d.to_string()).unwrap_or_default();
    ItemRow {
        run_id: None,
        item_no,
        outcome: it.outcome.as_str().to_string(),
        matched_by: it.matched_by.map(str::to_string),
        tolerance: it.tolerance.clone(),
        currency: it.currency.clone(),
        our_amount_minor: it.our_amount_minor,
        their_amount_minor: it.their_amount_minor,
        delta_minor: it.delta_minor,
        delta_days: it.delta_days,
        our_keys: it
            .ours
            .iter()
            .map(|&x| inputs.ours[x].key.clone())
            .collect(),
        our_dates: it.ours.iter().map(|&x| d(inputs.ours[x].date)).collect(),
        their_keys: it
            .theirs
            .iter()
            .map(|&t| inputs.theirs[t].key.clone())
            .collect(),
        their_dates: it
            .theirs
            .iter()
            .map(|&t| d(inputs.theirs[t].date))
            .collect(),
        refers_to: it.refers_to.map(|x| inputs.ours[x].key.clone()),
        corrections: it
            .corrections
            .iter()
            .map(|&x| inputs.ours[x].key.clone())
            .collect(),
        explanation: it.explanation.clone(),
        // Looked up once the items are in order (`Ledger::with_previous`).
        previous_outcome: None,
        correction_key: None,
        item_key: it.key.clone(),
    }
}

/// The key and date of a posting `late_returns` found for entry `e`, if it is the one `e`
/// returns: it moved the other way (or the entry says it is a return).
fn returned_original(r: &Row, e: &Theirs) -> Result<Option<(String, Option<String>)>> {
    let signed = if r.int(col!(RETURNED_ORIGINAL, "on_credit"))? != 0 {
        r.int(col!(RETURNED_ORIGINAL, "amount_minor"))?
    } else {
        -r.int(col!(RETURNED_ORIGINAL, "amount_minor"))?
    };
    if !e.is_return && signed.signum() != -e.amount_minor.signum() {
        return Ok(None);
    }
    Ok(Some((
        r.text(col!(RETURNED_ORIGINAL, "key"))?,
        r.opt_text(col!(RETURNED_ORIGINAL, "effective_date"))?,
    )))
}

/// A statement entry as the cascade sees it, and its status.
fn their_side(r: &Row) -> Result<(Theirs, String)> {
    let id = r.int(col!(THEIRS, "entry_id"))?;
    let status = r.text(col!(THEIRS, "status"))?;
    let amount = r.int(col!(THEIRS, "amount_minor"))?;
    let credit = r.int(col!(THEIRS, "credit"))? != 0;
    let refs: EntryRefs = r
        .opt_text(col!(THEIRS, "refs"))?
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    let detail: EntryDetail =
        serde_json::from_str(&r.text(col!(THEIRS, "detail"))?).unwrap_or_default();
    let sign = if credit { 1 } else { -1 };
    let is_return = r.int(col!(THEIRS, "reversal"))? != 0
        || refs.return_reason.is_some()
        || (!refs.details.is_empty() && refs.details.iter().all(|d| d.return_reason.is_some()));
    let t = Theirs {
        id,
        key: r.text(col!(THEIRS, "entry_key"))?,
        amount_minor: sign * amount,
        currency: r.text(col!(THEIRS, "currency"))?,
        date: date(r.opt_text(col!(THEIRS, "booking_date"))?.as_deref())
            .or(date(r.opt_text(col!(THEIRS, "value_date"))?.as_deref())),
        provisional: status == "provisional",
        is_return,
        uetr: non_empty(refs.uetr).map(|u| u.to_lowercase()),
        end_to_end_id: non_empty(r.opt_text(col!(THEIRS, "end_to_end_id"))?),
        instr_id: non_empty(refs.instr_id),
        bank_ref: non_empty(r.opt_text(col!(THEIRS, "bank_ref"))?),
        customer_ref: non_empty(r.opt_text(col!(THEIRS, "customer_ref"))?),
        batch_ref: non_empty(refs.batch_ref),
        remittance: detail.remittance,
        details: refs
            .details
            .into_iter()
            .map(|d| TheirDetail {
                amount_minor: d.amount_minor.map(|a| sign * a),
                uetr: non_empty(d.uetr).map(|u| u.to_lowercase()),
                end_to_end_id: non_empty(d.end_to_end_id),
                instr_id: non_empty(d.instr_id),
            })
            .collect(),
    };
    Ok((t, status))
}

/// A posting as the cascade sees it, from the mapped account's side; `None` for one
/// between two mapped accounts (it never reaches the bank).
fn our_side(r: &Row, mapped: &HashSet<&str>, bank_account: &str) -> Result<Option<Ours>> {
    let debit = r.text(col!(OURS, "debit_account"))?;
    let credit = r.text(col!(OURS, "credit_account"))?;
    let (on_debit, on_credit) = (
        mapped.contains(debit.as_str()),
        mapped.contains(credit.as_str()),
    );
    if on_debit == on_credit {
        return Ok(None);
    }
    let amount = r.int(col!(OURS, "amount_minor"))?;
    let operation = r.text(col!(OURS, "operation"))?;
    let posting_key = r.text(col!(OURS, "posting_key"))?;
    let file_id = r.text(col!(OURS, "file_id"))?;
    let mut d = PostingDetail::read(
        r.int(col!(OURS, "posting_id"))?,
        r.detail(col!(OURS, "detail"))?,
    )?;
    // Another bank account's correction (a ledger account may be mapped to several) is
    // that reconciliation's, never this one's.
    if operation == crate::keys::OPERATION_CORRECTION
        && d.bank_account.as_deref() != Some(bank_account)
    {
        return Ok(None);
    }
    let mut o = Ours {
        id: r.int(col!(OURS, "posting_id"))?,
        key: format!("{operation}:{posting_key}"),
        ledger_account: if on_debit {
            debit.clone()
        } else {
            credit.clone()
        },
        amount_minor: if on_credit { amount } else { -amount },
        currency: r.text(col!(OURS, "currency"))?,
        date: date(r.opt_text(col!(OURS, "effective_date"))?.as_deref()),
        // ISO postings keep their UETR or EndToEndId in the trace column: not a trace.
        trace: if operation == crate::keys::OPERATION_ACH_ENTRY {
            non_empty(r.opt_text(col!(OURS, "trace_number"))?)
        } else {
            None
        },
        corrects: non_empty(d.corrects.take()),
        ..Default::default()
    };
    match operation.as_str() {
        crate::keys::OPERATION_ACH_ENTRY => nacha_side(&mut o, d),
        crate::keys::OPERATION_CORRECTION => {}
        _ => iso_side(&mut o, d, &operation, &file_id, on_debit),
    }
    o.operation = operation;
    Ok(Some(o))
}

/// What a NACHA entry's stored fields say for matching: a return's original trace, its
/// batch, its references and counterparty.
fn nacha_side(o: &mut Ours, d: PostingDetail<'_>) {
    let addenda = d.addenda.unwrap_or_default();
    if let Some(ret) = addenda.lines().find(|l| l.starts_with("799")) {
        o.is_return = true;
        o.original_trace = ret.get(6..21).map(str::to_string);
    }
    let company = non_empty(d.company_identification);
    if let Some(c) = &company {
        let batch = d.batch_number.unwrap_or_default();
        o.batches.push(BatchKey {
            key: format!(
                "nacha:{c}:{}:{batch}",
                d.effective_entry_date.unwrap_or_default()
            ),
            ties: vec![c.clone(), format!("{c}{batch:0>7}")],
        });
    }
    o.refs.extend(non_empty(d.individual_identification));
    // The mapped account is the originator's (`odfi:`): the receiver is the counterparty;
    // else the company.
    o.counterparty = non_empty(if o.ledger_account.starts_with("odfi:") {
        d.individual_name
    } else {
        d.company_name
    });
}

/// What an ISO 20022 posting's stored fields say for matching: its identifiers, a
/// return's originals, its batch (payment information, message) and counterparty.
fn iso_side(o: &mut Ours, d: PostingDetail<'_>, operation: &str, file_id: &str, on_debit: bool) {
    o.uetr = non_empty(d.uetr).map(|u| u.to_lowercase());
    o.end_to_end_id = non_empty(d.end_to_end_id);
    o.instr_id = non_empty(d.instr_id);
    o.original_uetr = non_empty(d.original_uetr).map(|u| u.to_lowercase());
    o.original_end_to_end_id = non_empty(d.original_end_to_end_id);
    o.is_return = operation == "pacs.004";
    o.refs.extend(non_empty(d.tx_id));
    o.refs.extend(o.instr_id.clone());
    o.refs.extend(o.end_to_end_id.clone());
    if let Some(p) = non_empty(d.pmt_inf_id) {
        o.batches.push(BatchKey {
            key: format!("pmtinf:{p}"),
            ties: vec![p],
        });
    }
    if let Some((_, msg)) = file_id.rsplit_once(':')
        && file_id.starts_with("iso:")
        && !msg.is_empty()
    {
        o.batches.push(BatchKey {
            key: format!("msg:{file_id}"),
            ties: vec![msg.to_string()],
        });
    }
    o.counterparty = non_empty(if on_debit {
        d.creditor_name
    } else {
        d.debtor_name
    });
}

#[cfg(test)]
mod tests;
