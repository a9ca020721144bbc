//! Synthetic NACHA files of any size, valid in every control total, for performance runs.
//!
//! Deterministic: the same options give the same bytes. The seed also picks the file
//! header's creation time and modifier, so files of different seeds have different
//! file identities.

use super::validate::routing_check_digit;
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
    let mut w = io::BufWriter::with_capacity(1 << 20, out);
    let mut rng = Rng(opts.seed);
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
    // Largest amount such that neither total can pass 12 digits.
    let amount_max = (999_999_999_999 / opts.entries.max(1)).clamp(1, 99_999_999);
    let minutes = opts.seed % 1440;
    let modifier = (b'A' + ((opts.seed / 1440) % 26) as u8) as char;
    let mut records: u64 = 0;
    let line = |w: &mut io::BufWriter<W>, s: &str, records: &mut u64| -> io::Result<()> {
        debug_assert_eq!(s.len(), 94, "{s}");
        *records += 1;
        w.write_all(s.as_bytes())?;
        w.write_all(b"\n")
    };
    let header = format!(
        "101 231380104 1210428822611{:02}{:02}{:02}{}094101{:<23}{:<23}{:<8}",
        29,
        minutes / 60,
        minutes % 60,
        modifier,
        "FEDERAL RESERVE BANK",
        "CLEARLEDGER GENERATOR",
        ""
    );
    line(&mut w, &header, &mut records)?;
    let (mut f_count, mut f_hash, mut f_debit, mut f_credit) = (0u64, 0u64, 0u128, 0u128);
    let mut entry_no: u64 = 0;
    for b in 0..batches {
        let in_batch = opts.entries / batches + u64::from(b < opts.entries % batches);
        let batch_number = b + 1;
        let bh = format!(
            "5200{:<16}{:<20}{:<10}PPD{:<10}{:<6}261130   1{}{:07}",
            "CLEARLEDGER GEN", "", COMPANY_ID, "PAYROLL", "", ODFI, batch_number
        );
        line(&mut w, &bh, &mut records)?;
        let (mut count, mut hash, mut debit, mut credit) = (0u64, 0u64, 0u128, 0u128);
        for _ in 0..in_batch {
            entry_no += 1;
            let rdfi8 = 10_000_000 + rng.below(89_999_999);
            let rdfi8s = format!("{rdfi8:08}");
            let check = routing_check_digit(rdfi8s.as_bytes()).unwrap_or(0);
            let credit_entry = rng.below(2) == 0;
            let code = if credit_entry { 22 } else { 27 };
            let amount = 1 + rng.below(amount_max);
            let account = rng.below(1_000_000_000_000);
            let has_addenda = opts.addenda_every > 0 && entry_no.is_multiple_of(opts.addenda_every);
            let trace_seq = entry_no % 10_000_000;
            let ed = format!(
                "6{code}{rdfi8s}{check}{account:<17}{amount:010}{:<15}{:<22}  {}{ODFI}{trace_seq:07}",
                format!("ID{entry_no}"),
                format!("RECEIVER {entry_no}"),
                u8::from(has_addenda)
            );
            line(&mut w, &ed, &mut records)?;
            count += 1;
            hash = (hash + rdfi8) % 10_000_000_000;
            if credit_entry {
                credit += u128::from(amount);
            } else {
                debit += u128::from(amount);
            }
            if has_addenda {
                let ad = format!(
                    "705{:<80}0001{trace_seq:07}",
                    format!("INVOICE {entry_no} PAID")
                );
                line(&mut w, &ad, &mut records)?;
                count += 1;
            }
        }
        let bc = format!(
            "8200{count:06}{hash:010}{debit:012}{credit:012}{COMPANY_ID:<10}{:<19}{:<6}{ODFI}{batch_number:07}",
            "", ""
        );
        line(&mut w, &bc, &mut records)?;
        f_count += count;
        f_hash = (f_hash + hash) % 10_000_000_000;
        f_debit += debit;
        f_credit += credit;
    }
    let blocks = (records + 1).div_ceil(10);
    let fc = format!(
        "9{batches:06}{blocks:06}{f_count:08}{f_hash:010}{f_debit:012}{f_credit:012}{:<39}",
        ""
    );
    line(&mut w, &fc, &mut records)?;
    let nines = "9".repeat(94);
    while !records.is_multiple_of(10) {
        line(&mut w, &nines, &mut records)?;
    }
    w.flush()
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
