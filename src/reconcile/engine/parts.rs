//! A run in parts, for inputs too large to hold at once. The first stage (the levels
//! that tie by identifier) only ever pairs, repeats or returns a posting and an entry that
//! share a value: an identifier one quotes and the other carries. So the postings and
//! entries linked by shared values, directly or through others (a component), are
//! matched by the first stage exactly as among all the inputs; what shares nothing is
//! left to the second stage untouched. A run in parts is then:
//!
//! 1. every row's link values hashed ([`our_links`], [`their_links`]) and the components
//!    found ([`components`]): a value links rows only when both sides carry it (a message
//!    id every posting of a file carries, which no entry quotes, links nothing);
//! 2. the components packed into parts of a bounded number of rows ([`pack`]), each
//!    matched by [`first_stage`] with every correction posting beside it;
//! 3. what the parts left, with the provisional entries, matched by the second stage a
//!    slice at a time ([`super::rest`] says why the slices add up to the whole);
//! 4. the corrections no item named made items of their own ([`orphans`]); all the items
//!    put in report order.
//!
//! The same items in the same order as [`super::reconcile`], whatever the parts' size:
//! each part keeps its rows in the inputs' order (the passes walk them by date, then the
//! ledger's id, and break ties by position), and hashes that collide only join
//! components, never split one. The store reads the inputs this way part by part.

use super::index::{Indexes, provided};
use super::rest::{Rest, Step, named_by, rest_step};
use super::window_sets::Sets;
use super::{Engine, Inputs, Item, Lap, Order, Ours, Theirs, sort_for_report};
use crate::reconcile::rules::Rules;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// A value a first-stage level may tie on, hashed; `None` for a value no level looks up.
fn link(v: &str) -> Option<u64> {
    let v = v.trim();
    if v.is_empty() || v.eq_ignore_ascii_case("NOTPROVIDED") {
        return None;
    }
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    Some(h.finish())
}

/// The values an identifier level may find posting `o` by (its UETR, EndToEndId, trace
/// number, a return's original references, its other references, its batches' ties),
/// hashed, appended to `out`. A correction posting has none: it is folded in by key.
pub(crate) fn our_links(o: &Ours, out: &mut Vec<u64>) {
    if o.corrects.is_some() {
        return;
    }
    let ids = [
        &o.uetr,
        &o.end_to_end_id,
        &o.trace,
        &o.original_uetr,
        &o.original_end_to_end_id,
        &o.original_trace,
    ];
    out.extend(ids.into_iter().filter_map(|v| provided(v)).filter_map(link));
    out.extend(o.refs.iter().filter_map(|r| link(r)));
    let ties = o.batches.iter().flat_map(|b| b.ties.iter());
    out.extend(ties.filter_map(|t| link(t)));
}

/// The values entry `e` may find a posting by (its identifiers, references and batch
/// reference, its details' identifiers), hashed, appended to `out`. A provisional entry
/// has none: only the second stage looks at it.
pub(crate) fn their_links(e: &Theirs, out: &mut Vec<u64>) {
    if e.provisional {
        return;
    }
    let ids = [
        &e.uetr,
        &e.end_to_end_id,
        &e.bank_ref,
        &e.customer_ref,
        &e.batch_ref,
    ];
    out.extend(ids.into_iter().filter_map(|v| provided(v)).filter_map(link));
    for d in &e.details {
        let ids = [&d.uetr, &d.end_to_end_id];
        out.extend(ids.into_iter().filter_map(|v| provided(v)).filter_map(link));
    }
}

/// The components of rows `0..rows` (postings `0..split`, entries `split..`) linked by a
/// value both sides carry: given the rows of each value in turn ([`Linker::group`]), each
/// component's rows ascending, components in the order of their first row. Rows linked to
/// nothing are in none. Four bytes a row, and the groups may come from a file.
pub(crate) struct Linker {
    sets: Sets,
    linked: Vec<bool>,
    split: u32,
}

impl Linker {
    pub(crate) fn new(rows: usize, split: u32) -> Linker {
        Linker {
            sets: Sets::new(rows),
            linked: vec![false; rows],
            split,
        }
    }

    /// The rows that carry one value (a value only one side carries links nothing).
    pub(crate) fn group(&mut self, rows: &[u32]) {
        let ours = rows.iter().any(|&r| r < self.split);
        let theirs = rows.iter().any(|&r| r >= self.split);
        if !(ours && theirs) {
            return;
        }
        for &r in rows {
            self.linked[r as usize] = true;
            self.sets.join(rows[0] as usize, r as usize);
        }
    }

    /// The components packed, in order, into parts of at most `max_rows` rows (a larger
    /// component is a part of its own); each part's rows ascending.
    pub(crate) fn parts(mut self, max_rows: usize) -> Parts {
        let n = self.linked.len();
        // Each component numbered by its first row; then the rows counted into place.
        let mut no = vec![u32::MAX; n];
        let mut sizes: Vec<u32> = Vec::new();
        for r in (0..n).filter(|&r| self.linked[r]) {
            let root = self.sets.root(r);
            if no[root] == u32::MAX {
                no[root] = sizes.len() as u32;
                sizes.push(0);
            }
            no[r] = no[root];
            sizes[no[r] as usize] += 1;
        }
        drop(self.sets);
        let mut at: Vec<u32> = Vec::with_capacity(sizes.len());
        let mut sum = 0u32;
        for s in &sizes {
            at.push(sum);
            sum += s;
        }
        let mut rows = vec![0u32; sum as usize];
        for r in (0..n).filter(|&r| self.linked[r]) {
            let c = no[r] as usize;
            rows[at[c] as usize] = r as u32;
            at[c] += 1;
        }
        Parts::packed(rows, &sizes, max_rows)
    }
}

/// Parts of rows, one after another in one list.
pub(crate) struct Parts {
    rows: Vec<u32>,
    ends: Vec<usize>,
}

impl Parts {
    /// `rows` holds components of `sizes` rows in turn: packed into parts, each sorted.
    fn packed(mut rows: Vec<u32>, sizes: &[u32], max_rows: usize) -> Parts {
        let mut ends = Vec::new();
        let (mut start, mut end) = (0, 0);
        for &s in sizes {
            if end > start && end - start + s as usize > max_rows {
                ends.push(end);
                start = end;
            }
            end += s as usize;
        }
        if end > start {
            ends.push(end);
        }
        let mut start = 0;
        for &e in &ends {
            rows[start..e].sort_unstable();
            start = e;
        }
        Parts { rows, ends }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u32]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(s, &e)| &self.rows[s..e])
    }
}

/// The parts of rows whose values are given as `(hash, row)` pairs (sorted here).
pub(crate) fn parts_of(
    pairs: &mut [(u64, u32)],
    rows: usize,
    split: u32,
    max_rows: usize,
) -> Parts {
    pairs.sort_unstable();
    let mut l = Linker::new(rows, split);
    let mut group = Vec::new();
    for run in pairs.chunk_by(|a, b| a.0 == b.0) {
        group.clear();
        group.extend(run.iter().map(|p| p.1));
        l.group(&group);
    }
    l.parts(max_rows)
}

/// What a stage made of its inputs.
pub(crate) struct Staged {
    /// Its items (indexes into the stage's inputs), corrections folded in.
    pub(crate) items: Vec<Item>,
    /// Postings it left to the next stage (not corrections).
    pub(crate) left_ours: Vec<usize>,
    /// Booked entries it left to the next stage.
    pub(crate) left_theirs: Vec<usize>,
    /// The correction postings folded into its items.
    pub(crate) folded: Vec<usize>,
}

/// The first stage over one part (its postings, entries and every correction posting).
pub(crate) fn first_stage(inp: &Inputs, rules: &Rules) -> Staged {
    let mut e = Engine::new(inp, rules);
    let order = Order::of(inp);
    let idx = Indexes::of(&inp.ours, &order.plain);
    e.first_stage(&order, &idx, &mut Lap::quiet());
    e.staged(&order)
}

impl Engine<'_> {
    /// What this engine made of its inputs: its items judged (corrections folded in, no
    /// orphans), the rows it left in the passes' order.
    pub(super) fn staged(mut self, order: &Order) -> Staged {
        let left_ours = order.plain.iter().copied().filter(|&x| !self.our_taken[x]);
        let left_ours: Vec<usize> = left_ours.collect();
        let left_theirs = order
            .booked
            .iter()
            .copied()
            .filter(|&t| !self.their_taken[t]);
        let left_theirs: Vec<usize> = left_theirs.collect();
        let (items, folded) = self.judged(&order.corrections, false);
        Staged {
            items,
            left_ours,
            left_theirs,
            folded,
        }
    }
}

/// The items of correction postings no item named (`inp` holds only those): each an item
/// of its own, when in the period.
pub(crate) fn orphans(inp: &Inputs, rules: &Rules) -> Vec<Item> {
    let e = Engine::new(inp, rules);
    (0..inp.ours.len())
        .map(|c| e.orphan_correction(c))
        .filter(|it| e.in_period(it))
        .collect()
}

/// Reconciles `inp` under `rules` in parts of at most `max_rows` postings and entries
/// (a component larger than that is a part of its own): the same items, in the same
/// order, as [`super::reconcile`]. Ids are unique on each side (the passes walk rows by
/// date, then id; a repeated id panics here).
pub fn reconcile_in_parts(inp: &Inputs, rules: &Rules, max_rows: usize) -> Vec<Item> {
    let split = inp.ours.len();
    let mut pairs: Vec<(u64, u32)> = Vec::new();
    let mut vals = Vec::new();
    for (x, o) in inp.ours.iter().enumerate() {
        vals.clear();
        our_links(o, &mut vals);
        pairs.extend(vals.iter().map(|&h| (h, x as u32)));
    }
    for (t, e) in inp.theirs.iter().enumerate() {
        vals.clear();
        their_links(e, &mut vals);
        pairs.extend(vals.iter().map(|&h| (h, (split + t) as u32)));
    }
    let rows = split + inp.theirs.len();
    let parts = parts_of(&mut pairs, rows, split as u32, max_rows);
    let corrections: Vec<usize> = (0..split)
        .filter(|&x| inp.ours[x].corrects.is_some())
        .collect();
    let mut in_part = vec![false; rows];
    let (mut items, mut folded) = (Vec::new(), vec![false; split]);
    let (mut left_ours, mut left_theirs) = (Vec::new(), Vec::new());
    for part in parts.iter() {
        part.iter().for_each(|&r| in_part[r as usize] = true);
        let (xs, ts): (Vec<u32>, Vec<u32>) = part.iter().partition(|&&r| (r as usize) < split);
        let mut xs: Vec<usize> = xs.into_iter().map(|r| r as usize).collect();
        xs.extend(&corrections);
        xs.sort_unstable();
        let ts: Vec<usize> = ts.into_iter().map(|r| r as usize - split).collect();
        let st = first_stage(&subset(inp, &xs, &ts), rules);
        left_ours.extend(st.left_ours.iter().map(|&i| xs[i]));
        left_theirs.extend(st.left_theirs.iter().map(|&i| ts[i]));
        st.folded.iter().for_each(|&i| folded[xs[i]] = true);
        items.extend(st.items.into_iter().map(|it| lift(it, &xs, &ts)));
    }
    // What no part held, beside what the parts left: the second stage's inputs.
    let alone = (0..split).filter(|&x| !in_part[x] && inp.ours[x].corrects.is_none());
    left_ours.extend(alone);
    left_theirs.extend((0..inp.theirs.len()).filter(|&t| !in_part[split + t]));
    let mut rest = Whole {
        inp,
        rules,
        corrections: &corrections,
        folded,
        items,
    };
    rest.second_stage(&left_ours, &left_theirs, max_rows);
    let Whole { items, folded, .. } = rest;
    let mut items = items;
    let unfolded: Vec<usize> = corrections.into_iter().filter(|&c| !folded[c]).collect();
    let sub = subset(inp, &unfolded, &[]);
    items.extend(
        orphans(&sub, rules)
            .into_iter()
            .map(|it| lift(it, &unfolded, &[])),
    );
    sort_for_report(inp, &mut items);
    items
}

/// A run in parts over the whole inputs: its items so far, the corrections folded in.
struct Whole<'a> {
    inp: &'a Inputs,
    rules: &'a Rules,
    corrections: &'a [usize],
    folded: Vec<bool>,
    items: Vec<Item>,
}

impl Whole<'_> {
    /// The second stage over postings `xs` and entries `ts` (booked and provisional), a
    /// slice at a time, as the ledger's run takes them.
    fn second_stage(&mut self, xs: &[usize], ts: &[usize], max_rows: usize) {
        let inp = self.inp;
        let mut rest = Rest::new(self.rules, max_rows);
        xs.iter().for_each(|&x| rest.push_ours(&inp.ours[x]));
        let (pending, booked): (Vec<usize>, Vec<usize>) =
            ts.iter().partition(|&&t| inp.theirs[t].provisional);
        booked
            .iter()
            .for_each(|&t| rest.push_theirs(&inp.theirs[t]));
        // Slices name rows by id: unique on each side, as the passes' order assumes.
        let our_at: HashMap<i64, usize> = xs.iter().map(|&x| (inp.ours[x].id, x)).collect();
        let their_at: HashMap<i64, usize> = booked.iter().map(|&t| (inp.theirs[t].id, t)).collect();
        assert!(
            our_at.len() == xs.len() && their_at.len() == booked.len(),
            "ids repeat"
        );
        let pending_rows: Vec<Theirs> = pending.iter().map(|&t| inp.theirs[t].clone()).collect();
        let mut held = Vec::new();
        while let Some(c) = rest.next() {
            let (o, t) = rest.ids(&c);
            let mut xs: Vec<usize> = o.iter().map(|i| our_at[i]).collect();
            let ts: Vec<usize> = t.iter().map(|i| their_at[i]).collect();
            if c.step == Step::Last {
                let rows: Vec<Ours> = xs.iter().map(|&x| inp.ours[x].clone()).collect();
                let named = named_by(&pending_rows, &rows);
                let (n, keep): (Vec<(usize, bool)>, _) =
                    xs.iter().copied().zip(named).partition(|p| p.1);
                held.extend(n.into_iter().map(|p| p.0));
                xs = keep.into_iter().map(|p| p.0).collect();
            }
            let (lo, lt) = self.step(c.step, &xs, &ts);
            rest.settle(&c, &lo, &lt);
        }
        held.sort_unstable();
        self.step(Step::Last, &held, &pending);
    }

    /// One step over postings `xs` and entries `ts` with every correction posting: its
    /// items kept, its corrections marked folded; the ids of the rows it left.
    fn step(&mut self, step: Step, xs: &[usize], ts: &[usize]) -> (Vec<i64>, Vec<i64>) {
        let inp = self.inp;
        let mut all: Vec<usize> = xs.iter().chain(self.corrections).copied().collect();
        all.sort_unstable();
        let st = rest_step(step, &subset(inp, &all, ts), self.rules);
        st.folded.iter().for_each(|&i| self.folded[all[i]] = true);
        let left_ours = st.left_ours.iter().map(|&i| inp.ours[all[i]].id).collect();
        let left_theirs = st
            .left_theirs
            .iter()
            .map(|&i| inp.theirs[ts[i]].id)
            .collect();
        let lifted = st.items.into_iter().map(|it| lift(it, &all, ts));
        self.items.extend(lifted);
        (left_ours, left_theirs)
    }
}

/// The inputs of rows `xs` and `ts` of `inp` (ascending), with its period.
fn subset(inp: &Inputs, xs: &[usize], ts: &[usize]) -> Inputs {
    Inputs {
        ours: xs.iter().map(|&x| inp.ours[x].clone()).collect(),
        theirs: ts.iter().map(|&t| inp.theirs[t].clone()).collect(),
        from: inp.from,
        to: inp.to,
        as_of: inp.as_of,
    }
}

/// An item of a subset's, its members named by their indexes in the whole inputs.
fn lift(mut it: Item, xs: &[usize], ts: &[usize]) -> Item {
    it.ours.iter_mut().for_each(|i| *i = xs[*i]);
    it.corrections.iter_mut().for_each(|i| *i = xs[*i]);
    it.theirs.iter_mut().for_each(|i| *i = ts[*i]);
    it.refers_to = it.refers_to.map(|i| xs[i]);
    it
}
