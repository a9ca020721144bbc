//! Money as integer minor units plus an ISO 4217 currency; `Decimal` only at the edges.
//!
//! # One ISO 4217 table
//!
//! Every currency code and minor-unit exponent in clearledger comes from one table: the
//! [`iso_currency`] crate, through [`Currency`] and [`minor_exponent`] here. ISO 20022
//! validation, the amounts it turns into minor units, the generators and the text that
//! shows stored amounts all ask this module; nothing else lists currencies. (NACHA amounts
//! are cents of USD by the NACHA spec; `nacha_dollars_are_cents_of_usd` below holds the
//! table to that.)
//!
//! Why `iso_currency` (0.7): it is maintained and current (it has the Caribbean guilder
//! XCG of March 2025, Zimbabwe Gold ZWG of 2024, and marks BGN as superseded by EUR since
//! Bulgaria joined the euro in January 2026), it gives `exponent()` for every active code
//! (ISO's "minor unit" column, `None` for the metals, XDR, XXX and the testing code XTS),
//! and it flags superseded, fund and special codes, with one small dependency
//! (`iso_country`). Its data is ISO 4217 List One as its `isodata.tsv` keeps it, generated
//! into a `match` at build time. Rejected: `iso4217` (0.3, no exponent, no XCG nor ZWG),
//! `rusty-money` (a whole money library with its own amount type, locales and crypto
//! currencies, for the one column we need). Updating the table is `cargo update -p
//! iso_currency`; `the_table_agrees_with_iso_4217` pins what we rely on.

use rust_decimal::Decimal;

/// A currency a posting may carry: an active ISO 4217 code with minor units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Currency(iso_currency::Currency);

/// Why a code is not a currency a posting may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum CurrencyError {
    /// Not an ISO 4217 alphabetic code (nor any code ever listed).
    #[error("not an ISO 4217 currency code")]
    Unknown,
    /// A code without minor units: a precious metal, XDR, XXX (no currency), XTS (testing).
    #[error(
        "an ISO 4217 code without minor units (metal, XDR, XXX or XTS), not a currency to post"
    )]
    NoMinorUnit,
    /// Withdrawn: replaced by `by`.
    #[error("an ISO 4217 code withdrawn, superseded by {by}")]
    Superseded { by: &'static str },
}

impl Currency {
    /// `EUR` → EUR. Codes are upper case, as ISO 4217 writes them (`eur` is unknown).
    pub(crate) fn parse(code: &str) -> Result<Self, CurrencyError> {
        let c = iso_currency::Currency::from_code(code).ok_or(CurrencyError::Unknown)?;
        if let Some(by) = c.is_superseded() {
            return Err(CurrencyError::Superseded { by: by.code() });
        }
        if c.exponent().is_none() {
            return Err(CurrencyError::NoMinorUnit);
        }
        Ok(Currency(c))
    }
    /// The alphabetic code, e.g. `EUR`.
    pub(crate) fn code(self) -> &'static str {
        self.0.code()
    }
    /// Digits after the decimal point: JPY 0, EUR 2, BHD 3, CLF 4.
    pub(crate) fn exponent(self) -> u32 {
        // `parse` admits only codes with an exponent.
        u32::from(self.0.exponent().unwrap_or(0))
    }
}

/// Withdrawn ISO 4217 codes that old bank statements still carry, with their minor units:
/// the currencies the euro replaced. Source: ISO 4217 List Three ("historic
/// denominations": the codes withdrawn from List One, with their withdrawal dates). List
/// Three has no minor-unit column, so each code has the minor unit List One gave it while
/// it was current. `iso_currency` knows only List One's codes (and marks those withdrawn
/// since it was made, such as HRK, which [`withdrawn_exponent`] asks it for).
const WITHDRAWN: &[(&str, u32)] = &[
    ("ATS", 2), // Austrian schilling
    ("BEF", 2), // Belgian franc
    ("CYP", 2), // Cyprus pound
    ("DEM", 2), // Deutsche Mark
    ("EEK", 2), // Estonian kroon
    ("ESP", 0), // Spanish peseta
    ("FIM", 2), // Finnish markka
    ("FRF", 2), // French franc
    ("GRD", 2), // Greek drachma
    ("IEP", 2), // Irish pound
    ("ITL", 0), // Italian lira
    ("LTL", 2), // Lithuanian litas
    ("LUF", 2), // Luxembourg franc
    ("LVL", 2), // Latvian lats
    ("MTL", 2), // Maltese lira
    ("NLG", 2), // Dutch guilder
    ("PTE", 0), // Portuguese escudo
    ("SIT", 2), // Slovenian tolar
    ("SKK", 2), // Slovak koruna
];

/// Minor-unit exponent of a withdrawn ISO 4217 code: from the historic list
/// ([`WITHDRAWN`]), or one `iso_currency` marks superseded; `None` for any other code.
/// A statement in such a currency is read (old files are still sent and kept); whether
/// it may be posted is not this table's business.
pub(crate) fn withdrawn_exponent(code: &str) -> Option<u32> {
    if let Some((_, e)) = WITHDRAWN.iter().find(|(c, _)| *c == code) {
        return Some(*e);
    }
    iso_currency::Currency::from_code(code)
        .filter(|c| c.is_superseded().is_some())
        .and_then(|c| c.exponent())
        .map(u32::from)
}

/// Minor-unit exponent of any code the table knows with minor units, superseded and
/// withdrawn ones included (a posting stored before its currency was withdrawn still
/// shows right); `None` for an unknown code or one without minor units.
pub(crate) fn minor_exponent(code: &str) -> Option<u32> {
    iso_currency::Currency::from_code(code)
        .and_then(|c| c.exponent())
        .map(u32::from)
        .or_else(|| withdrawn_exponent(code))
}

/// `123456` USD → `1234.56`, exactly. A code without a known exponent shows the minor
/// units as they are stored: `123456 (minor units)`.
pub(crate) fn format_minor(amount_minor: i64, currency: &str) -> String {
    match minor_exponent(currency) {
        Some(exp) => Decimal::new(amount_minor, exp).to_string(),
        None => format!("{amount_minor} (minor units)"),
    }
}

/// An amount for a person: [`format_minor`] followed by its currency (`1234.56 USD`).
pub(crate) fn format_amount(amount_minor: i64, currency: &str) -> String {
    let n = format_minor(amount_minor, currency);
    if currency.is_empty() {
        n
    } else {
        format!("{n} {currency}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_minor_units_exactly() {
        assert_eq!(format_minor(100000000, "USD"), "1000000.00");
        assert_eq!(format_minor(5, "USD"), "0.05");
        assert_eq!(format_minor(1250, "JPY"), "1250");
        assert_eq!(format_minor(1, "KWD"), "0.001");
        assert_eq!(format_minor(1000, "PYG"), "1000");
        assert_eq!(format_minor(12345, "CLF"), "1.2345");
        assert_eq!(format_minor(12345, "XAU"), "12345 (minor units)");
        assert_eq!(format_minor(12345, "XXY"), "12345 (minor units)");
        assert_eq!(format_minor(8434974, "DEM"), "84349.74");
        assert_eq!(format_minor(1500, "ITL"), "1500");
    }

    #[test]
    fn withdrawn_codes_have_their_historic_minor_units() {
        for (code, e) in [("DEM", 2), ("FRF", 2), ("NLG", 2), ("ITL", 0), ("ESP", 0)] {
            assert_eq!(withdrawn_exponent(code), Some(e), "{code}");
            assert_eq!(Currency::parse(code), Err(CurrencyError::Unknown), "{code}");
        }
        // Withdrawn since the crate's table was made: the crate's own exponent.
        assert_eq!(withdrawn_exponent("HRK"), Some(2));
        // Current codes, metals and unknown codes are not withdrawn ones.
        for code in ["EUR", "XAU", "XXY", "dem"] {
            assert_eq!(withdrawn_exponent(code), None, "{code}");
        }
        assert_eq!(minor_exponent("DEM"), Some(2));
        assert_eq!(minor_exponent("EUR"), Some(2));
    }

    #[test]
    fn the_table_agrees_with_iso_4217() {
        let exp = |c: &str| Currency::parse(c).map(Currency::exponent);
        for (code, e) in [
            ("JPY", 0),
            ("BHD", 3),
            ("CLF", 4),
            ("PYG", 0),
            ("EUR", 2),
            ("USD", 2),
            ("KWD", 3),
            ("UYW", 4),
            ("XCG", 2),
            ("ZWG", 2),
        ] {
            assert_eq!(exp(code), Ok(e), "{code}");
        }
        // The eight the old hand-written exponent list lacked, though validation took them.
        for code in ["BIF", "DJF", "GNF", "KMF", "PYG", "RWF", "VUV", "XPF"] {
            assert_eq!(exp(code), Ok(0), "{code}");
        }
        assert_eq!(exp("XXY"), Err(CurrencyError::Unknown));
        assert_eq!(exp("eur"), Err(CurrencyError::Unknown));
        assert_eq!(exp("EURO"), Err(CurrencyError::Unknown));
        assert_eq!(exp(""), Err(CurrencyError::Unknown));
        assert_eq!(exp("XAU"), Err(CurrencyError::NoMinorUnit));
        assert_eq!(exp("XXX"), Err(CurrencyError::NoMinorUnit));
        assert_eq!(exp("HRK"), Err(CurrencyError::Superseded { by: "EUR" }));
        assert_eq!(exp("BGN"), Err(CurrencyError::Superseded { by: "EUR" }));
        // A withdrawn code still has its exponent, for what was stored before.
        assert_eq!(minor_exponent("HRK"), Some(2));
        assert_eq!(minor_exponent("XAU"), None);
        assert_eq!(Currency::parse("PYG").map(Currency::code), Ok("PYG"));
    }

    #[test]
    fn nacha_dollars_are_cents_of_usd() {
        // NACHA amount fields are in cents (positions 30-39 of an entry: $$$$$$$$¢¢) and
        // the postings say USD: the table must agree that USD has two decimals.
        assert_eq!(Currency::parse("USD").map(Currency::exponent), Ok(2));
    }
}
