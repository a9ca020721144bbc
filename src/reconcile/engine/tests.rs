//! The engine on hand-built inputs: each outcome, its members and its explanation exact.

use super::*;
use crate::reconcile::rules::{Rules, Tolerance};
use std::collections::BTreeSet;

fn day(d: u32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(2026, 11, d)
}

fn ours(key: &str, amount: i64, d: u32) -> Ours {
    Ours {
        id: 0,
        key: key.into(),
        operation: "pacs.008".into(),
        ledger_account: "acct:NL01".into(),
        amount_minor: amount,
        currency: "EUR".into(),
        date: day(d),
        ..Default::default()
    }
}

fn theirs(key: &str, amount: i64, d: u32) -> Theirs {
    Theirs {
        id: 0,
        key: key.into(),
        amount_minor: amount,
        currency: "EUR".into(),
        date: day(d),
        ..Default::default()
    }
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

fn run(ours: Vec<Ours>, theirs: Vec<Theirs>, rules: &Rules) -> (Inputs, Vec<Item>) {
    let mut inp = Inputs {
        ours,
        theirs,
        from: day(1),
        to: day(30),
        as_of: day(30),
    };
    // Ids as a ledger gives them, one per row in the order built (a test that reorders the
    // rows gives them their ids first: they are the rows' own).
    for (i, o) in inp.ours.iter_mut().enumerate() {
        if o.id == 0 {
            o.id = i as i64 + 1;
        }
    }
    for (i, t) in inp.theirs.iter_mut().enumerate() {
        if t.id == 0 {
            t.id = i as i64 + 1;
        }
    }
    let items = reconcile(&inp, rules);
    (inp, items)
}

/// (outcome, matched_by, our keys, their keys, explanation) per item.
fn summary(inp: &Inputs, items: &[Item]) -> Vec<(String, String, String, String, String)> {
    items
        .iter()
        .map(|i| {
            (
                i.outcome.as_str().to_string(),
                i.matched_by.unwrap_or("").to_string(),
                i.ours
                    .iter()
                    .map(|&x| inp.ours[x].key.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
                i.theirs
                    .iter()
                    .map(|&t| inp.theirs[t].key.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
                i.explanation.clone(),
            )
        })
        .collect()
}

fn row(
    o: &str,
    by: &str,
    ours: &str,
    theirs: &str,
    why: &str,
) -> (String, String, String, String, String) {
    (o.into(), by.into(), ours.into(), theirs.into(), why.into())
}

#[test]
fn uetr_first_then_end_to_end_id_then_missing_both_ways() {
    let mut a = ours("o:a", -1000, 2);
    a.uetr = s("u-1");
    a.end_to_end_id = s("E-X");
    let mut b = ours("o:b", -2000, 3);
    b.end_to_end_id = s("E-2");
    let c = ours("o:c", -3000, 4);
    let old = ours("o:old", -4000, 28);
    // The entry quotes b's EndToEndId but a's UETR: the UETR decides.
    let mut t1 = theirs("t:1", -1000, 2);
    t1.uetr = s("u-1");
    t1.end_to_end_id = s("E-2");
    let mut t2 = theirs("t:2", -2000, 4);
    t2.end_to_end_id = s("E-2");
    let t3 = theirs("t:3", 777, 5);
    let (inp, items) = run(vec![a, b, c, old], vec![t1, t2, t3], &Rules::default());
    assert_eq!(
        summary(&inp, &items),
        vec![
            row(
                "missing_ours",
                "",
                "",
                "t:3",
                "no posting for this entry; amount +7.77 EUR, booked 2026-11-05"
            ),
            row(
                "missing_theirs",
                "",
                "o:c",
                "",
                "no bank entry by 2026-11-30 (due 2026-11-07); amount -30.00 EUR"
            ),
            row(
                "expected",
                "",
                "o:old",
                "",
                "no bank entry yet; not due before 2026-12-01; amount -40.00 EUR"
            ),
            row(
                "matched",
                "uetr",
                "o:a",
                "t:1",
                "by uetr=u-1; amount ours -10.00 theirs -10.00 Δ 0.00; days Δ 0 in -1..+3"
            ),
            row(
                "matched",
                "end_to_end_id",
                "o:b",
                "t:2",
                "by end_to_end_id=E-2; amount ours -20.00 theirs -20.00 Δ 0.00; days Δ +1 in -1..+3"
            ),
        ]
    );
    assert_eq!(items[0].delta_minor, 777);
    assert_eq!(items[1].delta_minor, 3000);
}

#[test]
fn amount_date_tolerance_and_currency_are_judged_after_the_identifier() {
    let mut a = ours("o:a", -10_000, 2);
    a.end_to_end_id = s("A");
    let mut b = ours("o:b", -10_000, 2);
    b.end_to_end_id = s("B");
    let mut c = ours("o:c", -10_000, 2);
    c.end_to_end_id = s("C");
    let mut d = ours("o:d", -10_000, 2);
    d.end_to_end_id = s("D");
    let mut ta = theirs("t:a", -10_250, 3);
    ta.end_to_end_id = s("A");
    let mut tb = theirs("t:b", -10_251, 3);
    tb.end_to_end_id = s("B");
    let mut tc = theirs("t:c", -10_000, 9);
    tc.end_to_end_id = s("C");
    let mut td = theirs("t:d", -10_000, 2);
    td.end_to_end_id = s("D");
    td.currency = "USD".into();
    let rules = Rules {
        tolerances: vec![Tolerance {
            name: "fee".into(),
            priority: 1,
            currency: Some("EUR".into()),
            below_minor: 250,
            above_minor: 0,
            bps: 0,
        }],
        ..Rules::default()
    };
    let (inp, items) = run(vec![a, b, c, d], vec![ta, tb, tc, td], &rules);
    assert_eq!(
        summary(&inp, &items),
        vec![
            row(
                "amount_mismatch",
                "end_to_end_id",
                "o:b",
                "t:b",
                "by end_to_end_id=B; amount ours -100.00 theirs -102.51 Δ -2.51; days Δ +1 in -1..+3"
            ),
            row(
                "currency_mismatch",
                "end_to_end_id",
                "o:d",
                "t:d",
                "by end_to_end_id=D; currency ours EUR theirs USD; days Δ 0 in -1..+3"
            ),
            row(
                "date_mismatch",
                "end_to_end_id",
                "o:c",
                "t:c",
                "by end_to_end_id=C; amount ours -100.00 theirs -100.00 Δ 0.00; days Δ +7 outside -1..+3"
            ),
            row(
                "matched_within_tolerance",
                "end_to_end_id",
                "o:a",
                "t:a",
                "by end_to_end_id=A; amount ours -100.00 theirs -102.50 Δ -2.50; within tolerance fee; days Δ +1 in -1..+3"
            ),
        ]
    );
    assert_eq!(items[3].tolerance.as_deref(), Some("fee"));
}

#[test]
fn a_second_entry_for_a_taken_posting_is_a_duplicate() {
    let mut a = ours("o:a", 500, 2);
    a.uetr = s("u-9");
    let mut t1 = theirs("t:1", 500, 2);
    t1.uetr = s("u-9");
    let mut t2 = theirs("t:2", 500, 3);
    t2.uetr = s("u-9");
    let (inp, items) = run(vec![a], vec![t1, t2], &Rules::default());
    assert_eq!(
        summary(&inp, &items),
        vec![
            row(
                "duplicate_theirs",
                "",
                "",
                "t:2",
                "repeats entry t:1 by uetr=u-9 (posting o:a); amount +5.00 EUR"
            ),
            row(
                "matched",
                "uetr",
                "o:a",
                "t:1",
                "by uetr=u-9; amount ours +5.00 theirs +5.00 Δ 0.00; days Δ 0 in -1..+3"
            ),
        ]
    );
    assert_eq!(items[0].refers_to, Some(0));
}

#[test]
fn a_return_matches_our_return_posting_else_is_returned() {
    let mut pay = ours("o:pay", -800, 2);
    pay.end_to_end_id = s("E-8");
    let mut pay2 = ours("o:pay2", -900, 2);
    pay2.end_to_end_id = s("E-9");
    let mut ret = ours("o:ret", 900, 6);
    ret.is_return = true;
    ret.original_end_to_end_id = s("E-9");
    let mut t_pay = theirs("t:pay", -800, 2);
    t_pay.end_to_end_id = s("E-8");
    let mut t_pay2 = theirs("t:pay2", -900, 2);
    t_pay2.end_to_end_id = s("E-9");
    let mut t_ret = theirs("t:ret", 800, 6);
    t_ret.is_return = true;
    t_ret.end_to_end_id = s("E-8");
    let mut t_ret2 = theirs("t:ret2", 900, 6);
    t_ret2.is_return = true;
    t_ret2.end_to_end_id = s("E-9");
    let (inp, items) = run(
        vec![pay, pay2, ret],
        vec![t_pay, t_pay2, t_ret, t_ret2],
        &Rules::default(),
    );
    assert_eq!(
        summary(&inp, &items),
        vec![
            row(
                "returned",
                "",
                "",
                "t:ret",
                "returns posting o:pay by end_to_end_id=E-8; no return of it is posted; amount +8.00 EUR"
            ),
            row(
                "matched",
                "end_to_end_id",
                "o:pay",
                "t:pay",
                "by end_to_end_id=E-8; amount ours -8.00 theirs -8.00 Δ 0.00; days Δ 0 in -1..+3"
            ),
            row(
                "matched",
                "end_to_end_id",
                "o:pay2",
                "t:pay2",
                "by end_to_end_id=E-9; amount ours -9.00 theirs -9.00 Δ 0.00; days Δ 0 in -1..+3"
            ),
            row(
                "matched",
                "original_end_to_end_id",
                "o:ret",
                "t:ret2",
                "by original_end_to_end_id=E-9; amount ours +9.00 theirs +9.00 Δ 0.00; days Δ 0 in -1..+3"
            ),
        ]
    );
    assert_eq!(items[0].refers_to, Some(0));
}

#[test]
fn a_batch_settled_as_one_line_is_many_to_one() {
    let batch = BatchKey {
        key: "pmtinf:PMT-7".into(),
        ties: vec!["PMT-7".into()],
    };
    let mut members = Vec::new();
    for (i, a) in [-100i64, -200, -300].into_iter().enumerate() {
        let mut o = ours(&format!("o:{i}"), a, 3);
        o.batches = vec![batch.clone()];
        members.push(o);
    }
    let mut other = ours("o:other", -600, 3);
    other.batches = vec![BatchKey {
        key: "pmtinf:PMT-8".into(),
        ties: vec!["PMT-8".into()],
    }];
    members.push(other);
    let mut t = theirs("t:sum", -600, 3);
    t.batch_ref = s("PMT-7");
    let (inp, items) = run(members, vec![t], &Rules::default());
    assert_eq!(
        summary(&inp, &items),
        vec![
            row(
                "missing_theirs",
                "",
                "o:other",
                "",
                "no bank entry by 2026-11-30 (due 2026-11-06); amount -6.00 EUR"
            ),
            row(
                "many_to_one",
                "batch",
                "o:0,o:1,o:2",
                "t:sum",
                "by batch pmtinf:PMT-7 quoted as PMT-7; members ours 3 theirs 1; amount ours -6.00 theirs -6.00 Δ 0.00; days Δ 0 in -1..+3"
            ),
        ]
    );
}

#[test]
fn an_itemised_entry_is_one_to_many_and_names_the_detail_it_lacks() {
    let mut a = ours("o:a", 100, 3);
    a.uetr = s("u-a");
    let mut b = ours("o:b", 250, 3);
    b.end_to_end_id = s("E-b");
    let mut t = theirs("t:batch", 350, 3);
    t.details = vec![
        TheirDetail {
            amount_minor: Some(100),
            uetr: s("u-a"),
            ..Default::default()
        },
        TheirDetail {
            amount_minor: Some(250),
            end_to_end_id: s("E-b"),
            ..Default::default()
        },
    ];
    let mut t2 = theirs("t:batch2", 400, 4);
    t2.details = vec![
        TheirDetail {
            amount_minor: Some(100),
            uetr: s("u-c"),
            ..Default::default()
        },
        TheirDetail {
            amount_minor: Some(300),
            end_to_end_id: s("E-c"),
            ..Default::default()
        },
    ];
    let mut c = ours("o:c2", 100, 4);
    c.uetr = s("u-c");
    let (inp, items) = run(vec![a, b, c], vec![t, t2], &Rules::default());
    assert_eq!(
        summary(&inp, &items),
        vec![
            row(
                "amount_mismatch",
                "details",
                "o:c2",
                "t:batch2",
                "by 1 of 2 details; amount ours +1.00 theirs +4.00 Δ +3.00; days Δ 0 in -1..+3; detail 2 (end_to_end_id=E-c) has no posting"
            ),
            row(
                "one_to_many",
                "details",
                "o:a,o:b",
                "t:batch",
                "by 2 of 2 details; members ours 2 theirs 1; amount ours +3.50 theirs +3.50 Δ 0.00; days Δ 0 in -1..+3"
            ),
        ]
    );
}

#[test]
fn identical_lines_are_ambiguous_never_guessed() {
    let xs: Vec<Ours> = (0..3).map(|i| ours(&format!("o:{i}"), -5000, 10)).collect();
    let ts: Vec<Theirs> = (0..2)
        .map(|i| theirs(&format!("t:{i}"), -5000, 11))
        .collect();
    let lone = ours("o:lone", -7000, 12);
    let tl = theirs("t:lone", -7000, 13);
    let mut all = xs;
    all.push(lone);
    let (inp, items) = run(all, ts, &Rules::default());
    let (inp2, items2) = run(
        inp.ours.clone(),
        {
            let mut v = inp.theirs.clone();
            v.push(tl);
            v
        },
        &Rules::default(),
    );
    assert_eq!(
        summary(&inp, &items)[0],
        row(
            "ambiguous",
            "",
            "o:0,o:1,o:2",
            "t:0,t:1",
            "3 postings and 2 entries of -50.00 EUR within the window: postings o:0, o:1, o:2 and entries t:0, t:1 fit more than one way; an operator decides"
        )
    );
    assert_eq!(
        summary(&inp2, &items2)[1],
        row(
            "matched",
            "amount_date",
            "o:lone",
            "t:lone",
            "by amount and date; amount ours -70.00 theirs -70.00 Δ 0.00; days Δ +1 in -1..+3"
        )
    );
}

#[test]
fn the_bounded_sum_search_pairs_one_solution_and_flags_two() {
    let a = ours("o:a", -100, 5);
    let b = ours("o:b", -250, 5);
    let c = ours("o:c", -999, 5);
    let t = theirs("t:350", -350, 6);
    let (inp, items) = run(vec![a, b, c], vec![t], &Rules::default());
    assert_eq!(
        summary(&inp, &items)[1],
        row(
            "many_to_one",
            "amount_sum",
            "o:a,o:b",
            "t:350",
            "by amount sum and date; members ours 2 theirs 1; amount ours -3.50 theirs -3.50 Δ 0.00; days Δ +1 in -1..+3"
        )
    );
    // 100+250 and 150+200 both make 350.
    let v: Vec<Ours> = [-100, -250, -150, -200]
        .iter()
        .enumerate()
        .map(|(i, &a)| ours(&format!("o:{i}"), a, 5))
        .collect();
    let (inp, items) = run(v, vec![theirs("t:350", -350, 5)], &Rules::default());
    assert_eq!(
        summary(&inp, &items),
        vec![row(
            "ambiguous",
            "",
            "o:0,o:1,o:2,o:3",
            "t:350",
            "2 sets of postings sum to the entry: postings o:0, o:1, o:2, o:3 and entries t:350 fit more than one way; an operator decides"
        )]
    );
}

#[test]
fn provisional_entries_are_shown_never_final() {
    let mut a = ours("o:a", -100, 29);
    a.uetr = s("u-p");
    let mut p = theirs("t:p", -100, 29);
    p.uetr = s("u-p");
    p.provisional = true;
    let mut q = theirs("t:q", 42, 29);
    q.provisional = true;
    let (inp, items) = run(vec![a], vec![p, q], &Rules::default());
    assert_eq!(
        summary(&inp, &items),
        vec![
            row(
                "expected",
                "provisional",
                "o:a",
                "t:p",
                "provisional entry t:p names it (u-p); not final until booked; amount ours -1.00 theirs -1.00"
            ),
            row(
                "provisional",
                "",
                "",
                "t:q",
                "provisional entry, not final until booked; amount +0.42 EUR"
            ),
        ]
    );
}

#[test]
fn a_correction_folds_into_the_item_it_names() {
    let t = theirs("t:fee", -35, 4);
    let (inp, items) = run(vec![], vec![t.clone()], &Rules::default());
    assert_eq!(items[0].outcome, Outcome::MissingOurs);
    let key = items[0].key.clone();
    assert_eq!(key, item_key(std::iter::empty(), ["t:fee"].into_iter()));
    let mut c = ours("correction:x", -35, 4);
    c.operation = "correction".into();
    c.corrects = Some(key.clone());
    let mut stale = ours("correction:y", 10, 4);
    stale.operation = "correction".into();
    stale.corrects = Some("0123".into());
    let (inp2, items2) = run(vec![c, stale], vec![t], &Rules::default());
    let _ = inp;
    assert_eq!(
        summary(&inp2, &items2),
        vec![
            row(
                "missing_theirs",
                "",
                "correction:y",
                "",
                "a correction of item 0123, which this run does not have (its members were settled otherwise): reverse it; amount +0.10 EUR"
            ),
            row(
                "matched",
                "correction",
                "",
                "t:fee",
                "no posting for this entry; amount -0.35 EUR, booked 2026-11-04; corrected by correction:x (-0.35); was missing_ours"
            ),
        ]
    );
    assert_eq!(items2[1].key, key);
    assert_eq!(items2[1].corrections, vec![0]);
    assert_eq!(items2[1].delta_minor, 0);
}

#[test]
fn members_outside_the_period_are_read_but_not_reported() {
    let mut a = ours("o:edge", -100, 30);
    a.uetr = s("u-e");
    let mut t = theirs("t:next", -100, 30);
    t.date = NaiveDate::from_ymd_opt(2026, 12, 1);
    t.uetr = s("u-e");
    // December's entry that matches nothing of November's is left to December.
    let t2 = theirs("t:dec", -5, 0);
    let mut t2 = t2;
    t2.date = NaiveDate::from_ymd_opt(2026, 12, 2);
    let (inp, items) = run(vec![a], vec![t, t2], &Rules::default());
    assert_eq!(
        summary(&inp, &items),
        vec![row(
            "matched",
            "uetr",
            "o:edge",
            "t:next",
            "by uetr=u-e; amount ours -1.00 theirs -1.00 Δ 0.00; days Δ +1 in -1..+3"
        )]
    );
}

#[test]
fn the_same_inputs_in_another_order_give_the_same_items() {
    let mut v = Vec::new();
    let mut w = Vec::new();
    for i in 0..20i64 {
        let mut o = ours(&format!("o:{i:02}"), -(i % 4 + 1) * 100, (i % 5 + 1) as u32);
        if i % 3 == 0 {
            o.uetr = Some(format!("u{i}"));
        }
        v.push(o);
        let mut t = theirs(&format!("t:{i:02}"), -(i % 4 + 1) * 100, (i % 5 + 2) as u32);
        if i % 3 == 0 {
            t.uetr = Some(format!("u{i}"));
        }
        w.push(t);
    }
    // The rows' ids, as the ledger gave them, travel with them.
    for (i, o) in v.iter_mut().enumerate() {
        o.id = 100 + i as i64;
    }
    for (i, t) in w.iter_mut().enumerate() {
        t.id = 500 + i as i64;
    }
    let (inp, a) = run(v.clone(), w.clone(), &Rules::default());
    v.reverse();
    w.reverse();
    v.swap(3, 11);
    w.swap(2, 17);
    let (inp2, b) = run(v, w, &Rules::default());
    assert_eq!(summary(&inp, &a), summary(&inp2, &b));
    let keys: BTreeSet<&str> = a.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(keys.len(), a.len());
    // Every posting and entry in exactly one item.
    let mut members: Vec<String> = a
        .iter()
        .flat_map(|i| {
            i.ours
                .iter()
                .map(|&x| inp.ours[x].key.clone())
                .chain(i.theirs.iter().map(|&t| inp.theirs[t].key.clone()))
        })
        .collect();
    members.sort();
    let n = members.len();
    members.dedup();
    assert_eq!((n, members.len()), (40, 40));
}

#[test]
fn a_line_of_the_other_sign_quoting_a_payment_is_its_return() {
    // A BAI2 return line carries no return flag: it quotes the original's trace number.
    let mut pay = ours("o:pay", -5000, 3);
    pay.trace = s("091000010000001");
    let mut debit = theirs("t:debit", -5000, 3);
    debit.customer_ref = s("091000010000001");
    let mut back = theirs("t:back", 5000, 9);
    back.customer_ref = s("091000010000001");
    let (inp, items) = run(vec![pay], vec![back, debit], &Rules::default());
    assert_eq!(
        summary(&inp, &items),
        vec![
            row(
                "returned",
                "",
                "",
                "t:back",
                "returns posting o:pay by trace_number=091000010000001; no return of it is posted; amount +50.00 EUR"
            ),
            row(
                "matched",
                "trace_number",
                "o:pay",
                "t:debit",
                "by trace_number=091000010000001; amount ours -50.00 theirs -50.00 Δ 0.00; days Δ 0 in -1..+3"
            ),
        ]
    );
}

#[test]
fn a_repeated_identifier_prefers_the_posting_within_the_window() {
    // Weekly payroll files restart their trace numbers: the same trace, the same amount.
    let mut w1 = ours("o:week1", -7000, 2);
    w1.trace = s("000000000000001");
    let mut w2 = ours("o:week2", -7000, 9);
    w2.trace = s("000000000000001");
    let mut e1 = theirs("t:1", -7000, 2);
    e1.customer_ref = s("000000000000001");
    let mut e2 = theirs("t:2", -7000, 9);
    e2.customer_ref = s("000000000000001");
    let (inp, items) = run(vec![w1, w2], vec![e1, e2], &Rules::default());
    let got: Vec<(String, String, String)> = summary(&inp, &items)
        .into_iter()
        .map(|r| (r.0, r.2, r.3))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "matched".to_string(),
                "o:week1".to_string(),
                "t:1".to_string()
            ),
            (
                "matched".to_string(),
                "o:week2".to_string(),
                "t:2".to_string()
            ),
        ]
    );
}

#[test]
fn a_batch_ties_only_when_its_sum_agrees() {
    // A fee line quoting the company id must not take the payroll batch.
    let batch = BatchKey {
        key: "nacha:1234567890:2026-11-05:0000001".into(),
        ties: vec!["1234567890".into()],
    };
    let mut v = Vec::new();
    for (i, a) in [-100_000i64, -200_000].into_iter().enumerate() {
        let mut o = ours(&format!("o:{i}"), a, 5);
        o.batches = vec![batch.clone()];
        v.push(o);
    }
    let mut fee = theirs("t:fee", -2500, 4);
    fee.customer_ref = s("1234567890");
    let mut settle = theirs("t:settle", -300_000, 5);
    settle.customer_ref = s("1234567890");
    let (inp, items) = run(v, vec![fee, settle], &Rules::default());
    let got: Vec<(String, String, String)> = summary(&inp, &items)
        .into_iter()
        .map(|r| (r.0, r.2, r.3))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "missing_ours".to_string(),
                "".to_string(),
                "t:fee".to_string()
            ),
            (
                "many_to_one".to_string(),
                "o:0,o:1".to_string(),
                "t:settle".to_string()
            ),
        ]
    );
}

#[test]
fn an_orphan_correction_is_never_corrected_again() {
    let mut c = ours("correction:x", -35, 4);
    c.operation = "correction".into();
    c.corrects = Some("gone".into());
    let (_, items) = run(vec![c], vec![], &Rules::default());
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].outcome, Outcome::MissingTheirs);
    assert!(!items[0].correctable);
}
