//! A posting's stored fields (`postings.detail`): the record's normalised fields
//! in a compact binary form, from which the JSON object earlier releases stored is rebuilt
//! byte for byte ([`to_json`]).
//!
//! The JSON object (`{"account":"130545493676","addenda":"",…}`, ≈500 bytes for a NACHA
//! entry, ≈560 for a pacs.008 transaction) was half of a posting row and most of what a
//! first ingest writes. The compact form keeps the values and names each key by one byte:
//!
//! ```text
//! 0x01                                  the form's tag (a JSON object starts with `{`)
//! then, for each field, keys sorted and each key once (the JSON object's order):
//!   key    one byte: its index in KEYS plus one; or 0, a LEB128 length and the key's UTF-8
//!   value  a LEB128 length and the value's UTF-8
//! ```
//!
//! A NACHA entry's fields take ≈165 bytes so. Rows stored before this form (and a held
//! record posted from its journal copy) may hold the JSON text itself: [`to_json`] reads
//! both, so every report and conflict is the same whichever form a row has.
//!
//! `KEYS` only grows: a key's index is stored in every row that has it.

use std::fmt;

/// The form's first byte.
const TAG: u8 = 0x01;

/// The keys a posting's fields may have, by stored index (never reordered nor removed;
/// new keys go at the end). A key not listed is stored by name.
const KEYS: [&str; 44] = [
    // NACHA entries (keys::nacha_posting)
    "account",
    "addenda",
    "amount",
    "batch_number",
    "company_entry_description",
    "company_identification",
    "company_name",
    "discretionary_data",
    "effective_entry_date",
    "individual_identification",
    "individual_name",
    "odfi_identification",
    "rdfi_routing",
    "sec_code",
    "service_class_code",
    "trace_number",
    "transaction_code",
    // ISO 20022 transactions (keys::iso_posting)
    "creditor_account",
    "creditor_agent",
    "creditor_name",
    "currency",
    "date",
    "debtor_account",
    "debtor_agent",
    "debtor_name",
    "end_to_end_id",
    "instr_id",
    "instructed_agent",
    "instructing_agent",
    "message",
    "original_end_to_end_id",
    "original_tx_id",
    "original_uetr",
    "remittance",
    "return_reason",
    "tx_id",
    "uetr",
    "pmt_inf_id",
    // Corrections (ledger::reconcile)
    "bank_account",
    "corrects",
    "delta_minor",
    "ledger_account",
    "outcome",
    "suspense_account",
];

/// The fields as stored: keys sorted, a key given twice keeps its last value (what
/// serde_json writes for a `BTreeMap` built from them).
pub(super) fn sorted_unique<'a, S: AsRef<str>>(
    fields: &'a [(&'a str, S)],
) -> Vec<(&'a str, &'a str)> {
    let mut sorted: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_ref())).collect();
    // Stable: of equal keys the last given stays last, and is the one kept.
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    let mut out: Vec<(&str, &str)> = Vec::with_capacity(sorted.len());
    for (k, v) in sorted {
        match out.last_mut() {
            Some(last) if last.0 == k => last.1 = v,
            _ => out.push((k, v)),
        }
    }
    out
}

/// The compact form of `fields`.
pub fn encode<S: AsRef<str>>(fields: &[(&str, S)]) -> Vec<u8> {
    let fields = sorted_unique(fields);
    let mut out = Vec::with_capacity(1 + fields.iter().map(|(_, v)| v.len() + 3).sum::<usize>());
    out.push(TAG);
    for (k, v) in fields {
        match KEYS.iter().position(|known| *known == k) {
            Some(i) => out.push(i as u8 + 1),
            None => {
                out.push(0);
                put(&mut out, k.as_bytes());
            }
        }
        put(&mut out, v.as_bytes());
    }
    out
}

/// The compact form of a stored JSON object of strings (a held record's journal copy);
/// anything else is kept as it is (its text), which [`to_json`] gives back unchanged.
pub fn encode_json(json: &str) -> Vec<u8> {
    match serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(json) {
        Ok(m) if m.values().all(|v| v.is_string()) => {
            let fields: Vec<(&str, &str)> = m
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
                .collect();
            let compact = encode(&fields);
            // Only if it reads back as the same text (serde_json's own order and escapes).
            if to_json(&compact).as_deref() == Ok(json) {
                return compact;
            }
            json.as_bytes().to_vec()
        }
        _ => json.as_bytes().to_vec(),
    }
}

/// A stored detail that is neither form, or a compact one cut short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadDetail {
    /// Byte offset in the stored value where reading stopped.
    pub at: usize,
    /// What should have been there (a known key index, a length, UTF-8, a JSON object).
    pub expected: &'static str,
}

impl fmt::Display for BadDetail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "stored detail, byte {}: expected {}",
            self.at, self.expected
        )
    }
}

impl std::error::Error for BadDetail {}

/// The fields of a stored detail, in stored (key) order, borrowed from it. A JSON-form
/// detail has no fields to borrow: `Ok(None)`.
pub fn fields(stored: &[u8]) -> Result<Option<Vec<(&str, &str)>>, BadDetail> {
    let Some((&tag, mut rest)) = stored.split_first() else {
        return Err(BadDetail {
            at: 0,
            expected: "a detail (it is empty)",
        });
    };
    if tag == b'{' {
        return Ok(None);
    }
    if tag != TAG {
        return Err(BadDetail {
            at: 0,
            expected: "the compact form's tag 0x01 or a JSON object",
        });
    }
    let mut out = Vec::with_capacity(24);
    while let Some((&k, after)) = rest.split_first() {
        let at = stored.len() - rest.len();
        rest = after;
        let key = match k {
            0 => text(stored, &mut rest)?,
            i => *KEYS.get(i as usize - 1).ok_or(BadDetail {
                at,
                expected: "a known key index",
            })?,
        };
        let value = text(stored, &mut rest)?;
        out.push((key, value));
    }
    Ok(Some(out))
}

/// The JSON object the fields stand for, as `keys::detail_json` writes it: what earlier
/// releases stored, and what conflicts and reconciliation read.
pub fn to_json(stored: &[u8]) -> Result<String, BadDetail> {
    match fields(stored)? {
        None => String::from_utf8(stored.to_vec()).map_err(|e| BadDetail {
            at: e.utf8_error().valid_up_to(),
            expected: "UTF-8 JSON text",
        }),
        Some(fields) => Ok(super::json_of_sorted(&fields)),
    }
}

/// The value of `key` in a stored detail, in either form.
pub fn get(stored: &[u8], key: &str) -> Result<Option<String>, BadDetail> {
    match fields(stored)? {
        Some(fields) => Ok(fields
            .into_iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.to_string())),
        None => {
            let m: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(stored)
                .map_err(|_| BadDetail {
                    at: 0,
                    expected: "a JSON object",
                })?;
            Ok(m.get(key).and_then(|v| v.as_str()).map(str::to_string))
        }
    }
}

/// The bytes field `key` = `value` takes in a compact detail (and in no other field): what
/// a scan for one value looks for before reading the fields (`lookup --e2e`).
pub fn needle(key: &str, value: &str) -> Vec<u8> {
    let mut out = encode(&[(key, value)]);
    out.remove(0);
    out
}

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    let mut n = bytes.len();
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out.extend_from_slice(bytes);
}

/// A LEB128 length and that many bytes of UTF-8, from the front of `rest`.
fn text<'a>(stored: &[u8], rest: &mut &'a [u8]) -> Result<&'a str, BadDetail> {
    let at = stored.len() - rest.len();
    let mut n: usize = 0;
    let mut shift = 0;
    loop {
        let Some((&b, after)) = rest.split_first() else {
            return Err(BadDetail {
                at,
                expected: "a length",
            });
        };
        *rest = after;
        if shift > 28 {
            return Err(BadDetail {
                at,
                expected: "a length below 2^35",
            });
        }
        n |= ((b & 0x7f) as usize) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            break;
        }
    }
    let start = stored.len() - rest.len();
    if rest.len() < n {
        return Err(BadDetail {
            at: start,
            expected: "as many bytes as the length says",
        });
    }
    let (bytes, after) = rest.split_at(n);
    *rest = after;
    std::str::from_utf8(bytes).map_err(|e| BadDetail {
        at: start + e.valid_up_to(),
        expected: "UTF-8",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(pairs: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
        pairs.iter().map(|(k, v)| (*k, v.to_string())).collect()
    }

    #[test]
    fn the_compact_form_reads_back_as_the_json_earlier_releases_stored() {
        let cases = [
            f(&[("b", "2"), ("a", "1")]),
            f(&[("amount", "100"), ("amount", "200"), ("account", "")]),
            f(&[
                ("remittance", "quote \" back\\slash \u{1} é ✓"),
                ("zz_unknown", "x"),
            ]),
            f(&[("individual_name", &"N".repeat(300))]),
            f(&[]),
        ];
        for fields in cases {
            let compact = encode(&fields);
            assert_eq!(compact[0], TAG);
            assert_eq!(
                to_json(&compact).unwrap(),
                super::super::detail_json(&fields)
            );
        }
    }

    #[test]
    fn the_layout_is_fixed() {
        // Key "account" is index 1, "amount" 3; an unknown key by name; 300 = 0xAC 0x02.
        let long = "x".repeat(300);
        let compact = encode(&f(&[("amount", "42"), ("account", ""), ("q", &long)]));
        let mut want = vec![TAG, 1, 0, 3, 2, b'4', b'2', 0, 1, b'q', 0xAC, 0x02];
        want.extend_from_slice(long.as_bytes());
        assert_eq!(compact, want);
        assert_eq!(KEYS[0], "account");
        assert_eq!(KEYS[2], "amount");
        assert_eq!(KEYS[37], "pmt_inf_id");
    }

    #[test]
    fn json_text_reads_as_itself_and_a_held_copy_is_compacted() {
        let json = r#"{"a":"1","b":"x\"y"}"#;
        assert_eq!(to_json(json.as_bytes()).unwrap(), json);
        assert_eq!(get(json.as_bytes(), "b").unwrap().as_deref(), Some("x\"y"));
        let compact = encode_json(json);
        assert_eq!(compact[0], TAG);
        assert_eq!(to_json(&compact).unwrap(), json);
        assert_eq!(get(&compact, "b").unwrap().as_deref(), Some("x\"y"));
        assert_eq!(get(&compact, "c").unwrap(), None);
        // Not an object of strings, or not in serde_json's spelling: kept as text.
        for other in [r#"{"a":1}"#, r#"{"b":"1","a":"2"}"#, r#"{ "a":"1"}"#] {
            assert_eq!(encode_json(other), other.as_bytes());
            assert_eq!(to_json(&encode_json(other)).unwrap(), other);
        }
        // Not an object at all: kept, and refused when read (no posting has one).
        assert_eq!(encode_json("[]"), b"[]");
        assert_eq!(to_json(b"[]").unwrap_err().at, 0);
    }

    #[test]
    fn a_damaged_detail_is_an_error_with_its_offset() {
        let good = encode(&f(&[("amount", "42")]));
        assert_eq!(good, vec![TAG, 3, 2, b'4', b'2']);
        let cut = &good[..4];
        assert_eq!(
            to_json(cut),
            Err(BadDetail {
                at: 3,
                expected: "as many bytes as the length says"
            })
        );
        assert_eq!(
            to_json(&[TAG, 200, 0]),
            Err(BadDetail {
                at: 1,
                expected: "a known key index"
            })
        );
        assert_eq!(
            to_json(&[TAG, 3]),
            Err(BadDetail {
                at: 2,
                expected: "a length"
            })
        );
        assert_eq!(to_json(&[TAG, 3, 1, 0xff]).unwrap_err().expected, "UTF-8");
        assert_eq!(to_json(&[]).unwrap_err().at, 0);
        assert_eq!(to_json(b"x").unwrap_err().at, 0);
    }
}
