//! The statement tables read back: the statements of an account (`clearledger
//! statements`) and their continuity, entries by the bank's reference (`lookup
//! --bank-ref`).

use crate::ledger::store::{Columns, args, checked, col};
use crate::ledger::{Ledger, Result, Row};

/// A statement as stored (`clearledger statements`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredStatement {
    /// The statement's row id.
    pub statement_id: i64,
    /// The statement's natural key (account, statement id, sequence).
    pub statement_key: String,
    /// The format it came in (`camt.053`, `mt940`, `bai2` …).
    pub format: String,
    /// `final` (end of day), `intraday` (its entries provisional until a final statement
    /// confirms them) or `notification`.
    pub kind: String,
    /// The account as the bank names it.
    pub account: String,
    /// The account's currency, when the statement gives it.
    pub currency: Option<String>,
    /// The bank's identifier of the statement.
    pub stmt_id: String,
    /// The statement's sequence (electronic sequence, page), when given.
    pub sequence: Option<String>,
    /// The statement's date (of its closing balance, or its creation).
    pub date: Option<String>,
    /// The opening balance in minor units (negative: debit).
    pub opening_minor: Option<i64>,
    /// The closing balance in minor units (negative: debit).
    pub closing_minor: Option<i64>,
    /// The currency of the balances.
    pub balance_currency: Option<String>,
    /// Entries the statement holds.
    pub entries: i64,
    /// Whether the bank marked it a copy (or duplicate) of one sent before.
    pub copy: bool,
    /// The run that recorded it.
    pub run_id: i64,
    /// When it was recorded (RFC 3339).
    pub recorded_at: String,
    /// `closing` (opening + booked entries ≠ closing) or `chain` (the opening ≠ the
    /// previous statement's closing) when its balances do not add up; `None` when they do.
    pub balance_break: Option<String>,
    /// With a break: what the balance should be, in minor units.
    pub balance_expected_minor: Option<i64>,
    /// With a break: what the statement says, in minor units.
    pub balance_found_minor: Option<i64>,
}

/// A statement entry as stored (`lookup --bank-ref`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredEntry {
    /// The entry's row id.
    pub entry_id: i64,
    /// The statement's natural key (account, statement id, sequence).
    pub statement_key: String,
    /// The account as the bank names it.
    pub account: String,
    /// The entry's natural key within the account.
    pub entry_key: String,
    /// The entry's position in its statement, from 1.
    pub entry_no: i64,
    /// The amount in minor units, unsigned (see `credit`).
    pub amount_minor: i64,
    /// The entry's currency.
    pub currency: String,
    /// Whether the entry credits the account.
    pub credit: bool,
    /// Whether the bank marked it a reversal of an earlier entry.
    pub reversal: bool,
    /// `booked`, `provisional` (from an intraday report) or `info`.
    pub status: String,
    /// The booking date, when given.
    pub booking_date: Option<String>,
    /// The value date, when given.
    pub value_date: Option<String>,
    /// The bank's reference of the entry.
    pub bank_ref: Option<String>,
    /// The account owner's reference the bank quotes.
    pub customer_ref: Option<String>,
    /// The ISO 20022 EndToEndId the bank quotes, when it does.
    pub end_to_end_id: Option<String>,
    /// The run that recorded it.
    pub run_id: i64,
    /// When it was recorded (RFC 3339).
    pub recorded_at: String,
}

/// The columns of the statements' SELECT (`Ledger::statements`), in its order.
const STATEMENT: Columns = Columns(&[
    "statement_id",
    "statement_key",
    "format",
    "kind",
    "account",
    "currency",
    "stmt_id",
    "sequence",
    "stmt_date",
    "opening_minor",
    "closing_minor",
    "balance_currency",
    "entries",
    "copy",
    "run_id",
    "recorded_at",
    "balance_break",
    "balance_expected_minor",
    "balance_found_minor",
]);

impl Ledger {
    /// The first `limit` conflicts of statement run `run_id`, in entry order: each entry's
    /// number and the fields that differ, for the lines `ingest` prints under its summary.
    pub(crate) async fn statement_conflicts(
        &mut self,
        tenant: &str,
        run_id: i64,
        limit: i64,
    ) -> Result<Vec<(i64, String)>> {
        let sql = checked!(
            crate::ledger::CONFLICT_COLUMNS,
            "SELECT entry_no AS no, differences FROM statement_journal WHERE tenant = $1 \
             AND run_id = $2 AND outcome = 'conflict' ORDER BY entry_no LIMIT $3"
        );
        self.first_conflicts(sql, tenant, run_id, limit).await
    }

    /// The tenant's statements (of one account), by account, date and sequence.
    pub async fn statements(
        &mut self,
        tenant: &str,
        account: Option<&str>,
    ) -> Result<Vec<StoredStatement>> {
        let sql = format!(
            "SELECT statement_id, statement_key, format, kind, account, currency, stmt_id, sequence, \
             stmt_date, opening_minor, closing_minor, balance_currency, entries, copy, run_id, recorded_at, \
             balance_break, balance_expected_minor, balance_found_minor FROM statements WHERE tenant = $1 {} ORDER BY account, stmt_date, sequence, statement_id",
            if account.is_some() {
                "AND account = $2"
            } else {
                ""
            }
        );
        let sql = STATEMENT.checked(&sql);
        let rows = match account {
            Some(a) => self.store().query(sql, &args![tenant, a]).await?,
            None => self.store().query(sql, &args![tenant]).await?,
        };
        rows.iter().map(stored_statement).collect()
    }

    /// Statement entries by the bank's reference (camt `AcctSvcrRef`, BAI2 bank reference,
    /// MT940 `//` reference).
    pub async fn entries_by_bank_ref(
        &mut self,
        tenant: &str,
        bank_ref: &str,
    ) -> Result<Vec<StoredEntry>> {
        /// The columns of the SELECT below, in its order.
        const ENTRY: Columns = Columns(&[
            "entry_id",
            "statement_key",
            "account",
            "entry_key",
            "entry_no",
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
            "run_id",
            "recorded_at",
        ]);
        let rows = self
            .store()
            .query(
                checked!(
                    ENTRY,
                    "SELECT e.entry_id, s.statement_key, e.account, e.entry_key, e.entry_no, e.amount_minor, \
                     e.currency, e.credit, e.reversal, e.status, e.booking_date, e.value_date, e.bank_ref, \
                     e.customer_ref, e.end_to_end_id, e.run_id, e.recorded_at \
                     FROM statement_entries e \
                     JOIN statements s ON s.tenant = e.tenant AND s.statement_id = e.statement_id \
                     WHERE e.tenant = $1 AND e.bank_ref = $2 ORDER BY e.entry_id"
                ),
                &args![tenant, bank_ref],
            )
            .await?;
        rows.iter()
            .map(|r| {
                Ok(StoredEntry {
                    entry_id: r.int(col!(ENTRY, "entry_id"))?,
                    statement_key: r.text(col!(ENTRY, "statement_key"))?,
                    account: r.text(col!(ENTRY, "account"))?,
                    entry_key: r.text(col!(ENTRY, "entry_key"))?,
                    entry_no: r.int(col!(ENTRY, "entry_no"))?,
                    amount_minor: r.int(col!(ENTRY, "amount_minor"))?,
                    currency: r.text(col!(ENTRY, "currency"))?,
                    credit: r.int(col!(ENTRY, "credit"))? != 0,
                    reversal: r.int(col!(ENTRY, "reversal"))? != 0,
                    status: r.text(col!(ENTRY, "status"))?,
                    booking_date: r.opt_text(col!(ENTRY, "booking_date"))?,
                    value_date: r.opt_text(col!(ENTRY, "value_date"))?,
                    bank_ref: r.opt_text(col!(ENTRY, "bank_ref"))?,
                    customer_ref: r.opt_text(col!(ENTRY, "customer_ref"))?,
                    end_to_end_id: r.opt_text(col!(ENTRY, "end_to_end_id"))?,
                    run_id: r.int(col!(ENTRY, "run_id"))?,
                    recorded_at: r.text(col!(ENTRY, "recorded_at"))?,
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

/// A row of [`STATEMENT`] decoded.
fn stored_statement(r: &Row) -> Result<StoredStatement> {
    Ok(StoredStatement {
        statement_id: r.int(col!(STATEMENT, "statement_id"))?,
        statement_key: r.text(col!(STATEMENT, "statement_key"))?,
        format: r.text(col!(STATEMENT, "format"))?,
        kind: r.text(col!(STATEMENT, "kind"))?,
        account: r.text(col!(STATEMENT, "account"))?,
        currency: r.opt_text(col!(STATEMENT, "currency"))?,
        stmt_id: r.text(col!(STATEMENT, "stmt_id"))?,
        sequence: r.opt_text(col!(STATEMENT, "sequence"))?,
        date: r.opt_text(col!(STATEMENT, "stmt_date"))?,
        opening_minor: r.opt_int(col!(STATEMENT, "opening_minor"))?,
        closing_minor: r.opt_int(col!(STATEMENT, "closing_minor"))?,
        balance_currency: r.opt_text(col!(STATEMENT, "balance_currency"))?,
        entries: r.int(col!(STATEMENT, "entries"))?,
        copy: r.int(col!(STATEMENT, "copy"))? != 0,
        run_id: r.int(col!(STATEMENT, "run_id"))?,
        recorded_at: r.text(col!(STATEMENT, "recorded_at"))?,
        balance_break: r.opt_text(col!(STATEMENT, "balance_break"))?,
        balance_expected_minor: r.opt_int(col!(STATEMENT, "balance_expected_minor"))?,
        balance_found_minor: r.opt_int(col!(STATEMENT, "balance_found_minor"))?,
    })
}
