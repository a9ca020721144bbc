//! clearledger: clearing files into an exactly-once ledger.
//!
//! Data flows one way:
//! - [`formats`]: pure parsers (bytes in, records and findings with positions out), and
//!   `formats::detect`, which tells from the first bytes which one reads a file;
//! - [`model`]: the shared vocabulary (file identity, posting records, keys, fingerprints);
//! - [`ingest`]: the only place that reads files, runs the parser thread and calls the ledger;
//! - [`ledger`]: the store, one trait with the SQLite backend behind it;
//! - [`report`]: outcomes in, CSV / JSON lines / text out.

pub mod cli;
pub(crate) mod fault;
pub mod findings;
pub mod formats;
pub(crate) mod hash;
pub mod ingest;
pub mod ledger;
pub mod model;
pub mod money;
pub mod report;
/// Deterministic pseudo-random numbers for `generate` and the test suites (not an API).
#[doc(hidden)]
pub mod rng;
