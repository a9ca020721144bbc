//! Level 8, `amount_date`: an entry and a posting left of the same amount and currency
//! within the day window, each the only one for the other (a counterparty the entry's
//! text names narrows). And, after the bounded sums, what is left of the same amount
//! several ways: one `ambiguous` item per connected set, never a guess.

use super::items::{plural, signed_amount};
use super::window_sets::connected_sets;
use super::{Engine, by};
use std::collections::{BTreeMap, HashMap};

impl<'a> Engine<'a> {
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

    /// Level 8: an entry and a posting of the same amount and currency within the window,
    /// each the only one for the other (a counterparty the entry's text names narrows).
    pub(super) fn amount_date(&mut self, plain: &[usize], booked: &[usize]) {
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
                let Some(x) = self.named_counterparty(t, &fit, &rivals) else {
                    continue;
                };
                fit = vec![x];
                named = true;
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

    /// The counterparty narrows: the one posting of `fit` whose counterparty entry `t`'s
    /// text names, when no rival entry names it too.
    fn named_counterparty(&self, t: usize, fit: &[usize], rivals: &[usize]) -> Option<usize> {
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
