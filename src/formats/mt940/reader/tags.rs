//! The tags an MT940/MT942 message holds: which are known, their labels, their order
//! and which may appear once.

/// Tags this reader knows (MT940 and MT942, and the old `:28:`), with their labels.
pub(super) const KNOWN_TAGS: &[(&str, &str)] = &[
    ("20", ":20:"),
    ("21", ":21:"),
    ("25", ":25:"),
    ("25P", ":25P:"),
    ("28", ":28:"),
    ("28C", ":28C:"),
    ("34F", ":34F:"),
    ("13D", ":13D:"),
    ("60F", ":60F:"),
    ("60M", ":60M:"),
    ("61", ":61:"),
    ("86", ":86:"),
    ("62F", ":62F:"),
    ("62M", ":62M:"),
    ("64", ":64:"),
    ("65", ":65:"),
    ("90D", ":90D:"),
    ("90C", ":90C:"),
];

/// The known tag `tag`, as a `'static` string, and its index in [`KNOWN_TAGS`].
pub(super) fn known_tag(tag: &str) -> Option<(usize, &'static str)> {
    known_tag_bytes(tag.as_bytes())
}

/// [`known_tag`] of the tag's bytes.
pub(super) fn known_tag_bytes(tag: &[u8]) -> Option<(usize, &'static str)> {
    let i = match tag {
        b"20" => 0,
        b"21" => 1,
        b"25" => 2,
        b"25P" => 3,
        b"28" => 4,
        b"28C" => 5,
        b"34F" => 6,
        b"13D" => 7,
        b"60F" => 8,
        b"60M" => 9,
        b"61" => 10,
        b"86" => 11,
        b"62F" => 12,
        b"62M" => 13,
        b"64" => 14,
        b"65" => 15,
        b"90D" => 16,
        b"90C" => 17,
        _ => return None,
    };
    KNOWN_TAGS.get(i).map(|(t, _)| (i, *t))
}

/// `:TAG:` of a known tag.
pub(super) fn label(tag: &str) -> &'static str {
    known_tag(tag)
        .and_then(|(i, _)| KNOWN_TAGS.get(i))
        .map_or("", |(_, l)| l)
}

/// The bit of a known tag in [`super::Page::seen`].
pub(super) fn tag_bit(tag: &str) -> u32 {
    known_tag(tag).map_or(0, |(i, _)| 1 << i)
}

/// Place of a tag in the message; a tag may not come after one of a higher rank.
pub(super) fn rank(tag: &str) -> Option<u8> {
    Some(match tag {
        "20" => 0,
        "21" => 1,
        "25" | "25P" => 2,
        "28" | "28C" => 3,
        "34F" => 4,
        "13D" => 5,
        "60F" | "60M" => 6,
        "61" => 7,
        "62F" | "62M" | "90D" | "90C" => 8,
        "64" => 9,
        "65" => 10,
        _ => return None,
    })
}

/// Tags a message holds at most once.
pub(super) fn once(tag: &str) -> bool {
    matches!(
        tag,
        "21" | "25"
            | "25P"
            | "28"
            | "28C"
            | "13D"
            | "60F"
            | "60M"
            | "62F"
            | "62M"
            | "64"
            | "90D"
            | "90C"
    )
}

/// A tag line `:TAG:`: the tag (2 to 4 digits or capitals) and where its value starts.
pub(super) fn tag_of(text: &[u8]) -> Option<(&[u8], usize)> {
    if text.first() != Some(&b':') {
        return None;
    }
    let close = text[1..].iter().position(|&c| c == b':')? + 1;
    let t = &text[1..close];
    if !(2..=4).contains(&t.len())
        || !t
            .iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
    {
        return None;
    }
    Some((t, close + 1))
}
