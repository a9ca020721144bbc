//! `clearledger ingest`: post files, one run each, and report every record.

use super::events::{self, FileCounts, FileEvent};
use super::{
    GlobalOpts, after_commit, exit, infra_error, out, require_tenant, run_list, with_ledger,
};
use crate::findings::{Finding, FindingCode, Severity};
use crate::formats::detect::FileFormat;
use crate::ingest::{IngestError, IngestOptions, IngestOutcome, Input, Stage, ingest_file};
use crate::ledger::Ledger;
use crate::report::{JsonFinding, ReportFormat, ReportWriter, finding_line};
use clap::{Args, ValueEnum};
use serde_json::json;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Attempts of one run when the database reports a retryable failure.
const RUN_ATTEMPTS_MAX: u32 = 3;

#[derive(Debug, Args)]
pub(crate) struct IngestArgs {
    /// Files to ingest, each in its own run (`-` reads standard input).
    #[arg(
        value_name = "FILE",
        required_unless_present = "inbox",
        conflicts_with = "inbox"
    )]
    pub files: Vec<PathBuf>,
    /// Unattended mode (cron, systemd timers): ingest every complete file in DIR. A file is
    /// complete when its name does not start with `.` nor end in `.part` or `.tmp`, and it
    /// was not modified in the last --min-age seconds. Each committed file moves to
    /// --archive (with its report beside it), each rejected one to --quarantine with a
    /// `.error.txt` beside it. Two runs on one inbox at once: the second exits at once.
    #[arg(long, value_name = "DIR", requires_all = ["archive", "quarantine"], conflicts_with_all = ["dry_run", "report"])]
    pub inbox: Option<PathBuf>,
    /// Where committed files go (inbox mode).
    #[arg(long, value_name = "DIR")]
    pub archive: Option<PathBuf>,
    /// Where rejected files go, each with NAME.error.txt (inbox mode).
    #[arg(long, value_name = "DIR")]
    pub quarantine: Option<PathBuf>,
    /// Inbox mode: skip files modified less than this many seconds ago (still being written).
    #[arg(long, value_name = "SECONDS", default_value_t = 2)]
    pub min_age: u64,
    /// Input format (auto: a bank statement — camt.052/053/054, BAI2 (`01,` first), SWIFT
    /// MT940/MT942 — is detected from its content and recorded on the bank's side; else ISO
    /// 20022 when the file starts with `<` after an optional BOM, NACHA otherwise; a gzip or
    /// zip archive, a PDF, UTF-16 text that is not XML with a byte-order mark, UTF-32 text,
    /// another SWIFT FIN message, SWIFT MT fields without `:20:` and `:25:`, JSON or CSV is
    /// rejected with one finding saying what it is). `nacha` reads as NACHA any file that is not
    /// plainly another kind (a file detected as XML, a statement, JSON, CSV or an archive is
    /// still refused with that one finding).
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// Write the per-record report to PATH (CSV; JSON lines when PATH ends in .jsonl,
    /// .ndjson or .json). The report is also kept in the database: see `report`.
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,
    /// Report format, overriding the one chosen by extension.
    #[arg(long, value_enum)]
    pub report_format: Option<ReportFormat>,
    /// Print one JSON object per file on stdout (file_id, sha256, format, records,
    /// posted, duplicates, conflicts, held, status, ...), instead of text.
    #[arg(long)]
    pub json: bool,
    /// Classify every record against the ledger (what would post, what duplicates what,
    /// what conflicts) and write the same report, posting and journaling nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub nacha: super::NachaRuleArgs,
    /// Post NACHA entries that equal an entry of another file of the same immediate
    /// origin (same company, trace number, transaction code, RDFI routing and account,
    /// amount and effective entry date, in a file created within --resend-window-days): by
    /// default such an entry is held and reported with the entry it equals, because a file
    /// regenerated with a new file ID modifier or creation time is the most common way a
    /// batch is posted twice.
    #[arg(long)]
    pub accept_resent: bool,
    /// Days between two files' creation dates within which an equal entry counts as
    /// re-sent.
    #[arg(long, value_name = "DAYS", default_value_t = 10)]
    pub resend_window_days: u32,
    /// Refuse a bank statement file whose balances do not add up (closing balance other
    /// than opening plus entries, or an opening that breaks the chain from the previous
    /// statement). By default such a statement is recorded with its entries and marked
    /// unbalanced (expected, found, difference: `clearledger statements`), and the run
    /// exits 1, needs attention.
    #[arg(long)]
    pub strict_balances: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Auto,
    Nacha,
    Iso20022,
}

impl Format {
    pub(crate) fn file_format(self) -> Option<FileFormat> {
        match self {
            Format::Auto => None,
            Format::Nacha => Some(FileFormat::Nacha),
            Format::Iso20022 => Some(FileFormat::Iso20022),
        }
    }
}

pub(crate) async fn run(g: &GlobalOpts, a: &IngestArgs) -> u8 {
    with_ledger(g, async |ledger| {
        // Once, before any file (or the inbox) is read: an unknown tenant is a usage error.
        if let Some(code) = require_tenant(g, ledger).await {
            return code;
        }
        match &a.inbox {
            Some(inbox) => super::inbox::run(g, a, ledger, inbox).await,
            None => ingest_files(g, a, ledger).await,
        }
    })
    .await
}

/// Plain mode: each file its own run, one report for them all.
async fn ingest_files(g: &GlobalOpts, a: &IngestArgs, ledger: &mut Ledger) -> u8 {
    let mut writer = None;
    if let Some(path) = &a.report {
        let format = a
            .report_format
            .unwrap_or_else(|| ReportFormat::from_path(path));
        match std::fs::File::create(path)
            .and_then(|f| ReportWriter::new(format, Box::new(f), a.dry_run))
        {
            Ok(w) => writer = Some(w),
            Err(e) => {
                errln!(
                    "clearledger: cannot write the report {}: {e}",
                    path.display()
                );
                return exit::INFRASTRUCTURE;
            }
        }
    }
    let mut code = exit::OK;
    // The committed runs whose rows went to the report.
    let mut reported = Vec::new();
    for file in &a.files {
        let r = ingest_one(g, a, ledger, file, writer.as_mut()).await;
        events::file(&r.event(r.event, None));
        code = code.max(r.code);
        if !r.rejected {
            reported.extend(r.run_id);
        }
        if r.stop {
            return code;
        }
    }
    if let Some(w) = writer
        && let Err(e) = w.finish()
    {
        // Each run's rows were flushed after it, so this is rare; the runs are named.
        let what = format_args!("the report could not be written ({e})");
        return match reported.as_slice() {
            [] => {
                errln!("clearledger: {what}");
                code.max(exit::INFRASTRUCTURE)
            }
            [id] => after_commit(&what, *id),
            ids => {
                errln!(
                    "clearledger: {what}; committed as {}; each report can be printed again with \
                     `clearledger report N`",
                    run_list(ids)
                );
                exit::AFTER_COMMIT
            }
        };
    }
    code
}

/// How one file ended, for the caller (plain or inbox mode).
#[derive(Debug)]
pub(crate) struct FileResult {
    /// The file as named in messages (`-` for standard input).
    pub file: String,
    /// Exit code this file alone would give.
    pub code: u8,
    /// Stop processing further files (infrastructure failure, configuration error, or a
    /// failure after the commit: then `code` is `exit::AFTER_COMMIT`).
    pub stop: bool,
    /// The run id, when a run was committed (completed or rejected).
    pub run_id: Option<i64>,
    /// The file was rejected (or unreadable): nothing of it posted.
    pub rejected: bool,
    /// The run committed but its report rows could not all be written (or read back).
    pub report_failed: bool,
    /// Why the file was rejected, one finding or message a line.
    pub rejection: Vec<String>,
    /// What became of the file, for its log event (`events::FileEvent`): `ingested`,
    /// `dry_run`, `rejected` or `failed`.
    pub event: &'static str,
    /// The run's status word (`RunInfo::status_word`, `dry_run`), or what failed.
    pub status: &'static str,
    pub counts: Option<FileCounts>,
    /// Why it was rejected or failed, in one line.
    pub reason: Option<String>,
    /// What failed after the run committed.
    pub error: Option<String>,
    pub seconds: f64,
}

impl FileResult {
    /// The file's log event; `event` and `to` as the caller (the inbox) names them.
    pub(crate) fn event<'a>(&'a self, event: &'static str, to: Option<&'a str>) -> FileEvent<'a> {
        FileEvent {
            event,
            file: &self.file,
            status: self.status,
            run_id: self.run_id,
            counts: self.counts,
            reason: self.reason.as_deref(),
            error: self.error.as_deref(),
            to,
            seconds: Some(self.seconds),
        }
    }

    /// Ends the file as a failure before anything committed: `code`, stop, `status` and
    /// `reason` for its event.
    fn failed(self, code: u8, status: &'static str, reason: String) -> Self {
        FileResult {
            code,
            stop: true,
            event: "failed",
            status,
            reason: Some(reason),
            ..self
        }
    }
}

/// The stages of a file's run as the progress bar shows them: the bytes read while
/// parsing (with their rate and ETA), then a spinner for the stages that read nothing.
impl crate::ingest::Progress for indicatif::ProgressBar {
    fn set_length(&self, bytes: u64) {
        indicatif::ProgressBar::set_length(self, bytes);
    }
    fn read(&self, bytes: u64) {
        self.inc(bytes);
    }
    fn stage(&self, stage: Stage) {
        if stage != Stage::Parsing {
            self.set_style(
                indicatif::ProgressStyle::with_template("{prefix}: {msg} {spinner} {elapsed}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            self.enable_steady_tick(std::time::Duration::from_millis(120));
        }
        self.set_message(stage.as_str());
    }
}

/// The progress bar of one file: drawn on standard error when it is a terminal, not with
/// `--quiet`, nor with JSON logs (whose standard error carries JSON alone).
fn progress_bar(g: &GlobalOpts, name: &str) -> Option<indicatif::ProgressBar> {
    if g.quiet || events::json() || !std::io::stderr().is_terminal() {
        return None;
    }
    let pb = indicatif::ProgressBar::new(0);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix}: {msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    pb.set_prefix(name.to_string());
    crate::ingest::Progress::stage(&pb, Stage::Parsing);
    Some(pb)
}

/// Ingests one file: one run, its summary printed, its report rows written to `writer`.
pub(crate) async fn ingest_one(
    g: &GlobalOpts,
    a: &IngestArgs,
    ledger: &mut Ledger,
    file: &Path,
    writer: Option<&mut ReportWriter>,
) -> FileResult {
    let input = if file.as_os_str() == "-" {
        Input::Stdin
    } else {
        Input::Path(file.to_path_buf())
    };
    let name = input.name();
    let mut result = FileResult::new(name.clone());
    let progress = progress_bar(g, &name);
    let t0 = Instant::now();
    let res = run_with_retries(ledger, &input, &ingest_options(g, a), progress.clone()).await;
    let secs = t0.elapsed().as_secs_f64();
    result.seconds = secs;
    // The bar stays for the report of a run that has one to write (showing that stage),
    // and goes before anything else is said.
    let keep_bar = writer.is_some()
        && matches!(
            res,
            Ok(IngestOutcome::Completed { .. } | IngestOutcome::DryRun { .. })
        );
    let progress = match progress {
        Some(pb) if keep_bar => Some(pb),
        Some(pb) => {
            pb.finish_and_clear();
            None
        }
        None => None,
    };
    let one = OneFile {
        g,
        a,
        name,
        progress,
        secs,
    };
    match res {
        Ok(outcome) => one.outcome(ledger, writer, result, outcome).await,
        Err(e) => one.error(result, e),
    }
}

/// The run's options, from the command line.
fn ingest_options(g: &GlobalOpts, a: &IngestArgs) -> IngestOptions {
    IngestOptions {
        tenant: g.tenant.clone(),
        dry_run: a.dry_run,
        validate: a.nacha.options(),
        resend_window_days: (!a.accept_resent).then_some(a.resend_window_days),
        format: a.format.file_format(),
        strict_balances: a.strict_balances,
        on_commit: None,
    }
}

/// Runs `ingest_file`. A retryable database failure (deadlock, serialization failure)
/// rolled the whole run back; a file on disk can be read again, so the run is retried,
/// bounded.
async fn run_with_retries(
    ledger: &mut Ledger,
    input: &Input,
    opts: &IngestOptions,
    progress: Option<indicatif::ProgressBar>,
) -> Result<IngestOutcome, IngestError> {
    let now = || chrono::Utc::now();
    let sink =
        progress.map(|pb| std::sync::Arc::new(pb) as std::sync::Arc<dyn crate::ingest::Progress>);
    let mut attempt = 1;
    loop {
        let res = ingest_file(ledger, input, opts, &now, sink.clone()).await;
        match &res {
            Err(IngestError::Ledger(e))
                if e.is_retryable()
                    && attempt < RUN_ATTEMPTS_MAX
                    && matches!(input, Input::Path(_)) =>
            {
                let name = input.name();
                tracing::warn!(file = %name, attempt, error = %e, "retryable database failure; the run was rolled back and is retried");
                tokio::time::sleep(std::time::Duration::from_millis(100 * attempt as u64)).await;
                attempt += 1;
            }
            _ => break res,
        }
    }
}

impl FileResult {
    /// A file not yet run: nothing committed, a failure until said otherwise.
    fn new(file: String) -> Self {
        FileResult {
            file,
            code: exit::OK,
            stop: false,
            run_id: None,
            rejected: false,
            report_failed: false,
            rejection: Vec::new(),
            event: "failed",
            status: "infrastructure_failure",
            counts: None,
            reason: None,
            error: None,
            seconds: 0.0,
        }
    }

    /// Ends the file as refused whole, nothing posted: `who` names it in the rejection,
    /// `msg` says why.
    fn refused(mut self, a: &IngestArgs, who: &str, msg: String) -> Self {
        self.code = exit::REJECTED;
        self.rejected = true;
        self.rejection.push(format!("{who}: {msg}"));
        self.event = "rejected";
        self.status = "rejected";
        self.reason = Some(msg.clone());
        if let Err(e) = report_unreadable(a, who, &msg) {
            self.code = out::stdout_failed(&e, self.code);
            self.stop = true;
        }
        self
    }
}

/// The conflicts `ingest` names under a run's summary line; the report has them all.
const CONFLICTS_SHOWN: i64 = 10;

/// `  record 2: conflict: amount: 187550 != 187551` (`entry 3: …` for a statement's) for
/// each of `shown`, then how many more the report holds.
fn print_conflicts(
    shown: &[(i64, String)],
    unit: &str,
    total: i64,
    run_id: i64,
) -> std::io::Result<()> {
    for (no, differences) in shown {
        outln!("  {unit} {no}: conflict: {differences}")?;
    }
    let more = total.saturating_sub(shown.len() as i64);
    if more > 0 {
        outln!("  … and {more} more conflicts: `clearledger report {run_id}` lists every one")?;
    }
    Ok(())
}

/// One file on its way once its run has ended: its name in messages, the run's
/// duration, and the progress bar while it is drawn.
struct OneFile<'a> {
    g: &'a GlobalOpts,
    a: &'a IngestArgs,
    name: String,
    progress: Option<indicatif::ProgressBar>,
    secs: f64,
}

impl OneFile<'_> {
    /// Lines said while the bar is drawn: the bar steps aside for them.
    fn said(&self, f: &mut dyn FnMut()) {
        match &self.progress {
            Some(pb) => pb.suspend(f),
            None => f(),
        }
    }

    /// What an ended run gives: committed, classified (dry run), or rejected.
    async fn outcome(
        &self,
        ledger: &mut Ledger,
        writer: Option<&mut ReportWriter>,
        result: FileResult,
        outcome: IngestOutcome,
    ) -> FileResult {
        match outcome {
            IngestOutcome::Completed {
                run,
                findings,
                bytes,
                fast_path,
                statements,
            } => {
                let s = self.summary(&run, &findings, bytes, fast_path, statements.as_deref());
                self.completed(ledger, writer, result, &s).await
            }
            IngestOutcome::DryRun {
                file,
                counts,
                sha256,
                rows,
                findings,
                bytes,
            } => {
                let result = self.dry_run_counted(result, &counts, &findings);
                // A dry run commits nothing: a failure here is `INFRASTRUCTURE`, safe to retry.
                if let Some(w) = writer
                    && let Err(e) = self.write_rows(w, &rows)
                {
                    errln!("clearledger: cannot write the report: {e}");
                    let reason = format!("cannot write the report: {e}");
                    return result.failed(exit::INFRASTRUCTURE, "infrastructure_failure", reason);
                }
                match self.print_dry_run(&file, &counts, &sha256, &findings, bytes) {
                    Ok(()) => result,
                    Err(e) => FileResult {
                        code: out::stdout_failed(&e, result.code),
                        stop: true,
                        error: Some(out::describe(&e)),
                        ..result
                    },
                }
            }
            IngestOutcome::Rejected {
                run,
                findings,
                bytes,
            } => {
                let s = self.summary(&run, &findings, bytes, false, None);
                self.rejected(result, &s)
            }
        }
    }

    fn summary<'s>(
        &'s self,
        run: &'s crate::ledger::RunInfo,
        findings: &'s [Finding],
        bytes: u64,
        fast_path: bool,
        statements: Option<&'s crate::statements::StatementRun>,
    ) -> crate::report::summary::Summary<'s> {
        crate::report::summary::Summary {
            file: &self.name,
            run,
            findings,
            bytes,
            seconds: self.secs,
            fast_path,
            statements,
        }
    }

    /// A committed run: said at once, its report rows written, its summary printed.
    async fn completed(
        &self,
        ledger: &mut Ledger,
        writer: Option<&mut ReportWriter>,
        mut result: FileResult,
        s: &crate::report::summary::Summary<'_>,
    ) -> FileResult {
        let (g, name, run) = (self.g, &self.name, s.run);
        let status = run.status_word();
        if status == "needs_attention" {
            result.code = exit::ATTENTION;
        }
        result.run_id = Some(run.run_id);
        result.event = "ingested";
        result.status = status;
        result.counts = Some(FileCounts::of_run(run));
        // Said before anything that can fail (the report, the summary): whatever fails
        // next, the run is known. With --quiet, a failure's message names it.
        self.said(&mut || {
            if !g.quiet {
                errln!(info: "clearledger: {name}: committed as run {}", run.run_id);
            }
            print_warnings(self.a, name, s.findings);
        });
        // Everything from here on is after the commit: a failure is `AFTER_COMMIT`,
        // never the "nothing committed, safe to retry" of `INFRASTRUCTURE`.
        let mut report_error = None;
        if let Some(w) = writer {
            report_error = self.write_run_report(ledger, w, run.run_id).await;
        }
        if let Some(pb) = &self.progress {
            pb.finish_and_clear();
        }
        if let Some(msg) = &report_error {
            result.code = after_commit(&format_args!("{name}: {msg}"), run.run_id);
            result.stop = true;
            result.report_failed = true;
            result.error = Some(msg.clone());
        }
        let show_conflicts = !self.a.json && !g.quiet && run.conflicts > 0;
        let conflicts = if !show_conflicts {
            Vec::new()
        } else {
            // What differs is the first thing an operator asks of a conflict: the first
            // few are said here, every one in the report (`--report`, `report RUN`).
            // A statement's conflicts are its entries', in its own journal.
            match s.statements {
                Some(_) => {
                    ledger
                        .statement_conflicts(&run.tenant, run.run_id, CONFLICTS_SHOWN)
                        .await
                }
                None => {
                    ledger
                        .run_conflicts(&run.tenant, run.run_id, CONFLICTS_SHOWN)
                        .await
                }
            }
            .unwrap_or_default()
        };
        let unit = if s.statements.is_some() {
            "entry"
        } else {
            "record"
        };
        if let Err(e) = self
            .print_completed(s, status, report_error.as_deref())
            .and_then(|()| match show_conflicts {
                true => print_conflicts(&conflicts, unit, run.conflicts, run.run_id),
                false => Ok(()),
            })
        {
            let what = out::describe(&e);
            result.code = after_commit(&format_args!("{name}: {what}"), run.run_id);
            result.stop = true;
            result.error.get_or_insert(what);
        }
        result
    }

    /// Writes the committed run's report rows, read back from the ledger; what failed.
    async fn write_run_report(
        &self,
        ledger: &mut Ledger,
        w: &mut ReportWriter,
        run_id: i64,
    ) -> Option<String> {
        if let Some(pb) = &self.progress {
            crate::ingest::Progress::stage(pb, Stage::WritingReport);
        }
        let res = ledger
            .report_rows(&self.g.tenant, run_id, &mut |row| w.write(row))
            .await;
        match res {
            Ok(Ok(())) => w
                .flush()
                .err()
                .map(|e| format!("the report could not be written ({e})")),
            Ok(Err(e)) => Some(format!("the report could not be written ({e})")),
            Err(e) => Some(format!(
                "the report could not be read from the database ({e})"
            )),
        }
    }

    /// A committed run's summary on stdout: JSON, or one line of text unless --quiet.
    fn print_completed(
        &self,
        s: &crate::report::summary::Summary<'_>,
        status: &str,
        report_error: Option<&str>,
    ) -> std::io::Result<()> {
        if self.a.json {
            let mut v = crate::report::summary::completed(s);
            if let Some(msg) = report_error {
                v["report_error"] = json!(msg);
            }
            outln!("{v}")
        } else if !self.g.quiet {
            self.print_completed_text(s, status)
        } else {
            Ok(())
        }
    }

    fn print_completed_text(
        &self,
        s: &crate::report::summary::Summary<'_>,
        status: &str,
    ) -> std::io::Result<()> {
        let (name, run, secs) = (&self.name, s.run, self.secs);
        if let Some(s) = s.statements {
            return outln!(
                "{name}: run {} {status}: {} statements ({} new, {} already recorded, {} recorded \
                 before with other content, {} unbalanced): {} entries: {} recorded, {} provisional, \
                 {} confirmed, {} duplicates, {} conflicts, {} held (sha256 {}) in {:.2} s",
                run.run_id,
                s.statements,
                s.statements_new,
                s.statements_duplicate,
                s.statements_conflict,
                s.unbalanced,
                s.entries,
                s.recorded,
                s.provisional,
                s.confirmed,
                s.duplicates,
                s.conflicts,
                s.held,
                run.sha256,
                secs,
            );
        }
        outln!(
            "{name}: run {} {status}: {} records: {} posted, {} duplicates, {} conflicts, {} held{} \
             (file_id {}, sha256 {}{}) in {:.2} s, {:.0} records/s",
            run.run_id,
            run.records,
            run.posted,
            run.duplicates,
            run.conflicts,
            run.held,
            super::actions::totals_text(run),
            run.file_id.as_deref().unwrap_or("-"),
            run.sha256,
            if s.fast_path {
                "; exact re-upload, replayed"
            } else {
                ""
            },
            secs,
            rate(run.records as f64, secs)
        )
    }

    /// A dry run's code and counts; its warnings said.
    fn dry_run_counted(
        &self,
        mut result: FileResult,
        counts: &crate::ledger::Counts,
        findings: &[Finding],
    ) -> FileResult {
        // A statement that would be recorded unbalanced needs attention as a conflict does.
        let unbalanced = findings.iter().any(|f| {
            matches!(
                f.code,
                FindingCode::BalanceMismatch | FindingCode::BalanceChain
            )
        });
        if counts.conflicts > 0 || counts.held > 0 || unbalanced {
            result.code = exit::ATTENTION;
        }
        result.event = "dry_run";
        result.status = "dry_run";
        result.counts = Some(FileCounts {
            records: counts.records as i64,
            posted: 0,
            would_post: Some(counts.posted as i64),
            duplicates: counts.duplicates as i64,
            conflicts: counts.conflicts as i64,
            held: counts.held as i64,
            errors: 0,
            warnings: findings.len() as i64,
        });
        self.said(&mut || print_warnings(self.a, &self.name, findings));
        result
    }

    /// Writes a dry run's would-be report rows.
    fn write_rows(
        &self,
        w: &mut ReportWriter,
        rows: &[crate::ledger::ReportRow],
    ) -> std::io::Result<()> {
        if let Some(pb) = &self.progress {
            crate::ingest::Progress::stage(pb, Stage::WritingReport);
        }
        let res = rows
            .iter()
            .try_for_each(|row| w.write(row))
            .and_then(|()| w.flush());
        if let Some(pb) = &self.progress {
            pb.finish_and_clear();
        }
        res
    }

    /// A dry run's summary on stdout: JSON, or one line of text unless --quiet.
    fn print_dry_run(
        &self,
        file: &crate::keys::FileIdentity,
        counts: &crate::ledger::Counts,
        sha256: &str,
        findings: &[Finding],
        bytes: u64,
    ) -> std::io::Result<()> {
        let (g, name, secs) = (self.g, &self.name, self.secs);
        if self.a.json {
            outln!(
                "{}",
                json!({
                    "file": name, "status": "dry_run", "run_id": null, "file_id": file.file_id,
                    "sha256": sha256, "format": file.format, "tenant": g.tenant,
                    "records": counts.records, "would_post": counts.posted, "posted": 0,
                    "duplicates": counts.duplicates, "conflicts": counts.conflicts, "held": counts.held,
                    "bytes": bytes, "seconds": secs,
                    "findings": findings.iter().map(JsonFinding::from).collect::<Vec<_>>(),
                })
            )
        } else if !g.quiet {
            outln!(
                "{name}: dry run, nothing posted: {} records: {} would post, {} duplicates, {} conflicts, {} held \
                 (file_id {}, sha256 {})",
                counts.records,
                counts.posted,
                counts.duplicates,
                counts.conflicts,
                counts.held,
                file.file_id,
                sha256
            )
        } else {
            Ok(())
        }
    }

    /// A rejected file: its findings said (JSON summary on stdout, or one line a finding
    /// on stderr), nothing posted.
    fn rejected(
        &self,
        mut result: FileResult,
        s: &crate::report::summary::Summary<'_>,
    ) -> FileResult {
        let (name, run, findings) = (&self.name, s.run, s.findings);
        result.code = exit::REJECTED;
        result.rejected = true;
        result.run_id = (run.run_id > 0).then_some(run.run_id);
        result.rejection = findings.iter().map(|f| finding_line(name, f)).collect();
        let errors = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        result.event = "rejected";
        result.status = "rejected";
        result.counts = Some(FileCounts {
            records: run.records,
            errors: errors as i64,
            warnings: (findings.len() - errors) as i64,
            ..FileCounts::default()
        });
        result.reason = Some(rejection_reason(name, findings, errors));
        if !self.a.json {
            for f in findings {
                events::finding(name, f);
            }
            errln!(
                "{name}: rejected{}: {errors} errors, {} warnings; nothing posted",
                if run.run_id > 0 {
                    format!(" (run {})", run.run_id)
                } else {
                    String::new()
                },
                findings.len() - errors
            );
        } else if let Err(e) = outln!("{}", crate::report::summary::rejected(s)) {
            result.stop = true;
            result.error = Some(out::describe(&e));
            result.code = match result.run_id {
                // The rejection was journaled: that is a commit.
                Some(id) => {
                    errln!(
                        "clearledger: {name}: {}; rejected and journaled as run {id}, nothing \
                         posted; its findings can be printed again with `clearledger report {id}`",
                        out::describe(&e)
                    );
                    exit::AFTER_COMMIT
                }
                None => out::stdout_failed(&e, result.code),
            };
        }
        result
    }

    /// A run that ended in an error: the file refused, or nothing done (safe to retry),
    /// or a failure after the commit.
    fn error(&self, result: FileResult, e: IngestError) -> FileResult {
        let name = &self.name;
        match e {
            IngestError::Read { path, source } => {
                result.refused(self.a, &path, format!("cannot read: {source}"))
            }
            e @ IngestError::Changed { .. } => {
                // Not the file's fault, nor settled: left where it is, safe to retry.
                errln!("clearledger: {e} (safe to retry once the file is complete)");
                if self.a.json {
                    // Nothing committed, the code is 4 already: a failed write changes nothing.
                    let _ = outln!(
                        "{}",
                        json!({"file": name, "status": "changed_while_read", "error": e.to_string()})
                    );
                }
                result.failed(exit::INFRASTRUCTURE, "changed_while_read", e.to_string())
            }
            // A value of the file the database cannot store: the file's fault, refused
            // whole, like an overflowing total.
            IngestError::Ledger(e) if e.is_unstorable_input() => {
                result.refused(self.a, name, e.to_string())
            }
            IngestError::Ledger(e @ crate::ledger::LedgerError::TotalOverflow) => {
                // The file's fault, not the database's: refused whole, and not worth a retry.
                result.refused(self.a, name, e.to_string())
            }
            IngestError::Ledger(crate::ledger::LedgerError::AfterCommit {
                run_id,
                rejected,
                source,
            }) => self.unread_after_commit(result, run_id, rejected, &source),
            IngestError::Ledger(e) => {
                let c = infra_error(&e);
                if self.a.json {
                    let status = if e.is_configuration() {
                        "configuration_error"
                    } else {
                        "infrastructure_failure"
                    };
                    let _ = outln!(
                        "{}",
                        json!({"file": name, "status": status, "error": e.to_string()})
                    );
                }
                result.failed(c, "infrastructure_failure", e.to_string())
            }
            e @ IngestError::Internal(_) => {
                errln!("clearledger: {name}: {e}");
                result.failed(
                    exit::INFRASTRUCTURE,
                    "infrastructure_failure",
                    e.to_string(),
                )
            }
        }
    }

    /// Committed, then the connection failed before the run was read back: no summary to
    /// print, but the run id is known and said.
    fn unread_after_commit(
        &self,
        mut result: FileResult,
        run_id: i64,
        rejected: bool,
        source: &dyn std::fmt::Display,
    ) -> FileResult {
        let name = &self.name;
        result.run_id = Some(run_id);
        result.rejected = rejected;
        result.report_failed = true;
        result.stop = true;
        let what = if rejected {
            format!("{name}: rejected, nothing posted; then reading the run back failed ({source})")
        } else {
            format!("{name}: reading the run back failed ({source})")
        };
        if rejected {
            result.rejection.push(format!(
                "{name}: rejected (run {run_id}): its findings: `clearledger report {run_id}`"
            ));
            result.event = "rejected";
            result.status = "rejected";
            result.reason = Some(format!("its findings: `clearledger report {run_id}`"));
        } else {
            result.event = "ingested";
            result.status = "committed";
        }
        result.error = Some(format!("reading the run back failed ({source})"));
        result.code = after_commit(&what, run_id);
        if self.a.json {
            let _ = outln!(
                "{}",
                json!({"file": name, "status": if rejected { "rejected" } else { "committed" },
                       "run_id": run_id, "error": what})
            );
        }
        result
    }
}

/// A rejection in one line: how many errors and warnings, and the first error.
fn rejection_reason(name: &str, findings: &[Finding], errors: usize) -> String {
    let counts = format!("{errors} errors, {} warnings", findings.len() - errors);
    match findings.iter().find(|f| f.severity == Severity::Error) {
        Some(f) => format!("{counts}; the first: {}", finding_line(name, f)),
        None => counts,
    }
}

use crate::report::summary::rate;

fn print_warnings(a: &IngestArgs, name: &str, findings: &[Finding]) {
    if !a.json {
        for f in findings {
            events::finding(name, f);
        }
    }
}

fn report_unreadable(a: &IngestArgs, name: &str, msg: &str) -> std::io::Result<()> {
    if a.json {
        outln!(
            "{}",
            json!({"file": name, "status": "rejected", "error": msg, "posted": 0})
        )?;
    } else {
        errln!("{name}: rejected: {msg}; nothing posted");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::ingest::{Progress, Stage};

    /// The bar names each stage as it begins (drawn only on a terminal: a hidden bar
    /// keeps the same state).
    #[test]
    fn the_progress_bar_names_each_stage_in_turn() {
        let pb = indicatif::ProgressBar::hidden();
        pb.set_prefix("a.ach");
        let said: Vec<String> = [Stage::Parsing, Stage::Committing, Stage::WritingReport]
            .into_iter()
            .map(|s| {
                Progress::stage(&pb, s);
                format!("{}: {}", pb.prefix(), pb.message())
            })
            .collect();
        assert_eq!(
            said,
            [
                "a.ach: parsing",
                "a.ach: committing",
                "a.ach: writing report"
            ]
        );
        Progress::set_length(&pb, 100);
        Progress::read(&pb, 40);
        assert_eq!((pb.length(), pb.position()), (Some(100), 40));
    }
}
