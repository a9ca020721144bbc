//! `clearledger runs`: recent ingests.

use super::{GlobalOpts, exit, infra_error, out, require_tenant, with_ledger};
use crate::ledger;
use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct RunsArgs {
    /// How many runs, newest first.
    #[arg(long, default_value_t = 20)]
    pub limit: i64,
    /// Only runs of this file_id.
    #[arg(long)]
    pub file_id: Option<String>,
    /// One JSON object per run.
    #[arg(long)]
    pub json: bool,
}

pub(crate) async fn run(g: &GlobalOpts, a: &RunsArgs) -> u8 {
    with_ledger(g, async |ledger| {
        if let Some(code) = require_tenant(g, ledger).await {
            return code;
        }
        let runs = match ledger.runs(&g.tenant, a.file_id.as_deref(), a.limit).await {
            Ok(r) => r,
            Err(e) => return infra_error(&e),
        };
        match print(a, &runs) {
            Ok(()) => exit::OK,
            Err(e) => out::stdout_failed(&e, exit::OK),
        }
    })
    .await
}

fn print(a: &RunsArgs, runs: &[ledger::RunInfo]) -> std::io::Result<()> {
    if a.json {
        for r in runs {
            // The status as the ingest summary says it (`needs_attention`).
            let mut v = serde_json::to_value(r).unwrap_or_default();
            v["status"] = serde_json::Value::from(r.status_word());
            outln!("{v}")?;
        }
    } else {
        outln!(
            "{:>6}  {:<15}  {:>8}  {:>8}  {:>8}  {:>8}  {:>6}  {:<27}  {:<45}  source",
            "run",
            "status",
            "records",
            "posted",
            "dups",
            "conflict",
            "held",
            "finished",
            "file_id"
        )?;
        for r in runs {
            outln!(
                "{:>6}  {:<15}  {:>8}  {:>8}  {:>8}  {:>8}  {:>6}  {:<27}  {:<45}  {}",
                r.run_id,
                r.status_word(),
                r.records,
                r.posted,
                r.duplicates,
                r.conflicts,
                r.held,
                r.finished_at.as_deref().unwrap_or("-"),
                r.file_id.as_deref().unwrap_or("-"),
                r.source_name
            )?;
        }
    }
    Ok(())
}
