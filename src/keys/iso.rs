//! ISO 20022 identities, keys and posting records, and the v1 rule kept for the postings
//! made under it.

use super::{FileIdentity, LegacyKey, PostingRecord, detail, fingerprint, fingerprint_digest};

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
    let legacy = legacy.then(|| legacy_key(file, &tx, kind));
    let (record_no, amount_minor, date) = (tx.record_no, tx.amount_minor, tx.date);
    let currency = tx.currency.clone();
    let (fields, pmt_inf_id) = iso_fields(kind, tx);
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

/// The key and fingerprint the v1 rule gave the same transaction.
fn legacy_key(
    file: &FileIdentity,
    tx: &crate::formats::iso20022::IsoTx,
    kind: crate::formats::iso20022::Kind,
) -> LegacyKey {
    let v1_fields = iso_fields_v1(tx);
    LegacyKey {
        posting_key: iso_key_v1(file, tx),
        fingerprint: fingerprint("iso20022-tx-v1", &v1_fields),
        fields: v1_fields,
        file_prefix: (kind != crate::formats::iso20022::Kind::Pain001)
            .then(|| format!("iso:{}:{}:", kind.as_str(), tx.v1.sender)),
        ambiguous: (tx.v1.debtor_agent.is_empty() && !tx.debtor_agent.is_empty())
            || (tx.v1.creditor_agent.is_empty() && !tx.creditor_agent.is_empty())
            || (tx.v1.sender.is_empty() && !tx.sender.is_empty()),
    }
}

/// The transaction's fingerprinted fields, in their fixed order, and its PmtInfId (stored,
/// never fingerprinted). The transaction's texts move into the fields (the record is all
/// that is kept of it).
fn iso_fields(
    kind: crate::formats::iso20022::Kind,
    tx: crate::formats::iso20022::IsoTx,
) -> (Vec<(&'static str, String)>, String) {
    let date = tx.date;
    let fields: Vec<(&'static str, String)> = vec![
        ("message", kind.as_str().to_string()),
        ("instr_id", tx.instr_id),
        ("end_to_end_id", tx.end_to_end_id),
        ("tx_id", tx.tx_id),
        ("uetr", tx.uetr),
        ("amount", tx.amount_minor.to_string()),
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
    (fields, tx.pmt_inf_id)
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
