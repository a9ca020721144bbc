//! Operator actions: `clearledger held`, `resolve`, `reverse` (the ledger side is
//! `ledger::actions`).

use super::{GlobalOpts, after_commit, exit, infra_error, out, require_tenant, with_ledger};
use crate::ledger::{Ledger, LedgerError, RunInfo};
use crate::money::format_minor;
use crate::operator::{
    Actor, Decision, DecisionKind, HeldRecord, Resolution, Reversal, ReverseTarget,
};
use clap::Args;
use serde_json::json;

#[derive(Debug, Args)]
pub(crate) struct HeldArgs {
    /// One JSON object per held record.
    #[arg(long)]
    pub json: bool,
    /// Also list the held records already decided (or posted since), with their decision.
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("decision").required(true).args(["post", "reject"])))]
pub(crate) struct ResolveArgs {
    /// The run that held the record (`clearledger held` lists them).
    pub run_id: i64,
    /// The record's number in that run's file.
    pub record_no: i64,
    /// Post the record under its own key (behind the same unique index as any record).
    #[arg(long)]
    pub post: bool,
    /// Never post the record.
    #[arg(long)]
    pub reject: bool,
    /// Why: journaled with the decision.
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Who decides (default: $USER).
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// Print the outcome as one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["run_id", "key"])))]
pub(crate) struct ReverseArgs {
    /// The run whose postings to compensate.
    pub run_id: Option<i64>,
    /// Compensate the one posting with this key instead.
    #[arg(long, value_name = "POSTING_KEY", conflicts_with = "run_id")]
    pub key: Option<String>,
    /// With --key: the posting's operation (nacha, pacs.008, …), when the key alone names
    /// postings of several.
    #[arg(long, requires = "key")]
    pub operation: Option<String>,
    /// Why: journaled with the compensating run.
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Who decides (default: $USER).
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// Print the outcome as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `--by`, else the login name, else "unknown".
fn actor_name(by: &Option<String>) -> String {
    by.clone()
        .or_else(|| std::env::var("USER").ok())
        .or_else(|| std::env::var("LOGNAME").ok())
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

fn require_reason(reason: &str) -> Option<u8> {
    if reason.trim().is_empty() {
        errln!("clearledger: --reason must say why (it is journaled with the decision)");
        return Some(exit::USAGE);
    }
    None
}

pub(crate) async fn held(g: &GlobalOpts, a: &HeldArgs) -> u8 {
    with_ledger(g, async |ledger| {
        if let Some(code) = require_tenant(g, ledger).await {
            return code;
        }
        let records = match ledger.held(&g.tenant).await {
            Ok(r) => r,
            Err(e) => return infra_error(&e),
        };
        // One line per held key: the same record held again by a later run of the same
        // file is the same decision.
        let mut seen = std::collections::HashSet::new();
        let shown: Vec<&HeldRecord> = records
            .iter()
            .filter(|h| a.all || h.is_open())
            .filter(|h| seen.insert((h.operation.clone(), h.posting_key.clone())))
            .collect();
        let res = if a.json {
            shown.iter().try_for_each(|h| outln!("{}", held_json(h)))
        } else {
            print_held(&shown, a.all)
        };
        match res {
            Ok(()) => exit::OK,
            Err(e) => out::stdout_failed(&e, exit::OK),
        }
    })
    .await
}

fn held_json(h: &HeldRecord) -> serde_json::Value {
    let mut v = serde_json::to_value(h).unwrap_or_default();
    v["open"] = json!(h.is_open());
    v
}

fn print_held(shown: &[&HeldRecord], all: bool) -> std::io::Result<()> {
    if shown.is_empty() {
        return outln!(
            "{}",
            if all {
                "no held records"
            } else {
                "no held records wait for a decision"
            }
        );
    }
    for h in shown {
        let resembles = match &h.resembles {
            Some(o) => format!(
                "; resembles posting {} (file {} record {}, run {})",
                o.posting_id, o.file_id, o.record_no, o.run_id
            ),
            None => String::new(),
        };
        let state = match (&h.decision, h.posted_as) {
            (Some(d), _) => format!("; decided: {}", d.describe()),
            (None, Some(p)) => format!("; posted since as posting {p}"),
            (None, None) => String::new(),
        };
        outln!(
            "run {} record {}: {} {} key {} (file {}): {}{resembles}{state}",
            h.run_id,
            h.record_no,
            format_minor(h.amount_minor, &h.currency),
            h.currency,
            h.posting_key,
            h.file_id.as_deref().unwrap_or("-"),
            h.reason.as_deref().unwrap_or("held"),
        )?;
    }
    Ok(())
}

pub(crate) async fn resolve(g: &GlobalOpts, a: &ResolveArgs) -> u8 {
    if let Some(c) = require_reason(&a.reason) {
        return c;
    }
    let decision = if a.post {
        DecisionKind::Post
    } else {
        DecisionKind::Reject
    };
    let by = actor_name(&a.by);
    with_ledger(g, async |ledger| {
        if let Some(code) = require_tenant(g, ledger).await {
            return code;
        }
        let who = Actor {
            tenant: &g.tenant,
            reason: &a.reason,
            by: &by,
            at: chrono::Utc::now(),
        };
        let res = ledger.resolve(&who, a.run_id, a.record_no, decision).await;
        let r = match res {
            Ok(r) => r,
            Err(e) => return action_error(&e),
        };
        print_resolution(g, a, &r)
    })
    .await
}

/// What `resolve` says of a resolution: its exit code, status word and message, and the
/// decision it names.
struct Resolved<'r> {
    code: u8,
    status: &'static str,
    text: String,
    decision: Option<&'r Decision>,
}

/// Prints a resolution (JSON, the message on stdout when it succeeded, or on stderr);
/// its exit code.
fn print_resolution(g: &GlobalOpts, a: &ResolveArgs, r: &Resolution) -> u8 {
    let run = match r {
        Resolution::Decided { run, .. } => Some(run.as_ref()),
        _ => None,
    };
    let Resolved {
        code,
        status,
        text,
        decision,
    } = resolved(g, a, r);
    let printed = if a.json {
        outln!(
            "{}",
            json!({
                "status": status, "run_id": run.map(|r| r.run_id), "held_run_id": a.run_id,
                "record_no": a.record_no, "decision": decision, "message": text,
            })
        )
    } else if code == exit::OK {
        if g.quiet { Ok(()) } else { outln!("{text}") }
    } else {
        errln!("clearledger: {text}");
        Ok(())
    };
    match (printed, run) {
        (Ok(()), _) => code,
        (Err(e), Some(run)) => after_commit(&out::describe(&e), run.run_id),
        (Err(e), None) => out::stdout_failed(&e, code),
    }
}

fn resolved<'r>(g: &GlobalOpts, a: &ResolveArgs, r: &'r Resolution) -> Resolved<'r> {
    let (run_id, record_no) = (a.run_id, a.record_no);
    let (code, status, decision, text) = match r {
        Resolution::Decided {
            decision,
            run,
            found_posted,
        } => (
            exit::OK,
            "resolved",
            Some(decision),
            decided_text(a, decision, run, *found_posted),
        ),
        Resolution::AlreadyResolved(d) => (
            exit::OK,
            "already_resolved",
            Some(d),
            format!(
                "run {run_id} record {record_no}: already resolved: {}",
                d.describe()
            ),
        ),
        Resolution::Contradicts(d) => (
            exit::ATTENTION,
            "refused",
            Some(d),
            format!(
                "run {run_id} record {record_no}: refused: it was decided otherwise before: {}",
                d.describe()
            ),
        ),
        Resolution::Refused { why } => (
            exit::ATTENTION,
            "refused",
            None,
            format!("run {run_id} record {record_no}: refused, nothing recorded: {why}"),
        ),
        Resolution::NotHeld { outcome } => (
            exit::USAGE,
            "not_held",
            None,
            format!(
                "run {run_id} record {record_no} is a {outcome}, not a held record: only held records are resolved"
            ),
        ),
        Resolution::NotFound => (
            exit::NOT_FOUND,
            "not_found",
            None,
            format!(
                "no record {record_no} of run {run_id} for tenant {:?} (a posted record is not held: see `clearledger \
                 held`)",
                g.tenant
            ),
        ),
    };
    Resolved {
        code,
        status,
        text,
        decision,
    }
}

/// The message of a decision made now.
fn decided_text(a: &ResolveArgs, decision: &Decision, run: &RunInfo, found_posted: bool) -> String {
    match (decision.decision, found_posted) {
        (DecisionKind::Post, false) => format!(
            "run {} record {}: posted as posting {} (run {})",
            a.run_id,
            a.record_no,
            decision.posting_id.unwrap_or(0),
            run.run_id
        ),
        (DecisionKind::Post, true) => format!(
            "run {} record {}: already posted as posting {}, with the same content; the \
             decision is recorded (run {}), nothing posted twice",
            a.run_id,
            a.record_no,
            decision.posting_id.unwrap_or(0),
            run.run_id
        ),
        (DecisionKind::Reject, _) => format!(
            "run {} record {}: rejected, never to post (run {})",
            a.run_id, a.record_no, run.run_id
        ),
    }
}

pub(crate) async fn reverse(g: &GlobalOpts, a: &ReverseArgs) -> u8 {
    if let Some(c) = require_reason(&a.reason) {
        return c;
    }
    let target = match (&a.run_id, &a.key) {
        (Some(id), _) => ReverseTarget::Run(*id),
        (None, Some(k)) => ReverseTarget::Key {
            posting_key: k.clone(),
            operation: a.operation.clone(),
        },
        (None, None) => return exit::USAGE,
    };
    let what = match &target {
        ReverseTarget::Run(id) => format!("run {id}"),
        ReverseTarget::Key { posting_key, .. } => format!("posting key {posting_key}"),
    };
    let by = actor_name(&a.by);
    with_ledger(g, async |ledger| {
        if let Some(code) = require_tenant(g, ledger).await {
            return code;
        }
        if let ReverseTarget::Run(id) = target
            && let Some(c) = run_exists(g, ledger, id).await
        {
            return c;
        }
        let who = Actor {
            tenant: &g.tenant,
            reason: &a.reason,
            by: &by,
            at: chrono::Utc::now(),
        };
        match reversed(g, &what, ledger.reverse(&who, &target).await) {
            Ok(run) => print_reversed(g, a, &what, &run),
            Err(code) => code,
        }
    })
    .await
}

/// The compensating run, or the exit code of a reversal that did nothing (said).
fn reversed(
    g: &GlobalOpts,
    what: &str,
    res: Result<Reversal, LedgerError>,
) -> Result<Box<RunInfo>, u8> {
    match res {
        Ok(Reversal::Reversed(run)) => Ok(run),
        Ok(Reversal::NothingToReverse) => {
            errln!(
                "clearledger: {what}: no posting to reverse for tenant {:?} (a run whose records \
                 were all duplicates posted nothing: reverse the run that posted them)",
                g.tenant
            );
            Err(exit::NOT_FOUND)
        }
        Ok(Reversal::OfCompensation) => {
            errln!(
                "clearledger: {what} is a compensation: a compensation is not reversed (that \
                 would move the money back under a compensation's name); post the movement \
                 anew instead"
            );
            Err(exit::USAGE)
        }
        Ok(Reversal::Ambiguous(ops)) => {
            errln!(
                "clearledger: {what} names postings of several operations ({}): say which with \
                 --operation",
                ops.join(", ")
            );
            Err(exit::USAGE)
        }
        Err(e) => Err(action_error(&e)),
    }
}

/// Prints the compensating run (JSON, or one line unless --quiet); the exit code.
fn print_reversed(g: &GlobalOpts, a: &ReverseArgs, what: &str, run: &RunInfo) -> u8 {
    let printed = if a.json {
        outln!("{}", reverse_json(run, what))
    } else if g.quiet {
        Ok(())
    } else {
        outln!(
            "{what}: reversed as run {}: {} postings: {} compensated, {} compensated before (duplicates){}",
            run.run_id,
            run.records,
            run.posted,
            run.duplicates,
            totals_text(run)
        )
    };
    match printed {
        Ok(()) => exit::OK,
        Err(e) => after_commit(&out::describe(&e), run.run_id),
    }
}

async fn run_exists(g: &GlobalOpts, ledger: &mut Ledger, id: i64) -> Option<u8> {
    match ledger.run(&g.tenant, id).await {
        Ok(Some(_)) => None,
        Ok(None) => {
            errln!("clearledger: no run {id} for tenant {:?}", g.tenant);
            Some(exit::NOT_FOUND)
        }
        Err(e) => Some(infra_error(&e)),
    }
}

fn reverse_json(run: &RunInfo, what: &str) -> serde_json::Value {
    json!({
        "status": "reversed", "reversed": what, "run_id": run.run_id, "records": run.records,
        "posted": run.posted, "duplicates": run.duplicates, "totals": run.totals,
    })
}

/// "; USD 1,234.56 (4 postings)" per currency.
pub(crate) fn totals_text(run: &RunInfo) -> String {
    run.totals
        .iter()
        .map(|t| {
            format!(
                "; {} {} ({} posted)",
                t.currency,
                format_minor(t.amount_minor, &t.currency),
                t.posted
            )
        })
        .collect()
}

/// A ledger failure of an action: committed or not, as for an ingest.
fn action_error(e: &LedgerError) -> u8 {
    match e {
        LedgerError::AfterCommit { run_id, source, .. } => after_commit(
            &format_args!("reading the run back failed ({source})"),
            *run_id,
        ),
        // Not the database's fault: the same every time, so not "safe to retry".
        e @ LedgerError::CompensationIncomplete { .. } => {
            errln!("clearledger: {e}");
            exit::ATTENTION
        }
        e => infra_error(e),
    }
}
