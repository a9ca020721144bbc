//! `clearledger report`: the per-record report of a run, produced again from the ledger.

use super::{GlobalOpts, exit, infra_error, out, require_tenant, with_ledger};
use crate::ledger::{self, Ledger, RunInfo};
use crate::report::{ReportFormat, ReportWriter};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// A run id (number), or a file_id (every run of that file, oldest first).
    #[arg(value_name = "RUN_ID|FILE_ID")]
    pub id: String,
    /// Output format (default: by --output's extension, else CSV).
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// Of a reconciliation run: the correction postings it made (the per-record report,
    /// kind `correction`) instead of its items.
    #[arg(long)]
    pub postings: bool,
    /// Write to PATH instead of standard output.
    #[arg(long, short, value_name = "PATH")]
    pub output: Option<PathBuf>,
}

pub(crate) async fn run(g: &GlobalOpts, a: &ReportArgs) -> u8 {
    with_ledger(g, async |ledger| print(g, a, ledger).await).await
}

async fn print(g: &GlobalOpts, a: &ReportArgs, ledger: &mut Ledger) -> u8 {
    if let Some(code) = require_tenant(g, ledger).await {
        return code;
    }
    let runs = match find_runs(g, a, ledger).await {
        Ok(runs) => runs,
        Err(code) => return code,
    };
    let format = a.format.unwrap_or_else(|| {
        a.output
            .as_deref()
            .map(ReportFormat::from_path)
            .unwrap_or(ReportFormat::Csv)
    });
    // A reconciliation run's report is its items (docs/operators.md, "Reconciliation").
    if let [run] = runs.as_slice()
        && run.kind == ledger::RunKind::Reconcile
        && !a.postings
    {
        return reconciliation(g, a, ledger, run.run_id, format).await;
    }
    let out = match output(a) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let mut w = match ReportWriter::new(format, out, false) {
        Ok(w) => w,
        Err(e) => {
            errln!("clearledger: cannot write the report: {e}");
            return exit::INFRASTRUCTURE;
        }
    };
    for run in &runs {
        if run.status_word() == "needs_attention" && !g.quiet {
            errln!(warn:
                "run {} needs_attention: {} conflicts, {} held; their rows say why",
                run.run_id,
                run.conflicts,
                run.held
            );
        }
        if run.status == ledger::RunStatus::Rejected {
            if let Err(code) = print_findings(g, ledger, run.run_id).await {
                return code;
            }
            continue;
        }
        match ledger
            .report_rows(&g.tenant, run.run_id, &mut |row| w.write(row))
            .await
        {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return report_failed(&e, a),
            Err(e) => return infra_error(&e),
        }
    }
    match w.finish() {
        Ok(()) => exit::OK,
        Err(e) => report_failed(&e, a),
    }
}

/// The runs `id` names: one run by its number, or every run of a file_id, oldest first;
/// none is exit 3 (said).
async fn find_runs(
    g: &GlobalOpts,
    a: &ReportArgs,
    ledger: &mut Ledger,
) -> Result<Vec<RunInfo>, u8> {
    match a.id.parse::<i64>() {
        Ok(run_id) => match ledger.run(&g.tenant, run_id).await {
            Ok(Some(r)) => Ok(vec![r]),
            Ok(None) => {
                errln!("clearledger: no run {run_id} for tenant {:?}", g.tenant);
                Err(exit::NOT_FOUND)
            }
            Err(e) => Err(infra_error(&e)),
        },
        Err(_) => match ledger.runs(&g.tenant, Some(&a.id), i64::MAX).await {
            Ok(mut v) if !v.is_empty() => {
                v.reverse();
                Ok(v)
            }
            Ok(_) => {
                errln!(
                    "clearledger: no run of file_id {:?} for tenant {:?}",
                    a.id,
                    g.tenant
                );
                Err(exit::NOT_FOUND)
            }
            Err(e) => Err(infra_error(&e)),
        },
    }
}

/// A rejected run has no rows: its findings, on standard error.
async fn print_findings(g: &GlobalOpts, ledger: &mut Ledger, run_id: i64) -> Result<(), u8> {
    errln!("run {run_id}: file rejected, nothing posted; its findings:");
    let fs = ledger
        .findings(&g.tenant, run_id)
        .await
        .map_err(|e| infra_error(&e))?;
    for f in fs {
        errln!(
            "  line {}, record {}, byte {}: {} [{}] {} {}: expected {}, found {:?}",
            f.line,
            f.record_index,
            f.byte_offset,
            f.severity,
            f.code,
            f.field.unwrap_or_default(),
            f.columns
                .map(|c| format!("(columns {c})"))
                .unwrap_or_default(),
            f.expected,
            f.found
        );
    }
    Ok(())
}

/// `report RUN` of a reconciliation run: its items, as `reconcile --report` wrote them.
async fn reconciliation(
    g: &GlobalOpts,
    a: &ReportArgs,
    ledger: &mut Ledger,
    run_id: i64,
    format: ReportFormat,
) -> u8 {
    let r = match ledger.stored_reconciliation(&g.tenant, run_id).await {
        Ok(Some(r)) => r,
        Ok(None) => {
            errln!("clearledger: run {run_id} is a reconciliation that recorded no items");
            return exit::NOT_FOUND;
        }
        Err(e) => return infra_error(&e),
    };
    if r.summary.needs_attention > 0 && !g.quiet {
        errln!(warn:
            "run {run_id} needs_attention: {} items; their rows say why",
            r.summary.needs_attention
        );
    }
    let out = match output(a) {
        Ok(o) => o,
        Err(code) => return code,
    };
    match crate::report::recon::write_items(format, out, &r.items) {
        Ok(()) => exit::OK,
        Err(e) => report_failed(&e, a),
    }
}

/// Where the report goes: `--output`'s file (created), else standard output; a file that
/// cannot be created is said and is exit 4.
fn output(a: &ReportArgs) -> Result<Box<dyn std::io::Write + Send>, u8> {
    match &a.output {
        Some(p) => match std::fs::File::create(p) {
            Ok(f) => Ok(Box::new(f)),
            Err(e) => {
                errln!("clearledger: cannot write {}: {e}", p.display());
                Err(exit::INFRASTRUCTURE)
            }
        },
        None => Ok(Box::new(std::io::stdout())),
    }
}

/// The exit code once the report could not be written: to standard output, a closed pipe
/// ends quietly; anything else is said and is an infrastructure failure (nothing committed).
fn report_failed(e: &std::io::Error, a: &ReportArgs) -> u8 {
    if a.output.is_none() {
        return out::stdout_failed(e, exit::OK);
    }
    errln!("clearledger: cannot write the report: {e}");
    exit::INFRASTRUCTURE
}
