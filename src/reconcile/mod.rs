//! Two-sided reconciliation (docs/principles.md §11): the postings of the ledger
//! accounts mapped to a bank account ("ours") against the bank's booked statement entries
//! of that account ("theirs"), every one of them ending in exactly one item with an
//! outcome and its explanation, in both directions.
//!
//! This module is pure: [`Inputs`] in, [`Item`]s out, no I/O and no clock (the day "now"
//! is the period's end, [`Inputs::as_of`]), so the same inputs and rules give the same
//! items, in the same order, every time. `ledger::reconcile` reads the inputs and stores
//! the run; `cli::reconcile` prints it.
//!
//! ## Signs
//! Amounts are signed minor units from the bank account's side: + money in (a credit on
//! the statement; a posting crediting the mapped ledger account), − money out.
//!
//! ## The cascade
//! Passes run level by level over all entries (a strong identifier is never taken by a
//! weak match made first), in a fixed order of entries (date, then the ledger's id); the first level that
//! gives an entry exactly one unconsumed posting pairs them, and the level is recorded:
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

pub mod generate;
pub mod rules;
mod store;

pub use store::{
    BalanceRow, Changes, ItemRow, OutcomeTotals, ReconcileOutcome, ReconcileRequest,
    Reconciliation, Summary,
};

use chrono::NaiveDate;
use rules::Rules;
use rustc_hash::FxHashMap;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A posting on one of the mapped ledger accounts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ours {
    pub id: i64,
    /// `{operation}:{posting_key}`: the posting's natural key.
    pub key: String,
    pub operation: String,
    /// The mapped ledger account it moves.
    pub ledger_account: String,
    pub amount_minor: i64,
    pub currency: String,
    pub date: Option<NaiveDate>,
    pub uetr: Option<String>,
    pub end_to_end_id: Option<String>,
    pub instr_id: Option<String>,
    pub trace: Option<String>,
    pub original_uetr: Option<String>,
    pub original_end_to_end_id: Option<String>,
    pub original_trace: Option<String>,
    /// A pacs.004, or a NACHA entry with a return addenda (99).
    pub is_return: bool,
    /// The batches it belongs to, most specific first.
    pub batches: Vec<BatchKey>,
    /// Other references a bank line may quote (transaction id, individual id …).
    pub refs: Vec<String>,
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
    pub ties: Vec<String>,
}

/// A statement entry of the bank account.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Theirs {
    pub id: i64,
    /// The entry key (unique per bank account).
    pub key: String,
    pub amount_minor: i64,
    pub currency: String,
    /// Booking date, else value date.
    pub date: Option<NaiveDate>,
    pub provisional: bool,
    pub is_return: bool,
    pub uetr: Option<String>,
    pub end_to_end_id: Option<String>,
    pub instr_id: Option<String>,
    pub bank_ref: Option<String>,
    pub customer_ref: Option<String>,
    pub batch_ref: Option<String>,
    pub remittance: Option<String>,
    pub details: Vec<TheirDetail>,
}

/// One transaction detail of an itemised entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TheirDetail {
    pub amount_minor: Option<i64>,
    pub uetr: Option<String>,
    pub end_to_end_id: Option<String>,
    pub instr_id: Option<String>,
}

/// Both sides of one reconciliation.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub ours: Vec<Ours>,
    pub theirs: Vec<Theirs>,
    /// The period: items are reported when a member is dated within it (members outside
    /// it are read to match across its edges, and left to their own period otherwise).
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    /// The day `expected` is judged on: the period's end, or the latest date read.
    pub as_of: Option<NaiveDate>,
}

/// What an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    MissingOurs,
    AmountMismatch,
    CurrencyMismatch,
    DateMismatch,
    DuplicateTheirs,
    Returned,
    Ambiguous,
    MissingTheirs,
    Expected,
    Provisional,
    ManyToOne,
    OneToMany,
    MatchedWithinTolerance,
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
    pub outcome: Outcome,
    /// The level that tied the members (`uetr`, `end_to_end_id`, …, `correction`).
    pub matched_by: Option<&'static str>,
    /// Indexes into [`Inputs::ours`] / [`Inputs::theirs`], ascending.
    pub ours: Vec<usize>,
    pub theirs: Vec<usize>,
    /// Correction postings folded in (indexes into [`Inputs::ours`]).
    pub corrections: Vec<usize>,
    /// A posting the item refers to without consuming it (the original of a return, the
    /// posting a duplicate entry repeats).
    pub refers_to: Option<usize>,
    pub tolerance: Option<String>,
    pub currency: String,
    pub our_amount_minor: i64,
    pub their_amount_minor: i64,
    /// theirs − ours (corrections included).
    pub delta_minor: i64,
    /// Their date − our date (the largest in size over the members).
    pub delta_days: Option<i64>,
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
    pub const DETAILS: &str = "details";
    pub const UETR: &str = "uetr";
    pub const END_TO_END_ID: &str = "end_to_end_id";
    pub const ORIGINAL_UETR: &str = "original_uetr";
    pub const ORIGINAL_END_TO_END_ID: &str = "original_end_to_end_id";
    pub const ORIGINAL_TRACE: &str = "original_trace";
    pub const TRACE_NUMBER: &str = "trace_number";
    pub const BATCH: &str = "batch";
    pub const REFERENCE: &str = "reference";
    pub const AMOUNT_DATE: &str = "amount_date";
    pub const AMOUNT_SUM: &str = "amount_sum";
    pub const PROVISIONAL: &str = "provisional";
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

fn provided(v: &Option<String>) -> Option<&str> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty() && !s.eq_ignore_ascii_case("NOTPROVIDED"))
}

/// Postings by one identifier: most identifiers name one posting, so one hit is held
/// inline (no allocation a posting for a million of them).
#[derive(Default)]
struct Index<'a> {
    m: FxHashMap<&'a str, Hits>,
}

enum Hits {
    One(usize),
    Many(Vec<usize>),
}

impl<'a> Index<'a> {
    fn insert(&mut self, v: &'a str, i: usize) {
        match self.m.entry(v) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(Hits::One(i));
            }
            std::collections::hash_map::Entry::Occupied(mut e) => match e.get_mut() {
                Hits::One(j) if *j == i => {}
                Hits::One(j) => {
                    let j = *j;
                    e.insert(Hits::Many(vec![j, i]));
                }
                Hits::Many(v) => {
                    if v.last() != Some(&i) {
                        v.push(i)
                    }
                }
            },
        }
    }
    fn get(&self, v: &str) -> Option<&[usize]> {
        self.m.get(v).map(|h| match h {
            Hits::One(i) => std::slice::from_ref(i),
            Hits::Many(v) => v.as_slice(),
        })
    }
}

/// An index of `list` by the (at most two) identifiers `f` gives each posting.
fn index<'a>(
    ours: &'a [Ours],
    list: &[usize],
    f: impl Fn(&'a Ours) -> [Option<&'a str>; 2],
) -> Index<'a> {
    let mut m = Index::default();
    m.m.reserve(list.len());
    for &i in list {
        for v in f(&ours[i]).into_iter().flatten() {
            m.insert(v, i);
        }
    }
    m
}

/// Reconciles `inp` under `rules`: every posting and every entry in the period ends in
/// exactly one item (as a member, or — a correction — folded into one), items in report
/// order.
pub fn reconcile(inp: &Inputs, rules: &Rules) -> Vec<Item> {
    let mut e = Engine {
        inp,
        rules,
        our_taken: vec![false; inp.ours.len()],
        their_taken: vec![false; inp.theirs.len()],
        groups: Vec::new(),
        items: Vec::new(),
        our_group: HashMap::new(),
    };
    e.run()
}

impl<'a> Engine<'a> {
    fn run(&mut self) -> Vec<Item> {
        let inp = self.inp;
        let mut lap = Lap::start();
        // Fixed orders: entries by (date, key), postings by (date, key).
        let mut theirs: Vec<usize> = (0..inp.theirs.len()).collect();
        // By date, then the ledger's own id (unique on each side: an unstable sort is a
        // total order; the same rows read in any order give the same items).
        theirs.sort_unstable_by_key(|&a| (inp.theirs[a].date, inp.theirs[a].id));
        let mut ours: Vec<usize> = (0..inp.ours.len()).collect();
        ours.sort_unstable_by_key(|&a| (inp.ours[a].date, inp.ours[a].id));
        let (corrections, plain): (Vec<usize>, Vec<usize>) =
            ours.iter().partition(|&&i| inp.ours[i].corrects.is_some());
        let o = &inp.ours;
        let unless_return = |x: &Ours, v: &'a Option<String>| -> Option<&'a str> {
            if x.is_return { None } else { provided(v) }
        };
        let only_return = |x: &Ours, v: &'a Option<String>| -> Option<&'a str> {
            if x.is_return { provided(v) } else { None }
        };
        let by_uetr = index(o, &plain, |x| [unless_return(x, &x.uetr), None]);
        let by_e2e = index(o, &plain, |x| [unless_return(x, &x.end_to_end_id), None]);
        let by_return_uetr = index(o, &plain, |x| {
            [only_return(x, &x.original_uetr), only_return(x, &x.uetr)]
        });
        let by_return_e2e = index(o, &plain, |x| {
            [only_return(x, &x.original_end_to_end_id), None]
        });
        let by_return_trace = index(o, &plain, |x| [only_return(x, &x.original_trace), None]);
        let by_trace = index(o, &plain, |x| [unless_return(x, &x.trace), None]);
        let mut by_ref = Index::default();
        for &i in &plain {
            for r in &o[i].refs {
                let r = r.trim();
                if !r.is_empty() {
                    by_ref.insert(r, i);
                }
            }
        }

        let booked: Vec<usize> = theirs
            .iter()
            .copied()
            .filter(|&t| !inp.theirs[t].provisional)
            .collect();

        lap.mark("indexes");
        // 1. itemised entries.
        for &t in &booked {
            let e = &inp.theirs[t];
            if e.details.len() < 2 || e.is_return {
                continue;
            }
            let mut found = Vec::new();
            let mut notes = Vec::new();
            for (n, d) in e.details.iter().enumerate() {
                let hit = provided(&d.uetr)
                    .and_then(|u| self.unique_free(&by_uetr, u, |_| true))
                    .or_else(|| {
                        provided(&d.end_to_end_id).and_then(|v| {
                            self.unique_free(&by_e2e, v, |x| {
                                instr_agrees(&d.instr_id, &inp.ours[x].instr_id)
                            })
                        })
                    })
                    .filter(|x| !found.contains(x));
                match hit {
                    Some(x) => found.push(x),
                    None => notes.push(format!(
                        "detail {} ({}) has no posting",
                        n + 1,
                        detail_ref(d)
                    )),
                }
            }
            if found.is_empty() {
                continue;
            }
            found.sort_unstable();
            let tie = format!("{} of {} details", found.len(), e.details.len());
            self.take(
                found,
                vec![t],
                by::DETAILS,
                tie,
                Some(Outcome::OneToMany),
                notes,
            );
        }

        lap.mark("itemised");
        // 2–5. one identifier, one posting.
        type Level<'x> = (&'static str, Vec<(&'x Index<'x>, Which)>, bool);
        let levels: [Level; 4] = [
            (by::UETR, vec![(&by_uetr, Which::Uetr)], false),
            (by::END_TO_END_ID, vec![(&by_e2e, Which::EndToEnd)], false),
            (
                "original",
                vec![
                    (&by_return_uetr, Which::Uetr),
                    (&by_return_e2e, Which::EndToEnd),
                    (&by_return_trace, Which::Refs),
                ],
                true,
            ),
            (
                by::TRACE_NUMBER,
                vec![(&by_trace, Which::RefsAndEndToEnd)],
                false,
            ),
        ];
        // Reused across entries: no allocation an entry.
        let mut all: Vec<usize> = Vec::new();
        let mut free: Vec<usize> = Vec::new();
        for (level, lookups, returns) in levels {
            for &t in &booked {
                // A flagged return is tied only by its original's references; the
                // original-reference level looks at every entry (a BAI2 or MT940 return
                // carries no flag), since only our return postings are in its indexes.
                if self.their_taken[t] || (inp.theirs[t].is_return && !returns) {
                    continue;
                }
                let e = &inp.theirs[t];
                all.clear();
                let mut first: Option<(&'static str, &str, Which)> = None;
                for (idx, which) in &lookups {
                    for v in which.values(e).into_iter().flatten() {
                        let Some(hits) = idx.get(v) else { continue };
                        let before = all.len();
                        // Same sign only: a line of the other sign quoting a payment's
                        // identifier is its return (the returns pass below), never its match.
                        all.extend(hits.iter().copied().filter(|&x| {
                            inp.ours[x].amount_minor.signum() == e.amount_minor.signum()
                                && (*which != Which::EndToEnd
                                    || instr_agrees(&e.instr_id, &inp.ours[x].instr_id))
                        }));
                        if all.len() > before && first.is_none() {
                            let name = match (returns, which) {
                                (false, _) => level,
                                (true, Which::Uetr) => by::ORIGINAL_UETR,
                                (true, Which::EndToEnd) => by::ORIGINAL_END_TO_END_ID,
                                (true, _) => by::ORIGINAL_TRACE,
                            };
                            first = Some((name, v, *which));
                        }
                    }
                }
                let Some((name, v, which)) = first else {
                    continue;
                };
                all.sort_unstable();
                all.dedup();
                free.clear();
                free.extend(all.iter().copied().filter(|&x| !self.our_taken[x]));
                // Identifiers that repeat (a NACHA trace number restarted every week): the
                // postings within the day window, when there are any.
                if free.len() > 1
                    && free
                        .iter()
                        .any(|&x| self.in_window(inp.ours[x].date, e.date))
                {
                    free.retain(|&x| self.in_window(inp.ours[x].date, e.date));
                }
                let tie = tie_text(name, v, e, &all, inp, which);
                match free.len() {
                    1 => self.take(vec![free[0]], vec![t], name, tie, None, vec![]),
                    // A repeat of a posting another entry matched; a posting taken by an
                    // ambiguous item makes no duplicate (the later levels look again).
                    0 => {
                        if let Some(&x) = all.iter().find(|x| self.our_group.contains_key(x)) {
                            self.duplicate(t, x, &tie);
                        }
                    }
                    _ => {
                        // Several postings carry it: the one of the same amount, if only one.
                        let same: Vec<usize> = free
                            .iter()
                            .copied()
                            .filter(|&x| inp.ours[x].amount_minor == e.amount_minor)
                            .collect();
                        if same.len() == 1 {
                            self.take(same, vec![t], name, tie, None, vec![]);
                        } else {
                            let note = format!("{} postings carry {tie}", free.len());
                            self.ambiguous(free.clone(), vec![t], note);
                        }
                    }
                }
            }
        }

        lap.mark("identifiers");
        // Returns of our payments whose return we never posted: a flagged return entry, or
        // an entry left that quotes a payment of ours of the other sign.
        for &t in &booked {
            let e = &inp.theirs[t];
            if self.their_taken[t] {
                continue;
            }
            let original = [
                (Which::Uetr, &by_uetr, by::UETR),
                (Which::EndToEnd, &by_e2e, by::END_TO_END_ID),
                (Which::RefsAndEndToEnd, &by_trace, by::TRACE_NUMBER),
            ]
            .into_iter()
            .find_map(|(w, idx, name)| {
                w.values(e).into_iter().flatten().find_map(|v| {
                    idx.get(v)
                        .and_then(|h| {
                            h.iter().copied().find(|&x| {
                                e.is_return
                                    || inp.ours[x].amount_minor.signum() == -e.amount_minor.signum()
                            })
                        })
                        .map(|x| (x, format!("{name}={v}")))
                })
            });
            if let Some((x, tie)) = original {
                let explanation = format!(
                    "returns posting {} by {tie}; no return of it is posted; amount {} {}",
                    inp.ours[x].key,
                    signed(e.amount_minor),
                    e.currency
                );
                self.their_taken[t] = true;
                self.items.push(self.unjudged(
                    Outcome::Returned,
                    None,
                    vec![],
                    vec![t],
                    Some(x),
                    explanation,
                ));
            }
        }

        lap.mark("returns");
        // 6. batches settled as one line.
        let mut batches: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        let mut ties: HashMap<&str, BTreeSet<&str>> = HashMap::new();
        for &x in &plain {
            for b in &inp.ours[x].batches {
                batches.entry(b.key.as_str()).or_default().push(x);
                for tie in &b.ties {
                    ties.entry(tie.as_str()).or_default().insert(b.key.as_str());
                }
            }
        }
        for &t in &booked {
            if self.their_taken[t] {
                continue;
            }
            let e = &inp.theirs[t];
            let mut tied: BTreeSet<(&str, &str)> = BTreeSet::new();
            for v in [&e.batch_ref, &e.customer_ref, &e.bank_ref, &e.end_to_end_id] {
                if let Some(v) = provided(v)
                    && let Some(keys) = ties.get(v)
                {
                    tied.extend(keys.iter().map(|k| (*k, v)));
                }
            }
            let mut fits: Vec<(Vec<usize>, String, i64)> = Vec::new();
            for (key, quoted) in tied {
                let members: Vec<usize> = batches[key]
                    .iter()
                    .copied()
                    .filter(|&x| {
                        let p = &inp.ours[x];
                        !self.our_taken[x]
                            && p.currency == e.currency
                            && p.amount_minor.signum() == e.amount_minor.signum()
                            && self.in_window(p.date, e.date)
                    })
                    .collect();
                if members.is_empty() {
                    continue;
                }
                let sum = members
                    .iter()
                    .map(|&x| inp.ours[x].amount_minor)
                    .fold(0i64, i64::saturating_add);
                fits.push((members, format!("batch {key} quoted as {quoted}"), sum));
            }
            let exact: Vec<usize> = (0..fits.len())
                .filter(|&i| fits[i].2 == e.amount_minor)
                .collect();
            let within: Vec<usize> = (0..fits.len())
                .filter(|&i| {
                    self.rules
                        .tolerance(
                            &e.currency,
                            fits[i].2,
                            e.amount_minor.saturating_sub(fits[i].2),
                        )
                        .is_some()
                })
                .collect();
            // The sum must agree (exactly, or within a tolerance when only one batch is
            // tied): a tolerance never chooses between batches, and an identifier alone
            // (a fee line quoting the company id) ties nothing.
            let pick = if exact.len() == 1 {
                Some(exact[0])
            } else if exact.is_empty() && fits.len() == 1 && within.len() == 1 {
                Some(within[0])
            } else {
                None
            };
            if let Some(i) = pick {
                let (members, tie, _) = fits.swap_remove(i);
                let shape = (members.len() > 1).then_some(Outcome::ManyToOne);
                self.take(members, vec![t], by::BATCH, tie, shape, vec![]);
            }
        }

        lap.mark("batches");
        // 7. references.
        for &t in &booked {
            if self.their_taken[t] {
                continue;
            }
            let e = &inp.theirs[t];
            let mut free = BTreeSet::new();
            let mut tie = String::new();
            for v in [&e.customer_ref, &e.bank_ref] {
                if let Some(v) = provided(v)
                    && let Some(hits) = by_ref.get(v)
                {
                    for &x in hits {
                        if !self.our_taken[x] && free.insert(x) && tie.is_empty() {
                            tie = format!("reference={v}");
                        }
                    }
                }
            }
            if free.len() == 1 {
                self.take(
                    free.into_iter().collect(),
                    vec![t],
                    by::REFERENCE,
                    tie,
                    None,
                    vec![],
                );
            }
        }

        lap.mark("references");
        // 8. amount and date, each the only one for the other.
        self.amount_date(&plain, &booked);

        lap.mark("amount_date");
        // 9. bounded sums, then the ambiguity left.
        self.sums(&plain, &booked);
        self.leftover_ambiguity(&plain, &booked);

        lap.mark("sums_and_ambiguity");
        // Provisional entries: shown; a posting they name is expected.
        let pending: Vec<usize> = theirs
            .iter()
            .copied()
            .filter(|&t| inp.theirs[t].provisional)
            .collect();
        for t in pending {
            let e = &inp.theirs[t];
            let named = [
                (Which::Uetr, &by_uetr),
                (Which::EndToEnd, &by_e2e),
                (Which::RefsAndEndToEnd, &by_trace),
            ]
            .into_iter()
            .find_map(|(w, idx)| {
                w.values(e).into_iter().flatten().find_map(|v| {
                    idx.get(v)
                        .and_then(|h| h.iter().copied().find(|&x| !self.our_taken[x]))
                        .map(|x| (x, v))
                })
            });
            self.their_taken[t] = true;
            match named {
                Some((x, v)) => {
                    self.our_taken[x] = true;
                    let explanation = format!(
                        "provisional entry {} names it ({v}); not final until booked; amount ours {} theirs {}",
                        e.key,
                        signed(inp.ours[x].amount_minor),
                        signed(e.amount_minor)
                    );
                    let item = self.unjudged(
                        Outcome::Expected,
                        Some(by::PROVISIONAL),
                        vec![x],
                        vec![t],
                        None,
                        explanation,
                    );
                    self.items.push(item);
                }
                None => {
                    let explanation = format!(
                        "provisional entry, not final until booked; amount {} {}",
                        signed(e.amount_minor),
                        e.currency
                    );
                    self.items.push(self.unjudged(
                        Outcome::Provisional,
                        None,
                        vec![],
                        vec![t],
                        None,
                        explanation,
                    ));
                }
            }
        }

        lap.mark("provisional");
        // What is left.
        for &t in &booked {
            if self.their_taken[t] {
                continue;
            }
            let e = &inp.theirs[t];
            self.their_taken[t] = true;
            let explanation = format!(
                "no posting for this entry{}; amount {} {}{}",
                if e.is_return {
                    " (a return; its original is not ours)"
                } else {
                    ""
                },
                signed(e.amount_minor),
                e.currency,
                e.date.map(|d| format!(", booked {d}")).unwrap_or_default()
            );
            self.items.push(self.unjudged(
                Outcome::MissingOurs,
                None,
                vec![],
                vec![t],
                None,
                explanation,
            ));
        }
        for &x in &plain {
            if self.our_taken[x] {
                continue;
            }
            self.our_taken[x] = true;
            let p = &inp.ours[x];
            let due = p
                .date
                .map(|d| d + chrono::Days::new(u64::from(self.rules.expected_days)));
            let (outcome, why) = match (due, inp.as_of) {
                (Some(due), Some(as_of)) if as_of < due => (
                    Outcome::Expected,
                    format!("no bank entry yet; not due before {due}"),
                ),
                (Some(due), Some(as_of)) => (
                    Outcome::MissingTheirs,
                    format!("no bank entry by {as_of} (due {due})"),
                ),
                _ => (Outcome::MissingTheirs, "no bank entry".to_string()),
            };
            let explanation = format!("{why}; amount {} {}", signed(p.amount_minor), p.currency);
            let item = self.unjudged(outcome, None, vec![x], vec![], None, explanation);
            self.items.push(item);
        }

        lap.mark("leftovers");
        let groups = std::mem::take(&mut self.groups);
        let mut items: Vec<Item> = groups.into_iter().map(|g| self.judge(g)).collect();
        items.append(&mut self.items);
        self.fold_corrections(&mut items, &corrections);
        items.retain(|i| self.in_period(i));
        // Members by natural key: the same inputs in any order give the same items.
        for it in &mut items {
            it.ours
                .sort_by(|&a, &b| inp.ours[a].key.cmp(&inp.ours[b].key));
            it.theirs
                .sort_by(|&a, &b| inp.theirs[a].key.cmp(&inp.theirs[b].key));
            it.corrections
                .sort_by(|&a, &b| inp.ours[a].key.cmp(&inp.ours[b].key));
        }
        lap.mark("judged");
        items.sort_by_cached_key(|i| (i.outcome, self.first_date(i), i.key.clone()));
        items
    }

    /// The only posting of `idx[value]` not taken, matching `ok`.
    fn unique_free(
        &self,
        idx: &Index<'_>,
        value: &str,
        ok: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let hits = idx.get(value)?;
        let mut free = hits
            .iter()
            .copied()
            .filter(|&x| !self.our_taken[x] && ok(x));
        let first = free.next()?;
        free.next().is_none().then_some(first)
    }

    fn take(
        &mut self,
        ours: Vec<usize>,
        theirs: Vec<usize>,
        matched_by: &'static str,
        tie: String,
        shape: Option<Outcome>,
        notes: Vec<String>,
    ) {
        let g = self.groups.len();
        for &x in &ours {
            self.our_taken[x] = true;
            self.our_group.insert(x, g);
        }
        for &t in &theirs {
            self.their_taken[t] = true;
        }
        self.groups.push(Group {
            ours,
            theirs,
            matched_by,
            tie,
            shape,
            notes,
        });
    }

    fn duplicate(&mut self, t: usize, posting: usize, tie: &str) {
        let inp = self.inp;
        let e = &inp.theirs[t];
        let first = self
            .our_group
            .get(&posting)
            .and_then(|&g| self.groups[g].theirs.first().copied())
            .map(|t| inp.theirs[t].key.clone())
            .unwrap_or_default();
        let explanation = format!(
            "repeats entry {first} by {tie} (posting {}); amount {} {}",
            inp.ours[posting].key,
            signed(e.amount_minor),
            e.currency
        );
        self.their_taken[t] = true;
        self.items.push(self.unjudged(
            Outcome::DuplicateTheirs,
            None,
            vec![],
            vec![t],
            Some(posting),
            explanation,
        ));
    }

    fn ambiguous(&mut self, mut ours: Vec<usize>, mut theirs: Vec<usize>, why: String) {
        let inp = self.inp;
        ours.sort_by(|&a, &b| inp.ours[a].key.cmp(&inp.ours[b].key));
        theirs.sort_by(|&a, &b| inp.theirs[a].key.cmp(&inp.theirs[b].key));
        for &x in &ours {
            self.our_taken[x] = true;
        }
        for &t in &theirs {
            self.their_taken[t] = true;
        }
        let explanation = format!(
            "{why}: postings {} and entries {} fit more than one way; an operator decides",
            list(ours.iter().map(|&x| inp.ours[x].key.as_str())),
            list(theirs.iter().map(|&t| inp.theirs[t].key.as_str())),
        );
        let item = self.unjudged(Outcome::Ambiguous, None, ours, theirs, None, explanation);
        self.items.push(item);
    }

    /// An item not judged as a pairing (a repeat, a return, what is left, an ambiguity):
    /// its members' sums, Δ = theirs − ours, the entries' currency (else the postings'),
    /// its key.
    fn unjudged(
        &self,
        outcome: Outcome,
        matched_by: Option<&'static str>,
        ours: Vec<usize>,
        theirs: Vec<usize>,
        refers_to: Option<usize>,
        explanation: String,
    ) -> Item {
        let inp = self.inp;
        let our_sum: i64 = ours
            .iter()
            .map(|&x| inp.ours[x].amount_minor)
            .fold(0, i64::saturating_add);
        let their_sum: i64 = theirs
            .iter()
            .map(|&t| inp.theirs[t].amount_minor)
            .fold(0, i64::saturating_add);
        Item {
            outcome,
            matched_by,
            currency: theirs
                .first()
                .map(|&t| inp.theirs[t].currency.clone())
                .or_else(|| ours.first().map(|&x| inp.ours[x].currency.clone()))
                .unwrap_or_default(),
            key: self.key_of(&ours, &theirs),
            correctable: true,
            ours,
            theirs,
            corrections: vec![],
            refers_to,
            tolerance: None,
            our_amount_minor: our_sum,
            their_amount_minor: their_sum,
            delta_minor: their_sum.saturating_sub(our_sum),
            delta_days: None,
            explanation,
        }
    }

    fn key_of(&self, ours: &[usize], theirs: &[usize]) -> String {
        item_key(
            ours.iter().map(|&x| self.inp.ours[x].key.as_str()),
            theirs.iter().map(|&t| self.inp.theirs[t].key.as_str()),
        )
    }

    fn in_window(&self, ours: Option<NaiveDate>, theirs: Option<NaiveDate>) -> bool {
        match (ours, theirs) {
            (Some(o), Some(t)) => {
                let d = (t - o).num_days();
                d >= -i64::from(self.rules.days_before) && d <= i64::from(self.rules.days_after)
            }
            _ => true,
        }
    }

    fn window(&self) -> String {
        format!("-{}..+{}", self.rules.days_before, self.rules.days_after)
    }

    /// Judges a pairing: its outcome, Δ and explanation.
    fn judge(&self, g: Group) -> Item {
        let inp = self.inp;
        let our_sum: i64 = g
            .ours
            .iter()
            .map(|&x| inp.ours[x].amount_minor)
            .fold(0, i64::saturating_add);
        let their_sum: i64 = g
            .theirs
            .iter()
            .map(|&t| inp.theirs[t].amount_minor)
            .fold(0, i64::saturating_add);
        let their_ccy = inp.theirs[g.theirs[0]].currency.clone();
        let our_ccys: BTreeSet<&str> = g
            .ours
            .iter()
            .map(|&x| inp.ours[x].currency.as_str())
            .collect();
        let delta = their_sum.saturating_sub(our_sum);
        let mut delta_days: Option<i64> = None;
        let mut late = false;
        for &x in &g.ours {
            for &t in &g.theirs {
                if let (Some(o), Some(d)) = (inp.ours[x].date, inp.theirs[t].date) {
                    let dd = (d - o).num_days();
                    if delta_days.is_none_or(|cur| dd.abs() > cur.abs()) {
                        delta_days = Some(dd);
                    }
                    late |= !self.in_window(Some(o), Some(d));
                }
            }
        }
        let mut parts = vec![format!("by {}", g.tie)];
        if g.ours.len() > 1 || g.theirs.len() > 1 {
            parts.push(format!(
                "members ours {} theirs {}",
                g.ours.len(),
                g.theirs.len()
            ));
        }
        let mut tolerance = None;
        let outcome = if our_ccys.len() != 1 || !our_ccys.contains(their_ccy.as_str()) {
            parts.push(format!(
                "currency ours {} theirs {their_ccy}",
                our_ccys.iter().copied().collect::<Vec<_>>().join(",")
            ));
            Outcome::CurrencyMismatch
        } else {
            parts.push(format!(
                "amount ours {} theirs {} Δ {}",
                signed(our_sum),
                signed(their_sum),
                signed(delta)
            ));
            let t = (delta != 0)
                .then(|| self.rules.tolerance(&their_ccy, our_sum, delta))
                .flatten();
            if let Some(t) = t {
                parts.push(format!("within tolerance {}", t.name));
                tolerance = Some(t.name.clone());
            }
            if delta != 0 && t.is_none() {
                Outcome::AmountMismatch
            } else if late {
                Outcome::DateMismatch
            } else if let Some(shape) = g.shape {
                shape
            } else if t.is_some() {
                Outcome::MatchedWithinTolerance
            } else {
                Outcome::Matched
            }
        };
        if let Some(d) = delta_days {
            parts.push(format!(
                "days Δ {} {} {}",
                signed(d),
                if late { "outside" } else { "in" },
                self.window()
            ));
        }
        parts.extend(g.notes);
        Item {
            outcome,
            matched_by: Some(g.matched_by),
            key: self.key_of(&g.ours, &g.theirs),
            correctable: true,
            ours: g.ours,
            theirs: g.theirs,
            corrections: vec![],
            refers_to: None,
            tolerance,
            currency: their_ccy,
            our_amount_minor: our_sum,
            their_amount_minor: their_sum,
            delta_minor: delta,
            delta_days,
            explanation: parts.join("; "),
        }
    }

    /// The postings of `plain` not taken, by (currency, amount), in `plain`'s order.
    fn ours_left_by_amount(&self, plain: &[usize]) -> HashMap<(&'a str, i64), Vec<usize>> {
        let mut by: HashMap<(&'a str, i64), Vec<usize>> = HashMap::new();
        for &x in plain.iter().filter(|&&x| !self.our_taken[x]) {
            let p = &self.inp.ours[x];
            by.entry((p.currency.as_str(), p.amount_minor))
                .or_default()
                .push(x);
        }
        by
    }

    /// The entries of `booked` not taken, by (currency, amount) in order, each in
    /// `booked`'s order.
    fn theirs_left_by_amount(&self, booked: &[usize]) -> BTreeMap<(&'a str, i64), Vec<usize>> {
        let mut by: BTreeMap<(&'a str, i64), Vec<usize>> = BTreeMap::new();
        for &t in booked.iter().filter(|&&t| !self.their_taken[t]) {
            let e = &self.inp.theirs[t];
            by.entry((e.currency.as_str(), e.amount_minor))
                .or_default()
                .push(t);
        }
        by
    }

    /// Pass 8: an entry and a posting of the same amount and currency within the window,
    /// each the only one for the other (a counterparty the entry's text names narrows).
    fn amount_date(&mut self, plain: &[usize], booked: &[usize]) {
        let inp = self.inp;
        let ours_by = self.ours_left_by_amount(plain);
        let theirs_by = self.theirs_left_by_amount(booked);
        for &t in booked {
            if self.their_taken[t] {
                continue;
            }
            let e = &inp.theirs[t];
            let k = (e.currency.as_str(), e.amount_minor);
            let Some(cands) = ours_by.get(&k) else {
                continue;
            };
            let mut fit: Vec<usize> = cands
                .iter()
                .copied()
                .filter(|&x| !self.our_taken[x] && self.in_window(inp.ours[x].date, e.date))
                .collect();
            let rivals: Vec<usize> = theirs_by[&k]
                .iter()
                .copied()
                .filter(|&r| {
                    !self.their_taken[r]
                        && fit
                            .iter()
                            .any(|&x| self.in_window(inp.ours[x].date, inp.theirs[r].date))
                })
                .collect();
            let mut named = false;
            if fit.len() > 1 || rivals.len() > 1 {
                // The counterparty narrows: the postings whose counterparty the entry names.
                let text = e.remittance.as_deref().unwrap_or("").to_lowercase();
                let by_name: Vec<usize> = fit
                    .iter()
                    .copied()
                    .filter(|&x| {
                        inp.ours[x].counterparty.as_deref().is_some_and(|c| {
                            !c.trim().is_empty() && text.contains(&c.trim().to_lowercase())
                        })
                    })
                    .collect();
                let rival_named = rivals.iter().filter(|&&r| r != t).any(|&r| {
                    let text = inp.theirs[r]
                        .remittance
                        .as_deref()
                        .unwrap_or("")
                        .to_lowercase();
                    by_name.iter().any(|&x| {
                        inp.ours[x]
                            .counterparty
                            .as_deref()
                            .is_some_and(|c| text.contains(&c.trim().to_lowercase()))
                    })
                });
                if by_name.len() == 1 && !rival_named {
                    fit = by_name;
                    named = true;
                } else {
                    continue;
                }
            }
            if fit.len() == 1 {
                let x = fit[0];
                let tie = if named {
                    format!(
                        "amount and date, counterparty {}",
                        inp.ours[x].counterparty.as_deref().unwrap_or("").trim()
                    )
                } else {
                    "amount and date".to_string()
                };
                self.take(fit, vec![t], by::AMOUNT_DATE, tie, None, vec![]);
            }
        }
    }

    /// Pass 9: for each entry left, the subsets of at most `max_members` postings left
    /// (same currency and sign, within the window, at most `max_candidates` of them) that
    /// sum to it exactly; then for each posting left, the entries that do. One solution
    /// pairs them; several make an ambiguous item.
    fn sums(&mut self, plain: &[usize], booked: &[usize]) {
        let inp = self.inp;
        let max_m = self.rules.max_members as usize;
        let max_c = self.rules.max_candidates as usize;
        let (before, after) = (
            u64::from(self.rules.days_before),
            u64::from(self.rules.days_after),
        );
        // What is left, by currency and sign, in date order: a window is a range of it.
        let ours_left = Lanes::of(
            plain
                .iter()
                .copied()
                .filter(|&x| !self.our_taken[x] && inp.ours[x].corrects.is_none())
                .map(|x| {
                    let p = &inp.ours[x];
                    ((p.currency.as_str(), p.amount_minor.signum()), p.date, x)
                }),
        );
        let theirs_left = Lanes::of(
            booked
                .iter()
                .copied()
                .filter(|&t| !self.their_taken[t])
                .map(|t| {
                    let e = &inp.theirs[t];
                    ((e.currency.as_str(), e.amount_minor.signum()), e.date, t)
                }),
        );
        for &t in booked {
            if self.their_taken[t] {
                continue;
            }
            let e = &inp.theirs[t];
            // Our dates the entry may be booked on: [its date − after, its date + before].
            let window = e
                .date
                .map(|d| (d - chrono::Days::new(after), d + chrono::Days::new(before)));
            let Some(cands) = ours_left.candidates(
                (e.currency.as_str(), e.amount_minor.signum()),
                window,
                max_c,
                |x| !self.our_taken[x] && inp.ours[x].amount_minor.abs() < e.amount_minor.abs(),
            ) else {
                continue;
            };
            let amounts: Vec<i64> = cands.iter().map(|&x| inp.ours[x].amount_minor).collect();
            let sols = subsets_summing(&amounts, e.amount_minor, max_m);
            self.settle_sum(Side::Theirs(t), &cands, &sols);
        }
        for &x in plain {
            if self.our_taken[x] || inp.ours[x].corrects.is_some() {
                continue;
            }
            let p = &inp.ours[x];
            let window = p
                .date
                .map(|d| (d - chrono::Days::new(before), d + chrono::Days::new(after)));
            let Some(cands) = theirs_left.candidates(
                (p.currency.as_str(), p.amount_minor.signum()),
                window,
                max_c,
                |t| !self.their_taken[t] && inp.theirs[t].amount_minor.abs() < p.amount_minor.abs(),
            ) else {
                continue;
            };
            let amounts: Vec<i64> = cands.iter().map(|&t| inp.theirs[t].amount_minor).collect();
            let sols = subsets_summing(&amounts, p.amount_minor, max_m);
            self.settle_sum(Side::Ours(x), &cands, &sols);
        }
    }

    /// One line (`one`) and the sets of the other side's candidates summing to it: one
    /// set pairs them (`many_to_one` for postings summing to an entry, `one_to_many` for
    /// entries summing to a posting), several make one ambiguous item of all of them.
    fn settle_sum(&mut self, one: Side, cands: &[usize], sols: &[Vec<usize>]) {
        let members = |i: usize| -> Vec<usize> { sols[i].iter().map(|&j| cands[j]).collect() };
        let all: Vec<usize> = sols
            .iter()
            .flatten()
            .map(|&j| cands[j])
            .collect::<BTreeSet<usize>>()
            .into_iter()
            .collect();
        let n = sols.len();
        match (n, one) {
            (0, _) => {}
            (1, Side::Theirs(t)) => self.take(
                members(0),
                vec![t],
                by::AMOUNT_SUM,
                "amount sum and date".into(),
                Some(Outcome::ManyToOne),
                vec![],
            ),
            (1, Side::Ours(x)) => self.take(
                vec![x],
                members(0),
                by::AMOUNT_SUM,
                "amount sum and date".into(),
                Some(Outcome::OneToMany),
                vec![],
            ),
            (_, Side::Theirs(t)) => self.ambiguous(
                all,
                vec![t],
                format!("{n} sets of postings sum to the entry"),
            ),
            (_, Side::Ours(x)) => self.ambiguous(
                vec![x],
                all,
                format!("{n} sets of entries sum to the posting"),
            ),
        }
    }

    /// Entries and postings left that fit each other by amount, currency and window
    /// several ways: one ambiguous item per connected set.
    fn leftover_ambiguity(&mut self, plain: &[usize], booked: &[usize]) {
        let inp = self.inp;
        let ours_by = self.ours_left_by_amount(plain);
        let theirs_by = self.theirs_left_by_amount(booked);
        for (k, ts) in theirs_by {
            let Some(xs) = ours_by.get(&k) else { continue };
            // Connected sets under "within the window", in date order.
            let mut seen_t = vec![false; ts.len()];
            for start in 0..ts.len() {
                if seen_t[start] {
                    continue;
                }
                let mut comp_t = vec![ts[start]];
                seen_t[start] = true;
                let mut comp_o: Vec<usize> = Vec::new();
                let mut grew = true;
                while grew {
                    grew = false;
                    for &x in xs {
                        if !comp_o.contains(&x)
                            && comp_t
                                .iter()
                                .any(|&t| self.in_window(inp.ours[x].date, inp.theirs[t].date))
                        {
                            comp_o.push(x);
                            grew = true;
                        }
                    }
                    for (i, &t) in ts.iter().enumerate() {
                        if !seen_t[i]
                            && comp_o
                                .iter()
                                .any(|&x| self.in_window(inp.ours[x].date, inp.theirs[t].date))
                        {
                            seen_t[i] = true;
                            comp_t.push(t);
                            grew = true;
                        }
                    }
                }
                if !comp_o.is_empty() && (comp_o.len() > 1 || comp_t.len() > 1) {
                    comp_o.sort_unstable();
                    comp_t.sort_unstable();
                    let why = format!(
                        "{} and {} of {} {} within the window",
                        plural(comp_o.len(), "posting"),
                        plural(comp_t.len(), "entry"),
                        signed(k.1),
                        k.0
                    );
                    self.ambiguous(comp_o, comp_t, why);
                }
            }
        }
    }

    /// Folds each correction posting into the item it names; one whose item this run
    /// does not have (its members were matched otherwise since) is an item of its own.
    fn fold_corrections(&self, items: &mut Vec<Item>, corrections: &[usize]) {
        let inp = self.inp;
        let by_key: HashMap<String, usize> = items
            .iter()
            .enumerate()
            .map(|(i, it)| (it.key.clone(), i))
            .collect();
        let mut orphans = Vec::new();
        for &c in corrections {
            let p = &inp.ours[c];
            let Some(&i) = p.corrects.as_ref().and_then(|k| by_key.get(k)) else {
                orphans.push(c);
                continue;
            };
            let it = &mut items[i];
            it.corrections.push(c);
            it.our_amount_minor = it.our_amount_minor.saturating_add(p.amount_minor);
            it.delta_minor = it.their_amount_minor.saturating_sub(it.our_amount_minor);
            it.explanation = format!(
                "{}; corrected by {} ({})",
                it.explanation,
                p.key,
                signed(p.amount_minor)
            );
            if it.delta_minor == 0 && it.outcome.correctable() && !it.outcome.settled() {
                it.explanation = format!("{}; was {}", it.explanation, it.outcome.as_str());
                it.outcome = Outcome::Matched;
                it.matched_by = Some(by::CORRECTION);
            }
        }
        for c in orphans {
            let p = &inp.ours[c];
            let explanation = format!(
                "a correction of item {}, which this run does not have (its members were settled otherwise): reverse it; amount {} {}",
                p.corrects.as_deref().unwrap_or(""),
                signed(p.amount_minor),
                p.currency
            );
            let mut item = self.unjudged(
                Outcome::MissingTheirs,
                None,
                vec![c],
                vec![],
                None,
                explanation,
            );
            item.correctable = false;
            items.push(item);
        }
    }

    fn in_period(&self, it: &Item) -> bool {
        let inp = self.inp;
        let inside = |d: Option<NaiveDate>| match d {
            None => true,
            Some(d) => inp.from.is_none_or(|f| d >= f) && inp.to.is_none_or(|t| d <= t),
        };
        it.ours.iter().any(|&x| inside(inp.ours[x].date))
            || it.theirs.iter().any(|&t| inside(inp.theirs[t].date))
    }

    fn first_date(&self, it: &Item) -> Option<NaiveDate> {
        let inp = self.inp;
        it.theirs
            .iter()
            .filter_map(|&t| inp.theirs[t].date)
            .chain(it.ours.iter().filter_map(|&x| inp.ours[x].date))
            .min()
    }
}

/// A posting (`Ours`) or an entry (`Theirs`), by index.
#[derive(Debug, Clone, Copy)]
enum Side {
    Ours(usize),
    Theirs(usize),
}

/// Postings (or entries) left, by (currency, sign), dated ones in date order and the
/// undated apart: the bounded search's candidates are a date range of one lane.
struct Lanes<'a> {
    lanes: HashMap<(&'a str, i64), Lane>,
}

/// One lane: (date, index) in date order, and the undated indexes.
type Lane = (Vec<(NaiveDate, usize)>, Vec<usize>);

impl<'a> Lanes<'a> {
    /// `items` in the engine's fixed order (date, id).
    fn of(items: impl Iterator<Item = ((&'a str, i64), Option<NaiveDate>, usize)>) -> Self {
        let mut lanes: HashMap<(&'a str, i64), Lane> = HashMap::new();
        for (k, d, i) in items {
            let lane = lanes.entry(k).or_default();
            match d {
                Some(d) => lane.0.push((d, i)),
                None => lane.1.push(i),
            }
        }
        // Stable: the items come in (date, id) order, so equal dates keep it, whatever
        // order the inputs came in.
        for lane in lanes.values_mut() {
            lane.0.sort_by_key(|(d, _)| *d);
        }
        Lanes { lanes }
    }

    /// The members of lane `k` dated within `window` (all of them without one) and the
    /// undated, that `ok` keeps: 2 to `max` of them, else `None` (none to combine, or too
    /// many to search: the search is bounded, and gives up early).
    fn candidates(
        &self,
        k: (&str, i64),
        window: Option<(NaiveDate, NaiveDate)>,
        max: usize,
        ok: impl Fn(usize) -> bool,
    ) -> Option<Vec<usize>> {
        let (dated, undated) = self.lanes.get(&k)?;
        let range = match window {
            Some((lo, hi)) => {
                let a = dated.partition_point(|(d, _)| *d < lo);
                let b = dated.partition_point(|(d, _)| *d <= hi);
                &dated[a..b]
            }
            None => &dated[..],
        };
        let mut out = Vec::new();
        for i in range.iter().map(|(_, i)| *i).chain(undated.iter().copied()) {
            if ok(i) {
                out.push(i);
                if out.len() > max {
                    return None;
                }
            }
        }
        (out.len() >= 2).then_some(out)
    }
}

/// Phase timings at debug level (`RUST_LOG=clearledger=debug`).
struct Lap(std::time::Instant);

impl Lap {
    fn start() -> Self {
        Lap(std::time::Instant::now())
    }
    fn mark(&mut self, phase: &str) {
        let now = std::time::Instant::now();
        tracing::debug!(
            phase,
            ms = (now - self.0).as_secs_f64() * 1e3,
            "reconcile phase"
        );
        self.0 = now;
    }
}

/// Which identifiers of an entry a level looks up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Uetr,
    EndToEnd,
    /// Customer and bank reference.
    Refs,
    /// Customer and bank reference, EndToEndId.
    RefsAndEndToEnd,
}

impl Which {
    /// The entry's identifiers this looks up (at most three, no allocation).
    fn values(self, e: &Theirs) -> [Option<&str>; 3] {
        match self {
            Which::Uetr => [provided(&e.uetr), None, None],
            Which::EndToEnd => [provided(&e.end_to_end_id), None, None],
            Which::Refs => [provided(&e.customer_ref), provided(&e.bank_ref), None],
            Which::RefsAndEndToEnd => [
                provided(&e.customer_ref),
                provided(&e.bank_ref),
                provided(&e.end_to_end_id),
            ],
        }
    }
}

fn instr_agrees(a: &Option<String>, b: &Option<String>) -> bool {
    match (provided(a), provided(b)) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

fn tie_text(name: &str, v: &str, e: &Theirs, hits: &[usize], inp: &Inputs, which: Which) -> String {
    let mut s = format!("{name}={v}");
    if which == Which::EndToEnd
        && let Some(i) = provided(&e.instr_id)
        && hits
            .iter()
            .any(|&x| provided(&inp.ours[x].instr_id) == Some(i))
    {
        s.push_str(&format!(", instr_id={i}"));
    }
    s
}

fn detail_ref(d: &TheirDetail) -> String {
    provided(&d.uetr)
        .map(|u| format!("uetr={u}"))
        .or_else(|| provided(&d.end_to_end_id).map(|e| format!("end_to_end_id={e}")))
        .unwrap_or_else(|| "no identifier".to_string())
}

/// `1 posting`, `2 entries`.
fn plural(n: usize, word: &str) -> String {
    match (n, word.strip_suffix('y')) {
        (1, _) => format!("1 {word}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        _ => format!("{n} {word}s"),
    }
}

/// `+5`, `-1250`, `0`.
fn signed(v: i64) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

fn list<'a>(keys: impl Iterator<Item = &'a str>) -> String {
    let v: Vec<&str> = keys.collect();
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}

/// The index sets of 2..=`max` elements of `amounts` summing to `target`, at most two
/// (one is a match, two make it ambiguous), in lexicographic order.
fn subsets_summing(amounts: &[i64], target: i64, max: usize) -> Vec<Vec<usize>> {
    fn go(
        a: &[i64],
        start: usize,
        left: i128,
        max: usize,
        cur: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
    ) {
        if out.len() >= 2 {
            return;
        }
        if left == 0 && cur.len() >= 2 {
            out.push(cur.clone());
            return;
        }
        if cur.len() == max {
            return;
        }
        for i in start..a.len() {
            cur.push(i);
            go(a, i + 1, left - i128::from(a[i]), max, cur, out);
            cur.pop();
            if out.len() >= 2 {
                return;
            }
        }
    }
    let mut out = Vec::new();
    go(
        amounts,
        0,
        i128::from(target),
        max,
        &mut Vec::new(),
        &mut out,
    );
    out
}

/// Synthetic inputs for the benchmark and profiling (`benches/reconcile.rs`,
/// `examples/reconcile_engine.rs`): n postings, 90 % with a UETR, 9 % an EndToEndId, 1 %
/// neither; an entry for each but every 200th, dated 0–2 days later. Not an API.
#[doc(hidden)]
pub fn synthetic(n: usize) -> Inputs {
    let day = |i: usize| NaiveDate::from_ymd_opt(2026, 11, 1 + (i % 28) as u32);
    let mut ours = Vec::with_capacity(n);
    let mut theirs = Vec::with_capacity(n);
    for i in 0..n {
        let amount = -((i as i64 * 7919) % 1_000_000 + 100);
        let (uetr, e2e) = match i % 100 {
            0..=89 => (Some(format!("{i:08x}-0000-4000-8000-000000000000")), None),
            90..=98 => (None, Some(format!("E2E-{i}"))),
            _ => (None, None),
        };
        ours.push(Ours {
            id: i as i64,
            key: format!("pacs.008:k{i}"),
            operation: "pacs.008".into(),
            ledger_account: "acct:X".into(),
            amount_minor: amount,
            currency: "EUR".into(),
            date: day(i),
            uetr: uetr.clone(),
            end_to_end_id: e2e.clone(),
            ..Default::default()
        });
        if i % 200 == 99 {
            continue;
        }
        theirs.push(Theirs {
            id: i as i64,
            key: format!("ref:B{i}"),
            amount_minor: amount,
            currency: "EUR".into(),
            date: day(i + (i % 3)),
            uetr,
            end_to_end_id: e2e,
            bank_ref: Some(format!("B{i}")),
            ..Default::default()
        });
    }
    Inputs {
        ours,
        theirs,
        from: NaiveDate::from_ymd_opt(2026, 11, 1),
        to: NaiveDate::from_ymd_opt(2026, 11, 30),
        as_of: NaiveDate::from_ymd_opt(2026, 11, 30),
    }
}

#[cfg(test)]
mod tests;
