//! Pure parsers of MT940/MT942 field values (what follows `:61:`, `:60F:`, …), over the
//! field's bytes, with nom. A parser gives what it read and what is wrong, each fault with
//! its byte offset in the value, so the reader can say line and column.

use crate::findings::{FindingCode, show};
use crate::formats::dialect::DialectRule;
use chrono::{Datelike, NaiveDate};
use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while_m_n};
use nom::combinator::opt;
use nom::{IResult, Parser};

/// One fault in a field value: where (byte offset in the value), what, expected, found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bad {
    pub at: usize,
    pub code: FindingCode,
    pub expected: String,
    pub found: String,
}

/// At most this many characters of the offending text are quoted in a finding.
const FOUND_CHARS_MAX: usize = 24;

fn found_at(rest: &[u8]) -> String {
    if rest.is_empty() {
        "end of line".into()
    } else {
        show(&rest[..rest.len().min(FOUND_CHARS_MAX)])
    }
}

fn syntax(full: &[u8], rest: &[u8], expected: impl Into<String>) -> Bad {
    Bad {
        at: full.len() - rest.len(),
        code: FindingCode::TagSyntax,
        expected: expected.into(),
        found: found_at(rest),
    }
}

/// A bank dialect read at `rest` (a `bank_dialect` warning, not a fault): `found` as
/// the file holds it.
fn dialect(full: &[u8], rest: &[u8], rule: DialectRule, found: String) -> Bad {
    Bad {
        at: full.len() - rest.len(),
        code: FindingCode::BankDialect,
        expected: rule.says().to_string(),
        found,
    }
}

type Res<'a, T> = IResult<&'a [u8], T>;
type NomErr<'a> = nom::Err<nom::error::Error<&'a [u8]>>;

fn digits(n: usize) -> impl Fn(&[u8]) -> Res<'_, &[u8]> {
    move |i| take_while_m_n(n, n, |c: u8| c.is_ascii_digit()).parse(i)
}

fn number(b: &[u8]) -> u32 {
    b.iter().fold(0u32, |n, d| {
        n.saturating_mul(10).saturating_add(u32::from(d - b'0'))
    })
}

pub(crate) use crate::formats::century;

/// A YYMMDD that is six digits (checked by the caller) and a calendar date.
fn yymmdd(b: &[u8]) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(
        century(number(&b[0..2])),
        number(&b[2..4]),
        number(&b[4..6]),
    )
}

/// German 30/360 dating: a day beyond the month's end that such dating writes (29 or
/// 30 February, 31 of a 30-day month) is the month's last day; anything else is no date.
fn last_day_30_360(year: i32, month: u32, day: u32) -> Option<NaiveDate> {
    if !(29..=31).contains(&day) || (month == 2 && day == 31) {
        return None;
    }
    let first = NaiveDate::from_ymd_opt(year, month, 1)?;
    let last = first
        .checked_add_months(chrono::Months::new(1))?
        .pred_opt()?;
    (day > last.day()).then_some(last)
}

/// Six digits YYMMDD; a bad calendar date is a `DateFormat` fault in `bad`, not the end
/// (30 February and its kin are read as the month's last day, a dialect).
fn date6<'a>(
    full: &'a [u8],
    i: &'a [u8],
    what: &str,
    bad: &mut Vec<Bad>,
) -> Result<(&'a [u8], Option<NaiveDate>), Bad> {
    let (rest, d) = digits(6)(i).map_err(|_| syntax(full, i, format!("{what} YYMMDD")))?;
    let date = yymmdd(d).or_else(|| {
        let last = last_day_30_360(
            century(number(&d[0..2])),
            number(&d[2..4]),
            number(&d[4..6]),
        )?;
        bad.push(dialect(full, i, DialectRule::ThirtyDayMonth, show(d)));
        Some(last)
    });
    if date.is_none() {
        bad.push(Bad {
            at: full.len() - i.len(),
            code: FindingCode::DateFormat,
            expected: format!("{what}: a calendar date YYMMDD"),
            found: show(d),
        });
    }
    Ok((rest, date))
}

/// An amount as written: integer digits, a decimal comma, fraction digits (`15d`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawAmount<'a> {
    pub int: &'a [u8],
    pub frac: &'a [u8],
    /// Byte offset of its first digit in the value.
    pub at: usize,
}

impl RawAmount<'_> {
    pub(super) fn text(&self) -> String {
        format!("{},{}", show(self.int), show(self.frac))
    }
}

/// `15d`: at most 15 characters, the comma included, at least one integer digit. Two
/// dialects are read, each a warning in `bad`: no comma (whole units: the digits end at
/// the next letter, so nothing else can be meant) and more than 15 characters when the
/// integer's leading zeros make the difference (zero-padded layouts).
fn amount<'a>(
    full: &'a [u8],
    i: &'a [u8],
    bad: &mut Vec<Bad>,
) -> Result<(&'a [u8], RawAmount<'a>), Bad> {
    let expected = "an amount like 1234,56 (digits, a decimal comma, at most 15 characters)";
    let p = |i| -> Res<'_, (&[u8], Option<&[u8]>)> {
        let (i, int) = take_while(|c: u8| c.is_ascii_digit()).parse(i)?;
        let (i, frac) = opt(|i| {
            let (i, _) = tag(",").parse(i)?;
            take_while(|c: u8| c.is_ascii_digit()).parse(i)
        })
        .parse(i)?;
        Ok((i, (int, frac)))
    };
    let (rest, (int, frac)) = p(i).map_err(|_: NomErr<'_>| syntax(full, i, expected))?;
    if int.is_empty() {
        return Err(syntax(full, i, expected));
    }
    let written = &i[..i.len() - rest.len()];
    if written.len() > 15 {
        let zeros = int.iter().take_while(|&&c| c == b'0').count();
        if written.len() - zeros.min(int.len() - 1) > 15 {
            return Err(syntax(full, i, expected));
        }
        bad.push(dialect(full, i, DialectRule::LongAmount, show(written)));
    }
    if frac.is_none() {
        bad.push(dialect(full, i, DialectRule::NoDecimalComma, show(written)));
    }
    let at = full.len() - i.len();
    let frac = frac.unwrap_or_default();
    Ok((rest, RawAmount { int, frac, at }))
}

/// An amount in minor units of a currency with `exponent` decimals: exactly, extra
/// non-zero decimals are an `AmountFormat` fault.
pub(crate) fn to_minor(a: &RawAmount<'_>, exponent: u32, currency: &str) -> Result<u64, Bad> {
    let bad = |expected: String| Bad {
        at: a.at,
        code: FindingCode::AmountFormat,
        expected,
        found: a.text(),
    };
    let e = exponent as usize;
    if a.frac.len() > e && a.frac[e..].iter().any(|&d| d != b'0') {
        return Err(bad(format!("at most {exponent} decimals for {currency}")));
    }
    let mut minor: u64 = 0;
    if a.int.len() + e <= 18 {
        // At most 18 digits: below 10^18, within an i64 whatever they are.
        let digit = |m: u64, d: &u8| m * 10 + u64::from(d.wrapping_sub(b'0'));
        let m = a.int.iter().fold(0, digit);
        let m = a.frac.iter().take(e).fold(m, digit);
        return Ok(m * 10u64.pow((e - a.frac.len().min(e)) as u32));
    }
    let frac = a
        .frac
        .iter()
        .copied()
        .chain(std::iter::repeat(b'0'))
        .take(e);
    for d in a.int.iter().copied().chain(frac) {
        minor = minor
            .checked_mul(10)
            .and_then(|m| m.checked_add(u64::from(d - b'0')))
            .filter(|&m| i64::try_from(m).is_ok())
            .ok_or_else(|| bad("an amount that fits 18 digits of minor units".into()))?;
    }
    Ok(minor)
}

fn currency<'a>(full: &'a [u8], i: &'a [u8]) -> Result<(&'a [u8], &'a str), Bad> {
    let (rest, c) = take_while_m_n(3, 3, |c: u8| c.is_ascii_uppercase())
        .parse(i)
        .map_err(|_: NomErr<'_>| syntax(full, i, "a currency code (3 capital letters)"))?;
    // Three ASCII capitals are UTF-8.
    Ok((rest, std::str::from_utf8(c).unwrap_or_default()))
}

fn end(full: &[u8], rest: &[u8], bad: &mut Vec<Bad>) {
    if !rest.is_empty() {
        bad.push(syntax(full, rest, "end of the field"));
    }
}

/// A balance, `:60F:`/`:60M:`/`:62F:`/`:62M:`/`:64:`/`:65:`: `1!a6!n3!a15d`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BalanceValue<'a> {
    pub debit: bool,
    pub date: Option<NaiveDate>,
    pub currency: &'a str,
    pub amount: RawAmount<'a>,
}

pub(crate) fn parse_balance(v: &[u8]) -> (Option<BalanceValue<'_>>, Vec<Bad>) {
    let mut bad = Vec::new();
    let r = (|| {
        let (i, mark) = alt((tag("C"), tag("D")))
            .parse(v)
            .map_err(|_: NomErr<'_>| syntax(v, v, "C or D"))?;
        let (i, date) = date6(v, i, "balance date", &mut bad)?;
        // An amount where the currency should be: the statement's currency is meant (the
        // reader fills it in, an empty currency here).
        let (i, currency) = match currency(v, i) {
            Err(_) if i.first().is_some_and(u8::is_ascii_digit) => {
                let found = "no currency".to_string();
                bad.push(dialect(v, i, DialectRule::NoBalanceCurrency, found));
                (i, "")
            }
            r => r?,
        };
        let (i, amount) = amount(v, i, &mut bad)?;
        Ok((
            i,
            BalanceValue {
                debit: mark == b"D",
                date,
                currency,
                amount,
            },
        ))
    })();
    match r {
        Ok((rest, b)) => {
            end(v, rest, &mut bad);
            (Some(b), bad)
        }
        Err(e) => {
            bad.push(e);
            (None, bad)
        }
    }
}

/// The debit/credit mark of a `:61:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    Credit,
    Debit,
    /// `RC`: reversal of a credit, so a debit.
    ReversalCredit,
    /// `RD`: reversal of a debit, so a credit.
    ReversalDebit,
}

impl Mark {
    pub(super) fn credit(self) -> bool {
        matches!(self, Mark::Credit | Mark::ReversalDebit)
    }
    pub(super) fn reversal(self) -> bool {
        matches!(self, Mark::ReversalCredit | Mark::ReversalDebit)
    }
}

/// A `:61:` statement line's first line, subfields 1-8 (the supplementary details, its
/// second line, are the reader's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StatementLine<'a> {
    pub value_date: Option<NaiveDate>,
    pub entry_date: Option<NaiveDate>,
    pub mark: Mark,
    pub funds_code: Option<u8>,
    pub amount: RawAmount<'a>,
    /// `NTRF`, `S051`, `FMSC`: the type letter and the 3-character code.
    pub tx_type: Option<&'a [u8]>,
    /// Trimmed; `NONREF` as written.
    pub customer_ref: Option<&'a [u8]>,
    pub bank_ref: Option<&'a [u8]>,
}

/// Customer and bank reference: `16x` each.
const REF_LEN_MAX: usize = 16;

/// The entry date `MMDD` in the year that puts it nearest the value date (a booking on
/// 31 December with value 2 January is in the year before).
pub(crate) fn entry_date(value: NaiveDate, mm: u32, dd: u32) -> Option<NaiveDate> {
    // In the value date's month: that year's date is within 30 days, the others 335 or more.
    if mm == value.month() {
        if dd == value.day() {
            return Some(value);
        }
        if let Some(d) = NaiveDate::from_ymd_opt(value.year(), mm, dd) {
            return Some(d);
        }
    }
    (value.year() - 1..=value.year() + 1)
        .filter_map(|y| NaiveDate::from_ymd_opt(y, mm, dd))
        .min_by_key(|d| (*d - value).num_days().abs())
}

fn trim(b: &[u8]) -> &[u8] {
    b.trim_ascii()
}

/// `:61:` line 1: `6!n[4!n]2a[1!a]15d1!a3!c16x[//16x]`: value date, entry date, mark
/// (`C`, `D`, `RC`, `RD`), funds code (one letter: `DR` is a debit in funds `R`, not a
/// reversal), amount, transaction type, customer reference, `//` bank reference.
/// `None` when the line does not get as far as its amount (no entry can be made); faults
/// after it (a missing reference) leave the entry with what was read.
pub(crate) fn parse_statement_line(v: &[u8]) -> (Option<StatementLine<'_>>, Vec<Bad>) {
    let mut bad = Vec::new();
    let (i, mut line) = match statement_line_amount(v, &mut bad) {
        Ok(x) => x,
        Err(e) => {
            bad.push(e);
            return (None, bad);
        }
    };
    // `S` and three blanks: no SWIFT code given, a miscellaneous entry.
    if i.len() >= 4 && i[0] == b'S' && i[1..4] == *b"   " {
        bad.push(dialect(
            v,
            i,
            DialectRule::BlankTransactionType,
            show(&i[..4]),
        ));
        line.tx_type = Some(b"NMSC");
        references(v, &i[4..], &mut line, &mut bad);
        return (Some(line), bad);
    }
    // Transaction type: N, F or S, then 3 characters.
    if i.len() < 4 || !i[..4].iter().all(u8::is_ascii_alphanumeric) {
        bad.push(syntax(v, i, "transaction type: N, F or S and 3 characters"));
        return (Some(line), bad);
    }
    if !matches!(i[0], b'N' | b'F' | b'S') {
        bad.push(syntax(v, i, "transaction type: N, F or S and 3 characters"));
    }
    line.tx_type = Some(&i[..4]);
    references(v, &i[4..], &mut line, &mut bad);
    (Some(line), bad)
}

/// `:61:` subfields 1-5, up to the amount: value date, entry date, mark, funds code,
/// amount; faults that do not stop the reading go to `bad`.
fn statement_line_amount<'a>(
    v: &'a [u8],
    bad: &mut Vec<Bad>,
) -> Result<(&'a [u8], StatementLine<'a>), Bad> {
    let (i, value_date) = date6(v, v, "value date", bad)?;
    let (i, mmdd) = opt(digits(4))
        .parse(i)
        .map_err(|_| syntax(v, i, "entry date MMDD"))?;
    let entry = match (mmdd, value_date) {
        (Some(md), Some(vd)) => {
            let (mm, dd) = (number(&md[0..2]), number(&md[2..4]));
            let d = entry_date(vd, mm, dd).or_else(|| {
                // The year the month's 28th is nearest the value date in.
                let year = entry_date(vd, mm, 28)?.year();
                let last = last_day_30_360(year, mm, dd)?;
                bad.push(dialect(v, &v[6..], DialectRule::ThirtyDayMonth, show(md)));
                Some(last)
            });
            if d.is_none() {
                bad.push(Bad {
                    at: 6,
                    code: FindingCode::DateFormat,
                    expected: "entry date: a calendar date MMDD".into(),
                    found: show(md),
                });
            }
            d
        }
        _ => None,
    };
    let (i, m) = alt((tag("RC"), tag("RD"), tag("C"), tag("D")))
        .parse(i)
        .map_err(|_: NomErr<'_>| syntax(v, i, "debit/credit mark C, D, RC or RD"))?;
    let mark = match m {
        b"RC" => Mark::ReversalCredit,
        b"RD" => Mark::ReversalDebit,
        b"C" => Mark::Credit,
        _ => Mark::Debit,
    };
    let (i, funds) = take_while_m_n(0, 1, |c: u8| c.is_ascii_alphabetic())
        .parse(i)
        .map_err(|_: NomErr<'_>| syntax(v, i, "funds code"))?;
    let (i, amount) = amount(v, i, bad)?;
    Ok((
        i,
        StatementLine {
            value_date,
            entry_date: entry,
            mark,
            funds_code: funds.first().copied(),
            amount,
            tx_type: None,
            customer_ref: None,
            bank_ref: None,
        },
    ))
}

/// `:61:` subfields 7-8 in `i` (after the transaction type): customer reference, up to
/// `//`, and bank reference.
fn references<'a>(v: &'a [u8], i: &'a [u8], line: &mut StatementLine<'a>, bad: &mut Vec<Bad>) {
    // Customer reference, up to `//`; a reference holds no `//` (SWIFT's rule).
    // The first `//`: the first `/` followed by another.
    let slashes = memchr::memchr_iter(b'/', i).find(|&p| i.get(p + 1) == Some(&b'/'));
    let (cust, bank) = match slashes {
        Some(p) => (&i[..p], Some(&i[p + 2..])),
        None => (i, None),
    };
    let cust_t = cust.trim_ascii_end();
    if trim(cust_t).is_empty() && bank.is_none() {
        // The line ends after the transaction type: there is no reference, as NONREF says.
        bad.push(dialect(v, i, DialectRule::NoReference, found_at(i)));
    } else if trim(cust_t).is_empty() {
        bad.push(syntax(
            v,
            i,
            "customer reference (16x; NONREF when there is none)",
        ));
    } else {
        long_reference(v, i, trim(cust_t), bad);
        line.customer_ref = Some(trim(cust_t));
    }
    if let Some(b) = bank {
        let at = &i[cust.len() + 2..];
        let b_t = b.trim_ascii_end();
        if trim(b_t).is_empty() {
            bad.push(syntax(v, at, "bank reference (16x) after //"));
        } else {
            long_reference(v, at, trim(b_t), bad);
            line.bank_ref = Some(trim(b_t));
        }
    }
}

/// A reference longer than its 16 characters (an 18-character IBAN): read whole, with a
/// warning; it runs to `//` or the end of the line, so its end is not in doubt.
fn long_reference(v: &[u8], at: &[u8], r: &[u8], bad: &mut Vec<Bad>) {
    if r.len() > REF_LEN_MAX {
        bad.push(dialect(v, at, DialectRule::LongReference, show(r)));
    }
}

/// Digits a statement or page number may have: SWIFT's 5, or up to 10 (a dialect).
const NUMBER_DIGITS_MAX: usize = 10;

/// `:28C:` `5n[/5n]` (and the old `:28:`): statement number, page (sequence) number. A
/// number of 6 to 10 digits is read whole, with a warning in `bad` (one beyond `u32`
/// saturates: the number only orders statements and pages; the text is kept as written).
pub(crate) fn parse_statement_number(
    v: &[u8],
    bad: &mut Vec<Bad>,
) -> Result<(u32, Option<u32>), Bad> {
    let n = |i| take_while_m_n(1, NUMBER_DIGITS_MAX, |c: u8| c.is_ascii_digit()).parse(i);
    let (i, stmt) =
        n(v).map_err(|_: NomErr<'_>| syntax(v, v, "statement number (1 to 5 digits)"))?;
    let (i2, page) = opt(|i| {
        let (i, _) = tag("/").parse(i)?;
        n(i)
    })
    .parse(i)
    .map_err(|_| syntax(v, i, "/ and a sequence number"))?;
    if !i2.is_empty() {
        return Err(syntax(v, i2, "end of the field (5n[/5n])"));
    }
    for (at, digits) in [(v, Some(stmt)), (i.get(1..).unwrap_or_default(), page)] {
        if let Some(d) = digits.filter(|d| d.len() > 5) {
            bad.push(dialect(v, at, DialectRule::LongStatementNumber, show(d)));
        }
    }
    Ok((number(stmt), page.map(number)))
}

/// `:90D:`/`:90C:` `5n3!a15d`: number of entries, currency, sum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ControlValue<'a> {
    pub count: u32,
    pub currency: &'a str,
    pub amount: RawAmount<'a>,
}

/// Dialects read go to `bad`.
pub(crate) fn parse_control<'a>(v: &'a [u8], bad: &mut Vec<Bad>) -> Result<ControlValue<'a>, Bad> {
    let (i, count) = take_while_m_n(1, 5, |c: u8| c.is_ascii_digit())
        .parse(v)
        .map_err(|_: NomErr<'_>| syntax(v, v, "number of entries (1 to 5 digits)"))?;
    let (i, currency) = currency(v, i)?;
    let (i, amount) = amount(v, i, bad)?;
    if !i.is_empty() {
        return Err(syntax(v, i, "end of the field"));
    }
    Ok(ControlValue {
        count: number(count),
        currency,
        amount,
    })
}

/// `:34F:` `3!a[1!a]15d`: floor limit currency, optional D/C, amount. The currency is
/// given when it was read, whatever follows it (a fault after it goes to `bad` and does
/// not take the statement's currency with it); dialects read go to `bad` too.
pub(crate) fn parse_floor_limit<'a>(v: &'a [u8], bad: &mut Vec<Bad>) -> Option<&'a str> {
    let (i, currency) = match currency(v, v) {
        Ok(x) => x,
        Err(b) => {
            bad.push(b);
            return None;
        }
    };
    let rest = (|| {
        let (i, _) = take_while_m_n(0, 1, |c: u8| c == b'D' || c == b'C')
            .parse(i)
            .map_err(|_: NomErr<'_>| syntax(v, i, "D or C"))?;
        let (i, _) = amount(v, i, bad)?;
        Ok(i)
    })();
    match rest {
        Ok(i) => end(v, i, bad),
        Err(b) => bad.push(b),
    }
    Some(currency)
}

/// `:13D:` `6!n4!n1!x4!n`: date YYMMDD, time HHMM, `+`/`-`, UTC offset HHMM.
pub(crate) fn parse_date_time(v: &[u8]) -> (Option<NaiveDate>, Vec<Bad>) {
    let mut bad = Vec::new();
    let r = (|| {
        let (i, date) = date6(v, v, "date", &mut bad)?;
        let (i, t) = digits(4)(i).map_err(|_| syntax(v, i, "time HHMM"))?;
        if number(&t[0..2]) > 23 || number(&t[2..4]) > 59 {
            bad.push(Bad {
                at: 6,
                code: FindingCode::DateFormat,
                expected: "a time of day HHMM".into(),
                found: show(t),
            });
        }
        let (i, _) = alt((tag("+"), tag("-")))
            .parse(i)
            .map_err(|_: NomErr<'_>| syntax(v, i, "+ or -"))?;
        let (i, _) = digits(4)(i).map_err(|_| syntax(v, i, "UTC offset HHMM"))?;
        Ok((i, date))
    })();
    match r {
        Ok((rest, d)) => {
            end(v, rest, &mut bad);
            (d, bad)
        }
        Err(e) => {
            bad.push(e);
            (None, bad)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn d(y: i32, m: u32, day: u32) -> Option<NaiveDate> {
        NaiveDate::from_ymd_opt(y, m, day)
    }

    /// A `:61:` line 1 and what it reads as: value, value date, entry date, mark, funds
    /// code, amount integer and fraction digits, type, customer reference, bank reference.
    type LineRow = (
        &'static str,
        Option<NaiveDate>,
        Option<NaiveDate>,
        Mark,
        Option<u8>,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        Option<&'static str>,
    );

    const STATEMENT_LINES: &[LineRow] = &[
        (
            "0709070904CR50990,05NTRFNONREF//0724710333343453",
            d(2007, 9, 7),
            d(2007, 9, 4),
            Mark::Credit,
            Some(b'R'),
            "50990",
            "05",
            "NTRF",
            "NONREF",
            Some("0724710333343453"),
        ),
        (
            "0909290929DK829419,78NTRFDansken",
            d(2009, 9, 29),
            d(2009, 9, 29),
            Mark::Debit,
            Some(b'K'),
            "829419",
            "78",
            "NTRF",
            "Dansken",
            None,
        ),
        (
            "1405070507C500,NTRFNONREF//B4E07XM00J000023",
            d(2014, 5, 7),
            d(2014, 5, 7),
            Mark::Credit,
            None,
            "500",
            "",
            "NTRF",
            "NONREF",
            Some("B4E07XM00J000023"),
        ),
        (
            "130101D000000000025,00N102EREF            ",
            d(2013, 1, 1),
            None,
            Mark::Debit,
            None,
            "000000000025",
            "00",
            "N102",
            "EREF",
            None,
        ),
        (
            "1312091209RD79,7FMSC01916//NONREF",
            d(2013, 12, 9),
            d(2013, 12, 9),
            Mark::ReversalDebit,
            None,
            "79",
            "7",
            "FMSC",
            "01916",
            Some("NONREF"),
        ),
        (
            "1312311231RCD1,NTRFX",
            d(2013, 12, 31),
            d(2013, 12, 31),
            Mark::ReversalCredit,
            Some(b'D'),
            "1",
            "",
            "NTRF",
            "X",
            None,
        ),
        (
            "0203170320CM5000,00S05168790452",
            d(2002, 3, 17),
            d(2002, 3, 20),
            Mark::Credit,
            Some(b'M'),
            "5000",
            "00",
            "S051",
            "68790452",
            None,
        ),
        // Year ends: entry date in the year before / after the value date.
        (
            "1001021231D1,00NTRFA//B",
            d(2010, 1, 2),
            d(2009, 12, 31),
            Mark::Debit,
            None,
            "1",
            "00",
            "NTRF",
            "A",
            Some("B"),
        ),
        (
            "0912310102D1,00NTRFA",
            d(2009, 12, 31),
            d(2010, 1, 2),
            Mark::Debit,
            None,
            "1",
            "00",
            "NTRF",
            "A",
            None,
        ),
        (
            "0910021002DK12398,75NMSCDBT.banktesten--//-",
            d(2009, 10, 2),
            d(2009, 10, 2),
            Mark::Debit,
            Some(b'K'),
            "12398",
            "75",
            "NMSC",
            "DBT.banktesten--",
            Some("-"),
        ),
    ];

    #[test]
    fn statement_lines_parse_subfield_by_subfield() {
        let rows = STATEMENT_LINES;
        for (v, vd, ed, mark, funds, int, frac, ty, cust, bank) in rows {
            let (l, bad) = parse_statement_line(v.as_bytes());
            assert_eq!(bad, vec![], "{v}");
            let l = l.unwrap();
            assert_eq!(l.value_date, *vd, "{v}");
            assert_eq!(l.entry_date, *ed, "{v}");
            assert_eq!(l.mark, *mark, "{v}");
            assert_eq!(l.funds_code, *funds, "{v}");
            assert_eq!(
                (l.amount.int, l.amount.frac),
                (int.as_bytes(), frac.as_bytes()),
                "{v}"
            );
            assert_eq!(l.tx_type, Some(ty.as_bytes()), "{v}");
            assert_eq!(l.customer_ref, Some(cust.as_bytes()), "{v}");
            assert_eq!(l.bank_ref, bank.map(str::as_bytes), "{v}");
        }
    }

    #[test]
    fn reversal_marks_turn_the_direction() {
        assert!(Mark::ReversalDebit.credit() && Mark::ReversalDebit.reversal());
        assert!(!Mark::ReversalCredit.credit() && Mark::ReversalCredit.reversal());
        assert!(Mark::Credit.credit() && !Mark::Credit.reversal());
        assert!(!Mark::Debit.credit() && !Mark::Debit.reversal());
    }

    /// A faulty `:61:` line 1, its one fault: value, offset, code, expected prefix, found,
    /// whether an entry is made.
    const LINE_FAULTS: &[(&str, usize, FindingCode, &str, &str, bool)] = &[
        (
            "170914D233,15NMSC",
            17,
            FindingCode::BankDialect,
            "no customer reference: read as NONREF",
            "end of line",
            true,
        ),
        (
            "1602300301DR6,00N024NONREF",
            0,
            FindingCode::BankDialect,
            "day beyond the month's end read as its last day (30/360)",
            "160230",
            true,
        ),
        (
            "1602310301DR6,00N024NONREF",
            0,
            FindingCode::DateFormat,
            "value date",
            "160231",
            true,
        ),
        (
            "1602280230DR6,00N024NONREF",
            6,
            FindingCode::BankDialect,
            "day beyond the month's end read as its last day (30/360)",
            "0230",
            true,
        ),
        (
            "180417D1,00S   NONREF",
            11,
            FindingCode::BankDialect,
            "transaction type S with blanks: read as NMSC",
            "S   ",
            true,
        ),
        (
            "1610301031D0,42MCI0NONREF//055001022000001",
            15,
            FindingCode::TagSyntax,
            "transaction type",
            "MCI0NONREF//055001022000",
            true,
        ),
        (
            "180417X1,00NTRFA",
            6,
            FindingCode::TagSyntax,
            "debit/credit mark",
            "X1,00NTRFA",
            false,
        ),
        (
            "180417D100NTRFA",
            7,
            FindingCode::BankDialect,
            "no decimal comma: read as whole units",
            "100",
            true,
        ),
        (
            "180417D,5NTRFA",
            7,
            FindingCode::TagSyntax,
            "an amount",
            ",5NTRFA",
            false,
        ),
        (
            "18041",
            0,
            FindingCode::TagSyntax,
            "value date",
            "18041",
            false,
        ),
        (
            "180417D1,00NTRFA234567890123456789",
            15,
            FindingCode::BankDialect,
            "reference longer than 16: read whole",
            "A234567890123456789",
            true,
        ),
        (
            "180417D1,00NTRFA//B234567890123456789",
            18,
            FindingCode::BankDialect,
            "reference longer than 16: read whole",
            "B234567890123456789",
            true,
        ),
        (
            "180417D1,00NTRF//B",
            15,
            FindingCode::TagSyntax,
            "customer reference (16x",
            "//B",
            true,
        ),
        (
            "180417D1,00NTRFA//",
            18,
            FindingCode::TagSyntax,
            "bank reference",
            "end of line",
            true,
        ),
        (
            "1804171341D1,00NTRFA",
            6,
            FindingCode::DateFormat,
            "entry date",
            "1341",
            true,
        ),
        (
            "180417D1,00NT",
            11,
            FindingCode::TagSyntax,
            "transaction type",
            "NT",
            true,
        ),
    ];

    #[test]
    fn statement_line_faults_say_where() {
        let rows = LINE_FAULTS;
        for (v, at, code, exp, found, made) in rows {
            let (l, bad) = parse_statement_line(v.as_bytes());
            assert_eq!(bad.len(), 1, "{v}: {bad:?}");
            assert_eq!(bad[0].at, *at, "{v}");
            assert_eq!(bad[0].code, *code, "{v}");
            assert!(bad[0].expected.starts_with(exp), "{v}: {}", bad[0].expected);
            assert_eq!(bad[0].found, *found, "{v}");
            assert_eq!(l.is_some(), *made, "{v}");
        }
    }

    #[test]
    fn amounts_go_to_minor_units_exactly() {
        let a = |s: &'static str| {
            let (_, b) = parse_balance(format!("C200101EUR{s}").leak().as_bytes());
            assert_eq!(b, vec![], "{s}");
            let (_, r) = amount(s.as_bytes(), s.as_bytes(), &mut vec![]).unwrap();
            r
        };
        assert_eq!(to_minor(&a("1234,56"), 2, "EUR"), Ok(123456));
        assert_eq!(to_minor(&a("79,7"), 2, "CHF"), Ok(7970));
        assert_eq!(to_minor(&a("500,"), 2, "EUR"), Ok(50000));
        assert_eq!(to_minor(&a("000000001000,00"), 2, "EUR"), Ok(100000));
        assert_eq!(to_minor(&a("12,500"), 2, "EUR"), Ok(1250));
        assert_eq!(to_minor(&a("1250,"), 0, "JPY"), Ok(1250));
        assert_eq!(to_minor(&a("1,234"), 3, "KWD"), Ok(1234));
        let e = to_minor(&a("12,345"), 2, "EUR").unwrap_err();
        assert_eq!(
            (e.code, e.expected.as_str()),
            (FindingCode::AmountFormat, "at most 2 decimals for EUR")
        );
        assert_eq!(e.found, "12,345");
        let e = to_minor(&a("1,5"), 0, "JPY").unwrap_err();
        assert_eq!(e.code, FindingCode::AmountFormat);
        assert!(
            amount(b"1234567890123,45", b"1234567890123,45", &mut vec![]).is_err(),
            "16 characters"
        );
        assert!(amount(b",5", b",5", &mut vec![]).is_err());
        // Zero-padded past 15 characters: the zeros read away, a dialect; past 15
        // characters without them, an error still.
        let mut bad = vec![];
        let long = b"0000000000000001000,00";
        let (_, r) = amount(long, long, &mut bad).unwrap();
        assert_eq!(to_minor(&r, 2, "EUR"), Ok(100000));
        assert_eq!(
            bad,
            vec![Bad {
                at: 0,
                code: FindingCode::BankDialect,
                expected: "amount longer than 15 characters: leading zeros read away".into(),
                found: "0000000000000001000,00".into(),
            }]
        );
        assert!(
            amount(
                b"10000000000000001000,00",
                b"10000000000000001000,00",
                &mut bad
            )
            .is_err()
        );
        // No comma: whole units, a dialect.
        let mut bad = vec![];
        let (rest, r) = amount(b"500NTRF", b"500NTRF", &mut bad).unwrap();
        assert_eq!((rest, to_minor(&r, 2, "EUR")), (&b"NTRF"[..], Ok(50000)));
        assert_eq!(bad[0].expected, "no decimal comma: read as whole units");
        assert_eq!((bad.len(), bad[0].at, bad[0].found.as_str()), (1, 0, "500"));
    }

    #[test]
    fn balances_and_small_fields() {
        let (b, bad) = parse_balance(b"D070904EUR4472049,09");
        assert_eq!(bad, vec![]);
        let b = b.unwrap();
        assert!(b.debit);
        assert_eq!((b.date, b.currency), (d(2007, 9, 4), "EUR"));
        let (b, bad) = parse_balance(b"C020315105000,00");
        assert_eq!(b.map(|b| b.currency), Some(""));
        assert_eq!(
            (bad[0].code, bad[0].at, bad[0].found.as_str()),
            (FindingCode::BankDialect, 7, "no currency")
        );
        let (b, bad) = parse_balance(b"C020315XY105000,00");
        assert_eq!(b, None);
        assert!(bad[0].expected.starts_with("a currency code"));
        let (b, bad) = parse_balance(b"C160231EUR1,00 x");
        assert!(b.is_some());
        assert_eq!(
            bad.iter().map(|b| (b.code, b.at)).collect::<Vec<_>>(),
            vec![(FindingCode::DateFormat, 1), (FindingCode::TagSyntax, 14)]
        );
        let (b, bad) = parse_balance(b"C160230EUR1,00");
        assert_eq!(b.unwrap().date, d(2016, 2, 29));
        assert_eq!(
            bad.iter()
                .map(|b| (b.code, b.at, b.found.as_str()))
                .collect::<Vec<_>>(),
            vec![(FindingCode::BankDialect, 1, "160230")]
        );
        let mut bad = vec![];
        assert_eq!(
            parse_statement_number(b"00012/002", &mut bad),
            Ok((12, Some(2)))
        );
        assert_eq!(parse_statement_number(b"0", &mut bad), Ok((0, None)));
        assert_eq!(parse_statement_number(b"12/", &mut bad).unwrap_err().at, 2);
        assert_eq!(bad, vec![]);
        // 6 to 10 digits: read whole, a dialect each; 11 are an error.
        assert_eq!(
            parse_statement_number(b"1810118101/1234567", &mut bad),
            Ok((1810118101, Some(1234567)))
        );
        assert_eq!(
            bad.iter()
                .map(|b| (b.at, b.code, b.found.as_str()))
                .collect::<Vec<_>>(),
            vec![
                (0, FindingCode::BankDialect, "1810118101"),
                (11, FindingCode::BankDialect, "1234567")
            ]
        );
        assert_eq!(
            bad[0].expected,
            "statement number longer than 5 digits: read whole"
        );
        assert_eq!(
            parse_statement_number(b"12345678901", &mut bad)
                .unwrap_err()
                .at,
            10
        );
        let c = parse_control(b"1EUR2,30", &mut vec![]).unwrap();
        assert_eq!(
            (c.count, c.currency, c.amount.text()),
            (1, "EUR", "2,30".to_string())
        );
        let mut bad = vec![];
        assert_eq!(parse_floor_limit(b"EURD0,00", &mut bad), Some("EUR"));
        assert_eq!(parse_floor_limit(b"EUR0,00", &mut bad), Some("EUR"));
        assert_eq!(bad, vec![]);
        // No comma: read, a dialect; a bad amount still gives the currency.
        assert_eq!(parse_floor_limit(b"PLN0", &mut bad), Some("PLN"));
        assert_eq!(
            (bad.len(), bad[0].code, bad[0].at),
            (1, FindingCode::BankDialect, 3)
        );
        let mut bad = vec![];
        assert_eq!(parse_floor_limit(b"PLNDX", &mut bad), Some("PLN"));
        assert_eq!(
            (bad.len(), bad[0].code, bad[0].at),
            (1, FindingCode::TagSyntax, 4)
        );
        assert_eq!(parse_floor_limit(b"12", &mut vec![]), None);
        assert_eq!(
            parse_date_time(b"1610301730+0000"),
            (d(2016, 10, 30), vec![])
        );
        assert_eq!(
            parse_date_time(b"1610301790+0000").1[0].code,
            FindingCode::DateFormat
        );
        assert_eq!(parse_date_time(b"1610301730*0000").1[0].at, 10);
    }

    #[test]
    fn century_window() {
        assert_eq!(
            (century(0), century(69), century(70), century(99)),
            (2000, 2069, 1970, 1999)
        );
        assert_eq!(entry_date(d(2016, 3, 1).unwrap(), 2, 29), d(2016, 2, 29));
        assert_eq!(entry_date(d(2017, 3, 1).unwrap(), 2, 29), d(2016, 2, 29));
        assert_eq!(entry_date(d(2017, 3, 1).unwrap(), 2, 30), None);
        // 30/360 days: the month's last day; 31 February is no date.
        assert_eq!(last_day_30_360(2016, 2, 30), d(2016, 2, 29));
        assert_eq!(last_day_30_360(2017, 2, 29), d(2017, 2, 28));
        assert_eq!(last_day_30_360(2017, 4, 31), d(2017, 4, 30));
        assert_eq!(last_day_30_360(2017, 2, 31), None);
        assert_eq!(last_day_30_360(2017, 13, 30), None);
        assert_eq!(last_day_30_360(2017, 5, 31), None, "a real date");
    }
}
