//! `clearledger reconcile --bank-account A [--from DATE] [--to DATE] [--rules FILE]
//! [--report PATH] [--json] [--dry-run] [--post-corrections | --correct ITEM_KEY …]`:
//! the postings of the ledger accounts mapped to a bank account against its booked
//! statement entries. The engine is `crate::reconcile`; the run is recorded
//! by `ledger::reconcile`.

use super::{GlobalOpts, exit, infra_error, out, require_tenant, with_ledger};
use crate::ledger::LedgerError;
use crate::operator::check_account_name;
use crate::reconcile::rules::Rules;
use crate::reconcile::{ReconcileOutcome, ReconcileRequest, Reconciliation};
use crate::report::ReportFormat;
use crate::report::recon::write_items;
use chrono::NaiveDate;
use clap::Args;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(crate) struct ReconcileArgs {
    /// The bank account, as its statements name it (`clearledger statements` lists them);
    /// the ledger accounts mapped to it (`clearledger account map`) are our side.
    #[arg(long, value_name = "ACCOUNT")]
    pub bank_account: String,
    /// First day of the period (YYYY-MM-DD; default: no lower bound).
    #[arg(long, value_name = "DATE", value_parser = parse_date)]
    pub from: Option<NaiveDate>,
    /// Last day of the period and the cut-off of the balance check (YYYY-MM-DD; default:
    /// no upper bound, and `expected` is judged on the latest date read).
    #[arg(long, value_name = "DATE", value_parser = parse_date)]
    pub to: Option<NaiveDate>,
    /// Rules (TOML): day windows, tolerances with priorities, where corrections post
    /// (docs/operators.md, "Reconciliation"). Default: exact amounts, the bank booking from 1 day
    /// before to 3 days after our date, `expected` for 3 days.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Write one row per item to PATH (CSV; JSON lines when PATH ends in .jsonl, .ndjson
    /// or .json), `missing_ours` first. Kept in the database too: `clearledger report RUN`.
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,
    /// The summary as one JSON object: counts and amounts per outcome, changes since the
    /// previous run, balances, corrections.
    #[arg(long)]
    pub json: bool,
    /// Reconcile and report, record nothing (no run, no corrections).
    #[arg(long)]
    pub dry_run: bool,
    /// Post a correction for every item with a difference that is not ambiguous, not in
    /// another currency and not merely expected: a `correction` posting of Δ between the
    /// mapped account and the suspense account, keyed by the item.
    #[arg(long)]
    pub post_corrections: bool,
    /// Post the correction of this item only (its `item_key`); repeatable.
    #[arg(long, value_name = "ITEM_KEY", conflicts_with = "post_corrections")]
    pub correct: Vec<String>,
    /// The most postings and entries matched at once: the rows that share identifiers are
    /// read, matched and released from memory a part at a time (what no identifier ties
    /// likewise, a few amounts or a day's window at a time; rows tied together through
    /// shared identifiers, a batch say, are one part whatever its size). Memory holds one
    /// part, plus about 27 bytes for every posting and entry of the period (≈ 0.5 GB in all
    /// for 5 M payments). The items wait in a temporary file in $TMPDIR, /tmp by default
    /// (about 0.3 KB an item), sorted in batches of this size. Smaller: less memory, more
    /// parts (each one more database query); very small values (hundreds) raise memory again
    /// (a read buffer of at least 512 bytes per sorted batch). Every value gives the same
    /// items.
    #[arg(long, value_name = "ROWS", default_value_t = 20_000,
          value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub part_rows: u64,
}

fn parse_date(s: &str) -> Result<NaiveDate, String> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .map_err(|_| format!("expected a date YYYY-MM-DD, found {s:?}"))
}

pub(crate) async fn run(g: &GlobalOpts, a: &ReconcileArgs) -> u8 {
    if let Some(code) = check_args(a) {
        return code;
    }
    let rules = match &a.rules {
        None => Rules::default(),
        Some(p) => match load_rules(p) {
            Ok(r) => r,
            Err(code) => return code,
        },
    };
    let corrections = if a.post_corrections {
        Some(Vec::new())
    } else if !a.correct.is_empty() {
        Some(a.correct.clone())
    } else {
        None
    };
    let bar = spinner_bar(g, a);
    let spinner = bar
        .clone()
        .map(|pb| move |s: &'static str| pb.set_message(s));
    with_ledger(g, async |ledger| {
        if let Some(code) = require_tenant(g, ledger).await {
            return code;
        }
        let req = ReconcileRequest {
            tenant: &g.tenant,
            bank_account: crate::formats::statement::account_name(&a.bank_account),
            from: a.from,
            to: a.to,
            rules: &rules,
            dry_run: a.dry_run,
            corrections: corrections.clone(),
            at: chrono::Utc::now(),
            on_stage: spinner
                .as_ref()
                .map(|s| s as &(dyn Fn(&'static str) + Sync)),
            part_rows: a.part_rows as usize,
        };
        let res = ledger.reconcile(&req).await;
        if let Some(pb) = &bar {
            pb.finish_and_clear();
        }
        match reconciled(g, a, res) {
            Ok(r) => print(g, &r, a.report.as_deref(), a.json, a.dry_run),
            Err(code) => code,
        }
    })
    .await
}

/// Refused before the database is opened: a bank account name that cannot be, or a
/// period that ends before it begins, is a usage error.
fn check_args(a: &ReconcileArgs) -> Option<u8> {
    if let Err(e) = check_account_name(&a.bank_account) {
        errln!(
            "clearledger: invalid bank account {:?}: {e}",
            a.bank_account
        );
        return Some(exit::USAGE);
    }
    if let (Some(f), Some(t)) = (a.from, a.to)
        && f > t
    {
        errln!(
            "clearledger: --from {f} is after --to {t}: expected a period whose first day is not after its last"
        );
        return Some(exit::USAGE);
    }
    None
}

/// The rules of `--rules FILE`; a file that cannot be read or parsed is a usage error.
fn load_rules(p: &std::path::Path) -> Result<Rules, u8> {
    let text = match std::fs::read_to_string(p) {
        Ok(t) => t,
        Err(e) => {
            errln!("clearledger: cannot read the rules {}: {e}", p.display());
            return Err(exit::USAGE);
        }
    };
    Rules::parse(&p.display().to_string(), &text).map_err(|e| {
        errln!("clearledger: invalid rules: {e}");
        exit::USAGE
    })
}

/// A spinner with the step and the time taken, on a terminal (not with --quiet, nor
/// with JSON logs, whose standard error carries JSON alone).
fn spinner_bar(g: &GlobalOpts, a: &ReconcileArgs) -> Option<indicatif::ProgressBar> {
    (!g.quiet && !super::events::json() && std::io::stderr().is_terminal()).then(|| {
        let pb = indicatif::ProgressBar::new_spinner();
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "reconcile {prefix}: {spinner} {msg} ({elapsed})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        pb.set_prefix(a.bank_account.clone());
        pb.enable_steady_tick(std::time::Duration::from_millis(200));
        pb
    })
}

/// The reconciliation, or the exit code of one that could not be made (said).
fn reconciled(
    g: &GlobalOpts,
    a: &ReconcileArgs,
    res: Result<ReconcileOutcome, LedgerError>,
) -> Result<Box<Reconciliation>, u8> {
    match res {
        Ok(ReconcileOutcome::Done(r)) => Ok(r),
        Ok(ReconcileOutcome::NotMapped) => {
            errln!(
                "clearledger: no ledger account is mapped to bank account {:?} for tenant {:?}; map one with \
                 `clearledger account map --bank-account {} --ledger-account ACCOUNT`",
                a.bank_account,
                g.tenant,
                a.bank_account
            );
            Err(exit::USAGE)
        }
        Ok(ReconcileOutcome::UnknownItems(keys)) => {
            errln!(
                "clearledger: --correct names no item of this reconciliation: {}; the report's item_key column names them",
                keys.join(", ")
            );
            Err(exit::USAGE)
        }
        Ok(ReconcileOutcome::BadCorrectionAccounts(why)) => {
            errln!("clearledger: corrections not posted: {why}");
            Err(exit::USAGE)
        }
        Err(e) => Err(infra_error(&e)),
    }
}

/// Writes the report and the summary; the exit code (1 when an item needs attention).
pub(crate) fn print(
    g: &GlobalOpts,
    r: &Reconciliation,
    report: Option<&std::path::Path>,
    json: bool,
    dry_run: bool,
) -> u8 {
    let s = &r.summary;
    let attention = s.needs_attention > 0 || !s.balance_breaks.is_empty();
    let code = if attention { exit::ATTENTION } else { exit::OK };
    let committed = s.run_id.filter(|_| !dry_run);
    if let Some(p) = report {
        let res = std::fs::File::create(p)
            .and_then(|f| write_items(ReportFormat::from_path(p), Box::new(f), &r.items));
        if let Err(e) = res {
            let what = format!("cannot write the report {}: {e}", p.display());
            return match committed {
                Some(run) => super::after_commit(&what, run),
                None => {
                    errln!("clearledger: {what}");
                    exit::INFRASTRUCTURE
                }
            };
        }
    }
    let res = if json {
        let mut v = serde_json::to_value(s).unwrap_or_default();
        v["dry_run"] = serde_json::Value::Bool(dry_run);
        v["repeat_of_run_id"] = r
            .repeat_of
            .map(Into::into)
            .unwrap_or(serde_json::Value::Null);
        v["status"] = serde_json::Value::String(
            if attention {
                "needs_attention"
            } else {
                "reconciled"
            }
            .into(),
        );
        outln!("{v}")
    } else if g.quiet {
        Ok(())
    } else {
        text(r, dry_run)
    };
    match res {
        Ok(()) => code,
        Err(e) => out::stdout_failed(&e, code),
    }
}

fn text(r: &Reconciliation, dry_run: bool) -> std::io::Result<()> {
    let s = &r.summary;
    let run = match (dry_run, s.run_id, r.repeat_of) {
        (true, _, _) => "dry run (nothing recorded)".to_string(),
        (_, Some(id), Some(_)) => {
            format!("run {id} again: the same inputs and rules; nothing created")
        }
        (_, Some(id), None) => format!("run {id}"),
        _ => String::new(),
    };
    let period = match (s.from.as_deref(), s.to.as_deref()) {
        (None, None) => "every date".to_string(),
        (f, t) => format!("{}..{}", f.unwrap_or("…"), t.unwrap_or("…")),
    };
    outln!(
        "reconciliation {run}: bank account {} ({}), {period}, as of {}: {} postings and {} entries read, {} items",
        s.bank_account,
        s.ledger_accounts.join(", "),
        s.as_of.as_deref().unwrap_or("-"),
        s.postings_read,
        s.entries_read,
        s.items
    )?;
    break_lines(&s.balance_breaks)?;
    outcome_lines(r)?;
    if let Some(prev) = s.changes.previous_run_id {
        outln!(
            "  since run {prev}: {} new items, {} outcomes changed, {} items gone",
            s.changes.new_items,
            s.changes.changed_outcomes,
            s.changes.gone_items
        )?;
    }
    balance_lines(&s.balances)?;
    if s.corrections_posted + s.corrections_duplicate > 0 {
        outln!(
            "  corrections: {} posted ({}), {} posted before",
            s.corrections_posted,
            corrections_amount(r),
            s.corrections_duplicate
        )?;
    }
    if s.needs_attention > 0 {
        outln!("needs attention: {} items", s.needs_attention)?;
    }
    Ok(())
}

/// One line per outcome and currency: the items and their totals, by the currency's exponent
/// (a sum over currencies would have none). The JSON summary keeps the minor units.
fn outcome_lines(r: &Reconciliation) -> std::io::Result<()> {
    for o in crate::reconcile::Outcome::ALL {
        let of_outcome = r
            .by_currency
            .range((o.as_str().to_string(), String::new())..)
            .take_while(|((outcome, _), _)| outcome == o.as_str());
        for ((_, ccy), t) in of_outcome {
            let m = |v: i64| crate::money::format_amount(v, ccy);
            outln!(
                "  {:<26} {:>8} items  ours {:>16}  theirs {:>16}  Δ {:>14}",
                o.as_str(),
                t.items,
                m(t.our_amount_minor),
                m(t.their_amount_minor),
                m(t.delta_minor)
            )?;
        }
    }
    Ok(())
}

/// The corrections' total by its currency's exponent, when the items are in one currency
/// (corrections post in the currency of the items they correct); else in minor units.
fn corrections_amount(r: &Reconciliation) -> String {
    let v = r.summary.corrections_amount_minor;
    let mut currencies: Vec<&str> = r.by_currency.keys().map(|(_, c)| c.as_str()).collect();
    currencies.sort_unstable();
    currencies.dedup();
    match currencies.as_slice() {
        [c] => crate::money::format_amount(v, c),
        _ => format!("{v} minor units"),
    }
}

/// First, what the entries cannot explain: each statement recorded unbalanced.
fn break_lines(breaks: &[crate::reconcile::StatementBreak]) -> std::io::Result<()> {
    for b in breaks {
        let m = |v: i64| crate::money::format_amount(v, b.currency.as_deref().unwrap_or(""));
        outln!(
            "  UNBALANCED statement {}{} of {} ({}): expected {}, found {}, difference {}",
            b.stmt_id,
            b.sequence
                .as_deref()
                .map(|q| format!(" seq {q}"))
                .unwrap_or_default(),
            b.date.as_deref().unwrap_or("-"),
            b.kind,
            m(b.expected_minor),
            m(b.found_minor),
            m(b.difference_minor)
        )?;
    }
    Ok(())
}

/// One line per currency: the ledger's balance against the statement's, each amount by
/// its currency's exponent (`--json` keeps the minor units, in `*_minor` fields).
fn balance_lines(balances: &[crate::reconcile::BalanceRow]) -> std::io::Result<()> {
    for b in balances {
        let m = |v: i64| crate::money::format_amount(v, &b.currency);
        match (b.statement_closing_minor, b.drift_minor) {
            (Some(c), Some(d)) => outln!(
                "  balance {}: ledger {}, statement {} ({}), drift {}",
                b.currency,
                m(b.ledger_balance_minor),
                m(c),
                b.statement_date.as_deref().unwrap_or("-"),
                m(d)
            )?,
            _ => outln!(
                "  balance {}: ledger {}, no statement balance",
                b.currency,
                m(b.ledger_balance_minor)
            )?,
        }
    }
    Ok(())
}
