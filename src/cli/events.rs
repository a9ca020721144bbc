//! What the program says on standard error, in the format `--log-format` chose.
//!
//! - `text` (the default): lines of text, as they always were (`errln!`), and `tracing`'s
//!   own text lines for the diagnostics it lets through (`RUST_LOG`, default `warn`).
//! - `json`: standard error carries one JSON object per line and nothing else, all written
//!   by one `tracing` JSON formatter: `{"timestamp", "level", "message", …fields,
//!   "target"}`. Every line the text format would print is an event of target
//!   [`TARGET`] (its text the `message`, its prefix `clearledger: ` left out); every
//!   finding is a `finding` event with its position; and every file an ingest takes ends
//!   in one event saying what became of it ([`FileEvent`]: `ingested`, `dry_run`,
//!   `rejected`, `failed`, and in inbox mode `archived`, `quarantined`, `failed`), with or
//!   without `--quiet`. Events of [`TARGET`] are always written whatever `RUST_LOG` says
//!   (they are the program's output, as the text lines are); `RUST_LOG` filters the rest.
//!
//! The format is chosen once, at start ([`init`]), for the whole process.

use super::LogFormat;
use crate::findings::{Finding, Severity};
use crate::report::finding_line;
use tracing::Level;
use tracing_subscriber::EnvFilter;

use crate::stderr::event_at;
pub(crate) use crate::stderr::{TARGET, json, message};

/// Sets the process's log format and installs the `tracing` subscriber that writes it on
/// standard error. Called once, first thing in `main`.
pub(crate) fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // A log line that cannot be written (standard error closed or full) is dropped:
        // reporting it would be `eprintln!`, which panics on the same standard error.
        .log_internal_errors(false);
    match format {
        LogFormat::Json => {
            crate::stderr::set_json();
            let filter = match format!("{TARGET}=info").parse() {
                Ok(d) => filter.add_directive(d),
                Err(_) => filter,
            };
            builder
                .with_env_filter(filter)
                .json()
                .flatten_event(true)
                .with_current_span(false)
                .with_span_list(false)
                .init();
            // A panic's message is an event too (its exit code stays 101).
            std::panic::set_hook(Box::new(|info| {
                message(Level::ERROR, format_args!("panicked: {info}"));
            }));
        }
        LogFormat::Text => builder.with_env_filter(filter).init(),
    }
}

/// Whether the command line asks for JSON logs, read from the arguments themselves: for
/// a command line clap refused, whose options were therefore not parsed.
pub(crate) fn json_requested(args: impl IntoIterator<Item = std::ffi::OsString>) -> bool {
    let mut prev_is_flag = false;
    for a in args {
        if a == "--log-format=json" || (prev_is_flag && a == "json") {
            return true;
        }
        prev_is_flag = a == "--log-format";
    }
    false
}

/// One finding of `file`: its text line, or (JSON) a `finding` event with every position
/// as a field, at level `error` or `warn` by its severity.
pub(crate) fn finding(file: &str, f: &Finding) {
    let line = finding_line(file, f);
    if !json() {
        super::out::err_line(Level::ERROR, format_args!("{line}"));
        return;
    }
    let level = match f.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARN,
    };
    event_at!(
        level,
        event = "finding",
        file,
        severity = f.severity.as_str(),
        code = f.code.as_str(),
        line = f.position.line(),
        record_index = f.position.record_index(),
        byte_offset = f.position.byte_offset(),
        field = f.field.map(|x| x.label()),
        columns = f.field.map(|x| x.columns()),
        path = f.position.path(),
        expected = f.expected.as_str(),
        found = f.found.as_str(),
        "{line}"
    );
}

/// A run's counts, as a file event carries them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FileCounts {
    pub records: i64,
    pub posted: i64,
    /// A dry run: what would post (`posted` is then 0).
    pub would_post: Option<i64>,
    pub duplicates: i64,
    pub conflicts: i64,
    pub held: i64,
    pub errors: i64,
    pub warnings: i64,
}

impl FileCounts {
    pub(crate) fn of_run(r: &crate::ledger::RunInfo) -> Self {
        FileCounts {
            records: r.records,
            posted: r.posted,
            would_post: None,
            duplicates: r.duplicates,
            conflicts: r.conflicts,
            held: r.held,
            errors: r.errors,
            warnings: r.warnings,
        }
    }
}

/// What became of one file an ingest took: one event per file (JSON logs only; the text
/// format says it in its own lines).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileEvent<'a> {
    /// `ingested`, `dry_run`, `rejected`, `failed` (plain mode); `archived`, `quarantined`,
    /// `failed` (inbox mode: `failed` leaves the file in the inbox).
    pub event: &'static str,
    pub file: &'a str,
    /// The run's status word (`completed`, `needs_attention`, `rejected`, `dry_run`), or
    /// what failed (`infrastructure_failure`, `changed_while_read`, `after_commit`).
    pub status: &'a str,
    pub run_id: Option<i64>,
    pub counts: Option<FileCounts>,
    /// Why the file was rejected or failed.
    pub reason: Option<&'a str>,
    /// A failure after the run committed (its report not written, say).
    pub error: Option<&'a str>,
    /// Where the inbox moved it.
    pub to: Option<&'a str>,
    pub seconds: Option<f64>,
}

impl FileEvent<'_> {
    fn level(&self) -> Level {
        match self.event {
            "rejected" | "quarantined" | "failed" => Level::ERROR,
            _ if self.error.is_some() => Level::ERROR,
            _ if self.status == "needs_attention" => Level::WARN,
            _ => Level::INFO,
        }
    }

    /// The event's text, for a human reading the log.
    pub(crate) fn text(&self) -> String {
        let run = self
            .run_id
            .map(|id| format!(" (run {id})"))
            .unwrap_or_default();
        // `run 3 completed`, as the text summary says it.
        let run_status = |file: &str| match self.run_id {
            Some(id) => format!("{file}: run {id} {}", self.status),
            None => format!("{file}: {}", self.status),
        };
        let reason = self.reason.unwrap_or("");
        let counts = self.counts.map(|c| match c.would_post {
            Some(w) => format!(
                "{} records: {w} would post, {} duplicates, {} conflicts, {} held",
                c.records, c.duplicates, c.conflicts, c.held
            ),
            None => format!(
                "{} records: {} posted, {} duplicates, {} conflicts, {} held",
                c.records, c.posted, c.duplicates, c.conflicts, c.held
            ),
        });
        let counts = counts.as_deref().unwrap_or("");
        let to = self.to.unwrap_or("");
        let mut s = match self.event {
            "rejected" => format!("{}: rejected{run}: {reason}; nothing posted", self.file),
            "quarantined" => format!(
                "{}: rejected{run}, quarantined as {to}: {reason}; nothing posted",
                self.file
            ),
            "failed" => format!("{}: {reason}", self.file),
            "dry_run" => format!("{}: dry run, nothing posted: {counts}", self.file),
            "archived" => format!("{}: {counts}; archived as {to}", run_status(self.file)),
            _ => format!("{}: {counts}", run_status(self.file)),
        };
        if let Some(e) = self.error {
            s.push_str("; then ");
            s.push_str(e);
        }
        s
    }
}

/// Writes a file's event (JSON logs; nothing in text mode).
pub(crate) fn file(e: &FileEvent) {
    if !json() {
        return;
    }
    let c = e.counts;
    event_at!(
        e.level(),
        event = e.event,
        file = e.file,
        status = e.status,
        run_id = e.run_id,
        records = c.map(|c| c.records),
        posted = c.map(|c| c.posted),
        would_post = c.and_then(|c| c.would_post),
        duplicates = c.map(|c| c.duplicates),
        conflicts = c.map(|c| c.conflicts),
        held = c.map(|c| c.held),
        errors = c.map(|c| c.errors),
        warnings = c.map(|c| c.warnings),
        reason = e.reason,
        error = e.error,
        to = e.to,
        seconds = e.seconds,
        "{}",
        e.text()
    );
}

/// The end of an inbox pass (JSON logs): what it took, as its text summary says.
pub(crate) fn inbox_pass(
    inbox: &str,
    taken: u64,
    archived: u64,
    needs_attention: u64,
    quarantined: u64,
    incomplete_skipped: usize,
) {
    if !json() {
        return;
    }
    tracing::info!(
        target: TARGET,
        event = "inbox_pass",
        inbox,
        taken,
        archived,
        needs_attention,
        quarantined,
        incomplete_skipped,
        "inbox {inbox}: {taken} files taken: {archived} archived ({needs_attention} need attention), \
         {quarantined} quarantined; {incomplete_skipped} incomplete files left for later"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_requested_in_either_spelling() {
        let args = |v: &[&str]| v.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert!(json_requested(args(&[
            "clearledger",
            "--log-format",
            "json",
            "x"
        ])));
        assert!(json_requested(args(&["clearledger", "--log-format=json"])));
        assert!(!json_requested(args(&[
            "clearledger",
            "--log-format",
            "text"
        ])));
        assert!(!json_requested(args(&["clearledger", "ingest", "json"])));
    }

    #[test]
    fn file_event_texts() {
        let counts = FileCounts {
            records: 4,
            posted: 3,
            duplicates: 0,
            conflicts: 1,
            ..FileCounts::default()
        };
        let e = FileEvent {
            event: "archived",
            file: "/in/a.ach",
            status: "needs_attention",
            run_id: Some(3),
            counts: Some(counts),
            reason: None,
            error: None,
            to: Some("/arch/a.ach"),
            seconds: None,
        };
        assert_eq!(
            e.text(),
            "/in/a.ach: run 3 needs_attention: 4 records: 3 posted, 0 duplicates, 1 conflicts, 0 held; archived as /arch/a.ach"
        );
        assert_eq!(e.level(), Level::WARN);
        let q = FileEvent {
            event: "quarantined",
            status: "rejected",
            reason: Some("1 errors, 0 warnings"),
            to: Some("/q/a.ach"),
            ..e
        };
        assert_eq!(
            q.text(),
            "/in/a.ach: rejected (run 3), quarantined as /q/a.ach: 1 errors, 0 warnings; nothing posted"
        );
        assert_eq!(q.level(), Level::ERROR);
    }
}
