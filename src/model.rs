//! The shared vocabulary: file identity, posting records, keys, fingerprints, outcomes.
//!
//! Keys come from the intent, never from the content (PRINCIPLES.md §3):
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
//!   posted is held, not posted (issue #11).

use crate::formats::nacha::{Direction, Entry, FileHeaderInfo};
use chrono::NaiveDate;
use serde::Serialize;
use sha2::{Digest, Sha256};

/// The operation under which NACHA entries are keyed.
pub const OPERATION_ACH_ENTRY: &str = "ach.entry";

/// A file's identity: format and natural file id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileIdentity {
    pub format: &'static str,
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

    pub fn nacha(h: &FileHeaderInfo) -> Self {
        let (dest, origin) = (
            nacha_party(&h.immediate_destination),
            nacha_party(&h.immediate_origin),
        );
        let id = |d: &str, o: &str| {
            format!(
                "nacha:{d}:{o}:{}:{}:{}",
                h.file_creation_date, h.file_creation_time, h.file_id_modifier
            )
        };
        let file_id = id(&dest, &origin);
        let mut aliases = Vec::new();
        for d in nacha_spellings(&dest) {
            for o in nacha_spellings(&origin) {
                let alias = id(&d, &o);
                if alias != file_id {
                    aliases.push(alias);
                }
            }
        }
        FileIdentity {
            format: "nacha",
            file_id,
            origin,
            aliases,
        }
    }
}

/// An immediate destination or origin as the file identity writes it: a routing number
/// in any of its 10-character spellings (` 231380104`, `0231380104`, `231380104 `) is its
/// 9 digits; anything else (a 10-digit company identification such as `1234567890`, a
/// placeholder) is kept as it is, trimmed. The header fields arrive trimmed.
pub fn nacha_party(field: &str) -> String {
    let t = field.trim();
    let digits = t.bytes().all(|b| b.is_ascii_digit());
    match t.len() {
        10 if digits && t.starts_with('0') => t[1..].to_string(),
        _ => t.to_string(),
    }
}

/// The spellings a normalised party had in file identities written before
/// [`nacha_party`] (which kept the field trimmed): a routing number as its 9 digits
/// (from ` 231380104`) or with its leading zero (from `0231380104`).
fn nacha_spellings(party: &str) -> Vec<String> {
    if party.len() == 9 && party.bytes().all(|b| b.is_ascii_digit()) {
        vec![party.to_string(), format!("0{party}")]
    } else {
        vec![party.to_string()]
    }
}

/// The normalised immediate origin of a stored NACHA `file_id` (written by
/// [`FileIdentity::nacha`], or by an older release under another spelling); `None` for
/// another format's identity. Only the ledger's own identities are read here.
pub fn nacha_origin_of(file_id: &str) -> Option<String> {
    let mut parts = file_id.split(':');
    (parts.next()? == "nacha").then_some(())?;
    let _destination = parts.next()?;
    Some(nacha_party(parts.next()?))
}

/// The fields that make two NACHA entries of two files of one origin the same payment
/// sent twice: the ODFI trace number, transaction code, RDFI routing and account, and
/// amount (with the effective entry date within a window: [`resent_match`]).
pub const NACHA_RESEND_FIELDS: [&str; 5] = [
    "trace_number",
    "transaction_code",
    "rdfi_routing",
    "account",
    "amount",
];

/// Whether `record` is the re-sent form of a posting from another file of the same
/// origin, given that posting's stored `detail` (JSON) and effective date: every field of
/// [`NACHA_RESEND_FIELDS`] equal, and the effective entry dates at most `window_days`
/// apart (or both absent).
pub fn resent_match(
    record: &PostingRecord,
    detail: &str,
    effective_date: Option<NaiveDate>,
    window_days: u32,
) -> bool {
    let Ok(stored) = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(detail)
    else {
        return false;
    };
    let same = NACHA_RESEND_FIELDS.iter().all(|name| {
        let ours = record
            .fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str());
        ours.is_some() && ours == stored.get(*name).and_then(|v| v.as_str())
    });
    let dates = match (record.effective_date, effective_date) {
        (Some(a), Some(b)) => (a - b).num_days().unsigned_abs() <= u64::from(window_days),
        (None, None) => true,
        _ => false,
    };
    same && dates
}

/// A record ready for the ledger: one posting, keyed and fingerprinted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostingRecord {
    pub record_no: u64,
    pub operation: &'static str,
    pub posting_key: String,
    pub trace_number: Option<String>,
    pub debit_account: String,
    pub credit_account: String,
    pub amount_minor: i64,
    pub currency: String,
    pub effective_date: Option<NaiveDate>,
    /// Normalised fields, in a fixed order: what the fingerprint covers and what a
    /// conflict report compares.
    pub fields: Vec<(&'static str, String)>,
    /// Hex SHA-256 of `fields`.
    pub fingerprint: String,
    /// `fields` as a JSON object with sorted keys: what is stored beside the posting.
    /// Built with the record (on the parser's thread), not by the writer.
    pub detail: String,
    /// The key and fingerprint this record had under the previous keying rule, where the
    /// rule changed for its kind (ISO 20022 keys by leg, issue #11): a ledger holding
    /// postings made before the change finds them by this key, so a file ingested before
    /// an upgrade is still a duplicate after it (see `ledger::protocol`).
    pub legacy: Option<LegacyKey>,
}

/// A record's key and fingerprint under a previous keying rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyKey {
    pub posting_key: String,
    pub fingerprint: String,
}

/// The normalised fields as a JSON object, keys sorted (stored beside the posting).
pub fn detail_json(fields: &[(&'static str, String)]) -> String {
    let map: std::collections::BTreeMap<&str, &str> =
        fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    serde_json::to_string(&map).expect("a map of strings serialises")
}

/// SHA-256 over `name=value` pairs, each ended by a unit separator; the version tag
/// in front lets a future change of normalisation never collide with this one.
pub fn fingerprint(tag: &str, fields: &[(&'static str, String)]) -> String {
    let mut h = Sha256::new();
    h.update(tag.as_bytes());
    h.update([0x1e]);
    for (k, v) in fields {
        h.update(k.as_bytes());
        h.update(b"=");
        h.update((v.len() as u64).to_le_bytes());
        h.update(v.as_bytes());
        h.update([0x1f]);
    }
    hex::encode(h.finalize())
}

/// The ledger accounts of a NACHA entry:
/// - receiver side: `rdfi:{RDFI routing, 9 digits}:{DFI account number}`;
/// - originator side: `odfi:{ODFI identification, 8 digits}:{company identification}`
///   (IAT: the originator identification).
///
/// A credit entry (transaction codes 21-24, 31-34, 41-44, 51-54; ADV 81/83/85/87) moves
/// money from the originator to the receiver: debit the originator, credit the receiver.
/// A debit entry swaps the sides.
pub fn nacha_accounts(e: &Entry) -> (String, String) {
    let receiver = format!("rdfi:{}:{}", e.rdfi_routing, e.account);
    let originator = format!(
        "odfi:{}:{}",
        e.odfi_identification, e.company_identification
    );
    match e.direction {
        Direction::Credit => (originator, receiver),
        Direction::Debit => (receiver, originator),
    }
}

/// Turns a NACHA entry into its posting record.
pub fn nacha_posting(file: &FileIdentity, e: &Entry) -> PostingRecord {
    let (debit_account, credit_account) = nacha_accounts(e);
    let fields: Vec<(&'static str, String)> = vec![
        ("batch_number", e.batch_number.clone()),
        ("service_class_code", e.service_class_code.clone()),
        ("sec_code", e.sec_code.clone()),
        ("company_name", e.company_name.clone()),
        ("company_identification", e.company_identification.clone()),
        (
            "company_entry_description",
            e.company_entry_description.clone(),
        ),
        (
            "effective_entry_date",
            e.effective_entry_date
                .map(|d| d.to_string())
                .unwrap_or_default(),
        ),
        ("odfi_identification", e.odfi_identification.clone()),
        ("transaction_code", format!("{:02}", e.transaction_code)),
        ("rdfi_routing", e.rdfi_routing.clone()),
        ("account", e.account.clone()),
        ("amount", e.amount_minor.to_string()),
        (
            "individual_identification",
            e.individual_identification.clone(),
        ),
        ("individual_name", e.individual_name.clone()),
        ("discretionary_data", e.discretionary_data.clone()),
        ("trace_number", e.trace_number.clone()),
        ("addenda", e.addenda.join("\n")),
    ];
    let fingerprint = fingerprint("nacha-entry-v1", &fields);
    let detail = detail_json(&fields);
    PostingRecord {
        record_no: e.record_no,
        operation: OPERATION_ACH_ENTRY,
        posting_key: format!("{}:{}", file.file_id, e.record_no),
        trace_number: Some(e.trace_number.clone()),
        debit_account,
        credit_account,
        amount_minor: e.amount_minor as i64,
        currency: "USD".to_string(),
        effective_date: e.effective_entry_date,
        fields,
        fingerprint,
        detail,
        legacy: None,
    }
}

/// The fields that differ between a stored posting's detail (JSON object) and a new
/// record, as `name: original != new`, in the record's field order.
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
        if !new.iter().any(|(n, _)| n == k) {
            out.push(format!("{k}: present != absent"));
        }
    }
    out
}

/// [`differing_fields`] over the fields the stored detail has (a posting of an earlier
/// rule that stored fewer): a field it never had is not a difference.
pub fn differing_stored_fields(
    original_detail: &str,
    new: &[(&'static str, String)],
) -> Vec<String> {
    let original: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(original_detail).unwrap_or_default();
    let known: Vec<(&'static str, String)> = new
        .iter()
        .filter(|(k, _)| original.contains_key(*k))
        .cloned()
        .collect();
    differing_fields(original_detail, &known)
}

fn one_line(s: &str) -> String {
    if s.is_empty() {
        "\"\"".to_string()
    } else {
        s.replace('\n', "\\n")
    }
}

/// What happened to one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Posted by this run.
    Posted,
    /// Same key and fingerprint as an earlier posting: nothing new.
    Duplicate,
    /// Same key, different fingerprint: not posted, the differing fields reported.
    Conflict,
    /// A new key in a file whose identity was already ingested with other content:
    /// not posted, held for an operator (PRINCIPLES.md §1).
    Held,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Posted => "posted",
            Outcome::Duplicate => "duplicate",
            Outcome::Conflict => "conflict",
            Outcome::Held => "held",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "posted" => Outcome::Posted,
            "duplicate" => Outcome::Duplicate,
            "conflict" => Outcome::Conflict,
            "held" => Outcome::Held,
            _ => return None,
        })
    }
}

/// ISO 20022 identities and keys (PRINCIPLES.md §3, §4):
/// - `file_id`: `iso:{message kind}:{sender}:{MsgId}` — the first Document's MsgId, scoped
///   by its sender (pacs: the instructing agent's BIC; pain.001: the initiating party's
///   identification, else its name);
/// - a transaction's posting key, unique within `(tenant, operation)` where the operation is
///   the message kind (`pain.001`, `pacs.008`, `pacs.004`), in order of preference:
///   1. `uetr:{UETR}`, when the transaction carries one;
///   2. `e2e:{assigner}:{EndToEndId}`, the assigner being the debtor's account at the
///      debtor agent (`{BIC}/{account}`), else the sender: two originators using the same
///      EndToEndId are two intents;
///   3. the literal `NOTPROVIDED` (or nothing) identifies nothing: `{file_id}:{record_no}`,
///      never deduplicated against another NOTPROVIDED;
/// - a pacs.004 return: the original payment's key (by OrgnlUETR, else OrgnlEndToEndId with
///   the original debtor's account and agent) followed by `:return`, so the same return
///   arriving again, in any file, is one intent.
pub fn iso_identity(h: &crate::formats::iso20022::IsoHeader) -> FileIdentity {
    FileIdentity {
        format: "iso20022",
        file_id: format!("iso:{}:{}:{}", h.kind.as_str(), h.sender, h.msg_id),
        origin: h.sender.clone(),
        aliases: Vec::new(),
    }
}

fn provided(id: &str) -> Option<&str> {
    let t = id.trim();
    (!t.is_empty() && !t.eq_ignore_ascii_case("NOTPROVIDED")).then_some(t)
}

fn e2e_key(agent: &str, account: &str, fallback_party: &str, e2e: &str) -> String {
    let assigner = if !account.is_empty() {
        format!("{agent}/{account}")
    } else if !agent.is_empty() {
        agent.to_string()
    } else {
        fallback_party.to_string()
    };
    format!("e2e:{assigner}:{e2e}")
}

/// The posting key of an ISO 20022 transaction (see [`iso_identity`]).
pub fn iso_key(file: &FileIdentity, tx: &crate::formats::iso20022::IsoTx) -> String {
    use crate::formats::iso20022::Kind;
    if tx.kind == Some(Kind::Pacs004) {
        let original = if let Some(u) = provided(&tx.original_uetr) {
            Some(format!("uetr:{u}"))
        } else {
            provided(&tx.original_end_to_end_id)
                .map(|e| e2e_key(&tx.debtor_agent, &tx.debtor_account, &tx.sender, e))
        };
        return match original {
            Some(o) => format!("{o}:return"),
            None => format!("{}:{}", file.file_id, tx.record_no),
        };
    }
    if let Some(u) = provided(&tx.uetr) {
        return format!("uetr:{u}");
    }
    if let Some(e) = provided(&tx.end_to_end_id) {
        return e2e_key(&tx.debtor_agent, &tx.debtor_account, &tx.sender, e);
    }
    format!("{}:{}", file.file_id, tx.record_no)
}

fn iso_account(account: &str, agent: &str, name: &str) -> String {
    if !account.is_empty() {
        format!("acct:{account}")
    } else if !agent.is_empty() {
        format!("agent:{agent}")
    } else {
        format!("party:{name}")
    }
}

/// Turns an ISO 20022 transaction into its posting record. A credit transfer debits the
/// debtor's account and credits the creditor's; a return (pacs.004) moves the money back:
/// debits the original creditor, credits the original debtor. Accounts are `acct:{IBAN or
/// other id}`, else `agent:{BIC}`, else `party:{name}`.
pub fn iso_posting(file: &FileIdentity, tx: &crate::formats::iso20022::IsoTx) -> PostingRecord {
    use crate::formats::iso20022::Kind;
    let kind = tx.kind.unwrap_or(Kind::Pacs008);
    let debtor = iso_account(&tx.debtor_account, &tx.debtor_agent, &tx.debtor_name);
    let creditor = iso_account(&tx.creditor_account, &tx.creditor_agent, &tx.creditor_name);
    let (debit_account, credit_account) = if kind == Kind::Pacs004 {
        (creditor, debtor)
    } else {
        (debtor, creditor)
    };
    let fields: Vec<(&'static str, String)> = vec![
        ("message", kind.as_str().to_string()),
        ("instr_id", tx.instr_id.clone()),
        ("end_to_end_id", tx.end_to_end_id.clone()),
        ("tx_id", tx.tx_id.clone()),
        ("uetr", tx.uetr.clone()),
        ("amount", tx.amount_minor.to_string()),
        ("currency", tx.currency.clone()),
        ("date", tx.date.map(|d| d.to_string()).unwrap_or_default()),
        ("debtor_name", tx.debtor_name.clone()),
        ("debtor_account", tx.debtor_account.clone()),
        ("debtor_agent", tx.debtor_agent.clone()),
        ("creditor_name", tx.creditor_name.clone()),
        ("creditor_account", tx.creditor_account.clone()),
        ("creditor_agent", tx.creditor_agent.clone()),
        ("remittance", tx.remittance.clone()),
        ("original_end_to_end_id", tx.original_end_to_end_id.clone()),
        ("original_uetr", tx.original_uetr.clone()),
        ("original_tx_id", tx.original_tx_id.clone()),
        ("return_reason", tx.return_reason.clone()),
    ];
    let fingerprint = fingerprint("iso20022-tx-v1", &fields);
    let detail = detail_json(&fields);
    let trace = [
        &tx.uetr,
        &tx.end_to_end_id,
        &tx.original_uetr,
        &tx.original_end_to_end_id,
    ]
    .into_iter()
    .find_map(|s| provided(s).map(str::to_string));
    PostingRecord {
        record_no: tx.record_no,
        operation: kind.as_str(),
        posting_key: iso_key(file, tx),
        trace_number: trace,
        debit_account,
        credit_account,
        amount_minor: tx.amount_minor,
        currency: tx.currency.clone(),
        effective_date: tx.date,
        fields,
        fingerprint,
        detail,
        legacy: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
        v.iter().map(|(k, v)| (*k, v.to_string())).collect()
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
    fn differing_fields_names_each_change() {
        let old = r#"{"amount":"1250","account":"123","addenda":""}"#;
        let new = f(&[("amount", "1251"), ("account", "123"), ("addenda", "705X")]);
        assert_eq!(
            differing_fields(old, &new),
            vec!["amount: 1250 != 1251", "addenda: \"\" != 705X"]
        );
    }
}
