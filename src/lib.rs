//! clearledger: clearing files into an exactly-once ledger.
//!
//! Data flows one way (bytes → records → keys → ledger → report):
//! - [`findings`]: the vocabulary every format speaks (findings, severities, codes, a
//!   position of each format's kind, the bounded sink);
//! - [`formats`]: pure parsers (bytes in, records and findings with positions out), and
//!   `formats::detect`, which tells from the first bytes which one reads a file;
//! - [`keys`], `money`: file identities, posting records, keys, fingerprints; minor units
//!   and the one ISO 4217 table;
//! - `ingest`: the only place that reads files (and hashes them, once), runs the parser
//!   thread and calls the ledger;
//! - [`ledger`]: the store: one protocol and its SQL written once, SQLite (rusqlite) and
//!   PostgreSQL (sqlx) behind a small interface;
//! - [`statements`]: bank statements recorded in the ledger (the bank's side): their
//!   recording rules, their tables' SQL, their reads; a feature over [`ledger`];
//! - [`reconcile`]: two-sided reconciliation, pure: postings and statement entries in,
//!   items with outcomes and explanations out;
//! - `report`: outcomes in, CSV / JSON lines / text out;
//! - [`serve`]: the same over HTTP (`clearledger serve`): uploads under an
//!   `Idempotency-Key` go through `ingest` like any file; reads, metrics;
//! - [`console`]: the operator console in the browser, HTML pages served by `serve` over
//!   the same reads and writes;
//! - [`cli`]: the commands (argument handling and printing), called by `main.rs`;
//! - `fuzzing`: the fuzz targets' checks (`fuzz/`, and the suite's smoke test).

// A test reads as one scenario, top to bottom; production code fits a screen (Cargo.toml).
#![cfg_attr(test, allow(clippy::too_many_lines))]
// What is `pub` is what a library user calls; the rest is `pub(crate)`.
#![warn(unreachable_pub)]
// What stays public is what a library user calls, so it says what it means.
#![warn(missing_docs)]

pub mod cli;
pub mod console;
pub(crate) mod fault;
pub mod findings;
pub mod formats;
/// The fuzz targets' entry points (`fuzz/`, and the suite's smoke test): not an API.
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod hash;
pub(crate) mod ingest;
pub mod keys;
pub mod ledger;
pub(crate) mod money;
pub(crate) mod operator;
pub mod reconcile;
pub(crate) mod report;
/// Deterministic pseudo-random numbers for `generate` and the test suites (not an API).
#[doc(hidden)]
pub mod rng;
pub mod serve;
pub mod statements;
pub(crate) mod stderr;
#[cfg(test)]
mod test_support;
