//! Our side of the scenario: the pacs.008 of our transfers, the pain.001 of our batches,
//! the pacs.004 of the returns we recorded.

use super::{ACCOUNT, Amt, BANK_BIC, Pay, Role, Scenario};
use std::io::{self, Write};

impl Scenario {
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

    pub(crate) fn write_pacs008(&self, out: &mut dyn Write) -> io::Result<()> {
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

    pub(crate) fn write_pain001(&self, out: &mut dyn Write) -> io::Result<()> {
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

    pub(crate) fn write_pacs004(&self, out: &mut dyn Write) -> io::Result<()> {
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
}
