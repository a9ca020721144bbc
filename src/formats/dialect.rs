//! The bank dialects the statement readers accept: what real banks send that the standard
//! does not allow, where the meaning is still unambiguous. A reader that applies one of
//! these rules reads the value and tells it: one `bank_dialect` warning at the value's
//! position, its `expected` the rule's own words, its `found` what the file holds. Where
//! the meaning is not clear, the readers refuse, with one finding at the cause.
//!
//! This table is the one list of the rules; `docs/dialects.md` gives each with an example
//! and the banks seen sending it (a unit test keeps the two in step).

use crate::findings::{Finding, FindingCode, Position};

/// One rule of a bank dialect the readers accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DialectRule {
    /// MT940 `:61:` customer reference longer than 16 characters (an 18-character IBAN),
    /// up to the `//` of the bank reference or the end of the line.
    LongReference,
    /// MT940 `:61:` that ends after the transaction type: no customer reference at all.
    NoReference,
    /// MT940 `:61:` transaction type `S` followed by blanks instead of a SWIFT code.
    BlankTransactionType,
    /// MT940 `:28:`/`:28C:` statement number longer than 5 digits.
    LongStatementNumber,
    /// An amount longer than the 15 characters SWIFT allows (zero-padded layouts).
    LongAmount,
    /// An amount without the decimal comma (`C500NTRF`, `:34F:PLN0`).
    NoDecimalComma,
    /// 29 or 30 February (or 31 of a 30-day month) written by German 30/360 dating.
    ThirtyDayMonth,
    /// A currency ISO 4217 has withdrawn (DEM, FRF, …): its minor units from the historic list.
    WithdrawnCurrency,
    /// MT940 `:25:` account followed by its currency (`NL34RABO0142623393 EUR`).
    AccountCurrencySuffix,
    /// A line inside `:86:` that begins like a tag the message does not have there
    /// (`:12:11`, `:26:37` in a wrapped timestamp).
    WrappedTagLikeLine,
    /// MT940 balance without its currency (`:62F:C020315105000,00`): the statement's.
    NoBalanceCurrency,
    /// BAI2 `16` text holding `/`, blanks and a record code that cannot come there (`FEE/
    /// 16,50 EUR`): the text is the record's last field and runs to its end. (A `/` alone
    /// in a text is BAI2's own rule and no dialect; `/`, blanks and a `16` with its type
    /// code, an `88` or a `49` start a record joined on the line.)
    SlashInText,
    /// camt statement without `Stmt/Id` (`Rpt/Id`, `Ntfctn/Id`): `GrpHdr/MsgId`, `/` and the
    /// statement's number in the message (`MSG-7/2`) stand in.
    NoStatementId,
    /// camt entry without `Ntry/Sts`.
    NoEntryStatus,
    /// camt balance without `Bal/CdtDbtInd`.
    NoBalanceIndicator,
}

/// Every rule, in the order `docs/dialects.md` gives them.
pub const RULES: &[DialectRule] = &[
    DialectRule::LongReference,
    DialectRule::NoReference,
    DialectRule::BlankTransactionType,
    DialectRule::LongStatementNumber,
    DialectRule::LongAmount,
    DialectRule::NoDecimalComma,
    DialectRule::ThirtyDayMonth,
    DialectRule::WithdrawnCurrency,
    DialectRule::AccountCurrencySuffix,
    DialectRule::WrappedTagLikeLine,
    DialectRule::NoBalanceCurrency,
    DialectRule::SlashInText,
    DialectRule::NoStatementId,
    DialectRule::NoEntryStatus,
    DialectRule::NoBalanceIndicator,
];

impl DialectRule {
    /// The rule in the words a finding gives it (its `expected`).
    pub fn says(self) -> &'static str {
        use DialectRule::*;
        match self {
            LongReference => "reference longer than 16: read whole",
            NoReference => "no customer reference: read as NONREF",
            BlankTransactionType => "transaction type S with blanks: read as NMSC",
            LongStatementNumber => "statement number longer than 5 digits: read whole",
            LongAmount => "amount longer than 15 characters: leading zeros read away",
            NoDecimalComma => "no decimal comma: read as whole units",
            ThirtyDayMonth => "day beyond the month's end read as its last day (30/360)",
            WithdrawnCurrency => "withdrawn currency: minor units from ISO 4217's historic list",
            AccountCurrencySuffix => "currency after the account: account and currency split",
            WrappedTagLikeLine => "tag-like line inside :86:: read as its continuation",
            NoBalanceCurrency => "balance without currency: the statement's currency",
            SlashInText => "16 text holding '/' and a record code: text runs to the record's end",
            NoStatementId => {
                "no statement Id: the message's MsgId and the statement's number stand in"
            }
            NoEntryStatus => "no entry status: read as booked",
            NoBalanceIndicator => "no credit/debit indicator on a balance: read as credit",
        }
    }

    /// The warning that says this rule was applied to `found` at `position`.
    pub fn finding(self, position: impl Into<Position>, found: impl Into<String>) -> Finding {
        Finding::warning(FindingCode::BankDialect, position, None, self.says(), found)
    }
}

#[cfg(test)]
mod tests {
    use super::RULES;

    #[test]
    fn the_docs_list_every_rule_in_its_words() {
        let doc = include_str!("../../docs/dialects.md");
        let mut at = 0;
        for r in RULES {
            let says = r.says();
            let found = doc[at..].find(says);
            assert!(found.is_some(), "docs/dialects.md lacks, in order: {says}");
            at += found.unwrap() + says.len();
        }
    }
}
