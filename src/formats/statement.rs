//! The bank's side, whatever the format: what the statement readers (camt.052/053/054,
//! BAI2, MT940/MT942) emit, and the checks every format shares. A reader turns its bytes
//! into [`Statement`]s (one per account and period: a camt `Stmt`/`Rpt`/`Ntfctn`, a BAI2
//! account group `03`…`49`, an MT940 message, its pages joined) and findings; keys and
//! storage are not its business (`crate::keys` keys a statement, the statements feature
//! stores it).
//!
//! Money is integer minor units of the currency's ISO 4217 exponent (`crate::money`),
//! never a float; an entry's amount is unsigned, its direction [`Entry::credit`].

use crate::findings::{Finding, FindingCode, Position};
use chrono::NaiveDate;
use serde::Serialize;

/// What kind of report of an account a statement is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StatementKind {
    /// End of day, booked (camt.053, MT940, BAI2 prior-day / as-of-date modifier `01`).
    Final,
    /// Intraday, provisional (camt.052, MT942, BAI2 same-day / modifiers `02`…): its entries
    /// are recorded as provisional, never booked, and a final statement absorbs them.
    Intraday,
    /// Debit/credit notifications (camt.054): entries, no balances.
    Notification,
}

impl StatementKind {
    /// The kind as stored and reported: `final`, `intraday`, `notification`.
    pub fn as_str(self) -> &'static str {
        match self {
            StatementKind::Final => "final",
            StatementKind::Intraday => "intraday",
            StatementKind::Notification => "notification",
        }
    }
}

/// A balance type, in the ISO 20022 vocabulary (`OPBD`, `CLBD`, …), which BAI2 and MT940
/// map onto.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BalanceKind {
    /// `OPBD` / `PRCD`, MT940 `:60F:`, BAI2 `010`.
    OpeningBooked,
    /// `CLBD`, MT940 `:62F:`, BAI2 `015`.
    ClosingBooked,
    /// An intermediate page's opening (MT940 `:60M:`).
    IntermediateOpening,
    /// An intermediate page's closing (MT940 `:62M:`).
    IntermediateClosing,
    /// `OPAV`, BAI2 `040`.
    OpeningAvailable,
    /// `CLAV`, MT940 `:64:`, BAI2 `045`.
    ClosingAvailable,
    /// `ITBD`, `ITAV`, `FWAV`, MT940 `:65:`, other BAI2 balance codes: shown, never checked.
    Other,
}

/// One balance of a statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Balance {
    /// Which balance it is (opening, closing, booked, available).
    pub kind: BalanceKind,
    /// The code as the file writes it (`CLBD`, `:62F:`, `015`).
    pub code: String,
    /// Signed: a debit balance is negative.
    pub amount_minor: i64,
    /// The balance's ISO 4217 currency code.
    pub currency: String,
    /// The day the balance is struck on; `None` when the file gives none.
    pub date: Option<NaiveDate>,
    /// Where the balance is in the file.
    pub position: Position,
}

/// Whether an entry is booked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryStatus {
    /// `BOOK`; every entry of a final MT940 or BAI2 prior-day report.
    Booked,
    /// `PDNG`, and every entry of an intraday statement: provisional.
    Pending,
    /// `INFO`: for information, never booked.
    Info,
}

/// One transaction detail of an entry (camt `TxDtls`: a batch booked as one entry).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Detail {
    /// The detail's amount in minor units (camt `TxDtls/Amt`), when given.
    pub amount_minor: Option<i64>,
    /// The detail's currency, when given.
    pub currency: Option<String>,
    /// The underlying payment's `EndToEndId` (`Refs/EndToEndId`).
    pub end_to_end_id: Option<String>,
    /// The underlying payment's `InstrId` (`Refs/InstrId`).
    pub instr_id: Option<String>,
    /// The underlying payment's UETR (`Refs/UETR`).
    pub uetr: Option<String>,
    /// The bank's reference of the detail (`Refs/AcctSvcrRef`).
    pub account_servicer_ref: Option<String>,
    /// The detail's remittance text (`RmtInf/Ustrd`), whitespace runs collapsed.
    pub remittance: Option<String>,
    /// The original references of a return (`RtrInf`, `OrgnlEndToEndId`, …).
    pub return_reason: Option<String>,
}

/// One line of a statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// 1-based number of the entry in its file (all statements counted): its report row.
    pub entry_no: u64,
    /// The amount in minor units of `currency`, unsigned: [`Entry::credit`] says which way.
    pub amount_minor: u64,
    /// The entry's ISO 4217 currency code.
    pub currency: String,
    /// Credit to the account (camt `CRDT`, MT940 `C`/`RD`, BAI2 type codes 100–399);
    /// else a debit.
    pub credit: bool,
    /// A reversal of an earlier entry (camt `RvslInd`, MT940 `RC`/`RD`).
    pub reversal: bool,
    /// Booked, pending or for information.
    pub status: EntryStatus,
    /// The day the bank booked the entry (camt `BookgDt`, MT940 `:61:` entry date, BAI2
    /// the group's as-of date).
    pub booking_date: Option<NaiveDate>,
    /// The day the funds are available or start bearing interest (camt `ValDt`, MT940
    /// `:61:` value date, BAI2 a funds type `V` date).
    pub value_date: Option<NaiveDate>,
    /// The account servicer's (bank's) reference: camt `AcctSvcrRef`, BAI2 bank
    /// reference, MT940 `:61:` reference after `//` — `None` when absent or `NONREF`.
    pub bank_ref: Option<String>,
    /// The customer's reference: MT940 `:61:` reference before `//` (`None` for
    /// `NONREF`), BAI2 customer reference, camt `NtryRef`.
    pub customer_ref: Option<String>,
    /// The payment's `EndToEndId`: camt `TxDtls/Refs/EndToEndId` when the entry has one
    /// detail; `None` for BAI2 and MT940.
    pub end_to_end_id: Option<String>,
    /// Bank transaction code: camt `BkTxCd` (`Domn/Cd/Fmly/Cd/SubFmlyCd` joined by `/`, or
    /// `Prtry/Cd`), BAI2 type code, MT940 `:61:` transaction type (`NTRF`).
    pub bank_tx_code: Option<String>,
    /// Remittance or narrative text (camt `RmtInf/Ustrd`, `AddtlNtryInf`; BAI2 16 text;
    /// MT940 `:86:`), whitespace runs collapsed.
    pub remittance: Option<String>,
    /// camt `NtryDtls/Btch/PmtInfId`, else `Btch/MsgId`: the payment-information or message
    /// id a batch booked as one entry belongs to (of the entry's first `Btch` that names
    /// one); `None` for BAI2 and MT940.
    pub batch_ref: Option<String>,
    /// The transaction details of a batch booked as one entry (camt `TxDtls`); empty else.
    pub details: Vec<Detail>,
    /// Where the entry is in the file.
    pub position: Position,
}

/// One statement of one account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Statement {
    /// `camt.053`, `camt.052`, `camt.054`, `bai2`, `mt940`, `mt942`.
    pub format: &'static str,
    /// Final (end of day), intraday, or a notification.
    pub kind: StatementKind,
    /// IBAN, else `Othr/Id`; BAI2 customer account number; MT940 `:25:` as written.
    pub account: String,
    /// The account's currency (camt `Acct/Ccy`, BAI2 03 currency or the group's, MT940
    /// the opening balance's), when the file says it.
    pub currency: Option<String>,
    /// Who services the account (camt `Svcr` BIC, BAI2 originator id, MT940 sender BIC from
    /// block 2), when known.
    pub servicer: Option<String>,
    /// The statement's own id: camt `Stmt/Id` (`Rpt`, `Ntfctn`), MT940 `:20:`, BAI2 file
    /// id (`01` field 4) and group.
    pub id: String,
    /// Sequence: camt `ElctrncSeqNb` else `LglSeqNb`, MT940 `:28C:` (statement/page), BAI2
    /// group as-of date and time.
    pub sequence: Option<String>,
    /// Statement date: camt `CreDtTm` (date part) or `FrToDt/ToDtTm`; MT940 closing
    /// balance date; BAI2 as-of date.
    pub date: Option<NaiveDate>,
    /// The period's first day (camt `FrToDt/FrDtTm`), when given.
    pub from_date: Option<NaiveDate>,
    /// The period's last day (camt `FrToDt/ToDtTm`), when given.
    pub to_date: Option<NaiveDate>,
    /// camt `CpyDplctInd` `COPY`/`DUPL`: a copy of a statement already sent.
    pub copy: bool,
    /// Its balances, in file order.
    pub balances: Vec<Balance>,
    /// Its entries, in file order.
    pub entries: Vec<Entry>,
    /// Where the statement starts in the file.
    pub position: Position,
    /// Where its balances do not add up, in the order found (empty: they do, or could
    /// not be checked). The statement is recorded with them for an operator.
    pub balance_breaks: Vec<BalanceBreak>,
}

/// A balance that does not add up: the statement is recorded marked, its difference the
/// operator's first task (`--strict-balances` refuses the file instead).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BalanceBreak {
    /// Which check failed.
    pub kind: BreakKind,
    /// What the balance should be, in minor units (negative: debit).
    pub expected_minor: i64,
    /// What the statement says, in minor units.
    pub found_minor: i64,
    /// The balance's currency.
    pub currency: String,
}

impl BalanceBreak {
    /// Found minus expected, in minor units.
    pub fn difference_minor(&self) -> i64 {
        self.found_minor.saturating_sub(self.expected_minor)
    }
}

/// Which balance check a [`BalanceBreak`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakKind {
    /// Opening + booked credits − booked debits ≠ closing (`balance_mismatch`).
    Closing,
    /// The opening ≠ the previous statement's (or page's) closing (`balance_chain`).
    Chain,
}

impl BreakKind {
    /// `closing` or `chain`, as stored and reported.
    pub fn as_str(self) -> &'static str {
        match self {
            BreakKind::Closing => "closing",
            BreakKind::Chain => "chain",
        }
    }
}

impl Statement {
    /// The first balance of that kind.
    pub fn balance(&self, kind: BalanceKind) -> Option<&Balance> {
        self.balances.iter().find(|b| b.kind == kind)
    }

    /// Booked credits minus booked debits, reversals included as booked.
    pub fn booked_net(&self) -> Option<i64> {
        let mut net: i64 = 0;
        for e in self
            .entries
            .iter()
            .filter(|e| e.status == EntryStatus::Booked)
        {
            let a = i64::try_from(e.amount_minor).ok()?;
            net = if e.credit {
                net.checked_add(a)?
            } else {
                net.checked_sub(a)?
            };
        }
        Some(net)
    }
}

/// The balance check every format shares: opening booked + booked credits − booked debits
/// = closing booked, when both balances exist in the entries' one currency (a statement
/// whose balances are in another currency than its entries is not checked: no rate is
/// invented). Returns the finding, at the closing balance, and records the break on the
/// statement.
pub fn check_balance(s: &mut Statement) -> Option<Finding> {
    let (f, b) = balance_break(s)?;
    s.balance_breaks.push(b);
    Some(f)
}

/// A chain break: `s`'s opening `found_minor` is not the previous closing `expected_minor`.
/// Records it on the statement and returns `finding`.
pub(crate) fn chain_break(
    s: &mut Statement,
    expected_minor: i64,
    found_minor: i64,
    currency: &str,
    finding: Finding,
) -> Finding {
    s.balance_breaks.push(BalanceBreak {
        kind: BreakKind::Chain,
        expected_minor,
        found_minor,
        currency: currency.to_string(),
    });
    finding
}

fn balance_break(s: &Statement) -> Option<(Finding, BalanceBreak)> {
    let open = s
        .balance(BalanceKind::OpeningBooked)
        .or_else(|| s.balance(BalanceKind::IntermediateOpening))?;
    let close = s
        .balance(BalanceKind::ClosingBooked)
        .or_else(|| s.balance(BalanceKind::IntermediateClosing))?;
    if open.currency != close.currency
        || s.entries
            .iter()
            .any(|e| e.status == EntryStatus::Booked && e.currency != open.currency)
    {
        return None;
    }
    let net = s.booked_net()?;
    let want = open.amount_minor.checked_add(net)?;
    (want != close.amount_minor).then(|| {
        let f = Finding::error(
            FindingCode::BalanceMismatch,
            close.position.clone(),
            None,
            format!(
                "{} {} (opening {} {} + booked credits - debits {})",
                close.code, want, open.code, open.amount_minor, net
            ),
            close.amount_minor.to_string(),
        );
        let b = BalanceBreak {
            kind: BreakKind::Closing,
            expected_minor: want,
            found_minor: close.amount_minor,
            currency: close.currency.clone(),
        };
        (f, b)
    })
}

/// An account written with its currency after it (`NL34RABO0142623393 EUR`, as some banks
/// write MT940 `:25:`): the account and the currency, so that one account has one name
/// whatever the format. `None` when `written` is not one word, a blank and a currency code
/// with known minor units (active, or withdrawn and on ISO 4217's historic list).
pub fn split_account_currency(written: &str) -> Option<(&str, &str)> {
    let (acct, ccy) = written.trim().rsplit_once(' ')?;
    let acct = acct.trim();
    (!acct.is_empty()
        && !acct.contains(char::is_whitespace)
        && ccy.len() == 3
        && ccy.bytes().all(|c| c.is_ascii_uppercase())
        && crate::money::minor_exponent(ccy).is_some())
    .then_some((acct, ccy))
}

/// The account a person names (`account map`, `reconcile --bank-account`, `statements
/// --account`), as statements store it: either spelling of an account written with its
/// currency finds it.
pub fn account_name(given: &str) -> &str {
    split_account_currency(given).map_or(given.trim(), |(a, _)| a)
}

/// Entries reserved for a statement at most, from the size of the one before.
const ENTRIES_HINT_MAX: usize = 1 << 16;

/// A statement's entries are complete: the next statement of the file reserves room for as
/// many (`hint`, bounded), so a file of like statements grows no vector entry by entry;
/// room reserved and not used (the next statement was smaller) is given back.
pub(crate) fn fit_entries(entries: &mut Vec<Entry>, hint: &mut usize) {
    if entries.capacity() > 2 * entries.len() + 16 {
        entries.shrink_to_fit();
    }
    *hint = entries.len().min(ENTRIES_HINT_MAX);
}

/// `s` with its whitespace runs collapsed to one blank and none at either end: the words
/// of [`str::split_whitespace`] joined by a space (remittance texts).
pub(crate) fn collapse_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    collapse_whitespace_into(&mut out, s);
    out
}

/// [`collapse_whitespace`] of `s` appended to `out` (empty, or ending where the words of
/// `s` are to start: nothing is put between).
pub(crate) fn collapse_whitespace_into(out: &mut String, s: &str) {
    let b = s.as_bytes();
    if s.is_ascii() {
        // Already words with one space between (most texts): copied as they are. The
        // checks are branch-free passes over slices (vectorised): a blank other than the
        // space (tab to carriage return, the vertical tab among them), two spaces in a
        // row, a space at either end.
        let is_ctrl = |c: u8| u8::from(c.wrapping_sub(9) < 5);
        // Over each byte and the next (one pass), then the last byte.
        let (ctrl, double) = b.get(1..).map_or((0, 0), |next| {
            b.iter().zip(next).fold((0u8, 0u8), |(c, d), (&x, &y)| {
                (
                    c | is_ctrl(x),
                    d | (u8::from(x == b' ') & u8::from(y == b' ')),
                )
            })
        });
        let ctrl = ctrl | b.last().map_or(0, |&c| is_ctrl(c));
        if ctrl == 0 && double == 0 && b.first() != Some(&b' ') && b.last() != Some(&b' ') {
            out.push_str(s);
            return;
        }
        // A vertical tab, which `char::is_whitespace` counts and `u8::is_ascii_whitespace`
        // does not, takes the general path below.
        if ctrl == 0 || memchr::memchr(0x0B, b).is_none() {
            let mut first = true;
            for w in s.split_ascii_whitespace() {
                if !first {
                    out.push(' ');
                }
                first = false;
                out.push_str(w);
            }
            return;
        }
    }
    let mut first = true;
    for w in s.split_whitespace() {
        if !first {
            out.push(' ');
        }
        first = false;
        out.push_str(w);
    }
}

/// What one pass of a statement reader gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatementRead {
    /// The format read: `camt.053`, `bai2`, `mt940`, …
    pub format: &'static str,
    /// Statements handed to the caller.
    pub statements: u64,
    /// Entries in them.
    pub entries: u64,
    /// Every finding, in file order; one error rejects the file.
    pub findings: Vec<Finding>,
}

pub use crate::formats::detect::StatementFormat;

/// How a statement file is judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// A balance that does not add up refuses the file (its `balance_mismatch` and
    /// `balance_chain` findings are errors). By default they are warnings and the
    /// statement is recorded with its [`BalanceBreak`]s, for an operator: its entries
    /// still reach reconciliation, and the difference is the first thing it shows.
    pub strict_balances: bool,
}

/// Reads the statements of a file of format `format` (as [`crate::formats::detect`] found
/// it), each handed to `on_statement` as it completes, and judges the balances as `opts`
/// says.
pub fn read(
    format: StatementFormat,
    input: &mut dyn std::io::BufRead,
    opts: ReadOptions,
    on_statement: &mut dyn FnMut(Statement),
) -> std::io::Result<StatementRead> {
    let mut r = read_strict(format, input, on_statement)?;
    if !opts.strict_balances {
        for f in &mut r.findings {
            if matches!(
                f.code,
                FindingCode::BalanceMismatch | FindingCode::BalanceChain
            ) {
                f.severity = crate::findings::Severity::Warning;
            }
        }
    }
    Ok(r)
}

/// What each format's reader found, balance breaks as errors.
fn read_strict(
    format: StatementFormat,
    input: &mut dyn std::io::BufRead,
    on_statement: &mut dyn FnMut(Statement),
) -> std::io::Result<StatementRead> {
    use StatementFormat::*;
    match format {
        Camt052 | Camt053 | Camt054 => crate::formats::camt::read(input, on_statement),
        Bai2 => crate::formats::bai2::read(input, on_statement),
        Mt940 | Mt942 => crate::formats::mt940::read(input, on_statement),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_written_with_its_currency_is_the_account() {
        assert_eq!(
            split_account_currency("NL34RABO0142623393 EUR"),
            Some(("NL34RABO0142623393", "EUR"))
        );
        assert_eq!(
            split_account_currency(" 45050050/76198810 DEM "),
            Some(("45050050/76198810", "DEM"))
        );
        // Not a currency, not one word, no currency at all: as written.
        assert_eq!(split_account_currency("NL34RABO0142623393 XYZ"), None);
        assert_eq!(split_account_currency("ACME CORP EUR"), None);
        assert_eq!(
            split_account_currency("UBRTHUHB/123456789150ABCDEF002/HUF"),
            None
        );
        assert_eq!(account_name("NL34RABO0142623393 EUR"), "NL34RABO0142623393");
        assert_eq!(account_name("NL34RABO0142623393"), "NL34RABO0142623393");
    }
    use crate::findings::FilePosition;

    fn pos() -> Position {
        FilePosition::default().into()
    }

    fn entry(amount: u64, credit: bool) -> Entry {
        Entry {
            entry_no: 1,
            amount_minor: amount,
            currency: "EUR".into(),
            credit,
            reversal: false,
            status: EntryStatus::Booked,
            booking_date: None,
            value_date: None,
            bank_ref: None,
            customer_ref: None,
            end_to_end_id: None,
            bank_tx_code: None,
            remittance: None,
            batch_ref: None,
            details: Vec::new(),
            position: pos(),
        }
    }

    fn balance(kind: BalanceKind, code: &str, amount: i64, ccy: &str) -> Balance {
        Balance {
            kind,
            code: code.into(),
            amount_minor: amount,
            currency: ccy.into(),
            date: None,
            position: pos(),
        }
    }

    fn statement(balances: Vec<Balance>, entries: Vec<Entry>) -> Statement {
        Statement {
            format: "camt.053",
            kind: StatementKind::Final,
            account: "NL26VAYB8060476890".into(),
            currency: Some("EUR".into()),
            servicer: None,
            id: "S1".into(),
            sequence: None,
            date: None,
            from_date: None,
            to_date: None,
            copy: false,
            balances,
            entries,
            position: pos(),
            balance_breaks: Vec::new(),
        }
    }

    #[test]
    fn opening_plus_net_must_equal_closing() {
        let mut ok = statement(
            vec![
                balance(BalanceKind::OpeningBooked, "OPBD", 1000, "EUR"),
                balance(BalanceKind::ClosingBooked, "CLBD", 1250, "EUR"),
            ],
            vec![entry(500, true), entry(250, false)],
        );
        assert_eq!(check_balance(&mut ok), None);
        assert!(ok.balance_breaks.is_empty());
        let mut off = statement(
            vec![
                balance(BalanceKind::OpeningBooked, "OPBD", 1000, "EUR"),
                balance(BalanceKind::ClosingBooked, "CLBD", 1255, "EUR"),
            ],
            vec![entry(500, true), entry(250, false)],
        );
        let f = check_balance(&mut off).unwrap();
        assert_eq!(
            off.balance_breaks,
            vec![BalanceBreak {
                kind: BreakKind::Closing,
                expected_minor: 1250,
                found_minor: 1255,
                currency: "EUR".into(),
            }]
        );
        assert_eq!(off.balance_breaks[0].difference_minor(), 5);
        assert_eq!(f.code, FindingCode::BalanceMismatch);
        assert_eq!(
            f.expected,
            "CLBD 1250 (opening OPBD 1000 + booked credits - debits 250)"
        );
        assert_eq!(f.found, "1255");
    }

    #[test]
    fn whitespace_collapses_as_split_whitespace_joins() {
        for s in [
            "",
            "   ",
            "a",
            "  a  b\t\tc \r\n d ",
            "x\u{0B}y\u{0C}z",
            "caf\u{E9}\u{A0}\u{A0}cr\u{E8}me\u{3000}!",
            "\u{FFFD} a",
            "one two three",
            "one  two",
            " lead",
            "trail ",
            "a\tb",
            "a\x0Cb\rc\nd",
        ] {
            let want = s.split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(collapse_whitespace(s), want, "{s:?}");
        }
    }

    #[test]
    fn whitespace_collapses_alike_for_every_short_mix() {
        // Every string of up to 4 of: a letter, the blanks of every kind (vertical tab and
        // no-break space included), a non-ASCII letter.
        let alphabet = [
            'a', ' ', '\t', '\n', '\u{0B}', '\u{0C}', '\r', '\u{A0}', '\u{E9}',
        ];
        let mut strings = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = strings
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            strings.extend(longer);
        }
        for s in &strings {
            let want = s.split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(collapse_whitespace(s), want, "{s:?}");
            let mut into = String::from("x");
            collapse_whitespace_into(&mut into, s);
            assert_eq!(into, format!("x{want}"), "{s:?}");
        }
    }

    #[test]
    fn balances_in_another_currency_are_not_checked() {
        let mut s = statement(
            vec![
                balance(BalanceKind::OpeningBooked, "OPBD", 1000, "EUR"),
                balance(BalanceKind::ClosingBooked, "CLBD", 9, "SEK"),
            ],
            vec![entry(500, true)],
        );
        assert_eq!(check_balance(&mut s), None);
    }
}
