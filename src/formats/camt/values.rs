//! The values of a camt document's leaves: dates and date-times as ISO 20022 writes them,
//! amounts with their `Ccy`, counts, credit/debit indicators, texts; a finding at the leaf
//! for one that is not what it should be.

use super::reader::{Frame, Stack, State};
use crate::findings::{Finding, FindingCode};
use crate::formats::xml::amount::parse_amount;
use crate::money::{Currency, CurrencyError};
use chrono::{DateTime, FixedOffset, NaiveDate};

/// `YYYY-MM-DD`, a real date.
pub(super) fn parse_date(text: &str) -> Option<NaiveDate> {
    match text.as_bytes() {
        [y @ .., b'-', m1, m2, b'-', d1, d2] if y.len() == 4 => {
            let n = |d: &[u8]| {
                d.iter().try_fold(0u32, |n, &b| {
                    b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
                })
            };
            NaiveDate::from_ymd_opt(n(y)? as i32, n(&[*m1, *m2])?, n(&[*d1, *d2])?)
        }
        _ => None,
    }
}

/// An ISO 8601 date-time as ISO 20022 writes it (`2025-07-23T00:00:00.000000000`,
/// `…+01:00`, `…Z`): its date as written (no time zone conversion).
pub(super) fn parse_date_time(text: &str) -> Option<NaiveDate> {
    let date = parse_date(text.get(..10)?)?;
    let rest = text.get(10..)?.strip_prefix('T')?;
    let time_ok = match rest.as_bytes() {
        [h1, h2, b':', m1, m2, b':', s1, s2, ..] => {
            let two = |a: u8, b: u8| {
                (a.is_ascii_digit() && b.is_ascii_digit()).then(|| (a - b'0') * 10 + (b - b'0'))
            };
            // As chrono's `%H:%M:%S`: a leap second (`:60`) is a real time.
            matches!((two(*h1, *h2), two(*m1, *m2), two(*s1, *s2)),
                (Some(h), Some(m), Some(s)) if h < 24 && m < 60 && s <= 60)
        }
        _ => false,
    };
    if !time_ok {
        return None;
    }
    let mut rest = rest.get(8..)?;
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        rest = &r[n..];
    }
    let zone_ok = match rest.as_bytes() {
        [] | [b'Z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            [h1, h2, m1, m2].iter().all(|b| b.is_ascii_digit())
                && (h1 - b'0') * 10 + (h2 - b'0') <= 14
                && (m1 - b'0') * 10 + (m2 - b'0') < 60
        }
        _ => false,
    };
    zone_ok.then_some(date)
}

/// The time zone a date-time written as [`parse_date_time`] takes says (`Z` or
/// `+hh:mm`/`-hh:mm`); `None` for a local time without one, or for no date-time.
pub(super) fn zone_of(text: &str) -> Option<FixedOffset> {
    parse_date_time(text)?;
    let b = text.as_bytes();
    if b.last() == Some(&b'Z') {
        return FixedOffset::east_opt(0);
    }
    match b.get(b.len().checked_sub(6)?..)? {
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let n = |x: &u8, y: &u8| i32::from(x - b'0') * 10 + i32::from(y - b'0');
            let secs = n(h1, h2) * 3600 + n(m1, m2) * 60;
            FixedOffset::east_opt(if *sign == b'-' { -secs } else { secs })
        }
        _ => None,
    }
}

/// The instant a date-time with a time zone names; `None` without one.
pub(super) fn instant_of(text: &str) -> Option<DateTime<FixedOffset>> {
    let zone = zone_of(text)?;
    let date = parse_date_time(text)?;
    let b = text.as_bytes();
    let two = |i: usize| u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0');
    // A leap second (`:60`) counts as the last second of its minute: the date is the same.
    let time = chrono::NaiveTime::from_hms_opt(two(11), two(14), two(17).min(59))?;
    date.and_time(time).and_local_timezone(zone).single()
}

/// Whitespace runs collapsed to one blank.
pub(super) fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

pub(super) fn append(slot: &mut Option<String>, text: &str) {
    let text = collapse(text);
    if text.is_empty() {
        return;
    }
    match slot {
        Some(s) => {
            s.push(' ');
            s.push_str(&text);
        }
        None => *slot = Some(text),
    }
}

pub(super) fn non_empty(text: &str) -> Option<String> {
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_string())
}

impl State<'_> {
    /// An amount with its `Ccy`, in minor units; a finding when it is not one.
    pub(super) fn amount(&mut self, frame: &Frame, stack: &Stack) -> Option<(i64, String)> {
        let path = || stack.path();
        let Some(code) = frame.has_ccy.then(|| frame.ccy.clone()) else {
            self.sink.push(Finding::error(
                FindingCode::MissingElement,
                frame.pos.at(format!("{}@Ccy", path())),
                None,
                "a Ccy attribute",
                "none",
            ));
            return None;
        };
        let currency = match Currency::parse(&code) {
            Ok(c) => c,
            Err(e) => {
                let why = match e {
                    CurrencyError::Superseded { by } => format!(" (withdrawn, superseded by {by})"),
                    _ => String::new(),
                };
                self.sink.push(Finding::error(
                    FindingCode::CurrencyCode,
                    frame.pos.at(format!("{}@Ccy", path())),
                    None,
                    "an active ISO 4217 currency code with minor units",
                    format!("{code}{why}"),
                ));
                return None;
            }
        };
        let text = frame.text.trim();
        match parse_amount(text, currency) {
            Ok(minor) => Some((minor, code)),
            Err(why) => {
                self.sink.push(Finding::error(
                    FindingCode::AmountFormat,
                    frame.pos.at(path()),
                    None,
                    why,
                    text.to_string(),
                ));
                None
            }
        }
    }

    pub(super) fn date(
        &mut self,
        frame: &Frame,
        stack: &Stack,
        date_time: bool,
    ) -> Option<NaiveDate> {
        let path = || stack.path();
        let text = frame.text.trim();
        let d = if date_time {
            parse_date_time(text)
        } else {
            parse_date(text)
        };
        if d.is_none() {
            self.sink.push(Finding::error(
                FindingCode::DateFormat,
                frame.pos.at(path()),
                None,
                if date_time {
                    "a real date-time YYYY-MM-DDThh:mm:ss[.f][Z|+hh:mm]"
                } else {
                    "a real date YYYY-MM-DD"
                },
                text.to_string(),
            ));
        }
        d
    }

    pub(super) fn count(&mut self, frame: &Frame, stack: &Stack) -> Option<u64> {
        let path = || stack.path();
        let text = frame.text.trim();
        let n = (!text.is_empty() && text.len() <= 15 && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse::<u64>().ok())
            .flatten();
        if n.is_none() {
            self.sink.push(Finding::error(
                FindingCode::InvalidValue,
                frame.pos.at(path()),
                None,
                "a count: 1 to 15 digits",
                text.to_string(),
            ));
        }
        n
    }

    pub(super) fn credit_debit(&mut self, frame: &Frame, stack: &Stack) -> Option<bool> {
        let path = || stack.path();
        match frame.text.trim() {
            "CRDT" => Some(true),
            "DBIT" => Some(false),
            other => {
                self.sink.push(Finding::error(
                    FindingCode::InvalidValue,
                    frame.pos.at(path()),
                    None,
                    "CRDT or DBIT",
                    other.to_string(),
                ));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_date_times_must_be_real() {
        assert_eq!(
            parse_date("2026-02-28"),
            NaiveDate::from_ymd_opt(2026, 2, 28)
        );
        assert_eq!(parse_date("2026-02-30"), None);
        assert_eq!(parse_date("2026-2-28"), None);
        // ISO 20022's ISODate is the XML Schema date: four-digit year, two-digit month and
        // day, nothing else (chrono's `%Y-%m-%d`, used before, also took these).
        for bad in [
            "+2025-7-23",
            "-999-07-23",
            "2025- 7-23",
            "2025-07-2 ",
            "２０２５-07-23",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
        assert_eq!(
            parse_date_time("2016-12-31T23:59:60"),
            NaiveDate::from_ymd_opt(2016, 12, 31),
            "a leap second is a real time"
        );
        for ok in [
            "2025-07-23T00:00:00.000000000",
            "2007-10-18T12:30:00+01:00",
            "2018-04-29T17:31:51Z",
            "2019-05-20T23:59:59",
            "2010-10-18T17:00:00-05:00",
        ] {
            assert!(parse_date_time(ok).is_some(), "{ok}");
        }
        for bad in [
            "2026-02-30T10:00:00",
            "2026-01-01",
            "2026-01-01T25:00:00",
            "2026-01-01T10:00",
            "2026-01-01T10:00:00.",
            "2026-01-01T10:00:00+1:00",
            "2026-01-01T10:00:00+15:00",
            "2026-01-01T10:00:00 ",
            "2025-07-23T 9:30:00",
            "2025-07-23T09:30:61",
        ] {
            assert_eq!(parse_date_time(bad), None, "{bad}");
        }
    }
}
