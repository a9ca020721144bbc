//! Field rules of the NACHA spec, as pure functions over field bytes.

use chrono::NaiveDate;

/// Debit or credit, from the receiver's point of view: a credit entry credits the
/// receiver's account, a debit entry debits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// The receiver's account is credited (money in), transaction codes
    /// 21-24, 31-34, 41-44, 51-54 (ADV: 81, 83, 85, 87).
    Credit,
    /// The receiver's account is debited (money out), transaction codes
    /// 26-29, 36-39, 46-49, 55, 56 (ADV: 82, 84, 86, 88).
    Debit,
}

/// SEC codes the reader knows (NACHA Operating Rules, Appendix Three).
pub(super) const SEC_CODES: &[&[u8; 3]] = &[
    b"ACK", b"ADV", b"ARC", b"ATX", b"BOC", b"CCD", b"CIE", b"COR", b"CTX", b"DNE", b"ENR", b"IAT",
    b"MTE", b"POP", b"POS", b"PPD", b"RCK", b"SHR", b"TEL", b"TRC", b"TRX", b"WEB", b"XCK",
];

/// Service class codes: 200 mixed, 220 credits only, 225 debits only, 280 ADV.
pub(super) const SERVICE_CLASS_CODES: &[&[u8; 3]] = &[b"200", b"220", b"225", b"280"];

// The field tests below read every byte without stopping early: for fields of 1 to 20
// bytes a branch per byte costs more than the bytes (`check` runs them on every entry).

pub(super) fn is_digits(b: &[u8]) -> bool {
    !b.is_empty() && b.iter().fold(true, |ok, c| ok & c.is_ascii_digit())
}

pub(super) fn is_blank(b: &[u8]) -> bool {
    b.iter().fold(true, |ok, &c| ok & (c == b' '))
}

/// Blank or all zeros (blanks and zeros mixed): what the ACH operators' edits treat as
/// a mandatory field left empty.
pub(super) fn is_blank_or_zeros(b: &[u8]) -> bool {
    b.iter().all(|&c| c == b' ' || c == b'0')
}

/// The IAT indicator (batch header columns 5-20) of an IAT notification of change, whose
/// SEC code is COR.
pub(super) const IATCOR: &[u8] = b"IATCOR";

/// Transaction type codes of an IAT addenda 10 (NACHA Operating Rules, Appendix Three;
/// moov-io/ach's list): the payment's purpose (annuity, business, deposit, loan,
/// miscellaneous, mortgage, pension, remittance, rent/lease, salary, tax), or the SEC code
/// the entry would carry were it domestic.
pub(super) const IAT_TRANSACTION_TYPE_CODES: &[&[u8; 3]] = &[
    b"ANN", b"BUS", b"DEP", b"LOA", b"MIS", b"MOR", b"PEN", b"REM", b"RLS", b"SAL", b"TAX", b"ARC",
    b"BOC", b"IAT", b"MTE", b"POP", b"POS", b"RCK", b"SHR", b"TEL", b"WEB",
];

/// A transaction code that returns an entry or notifies of a change (x1, x6; 56 for
/// loans): the only ones a notification of change may carry.
pub(super) fn is_return_or_change_code(code: u8) -> bool {
    transaction_direction(code).is_some() && matches!(code % 10, 1 | 6)
}

/// A card expiration date MMYY: four digits, month 01-12.
pub(super) fn is_mmyy(b: &[u8]) -> bool {
    b.len() == 4 && is_digits(b) && matches!(parse_u64(&b[..2]), Some(1..=12))
}

/// Value of an all-digit field (at most 19 digits); `None` if any byte is not a digit.
pub(super) fn parse_u64(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 19 {
        return None;
    }
    // One pass: the value, and whether a byte was not a digit (19 digits fit a u64; what
    // a non-digit makes of the value wraps, and is dropped).
    let (value, bad) = b.iter().fold((0u64, false), |(acc, bad), &c| {
        let d = c.wrapping_sub(b'0');
        (
            acc.wrapping_mul(10).wrapping_add(u64::from(d)),
            bad | (d > 9),
        )
    });
    (!bad).then_some(value)
}

/// Value of an all-digit field of any width, for wide totals (ADV: 20 digits).
pub(super) fn parse_u128(b: &[u8]) -> Option<u128> {
    if !is_digits(b) || b.len() > 38 {
        return None;
    }
    Some(
        b.iter()
            .fold(0u128, |acc, &c| acc * 10 + u128::from(c - b'0')),
    )
}

/// The check digit of an 8-digit routing number prefix (ABA weights 3, 7, 1).
pub(super) fn routing_check_digit(first8: &[u8]) -> Option<u8> {
    if first8.len() != 8 || !is_digits(first8) {
        return None;
    }
    const WEIGHTS: [u32; 8] = [3, 7, 1, 3, 7, 1, 3, 7];
    let sum: u32 = first8
        .iter()
        .zip(WEIGHTS)
        .map(|(&d, w)| u32::from(d - b'0') * w)
        .sum();
    Some(((10 - sum % 10) % 10) as u8)
}

/// Direction of a transaction code of an ordinary (non-ADV) entry, `None` if unknown.
/// 2x checking, 3x savings, 4x general ledger, 5x loan; x1-x4 credits, x6-x9 debits
/// (x1/x6 returns and NOCs, x3/x8 prenotes, x4/x9 zero-dollar with remittance);
/// 55 is a loan debit (reversal) and 56 a loan return debit.
pub(super) fn transaction_direction(code: u8) -> Option<Direction> {
    match code {
        21..=24 | 31..=34 | 41..=44 | 51..=54 => Some(Direction::Credit),
        26..=29 | 36..=39 | 46..=49 | 55 | 56 => Some(Direction::Debit),
        _ => None,
    }
}

/// Direction of an ADV transaction code: 81, 83, 85, 87 credits; 82, 84, 86, 88 debits.
pub(super) fn adv_transaction_direction(code: u8) -> Option<Direction> {
    match code {
        81 | 83 | 85 | 87 => Some(Direction::Credit),
        82 | 84 | 86 | 88 => Some(Direction::Debit),
        _ => None,
    }
}

/// Return reason codes R01-R53, dishonored R61-R70, contested R71-R77, IAT R80-R85.
pub(super) fn is_return_reason_code(b: &[u8]) -> bool {
    if b.len() != 3 || b[0] != b'R' {
        return false;
    }
    match parse_u64(&b[1..]) {
        Some(n) => matches!(n, 1..=53 | 61..=77 | 80..=85),
        None => false,
    }
}

/// Change codes of a notification of change: C01-C14, refused NOCs C61-C69.
pub(super) fn is_change_code(b: &[u8]) -> bool {
    if b.len() != 3 || b[0] != b'C' {
        return false;
    }
    match parse_u64(&b[1..]) {
        Some(n) => matches!(n, 1..=14 | 61..=69),
        None => false,
    }
}

pub(super) use crate::formats::century;

/// A YYMMDD date; `None` if not six digits or not a calendar date.
pub(super) fn parse_yymmdd(b: &[u8]) -> Option<NaiveDate> {
    if b.len() != 6 {
        return None;
    }
    let yy = parse_u64(&b[0..2])? as u32;
    let mm = parse_u64(&b[2..4])? as u32;
    let dd = parse_u64(&b[4..6])? as u32;
    NaiveDate::from_ymd_opt(century(yy), mm, dd)
}

/// An HHMM time of day.
pub(super) fn is_hhmm(b: &[u8]) -> bool {
    b.len() == 4
        && matches!(parse_u64(&b[0..2]), Some(0..=23))
        && matches!(parse_u64(&b[2..4]), Some(0..=59))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_digits_of_known_routing_numbers() {
        assert_eq!(routing_check_digit(b"23138010"), Some(4));
        assert_eq!(routing_check_digit(b"12104288"), Some(2));
        assert_eq!(routing_check_digit(b"07640125"), Some(1));
        assert_eq!(routing_check_digit(b"1006755"), None);
        assert_eq!(routing_check_digit(b"1006755X"), None);
        // 100067554 from the FISERV zero file: the check digit should be 8, not 4.
        assert_eq!(routing_check_digit(b"10006755"), Some(8));
    }

    #[test]
    fn transaction_codes() {
        assert_eq!(transaction_direction(22), Some(Direction::Credit));
        assert_eq!(transaction_direction(27), Some(Direction::Debit));
        assert_eq!(transaction_direction(53), Some(Direction::Credit));
        assert_eq!(transaction_direction(55), Some(Direction::Debit));
        assert_eq!(transaction_direction(25), None);
        assert_eq!(transaction_direction(81), None);
        assert_eq!(adv_transaction_direction(81), Some(Direction::Credit));
        assert_eq!(adv_transaction_direction(82), Some(Direction::Debit));
        assert_eq!(adv_transaction_direction(27), None);
    }

    #[test]
    fn return_and_change_codes() {
        assert!(is_return_reason_code(b"R01"));
        assert!(is_return_reason_code(b"R68"));
        assert!(is_return_reason_code(b"R71"));
        assert!(!is_return_reason_code(b"R96"));
        assert!(!is_return_reason_code(b"R97"));
        assert!(!is_return_reason_code(b"X01"));
        assert!(is_change_code(b"C01"));
        assert!(is_change_code(b"C65"));
        assert!(!is_change_code(b"C92"));
    }

    #[test]
    fn dates_and_times() {
        assert_eq!(
            parse_yymmdd(b"190625"),
            NaiveDate::from_ymd_opt(2019, 6, 25)
        );
        assert_eq!(
            parse_yymmdd(b"991231"),
            NaiveDate::from_ymd_opt(1999, 12, 31)
        );
        assert_eq!(parse_yymmdd(b"260230"), None);
        assert_eq!(parse_yymmdd(b"      "), None);
        assert!(is_hhmm(b"2359"));
        assert!(!is_hhmm(b"2460"));
        assert!(!is_hhmm(b"    "));
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_u64(b"0000100000"), Some(100000));
        assert_eq!(parse_u64(b"00001 0000"), None);
        assert_eq!(parse_u64(b""), None);
        // The bytes just outside the digits, anywhere in the field, and the widths.
        for bad in [
            &b"12/4"[..],
            b"12:4",
            b"/",
            b":",
            b"9999999999999999 9",
            b"-1",
        ] {
            assert_eq!(parse_u64(bad), None, "{bad:?}");
        }
        assert_eq!(
            parse_u64(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        assert_eq!(parse_u64(b"00000000000000000001"), None, "20 digits");
        assert!(is_digits(b"0123456789") && !is_digits(b"") && !is_digits(b"0 1"));
        assert!(is_blank(b"") && is_blank(b"   ") && !is_blank(b"  0 "));
        assert_eq!(parse_u128(b"00000000000000050000"), Some(50000));
    }
}
