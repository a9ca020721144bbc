//! What the rule tests share: the payroll sample, a way to change a few columns of it,
//! and its error findings as comparable rows.

use crate::findings::{FindingCode, Severity};
use crate::formats::nacha::{ValidateOptions, check};

/// The payroll sample: header, batch header (220 PPD), entries on lines 3, 4, 6, 7
/// (line 4 with an addenda 05 on line 5), batch control 8, file control 9, padding 10.
pub(crate) const PAYROLL: &[u8] = include_bytes!("../../../../samples/ppd-payroll-credits.ach");

/// The sample with `with` written at `line` (1-based), from column `col` (1-based).
pub(crate) fn mutate(line: usize, col: usize, with: &str) -> Vec<u8> {
    let mut f = PAYROLL.to_vec();
    let at = (line - 1) * 95 + (col - 1);
    f[at..at + with.len()].copy_from_slice(with.as_bytes());
    f
}

/// Code, line, field name, expected, found.
pub(crate) type Row = (FindingCode, u64, &'static str, String, String);

/// The error findings of `data`, as rows.
pub(crate) fn errors(data: &[u8]) -> Vec<Row> {
    let r = check(data, ValidateOptions::default()).unwrap();
    r.summary
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| {
            (
                f.code,
                f.position.line(),
                f.field.map(|x| x.name).unwrap_or(""),
                f.expected.clone(),
                f.found.clone(),
            )
        })
        .collect()
}

pub(crate) fn row(
    code: FindingCode,
    line: u64,
    field: &'static str,
    expected: &str,
    found: &str,
) -> Row {
    (code, line, field, expected.to_string(), found.to_string())
}

/// Every finding of `data` read with `options`, as rows with their severity.
pub(crate) fn findings_with(data: &[u8], options: ValidateOptions) -> Vec<(Severity, Row)> {
    let r = check(data, options).unwrap();
    r.summary
        .findings
        .iter()
        .map(|f| {
            let row = (
                f.code,
                f.position.line(),
                f.field.map(|x| x.name).unwrap_or(""),
                f.expected.clone(),
                f.found.clone(),
            );
            (f.severity, row)
        })
        .collect()
}

/// The payroll sample's file header.
pub(crate) const FILE_HEADER_LINE: &str = "101 23138010412104288212611290900A094101FEDERAL RESERVE BANK   ACME BANK                      ";

/// A standard batch header (ODFI 12104288, company 1234567890, effective 261130).
pub(crate) fn batch_header(
    service_class: &str,
    sec: &str,
    description: &str,
    batch: u32,
) -> String {
    format!(
        "5{service_class}{:<16}{:<20}1234567890{sec}{description:<10}{:<6}261130   112104288{batch:07}",
        "ACME PAYMENTS", "", ""
    )
}

/// An IAT batch header: `indicator` in columns 5-20 (blank, or IATCOR), then `sec`.
pub(crate) fn iat_batch_header(indicator: &str, sec: &str, batch: u32) -> String {
    format!(
        "5220{indicator:<16}FF3{:<15}US123456789 {sec}TRADEPAYMTCADUSD261130   112104288{batch:07}",
        ""
    )
}

/// A standard entry detail to RDFI 23138010 (check digit 4): `id` in columns 40-54,
/// `name` in 55-76, trace number 12104288 + `seq`.
pub(crate) fn entry(
    code: u8,
    amount: u64,
    id: &str,
    name: &str,
    addenda: bool,
    seq: u32,
) -> String {
    let a = u8::from(addenda);
    format!(
        "6{code:02}231380104{:<17}{amount:010}{id:<15}{name:<22}  {a}12104288{seq:07}",
        "4455667788"
    )
}

/// An IAT entry detail to RDFI 23138010 declaring `addenda` addenda records.
pub(crate) fn iat_entry(code: u8, amount: u64, addenda: u32, seq: u32) -> String {
    format!(
        "6{code:02}231380104{addenda:04}{:13}{amount:010}{:<35}  001{:08}{seq:07}",
        "", "DE89370400440532013000", 12104288
    )
}

/// IAT addenda 10 to 16 for the entry of sequence number `seq`, addenda 10 giving
/// `transaction_type` as its transaction type code.
pub(crate) fn iat_addenda(transaction_type: &str, seq: u32) -> Vec<String> {
    let mut v = vec![format!(
        "710{transaction_type}{:018}{:<22}{:<35}{:6}{seq:07}",
        100000, "FOREIGN TRACE 1", "JOHN RECEIVER", ""
    )];
    for (ty, text) in [
        (11, "ORIGINATOR NAME                    ORIGINATOR STREET 1"),
        (12, "BERLIN*BE\\                         DE*10115\\"),
        (
            13,
            "BANK OF ORIGIN                     01121042882                         US",
        ),
        (
            14,
            "RECEIVING BANK                     01231380104                         US",
        ),
        (15, "987654321      ONE RECEIVER STREET"),
        (16, "TOWN*PA\\                           US*19305\\"),
    ] {
        v.push(format!("7{ty}{text:<84}{seq:07}"));
    }
    v
}

/// A file of `lines` (file header, batch headers, entries, addenda), with each batch's
/// control and the file control computed from them, and padding to a block of 10.
pub(crate) fn build(lines: &[String]) -> Vec<u8> {
    use crate::formats::nacha::validate::{Direction, transaction_direction};
    let mut out: Vec<String> = Vec::new();
    let mut file = super::batch::Totals::default();
    let mut batches = 0;
    let mut open: Option<(String, super::batch::Totals)> = None;
    let close = |out: &mut Vec<String>, h: &str, t: &super::batch::Totals| {
        out.push(format!(
            "8{}{:06}{:010}{:012}{:012}{}{:25}{}",
            &h[1..4],
            t.entry_addenda_count,
            t.entry_hash,
            t.debit_minor,
            t.credit_minor,
            &h[40..50],
            "",
            &h[79..94]
        ));
    };
    for l in lines {
        match &l[..1] {
            "5" => {
                if let Some((h, t)) = open.take() {
                    close(&mut out, &h, &t);
                    file.add(&t);
                }
                batches += 1;
                open = Some((l.clone(), Default::default()));
            }
            "6" => {
                let t = &mut open.as_mut().unwrap().1;
                let code: u8 = l[1..3].parse().unwrap();
                let dir = transaction_direction(code).unwrap_or(Direction::Credit);
                t.add_entry(l[3..11].parse().unwrap(), dir, l[29..39].parse().unwrap());
            }
            "7" => open.as_mut().unwrap().1.add_addenda(),
            _ => {}
        }
        out.push(l.clone());
    }
    if let Some((h, t)) = open.take() {
        close(&mut out, &h, &t);
        file.add(&t);
    }
    let blocks = (out.len() + 1).div_ceil(10);
    out.push(format!(
        "9{batches:06}{blocks:06}{:08}{:010}{:012}{:012}{:39}",
        file.entry_addenda_count, file.entry_hash, file.debit_minor, file.credit_minor, ""
    ));
    while !out.len().is_multiple_of(10) {
        out.push("9".repeat(94));
    }
    let mut bytes = Vec::new();
    for l in out {
        assert_eq!(l.len(), 94, "{l:?}");
        bytes.extend_from_slice(l.as_bytes());
        bytes.push(b'\n');
    }
    bytes
}
