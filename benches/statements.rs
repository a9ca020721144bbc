//! Criterion benchmark: bank statement readers, parse + validate (MB/s), on generated
//! files (`generate camt053`, `generate bai2`). `cargo bench --bench statements`.
//! Issue #13's target is 200 MB/s for BAI2 and MT940 (not met yet: README "Bank statements").

use clearledger::formats::bai2::generate::generate_bai2;
use clearledger::formats::camt::generate::generate_camt053;
use clearledger::formats::detect::Unsupported;
use clearledger::formats::statement;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn read_all(kind: Unsupported, data: &[u8]) -> u64 {
    let mut input = data;
    let mut entries = 0u64;
    let r = statement::read(kind, &mut input, &mut |s| entries += s.entries.len() as u64).unwrap();
    assert!(r.findings.is_empty(), "{:?}", r.findings.first());
    entries
}

fn benches(c: &mut Criterion) {
    let mut camt = Vec::new();
    generate_camt053(20_000, 1, &mut camt).unwrap();
    let mut bai2 = Vec::new();
    generate_bai2(20, 1_000, 1, &mut bai2).unwrap();
    let mut g = c.benchmark_group("statements");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(camt.len() as u64));
    g.bench_function("camt053_read_20k_entries", |b| {
        b.iter(|| read_all(Unsupported::Camt053, black_box(&camt)))
    });
    g.throughput(Throughput::Bytes(bai2.len() as u64));
    g.bench_function("bai2_read_20k_details", |b| {
        b.iter(|| read_all(Unsupported::Bai2, black_box(&bai2)))
    });
    g.finish();
}

criterion_group!(statement_benches, benches);
criterion_main!(statement_benches);
