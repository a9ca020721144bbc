//! Which format a file is, from its first bytes, and so which reader it goes to.
//!
//! [`detect`] is pure: a byte prefix in, a [`Detected`] out — the crate's one dispatch,
//! which `check` and ingest both match on:
//! - [`Detected::Payment`]: a payment message ([`FileFormat`]: NACHA, ISO 20022
//!   pain.001/pacs.008/pacs.004), read by its reader and posted;
//! - [`Detected::Statement`]: a bank statement ([`StatementFormat`]: camt.052/053/054,
//!   BAI2, MT940/MT942), read by `formats::statement::read` and recorded;
//! - [`Detected::Refused`]: a kind of file no reader reads ([`Refusal`]: an archive, a
//!   PDF, text in UTF-16 (but XML with a byte-order mark) or UTF-32, another SWIFT FIN
//!   message, SWIFT MT fields that make no MT940/MT942 (`:NS:` only), JSON, CSV), refused
//!   with one finding saying what it is ([`Refusal::finding`]) and naming every format
//!   read ([`EXPECTED`]) instead of a flood of NACHA errors about its bytes.
//!
//! Anything else that begins with three digits (after a byte-order mark and blanks) is read as
//! NACHA, whose reader says what is wrong record by record: a NACHA file begins with a
//! record type, so one with odd first records (a batch header first, a stray line) still
//! gets the NACHA reader's findings. What begins with anything else is no format read
//! ([`Refusal::Unrecognised`]): one finding, not a flood of NACHA errors about its bytes;
//! `--format nacha` still reads it as NACHA. [`read_head`] gathers the prefix from any
//! reader and hands back a reader of the whole input.

use crate::findings::{FilePosition, Finding, FindingCode};
use crate::formats::ParseSummary;
use std::io::{self, Cursor, Read};

/// Bytes of the input [`detect`] looks at: enough for a byte-order mark, an XML
/// declaration, an ISO 20022 Business Application Header before the `Document` (whose
/// namespace names a camt statement), or a few lines of text before an MT940's `:20:`.
/// Past it, a camt statement is still refused, by the ISO 20022 reader
/// (`unsupported_message`).
pub const HEAD_BYTES: usize = 8 * 1024;

/// The payment message formats read (and posted to the ledger).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// A NACHA ACH file: fixed 94-byte records, a file header `101` first.
    Nacha,
    /// pain.001, pacs.008, pacs.004 (the ISO 20022 reader tells them apart, and refuses
    /// other messages by name).
    Iso20022,
}

impl FileFormat {
    /// The name journaled with a run.
    pub fn as_str(self) -> &'static str {
        match self {
            FileFormat::Nacha => "nacha",
            FileFormat::Iso20022 => "iso20022",
        }
    }
}

/// The bank statement formats read (and recorded in the statement tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatementFormat {
    /// ISO 20022 camt.052 (account report).
    Camt052,
    /// ISO 20022 camt.053 (bank-to-customer statement).
    Camt053,
    /// ISO 20022 camt.054 (debit/credit notification).
    Camt054,
    /// A BAI2 file: its file header record `01,` first.
    Bai2,
    /// SWIFT MT940: field tags (`:20:`, `:25:`, …) or a FIN header `{1:` of message type 940.
    Mt940,
    /// SWIFT MT942: as MT940, with the floor limit `:34F:` or the date/time `:13D:` of an
    /// interim report, or FIN message type 942.
    Mt942,
}

impl StatementFormat {
    /// Short name, journaled as the run's format.
    pub fn as_str(self) -> &'static str {
        use StatementFormat::*;
        match self {
            Camt052 => "camt.052",
            Camt053 => "camt.053",
            Camt054 => "camt.054",
            Bai2 => "bai2",
            Mt940 => "mt940",
            Mt942 => "mt942",
        }
    }

    /// What the file is, for a person.
    pub fn describe(self) -> &'static str {
        use StatementFormat::*;
        match self {
            Camt052 => "an ISO 20022 camt.052 account report",
            Camt053 => "an ISO 20022 camt.053 bank-to-customer statement",
            Camt054 => "an ISO 20022 camt.054 debit/credit notification",
            Bai2 => "a BAI2 balance and transaction report",
            Mt940 => "a SWIFT MT940 customer statement",
            Mt942 => "a SWIFT MT942 interim transaction report",
        }
    }

    /// What a payment reader's caller gives such a file: the summary of a file refused
    /// whole with one finding saying what it is.
    pub(crate) fn refused(self) -> ParseSummary {
        refused(self.as_str(), self.describe())
    }
}

/// A kind of file recognised, and not read by this build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// `1F 8B`.
    Gzip,
    /// `PK 03 04` (or the `PK 05 06` of an empty archive).
    Zip,
    /// `%PDF-`.
    Pdf,
    /// Byte-order mark `FF FE` before anything but XML, or XML in UTF-16 LE without one
    /// (`<\0?\0`). (XML in UTF-16 with its byte-order mark is read.)
    Utf16Le,
    /// Byte-order mark `FE FF`, or XML in UTF-16 BE without one (`\0<\0?`).
    Utf16Be,
    /// Byte-order mark `FF FE 00 00`.
    Utf32Le,
    /// Byte-order mark `00 00 FE FF`.
    Utf32Be,
    /// Another SWIFT FIN message (`{1:` of a message type other than 940 or 942).
    SwiftFin,
    /// Text that starts with a SWIFT-style field tag that is no field number (`:NS:`) and
    /// has no `:20:` and `:25:` lines: the fields of no MT940/MT942 statement.
    SwiftFields,
    /// A JSON document: `{` and a member name, or `[` and a value.
    Json,
    /// Comma-, semicolon- or tab-separated values: the first lines split into the same
    /// number of fields.
    Csv,
    /// Anything else that does not begin with three digits: a NACHA record begins with its
    /// type and digits (`101…`, or `5200…` where a file header is missing), so such a file
    /// is no format read, and a flood of NACHA errors about it would say nothing.
    Unrecognised,
}

/// What a rejected unsupported file was expected to be: every format read.
pub const EXPECTED: &str = "a NACHA file, an ISO 20022 pain.001, pacs.008, pacs.004, camt.052, \
     camt.053 or camt.054 message, a BAI2 file or a SWIFT MT940/MT942 statement";

impl Refusal {
    /// Short name, journaled as the run's format.
    pub fn as_str(self) -> &'static str {
        use Refusal::*;
        match self {
            Gzip => "gzip",
            Zip => "zip",
            Pdf => "pdf",
            Utf16Le => "utf-16le",
            Utf16Be => "utf-16be",
            Utf32Le => "utf-32le",
            Utf32Be => "utf-32be",
            SwiftFin => "swift-fin",
            SwiftFields => "swift-mt",
            Json => "json",
            Csv => "csv",
            Unrecognised => "unknown",
        }
    }

    /// What the file is, for a person: the finding's `found`.
    pub fn describe(self) -> &'static str {
        use Refusal::*;
        match self {
            Gzip => "a gzip archive",
            Zip => "a zip archive",
            Pdf => "a PDF document",
            Utf16Le => "text in UTF-16 LE (clearledger reads UTF-8)",
            Utf16Be => "text in UTF-16 BE (clearledger reads UTF-8)",
            Utf32Le => "text in UTF-32 LE (clearledger reads UTF-8)",
            Utf32Be => "text in UTF-32 BE (clearledger reads UTF-8)",
            SwiftFin => "a SWIFT FIN (MT) message",
            SwiftFields => "SWIFT MT fields (:NS:) without the :20: and :25: of an MT940/MT942",
            Json => "a JSON document",
            Csv => "CSV text (lines of separated values)",
            Unrecognised => {
                "a file of none of these kinds: it does not begin as a NACHA record does"
            }
        }
    }

    /// The one finding that rejects such a file: at its first byte.
    pub fn finding(self) -> Finding {
        refusal_finding(self.describe())
    }

    /// The summary of such a file: its name and its one finding, no records.
    pub(crate) fn refused(self) -> ParseSummary {
        refused(self.as_str(), self.describe())
    }
}

/// The one finding that rejects a file found to be `found`: at its first byte.
fn refusal_finding(found: &'static str) -> Finding {
    Finding::error(
        FindingCode::UnsupportedFormat,
        FilePosition {
            byte_offset: 0,
            line: 1,
        },
        None,
        EXPECTED,
        found,
    )
}

fn refused(format: &'static str, found: &'static str) -> ParseSummary {
    ParseSummary {
        format,
        records: 0,
        findings: vec![refusal_finding(found)],
    }
}

/// What a file given to the NACHA reader by `--format nacha` turns out to be, when its head
/// says plainly it is another kind (XML, a statement, JSON, CSV, an archive…): the summary
/// of a file refused with one finding saying so, where reading it as NACHA would give a
/// finding per line about what it never was. A head detection cannot place
/// ([`Refusal::Unrecognised`]) is read as NACHA, as asked: that is what forcing it is for.
pub(crate) fn not_nacha(head: &[u8]) -> Option<ParseSummary> {
    let (format, found) = match detect(head) {
        Detected::Payment(FileFormat::Nacha) | Detected::Refused(Refusal::Unrecognised) => {
            return None;
        }
        Detected::Payment(FileFormat::Iso20022) => ("iso20022", "an ISO 20022 XML message"),
        Detected::Statement(kind) => (kind.as_str(), kind.describe()),
        Detected::Refused(kind) => (kind.as_str(), kind.describe()),
    };
    let mut summary = refused(format, found);
    summary.findings[0].expected = "a NACHA file (--format nacha)".into();
    Some(summary)
}

/// What [`detect`] found: which reader the file goes to, or why none does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detected {
    /// A payment message: hand the file to its reader.
    Payment(FileFormat),
    /// A bank statement: hand the file to `formats::statement::read`.
    Statement(StatementFormat),
    /// A kind of file recognised but not read: reject it with [`Refusal::finding`].
    Refused(Refusal),
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
const ISO_NAMESPACE: &[u8] = b"urn:iso:std:iso:20022:tech:xsd:";

/// The format of a file starting with `head` (its first [`HEAD_BYTES`], or all of it).
/// XML (after an optional UTF-8 BOM and blanks, a `<`) is ISO 20022; a file of none of
/// the kinds [`StatementFormat`] and [`Refusal`] list is NACHA when it begins with three digits
/// (an empty one too: its reader says so), else refused as [`Refusal::Unrecognised`].
pub fn detect(head: &[u8]) -> Detected {
    if utf16_xml(head) {
        return Detected::Payment(FileFormat::Iso20022);
    }
    if let Some(kind) = binary_signature(head) {
        return Detected::Refused(kind);
    }
    let text = head.strip_prefix(UTF8_BOM).unwrap_or(head);
    let start = text.trim_ascii_start();
    if start.starts_with(b"<") {
        return match camt_statement(start) {
            Some(kind) => Detected::Statement(kind),
            None => Detected::Payment(FileFormat::Iso20022),
        };
    }
    if start.starts_with(b"01,") || bai2_record(start) {
        return Detected::Statement(StatementFormat::Bai2);
    }
    if let Some(found) = swift_mt(text) {
        return found;
    }
    if json(start) {
        return Detected::Refused(Refusal::Json);
    }
    if csv(start) {
        return Detected::Refused(Refusal::Csv);
    }
    // Empty (the NACHA reader says so), or a record opening as NACHA's do: its type and
    // then digits (`101` a file header's priority code, `5200` a batch header's class).
    let nacha_record = start.len() >= 3 && start[..3].iter().all(u8::is_ascii_digit);
    if start.is_empty() || nacha_record {
        Detected::Payment(FileFormat::Nacha)
    } else {
        Detected::Refused(Refusal::Unrecognised)
    }
}

/// A first line shaped like a BAI2 record of another code (`00,0004,…,2/`: two digits, a
/// comma, a `/` at its end): the BAI2 reader says what is wrong with it, where a CSV
/// refusal or NACHA's findings would not. No NACHA record has a comma after two digits.
fn bai2_record(start: &[u8]) -> bool {
    let line = start.split(|&b| b == b'\n').next().unwrap_or(start);
    matches!(start, [a, b, b',', ..] if a.is_ascii_digit() && b.is_ascii_digit())
        && line.trim_ascii_end().ends_with(b"/")
}

/// `{` then a member name (`"`) or `}`, or `[` then a value or `]`, blanks between.
fn json(start: &[u8]) -> bool {
    let next = |rest: &[u8]| rest.trim_ascii_start().first().copied();
    match start.split_first() {
        Some((b'{', rest)) => matches!(next(rest), Some(b'"' | b'}')),
        Some((b'[', rest)) => matches!(
            next(rest),
            Some(b'{' | b'[' | b'"' | b']' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n')
        ),
        _ => false,
    }
}

/// Lines of separated values: the first line holds a `,`, `;` or tab outside double
/// quotes, and each of the first lines (up to five, the head's last, perhaps cut, aside)
/// holds as many. A NACHA record is never taken for one: a 94-byte line, or a first line
/// that opens like a file header (`101`) or a batch header (`5200`, `5220`, `5225`,
/// `5280`), is NACHA whatever it holds.
fn csv(start: &[u8]) -> bool {
    let mut lines = start
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let Some(first) = lines.next() else {
        return false;
    };
    let nacha = |l: &[u8]| {
        l.len() == 94
            || [&b"101"[..], b"5200", b"5220", b"5225", b"5280"]
                .iter()
                .any(|p| l.starts_with(p))
    };
    if nacha(first) {
        return false;
    }
    let Some((sep, n)) = [b',', b';', b'\t']
        .into_iter()
        .map(|sep| (sep, separated(first, sep)))
        .max_by_key(|&(_, n)| n)
        .filter(|&(_, n)| n > 0)
    else {
        return false;
    };
    // The lines after the first that end in the head (the last may be cut short).
    let complete = start.iter().filter(|&&b| b == b'\n').count();
    lines
        .take(complete.saturating_sub(1).min(4))
        .filter(|l| !l.is_empty())
        .all(|l| !nacha(l) && separated(l, sep) == n)
}

/// How many `sep` a line holds outside double quotes.
fn separated(line: &[u8], sep: u8) -> usize {
    let mut quoted = false;
    let mut n = 0;
    for &b in line {
        if b == b'"' {
            quoted = !quoted;
        } else if b == sep && !quoted {
            n += 1;
        }
    }
    n
}

/// XML in UTF-16 with its byte-order mark: `FF FE` or `FE FF`, blanks, then `<`. The ISO
/// 20022 reader decodes it (a camt statement in it is refused there, by its namespace).
fn utf16_xml(head: &[u8]) -> bool {
    let (le, units) = if let Some(rest) = head.strip_prefix(b"\xFF\xFE") {
        if rest.starts_with(b"\x00\x00") {
            return false; // UTF-32 LE
        }
        (true, rest)
    } else if let Some(rest) = head.strip_prefix(b"\xFE\xFF") {
        (false, rest)
    } else {
        return false;
    };
    units
        .chunks_exact(2)
        .map(|p| {
            if le {
                u16::from_le_bytes([p[0], p[1]])
            } else {
                u16::from_be_bytes([p[0], p[1]])
            }
        })
        .find(|u| !matches!(u, 0x20 | 0x09 | 0x0A | 0x0D))
        == Some(u16::from(b'<'))
}

/// Magic numbers and byte-order marks.
fn binary_signature(head: &[u8]) -> Option<Refusal> {
    use Refusal::*;
    const SIGNATURES: &[(&[u8], Refusal)] = &[
        (b"\x1F\x8B", Gzip),
        (b"PK\x03\x04", Zip),
        (b"PK\x05\x06", Zip),
        (b"%PDF-", Pdf),
        // UTF-32 LE before UTF-16 LE: FF FE starts both.
        (b"\xFF\xFE\x00\x00", Utf32Le),
        (b"\x00\x00\xFE\xFF", Utf32Be),
        (b"\xFF\xFE", Utf16Le),
        (b"\xFE\xFF", Utf16Be),
        // `<?` of an XML declaration in UTF-16 without a byte-order mark.
        (b"<\x00?\x00", Utf16Le),
        (b"\x00<\x00?", Utf16Be),
    ];
    SIGNATURES
        .iter()
        .find(|(magic, _)| head.starts_with(magic))
        .map(|(_, kind)| *kind)
}

/// An XML document whose first ISO 20022 namespace, a Business Application Header's
/// (`head.001`) aside, is a camt.052/053/054 statement's.
fn camt_statement(xml: &[u8]) -> Option<StatementFormat> {
    for at in memchr::memmem::find_iter(xml, ISO_NAMESPACE) {
        let id = &xml[at + ISO_NAMESPACE.len()..];
        if id.starts_with(b"head.") {
            continue;
        }
        return match id.get(..8) {
            Some(b"camt.052") => Some(StatementFormat::Camt052),
            Some(b"camt.053") => Some(StatementFormat::Camt053),
            Some(b"camt.054") => Some(StatementFormat::Camt054),
            // A payment message, or something the ISO 20022 reader refuses by name.
            _ => None,
        };
    }
    // No namespace at all (some banks' exports): the message element names it.
    if memchr::memmem::find(xml, b"xmlns").is_none() {
        for (element, kind) in [
            (&b"<BkToCstmrAcctRpt"[..], StatementFormat::Camt052),
            (b"<BkToCstmrStmt", StatementFormat::Camt053),
            (b"<BkToCstmrDbtCdtNtfctn", StatementFormat::Camt054),
        ] {
            if memchr::memmem::find(xml, element).is_some() {
                return Some(kind);
            }
        }
    }
    None
}

/// A SWIFT MT message: a FIN basic header `{1:` first, or a field tag (`:20:`, `:28C:`,
/// `:940:`) at the start of the first line, or — after some lines of free text — the
/// lines `:20:` (transaction reference) and `:25:` (account) every MT940/942 has. Leading
/// blanks, CR/LF and a SOH byte (as some channels wrap FIN messages) are skipped. No line
/// of a NACHA file starts with `:`.
fn swift_mt(text: &[u8]) -> Option<Detected> {
    let start = text
        .iter()
        .position(|b| !(b.is_ascii_whitespace() || *b == 0x01))
        .map_or(&text[text.len()..], |i| &text[i..]);
    if let Some(block) = start.strip_prefix(b"{1:") {
        // Block 2, `{2:I940…}` (input) or `{2:O940…}` (output), names the message type.
        let mt = memchr::memmem::find(block, b"{2:").and_then(|i| {
            let b2 = &block[i + 3..];
            match b2.first() {
                Some(b'I' | b'O') => b2.get(1..4),
                _ => None,
            }
        });
        return Some(match mt {
            Some(b"940") => Detected::Statement(StatementFormat::Mt940),
            Some(b"942") => Detected::Statement(StatementFormat::Mt942),
            _ => Detected::Refused(Refusal::SwiftFin),
        });
    }
    let tagged = starts_with_field_tag(start)
        || (has_line_starting(text, b":20:") && has_line_starting(text, b":25:"));
    if !tagged {
        // `:NS:` and the like: a bank's own fields, which an MT940 may carry between its
        // own, but which alone make no statement.
        return starts_with_named_tag(start).then_some(Detected::Refused(Refusal::SwiftFields));
    }
    Some(Detected::Statement(
        if has_line_starting(text, b":34F:") || has_line_starting(text, b":13D:") {
            StatementFormat::Mt942
        } else {
            StatementFormat::Mt940
        },
    ))
}

/// `:NN:`, `:NNA:` or `:NNN:` (a SWIFT field tag).
fn starts_with_field_tag(s: &[u8]) -> bool {
    let Some(rest) = s.strip_prefix(b":") else {
        return false;
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if !(2..=3).contains(&digits) {
        return false;
    }
    let rest = &rest[digits..];
    let rest = match rest.first() {
        Some(b) if b.is_ascii_uppercase() => &rest[1..],
        _ => rest,
    };
    rest.first() == Some(&b':')
}

/// `:` two or three letters or digits, at least one a letter, and `:` (`:NS:`): a field tag
/// a bank made up, not a SWIFT field number.
fn starts_with_named_tag(s: &[u8]) -> bool {
    let Some(rest) = s.strip_prefix(b":") else {
        return false;
    };
    let n = rest
        .iter()
        .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        .count();
    (2..=3).contains(&n)
        && rest[..n].iter().any(u8::is_ascii_uppercase)
        && rest.get(n) == Some(&b':')
}

/// Whether a line of `text` (the first included) starts with `prefix`.
fn has_line_starting(text: &[u8], prefix: &[u8]) -> bool {
    text.starts_with(prefix)
        || memchr::memchr_iter(b'\n', text).any(|i| text[i + 1..].starts_with(prefix))
}

/// The whole input again: the head [`read_head`] took, then the rest of the source.
pub type WholeInput<R> = io::Chain<Cursor<Vec<u8>>, R>;

/// Reads up to [`HEAD_BYTES`] of `source` (fewer only at its end), and returns them with a
/// reader of the whole input, those bytes first. A pipe may hand over a few bytes a read:
/// the head is gathered until it is long enough to tell.
pub fn read_head<R: Read>(mut source: R) -> io::Result<(Vec<u8>, WholeInput<R>)> {
    let mut head = Vec::with_capacity(HEAD_BYTES);
    (&mut source)
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)?;
    let copy = head.clone();
    Ok((copy, Cursor::new(head).chain(source)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Refusal::*;
    use StatementFormat::*;

    const PACS: &str = "<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08\">";

    #[test]
    fn payments_and_refusals_from_their_first_bytes() {
        let nacha = Detected::Payment(FileFormat::Nacha);
        let iso = Detected::Payment(FileFormat::Iso20022);
        let no = Detected::Refused;
        let rows: &[(&[u8], Detected)] = &[
            // Read.
            (b"101 231380104 1210428822611290900A094101", nacha),
            (b"", nacha),
            (b"random words", no(Unrecognised)),
            (b"\x00\x01\x02", no(Unrecognised)),
            (PACS.as_bytes(), iso),
            (b"<?xml version=\"1.0\"?>\n<Document/>", iso),
            (b"\xEF\xBB\xBF<?xml version=\"1.0\"?>", iso),
            (b"\xEF\xBB\xBF\r\n  <Document>", iso),
            (b" \r\n\t<x/>", iso),
            (
                b"<AppHdr xmlns=\"urn:iso:std:iso:20022:tech:xsd:head.001.001.02\"/><Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:pain.001.001.09\">",
                iso,
            ),
            // A namespace the ISO 20022 reader refuses by name.
            (
                b"<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:pacs.002.001.10\">",
                iso,
            ),
            (
                b"<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.056.001.08\">",
                iso,
            ),
            // Archives and documents.
            (b"\x1F\x8B\x08\x00\x00\x00", no(Gzip)),
            (b"PK\x03\x04\x14\x00", no(Zip)),
            (b"PK\x05\x06\x00\x00", no(Zip)),
            (b"%PDF-1.7\n%\xE2\xE3", no(Pdf)),
            // Other encodings.
            // XML in UTF-16 with its byte-order mark is read; other UTF-16 text is not.
            (b"\xFF\xFE<\x00?\x00", iso),
            (b"\xFE\xFF\x00<\x00?", iso),
            (b"\xFF\xFE\n\x00 \x00<\x00", iso),
            (b"\xFF\xFEh\x00i\x00", no(Utf16Le)),
            (b"\xFE\xFF\x00h\x00i", no(Utf16Be)),
            (b"\xFF\xFE\x00\x00<\x00\x00\x00", no(Utf32Le)),
            (b"\x00\x00\xFE\xFF\x00\x00\x00<", no(Utf32Be)),
            (b"<\x00?\x00x\x00m\x00l\x00", no(Utf16Le)),
            (b"\x00<\x00?\x00x\x00m\x00l", no(Utf16Be)),
        ];
        for (head, want) in rows {
            assert_eq!(detect(head), *want, "{}", head.escape_ascii());
        }
    }

    #[test]
    fn statements_from_their_first_bytes() {
        let st = Detected::Statement;
        let no = Detected::Refused;
        let rows: &[(&[u8], Detected)] = &[
            // Statements.
            (b"01,0004,12345,060321,0829,001,80,1,2/\n02,", st(Bai2)),
            (b"\r\n01,GSBI,cont001,210706,1249,1,,,2/", st(Bai2)),
            (b":20:STARTUMS\n:25:12345678/1020304050\n", st(Mt940)),
            (b"\r\n:20:STARTUMSE\r\n:25:1/2\r\n", st(Mt940)),
            (b"  :20:X", st(Mt940)),
            (b"\x01\n:20:ST170119CYC/1\n:25:PL29", st(Mt940)),
            (b":940:\n:20:940S130101\n:25:NL71\n", st(Mt940)),
            (b":61:1811261126CR\n30,00N062NONREF\n:86:x", st(Mt940)),
            (
                b"This is an example\r\n\r\n----\r\n:20:3996-1\r\n:25:DABADKKK/1\r\n",
                st(Mt940),
            ),
            (
                b":20:CGNG\n:25:GJB\n:28C:03917/00001\n:34F:EURD0,00\n:13D:1610301730+0000\n",
                st(Mt942),
            ),
            (b"{1:F01BANKDEFFAXXX0000000000}{2:I940BANKDEFFXXXXN}{4:\r\n:20:X", st(Mt940)),
            (b"{1:F01BANKDEFFAXXX0000000000}{2:O9421200...}", st(Mt942)),
            (b"{1:F01BANKDEFFAXXX0000000000}{2:I103BANKDEFFXXXXN}", no(SwiftFin)),
            (b"{1:F01BANKDEFFAXXX0000000000}", no(SwiftFin)),
            (
                b"<?xml version=\"1.0\"?><Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.02\">",
                st(Camt053),
            ),
            (
                b"\xEF\xBB\xBF<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.052.001.08\">",
                st(Camt052),
            ),
            (
                b"<Envelope><AppHdr xmlns=\"urn:iso:std:iso:20022:tech:xsd:head.001.001.01\"/><Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.054.001.04\">",
                st(Camt054),
            ),
        ];
        for (head, want) in rows {
            assert_eq!(detect(head), *want, "{}", head.escape_ascii());
        }
    }

    #[test]
    fn not_fooled_by_what_merely_looks_alike() {
        // A NACHA line never starts with `:`; a colon inside one is just a character.
        let nacha = Detected::Payment(FileFormat::Nacha);
        assert_eq!(detect(b"101 :20: 1210428822611290900A094101"), nacha);
        assert_eq!(detect(b":2:"), Detected::Refused(Refusal::Unrecognised));
        assert_eq!(detect(b":2000:"), Detected::Refused(Refusal::Unrecognised));
        assert_eq!(detect(b"0"), Detected::Refused(Refusal::Unrecognised));
        assert_eq!(
            detect(b"1\n2\n3\n"),
            Detected::Refused(Refusal::Unrecognised)
        );
        assert_eq!(detect(b"101"), nacha);
        assert_eq!(detect(b"\x1F"), Detected::Refused(Refusal::Unrecognised));
        // Free text with a `:20:` line but no `:25:`: not enough to call it a statement.
        assert_eq!(
            detect(b"notes\n:20:x\n"),
            Detected::Refused(Refusal::Unrecognised)
        );
        // A camt namespace named only after a payment's is the payment's file.
        assert_eq!(
            detect(
                format!("{PACS}<x xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.02\"/>")
                    .as_bytes()
            ),
            Detected::Payment(FileFormat::Iso20022)
        );
    }

    #[test]
    fn the_finding_says_what_was_found_at_byte_0_line_1() {
        let f = Gzip.finding();
        assert_eq!(f.code, FindingCode::UnsupportedFormat);
        assert!(f.is_error());
        assert_eq!((f.position.byte_offset(), f.position.line()), (0, 1));
        assert_eq!((f.position.record_index(), f.position.path()), (None, None));
        assert_eq!(f.expected, EXPECTED);
        assert_eq!(f.found, "a gzip archive");
        assert_eq!(
            f.to_string(),
            "line 1, byte 0: error [unsupported_format]: expected a NACHA file, an ISO 20022 pain.001, pacs.008, pacs.004, camt.052, camt.053 or camt.054 message, a BAI2 file or a SWIFT MT940/MT942 statement, found \"a gzip archive\""
        );
        // Every format read is named, whatever was found.
        for kind in [Gzip, Zip, Json, Csv, SwiftFields] {
            let f = kind.finding();
            for name in [
                "NACHA", "pain.001", "pacs.008", "pacs.004", "camt.052", "camt.053", "camt.054",
                "BAI2", "MT940", "MT942",
            ] {
                assert!(f.expected.contains(name), "{kind:?}: {name}");
            }
        }
        assert_eq!(Zip.finding().found, "a zip archive");
    }

    #[test]
    fn json_csv_and_bank_fields_alone_are_refused_saying_what_they_are() {
        let nacha = Detected::Payment(FileFormat::Nacha);
        let no = Detected::Refused;
        let rows: &[(&[u8], Detected)] = &[
            (b"{\"statements\": []}", no(Json)),
            (b"\xEF\xBB\xBF\n  {\n  \"a\": 1\n}", no(Json)),
            (b"{}", no(Json)),
            (b"[{\"amount\": 12.5}]", no(Json)),
            (b"[\n  1, 2]", no(Json)),
            (b"{\"a\":1}\n{\"a\":2}\n", no(Json)),
            (
                b"date,amount,description\r\n2024-05-12,10.00,\"COFFEE, MILK\"\r\n2024-05-13,-3.50,RENT\r\n",
                no(Csv),
            ),
            (b"Datum;Betrag;Text\n12.05.2024;10,00;Miete\n", no(Csv)),
            (b"a\tb\tc\n1\t2\t3\n", no(Csv)),
            (b"account,amount", no(Csv)),
            // The head's last line may be cut short: not counted.
            (b"a,b,c\n1,2,3\n4,5", no(Csv)),
            (b":NS:22Test GmbH\n23Testkonto\n240,800\n", no(SwiftFields)),
            (b"\r\n:NS:01Verwendungszweck\n", no(SwiftFields)),
            // Not CSV: rows that do not split alike, or NACHA records holding a comma.
            (b"a,b,c\n1,2\n", no(Unrecognised)),
            // A BAI2-shaped record of an unknown code: the BAI2 reader says what it is.
            (b"00,0004,1/2/345,06/0321,0829,001,80,1,2/\n", Detected::Statement(Bai2)),
            (b"00,0004,1,2\n00,1,2,3\n", no(Csv)),
            (
                b"101 231380104 1210428822611290900A094101FEDERAL RESERVE BANK, N.A.\n5200Name, on Account\n",
                nacha,
            ),
            (b"5220Name on Account, Inc\n6271234,\n", nacha),
            (b"not json {\"a\": 1}", no(Unrecognised)),
            (b"{x", no(Unrecognised)),
            (b"[x", no(Unrecognised)),
            (b":N:x", no(Unrecognised)),
            (b":NSXX:x", no(Unrecognised)),
        ];
        for (head, want) in rows {
            assert_eq!(detect(head), *want, "{}", head.escape_ascii());
        }
        // `:NS:` fields in an MT940 (with its :20: and :25:) are the MT940's.
        assert_eq!(
            detect(b":NS:22Test\n:20:STARTUMS\n:25:1222333444\n"),
            Detected::Statement(Mt940)
        );
        assert_eq!(Json.as_str(), "json");
        assert_eq!(Csv.as_str(), "csv");
        assert_eq!(SwiftFields.as_str(), "swift-mt");
        assert_eq!(Json.finding().found, "a JSON document");
        assert_eq!(Csv.finding().found, "CSV text (lines of separated values)");
        assert_eq!(
            SwiftFields.finding().found,
            "SWIFT MT fields (:NS:) without the :20: and :25: of an MT940/MT942"
        );
    }

    #[test]
    fn every_nacha_file_of_the_corpus_is_still_nacha() {
        let dir = crate::test_support::corpus_dir().join("ach");
        let mut seen = 0;
        for sub in ["valid", "invalid", "lenient"] {
            for e in std::fs::read_dir(dir.join(sub)).unwrap() {
                let path = e.unwrap().path();
                let bytes = std::fs::read(&path).unwrap();
                let head = &bytes[..bytes.len().min(HEAD_BYTES)];
                assert_eq!(
                    detect(head),
                    Detected::Payment(FileFormat::Nacha),
                    "{}",
                    path.display()
                );
                seen += 1;
            }
        }
        assert_eq!(seen, 37);
    }

    /// Hands out one byte a read, as a slow pipe may.
    struct Trickle<'a>(&'a [u8]);
    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(out.len()).min(1);
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn the_head_is_gathered_whatever_the_read_sizes_and_nothing_is_lost() {
        let data: Vec<u8> = (0..HEAD_BYTES * 2 + 5).map(|i| (i % 251) as u8).collect();
        let (head, mut all) = read_head(Trickle(&data)).unwrap();
        assert_eq!(head, &data[..HEAD_BYTES]);
        let mut back = Vec::new();
        all.read_to_end(&mut back).unwrap();
        assert_eq!(back, data);
        let (head, mut all) = read_head(&b":20:X\n"[..]).unwrap();
        assert_eq!(head, b":20:X\n");
        let mut back = Vec::new();
        all.read_to_end(&mut back).unwrap();
        assert_eq!(back, b":20:X\n");
    }
}
