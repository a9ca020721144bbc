//! ISO 20022 bank-to-customer cash management messages: camt.052 (account report,
//! `BkToCstmrAcctRpt`: intraday), camt.053 (statement, `BkToCstmrStmt`: end of day) and
//! camt.054 (debit/credit notification, `BkToCstmrDbtCdtNtfctn`), every version from
//! .001.01 on, with a namespace or without, bare or after a business application header
//! (`AppHdr`) in an envelope.
//!
//! Pure: bytes in, [`Statement`]s (one per `Rpt`/`Stmt`/`Ntfctn`, handed over as each
//! ends) and findings out. The XML layer is the one the ISO 20022 payment reader reads
//! with too (`crate::formats::xml`): the same encodings and byte-order marks, the same
//! refusals (DOCTYPE, entities other than XML's own, duplicate attributes) and limits
//! (depth, event size), the same positions (byte, line, element path with indices).
//!
//! The mapping to the model, the checks and the decisions are in docs/formats.md, "camt.052 /
//! camt.053 / camt.054".

mod balance;
mod details;
mod entry;
pub mod generate;
mod reader;
mod statement;
mod values;

use crate::formats::statement::Statement;
use std::io::{self, BufRead};

/// What one pass gave: the statement readers' one result.
pub(crate) use crate::formats::statement::StatementRead;

/// Reads one camt document, calling `on_statement` once per statement as it completes.
/// Errors in the input are findings; `Err` is an I/O error of `input` only.
pub(crate) fn read<R: BufRead>(
    input: R,
    on_statement: &mut dyn FnMut(Statement),
) -> io::Result<StatementRead> {
    reader::read(input, on_statement)
}

#[cfg(test)]
mod tests;
