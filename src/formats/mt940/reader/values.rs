//! A complete field's value into its page: order and repetition checked, then the
//! value read by its tag (references, statement number, MT942 fields, balances, entries,
//! details, control totals).

use super::tags::{once, rank, tag_bit};
use super::{Control, Field, Page, Reader};
use crate::findings::{Finding, FindingCode, show};
use crate::formats::dialect::DialectRule;
use crate::formats::mt940::fields::{self, Bad};
use crate::formats::mt940::{
    ENTRIES_PER_STATEMENT_MAX, NARRATIVE_LINE_CHARS, decode, decode_cow, remittance_text_into,
};
use crate::formats::statement::{
    Balance, BalanceKind, Entry, EntryStatus, collapse_whitespace, collapse_whitespace_into,
};
use crate::money::{Currency, CurrencyError, withdrawn_exponent};
use std::borrow::Cow;

/// The exponent of a currency a statement may be in: an active ISO 4217 code's, or a
/// withdrawn one's from the historic list (`true`: a dialect to tell).
pub(super) fn statement_exponent(code: &str) -> Result<(u32, bool), CurrencyError> {
    match Currency::parse(code) {
        Ok(c) => Ok((c.exponent(), false)),
        Err(e @ CurrencyError::NoMinorUnit) => Err(e),
        Err(e) => withdrawn_exponent(code).map(|x| (x, true)).ok_or(e),
    }
}

impl Reader<'_> {
    /// A fault (an error), or a bank dialect read (a warning in the rule's words).
    pub(super) fn bad(&mut self, f: &Field, line: usize, b: Bad) {
        let pos = f.pos(line, b.at);
        if b.code == FindingCode::BankDialect {
            self.warning(b.code, pos, b.expected, b.found);
        } else {
            self.error(b.code, pos, b.expected, b.found);
        }
    }

    fn bads(&mut self, f: &Field, bad: Vec<Bad>) {
        for b in bad {
            self.bad(f, 0, b);
        }
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
            "25" | "25P" => self.account(page, f, v),
            "28" | "28C" => self.statement_number(page, f, v),
            "34F" => {
                page.mt942_fields = true;
                let mut bad = Vec::new();
                let c = fields::parse_floor_limit(v, &mut bad);
                self.bads(f, bad);
                if let Some(c) = c
                    && page.currency.is_none()
                {
                    self.set_currency(page, f, c, 0);
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
        let mut bad = Vec::new();
        match fields::parse_statement_number(v, &mut bad) {
            Ok(n) => page.number = Some(n),
            Err(b) => bad.push(b),
        }
        self.bads(f, bad);
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
                let next_glued = f.lines.iter().skip(1).map(|l| l.glued).chain([false]);
                let lines = f.lines.iter().zip(next_glued).map(|(l, glued)| {
                    let t = f.text(l);
                    // A line the next is glued to counts as full: no blank between.
                    let width = l.column as usize - 1 + t.len();
                    (
                        t,
                        if glued {
                            width.max(NARRATIVE_LINE_CHARS)
                        } else {
                            width
                        },
                    )
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
        let mut bad = Vec::new();
        let c = fields::parse_control(v, &mut bad);
        self.bads(f, bad);
        let c = match c {
            Ok(c) => c,
            Err(b) => return self.bad(f, 0, b),
        };
        let amount_minor = fields::to_minor(
            &c.amount,
            statement_exponent(c.currency).map_or(2, |(e, _)| e),
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

    /// `:25:`/`:25P:`: the account; a currency written after it (`NL34RABO0142623393
    /// EUR`) is split off, so the account has one name whatever the format.
    fn account(&mut self, page: &mut Page, f: &Field, v: &[u8]) {
        let text = decode(v);
        let t = text.trim();
        if let Some((acct, ccy)) = crate::formats::statement::split_account_currency(t) {
            // `v` ends with the currency (the line's end is trimmed).
            let pos = f.pos(0, v.len() - 3);
            self.push(DialectRule::AccountCurrencySuffix.finding(pos, t));
            page.account = Some(acct.to_string());
            page.account_currency = Some(ccy.to_string());
            self.check_len(f, acct.as_bytes(), 35, "account identification (35x)");
            return;
        }
        page.account = Some(t.to_string());
        self.check_len(f, v, 35, "account identification (35x)");
    }

    /// The statement's currency from its first balance: its exponent, or a finding. A
    /// withdrawn currency (DEM) is read, told once here; one that differs from the
    /// currency `:25:` names leaves the amounts unread (which of the two is meant is not
    /// clear).
    pub(super) fn set_currency(&mut self, page: &mut Page, f: &Field, code: &str, at: usize) {
        page.currency = Some(code.to_string());
        if let Some(named) = page.account_currency.as_deref().filter(|c| *c != code) {
            let expected = format!("the currency :25: names after the account, {named}");
            page.currency_bad = true;
            let pos = f.pos(0, at);
            return self.error(FindingCode::CurrencyCode, pos, expected, code);
        }
        match statement_exponent(code) {
            Ok((e, withdrawn)) => {
                page.exponent = Some(e);
                if withdrawn {
                    let pos = f.pos(0, at);
                    self.push(DialectRule::WithdrawnCurrency.finding(pos, code));
                }
            }
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
            "an ISO 4217 currency code with minor units (active, or withdrawn and listed as historic)",
            found,
        );
    }

    /// The exponent of a balance's currency: the first opening's sets the statement's;
    /// another is checked (a withdrawn one told once per currency).
    fn balance_exponent(&mut self, page: &mut Page, f: &Field, currency: &str) -> Option<u32> {
        // The currency starts at offset 7 (mark and date before it).
        if page.currency.is_none() && matches!(f.tag, "60F" | "60M") {
            self.set_currency(page, f, currency, 7);
            return page.exponent;
        }
        match statement_exponent(currency) {
            Ok((e, withdrawn)) => {
                // Told once per currency: at the statement's, or here for another.
                if withdrawn && page.currency.as_deref() != Some(currency) {
                    let pos = f.pos(0, 7);
                    self.push(DialectRule::WithdrawnCurrency.finding(pos, currency));
                }
                Some(e)
            }
            Err(e) => {
                self.currency_error(f, 7, currency, e);
                None
            }
        }
    }

    pub(super) fn balance(&mut self, page: &mut Page, f: &Field, v: &[u8]) {
        let tag = f.tag;
        match tag {
            "60F" | "60M" => page.opening_tag = Some(tag),
            "62F" | "62M" => page.closing_tag = Some(tag),
            _ => {}
        }
        let filled: String;
        let (b, bad) = fields::parse_balance(v);
        for x in bad {
            self.bad(f, 0, x);
        }
        let Some(mut b) = b else {
            return;
        };
        if b.currency.is_empty() {
            // A balance without its currency (a bank dialect, told by the parser): the
            // statement's, which its opening gave; none known yet is one error.
            let Some(c) = page.currency.clone() else {
                self.push(Finding::error(
                    FindingCode::MissingTag,
                    f.pos(0, 7),
                    None,
                    "a currency (the balance's, or an opening balance's before it)",
                    "none",
                ));
                return;
            };
            filled = c;
            b.currency = &filled;
        }
        let exponent = self.balance_exponent(page, f, b.currency);
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
        let (amount_minor, currency) = self.entry_amount(page, f, &line.amount);
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

    /// An entry's amount in minor units and its currency. An amount not read (no currency
    /// to read it in, or a bad amount) is 0 with no currency, so no sum takes it for a
    /// real 0; the cause is told once: at the amount, at the field that failed to give the
    /// currency, or (no such field at all) at the page's first `:61:`.
    fn entry_amount(
        &mut self,
        page: &mut Page,
        f: &Field,
        amount: &fields::RawAmount<'_>,
    ) -> (u64, String) {
        let currency = page.currency.clone().unwrap_or_default();
        let read = match page.exponent {
            Some(e) => match fields::to_minor(amount, e, &currency) {
                Ok(a) => Some(a),
                Err(b) => {
                    self.bad(f, 0, b);
                    None
                }
            },
            None => None,
        };
        let giver_seen = page.opening_tag.is_some() || page.seen & tag_bit("34F") != 0;
        if page.currency.is_none() && !giver_seen && !page.currency_missing_told {
            page.currency_missing_told = true;
            let pos = f.pos(0, amount.at);
            self.error(
                FindingCode::MissingTag,
                pos,
                "an opening balance (:60F:/:60M:; MT942 :34F:) giving the currency before :61:",
                "none",
            );
        }
        match read {
            Some(a) => (a, currency),
            None => {
                page.amount_failed = true;
                (0, String::new())
            }
        }
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
