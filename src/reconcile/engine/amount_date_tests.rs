//! Level 8 counted (`amount_date.rs`) against its definition, listed: the quadratic
//! walk it replaced, kept here as the specification. The same pairs, in the same order,
//! on random inputs: the parts test's, and crowds of one amount (many rows a day, some
//! undated, counterparties named in some entries' text).

use super::parts_tests::{Draw, entry, posting, rules};
use super::*;

impl Engine<'_> {
    /// The definition: for each entry, every posting of its amount listed and filtered.
    fn amount_date_listed(&mut self, plain: &[usize], booked: &[usize]) {
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
}

/// The pairs an engine made: members and what tied them, in the order made.
fn pairs(e: &Engine<'_>) -> Vec<(Vec<usize>, Vec<usize>, String)> {
    let g = e.groups.iter();
    g.map(|g| (g.ours.clone(), g.theirs.clone(), g.tie.clone()))
        .collect()
}

/// Both walks over `inp` after the identifier passes (or from nothing): the same pairs.
fn same_pairs(inp: &Inputs, rules: &Rules, identifiers_first: bool, case: usize) -> [usize; 2] {
    let order = Order::of(inp);
    let idx = index::Indexes::of(&inp.ours, &order.plain);
    let mut counted = Engine::new(inp, rules);
    let mut listed = Engine::new(inp, rules);
    for e in [&mut counted, &mut listed] {
        if identifiers_first {
            e.first_stage(&order, &idx, &mut Lap::quiet());
        }
    }
    let before = counted.groups.len();
    counted.amount_date(&order.plain, &order.booked);
    listed.amount_date_listed(&order.plain, &order.booked);
    assert_eq!(pairs(&counted), pairs(&listed), "case {case}");
    assert_eq!(counted.our_taken, listed.our_taken, "case {case}");
    let made = &counted.groups[before..];
    let named = made.iter().filter(|g| g.tie.contains("counterparty"));
    [made.len(), named.count()]
}

/// `n` rows a side of a few amounts over `days` days (a few undated), half the postings
/// with a counterparty of `parties`, half the entries naming one: crowded, many postings
/// in each entry's reach; sparse, a pair named leaves its neighbours alone.
fn crowd(d: &mut Draw, case: usize, n: usize, days: u64, parties: u64) -> Inputs {
    let day = |d: &mut Draw| {
        (!d.one_in(25)).then(|| NaiveDate::from_ymd_opt(2026, 11, 1 + d.below(days) as u32))?
    };
    let amount = |d: &mut Draw| [-100, -200, 300][d.below(3) as usize];
    let party = |d: &mut Draw| d.one_in(2).then(|| format!("Party {}", d.below(parties)));
    let ours = (0..n).map(|i| Ours {
        id: i as i64,
        key: format!("c{case}:o{i}"),
        amount_minor: amount(d),
        currency: "EUR".into(),
        date: day(d),
        counterparty: party(d),
        ..Default::default()
    });
    let ours = ours.collect();
    let theirs = (0..n).map(|i| Theirs {
        id: i as i64,
        key: format!("c{case}:t{i}"),
        amount_minor: amount(d),
        currency: "EUR".into(),
        date: day(d),
        remittance: party(d).map(|p| format!("paid to {p} thanks")),
        ..Default::default()
    });
    Inputs {
        ours,
        theirs: theirs.collect(),
        ..Default::default()
    }
}

#[test]
fn counted_amount_and_date_pairs_as_listed() {
    let mut d = Draw(0x2026_1206_0008);
    let mut made = [0, 0];
    let mut add = |m: [usize; 2]| (0..2).for_each(|i| made[i] += m[i]);
    for case in 0..300 {
        let rules = rules(&mut d);
        let (m, n) = (d.below(40) as usize, d.below(40) as usize);
        let inp = Inputs {
            ours: (0..m).map(|i| posting(&mut d, i)).collect(),
            theirs: (0..n).map(|i| entry(&mut d, i)).collect(),
            ..Default::default()
        };
        add(same_pairs(&inp, &rules, true, case));
        add(same_pairs(&inp, &rules, false, case));
        let n = 50 + d.below(250) as usize;
        let crowded = crowd(&mut d, case, n, 6, 40);
        add(same_pairs(&crowded, &rules, false, case));
        let n = 4 + d.below(20) as usize;
        let sparse = crowd(&mut d, case, n, 10, 3);
        add(same_pairs(&sparse, &rules, false, case));
    }
    // Enough pairs made for the comparison to mean something.
    assert!(made[0] > 2000 && made[1] > 1500, "{made:?} pairs, named");
}
