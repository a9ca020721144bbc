//! Attributes and references, read one way by every ISO 20022 walk: each attribute at
//! most once, references resolved to XML's own entities and the characters XML allows,
//! nothing else (no DOCTYPE, so no other entity can be declared).

use super::Pos;
use crate::findings::{Finding, FindingCode};
use quick_xml::escape::{resolve_xml_entity, unescape_with};
use quick_xml::events::BytesRef;

/// Reads the attributes of the start tag `e` (at `pos`, element `path`), handing each to
/// `add` as (local name, value): xmlns and xsi attributes skipped, references resolved.
/// Each at most once (XML 1.0, "Unique Att Spec"; two prefixes of one local name would read
/// as one leaf too): a second one is refused, never read over the first. The finding that
/// stops the walk, if any. The payment walk and the workers that read transactions for it
/// (`super::super::iso20022::cut`) share this one reading.
pub(crate) fn read_attributes(
    e: &quick_xml::events::BytesStart<'_>,
    pos: Pos,
    path: &dyn Fn() -> String,
    add: &mut dyn FnMut(&str, String),
) -> Option<Finding> {
    let mut seen: Vec<&str> = Vec::new();
    for attr in e.attributes() {
        let attr = match attr {
            Ok(a) => a,
            Err(err) => return Some(attribute_error(e, pos, &path(), &err)),
        };
        let qualified: &str = attr.key.into_inner();
        if qualified.starts_with("xmlns") || qualified.starts_with("xsi:") {
            continue;
        }
        let key = attr.key.local_name().into_inner();
        if let Some(first) = seen.iter().find(|q| local(q) == key) {
            return Some(Finding::error(
                FindingCode::DuplicateAttribute,
                pos.at(format!("{}@{key}", path())),
                None,
                format!("one {key} attribute"),
                format!("{qualified} after {first}"),
            ));
        }
        seen.push(qualified);
        // As written, references resolved (no whitespace normalization, as before
        // quick-xml 0.38); only XML's own entities, never an HTML table.
        let value = match unescape_with(&attr.value, resolve_xml_entity) {
            Ok(v) => v.into_owned(),
            Err(err) => {
                return Some(Finding::error(
                    FindingCode::XmlSyntax,
                    pos.at(format!("{}@{key}", path())),
                    None,
                    REFERENCES,
                    err.to_string(),
                ));
            }
        };
        add(key, value);
    }
    None
}

/// The local part of a qualified name (`ct:Ccy` → `Ccy`).
pub(crate) fn local(qualified: &str) -> &str {
    qualified.rsplit(':').next().unwrap_or(qualified)
}

/// A malformed attribute list of the start tag `tag` read at `pos`: a duplicate
/// (`duplicate_attribute`) at the second occurrence's byte, anything else (a value
/// without quotes, a key without `=`) an `xml_syntax` error at its byte.
pub(crate) fn attribute_error(
    tag: &quick_xml::events::BytesStart<'_>,
    pos: Pos,
    path: &str,
    err: &quick_xml::events::attributes::AttrError,
) -> Finding {
    use quick_xml::events::attributes::AttrError;
    let text: &str = tag;
    let at = match *err {
        AttrError::ExpectedEq(at)
        | AttrError::ExpectedValue(at)
        | AttrError::UnquotedValue(at)
        | AttrError::ExpectedQuote(at, _)
        | AttrError::Duplicated(at, _) => at.min(text.len()),
    };
    // The tag's text starts after its `<`.
    let before = &text.as_bytes()[..at];
    let here = Pos {
        byte_offset: pos.byte_offset + 1 + at as u64,
        line: pos.line + memchr::memchr_iter(b'\n', before).count() as u64,
    };
    match *err {
        AttrError::Duplicated(at, prev) => {
            let (again, first) = (written(text, at), written(text, prev));
            let key = again.split('=').next().unwrap_or("").trim();
            Finding::error(
                FindingCode::DuplicateAttribute,
                here.at(format!("{path}@{}", local(key))),
                None,
                format!("one {key} attribute"),
                format!("{again} after {first}"),
            )
        }
        _ => Finding::error(
            FindingCode::XmlSyntax,
            here.at(path.to_string()),
            None,
            "well-formed attributes (name=\"value\")",
            // quick-xml's message without its own offset (the finding has the byte).
            err.to_string()
                .split_once(": ")
                .map_or_else(|| err.to_string(), |(_, why)| why.to_string()),
        ),
    }
}

/// The attribute written from byte `from` of a tag's text, to its closing quote
/// (`Ccy="JPY"`).
fn written(text: &str, from: usize) -> &str {
    let rest = text.get(from..).unwrap_or("");
    let end = rest.find(['"', '\'']).and_then(|q| {
        let quote = rest[q..].chars().next()?;
        rest[q + 1..].find(quote).map(|e| q + 1 + e + 1)
    });
    &rest[..end.unwrap_or(rest.len())]
}

/// What a finding about a reference expects.
pub(crate) const REFERENCES: &str = "a character reference (&#65; or &#x41;) or one of XML's predefined entities \
     (&amp; &lt; &gt; &quot; &apos;): no other entity can be declared without a DOCTYPE";

/// The text a reference stands for.
pub(crate) enum Resolved {
    Char(char),
    Entity(&'static str),
}

/// A character reference (`&#65;`, `&#x41;`) to a character XML allows, or one of the five
/// entities XML predefines. Any other entity could only be declared in a DTD, and a DOCTYPE
/// is refused: `None`.
pub(crate) fn resolve_reference(r: &BytesRef<'_>) -> Option<Resolved> {
    if r.is_char_ref() {
        // XML 1.0 `Char`: tab, LF, CR, and from U+0020 on, less U+FFFE and U+FFFF (`char`
        // already excludes the surrogates).
        return match r.resolve_char_ref() {
            Ok(Some(c))
                if matches!(c, '\t' | '\n' | '\r')
                    || (c >= ' ' && !matches!(c, '\u{FFFE}' | '\u{FFFF}')) =>
            {
                Some(Resolved::Char(c))
            }
            _ => None,
        };
    }
    resolve_xml_entity(r).map(Resolved::Entity)
}
