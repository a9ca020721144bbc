use super::*;
use crate::findings::{FindingCode, Severity};
use crate::formats::statement::{BalanceKind, EntryStatus, StatementKind};
use std::io::BufReader;
use std::path::PathBuf;

fn corpus(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/iso20022")
        .join(rel)
}

/// Reads `xml` through reads of `chunk` bytes.
fn read_bytes(xml: &[u8], chunk: usize) -> (Vec<Statement>, StatementRead) {
    let mut out = Vec::new();
    let r = read(BufReader::with_capacity(chunk, xml), &mut |s| out.push(s)).unwrap();
    (out, r)
}

fn read_corpus(rel: &str) -> (Vec<Statement>, StatementRead) {
    let bytes = std::fs::read(corpus(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let whole = read_bytes(&bytes, 1 << 16);
    // Positions and results do not move with read sizes.
    for chunk in [1, 7] {
        assert_eq!(
            read_bytes(&bytes, chunk),
            whole,
            "{rel}: {chunk}-byte reads"
        );
    }
    whole
}

#[test]
fn dump_corpus() {
    for dir in ["camt052", "camt053", "camt054", "invalid"] {
        let mut names: Vec<_> = std::fs::read_dir(corpus(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".xml") && !n.contains("pain"))
            .collect();
        names.sort();
        for n in names {
            let (st, r) = read_corpus(&format!("{dir}/{n}"));
            println!(
                "== {dir}/{n}: {} {} stmts {} entries",
                r.format, r.statements, r.entries
            );
            for f in &r.findings {
                println!("   {f}");
            }
            for s in &st {
                println!(
                    "   stmt {} {} {:?} seq {:?} date {:?} {:?}-{:?} copy {} ccy {:?} svcr {:?}",
                    s.id,
                    s.account,
                    s.kind,
                    s.sequence,
                    s.date,
                    s.from_date,
                    s.to_date,
                    s.copy,
                    s.currency,
                    s.servicer
                );
                for b in &s.balances {
                    println!(
                        "     bal {} {:?} {} {} {:?}",
                        b.code, b.kind, b.amount_minor, b.currency, b.date
                    );
                }
                for e in &s.entries {
                    println!(
                        "     ntry {} {} {} cr={} rv={} {:?} {:?} {:?} bank={:?} cust={:?} e2e={:?} btc={:?} rmt={:?} det={}",
                        e.entry_no,
                        e.amount_minor,
                        e.currency,
                        e.credit,
                        e.reversal,
                        e.status,
                        e.booking_date,
                        e.value_date,
                        e.bank_ref,
                        e.customer_ref,
                        e.end_to_end_id,
                        e.bank_tx_code,
                        e.remittance,
                        e.details.len()
                    );
                    for d in &e.details {
                        println!("       det {:?}", d);
                    }
                }
            }
        }
    }
}
