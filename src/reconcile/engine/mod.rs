//! The engine: [`Inputs`] in, [`Item`]s out, no I/O and no clock (the day "now" is the
//! period's end, [`Inputs::as_of`]), so the same inputs and rules give the same items, in
//! the same order, every time. [`reconcile`] builds an [`Engine`], whose `run` calls the
//! passes below in order; each pass takes what it can and leaves the rest to the next.
//!
//! ## Signs
//! Amounts are signed minor units from the bank account's side: + money in (a credit on
//! the statement; a posting crediting the mapped ledger account), − money out.
//!
//! ## The cascade
//! Passes run level by level over all entries (a strong identifier is never taken by a
//! weak match made first), in a fixed order of entries (date, then the ledger's id); the
//! first level that gives an entry exactly one unconsumed posting pairs them, and the
//! level is recorded:
//! 1. itemised entries (camt `TxDtls`, two or more): each detail by its UETR, else its
//!    EndToEndId (+ InstrId) → `one_to_many`;
//! 2. `uetr`; 3. `end_to_end_id` (with `instr_id` when both sides have one, which must
//!    then agree); 4. a return's original references: the bank's return entry against
//!    our return posting's `OrgnlUETR`, `OrgnlEndToEndId` or NACHA addenda-99 original
//!    trace (`original_uetr`, `original_end_to_end_id`, `original_trace`); 5. NACHA
//!    `trace_number` quoted as the entry's customer or bank reference;
//! 6. batch keys: a NACHA batch (company id + effective date + batch number), a pain.001
//!    `PmtInfId`, a message id — tied to one entry by an identifier it quotes (its camt
//!    batch reference, customer or bank reference) and settled as its sum →
//!    `many_to_one`;
//! 7. `reference`: the entry's customer or bank reference equal to one of the posting's
//!    own references (transaction id, individual id, …);
//! 8. `amount_date`: the same amount and currency within the day window, each the only
//!    one of its kind for the other (a counterparty name in the entry's text narrows);
//! 9. `amount_sum`: the bounded N:M search (at most `max_members` among `max_candidates`
//!    within the day window): one solution pairs them, several make the item `ambiguous`.
//!
//! An entry whose identifier only finds postings already taken repeats them:
//! `duplicate_theirs`. A return entry (reversal, return reason) whose original payment
//! is ours but whose return we never posted is `returned`. Entries and postings left
//! are `missing_ours` (the bank booked it, we never posted it: listed first) and
//! `missing_theirs` (shown as `expected` until `expected_days` past its date); entries
//! and postings that fit each other several ways are one `ambiguous` item for an
//! operator. A provisional entry is shown (`provisional`), never matched as final; a
//! posting it names is `expected`.
//!
//! ## Judging a pair
//! Currencies differ → `currency_mismatch`. Otherwise Δ = theirs − ours: Δ = 0 and the
//! days within the window → `matched` (`many_to_one` / `one_to_many` for groups); Δ = 0
//! outside the window → `date_mismatch`; Δ ≠ 0 admitted by a tolerance →
//! `matched_within_tolerance` labelled with its name (groups keep their cardinality and
//! carry the label); otherwise `amount_mismatch`. A tolerance labels an item, it never
//! makes an ambiguous one a match.
//!
//! ## Corrections
//! A correction posting (operation `correction`) names the item it corrects by its key
//! ([`Item::key`], a hash of the members' natural keys, never random, never the clock).
//! A later run folds it into that item: Δ recomputed with it; Δ = 0 makes the item
//! `matched` by `correction`.
//!
//! ## The files
//! - `index.rs`: the postings by identifier, and the identifiers an entry quotes;
//! - `identifiers.rs`: levels 1–5 and 7 (itemised entries, one identifier one posting,
//!   references), and the `duplicate_theirs` they find;
//! - `returns.rs`: entries returning a payment of ours whose return we never posted;
//! - `batches.rs`: level 6, a batch settled as one line;
//! - `amount_date.rs`: level 8, and the ambiguity left by amount and window (its sets:
//!   `window_sets.rs`);
//! - `sums.rs`: level 9, the bounded N:M search;
//! - `leftovers.rs`: provisional entries, `missing_ours`, `missing_theirs` / `expected`;
//! - `items.rs`: how a pass records what it finds (a pairing to judge, an item made
//!   outright) and the explanation's wording;
//! - `judge.rs`: pairings judged, corrections folded in, the period kept;
//! - `parts.rs`: the same run in parts (the identifier passes per component of rows that
//!   share a value), for inputs read a part at a time;
//! - `rest.rs`: the second stage over what the parts left, a slice at a time (a group of
//!   one amount, a day's window).

mod amount_date;
#[cfg(test)]
mod amount_date_tests;
mod batches;
mod identifiers;
mod index;
mod items;
mod judge;
mod leftovers;
mod parts;
#[cfg(test)]
mod parts_tests;
mod rest;
mod returns;
mod sums;
#[cfg(test)]
mod tests;
mod window_sets;

use super::rules::Rules;
use chrono::NaiveDate;
use index::Indexes;
pub use parts::reconcile_in_parts;
pub(crate) use parts::{Linker, Parts, first_stage, orphans, our_links, their_links};
pub(crate) use rest::{Rest, Step, named_by, rest_step};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// A posting on one of the mapped ledger accounts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ours {
    /// The posting's id in the ledger (what an item's report names it by, with its key);
    /// unique among the postings.
    pub id: i64,
    /// `{operation}:{posting_key}`: the posting's natural key.
    pub key: String,
    /// The posting's operation: `ach.entry`, `pacs.008`, `pacs.004`, `pain.001`,
    /// `correction`.
    pub operation: String,
    /// The mapped ledger account it moves.
    pub ledger_account: String,
    /// Signed minor units from the bank account's side: + money in, − money out.
    pub amount_minor: i64,
    /// The ISO 4217 currency code.
    pub currency: String,
    /// The posting's effective date (NACHA effective entry date, ISO 20022 settlement or
    /// requested execution date), compared with the entry's within the day window.
    pub date: Option<NaiveDate>,
    /// ISO 20022: the payment's UETR, lower case.
    pub uetr: Option<String>,
    /// ISO 20022: the payment's `EndToEndId`.
    pub end_to_end_id: Option<String>,
    /// ISO 20022: the payment's `InstrId`.
    pub instr_id: Option<String>,
    /// NACHA: the entry's 15-digit trace number.
    pub trace: Option<String>,
    /// pacs.004: the returned payment's UETR (`OrgnlUETR`), lower case.
    pub original_uetr: Option<String>,
    /// pacs.004: the returned payment's `OrgnlEndToEndId`.
    pub original_end_to_end_id: Option<String>,
    /// NACHA return (addenda 99): the original entry's trace number.
    pub original_trace: Option<String>,
    /// A pacs.004, or a NACHA entry with a return addenda (99).
    pub is_return: bool,
    /// The batches it belongs to, most specific first.
    pub batches: Vec<BatchKey>,
    /// Other references a bank line may quote (transaction id, individual id …).
    pub refs: Vec<String>,
    /// The other party's name (the receiver or the company, the creditor or the debtor):
    /// narrows an amount-and-date match when the entry's text names it.
    pub counterparty: Option<String>,
    /// A correction posting: the key of the item it corrects.
    pub corrects: Option<String>,
}

/// A batch a posting belongs to, and what a bank line settling it may quote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchKey {
    /// `nacha:{company id}:{effective date}:{batch number}`, `pmtinf:{PmtInfId}`,
    /// `msg:{MsgId}`.
    pub key: String,
    /// The identifiers a bank line settling the batch may quote (a NACHA company id, with
    /// or without its batch number; a `PmtInfId`; a `MsgId`).
    pub ties: Vec<String>,
}

/// A statement entry of the bank account.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Theirs {
    /// The entry's id in the ledger's statement tables; unique among the entries.
    pub id: i64,
    /// The entry key (unique per bank account).
    pub key: String,
    /// Signed minor units: + a credit on the statement (money in), − a debit.
    pub amount_minor: i64,
    /// The ISO 4217 currency code.
    pub currency: String,
    /// Booking date, else value date.
    pub date: Option<NaiveDate>,
    /// An intraday or pending entry: shown (`provisional`), never matched as final.
    pub provisional: bool,
    /// A reversal, or an entry with a return reason (itself or every one of its details).
    pub is_return: bool,
    /// The UETR the entry quotes, lower case.
    pub uetr: Option<String>,
    /// The `EndToEndId` the entry quotes.
    pub end_to_end_id: Option<String>,
    /// The `InstrId` the entry quotes.
    pub instr_id: Option<String>,
    /// The bank's reference of the entry (camt `AcctSvcrRef`, MT940 after `//`, BAI2 bank
    /// reference).
    pub bank_ref: Option<String>,
    /// The customer's reference (camt `NtryRef`, MT940 before `//`, BAI2 customer
    /// reference).
    pub customer_ref: Option<String>,
    /// camt: the `PmtInfId` or `MsgId` of a batch booked as one entry.
    pub batch_ref: Option<String>,
    /// Remittance or narrative text, searched for a counterparty's name.
    pub remittance: Option<String>,
    /// The transaction details of an itemised entry (camt `TxDtls`), matched one by one.
    pub details: Vec<TheirDetail>,
}

/// One transaction detail of an itemised entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TheirDetail {
    /// Signed minor units, as the entry's; `None` when the detail gives no amount.
    pub amount_minor: Option<i64>,
    /// The detail's UETR, lower case.
    pub uetr: Option<String>,
    /// The detail's `EndToEndId`.
    pub end_to_end_id: Option<String>,
    /// The detail's `InstrId`.
    pub instr_id: Option<String>,
}

/// Both sides of one reconciliation.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// Our side: the postings on the ledger accounts mapped to the bank account.
    pub ours: Vec<Ours>,
    /// Their side: the bank account's booked and provisional statement entries.
    pub theirs: Vec<Theirs>,
    /// The period: items are reported when a member is dated within it (members outside
    /// it are read to match across its edges, and left to their own period otherwise).
    pub from: Option<NaiveDate>,
    /// The period's last day (inclusive); `None` for no end.
    pub to: Option<NaiveDate>,
    /// The day `expected` is judged on: the period's end, or the latest date read.
    pub as_of: Option<NaiveDate>,
}

/// What an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The bank booked an entry we never posted.
    MissingOurs,
    /// Paired, but the amounts differ beyond every tolerance.
    AmountMismatch,
    /// Paired, but in different currencies.
    CurrencyMismatch,
    /// Paired with the same amount, but dated outside the day window.
    DateMismatch,
    /// An entry repeating a payment another entry already settled.
    DuplicateTheirs,
    /// The bank returned a payment of ours whose return we never posted.
    Returned,
    /// Entries and postings that fit each other in several ways: an operator decides.
    Ambiguous,
    /// A posting the bank never booked, past `expected_days`.
    MissingTheirs,
    /// A posting not yet booked by the bank, within `expected_days` of its date (or named
    /// by a provisional entry).
    Expected,
    /// An intraday or pending entry, shown but never matched as final.
    Provisional,
    /// Several postings settled by one entry (a batch booked as one line); a difference a
    /// tolerance admits is named in [`Item::tolerance`].
    ManyToOne,
    /// One itemised entry (camt `TxDtls`) settling several postings, each detail by its own
    /// identifier.
    OneToMany,
    /// Paired, the difference admitted by a named tolerance.
    MatchedWithinTolerance,
    /// Paired, amounts equal (corrections included) and dates within the window.
    Matched,
}

impl Outcome {
    /// Every outcome, in report order (`missing_ours` first).
    pub const ALL: [Outcome; 14] = [
        Outcome::MissingOurs,
        Outcome::AmountMismatch,
        Outcome::CurrencyMismatch,
        Outcome::DateMismatch,
        Outcome::DuplicateTheirs,
        Outcome::Returned,
        Outcome::Ambiguous,
        Outcome::MissingTheirs,
        Outcome::Expected,
        Outcome::Provisional,
        Outcome::ManyToOne,
        Outcome::OneToMany,
        Outcome::MatchedWithinTolerance,
        Outcome::Matched,
    ];
    /// The outcome's name, as stored and reported (`missing_ours`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::MissingOurs => "missing_ours",
            Outcome::AmountMismatch => "amount_mismatch",
            Outcome::CurrencyMismatch => "currency_mismatch",
            Outcome::DateMismatch => "date_mismatch",
            Outcome::DuplicateTheirs => "duplicate_theirs",
            Outcome::Returned => "returned",
            Outcome::Ambiguous => "ambiguous",
            Outcome::MissingTheirs => "missing_theirs",
            Outcome::Expected => "expected",
            Outcome::Provisional => "provisional",
            Outcome::ManyToOne => "many_to_one",
            Outcome::OneToMany => "one_to_many",
            Outcome::MatchedWithinTolerance => "matched_within_tolerance",
            Outcome::Matched => "matched",
        }
    }
    /// The outcome of that name ([`Outcome::as_str`]), if any.
    pub fn parse(s: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == s)
    }
    /// Whether the item is settled: nobody needs to look at it.
    pub fn settled(self) -> bool {
        matches!(
            self,
            Outcome::Matched
                | Outcome::MatchedWithinTolerance
                | Outcome::ManyToOne
                | Outcome::OneToMany
                | Outcome::Expected
                | Outcome::Provisional
        )
    }
    /// Whether `--post-corrections` posts Δ for an item of this outcome (when Δ ≠ 0):
    /// not for what an operator must decide (ambiguous), cannot be netted (another
    /// currency) or is not due yet.
    pub fn correctable(self) -> bool {
        !matches!(
            self,
            Outcome::Ambiguous
                | Outcome::CurrencyMismatch
                | Outcome::Expected
                | Outcome::Provisional
        )
    }
}

/// One item of a reconciliation: its members on both sides, its outcome and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// What the item is.
    pub outcome: Outcome,
    /// The level that tied the members (`uetr`, `end_to_end_id`, …, `correction`).
    pub matched_by: Option<&'static str>,
    /// Indexes into [`Inputs::ours`] / [`Inputs::theirs`], ascending.
    pub ours: Vec<usize>,
    /// Indexes into [`Inputs::theirs`], ascending.
    pub theirs: Vec<usize>,
    /// Correction postings folded in (indexes into [`Inputs::ours`]).
    pub corrections: Vec<usize>,
    /// A posting the item refers to without consuming it (the original of a return, the
    /// posting a duplicate entry repeats).
    pub refers_to: Option<usize>,
    /// The name of the tolerance that admitted Δ, if one did.
    pub tolerance: Option<String>,
    /// The item's currency: the entries' (else the postings').
    pub currency: String,
    /// The sum of our members' amounts, signed, in minor units.
    pub our_amount_minor: i64,
    /// The sum of their members' amounts, signed, in minor units.
    pub their_amount_minor: i64,
    /// theirs − ours (corrections included).
    pub delta_minor: i64,
    /// Their date − our date (the largest in size over the members).
    pub delta_days: Option<i64>,
    /// Why the item is what it is, in a sentence an operator reads.
    pub explanation: String,
    /// sha256 of the members' natural keys (corrections not included), 32 hex digits.
    pub key: String,
    /// Whether `--post-corrections` may post its Δ: its outcome's rule
    /// ([`Outcome::correctable`]), except a correction left without its item (reversing
    /// it is an operator's `reverse`, never another correction).
    pub correctable: bool,
}

/// The level names, as stored and reported.
pub mod by {
    /// An itemised entry's details, each by its own identifier.
    pub const DETAILS: &str = "details";
    /// The UETR both sides carry.
    pub const UETR: &str = "uetr";
    /// The `EndToEndId` both sides carry (and `InstrId` when both have one).
    pub const END_TO_END_ID: &str = "end_to_end_id";
    /// A return entry against our pacs.004 by its `OrgnlUETR`.
    pub const ORIGINAL_UETR: &str = "original_uetr";
    /// A return entry against our pacs.004 by its `OrgnlEndToEndId`.
    pub const ORIGINAL_END_TO_END_ID: &str = "original_end_to_end_id";
    /// A return entry against our NACHA return by its addenda 99's original trace number.
    pub const ORIGINAL_TRACE: &str = "original_trace";
    /// A NACHA trace number quoted as the entry's customer or bank reference.
    pub const TRACE_NUMBER: &str = "trace_number";
    /// A batch (NACHA batch, `PmtInfId`, `MsgId`) settled as one entry.
    pub const BATCH: &str = "batch";
    /// The entry's reference equal to one of the posting's own references.
    pub const REFERENCE: &str = "reference";
    /// The same amount and currency within the day window, each the only one for the other.
    pub const AMOUNT_DATE: &str = "amount_date";
    /// A set of amounts summing to the other side's, the only such set within the window.
    pub const AMOUNT_SUM: &str = "amount_sum";
    /// A posting named by a provisional entry: `expected` until the bank books it.
    pub const PROVISIONAL: &str = "provisional";
    /// A correction posting folded in made Δ zero.
    pub const CORRECTION: &str = "correction";
}

/// The item key of a set of members: sha256 over their sorted natural keys (`o:{posting
/// key}`, `t:{entry key}`), first 32 hex digits.
pub fn item_key<'a>(
    ours: impl Iterator<Item = &'a str>,
    theirs: impl Iterator<Item = &'a str>,
) -> String {
    // Sorted as `o:{key}` / `t:{key}` strings sort: every `o:` before every `t:`, each
    // side by its keys; hashed without building those strings.
    let mut o: Vec<&str> = ours.collect();
    let mut t: Vec<&str> = theirs.collect();
    o.sort_unstable();
    t.sort_unstable();
    let mut h = Sha256::new();
    for (side, keys) in [(b"o:", &o), (b"t:", &t)] {
        for k in keys.iter() {
            h.update(side);
            h.update(k.as_bytes());
            h.update(b"\n");
        }
    }
    hex::encode(&h.finalize()[..16])
}

/// A pairing before it is judged.
struct Group {
    ours: Vec<usize>,
    theirs: Vec<usize>,
    matched_by: &'static str,
    /// What tied them, for the explanation (`uetr=…`).
    tie: String,
    /// `Some(outcome)` for cardinalities that keep their name when the sums agree.
    shape: Option<Outcome>,
    /// Lines added to the explanation (details not found …).
    notes: Vec<String>,
}

/// One reconciliation in progress: what each pass has taken so far.
struct Engine<'a> {
    inp: &'a Inputs,
    rules: &'a Rules,
    our_taken: Vec<bool>,
    their_taken: Vec<bool>,
    groups: Vec<Group>,
    /// Pre-judged items (duplicates, returns, leftovers, ambiguity).
    items: Vec<Item>,
    /// The group (index into `groups`) that took a posting.
    our_group: HashMap<usize, usize>,
}

/// The fixed orders the passes walk: entries and postings by date, then the ledger's own
/// id (unique on each side: an unstable sort is a total order; the same rows read in any
/// order give the same items).
struct Order {
    /// Booked entries, matched by the passes.
    booked: Vec<usize>,
    /// Provisional entries, shown and never matched as final.
    pending: Vec<usize>,
    /// Postings that are not corrections.
    plain: Vec<usize>,
    /// Correction postings, folded into the items they name at the end.
    corrections: Vec<usize>,
}

impl Order {
    fn of(inp: &Inputs) -> Order {
        let mut theirs: Vec<usize> = (0..inp.theirs.len()).collect();
        theirs.sort_unstable_by_key(|&a| (inp.theirs[a].date, inp.theirs[a].id));
        let mut ours: Vec<usize> = (0..inp.ours.len()).collect();
        ours.sort_unstable_by_key(|&a| (inp.ours[a].date, inp.ours[a].id));
        let (corrections, plain): (Vec<usize>, Vec<usize>) =
            ours.iter().partition(|&&i| inp.ours[i].corrects.is_some());
        let (pending, booked): (Vec<usize>, Vec<usize>) =
            theirs.iter().partition(|&&t| inp.theirs[t].provisional);
        Order {
            booked,
            pending,
            plain,
            corrections,
        }
    }
}

/// Reconciles `inp` under `rules`: every posting and every entry in the period ends in
/// exactly one item (as a member, or — a correction — folded into one), items in report
/// order.
pub fn reconcile(inp: &Inputs, rules: &Rules) -> Vec<Item> {
    let mut e = Engine::new(inp, rules);
    let mut lap = Lap::start();
    let order = Order::of(inp);
    let idx = Indexes::of(&inp.ours, &order.plain);
    lap.mark("indexes");
    e.first_stage(&order, &idx, &mut lap);
    e.second_stage(&order, &idx, &mut lap);
    let (mut items, _) = e.judged(&order.corrections, true);
    lap.mark("judged");
    sort_for_report(inp, &mut items);
    items
}

/// Items in report order: by outcome (`missing_ours` first), then the earliest date of
/// their members, then key.
pub(crate) fn sort_for_report(inp: &Inputs, items: &mut [Item]) {
    items.sort_by_cached_key(|i| (i.outcome, first_date(inp, i), i.key.clone()));
}

/// The earliest date of the item's members: the report orders by it.
pub(crate) fn first_date(inp: &Inputs, it: &Item) -> Option<NaiveDate> {
    it.theirs
        .iter()
        .filter_map(|&t| inp.theirs[t].date)
        .chain(it.ours.iter().filter_map(|&x| inp.ours[x].date))
        .min()
}

impl<'a> Engine<'a> {
    fn new(inp: &'a Inputs, rules: &'a Rules) -> Self {
        Engine {
            inp,
            rules,
            our_taken: vec![false; inp.ours.len()],
            their_taken: vec![false; inp.theirs.len()],
            groups: Vec::new(),
            items: Vec::new(),
            our_group: HashMap::new(),
        }
    }

    /// The passes that tie by identifier (levels 1 to 7 and the returns we never posted):
    /// each needs a value an entry and a posting share, so postings and entries that
    /// share none are left alone (`parts.rs` runs them part by part).
    fn first_stage(&mut self, order: &Order, idx: &Indexes<'_>, lap: &mut Lap) {
        let (plain, booked) = (&order.plain[..], &order.booked[..]);
        self.itemised(idx, booked);
        lap.mark("itemised");
        self.identifiers(idx, booked);
        lap.mark("identifiers");
        self.unposted_returns(idx, booked);
        lap.mark("returns");
        self.batches(plain, booked);
        lap.mark("batches");
        self.references(idx, booked);
        lap.mark("references");
    }

    /// What the identifiers left: amount and date (levels 8 and 9, the ambiguity left),
    /// provisional entries, then what nothing took.
    fn second_stage(&mut self, order: &Order, idx: &Indexes<'_>, lap: &mut Lap) {
        let (plain, booked) = (&order.plain[..], &order.booked[..]);
        self.amount_date(plain, booked);
        lap.mark("amount_date");
        self.sums(plain, booked);
        self.leftover_ambiguity(plain, booked);
        lap.mark("sums_and_ambiguity");
        self.provisional(idx, &order.pending);
        lap.mark("provisional");
        self.missing_ours(booked);
        self.missing_theirs(plain);
        lap.mark("leftovers");
    }
}

/// Phase timings at debug level (`RUST_LOG=clearledger=debug`).
struct Lap(Option<std::time::Instant>);

impl Lap {
    fn start() -> Self {
        Lap(Some(std::time::Instant::now()))
    }
    /// No timings (a part of a run: thousands of parts would drown the log).
    fn quiet() -> Self {
        Lap(None)
    }
    fn mark(&mut self, phase: &str) {
        let Some(then) = self.0 else { return };
        let now = std::time::Instant::now();
        tracing::debug!(
            phase,
            ms = (now - then).as_secs_f64() * 1e3,
            "reconcile phase"
        );
        self.0 = Some(now);
    }
}
