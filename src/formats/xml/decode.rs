//! The XML's character encoding: what its byte-order mark or declaration says, and a
//! decoder to UTF-8 for the XML reader.
//!
//! UTF-8 (and US-ASCII, its subset) is read as it is. ISO-8859-1, windows-1252 and
//! UTF-16 with a byte-order mark are decoded to UTF-8 before the XML reader, so its limits
//! (event size, depth) apply to the decoded text, and byte offsets in findings count the
//! decoded UTF-8 bytes (line numbers are the file's). Any other declared encoding is
//! refused, naming it: no guess at what its bytes mean. A byte-order mark wins over the
//! declaration (XML 1.0, appendix F): a UTF-8 or UTF-16 mark before a declaration of
//! another encoding is read as the mark says, once, with one warning naming both
//! ([`sniff`]).

use std::io::{self, BufRead};

/// Bytes of the file looked at for a byte-order mark and the XML declaration.
pub(crate) const HEAD_BYTES_MAX: usize = 1024;
/// Input bytes decoded per refill: bounds the decoded buffer (at most 3 bytes of UTF-8 per
/// input byte for ISO-8859-1, per 2 for UTF-16).
const DECODE_CHUNK_MAX: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    Utf8,
    Latin1,
    Windows1252,
    Utf16Le,
    Utf16Be,
}

/// The encodings read, for a finding's `expected`.
pub(crate) const READ: &str =
    "XML in UTF-8 (or US-ASCII), UTF-16 with a byte-order mark, ISO-8859-1 or windows-1252";

/// What the start of a document says of its encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sniffed {
    pub encoding: Encoding,
    /// A declared encoding the byte-order mark contradicts, with the mark's name
    /// (`("UTF-8", "ISO-8859-1")`): the mark wins (XML 1.0, appendix F), read as the mark
    /// says, with a warning.
    pub contradicted: Option<(&'static str, String)>,
}

/// The encoding of a document starting with `head`: its byte-order mark, else its XML
/// declaration's `encoding`, else UTF-8. A byte-order mark wins over a declaration that
/// says otherwise (XML 1.0, appendix F: the declaration is read in the encoding the mark
/// gives): a UTF-8 mark with `encoding="ISO-8859-1"` is UTF-8, once, not latin-1 on top of
/// it; the contradiction is in [`Sniffed::contradicted`]. A UTF-8 mark agrees with
/// `UTF-8` (and `US-ASCII`, its subset), a UTF-16 mark with `UTF-16` and the `UTF-16LE`
/// or `UTF-16BE` of its byte order. `Err` carries the declared name not read (a document
/// without a byte-order mark).
pub(crate) fn sniff(head: &[u8]) -> Result<Sniffed, String> {
    let bom = if head.starts_with(b"\xFF\xFE") {
        Some((Encoding::Utf16Le, "UTF-16LE"))
    } else if head.starts_with(b"\xFE\xFF") {
        Some((Encoding::Utf16Be, "UTF-16BE"))
    } else if head.starts_with(b"\xEF\xBB\xBF") {
        Some((Encoding::Utf8, "UTF-8"))
    } else {
        None
    };
    let label = match bom {
        Some((Encoding::Utf16Le | Encoding::Utf16Be, _)) => declared(&utf16_ascii(head)),
        Some(_) => declared(&head[3..]),
        None => declared(head),
    };
    let Some((encoding, mark)) = bom else {
        let encoding = match label {
            None => Encoding::Utf8,
            Some(label) => by_label(&label).ok_or(label)?,
        };
        return Ok(Sniffed {
            encoding,
            contradicted: None,
        });
    };
    let agrees = |label: &str| {
        matches!(
            (encoding, label.to_ascii_lowercase().as_str()),
            (Encoding::Utf8, "utf-8" | "utf8" | "us-ascii" | "ascii")
                | (Encoding::Utf16Le, "utf-16" | "utf16" | "utf-16le")
                | (Encoding::Utf16Be, "utf-16" | "utf16" | "utf-16be")
        )
    };
    Ok(Sniffed {
        encoding,
        contradicted: label.filter(|l| !agrees(l)).map(|l| (mark, l)),
    })
}

/// The encoding an `encoding` label names, if one read.
fn by_label(label: &str) -> Option<Encoding> {
    match label.to_ascii_lowercase().as_str() {
        "utf-8" | "utf8" | "us-ascii" | "ascii" => Some(Encoding::Utf8),
        "iso-8859-1" | "iso8859-1" | "iso_8859-1" | "latin1" | "latin-1" | "l1" | "cp819"
        | "ibm819" | "iso-ir-100" => Some(Encoding::Latin1),
        "windows-1252" | "cp1252" => Some(Encoding::Windows1252),
        _ => None,
    }
}

/// The ASCII text of UTF-16 `head` (its byte order from its mark, which is dropped), each
/// other code unit as 0xFF: enough to read an XML declaration.
fn utf16_ascii(head: &[u8]) -> Vec<u8> {
    let le = head.starts_with(b"\xFF\xFE");
    head.get(2..)
        .unwrap_or_default()
        .chunks_exact(2)
        .map(|p| {
            let u = if le {
                u16::from_le_bytes([p[0], p[1]])
            } else {
                u16::from_be_bytes([p[0], p[1]])
            };
            u8::try_from(u).ok().filter(u8::is_ascii).unwrap_or(0xFF)
        })
        .collect()
}

/// The `encoding` pseudo-attribute of an XML declaration at the start of `text`.
fn declared(text: &[u8]) -> Option<String> {
    let decl = text.strip_prefix(b"<?xml")?;
    let end = memchr::memmem::find(decl, b"?>")?;
    let decl = &decl[..end];
    let at = memchr::memmem::find(decl, b"encoding")?;
    let rest = decl[at + b"encoding".len()..].trim_ascii_start();
    let rest = rest.strip_prefix(b"=")?.trim_ascii_start();
    let quote = *rest.first()?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let value = &rest[1..];
    let close = memchr::memchr(quote, value)?;
    Some(String::from_utf8_lossy(&value[..close]).into_owned())
}

/// windows-1252 bytes 0x80-0x9F (the five it leaves undefined map to the C1 controls, as
/// WHATWG decoders do).
const CP1252_HIGH: [char; 32] = [
    '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8D}', 'Ž', '\u{8F}',
    '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9D}', 'ž', 'Ÿ',
];

/// Decodes `inner` (in `encoding`, not UTF-8) to UTF-8.
pub(crate) struct Decoder<R> {
    inner: R,
    encoding: Encoding,
    out: Vec<u8>,
    at: usize,
    /// Bytes of a UTF-16 code unit or surrogate pair split across reads (at most 3).
    carry: Vec<u8>,
    /// Still to drop: a UTF-16 byte-order mark.
    at_start: bool,
    /// A character that could not be decoded, reported once the text before it is read:
    /// the reader may find an error there first, and a file's first error in file order is
    /// the one it reports, whatever the size of the reads.
    failed: Option<io::Error>,
}

impl<R: BufRead> Decoder<R> {
    pub(crate) fn new(inner: R, encoding: Encoding) -> Self {
        Decoder {
            inner,
            encoding,
            out: Vec::with_capacity(DECODE_CHUNK_MAX * 3),
            at: 0,
            carry: Vec::new(),
            at_start: true,
            failed: None,
        }
    }

    fn refill(&mut self) -> io::Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.out.clear();
        self.at = 0;
        while self.out.is_empty() {
            let buf = self.inner.fill_buf()?;
            if buf.is_empty() {
                if !self.carry.is_empty() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "UTF-16 text ending inside a character",
                    ));
                }
                return Ok(());
            }
            let n = buf.len().min(DECODE_CHUNK_MAX);
            let bytes = &buf[..n];
            match self.encoding {
                Encoding::Utf8 => self.out.extend_from_slice(bytes),
                Encoding::Latin1 => {
                    let mut tmp = [0u8; 4];
                    for &b in bytes {
                        self.out
                            .extend_from_slice(char::from(b).encode_utf8(&mut tmp).as_bytes());
                    }
                }
                Encoding::Windows1252 => {
                    let mut tmp = [0u8; 4];
                    for &b in bytes {
                        let c = match b {
                            0x80..=0x9F => CP1252_HIGH[usize::from(b - 0x80)],
                            _ => char::from(b),
                        };
                        self.out
                            .extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                    }
                }
                Encoding::Utf16Le | Encoding::Utf16Be => {
                    let le = self.encoding == Encoding::Utf16Le;
                    let decoded = decode_utf16(
                        &mut self.carry,
                        &mut self.at_start,
                        le,
                        bytes,
                        &mut self.out,
                    );
                    if let Err(e) = decoded {
                        self.inner.consume(n);
                        if self.out.is_empty() {
                            return Err(e);
                        }
                        self.failed = Some(e);
                        return Ok(());
                    }
                }
            }
            self.inner.consume(n);
        }
        Ok(())
    }
}

/// Decodes UTF-16 `bytes` (little-endian if `le`) to UTF-8 in `out`, after the `carry`
/// of the previous read; what ends inside a code unit or surrogate pair is carried to the
/// next. The byte-order mark is dropped once, at the start (`at_start`). An unpaired
/// surrogate is an error, with the text before it already in `out`.
fn decode_utf16(
    carry: &mut Vec<u8>,
    at_start: &mut bool,
    le: bool,
    bytes: &[u8],
    out: &mut Vec<u8>,
) -> io::Result<()> {
    carry.extend_from_slice(bytes);
    let mut units: Vec<u16> = carry
        .chunks_exact(2)
        .map(|p| {
            if le {
                u16::from_le_bytes([p[0], p[1]])
            } else {
                u16::from_be_bytes([p[0], p[1]])
            }
        })
        .collect();
    let mut keep = carry.len() % 2;
    // A high surrogate last: its pair is in the next read.
    if units.last().is_some_and(|u| (0xD800..0xDC00).contains(u)) {
        units.pop();
        keep += 2;
    }
    let mut start = 0;
    if *at_start && !units.is_empty() {
        *at_start = false;
        if units[0] == 0xFEFF {
            start = 1;
        }
    }
    let mut tmp = [0u8; 4];
    for c in char::decode_utf16(units[start..].iter().copied()) {
        let c = c.map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "an unpaired UTF-16 surrogate {:#06X}",
                    e.unpaired_surrogate()
                ),
            )
        })?;
        out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
    }
    let tail = carry.len() - keep;
    carry.drain(..tail);
    Ok(())
}

impl<R: BufRead> io::Read for Decoder<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        read_through(self, out)
    }
}

/// `Read::read` for a reader whose `BufRead` side does the work: copy what `fill_buf`
/// holds, then `consume` it.
pub(super) fn read_through(r: &mut impl BufRead, out: &mut [u8]) -> io::Result<usize> {
    let n = {
        let buf = r.fill_buf()?;
        let n = buf.len().min(out.len());
        out[..n].copy_from_slice(&buf[..n]);
        n
    };
    r.consume(n);
    Ok(n)
}

impl<R: BufRead> BufRead for Decoder<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at >= self.out.len() {
            self.refill()?;
        }
        Ok(&self.out[self.at..])
    }
    fn consume(&mut self, amt: usize) {
        self.at = (self.at + amt).min(self.out.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Read};

    fn decode(bytes: &[u8], enc: Encoding, chunk: usize) -> String {
        let mut s = String::new();
        Decoder::new(BufReader::with_capacity(chunk, bytes), enc)
            .read_to_string(&mut s)
            .unwrap();
        s
    }

    /// The encoding sniffed, without a contradiction.
    fn plain(encoding: Encoding) -> Result<Sniffed, String> {
        Ok(Sniffed {
            encoding,
            contradicted: None,
        })
    }

    fn utf16(bom_le: bool, text: &str) -> Vec<u8> {
        let mut v = if bom_le {
            vec![0xFF, 0xFE]
        } else {
            vec![0xFE, 0xFF]
        };
        for u in text.encode_utf16() {
            v.extend_from_slice(&if bom_le {
                u.to_le_bytes()
            } else {
                u.to_be_bytes()
            });
        }
        v
    }

    #[test]
    fn sniffs_the_byte_order_mark_then_the_declaration() {
        assert_eq!(sniff(b"\xFF\xFE<\0"), plain(Encoding::Utf16Le));
        assert_eq!(sniff(b"\xFE\xFF\0<"), plain(Encoding::Utf16Be));
        assert_eq!(sniff(b"<Document/>"), plain(Encoding::Utf8));
        assert_eq!(
            sniff(b"\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"UTF-8\"?>"),
            plain(Encoding::Utf8)
        );
        assert_eq!(
            sniff(b"<?xml version='1.0' encoding = 'iso-8859-1' ?><a/>"),
            plain(Encoding::Latin1)
        );
        assert_eq!(
            sniff(b"<?xml version=\"1.0\" encoding=\"windows-1252\"?>"),
            plain(Encoding::Windows1252)
        );
        assert_eq!(
            sniff(b"<?xml version=\"1.0\" encoding=\"IBM037\"?>"),
            Err("IBM037".to_string())
        );
        assert_eq!(sniff(b"<?xml version=\"1.0\"?>"), plain(Encoding::Utf8));
        let decl = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><a/>";
        assert_eq!(sniff(&utf16(true, decl)), plain(Encoding::Utf16Le));
        assert_eq!(sniff(&utf16(false, decl)), plain(Encoding::Utf16Be));
        let decl = decl.replace("UTF-16", "utf-16le");
        assert_eq!(sniff(&utf16(true, &decl)), plain(Encoding::Utf16Le));
    }

    #[test]
    fn a_byte_order_mark_wins_over_a_declaration_that_contradicts_it() {
        let contradicted = |encoding, mark, label: &str| {
            Ok(Sniffed {
                encoding,
                contradicted: Some((mark, label.to_string())),
            })
        };
        let decl = |label: &str| format!("<?xml version=\"1.0\" encoding=\"{label}\"?><a/>");
        let utf8 = |label: &str| [&b"\xEF\xBB\xBF"[..], decl(label).as_bytes()].concat();
        assert_eq!(
            sniff(&utf8("ISO-8859-1")),
            contradicted(Encoding::Utf8, "UTF-8", "ISO-8859-1")
        );
        assert_eq!(
            sniff(&utf8("windows-1252")),
            contradicted(Encoding::Utf8, "UTF-8", "windows-1252")
        );
        // An encoding not read otherwise: the mark says what it is.
        assert_eq!(
            sniff(&utf8("IBM037")),
            contradicted(Encoding::Utf8, "UTF-8", "IBM037")
        );
        assert_eq!(
            sniff(&utf8("UTF-16")),
            contradicted(Encoding::Utf8, "UTF-8", "UTF-16")
        );
        assert_eq!(sniff(&utf8("us-ascii")), plain(Encoding::Utf8));
        assert_eq!(
            sniff(&utf16(true, &decl("ISO-8859-1"))),
            contradicted(Encoding::Utf16Le, "UTF-16LE", "ISO-8859-1")
        );
        assert_eq!(
            sniff(&utf16(false, &decl("UTF-8"))),
            contradicted(Encoding::Utf16Be, "UTF-16BE", "UTF-8")
        );
        assert_eq!(
            sniff(&utf16(false, &decl("UTF-16LE"))),
            contradicted(Encoding::Utf16Be, "UTF-16BE", "UTF-16LE")
        );
    }

    #[test]
    fn decodes_whatever_the_read_sizes() {
        let text = "<a>Jürgen Größe € 😀</a>";
        let latin1: Vec<u8> = "<a>Jürgen Größe</a>".chars().map(|c| c as u8).collect();
        let mut le = vec![0xFF, 0xFE];
        let mut be = vec![0xFE, 0xFF];
        for u in text.encode_utf16() {
            le.extend_from_slice(&u.to_le_bytes());
            be.extend_from_slice(&u.to_be_bytes());
        }
        for chunk in [1, 2, 3, 5, 64] {
            assert_eq!(
                decode(&latin1, Encoding::Latin1, chunk),
                "<a>Jürgen Größe</a>"
            );
            assert_eq!(decode(&le, Encoding::Utf16Le, chunk), text, "{chunk}");
            assert_eq!(decode(&be, Encoding::Utf16Be, chunk), text, "{chunk}");
        }
        assert_eq!(decode(b"\x80\x9f\xe9", Encoding::Windows1252, 2), "€Ÿé");
        // A truncated pair and a lone surrogate are errors, not text.
        let mut r = Decoder::new(&b"\xFF\xFE<\0\x3D\xD8"[..], Encoding::Utf16Le);
        assert!(r.read_to_string(&mut String::new()).is_err());
        let mut r = Decoder::new(&b"\xFF\xFE\x00\xDC<\0"[..], Encoding::Utf16Le);
        assert!(r.read_to_string(&mut String::new()).is_err());
    }
}
