//! A run in parts gives the whole run's items, in its order, whatever the parts' size: on
//! random inputs drawn from small pools (identifiers shared, repeated, NOTPROVIDED or
//! blank; amounts that collide and sum; batches, itemised and return entries, provisional
//! lines, corrections of real items and of none), so every pass has work.

use super::*;
use crate::reconcile::rules::{Rules, Tolerance};

/// A xorshift stream: the same cases every run.
pub(super) struct Draw(pub(super) u64);

impl Draw {
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
    pub(super) fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
    /// A value of the pool `prefix0..prefix{n}`, NOTPROVIDED, blank, or none.
    fn id(&mut self, prefix: &str, n: u64) -> Option<String> {
        match self.below(12) {
            0 => Some("NOTPROVIDED".into()),
            1 => Some(" ".into()),
            2..=5 => None,
            _ => Some(format!("{prefix}{}", self.below(n))),
        }
    }
    fn date(&mut self) -> Option<NaiveDate> {
        (!self.one_in(15)).then(|| NaiveDate::from_ymd_opt(2026, 11, 1 + self.below(12) as u32))?
    }
    fn amount(&mut self) -> i64 {
        [-300, -200, -100, -500, 100, 300, -101, -299][self.below(8) as usize]
    }
    fn currency(&mut self) -> String {
        if self.one_in(10) { "USD" } else { "EUR" }.into()
    }
}

pub(super) fn posting(d: &mut Draw, i: usize) -> Ours {
    let is_return = d.one_in(8);
    let batches = if d.one_in(4) {
        let b = d.below(3);
        vec![BatchKey {
            key: format!("pmtinf:P{b}"),
            ties: vec![format!("P{b}"), "MSG-1".into()],
        }]
    } else {
        vec![]
    };
    Ours {
        id: 10 + i as i64,
        key: format!("pacs.008:o{i:03}"),
        operation: "pacs.008".into(),
        ledger_account: "acct:X".into(),
        amount_minor: d.amount(),
        currency: d.currency(),
        date: d.date(),
        uetr: d.id("u", 9),
        end_to_end_id: d.id("e", 9),
        instr_id: d.id("i", 2),
        trace: d.id("r", 6),
        original_uetr: is_return.then(|| d.id("u", 9)).flatten(),
        original_end_to_end_id: is_return.then(|| d.id("e", 9)).flatten(),
        original_trace: is_return.then(|| d.id("r", 6)).flatten(),
        is_return,
        batches,
        refs: d.id("r", 6).into_iter().collect(),
        counterparty: d.one_in(3).then(|| format!("Party {}", d.below(3))),
        corrects: None,
    }
}

pub(super) fn entry(d: &mut Draw, i: usize) -> Theirs {
    let details = match d.below(6) {
        0 => (0..2 + d.below(2))
            .map(|_| TheirDetail {
                amount_minor: Some(d.amount()),
                uetr: d.id("u", 9),
                end_to_end_id: d.id("e", 9),
                instr_id: d.id("i", 2),
            })
            .collect(),
        _ => vec![],
    };
    Theirs {
        id: 500 + i as i64,
        key: format!("ref:t{i:03}"),
        amount_minor: d.amount(),
        currency: d.currency(),
        date: d.date(),
        provisional: d.one_in(12),
        is_return: d.one_in(10),
        uetr: d.id("u", 9),
        end_to_end_id: d.id("e", 9),
        instr_id: d.id("i", 2),
        bank_ref: d.id("r", 6),
        customer_ref: d.id("P", 4),
        batch_ref: d.id("P", 3),
        remittance: d.one_in(3).then(|| format!("to party {}", d.below(3))),
        details,
    }
}

/// Corrections of some of the whole run's items, and of an item nobody has.
fn with_corrections(d: &mut Draw, mut inp: Inputs, rules: &Rules) -> Inputs {
    let items = reconcile(&inp, rules);
    let n = inp.ours.len();
    for (k, it) in items.iter().enumerate() {
        if !d.one_in(4) {
            continue;
        }
        inp.ours.push(Ours {
            id: 10 + (n + k) as i64,
            key: format!("correction:c{k:03}"),
            operation: "correction".into(),
            amount_minor: it.delta_minor.saturating_sub(d.below(2) as i64),
            currency: it.currency.clone(),
            date: d.date(),
            corrects: Some(it.key.clone()),
            ..Default::default()
        });
    }
    inp.ours.push(Ours {
        id: 9,
        key: "correction:gone".into(),
        operation: "correction".into(),
        amount_minor: 7,
        currency: "EUR".into(),
        date: d.date(),
        corrects: Some("0".repeat(32)),
        ..Default::default()
    });
    inp
}

pub(super) fn rules(d: &mut Draw) -> Rules {
    let mut r = Rules {
        days_before: d.below(3) as u32,
        days_after: d.below(4) as u32,
        max_members: 2 + d.below(2) as u32,
        ..Rules::default()
    };
    if d.one_in(2) {
        r.tolerances.push(Tolerance {
            name: "cents".into(),
            priority: 0,
            currency: None,
            below_minor: 2,
            above_minor: 2,
            bps: 0,
        });
    }
    r
}

#[test]
fn a_run_in_parts_gives_the_whole_runs_items_in_its_order() {
    let mut d = Draw(0x2026_1206_0038);
    let mut kinds = std::collections::BTreeSet::new();
    for case in 0..400 {
        let rules = rules(&mut d);
        let (m, n) = (d.below(40) as usize, d.below(40) as usize);
        let inp = Inputs {
            ours: (0..m).map(|i| posting(&mut d, i)).collect(),
            theirs: (0..n).map(|i| entry(&mut d, i)).collect(),
            from: NaiveDate::from_ymd_opt(2026, 11, 2),
            to: NaiveDate::from_ymd_opt(2026, 11, 10),
            as_of: NaiveDate::from_ymd_opt(2026, 11, 10),
        };
        let inp = with_corrections(&mut d, inp, &rules);
        let whole = reconcile(&inp, &rules);
        kinds.extend(whole.iter().map(|i| (i.outcome, i.matched_by)));
        for size in [1, 2, 5, 17, usize::MAX] {
            let parted = reconcile_in_parts(&inp, &rules, size);
            assert_eq!(parted, whole, "case {case}, parts of {size} rows");
        }
    }
    // Every outcome, and every level that ties, was met.
    for o in Outcome::ALL {
        assert!(kinds.iter().any(|k| k.0 == o), "no {o:?} in any case");
    }
    for b in [
        by::DETAILS,
        by::UETR,
        by::END_TO_END_ID,
        by::ORIGINAL_UETR,
        by::TRACE_NUMBER,
        by::BATCH,
        by::REFERENCE,
        by::AMOUNT_DATE,
        by::AMOUNT_SUM,
        by::PROVISIONAL,
        by::CORRECTION,
    ] {
        assert!(
            kinds.iter().any(|k| k.1 == Some(b)),
            "nothing matched by {b}"
        );
    }
}
