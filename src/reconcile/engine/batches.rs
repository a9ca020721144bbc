//! Level 6: a batch settled as one line (`batch`, `many_to_one`). A NACHA batch, a
//! pain.001 `PmtInfId` or a message id is tied to an entry by an identifier the entry
//! quotes, and pairs when its members left sum to the entry.

use super::index::provided;
use super::{Engine, Inputs, Outcome, by};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A batch an entry may settle: its members left, what tied it, their sum.
type Fit = (Vec<usize>, String, i64);

/// The postings of each batch key, and the batch keys each quotable identifier names.
struct Batches<'a> {
    members: BTreeMap<&'a str, Vec<usize>>,
    ties: HashMap<&'a str, BTreeSet<&'a str>>,
}

impl<'a> Batches<'a> {
    fn of(inp: &'a Inputs, plain: &[usize]) -> Batches<'a> {
        let mut members: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        let mut ties: HashMap<&str, BTreeSet<&str>> = HashMap::new();
        for &x in plain {
            for b in &inp.ours[x].batches {
                members.entry(b.key.as_str()).or_default().push(x);
                for tie in &b.ties {
                    ties.entry(tie.as_str()).or_default().insert(b.key.as_str());
                }
            }
        }
        Batches { members, ties }
    }
}

impl Engine<'_> {
    pub(super) fn batches(&mut self, plain: &[usize], booked: &[usize]) {
        let batches = Batches::of(self.inp, plain);
        for &t in booked {
            if self.their_taken[t] {
                continue;
            }
            let mut fits = self.batch_fits(t, &batches);
            if let Some(i) = self.pick_batch(t, &fits) {
                let (members, tie, _) = fits.swap_remove(i);
                let shape = (members.len() > 1).then_some(Outcome::ManyToOne);
                self.take(members, vec![t], by::BATCH, tie, shape, vec![]);
            }
        }
    }

    /// The batches entry `t` quotes, by key, each with its members left of the entry's
    /// currency and sign within the window (batches with none left are no fit).
    fn batch_fits(&self, t: usize, batches: &Batches<'_>) -> Vec<Fit> {
        let inp = self.inp;
        let e = &inp.theirs[t];
        let mut tied: BTreeSet<(&str, &str)> = BTreeSet::new();
        for v in [&e.batch_ref, &e.customer_ref, &e.bank_ref, &e.end_to_end_id] {
            if let Some(v) = provided(v)
                && let Some(keys) = batches.ties.get(v)
            {
                tied.extend(keys.iter().map(|k| (*k, v)));
            }
        }
        let mut fits: Vec<Fit> = Vec::new();
        for (key, quoted) in tied {
            let members: Vec<usize> = batches.members[key]
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
        fits
    }

    /// The fit whose sum agrees with entry `t`: exactly, or within a tolerance when only
    /// one batch is tied.
    fn pick_batch(&self, t: usize, fits: &[Fit]) -> Option<usize> {
        let e = &self.inp.theirs[t];
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
        // A tolerance never chooses between batches, and an identifier alone (a fee line
        // quoting the company id) ties nothing.
        if exact.len() == 1 {
            Some(exact[0])
        } else if exact.is_empty() && fits.len() == 1 && within.len() == 1 {
            Some(within[0])
        } else {
            None
        }
    }
}
