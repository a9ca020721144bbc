//! Every MT940/MT942 file of the corpus, with the facts we assert.
use super::*;

#[test]
fn dump_corpus() {
    for dir in ["mt940", "mt942"] {
        let mut files: Vec<_> = std::fs::read_dir(format!("../shared/corpus/{dir}"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sta"))
            .collect();
        files.sort();
        for p in files {
            let mut sts = Vec::new();
            let r = read(
                std::io::BufReader::new(std::fs::File::open(&p).unwrap()),
                &mut |s| sts.push(s),
            )
            .unwrap();
            println!(
                "=== {} format={} statements={} entries={}",
                p.display(),
                r.format,
                r.statements,
                r.entries
            );
            for s in &sts {
                println!(
                    "  ST {} {} acct={} seq={:?} ccy={:?} date={:?} serv={:?} entries={} bal={:?}",
                    s.format,
                    s.id,
                    s.account,
                    s.sequence,
                    s.currency,
                    s.date,
                    s.servicer,
                    s.entries.len(),
                    s.balances
                        .iter()
                        .map(|b| (b.code.clone(), b.amount_minor, b.currency.clone()))
                        .collect::<Vec<_>>()
                );
                for e in &s.entries {
                    println!(
                        "    E{} {} {} c={} r={} {:?} b={:?} v={:?} cref={:?} bref={:?} tx={:?} rem={:?}",
                        e.entry_no,
                        e.amount_minor,
                        e.currency,
                        e.credit,
                        e.reversal,
                        e.status,
                        e.booking_date,
                        e.value_date,
                        e.customer_ref,
                        e.bank_ref,
                        e.bank_tx_code,
                        e.remittance
                    );
                }
            }
            for f in &r.findings {
                println!("  F {f}");
            }
        }
    }
}

#[test]
fn dump_compact() {
    for dir in ["mt940", "mt942"] {
        let mut files: Vec<_> = std::fs::read_dir(format!("../shared/corpus/{dir}"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sta"))
            .collect();
        files.sort();
        for p in files {
            let r = read(
                std::io::BufReader::new(std::fs::File::open(&p).unwrap()),
                &mut |_| {},
            )
            .unwrap();
            let v: Vec<_> = r
                .findings
                .iter()
                .map(|f| {
                    format!(
                        "({:?}, \"{}\", {}, {})",
                        f.severity,
                        f.code,
                        f.position.line(),
                        f.position.column().unwrap_or(0)
                    )
                })
                .collect();
            println!("{}: {}", p.display(), v.join(", "));
        }
    }
}
