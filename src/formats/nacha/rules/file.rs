//! File rules: the file header's fields, and the file control against what the whole
//! file's batches add up to.

use super::batch::Totals;
use super::check::{Check, text};
use crate::findings::{FieldSpec, FindingCode, Severity, show};
use crate::formats::nacha::assemble::FileHeaderInfo;
use crate::formats::nacha::record::*;
use crate::formats::nacha::validate::{is_blank, is_digits, is_hhmm, routing_check_digit};

/// File header rules; returns the header's identifying fields. With
/// `bypass_destination_check`, what is wrong with the immediate destination is a warning.
pub(crate) fn check_file_header(c: &mut Check, bypass_destination_check: bool) -> FileHeaderInfo {
    let h = parse_file_header(c.record());
    let l = FILE_HEADER;
    c.exact(l.priority_code, b"01");
    let before = c.kept();
    check_immediate_destination(c, &h);
    if bypass_destination_check {
        for f in c.kept_since_mut(before) {
            f.severity = Severity::Warning;
        }
    }
    c.non_blank(l.immediate_origin);
    c.date(l.file_creation_date, false);
    if !is_blank(h.file_creation_time) && !is_hhmm(h.file_creation_time) {
        c.error(
            FindingCode::FieldFormat,
            Some(l.file_creation_time),
            "HHMM or blank",
            show(h.file_creation_time),
        );
    }
    let modifier_ok =
        matches!(h.file_id_modifier, [m] if m.is_ascii_uppercase() || m.is_ascii_digit());
    if !modifier_ok {
        c.error(
            FindingCode::FieldFormat,
            Some(l.file_id_modifier),
            "A-Z or 0-9",
            show(h.file_id_modifier),
        );
    }
    c.exact(l.record_size, b"094");
    c.exact(l.blocking_factor, b"10");
    c.exact(l.format_code, b"1");
    header_info(&h)
}

/// A routing number with its check digit, blank first (10 digits: a company number).
fn check_immediate_destination(c: &mut Check, h: &FileHeader) {
    let field = FILE_HEADER.immediate_destination;
    let dest = h.immediate_destination.trim_ascii();
    match dest.split_last() {
        Some((&check, first8)) if dest.len() == 9 && is_digits(dest) => {
            let want = routing_check_digit(first8).unwrap_or(0);
            if check - b'0' != want {
                c.error(
                    FindingCode::CheckDigit,
                    Some(field),
                    format!("check digit {want} for routing {}", show(first8)),
                    show(dest),
                );
            }
        }
        _ if dest.len() == 10 && is_digits(dest) => {}
        _ => c.error(
            FindingCode::FieldFormat,
            Some(field),
            "a 9-digit routing number (blank first)",
            show(h.immediate_destination),
        ),
    }
}

fn header_info(h: &FileHeader) -> FileHeaderInfo {
    FileHeaderInfo {
        immediate_destination: text(h.immediate_destination.trim_ascii()),
        immediate_origin: text(h.immediate_origin.trim_ascii()),
        file_creation_date: text(h.file_creation_date),
        file_creation_time: text(h.file_creation_time.trim_ascii()),
        file_id_modifier: text(h.file_id_modifier),
        immediate_destination_name: text(h.immediate_destination_name),
        immediate_origin_name: text(h.immediate_origin_name),
    }
}

/// What the file's records add up to, for its control record.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FileCounts {
    pub(crate) batches: u64,
    /// Blocks of 10 records, padding excluded.
    pub(crate) blocks: u64,
    pub(crate) totals: Totals,
}

/// The file control fields, in the standard or the ADV layout.
struct ControlFields {
    batch_count: FieldSpec,
    block_count: FieldSpec,
    entry_addenda_count: FieldSpec,
    entry_hash: FieldSpec,
    total_debit: FieldSpec,
    total_credit: FieldSpec,
}

const STANDARD_CONTROL: ControlFields = ControlFields {
    batch_count: FILE_CONTROL.batch_count,
    block_count: FILE_CONTROL.block_count,
    entry_addenda_count: FILE_CONTROL.entry_addenda_count,
    entry_hash: FILE_CONTROL.entry_hash,
    total_debit: FILE_CONTROL.total_debit_entry_dollar_amount_in_file,
    total_credit: FILE_CONTROL.total_credit_entry_dollar_amount_in_file,
};

const ADV_CONTROL: ControlFields = ControlFields {
    batch_count: ADV_FILE_CONTROL.batch_count,
    block_count: ADV_FILE_CONTROL.block_count,
    entry_addenda_count: ADV_FILE_CONTROL.entry_addenda_count,
    entry_hash: ADV_FILE_CONTROL.entry_hash,
    total_debit: ADV_FILE_CONTROL.total_debit_entry_dollar_amount_in_file,
    total_credit: ADV_FILE_CONTROL.total_credit_entry_dollar_amount_in_file,
};

/// File control rules: every count and total against the file's (`adv`: a file of ADV
/// batches only, whose control has the wider totals).
pub(crate) fn check_file_control(c: &mut Check, adv: bool, n: &FileCounts) {
    use FindingCode::*;
    let l = if adv { ADV_CONTROL } else { STANDARD_CONTROL };
    let t = &n.totals;
    // What a non-ASCII byte made unknown is not compared (`batch::Unknown`).
    let u = t.unknown;
    if !u.batches {
        c.total(BatchCountMismatch, l.batch_count, n.batches);
    }
    c.total(BlockCountMismatch, l.block_count, n.blocks);
    if !u.entry_addenda_count {
        c.total(
            EntryAddendaCountMismatch,
            l.entry_addenda_count,
            t.entry_addenda_count,
        );
    }
    if !u.entry_hash {
        c.total(EntryHashMismatch, l.entry_hash, t.entry_hash);
    }
    if !u.debit {
        c.total(TotalDebitMismatch, l.total_debit, t.debit_minor);
    }
    if !u.credit {
        c.total(TotalCreditMismatch, l.total_credit, t.credit_minor);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{errors, mutate, row};
    use crate::findings::FindingCode::*;

    #[test]
    fn file_header_rules_report_their_exact_position() {
        let cases = vec![
            (
                1,
                2,
                "02",
                vec![row(InvalidValue, 1, "priority_code", "\"01\"", "02")],
            ),
            (
                1,
                13,
                "5",
                vec![row(
                    CheckDigit,
                    1,
                    "immediate_destination",
                    "check digit 4 for routing 23138010",
                    "231380105",
                )],
            ),
            (
                1,
                24,
                "260230",
                vec![row(
                    FieldFormat,
                    1,
                    "file_creation_date",
                    "a calendar date YYMMDD",
                    "260230",
                )],
            ),
            (
                1,
                30,
                "2460",
                vec![row(
                    FieldFormat,
                    1,
                    "file_creation_time",
                    "HHMM or blank",
                    "2460",
                )],
            ),
            (
                1,
                34,
                "a",
                vec![row(FieldFormat, 1, "file_id_modifier", "A-Z or 0-9", "a")],
            ),
            (
                1,
                35,
                "095",
                vec![row(InvalidValue, 1, "record_size", "\"094\"", "095")],
            ),
            (
                1,
                38,
                "20",
                vec![row(InvalidValue, 1, "blocking_factor", "\"10\"", "20")],
            ),
            (
                1,
                40,
                "2",
                vec![row(InvalidValue, 1, "format_code", "\"1\"", "2")],
            ),
        ];
        for (line, col, with, want) in cases {
            let got = errors(&mutate(line, col, with));
            assert_eq!(got, want, "line {line} col {col} := {with:?}");
        }
    }

    #[test]
    fn file_control_rules_report_their_exact_position() {
        let cases = vec![
            (
                9,
                2,
                "000002",
                vec![row(
                    BatchCountMismatch,
                    9,
                    "batch_count",
                    "000001",
                    "000002",
                )],
            ),
            (
                9,
                8,
                "000002",
                vec![row(
                    BlockCountMismatch,
                    9,
                    "block_count",
                    "000001",
                    "000002",
                )],
            ),
            (
                9,
                14,
                "00000006",
                vec![row(
                    EntryAddendaCountMismatch,
                    9,
                    "entry_addenda_count",
                    "00000005",
                    "00000006",
                )],
            ),
            (
                9,
                22,
                "0000000001",
                vec![row(
                    EntryHashMismatch,
                    9,
                    "entry_hash",
                    "0063016146",
                    "0000000001",
                )],
            ),
        ];
        for (line, col, with, want) in cases {
            let got = errors(&mutate(line, col, with));
            assert_eq!(got, want, "line {line} col {col} := {with:?}");
        }
    }
}
