//! SWIFT MT940 (customer statement) and MT942 (interim transaction report): bytes in,
//! [`Statement`]s and findings out.
//!
//! # What is read
//!
//! - Messages with or without the FIN envelope (`{1:…}{2:…}{3:…}{4:` … `-}{5:…}`, SOH/ETX
//!   frames); block 2 gives the message type (940/942) and, with block 1, the sender BIC
//!   ([`Statement::servicer`]): an output message's MIR names the sender, an input
//!   message's sender is block 1's address. Without block 2 an MT942 is known by its
//!   fields (`:34F:`, `:13D:`, `:90D:`/`:90C:`).
//! - Free text before the first `:20:` and after a message (`This is an examplefile`,
//!   Rabobank's `:940:`) is skipped; a known tag there is a `RecordOrder` error.
//! - Messages ended by `-`, `-}` or by the next `:20:`; fields over several lines; `:86:`
//!   after a `:61:` is that entry's narrative, any other `:86:` is about the statement (not
//!   kept: the model has no place for it).
//! - Pages: a message closing `:62M:` waits for the next; one opening `:60M:` for the same
//!   `:25:` and statement number (`:28C:` before the `/`) is its next page, joined into
//!   the same [`Statement`]. The pages' `:20:` may differ: PostFinance gives every page its
//!   own (SWIFT's `:20:` names the message, not the statement), so it is not compared. The
//!   `:60M:` must equal the previous `:62M:` (`BalanceChain` error).
//!
//! # Mapping
//!
//! - `id` `:20:`, `account` `:25:` trimmed (a currency written after it, `NL34RABO0142623393
//!   EUR`, split off), `sequence` `:28C:` as written (the first
//!   page's), `currency` the opening balance's (MT942: the first `:34F:`'s), `date` the
//!   closing balance's (MT942: `:13D:`'s), kind `Final` (MT940, entries `Booked`) or
//!   `Intraday` (MT942, entries `Pending`).
//! - Balances: `:60F:` OpeningBooked, `:62F:` ClosingBooked, `:60M:` IntermediateOpening,
//!   `:62M:` IntermediateClosing, `:64:` ClosingAvailable, `:65:` Other; signed (D is
//!   negative). A joined statement keeps the first page's opening and the last page's
//!   closing, and every page's `:64:`/`:65:`.
//! - Entries (`:61:`): `C` credit, `D` debit; `RD` (reversal of a debit) is a credit and
//!   `RC` (reversal of a credit) a debit, both `reversal`. `DR`, `CK`, `CN` are a mark and a
//!   funds code (the third letter of the currency), not a reversal; the funds code is not
//!   kept. `value_date` YYMMDD (00-69 → 20xx), `booking_date` the entry date MMDD in the
//!   year that puts it nearest the value date (31 Dec booked for 2 Jan). `customer_ref` the
//!   reference before `//`, `bank_ref` the one after, both trimmed and `None` for
//!   `NONREF`; `bank_tx_code` the transaction type as written (`NTRF`, `S051`).
//!   `remittance`: the supplementary details (the `:61:`'s second line, `34x`, which the
//!   model has no field of its own for), then the `:86:` text: lines joined (after a
//!   physical line of 65 characters or more, the tag counted, without a blank: the bank
//!   cut the text there; else with one),
//!   whitespace runs collapsed.
//! - Amounts to minor units by the currency's ISO 4217 exponent (`crate::money`): extra
//!   non-zero decimals are `AmountFormat`; a withdrawn currency (DEM) has the exponent of
//!   ISO 4217's historic list; any other code that is not an active ISO 4217 code with
//!   minor units is a `CurrencyCode` error. An amount not read (that error, a bad amount)
//!   is 0 with an empty currency: the entry is kept and counted, no sum takes it, and no
//!   balance or control total is checked over it (its finding is the cause).
//!
//! # Bank dialects
//!
//! What real banks send against the standard, where the meaning is clear, is read with
//! one `bank_dialect` warning at the value ([`crate::formats::dialect`], which lists them):
//! references over 16 characters, a `:61:` ending after its transaction type, type `S`
//! with blanks, statement numbers over 5 digits, zero-padded amounts over 15 characters,
//! amounts without a decimal comma, 30 February (30/360 dating), withdrawn currencies, a
//! currency after the `:25:` account, and tag-like lines inside `:86:`. Inside `:86:` only
//! the tags that may follow it start a field (`:61:`, `:86:`, `:62F:`/`:62M:`, `:64:`,
//! `:65:`, `:90D:`/`:90C:`, and `:20:`, the next message); any other line that begins like
//! a tag (`:12:11`, `:26:37`: a timestamp wrapped there) continues the text, joined without
//! a blank.
//!
//! # Checks
//!
//! Grammar of every field with line and column (`TagSyntax`, `DateFormat` for 31 February,
//! `AmountFormat`, `CurrencyCode`), required tags (`MissingTag`), field order and repeats
//! (`RecordOrder`), unknown tags (`UnknownTag` warning, skipped with their lines), the
//! balance check ([`check_balance`], across pages), the page chain and the chain of
//! statements per account (`BalanceChain`), gaps in statement numbers per account and in
//! page numbers (`SequenceGap` warning), MT942 `:90D:`/`:90C:` against the debit/credit
//! entries (`ControlCountMismatch`, `ControlTotalMismatch`), an empty file (`EmptyFile`),
//! a file without a message (`NoStatements`).
//!
//! Decisions:
//! - A `:61:` with a bank reference but an empty customer reference (`NTRF//B`) is a
//!   `TagSyntax` error (one ending after the type is the `NoReference` dialect); the entry
//!   is still made from what was read, so the balance check sees it. A transaction type
//!   not starting N, F or S (`MCI0`) is an error: no rule says what it stands for.
//! - `:86:` over 6 lines of 65 characters, supplementary details over one line of 34: a
//!   `TagSyntax` warning, the text kept whole (banks write more; it is narrative).
//! - The old `:28:` is read as `:28C:`, with a `TagSyntax` warning.
//! - Bytes outside printable ASCII (the SWIFT X set is a subset): a `NonAsciiByte` warning
//!   per line at the first such byte; the text is read as UTF-8 when the line is valid
//!   UTF-8, else as Latin-1 (every byte one character: the code page is not known, the
//!   bytes survive). Structured subfields holding such bytes fail their grammar.
//!
//! [`check_balance`]: crate::formats::statement::check_balance

mod fields;
pub mod generate;
mod reader;

pub use generate::generate_mt940;

use crate::formats::statement::Statement;
use crate::formats::statement::collapse_whitespace_into;
use std::borrow::Cow;
use std::io::BufRead;

/// A line longer than this is cut (a `SizeLimit` error): SWIFT lines are at most 65
/// characters (`:86:`), banks' at most a few hundred; the reader holds one line.
pub(crate) const LINE_BYTES_MAX: usize = 2048;

/// Lines kept per field (`:86:` is 6 in SWIFT, banks write a few more): bounds a field
/// that never ends (a `SizeLimit` error, the rest skipped).
pub(crate) const FIELD_LINES_MAX: usize = 100;

/// Entries kept per statement (pages joined): the memory of one statement is bounded by
/// it (a `SizeLimit` error, the rest not kept).
pub(crate) const ENTRIES_PER_STATEMENT_MAX: usize = 200_000;

/// What one pass gave: the statement readers' one result.
pub(crate) use crate::formats::statement::StatementRead;

/// Reads an MT940/MT942 file; `on_statement` gets each statement as it completes (a
/// statement of several pages when its last page has been read).
pub(crate) fn read<R: BufRead>(
    input: R,
    on_statement: &mut dyn FnMut(Statement),
) -> std::io::Result<StatementRead> {
    reader::read(input, on_statement)
}

/// Text as written: UTF-8 when valid, else Latin-1 (one character per byte).
pub(crate) fn decode(b: &[u8]) -> String {
    decode_cow(b).into_owned()
}

/// [`decode`], borrowed when the bytes are UTF-8.
pub(crate) fn decode_cow(b: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(b.iter().map(|&c| char::from(c)).collect()),
    }
}

/// A full SWIFT narrative line: its text continues on the next line.
pub(crate) const NARRATIVE_LINE_CHARS: usize = 65;

/// `:86:` lines, each with the width of its physical line (the tag counted on the first):
/// joined without a blank after a line of 65 characters or more (the bank cut the text
/// there: `CONTRA ACCOUN` / `T HOLDER`), else with one; whitespace runs collapsed.
#[cfg(test)]
pub(crate) fn remittance_text(lines: &[(&[u8], usize)]) -> String {
    let (mut joined, mut text) = (String::new(), String::new());
    remittance_text_into(lines.iter().copied(), &mut joined, &mut text);
    text
}

/// [`remittance_text`] into `text`, through `joined` (both buffers reused by the caller).
pub(crate) fn remittance_text_into<'a>(
    lines: impl Iterator<Item = (&'a [u8], usize)>,
    joined: &mut String,
    text: &mut String,
) {
    joined.clear();
    let mut prev_width = None;
    for (l, width) in lines {
        if prev_width.is_some_and(|w| w < NARRATIVE_LINE_CHARS) {
            joined.push(' ');
        }
        match std::str::from_utf8(l) {
            Ok(s) => joined.push_str(s),
            Err(_) => joined.extend(l.iter().map(|&c| char::from(c))),
        }
        prev_width = Some(width);
    }
    text.clear();
    collapse_whitespace_into(text, joined);
}

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod tests;
