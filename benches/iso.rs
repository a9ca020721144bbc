//! Criterion benchmark: pacs.008 parse + validate (MB/s). `cargo bench --bench iso`.

/// The binary's allocator (src/main.rs), so this measures what ships.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clearledger::formats::iso20022::{self, IsoEvent, generate::write_pacs008};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn benches(c: &mut Criterion) {
    let mut data = Vec::new();
    write_pacs008(&mut data, 20_000, 1).unwrap();
    let mut g = c.benchmark_group("pacs008");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(10);
    g.bench_function("read_validate_20k_tx", |b| {
        b.iter(|| {
            let mut n = 0u64;
            let s = iso20022::read_file(black_box(&data[..]), &mut |ev| {
                if let IsoEvent::Transaction(t) = ev {
                    n += t.amount_minor as u64;
                }
            })
            .unwrap();
            assert!(s.findings.is_empty());
            n
        })
    });
    g.finish();
}

criterion_group!(iso_benches, benches);
criterion_main!(iso_benches);
