//! Synthetic MT940 files of any size that the reader accepts without a finding: `statements`
//! messages in the FIN envelope (`{1:}{2:O940…}{4:` … `-}{5:}`), spread round-robin over
//! [`ACCOUNTS`] accounts in EUR, each `:20:` `:25:` `:28C:` `:60F:`, `entries_per_statement`
//! `:61:` (each with its `:86:`, some with supplementary details, a few reversals) and
//! `:62F:` `:64:`. Each statement's `:60F:` is the `:62F:` of the account's statement before
//! (the balance chain holds), statement numbers follow one another per account and each
//! statement is a day after the account's previous one (numbers wrap at 99999, dates every
//! 10,000 days: no gap is reported and every date stays within the century window).
//! Deterministic per seed; memory stays constant whatever the size (the closing balance is
//! written after the entries, so one pass suffices). A statement holds at most
//! `ENTRIES_PER_STATEMENT_MAX` (200,000) entries to be read
//! without a finding.

use crate::rng::SplitMix64 as Rng;
use chrono::{Datelike, Days, NaiveDate};
use std::io::{self, Write};

/// Accounts the statements are spread over.
pub const ACCOUNTS: u64 = 4;

const CREDIT_TYPES: &[&str] = &["NTRF", "NMSC", "NDDT", "S051"];
const DEBIT_TYPES: &[&str] = &["NTRF", "NCHK", "NDDT", "FCHG", "S058"];

/// `C`/`D` and a balance of `amount` minor units (2 decimals), as `:60F:` writes it.
fn balance(tag: &str, date: NaiveDate, amount: i64) -> String {
    let mark = if amount < 0 { 'D' } else { 'C' };
    let a = amount.unsigned_abs();
    format!(
        ":{tag}:{mark}{:02}{:02}{:02}EUR{},{:02}",
        date.year() % 100,
        date.month(),
        date.day(),
        a / 100,
        a % 100
    )
}

/// Writes a valid MT940 file (see the module doc).
pub fn generate_mt940(
    statements: u64,
    entries_per_statement: u64,
    seed: u64,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    let mut rng = Rng(seed ^ 0x6D74_3934_3000_0000);
    let base = NaiveDate::from_ymd_opt(2026, 3, 2).unwrap_or_default();
    // The last closing balance of each account: the next statement's opening.
    let mut closing: Vec<i64> = (0..ACCOUNTS)
        .map(|_| rng.below(200_000_000) as i64 - 50_000_000)
        .collect();
    let ref_base = seed % 100_000;
    for k in 0..statements {
        let acct = k % ACCOUNTS;
        let round = k / ACCOUNTS;
        let number = round % 99_999 + 1;
        let date = base
            .checked_add_days(Days::new(round % 10_000))
            .unwrap_or(base);
        let (yy, mm, dd) = (date.year() % 100, date.month(), date.day());
        writeln!(
            w,
            "{{1:F01CLRLNL2AAXXX{:04}{:06}}}{{2:O9401800{yy:02}{mm:02}{dd:02}CLRLNL2AAXXX{:04}{:06}{yy:02}{mm:02}{dd:02}1800N}}{{4:",
            k % 10_000,
            k % 1_000_000,
            k % 10_000,
            k % 1_000_000
        )?;
        writeln!(w, ":20:ST{ref_base:05}{k:09}")?;
        writeln!(w, ":25:NL{:02}CLRL{:010}", 10 + acct, 4_000_000_000 + acct)?;
        writeln!(w, ":28C:{number:05}/1")?;
        let opening = closing[acct as usize];
        writeln!(w, "{}", balance("60F", date, opening))?;
        let mut amount_sum: i64 = opening;
        for i in 0..entries_per_statement {
            amount_sum += write_entry(&mut w, &mut rng, i, acct, round, (yy, mm, dd))?;
        }
        closing[acct as usize] = amount_sum;
        writeln!(w, "{}", balance("62F", date, amount_sum))?;
        writeln!(w, "{}", balance("64", date, amount_sum))?;
        writeln!(w, "-}}{{5:{{CHK:{:012X}}}}}", rng.next_u64() >> 16)?;
    }
    w.flush()
}

/// Writes entry `i` of a statement (its `:61:`, maybe a second line, its `:86:`), and
/// gives its signed amount.
fn write_entry(
    w: &mut impl Write,
    rng: &mut Rng,
    i: u64,
    acct: u64,
    round: u64,
    (yy, mm, dd): (i32, u32, u32),
) -> io::Result<i64> {
    let amount = 1 + rng.below(1_000_000) as i64;
    let credit = rng.below(2) == 0;
    // Now and then a reversal: RD (of a debit) is a credit, RC (of a credit) a debit.
    let reversal = rng.below(50) == 0;
    let mark = match (credit, reversal) {
        (true, false) => "C",
        (false, false) => "D",
        (true, true) => "RD",
        (false, true) => "RC",
    };
    let ty = if credit {
        CREDIT_TYPES[rng.below_usize(CREDIT_TYPES.len())]
    } else {
        DEBIT_TYPES[rng.below_usize(DEBIT_TYPES.len())]
    };
    let invoice = rng.below(1_000_000_000);
    let cust = if rng.below(4) == 0 {
        "NONREF".to_string()
    } else {
        format!("INV{invoice}")
    };
    writeln!(
        w,
        ":61:{yy:02}{mm:02}{dd:02}{mm:02}{dd:02}{mark}{},{:02}{ty}{cust}//B{acct}{:06}{i:07}",
        amount / 100,
        amount % 100,
        round % 1_000_000
    )?;
    if rng.below(4) == 0 {
        writeln!(w, "/OCMT/EUR{},{:02}/", amount / 100, amount % 100)?;
    }
    if credit {
        writeln!(
            w,
            ":86:INCOMING PAYMENT INVOICE {invoice} / ORDER {}",
            i + 1
        )?;
    } else {
        writeln!(w, ":86:OUTGOING PAYMENT, FEES INCL. INVOICE {invoice}")?;
    }
    if rng.below(3) == 0 {
        writeln!(w, "SEPA CREDIT TRANSFER CUSTOMER {}", 10_000 + acct)?;
    }
    Ok(if credit { amount } else { -amount })
}
