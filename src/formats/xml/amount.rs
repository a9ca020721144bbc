//! Amounts and totals as ISO 20022 writes them (`DecimalNumber`: at most 18 digits, a point,
//! no sign; an amount with its `Ccy`), read exactly, for every ISO 20022 reader.

use crate::money::Currency;
use rust_decimal::Decimal;
use std::str::FromStr;

/// An amount as written, exactly: digits with at most one point, at most 18 digits, no
/// sign. `Err` says what is wrong.
pub(crate) fn parse_amount_syntax(text: &str) -> Result<Decimal, String> {
    let t = text.trim();
    let ok_chars = !t.is_empty()
        && t.chars().all(|c| c.is_ascii_digit() || c == '.')
        && t.matches('.').count() <= 1;
    if !ok_chars || t.starts_with('.') || t.ends_with('.') {
        return Err("a decimal amount like 1234.56 (digits, one point, no sign)".into());
    }
    let digits = t.chars().filter(char::is_ascii_digit).count();
    if digits > 18 {
        return Err("at most 18 digits".into());
    }
    Decimal::from_str(t).map_err(|_| "a decimal amount".to_string())
}

/// An amount in minor units of `currency`, exactly: [`parse_amount_syntax`], and no more
/// fraction digits than the currency has (JPY and PYG none; trailing zeros are fine).
/// `Err` says what is wrong.
pub(crate) fn parse_amount(text: &str, currency: Currency) -> Result<i64, String> {
    let d = parse_amount_syntax(text)?;
    let exp = currency.exponent();
    if d.normalize().scale() > exp {
        return Err(format!(
            "at most {exp} fraction digits for {}",
            currency.code()
        ));
    }
    let minor = (d * Decimal::from(10i64.pow(exp))).trunc();
    i64::try_from(minor).map_err(|_| "an amount that fits 18 digits".to_string())
}

/// A decimal total (CtrlSum) in the smallest unit that shows all its digits, as a Decimal.
pub(crate) fn parse_decimal(text: &str) -> Option<Decimal> {
    let t = text.trim();
    if t.is_empty() || t.starts_with('-') || t.starts_with('+') {
        return None;
    }
    Decimal::from_str(t).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn amount(text: &str, code: &str) -> Result<i64, String> {
        parse_amount(text, Currency::parse(code).expect("a currency"))
    }

    #[test]
    fn amounts_are_exact() {
        assert_eq!(amount("150.00", "EUR"), Ok(15000));
        assert_eq!(amount("150", "EUR"), Ok(15000));
        assert_eq!(amount("0.5", "USD"), Ok(50));
        assert_eq!(amount("1250", "JPY"), Ok(1250));
        assert_eq!(
            amount("12.5", "JPY"),
            Err("at most 0 fraction digits for JPY".into())
        );
        assert_eq!(
            amount("1.234", "EUR"),
            Err("at most 2 fraction digits for EUR".into())
        );
        assert_eq!(amount("1.230", "EUR"), Ok(123));
        assert!(amount("-5.00", "EUR").is_err());
        assert!(amount("12..34", "EUR").is_err());
        assert!(amount("1234567890123456789", "EUR").is_err());
        assert_eq!(
            amount("9999999999999999.99", "EUR"),
            Ok(999_999_999_999_999_999)
        );
    }

    #[test]
    fn amounts_follow_the_currency_exponent() {
        // PYG has no minor unit: 1000.50 is not a guaraní amount; 1000 is 1000 minor units.
        assert_eq!(
            amount("1000.50", "PYG"),
            Err("at most 0 fraction digits for PYG".into())
        );
        assert_eq!(amount("1000", "PYG"), Ok(1000));
        assert_eq!(amount("1000.00", "PYG"), Ok(1000));
        assert_eq!(amount("1.234", "BHD"), Ok(1234));
        assert_eq!(
            amount("1.2345", "BHD"),
            Err("at most 3 fraction digits for BHD".into())
        );
        assert_eq!(amount("1.2345", "CLF"), Ok(12345));
        assert_eq!(amount("12.34", "EUR"), Ok(1234));
        assert_eq!(amount("5", "JPY"), Ok(5));
        // 18 digits of CLF do not fit 64 bits once in ten-thousandths.
        assert_eq!(
            amount("999999999999999999", "CLF"),
            Err("an amount that fits 18 digits".into())
        );
    }
}
