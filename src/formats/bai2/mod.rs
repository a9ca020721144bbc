//! BAI2 (Cash Management Balance Reporting Specification, version 2) into [`Statement`]s:
//! one per account group `03` … `49`, emitted as its `49` is read.
//!
//! # Layout read
//! - Records `01` file header, `02` group header, `03` account identifier and
//!   summary/status, `16` transaction detail, `49` account trailer, `88` continuation,
//!   `98` group trailer, `99` file trailer. Fields are comma-separated; a record ends with
//!   `/` or, tolerated without a finding, at the end of its physical line (moov-sample4's
//!   `16`/`88`, svb's `99`).
//! - An `88` continues the previous record's field list where it stopped: it may split a
//!   type-code/amount group (moov-sample2 `...,190/` + `88,500000,...`). A physical record
//!   that ends on an empty field at the start of a summary group (`...,015,35217175,,,/`,
//!   svb) has that trailing empty field dropped.
//! - A `16` text is the rest of the physical record, commas and slashes included; one
//!   final `/` is dropped, and a `/`, blanks and a record code (`PPD/ 16,142,...`) end it
//!   and start a record joined on the same line. Several records on one line are read
//!   after any `/`. An `88` after a `16` whose text has begun, or whose fields all came
//!   before the text, is more text. A line that starts with no record code while a text is
//!   open (not closed by `/`) is that text run onto the next line (moov-sample3 line 19):
//!   kept, with a `tag_syntax` warning. Text pieces are joined with a space, or with
//!   nothing when the previous physical record was full (the `01` physical record length,
//!   else 80: NatWest splits `CLIE`/`NT` there); runs of whitespace are collapsed.
//! - Amounts carry no decimal point: the integer is the minor units of the currency's
//!   exponent. `03`/`49`/`98`/`99` amounts may be signed; `16` amounts are unsigned.
//! - Currency: the `03`'s, else the `02`'s, else USD, the spec's default (`01` has none).
//!
//! # Mapping
//! - `account` = `03` customer account number as written; `currency` = as above (USD when
//!   defaulted); `servicer` = `02` originator identification; `id` = `01` file
//!   identification number (the 5th field after the code); `sequence` = the `02` as-of
//!   date, as-of time and as-of-date modifier as written, joined by `,` (`040620,2359,2`);
//!   `date` = the as-of date.
//! - `kind`: as-of-date modifier `1` (interim previous-day) or `2` (final previous-day) or
//!   blank → [`StatementKind::Final`]; `3` (interim same-day) or `4` (final same-day) →
//!   [`StatementKind::Intraday`], whose entries are `Pending`.
//! - Balances: the `03` status codes (001–099) only: `010` → `OpeningBooked`, `015` →
//!   `ClosingBooked`, `040` → `OpeningAvailable`, `045` → `ClosingAvailable`, the others
//!   `Other`; dated the as-of date. Summary codes (100–999) count in the control total and
//!   are no balance. A status with a blank amount is no balance.
//! - Entries from `16`: type codes 100–399 credit, 400–699 debit (700–799 loan, 890
//!   non-monetary and 900–999 custom codes are refused: their direction is not known);
//!   `reversal` false (BAI2 has no reversal flag); `booking_date` the as-of date,
//!   `value_date` the funds type `V` date; `bank_ref`/`customer_ref` the `16` bank and
//!   customer references (`None` when blank); `bank_tx_code` the type code; `remittance`
//!   the text.
//!
//! # Checks
//! - `49` control total = the sum of every amount of the account's `03` and `16` records
//!   (their `88`s included; funds-type distribution amounts are not amounts of the record);
//!   `49` number of records = `03` … `49`, `88`s counted. `98` control total = the sum of
//!   its `49` totals as written, number of accounts, number of records `02` … `98`; `99`
//!   the sum of the `98` totals, groups, records `01` … `99`. A blank control total is a
//!   warning and is not checked (`49,,2/`).
//! - [`check_balance`](crate::formats::statement::check_balance) where `010` and `015`
//!   exist (an intraday statement's pending entries counted as its movement); the balance
//!   chain per account: a statement's `010` = the `015` of the same account's statement of
//!   an earlier as-of date in the file. Statements of one account with the same as-of date
//!   (moov-sample3 reports `1111111` seven times in one group) are not chained. BAI2 has no
//!   statement sequence number: no `sequence_gap` check.
//! - Group status `2` (deletion) and `4` (test only) are refused; `1` and `3` (correction)
//!   are read alike.

pub mod generate;
mod lex;
mod reader;

pub use generate::generate_bai2;

use crate::formats::statement::{Statement, StatementKind};

/// The format string of every statement read here.
pub const FORMAT: &str = "bai2";

/// What one pass gave: the statement readers' one result.
pub(crate) use crate::formats::statement::StatementRead;

/// Reads a BAI2 file, calling `on_statement` once per account group as its `49` is read
/// (or as the group is closed by what follows, when the `49` is missing). A file with an
/// error finding is to be rejected whole.
pub(crate) fn read<R: std::io::BufRead>(
    input: R,
    on_statement: &mut dyn FnMut(Statement),
) -> std::io::Result<StatementRead> {
    reader::read(input, on_statement)
}

/// The kind of the statements of a group, by its as-of-date modifier.
fn kind_of_modifier(modifier: &str) -> Option<StatementKind> {
    match modifier {
        "" | "1" | "2" => Some(StatementKind::Final),
        "3" | "4" => Some(StatementKind::Intraday),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
