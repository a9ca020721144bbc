//! The end of a run: each pairing judged (its outcome, Δ and explanation), correction
//! postings folded into the items they name, the items of the period kept, members by
//! natural key.

use super::items::{signed, signed_amount};
use super::{Engine, Group, Item, Outcome, by};
use chrono::NaiveDate;
use std::collections::{BTreeSet, HashMap};

impl Engine<'_> {
    /// Every item of the run: the pairings judged, then the items made outright, with
    /// `corrections` folded in; those with a member dated in the period. A correction
    /// whose item is not among them is an item of its own when `orphans` (else another
    /// part of the run may have its item); the corrections folded in are returned.
    pub(super) fn judged(
        &mut self,
        corrections: &[usize],
        orphans: bool,
    ) -> (Vec<Item>, Vec<usize>) {
        let inp = self.inp;
        let groups = std::mem::take(&mut self.groups);
        let mut items: Vec<Item> = groups.into_iter().map(|g| self.judge(g)).collect();
        items.append(&mut self.items);
        let folded = self.fold_corrections(&mut items, corrections, orphans);
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
        (items, folded)
    }

    /// Judges a pairing: its outcome, Δ and explanation.
    fn judge(&self, g: Group) -> Item {
        let inp = self.inp;
        let (our_sum, their_sum) = self.sums_of(&g.ours, &g.theirs);
        let their_ccy = inp.theirs[g.theirs[0]].currency.clone();
        let delta = their_sum.saturating_sub(our_sum);
        let (delta_days, late) = self.days_apart(&g);
        let mut parts = vec![format!("by {}", g.tie)];
        if g.ours.len() > 1 || g.theirs.len() > 1 {
            parts.push(format!(
                "members ours {} theirs {}",
                g.ours.len(),
                g.theirs.len()
            ));
        }
        let (outcome, tolerance) =
            self.verdict(&g, (our_sum, their_sum), &their_ccy, late, &mut parts);
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

    /// Their date − our date, the largest in size over the members' pairs, and whether
    /// any pair is outside the window.
    fn days_apart(&self, g: &Group) -> (Option<i64>, bool) {
        let inp = self.inp;
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
        (delta_days, late)
    }

    /// A pairing's outcome and the tolerance that labels it, the currencies or amounts
    /// added to the explanation: another currency, then Δ (admitted by a tolerance or
    /// not), then the days, then the pairing's shape.
    fn verdict(
        &self,
        g: &Group,
        (our_sum, their_sum): (i64, i64),
        their_ccy: &str,
        late: bool,
        parts: &mut Vec<String>,
    ) -> (Outcome, Option<String>) {
        let inp = self.inp;
        let our_ccys: BTreeSet<&str> = g
            .ours
            .iter()
            .map(|&x| inp.ours[x].currency.as_str())
            .collect();
        if our_ccys.len() != 1 || !our_ccys.contains(their_ccy) {
            parts.push(format!(
                "currency ours {} theirs {their_ccy}",
                our_ccys.iter().copied().collect::<Vec<_>>().join(",")
            ));
            return (Outcome::CurrencyMismatch, None);
        }
        let delta = their_sum.saturating_sub(our_sum);
        parts.push(format!(
            "amount ours {} theirs {} Δ {}",
            signed_amount(our_sum, their_ccy),
            signed_amount(their_sum, their_ccy),
            signed_amount(delta, their_ccy)
        ));
        let t = (delta != 0)
            .then(|| self.rules.tolerance(their_ccy, our_sum, delta))
            .flatten();
        if let Some(t) = t {
            parts.push(format!("within tolerance {}", t.name));
        }
        let outcome = if delta != 0 && t.is_none() {
            Outcome::AmountMismatch
        } else if late {
            Outcome::DateMismatch
        } else if let Some(shape) = g.shape {
            shape
        } else if t.is_some() {
            Outcome::MatchedWithinTolerance
        } else {
            Outcome::Matched
        };
        (outcome, t.map(|t| t.name.clone()))
    }

    /// Folds each correction posting into the item it names (returned); one whose item
    /// this run does not have (its members were matched otherwise since) is an item of its
    /// own when `orphans`.
    fn fold_corrections(
        &self,
        items: &mut Vec<Item>,
        corrections: &[usize],
        orphans: bool,
    ) -> Vec<usize> {
        let inp = self.inp;
        let by_key: HashMap<String, usize> = items
            .iter()
            .enumerate()
            .map(|(i, it)| (it.key.clone(), i))
            .collect();
        let (mut folded, mut left) = (Vec::new(), Vec::new());
        for &c in corrections {
            let p = &inp.ours[c];
            let Some(&i) = p.corrects.as_ref().and_then(|k| by_key.get(k)) else {
                left.push(c);
                continue;
            };
            folded.push(c);
            let it = &mut items[i];
            it.corrections.push(c);
            it.our_amount_minor = it.our_amount_minor.saturating_add(p.amount_minor);
            it.delta_minor = it.their_amount_minor.saturating_sub(it.our_amount_minor);
            it.explanation = format!(
                "{}; corrected by {} ({})",
                it.explanation,
                p.key,
                signed_amount(p.amount_minor, &p.currency)
            );
            if it.delta_minor == 0 && it.outcome.correctable() && !it.outcome.settled() {
                it.explanation = format!("{}; was {}", it.explanation, it.outcome.as_str());
                it.outcome = Outcome::Matched;
                it.matched_by = Some(by::CORRECTION);
            }
        }
        if orphans {
            items.extend(left.into_iter().map(|c| self.orphan_correction(c)));
        }
        folded
    }

    /// A correction whose item this run does not have: an item of its own, never
    /// corrected again (reversing it is an operator's `reverse`).
    pub(super) fn orphan_correction(&self, c: usize) -> Item {
        let p = &self.inp.ours[c];
        let explanation = format!(
            "a correction of item {}, which this run does not have (its members were settled otherwise): reverse it; amount {} {}",
            p.corrects.as_deref().unwrap_or(""),
            signed_amount(p.amount_minor, &p.currency),
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
        item
    }

    /// Whether a member of the item is dated within the period (or undated).
    pub(super) fn in_period(&self, it: &Item) -> bool {
        let inp = self.inp;
        let inside = |d: Option<NaiveDate>| match d {
            None => true,
            Some(d) => inp.from.is_none_or(|f| d >= f) && inp.to.is_none_or(|t| d <= t),
        };
        it.ours.iter().any(|&x| inside(inp.ours[x].date))
            || it.theirs.iter().any(|&t| inside(inp.theirs[t].date))
    }
}
