//! Record layouts and pure record parsers.
//!
//! Each layout is declared once, with the spec's 1-based column ranges; the macro
//! generates a struct of borrowed fields, a `*_LAYOUT` constant giving each field's
//! [`FieldSpec`] (used in findings), and a parser over one framed record.
//!
//! A framed record is exactly [`RECORD_LEN`] bytes (`&[u8; RECORD_LEN]`: the reader
//! frames, the assembler checks the length once), so splitting it into its fixed fields
//! cannot fail: every column range is checked against the record length when the crate
//! compiles, and a field is a plain slice, as pcap-parser reads its fixed headers. nom is
//! for grammars (BAI2, MT940), not for fixed columns. Parsers only split; the rules live
//! in `validate.rs` (fields) and `rules/` (records).

use crate::findings::FieldSpec;

/// Length of every NACHA record.
pub const RECORD_LEN: usize = 94;

macro_rules! record_layout {
    (
        $(#[$meta:meta])*
        $name:ident, $layout_ty:ident, $layout:ident, $parser:ident, $record:literal {
            $( $(#[$fmeta:meta])* $field:ident : $start:literal - $end:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name<'a> {
            $( $(#[$fmeta])* pub $field: &'a [u8], )*
        }

        #[cfg(test)]
        impl<'a> $name<'a> {
            /// Every field's bytes, in column order (to compare with the layout).
            pub(crate) fn values(&self) -> Vec<&'a [u8]> {
                vec![$( self.$field, )*]
            }
        }

        /// Field positions of the layout, for findings.
        #[derive(Debug, Clone, Copy)]
        pub struct $layout_ty {
            $( pub $field: FieldSpec, )*
        }

        impl $layout_ty {
            /// Every field, in column order.
            pub fn fields(&self) -> Vec<FieldSpec> {
                vec![$( self.$field, )*]
            }
        }

        pub const $layout: $layout_ty = $layout_ty {
            $( $field: FieldSpec { record: $record, name: stringify!($field), start: $start, end: $end }, )*
        };

        // Every column range lies inside a framed record: checked when the crate compiles,
        // so the slices below cannot fail.
        const _: () = {
            $( assert!(1 <= $start && $start <= $end && $end <= RECORD_LEN); )*
        };

        /// Splits one framed record into its fields.
        pub fn $parser(record: &[u8; RECORD_LEN]) -> $name<'_> {
            $name {
                $( $field: &record[$start - 1..$end], )*
            }
        }
    };
}

record_layout! {
    /// File header record (type 1).
    FileHeader, FileHeaderLayout, FILE_HEADER, parse_file_header, "file_header" {
        record_type: 1-1,
        priority_code: 2-3,
        /// Blank followed by the 9-digit routing number of the receiving point.
        immediate_destination: 4-13,
        immediate_origin: 14-23,
        /// YYMMDD.
        file_creation_date: 24-29,
        /// HHMM, may be blank.
        file_creation_time: 30-33,
        file_id_modifier: 34-34,
        record_size: 35-37,
        blocking_factor: 38-39,
        format_code: 40-40,
        immediate_destination_name: 41-63,
        immediate_origin_name: 64-86,
        reference_code: 87-94,
    }
}

record_layout! {
    /// Batch header record (type 5), every SEC code but IAT.
    BatchHeader, BatchHeaderLayout, BATCH_HEADER, parse_batch_header, "batch_header" {
        record_type: 1-1,
        service_class_code: 2-4,
        company_name: 5-20,
        company_discretionary_data: 21-40,
        company_identification: 41-50,
        standard_entry_class_code: 51-53,
        company_entry_description: 54-63,
        company_descriptive_date: 64-69,
        /// YYMMDD.
        effective_entry_date: 70-75,
        /// Julian day, filled in by the ACH operator.
        settlement_date: 76-78,
        originator_status_code: 79-79,
        odfi_identification: 80-87,
        batch_number: 88-94,
    }
}

record_layout! {
    /// IAT batch header record (type 5, SEC code IAT).
    IatBatchHeader, IatBatchHeaderLayout, IAT_BATCH_HEADER, parse_iat_batch_header, "iat_batch_header" {
        record_type: 1-1,
        service_class_code: 2-4,
        iat_indicator: 5-20,
        foreign_exchange_indicator: 21-22,
        foreign_exchange_reference_indicator: 23-23,
        foreign_exchange_reference: 24-38,
        iso_destination_country_code: 39-40,
        originator_identification: 41-50,
        standard_entry_class_code: 51-53,
        company_entry_description: 54-63,
        iso_originating_currency_code: 64-66,
        iso_destination_currency_code: 67-69,
        effective_entry_date: 70-75,
        settlement_date: 76-78,
        originator_status_code: 79-79,
        odfi_identification: 80-87,
        batch_number: 88-94,
    }
}

record_layout! {
    /// Entry detail record (type 6): PPD, CCD, WEB, TEL, POS, COR, returns and the rest
    /// (`sec.rs` says which layout each SEC code uses).
    EntryDetail, EntryDetailLayout, ENTRY_DETAIL, parse_entry_detail, "entry_detail" {
        record_type: 1-1,
        transaction_code: 2-3,
        rdfi_identification: 4-11,
        check_digit: 12-12,
        dfi_account_number: 13-29,
        /// Cents, zero-filled.
        amount: 30-39,
        individual_identification_number: 40-54,
        individual_name: 55-76,
        discretionary_data: 77-78,
        addenda_record_indicator: 79-79,
        trace_number: 80-94,
    }
}

record_layout! {
    /// CIE entry detail record (customer-initiated entry), also MTE's (machine transfer
    /// entry): the individual name comes before the individual identification number, the
    /// other way round from PPD.
    CieEntryDetail, CieEntryDetailLayout, CIE_ENTRY_DETAIL, parse_cie_entry_detail, "cie_entry_detail" {
        record_type: 1-1,
        transaction_code: 2-3,
        rdfi_identification: 4-11,
        check_digit: 12-12,
        dfi_account_number: 13-29,
        amount: 30-39,
        individual_name: 40-54,
        individual_identification_number: 55-76,
        discretionary_data: 77-78,
        addenda_record_indicator: 79-79,
        trace_number: 80-94,
    }
}

record_layout! {
    /// SHR entry detail record (shared network transaction): PPD's columns, with the card
    /// expiration date and document reference number in the identification number's place,
    /// the card account number in the individual name's.
    ShrEntryDetail, ShrEntryDetailLayout, SHR_ENTRY_DETAIL, parse_shr_entry_detail, "shr_entry_detail" {
        record_type: 1-1,
        transaction_code: 2-3,
        rdfi_identification: 4-11,
        check_digit: 12-12,
        dfi_account_number: 13-29,
        amount: 30-39,
        /// MMYY.
        card_expiration_date: 40-43,
        document_reference_number: 44-54,
        individual_card_account_number: 55-76,
        card_transaction_type_code: 77-78,
        addenda_record_indicator: 79-79,
        trace_number: 80-94,
    }
}

record_layout! {
    /// CTX entry detail record: carries its addenda count and the receiving company.
    CtxEntryDetail, CtxEntryDetailLayout, CTX_ENTRY_DETAIL, parse_ctx_entry_detail, "ctx_entry_detail" {
        record_type: 1-1,
        transaction_code: 2-3,
        rdfi_identification: 4-11,
        check_digit: 12-12,
        dfi_account_number: 13-29,
        amount: 30-39,
        identification_number: 40-54,
        number_of_addenda_records: 55-58,
        receiving_company_name: 59-74,
        reserved: 75-76,
        discretionary_data: 77-78,
        addenda_record_indicator: 79-79,
        trace_number: 80-94,
    }
}

record_layout! {
    /// IAT entry detail record.
    IatEntryDetail, IatEntryDetailLayout, IAT_ENTRY_DETAIL, parse_iat_entry_detail, "iat_entry_detail" {
        record_type: 1-1,
        transaction_code: 2-3,
        rdfi_identification: 4-11,
        check_digit: 12-12,
        number_of_addenda_records: 13-16,
        reserved: 17-29,
        amount: 30-39,
        foreign_receiver_account_number: 40-74,
        reserved_two: 75-76,
        gateway_operator_ofac_screening_indicator: 77-77,
        secondary_ofac_screening_indicator: 78-78,
        addenda_record_indicator: 79-79,
        trace_number: 80-94,
    }
}

record_layout! {
    /// ADV (automated accounting advice) entry detail record.
    AdvEntryDetail, AdvEntryDetailLayout, ADV_ENTRY_DETAIL, parse_adv_entry_detail, "adv_entry_detail" {
        record_type: 1-1,
        transaction_code: 2-3,
        rdfi_identification: 4-11,
        check_digit: 12-12,
        dfi_account_number: 13-27,
        /// Cents, 12 digits.
        amount: 28-39,
        advice_routing_number: 40-48,
        file_identification: 49-53,
        ach_operator_data: 54-54,
        individual_name: 55-76,
        discretionary_data: 77-78,
        addenda_record_indicator: 79-79,
        ach_operator_routing_number: 80-87,
        julian_day: 88-90,
        sequence_number: 91-94,
    }
}

record_layout! {
    /// Addenda record, the shape shared by types 05, 17 and 18 (and the tail of 10-16).
    Addenda, AddendaLayout, ADDENDA, parse_addenda, "addenda" {
        record_type: 1-1,
        addenda_type_code: 2-3,
        payment_related_information: 4-83,
        addenda_sequence_number: 84-87,
        entry_detail_sequence_number: 88-94,
    }
}

record_layout! {
    /// Addenda type 10 (IAT): transaction type, foreign payment amount and trace number,
    /// the receiver's name.
    Addenda10, Addenda10Layout, ADDENDA10, parse_addenda10, "addenda10" {
        record_type: 1-1,
        addenda_type_code: 2-3,
        transaction_type_code: 4-6,
        foreign_payment_amount: 7-24,
        foreign_trace_number: 25-46,
        name: 47-81,
        reserved: 82-87,
        entry_detail_sequence_number: 88-94,
    }
}

record_layout! {
    /// Addenda type 98: notification of change.
    Addenda98, Addenda98Layout, ADDENDA98, parse_addenda98, "addenda98" {
        record_type: 1-1,
        addenda_type_code: 2-3,
        change_code: 4-6,
        original_entry_trace_number: 7-21,
        reserved: 22-27,
        original_rdfi_identification: 28-35,
        corrected_data: 36-64,
        reserved_two: 65-79,
        trace_number: 80-94,
    }
}

record_layout! {
    /// Addenda type 99: return, dishonored return or contested dishonored return.
    Addenda99, Addenda99Layout, ADDENDA99, parse_addenda99, "addenda99" {
        record_type: 1-1,
        addenda_type_code: 2-3,
        return_reason_code: 4-6,
        original_entry_trace_number: 7-21,
        date_of_death: 22-27,
        original_rdfi_identification: 28-35,
        addenda_information: 36-79,
        trace_number: 80-94,
    }
}

record_layout! {
    /// Addenda type 02 (POS, SHR, MTE): terminal information.
    Addenda02, Addenda02Layout, ADDENDA02, parse_addenda02, "addenda02" {
        record_type: 1-1,
        addenda_type_code: 2-3,
        reference_information_one: 4-10,
        reference_information_two: 11-13,
        terminal_identification_code: 14-19,
        transaction_serial_number: 20-25,
        transaction_date: 26-29,
        authorization_code_or_card_expiration_date: 30-35,
        terminal_location: 36-62,
        terminal_city: 63-77,
        terminal_state: 78-79,
        trace_number: 80-94,
    }
}

record_layout! {
    /// Batch control record (type 8).
    BatchControl, BatchControlLayout, BATCH_CONTROL, parse_batch_control, "batch_control" {
        record_type: 1-1,
        service_class_code: 2-4,
        entry_addenda_count: 5-10,
        entry_hash: 11-20,
        total_debit_entry_dollar_amount: 21-32,
        total_credit_entry_dollar_amount: 33-44,
        company_identification: 45-54,
        message_authentication_code: 55-73,
        reserved: 74-79,
        odfi_identification: 80-87,
        batch_number: 88-94,
    }
}

record_layout! {
    /// ADV batch control record: wider totals, no company identification.
    AdvBatchControl, AdvBatchControlLayout, ADV_BATCH_CONTROL, parse_adv_batch_control, "adv_batch_control" {
        record_type: 1-1,
        service_class_code: 2-4,
        entry_addenda_count: 5-10,
        entry_hash: 11-20,
        total_debit_entry_dollar_amount: 21-40,
        total_credit_entry_dollar_amount: 41-60,
        ach_operator_data: 61-79,
        odfi_identification: 80-87,
        batch_number: 88-94,
    }
}

record_layout! {
    /// File control record (type 9).
    FileControl, FileControlLayout, FILE_CONTROL, parse_file_control, "file_control" {
        record_type: 1-1,
        batch_count: 2-7,
        block_count: 8-13,
        entry_addenda_count: 14-21,
        entry_hash: 22-31,
        total_debit_entry_dollar_amount_in_file: 32-43,
        total_credit_entry_dollar_amount_in_file: 44-55,
        reserved: 56-94,
    }
}

record_layout! {
    /// ADV file control record: wider totals.
    AdvFileControl, AdvFileControlLayout, ADV_FILE_CONTROL, parse_adv_file_control, "adv_file_control" {
        record_type: 1-1,
        batch_count: 2-7,
        block_count: 8-13,
        entry_addenda_count: 14-21,
        entry_hash: 22-31,
        total_debit_entry_dollar_amount_in_file: 32-51,
        total_credit_entry_dollar_amount_in_file: 52-71,
        reserved: 72-94,
    }
}

/// The columns of a framed record that held a non-ASCII (or non-printable) byte or a
/// multi-byte UTF-8 character: already one `non_ascii_byte` finding, so the rules say
/// nothing more about the fields they fall in (see `rules/check.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct NonAsciiColumns(u128);

const _: () = assert!(RECORD_LEN <= 128);

impl NonAsciiColumns {
    /// The non-printable bytes of `record` (a character the reader read as `?` is not
    /// among them: the reader says which columns those are).
    pub(crate) fn of(record: &[u8]) -> Self {
        let mut cols = Self::default();
        for (i, &b) in record.iter().enumerate().take(RECORD_LEN) {
            if !(0x20..=0x7e).contains(&b) {
                cols.insert(i as u16 + 1);
            }
        }
        cols
    }
    /// Adds 1-based column `col`.
    pub(crate) fn insert(&mut self, col: u16) {
        if (1..=RECORD_LEN as u16).contains(&col) {
            self.0 |= 1 << (col - 1);
        }
    }
    pub(crate) fn union(self, other: Self) -> Self {
        NonAsciiColumns(self.0 | other.0)
    }
    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Whether 1-based column `col` is one.
    pub(crate) fn contains(self, col: u16) -> bool {
        (1..=RECORD_LEN as u16).contains(&col) && self.0 & (1 << (col - 1)) != 0
    }
    /// Whether one of them falls in `field`'s columns.
    /// One mask test, not a loop over the columns: this runs for several fields of every
    /// record, and almost every record has no such column.
    pub(crate) fn in_field(self, field: FieldSpec) -> bool {
        let (start, end) = (field.start.max(1), field.end.min(RECORD_LEN as u16));
        if self.0 == 0 || start > end {
            return false;
        }
        let width = u32::from(end - start + 1);
        let mask = (u128::MAX >> (128 - width)) << (start - 1);
        self.0 & mask != 0
    }
}

/// True for a padding record: 94 nines, written after the file control to fill the block.
pub fn is_padding(record: &[u8]) -> bool {
    record.len() == RECORD_LEN && record.iter().all(|&b| b == b'9')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_ascii_columns_fall_in_a_field_by_its_column_range() {
        let field = |start, end| FieldSpec {
            record: "r",
            name: "f",
            start,
            end,
        };
        let mut cols = NonAsciiColumns::default();
        assert!(!cols.in_field(field(1, 94)));
        for col in [1, 40, 94] {
            cols.insert(col);
        }
        let hits: Vec<bool> = [
            (1, 1),
            (2, 39),
            (30, 40),
            (40, 40),
            (41, 93),
            (94, 94),
            (1, 94),
        ]
        .iter()
        .map(|&(s, e)| cols.in_field(field(s, e)))
        .collect();
        assert_eq!(hits, [true, false, true, true, false, true, true]);
        // Out-of-range columns are none of the record's.
        assert!(!cols.in_field(field(95, 120)));
    }

    fn all_layouts() -> Vec<Vec<FieldSpec>> {
        vec![
            FILE_HEADER.fields(),
            BATCH_HEADER.fields(),
            IAT_BATCH_HEADER.fields(),
            ENTRY_DETAIL.fields(),
            CIE_ENTRY_DETAIL.fields(),
            SHR_ENTRY_DETAIL.fields(),
            CTX_ENTRY_DETAIL.fields(),
            IAT_ENTRY_DETAIL.fields(),
            ADV_ENTRY_DETAIL.fields(),
            ADDENDA.fields(),
            ADDENDA10.fields(),
            ADDENDA98.fields(),
            ADDENDA99.fields(),
            ADDENDA02.fields(),
            BATCH_CONTROL.fields(),
            ADV_BATCH_CONTROL.fields(),
            FILE_CONTROL.fields(),
            ADV_FILE_CONTROL.fields(),
        ]
    }

    #[test]
    fn every_layout_covers_columns_1_to_94_without_gaps() {
        for layout in all_layouts() {
            let mut next = 1;
            for f in &layout {
                assert_eq!(
                    f.start, next,
                    "{}.{} starts at {}",
                    f.record, f.name, f.start
                );
                assert!(f.end >= f.start);
                next = f.end + 1;
            }
            assert_eq!(next, 95, "layout {} ends at {}", layout[0].record, next - 1);
        }
    }

    #[test]
    fn every_parser_splits_at_its_layout_columns() {
        // Column i holds a byte that names it, so a field off by one column shows.
        let mut rec = [0u8; RECORD_LEN];
        for (i, b) in rec.iter_mut().enumerate() {
            *b = b'!' + (i % 90) as u8;
        }
        macro_rules! same {
            ($($parser:ident, $layout:ident;)*) => {$(
                let values = $parser(&rec).values();
                let fields = $layout.fields();
                assert_eq!(values.len(), fields.len(), stringify!($parser));
                for (v, f) in values.iter().zip(&fields) {
                    assert_eq!(*v, f.slice(&rec), "{}", f.label());
                }
            )*};
        }
        same! {
            parse_file_header, FILE_HEADER;
            parse_batch_header, BATCH_HEADER;
            parse_iat_batch_header, IAT_BATCH_HEADER;
            parse_entry_detail, ENTRY_DETAIL;
            parse_cie_entry_detail, CIE_ENTRY_DETAIL;
            parse_shr_entry_detail, SHR_ENTRY_DETAIL;
            parse_ctx_entry_detail, CTX_ENTRY_DETAIL;
            parse_iat_entry_detail, IAT_ENTRY_DETAIL;
            parse_adv_entry_detail, ADV_ENTRY_DETAIL;
            parse_addenda, ADDENDA;
            parse_addenda10, ADDENDA10;
            parse_addenda98, ADDENDA98;
            parse_addenda99, ADDENDA99;
            parse_addenda02, ADDENDA02;
            parse_batch_control, BATCH_CONTROL;
            parse_adv_batch_control, ADV_BATCH_CONTROL;
            parse_file_control, FILE_CONTROL;
            parse_adv_file_control, ADV_FILE_CONTROL;
        }
    }

    #[test]
    fn parses_entry_detail_fields_at_spec_columns() {
        let rec = b"62723138010412345678         0100000000               Receiver Account Name   0121042880000001";
        let e = parse_entry_detail(rec);
        assert_eq!(e.transaction_code, b"27");
        assert_eq!(e.rdfi_identification, b"23138010");
        assert_eq!(e.check_digit, b"4");
        assert_eq!(e.dfi_account_number, b"12345678         ");
        assert_eq!(e.amount, b"0100000000");
        assert_eq!(e.individual_name, b"Receiver Account Name ");
        assert_eq!(e.addenda_record_indicator, b"0");
        assert_eq!(e.trace_number, b"121042880000001");
        assert_eq!(ENTRY_DETAIL.amount.slice(rec), b"0100000000");
    }

    #[test]
    fn parses_adv_entry_detail_fields() {
        let rec = b"681231380104744-5678-99    00000005000012104288211131 Name                    0011000010500001";
        let e = parse_adv_entry_detail(rec);
        assert_eq!(e.transaction_code, b"81");
        assert_eq!(e.amount, b"000000050000");
        assert_eq!(e.advice_routing_number, b"121042882");
        assert_eq!(e.addenda_record_indicator, b"0");
        assert_eq!(e.ach_operator_routing_number, b"01100001");
        assert_eq!(e.julian_day, b"050");
        assert_eq!(e.sequence_number, b"0001");
    }

    #[test]
    fn short_input_is_not_a_framed_record() {
        // Only a 94-byte record reaches a parser; a short one is a finding upstream.
        assert!(<&[u8; RECORD_LEN]>::try_from(&b"9000001"[..]).is_err());
    }

    #[test]
    fn padding_is_94_nines() {
        assert!(is_padding(&[b'9'; 94]));
        let mut r = [b'9'; 94];
        r[93] = b' ';
        assert!(!is_padding(&r));
    }
}
