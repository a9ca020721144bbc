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

use crate::reconcile::Outcome;
use crate::rng::SplitMix64;
use std::fmt;
use std::io::{self, Write};

/// Our account: every payment's debtor, the statements' account.
pub const ACCOUNT: &str = "DE89370400440532013000";
/// The ledger account our payments move (`account map --ledger-account`).
pub const LEDGER_ACCOUNT: &str = "acct:DE89370400440532013000";
/// Our bank (the debtor agent, the statements' servicer).
pub const BANK_BIC: &str = "COBADEFFXXX";
/// The period: every payment and every entry is dated within it.
pub const FROM: &str = "2026-11-01";
pub const TO: &str = "2026-11-30";
const MONTH: &str = "2026-11";
const DAYS: u32 = 30;

/// The fewest payments a scenario has (so that every break fits, a few of each).
pub const MIN_PAYMENTS: u64 = 200;
/// The most (slots are numbered in 32 bits, amounts stay far from any limit).
pub const MAX_PAYMENTS: u64 = 100_000_000;

pub const PACS008: &str = "ours-pacs008.xml";
pub const PAIN001: &str = "ours-pain001.xml";
pub const PACS004: &str = "ours-pacs004.xml";
pub const CAMT053: &str = "bank-camt053.xml";
pub const RULES: &str = "rules.toml";
pub const EXPECTED: &str = "expected.jsonl";
pub const SUMMARY: &str = "expected-summary.json";
/// Every file written, in the order `write` knows them.
pub const FILES: [&str; 7] = [PACS008, PAIN001, PACS004, CAMT053, RULES, EXPECTED, SUMMARY];

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
pub struct Scenario {
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
    pub fn new(payments: u64, seed: u64) -> Result<Scenario, String> {
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

    /// The slot's pacs.008 transactions' total, and their count.
    fn payments_of(&self, keep: impl Fn(Role) -> bool) -> (u64, i64) {
        let mut n = 0u64;
        let mut sum = 0i64;
        for s in 0..self.roles.len() {
            if keep(self.roles[s]) {
                n += 1;
                sum += self.pay(s).amount;
            }
        }
        (n, sum)
    }

    /// Writes the file named `name` (one of [`FILES`]).
    pub fn write(&self, name: &str, out: &mut dyn Write) -> io::Result<()> {
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

    pub fn write_pacs008(&self, out: &mut dyn Write) -> io::Result<()> {
        let (n, sum) = self.payments_of(Role::in_pacs008);
        let seed = self.seed;
        writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
        writeln!(
            out,
            "<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08\"><FIToFICstmrCdtTrf>\n\
             <GrpHdr><MsgId>OURS-{seed}-PACS008</MsgId><CreDtTm>2026-10-31T18:00:00Z</CreDtTm><NbOfTxs>{n}</NbOfTxs>\
             <CtrlSum>{a}</CtrlSum><TtlIntrBkSttlmAmt Ccy=\"EUR\">{a}</TtlIntrBkSttlmAmt><SttlmInf><SttlmMtd>CLRG</SttlmMtd></SttlmInf>\
             <InstgAgt><FinInstnId><BICFI>{BANK_BIC}</BICFI></FinInstnId></InstgAgt>\
             <InstdAgt><FinInstnId><BICFI>INGBNL2AXXX</BICFI></FinInstnId></InstdAgt></GrpHdr>",
            a = Amt(sum)
        )?;
        for s in 0..self.roles.len() {
            if !self.roles[s].in_pacs008() {
                continue;
            }
            let p = self.pay(s);
            let uetr = p
                .uetr
                .map(|u| format!("<UETR>{}</UETR>", self.uetr(s, u)))
                .unwrap_or_default();
            let (name, iban) = &self.creditors[p.creditor];
            writeln!(
                out,
                "<CdtTrfTxInf><PmtId><InstrId>I-{seed}-{s}</InstrId><EndToEndId>{e2e}</EndToEndId><TxId>T-{seed}-{s}</TxId>{uetr}</PmtId>\
                 <IntrBkSttlmAmt Ccy=\"EUR\">{a}</IntrBkSttlmAmt><IntrBkSttlmDt>{d}</IntrBkSttlmDt><ChrgBr>SLEV</ChrgBr>\
                 <Dbtr><Nm>ACME GMBH</Nm></Dbtr><DbtrAcct><Id><IBAN>{ACCOUNT}</IBAN></Id></DbtrAcct>\
                 <DbtrAgt><FinInstnId><BICFI>{BANK_BIC}</BICFI></FinInstnId></DbtrAgt>\
                 <CdtrAgt><FinInstnId><BICFI>INGBNL2AXXX</BICFI></FinInstnId></CdtrAgt>\
                 <Cdtr><Nm>{name}</Nm></Cdtr><CdtrAcct><Id><IBAN>{iban}</IBAN></Id></CdtrAcct></CdtTrfTxInf>",
                e2e = self.e2e(s),
                a = Amt(p.amount),
                d = Self::date(self.day(s)),
            )?;
        }
        writeln!(out, "</FIToFICstmrCdtTrf></Document>")
    }

    pub fn write_pain001(&self, out: &mut dyn Write) -> io::Result<()> {
        let (n, sum) = self.payments_of(|r| matches!(r, Role::BatchHead | Role::BatchMember));
        let seed = self.seed;
        writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
        writeln!(
            out,
            "<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:pain.001.001.03\"><CstmrCdtTrfInitn>\n\
             <GrpHdr><MsgId>OURS-{seed}-PAIN001</MsgId><CreDtTm>2026-10-31T18:00:00</CreDtTm><NbOfTxs>{n}</NbOfTxs>\
             <CtrlSum>{}</CtrlSum><InitgPty><Nm>ACME GMBH</Nm></InitgPty></GrpHdr>",
            Amt(sum)
        )?;
        for h in 0..self.roles.len() {
            if self.roles[h] != Role::BatchHead {
                continue;
            }
            let g = self.group(h);
            let pays: Vec<Pay> = g.clone().map(|s| self.pay(s)).collect();
            let total: i64 = pays.iter().map(|p| p.amount).sum();
            writeln!(
                out,
                "<PmtInf><PmtInfId>PMTINF-{seed}-{h}</PmtInfId><PmtMtd>TRF</PmtMtd><NbOfTxs>{}</NbOfTxs><CtrlSum>{}</CtrlSum>\
                 <ReqdExctnDt>{}</ReqdExctnDt><Dbtr><Nm>ACME GMBH</Nm></Dbtr><DbtrAcct><Id><IBAN>{ACCOUNT}</IBAN></Id></DbtrAcct>\
                 <DbtrAgt><FinInstnId><BIC>{BANK_BIC}</BIC></FinInstnId></DbtrAgt>",
                pays.len(),
                Amt(total),
                Self::date(self.day(h))
            )?;
            for (s, p) in g.zip(&pays) {
                let (name, iban) = &self.creditors[p.creditor];
                writeln!(
                    out,
                    "<CdtTrfTxInf><PmtId><EndToEndId>{}</EndToEndId></PmtId><Amt><InstdAmt Ccy=\"EUR\">{}</InstdAmt></Amt>\
                     <Cdtr><Nm>{name}</Nm></Cdtr><CdtrAcct><Id><IBAN>{iban}</IBAN></Id></CdtrAcct></CdtTrfTxInf>",
                    self.e2e(s),
                    Amt(p.amount)
                )?;
            }
            writeln!(out, "</PmtInf>")?;
        }
        writeln!(out, "</CstmrCdtTrfInitn></Document>")
    }

    /// The day a slot's second entry (its duplicate, its return) is booked.
    fn second_day(&self, s: usize, p: &Pay) -> u32 {
        self.day(s) + p.lag + p.later
    }

    pub fn write_pacs004(&self, out: &mut dyn Write) -> io::Result<()> {
        let (n, sum) = self.payments_of(|r| r == Role::ReturnMatched);
        let seed = self.seed;
        writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
        writeln!(
            out,
            "<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:pacs.004.001.09\"><PmtRtr>\n\
             <GrpHdr><MsgId>OURS-{seed}-PACS004</MsgId><CreDtTm>2026-11-30T18:00:00Z</CreDtTm><NbOfTxs>{n}</NbOfTxs>\
             <TtlRtrdIntrBkSttlmAmt Ccy=\"EUR\">{}</TtlRtrdIntrBkSttlmAmt><SttlmInf><SttlmMtd>CLRG</SttlmMtd></SttlmInf>\
             <InstgAgt><FinInstnId><BICFI>INGBNL2AXXX</BICFI></FinInstnId></InstgAgt>\
             <InstdAgt><FinInstnId><BICFI>{BANK_BIC}</BICFI></FinInstnId></InstdAgt></GrpHdr>",
            Amt(sum)
        )?;
        for s in 0..self.roles.len() {
            if self.roles[s] != Role::ReturnMatched {
                continue;
            }
            let p = self.pay(s);
            let uetr = p
                .uetr
                .map(|u| format!("<OrgnlUETR>{}</OrgnlUETR>", self.uetr(s, u)))
                .unwrap_or_default();
            let (name, iban) = &self.creditors[p.creditor];
            writeln!(
                out,
                "<TxInf><RtrId>RTR-{seed}-{s}</RtrId><OrgnlEndToEndId>{e2e}</OrgnlEndToEndId>{uetr}\
                 <RtrdIntrBkSttlmAmt Ccy=\"EUR\">{a}</RtrdIntrBkSttlmAmt><IntrBkSttlmDt>{d}</IntrBkSttlmDt>\
                 <RtrRsnInf><Rsn><Cd>{rsn}</Cd></Rsn></RtrRsnInf>\
                 <OrgnlTxRef><Dbtr><Pty><Nm>ACME GMBH</Nm></Pty></Dbtr><DbtrAcct><Id><IBAN>{ACCOUNT}</IBAN></Id></DbtrAcct>\
                 <DbtrAgt><FinInstnId><BICFI>{BANK_BIC}</BICFI></FinInstnId></DbtrAgt>\
                 <CdtrAgt><FinInstnId><BICFI>INGBNL2AXXX</BICFI></FinInstnId></CdtrAgt>\
                 <Cdtr><Pty><Nm>{name}</Nm></Pty></Cdtr><CdtrAcct><Id><IBAN>{iban}</IBAN></Id></CdtrAcct>\
                 </OrgnlTxRef></TxInf>",
                e2e = self.e2e(s),
                a = Amt(p.amount),
                d = Self::date(self.second_day(s, &p)),
                rsn = p.reason,
            )?;
        }
        writeln!(out, "</PmtRtr></Document>")
    }

    /// The bank's entries of slot `s` booked on `day`.
    fn entries_on(&self, s: usize, day: u32, out: &mut Vec<Ent>) {
        let role = self.roles[s];
        if matches!(
            role,
            Role::MissingTheirs | Role::Expected | Role::SplitMember | Role::BatchMember
        ) {
            return;
        }
        let p = self.pay(s);
        let booked = self.day(s) + p.lag;
        let ent = |n: u8, amount: i64| Ent {
            slot: s,
            n,
            amount,
            credit: false,
            usd: false,
            pending: false,
        };
        if booked == day {
            let e = match role {
                Role::AmountMismatch | Role::Tolerance => ent(1, p.amount + p.extra),
                Role::CurrencyMismatch => Ent {
                    usd: true,
                    ..ent(1, p.amount)
                },
                Role::Provisional => Ent {
                    pending: true,
                    ..ent(1, p.amount)
                },
                Role::SplitHead | Role::BatchHead => {
                    ent(1, self.group(s).map(|m| self.pay(m).amount).sum())
                }
                _ => ent(1, p.amount),
            };
            out.push(e);
        }
        if matches!(role, Role::Duplicate | Role::Returned | Role::ReturnMatched)
            && self.second_day(s, &p) == day
        {
            out.push(Ent {
                credit: role != Role::Duplicate,
                ..ent(2, p.amount)
            });
        }
    }

    fn write_entry(&self, out: &mut dyn Write, e: &Ent, date: &str) -> io::Result<()> {
        let (code, details, text) = self.entry_details(e);
        let mut parts = code.split('/');
        let (dom, fam, sub) = (
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
        );
        let text = if text.is_empty() {
            String::new()
        } else {
            format!("<AddtlNtryInf>{text}</AddtlNtryInf>")
        };
        writeln!(
            out,
            "<Ntry><Amt Ccy=\"{ccy}\">{a}</Amt><CdtDbtInd>{cd}</CdtDbtInd><Sts><Cd>{sts}</Cd></Sts>\
             <BookgDt><Dt>{date}</Dt></BookgDt><ValDt><Dt>{date}</Dt></ValDt><AcctSvcrRef>{r}</AcctSvcrRef>\
             <BkTxCd><Domn><Cd>{dom}</Cd><Fmly><Cd>{fam}</Cd><SubFmlyCd>{sub}</SubFmlyCd></Fmly></Domn></BkTxCd>{details}{text}</Ntry>",
            ccy = if e.usd { "USD" } else { "EUR" },
            a = Amt(e.amount),
            cd = if e.credit { "CRDT" } else { "DBIT" },
            sts = if e.pending { "PDNG" } else { "BOOK" },
            r = self.bank_ref(e.slot, e.n),
        )
    }

    /// An entry's bank transaction code, its `NtryDtls` (the references it quotes) and its
    /// additional information, by the role of its slot.
    fn entry_details(&self, e: &Ent) -> (&'static str, String, &'static str) {
        let s = e.slot;
        let role = self.roles[s];
        let p = self.pay(s);
        let refs = |with_uetr: bool| -> String {
            let mut r = format!("<Refs><EndToEndId>{}</EndToEndId>", self.e2e(s));
            if let (true, Some(u)) = (with_uetr, p.uetr) {
                r.push_str(&format!("<UETR>{}</UETR>", self.uetr(s, u)));
            }
            r.push_str("</Refs>");
            r
        };
        match (role, e.n) {
            (Role::Fee, _) => ("ACMT/MDOP/CHRG", String::new(), "ACCOUNT FEE"),
            (Role::Provisional, _) => ("PMNT/ICDT/ESCT", String::new(), ""),
            (Role::AmountDate | Role::AmbiguousHead | Role::AmbiguousMember, _) => {
                ("PMNT/ICDT/ESCT", String::new(), "")
            }
            (Role::BatchHead, _) => (
                "PMNT/ICDT/ESCT",
                format!(
                    "<NtryDtls><Btch><PmtInfId>PMTINF-{}-{s}</PmtInfId></Btch></NtryDtls>",
                    self.seed
                ),
                "",
            ),
            (Role::SplitHead, _) => ("PMNT/ICDT/ESCT", self.split_details(s), ""),
            (Role::Returned, 2) => (
                "PMNT/ICDT/RRTN",
                format!(
                    "<NtryDtls><TxDtls>{}<RtrInf><Rsn><Cd>{}</Cd></Rsn></RtrInf></TxDtls></NtryDtls>",
                    refs(false),
                    p.reason
                ),
                "",
            ),
            (Role::ReturnMatched, 2) => (
                "PMNT/ICDT/RRTN",
                format!(
                    "<NtryDtls><TxDtls>{}<RtrInf><Rsn><Cd>{}</Cd></Rsn></RtrInf></TxDtls></NtryDtls>",
                    refs(p.quote_uetr),
                    p.reason
                ),
                "",
            ),
            _ => (
                "PMNT/ICDT/ESCT",
                format!(
                    "<NtryDtls><TxDtls>{}</TxDtls></NtryDtls>",
                    refs(p.quote_uetr)
                ),
                "",
            ),
        }
    }

    /// The `NtryDtls` of an itemised entry: one `TxDtls` per payment of the group.
    fn split_details(&self, s: usize) -> String {
        let mut d = String::from("<NtryDtls>");
        for m in self.group(s) {
            let mp = self.pay(m);
            d.push_str(&format!(
                "<TxDtls><Refs><EndToEndId>{}</EndToEndId>",
                self.e2e(m)
            ));
            if let Some(u) = mp.uetr {
                d.push_str(&format!("<UETR>{}</UETR>", self.uetr(m, u)));
            }
            d.push_str(&format!(
                "</Refs><Amt Ccy=\"EUR\">{}</Amt><CdtDbtInd>DBIT</CdtDbtInd></TxDtls>",
                Amt(mp.amount)
            ));
        }
        d.push_str("</NtryDtls>");
        d
    }

    pub fn write_camt053(&self, out: &mut dyn Write) -> io::Result<()> {
        let seed = self.seed;
        writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
        writeln!(
            out,
            "<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.08\"><BkToCstmrStmt>\n\
             <GrpHdr><MsgId>BK{seed}-STMTS-{MONTH}</MsgId><CreDtTm>2026-11-30T20:00:00Z</CreDtTm></GrpHdr>"
        )?;
        let mut balance: i64 = 100_000_000;
        let mut day_entries: Vec<Ent> = Vec::new();
        // The latest a slot books an entry after its own day: a date mismatch's 10 days.
        const REACH: u32 = 10;
        for day in 1..=DAYS {
            day_entries.clear();
            let first = self.day_start[(day.saturating_sub(REACH).max(1) - 1) as usize];
            let end = self.day_start[day as usize];
            for s in first..end {
                self.entries_on(s, day, &mut day_entries);
            }
            let opening = balance;
            for e in &day_entries {
                if !e.pending && !e.usd {
                    balance += if e.credit { e.amount } else { -e.amount };
                }
            }
            let date = Self::date(day);
            let bal = |code: &str, v: i64| {
                format!(
                    "<Bal><Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">{}</Amt><CdtDbtInd>{}</CdtDbtInd><Dt><Dt>{date}</Dt></Dt></Bal>",
                    Amt(v.abs()),
                    if v < 0 { "DBIT" } else { "CRDT" }
                )
            };
            writeln!(
                out,
                "<Stmt><Id>BK{seed}-{date}</Id><ElctrncSeqNb>{day}</ElctrncSeqNb><CreDtTm>{date}T20:00:00Z</CreDtTm>\
                 <FrToDt><FrDtTm>{date}T00:00:00Z</FrDtTm><ToDtTm>{date}T23:59:59Z</ToDtTm></FrToDt>\
                 <Acct><Id><IBAN>{ACCOUNT}</IBAN></Id><Ccy>EUR</Ccy><Svcr><FinInstnId><BICFI>{BANK_BIC}</BICFI></FinInstnId></Svcr></Acct>\
                 {}{}",
                bal("OPBD", opening),
                bal("CLBD", balance)
            )?;
            for e in &day_entries {
                self.write_entry(out, e, &date)?;
            }
            writeln!(out, "</Stmt>")?;
        }
        writeln!(out, "</BkToCstmrStmt></Document>")
    }

    pub fn write_rules(&self, out: &mut dyn Write) -> io::Result<()> {
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

    /// Every item the reconciliation must give, in slot order.
    fn items(&self, f: &mut dyn FnMut(&Expected) -> io::Result<()>) -> io::Result<()> {
        for s in 0..self.roles.len() {
            let role = self.roles[s];
            if matches!(
                role,
                Role::SplitMember | Role::BatchMember | Role::AmbiguousMember
            ) {
                continue;
            }
            self.items_of(s, role, f)?;
        }
        Ok(())
    }

    /// The items of slot `s` (a single payment or line, or a group's head).
    fn items_of(
        &self,
        s: usize,
        role: Role,
        f: &mut dyn FnMut(&Expected) -> io::Result<()>,
    ) -> io::Result<()> {
        use Outcome as O;
        let by_id = self.by_id(s);
        let item = |outcome, matched_by, ours, n| self.expected(s, outcome, matched_by, ours, n);
        let e2e = || vec![self.e2e(s)];
        match role {
            Role::Ordinary => f(&item(O::Matched, Some(by_id), e2e(), Some(1))),
            Role::AmountDate => f(&item(O::Matched, Some("amount_date"), e2e(), Some(1))),
            Role::Fee => f(&item(O::MissingOurs, None, vec![], Some(1))),
            Role::Provisional => f(&item(O::Provisional, None, vec![], Some(1))),
            Role::MissingTheirs => f(&item(O::MissingTheirs, None, e2e(), None)),
            Role::Expected => f(&item(O::Expected, None, e2e(), None)),
            Role::AmountMismatch => f(&item(O::AmountMismatch, Some(by_id), e2e(), Some(1))),
            Role::Tolerance => f(&item(
                O::MatchedWithinTolerance,
                Some(by_id),
                e2e(),
                Some(1),
            )),
            Role::DateMismatch => f(&item(O::DateMismatch, Some(by_id), e2e(), Some(1))),
            Role::CurrencyMismatch => f(&item(O::CurrencyMismatch, Some(by_id), e2e(), Some(1))),
            Role::Duplicate | Role::Returned | Role::ReturnMatched => {
                f(&item(O::Matched, Some(by_id), e2e(), Some(1)))?;
                f(&self.second_entry(s, role))
            }
            Role::SplitHead | Role::BatchHead | Role::AmbiguousHead => f(&self.group_item(s, role)),
            Role::SplitMember | Role::BatchMember | Role::AmbiguousMember => Ok(()),
        }
    }

    /// The level an entry quoting slot `s`'s identifiers ties it by.
    fn by_id(&self, s: usize) -> &'static str {
        let p = self.pay(s);
        if p.quote_uetr && p.uetr.is_some() {
            "uetr"
        } else {
            "end_to_end_id"
        }
    }

    /// An item of slot `s`: `ours` as given, theirs its entry `n` (if any).
    fn expected(
        &self,
        s: usize,
        outcome: Outcome,
        matched_by: Option<&'static str>,
        ours: Vec<String>,
        n: Option<u8>,
    ) -> Expected {
        Expected {
            outcome,
            matched_by,
            ours,
            theirs: n.map(|n| self.bank_ref(s, n)).into_iter().collect(),
            refers_to: None,
        }
    }

    /// The item of a payment's second entry: its duplicate, the bank's return of it, or
    /// the return matched to our pacs.004.
    fn second_entry(&self, s: usize, role: Role) -> Expected {
        use Outcome as O;
        match role {
            Role::ReturnMatched => {
                let by = if self.by_id(s) == "uetr" {
                    "original_uetr"
                } else {
                    "original_end_to_end_id"
                };
                let rtr = vec![format!("RTR-{}-{s}", self.seed)];
                self.expected(s, O::Matched, Some(by), rtr, Some(2))
            }
            _ => {
                let outcome = if role == Role::Duplicate {
                    O::DuplicateTheirs
                } else {
                    O::Returned
                };
                Expected {
                    refers_to: Some(self.e2e(s)),
                    ..self.expected(s, outcome, None, vec![], Some(2))
                }
            }
        }
    }

    /// The item of the group headed by `s`: the itemised entry, the batch, or the
    /// ambiguous set.
    fn group_item(&self, s: usize, role: Role) -> Expected {
        use Outcome as O;
        let g = self.group(s);
        if role == Role::AmbiguousHead {
            let mut theirs: Vec<String> = g.clone().map(|m| self.bank_ref(m, 1)).collect();
            theirs.sort();
            return Expected {
                outcome: O::Ambiguous,
                matched_by: None,
                ours: g.map(|m| self.e2e(m)).collect(),
                theirs,
                refers_to: None,
            };
        }
        let mut ours: Vec<String> = g.map(|m| self.e2e(m)).collect();
        ours.sort();
        if role == Role::SplitHead {
            self.expected(s, O::OneToMany, Some("details"), ours, Some(1))
        } else {
            self.expected(s, O::ManyToOne, Some("batch"), ours, Some(1))
        }
    }

    /// One JSON object a line: `outcome`, `our`, `their`, `matched_by` (the level that
    /// ties the members; `null` for an item of one side), and for a duplicate or a return
    /// `refers_to` (the EndToEndId of the payment it repeats or returns).
    pub fn write_expected(&self, out: &mut dyn Write) -> io::Result<()> {
        fn list(out: &mut dyn Write, v: &[String]) -> io::Result<()> {
            out.write_all(b"[")?;
            for (i, s) in v.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                // Identifiers of letters, digits and dashes: nothing to escape.
                write!(out, "\"{s}\"")?;
            }
            out.write_all(b"]")
        }
        self.items(&mut |e| {
            write!(out, "{{\"outcome\":\"{}\",\"our\":", e.outcome.as_str())?;
            list(out, &e.ours)?;
            out.write_all(b",\"their\":")?;
            list(out, &e.theirs)?;
            match e.matched_by {
                Some(by) => write!(out, ",\"matched_by\":\"{by}\"")?,
                None => out.write_all(b",\"matched_by\":null")?,
            }
            if let Some(r) = &e.refers_to {
                write!(out, ",\"refers_to\":\"{r}\"")?;
            }
            out.write_all(b"}\n")
        })
    }

    /// The number of items per outcome, in report order (every outcome named).
    pub fn counts(&self) -> Vec<(Outcome, u64)> {
        let mut c = [0u64; Outcome::ALL.len()];
        let _ = self.items(&mut |e| {
            if let Some(i) = Outcome::ALL.iter().position(|&x| x == e.outcome) {
                c[i] += 1;
            }
            Ok(())
        });
        Outcome::ALL.iter().copied().zip(c).collect()
    }

    pub fn write_summary(&self, out: &mut dyn Write) -> io::Result<()> {
        let body: Vec<String> = self
            .counts()
            .into_iter()
            .map(|(o, n)| format!("\"{}\":{n}", o.as_str()))
            .collect();
        writeln!(out, "{{{}}}", body.join(","))
    }

    /// Breaks of each kind.
    pub fn breaks_per_kind(&self) -> u64 {
        self.k
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::iso20022::{IsoEvent, read_file};
    use std::collections::{BTreeMap, HashMap};

    fn files(sc: &Scenario) -> BTreeMap<&'static str, Vec<u8>> {
        FILES
            .iter()
            .map(|&name| {
                let mut v = Vec::new();
                sc.write(name, &mut v).unwrap();
                (name, v)
            })
            .collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_files() {
        let a = files(&Scenario::new(300, 7).unwrap());
        let b = files(&Scenario::new(300, 7).unwrap());
        assert_eq!(a, b);
        let c = files(&Scenario::new(300, 8).unwrap());
        for name in [PACS008, CAMT053, EXPECTED] {
            assert_ne!(a[name], c[name], "{name}");
        }
        assert_eq!(a[RULES], c[RULES]);
    }

    #[test]
    fn too_few_or_too_many_payments_are_refused() {
        assert_eq!(
            Scenario::new(199, 1).err().unwrap(),
            "--payments: expected 200 to 100000000, found 199"
        );
        assert!(Scenario::new(MAX_PAYMENTS + 1, 1).is_err());
        for seed in 0..50 {
            Scenario::new(MIN_PAYMENTS, seed).unwrap();
        }
    }

    #[test]
    fn exact_counts_per_outcome() {
        let sc = Scenario::new(300, 7).unwrap();
        assert_eq!(sc.breaks_per_kind(), 3);
        let grouped = sc
            .roles
            .iter()
            .filter(|r| {
                matches!(
                    r,
                    Role::BatchHead
                        | Role::BatchMember
                        | Role::SplitHead
                        | Role::SplitMember
                        | Role::AmbiguousHead
                        | Role::AmbiguousMember
                )
            })
            .count();
        assert_eq!(grouped, 25);
        let got: Vec<(&str, u64)> = sc
            .counts()
            .into_iter()
            .map(|(o, n)| (o.as_str(), n))
            .collect();
        // 300 payments: 3 of each of the 10 single breaks of ours, 3 batches, splits and
        // ambiguous groups of 25 payments in all (their drawn sizes); the 245 others are
        // matched, and so are the duplicates' and returns' first entries (9), the returns
        // recorded (3) and the amount-date pairs (3): 260.
        assert_eq!(
            got,
            [
                ("missing_ours", 3),
                ("amount_mismatch", 3),
                ("currency_mismatch", 3),
                ("date_mismatch", 3),
                ("duplicate_theirs", 3),
                ("returned", 3),
                ("ambiguous", 3),
                ("missing_theirs", 3),
                ("expected", 3),
                ("provisional", 3),
                ("many_to_one", 3),
                ("one_to_many", 3),
                ("matched_within_tolerance", 3),
                ("matched", 260),
            ]
        );
        let mut v = Vec::new();
        sc.write_summary(&mut v).unwrap();
        let summary: serde_json::Value = serde_json::from_slice(&v).unwrap();
        for (o, n) in &got {
            assert_eq!(summary[o], *n, "{o}");
        }
        // expected.jsonl says the same, one line per item.
        let mut v = Vec::new();
        sc.write_expected(&mut v).unwrap();
        let mut per: HashMap<String, u64> = HashMap::new();
        for line in String::from_utf8(v).unwrap().lines() {
            let item: serde_json::Value = serde_json::from_str(line).unwrap();
            *per.entry(item["outcome"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
        for (o, n) in &got {
            assert_eq!(per[*o], *n, "{o}");
        }
        // Scales: about 1% each at 100,000.
        let big = Scenario::new(100_000, 1).unwrap();
        let c: HashMap<Outcome, u64> = big.counts().into_iter().collect();
        assert_eq!(c[&Outcome::Ambiguous], 1_000);
        assert_eq!(c[&Outcome::MissingOurs], 1_000);
    }

    /// The files read without a finding; every payment, return and entry is in exactly
    /// one expected item.
    #[test]
    fn the_readers_find_no_error_and_every_line_is_in_one_item() {
        for (n, seed) in [(300, 7), (1_000, 3)] {
            let sc = Scenario::new(n, seed).unwrap();
            let f = files(&sc);
            let mut ours: HashMap<String, u64> = HashMap::new();
            let mut payments = 0;
            for (name, kind) in [
                (PACS008, "pacs.008"),
                (PAIN001, "pain.001"),
                (PACS004, "pacs.004"),
            ] {
                let r = read_file(&f[name][..], &mut |ev| {
                    if let IsoEvent::Transaction(t) = ev {
                        assert_eq!(t.kind.unwrap().as_str(), kind);
                        assert_eq!(t.currency, "EUR");
                        let d = t.date.unwrap().to_string();
                        assert!((FROM..=TO).contains(&d.as_str()), "{d}");
                        let id = if kind == "pacs.004" {
                            t.tx_id
                        } else {
                            payments += 1;
                            t.end_to_end_id
                        };
                        *ours.entry(id).or_default() += 1;
                    }
                })
                .unwrap();
                assert!(
                    r.findings.is_empty(),
                    "{name}: {:#?}",
                    &r.findings[..r.findings.len().min(3)]
                );
            }
            assert_eq!(payments, n);
            let mut theirs: HashMap<String, u64> = HashMap::new();
            let mut statements = Vec::new();
            let r = crate::formats::camt::read(&f[CAMT053][..], &mut |s| {
                for e in &s.entries {
                    *theirs.entry(e.bank_ref.clone().unwrap()).or_default() += 1;
                }
                statements.push(s);
            })
            .unwrap();
            assert_eq!(r.findings, [], "{CAMT053}");
            assert_eq!(r.statements, 30);
            // The balance check ran on every statement without a USD line (it skips those).
            use crate::formats::statement::{BalanceKind, EntryStatus};
            let checked = statements
                .iter()
                .filter(|s| {
                    s.entries
                        .iter()
                        .all(|e| e.currency == "EUR" || e.status != EntryStatus::Booked)
                })
                .count();
            assert!(checked >= 30 - sc.breaks_per_kind() as usize);
            for w in statements.windows(2) {
                assert_eq!(
                    w[0].balance(BalanceKind::ClosingBooked)
                        .unwrap()
                        .amount_minor,
                    w[1].balance(BalanceKind::OpeningBooked)
                        .unwrap()
                        .amount_minor
                );
            }
            assert!(theirs.values().all(|&c| c == 1), "AcctSvcrRef unique");
            let mut v = Vec::new();
            sc.write_expected(&mut v).unwrap();
            for line in String::from_utf8(v).unwrap().lines() {
                let item: serde_json::Value = serde_json::from_str(line).unwrap();
                for id in item["our"].as_array().unwrap() {
                    let c = ours.get_mut(id.as_str().unwrap()).unwrap();
                    assert!(*c > 0, "{id} twice");
                    *c -= 1;
                }
                for r in item["their"].as_array().unwrap() {
                    let c = theirs.get_mut(r.as_str().unwrap()).unwrap();
                    assert_eq!(*c, 1, "{r} twice");
                    *c = 0;
                }
            }
            assert!(ours.values().all(|&c| c == 0), "a posting in no item");
            assert!(theirs.values().all(|&c| c == 0), "an entry in no item");
        }
    }
}
