//! The scan ceilings for `benches/e2e.py`: what a bare streaming pass over a
//! file costs on this machine, measured in the same run as `clearledger check`, so that the
//! check's speed is judged as a ratio to them and not against a figure from another day.
//!
//! `cargo run --release --example scan_ceiling -- nacha FILE` — PERFORMANCE.md's NACHA scan:
//! a 1 MiB read buffer, records framed by a memchr line split, and a few fixed-width fields of
//! each entry parsed (record type, transaction code, amount, trace number).
//!
//! `cargo run --release --example scan_ceiling -- xml FILE` — PERFORMANCE.md's quick-xml pass:
//! a streaming read over a pacs.008-like file counting the `CdtTrfTxInf` elements and summing
//! the text of their `IntrBkSttlmAmt`.
//!
//! Prints one JSON line: `{"bytes":N,"secs":S,"records":N,"check":N}` (`check` is a sum the
//! compiler cannot drop).

/// The binary's allocator (src/main.rs), so this measures what ships.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::Read;
use std::time::Instant;

/// Linked for the allocator clearledger runs with (src/lib.rs), so that the ceiling is not
/// slower for a reason the product does not share.
use clearledger as _;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [kind, path] = args.as_slice() else {
        return Err("usage: scan_ceiling nacha|xml FILE".into());
    };
    let start = Instant::now();
    let (bytes, records, check) = match kind.as_str() {
        "nacha" => nacha(path)?,
        "xml" => xml(path)?,
        k => return Err(format!("unknown kind {k}: nacha or xml").into()),
    };
    let secs = start.elapsed().as_secs_f64();
    println!(r#"{{"bytes":{bytes},"secs":{secs:.4},"records":{records},"check":{check}}}"#);
    Ok(())
}

fn digits(s: &[u8]) -> u64 {
    s.iter()
        .fold(0u64, |n, &b| n * 10 + u64::from(b.wrapping_sub(b'0') % 10))
}

fn nacha(path: &str) -> std::io::Result<(u64, u64, u64)> {
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut filled, mut bytes, mut records, mut check) = (0usize, 0u64, 0u64, 0u64);
    loop {
        let n = file.read(&mut buf[filled..])?;
        bytes += n as u64;
        filled += n;
        let mut at = 0;
        while let Some(i) = memchr::memchr(b'\n', &buf[at..filled]) {
            let line = &buf[at..at + i];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.len() == 94 {
                records += 1;
                if line[0] == b'6' {
                    check = check
                        .wrapping_add(digits(&line[1..3]))
                        .wrapping_add(digits(&line[29..39]))
                        .wrapping_add(digits(&line[79..94]));
                }
            }
            at += i + 1;
        }
        if n == 0 {
            return Ok((bytes, records, check));
        }
        buf.copy_within(at..filled, 0);
        filled -= at;
    }
}

fn xml(path: &str) -> Result<(u64, u64, u64), Box<dyn std::error::Error>> {
    use quick_xml::events::Event;
    let file = std::fs::File::open(path)?;
    let bytes = file.metadata()?.len();
    let mut reader =
        quick_xml::Reader::from_reader(std::io::BufReader::with_capacity(1 << 20, file));
    let mut buf = Vec::with_capacity(4096);
    let (mut records, mut check, mut in_amount) = (0u64, 0u64, false);
    loop {
        match reader.read_event_into(&mut buf)? {
            Event::Start(e) => match e.local_name().into_inner().as_bytes() {
                b"CdtTrfTxInf" => records += 1,
                b"IntrBkSttlmAmt" => in_amount = true,
                _ => {}
            },
            Event::Text(t) if in_amount => {
                check = check.wrapping_add(digits(t.as_ref().as_bytes()));
                in_amount = false;
            }
            Event::End(_) => in_amount = false,
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    Ok((bytes, records, check))
}
