//! Criterion benchmark: the reconciliation engine alone (`crate::reconcile::reconcile`,
//! no database), 100 000 postings against 100 000 entries built in memory: 90 % tied by
//! UETR, 9 % by EndToEndId, 1 % left over (half missing on each side) for the amount passes.
//! And 20,000 postings against 20,000 entries of one amount without identifiers (a fee
//! charged every day): the amount-and-date pass's worst case, about 3,500 rows of the
//! amount in each entry's window. `cargo bench --bench reconcile`. The whole command
//! against SQLite, beside a plain SQL join, is `benches/e2e.py --formats recon`.

/// The binary's allocator (src/main.rs), so this measures what ships.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use chrono::NaiveDate;
use clearledger::reconcile::{Inputs, Ours, Theirs, reconcile, rules::Rules, synthetic};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn benches(c: &mut Criterion) {
    let inp = synthetic(100_000);
    let rules = Rules::default();
    let mut g = c.benchmark_group("reconcile");
    g.sample_size(10);
    g.throughput(Throughput::Elements(
        (inp.ours.len() + inp.theirs.len()) as u64,
    ));
    g.bench_function("engine_100k_x_100k", |b| {
        b.iter(|| reconcile(black_box(&inp), &rules).len())
    });
    let fees = one_amount(20_000);
    g.throughput(Throughput::Elements(40_000));
    g.bench_function("one_amount_20k_x_20k", |b| {
        b.iter(|| reconcile(black_box(&fees), &rules).len())
    });
    g.finish();
}

/// `n` postings and `n` entries of −1.50 EUR, no identifier, over 28 days.
fn one_amount(n: usize) -> Inputs {
    let day = |i: usize| NaiveDate::from_ymd_opt(2026, 11, 1 + (i % 28) as u32);
    let ours = (0..n).map(|i| Ours {
        id: i as i64,
        key: format!("pacs.008:fee{i}"),
        operation: "pacs.008".into(),
        amount_minor: -150,
        currency: "EUR".into(),
        date: day(i),
        ..Default::default()
    });
    let theirs = (0..n).map(|i| Theirs {
        id: i as i64,
        key: format!("ref:F{i}"),
        amount_minor: -150,
        currency: "EUR".into(),
        date: day(i * 7),
        ..Default::default()
    });
    Inputs {
        ours: ours.collect(),
        theirs: theirs.collect(),
        ..Default::default()
    }
}

criterion_group!(b, benches);
criterion_main!(b);
