//! A message's page complete: its required fields checked, joined to the statement it
//! continues (`:60M:` after `:62M:`), control totals and chains checked, the statement
//! emitted.

use super::tags::tag_bit;
use super::values::statement_exponent;
use super::{Page, Reader};
use crate::findings::{Finding, FindingCode, Position, TextPosition};
use crate::formats::mt940::{ENTRIES_PER_STATEMENT_MAX, fields};
use crate::formats::statement::{
    BalanceKind, EntryStatus, Statement, StatementKind, chain_break, check_balance, fit_entries,
};

impl Reader<'_> {
    /// A message ends: `-`, `-}`, the next `:20:`, a new envelope or the end of the file.
    pub(super) fn end_message(&mut self) {
        self.end_field();
        self.skipping = false;
        if let Some(page) = self.page.take() {
            self.finish_page(*page);
        }
    }

    pub(super) fn missing(&mut self, page: &Page, what: &str) {
        self.error(
            FindingCode::MissingTag,
            page.position.clone(),
            format!("{what} in message {}", page.id),
            "none",
        );
    }

    /// The fields every message of its format holds.
    fn check_required(&mut self, page: &Page, format: &str) {
        if page.account.is_none() {
            self.missing(page, ":25: (account identification)");
        }
        if page.sequence.is_none() {
            self.missing(page, ":28C: (statement number)");
        }
        if format == "mt942" {
            if page.seen & tag_bit("34F") == 0 {
                self.missing(page, ":34F: (floor limit)");
            }
            if page.seen & tag_bit("13D") == 0 {
                self.missing(page, ":13D: (date/time indication)");
            }
        } else {
            if page.opening_tag.is_none() {
                self.missing(page, ":60F: or :60M: (opening balance)");
            }
            if page.closing_tag.is_none() {
                self.missing(page, ":62F: or :62M: (closing balance)");
            }
        }
    }

    pub(super) fn finish_page(&mut self, mut page: Page) {
        let format = page.format();
        self.first_format.get_or_insert(format);
        self.check_required(&page, format);
        let status = if format == "mt942" {
            EntryStatus::Pending
        } else {
            EntryStatus::Booked
        };
        for e in &mut page.entries {
            e.status = status;
        }
        self.check_controls(&page);
        let (number, page_no) = page.number.unwrap_or((0, None));
        let continues = page.opening_tag == Some("60M");
        if let Some((mut st, p_number, p_page, p_at)) = self.pending.take() {
            let same = continues
                && st.format == format
                && Some(&st.account) == page.account.as_ref()
                && p_number == number;
            if same {
                self.join(&mut st, p_page, page_no, &mut page);
                return self.after_page(st, page.closing_tag, number, page_no);
            }
            self.warning(
                FindingCode::MissingTag,
                p_at,
                format!(
                    "the next page (:60M:) of statement {} of account {}",
                    p_number, st.account
                ),
                format!("message {} (statement {number})", page.id),
            );
            self.emit(st);
        } else if continues {
            self.warning(
                FindingCode::MissingTag,
                page.opening
                    .as_ref()
                    .map_or(page.position.clone(), |b| match &b.position {
                        Position::Text(t) => t.clone(),
                        _ => page.position.clone(),
                    }),
                "the previous page (ending :62M:) of this statement in the file",
                format!("message {} opens with :60M:", page.id),
            );
        }
        let closing_tag = page.closing_tag;
        let st = self.statement(page, format);
        self.after_page(st, closing_tag, number, page_no);
    }

    /// A page ending `:62M:` waits for the next; else the statement is complete.
    pub(super) fn after_page(
        &mut self,
        st: Statement,
        closing: Option<&str>,
        number: u32,
        page_no: Option<u32>,
    ) {
        if closing == Some("62M") {
            let at = match st
                .balance(BalanceKind::IntermediateClosing)
                .map(|b| &b.position)
            {
                Some(Position::Text(t)) => t.clone(),
                _ => match &st.position {
                    Position::Text(t) => t.clone(),
                    _ => TextPosition {
                        byte_offset: 0,
                        line: 1,
                        column: 1,
                        tag: None,
                    },
                },
            };
            self.pending = Some((st, number, page_no, at));
        } else {
            self.emit(st);
        }
    }

    /// The next page of `st`: its `:60M:` must continue the last `:62M:`.
    pub(super) fn join(
        &mut self,
        st: &mut Statement,
        prev_page: Option<u32>,
        page_no: Option<u32>,
        page: &mut Page,
    ) {
        let prev_close = st.balance(BalanceKind::IntermediateClosing).cloned();
        if let (Some(close), Some(open)) = (&prev_close, &page.opening)
            && (close.amount_minor != open.amount_minor || close.currency != open.currency)
        {
            let f = Finding::error(
                FindingCode::BalanceChain,
                open.position.clone(),
                None,
                format!(
                    ":60M: = the previous page's :62M: {} {}",
                    close.amount_minor, close.currency
                ),
                format!("{} {}", open.amount_minor, open.currency),
            );
            let f = chain_break(st, close.amount_minor, open.amount_minor, &open.currency, f);
            self.push(f);
        }
        if let (Some(p), Some(n)) = (prev_page, page_no)
            && n != p + 1
        {
            let at = page.number_at.clone().unwrap_or(page.position.clone());
            self.warning(
                FindingCode::SequenceGap,
                at,
                format!("page {}", p + 1),
                format!("page {n}"),
            );
        }
        // The joined statement keeps the first page's opening and the last page's
        // closing; the pages' :62M:/:60M: pair was checked above.
        st.balances
            .retain(|b| b.kind != BalanceKind::IntermediateClosing);
        if let Some(c) = page.closing.take() {
            st.balances.push(c);
        }
        st.balances.append(&mut page.others);
        st.date = st
            .balances
            .iter()
            .find(|b| {
                matches!(
                    b.kind,
                    BalanceKind::ClosingBooked | BalanceKind::IntermediateClosing
                )
            })
            .and_then(|b| b.date);
        let room = ENTRIES_PER_STATEMENT_MAX.saturating_sub(st.entries.len());
        if page.entries.len() > room {
            self.push(Finding::error(
                FindingCode::SizeLimit,
                page.position.clone(),
                None,
                format!("at most {ENTRIES_PER_STATEMENT_MAX} entries in a statement"),
                "more",
            ));
            page.entries.truncate(room);
        }
        st.entries.append(&mut page.entries);
    }

    pub(super) fn statement(&mut self, mut page: Page, format: &'static str) -> Statement {
        let mut balances = Vec::new();
        balances.extend(page.opening.take());
        balances.extend(page.closing.take());
        balances.append(&mut page.others);
        let date = balances
            .iter()
            .find(|b| {
                matches!(
                    b.kind,
                    BalanceKind::ClosingBooked | BalanceKind::IntermediateClosing
                )
            })
            .and_then(|b| b.date)
            .or(page.date_time);
        Statement {
            format,
            kind: if format == "mt942" {
                StatementKind::Intraday
            } else {
                StatementKind::Final
            },
            account: page.account.unwrap_or_default(),
            currency: page.currency,
            servicer: page.servicer,
            id: page.id,
            sequence: page.sequence,
            date,
            from_date: None,
            to_date: None,
            copy: false,
            balances,
            entries: page.entries,
            position: page.position.into(),
            balance_breaks: Vec::new(),
        }
    }

    /// MT942 `:90D:`/`:90C:`: number and sum of the debit/credit entries.
    pub(super) fn check_controls(&mut self, page: &Page) {
        for c in &page.controls {
            let (count, sum) = page.entries.iter().filter(|e| e.credit != c.debit).fold(
                (0u64, 0u64),
                |(n, s), e| {
                    (
                        n + 1,
                        if e.currency == c.currency {
                            s.saturating_add(e.amount_minor)
                        } else {
                            s
                        },
                    )
                },
            );
            let side = if c.debit { "debit" } else { "credit" };
            if u64::from(c.count) != count {
                self.push(Finding::error(
                    FindingCode::ControlCountMismatch,
                    c.position.clone(),
                    None,
                    format!("{count} ({side} entries counted)"),
                    c.count.to_string(),
                ));
            }
            if let Some(a) = c.amount_minor
                && a != sum
                && !page.currency_bad
                && !page.amount_failed
            {
                self.push(Finding::error(
                    FindingCode::ControlTotalMismatch,
                    c.position.clone(),
                    None,
                    format!(
                        "{sum} {} (sum of the {side} entries in minor units)",
                        c.currency
                    ),
                    a.to_string(),
                ));
            }
        }
    }

    /// A statement is complete: the balance check, the chain and the sequence per
    /// account, then the caller's.
    pub(super) fn emit(&mut self, mut st: Statement) {
        fit_entries(&mut st.entries, &mut self.entries_hint);
        // An entry whose amount was not read (reported where it failed) leaves no sum to
        // check: a mismatch would only repeat that finding.
        let amounts_known = st
            .currency
            .as_deref()
            .is_some_and(|c| statement_exponent(c).is_ok())
            && st.entries.iter().all(|e| !e.currency.is_empty());
        if amounts_known && let Some(f) = check_balance(&mut st) {
            self.push(f);
        }
        // Per account and currency: an account whose `:25:` named its currency (split off)
        // may hold statements in several, each its own chain.
        let key = format!(
            "{}\u{0}{}\u{0}{}",
            st.format,
            st.account,
            st.currency.as_deref().unwrap_or("")
        );
        let number = st
            .sequence
            .as_deref()
            .and_then(|s| fields::parse_statement_number(s.as_bytes(), &mut Vec::new()).ok())
            .map(|(n, _)| n);
        let state = self.accounts.entry(key).or_default();
        let mut findings = Vec::new();
        if let (Some(prev), Some(n)) = (state.number, number)
            && n > prev.saturating_add(1)
        {
            findings.push(Finding::warning(
                FindingCode::SequenceGap,
                st.position.clone(),
                None,
                format!("statement number {} of account {}", prev + 1, st.account),
                n.to_string(),
            ));
        }
        if number.is_some() {
            state.number = number;
        }
        if st.kind == StatementKind::Final && amounts_known {
            chain(state, &mut st, &mut findings);
        }
        for f in findings {
            self.push(f);
        }
        self.statements += 1;
        (self.on_statement)(st);
    }
}

/// The chain from the account's previous final statement: an opening that does not continue
/// its closing is a finding and a break recorded on the statement; this closing is kept for
/// the next.
fn chain(state: &mut super::AccountState, st: &mut Statement, findings: &mut Vec<Finding>) {
    let open = st
        .balance(BalanceKind::OpeningBooked)
        .or_else(|| st.balance(BalanceKind::IntermediateOpening));
    let mut broken = None;
    if let (Some((amount, ccy, id)), Some(open)) = (&state.closing, open)
        && (*amount != open.amount_minor || *ccy != open.currency)
    {
        let f = Finding::error(
            FindingCode::BalanceChain,
            open.position.clone(),
            None,
            format!(
                "{} = the closing balance {amount} {ccy} of the previous statement {id} of account {}",
                open.code, st.account
            ),
            format!("{} {}", open.amount_minor, open.currency),
        );
        broken = Some((f, *amount, open.amount_minor, open.currency.clone()));
    }
    let close = st
        .balance(BalanceKind::ClosingBooked)
        .or_else(|| st.balance(BalanceKind::IntermediateClosing));
    if let Some(c) = close {
        state.closing = Some((c.amount_minor, c.currency.clone(), st.id.clone()));
    }
    if let Some((f, expected, found, ccy)) = broken {
        findings.push(chain_break(st, expected, found, &ccy, f));
    }
}
