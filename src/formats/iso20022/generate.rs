//! Synthetic pacs.008.001.08 files of any size, valid in every rule the reader checks
//! (IBAN check digits, BICs, UETRs, NbOfTxs, CtrlSum). Deterministic per seed; the seed also
//! names the message (MsgId), so different seeds give different file identities.

use crate::rng::SplitMix64 as Rng;
use std::io::{self, Write};

const BICS: &[&str] = &[
    "COBADEFFXXX",
    "DEUTDEFFXXX",
    "INGBNL2AXXX",
    "BNPAFRPPXXX",
    "NWBKGB2LXXX",
    "UBSWCHZH80A",
];

/// A German IBAN for an 18-digit BBAN, with its mod-97 check digits.
pub(crate) fn iban_de(bban: u64) -> String {
    let bban = format!("{:018}", bban % 1_000_000_000_000_000_000);
    // "DE" = 13 14, check digits 00 while computing.
    let digits = format!("{bban}131400");
    let rem = digits
        .bytes()
        .fold(0u32, |r, c| (r * 10 + u32::from(c - b'0')) % 97);
    format!("DE{:02}{bban}", 98 - rem)
}

struct Tx {
    uetr: String,
    amount_cents: u64,
    debtor: String,
    creditor: String,
    dagt: &'static str,
    cagt: &'static str,
}

fn tx(rng: &mut Rng, i: u64) -> Tx {
    let a = rng.next_u64();
    let b = rng.next_u64();
    let uetr = format!(
        "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        8 + (b >> 62),
        (b >> 48) & 0xfff,
        b & 0xffff_ffff_ffff
    );
    Tx {
        uetr,
        amount_cents: 1 + rng.next_u64() % 1_000_000,
        debtor: iban_de(rng.next_u64()),
        creditor: iban_de(rng.next_u64()),
        dagt: BICS[(i % BICS.len() as u64) as usize],
        cagt: BICS[((i + 1) % BICS.len() as u64) as usize],
    }
}

/// The currency of every amount written.
const CURRENCY: &str = "EUR";

/// Minor units of [`CURRENCY`] as the decimal the XML carries (`1250` → `12.50`).
fn amount(minor: u64) -> String {
    crate::money::format_minor(minor as i64, CURRENCY)
}

/// Writes one pacs.008.001.08 document of `transactions` EUR credit transfers to `out`,
/// its group header's NbOfTxs and CtrlSum matching them; the message id is `GEN-{seed}`.
pub fn write_pacs008<W: Write>(out: W, transactions: u64, seed: u64) -> io::Result<()> {
    let mut w = io::BufWriter::with_capacity(1 << 20, out);
    // First pass: the control sum the group header must carry.
    let mut rng = Rng(seed);
    let total: u64 = (1..=transactions)
        .map(|i| tx(&mut rng, i).amount_cents)
        .sum();
    writeln!(w, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        w,
        r#"<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"><FIToFICstmrCdtTrf>"#
    )?;
    writeln!(
        w,
        "<GrpHdr><MsgId>GEN-{seed:016}</MsgId><CreDtTm>2026-11-29T00:00:00Z</CreDtTm><NbOfTxs>{transactions}</NbOfTxs>\
         <CtrlSum>{}</CtrlSum><TtlIntrBkSttlmAmt Ccy=\"{CURRENCY}\">{}</TtlIntrBkSttlmAmt><IntrBkSttlmDt>2026-11-30</IntrBkSttlmDt>\
         <SttlmInf><SttlmMtd>CLRG</SttlmMtd></SttlmInf><InstgAgt><FinInstnId><BICFI>COBADEFFXXX</BICFI></FinInstnId></InstgAgt></GrpHdr>",
        amount(total),
        amount(total)
    )?;
    let mut rng = Rng(seed);
    for i in 1..=transactions {
        let t = tx(&mut rng, i);
        writeln!(
            w,
            "<CdtTrfTxInf><PmtId><InstrId>I{i}</InstrId><EndToEndId>E2E-{seed}-{i}</EndToEndId><TxId>T{i}</TxId><UETR>{}</UETR></PmtId>\
             <IntrBkSttlmAmt Ccy=\"{CURRENCY}\">{}</IntrBkSttlmAmt><ChrgBr>SLEV</ChrgBr><Dbtr><Nm>DEBTOR {i}</Nm></Dbtr>\
             <DbtrAcct><Id><IBAN>{}</IBAN></Id></DbtrAcct><DbtrAgt><FinInstnId><BICFI>{}</BICFI></FinInstnId></DbtrAgt>\
             <CdtrAgt><FinInstnId><BICFI>{}</BICFI></FinInstnId></CdtrAgt><Cdtr><Nm>CREDITOR {i}</Nm></Cdtr>\
             <CdtrAcct><Id><IBAN>{}</IBAN></Id></CdtrAcct><RmtInf><Ustrd>INVOICE {i}</Ustrd></RmtInf></CdtTrfTxInf>",
            t.uetr,
            amount(t.amount_cents),
            t.debtor,
            t.dagt,
            t.cagt,
            t.creditor
        )?;
    }
    writeln!(w, "</FIToFICstmrCdtTrf></Document>")?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::iso20022::{IsoEvent, read_file};

    #[test]
    fn generated_files_are_valid_and_deterministic() {
        let mut a = Vec::new();
        write_pacs008(&mut a, 500, 9).unwrap();
        let mut b = Vec::new();
        write_pacs008(&mut b, 500, 9).unwrap();
        assert_eq!(a, b);
        let mut uetrs = std::collections::HashSet::new();
        let r = read_file(&a[..], &mut |ev| {
            if let IsoEvent::Transaction(t) = ev {
                uetrs.insert(t.uetr);
            }
        })
        .unwrap();
        assert!(
            r.findings.is_empty(),
            "{:#?}",
            &r.findings[..r.findings.len().min(3)]
        );
        assert_eq!(r.transactions, 500);
        assert_eq!(uetrs.len(), 500);
        assert!(crate::formats::iso20022::validate::is_iban(&iban_de(123)));
    }
}
