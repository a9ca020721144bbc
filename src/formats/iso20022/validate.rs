//! Field rules a bank's intake applies to ISO 20022 payments.

/// ISO date YYYY-MM-DD.
pub(crate) fn is_iso_date(text: &str) -> bool {
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok() && text.len() == 10
}

/// BIC: 4 letters (institution), 2 letters (country), 2 letters or digits (location),
/// optionally 3 letters or digits (branch).
pub(crate) fn is_bic(text: &str) -> bool {
    let b = text.as_bytes();
    (b.len() == 8 || b.len() == 11)
        && b[..6].iter().all(u8::is_ascii_uppercase)
        && b[6..]
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// IBAN: country, check digits, up to 30 letters or digits, and mod-97 = 1.
pub fn is_iban(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() < 15 || b.len() > 34 {
        return false;
    }
    if !b[..2].iter().all(u8::is_ascii_uppercase) || !b[2..4].iter().all(u8::is_ascii_digit) {
        return false;
    }
    if !b[4..]
        .iter()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
    {
        return false;
    }
    let mut rem: u32 = 0;
    for &c in b[4..].iter().chain(b[..4].iter()) {
        let v = if c.is_ascii_digit() {
            u32::from(c - b'0')
        } else {
            u32::from(c - b'A') + 10
        };
        rem = if v >= 10 {
            (rem * 100 + v) % 97
        } else {
            (rem * 10 + v) % 97
        };
    }
    rem == 1
}

/// UETR: an RFC 4122 UUID, lowercase hex, version 4 (SWIFT gpi).
pub(crate) fn is_uetr(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                c == b'-'
            } else {
                c.is_ascii_digit() || (b'a'..=b'f').contains(&c)
            }
        })
        && b[14] == b'4'
        && matches!(b[19], b'8' | b'9' | b'a' | b'b')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes() {
        assert!(
            is_iso_date("2026-11-29") && !is_iso_date("2026-02-30") && !is_iso_date("29.11.2026")
        );
        assert!(
            is_bic("BANKDEFFXXX")
                && is_bic("CBSBLT26")
                && !is_bic("BANKDEF")
                && !is_bic("bankdeff")
        );
        assert!(is_iban("DE89370400440532013000"));
        assert!(is_iban("GB29NWBK60161331926819"));
        assert!(!is_iban("DE89370400440532013001"));
        assert!(!is_iban("LT007180000000000000"));
        assert!(is_uetr("eb6305c9-1f7f-49de-aed0-16487c27b42d"));
        assert!(!is_uetr("EB6305C9-1F7F-49DE-AED0-16487C27B42D"));
        assert!(!is_uetr("eb6305c9-1f7f-19de-aed0-16487c27b42d"));
    }
}
