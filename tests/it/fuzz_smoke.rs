//! A bounded, deterministic mutation fuzzer on the stable toolchain, over the same entry
//! points the cargo-fuzz targets of fuzz/ run for hours (`clearledger::fuzzing`: each checks
//! its own invariants, the differential ones included: parallel vs one pass, whole vs 7-byte
//! reads). Mutates the samples and the corpus files (bit flips, byte insertions and
//! deletions, truncations, spliced records); every target runs here, so none can rot.
//! `CLEARLEDGER_FUZZ_ITERS=N` runs longer (default 1,500).

use crate::common;

use clearledger::formats::nacha::{self, ValidateOptions};

use clearledger::rng::SplitMix64 as Rng;

fn iters() -> usize {
    std::env::var("CLEARLEDGER_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_500)
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

#[test]
fn mutated_files_never_panic_and_read_the_same_in_any_chunking() {
    let iters = iters();
    let seeds = seeds();
    let mut rng = Rng(0x00C1_EA12);
    let mut rejected = 0;
    for i in 0..iters {
        let seed = &seeds[rng.below_usize(seeds.len())];
        let data = mutate(&mut rng, seed, &seeds);
        let xml = data.trim_ascii_start().starts_with(b"<") || data.starts_with(b"\xEF\xBB\xBF");
        let errors = if xml {
            clearledger::formats::iso20022::read_file(&data[..], &mut |_| {})
                .unwrap()
                .errors()
        } else {
            nacha::check(&data[..], ValidateOptions::default())
                .unwrap()
                .summary
                .errors()
        };
        if errors > 0 {
            rejected += 1;
        }
        // The differential checks (parallel, 7-byte reads, ingest's read) on every fifth.
        if i % 5 == 0 {
            let target = if xml { "iso20022" } else { "nacha_file" };
            run_target(target, &data, i);
        }
    }
    eprintln!("fuzz smoke: {iters} mutated files, {rejected} rejected, none panicked");
    assert!(
        rejected > iters / 2,
        "most mutations must be caught: {rejected} of {iters}"
    );
}

/// Runs the fuzz target `name` on `data`, naming the iteration should it panic.
fn run_target(name: &str, data: &[u8], i: usize) {
    let (_, target) = clearledger::fuzzing::TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap();
    if std::panic::catch_unwind(|| target(data)).is_err() {
        // Kept, to be replayed with `cargo +nightly fuzz run NAME FILE` and made a regression.
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-smoke");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("{name}-{i}"));
        std::fs::write(&file, data).unwrap();
        panic!(
            "the {name} target failed on iteration {i}'s input: {}",
            file.display()
        );
    }
}

/// Inputs that once broke something, kept as named regressions.
#[test]
fn regressions() {
    // A record of 94 bytes followed by a lone CR at the end of the input.
    let mut d = vec![b'1'; 94];
    d.push(b'\r');
    let r = nacha::check(&d[..], ValidateOptions::default()).unwrap();
    assert_eq!(r.summary.records, 1);

    // A camt statement cut off after its last entry: the statement is not handed out, and
    // its entries are not counted as read either (they were, with none handed out).
    let camt = common::corpus().join("iso20022/camt053/bsp-camt.053.001.02.xml");
    let text = std::fs::read_to_string(camt).unwrap();
    let text = &text[..text.rfind("</Ntry>").unwrap() + 7];
    let mut handed = 0;
    let r = clearledger::formats::statement::read(
        clearledger::formats::detect::StatementFormat::Camt053,
        &mut text.as_bytes(),
        Default::default(),
        &mut |_| handed += 1,
    )
    .unwrap();
    assert_eq!((handed, r.statements, r.entries), (0, 0, 0));
    assert!(r.findings.iter().any(|f| f.is_error()));

    // A UTF-16 camt file with an entity left open, then an unpaired surrogate within the
    // same 16 KB: read whole, the decoder's error came first and hid the XML error before
    // it, which 7-byte reads reported (found by cargo-fuzz, `camt`). Now both report the
    // first error in file order.
    let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<Document xmlns=\"urn:iso:std:iso:20022:\
                tech:xsd:camt.053.001.02\"><BkToCstmrStmt><GrpHdr><MsgId>A&amp</MsgId>";
    let mut utf16: Vec<u8> = vec![0xFE, 0xFF];
    for unit in text
        .encode_utf16()
        .chain([0x20; 200])
        .chain([0xDFDF])
        .chain([0x20; 10])
    {
        utf16.extend_from_slice(&unit.to_be_bytes());
    }
    clearledger::fuzzing::camt(&utf16);
    let mut input = &utf16[..];
    let r = clearledger::formats::statement::read(
        clearledger::formats::detect::StatementFormat::Camt053,
        &mut input,
        Default::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    assert!(
        r.findings[0].found.contains("not closed"),
        "{:?}",
        r.findings[0]
    );

    // A pacs.008 transaction whose `Ccy` attribute was misspelt (no currency): `check`
    // rejected the file, `ingest --dry-run` failed on the ledger's column instead, an
    // infrastructure failure (found by cargo-fuzz, `check_vs_dry_run`).
    let sample =
        std::fs::read_to_string(common::samples().join("pacs008-credit-transfers.xml")).unwrap();
    let at = sample.find("<IntrBkSttlmAmt Ccy=").unwrap();
    let broken = format!(
        "{}{}",
        &sample[..at],
        sample[at..].replacen("Ccy=", "Cc,=", 1)
    );
    clearledger::fuzzing::check_vs_dry_run(broken.as_bytes());

    // UTF-8 text behind a UTF-16 byte-order mark: each pair of ASCII bytes decodes to a
    // character of three UTF-8 bytes, and the reader, whose offsets count the decoded text,
    // read more bytes than the file holds, which the target held impossible (found by
    // cargo-fuzz, `iso20022`).
    let mut utf16_mark = vec![0xFE, 0xFF];
    utf16_mark.extend_from_slice(sample.as_bytes());
    let r = clearledger::formats::iso20022::read_file(&utf16_mark[..], &mut |_| {}).unwrap();
    assert!(r.bytes > utf16_mark.len() as u64, "{} bytes", r.bytes);
    clearledger::fuzzing::iso20022(&utf16_mark);
}

/// The differential target called from two threads at once, as the suite's tests call it:
/// each call must compare its own bytes (a file that `check` rejects beside one it passes),
/// never the other thread's.
#[test]
fn check_vs_dry_run_called_from_two_threads_compares_each_its_own_file() {
    let sample =
        std::fs::read_to_string(common::samples().join("pacs008-credit-transfers.xml")).unwrap();
    let broken = sample.replacen("<IntrBkSttlmAmt Ccy=", "<IntrBkSttlmAmt Cc,=", 1);
    std::thread::scope(|s| {
        for data in [&sample, &broken] {
            s.spawn(move || {
                for _ in 0..60 {
                    clearledger::fuzzing::check_vs_dry_run(data.as_bytes());
                }
            });
        }
    });
}

/// The statement files of the corpus (BAI2, MT940/MT942, camt.052/053/054).
fn statement_seeds() -> Vec<Vec<u8>> {
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
    seeds
}

/// The statement readers under the same mutations: no panic, the same findings
/// whole and in 7-byte reads (a quick-xml syntax error's position aside), most mutations
/// caught. `CLEARLEDGER_FUZZ_ITERS` sets the count here too.
#[test]
fn mutated_statement_files_never_panic_and_read_the_same_in_any_chunking() {
    use clearledger::formats::detect::{Detected, StatementFormat, detect};
    use clearledger::formats::statement;
    let iters = iters();
    let seeds = statement_seeds();
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
        if whole.findings.iter().any(|f| f.is_error()) {
            rejected += 1;
        }
        if i % 5 == 0 {
            let target = match kind {
                StatementFormat::Bai2 => "bai2",
                StatementFormat::Mt940 | StatementFormat::Mt942 => "mt940",
                _ => "camt",
            };
            run_target(target, &data, i);
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

/// Every fuzz target of fuzz/ is one of `clearledger::fuzzing::TARGETS`, and each runs
/// here on its seeds (fuzz/seeds) and the corpus files it is seeded with, as they are and
/// mutated, with format detection and the rules file too.
#[test]
fn every_fuzz_target_runs_on_its_seeds_and_their_mutations() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("fuzz/Cargo.toml")).unwrap();
    let mut bins: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .filter_map(|l| l.strip_suffix('"'))
        .filter(|n| *n != "clearledger-fuzz")
        .collect();
    let mut names: Vec<&str> = clearledger::fuzzing::TARGETS
        .iter()
        .map(|(n, _)| *n)
        .collect();
    bins.sort_unstable();
    names.sort_unstable();
    assert_eq!(bins, names, "fuzz/Cargo.toml's targets");
    let mut files = seeds();
    files.extend(statement_seeds());
    for (name, _) in clearledger::fuzzing::TARGETS {
        if let Ok(dir) = std::fs::read_dir(root.join("fuzz/seeds").join(name)) {
            files.extend(dir.map(|e| std::fs::read(e.unwrap().path()).unwrap()));
        }
    }
    let mut rng = Rng(0xF022_7A26);
    let per_target = (iters() / 10).max(20);
    for (name, _) in clearledger::fuzzing::TARGETS {
        for i in 0..per_target {
            let seed = &files[rng.below_usize(files.len())];
            let data = if i == 0 {
                seed.clone()
            } else {
                mutate(&mut rng, seed, &files)
            };
            run_target(name, &data, i);
        }
    }
}

/// What the HTTP target answers its seeds: a file uploaded raw and multipart, a webhook
/// delivery, a read (each is checked by the target itself: no 5xx, problems as problems).
#[test]
fn the_http_target_runs_each_of_its_seeds() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/http_request");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let data = std::fs::read(e.unwrap().path()).unwrap();
        run_target("http_request", &data, n);
        n += 1;
    }
    assert_eq!(n, 9);
}
