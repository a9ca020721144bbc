//! Synthetic NACHA files of any size, valid in every control total, for performance runs.
//!
//! Deterministic: the same options give the same bytes. The seed also picks the file
//! header's creation time and modifier, so files of different seeds have different
//! file identities.

use super::rules::batch::Totals;
use super::validate::{Direction, routing_check_digit};
use crate::rng::SplitMix64 as Rng;
use std::io::{self, Write};

#[derive(Debug, Clone)]
pub struct GenerateOptions {
    pub entries: u64,
    pub batches: u64,
    pub seed: u64,
    /// Every `addenda_every`-th entry carries one addenda 05 (0: none).
    pub addenda_every: u64,
}

const ODFI: &str = "12104288";
const COMPANY_ID: &str = "1210428821";

/// Writes a valid PPD file with `entries` entries spread over `batches` batches.
pub fn write_nacha<W: Write>(out: W, opts: &GenerateOptions) -> io::Result<()> {
    // Control fields bound the shape: a batch counts at most 999,999 entries and addenda
    // (6 digits), a file 99,999,999 (8 digits), totals 12 digits of cents.
    if opts.entries > 50_000_000 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "at most 50,000,000 entries per file (file control counts have 8 digits)",
        ));
    }
    let min_batches = (opts.entries * 2).div_ceil(999_999);
    let batches = opts
        .batches
        .max(min_batches)
        .max(1)
        .min(opts.entries.max(1));
    let mut g = Generator {
        w: io::BufWriter::with_capacity(1 << 20, out),
        rng: Rng(opts.seed),
        records: 0,
        entry_no: 0,
        addenda_every: opts.addenda_every,
        // Largest amount such that neither total can pass 12 digits.
        amount_max: (999_999_999_999 / opts.entries.max(1)).clamp(1, 99_999_999),
    };
    g.line(&file_header(opts.seed))?;
    let mut file = Totals::default();
    for b in 0..batches {
        let in_batch = opts.entries / batches + u64::from(b < opts.entries % batches);
        file.add(&g.batch(b + 1, in_batch)?);
    }
    let blocks = (g.records + 1).div_ceil(10);
    let t = &file;
    let fc = format!(
        "9{batches:06}{blocks:06}{:08}{:010}{:012}{:012}{:<39}",
        t.entry_addenda_count, t.entry_hash, t.debit_minor, t.credit_minor, ""
    );
    g.line(&fc)?;
    let nines = "9".repeat(94);
    while !g.records.is_multiple_of(10) {
        g.line(&nines)?;
    }
    g.w.flush()
}

/// The file header; the seed picks the creation time and the file ID modifier.
fn file_header(seed: u64) -> String {
    let minutes = seed % 1440;
    let modifier = (b'A' + ((seed / 1440) % 26) as u8) as char;
    format!(
        "101 231380104 1210428822611{:02}{:02}{:02}{}094101{:<23}{:<23}{:<8}",
        29,
        minutes / 60,
        minutes % 60,
        modifier,
        "FEDERAL RESERVE BANK",
        "CLEARLEDGER GENERATOR",
        ""
    )
}

struct Generator<W: Write> {
    w: io::BufWriter<W>,
    rng: Rng,
    records: u64,
    entry_no: u64,
    addenda_every: u64,
    amount_max: u64,
}

impl<W: Write> Generator<W> {
    fn line(&mut self, s: &str) -> io::Result<()> {
        debug_assert_eq!(s.len(), 94, "{s}");
        self.records += 1;
        self.w.write_all(s.as_bytes())?;
        self.w.write_all(b"\n")
    }

    /// One batch of `entries` entries; returns its totals.
    fn batch(&mut self, batch_number: u64, entries: u64) -> io::Result<Totals> {
        let bh = format!(
            "5200{:<16}{:<20}{:<10}PPD{:<10}{:<6}261130   1{}{:07}",
            "CLEARLEDGER GEN", "", COMPANY_ID, "PAYROLL", "", ODFI, batch_number
        );
        self.line(&bh)?;
        let mut t = Totals::default();
        for _ in 0..entries {
            self.entry(&mut t)?;
        }
        let bc = format!(
            "8200{:06}{:010}{:012}{:012}{COMPANY_ID:<10}{:<19}{:<6}{ODFI}{batch_number:07}",
            t.entry_addenda_count, t.entry_hash, t.debit_minor, t.credit_minor, "", ""
        );
        self.line(&bc)?;
        Ok(t)
    }

    /// One entry, with an addenda 05 every `addenda_every` entries, into `t`.
    fn entry(&mut self, t: &mut Totals) -> io::Result<()> {
        self.entry_no += 1;
        let entry_no = self.entry_no;
        let rdfi8 = 10_000_000 + self.rng.below(89_999_999);
        let rdfi8s = format!("{rdfi8:08}");
        let check = routing_check_digit(rdfi8s.as_bytes()).unwrap_or(0);
        let direction = if self.rng.below(2) == 0 {
            Direction::Credit
        } else {
            Direction::Debit
        };
        let code = if direction == Direction::Credit {
            22
        } else {
            27
        };
        let amount = 1 + self.rng.below(self.amount_max);
        let account = self.rng.below(1_000_000_000_000);
        let has_addenda = self.addenda_every > 0 && entry_no.is_multiple_of(self.addenda_every);
        let trace_seq = entry_no % 10_000_000;
        let ed = format!(
            "6{code}{rdfi8s}{check}{account:<17}{amount:010}{:<15}{:<22}  {}{ODFI}{trace_seq:07}",
            format!("ID{entry_no}"),
            format!("RECEIVER {entry_no}"),
            u8::from(has_addenda)
        );
        self.line(&ed)?;
        t.add_entry(rdfi8, direction, amount);
        if has_addenda {
            let ad = format!(
                "705{:<80}0001{trace_seq:07}",
                format!("INVOICE {entry_no} PAID")
            );
            self.line(&ad)?;
            t.add_addenda();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Severity;
    use crate::formats::nacha::check;

    #[test]
    fn generated_files_validate_clean_and_are_deterministic() {
        for (entries, batches) in [(1, 1), (7, 3), (1000, 4), (25, 1), (60_000, 1)] {
            let opts = GenerateOptions {
                entries,
                batches,
                seed: 42,
                addenda_every: 5,
            };
            let mut a = Vec::new();
            write_nacha(&mut a, &opts).unwrap();
            let mut b = Vec::new();
            write_nacha(&mut b, &opts).unwrap();
            assert_eq!(a, b);
            let r = check(&a[..], Default::default()).unwrap();
            let errors: Vec<_> = r
                .summary
                .findings
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .collect();
            assert!(errors.is_empty(), "{entries}/{batches}: {errors:#?}");
            assert_eq!(r.summary.entries, entries);
            assert_eq!(
                r.summary.batches,
                batches.max((entries * 2).div_ceil(999_999))
            );
            assert_eq!(r.summary.addenda, entries / 5);
            assert_eq!(a.len() % 95, 0);
            assert_eq!((a.len() / 95) % 10, 0);
        }
    }
}
