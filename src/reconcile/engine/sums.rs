//! Level 9, `amount_sum`: the bounded N:M search. For each entry left, the subsets of at
//! most `max_members` postings left (same currency and sign, within the window, at most
//! `max_candidates` of them) that sum to it exactly; then for each posting left, the
//! entries that do. One solution pairs them; several make an ambiguous item.

use super::{Engine, Outcome, by};
use chrono::NaiveDate;
use std::collections::{BTreeSet, HashMap};

impl Engine<'_> {
    /// Level 9 in full: postings summing to entries, then entries summing to postings.
    pub(super) fn sums(&mut self, plain: &[usize], booked: &[usize]) {
        self.sums_to_entries(plain, booked);
        self.sums_to_postings(plain, booked);
    }

    /// Each entry of `booked` left against the postings of `plain` left.
    pub(super) fn sums_to_entries(&mut self, plain: &[usize], booked: &[usize]) {
        let inp = self.inp;
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
        self.postings_summing_to_entries(&ours_left, booked);
    }

    /// Each posting of `plain` left against the entries of `booked` left (what the
    /// entries' sums took is no candidate: the search skips what is taken).
    pub(super) fn sums_to_postings(&mut self, plain: &[usize], booked: &[usize]) {
        let inp = self.inp;
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
        self.entries_summing_to_postings(&theirs_left, plain);
    }

    /// Each entry left against the sets of postings left (smaller in size) summing to it.
    fn postings_summing_to_entries(&mut self, ours_left: &Lanes<'_>, booked: &[usize]) {
        let inp = self.inp;
        let max_m = self.rules.max_members as usize;
        let max_c = self.rules.max_candidates as usize;
        let (before, after) = (
            u64::from(self.rules.days_before),
            u64::from(self.rules.days_after),
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
    }

    /// Each posting left against the sets of entries left (smaller in size) summing to it.
    fn entries_summing_to_postings(&mut self, theirs_left: &Lanes<'_>, plain: &[usize]) {
        let inp = self.inp;
        let max_m = self.rules.max_members as usize;
        let max_c = self.rules.max_candidates as usize;
        let (before, after) = (
            u64::from(self.rules.days_before),
            u64::from(self.rules.days_after),
        );
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
