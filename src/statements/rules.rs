//! The recording rules of a statement and its entries (docs/principles.md §5, §7, §9).
//!
//! Per entry, insert-first into `statement_entries` (unique on tenant, account, key):
//! - inserted: `recorded` (a booked entry) or `provisional` (pending, or of an intraday
//!   statement);
//! - not inserted, same fingerprint: `duplicate` — unless the stored entry is provisional
//!   and this one booked: then it is `confirmed` and the stored entry becomes booked (the
//!   end-of-day statement absorbs the intraday one: counted once, never twice);
//! - not inserted, other fingerprint: `conflict`, naming the fields that differ;
//! - a statement already recorded with other content (a corrected statement): its entries
//!   whose key is new are `held`, never recorded. A copy (`CpyDplctInd`) is recorded like
//!   any statement: of a statement recorded before, it is all duplicates.

use super::store::{self, EntryRow};
use super::{OpenStatements, StatementRun, StatementStart};
use crate::keys::{Outcome, StatementRecord, differing_fields};
use crate::ledger::store::{Arg, args, checked, col};
use crate::ledger::{During, Ledger, Result};

impl Ledger {
    /// Records one statement and its entries in the open run, a chunk of entries at a time
    /// (PostgreSQL: one `unnest` insert and one `unnest` lookup a chunk; SQLite: one prepared
    /// statement a row). On an error the caller rolls the run back.
    pub async fn record_statement(
        &mut self,
        open: &mut OpenStatements,
        start: &StatementStart<'_>,
        r: &StatementRecord,
    ) -> Result<()> {
        let (run_id, at) = (open.run_id, open.at.clone());
        let c = &mut open.counts;
        c.statements += 1;
        let (statement_id, hold) = self.statement_row(start, run_id, &at, r, c).await?;
        let account = r.statement.account.as_str();
        let pairs: Vec<EntryPair<'_>> = r.statement.entries.iter().zip(&r.entries).collect();
        for chunk in pairs.chunks(self.store().chunk_rows().min(100_000)) {
            c.entries += chunk.len() as u64;
            let rows: Vec<EntryRow> = if hold {
                Vec::new()
            } else {
                chunk.iter().map(|(e, k)| EntryRow::of(e, k)).collect()
            };
            let (s, tenant) = (self.store(), start.tenant);
            let inserted: std::collections::HashSet<i64> =
                store::insert_entries(s, tenant, account, statement_id, run_id, &at, &rows)
                    .await
                    .during("recording statement entries")?
                    .into_iter()
                    .collect();
            let rest: Vec<&EntryPair<'_>> = chunk
                .iter()
                .filter(|(e, k)| {
                    let new = inserted.contains(&(e.entry_no as i64));
                    if new && k.status == "provisional" {
                        c.provisional += 1;
                    } else if new {
                        c.recorded += 1;
                    }
                    !new
                })
                .collect();
            if !rest.is_empty() {
                let journal = self.judge_entries(start.tenant, account, &rest, c).await?;
                self.journal_entries(run_id, start.tenant, account, &journal)
                    .await?;
            }
        }
        Ok(())
    }

    /// The entries that did not insert, judged against what holds their keys: a
    /// duplicate, a conflict, a booked entry confirming a provisional one, or an entry new
    /// in a statement recorded before with other content (held).
    async fn judge_entries<'a>(
        &mut self,
        tenant: &str,
        account: &str,
        rest: &[&EntryPair<'a>],
        c: &mut StatementRun,
    ) -> Result<Vec<JournalEntry<'a>>> {
        let keys: Vec<&str> = rest.iter().map(|(_, k)| k.entry_key.as_str()).collect();
        let existing = store::entries_by_key(self.store(), tenant, account, &keys)
            .await
            .during("reading the entries recorded before")?;
        let mut journal: Vec<JournalEntry> = Vec::with_capacity(rest.len());
        for &&(e, k) in rest {
            let (outcome, original, differences, reason) = match existing.get(&k.entry_key) {
                None => (
                    Outcome::Held,
                    None,
                    None,
                    Some(
                        "the statement was recorded before with other content (a corrected \
                         statement?): this entry, new in it, is not recorded",
                    ),
                ),
                Some(x) if x.fingerprint != k.fingerprint => (
                    Outcome::Conflict,
                    Some(x.entry_id),
                    Some(differing_fields(&x.detail, &k.fields()).join("; ")),
                    Some("same entry key, different content"),
                ),
                Some(x) if x.status == "provisional" && k.status == "booked" => {
                    self.store()
                        .execute(store::CONFIRM_ENTRY, &args![tenant, x.entry_id])
                        .await?;
                    let why = "booked: confirms the provisional entry";
                    (Outcome::Confirmed, Some(x.entry_id), None, Some(why))
                }
                Some(x) => (Outcome::Duplicate, Some(x.entry_id), None, None),
            };
            match outcome {
                Outcome::Conflict => c.conflicts += 1,
                Outcome::Confirmed => c.confirmed += 1,
                Outcome::Held => c.held += 1,
                _ => c.duplicates += 1,
            }
            journal.push(JournalEntry {
                entry_no: e.entry_no as i64,
                outcome,
                original,
                key: k.entry_key.as_str(),
                amount_minor: e.amount_minor as i64,
                currency: e.currency.as_str(),
                credit: i64::from(e.credit),
                differences,
                reason,
            });
        }
        Ok(journal)
    }

    /// Journals the entries that did not record (docs/principles.md §9).
    async fn journal_entries(
        &mut self,
        run_id: i64,
        tenant: &str,
        account: &str,
        journal: &[JournalEntry<'_>],
    ) -> Result<()> {
        let rows: Vec<[Arg; 12]> = journal
            .iter()
            .map(|j| {
                args![
                    run_id,
                    j.entry_no,
                    tenant,
                    j.outcome.as_str(),
                    j.original,
                    account,
                    j.key,
                    j.amount_minor,
                    j.currency,
                    j.credit,
                    j.differences.as_deref(),
                    j.reason,
                ]
            })
            .collect();
        self.store()
            .insert_rows(
                store::INSERT_STATEMENT_JOURNAL,
                &rows,
                "journaling statement entries",
            )
            .await
    }

    /// The statement's own row, insert-first. Returns its id and whether its new entries
    /// are held (a statement recorded before with other content).
    async fn statement_row(
        &mut self,
        start: &StatementStart<'_>,
        run_id: i64,
        at: &str,
        r: &StatementRecord,
        c: &mut StatementRun,
    ) -> Result<(i64, bool)> {
        use crate::formats::statement::BalanceKind;
        let s = &r.statement;
        let d = |d: Option<chrono::NaiveDate>| d.map(|d| d.to_string());
        let open = s
            .balance(BalanceKind::OpeningBooked)
            .or_else(|| s.balance(BalanceKind::IntermediateOpening));
        let close = s
            .balance(BalanceKind::ClosingBooked)
            .or_else(|| s.balance(BalanceKind::IntermediateClosing));
        let detail = balances_detail(s);
        let (sd, fd, td) = (d(s.date), d(s.from_date), d(s.to_date));
        let brk = recorded_break(s);
        let a = args![
            start.tenant,
            r.statement_key.as_str(),
            s.format,
            s.kind.as_str(),
            s.account.as_str(),
            s.currency.as_deref(),
            s.servicer.as_deref(),
            s.id.as_str(),
            s.sequence.as_deref(),
            sd.as_deref(),
            fd.as_deref(),
            td.as_deref(),
            i64::from(s.copy),
            open.map(|b| b.amount_minor),
            close.map(|b| b.amount_minor),
            open.or(close).map(|b| b.currency.as_str()),
            s.entries.len() as i64,
            r.fingerprint.as_str(),
            detail.as_str(),
            run_id,
            at,
            brk.map(|b| b.kind.as_str()),
            brk.map(|b| b.expected_minor),
            brk.map(|b| b.found_minor),
        ];
        let inserted = self
            .store()
            .query_opt(checked!(store::NEW_STATEMENT, store::INSERT_STATEMENT), &a)
            .await
            .during("recording statements")?;
        if let Some(row) = inserted {
            c.statements_new += 1;
            c.unbalanced += u64::from(brk.is_some());
            // A copy (`CpyDplctInd`) of a statement not recorded yet is the bank's word all
            // the same: recorded; of one recorded, its entries are duplicates as always.
            return Ok((row.int(col!(store::NEW_STATEMENT, "statement_id"))?, false));
        }
        let row = self
            .store()
            .query_one(
                checked!(store::STATEMENT_OF_KEY, store::STATEMENT_BY_KEY),
                &args![start.tenant, r.statement_key.as_str()],
            )
            .await?;
        let same = row.text(col!(store::STATEMENT_OF_KEY, "fingerprint"))? == r.fingerprint;
        if same {
            c.statements_duplicate += 1;
        } else {
            c.statements_conflict += 1;
        }
        Ok((
            row.int(col!(store::STATEMENT_OF_KEY, "statement_id"))?,
            !same,
        ))
    }
}

/// The one break a statement is recorded with: its own closing before a chain (from the
/// previous statement, or between its pages), whichever the reader found first.
fn recorded_break(
    s: &crate::formats::statement::Statement,
) -> Option<&crate::formats::statement::BalanceBreak> {
    use crate::formats::statement::BreakKind;
    let breaks = &s.balance_breaks;
    breaks
        .iter()
        .find(|b| b.kind == BreakKind::Closing)
        .or_else(|| breaks.first())
}

/// The statement's balances, as its stored detail (a JSON object).
fn balances_detail(s: &crate::formats::statement::Statement) -> String {
    serde_json::to_string(&serde_json::json!({
        "balances": s.balances.iter().map(|b| serde_json::json!({
            "code": b.code, "amount_minor": b.amount_minor, "currency": b.currency,
            "date": b.date.map(|d| d.to_string()),
        })).collect::<Vec<_>>(),
    }))
    .unwrap_or_default()
}

/// A statement entry with the record of it that is keyed and fingerprinted.
type EntryPair<'a> = (
    &'a crate::formats::statement::Entry,
    &'a crate::keys::EntryRecord,
);

struct JournalEntry<'a> {
    entry_no: i64,
    outcome: Outcome,
    original: Option<i64>,
    key: &'a str,
    amount_minor: i64,
    currency: &'a str,
    credit: i64,
    differences: Option<String>,
    reason: Option<&'a str>,
}
