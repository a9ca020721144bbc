//! `clearledger lookup`: every write has a read (docs/principles.md §8).

use super::{GlobalOpts, exit, infra_error, out, require_tenant, with_ledger};
use crate::ledger::{Ledger, Lookup, RepeatCounts};
use crate::money::format_minor;
use clap::Args;

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("by").required(true).args(["trace", "file_id", "key", "uetr", "end_to_end_id", "bank_ref", "account_servicer_ref"])))]
pub(crate) struct LookupArgs {
    /// A bank statement entry by the bank's reference (camt `AcctSvcrRef`, BAI2 bank
    /// reference, MT940 `:61:` reference after `//`): every entry carrying it.
    #[arg(long, value_name = "REF")]
    pub bank_ref: Option<String>,
    /// The same as --bank-ref, in ISO 20022's words.
    #[arg(long, value_name = "REF")]
    pub account_servicer_ref: Option<String>,
    /// By trace number (not unique: every posting carrying it is listed).
    #[arg(long)]
    pub trace: Option<String>,
    /// By source file_id (with --record-no).
    #[arg(long, requires = "record_no")]
    pub file_id: Option<String>,
    /// The record's number in its file (with --file-id).
    #[arg(long)]
    pub record_no: Option<i64>,
    /// By posting key.
    #[arg(long)]
    pub key: Option<String>,
    /// By UETR, in any case: every leg of the payment chain and anything derived from them
    /// (their returns).
    #[arg(long)]
    pub uetr: Option<String>,
    /// By EndToEndId, whoever assigned it (a payment, or a return naming it as original).
    #[arg(long)]
    pub end_to_end_id: Option<String>,
    /// One JSON object per posting.
    #[arg(long)]
    pub json: bool,
}

pub(crate) async fn run(g: &GlobalOpts, a: &LookupArgs) -> u8 {
    if let Some(r) = a.bank_ref.as_ref().or(a.account_servicer_ref.as_ref()) {
        return with_ledger(g, async |ledger| statement_entries(g, a, ledger, r).await).await;
    }
    let q = if let Some(t) = &a.trace {
        Lookup::TraceNumber(t.clone())
    } else if let (Some(f), Some(n)) = (&a.file_id, a.record_no) {
        Lookup::Source {
            file_id: f.clone(),
            record_no: n,
        }
    } else if let Some(k) = &a.key {
        Lookup::PostingKey(k.clone())
    } else if let Some(u) = &a.uetr {
        Lookup::Uetr(u.clone())
    } else if let Some(e) = &a.end_to_end_id {
        Lookup::EndToEndId(e.clone())
    } else {
        errln!("clearledger: lookup needs --trace, --file-id with --record-no, or --key");
        return exit::USAGE;
    };
    with_ledger(g, async |ledger| print(g, a, ledger, &q).await).await
}

async fn print(g: &GlobalOpts, a: &LookupArgs, ledger: &mut Ledger, q: &Lookup) -> u8 {
    if let Some(code) = require_tenant(g, ledger).await {
        return code;
    }
    let found = match ledger.lookup(&g.tenant, q).await {
        Ok(p) => p,
        Err(e) => return infra_error(&e),
    };
    if found.is_empty() {
        // A file's record that did not post may be held: shown with its decision.
        if let Lookup::Source { file_id, record_no } = q
            && let Some(code) = held_record(g, a, ledger, file_id, *record_no).await
        {
            return code;
        }
        errln!("clearledger: no posting found for tenant {:?}", g.tenant);
        return exit::NOT_FOUND;
    }
    for p in &found {
        let res = if a.json {
            outln!("{}", serde_json::to_string(p).unwrap_or_default())
        } else {
            outln!(
                "posting {} key {} ({}): {} {} debit {} credit {}, effective {}, trace {}, from {} record {} by run {} at {}; {}",
                p.posting_id,
                p.posting_key,
                p.operation,
                format_minor(p.amount_minor, &p.currency),
                p.currency,
                p.debit_account,
                p.credit_account,
                p.effective_date.as_deref().unwrap_or("-"),
                p.trace_number.as_deref().unwrap_or("-"),
                p.file_id,
                p.record_no,
                p.run_id,
                p.posted_at,
                seen_again(p.repeats, &p.repeats_by_outcome)
            )
        };
        if let Err(e) = res {
            return out::stdout_failed(&e, exit::OK);
        }
    }
    exit::OK
}

/// `lookup --file-id F --record-no N` of a held record: printed with its state, exit 0;
/// `None` when the record is not held either.
async fn held_record(
    g: &GlobalOpts,
    a: &LookupArgs,
    ledger: &mut Ledger,
    file_id: &str,
    record_no: i64,
) -> Option<u8> {
    let held = match ledger.held_of_source(&g.tenant, file_id, record_no).await {
        Ok(h) => h,
        Err(e) => return Some(infra_error(&e)),
    };
    if held.is_empty() {
        return None;
    }
    for h in &held {
        let res = if a.json {
            let mut v = serde_json::to_value(h).unwrap_or_default();
            v["outcome"] = serde_json::json!("held");
            v["open"] = serde_json::json!(h.is_open());
            outln!("{v}")
        } else {
            let state = match (&h.decision, h.posted_as) {
                (Some(d), _) => format!("decided: {}", d.describe()),
                (None, Some(p)) => format!("posted since as posting {p}"),
                (None, None) => "waiting for a decision (`clearledger resolve`)".to_string(),
            };
            outln!(
                "held: run {} record {} key {}: {} {}: {}; {state}",
                h.run_id,
                h.record_no,
                h.posting_key,
                format_minor(h.amount_minor, &h.currency),
                h.currency,
                h.reason.as_deref().unwrap_or("held"),
            )
        };
        if let Err(e) = res {
            return Some(out::stdout_failed(&e, exit::OK));
        }
    }
    Some(exit::OK)
}

/// Statement entries by the bank's reference.
async fn statement_entries(g: &GlobalOpts, a: &LookupArgs, ledger: &mut Ledger, r: &str) -> u8 {
    if let Some(code) = require_tenant(g, ledger).await {
        return code;
    }
    let found = match ledger.entries_by_bank_ref(&g.tenant, r).await {
        Ok(f) => f,
        Err(e) => return infra_error(&e),
    };
    if found.is_empty() {
        errln!(
            "clearledger: no statement entry with bank reference {r:?} for tenant {:?}",
            g.tenant
        );
        return exit::NOT_FOUND;
    }
    for e in &found {
        let res = if a.json {
            outln!("{}", serde_json::to_string(e).unwrap_or_default())
        } else {
            outln!(
                "statement entry {} key {} of account {}: {} {} {}{}, {}, booked {}, value {}, entry {} of {} (run {})",
                e.entry_id,
                e.entry_key,
                e.account,
                format_minor(e.amount_minor, &e.currency),
                e.currency,
                if e.credit { "credit" } else { "debit" },
                if e.reversal { " (reversal)" } else { "" },
                e.status,
                e.booking_date.as_deref().unwrap_or("-"),
                e.value_date.as_deref().unwrap_or("-"),
                e.entry_no,
                e.statement_key,
                e.run_id
            )
        };
        if let Err(err) = res {
            return out::stdout_failed(&err, exit::OK);
        }
    }
    exit::OK
}

/// `seen again 3 times: 1 duplicate, 2 conflicts` (outcomes that did not occur left out).
fn seen_again(total: i64, by: &RepeatCounts) -> String {
    let plural = |n: i64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let parts: Vec<String> = [
        (by.duplicate, "duplicate", "duplicates"),
        (by.conflict, "conflict", "conflicts"),
        (by.held, "held", "held"),
    ]
    .into_iter()
    .filter(|(n, _, _)| *n > 0)
    .map(|(n, one, many)| plural(n, one, many))
    .collect();
    let times = plural(total, "time", "times");
    if parts.is_empty() {
        format!("seen again {times}")
    } else {
        format!("seen again {times}: {}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_counted_by_outcome() {
        let by = |duplicate, conflict, held| RepeatCounts {
            duplicate,
            conflict,
            held,
        };
        assert_eq!(seen_again(0, &by(0, 0, 0)), "seen again 0 times");
        assert_eq!(
            seen_again(1, &by(1, 0, 0)),
            "seen again 1 time: 1 duplicate"
        );
        assert_eq!(
            seen_again(3, &by(1, 2, 0)),
            "seen again 3 times: 1 duplicate, 2 conflicts"
        );
        assert_eq!(
            seen_again(5, &by(2, 1, 2)),
            "seen again 5 times: 2 duplicates, 1 conflict, 2 held"
        );
    }
}
