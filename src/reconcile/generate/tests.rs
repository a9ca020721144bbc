use super::*;
use crate::formats::iso20022::{IsoEvent, read_file};
use std::collections::{BTreeMap, HashMap};

fn files(sc: &Scenario) -> BTreeMap<&'static str, Vec<u8>> {
    FILES
        .iter()
        .map(|&name| {
            let mut v = Vec::new();
            sc.write(name, &mut v).unwrap();
            (name, v)
        })
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_files() {
    let a = files(&Scenario::new(300, 7).unwrap());
    let b = files(&Scenario::new(300, 7).unwrap());
    assert_eq!(a, b);
    let c = files(&Scenario::new(300, 8).unwrap());
    for name in [PACS008, CAMT053, EXPECTED] {
        assert_ne!(a[name], c[name], "{name}");
    }
    assert_eq!(a[RULES], c[RULES]);
}

#[test]
fn too_few_or_too_many_payments_are_refused() {
    assert_eq!(
        Scenario::new(199, 1).err().unwrap(),
        "--payments: expected 200 to 100000000, found 199"
    );
    assert!(Scenario::new(MAX_PAYMENTS + 1, 1).is_err());
    for seed in 0..50 {
        Scenario::new(MIN_PAYMENTS, seed).unwrap();
    }
}

#[test]
fn exact_counts_per_outcome() {
    let sc = Scenario::new(300, 7).unwrap();
    assert_eq!(sc.breaks_per_kind(), 3);
    let grouped = sc
        .roles
        .iter()
        .filter(|r| {
            matches!(
                r,
                Role::BatchHead
                    | Role::BatchMember
                    | Role::SplitHead
                    | Role::SplitMember
                    | Role::AmbiguousHead
                    | Role::AmbiguousMember
            )
        })
        .count();
    assert_eq!(grouped, 25);
    let got: Vec<(&str, u64)> = sc
        .counts()
        .into_iter()
        .map(|(o, n)| (o.as_str(), n))
        .collect();
    // 300 payments: 3 of each of the 10 single breaks of ours, 3 batches, splits and
    // ambiguous groups of 25 payments in all (their drawn sizes); the 245 others are
    // matched, and so are the duplicates' and returns' first entries (9), the returns
    // recorded (3) and the amount-date pairs (3): 260.
    assert_eq!(
        got,
        [
            ("missing_ours", 3),
            ("amount_mismatch", 3),
            ("currency_mismatch", 3),
            ("date_mismatch", 3),
            ("duplicate_theirs", 3),
            ("returned", 3),
            ("ambiguous", 3),
            ("missing_theirs", 3),
            ("expected", 3),
            ("provisional", 3),
            ("many_to_one", 3),
            ("one_to_many", 3),
            ("matched_within_tolerance", 3),
            ("matched", 260),
        ]
    );
    let mut v = Vec::new();
    sc.write_summary(&mut v).unwrap();
    let summary: serde_json::Value = serde_json::from_slice(&v).unwrap();
    for (o, n) in &got {
        assert_eq!(summary[o], *n, "{o}");
    }
    // expected.jsonl says the same, one line per item.
    let mut v = Vec::new();
    sc.write_expected(&mut v).unwrap();
    let mut per: HashMap<String, u64> = HashMap::new();
    for line in String::from_utf8(v).unwrap().lines() {
        let item: serde_json::Value = serde_json::from_str(line).unwrap();
        *per.entry(item["outcome"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    for (o, n) in &got {
        assert_eq!(per[*o], *n, "{o}");
    }
    // Scales: about 1% each at 100,000.
    let big = Scenario::new(100_000, 1).unwrap();
    let c: HashMap<Outcome, u64> = big.counts().into_iter().collect();
    assert_eq!(c[&Outcome::Ambiguous], 1_000);
    assert_eq!(c[&Outcome::MissingOurs], 1_000);
}

/// The files read without a finding; every payment, return and entry is in exactly
/// one expected item.
#[test]
fn the_readers_find_no_error_and_every_line_is_in_one_item() {
    for (n, seed) in [(300, 7), (1_000, 3)] {
        let sc = Scenario::new(n, seed).unwrap();
        let f = files(&sc);
        let (mut ours, payments) = read_ours(&f);
        assert_eq!(payments, n);
        let mut theirs = read_theirs(&sc, &f);
        let mut v = Vec::new();
        sc.write_expected(&mut v).unwrap();
        for line in String::from_utf8(v).unwrap().lines() {
            let item: serde_json::Value = serde_json::from_str(line).unwrap();
            for id in item["our"].as_array().unwrap() {
                let c = ours.get_mut(id.as_str().unwrap()).unwrap();
                assert!(*c > 0, "{id} twice");
                *c -= 1;
            }
            for r in item["their"].as_array().unwrap() {
                let c = theirs.get_mut(r.as_str().unwrap()).unwrap();
                assert_eq!(*c, 1, "{r} twice");
                *c = 0;
            }
        }
        assert!(ours.values().all(|&c| c == 0), "a posting in no item");
        assert!(theirs.values().all(|&c| c == 0), "an entry in no item");
    }
}

/// Our files read without a finding: how many times each EndToEndId (a return: its
/// RtrId) is read, and the number of payments.
fn read_ours(f: &BTreeMap<&'static str, Vec<u8>>) -> (HashMap<String, u64>, u64) {
    let mut ours: HashMap<String, u64> = HashMap::new();
    let mut payments = 0;
    for (name, kind) in [
        (PACS008, "pacs.008"),
        (PAIN001, "pain.001"),
        (PACS004, "pacs.004"),
    ] {
        let r = read_file(&f[name][..], &mut |ev| {
            if let IsoEvent::Transaction(t) = ev {
                assert_eq!(t.kind.unwrap().as_str(), kind);
                assert_eq!(t.currency, "EUR");
                let d = t.date.unwrap().to_string();
                assert!(("2026-11-01"..="2026-11-30").contains(&d.as_str()), "{d}");
                let id = if kind == "pacs.004" {
                    t.tx_id
                } else {
                    payments += 1;
                    t.end_to_end_id
                };
                *ours.entry(id).or_default() += 1;
            }
        })
        .unwrap();
        assert!(
            r.findings.is_empty(),
            "{name}: {:#?}",
            &r.findings[..r.findings.len().min(3)]
        );
    }
    (ours, payments)
}

/// The bank's file read without a finding, its balances chaining: each AcctSvcrRef
/// read once.
fn read_theirs(sc: &Scenario, f: &BTreeMap<&'static str, Vec<u8>>) -> HashMap<String, u64> {
    use crate::formats::statement::{BalanceKind, EntryStatus};
    let mut theirs: HashMap<String, u64> = HashMap::new();
    let mut statements = Vec::new();
    let r = crate::formats::camt::read(&f[CAMT053][..], &mut |s| {
        for e in &s.entries {
            *theirs.entry(e.bank_ref.clone().unwrap()).or_default() += 1;
        }
        statements.push(s);
    })
    .unwrap();
    assert_eq!(r.findings, [], "{CAMT053}");
    assert_eq!(r.statements, 30);
    // The balance check ran on every statement without a USD line (it skips those).
    let checked = statements
        .iter()
        .filter(|s| {
            s.entries
                .iter()
                .all(|e| e.currency == "EUR" || e.status != EntryStatus::Booked)
        })
        .count();
    assert!(checked >= 30 - sc.breaks_per_kind() as usize);
    for w in statements.windows(2) {
        assert_eq!(
            w[0].balance(BalanceKind::ClosingBooked)
                .unwrap()
                .amount_minor,
            w[1].balance(BalanceKind::OpeningBooked)
                .unwrap()
                .amount_minor
        );
    }
    assert!(theirs.values().all(|&c| c == 1), "AcctSvcrRef unique");
    theirs
}
