//! Bank statements as the ledger stores them: a statement's key and fingerprint, and each
//! entry's.

use super::{detail_json, fingerprint};

/// A statement as the ledger stores it: its key, its fields, and its entries keyed.
#[derive(Debug, Clone)]
pub struct StatementRecord {
    /// `{format family}:{account}:{currency}:{kind}:{id}:{sequence}:{date}:{from}:{to}`: what the
    /// statement is, never the file it came in. The family (`camt`, `bai2`, `mt94x`) keeps
    /// one bank's camt and MT940 renderings of a day apart; the kind keeps a camt.052 and
    /// the camt.053 of the same day apart; the date keeps apart the statements of a bank
    /// that reuses `:20:` and `:28C:` (Rabobank's `:28C:0` every day).
    pub statement_key: String,
    /// The statement as its reader gave it.
    pub statement: crate::formats::statement::Statement,
    /// SHA-256 of the statement's own fields and its entries' keys and fingerprints: a
    /// statement sent again with other content (a corrected statement) is a conflict.
    pub fingerprint: String,
    /// Its entries keyed, in the statement's order.
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
    /// Hex SHA-256 of the entry's fields but its bank reference: with the key, it tells a
    /// repeat (same) from a corrected entry (other).
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
pub(crate) struct StatementKeys {
    seen: std::collections::HashMap<String, u32>,
}

impl StatementKeys {
    /// Keys `s`, the next statement of the file.
    pub(crate) fn record(&mut self, s: crate::formats::statement::Statement) -> StatementRecord {
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
    let statement_key = statement_key(&s);
    let entries = entry_records(&s);
    let d = |d: Option<chrono::NaiveDate>| d.map(|d| d.to_string()).unwrap_or_default();
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

/// What the statement is (see [`StatementRecord::statement_key`]).
fn statement_key(s: &crate::formats::statement::Statement) -> String {
    let family = match s.format {
        f if f.starts_with("camt") => "camt",
        "mt940" | "mt942" => "mt94x",
        other => other,
    };
    let d = |d: Option<chrono::NaiveDate>| d.map(|d| d.to_string()).unwrap_or_default();
    format!(
        "{family}:{}:{}:{}:{}:{}:{}:{}:{}",
        s.account,
        s.currency.as_deref().unwrap_or(""),
        s.kind.as_str(),
        s.id,
        s.sequence.as_deref().unwrap_or(""),
        d(s.date),
        d(s.from_date),
        d(s.to_date),
    )
}

/// The statement's entries keyed: by the bank's reference when it is unique in the
/// statement, else by their fingerprint and its occurrence.
fn entry_records(s: &crate::formats::statement::Statement) -> Vec<EntryRecord> {
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
    s.entries
        .iter()
        .map(|e| {
            let (fields, fp) = entry_fields(s, e);
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
            // Stored and compared with the bank's reference; fingerprinted without it (a
            // referenced entry is keyed by it already).
            EntryRecord {
                entry_key,
                detail: fields,
                fingerprint: fp,
                status: entry_status(s, e),
                refs: entry_refs(e),
            }
        })
        .collect()
}

/// An entry's stored detail (JSON, in [`ENTRY_FIELDS`]' order) and its fingerprint, which
/// covers all but the last field (bank_ref).
fn entry_fields(
    s: &crate::formats::statement::Statement,
    e: &crate::formats::statement::Entry,
) -> (String, String) {
    let d = |d: Option<chrono::NaiveDate>| d.map(|d| d.to_string()).unwrap_or_default();
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
    (
        detail_json(&fields),
        fingerprint("stmt-entry-v1", &fields[..10]),
    )
}

fn entry_status(
    s: &crate::formats::statement::Statement,
    e: &crate::formats::statement::Entry,
) -> &'static str {
    use crate::formats::statement::{EntryStatus, StatementKind};
    match (s.kind, e.status) {
        (_, EntryStatus::Info) => "info",
        (StatementKind::Intraday, _) | (_, EntryStatus::Pending) => "provisional",
        _ => "booked",
    }
}
