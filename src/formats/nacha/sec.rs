//! Entry detail layouts by SEC code: which fields of an entry detail record hold what an
//! [`Entry`](super::Entry) carries (account, amount, individual identification,
//! individual name, discretionary data, trace number), and which field rules the layout
//! adds to the ones every entry shares. The columns come from the layouts in `record.rs`;
//! this table only says which layout, and which of its fields, each SEC code uses.

use super::record::*;
use crate::findings::FieldSpec;

/// The layout family of a batch's entries, which also picks the batch and file control
/// layouts (ADV) and the transaction codes allowed (ADV: 81-88).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BatchKind {
    Standard,
    Ctx,
    Iat,
    Adv,
}

/// How a field of the layout is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldRule {
    NonBlank,
    Digits,
    /// All digits: the entry's amount, in cents.
    Amount,
    /// All digits: how many addenda records follow the entry (checked once they have).
    AddendaCount,
}

/// Where an entry detail record of one SEC code keeps what an entry carries.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct EntryLayout {
    pub(crate) kind: BatchKind,
    /// The layout's field rules, in the order they are checked (after the fields every
    /// layout shares: transaction code, RDFI and check digit, addenda indicator).
    pub(crate) rules: &'static [(FieldRule, FieldSpec)],
    pub(crate) account: FieldSpec,
    /// `Entry::individual_identification`; IAT carries it in its addenda.
    pub(crate) identification: Option<FieldSpec>,
    /// `Entry::individual_name`; IAT carries it in its addenda.
    pub(crate) name: Option<FieldSpec>,
    /// `Entry::discretionary_data`: these fields' texts, joined.
    pub(crate) discretionary: &'static [FieldSpec],
    /// `Entry::trace_number`: these fields' texts, joined.
    pub(crate) trace: &'static [FieldSpec],
}

/// Account, amount and trace number of the entry detail layouts that share their
/// columns with PPD (findings about them name the PPD layout's fields).
const STANDARD_RULES: &[(FieldRule, FieldSpec)] = &[
    (FieldRule::NonBlank, ENTRY_DETAIL.dfi_account_number),
    (FieldRule::Amount, ENTRY_DETAIL.amount),
    (FieldRule::Digits, ENTRY_DETAIL.trace_number),
];

/// PPD and every SEC code whose entry detail record has its shape: identification
/// first, then the name, then discretionary data.
pub(crate) const STANDARD: EntryLayout = EntryLayout {
    kind: BatchKind::Standard,
    rules: STANDARD_RULES,
    account: ENTRY_DETAIL.dfi_account_number,
    identification: Some(ENTRY_DETAIL.individual_identification_number),
    name: Some(ENTRY_DETAIL.individual_name),
    discretionary: &[ENTRY_DETAIL.discretionary_data],
    trace: &[ENTRY_DETAIL.trace_number],
};

/// CTX: the number of addenda records and the receiving company name share what PPD
/// gives the individual name.
pub(crate) const CTX: EntryLayout = EntryLayout {
    kind: BatchKind::Ctx,
    rules: &[
        (FieldRule::NonBlank, CTX_ENTRY_DETAIL.dfi_account_number),
        (FieldRule::Amount, CTX_ENTRY_DETAIL.amount),
        (FieldRule::Digits, CTX_ENTRY_DETAIL.trace_number),
        (
            FieldRule::AddendaCount,
            CTX_ENTRY_DETAIL.number_of_addenda_records,
        ),
    ],
    account: CTX_ENTRY_DETAIL.dfi_account_number,
    identification: Some(CTX_ENTRY_DETAIL.identification_number),
    name: Some(CTX_ENTRY_DETAIL.receiving_company_name),
    discretionary: &[CTX_ENTRY_DETAIL.discretionary_data],
    trace: &[CTX_ENTRY_DETAIL.trace_number],
};

/// IAT: a 35-character foreign account, names and identification in the addenda, the two
/// OFAC screening indicators as discretionary data.
pub(crate) const IAT: EntryLayout = EntryLayout {
    kind: BatchKind::Iat,
    rules: &[
        (
            FieldRule::Digits,
            IAT_ENTRY_DETAIL.number_of_addenda_records,
        ),
        (
            FieldRule::NonBlank,
            IAT_ENTRY_DETAIL.foreign_receiver_account_number,
        ),
        (FieldRule::Amount, IAT_ENTRY_DETAIL.amount),
        (FieldRule::Digits, IAT_ENTRY_DETAIL.trace_number),
    ],
    account: IAT_ENTRY_DETAIL.foreign_receiver_account_number,
    identification: None,
    name: None,
    discretionary: &[
        IAT_ENTRY_DETAIL.gateway_operator_ofac_screening_indicator,
        IAT_ENTRY_DETAIL.secondary_ofac_screening_indicator,
    ],
    trace: &[IAT_ENTRY_DETAIL.trace_number],
};

/// ADV: a 12-digit amount, the advice routing number as identification, and in place of
/// a trace number the ACH operator's routing number, Julian day and sequence number.
pub(crate) const ADV: EntryLayout = EntryLayout {
    kind: BatchKind::Adv,
    rules: &[
        (FieldRule::NonBlank, ADV_ENTRY_DETAIL.dfi_account_number),
        (FieldRule::Amount, ADV_ENTRY_DETAIL.amount),
        (FieldRule::Digits, ADV_ENTRY_DETAIL.advice_routing_number),
        (
            FieldRule::Digits,
            ADV_ENTRY_DETAIL.ach_operator_routing_number,
        ),
        (FieldRule::Digits, ADV_ENTRY_DETAIL.julian_day),
        (FieldRule::Digits, ADV_ENTRY_DETAIL.sequence_number),
    ],
    account: ADV_ENTRY_DETAIL.dfi_account_number,
    identification: Some(ADV_ENTRY_DETAIL.advice_routing_number),
    name: Some(ADV_ENTRY_DETAIL.individual_name),
    discretionary: &[ADV_ENTRY_DETAIL.discretionary_data],
    trace: &[
        ADV_ENTRY_DETAIL.ach_operator_routing_number,
        ADV_ENTRY_DETAIL.julian_day,
        ADV_ENTRY_DETAIL.sequence_number,
    ],
};

/// CIE and MTE: the individual name first, then the individual identification number
/// (MTE: the cardholder's), the other way round from PPD. Its other fields sit where PPD has them, and the rules (and
/// so the findings) are PPD's.
pub(crate) const CIE: EntryLayout = EntryLayout {
    kind: BatchKind::Standard,
    rules: STANDARD_RULES,
    account: CIE_ENTRY_DETAIL.dfi_account_number,
    identification: Some(CIE_ENTRY_DETAIL.individual_identification_number),
    name: Some(CIE_ENTRY_DETAIL.individual_name),
    discretionary: &[CIE_ENTRY_DETAIL.discretionary_data],
    trace: &[CIE_ENTRY_DETAIL.trace_number],
};

/// The layout of each SEC code (NACHA Operating Rules, Appendix Three). Where a SEC
/// code's spec names the PPD fields otherwise, the comment says what they hold; the
/// entry keeps them under the PPD names.
pub(crate) const ENTRY_LAYOUTS: &[(&[u8; 3], &EntryLayout)] = &[
    // Identification: the original entry's trace number; name: the receiving company.
    (b"ACK", &STANDARD),
    (b"ADV", &ADV),
    // Identification: the check serial number.
    (b"ARC", &STANDARD),
    // Identification: the original entry's trace number; name: the number of addenda
    // records and the receiving company, as CTX (read as one name field).
    (b"ATX", &STANDARD),
    // Identification: the check serial number.
    (b"BOC", &STANDARD),
    // Identification number and receiving company name.
    (b"CCD", &STANDARD),
    (b"CIE", &CIE),
    (b"COR", &STANDARD),
    (b"CTX", &CTX),
    (b"DNE", &STANDARD),
    // Name: the number of addenda records and the receiving company name or ID number.
    (b"ENR", &STANDARD),
    (b"IAT", &IAT),
    // As CIE: the name first, then the identification number.
    (b"MTE", &CIE),
    // Identification: the check serial number, the terminal city and state.
    (b"POP", &STANDARD),
    // Discretionary data: the card transaction type code.
    (b"POS", &STANDARD),
    (b"PPD", &STANDARD),
    // Identification: the check serial number.
    (b"RCK", &STANDARD),
    // Identification: the card expiration date and the document reference number;
    // name: the individual card account number; discretionary data: the card transaction
    // type code.
    (b"SHR", &STANDARD),
    // Discretionary data: the payment type code.
    (b"TEL", &STANDARD),
    // Identification: the check serial number; name: the process control field and the
    // item research number; discretionary data: the item type indicator.
    (b"TRC", &STANDARD),
    // Name: the number of addenda records and the receiving company name or ID number;
    // discretionary data: the item type indicator.
    (b"TRX", &STANDARD),
    // Discretionary data: the payment type code.
    (b"WEB", &STANDARD),
    // Identification: the check serial number; name: the process control field and the
    // item research number.
    (b"XCK", &STANDARD),
];

/// The entry layout of SEC code `sec`; an unknown code (a finding of its own) reads as PPD.
pub(crate) fn entry_layout(sec: &[u8]) -> &'static EntryLayout {
    ENTRY_LAYOUTS
        .iter()
        .find(|(code, _)| &code[..] == sec)
        .map_or(&STANDARD, |(_, layout)| *layout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Finding;
    use crate::formats::nacha::rules::testing::mutate;
    use crate::formats::nacha::validate::SEC_CODES;
    use crate::formats::nacha::{Entry, Event, ValidateOptions, read_file};

    #[test]
    fn every_sec_code_has_one_layout() {
        let codes: Vec<&[u8; 3]> = ENTRY_LAYOUTS.iter().map(|(code, _)| *code).collect();
        assert_eq!(codes, SEC_CODES);
    }

    #[test]
    fn only_ctx_iat_adv_cie_and_mte_differ_from_ppd() {
        for (code, layout) in ENTRY_LAYOUTS {
            let want = match *code {
                b"ADV" => &ADV,
                b"CTX" => &CTX,
                b"IAT" => &IAT,
                b"CIE" | b"MTE" => &CIE,
                _ => &STANDARD,
            };
            assert_eq!(*layout, want, "{}", String::from_utf8_lossy(*code));
            assert_eq!(entry_layout(*code), want);
        }
        assert_eq!(entry_layout(b"XYZ"), &STANDARD);
    }

    /// The entries and findings of `file`.
    fn read(file: &[u8]) -> (Vec<Entry>, Vec<Finding>) {
        let mut entries = Vec::new();
        let on_event = &mut |ev| {
            if let Event::Entry(e) = ev {
                entries.push(e);
            }
        };
        let opts = ValidateOptions::default();
        let r = read_file(file, opts, on_event, &mut |_| {}).unwrap();
        (entries, r.summary.findings)
    }

    /// The payroll sample as a batch of `sec` whose first entry (line 3) holds `first`
    /// in columns 40-54 and `second` in columns 55-76.
    fn payroll_as(sec: &str, first: &str, second: &str) -> Vec<u8> {
        let mut f = mutate(2, 51, sec);
        let at = 2 * 95 + 39;
        f[at..at + 37].copy_from_slice(format!("{first:<15}{second:<22}").as_bytes());
        f
    }

    #[test]
    fn each_sec_code_reads_identification_and_name_from_its_columns() {
        let (first, second) = ("FIRST 15 COLS", "SECOND TWENTY-TWO COLS");
        // SEC code, individual_identification, individual_name of the entry.
        let mut rows = vec![
            ("CIE", second, first),
            ("MTE", second, first),
            ("CTX", first, "ND TWENTY-TWO CO"),
            ("ADV", "FIRST 15", second),
        ];
        for sec in [
            "ACK", "ARC", "ATX", "BOC", "CCD", "COR", "DNE", "ENR", "POP", "POS", "PPD", "RCK",
            "SHR", "TEL", "TRC", "TRX", "WEB", "XCK",
        ] {
            rows.push((sec, first, second));
        }
        for (sec, identification, name) in rows {
            let (entries, _) = read(&payroll_as(sec, first, second));
            let e = &entries[0];
            assert_eq!(e.sec_code, sec);
            assert_eq!(e.individual_identification, identification, "{sec}");
            assert_eq!(e.individual_name, name, "{sec}");
        }
    }

    #[test]
    fn a_cie_entry_reads_name_then_identification() {
        let f = payroll_as("CIE", "ALICE SMITH", "BILLER ACCT 0042-7781");
        let (entries, findings) = read(&f);
        assert!(findings.is_empty(), "{findings:?}");
        let e = &entries[0];
        assert_eq!(e.individual_name, "ALICE SMITH");
        assert_eq!(e.individual_identification, "BILLER ACCT 0042-7781");
        assert_eq!((e.account.as_str(), e.amount_minor), ("4455667788", 250000));
        assert_eq!(e.trace_number, "121042880000001");
    }

    #[test]
    fn an_mte_entry_reads_name_then_identification() {
        let mut f = payroll_as("MTE", "BOB JONES", "CARD 4000123412341234");
        // MTE carries terminal information (addenda 02), not addenda 05.
        f[4 * 95 + 1..4 * 95 + 3].copy_from_slice(b"02");
        let (entries, findings) = read(&f);
        assert!(findings.is_empty(), "{findings:?}");
        let e = &entries[0];
        assert_eq!(e.individual_name, "BOB JONES");
        assert_eq!(e.individual_identification, "CARD 4000123412341234");
        assert_eq!(entries[1].individual_name, "EMP002");
        assert_eq!(entries[1].individual_identification, "BOB JONES");
    }
}
