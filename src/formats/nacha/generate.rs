//! Synthetic NACHA files of any size, valid in every control total, for performance runs.
//!
//! Deterministic: the same options give the same bytes. The seed also picks the file
//! header's creation time and modifier, so files of different seeds have different
//! file identities.

use super::rules::batch::Totals;
use super::validate::{Direction, routing_check_digit};
use crate::rng::SplitMix64 as Rng;
use std::io::{self, Write};

/// What [`write_nacha`] writes: how many entries in how many batches, from which seed.
#[derive(Debug, Clone)]
pub struct GenerateOptions {
    /// Entry detail records to write, across batches.
    pub entries: u64,
    /// Batches asked for (more when one would hold more entries than its control counts).
    pub batches: u64,
    /// The seed of the amounts, accounts, names and the file header's creation time and
    /// modifier: the same seed, the same bytes.
    pub seed: u64,
    /// Every `addenda_every`-th entry carries one addenda 05 (0: none).
    pub addenda_every: u64,
}

const ODFI: &str = "12104288";
const COMPANY_ID: &str = "1210428821";

/// Records a NACHA file holds at most: the file control counts blocks of 10 records in 6
/// digits, so 999,999 blocks, padding included.
pub(crate) const RECORDS_MAX: u64 = 999_999 * 10;
/// Batches a NACHA file holds at most: the file control's batch count has 6 digits.
pub(crate) const BATCHES_MAX: u64 = 999_999;
/// Entries the generator puts in one batch at most, so that its entries and addenda (one
/// per entry at most) fit the batch control's 6-digit count.
const ENTRIES_PER_BATCH_MAX: u64 = 999_999 / 2;
/// The largest total of a file's (and so of a batch's) debits or credits: 12 digits.
const TOTAL_MAX: u64 = 999_999_999_999;

/// The file `write_nacha` writes for some options: its batches and records (padding not
/// counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) batches: u64,
    pub(crate) records: u64,
}

/// The shape of the file for `entries` entries, `batches` batches asked for (more when a
/// batch would hold too many) and an addenda every `addenda_every` entries (0: none).
fn shape_of(entries: u64, batches: u64, addenda_every: u64) -> Shape {
    let batches = batches
        .max(entries.div_ceil(ENTRIES_PER_BATCH_MAX))
        .max(1)
        .min(entries.max(1));
    let addenda = entries.checked_div(addenda_every).unwrap_or(0);
    Shape {
        batches,
        // File header and control, a header and control per batch, entries, addenda.
        records: entries
            .saturating_add(addenda)
            .saturating_add(batches.saturating_mul(2))
            .saturating_add(2),
    }
}

/// The most entries a NACHA file holds with `batches` batches and an addenda every
/// `addenda_every` entries: [`RECORDS_MAX`] records in all.
pub(crate) fn max_entries(batches: u64, addenda_every: u64) -> u64 {
    // Records grow with entries: the largest count that fits, by bisection.
    let (mut fits, mut over) = (0u64, RECORDS_MAX + 1);
    while over - fits > 1 {
        let mid = fits + (over - fits) / 2;
        if shape_of(mid, batches, addenda_every).records <= RECORDS_MAX {
            fits = mid;
        } else {
            over = mid;
        }
    }
    fits
}

/// The file's shape if every count and total of it fits its field; else what is asked
/// beyond what NACHA holds, naming the limit. Amounts are drawn small enough that neither
/// total can pass 12 digits, whatever the count.
pub(crate) fn shape(opts: &GenerateOptions) -> Result<Shape, String> {
    let s = shape_of(opts.entries, opts.batches, opts.addenda_every);
    if s.batches > BATCHES_MAX {
        return Err(format!(
            "--batches {}: a NACHA file holds at most {BATCHES_MAX} batches (the file \
             control's batch count has 6 digits)",
            opts.batches
        ));
    }
    if s.records > RECORDS_MAX {
        let most = max_entries(opts.batches, opts.addenda_every);
        return Err(format!(
            "--entries {}: a NACHA file holds at most {RECORDS_MAX} records (999,999 blocks \
             of 10: the file control's block count has 6 digits), so at most {most} entries \
             with --batches {} and --addenda-every {}",
            opts.entries, opts.batches, opts.addenda_every
        ));
    }
    Ok(s)
}

/// Writes a valid PPD file with `entries` entries spread over `batches` batches (more if
/// a batch would hold more than its control counts). Options beyond what a NACHA file
/// holds (`shape`) are refused before anything is written.
pub fn write_nacha<W: Write>(out: W, opts: &GenerateOptions) -> io::Result<()> {
    let Shape { batches, .. } =
        shape(opts).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let mut g = Generator {
        w: io::BufWriter::with_capacity(1 << 20, out),
        rng: Rng(opts.seed),
        records: 0,
        entry_no: 0,
        addenda_every: opts.addenda_every,
        // Largest amount such that neither total can pass 12 digits.
        amount_max: (TOTAL_MAX / opts.entries.max(1)).clamp(1, 99_999_999),
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
        // A count or total wider than its field would make a longer record: never written.
        if s.len() != 94 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "a generated record of {} bytes instead of 94 (a field overflowed): {s}",
                    s.len()
                ),
            ));
        }
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
            assert_eq!(r.summary.batches, batches.max(entries.div_ceil(499_999)));
            assert_eq!(r.summary.addenda, entries / 5);
            assert_eq!(a.len() % 95, 0);
            assert_eq!((a.len() / 95) % 10, 0);
        }
    }

    fn opts(entries: u64, batches: u64, addenda_every: u64) -> GenerateOptions {
        GenerateOptions {
            entries,
            batches,
            seed: 1,
            addenda_every,
        }
    }

    #[test]
    fn every_count_fits_its_field_or_the_options_are_refused() {
        // The most entries 9,999,990 records hold: header, control, 2 per batch (at least
        // one per 499,999 entries), entries, their addenda. 9,090,864 + 909,086 addenda +
        // 19 batches × 2 + 2 = 9,999,990.
        assert_eq!(max_entries(1, 10), 9_090_864);
        assert_eq!(max_entries(1, 0), 9_999_948);
        assert_eq!(max_entries(1, 1), 4_999_984);
        assert_eq!(max_entries(20, 10), 9_090_862);
        assert_eq!(max_entries(999_999, 0), 7_999_990);
        for (batches, every) in [(1, 10), (1, 0), (1, 1), (20, 10), (999_999, 0), (7, 3)] {
            let most = max_entries(batches, every);
            let s = shape(&opts(most, batches, every)).unwrap();
            assert!(s.records <= RECORDS_MAX);
            // Block count (6 digits), file entry/addenda count (8 digits), batch count.
            assert!((s.records).div_ceil(10) <= 999_999);
            assert!(s.records < 100_000_000 && s.batches <= BATCHES_MAX);
            // A batch's entries and addenda (6 digits), one addenda per entry at most.
            assert!(2 * most.div_ceil(s.batches) <= 999_999, "{batches}/{every}");
            // Each total under 12 digits: every amount is at most the bound drawn from.
            let amount_max = (TOTAL_MAX / most).clamp(1, 99_999_999);
            assert!(u128::from(amount_max) * u128::from(most) <= u128::from(TOTAL_MAX));
            assert!(shape(&opts(most + 1, batches, every)).is_err());
        }
        // A case once found wrong: 10 M entries in 20 batches wrote 1,100,005 blocks.
        assert_eq!(
            shape(&opts(10_000_000, 20, 10)),
            Err(
                "--entries 10000000: a NACHA file holds at most 9999990 records (999,999 \
                 blocks of 10: the file control's block count has 6 digits), so at most \
                 9090862 entries with --batches 20 and --addenda-every 10"
                    .to_string()
            )
        );
        assert_eq!(
            shape(&opts(2_000_000, 1_000_000, 0)),
            Err(
                "--batches 1000000: a NACHA file holds at most 999999 batches (the file \
                 control's batch count has 6 digits)"
                    .to_string()
            )
        );
        let mut out = Vec::new();
        let e = write_nacha(&mut out, &opts(50_000_000, 1, 10)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(out.is_empty(), "nothing written");
        // 999,999 entries with an addenda each in 2 batches made one batch count 1,000,000
        // entries and addenda: 3 batches now, none counting over 999,999.
        assert_eq!(
            shape(&opts(999_999, 2, 1)),
            Ok(Shape {
                batches: 3,
                records: 2 * 999_999 + 2 * 3 + 2
            })
        );
    }
}
