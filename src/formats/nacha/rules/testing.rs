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
