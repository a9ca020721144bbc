//! Bank statements in the ledger: the bank's side, in tables of their own
//! (`statements`, `statement_entries`, `statement_journal`: migrations/*/0007), recorded
//! in a run's one transaction like any file, behind unique indexes on the natural keys
//! `keys::statement_record` derives.
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

use super::classify::ts;
use super::store::{Arg, Begin, args};
use super::{During, Ledger, Result, RunInfo};
use crate::findings::Finding;
use crate::keys::{Outcome, StatementRecord, differing_fields};
use chrono::{DateTime, Utc};

/// A statement file about to be recorded.
#[derive(Debug, Clone)]
pub struct StatementStart<'a> {
    pub tenant: &'a str,
    pub format: &'static str,
    pub sha256: &'a str,
    pub source_name: &'a str,
    pub started_at: DateTime<Utc>,
    /// Warnings found while reading (an error would have rejected the file).
    pub findings: &'a [Finding],
}

/// What a statement run did.
#[derive(Debug, Clone)]
pub struct StatementRun {
    pub run: RunInfo,
    pub statements: u64,
    /// Statements new to the ledger / already recorded with the same content / with other
    /// content.
    pub statements_new: u64,
    pub statements_duplicate: u64,
    pub statements_conflict: u64,
    pub entries: u64,
    pub recorded: u64,
    pub provisional: u64,
    pub confirmed: u64,
    pub duplicates: u64,
    pub conflicts: u64,
    pub held: u64,
}

/// A statement run in progress, inside its transaction.
pub struct OpenStatements {
    run_id: i64,
    at: String,
    counts: StatementRun,
}

impl OpenStatements {
    /// The run's id (inside its transaction: a dry run reads its report rows, then rolls
    /// back).
    pub fn run_id(&self) -> i64 {
        self.run_id
    }
    /// The counts so far.
    pub fn counts(&self) -> &StatementRun {
        &self.counts
    }
}

impl Ledger {
    /// Records the statements of one file: one run, one transaction.
    pub async fn record_statements(
        &mut self,
        start: &StatementStart<'_>,
        records: &[StatementRecord],
    ) -> Result<StatementRun> {
        let file_id = records.first().map(|r| r.statement_key.as_str());
        let mut open = self.begin_statements(start, file_id).await?;
        for r in records {
            if let Err(e) = self.record_statement(&mut open, start, r).await {
                let _ = self.store.rollback().await;
                return Err(e);
            }
        }
        self.commit_statements(open, start).await
    }

    /// Opens a statement run's transaction and records the run (`file_id`: the first
    /// statement's key, `statement:{key}`).
    pub async fn begin_statements(
        &mut self,
        start: &StatementStart<'_>,
        first_key: Option<&str>,
    ) -> Result<OpenStatements> {
        self.store
            .begin(Begin::Write)
            .await
            .during("starting the statement transaction")?;
        let at = ts(&start.started_at);
        let file_id = first_key.map(|k| format!("statement:{k}"));
        let a = args![
            start.tenant,
            file_id.as_deref(),
            start.sha256,
            start.format,
            start.source_name,
            at.as_str(),
        ];
        let run_id = match self.store.query_one(super::sql::INSERT_RUN, &a).await {
            Ok(r) => r.int(0)?,
            Err(e) => {
                let _ = self.store.rollback().await;
                return Err(e);
            }
        };
        let counts = StatementRun {
            run: RunInfo::placeholder(),
            statements: 0,
            statements_new: 0,
            statements_duplicate: 0,
            statements_conflict: 0,
            entries: 0,
            recorded: 0,
            provisional: 0,
            confirmed: 0,
            duplicates: 0,
            conflicts: 0,
            held: 0,
        };
        Ok(OpenStatements { run_id, at, counts })
    }

    /// Rolls a statement run back: nothing of it remains.
    pub async fn rollback_statements(&mut self, _open: OpenStatements) -> Result<()> {
        self.store.rollback().await.during("rolling back the run")
    }

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
        for chunk in pairs.chunks(self.store.chunk_rows().min(100_000)) {
            c.entries += chunk.len() as u64;
            let rows: Vec<EntryRow> = if hold {
                Vec::new()
            } else {
                chunk.iter().map(|(e, k)| EntryRow::of(e, k)).collect()
            };
            let inserted: std::collections::HashSet<i64> = self
                .store
                .insert_statement_entries(start.tenant, account, statement_id, run_id, &at, &rows)
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
        let existing = self
            .store
            .statement_entries_by_key(tenant, account, &keys)
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
                    self.store
                        .execute(
                            "UPDATE statement_entries SET status = 'booked' WHERE entry_id = $1",
                            &args![x.entry_id],
                        )
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
        self.store
            .insert_rows(
                INSERT_STATEMENT_JOURNAL,
                &rows,
                "journaling statement entries",
            )
            .await
    }

    /// Writes the completion mark and the findings, and commits.
    pub async fn commit_statements(
        &mut self,
        open: OpenStatements,
        start: &StatementStart<'_>,
    ) -> Result<StatementRun> {
        let (run_id, mut c) = (open.run_id, open.counts);
        let res = self.complete_statements(run_id, &c, start).await;
        if let Err(e) = res {
            let _ = self.store.rollback().await;
            return Err(e);
        }
        crate::fault::point("before_commit");
        self.end_run(Ok(run_id)).await?;
        crate::fault::point("after_commit");
        c.run = self.committed(run_id, false).await?;
        Ok(c)
    }

    async fn complete_statements(
        &mut self,
        run_id: i64,
        c: &StatementRun,
        start: &StatementStart<'_>,
    ) -> Result<()> {
        let finished = ts(&Utc::now());
        let a = args![
            finished.as_str(),
            start.sha256,
            c.entries as i64,
            (c.recorded + c.provisional + c.confirmed) as i64,
            c.duplicates as i64,
            c.conflicts as i64,
            c.held as i64,
            0i64,
            start.findings.len() as i64,
            run_id,
        ];
        self.store.execute(super::sql::COMPLETE_RUN, &a).await?;
        self.insert_findings_of(run_id, start.findings).await
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
        let detail = serde_json::to_string(&serde_json::json!({
            "balances": s.balances.iter().map(|b| serde_json::json!({
                "code": b.code, "amount_minor": b.amount_minor, "currency": b.currency,
                "date": b.date.map(|d| d.to_string()),
            })).collect::<Vec<_>>(),
        }))
        .unwrap_or_default();
        let (sd, fd, td) = (d(s.date), d(s.from_date), d(s.to_date));
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
        ];
        let inserted = self
            .store
            .query_opt(INSERT_STATEMENT, &a)
            .await
            .during("recording statements")?;
        if let Some(row) = inserted {
            c.statements_new += 1;
            // A copy (`CpyDplctInd`) of a statement not recorded yet is the bank's word all
            // the same: recorded; of one recorded, its entries are duplicates as always.
            return Ok((row.int(0)?, false));
        }
        let row = self
            .store
            .query_one(
                "SELECT statement_id, fingerprint FROM statements WHERE tenant = $1 AND statement_key = $2",
                &args![start.tenant, r.statement_key.as_str()],
            )
            .await?;
        let same = row.text(1)? == r.fingerprint;
        if same {
            c.statements_duplicate += 1;
        } else {
            c.statements_conflict += 1;
        }
        Ok((row.int(0)?, !same))
    }
}

const INSERT_STATEMENT: &str = "INSERT INTO statements (tenant, statement_key, format, kind, account, currency, \
     servicer, stmt_id, sequence, stmt_date, from_date, to_date, copy, opening_minor, closing_minor, \
     balance_currency, entries, fingerprint, detail, run_id, recorded_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21) \
     ON CONFLICT DO NOTHING RETURNING statement_id";

/// One entry (SQLite; PostgreSQL inserts a chunk with `unnest`).
pub(crate) const INSERT_ENTRY: &str = "INSERT INTO statement_entries (tenant, account, entry_key, statement_id, run_id, \
     entry_no, amount_minor, currency, credit, reversal, status, booking_date, value_date, bank_ref, \
     customer_ref, end_to_end_id, bank_tx_code, fingerprint, detail, recorded_at, refs) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21) \
     ON CONFLICT DO NOTHING";

pub(crate) const ENTRY_BY_KEY: &str = "SELECT entry_id, fingerprint, status, detail FROM statement_entries \
     WHERE tenant = $1 AND account = $2 AND entry_key = $3";

const INSERT_STATEMENT_JOURNAL: &str = "INSERT INTO statement_journal (run_id, entry_no, tenant, outcome, \
     original_entry_id, account, entry_key, amount_minor, currency, credit, differences, reason)";

/// A statement as stored (`clearledger statements`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredStatement {
    pub statement_id: i64,
    pub statement_key: String,
    pub format: String,
    pub kind: String,
    pub account: String,
    pub currency: Option<String>,
    pub stmt_id: String,
    pub sequence: Option<String>,
    pub date: Option<String>,
    pub opening_minor: Option<i64>,
    pub closing_minor: Option<i64>,
    pub balance_currency: Option<String>,
    pub entries: i64,
    pub copy: bool,
    pub run_id: i64,
    pub recorded_at: String,
}

/// A statement entry as stored (`lookup --bank-ref`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredEntry {
    pub entry_id: i64,
    pub statement_key: String,
    pub account: String,
    pub entry_key: String,
    pub entry_no: i64,
    pub amount_minor: i64,
    pub currency: String,
    pub credit: bool,
    pub reversal: bool,
    pub status: String,
    pub booking_date: Option<String>,
    pub value_date: Option<String>,
    pub bank_ref: Option<String>,
    pub customer_ref: Option<String>,
    pub end_to_end_id: Option<String>,
    pub run_id: i64,
    pub recorded_at: String,
}

impl Ledger {
    /// The tenant's statements (of one account), by account, date and sequence.
    pub async fn statements(
        &mut self,
        tenant: &str,
        account: Option<&str>,
    ) -> Result<Vec<StoredStatement>> {
        let sql = format!(
            "SELECT statement_id, statement_key, format, kind, account, currency, stmt_id, sequence, \
             stmt_date, opening_minor, closing_minor, balance_currency, entries, copy, run_id, recorded_at \
             FROM statements WHERE tenant = $1 {} ORDER BY account, stmt_date, sequence, statement_id",
            if account.is_some() {
                "AND account = $2"
            } else {
                ""
            }
        );
        let rows = match account {
            Some(a) => self.store.query(&sql, &args![tenant, a]).await?,
            None => self.store.query(&sql, &args![tenant]).await?,
        };
        rows.iter()
            .map(|r| {
                Ok(StoredStatement {
                    statement_id: r.int(0)?,
                    statement_key: r.text(1)?,
                    format: r.text(2)?,
                    kind: r.text(3)?,
                    account: r.text(4)?,
                    currency: r.opt_text(5)?,
                    stmt_id: r.text(6)?,
                    sequence: r.opt_text(7)?,
                    date: r.opt_text(8)?,
                    opening_minor: r.opt_int(9)?,
                    closing_minor: r.opt_int(10)?,
                    balance_currency: r.opt_text(11)?,
                    entries: r.int(12)?,
                    copy: r.int(13)? != 0,
                    run_id: r.int(14)?,
                    recorded_at: r.text(15)?,
                })
            })
            .collect()
    }

    /// Statement entries by the bank's reference (camt `AcctSvcrRef`, BAI2 bank reference,
    /// MT940 `//` reference).
    pub async fn entries_by_bank_ref(
        &mut self,
        tenant: &str,
        bank_ref: &str,
    ) -> Result<Vec<StoredEntry>> {
        let rows = self
            .store
            .query(
                "SELECT e.entry_id, s.statement_key, e.account, e.entry_key, e.entry_no, e.amount_minor, \
                 e.currency, e.credit, e.reversal, e.status, e.booking_date, e.value_date, e.bank_ref, \
                 e.customer_ref, e.end_to_end_id, e.run_id, e.recorded_at \
                 FROM statement_entries e JOIN statements s ON s.statement_id = e.statement_id \
                 WHERE e.tenant = $1 AND e.bank_ref = $2 ORDER BY e.entry_id",
                &args![tenant, bank_ref],
            )
            .await?;
        rows.iter()
            .map(|r| {
                Ok(StoredEntry {
                    entry_id: r.int(0)?,
                    statement_key: r.text(1)?,
                    account: r.text(2)?,
                    entry_key: r.text(3)?,
                    entry_no: r.int(4)?,
                    amount_minor: r.int(5)?,
                    currency: r.text(6)?,
                    credit: r.int(7)? != 0,
                    reversal: r.int(8)? != 0,
                    status: r.text(9)?,
                    booking_date: r.opt_text(10)?,
                    value_date: r.opt_text(11)?,
                    bank_ref: r.opt_text(12)?,
                    customer_ref: r.opt_text(13)?,
                    end_to_end_id: r.opt_text(14)?,
                    run_id: r.int(15)?,
                    recorded_at: r.text(16)?,
                })
            })
            .collect()
    }
}

/// The continuity of an account's statements, in order: for each, `None`, or why it does
/// not follow the one before (its opening booked balance ≠ the previous closing).
pub fn continuity(statements: &[StoredStatement]) -> Vec<Option<String>> {
    let mut out = Vec::with_capacity(statements.len());
    let mut prev: Option<&StoredStatement> = None;
    for s in statements {
        let finding = match prev {
            Some(p)
                if p.account == s.account
                    && p.kind == "final"
                    && s.kind == "final"
                    && p.balance_currency == s.balance_currency =>
            {
                match (p.closing_minor, s.opening_minor) {
                    (Some(c), Some(o)) if c != o => Some(format!(
                        "opening balance {o} != the previous statement's closing balance {c} ({})",
                        p.statement_key
                    )),
                    _ => None,
                }
            }
            _ => None,
        };
        if s.kind == "final" {
            prev = Some(s);
        }
        out.push(finding);
    }
    out
}

/// An entry's columns as `statement_entries` stores them, borrowed from its record.
pub(crate) struct EntryRow<'a> {
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
    fn of(e: &'a crate::formats::statement::Entry, k: &'a crate::keys::EntryRecord) -> Self {
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
}

/// An entry recorded before, as a new entry of the same key meets it.
pub(crate) struct ExistingEntry {
    pub entry_id: i64,
    pub fingerprint: String,
    pub status: String,
    pub detail: String,
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
