//! The BAI2 tokens, with nom: a record's code at the start of a line or after a `/`, its
//! comma-separated fields, the end of a `16` text, and the field values (amounts, dates,
//! times, type codes, counts). Pure functions over one line's bytes; nom stays inside
//! this module.

use chrono::NaiveDate;
use nom::{
    IResult, Parser,
    branch::alt,
    bytes::complete::{tag, take_till, take_while_m_n, take_while1},
    character::complete::{digit0, digit1, one_of, space1},
    combinator::{all_consuming, eof, opt, peek},
    sequence::terminated,
};

/// The record codes of BAI2 version 2: file header, group header, account identifier,
/// transaction detail, account trailer, continuation, group trailer, file trailer.
pub(crate) const KNOWN_CODES: [&str; 8] = ["01", "02", "03", "16", "49", "88", "98", "99"];

/// Digits an amount may have: 18 always fit an `i64` (BAI2 sets no width; banks write up
/// to 17 with a sign, moov-sample1 `+00000000001280000`).
const AMOUNT_DIGITS_MAX: usize = 18;

/// The code among [`KNOWN_CODES`], as a `'static` string.
pub(crate) fn known(code: &[u8]) -> Option<&'static str> {
    let i = match code {
        b"01" => 0,
        b"02" => 1,
        b"03" => 2,
        b"16" => 3,
        b"49" => 4,
        b"88" => 5,
        b"98" => 6,
        b"99" => 7,
        _ => return None,
    };
    Some(KNOWN_CODES[i])
}

/// A two-digit record code at the start of `i`, followed by `,`, `/` or the end of the
/// line (not consumed).
pub(crate) fn record_code(i: &[u8]) -> IResult<&[u8], &[u8]> {
    terminated(
        take_while_m_n(2, 2, |c: u8| c.is_ascii_digit()),
        peek(alt((tag(&b","[..]), tag(&b"/"[..]), eof))),
    )
    .parse(i)
}

/// A plain field: everything up to the next `,` or `/` (or the end of the line).
pub(crate) fn plain_field(i: &[u8]) -> IResult<&[u8], &[u8]> {
    take_till(|c| c == b',' || c == b'/').parse(i)
}

/// `/`, at least one blank, then a known record code and its comma: a record joined to a
/// text on the same physical line (moov-sample3 `...PPD/ 16,142,500,...`). `Ok` with the
/// offset of the code in `i` (which starts at the `/`) when it is a record that may follow
/// a text, shaped as one ([`may_follow_text`]); `Err` when it only looks like one (`FEE/
/// 16,50 EUR`, `REF 2024/ 03,SMITH`): text.
fn joined_record(i: &[u8]) -> Option<Result<usize, ()>> {
    let r: IResult<&[u8], (&[u8], &[u8])> = (tag(&b"/"[..]), space1).parse(i);
    let (rest, _) = r.ok()?;
    let r: IResult<&[u8], &[u8]> = terminated(
        take_while_m_n(2, 2, |c: u8| c.is_ascii_digit()),
        peek(tag(&b","[..])),
    )
    .parse(rest);
    let (fields, code) = r.ok()?;
    let code = known(code)?;
    Some(if may_follow_text(code, &fields[1..]) {
        Ok(i.len() - rest.len())
    } else {
        Err(())
    })
}

/// Whether a record `code` whose fields (after its comma) are `fields` may follow a `16`'s
/// text: another `16` (a three-digit type code first), an `88`, or the account's `49` (a
/// control total, perhaps signed or blank, and a record count, then `/` or the end). A
/// `03`, `98`, `99`, `02` or `01` never comes right after a `16`.
fn may_follow_text(code: &str, fields: &[u8]) -> bool {
    match code {
        "16" => {
            let r: IResult<&[u8], &[u8]> = terminated(
                take_while_m_n(3, 3, |c: u8| c.is_ascii_digit()),
                tag(&b","[..]),
            )
            .parse(fields);
            r.is_ok()
        }
        "88" => true,
        "49" => {
            let r: IResult<&[u8], _> = (
                opt(one_of("+-")),
                digit0,
                tag(&b","[..]),
                digit1,
                alt((tag(&b"/"[..]), eof)),
            )
                .parse(fields);
            r.is_ok()
        }
        _ => false,
    }
}

/// Where a `16` text that starts at `i` ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TextEnd {
    /// The text's length.
    pub(crate) len: usize,
    /// Where a record joined after it starts.
    pub(crate) next: Option<usize>,
    /// The first `/` in the text that a record code follows, read as text because that
    /// record cannot come there ([`may_follow_text`]): the bank dialect
    /// [`DialectRule::SlashInText`](crate::formats::dialect::DialectRule::SlashInText).
    pub(crate) slash: Option<usize>,
}

/// Where a `16` text that starts at `i[0]` ends: the text runs to the end of the physical
/// line (commas and slashes are text), unless a `/`, blanks and a record that may follow
/// a text come on the same line.
pub(crate) fn text_end(i: &[u8]) -> TextEnd {
    let mut slash = None;
    for p in memchr::memchr_iter(b'/', i) {
        match joined_record(&i[p..]) {
            Some(Ok(off)) => {
                return TextEnd {
                    len: p,
                    next: Some(p + off),
                    slash,
                };
            }
            Some(Err(())) => slash = slash.or(Some(p)),
            None => {}
        }
    }
    TextEnd {
        len: i.len(),
        next: None,
        slash,
    }
}

/// Why an amount field is not one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AmountError {
    /// Not digits (with a sign where one is allowed): a decimal point, a letter, a blank.
    Syntax,
    /// More than [`AMOUNT_DIGITS_MAX`] digits.
    Overflow,
}

/// An amount in minor units: digits with the decimal point implied by the currency's
/// exponent (so the integer is the minor units), a `+`/`-` sign where `signed`.
pub(crate) fn amount(s: &str, signed: bool) -> Result<i64, AmountError> {
    let r: IResult<&str, (Option<char>, &str)> =
        all_consuming((opt(one_of("+-")), digit1)).parse(s);
    let (_, (sign, digits)) = r.map_err(|_| AmountError::Syntax)?;
    if sign.is_some() && !signed {
        return Err(AmountError::Syntax);
    }
    let v = digits_value(digits).ok_or(AmountError::Overflow)?;
    Ok(if sign == Some('-') { -v } else { v })
}

/// A count (records, accounts, groups, items, distributions): digits only.
pub(crate) fn count(s: &str) -> Option<u64> {
    let r: IResult<&str, &str> = all_consuming(digit1).parse(s);
    let (_, d) = r.ok()?;
    digits_value(d).map(i64::unsigned_abs)
}

/// The value of ASCII digits (as the grammar matched them), leading zeros aside at most
/// [`AMOUNT_DIGITS_MAX`]: `None` past it.
fn digits_value(d: &str) -> Option<i64> {
    let b = d.as_bytes();
    let zeros = b.iter().take_while(|&&c| c == b'0').count();
    let significant = &b[zeros..];
    if significant.len() > AMOUNT_DIGITS_MAX {
        return None;
    }
    // At most 18 digits: below 10^18, no overflow.
    Some(
        significant
            .iter()
            .fold(0i64, |v, &c| v * 10 + i64::from(c.wrapping_sub(b'0'))),
    )
}

/// The value of two or more ASCII digits (as the grammar matched them), few enough not
/// to overflow.
fn small(d: &str) -> u32 {
    d.bytes()
        .fold(0u32, |v, c| v * 10 + u32::from(c.wrapping_sub(b'0')))
}

/// A type code: exactly three digits.
pub(crate) fn type_code(s: &str) -> Option<u16> {
    let r: IResult<&str, &str> =
        all_consuming(take_while_m_n(3, 3, |c: char| c.is_ascii_digit())).parse(s);
    r.ok().map(|(_, d)| small(d) as u16)
}

use crate::formats::century;

/// A YYMMDD date that exists in the calendar.
pub(crate) fn yymmdd(s: &str) -> Option<NaiveDate> {
    let two = |i| take_while_m_n(2, 2, |c: char| c.is_ascii_digit()).parse(i);
    let r: IResult<&str, (&str, &str, &str)> = all_consuming((two, two, two)).parse(s);
    let (_, (yy, mm, dd)) = r.ok()?;
    NaiveDate::from_ymd_opt(century(small(yy)), small(mm), small(dd))
}

/// A time in the spec's military format: `0000`-`2359`, `2400` (end of day) or `9999`
/// (end of day, as some processors write it).
pub(crate) fn hhmm(s: &str) -> bool {
    let r: IResult<&str, &str> =
        all_consuming(take_while_m_n(4, 4, |c: char| c.is_ascii_digit())).parse(s);
    let Ok((_, d)) = r else { return false };
    let (h, m) = (&d[..2], &d[2..]);
    matches!(d, "2400" | "9999") || (small(h) < 24 && small(m) < 60)
}

/// Blanks only (or nothing).
pub(crate) fn is_blank(i: &[u8]) -> bool {
    let r: IResult<&[u8], &[u8]> = all_consuming(take_while1(|c| c == b' ' || c == b'\t')).parse(i);
    i.is_empty() || r.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_codes_and_joined_records() {
        assert_eq!(record_code(b"16,1").map(|r| r.1), Ok(&b"16"[..]));
        assert_eq!(record_code(b"99/").map(|r| r.1), Ok(&b"99"[..]));
        assert_eq!(record_code(b"99").map(|r| r.1), Ok(&b"99"[..]));
        assert!(record_code(b"1x,").is_err());
        assert!(record_code(b"123,").is_err());
        assert_eq!(known(b"88"), Some("88"));
        assert_eq!(known(b"00"), None);
        let end = |len, next, slash| TextEnd { len, next, slash };
        // Text `PPD`, then a joined 16 at offset 5.
        assert_eq!(text_end(b"PPD/ 16,142,500"), end(3, Some(5), None));
        assert_eq!(
            text_end(b"PPD/         49,-1600,11/"),
            end(3, Some(13), None)
        );
        assert_eq!(text_end(b"PPD/ 49,,2/"), end(3, Some(5), None));
        assert_eq!(text_end(b"PPD/ 88,MORE"), end(3, Some(5), None));
        // A date with slashes, a slash without a record after it, an unknown code.
        assert_eq!(text_end(b"A1234BC 22/03/66"), end(16, None, None));
        assert_eq!(text_end(b"NO.68751/"), end(9, None, None));
        assert_eq!(text_end(b"X/ 00,1"), end(7, None, None));
        assert_eq!(text_end(b"X/ 03/"), end(6, None, None));
        // A record code after a slash that cannot be a record there: text, the slash noted.
        assert_eq!(text_end(b"FEE/ 16,50 EUR"), end(14, None, Some(3)));
        assert_eq!(text_end(b"REF 2024/ 03,SMITH"), end(18, None, Some(8)));
        assert_eq!(text_end(b"A/ 49,1.00,2/"), end(13, None, Some(1)));
        assert_eq!(text_end(b"A/ 99,1,2/"), end(10, None, Some(1)));
        // Then a real joined record: the text ends there, the slash before still noted.
        assert_eq!(
            text_end(b"FEE/ 16,50 EUR/ 16,142,500"),
            end(14, Some(16), Some(3))
        );
    }

    #[test]
    fn amounts_are_minor_units_exactly() {
        assert_eq!(amount("+000000000000", true), Ok(0));
        assert_eq!(amount("-500000", true), Ok(-500000));
        assert_eq!(amount("00", false), Ok(0));
        assert_eq!(amount("001", false), Ok(1));
        assert_eq!(amount("+5", false), Err(AmountError::Syntax));
        assert_eq!(amount("12.50", true), Err(AmountError::Syntax));
        assert_eq!(amount("", true), Err(AmountError::Syntax));
        assert_eq!(amount("1 2", true), Err(AmountError::Syntax));
        assert_eq!(amount("-", true), Err(AmountError::Syntax));
        assert_eq!(
            amount("999999999999999999", true),
            Ok(999_999_999_999_999_999)
        );
        assert_eq!(
            amount("1000000000000000000", true),
            Err(AmountError::Overflow)
        );
        assert_eq!(amount("0000000000000000000000012", true), Ok(12));
    }

    #[test]
    fn dates_times_codes_counts() {
        assert_eq!(yymmdd("040620"), NaiveDate::from_ymd_opt(2004, 6, 20));
        assert_eq!(yymmdd("991231"), NaiveDate::from_ymd_opt(1999, 12, 31));
        assert_eq!(yymmdd("260230"), None);
        assert_eq!(yymmdd("0406201"), None);
        assert_eq!(yymmdd("04062"), None);
        assert!(hhmm("2359") && hhmm("2400") && hhmm("9999") && hhmm("0000"));
        assert!(!hhmm("2401") && !hhmm("1260") && !hhmm("14:59:35") && !hhmm(""));
        assert_eq!(type_code("010"), Some(10));
        assert_eq!(type_code("10"), None);
        assert_eq!(type_code("1000"), None);
        assert_eq!(count("00003"), Some(3));
        assert_eq!(count("3a"), None);
        assert_eq!(count(""), None);
        assert!(is_blank(b"") && is_blank(b"  \t") && !is_blank(b" x"));
    }
}
