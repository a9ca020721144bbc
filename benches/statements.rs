//! Criterion benchmark: bank statement readers, parse + validate (MB/s), on generated
//! files (`generate camt053`, `generate bai2`, `generate mt940`; BAI2 and MT940 about
//! 1.5 MB each). `cargo bench --bench statements` (`-- bai2`, `-- mt940` for one).
//! The target is 200 MB/s for BAI2 and MT940 (not met yet: docs/performance.md).

/// The binary's allocator (src/main.rs), so this measures what ships.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clearledger::formats::bai2::generate::generate_bai2;
use clearledger::formats::camt::generate::generate_camt053;
use clearledger::formats::detect::StatementFormat;
use clearledger::formats::mt940::generate::generate_mt940;
use clearledger::formats::statement;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn read_all(kind: StatementFormat, data: &[u8]) -> u64 {
    let mut input = data;
    let mut entries = 0u64;
    let r = statement::read(kind, &mut input, Default::default(), &mut |s| {
        entries += s.entries.len() as u64
    })
    .unwrap();
    assert!(r.findings.is_empty(), "{:?}", r.findings.first());
    entries
}

/// Entries per MT940 statement: 20 statements of these are about 1.5 MB, like the BAI2 file.
const MT940_ENTRIES: u64 = 620;

fn benches(c: &mut Criterion) {
    let mut camt = Vec::new();
    generate_camt053(20_000, 1, &mut camt).unwrap();
    let mut bai2 = Vec::new();
    generate_bai2(20, 1_000, 1, &mut bai2).unwrap();
    let mut mt940 = Vec::new();
    generate_mt940(20, MT940_ENTRIES, 1, &mut mt940).unwrap();
    let mut g = c.benchmark_group("statements");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(camt.len() as u64));
    g.bench_function("camt053_read_20k_entries", |b| {
        b.iter(|| read_all(StatementFormat::Camt053, black_box(&camt)))
    });
    g.throughput(Throughput::Bytes(bai2.len() as u64));
    g.bench_function("bai2_read_20k_details", |b| {
        b.iter(|| read_all(StatementFormat::Bai2, black_box(&bai2)))
    });
    g.throughput(Throughput::Bytes(mt940.len() as u64));
    g.bench_function("mt940_read_20_statements", |b| {
        b.iter(|| read_all(StatementFormat::Mt940, black_box(&mt940)))
    });
    g.finish();
}

criterion_group!(statement_benches, benches);
criterion_main!(statement_benches);
