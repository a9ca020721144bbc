//! What every ISO 20022 reader (payments in [`super::iso20022`], statements in
//! [`super::camt`]) reads its XML with: the encoding and its decoding to UTF-8
//! ([`decode`]), the guard that counts positions and bounds the events ([`open`]), the
//! one reading of attributes and references ([`read_attributes`], [`resolve_reference`]),
//! the findings that stop a walk, and amounts as ISO 20022 writes them ([`amount`]).
//!
//! Each reader keeps its own walk (what it makes of the elements) and its own element path
//! (which elements always show an index); the positions it reports are this layer's: the
//! byte offset of the decoded UTF-8 and the file's line.

pub(crate) mod amount;
pub(crate) mod decode;
mod input;
mod markup;

pub(crate) use input::{Opened, Piece, Pieces, Unopened, open};
pub(crate) use markup::{
    REFERENCES, Resolved, attribute_error, local, read_attributes, resolve_reference,
};

use crate::findings::{Finding, FindingCode, XmlPosition};
use quick_xml::events::BytesRef;

/// Deepest element nesting accepted; ISO 20022 messages stay well under 20.
pub(crate) const DEPTH_MAX: usize = 64;
/// Largest single XML event (a start tag, a text node): 1 MiB. A text node of 10 MB or a
/// tag without end is refused before it fills memory.
pub(crate) const EVENT_BYTES_MAX: u64 = 1 << 20;

/// Where an element or an event sits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Pos {
    pub byte_offset: u64,
    pub line: u64,
}

impl Pos {
    /// The position of element `path` starting here.
    pub(crate) fn at(&self, path: impl Into<String>) -> XmlPosition {
        XmlPosition {
            byte_offset: self.byte_offset,
            line: self.line,
            path: path.into(),
        }
    }
}

/// The XML reader's error `err` on the element at `at`: a size limit when the guard saw an
/// event outgrow [`EVENT_BYTES_MAX`], else a syntax error.
pub(crate) fn malformed(
    at: Pos,
    path: String,
    over_limit: bool,
    err: &quick_xml::Error,
) -> Finding {
    let code = if over_limit {
        FindingCode::SizeLimit
    } else {
        FindingCode::XmlSyntax
    };
    Finding::error(
        code,
        at.at(path),
        None,
        "well-formed XML within the limits",
        err.to_string(),
    )
}

/// A start tag at `pos` nested deeper than [`DEPTH_MAX`].
pub(crate) fn too_deep(pos: Pos, path: String) -> Finding {
    Finding::error(
        FindingCode::DepthLimit,
        pos.at(path),
        None,
        format!("at most {DEPTH_MAX} nested elements"),
        "deeper nesting",
    )
}

/// A DOCTYPE at `pos`: refused, and with it every entity and external reference.
pub(crate) fn doctype(pos: Pos, path: String) -> Finding {
    Finding::error(
        FindingCode::DoctypeForbidden,
        pos.at(path),
        None,
        "no DOCTYPE (entities and external references are refused)",
        "<!DOCTYPE ...>",
    )
}

/// A reference at `pos` that [`resolve_reference`] does not resolve.
pub(crate) fn unresolved(pos: Pos, path: String, r: &BytesRef<'_>) -> Finding {
    Finding::error(
        FindingCode::XmlSyntax,
        pos.at(path),
        None,
        REFERENCES,
        format!("&{};", &**r),
    )
}

/// The input ending at `pos` inside element `name`, opened at `opened`: a file cut short.
pub(crate) fn cut_short(pos: Pos, path: String, name: &str, opened: Pos) -> Finding {
    Finding::error(
        FindingCode::XmlSyntax,
        pos.at(path),
        None,
        "a complete document: every element closed",
        format!(
            "the end of the input inside <{}> (opened at line {}, byte {}): the file is cut short",
            name, opened.line, opened.byte_offset
        ),
    )
}
