//! A complete field's value into its page: order and repetition checked, then the
//! value read by its tag (references, statement number, MT942 fields, balances, entries,
//! details, control totals).

use super::tags::{once, rank};
use super::{Control, Field, Page, Reader};
use crate::findings::{FindingCode, show};
use crate::formats::mt940::fields::{self, Bad};
use crate::formats::mt940::{ENTRIES_PER_STATEMENT_MAX, decode, decode_cow, remittance_text_into};
use crate::formats::statement::{
    Balance, BalanceKind, Entry, EntryStatus, collapse_whitespace, collapse_whitespace_into,
};
use crate::money::{Currency, CurrencyError};
use std::borrow::Cow;

impl Reader<'_> {
    pub(super) fn bad(&mut self, f: &Field, line: usize, b: Bad) {
        let pos = f.pos(line, b.at);
        self.error(b.code, pos, b.expected, b.found);
    }

    pub(super) fn field_into(&mut self, page: &mut Page, f: &Field) {
        if !self.in_order(page, f) {
            return;
        }
        page.seen |= f.bit;
        let was_open = std::mem::replace(&mut page.open_entry, false);
        let v = f.first().trim_ascii_end();
        let tag = f.tag;
        if !matches!(tag, "61" | "86" | "25P") && f.lines.len() > 1 {
            let pos = f.pos(1, 0);
            self.error(
                FindingCode::TagSyntax,
                pos,
                format!("{} on one line", f.label()),
                format!("{} lines", f.lines.len()),
            );
        }
        match tag {
            "20" => {
                page.id = decode(v).trim().to_string();
                self.check_len(f, v, 16, "transaction reference (16x)");
            }
            "21" => {}
            "25" | "25P" => {
                page.account = Some(decode(v).trim().to_string());
                self.check_len(f, v, 35, "account identification (35x)");
            }
            "28" | "28C" => self.statement_number(page, f, v),
            "34F" => {
                page.mt942_fields = true;
                match fields::parse_floor_limit(v) {
                    Ok(c) if page.currency.is_none() => self.set_currency(page, f, c, 0),
                    Ok(_) => {}
                    Err(b) => self.bad(f, 0, b),
                }
            }
            "13D" => {
                page.mt942_fields = true;
                let (d, bad) = fields::parse_date_time(v);
                page.date_time = d;
                for b in bad {
                    self.bad(f, 0, b);
                }
            }
            "60F" | "60M" | "62F" | "62M" | "64" | "65" => self.balance(page, f, v),
            "61" => self.entry(page, f, v),
            "86" => self.details(page, f, was_open),
            "90D" | "90C" => self.control(page, f, v),
            _ => {}
        }
    }

    /// A field in its place: not after a later one, not a second of one a message holds
    /// once. `false`: the field is not read (a second one out of order is reported once).
    fn in_order(&mut self, page: &mut Page, f: &Field) -> bool {
        let tag = f.tag;
        let mut out_of_order = false;
        if let Some(r) = rank(tag) {
            if r < page.rank {
                out_of_order = true;
                self.error(
                    FindingCode::RecordOrder,
                    f.at.clone(),
                    "MT940 field order (:20: :25: :28C: :60a: :61:/:86: :62a: :64: :65:)",
                    format!("{} after a later field", f.label()),
                );
            } else {
                page.rank = r;
            }
        }
        if once(tag) && page.seen & f.bit != 0 {
            if !out_of_order {
                self.error(
                    FindingCode::RecordOrder,
                    f.at.clone(),
                    format!("one {} per message", f.label()),
                    format!("a second {}", f.label()),
                );
            }
            return false;
        }
        true
    }

    /// `:28C:` (or the old `:28:`): statement number and page.
    fn statement_number(&mut self, page: &mut Page, f: &Field, v: &[u8]) {
        if f.tag == "28" {
            self.warning(
                FindingCode::TagSyntax,
                f.at.clone(),
                ":28C: (statement number/sequence number; the old :28: is read as it)",
                ":28:",
            );
        }
        match fields::parse_statement_number(v) {
            Ok(n) => page.number = Some(n),
            Err(b) => self.bad(f, 0, b),
        }
        page.sequence = Some(decode(v).trim().to_string());
        page.number_at = Some(f.at.clone());
    }

    /// `:86:`, information to the account owner: the entry's when it follows a `:61:`,
    /// else about the statement (not kept: the model has no place).
    fn details(&mut self, page: &mut Page, f: &Field, was_open: bool) {
        self.check_details(f);
        let Some(e) = page.entries.last_mut().filter(|_| was_open) else {
            return;
        };
        match (f.lines.len(), std::str::from_utf8(f.first())) {
            // One line (most): nothing to join.
            (1, Ok(one)) => {
                self.text.clear();
                collapse_whitespace_into(&mut self.text, one);
            }
            _ => {
                let lines = f.lines.iter().map(|l| {
                    let t = f.text(l);
                    (t, l.column as usize - 1 + t.len())
                });
                remittance_text_into(lines, &mut self.joined, &mut self.text);
            }
        }
        let text = self.text.as_str();
        e.remittance = match e.remittance.take() {
            Some(mut supp) if !text.is_empty() => {
                supp.reserve_exact(1 + text.len());
                supp.push(' ');
                supp.push_str(text);
                Some(supp)
            }
            Some(supp) => Some(supp),
            None => (!text.is_empty()).then(|| text.to_string()),
        };
    }

    /// `:90D:`/`:90C:`: a control total, checked when the page ends.
    fn control(&mut self, page: &mut Page, f: &Field, v: &[u8]) {
        page.mt942_fields = true;
        let c = match fields::parse_control(v) {
            Ok(c) => c,
            Err(b) => return self.bad(f, 0, b),
        };
        let amount_minor = fields::to_minor(
            &c.amount,
            Currency::parse(c.currency).map_or(2, Currency::exponent),
            c.currency,
        );
        let amount_minor = match amount_minor {
            Ok(a) => Some(a),
            Err(b) => {
                self.bad(f, 0, b);
                None
            }
        };
        page.controls.push(Control {
            debit: f.tag == "90D",
            count: c.count,
            amount_minor,
            currency: c.currency.to_string(),
            position: f.at.clone(),
        });
    }

    pub(super) fn check_len(&mut self, f: &Field, v: &[u8], max: usize, what: &str) {
        let t = v.trim_ascii();
        if t.is_empty() || t.len() > max {
            let pos = f.pos(0, 0);
            self.error(FindingCode::TagSyntax, pos, what.to_string(), show(t));
        }
    }

    /// `:86:` is `6*65x`: longer text is kept whole, with a warning.
    pub(super) fn check_details(&mut self, f: &Field) {
        let longest = f.lines.iter().map(|l| l.end - l.start).max().unwrap_or(0);
        if f.lines.len() > 6 || longest > 65 {
            self.warning(
                FindingCode::TagSyntax,
                f.at.clone(),
                ":86: of at most 6 lines of 65 characters (kept whole)",
                format!("{} lines, longest {longest} characters", f.lines.len()),
            );
        }
    }

    /// The statement's currency from its first balance: its exponent, or a finding.
    pub(super) fn set_currency(&mut self, page: &mut Page, f: &Field, code: &str, at: usize) {
        page.currency = Some(code.to_string());
        match Currency::parse(code) {
            Ok(c) => page.exponent = Some(c.exponent()),
            Err(e) => {
                page.currency_bad = true;
                self.currency_error(f, at, code, e);
            }
        }
    }

    pub(super) fn currency_error(&mut self, f: &Field, at: usize, code: &str, e: CurrencyError) {
        let found = match e {
            CurrencyError::Unknown => code.to_string(),
            _ => format!("{code} ({e})"),
        };
        let pos = f.pos(0, at);
        self.error(
            FindingCode::CurrencyCode,
            pos,
            "an active ISO 4217 currency code with minor units",
            found,
        );
    }

    pub(super) fn balance(&mut self, page: &mut Page, f: &Field, v: &[u8]) {
        let tag = f.tag;
        match tag {
            "60F" | "60M" => page.opening_tag = Some(tag),
            "62F" | "62M" => page.closing_tag = Some(tag),
            _ => {}
        }
        let (b, bad) = fields::parse_balance(v);
        for x in bad {
            self.bad(f, 0, x);
        }
        let Some(b) = b else {
            return;
        };
        // The currency starts at offset 7 (mark and date before it).
        let exponent = if page.currency.is_none() && matches!(tag, "60F" | "60M") {
            self.set_currency(page, f, b.currency, 7);
            page.exponent
        } else {
            match Currency::parse(b.currency) {
                Ok(c) => Some(c.exponent()),
                Err(e) => {
                    self.currency_error(f, 7, b.currency, e);
                    None
                }
            }
        };
        let amount_minor = match exponent.map(|e| fields::to_minor(&b.amount, e, b.currency)) {
            Some(Ok(a)) => a as i64,
            Some(Err(x)) => {
                self.bad(f, 0, x);
                return;
            }
            None => return,
        };
        let kind = match tag {
            "60F" => BalanceKind::OpeningBooked,
            "60M" => BalanceKind::IntermediateOpening,
            "62F" => BalanceKind::ClosingBooked,
            "62M" => BalanceKind::IntermediateClosing,
            "64" => BalanceKind::ClosingAvailable,
            _ => BalanceKind::Other,
        };
        let balance = Balance {
            kind,
            code: f.label().to_string(),
            amount_minor: if b.debit { -amount_minor } else { amount_minor },
            currency: b.currency.to_string(),
            date: b.date,
            position: f.at.clone().into(),
        };
        match tag {
            "60F" | "60M" => page.opening = Some(balance),
            "62F" | "62M" => page.closing = Some(balance),
            _ => page.others.push(balance),
        }
    }

    pub(super) fn entry(&mut self, page: &mut Page, f: &Field, v: &[u8]) {
        let (line, bad) = fields::parse_statement_line(v);
        for b in bad {
            self.bad(f, 0, b);
        }
        let supp = self.supplementary_details(f);
        let Some(line) = line else {
            return;
        };
        if !self.room_for_entry(page, f) {
            return;
        }
        let currency = page.currency.clone().unwrap_or_default();
        let amount_minor = match page.exponent {
            Some(e) => match fields::to_minor(&line.amount, e, &currency) {
                Ok(a) => a,
                Err(b) => {
                    self.bad(f, 0, b);
                    0
                }
            },
            // No currency to post (reported at the balance): no exponent, no amount.
            None => 0,
        };
        if page.currency.is_none() {
            let pos = f.pos(0, line.amount.at);
            self.error(
                FindingCode::MissingTag,
                pos,
                "an opening balance (:60F:/:60M:; MT942 :34F:) giving the currency before :61:",
                "none",
            );
        }
        // The line validated once; its subfields are slices of it.
        let v_text = std::str::from_utf8(v).ok();
        let reference = |r: Option<&[u8]>| {
            r.filter(|b| !b.eq_ignore_ascii_case(b"NONREF"))
                .map(|b| decode_part(v, v_text, b))
        };
        self.entry_no += 1;
        // One line: its text, whitespace runs collapsed.
        let text = supp
            .filter(|s| !s.is_empty())
            .map(|s| collapse_whitespace(&s));
        page.entries.push(Entry {
            entry_no: self.entry_no,
            amount_minor,
            currency,
            credit: line.mark.credit(),
            reversal: line.mark.reversal(),
            status: EntryStatus::Booked,
            booking_date: line.entry_date,
            value_date: line.value_date,
            bank_ref: reference(line.bank_ref),
            customer_ref: reference(line.customer_ref),
            end_to_end_id: None,
            bank_tx_code: line.tx_type.map(|t| decode_part(v, v_text, t)),
            remittance: text,
            batch_ref: None,
            details: Vec::new(),
            position: f.at.clone().into(),
        });
        page.open_entry = true;
    }

    /// A `:61:`'s supplementary details: its second line, `34x` (longer is kept whole,
    /// with a warning).
    fn supplementary_details<'f>(&mut self, f: &'f Field) -> Option<Cow<'f, str>> {
        let supp = f.line_text(1).map(|l| decode_cow(l.trim_ascii()));
        if f.lines.len() > 2
            || f.line_text(1)
                .is_some_and(|l| l.trim_ascii_end().len() > 34)
        {
            let pos = f.pos(1, 0);
            self.warning(
                FindingCode::TagSyntax,
                pos,
                ":61: supplementary details: one line of at most 34 characters (kept whole)",
                format!("{} more lines", f.lines.len() - 1),
            );
        }
        supp
    }

    /// Whether the page takes one more entry: past [`ENTRIES_PER_STATEMENT_MAX`] the
    /// entries are dropped, with one finding.
    fn room_for_entry(&mut self, page: &mut Page, f: &Field) -> bool {
        if page.entries.len() < ENTRIES_PER_STATEMENT_MAX {
            return true;
        }
        if !page.dropped_entries {
            page.dropped_entries = true;
            self.error(
                FindingCode::SizeLimit,
                f.at.clone(),
                format!("at most {ENTRIES_PER_STATEMENT_MAX} entries in a statement"),
                "more",
            );
        }
        false
    }
}

/// [`decode`] of `part`, a slice of `whole`: cut from `whole_text` (`whole` as text, when
/// it is UTF-8) rather than validated again.
fn decode_part(whole: &[u8], whole_text: Option<&str>, part: &[u8]) -> String {
    let at = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    let within = at <= whole.len() && part.len() <= whole.len() - at;
    match whole_text
        .filter(|_| within)
        .and_then(|t| t.get(at..at + part.len()))
    {
        Some(s) => s.to_string(),
        None => decode(part),
    }
}
