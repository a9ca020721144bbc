//! A seeded reconciliation scenario (`clearledger generate recon`): our payments
//! and the bank's statements of one account ([`ACCOUNT`]) over November 2026, with breaks
//! of every kind planted at seeded positions, and the items a reconciliation of them must
//! give (`expected.jsonl`, `expected-summary.json`).
//!
//! Pure: each file is written to a `Write`, streamed (nothing of a file is held: every
//! line is computed from the seed and its slot). What is kept is one byte per slot (its
//! role), so 1 M payments take about 1 MB besides the buffers.
//!
//! ## The files
//! - [`PACS008`]: our outgoing credit transfers, one pacs.008.001.08 message, each
//!   transaction dated by its own `IntrBkSttlmDt`, a unique EndToEndId (`E2E-{seed}-{slot}`),
//!   most with a UETR (UUID v4 text).
//! - [`PAIN001`]: payment-information batches (`PMTINF-{seed}-{slot}`) of 2–5 transfers,
//!   from the same account, dated by `ReqdExctnDt`.
//! - [`PACS004`]: the returns we recorded (`RTR-{seed}-{slot}`), quoting the original's
//!   OrgnlEndToEndId and, when it had one, OrgnlUETR.
//! - [`CAMT053`]: the bank's camt.053.001.08, one statement a day, balances chaining
//!   (opening + booked EUR entries = closing; a pending entry is not in it); every entry has
//!   a unique `AcctSvcrRef` (`BK{seed}-{slot}-{n}`), so its entry key is `ref:{AcctSvcrRef}`;
//!   a payment's entry quotes its UETR and/or EndToEndId in `TxDtls/Refs`, mostly on its
//!   date, some 1–2 days later.
//! - [`RULES`]: the rules to reconcile with (tolerance `sepa-fee`: 2.50 EUR below).
//! - [`EXPECTED`]: one JSON object per item, `{"outcome", "our", "their", "matched_by"}`:
//!   our members by EndToEndId (a pacs.004 return, which has none of its own, by its
//!   RtrId), their members by AcctSvcrRef, each sorted; the level that ties them (`null`
//!   for an item of one side); a duplicate or a return also names the payment it repeats
//!   or returns (`refers_to`, its EndToEndId). [`SUMMARY`]: the number of items per
//!   outcome, every outcome named.
//!
//! ## What is planted
//! `k = max(3, payments / 100)` of each, at seeded slots: `missing_ours` (a bank fee line,
//! no reference), `missing_theirs` (a payment of days 1–20, no entry), `expected` (a payment
//! of days 29–30, no entry), `amount_mismatch` (booked 3.00–49.96 more or less),
//! `matched_within_tolerance` (booked 1.00–2.48 more out), `date_mismatch` (booked 8–10
//! days later), `currency_mismatch` (booked in USD), `duplicate_theirs` (booked twice),
//! `returned` (a CRDT return entry with `RtrInf/Rsn/Cd` quoting a payment's EndToEndId, no
//! pacs.004 for it), returns `matched` against our pacs.004 (by `original_uetr` or
//! `original_end_to_end_id`), `many_to_one` (a pain.001 PmtInf booked as one entry quoting
//! `NtryDtls/Btch/PmtInfId`), `one_to_many` (one entry of 2–3 `TxDtls`, each quoting a
//! payment and its amount), `ambiguous` (2–3 identical NOTPROVIDED postings and as many
//! identical reference-less entries), `provisional` (a PDNG entry), and `matched` by
//! `amount_date` (a NOTPROVIDED posting and a reference-less entry of its amount). Every
//! other payment is booked as it should be: `matched` by `uetr` or `end_to_end_id`.
//!
//! ## No accidental match
//! The lines left to the amount passes (`amount_date`, the bounded `amount_sum` search) are
//! the missing_theirs, expected, ambiguous and amount-date postings, and the fee, ambiguous
//! and amount-date entries. Their amounts (absolute, minor units) are unique per slot and
//! odd: ours ≡ 1 (mod 8), the fee lines ≡ 5 (mod 8), an ambiguous group's and an amount-date
//! pair's amount ≡ 1 on both sides; every other amount is ≡ 0 (mod 4). So no two lines
//! share an amount but the planted ones, and no 2 or 3 lines of one side sum to a line of
//! the other: sums of two or three of ours are ≡ 2 or 3, of theirs ≡ 2, 3, 6 or 7, never
//! 1 or 5 (the rules' `max_members` is 3, its default).
//!
//! ## The code
//! This file plans the scenario (the role of every slot, what each slot draws) and writes
//! the rules; `ours.rs` writes our three files, `camt.rs` the bank's statements,
//! `expected.rs` the items they must give.

mod camt;
mod expected;
mod ours;
#[cfg(test)]
mod tests;

use crate::reconcile::Outcome;
use crate::rng::SplitMix64;
use std::fmt;
use std::io::{self, Write};

/// Our account: every payment's debtor, the statements' account.
pub(crate) const ACCOUNT: &str = "DE89370400440532013000";
// The ledger account our payments move (`account map --ledger-account`) is
// `acct:DE89370400440532013000`.
/// Our bank (the debtor agent, the statements' servicer).
pub(crate) const BANK_BIC: &str = "COBADEFFXXX";
// The period: every payment and every entry is dated within 2026-11-01 to 2026-11-30.
const MONTH: &str = "2026-11";
const DAYS: u32 = 30;

/// The fewest payments a scenario has (so that every break fits, a few of each).
pub(crate) const MIN_PAYMENTS: u64 = 200;
/// The most (slots are numbered in 32 bits, amounts stay far from any limit).
pub(crate) const MAX_PAYMENTS: u64 = 100_000_000;

pub(crate) const PACS008: &str = "ours-pacs008.xml";
pub(crate) const PAIN001: &str = "ours-pain001.xml";
pub(crate) const PACS004: &str = "ours-pacs004.xml";
pub(crate) const CAMT053: &str = "bank-camt053.xml";
pub(crate) const RULES: &str = "rules.toml";
pub(crate) const EXPECTED: &str = "expected.jsonl";
pub(crate) const SUMMARY: &str = "expected-summary.json";
/// Every file written, in the order `write` knows them.
pub(crate) const FILES: [&str; 7] = [PACS008, PAIN001, PACS004, CAMT053, RULES, EXPECTED, SUMMARY];

/// What a slot is. Slots are in date order (slot `s` is of day `1 + 30 s / slots`); a
/// group (a head and the members after it) is of one day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A payment booked as it should be.
    Ordinary,
    /// A bank fee line (no payment).
    Fee,
    /// A pending bank line (no payment).
    Provisional,
    MissingTheirs,
    Expected,
    AmountMismatch,
    Tolerance,
    DateMismatch,
    CurrencyMismatch,
    /// Booked twice.
    Duplicate,
    /// Booked, then returned by the bank; we never posted the return.
    Returned,
    /// Booked, then returned; our pacs.004 records the return.
    ReturnMatched,
    /// NOTPROVIDED, matched by amount and date.
    AmountDate,
    /// Payments booked as one itemised entry (`one_to_many`).
    SplitHead,
    SplitMember,
    /// A pain.001 PmtInf booked as one entry (`many_to_one`).
    BatchHead,
    BatchMember,
    /// Identical NOTPROVIDED payments and as many identical reference-less entries.
    AmbiguousHead,
    AmbiguousMember,
}

impl Role {
    /// A payment of ours in the pacs.008.
    fn in_pacs008(self) -> bool {
        !matches!(
            self,
            Role::Fee | Role::Provisional | Role::BatchHead | Role::BatchMember
        )
    }
    fn not_provided(self) -> bool {
        matches!(
            self,
            Role::AmountDate | Role::AmbiguousHead | Role::AmbiguousMember
        )
    }
}

/// A slot's drawn attributes.
struct Pay {
    /// Minor units moved (positive).
    amount: i64,
    /// The UETR's random bits, when it has one.
    uetr: Option<(u64, u64)>,
    /// Whether the bank's entry quotes the UETR (else the EndToEndId alone).
    quote_uetr: bool,
    /// Days from the payment to its booking.
    lag: u32,
    /// Days from the booking to the second entry (duplicate, return).
    later: u32,
    /// The bank's amount minus ours (amount mismatch, tolerance), minor units moved.
    extra: i64,
    creditor: usize,
    reason: &'static str,
}

/// One item of `expected.jsonl`.
struct Expected {
    outcome: Outcome,
    matched_by: Option<&'static str>,
    /// Our members by EndToEndId (a return by its RtrId), sorted.
    ours: Vec<String>,
    /// Their members by AcctSvcrRef, sorted.
    theirs: Vec<String>,
    refers_to: Option<String>,
}

/// One bank entry of a day.
#[derive(Clone, Copy)]
struct Ent {
    slot: usize,
    /// 1: the payment's entry (or the bank's own line); 2: its duplicate or return.
    n: u8,
    amount: i64,
    credit: bool,
    usd: bool,
    pending: bool,
}

const CREDITORS: usize = 64;
const RETURN_REASONS: [&str; 4] = ["AC04", "AC06", "AM04", "MS03"];

/// `12345` → `123.45`.
struct Amt(i64);

impl fmt::Display for Amt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.0.unsigned_abs();
        if self.0 < 0 {
            f.write_str("-")?;
        }
        write!(f, "{}.{:02}", a / 100, a % 100)
    }
}

/// A planned scenario: the role of every slot; everything else is drawn per slot.
pub(crate) struct Scenario {
    seed: u64,
    payments: u64,
    /// Breaks of each kind.
    k: u64,
    roles: Vec<Role>,
    /// The first slot of day `d` is `day_start[d - 1]`; `day_start[30]` is the slot count.
    day_start: [usize; DAYS as usize + 1],
    slot_seed: u64,
    uetr_mask: u64,
    creditors: Vec<(String, String)>,
}

impl Scenario {
    /// Plans `payments` payments (pacs.008 and pain.001 transfers) for `seed`; refuses a
    /// count outside [`MIN_PAYMENTS`]..=[`MAX_PAYMENTS`].
    pub(crate) fn new(payments: u64, seed: u64) -> Result<Scenario, String> {
        if !(MIN_PAYMENTS..=MAX_PAYMENTS).contains(&payments) {
            return Err(format!(
                "--payments: expected {MIN_PAYMENTS} to {MAX_PAYMENTS}, found {payments}"
            ));
        }
        let k = (payments / 100).max(3);
        let mut rng = SplitMix64(seed ^ 0x7265_636f_6e63_696c);
        let slot_seed = rng.next_u64();
        let uetr_mask = rng.next_u64() & 0xffff_ffff_ffff;
        let mut sizes = |lo: u64, hi: u64| -> Vec<usize> {
            (0..k)
                .map(|_| (lo + rng.below(hi - lo + 1)) as usize)
                .collect()
        };
        let batches = sizes(2, 5);
        let splits = sizes(2, 3);
        let ambiguous = sizes(2, 3);
        let slots = (payments + 2 * k) as usize;
        let mut day_start = [0usize; DAYS as usize + 1];
        for (d, s) in day_start.iter_mut().enumerate() {
            *s = (d * slots).div_ceil(DAYS as usize);
        }
        let creditors = (0..CREDITORS)
            .map(|i| {
                (
                    format!("SUPPLIER {i:02} GMBH"),
                    crate::formats::iso20022::generate::iban_de(rng.next_u64()),
                )
            })
            .collect();
        let mut sc = Scenario {
            seed,
            payments,
            k,
            roles: vec![Role::Ordinary; slots],
            day_start,
            slot_seed,
            uetr_mask,
            creditors,
        };
        sc.plant(&mut rng, [&batches, &splits, &ambiguous])?;
        Ok(sc)
    }

    /// Places `k` breaks of each kind, groups of the sizes drawn (batches, splits,
    /// ambiguous sets), the most constrained first.
    fn plant(&mut self, rng: &mut SplitMix64, groups: [&[usize]; 3]) -> Result<(), String> {
        let k = self.k;
        let [batches, splits, ambiguous] = groups;
        let all = 1..=DAYS;
        for _ in 0..k {
            self.place(rng, Role::Expected, Role::Expected, 1, 29..=DAYS)?;
        }
        for (head, member, sizes) in [
            (Role::BatchHead, Role::BatchMember, batches),
            (Role::SplitHead, Role::SplitMember, splits),
            (Role::AmbiguousHead, Role::AmbiguousMember, ambiguous),
        ] {
            for &n in sizes {
                self.place(rng, head, member, n, all.clone())?;
            }
        }
        for (role, days) in [
            (Role::MissingTheirs, 1..=20),
            (Role::DateMismatch, 1..=20),
            (Role::Returned, 1..=22),
            (Role::ReturnMatched, 1..=22),
            (Role::Duplicate, 1..=27),
            (Role::AmountMismatch, all.clone()),
            (Role::Tolerance, all.clone()),
            (Role::CurrencyMismatch, all.clone()),
            (Role::AmountDate, all.clone()),
            (Role::Fee, all.clone()),
            (Role::Provisional, all.clone()),
        ] {
            for _ in 0..k {
                self.place(rng, role, role, 1, days.clone())?;
            }
        }
        Ok(())
    }

    /// Puts a group of `n` slots (a head, then members) on free slots of one day in `days`.
    fn place(
        &mut self,
        rng: &mut SplitMix64,
        head: Role,
        member: Role,
        n: usize,
        days: std::ops::RangeInclusive<u32>,
    ) -> Result<(), String> {
        let lo = self.day_start[*days.start() as usize - 1];
        let hi = self.day_start[*days.end() as usize];
        for _ in 0..100_000 {
            let h = lo + rng.below_usize(hi - lo);
            if h + n > hi || self.day(h) != self.day(h + n - 1) {
                continue;
            }
            if self.roles[h..h + n].iter().all(|&r| r == Role::Ordinary) {
                self.roles[h] = head;
                for r in &mut self.roles[h + 1..h + n] {
                    *r = member;
                }
                return Ok(());
            }
        }
        Err(format!(
            "cannot place every break among {} payments: too few",
            self.payments
        ))
    }

    /// The day of November of slot `s` (1..=30).
    fn day(&self, s: usize) -> u32 {
        1 + (s as u64 * u64::from(DAYS) / self.roles.len() as u64) as u32
    }

    /// The head of the group slot `s` is in (itself for a head or a single).
    fn head(&self, s: usize) -> usize {
        let mut h = s;
        while h > 0
            && matches!(
                self.roles[h],
                Role::SplitMember | Role::BatchMember | Role::AmbiguousMember
            )
        {
            h -= 1;
        }
        h
    }

    /// The slots of the group headed by `h`.
    fn group(&self, h: usize) -> std::ops::Range<usize> {
        let member = match self.roles[h] {
            Role::SplitHead => Role::SplitMember,
            Role::BatchHead => Role::BatchMember,
            Role::AmbiguousHead => Role::AmbiguousMember,
            _ => return h..h + 1,
        };
        let mut end = h + 1;
        while end < self.roles.len() && self.roles[end] == member {
            end += 1;
        }
        h..end
    }

    /// An amount left to the amount passes: unique per slot, ≡ 1 (ours) or 5 (the bank's
    /// own lines) mod 8.
    fn odd_amount(&self, s: usize, theirs: bool) -> i64 {
        let jitter = SplitMix64(self.slot_seed ^ !(s as u64)).next_u64() % 8;
        8 * (1_250 + 8 * s as i64 + jitter as i64) + if theirs { 5 } else { 1 }
    }

    fn pay(&self, s: usize) -> Pay {
        let mut r = SplitMix64(self.slot_seed ^ (s as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
        let (a, u1, u2, f, l, p, c) = (
            r.next_u64(),
            r.next_u64(),
            r.next_u64(),
            r.next_u64(),
            r.next_u64(),
            r.next_u64(),
            r.next_u64(),
        );
        let role = self.roles[s];
        let day = self.day(s);
        let amount = match role {
            Role::MissingTheirs | Role::Expected | Role::AmountDate => self.odd_amount(s, false),
            Role::Fee | Role::Provisional => self.odd_amount(s, true),
            Role::AmbiguousHead | Role::AmbiguousMember => self.odd_amount(self.head(s), false),
            _ => 4 * (2_500 + (a % 250_000) as i64),
        };
        let lag = match role {
            Role::DateMismatch => 8 + (l % 3) as u32,
            Role::AmbiguousHead | Role::AmbiguousMember | Role::Fee | Role::Provisional => 0,
            Role::Duplicate | Role::AmountDate | Role::BatchHead => (l % 2) as u32,
            _ => match l % 10 {
                0..=6 => 0,
                7 | 8 => 1,
                _ => 2,
            },
        }
        .min(DAYS - day);
        let later = match role {
            Role::Duplicate => 1 + (p % 2) as u32,
            Role::Returned | Role::ReturnMatched => 2 + (p % 4) as u32,
            _ => 0,
        };
        let extra = match role {
            Role::AmountMismatch => {
                let m = 4 * (75 + (p % 1_175) as i64);
                if (p >> 40) & 1 == 0 { m } else { -m }
            }
            Role::Tolerance => 4 * (25 + (p % 38) as i64),
            _ => 0,
        };
        Pay {
            amount,
            uetr: (!role.not_provided() && f % 10 < 8).then_some((u1, u2)),
            quote_uetr: (f >> 8) % 4 != 0,
            lag,
            later,
            extra,
            creditor: (c % CREDITORS as u64) as usize,
            reason: RETURN_REASONS[((p >> 20) % 4) as usize],
        }
    }

    fn uetr(&self, s: usize, (u1, u2): (u64, u64)) -> String {
        format!(
            "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
            u1 >> 32,
            (u1 >> 16) & 0xffff,
            u1 & 0xfff,
            8 + (u2 >> 62),
            (u2 >> 48) & 0xfff,
            (s as u64) ^ self.uetr_mask
        )
    }

    /// Our EndToEndId of slot `s`.
    fn e2e(&self, s: usize) -> String {
        if self.roles[s].not_provided() {
            "NOTPROVIDED".to_string()
        } else {
            format!("E2E-{}-{s}", self.seed)
        }
    }

    fn bank_ref(&self, s: usize, n: u8) -> String {
        format!("BK{}-{s}-{n}", self.seed)
    }

    fn date(day: u32) -> String {
        format!("{MONTH}-{day:02}")
    }

    /// Writes the file named `name` (one of [`FILES`]).
    pub(crate) fn write(&self, name: &str, out: &mut dyn Write) -> io::Result<()> {
        match name {
            PACS008 => self.write_pacs008(out),
            PAIN001 => self.write_pain001(out),
            PACS004 => self.write_pacs004(out),
            CAMT053 => self.write_camt053(out),
            RULES => self.write_rules(out),
            EXPECTED => self.write_expected(out),
            SUMMARY => self.write_summary(out),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("no generated file is named {name}"),
            )),
        }
    }

    pub(crate) fn write_rules(&self, out: &mut dyn Write) -> io::Result<()> {
        write!(
            out,
            "# The rules to reconcile a generated scenario with (clearledger generate recon).\n\
             # Every other rule is the default: expected_days 3, days -1..+3, max_members 3\n\
             # (the planted amounts are chosen so that no 2 or 3 lines sum to another).\n\
             \n\
             # The bank may take up to 2.50 of fees on an outgoing transfer.\n\
             [[tolerance]]\n\
             name = \"sepa-fee\"\n\
             priority = 1\n\
             currency = \"EUR\"\n\
             below_minor = 250\n"
        )
    }

    /// The day a slot's second entry (its duplicate, its return) is booked.
    fn second_day(&self, s: usize, p: &Pay) -> u32 {
        self.day(s) + p.lag + p.later
    }

    /// Breaks of each kind.
    #[cfg(test)]
    pub(crate) fn breaks_per_kind(&self) -> u64 {
        self.k
    }
}
