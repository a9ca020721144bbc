//! Money as integer minor units plus an ISO 4217 currency; `Decimal` only at the edges.

use rust_decimal::Decimal;

/// Minor-unit exponent of a currency (JPY has none); 2 for the currencies not listed.
pub fn minor_exponent(currency: &str) -> u32 {
    match currency {
        "JPY" | "KRW" | "ISK" | "CLP" | "VND" | "XOF" | "XAF" | "UGX" => 0,
        "BHD" | "KWD" | "OMR" | "JOD" | "TND" | "IQD" | "LYD" => 3,
        _ => 2,
    }
}

/// `123456` USD → `1234.56`, exactly.
pub fn format_minor(amount_minor: i64, currency: &str) -> String {
    Decimal::new(amount_minor, minor_exponent(currency)).to_string()
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
    }
}
