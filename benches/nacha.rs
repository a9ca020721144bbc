//! Criterion benchmarks: NACHA record parse, whole-file parse + validate (MB/s), and
//! key derivation with fingerprinting. `cargo bench --bench nacha`.

/// The binary's allocator (src/main.rs), so this measures what ships.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clearledger::formats::nacha::generate::{GenerateOptions, write_nacha};
use clearledger::formats::nacha::record::parse_entry_detail;
use clearledger::formats::nacha::{self, Event, ValidateOptions};
use clearledger::keys::{FileIdentity, nacha_posting};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn file(entries: u64) -> Vec<u8> {
    let mut v = Vec::new();
    write_nacha(
        &mut v,
        &GenerateOptions {
            entries,
            batches: 10,
            seed: 1,
            addenda_every: 10,
        },
    )
    .unwrap();
    v
}

fn benches(c: &mut Criterion) {
    let rec = b"62723138010412345678         0100000000               Receiver Account Name   0121042880000001";
    let mut g = c.benchmark_group("record");
    g.throughput(Throughput::Elements(1));
    g.bench_function("parse_entry_detail", |b| {
        b.iter(|| parse_entry_detail(black_box(rec)))
    });
    g.finish();

    let data = file(100_000);
    let mut g = c.benchmark_group("file");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(10);
    g.bench_function("check_100k_entries", |b| {
        b.iter(|| nacha::check(black_box(&data[..]), ValidateOptions::default()).unwrap())
    });
    g.bench_function("read_and_key_100k_entries", |b| {
        b.iter(|| {
            let mut id: Option<FileIdentity> = None;
            let mut n = 0u64;
            nacha::read_file(
                &data[..],
                ValidateOptions::default(),
                &mut |ev| match ev {
                    Event::Header(h) => id = Some(FileIdentity::nacha(&h)),
                    Event::Entry(e) => {
                        let p = nacha_posting(id.as_ref().unwrap(), &e);
                        n += p.fingerprint.len() as u64;
                    }
                },
                &mut |_| {},
            )
            .unwrap();
            n
        })
    });
    g.finish();

    // Key derivation and fingerprinting alone, per entry.
    let mut entries = Vec::new();
    let mut id = None;
    let small = file(1_000);
    nacha::read_file(
        &small[..],
        ValidateOptions::default(),
        &mut |ev| match ev {
            Event::Header(h) => id = Some(FileIdentity::nacha(&h)),
            Event::Entry(e) => entries.push(e),
        },
        &mut |_| {},
    )
    .unwrap();
    let id = id.unwrap();
    let mut g = c.benchmark_group("keys");
    g.throughput(Throughput::Elements(entries.len() as u64));
    g.bench_function("nacha_posting_1k_entries", |b| {
        b.iter(|| {
            entries
                .iter()
                .map(|e| nacha_posting(&id, e).fingerprint.len())
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(nacha_benches, benches);
criterion_main!(nacha_benches);
