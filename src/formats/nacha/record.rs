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
            $(
                #[doc = concat!("Columns ", stringify!($start), "-", stringify!($end), ".")]
                $(#[$fmeta])*
                pub $field: &'a [u8],
            )*
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
        pub(crate) struct $layout_ty {
            $( pub(crate) $field: FieldSpec, )*
        }

        impl $layout_ty {
            /// Every field, in column order.
            pub(crate) fn fields(&self) -> Vec<FieldSpec> {
                vec![$( self.$field, )*]
            }
        }

        pub(crate) const $layout: $layout_ty = $layout_ty {
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
        /// Record type code: `1` for the file header.
        record_type: 1-1,
        /// Priority code: `01` (not used by the ACH operators).
        priority_code: 2-3,
        /// Blank followed by the 9-digit routing number of the receiving point.
        immediate_destination: 4-13,
        /// Blank followed by the 9-digit routing number of the sending point (the ODFI or
        /// its processor), or a 10-character company id.
        immediate_origin: 14-23,
        /// File creation date, YYMMDD.
        file_creation_date: 24-29,
        /// File creation time, HHMM, may be blank.
        file_creation_time: 30-33,
        /// File ID modifier, `A`-`Z` or `0`-`9`: tells apart files sent the same day by the
        /// same origin to the same destination.
        file_id_modifier: 34-34,
        /// Record size: `094`.
        record_size: 35-37,
        /// Blocking factor: `10` records per block.
        blocking_factor: 38-39,
        /// Format code: `1`.
        format_code: 40-40,
        /// Name of the receiving point (the ACH operator or receiving bank).
        immediate_destination_name: 41-63,
        /// Name of the sending point.
        immediate_origin_name: 64-86,
        /// Reference code, for the originator's own use.
        reference_code: 87-94,
    }
}

record_layout! {
    /// Batch header record (type 5), every SEC code but IAT.
    BatchHeader, BatchHeaderLayout, BATCH_HEADER, parse_batch_header, "batch_header" {
        /// Record type code: `5` for a batch header.
        record_type: 1-1,
        /// Service class code: `200` mixed debits and credits, `220` credits only, `225`
        /// debits only, `280` ADV.
        service_class_code: 2-4,
        /// Name of the originator, as the receiver knows it.
        company_name: 5-20,
        /// Originator's own data, not read by the ACH network.
        company_discretionary_data: 21-40,
        /// The originator's identification (usually `1` then its 9-digit IRS employer id);
        /// a batch control repeats its batch header's.
        company_identification: 41-50,
        /// Standard entry class (SEC) code: the kind of entries in the batch (`PPD`, `CCD`,
        /// `WEB`, `CTX`, `IAT`, …).
        standard_entry_class_code: 51-53,
        /// Company entry description shown to the receiver (`PAYROLL`, `REVERSAL`, …).
        company_entry_description: 54-63,
        /// Descriptive date shown to the receiver, free form (often YYMMDD); not the
        /// settlement date.
        company_descriptive_date: 64-69,
        /// Effective entry date: the day the originator wants the entries settled, YYMMDD.
        effective_entry_date: 70-75,
        /// Settlement date, a Julian day, filled in by the ACH operator.
        settlement_date: 76-78,
        /// Originator status code: `1` an ODFI bound by the NACHA rules, `2` a government
        /// agency.
        originator_status_code: 79-79,
        /// The ODFI's 8-digit routing number, without its check digit.
        odfi_identification: 80-87,
        /// Batch number, ascending within the file.
        batch_number: 88-94,
    }
}

record_layout! {
    /// IAT batch header record (type 5, SEC code IAT).
    IatBatchHeader, IatBatchHeaderLayout, IAT_BATCH_HEADER, parse_iat_batch_header, "iat_batch_header" {
        /// Record type code: `5` for a batch header.
        record_type: 1-1,
        /// Service class code: `200` mixed debits and credits, `220` credits only, `225`
        /// debits only, `280` ADV.
        service_class_code: 2-4,
        /// IAT indicator: blank, or `IATCOR` in an IAT notification of change.
        iat_indicator: 5-20,
        /// Foreign exchange indicator: `FV` fixed to variable, `VF` variable to fixed, `FF`
        /// fixed to fixed.
        foreign_exchange_indicator: 21-22,
        /// What the foreign exchange reference is: `1` a rate, `2` a reference number, `3`
        /// blank.
        foreign_exchange_reference_indicator: 23-23,
        /// Foreign exchange rate or reference, as the indicator says.
        foreign_exchange_reference: 24-38,
        /// ISO 3166 two-letter code of the receiver's country.
        iso_destination_country_code: 39-40,
        /// Originator identification (IAT: as the company identification of other batches).
        originator_identification: 41-50,
        /// Standard entry class (SEC) code: the kind of entries in the batch (`PPD`, `CCD`,
        /// `WEB`, `CTX`, `IAT`, …).
        standard_entry_class_code: 51-53,
        /// Company entry description shown to the receiver (`PAYROLL`, `REVERSAL`, …).
        company_entry_description: 54-63,
        /// ISO 4217 code of the currency the entries were originated in.
        iso_originating_currency_code: 64-66,
        /// ISO 4217 code of the currency the receiver is paid in.
        iso_destination_currency_code: 67-69,
        /// Effective entry date: the day the originator wants the entries settled, YYMMDD.
        effective_entry_date: 70-75,
        /// Settlement date, a Julian day, filled in by the ACH operator.
        settlement_date: 76-78,
        /// Originator status code: `1` an ODFI bound by the NACHA rules, `2` a government
        /// agency.
        originator_status_code: 79-79,
        /// The ODFI's 8-digit routing number, without its check digit.
        odfi_identification: 80-87,
        /// Batch number, ascending within the file.
        batch_number: 88-94,
    }
}

record_layout! {
    /// Entry detail record (type 6): PPD, CCD, WEB, TEL, POS, COR, returns and the rest
    /// (`sec.rs` says which layout each SEC code uses).
    EntryDetail, EntryDetailLayout, ENTRY_DETAIL, parse_entry_detail, "entry_detail" {
        /// Record type code: `6` for an entry detail.
        record_type: 1-1,
        /// Transaction code: the account type and direction (`22` checking credit, `27`
        /// checking debit, `32` savings credit, `37` savings debit; `x3`/`x8` prenotes,
        /// `x1`/`x6` returns and NOCs).
        transaction_code: 2-3,
        /// The RDFI's routing number, first 8 digits (without the check digit).
        rdfi_identification: 4-11,
        /// Check digit of the RDFI routing number (ABA weights 3, 7, 1).
        check_digit: 12-12,
        /// The receiver's account number at the RDFI, left-justified.
        dfi_account_number: 13-29,
        /// Amount in cents, zero-filled, no decimal point.
        amount: 30-39,
        /// The receiver's identification number at the originator (employee or customer
        /// id); its meaning depends on the SEC code.
        individual_identification_number: 40-54,
        /// The receiver's name (or what the SEC code keeps in its place).
        individual_name: 55-76,
        /// Discretionary data, for the ODFI's own use (WEB: the payment type code).
        discretionary_data: 77-78,
        /// Addenda record indicator: `1` when addenda records follow the entry, else `0`.
        addenda_record_indicator: 79-79,
        /// Trace number: the ODFI's 8-digit routing number then a 7-digit sequence number,
        /// unique per entry.
        trace_number: 80-94,
    }
}

record_layout! {
    /// CIE entry detail record (customer-initiated entry), also MTE's (machine transfer
    /// entry): the individual name comes before the individual identification number, the
    /// other way round from PPD.
    CieEntryDetail, CieEntryDetailLayout, CIE_ENTRY_DETAIL, parse_cie_entry_detail, "cie_entry_detail" {
        /// Record type code: `6` for an entry detail.
        record_type: 1-1,
        /// Transaction code: the account type and direction (`22` checking credit, `27`
        /// checking debit, `32` savings credit, `37` savings debit; `x3`/`x8` prenotes,
        /// `x1`/`x6` returns and NOCs).
        transaction_code: 2-3,
        /// The RDFI's routing number, first 8 digits (without the check digit).
        rdfi_identification: 4-11,
        /// Check digit of the RDFI routing number (ABA weights 3, 7, 1).
        check_digit: 12-12,
        /// The receiver's account number at the RDFI, left-justified.
        dfi_account_number: 13-29,
        /// Amount in cents, zero-filled, no decimal point.
        amount: 30-39,
        /// The receiver's name (or what the SEC code keeps in its place).
        individual_name: 40-54,
        /// The receiver's identification number at the originator (employee or customer
        /// id); its meaning depends on the SEC code.
        individual_identification_number: 55-76,
        /// Discretionary data, for the ODFI's own use (WEB: the payment type code).
        discretionary_data: 77-78,
        /// Addenda record indicator: `1` when addenda records follow the entry, else `0`.
        addenda_record_indicator: 79-79,
        /// Trace number: the ODFI's 8-digit routing number then a 7-digit sequence number,
        /// unique per entry.
        trace_number: 80-94,
    }
}

record_layout! {
    /// SHR entry detail record (shared network transaction): PPD's columns, with the card
    /// expiration date and document reference number in the identification number's place,
    /// the card account number in the individual name's.
    ShrEntryDetail, ShrEntryDetailLayout, SHR_ENTRY_DETAIL, parse_shr_entry_detail, "shr_entry_detail" {
        /// Record type code: `6` for an entry detail.
        record_type: 1-1,
        /// Transaction code: the account type and direction (`22` checking credit, `27`
        /// checking debit, `32` savings credit, `37` savings debit; `x3`/`x8` prenotes,
        /// `x1`/`x6` returns and NOCs).
        transaction_code: 2-3,
        /// The RDFI's routing number, first 8 digits (without the check digit).
        rdfi_identification: 4-11,
        /// Check digit of the RDFI routing number (ABA weights 3, 7, 1).
        check_digit: 12-12,
        /// The receiver's account number at the RDFI, left-justified.
        dfi_account_number: 13-29,
        /// Amount in cents, zero-filled, no decimal point.
        amount: 30-39,
        /// Card expiration date, MMYY.
        card_expiration_date: 40-43,
        /// Document reference number of the card transaction.
        document_reference_number: 44-54,
        /// The card account number (SHR).
        individual_card_account_number: 55-76,
        /// Card transaction type code (SHR, POS).
        card_transaction_type_code: 77-78,
        /// Addenda record indicator: `1` when addenda records follow the entry, else `0`.
        addenda_record_indicator: 79-79,
        /// Trace number: the ODFI's 8-digit routing number then a 7-digit sequence number,
        /// unique per entry.
        trace_number: 80-94,
    }
}

record_layout! {
    /// CTX entry detail record: carries its addenda count and the receiving company.
    CtxEntryDetail, CtxEntryDetailLayout, CTX_ENTRY_DETAIL, parse_ctx_entry_detail, "ctx_entry_detail" {
        /// Record type code: `6` for an entry detail.
        record_type: 1-1,
        /// Transaction code: the account type and direction (`22` checking credit, `27`
        /// checking debit, `32` savings credit, `37` savings debit; `x3`/`x8` prenotes,
        /// `x1`/`x6` returns and NOCs).
        transaction_code: 2-3,
        /// The RDFI's routing number, first 8 digits (without the check digit).
        rdfi_identification: 4-11,
        /// Check digit of the RDFI routing number (ABA weights 3, 7, 1).
        check_digit: 12-12,
        /// The receiver's account number at the RDFI, left-justified.
        dfi_account_number: 13-29,
        /// Amount in cents, zero-filled, no decimal point.
        amount: 30-39,
        /// The receiver's identification number at the originator.
        identification_number: 40-54,
        /// Count of addenda records that follow the entry.
        number_of_addenda_records: 55-58,
        /// The receiving company's name (CTX).
        receiving_company_name: 59-74,
        /// Reserved, blank.
        reserved: 75-76,
        /// Discretionary data, for the ODFI's own use (WEB: the payment type code).
        discretionary_data: 77-78,
        /// Addenda record indicator: `1` when addenda records follow the entry, else `0`.
        addenda_record_indicator: 79-79,
        /// Trace number: the ODFI's 8-digit routing number then a 7-digit sequence number,
        /// unique per entry.
        trace_number: 80-94,
    }
}

record_layout! {
    /// IAT entry detail record.
    IatEntryDetail, IatEntryDetailLayout, IAT_ENTRY_DETAIL, parse_iat_entry_detail, "iat_entry_detail" {
        /// Record type code: `6` for an entry detail.
        record_type: 1-1,
        /// Transaction code: the account type and direction (`22` checking credit, `27`
        /// checking debit, `32` savings credit, `37` savings debit; `x3`/`x8` prenotes,
        /// `x1`/`x6` returns and NOCs).
        transaction_code: 2-3,
        /// The RDFI's routing number, first 8 digits (without the check digit).
        rdfi_identification: 4-11,
        /// Check digit of the RDFI routing number (ABA weights 3, 7, 1).
        check_digit: 12-12,
        /// Count of addenda records that follow the entry.
        number_of_addenda_records: 13-16,
        /// Reserved, blank.
        reserved: 17-29,
        /// Amount in cents, zero-filled, no decimal point.
        amount: 30-39,
        /// The receiver's account number at the foreign bank (IAT), left-justified.
        foreign_receiver_account_number: 40-74,
        /// Reserved, blank.
        reserved_two: 75-76,
        /// Gateway operator OFAC screening indicator: `1` when the gateway screened the
        /// entry and found a possible match.
        gateway_operator_ofac_screening_indicator: 77-77,
        /// Secondary OFAC screening indicator, set by the ODFI or RDFI.
        secondary_ofac_screening_indicator: 78-78,
        /// Addenda record indicator: `1` when addenda records follow the entry, else `0`.
        addenda_record_indicator: 79-79,
        /// Trace number: the ODFI's 8-digit routing number then a 7-digit sequence number,
        /// unique per entry.
        trace_number: 80-94,
    }
}

record_layout! {
    /// ADV (automated accounting advice) entry detail record.
    AdvEntryDetail, AdvEntryDetailLayout, ADV_ENTRY_DETAIL, parse_adv_entry_detail, "adv_entry_detail" {
        /// Record type code: `6` for an entry detail.
        record_type: 1-1,
        /// Transaction code: the account type and direction (`22` checking credit, `27`
        /// checking debit, `32` savings credit, `37` savings debit; `x3`/`x8` prenotes,
        /// `x1`/`x6` returns and NOCs).
        transaction_code: 2-3,
        /// The RDFI's routing number, first 8 digits (without the check digit).
        rdfi_identification: 4-11,
        /// Check digit of the RDFI routing number (ABA weights 3, 7, 1).
        check_digit: 12-12,
        /// The receiver's account number at the RDFI, left-justified.
        dfi_account_number: 13-27,
        /// Amount in cents, 12 digits, zero-filled.
        amount: 28-39,
        /// Routing number of the institution the advice is for (ADV).
        advice_routing_number: 40-48,
        /// Identification of the file the advice accounts for (ADV).
        file_identification: 49-53,
        /// Data the ACH operator adds (ADV).
        ach_operator_data: 54-54,
        /// The receiver's name (or what the SEC code keeps in its place).
        individual_name: 55-76,
        /// Discretionary data, for the ODFI's own use (WEB: the payment type code).
        discretionary_data: 77-78,
        /// Addenda record indicator: `1` when addenda records follow the entry, else `0`.
        addenda_record_indicator: 79-79,
        /// The ACH operator's 8-digit routing number (ADV's trace, first part).
        ach_operator_routing_number: 80-87,
        /// Julian day of year the advice was made (ADV's trace, second part).
        julian_day: 88-90,
        /// Sequence number within the day (ADV's trace, last part).
        sequence_number: 91-94,
    }
}

record_layout! {
    /// Addenda record, the shape shared by types 05, 17 and 18 (and the tail of 10-16).
    Addenda, AddendaLayout, ADDENDA, parse_addenda, "addenda" {
        /// Record type code: `7` for an addenda record.
        record_type: 1-1,
        /// Addenda type code: `05` payment related, `02` POS terminal, `10`-`18` IAT, `98`
        /// notification of change, `99` return.
        addenda_type_code: 2-3,
        /// Payment related information: free text or ANSI X12 / EDI segments (CTX, CCD+).
        payment_related_information: 4-83,
        /// Sequence number of this addenda among the entry's addenda, from 1.
        addenda_sequence_number: 84-87,
        /// Last 7 digits of the trace number of the entry the addenda belongs to.
        entry_detail_sequence_number: 88-94,
    }
}

record_layout! {
    /// Addenda type 10 (IAT): transaction type, foreign payment amount and trace number,
    /// the receiver's name.
    Addenda10, Addenda10Layout, ADDENDA10, parse_addenda10, "addenda10" {
        /// Record type code: `7` for an addenda record.
        record_type: 1-1,
        /// Addenda type code: `05` payment related, `02` POS terminal, `10`-`18` IAT, `98`
        /// notification of change, `99` return.
        addenda_type_code: 2-3,
        /// IAT transaction type code (`ANN` annuity, `BUS` business, `SAL` salary, …).
        transaction_type_code: 4-6,
        /// Amount in the foreign currency's minor units, 18 digits.
        foreign_payment_amount: 7-24,
        /// The trace number the foreign payment system assigned.
        foreign_trace_number: 25-46,
        /// The receiver's name (IAT addenda 10).
        name: 47-81,
        /// Reserved, blank.
        reserved: 82-87,
        /// Last 7 digits of the trace number of the entry the addenda belongs to.
        entry_detail_sequence_number: 88-94,
    }
}

record_layout! {
    /// Addenda type 98: notification of change.
    Addenda98, Addenda98Layout, ADDENDA98, parse_addenda98, "addenda98" {
        /// Record type code: `7` for an addenda record.
        record_type: 1-1,
        /// Addenda type code: `05` payment related, `02` POS terminal, `10`-`18` IAT, `98`
        /// notification of change, `99` return.
        addenda_type_code: 2-3,
        /// Change code of a notification of change (`C01` wrong account number, `C02` wrong
        /// routing number, …).
        change_code: 4-6,
        /// Trace number of the original entry this addenda returns or corrects.
        original_entry_trace_number: 7-21,
        /// Reserved, blank.
        reserved: 22-27,
        /// The original entry's RDFI routing number, 8 digits.
        original_rdfi_identification: 28-35,
        /// The corrected value the RDFI sends (account number, routing number, …),
        /// left-justified.
        corrected_data: 36-64,
        /// Reserved, blank.
        reserved_two: 65-79,
        /// Trace number: the ODFI's 8-digit routing number then a 7-digit sequence number,
        /// unique per entry.
        trace_number: 80-94,
    }
}

record_layout! {
    /// Addenda type 99: return, dishonored return or contested dishonored return.
    Addenda99, Addenda99Layout, ADDENDA99, parse_addenda99, "addenda99" {
        /// Record type code: `7` for an addenda record.
        record_type: 1-1,
        /// Addenda type code: `05` payment related, `02` POS terminal, `10`-`18` IAT, `98`
        /// notification of change, `99` return.
        addenda_type_code: 2-3,
        /// Return reason code (`R01` insufficient funds, `R03` no account, …).
        return_reason_code: 4-6,
        /// Trace number of the original entry this addenda returns or corrects.
        original_entry_trace_number: 7-21,
        /// Date of death, YYMMDD, for `R14` and `R15` returns; blank otherwise.
        date_of_death: 22-27,
        /// The original entry's RDFI routing number, 8 digits.
        original_rdfi_identification: 28-35,
        /// Addenda information: free text from the RDFI.
        addenda_information: 36-79,
        /// Trace number: the ODFI's 8-digit routing number then a 7-digit sequence number,
        /// unique per entry.
        trace_number: 80-94,
    }
}

record_layout! {
    /// Addenda type 02 (POS, SHR, MTE): terminal information.
    Addenda02, Addenda02Layout, ADDENDA02, parse_addenda02, "addenda02" {
        /// Record type code: `7` for an addenda record.
        record_type: 1-1,
        /// Addenda type code: `05` payment related, `02` POS terminal, `10`-`18` IAT, `98`
        /// notification of change, `99` return.
        addenda_type_code: 2-3,
        /// Reference information (POS, SHR, MTE terminal addenda).
        reference_information_one: 4-10,
        /// Further reference information (POS, SHR, MTE terminal addenda).
        reference_information_two: 11-13,
        /// Identification of the terminal the card was used at.
        terminal_identification_code: 14-19,
        /// Serial number of the transaction at the terminal.
        transaction_serial_number: 20-25,
        /// Date of the transaction at the terminal, MMDD.
        transaction_date: 26-29,
        /// Authorization code, or the card's expiration date.
        authorization_code_or_card_expiration_date: 30-35,
        /// Street address of the terminal.
        terminal_location: 36-62,
        /// City of the terminal.
        terminal_city: 63-77,
        /// Two-letter state code of the terminal.
        terminal_state: 78-79,
        /// Trace number: the ODFI's 8-digit routing number then a 7-digit sequence number,
        /// unique per entry.
        trace_number: 80-94,
    }
}

record_layout! {
    /// Batch control record (type 8).
    BatchControl, BatchControlLayout, BATCH_CONTROL, parse_batch_control, "batch_control" {
        /// Record type code: `8` for a batch control.
        record_type: 1-1,
        /// Service class code: `200` mixed debits and credits, `220` credits only, `225`
        /// debits only, `280` ADV.
        service_class_code: 2-4,
        /// Count of entry detail and addenda records it controls.
        entry_addenda_count: 5-10,
        /// Entry hash: the sum of the entries' 8-digit RDFI routing numbers, its low-order
        /// 10 digits.
        entry_hash: 11-20,
        /// Total of the batch's debit entries, in cents.
        total_debit_entry_dollar_amount: 21-32,
        /// Total of the batch's credit entries, in cents.
        total_credit_entry_dollar_amount: 33-44,
        /// The originator's identification (usually `1` then its 9-digit IRS employer id);
        /// a batch control repeats its batch header's.
        company_identification: 45-54,
        /// Message authentication code, usually blank.
        message_authentication_code: 55-73,
        /// Reserved, blank.
        reserved: 74-79,
        /// The ODFI's 8-digit routing number, without its check digit.
        odfi_identification: 80-87,
        /// Batch number, ascending within the file.
        batch_number: 88-94,
    }
}

record_layout! {
    /// ADV batch control record: wider totals, no company identification.
    AdvBatchControl, AdvBatchControlLayout, ADV_BATCH_CONTROL, parse_adv_batch_control, "adv_batch_control" {
        /// Record type code: `8` for a batch control.
        record_type: 1-1,
        /// Service class code: `200` mixed debits and credits, `220` credits only, `225`
        /// debits only, `280` ADV.
        service_class_code: 2-4,
        /// Count of entry detail and addenda records it controls.
        entry_addenda_count: 5-10,
        /// Entry hash: the sum of the entries' 8-digit RDFI routing numbers, its low-order
        /// 10 digits.
        entry_hash: 11-20,
        /// Total of the batch's debit entries, in cents.
        total_debit_entry_dollar_amount: 21-40,
        /// Total of the batch's credit entries, in cents.
        total_credit_entry_dollar_amount: 41-60,
        /// Data the ACH operator adds (ADV).
        ach_operator_data: 61-79,
        /// The ODFI's 8-digit routing number, without its check digit.
        odfi_identification: 80-87,
        /// Batch number, ascending within the file.
        batch_number: 88-94,
    }
}

record_layout! {
    /// File control record (type 9).
    FileControl, FileControlLayout, FILE_CONTROL, parse_file_control, "file_control" {
        /// Record type code: `9` for the file control.
        record_type: 1-1,
        /// Count of batches in the file.
        batch_count: 2-7,
        /// Count of 10-record blocks in the file, padding included.
        block_count: 8-13,
        /// Count of entry detail and addenda records it controls.
        entry_addenda_count: 14-21,
        /// Entry hash: the sum of the entries' 8-digit RDFI routing numbers, its low-order
        /// 10 digits.
        entry_hash: 22-31,
        /// Total of the file's debit entries, in cents.
        total_debit_entry_dollar_amount_in_file: 32-43,
        /// Total of the file's credit entries, in cents.
        total_credit_entry_dollar_amount_in_file: 44-55,
        /// Reserved, blank.
        reserved: 56-94,
    }
}

record_layout! {
    /// ADV file control record: wider totals.
    AdvFileControl, AdvFileControlLayout, ADV_FILE_CONTROL, parse_adv_file_control, "adv_file_control" {
        /// Record type code: `9` for the file control.
        record_type: 1-1,
        /// Count of batches in the file.
        batch_count: 2-7,
        /// Count of 10-record blocks in the file, padding included.
        block_count: 8-13,
        /// Count of entry detail and addenda records it controls.
        entry_addenda_count: 14-21,
        /// Entry hash: the sum of the entries' 8-digit RDFI routing numbers, its low-order
        /// 10 digits.
        entry_hash: 22-31,
        /// Total of the file's debit entries, in cents.
        total_debit_entry_dollar_amount_in_file: 32-51,
        /// Total of the file's credit entries, in cents.
        total_credit_entry_dollar_amount_in_file: 52-71,
        /// Reserved, blank.
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
