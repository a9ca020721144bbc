//! `clearledger lookup`: every write has a read (PRINCIPLES.md §8).

use super::{GlobalOpts, exit, infra_error, out, with_ledger};
use crate::ledger::{Ledger, Lookup};
use crate::money::format_minor;
use clap::Args;

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("by").required(true).args(["trace", "file_id", "key", "uetr", "end_to_end_id"])))]
pub struct LookupArgs {
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

pub async fn run(g: &GlobalOpts, a: &LookupArgs) -> u8 {
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
    let found = match ledger.lookup(&g.tenant, q).await {
        Ok(p) => p,
        Err(e) => return infra_error(&e),
    };
    if found.is_empty() {
        errln!("clearledger: no posting found for tenant {:?}", g.tenant);
        return exit::NOT_FOUND;
    }
    for p in &found {
        let res = if a.json {
            outln!("{}", serde_json::to_string(p).unwrap_or_default())
        } else {
            outln!(
                "posting {} key {} ({}): {} {} debit {} credit {}, effective {}, trace {}, from {} record {} by run {} at {}; seen again {} times",
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
                p.repeats
            )
        };
        if let Err(e) = res {
            return out::stdout_failed(&e, exit::OK);
        }
    }
    exit::OK
}
