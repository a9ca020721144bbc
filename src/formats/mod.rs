//! Pure parsers: bytes in, records with positions out. No database, no async, no
//! hashing (the caller hashes what it reads: src/hash.rs).
//!
//! - [`detect`]: which format a file is, from its first bytes (and what it is when no
//!   reader reads it);
//! - [`nacha`], [`iso20022`]: one reader each, emitting records as they complete and
//!   collecting every finding (the vocabulary is `crate::findings`);
//! - [`ParseSummary`]: what one pass gave, whatever the format.

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
pub struct ParseSummary {
    /// The format read (`nacha`, `iso20022`), or the kind of a file no reader reads
    /// (`gzip`, `bai2`, …: [`detect::Unsupported::as_str`]).
    pub format: &'static str,
    /// Records read: NACHA entry details, ISO 20022 transactions.
    pub records: u64,
    pub findings: Vec<Finding>,
}

impl ParseSummary {
    pub fn errors(&self) -> usize {
        count_errors(&self.findings)
    }
    pub fn warnings(&self) -> usize {
        self.findings.len() - self.errors()
    }
    /// `invalid`, `valid_with_warnings` or `valid`.
    pub fn status(&self) -> &'static str {
        if self.errors() > 0 {
            "invalid"
        } else if !self.findings.is_empty() {
            "valid_with_warnings"
        } else {
            "valid"
        }
    }
}
