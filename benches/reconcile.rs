//! Criterion benchmark: the reconciliation engine alone (`crate::reconcile::reconcile`,
//! no database), 100 000 postings against 100 000 entries built in memory: 90 % tied by
//! UETR, 9 % by EndToEndId, 1 % left over (half missing on each side) for the amount passes.
//! `cargo bench --bench reconcile`. The whole command against SQLite, beside a plain SQL
//! join, is `benches/e2e.py --formats recon`.

/// The binary's allocator (src/main.rs), so this measures what ships.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clearledger::reconcile::{reconcile, rules::Rules, synthetic};
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
    g.finish();
}

criterion_group!(b, benches);
criterion_main!(b);
