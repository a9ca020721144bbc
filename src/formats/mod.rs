//! Pure parsers: bytes in, records with positions out. No database, no async, no
//! hashing (the caller hashes what it reads: src/hash.rs).
//!
//! - [`detect`]: which format a file is, from its first bytes, and so which reader it
//!   goes to ([`detect::Detected`], the one dispatch `check` and ingest match on): a
//!   payment message, a bank statement, or a kind of file refused with its reason;
//! - payment messages, posted to the ledger: [`nacha`] (NACHA ACH files) and
//!   [`iso20022`] (pain.001, pacs.008, pacs.004), each emitting records as they complete
//!   and collecting every finding (the vocabulary is `crate::findings`);
//! - bank statements, recorded in the statement tables: [`camt`] (ISO 20022
//!   camt.052/053/054), [`bai2`] (BAI2) and [`mt940`] (SWIFT MT940/MT942), each emitting
//!   [`statement::Statement`]s; [`statement`] holds what they share (the statement model,
//!   the balance check, [`statement::read`] by detected format);
//! - `ParseSummary`: what one pass over a file gave, whatever its format.

#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable
    )
)]

pub mod bai2;
pub mod camt;
pub mod detect;
pub mod dialect;
pub mod iso20022;
pub mod mt940;
pub mod nacha;
pub mod statement;
pub(crate) mod xml;

use crate::findings::{Finding, count_errors};

/// The century of a two-digit year, one rule for every format that writes them (NACHA,
/// BAI2, SWIFT MT): 00-69 are 2000-2069, 70-99 are 1970-1999.
pub fn century(yy: u32) -> i32 {
    if yy < 70 {
        2000 + yy as i32
    } else {
        1900 + yy as i32
    }
}

/// What one pass over a file gave, whatever its format: the one summary ingest and
/// `check` decide on (a file with an error finding is rejected whole).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ParseSummary {
    /// The format read (`nacha`, `iso20022`, or a statement format's name: `camt.053`,
    /// `bai2`, `mt940`, …), or the kind of a file refused (`gzip`, `pdf`, …:
    /// [`detect::Refusal::as_str`]).
    pub(crate) format: &'static str,
    /// Records read: NACHA entry details, ISO 20022 transactions, statement entries.
    pub(crate) records: u64,
    /// Every finding of the pass, in file order.
    pub(crate) findings: Vec<Finding>,
}

impl ParseSummary {
    /// The findings of severity error: any rejects the file.
    pub(crate) fn errors(&self) -> usize {
        count_errors(&self.findings)
    }
    /// The findings of severity warning.
    pub(crate) fn warnings(&self) -> usize {
        self.findings.len() - self.errors()
    }
    /// `invalid`, `valid_with_warnings` or `valid`.
    pub(crate) fn status(&self) -> &'static str {
        if self.errors() > 0 {
            "invalid"
        } else if !self.findings.is_empty() {
            "valid_with_warnings"
        } else {
            "valid"
        }
    }
}
