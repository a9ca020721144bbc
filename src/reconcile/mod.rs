//! Two-sided reconciliation (docs/principles.md §11): the postings of the ledger
//! accounts mapped to a bank account ("ours") against the bank's booked statement entries
//! of that account ("theirs"), every one of them ending in exactly one item with an
//! outcome and its explanation, in both directions. Idempotency closes the repeat channels
//! we know; reconciliation against the bank's own statement finds the rest.
//!
//! The engine is pure: [`Inputs`] in, [`Item`]s out, no I/O and no clock, so the same
//! inputs and rules give the same items, in the same order, every time.
//! `store.rs` reads the inputs and records the run in the ledger; `cli::reconcile` prints it.
//!
//! ## The folder
//! - `engine/`: [`reconcile`], the cascade of passes (its `mod.rs` describes them, one
//!   file per pass family), the inputs ([`Ours`], [`Theirs`]) and the items
//!   ([`Item`], [`Outcome`], [`item_key`]);
//! - [`rules`]: the rule-set (`reconcile --rules FILE`): day windows, tolerances, where
//!   corrections post;
//! - `generate/`: a seeded scenario with breaks of every kind planted
//!   (`generate recon`), and the items it must give;
//! - `store.rs`: a reconciliation run in the ledger: both sides read, the engine's items,
//!   their members and the corrections recorded in one transaction;
//! - `synthetic.rs`: inputs for the benchmark and profiling.

mod breaks;
mod engine;
pub(crate) mod generate;
pub mod rules;
mod store;
mod synthetic;

pub(crate) use breaks::StatementBreak;
pub use engine::{
    BatchKey, Inputs, Item, Ours, Outcome, TheirDetail, Theirs, by, item_key, reconcile,
    reconcile_in_parts,
};
pub(crate) use engine::{
    Linker, Parts, Rest, Step, first_date, first_stage, named_by, orphans, our_links, rest_step,
    their_links,
};
pub(crate) use store::{
    BalanceRow, ITEM_COLUMNS, ItemRow, Items, ReconcileOutcome, ReconcileRequest, Reconciliation,
    Summary, stored_item,
};
#[doc(hidden)]
pub use synthetic::synthetic;
