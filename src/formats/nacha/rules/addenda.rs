//! Addenda rules: each addenda record against its entry and its batch's SEC code, then
//! the entry's addenda as a whole (indicator, declared count, IAT's mandatory set) once
//! the next non-addenda record shows there are no more.

use super::check::{Check, text};
use super::entry::Pending;
use crate::findings::{Finding, FindingCode, FindingSink, show};
use crate::formats::nacha::assemble::ADDENDA_PER_ENTRY_MAX;
use crate::formats::nacha::record::*;
use crate::formats::nacha::validate::{
    IAT_TRANSACTION_TYPE_CODES, is_change_code, is_return_reason_code,
};

/// Addenda rules for one addenda record following the entry `p` in a `sec` batch; with
/// `keep`, the record's text joins the entry.
pub(crate) fn check_addenda(c: &mut Check, p: &mut Pending, sec: &str, keep: bool) {
    let l = ADDENDA;
    let Some(ty) = c.digits(l.addenda_type_code) else {
        return;
    };
    let ty = ty as u8;
    let allowed = type_allowed(ty, sec, p);
    if !allowed {
        let batch = if p.iat_noc { "IATCOR" } else { sec };
        c.error(
            FindingCode::AddendaType,
            Some(l.addenda_type_code),
            format!("an addenda type allowed in a {batch} batch"),
            format!("{ty:02}"),
        );
    }
    match ty {
        5 | 17 | 18 => check_sequence(c, p, ty),
        10 if allowed => {
            check_transaction_type_code(c);
            check_entry_sequence(c, &p.entry.trace_number);
        }
        10..=16 => check_entry_sequence(c, &p.entry.trace_number),
        98 => check_change(c),
        99 => check_return(c),
        _ => {}
    }
    if p.iat && matches!(ty, 10..=18 | 98) {
        p.iat_types_seen.push(ty);
    }
    if p.addenda_count >= ADDENDA_PER_ENTRY_MAX as u64 {
        c.error(
            FindingCode::AddendaCount,
            Some(l.record_type),
            format!("at most {ADDENDA_PER_ENTRY_MAX} addenda per entry"),
            "more",
        );
        return;
    }
    p.addenda_count += 1;
    if keep {
        p.entry.addenda.push(text(c.record()));
    }
}

/// Which addenda types the entry `p` of a batch of SEC code `sec` may carry: IAT entries
/// their own (10-18), and a notification of change (98) only in an IATCOR batch; other
/// entries 02 (POS, SHR, MTE), 05 and, in a COR batch, 98. Returns (99) anywhere.
fn type_allowed(ty: u8, sec: &str, p: &Pending) -> bool {
    match ty {
        2 => matches!(sec, "POS" | "SHR" | "MTE"),
        5 => !p.iat && !matches!(sec, "ADV" | "POS" | "SHR" | "MTE"),
        10..=18 => p.iat,
        98 if p.iat => p.iat_noc,
        98 => sec == "COR",
        99 => true,
        _ => false,
    }
}

/// Addenda 10's transaction type code: one of the NACHA list.
fn check_transaction_type_code(c: &mut Check) {
    let field = ADDENDA10.transaction_type_code;
    let v = c.value(field);
    if !IAT_TRANSACTION_TYPE_CODES.iter().any(|t| &t[..] == v) {
        let list: Vec<String> = IAT_TRANSACTION_TYPE_CODES.iter().map(|t| show(*t)).collect();
        let expected = format!("an IAT transaction type code ({})", list.join(", "));
        let found = show(v);
        c.error(FindingCode::InvalidValue, Some(field), expected, found);
    }
}

/// Types 05, 17 and 18 number themselves 1, 2, ... per type, and name their entry.
fn check_sequence(c: &mut Check, p: &mut Pending, ty: u8) {
    let field = ADDENDA.addenda_sequence_number;
    let slot = match ty {
        5 => 0,
        17 => 1,
        _ => 2,
    };
    p.sequenced_addenda[slot] += 1;
    let want = p.sequenced_addenda[slot];
    if let Some(n) = c.digits(field)
        && n != want
    {
        c.mismatch(FindingCode::AddendaSequence, field, format!("{want:04}"));
    }
    check_entry_sequence(c, &p.entry.trace_number);
}

/// The entry detail sequence number: the last 7 digits of the entry's trace number.
fn check_entry_sequence(c: &mut Check, trace_number: &str) {
    let field = ADDENDA.entry_detail_sequence_number;
    let tail = trace_number.get(8..).unwrap_or("");
    if c.digits(field).is_some() && c.value(field) != tail.as_bytes() {
        let expected = format!("{tail} (last 7 digits of the entry's trace number)");
        c.mismatch(FindingCode::AddendaEntrySequence, field, expected);
    }
}

/// Addenda 98, a notification of change.
fn check_change(c: &mut Check) {
    let l = ADDENDA98;
    let code = c.value(l.change_code);
    if !is_change_code(code) {
        c.error(
            FindingCode::ChangeCode,
            Some(l.change_code),
            "a change code C01-C14 or C61-C69",
            show(code),
        );
    }
    c.digits(l.original_entry_trace_number);
    c.digits(l.original_rdfi_identification);
}

/// Addenda 99, a return.
fn check_return(c: &mut Check) {
    let l = ADDENDA99;
    let code = c.value(l.return_reason_code);
    if !is_return_reason_code(code) {
        c.error(
            FindingCode::ReturnReasonCode,
            Some(l.return_reason_code),
            "a return reason code R01-R53, R61-R77 or R80-R85",
            show(code),
        );
    }
    c.digits(l.original_entry_trace_number);
    c.digits(l.original_rdfi_identification);
}

/// Rules on the entry's addenda as a whole, once they are all read. Findings point at
/// the entry detail record.
pub(crate) fn check_entry_addenda(findings: &mut FindingSink, p: &Pending) {
    check_indicator(findings, p);
    if let Some((declared, field)) = p.declared_addenda
        && declared != p.addenda_count
    {
        findings.push(Finding::error(
            FindingCode::AddendaCount,
            p.entry.position,
            Some(field),
            format!("{:04} (addenda records that follow)", p.addenda_count),
            format!("{declared:04}"),
        ));
    }
    if p.iat {
        check_iat_set(findings, p);
    }
}

/// The addenda record indicator says whether addenda follow.
fn check_indicator(findings: &mut FindingSink, p: &Pending) {
    let (expected, found) = match (p.indicator, p.addenda_count) {
        (b'0', 1..) => ("1 (the entry is followed by addenda)", "0"),
        (b'1', 0) => ("0 (no addenda follow the entry)", "1"),
        _ => return,
    };
    findings.push(Finding::error(
        FindingCode::AddendaIndicator,
        p.entry.position,
        Some(ENTRY_DETAIL.addenda_record_indicator),
        expected,
        found,
    ));
}

/// An IAT entry carries addenda 10 to 16, once each and in order; an IAT notification of
/// change (IATCOR) then one addenda 98 (addenda 17 and 18 aside).
fn check_iat_set(findings: &mut FindingSink, p: &Pending) {
    let mandatory: Vec<u8> = p
        .iat_types_seen
        .iter()
        .copied()
        .filter(|&t| (10..=16).contains(&t) || (p.iat_noc && t == 98))
        .collect();
    let (want, expected): (&[u8], _) = if p.iat_noc {
        (
            &[10, 11, 12, 13, 14, 15, 16, 98],
            "addenda 10,11,12,13,14,15,16 in order, then one addenda 98",
        )
    } else {
        (
            &[10, 11, 12, 13, 14, 15, 16],
            "addenda 10,11,12,13,14,15,16 in order",
        )
    };
    if mandatory != want {
        let found = mandatory
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(",");
        findings.push(Finding::error(
            FindingCode::AddendaCount,
            p.entry.position,
            Some(IAT_ENTRY_DETAIL.number_of_addenda_records),
            expected,
            found,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{errors, mutate, row};
    use crate::findings::FindingCode::{self, *};

    #[test]
    fn addenda_rules_report_their_exact_position() {
        let cases = vec![
            (
                3,
                79,
                "1",
                vec![row(
                    AddendaIndicator,
                    3,
                    "addenda_record_indicator",
                    "0 (no addenda follow the entry)",
                    "1",
                )],
            ),
            (
                4,
                79,
                "0",
                vec![row(
                    AddendaIndicator,
                    4,
                    "addenda_record_indicator",
                    "1 (the entry is followed by addenda)",
                    "0",
                )],
            ),
            (
                5,
                84,
                "0002",
                vec![row(
                    AddendaSequence,
                    5,
                    "addenda_sequence_number",
                    "0001",
                    "0002",
                )],
            ),
            (
                5,
                88,
                "0000009",
                vec![row(
                    AddendaEntrySequence,
                    5,
                    "entry_detail_sequence_number",
                    "0000002 (last 7 digits of the entry's trace number)",
                    "0000009",
                )],
            ),
            (
                5,
                2,
                "02",
                vec![row(
                    AddendaType,
                    5,
                    "addenda_type_code",
                    "an addenda type allowed in a PPD batch",
                    "02",
                )],
            ),
        ];
        for (line, col, with, want) in cases {
            let got = errors(&mutate(line, col, with));
            assert_eq!(got, want, "line {line} col {col} := {with:?}");
        }
    }

    #[test]
    fn a_declared_ctx_addenda_count_must_match() {
        let ctx = include_bytes!("../../../../samples/ctx-remittance.ach");
        let mut f = ctx.to_vec();
        // Entry on line 3; number of addenda records at columns 55-58.
        f[2 * 95 + 54..2 * 95 + 58].copy_from_slice(b"0002");
        assert_eq!(
            errors(&f),
            vec![row(
                FindingCode::AddendaCount,
                3,
                "number_of_addenda_records",
                "0003 (addenda records that follow)",
                "0002"
            )]
        );
    }

    #[test]
    fn return_and_change_codes_are_checked() {
        let ret = include_bytes!("../../../../samples/web-returns.ach");
        let mut f = ret.to_vec();
        // Addenda 99 on line 4, return reason code at columns 4-6.
        f[3 * 95 + 3..3 * 95 + 6].copy_from_slice(b"R99");
        assert_eq!(
            errors(&f),
            vec![row(
                FindingCode::ReturnReasonCode,
                4,
                "return_reason_code",
                "a return reason code R01-R53, R61-R77 or R80-R85",
                "R99"
            )]
        );
    }
}
