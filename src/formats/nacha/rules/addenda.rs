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

/// Addenda rules for one addenda record following the entry `p` in a `sec` batch; an
/// entry the ingest keeps takes the record's text.
pub(crate) fn check_addenda(c: &mut Check, p: &mut Pending, sec: &str) {
    let l = ADDENDA;
    let Some(ty) = c.digits(l.addenda_type_code) else {
        // A type unreadable for a non-ASCII byte (already a finding) is still an addenda
        // of the entry: counted, so that the indicator and counts say nothing more.
        if c.unreadable(l.addenda_type_code) {
            count_addenda(c, p);
        }
        return;
    };
    let ty = ty as u8;
    let allowed = type_allowed(ty, sec, p);
    if !allowed {
        let batch = if p.iat_noc { "IATCOR" } else { sec };
        // The article as the code is read, letter by letter ("an SHR", "a PPD").
        let article = match batch.bytes().next() {
            Some(
                b'A' | b'E' | b'F' | b'H' | b'I' | b'L' | b'M' | b'N' | b'O' | b'R' | b'S' | b'X',
            ) => "an",
            _ => "a",
        };
        c.error(
            FindingCode::AddendaType,
            Some(l.addenda_type_code),
            format!("an addenda type allowed in {article} {batch} batch"),
            format!("{ty:02}"),
        );
    }
    match ty {
        5 | 17 | 18 => check_sequence(c, p, ty),
        10 if allowed => {
            check_transaction_type_code(c);
            check_entry_sequence(c, p);
        }
        10..=16 => check_entry_sequence(c, p),
        98 => check_change(c),
        99 => check_return(c),
        _ => {}
    }
    if p.iat && matches!(ty, 10..=18 | 98) {
        p.iat_types_seen.push(ty);
    }
    count_addenda(c, p);
}

/// One more addenda of the entry `p` (at most [`ADDENDA_PER_ENTRY_MAX`]).
fn count_addenda(c: &mut Check, p: &mut Pending) {
    let l = ADDENDA;
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
    if let Some(entry) = p.entry.as_mut() {
        entry.addenda.push(text(c.record()));
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
        let list: Vec<String> = IAT_TRANSACTION_TYPE_CODES
            .iter()
            .map(|t| show(*t))
            .collect();
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
    check_entry_sequence(c, p);
}

/// The entry detail sequence number: the last 7 digits of the entry's trace number
/// (not compared with a trace number a non-ASCII byte made unreadable).
fn check_entry_sequence(c: &mut Check, p: &Pending) {
    if p.trace_unreadable {
        return;
    }
    let field = ADDENDA.entry_detail_sequence_number;
    let tail = p.trace.sequence();
    if c.digits(field).is_some() && c.value(field) != tail {
        let tail = String::from_utf8_lossy(tail);
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
        // The entry's own control of its addenda: kept past the findings limit (within
        // the room for controls), whatever its addenda reported before.
        findings.push_control(Finding::error(
            FindingCode::AddendaCount,
            p.position,
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
        p.position,
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
            p.position,
            Some(IAT_ENTRY_DETAIL.number_of_addenda_records),
            expected,
            found,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{
        FILE_HEADER_LINE, build, errors, iat_addenda, iat_batch_header, iat_entry, mutate, row,
    };
    use crate::findings::FindingCode::{self, *};
    use crate::formats::nacha::{Event, ValidateOptions, read_file};

    /// An IAT file: one batch (IAT indicator `indicator`, SEC code `sec`) of one entry
    /// with transaction code `code`, its addenda 10-16 (addenda 10 of transaction type
    /// `ttc`) and then `extra`.
    fn iat_file(indicator: &str, sec: &str, code: u8, ttc: &str, extra: &[String]) -> Vec<u8> {
        let mut lines = vec![
            FILE_HEADER_LINE.to_string(),
            iat_batch_header(indicator, sec, 1),
            iat_entry(code, 100_000, 7 + extra.len() as u32, 1),
        ];
        lines.extend(iat_addenda(ttc, 1));
        lines.extend_from_slice(extra);
        build(&lines)
    }

    /// An addenda 98 correcting the account number of the entry traced 231380100000001.
    fn addenda98(seq: u32) -> String {
        format!(
            "798C01231380100000001      23138010{:<29}{:15}12104288{seq:07}",
            "9922-C3", ""
        )
    }

    #[test]
    fn an_iat_addenda_10_transaction_type_code_is_one_of_the_list() {
        assert_eq!(errors(&iat_file("", "IAT", 22, "ANN", &[])), vec![]);
        assert_eq!(errors(&iat_file("", "IAT", 22, "WEB", &[])), vec![]);
        assert_eq!(
            errors(&iat_file("", "IAT", 22, "BIL", &[])),
            vec![row(
                InvalidValue,
                4,
                "transaction_type_code",
                "an IAT transaction type code (ANN, BUS, DEP, LOA, MIS, MOR, PEN, REM, RLS, \
                 SAL, TAX, ARC, BOC, IAT, MTE, POP, POS, RCK, SHR, TEL, WEB)",
                "BIL",
            )]
        );
    }

    #[test]
    fn an_iat_notification_of_change_is_accepted_with_its_addenda_counted() {
        // IATCOR: IAT layouts, SEC code COR, a return/NOC transaction code, addenda 10-16
        // then one addenda 98.
        let f = iat_file("IATCOR", "COR", 21, "ANN", &[addenda98(1)]);
        let mut entries = Vec::new();
        let on_event = &mut |ev| {
            if let Event::Entry(e) = ev {
                entries.push(e);
            }
        };
        let r = read_file(&f[..], ValidateOptions::default(), on_event, &mut |_| {}).unwrap();
        assert!(r.summary.findings.is_empty(), "{:?}", r.summary.findings);
        assert_eq!(
            (r.summary.entries, r.summary.addenda, r.summary.batches),
            (1, 8, 1)
        );
        // The batch control (line 12) counts the entry and its 8 addenda.
        let control = &f[11 * 95..12 * 95 - 1];
        assert_eq!(&control[4..10], b"000009");
        let e = &entries[0];
        assert_eq!((e.sec_code.as_str(), e.transaction_code), ("COR", 21));
        assert_eq!(e.company_identification, "123456789");
        assert_eq!(e.addenda.len(), 8);
        assert!(e.addenda[7].starts_with("798C01"));
    }

    #[test]
    fn malformed_iat_notifications_of_change_are_rejected() {
        let a98 = addenda98(1);
        // IATCOR with the SEC code of a forward IAT batch.
        assert_eq!(
            errors(&iat_file(
                "IATCOR",
                "IAT",
                21,
                "ANN",
                std::slice::from_ref(&a98)
            )),
            vec![row(
                SecCode,
                2,
                "standard_entry_class_code",
                "COR (the IAT indicator IATCOR makes the batch an IAT notification of change)",
                "IAT",
            )]
        );
        // No addenda 98, or two.
        let noc_set = "addenda 10,11,12,13,14,15,16 in order, then one addenda 98";
        assert_eq!(
            errors(&iat_file("IATCOR", "COR", 21, "ANN", &[])),
            vec![row(
                AddendaCount,
                3,
                "number_of_addenda_records",
                noc_set,
                "10,11,12,13,14,15,16"
            )]
        );
        assert_eq!(
            errors(&iat_file(
                "IATCOR",
                "COR",
                21,
                "ANN",
                &[a98.clone(), a98.clone()]
            )),
            vec![row(
                AddendaCount,
                3,
                "number_of_addenda_records",
                noc_set,
                "10,11,12,13,14,15,16,98,98"
            )]
        );
        // A forward entry's transaction code.
        assert_eq!(
            errors(&iat_file(
                "IATCOR",
                "COR",
                22,
                "ANN",
                std::slice::from_ref(&a98)
            )),
            vec![row(
                TransactionCode,
                3,
                "transaction_code",
                "a return or NOC transaction code (21, 26, 31, 36, 41, 46, 51, 56) in an IAT \
                 notification of change",
                "22",
            )]
        );
        // An addenda 98 in a forward IAT batch.
        assert_eq!(
            errors(&iat_file("", "IAT", 21, "ANN", std::slice::from_ref(&a98))),
            vec![row(
                AddendaType,
                11,
                "addenda_type_code",
                "an addenda type allowed in an IAT batch",
                "98",
            )]
        );
        // Without IATCOR, a COR batch is a domestic one: IAT addenda do not belong.
        let e = errors(&iat_file("", "COR", 21, "ANN", &[a98]));
        let types: Vec<_> = e
            .iter()
            .filter(|r| r.0 == AddendaType)
            .map(|r| r.1)
            .collect();
        assert_eq!(types, vec![4, 5, 6, 7, 8, 9, 10]);
    }

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
