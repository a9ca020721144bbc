//! The bank's side of the scenario: its camt.053, one statement a day, balances chaining.

use super::{ACCOUNT, Amt, BANK_BIC, DAYS, Ent, MONTH, Role, Scenario};
use std::io::{self, Write};

impl Scenario {
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

    pub(crate) fn write_camt053(&self, out: &mut dyn Write) -> io::Result<()> {
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
}
