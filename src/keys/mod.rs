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

use crate::formats::nacha::{Direction, Entry, FileHeaderInfo};
use chrono::NaiveDate;
use serde::Serialize;
use sha2::{Digest, Sha256};

pub mod detail;

/// The operation under which NACHA entries are keyed.
pub const OPERATION_ACH_ENTRY: &str = "ach.entry";
/// A correction `clearledger reconcile --post-corrections` posted: a money
/// movement of its own kind, keyed by the reconciliation item it corrects.
pub const OPERATION_CORRECTION: &str = "correction";

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
pub fn nacha_spellings(party: &str) -> Vec<String> {
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

/// Every spelling under which a ledger may hold the NACHA file an operator names by
/// `file_id` (in any spelling): its normalised form first, then the earlier spellings
/// ([`FileIdentity::aliases`]). Another format's identity is itself alone.
pub fn file_id_spellings(file_id: &str) -> Vec<String> {
    let parts: Vec<&str> = file_id.split(':').collect();
    if parts.len() != 6 || parts[0] != "nacha" {
        return vec![file_id.to_string()];
    }
    nacha_file_ids(parts[1], parts[2], &parts[3..])
}

/// The `file_id` of a NACHA file (destination and origin normalised, [`nacha_party`]),
/// then every other spelling an earlier release may have written it in.
fn nacha_file_ids(destination: &str, origin: &str, rest: &[&str]) -> Vec<String> {
    let (dest, origin) = (nacha_party(destination), nacha_party(origin));
    let id = |d: &str, o: &str| format!("nacha:{d}:{o}:{}", rest.join(":"));
    let mut out = vec![id(&dest, &origin)];
    for d in nacha_spellings(&dest) {
        for o in nacha_spellings(&origin) {
            let alias = id(&d, &o);
            if !out.contains(&alias) {
                out.push(alias);
            }
        }
    }
    out
}

/// The fields that make two NACHA entries of two files of one origin the same payment
/// sent twice: the company, the ODFI trace number, transaction code, RDFI routing and
/// account, amount and effective entry date. (A file regenerated by mistake keeps them
/// all; next week's payroll, even with trace numbers restarted at 1, has another
/// effective entry date.)
pub const NACHA_RESEND_FIELDS: [&str; 7] = [
    "company_identification",
    "trace_number",
    "transaction_code",
    "rdfi_routing",
    "account",
    "amount",
    "effective_entry_date",
];

/// Whether `record` equals, field for field ([`NACHA_RESEND_FIELDS`]), the posting whose
/// stored `detail` (JSON) is given. The caller checks the files: another file, of the same
/// origin, created within the window.
pub fn resent_match(record: &PostingRecord, detail: &str) -> bool {
    let Ok(stored) = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(detail)
    else {
        return false;
    };
    NACHA_RESEND_FIELDS.iter().all(|name| {
        let ours = record
            .fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str());
        ours.is_some() && ours == stored.get(*name).and_then(|v| v.as_str())
    })
}

/// The file creation date of a stored NACHA `file_id` (`YYMMDD`, 20YY).
pub fn nacha_created_of(file_id: &str) -> Option<NaiveDate> {
    let mut parts = file_id.split(':');
    (parts.next()? == "nacha").then_some(())?;
    let date = parts.nth(2)?;
    NaiveDate::parse_from_str(&format!("20{date}"), "%Y%m%d").ok()
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
    pub posting_key: String,
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
    let digest = fingerprint_digest("nacha-entry-v1", &fields);
    let detail = detail::encode(&fields);
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
        fingerprint: hex::encode(digest),
        digest,
        detail,
        legacy: None,
    }
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
    pub fn as_str(self) -> &'static str {
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
    pub fn parse(s: &str) -> Option<Self> {
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

/// ISO 20022 identities and keys (docs/principles.md §3, §4); the README's ISO key table says
/// the same. An *agent* is named by its BIC, else its clearing system member id with the
/// system (`USABA:021000021`), else its `Othr/Id`.
/// - `file_id`: `iso:{message kind}:{sender}:{MsgId}` — the first Document's MsgId, scoped
///   by its sender (pacs: the instructing agent; pain.001: the initiating party's
///   identification, else its name);
/// - the *leg* of a pacs transaction: `{instructing agent}>{instructed agent}`, of the
///   transaction, else of the group header. A payment chain (A→B, B→C, C→D) keeps one UETR
///   and one EndToEndId: each leg is its own intent, a re-sent message of a leg is not;
/// - a transaction's posting key, unique within `(tenant, operation)` where the operation is
///   the message kind (`pain.001`, `pacs.008`, `pacs.004`), in order of preference:
///   1. `uetr:{UETR in lower case}:{leg}`, when the transaction carries a UETR;
///   2. `e2e:{assigner}:{EndToEndId}:{leg}`, the assigner being the debtor's account at the
///      debtor agent (`{agent}/{account}`), else the debtor agent, else the leg's
///      instructing agent (else the sender): two originators using the same EndToEndId
///      are two intents;
///   3. the literal `NOTPROVIDED` (or nothing) identifies nothing: `{file_id}:{record_no}`,
///      never deduplicated against another NOTPROVIDED.
///
///   pain.001 has no leg (customer to bank): `uetr:{UETR}` and `e2e:{assigner}:{EndToEndId}`;
///   a pacs transaction without any agent has none either (`:{leg}` left out);
/// - a pacs.004 return: the original payment's key rebuilt by the same rule, followed by
///   `:return`. The original's leg is the return's reversed (a return travels back along
///   the leg it undoes: the return's instructed agent instructed the original), its
///   debtor, account and agent are the return's (`RtrChain`, else `OrgnlTxRef`), its UETR
///   the OrgnlUETR, its EndToEndId the OrgnlEndToEndId. A return naming neither (only an
///   OrgnlTxId, which no payment key holds) is keyed by its own RtrId, scoped by its
///   instructing agent: `rtr:{agent}:{RtrId}`; without those, `{file_id}:{record_no}`.
///
/// The key and fingerprint under the rule before this one (v1: `uetr:{UETR}`,
/// BIC-only agents, tag `iso20022-tx-v1`) are kept in [`PostingRecord::legacy`].
pub fn iso_identity(h: &crate::formats::iso20022::IsoHeader) -> FileIdentity {
    FileIdentity {
        format: "iso20022",
        file_id: iso_file_id(h),
        origin: h.sender.clone(),
        aliases: Vec::new(),
    }
}

fn iso_file_id(h: &crate::formats::iso20022::IsoHeader) -> String {
    format!("iso:{}:{}:{}", h.kind.as_str(), h.sender, h.msg_id)
}

/// The identifier, trimmed, unless blank or `NOTPROVIDED` (which identify nothing).
pub fn provided(id: &str) -> Option<&str> {
    let t = id.trim();
    (!t.is_empty() && !t.eq_ignore_ascii_case("NOTPROVIDED")).then_some(t)
}

/// What identifies a payment's intent: the inputs of [`payment_key`].
struct PaymentIds<'a> {
    uetr: &'a str,
    end_to_end_id: &'a str,
    debtor_agent: &'a str,
    debtor_account: &'a str,
    /// The assigner when neither the debtor's account nor its agent is known.
    fallback_party: &'a str,
    /// `(instructing, instructed)`; `None` for pain.001.
    leg: Option<(&'a str, &'a str)>,
}

/// `uetr:…` or `e2e:…`, with the leg; `None` when neither identifier is provided.
fn payment_key(p: &PaymentIds<'_>) -> Option<String> {
    let mut key = if let Some(u) = provided(p.uetr) {
        format!("uetr:{}", u.to_ascii_lowercase())
    } else {
        let e = provided(p.end_to_end_id)?;
        let assigner = if !p.debtor_account.is_empty() {
            format!("{}/{}", p.debtor_agent, p.debtor_account)
        } else if !p.debtor_agent.is_empty() {
            p.debtor_agent.to_string()
        } else {
            p.fallback_party.to_string()
        };
        format!("e2e:{assigner}:{e}")
    };
    if let Some((instg, instd)) = p.leg
        && !(instg.is_empty() && instd.is_empty())
    {
        key.push(':');
        key.push_str(instg);
        key.push('>');
        key.push_str(instd);
    }
    Some(key)
}

fn first_of<'a>(a: &'a str, b: &'a str) -> &'a str {
    if a.is_empty() { b } else { a }
}

/// The posting key of an ISO 20022 transaction (see [`iso_identity`]).
pub fn iso_key(file: &FileIdentity, tx: &crate::formats::iso20022::IsoTx) -> String {
    use crate::formats::iso20022::Kind;
    let ids = match tx.kind {
        Some(Kind::Pacs004) => PaymentIds {
            uetr: &tx.original_uetr,
            end_to_end_id: &tx.original_end_to_end_id,
            debtor_agent: &tx.debtor_agent,
            debtor_account: &tx.debtor_account,
            fallback_party: first_of(&tx.instructed_agent, &tx.sender),
            leg: Some((&tx.instructed_agent, &tx.instructing_agent)),
        },
        kind => PaymentIds {
            uetr: &tx.uetr,
            end_to_end_id: &tx.end_to_end_id,
            debtor_agent: &tx.debtor_agent,
            debtor_account: &tx.debtor_account,
            fallback_party: first_of(&tx.instructing_agent, &tx.sender),
            leg: (kind != Some(Kind::Pain001))
                .then_some((tx.instructing_agent.as_str(), tx.instructed_agent.as_str())),
        },
    };
    match payment_key(&ids) {
        Some(k) if tx.kind == Some(Kind::Pacs004) => format!("{k}:return"),
        Some(k) => k,
        None => {
            // A return naming its original by OrgnlTxId alone: its own RtrId, scoped by the
            // agent that assigned it, so the same return re-sent in another file is still
            // one intent.
            let assigner = first_of(&tx.instructing_agent, &tx.sender);
            match provided(&tx.tx_id) {
                Some(rtr) if tx.kind == Some(Kind::Pacs004) && !assigner.is_empty() => {
                    format!("rtr:{assigner}:{rtr}")
                }
                _ => format!("{}:{}", file.file_id, tx.record_no),
            }
        }
    }
}

/// An account: an IBAN stands for itself (`acct:{IBAN}`); any other account number is
/// only unique at its bank, so it is qualified by its agent (`acct:{agent}/{number}`);
/// without an account, `agent:{agent}`, else `party:{name}`.
fn iso_account(account: &str, agent: &str, name: &str) -> String {
    if !account.is_empty() {
        if agent.is_empty() || crate::formats::iso20022::is_iban(account) {
            format!("acct:{account}")
        } else {
            format!("acct:{agent}/{account}")
        }
    } else if !agent.is_empty() {
        format!("agent:{agent}")
    } else {
        format!("party:{name}")
    }
}

/// Turns an ISO 20022 transaction into its posting record. A credit transfer debits the
/// debtor's account and credits the creditor's; a return (pacs.004) moves the money back:
/// debits the original creditor, credits the original debtor (accounts: `iso_account`).
/// `legacy` holds the key and fingerprint the v1 rule gave the same transaction.
///
/// `legacy`: whether to compute [`PostingRecord::legacy`] (a second key, field list and
/// SHA-256 a record), which only a ledger holding postings of the earlier rule reads
/// (`OpenRun::legacy_below`); without it the record's `legacy` is `None`.
pub fn iso_posting(
    file: &FileIdentity,
    tx: crate::formats::iso20022::IsoTx,
    legacy: bool,
) -> PostingRecord {
    use crate::formats::iso20022::Kind;
    let kind = tx.kind.unwrap_or(Kind::Pacs008);
    let debtor = iso_account(&tx.debtor_account, &tx.debtor_agent, &tx.debtor_name);
    let creditor = iso_account(&tx.creditor_account, &tx.creditor_agent, &tx.creditor_name);
    let (debit_account, credit_account) = if kind == Kind::Pacs004 {
        (creditor, debtor)
    } else {
        (debtor, creditor)
    };
    let posting_key = iso_key(file, &tx);
    let trace = [
        &tx.uetr,
        &tx.end_to_end_id,
        &tx.original_uetr,
        &tx.original_end_to_end_id,
    ]
    .into_iter()
    .find_map(|s| provided(s).map(str::to_string));
    let legacy = legacy.then(|| {
        let v1_fields = iso_fields_v1(&tx);
        LegacyKey {
            posting_key: iso_key_v1(file, &tx),
            fingerprint: self::fingerprint("iso20022-tx-v1", &v1_fields),
            fields: v1_fields,
            file_prefix: (kind != Kind::Pain001)
                .then(|| format!("iso:{}:{}:", kind.as_str(), tx.v1.sender)),
            ambiguous: (tx.v1.debtor_agent.is_empty() && !tx.debtor_agent.is_empty())
                || (tx.v1.creditor_agent.is_empty() && !tx.creditor_agent.is_empty())
                || (tx.v1.sender.is_empty() && !tx.sender.is_empty()),
        }
    });
    // The transaction's texts move into the fields (the record is all that is kept of it).
    let (record_no, amount_minor, date) = (tx.record_no, tx.amount_minor, tx.date);
    let currency = tx.currency.clone();
    let pmt_inf_id = tx.pmt_inf_id;
    let fields: Vec<(&'static str, String)> = vec![
        ("message", kind.as_str().to_string()),
        ("instr_id", tx.instr_id),
        ("end_to_end_id", tx.end_to_end_id),
        ("tx_id", tx.tx_id),
        ("uetr", tx.uetr),
        ("amount", amount_minor.to_string()),
        ("currency", tx.currency),
        ("date", date.map(|d| d.to_string()).unwrap_or_default()),
        ("instructing_agent", tx.instructing_agent),
        ("instructed_agent", tx.instructed_agent),
        ("debtor_name", tx.debtor_name),
        ("debtor_account", tx.debtor_account),
        ("debtor_agent", tx.debtor_agent),
        ("creditor_name", tx.creditor_name),
        ("creditor_account", tx.creditor_account),
        ("creditor_agent", tx.creditor_agent),
        ("remittance", tx.remittance),
        ("original_end_to_end_id", tx.original_end_to_end_id),
        ("original_uetr", tx.original_uetr),
        ("original_tx_id", tx.original_tx_id),
        ("return_reason", tx.return_reason),
    ];
    let digest = fingerprint_digest("iso20022-tx-v2", &fields);
    // A pain.001's PmtInfId is stored, not fingerprinted nor compared (DETAIL_ONLY_FIELDS):
    // a file ingested before it was kept is still all duplicates.
    let detail = if kind == Kind::Pain001 && !pmt_inf_id.is_empty() {
        let mut d: Vec<(&'static str, &str)> =
            fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        d.push(("pmt_inf_id", pmt_inf_id.as_str()));
        detail::encode(&d)
    } else {
        detail::encode(&fields)
    };
    PostingRecord {
        record_no,
        operation: kind.as_str(),
        posting_key,
        trace_number: trace,
        debit_account,
        credit_account,
        amount_minor,
        currency,
        effective_date: date,
        fields,
        fingerprint: hex::encode(digest),
        digest,
        detail,
        legacy,
    }
}

// ---- the v1 rule (before keys by leg), for postings made under it --------------------

fn e2e_key_v1(agent: &str, account: &str, fallback_party: &str, e2e: &str) -> String {
    let assigner = if !account.is_empty() {
        format!("{agent}/{account}")
    } else if !agent.is_empty() {
        agent.to_string()
    } else {
        fallback_party.to_string()
    };
    format!("e2e:{assigner}:{e2e}")
}

/// The v1 key: `uetr:{UETR}` as written, no leg, BIC-only agents, the file id
/// with the BIC-only sender; a return keyed by OrgnlUETR, else OrgnlEndToEndId with the
/// return's own sender as fallback assigner.
fn iso_key_v1(file: &FileIdentity, tx: &crate::formats::iso20022::IsoTx) -> String {
    use crate::formats::iso20022::Kind;
    let v1 = &tx.v1;
    let file_id = v1
        .file
        .as_deref()
        .map(iso_file_id)
        .unwrap_or_else(|| file.file_id.clone());
    if tx.kind == Some(Kind::Pacs004) {
        let original = if let Some(u) = provided(&tx.original_uetr) {
            Some(format!("uetr:{u}"))
        } else {
            provided(&tx.original_end_to_end_id)
                .map(|e| e2e_key_v1(&v1.debtor_agent, &v1.debtor_account, &v1.sender, e))
        };
        return match original {
            Some(o) => format!("{o}:return"),
            None => format!("{file_id}:{}", tx.record_no),
        };
    }
    if let Some(u) = provided(&tx.uetr) {
        return format!("uetr:{u}");
    }
    if let Some(e) = provided(&tx.end_to_end_id) {
        return e2e_key_v1(&v1.debtor_agent, &v1.debtor_account, &v1.sender, e);
    }
    format!("{file_id}:{}", tx.record_no)
}

/// The fields the v1 rule fingerprinted (under tag `iso20022-tx-v1`), in its order.
fn iso_fields_v1(tx: &crate::formats::iso20022::IsoTx) -> Vec<(&'static str, String)> {
    use crate::formats::iso20022::Kind;
    let kind = tx.kind.unwrap_or(Kind::Pacs008);
    let v1 = &tx.v1;
    let fields: Vec<(&'static str, String)> = vec![
        ("message", kind.as_str().to_string()),
        ("instr_id", tx.instr_id.clone()),
        ("end_to_end_id", tx.end_to_end_id.clone()),
        ("tx_id", tx.tx_id.clone()),
        ("uetr", tx.uetr.clone()),
        ("amount", tx.amount_minor.to_string()),
        ("currency", tx.currency.clone()),
        ("date", tx.date.map(|d| d.to_string()).unwrap_or_default()),
        ("debtor_name", v1.debtor_name.clone()),
        ("debtor_account", v1.debtor_account.clone()),
        ("debtor_agent", v1.debtor_agent.clone()),
        ("creditor_name", v1.creditor_name.clone()),
        ("creditor_account", v1.creditor_account.clone()),
        ("creditor_agent", v1.creditor_agent.clone()),
        ("remittance", tx.remittance.clone()),
        ("original_end_to_end_id", tx.original_end_to_end_id.clone()),
        ("original_uetr", tx.original_uetr.clone()),
        ("original_tx_id", tx.original_tx_id.clone()),
        ("return_reason", tx.return_reason.clone()),
    ];
    fields
}

// ---- bank statements ------------------------------------------------------

/// A statement as the ledger stores it: its key, its fields, and its entries keyed.
#[derive(Debug, Clone)]
pub struct StatementRecord {
    /// `{format family}:{account}:{currency}:{kind}:{id}:{sequence}:{date}:{from}:{to}`: what the
    /// statement is, never the file it came in. The family (`camt`, `bai2`, `mt94x`) keeps
    /// one bank's camt and MT940 renderings of a day apart; the kind keeps a camt.052 and
    /// the camt.053 of the same day apart; the date keeps apart the statements of a bank
    /// that reuses `:20:` and `:28C:` (Rabobank's `:28C:0` every day).
    pub statement_key: String,
    pub statement: crate::formats::statement::Statement,
    /// SHA-256 of the statement's own fields and its entries' keys and fingerprints: a
    /// statement sent again with other content (a corrected statement) is a conflict.
    pub fingerprint: String,
    pub entries: Vec<EntryRecord>,
}

/// A statement entry keyed.
#[derive(Debug, Clone)]
pub struct EntryRecord {
    /// `ref:{bank reference}` when the bank gave one (`AcctSvcrRef`, BAI2 bank reference,
    /// MT940 `//` reference; `NONREF` is none) that no other entry of the statement carries;
    /// else `fp:{fingerprint}:{n}`, n counting the
    /// entries of equal fingerprint in the statement from 1 — so two real identical lines
    /// are two entries, the same statement sent again is all duplicates, and an intraday
    /// and an end-of-day statement of the same day count an entry the most times either
    /// saw it, never the sum. Unique per (tenant, account).
    pub entry_key: String,
    pub fingerprint: String,
    /// The fields ([`ENTRY_FIELDS`]) as a JSON object (`detail_json`).
    pub detail: String,
    /// `booked`, `provisional` (pending, or any entry of an intraday statement) or `info`.
    pub status: &'static str,
    /// What reconciliation matches the entry by beyond its columns ([`entry_refs`]): a
    /// compact JSON object, keys sorted, or `None` when it has none (every BAI2 and MT940
    /// entry). Stored beside the entry (`statement_entries.refs`), never part of its
    /// fingerprint or key: an entry recorded before these were kept is a duplicate, not a
    /// conflict, when its statement is sent again.
    pub refs: Option<String>,
}

/// An entry's fields, in the order a conflict names them.
pub const ENTRY_FIELDS: [&str; 11] = [
    "account",
    "booking_date",
    "value_date",
    "credit_debit",
    "amount_minor",
    "currency",
    "bank_tx_code",
    "customer_ref",
    "end_to_end_id",
    "remittance",
    "bank_ref",
];

impl EntryRecord {
    /// The fields read back from `detail`, in [`ENTRY_FIELDS`]' order (for a conflict:
    /// kept as JSON only, not twice in memory for every entry).
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        let map: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&self.detail).unwrap_or_default();
        ENTRY_FIELDS
            .iter()
            .map(|k| {
                (
                    *k,
                    map.get(*k)
                        .and_then(|v| v.as_str())
                        .unwrap_or("")
                        .to_string(),
                )
            })
            .collect()
    }
}

/// An entry's reconciliation identifiers as a JSON object, keys sorted, each only when not
/// empty:
/// - `batch_ref`: [`crate::formats::statement::Entry::batch_ref`];
/// - of its one transaction detail: `uetr` (in lower case), `instr_id`, `return_reason` (its
///   EndToEndId is the entry's `end_to_end_id` already);
/// - of two details or more, `details`: one object per detail in document order, with
///   `amount_minor` (a JSON integer), `currency`, `end_to_end_id`, `instr_id`, `uetr` (lower
///   case), `account_servicer_ref`, `return_reason`.
///
/// `None` when no key is present; an entry without details nor batch allocates nothing.
pub fn entry_refs(e: &crate::formats::statement::Entry) -> Option<String> {
    use serde_json::Value;
    use std::collections::BTreeMap;
    if e.details.is_empty() && e.batch_ref.is_none() {
        return None;
    }
    fn put(m: &mut BTreeMap<&'static str, Value>, k: &'static str, v: &Option<String>) {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            m.insert(k, Value::String(v.to_string()));
        }
    }
    let lower = |v: &Option<String>| v.as_deref().map(str::to_ascii_lowercase);
    let mut m: BTreeMap<&'static str, Value> = BTreeMap::new();
    put(&mut m, "batch_ref", &e.batch_ref);
    match e.details.as_slice() {
        [] => {}
        [d] => {
            put(&mut m, "uetr", &lower(&d.uetr));
            put(&mut m, "instr_id", &d.instr_id);
            put(&mut m, "return_reason", &d.return_reason);
        }
        many => {
            let details: Vec<Value> = many
                .iter()
                .map(|d| {
                    let mut o: BTreeMap<&'static str, Value> = BTreeMap::new();
                    if let Some(a) = d.amount_minor {
                        o.insert("amount_minor", Value::from(a));
                    }
                    put(&mut o, "currency", &d.currency);
                    put(&mut o, "end_to_end_id", &d.end_to_end_id);
                    put(&mut o, "instr_id", &d.instr_id);
                    put(&mut o, "uetr", &lower(&d.uetr));
                    put(&mut o, "account_servicer_ref", &d.account_servicer_ref);
                    put(&mut o, "return_reason", &d.return_reason);
                    Value::Object(o.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                })
                .collect();
            m.insert("details", Value::Array(details));
        }
    }
    (!m.is_empty()).then(|| serde_json::to_string(&m).expect("a JSON value serialises"))
}

/// Keys the statements of one file, in order. A statement key repeated within the file (a
/// BAI2 group reporting the same account twice for one as-of date) takes its occurrence
/// (`…#2`), so every statement of a file is its own, and the same file sent again keys
/// them alike.
#[derive(Debug, Default)]
pub struct StatementKeys {
    seen: std::collections::HashMap<String, u32>,
}

impl StatementKeys {
    pub fn record(&mut self, s: crate::formats::statement::Statement) -> StatementRecord {
        let mut r = statement_record(s);
        let n = self.seen.entry(r.statement_key.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            r.statement_key = format!("{}#{n}", r.statement_key);
        }
        r
    }
}

/// Keys a statement and its entries.
pub fn statement_record(s: crate::formats::statement::Statement) -> StatementRecord {
    use crate::formats::statement::{EntryStatus, StatementKind};
    let family = match s.format {
        f if f.starts_with("camt") => "camt",
        "mt940" | "mt942" => "mt94x",
        other => other,
    };
    let d = |d: Option<chrono::NaiveDate>| d.map(|d| d.to_string()).unwrap_or_default();
    let statement_key = format!(
        "{family}:{}:{}:{}:{}:{}:{}:{}:{}",
        s.account,
        s.currency.as_deref().unwrap_or(""),
        s.kind.as_str(),
        s.id,
        s.sequence.as_deref().unwrap_or(""),
        d(s.date),
        d(s.from_date),
        d(s.to_date),
    );
    let mut seen: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    // A reference the bank gave two entries of one statement is no key (test files and
    // some banks write a placeholder such as `//test`): those entries are keyed by their
    // fingerprint like unreferenced ones.
    let mut refs: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    for e in &s.entries {
        if let Some(r) = &e.bank_ref {
            *refs.entry(r.as_str()).or_insert(0) += 1;
        }
    }
    let entries: Vec<EntryRecord> = s
        .entries
        .iter()
        .map(|e| {
            let dc = match (e.credit, e.reversal) {
                (true, false) => "C",
                (false, false) => "D",
                (true, true) => "RD",
                (false, true) => "RC",
            };
            let (booking, value) = (d(e.booking_date), d(e.value_date));
            let amount = e.amount_minor.to_string();
            fn o(v: &Option<String>) -> &str {
                v.as_deref().unwrap_or("")
            }
            // In ENTRY_FIELDS' order; the fingerprint covers all but the last (bank_ref).
            let fields: [(&'static str, &str); 11] = [
                ("account", &s.account),
                ("booking_date", &booking),
                ("value_date", &value),
                ("credit_debit", dc),
                ("amount_minor", &amount),
                ("currency", &e.currency),
                ("bank_tx_code", o(&e.bank_tx_code)),
                ("customer_ref", o(&e.customer_ref)),
                ("end_to_end_id", o(&e.end_to_end_id)),
                ("remittance", o(&e.remittance)),
                ("bank_ref", o(&e.bank_ref)),
            ];
            let fp = fingerprint("stmt-entry-v1", &fields[..10]);
            let unique_ref = e
                .bank_ref
                .as_ref()
                .filter(|r| refs.get(r.as_str()) == Some(&1));
            let entry_key = match unique_ref {
                Some(r) => format!("ref:{r}"),
                None => {
                    let n = seen.entry(fp.clone()).or_insert(0);
                    *n += 1;
                    format!("fp:{fp}:{n}")
                }
            };
            let status = match (s.kind, e.status) {
                (_, EntryStatus::Info) => "info",
                (StatementKind::Intraday, _) | (_, EntryStatus::Pending) => "provisional",
                _ => "booked",
            };
            // Stored and compared with the bank's reference; fingerprinted without it (a
            // referenced entry is keyed by it already).
            EntryRecord {
                entry_key,
                detail: detail_json(&fields),
                fingerprint: fp,
                status,
                refs: entry_refs(e),
            }
        })
        .collect();
    let mut own: Vec<(&'static str, String)> = vec![
        ("statement_key", statement_key.clone()),
        ("date", d(s.date)),
        ("copy", s.copy.to_string()),
    ];
    for b in &s.balances {
        own.push((
            "balance",
            format!("{}:{}:{}:{}", b.code, b.amount_minor, b.currency, d(b.date)),
        ));
    }
    for e in &entries {
        own.push(("entry", format!("{}={}", e.entry_key, e.fingerprint)));
    }
    StatementRecord {
        fingerprint: fingerprint("stmt-v1", &own),
        statement_key,
        statement: s,
        entries,
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
