//! A bounded, deterministic mutation fuzzer on the stable toolchain (the cargo-fuzz targets
//! in fuzz/ need nightly). Mutates the samples and the corpus files (bit flips, byte
//! insertions and deletions, truncations, spliced records) and checks that the reader never
//! panics, that findings stay bounded, and that reading the same bytes through 1-byte and
//! 7-byte reads gives exactly the same result as one big read.
//! `CLEARLEDGER_FUZZ_ITERS=N` runs longer (default 1,500).

use crate::common;

use clearledger::formats::nacha::{self, ValidateOptions};
use std::io::Read;

use clearledger::rng::SplitMix64 as Rng;

struct Trickle<'a> {
    data: &'a [u8],
    chunk: usize,
}
impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.chunk.min(out.len()).min(self.data.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut dirs = vec![common::samples()];
    {
        let c = common::corpus();
        for d in [
            "ach/valid",
            "ach/invalid",
            "ach/lenient",
            "iso20022/pacs008",
            "iso20022/pain001",
            "iso20022/invalid",
        ] {
            dirs.push(c.join(d));
        }
    }
    for d in dirs {
        for e in std::fs::read_dir(d).unwrap() {
            out.push(std::fs::read(e.unwrap().path()).unwrap());
        }
    }
    out
}

fn mutate(rng: &mut Rng, seed: &[u8], seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut d = seed.to_vec();
    for _ in 0..1 + rng.below_usize(4) {
        match rng.below_usize(6) {
            0 if !d.is_empty() => {
                let i = rng.below_usize(d.len());
                d[i] ^= 1 << rng.below_usize(8);
            }
            1 => {
                let i = rng.below_usize(d.len() + 1);
                let b = [b'0', b'9', b' ', b'\n', b'\r', 0, 0xFF, b'6', b'7', b'8']
                    [rng.below_usize(10)];
                d.insert(i, b);
            }
            2 if !d.is_empty() => {
                let i = rng.below_usize(d.len());
                d.remove(i);
            }
            3 => {
                let n = rng.below_usize(d.len() + 1);
                d.truncate(n);
            }
            4 => {
                // Splice a 95-byte slice of another file in.
                let other = &seeds[rng.below_usize(seeds.len())];
                if other.len() > 95 {
                    let s = rng.below_usize(other.len() - 95);
                    let at = rng.below_usize(d.len() + 1);
                    d.splice(at..at, other[s..s + 95].iter().copied());
                }
            }
            _ => {
                // Duplicate a line.
                if d.len() > 95 {
                    let s = rng.below_usize(d.len() / 95) * 95;
                    let line = d[s..(s + 95).min(d.len())].to_vec();
                    d.splice(s..s, line);
                }
            }
        }
    }
    d
}

fn summary_key(r: &nacha::ReadResult) -> String {
    format!(
        "{:?}|{}|{}|{}",
        r.summary.findings, r.summary.entries, r.summary.addenda, r.bytes,
    )
}

#[test]
fn mutated_files_never_panic_and_read_the_same_in_any_chunking() {
    let iters: usize = std::env::var("CLEARLEDGER_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_500);
    let seeds = seeds();
    let mut rng = Rng(0x00C1_EA12);
    let mut rejected = 0;
    for i in 0..iters {
        let seed = &seeds[rng.below_usize(seeds.len())];
        let data = mutate(&mut rng, seed, &seeds);
        if data.trim_ascii_start().starts_with(b"<") || data.starts_with(b"\xEF\xBB\xBF") {
            let whole = clearledger::formats::iso20022::read_file(&data[..], &mut |_| {}).unwrap();
            if whole.errors() > 0 {
                rejected += 1;
            }
            if i % 5 == 0 {
                let r = clearledger::formats::iso20022::read_file(
                    Trickle {
                        data: &data,
                        chunk: 1,
                    },
                    &mut |_| {},
                )
                .unwrap();
                assert_eq!(
                    without_xml_syntax_positions(&r.findings),
                    without_xml_syntax_positions(&whole.findings),
                    "iteration {i}"
                );
                assert_eq!(r.transactions, whole.transactions);
            }
            continue;
        }
        let whole = nacha::check(&data[..], ValidateOptions::default()).unwrap();
        assert!(whole.summary.findings.len() <= clearledger::findings::FINDINGS_MAX + 8);
        if whole.summary.errors() > 0 {
            rejected += 1;
        }
        if i % 5 == 0 {
            for chunk in [1, 7] {
                let r = nacha::check(Trickle { data: &data, chunk }, ValidateOptions::default())
                    .unwrap();
                assert_eq!(
                    summary_key(&r),
                    summary_key(&whole),
                    "iteration {i}, chunk {chunk}"
                );
            }
        }
    }
    eprintln!("fuzz smoke: {iters} mutated files, {rejected} rejected, none panicked");
    assert!(
        rejected > iters / 2,
        "most mutations must be caught: {rejected} of {iters}"
    );
}

/// Inputs that once broke something, kept as named regressions.
#[test]
fn regressions() {
    // A record of 94 bytes followed by a lone CR at the end of the input.
    let mut d = vec![b'1'; 94];
    d.push(b'\r');
    let r = nacha::check(&d[..], ValidateOptions::default()).unwrap();
    assert_eq!(r.summary.records, 1);
}

/// The statement readers under the same mutations: no panic, the same findings
/// whole and in 7-byte reads (a quick-xml syntax error's position aside), most mutations
/// caught. `CLEARLEDGER_FUZZ_ITERS` sets the count here too.
#[test]
fn mutated_statement_files_never_panic_and_read_the_same_in_any_chunking() {
    use clearledger::formats::detect::{Detected, detect};
    use clearledger::formats::statement;
    let iters: usize = std::env::var("CLEARLEDGER_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_500);
    let c = common::corpus();
    let mut seeds = Vec::new();
    for d in [
        "bai2",
        "mt940",
        "mt942",
        "iso20022/camt052",
        "iso20022/camt053",
        "iso20022/camt054",
    ] {
        for e in std::fs::read_dir(c.join(d)).unwrap() {
            let p = e.unwrap().path();
            if !p.to_string_lossy().contains("expected") {
                seeds.push(std::fs::read(p).unwrap());
            }
        }
    }
    let mut rng = Rng(0x5747_E4E7);
    let (mut read, mut rejected) = (0, 0);
    for i in 0..iters {
        let seed = &seeds[rng.below_usize(seeds.len())];
        let data = mutate(&mut rng, seed, &seeds);
        let Detected::Statement(kind) = detect(&data[..data.len().min(8192)]) else {
            continue;
        };
        read += 1;
        let mut input = &data[..];
        let whole = statement::read(kind, &mut input, Default::default(), &mut |_| {}).unwrap();
        assert!(whole.findings.len() <= clearledger::findings::FINDINGS_MAX + 8);
        if whole.findings.iter().any(|f| f.is_error()) {
            rejected += 1;
        }
        if i % 5 == 0 {
            let mut trickle = std::io::BufReader::with_capacity(
                7,
                Trickle {
                    data: &data,
                    chunk: 7,
                },
            );
            let r = statement::read(kind, &mut trickle, Default::default(), &mut |_| {}).unwrap();
            assert_eq!(
                without_xml_syntax_positions(&r.findings),
                without_xml_syntax_positions(&whole.findings),
                "iteration {i}"
            );
            assert_eq!(
                (r.statements, r.entries),
                (whole.statements, whole.entries),
                "iteration {i}"
            );
        }
    }
    eprintln!(
        "fuzz smoke (statements): {read} mutated statement files, {rejected} rejected, none panicked"
    );
    assert!(
        read > iters / 2,
        "most mutations stay statements: {read} of {iters}"
    );
    assert!(
        rejected > read / 2,
        "most mutations must be caught: {rejected} of {read}"
    );
}

/// The findings as text, an XML syntax error's line and byte zeroed: its position is
/// quick-xml's best effort and may move by a few bytes with the read sizes; every other
/// finding must match exactly.
fn without_xml_syntax_positions(fs: &[clearledger::findings::Finding]) -> Vec<String> {
    fs.iter()
        .map(|f| {
            let mut f = f.clone();
            if f.code == clearledger::findings::FindingCode::XmlSyntax
                && let clearledger::findings::Position::Xml(p) = &mut f.position
            {
                p.byte_offset = 0;
                p.line = 0;
            }
            format!("{f:?}")
        })
        .collect()
}
