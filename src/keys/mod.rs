//! The shared vocabulary: file identity, posting records, keys, fingerprints, outcomes.
//!
//! Keys come from the intent, never from the content (docs/principles.md §3):
//! - a NACHA file is identified by the header fields the ACH network itself uses to
//!   detect duplicate files: immediate destination, immediate origin, file creation date,
//!   file creation time and file ID modifier → `file_id`
//!   `nacha:{destination}:{origin}:{YYMMDD}:{HHMM}:{modifier}` (fields trimmed; a routing
//!   number in any of its 10-character spellings written as its 9 digits: see
//!   [`nacha_party`]);
//! - an entry is identified by `(file_id, record_no)`, `record_no` being the entry's
//!   1-based ordinal among the file's entry detail records; its posting key is
//!   `{file_id}:{record_no}`, unique within `(tenant, operation)`;
//! - the fingerprint is the SHA-256 of the record's normalised fields: it tells a true
//!   repeat (same key, same fingerprint) from a conflict (same key, other content).
//!   It is never a key: two identical payments in one file are two intents.
//! - a NACHA file regenerated under a new identity (another modifier or creation time) is
//!   caught by [`resent_match`]: an entry equal to one another file of the same origin
//!   posted is held, not posted.

use crate::formats::nacha::FileHeaderInfo;
use chrono::NaiveDate;
use serde::Serialize;
use sha2::{Digest, Sha256};

pub mod detail;
mod iso;
mod nacha;
mod statement;

pub use iso::*;
pub use nacha::*;
pub use statement::*;

/// The operation under which NACHA entries are keyed.
pub const OPERATION_ACH_ENTRY: &str = "ach.entry";
/// A correction `clearledger reconcile --post-corrections` posted: a money
/// movement of its own kind, keyed by the reconciliation item it corrects.
pub const OPERATION_CORRECTION: &str = "correction";

/// A file's identity: format and natural file id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileIdentity {
    /// The reader's name: `nacha`, `iso20022`, or a statement format.
    pub format: &'static str,
    /// The file's natural identity, the key its run claims (`nacha:{destination}:…`,
    /// `iso:{kind}:{sender}:{MsgId}`).
    pub file_id: String,
    /// The party that assigned the file's identity (NACHA: the immediate origin,
    /// normalised; ISO 20022: the sender); empty when unknown.
    #[serde(skip)]
    pub origin: String,
    /// Other spellings of `file_id` under which a ledger written before the spelling was
    /// normalised may know this same file (NACHA: `0231380104` for `231380104`). The
    /// ledger claims the file under the first alias it already holds, so such a file is
    /// still found on re-upload (`ledger::protocol`).
    #[serde(skip)]
    pub aliases: Vec<String>,
}

impl FileIdentity {
    /// An identity as stored (read back from the ledger): no aliases.
    pub fn stored(format: &'static str, file_id: String) -> Self {
        let origin = nacha_origin_of(&file_id).unwrap_or_default();
        FileIdentity {
            format,
            file_id,
            origin,
            aliases: Vec::new(),
        }
    }

    /// A NACHA file's identity, from its file header (with the other spellings of its
    /// routing numbers as aliases).
    pub fn nacha(h: &FileHeaderInfo) -> Self {
        let origin = nacha_party(&h.immediate_origin);
        let mut spellings = nacha_file_ids(
            &h.immediate_destination,
            &h.immediate_origin,
            &[
                &h.file_creation_date,
                &h.file_creation_time,
                &h.file_id_modifier,
            ],
        );
        let file_id = spellings.remove(0);
        FileIdentity {
            format: "nacha",
            file_id,
            origin,
            aliases: spellings,
        }
    }
}

/// A record ready for the ledger: one posting, keyed and fingerprinted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostingRecord {
    /// The record's 1-based ordinal in its file (NACHA: among the entry detail records).
    pub record_no: u64,
    /// What kind of movement the key is unique under: `ach.entry`, `pacs.008`, `pacs.004`,
    /// `pain.001`.
    pub operation: &'static str,
    /// The key of the payment's intent, unique within (tenant, operation)
    /// (docs/principles.md §3, §4).
    pub posting_key: String,
    /// NACHA: the entry's trace number; ISO 20022: the first identifier provided of the
    /// UETR, the EndToEndId and their originals. `None` when there is none.
    pub trace_number: Option<String>,
    /// The ledger account debited (`odfi:…`, `rdfi:…`, `acct:…`, `agent:…`, `party:…`).
    pub debit_account: String,
    /// The ledger account credited, in the same notation.
    pub credit_account: String,
    /// The amount in minor units of `currency` (cents for USD).
    pub amount_minor: i64,
    /// The ISO 4217 currency code (`USD` for every NACHA entry).
    pub currency: String,
    /// NACHA: the effective entry date; ISO 20022: the interbank settlement date (pain.001:
    /// the requested execution date). `None` when the file gives none.
    pub effective_date: Option<NaiveDate>,
    /// Normalised fields, in a fixed order: what the fingerprint covers and what a
    /// conflict report compares.
    pub fields: Vec<(&'static str, String)>,
    /// Hex SHA-256 of `fields`.
    pub fingerprint: String,
    /// The same SHA-256 as its 32 bytes: what the posting row stores (migration 0013).
    pub digest: [u8; 32],
    /// `fields` in their stored, compact form ([`detail::encode`]; read back as a JSON
    /// object with sorted keys by [`detail::to_json`]): what is stored beside the posting.
    /// Built with the record (on the parser's thread), not by the writer. It may carry a
    /// key more than `fields` ([`DETAIL_ONLY_FIELDS`]: a pain.001's `pmt_inf_id`), which is
    /// neither fingerprinted nor compared.
    pub detail: Vec<u8>,
    /// The key and fingerprint this record had under the previous keying rule, where the
    /// rule changed for its kind (ISO 20022 keys by leg): a ledger holding
    /// postings made before the change finds them by this key, so a file ingested before
    /// an upgrade is still a duplicate after it (see `ledger::protocol`).
    pub legacy: Option<LegacyKey>,
}

/// A record's key and fingerprint under a previous keying rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyKey {
    /// The key under the earlier rule.
    pub posting_key: String,
    /// The hex SHA-256 fingerprint under the earlier rule.
    pub fingerprint: String,
    /// A posting found by the legacy key is this record only if its `file_id` starts so
    /// (pacs: `iso:{kind}:{sender}:`): the earlier rule had no leg, so a posting of the same
    /// UETR sent by another agent is another leg of the chain, not this record.
    pub file_prefix: Option<String>,
    /// The earlier rule could not tell apart what this rule does (an agent named by
    /// clearing member id or other id, which it left empty): a match is held, not called a
    /// duplicate.
    pub ambiguous: bool,
    /// The fields as the earlier rule read them: what a conflict with a posting of that
    /// rule compares.
    pub fields: Vec<(&'static str, String)>,
}

/// The normalised fields as a JSON object, keys sorted: what earlier releases stored
/// beside a posting (now [`detail::encode`], read back as this by [`detail::to_json`]) and
/// what a statement entry stores. Written as serde_json writes a `BTreeMap` of strings (a
/// key given twice: the last value), without building one.
pub fn detail_json<S: AsRef<str>>(fields: &[(&'static str, S)]) -> String {
    json_of_sorted(&detail::sorted_unique(fields))
}

/// A JSON object of these fields, in this order (sorted, each key once).
fn json_of_sorted(fields: &[(&str, &str)]) -> String {
    let mut out = Vec::with_capacity(
        16 + fields
            .iter()
            .map(|(k, v)| k.len() + v.len() + 6)
            .sum::<usize>(),
    );
    out.push(b'{');
    for (k, v) in fields {
        if out.len() > 1 {
            out.push(b',');
        }
        write_json_str(&mut out, k);
        out.push(b':');
        write_json_str(&mut out, v);
    }
    out.push(b'}');
    // Only whole UTF-8 strings and ASCII were written.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A JSON string as serde_json writes it (`"`, `\\` and control characters escaped).
fn write_json_str(out: &mut Vec<u8>, s: &str) {
    let mut w = serde_json::Serializer::new(out);
    let _ = serde::Serializer::serialize_str(&mut w, s);
}

/// SHA-256 over `name=value` pairs, each ended by a unit separator; the version tag
/// in front lets a future change of normalisation never collide with this one.
pub fn fingerprint<S: AsRef<str>>(tag: &str, fields: &[(&'static str, S)]) -> String {
    hex::encode(fingerprint_digest(tag, fields))
}

/// [`fingerprint`]'s 32 bytes, as a posting row stores them.
pub fn fingerprint_digest<S: AsRef<str>>(tag: &str, fields: &[(&'static str, S)]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(tag.as_bytes());
    h.update([0x1e]);
    for (k, v) in fields {
        let v = v.as_ref();
        h.update(k.as_bytes());
        h.update(b"=");
        h.update((v.len() as u64).to_le_bytes());
        h.update(v.as_bytes());
        h.update([0x1f]);
    }
    h.finalize().into()
}

/// A hex fingerprint ([`fingerprint`]) as the 32 bytes a posting row stores
/// (migrations/*/0013_compact_detail.sql); `None` for anything else.
pub fn fingerprint_bytes(hex: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    hex::decode_to_slice(hex, &mut out).ok().map(|()| out)
}

/// Keys a stored `detail` may carry beside the record's `fields`: kept for reconciliation,
/// never fingerprinted nor compared, so a posting stored with one and a record without it
/// (or the same file ingested before the key was kept) differ in nothing by it:
/// - `pmt_inf_id`: a pain.001 transaction's `PmtInf/PmtInfId` (a bank books a
///   batch as one entry naming it).
pub const DETAIL_ONLY_FIELDS: [&str; 1] = ["pmt_inf_id"];

/// The fields that differ between a stored posting's detail (JSON object) and a new
/// record, as `name: original != new`, in the record's field order
/// ([`DETAIL_ONLY_FIELDS`] left out).
pub fn differing_fields(original_detail: &str, new: &[(&'static str, String)]) -> Vec<String> {
    let original: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(original_detail).unwrap_or_default();
    let mut out = Vec::new();
    for (k, v) in new {
        let old = original.get(*k).and_then(|x| x.as_str()).unwrap_or("");
        if old != v {
            out.push(format!("{k}: {} != {}", one_line(old), one_line(v)));
        }
    }
    for k in original.keys() {
        if !new.iter().any(|(n, _)| n == k) && !DETAIL_ONLY_FIELDS.contains(&k.as_str()) {
            out.push(format!("{k}: present != absent"));
        }
    }
    out
}

fn one_line(s: &str) -> String {
    if s.is_empty() {
        "\"\"".to_string()
    } else {
        s.replace('\n', "\\n")
    }
}

/// What happened to one record. (`Default` only fills a report row's buffer before it
/// is read.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Posted by this run.
    #[default]
    Posted,
    /// Same key and fingerprint as an earlier posting: nothing new.
    Duplicate,
    /// Same key, different fingerprint: not posted, the differing fields reported.
    Conflict,
    /// A new key in a file whose identity was already ingested with other content:
    /// not posted, held for an operator (docs/principles.md §1).
    Held,
    /// A statement entry recorded by this run, booked.
    Recorded,
    /// A statement entry recorded by this run, provisional: pending, or of an intraday
    /// statement; never booked until a final statement confirms it.
    Provisional,
    /// A booked statement entry equal to a provisional one recorded before, which it
    /// books: counted once.
    Confirmed,
}

impl Outcome {
    /// The outcome as reports and the journal spell it (`posted`, `duplicate`, …).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Outcome::Posted => "posted",
            Outcome::Duplicate => "duplicate",
            Outcome::Conflict => "conflict",
            Outcome::Held => "held",
            Outcome::Recorded => "recorded",
            Outcome::Provisional => "provisional",
            Outcome::Confirmed => "confirmed",
        }
    }
    /// The outcome [`Outcome::as_str`] spells `s`; `None` for any other word.
    pub(crate) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "posted" => Outcome::Posted,
            "duplicate" => Outcome::Duplicate,
            "conflict" => Outcome::Conflict,
            "held" => Outcome::Held,
            "recorded" => Outcome::Recorded,
            "provisional" => Outcome::Provisional,
            "confirmed" => Outcome::Confirmed,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
        v.iter().map(|(k, v)| (*k, v.to_string())).collect()
    }

    #[test]
    fn detail_json_is_what_serde_json_writes_for_a_sorted_map() {
        let fields = f(&[
            ("zeta", "last"),
            ("amount", "1250"),
            ("text", "quote \" backslash \\ newline \n tab \t é \u{1}"),
            ("amount", "1251"),
            ("empty", ""),
        ]);
        let map: std::collections::BTreeMap<&str, &str> =
            fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(detail_json(&fields), serde_json::to_string(&map).unwrap());
        assert_eq!(
            detail_json(&f(&[("b", "2"), ("a", "1")])),
            r#"{"a":"1","b":"2"}"#
        );
        assert_eq!(detail_json::<String>(&[]), "{}");
    }

    #[test]
    fn fingerprint_is_stable_and_field_sensitive() {
        let a = f(&[("amount", "1250"), ("account", "123")]);
        let b = f(&[("amount", "1251"), ("account", "123")]);
        // Moving a character between two fields must change the fingerprint.
        let c = f(&[("amount", "125"), ("account", "0123")]);
        assert_eq!(fingerprint("t", &a), fingerprint("t", &a.clone()));
        assert_ne!(fingerprint("t", &a), fingerprint("t", &b));
        assert_ne!(fingerprint("t", &a), fingerprint("t", &c));
        assert_ne!(fingerprint("t", &a), fingerprint("u", &a));
        assert_eq!(fingerprint("t", &a).len(), 64);
    }

    #[test]
    fn a_nacha_file_id_in_any_spelling_names_one_file() {
        let all = |id: &str| file_id_spellings(id);
        let want = vec![
            "nacha:231380104:1210428821:261129:0900:A".to_string(),
            "nacha:0231380104:1210428821:261129:0900:A".to_string(),
        ];
        assert_eq!(all("nacha:0231380104:1210428821:261129:0900:A"), want);
        assert_eq!(all("nacha:231380104:1210428821:261129:0900:A"), want);
        assert_eq!(
            all("nacha:231380104:0091000019:261129:0900:A").len(),
            4,
            "both sides routing numbers: 2 × 2 spellings"
        );
        assert_eq!(all("iso:pacs.008:BIC:M"), vec!["iso:pacs.008:BIC:M"]);
        assert_eq!(nacha_party("0231380104"), "231380104");
        assert_eq!(nacha_party("1210428821"), "1210428821");
        assert_eq!(nacha_party("231380104"), "231380104");
    }

    fn stmt_entry(
        batch_ref: Option<&str>,
        details: Vec<crate::formats::statement::Detail>,
    ) -> crate::formats::statement::Entry {
        crate::formats::statement::Entry {
            entry_no: 1,
            amount_minor: 1000,
            currency: "EUR".into(),
            credit: true,
            reversal: false,
            status: crate::formats::statement::EntryStatus::Booked,
            booking_date: None,
            value_date: None,
            bank_ref: None,
            customer_ref: None,
            end_to_end_id: None,
            bank_tx_code: None,
            remittance: None,
            batch_ref: batch_ref.map(str::to_string),
            details,
            position: crate::findings::FilePosition::default().into(),
        }
    }

    #[test]
    fn entry_refs_keep_the_identifiers_reconciliation_matches_by() {
        use crate::formats::statement::Detail;
        let s = |v: &str| Some(v.to_string());
        // One detail: its UETR (lower case), InstrId and return reason; its EndToEndId is
        // the entry's column, its amount the entry's.
        let one = stmt_entry(
            None,
            vec![Detail {
                amount_minor: Some(1000),
                currency: s("EUR"),
                end_to_end_id: s("E2E-1"),
                instr_id: s("INSTR-1"),
                uetr: s("EB6305C9-1F7F-49DE-AED0-16487C27B42D"),
                account_servicer_ref: s("ASR-1"),
                remittance: s("invoice 7"),
                return_reason: None,
            }],
        );
        assert_eq!(
            entry_refs(&one).as_deref(),
            Some(r#"{"instr_id":"INSTR-1","uetr":"eb6305c9-1f7f-49de-aed0-16487c27b42d"}"#)
        );
        // Two details: each one's identifiers and amount, in document order; empty values
        // left out.
        let two = stmt_entry(
            Some("PMTINF-1"),
            vec![
                Detail {
                    amount_minor: Some(400),
                    currency: s("EUR"),
                    end_to_end_id: s("E-1"),
                    uetr: s("AB-CD"),
                    return_reason: s("AC04"),
                    ..Detail::default()
                },
                Detail {
                    amount_minor: Some(600),
                    currency: s("EUR"),
                    instr_id: s("I-2"),
                    account_servicer_ref: s("ASR-2"),
                    end_to_end_id: s(""),
                    ..Detail::default()
                },
                Detail::default(),
            ],
        );
        assert_eq!(
            entry_refs(&two).as_deref(),
            Some(
                r#"{"batch_ref":"PMTINF-1","details":[{"amount_minor":400,"currency":"EUR","end_to_end_id":"E-1","return_reason":"AC04","uetr":"ab-cd"},{"account_servicer_ref":"ASR-2","amount_minor":600,"currency":"EUR","instr_id":"I-2"},{}]}"#
            )
        );
        assert_eq!(
            entry_refs(&stmt_entry(Some("MSG-9"), Vec::new())).as_deref(),
            Some(r#"{"batch_ref":"MSG-9"}"#)
        );
        assert_eq!(entry_refs(&stmt_entry(None, Vec::new())), None);
        // A detail with nothing to tell: none either.
        let bare = stmt_entry(
            None,
            vec![Detail {
                end_to_end_id: s("E2E-ONLY"),
                amount_minor: Some(1000),
                ..Detail::default()
            }],
        );
        assert_eq!(entry_refs(&bare), None);
        // Not fingerprinted, not keyed: the same entry without them keys and fingerprints
        // alike.
        let record = |e| {
            let mut st = crate::formats::statement::Statement {
                format: "camt.053",
                kind: crate::formats::statement::StatementKind::Final,
                account: "NL26VAYB8060476890".into(),
                currency: s("EUR"),
                servicer: None,
                id: "S1".into(),
                sequence: s("1"),
                date: None,
                from_date: None,
                to_date: None,
                copy: false,
                balances: Vec::new(),
                entries: vec![e],
                position: crate::findings::FilePosition::default().into(),
                balance_breaks: Vec::new(),
            };
            st.entries[0].end_to_end_id = s("E2E-1");
            statement_record(st)
        };
        let (with, without) = (record(one.clone()), record(stmt_entry(None, Vec::new())));
        assert_eq!(
            (&with.entries[0].entry_key, &with.entries[0].fingerprint),
            (
                &without.entries[0].entry_key,
                &without.entries[0].fingerprint
            )
        );
        assert_eq!(with.fingerprint, without.fingerprint);
        assert_eq!(with.entries[0].refs, entry_refs(&one));
        assert_eq!(without.entries[0].refs, None);
    }

    #[test]
    fn differing_fields_names_each_change() {
        let old = r#"{"amount":"1250","account":"123","addenda":""}"#;
        let new = f(&[("amount", "1251"), ("account", "123"), ("addenda", "705X")]);
        assert_eq!(
            differing_fields(old, &new),
            vec!["amount: 1250 != 1251", "addenda: \"\" != 705X"]
        );
        // A key stored beside the fields only is no difference; another one is.
        let old = r#"{"amount":"1250","pmt_inf_id":"P-1","zeta":"z"}"#;
        assert_eq!(
            differing_fields(old, &f(&[("amount", "1250")])),
            vec!["zeta: present != absent"]
        );
    }
}
