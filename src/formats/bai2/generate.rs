//! Synthetic BAI2 files of any size that the reader accepts without a finding: one group
//! (final previous-day, USD), `accounts` accounts of `entries_per_account` details each,
//! every control total and count right, `010` + credits − debits = `015`. Deterministic
//! per seed (the seed also makes the file id). Each account is drawn twice from its own
//! seed (once for its totals, which the `03` carries before the details, once to write),
//! so memory stays constant whatever the size.

use crate::rng::SplitMix64 as Rng;
use std::io::{self, Write};

const CREDIT_CODES: &[&str] = &["142", "165", "175", "195", "275", "399"];
const DEBIT_CODES: &[&str] = &["451", "475", "495", "555", "699"];

struct Detail {
    code: &'static str,
    amount: u64,
    credit: bool,
    /// Funds type `V` with a value date, else `Z`.
    value_dated: bool,
    /// The text continues in an `88`.
    continued: bool,
    customer_ref: u64,
}

fn detail(rng: &mut Rng) -> Detail {
    let credit = rng.below(2) == 0;
    let code = if credit {
        CREDIT_CODES[rng.below_usize(CREDIT_CODES.len())]
    } else {
        DEBIT_CODES[rng.below_usize(DEBIT_CODES.len())]
    };
    Detail {
        code,
        amount: 1 + rng.below(1_000_000),
        credit,
        value_dated: rng.below(7) == 0,
        continued: rng.below(5) == 0,
        customer_ref: rng.below(1_000_000_000),
    }
}

fn account_rng(seed: u64, k: u64) -> Rng {
    let mut r = Rng(seed ^ k.wrapping_mul(0xD1B5_4A32_D192_ED03));
    r.next_u64();
    r
}

/// Writes a valid BAI2 file: 01, 02, per account 03 + 88 (summaries), its 16s (some with
/// an 88 text), 49; then 98 and 99.
pub fn generate_bai2(
    accounts: u64,
    entries_per_account: u64,
    seed: u64,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    writeln!(
        w,
        "01,121000248,CLEARLEDGER,260302,0600,{},,,2/",
        seed % 1_000_000
    )?;
    writeln!(w, "02,CLEARLEDGER,121000248,1,260301,2400,USD,2/")?;
    let mut group_total: i128 = 0;
    let mut group_records: u64 = 2; // 02 and 98
    for k in 0..accounts {
        // First pass: the totals the 03 carries.
        let mut rng = account_rng(seed, k);
        let opening = rng.below(2_000_000_000) as i64 - 1_000_000_000;
        let (mut credits, mut debits, mut n_cr, mut n_dr, mut n_88) =
            (0u64, 0u64, 0u64, 0u64, 0u64);
        for _ in 0..entries_per_account {
            let d = detail(&mut rng);
            if d.credit {
                credits += d.amount;
                n_cr += 1;
            } else {
                debits += d.amount;
                n_dr += 1;
            }
            n_88 += u64::from(d.continued);
        }
        let closing = opening + credits as i64 - debits as i64;
        writeln!(
            w,
            "03,{},USD,010,{opening:+},,,015,{closing:+},,,040,{opening},,,045,{closing},,/",
            4_000_000_000u64 + k
        )?;
        writeln!(w, "88,100,{credits},{n_cr},,400,{debits},{n_dr},/")?;
        write_details(&mut w, seed, k, entries_per_account)?;
        let total =
            2 * i128::from(opening) + 2 * i128::from(closing) + 2 * i128::from(credits + debits);
        let records = 3 + entries_per_account + n_88;
        writeln!(w, "49,{total},{records}/")?;
        group_total += total;
        group_records += records;
    }
    writeln!(w, "98,{group_total},{accounts},{group_records}/")?;
    writeln!(w, "99,{group_total},1,{}/", group_records + 2)?;
    w.flush()
}

/// The `16`s of account `k` (some with an `88` text): the second pass, its details drawn
/// again from the same seed as the first that summed them.
fn write_details(
    w: &mut impl Write,
    seed: u64,
    k: u64,
    entries_per_account: u64,
) -> io::Result<()> {
    let mut rng = account_rng(seed, k);
    rng.below(2_000_000_000);
    for i in 0..entries_per_account {
        let d = detail(&mut rng);
        let funds = if d.value_dated { "V,260301," } else { "Z" };
        let text = if d.credit {
            "INCOMING PAYMENT"
        } else {
            "OUTGOING PAYMENT, FEES INCL."
        };
        if d.continued {
            writeln!(
                w,
                "16,{},{},{funds},B{k:08}{i:08},C{},{text}",
                d.code, d.amount, d.customer_ref
            )?;
            writeln!(w, "88,INVOICE {} / ORDER {}/", d.customer_ref, i + 1)?;
        } else {
            writeln!(
                w,
                "16,{},{},{funds},B{k:08}{i:08},C{},{text}/",
                d.code, d.amount, d.customer_ref
            )?;
        }
    }
    Ok(())
}
