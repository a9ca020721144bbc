//! A camt.053.001.08 generator, for tests and benchmarks: any number of entries over one
//! or several statements of one account, whose balances chain (each statement opens at
//! the previous one's closing) and whose sequence numbers follow, with a transaction
//! summary and one transaction detail per entry. The same seed gives the same file.

use std::io::{self, Write};

/// Entries per statement.
const PER_STATEMENT: u64 = 1_000;
const ACCOUNT: &str = "NL26VAYB8060476890";

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `12345` → `123.45`.
fn eur(minor: u64) -> String {
    format!("{}.{:02}", minor / 100, minor % 100)
}

/// A signed balance: its absolute amount and `CRDT`/`DBIT`.
fn balance(out: &mut dyn Write, code: &str, amount: i64, date: &str) -> io::Result<()> {
    let ind = if amount < 0 { "DBIT" } else { "CRDT" };
    writeln!(
        out,
        "      <Bal><Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">{}</Amt><CdtDbtInd>{ind}</CdtDbtInd><Dt><Dt>{date}</Dt></Dt></Bal>",
        eur(amount.unsigned_abs())
    )
}

/// Writes a valid camt.053.001.08 with `entries` entries (statements of at most 1,000
/// entries; one statement without entries when `entries` is 0).
pub fn generate_camt053(entries: u64, seed: u64, out: &mut dyn Write) -> io::Result<()> {
    let mut rng = Rng(seed);
    let statements = entries.div_ceil(PER_STATEMENT).max(1);
    writeln!(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
    writeln!(
        out,
        "<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.08\">\n  <BkToCstmrStmt>\n    <GrpHdr><MsgId>GEN-{seed}</MsgId><CreDtTm>2026-01-31T18:00:00+01:00</CreDtTm></GrpHdr>"
    )?;
    let mut opening: i64 = i64::try_from(rng.next() % 10_000_000).unwrap_or(0);
    let mut entry_no: u64 = 0;
    for s in 0..statements {
        let n = (entries - s * PER_STATEMENT).min(PER_STATEMENT);
        // The day of January the statement is for (the file covers up to 28 days a month).
        let day = s % 28 + 1;
        let month = (s / 28) % 12 + 1;
        let year = 2026 + s / (28 * 12);
        let date = format!("{year:04}-{month:02}-{day:02}");
        let amounts: Vec<(u64, bool)> = (0..n)
            .map(|_| (rng.next() % 1_000_000 + 1, rng.next().is_multiple_of(2)))
            .collect();
        let credits: u64 = amounts.iter().filter(|a| a.1).map(|a| a.0).sum();
        let debits: u64 = amounts.iter().filter(|a| !a.1).map(|a| a.0).sum();
        let closing = opening + credits as i64 - debits as i64;
        writeln!(
            out,
            "    <Stmt>\n      <Id>GEN-{seed}-{}</Id>\n      <ElctrncSeqNb>{}</ElctrncSeqNb>\n      <CreDtTm>{date}T18:00:00+01:00</CreDtTm>\n      <FrToDt><FrDtTm>{date}T00:00:00+01:00</FrDtTm><ToDtTm>{date}T23:59:59+01:00</ToDtTm></FrToDt>\n      <Acct><Id><IBAN>{ACCOUNT}</IBAN></Id><Ccy>EUR</Ccy><Svcr><FinInstnId><BICFI>VAYBNL2AXXX</BICFI></FinInstnId></Svcr></Acct>",
            s + 1,
            s + 1
        )?;
        balance(out, "OPBD", opening, &date)?;
        balance(out, "CLBD", closing, &date)?;
        let count_c = amounts.iter().filter(|a| a.1).count();
        writeln!(
            out,
            "      <TxsSummry><TtlNtries><NbOfNtries>{n}</NbOfNtries><Sum>{}</Sum></TtlNtries><TtlCdtNtries><NbOfNtries>{count_c}</NbOfNtries><Sum>{}</Sum></TtlCdtNtries><TtlDbtNtries><NbOfNtries>{}</NbOfNtries><Sum>{}</Sum></TtlDbtNtries></TxsSummry>",
            eur(credits + debits),
            eur(credits),
            n as usize - count_c,
            eur(debits)
        )?;
        for (amount, credit) in amounts {
            entry_no += 1;
            let ind = if credit { "CRDT" } else { "DBIT" };
            let family = if credit { "RCDT" } else { "ICDT" };
            writeln!(
                out,
                "      <Ntry>\n        <NtryRef>{entry_no}</NtryRef>\n        <Amt Ccy=\"EUR\">{a}</Amt>\n        <CdtDbtInd>{ind}</CdtDbtInd>\n        <Sts><Cd>BOOK</Cd></Sts>\n        <BookgDt><Dt>{date}</Dt></BookgDt>\n        <ValDt><Dt>{date}</Dt></ValDt>\n        <AcctSvcrRef>GEN{seed}-{entry_no:010}</AcctSvcrRef>\n        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>{family}</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>\n        <NtryDtls><TxDtls><Refs><EndToEndId>E2E-{entry_no}</EndToEndId></Refs><Amt Ccy=\"EUR\">{a}</Amt><CdtDbtInd>{ind}</CdtDbtInd><RmtInf><Ustrd>Invoice {entry_no}</Ustrd></RmtInf></TxDtls></NtryDtls>\n      </Ntry>",
                a = eur(amount)
            )?;
        }
        writeln!(out, "    </Stmt>")?;
        opening = closing;
    }
    writeln!(out, "  </BkToCstmrStmt>\n</Document>")
}
