//! The second stage a slice at a time: what no identifier tied — matched by amount and
//! date, by the bounded sums, left ambiguous, named by a provisional entry, or missing —
//! with a slice of it in memory, not all of it. [`Rest`] keeps of each row its id, side,
//! date, amount and currency (about 40 bytes with the steps' lists; the rows stay where
//! they came from) and
//! hands out slices ([`Chunk`]) to read whole and run one step over ([`rest_step`]).
//!
//! The second stage runs its passes in turn, each over every row left; here each step is
//! one pass, over every row left, before the next begins. Why a slice sees what the whole
//! pass would have seen:
//! - **amount and date**, and **the ambiguous sets** after the sums, compare only rows of
//!   one currency and amount: the rows grouped by (currency, amount), whole groups to a
//!   slice (a group larger than `max_rows` is a slice of its own);
//! - **the bounded sums** walk the entries in (date, id) order, each against the postings
//!   left within its day window (then the postings against the entries): a slice is the
//!   entries of one day (at most `max_rows` of them, in order) with the postings of that
//!   day's window not yet taken, the slices in date order, so each entry finds what it
//!   would have found. An undated row fits every date: undated entries come first, as in
//!   the whole pass, each slice of them with every posting left; undated postings are in
//!   every window;
//! - **provisional entries and the missing** are row by row, except that a provisional
//!   entry names a posting by identifier: the postings some provisional entry names are
//!   held back ([`named_by`]) for one last slice with the provisional entries.
//!
//! What a slice holds: a group of equal amounts, or a day's entries with their window's
//! postings — bounded by the day window, not by the month. Except for undated rows: an
//! undated entry's slice holds every posting left (it fits every date), and undated
//! postings join every window; banks date their booked entries, so these are few.

use super::index::{Index, Indexes, Which};
use super::parts::Staged;
use super::{Engine, Inputs, Order, Ours, Theirs};
use crate::reconcile::rules::Rules;
use chrono::{Days, NaiveDate};
use std::collections::HashSet;

/// One pass of the second stage, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Level 8: the same amount and currency within the window.
    AmountDate,
    /// Level 9, postings summing to an entry.
    SumsToEntries,
    /// Level 9, entries summing to a posting.
    SumsToPostings,
    /// What is left of the same amount several ways.
    Ambiguity,
    /// Provisional entries, then what nothing took.
    Last,
}

impl Step {
    fn after(self) -> Option<Step> {
        match self {
            Step::AmountDate => Some(Step::SumsToEntries),
            Step::SumsToEntries => Some(Step::SumsToPostings),
            Step::SumsToPostings => Some(Step::Ambiguity),
            Step::Ambiguity => Some(Step::Last),
            Step::Last => None,
        }
    }
}

/// What the second stage needs to know of a row to slice it.
#[derive(Debug, Clone, Copy)]
struct Slim {
    id: i64,
    amount: i64,
    date: Option<NaiveDate>,
    currency: u32,
    ours: bool,
}

/// A slice of the rows left: read them whole and run `step` over them.
pub(crate) struct Chunk {
    pub(crate) step: Step,
    rows: Vec<u32>,
}

/// The rows the identifier passes left (postings that are not corrections, booked
/// entries), sliced step by step.
pub(crate) struct Rest {
    rows: Vec<Slim>,
    taken: Vec<bool>,
    currencies: Vec<String>,
    max_rows: usize,
    /// The rules' day window: (days before, days after).
    days: (u64, u64),
    step: Step,
    next_step: Option<Step>,
    /// The rows the step walks, in its order, and how far it is.
    queue: Vec<u32>,
    at: usize,
    /// The sums: the other side's rows left when the step began, in (date, id) order
    /// (undated first).
    others: Vec<u32>,
}

impl Rest {
    /// Slices of at most `max_rows` rows a side's day or a few amounts (a larger group of
    /// one amount, or a day's window, is what it is).
    pub(crate) fn new(rules: &Rules, max_rows: usize) -> Rest {
        Rest {
            rows: Vec::new(),
            taken: Vec::new(),
            currencies: Vec::new(),
            max_rows: max_rows.max(1),
            days: (u64::from(rules.days_before), u64::from(rules.days_after)),
            step: Step::AmountDate,
            next_step: Some(Step::AmountDate),
            queue: Vec::new(),
            at: 0,
            others: Vec::new(),
        }
    }

    /// A posting left (never a correction: those go beside every slice).
    pub(crate) fn push_ours(&mut self, o: &Ours) {
        debug_assert!(o.corrects.is_none());
        self.push(o.id, o.amount_minor, o.date, &o.currency, true);
    }

    /// A booked entry left (provisional entries wait for the last slice).
    pub(crate) fn push_theirs(&mut self, t: &Theirs) {
        debug_assert!(!t.provisional);
        self.push(t.id, t.amount_minor, t.date, &t.currency, false);
    }

    fn push(&mut self, id: i64, amount: i64, date: Option<NaiveDate>, currency: &str, ours: bool) {
        let c = match self.currencies.iter().position(|c| c == currency) {
            Some(c) => c,
            None => {
                self.currencies.push(currency.to_string());
                self.currencies.len() - 1
            }
        };
        let currency = c as u32;
        self.rows.push(Slim {
            id,
            amount,
            date,
            currency,
            ours,
        });
        self.taken.push(false);
    }

    /// The rows pushed, postings and entries.
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The next slice, or `None` once every step has walked every row left to it. Each
    /// slice is [`Rest::settle`]d before the next is asked for.
    pub(crate) fn next(&mut self) -> Option<Chunk> {
        while self.at >= self.queue.len() {
            let step = self.next_step?;
            self.next_step = step.after();
            self.begin(step);
        }
        let rows = match self.step {
            Step::AmountDate | Step::Ambiguity => self.same_amounts(),
            Step::SumsToEntries | Step::SumsToPostings => self.one_day(),
            Step::Last => {
                let end = (self.at + self.max_rows).min(self.queue.len());
                let rows = self.queue[self.at..end].to_vec();
                self.at = end;
                rows
            }
        };
        Some(Chunk {
            step: self.step,
            rows,
        })
    }

    /// A step begins over the rows left, in the order it walks them.
    fn begin(&mut self, step: Step) {
        self.step = step;
        self.at = 0;
        let (rows, taken) = (&self.rows, &self.taken);
        let left = (0..rows.len() as u32).filter(|&r| !taken[r as usize]);
        self.others.clear();
        match step {
            Step::AmountDate | Step::Ambiguity => {
                self.queue = left.collect();
                self.queue.sort_unstable_by_key(|&r| {
                    let s = rows[r as usize];
                    (s.currency, s.amount, r)
                });
            }
            Step::SumsToEntries | Step::SumsToPostings => {
                let drive_ours = step == Step::SumsToPostings;
                let (mut drive, mut others): (Vec<u32>, Vec<u32>) =
                    left.partition(|&r| rows[r as usize].ours == drive_ours);
                let by_date = |r: &u32| (rows[*r as usize].date, rows[*r as usize].id);
                drive.sort_unstable_by_key(by_date);
                others.sort_unstable_by_key(by_date);
                self.queue = drive;
                self.others = others;
            }
            Step::Last => self.queue = left.collect(),
        }
        let (rows, others) = (self.queue.len(), self.others.len());
        tracing::debug!(?step, rows, others, "reconcile: the rest, a step begins");
    }

    /// Whole groups of one (currency, amount), as many as fit `max_rows` (one at least).
    fn same_amounts(&mut self) -> Vec<u32> {
        let key = |r: u32| {
            let s = self.rows[r as usize];
            (s.currency, s.amount)
        };
        let (start, mut end) = (self.at, self.at);
        while end < self.queue.len() {
            let k = key(self.queue[end]);
            let group = self.queue[end..].iter().take_while(|&&r| key(r) == k);
            let group_end = end + group.count();
            if end > start && group_end - start > self.max_rows {
                break;
            }
            end = group_end;
        }
        self.at = end;
        self.queue[start..end].to_vec()
    }

    /// The next rows of one date that drive the sums (at most `max_rows`, in order), with
    /// the other side's rows left within their window, undated ones included (every row
    /// left, for undated drivers).
    fn one_day(&mut self) -> Vec<u32> {
        let rows = &self.rows;
        let day = rows[self.queue[self.at] as usize].date;
        let same = self.queue[self.at..].iter().take(self.max_rows);
        let n = same.take_while(|&&r| rows[r as usize].date == day).count();
        let mut out = self.queue[self.at..self.at + n].to_vec();
        self.at += n;
        let others = &self.others;
        let date = |r: &u32| rows[*r as usize].date;
        let undated = others.partition_point(|r| date(r).is_none());
        let (undated, dated) = match day {
            None => (0..0, 0..others.len()),
            Some(d) => {
                let (lo, hi) = self.window(d);
                let a = others.partition_point(|r| date(r) < Some(lo));
                let b = others.partition_point(|r| date(r) <= Some(hi));
                (0..undated, a..b)
            }
        };
        let window = others[undated].iter().chain(&others[dated]);
        out.extend(window.copied().filter(|&r| !self.taken[r as usize]));
        out
    }

    /// The other side's dates a driver of date `d` looks at (the engine's windows: an
    /// entry's postings within [d − after, d + before], a posting's entries within
    /// [d − before, d + after]).
    fn window(&self, d: NaiveDate) -> (NaiveDate, NaiveDate) {
        let (before, after) = self.days;
        let (lo, hi) = match self.step {
            Step::SumsToEntries => (after, before),
            _ => (before, after),
        };
        (
            d.checked_sub_days(Days::new(lo)).unwrap_or(NaiveDate::MIN),
            d.checked_add_days(Days::new(hi)).unwrap_or(NaiveDate::MAX),
        )
    }

    /// The slice's posting ids and entry ids, each ascending.
    pub(crate) fn ids(&self, chunk: &Chunk) -> (Vec<i64>, Vec<i64>) {
        let (mut xs, mut ts) = (Vec::new(), Vec::new());
        for &r in &chunk.rows {
            let s = self.rows[r as usize];
            if s.ours { &mut xs } else { &mut ts }.push(s.id);
        }
        xs.sort_unstable();
        ts.sort_unstable();
        (xs, ts)
    }

    /// What the slice's step left (posting ids, entry ids): its other rows are taken.
    pub(crate) fn settle(&mut self, chunk: &Chunk, left_ours: &[i64], left_theirs: &[i64]) {
        let ours: HashSet<i64> = left_ours.iter().copied().collect();
        let theirs: HashSet<i64> = left_theirs.iter().copied().collect();
        for &r in &chunk.rows {
            let s = self.rows[r as usize];
            let left = if s.ours { &ours } else { &theirs };
            self.taken[r as usize] = !left.contains(&s.id);
        }
    }
}

/// One step of the second stage over a slice's rows read whole, with every correction
/// posting (and, for the last slice, the provisional entries and the postings they name).
pub(crate) fn rest_step(step: Step, inp: &Inputs, rules: &Rules) -> Staged {
    let mut e = Engine::new(inp, rules);
    let order = Order::of(inp);
    let (plain, booked) = (&order.plain[..], &order.booked[..]);
    match step {
        Step::AmountDate => e.amount_date(plain, booked),
        Step::SumsToEntries => e.sums_to_entries(plain, booked),
        Step::SumsToPostings => e.sums_to_postings(plain, booked),
        Step::Ambiguity => e.leftover_ambiguity(plain, booked),
        Step::Last => {
            if !order.pending.is_empty() {
                e.provisional(&Indexes::of(&inp.ours, plain), &order.pending);
            }
            e.missing_ours(booked);
            e.missing_theirs(plain);
        }
    }
    e.staged(&order)
}

/// Which of `ours` a provisional entry of `pending` names by an identifier the
/// provisional pass looks up: they wait for the last slice, beside those entries.
pub(crate) fn named_by(pending: &[Theirs], ours: &[Ours]) -> Vec<bool> {
    let mut named = vec![false; ours.len()];
    if pending.is_empty() {
        return named;
    }
    let plain: Vec<usize> = (0..ours.len())
        .filter(|&x| ours[x].corrects.is_none())
        .collect();
    let idx = Indexes::of(ours, &plain);
    for e in pending {
        for (w, index) in idx.named() {
            let hits = w
                .values(e)
                .into_iter()
                .flatten()
                .filter_map(|v| index.get(v));
            hits.flatten().for_each(|&x| named[x] = true);
        }
    }
    named
}

impl<'a> Indexes<'a> {
    /// The indexes a provisional entry names a posting by, in the order it tries them.
    pub(super) fn named(&self) -> [(Which, &Index<'a>); 3] {
        [
            (Which::Uetr, &self.uetr),
            (Which::EndToEnd, &self.e2e),
            (Which::RefsAndEndToEnd, &self.trace),
        ]
    }
}
