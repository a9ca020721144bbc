//! Level 8, `amount_date`: an entry and a posting left of the same amount and currency
//! within the day window, each the only one for the other (a counterparty the entry's
//! text names narrows). And, after the bounded sums, what is left of the same amount
//! several ways: one `ambiguous` item per connected set, never a guess.

use super::items::{plural, signed_amount};
use super::window_sets::connected_sets;
use super::{Engine, by};
use chrono::{Days, NaiveDate};
use std::collections::{BTreeMap, HashMap};

/// A count of the rows not taken, by position (a Fenwick tree): how many are left in a
/// date range, and which is the k-th, in O(log n).
struct Fenwick(Vec<u32>);

impl Fenwick {
    /// `n` positions, each counted once.
    fn full(n: usize) -> Fenwick {
        let mut t = vec![0u32; n + 1];
        for i in 1..=n {
            t[i] += 1;
            let j = i + (i & i.wrapping_neg());
            if j <= n {
                t[j] += t[i];
            }
        }
        Fenwick(t)
    }
    /// Positions `0..end` counted.
    fn prefix(&self, end: usize) -> usize {
        let (mut i, mut s) = (end, 0);
        while i > 0 {
            s += self.0[i] as usize;
            i &= i - 1;
        }
        s
    }
    fn remove(&mut self, pos: usize) {
        let mut i = pos + 1;
        while i < self.0.len() {
            self.0[i] -= 1;
            i += i & i.wrapping_neg();
        }
    }
    /// The position of the `k`-th counted one (from 1).
    fn kth(&self, mut k: usize) -> usize {
        let (mut pos, mut step) = (0, (self.0.len()).next_power_of_two());
        while step > 0 {
            if pos + step < self.0.len() && (self.0[pos + step] as usize) < k {
                pos += step;
                k -= self.0[pos] as usize;
            }
            step /= 2;
        }
        pos
    }
}

/// One side's rows of one currency and amount: the dated in date order, counted while
/// not taken, and the undated apart (an undated row fits every date).
#[derive(Default)]
struct Side {
    rows: Vec<usize>,
    dates: Vec<NaiveDate>,
    left: Option<Fenwick>,
    undated: Vec<usize>,
}

impl Side {
    /// Row `row` (dated `date`, after every earlier date); its place among the dated.
    fn push(&mut self, row: usize, date: Option<NaiveDate>) -> Option<u32> {
        match date {
            Some(d) => {
                self.rows.push(row);
                self.dates.push(d);
                Some(self.rows.len() as u32 - 1)
            }
            None => {
                self.undated.push(row);
                None
            }
        }
    }
    /// The dated rows' positions within `[lo, hi]` (all of them for no range).
    fn span(&self, range: Option<(NaiveDate, NaiveDate)>) -> std::ops::Range<usize> {
        match range {
            Some((lo, hi)) => {
                self.dates.partition_point(|d| *d < lo)..self.dates.partition_point(|d| *d <= hi)
            }
            None => 0..self.dates.len(),
        }
    }
    fn tree(&self) -> &Fenwick {
        self.left.as_ref().expect("counted before use")
    }
    /// The rows not taken within `range`, and the undated not taken.
    fn count(&self, range: Option<(NaiveDate, NaiveDate)>, taken: &[bool]) -> usize {
        let s = self.span(range);
        let undated = self.undated.iter().filter(|&&r| !taken[r]).count();
        undated + self.tree().prefix(s.end) - self.tree().prefix(s.start)
    }
    /// The rows not taken within `range`, undated first, then by date.
    fn list(&self, range: Option<(NaiveDate, NaiveDate)>, taken: &[bool]) -> Vec<usize> {
        let s = self.span(range);
        let undated = self.undated.iter().copied();
        let dated = self.rows[s].iter().copied();
        undated.chain(dated).filter(|&r| !taken[r]).collect()
    }
    /// The one row not taken within `range` (there is exactly one).
    fn only(&self, range: Option<(NaiveDate, NaiveDate)>, taken: &[bool]) -> usize {
        if let Some(&r) = self.undated.iter().find(|&&r| !taken[r]) {
            return r;
        }
        let before = self.tree().prefix(self.span(range).start);
        self.rows[self.tree().kth(before + 1)]
    }
    /// The row at `pos` (its place among the dated, `None` for an undated one) taken.
    fn remove(&mut self, pos: Option<u32>) {
        if let (Some(p), Some(t)) = (pos, &mut self.left) {
            t.remove(p as usize);
        }
    }
}

/// The kinds of row left, and each posting's and entry's place in its kind's side.
type Kinds<'a> = (
    HashMap<(&'a str, i64), Kind>,
    Vec<Option<u32>>,
    Vec<Option<u32>>,
);

/// Both sides' rows of one currency and amount, left after the identifiers.
#[derive(Default)]
struct Kind {
    ours: Side,
    theirs: Side,
    /// Whether a posting of it names a counterparty (else none can narrow).
    named: bool,
}

impl<'a> Engine<'a> {
    /// The postings of `plain` not taken, by (currency, amount), in `plain`'s order.
    pub(super) fn ours_left_by_amount(
        &self,
        plain: &[usize],
    ) -> HashMap<(&'a str, i64), Vec<usize>> {
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
    pub(super) fn theirs_left_by_amount(
        &self,
        booked: &[usize],
    ) -> BTreeMap<(&'a str, i64), Vec<usize>> {
        let mut by: BTreeMap<(&'a str, i64), Vec<usize>> = BTreeMap::new();
        for &t in booked.iter().filter(|&&t| !self.their_taken[t]) {
            let e = &self.inp.theirs[t];
            by.entry((e.currency.as_str(), e.amount_minor))
                .or_default()
                .push(t);
        }
        by
    }

    /// The rows left by (currency, amount), each side in its walk order, with each row's
    /// place in its side ([`Side::push`]).
    fn kinds(&self, plain: &[usize], booked: &[usize]) -> Kinds<'a> {
        let inp = self.inp;
        let mut kinds: HashMap<(&'a str, i64), Kind> = HashMap::new();
        let mut our_pos = vec![None; inp.ours.len()];
        let mut their_pos = vec![None; inp.theirs.len()];
        for &x in plain.iter().filter(|&&x| !self.our_taken[x]) {
            let p = &inp.ours[x];
            let k = kinds
                .entry((p.currency.as_str(), p.amount_minor))
                .or_default();
            our_pos[x] = k.ours.push(x, p.date);
            k.named |= p
                .counterparty
                .as_deref()
                .is_some_and(|c| !c.trim().is_empty());
        }
        for &t in booked.iter().filter(|&&t| !self.their_taken[t]) {
            let e = &inp.theirs[t];
            if let Some(k) = kinds.get_mut(&(e.currency.as_str(), e.amount_minor)) {
                their_pos[t] = k.theirs.push(t, e.date);
            }
        }
        for k in kinds.values_mut() {
            k.ours.left = Some(Fenwick::full(k.ours.rows.len()));
            k.theirs.left = Some(Fenwick::full(k.theirs.rows.len()));
        }
        (kinds, our_pos, their_pos)
    }

    /// Level 8: an entry and a posting of the same amount and currency within the window,
    /// each the only one for the other (a counterparty the entry's text names narrows).
    /// Counted, not listed, in the usual case: O(log n) an entry however many rows share
    /// its amount; the counterparty's narrowing reads the window's rows.
    pub(super) fn amount_date(&mut self, plain: &[usize], booked: &[usize]) {
        let inp = self.inp;
        let (mut kinds, our_pos, their_pos) = self.kinds(plain, booked);
        for &t in booked {
            if self.their_taken[t] {
                continue;
            }
            let e = &inp.theirs[t];
            let Some(kind) = kinds.get_mut(&(e.currency.as_str(), e.amount_minor)) else {
                continue;
            };
            let Some((x, named)) = self.pair_of(kind, t) else {
                continue;
            };
            kind.ours.remove(our_pos[x]);
            kind.theirs.remove(their_pos[t]);
            let tie = if named {
                format!(
                    "amount and date, counterparty {}",
                    inp.ours[x].counterparty.as_deref().unwrap_or("").trim()
                )
            } else {
                "amount and date".to_string()
            };
            self.take(vec![x], vec![t], by::AMOUNT_DATE, tie, None, vec![]);
        }
    }

    /// The posting entry `t` pairs with by amount and date, and whether its counterparty
    /// decided: the only one in its window, for which `t` is the only entry (the entries
    /// within the windows of what fits `t`); else the one its text names.
    fn pair_of(&self, kind: &Kind, t: usize) -> Option<(usize, bool)> {
        let inp = self.inp;
        let date = inp.theirs[t].date;
        // An entry's postings are dated within [its date − after, its date + before].
        let fits = date.map(|d| self.around(d, self.rules.days_after, self.rules.days_before));
        let n = kind.ours.count(fits, &self.our_taken);
        if n == 0 {
            return None;
        }
        if n == 1 {
            let x = kind.ours.only(fits, &self.our_taken);
            let rivals = self.entries_around(&[inp.ours[x].date]);
            if kind.theirs.count(rivals, &self.their_taken) <= 1 {
                return Some((x, false));
            }
        }
        let text = inp.theirs[t].remittance.as_deref().unwrap_or("");
        if !kind.named || text.trim().is_empty() {
            return None;
        }
        let fit = kind.ours.list(fits, &self.our_taken);
        let dates: Vec<Option<NaiveDate>> = fit.iter().map(|&x| inp.ours[x].date).collect();
        let near = kind
            .theirs
            .list(self.entries_around(&dates), &self.their_taken);
        let rivals: Vec<usize> = near
            .into_iter()
            .filter(|&r| {
                fit.iter()
                    .any(|&x| self.in_window(inp.ours[x].date, inp.theirs[r].date))
            })
            .collect();
        self.named_counterparty(t, &fit, &rivals).map(|x| (x, true))
    }

    /// The entries' dates within the windows of postings dated `dates`: [earliest −
    /// before, latest + after] (every date, if one is undated).
    fn entries_around(&self, dates: &[Option<NaiveDate>]) -> Option<(NaiveDate, NaiveDate)> {
        let dated: Option<Vec<NaiveDate>> = dates.iter().copied().collect();
        let dated = dated?;
        let (lo, hi) = (dated.iter().min()?, dated.iter().max()?);
        let (before, after) = (self.rules.days_before, self.rules.days_after);
        Some((self.around(*lo, before, 0).0, self.around(*hi, 0, after).1))
    }

    /// [d − lo days, d + hi days].
    fn around(&self, d: NaiveDate, lo: u32, hi: u32) -> (NaiveDate, NaiveDate) {
        (
            d.checked_sub_days(Days::new(u64::from(lo)))
                .unwrap_or(NaiveDate::MIN),
            d.checked_add_days(Days::new(u64::from(hi)))
                .unwrap_or(NaiveDate::MAX),
        )
    }

    /// The counterparty narrows: the one posting of `fit` whose counterparty entry `t`'s
    /// text names, when no rival entry names it too.
    pub(super) fn named_counterparty(
        &self,
        t: usize,
        fit: &[usize],
        rivals: &[usize],
    ) -> Option<usize> {
        let inp = self.inp;
        let text = inp.theirs[t]
            .remittance
            .as_deref()
            .unwrap_or("")
            .to_lowercase();
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
        (by_name.len() == 1 && !rival_named).then(|| by_name[0])
    }

    /// Entries and postings left that fit each other by amount, currency and window
    /// several ways: one ambiguous item per connected set.
    pub(super) fn leftover_ambiguity(&mut self, plain: &[usize], booked: &[usize]) {
        let ours_by = self.ours_left_by_amount(plain);
        let theirs_by = self.theirs_left_by_amount(booked);
        for (k, ts) in theirs_by {
            let Some(xs) = ours_by.get(&k) else { continue };
            let inp = self.inp;
            let our_dates: Vec<_> = xs.iter().map(|&x| inp.ours[x].date).collect();
            let their_dates: Vec<_> = ts.iter().map(|&t| inp.theirs[t].date).collect();
            let (before, after) = (
                i64::from(self.rules.days_before),
                i64::from(self.rules.days_after),
            );
            for (o, t) in connected_sets(&our_dates, &their_dates, before, after) {
                if o.is_empty() || (o.len() == 1 && t.len() == 1) {
                    continue;
                }
                let mut comp_o: Vec<usize> = o.iter().map(|&i| xs[i]).collect();
                let mut comp_t: Vec<usize> = t.iter().map(|&i| ts[i]).collect();
                comp_o.sort_unstable();
                comp_t.sort_unstable();
                let why = format!(
                    "{} and {} of {} {} within the window",
                    plural(comp_o.len(), "posting"),
                    plural(comp_t.len(), "entry"),
                    signed_amount(k.1, k.0),
                    k.0
                );
                self.ambiguous(comp_o, comp_t, why);
            }
        }
    }
}
