//! `clearledger ingest --inbox DIR --archive DIR --quarantine DIR`: unattended ingestion
//! for cron and systemd timers.
//!
//! - A file is taken when it is complete: its name does not start with `.` and does not
//!   end in `.part` or `.tmp` (write to `NAME.part`, then rename), and it was not modified
//!   in the last `--min-age` seconds. Files are taken in name order.
//! - Each file is one run. After its transaction committed, the file moves to the archive
//!   with its per-record report beside it (`NAME.report.csv`); a rejected file moves to the
//!   quarantine with `NAME.error.txt` beside it. A name already taken gets `.1`, `.2`, ….
//! - An infrastructure failure stops the pass and leaves the file in the inbox: the next
//!   pass retries it.
//! - A failure after the commit (its report not written, standard output closed or full)
//!   still archives the file (without its report when that is what failed), then stops the
//!   pass with `exit::AFTER_COMMIT`: the next pass does not ingest it again.
//! - A crash after the commit but before the move leaves the file in the inbox; the next
//!   pass finds every record posted (all duplicates) and archives it then. Nothing doubles.
//! - Two passes on one inbox at once: the second finds the inbox lock (`DIR/.clearledger.lock`,
//!   an OS file lock released when the process ends, however it ends) and exits 0 at once.

use super::events::{self, FileEvent};
use super::ingest::{FileResult, IngestArgs, ingest_one};
use super::{GlobalOpts, after_commit, exit, out, run_list};
use crate::ledger::Ledger;
use crate::report::{ReportFormat, ReportWriter};
use serde_json::json;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

fn complete_files(inbox: &Path, min_age: Duration) -> std::io::Result<(Vec<PathBuf>, usize)> {
    let mut files = Vec::new();
    let mut incomplete = 0;
    let now = SystemTime::now();
    for entry in fs::read_dir(inbox)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let meta = entry.metadata()?;
        if !meta.is_file() || name.starts_with('.') {
            continue;
        }
        let young = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_none_or(|age| age < min_age);
        if name.ends_with(".part") || name.ends_with(".tmp") || young {
            incomplete += 1;
            continue;
        }
        files.push(entry.path());
    }
    files.sort();
    Ok((files, incomplete))
}

/// `dir/name`, or `dir/name.1`, `dir/name.2`, … whichever is free.
fn free_name(dir: &Path, name: &str) -> PathBuf {
    let first = dir.join(name);
    if !first.exists() {
        return first;
    }
    (1..)
        .map(|i| dir.join(format!("{name}.{i}")))
        .find(|p| !p.exists())
        .expect("a free name")
}

/// Moves a file, across file systems if need be (copy, sync, remove).
fn move_file(from: &Path, to: &Path) -> std::io::Result<()> {
    match fs::rename(from, to) {
        Ok(()) => Ok(()),
        Err(_) => {
            fs::copy(from, to)?;
            fs::File::open(to)?.sync_all()?;
            fs::remove_file(from)
        }
    }
}

pub(crate) async fn run(g: &GlobalOpts, a: &IngestArgs, ledger: &mut Ledger, inbox: &Path) -> u8 {
    let (Some(archive), Some(quarantine)) = (&a.archive, &a.quarantine) else {
        errln!("clearledger: --inbox needs --archive and --quarantine");
        return exit::USAGE;
    };
    // Held until the pass ends.
    let _lock = match open_inbox(g, inbox, archive, quarantine) {
        Ok(lock) => lock,
        Err(code) => return code,
    };
    let (files, incomplete) = match complete_files(inbox, Duration::from_secs(a.min_age)) {
        Ok(x) => x,
        Err(e) => {
            errln!(
                "clearledger: cannot list the inbox {}: {e}",
                inbox.display()
            );
            return exit::INFRASTRUCTURE;
        }
    };
    let mut pass = Pass::default();
    for path in &files {
        match take_file(g, a, ledger, (archive, quarantine), path, &mut pass).await {
            Next::Go => {}
            Next::Stop => break,
            Next::Exit(code) => return code,
        }
    }
    print_pass(g, a, inbox, &pass, incomplete)
}

/// Creates the archive and the quarantine, then locks the inbox: the lock, or the exit
/// code of a pass that stops here (`exit::OK` when another pass holds the inbox).
fn open_inbox(
    g: &GlobalOpts,
    inbox: &Path,
    archive: &Path,
    quarantine: &Path,
) -> Result<fs::File, u8> {
    for d in [archive, quarantine] {
        if let Err(e) = fs::create_dir_all(d) {
            errln!("clearledger: cannot create {}: {e}", d.display());
            return Err(exit::INFRASTRUCTURE);
        }
    }
    let lock = match fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(inbox.join(".clearledger.lock"))
    {
        Ok(f) => f,
        Err(e) => {
            errln!(
                "clearledger: cannot open the inbox {}: {e}",
                inbox.display()
            );
            return Err(exit::INFRASTRUCTURE);
        }
    };
    match lock.try_lock() {
        Ok(()) => Ok(lock),
        Err(fs::TryLockError::WouldBlock) => {
            tracing::info!(inbox = %inbox.display(), "another clearledger pass holds the inbox; nothing to do");
            // JSON logs say it even with --quiet: a pass that did nothing leaves a line.
            if !g.quiet || events::json() {
                errln!(info:
                    "clearledger: another clearledger pass holds {}; nothing to do",
                    inbox.display()
                );
            }
            Err(exit::OK)
        }
        Err(fs::TryLockError::Error(e)) => {
            errln!(
                "clearledger: cannot lock the inbox {}: {e}",
                inbox.display()
            );
            Err(exit::INFRASTRUCTURE)
        }
    }
}

/// What the pass has done so far.
#[derive(Default)]
struct Pass {
    archived: u64,
    attention: u64,
    quarantined: u64,
    code: u8,
    /// The runs this pass committed (archived or quarantined).
    committed: Vec<i64>,
}

/// After one file: take the next, stop the pass (then print its summary), or exit at
/// once with this code.
enum Next {
    Go,
    Stop,
    Exit(u8),
}

/// One file of the pass: where it is, its name, and where its report is written until the
/// file is archived.
struct Taken<'p> {
    path: &'p Path,
    name: String,
    tmp_report: PathBuf,
}

/// Ingests one file of the inbox, then archives or quarantines it.
async fn take_file(
    g: &GlobalOpts,
    a: &IngestArgs,
    ledger: &mut Ledger,
    (archive, quarantine): (&Path, &Path),
    path: &Path,
    pass: &mut Pass,
) -> Next {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp_report = archive.join(format!(".{name}.report.csv.part"));
    let f = Taken {
        path,
        name,
        tmp_report,
    };
    let Some(mut writer) = open_report(archive, &f) else {
        return Next::Exit(pass.code.max(exit::INFRASTRUCTURE));
    };
    let mut r = ingest_one(g, a, ledger, path, Some(&mut writer)).await;
    pass.code = pass.code.max(r.code);
    if r.stop && r.code != exit::AFTER_COMMIT {
        // Nothing committed: the next pass retries the file.
        drop(writer);
        let _ = fs::remove_file(&f.tmp_report);
        if events::json() {
            let reason = r.reason.take().unwrap_or_default();
            r.reason = Some(format!("{reason}; left in the inbox for the next pass"));
            events::file(&r.event("failed", None));
        } else {
            tracing::warn!(file = %path.display(), code = r.code, "nothing committed: file left in the inbox for the next pass");
        }
        return Next::Stop;
    }
    // From here on the file's run committed (or nothing of it will ever commit: a
    // rejection): it leaves the inbox whatever failed after the commit.
    pass.committed.extend(r.run_id);
    if r.rejected {
        drop(writer);
        let _ = fs::remove_file(&f.tmp_report);
        return quarantine_file(quarantine, &f, r, pass);
    }
    let Some(run_id) = r.run_id else {
        // Not reached: a file neither rejected nor stopped before its commit has a run.
        drop(writer);
        let _ = fs::remove_file(&f.tmp_report);
        return Next::Stop;
    };
    archive_file(archive, &f, r, run_id, writer, pass)
}

/// The file's report, written beside it in the archive under a temporary name; `None`
/// (said) when it cannot be created.
fn open_report(archive: &Path, f: &Taken) -> Option<ReportWriter> {
    match fs::File::create(&f.tmp_report)
        .and_then(|file| ReportWriter::new(ReportFormat::Csv, Box::new(file), false))
    {
        Ok(w) => Some(w),
        Err(e) => {
            errln!(
                "clearledger: cannot write a report in {}: {e}",
                archive.display()
            );
            let reason = format!(
                "cannot write a report in {}: {e}; left in the inbox for the next pass",
                archive.display()
            );
            events::file(&FileEvent {
                event: "failed",
                file: &f.path.display().to_string(),
                status: "infrastructure_failure",
                run_id: None,
                counts: None,
                reason: Some(&reason),
                error: None,
                to: None,
                seconds: None,
            });
            None
        }
    }
}

/// Moves a rejected file to the quarantine, with `NAME.error.txt` beside it.
fn quarantine_file(quarantine: &Path, f: &Taken, mut r: FileResult, pass: &mut Pass) -> Next {
    let (path, name) = (f.path, &f.name);
    let dest = free_name(quarantine, name);
    let dest_name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let note = quarantine.join(format!("{dest_name}.error.txt"));
    let text = format!(
        "{name}: rejected at {}{}; nothing posted\n{}\n",
        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        r.run_id
            .map(|id| format!(" (run {id})"))
            .unwrap_or_default(),
        r.rejection.join("\n")
    );
    let res = fs::File::create(&note)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .and_then(|_| move_file(path, &dest));
    if let Err(e) = res {
        let what = format!("cannot quarantine {}: {e}", path.display());
        r.reason = Some(format!("{what}; it stays in the inbox"));
        r.status = if r.run_id.is_some() {
            "after_commit"
        } else {
            "infrastructure_failure"
        };
        events::file(&r.event("failed", None));
        return Next::Exit(pass.code.max(match r.run_id {
            Some(id) => after_commit(&format_args!("{what}; rejected, nothing posted"), id),
            None => {
                errln!("clearledger: {what}");
                exit::INFRASTRUCTURE
            }
        }));
    }
    if events::json() {
        events::file(&r.event("quarantined", Some(&dest.display().to_string())));
    } else {
        tracing::info!(file = %path.display(), to = %dest.display(), "quarantined");
    }
    pass.quarantined += 1;
    if r.stop { Next::Stop } else { Next::Go }
}

/// Moves a committed file to the archive, with its report beside it unless writing it
/// failed (then the file is archived without it: `clearledger report N` prints it again).
fn archive_file(
    archive: &Path,
    f: &Taken,
    mut r: FileResult,
    run_id: i64,
    writer: ReportWriter,
    pass: &mut Pass,
) -> Next {
    let (path, name, tmp_report) = (f.path, &f.name, &f.tmp_report);
    let with_report = if r.report_failed {
        drop(writer);
        false
    } else {
        finish_report(&mut r, writer, path, run_id, pass)
    };
    if !with_report {
        let _ = fs::remove_file(tmp_report);
    }
    let dest = free_name(archive, name);
    let dest_name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Err(e) = move_file(path, &dest) {
        let _ = fs::remove_file(tmp_report);
        let what = format!(
            "cannot archive {}: {e}; it stays in the inbox (the next pass posts nothing of it)",
            path.display()
        );
        r.status = "after_commit";
        r.reason = Some(what.clone());
        events::file(&r.event("failed", None));
        return Next::Exit(pass.code.max(after_commit(&what, run_id)));
    }
    if with_report
        && let Err(e) = fs::rename(tmp_report, archive.join(format!("{dest_name}.report.csv")))
    {
        let _ = fs::remove_file(tmp_report);
        r.error = Some(format!("the report could not be moved beside it ({e})"));
        pass.code = pass.code.max(after_commit(
            &format_args!(
                "cannot move the report of {} beside it: {e}",
                dest.display()
            ),
            run_id,
        ));
    } else if !with_report {
        errln!(
            "clearledger: {name} archived as {} without its report",
            dest.display()
        );
    }
    if events::json() {
        events::file(&r.event("archived", Some(&dest.display().to_string())));
    } else {
        tracing::info!(file = %path.display(), to = %dest.display(), run_id = r.run_id, "archived");
    }
    pass.archived += 1;
    if r.code == exit::ATTENTION {
        pass.attention += 1;
    }
    if r.stop || pass.code == exit::AFTER_COMMIT {
        Next::Stop
    } else {
        Next::Go
    }
}

/// Finishes the report of a committed file: whether it was written whole.
fn finish_report(
    r: &mut FileResult,
    writer: ReportWriter,
    path: &Path,
    run_id: i64,
    pass: &mut Pass,
) -> bool {
    match writer.finish() {
        Ok(()) => true,
        Err(e) => {
            r.error = Some(format!("the report could not be written ({e})"));
            pass.code = pass.code.max(after_commit(
                &format_args!("cannot write the report of {}: {e}", path.display()),
                run_id,
            ));
            false
        }
    }
}

/// The pass's summary (its log event, then JSON or text on stdout) and its exit code.
fn print_pass(g: &GlobalOpts, a: &IngestArgs, inbox: &Path, pass: &Pass, incomplete: usize) -> u8 {
    let Pass {
        archived,
        attention,
        quarantined,
        code,
        ..
    } = *pass;
    let taken = archived + quarantined;
    events::inbox_pass(
        &inbox.display().to_string(),
        taken,
        archived,
        attention,
        quarantined,
        incomplete,
    );
    let printed = if a.json {
        outln!(
            "{}",
            json!({"inbox": inbox.display().to_string(), "taken": archived + quarantined, "archived": archived,
                   "needs_attention": attention, "quarantined": quarantined, "incomplete_skipped": incomplete})
        )
    } else if !g.quiet {
        outln!(
            "inbox {}: {} files taken: {archived} archived ({attention} need attention), {quarantined} quarantined; {incomplete} incomplete files left for later",
            inbox.display(),
            archived + quarantined
        )
    } else {
        Ok(())
    };
    match (printed, pass.committed.as_slice()) {
        (Ok(()), _) => code,
        (Err(e), []) => out::stdout_failed(&e, code),
        (Err(e), ids) => {
            errln!(
                "clearledger: inbox {}: {}; this pass committed {} (archived with their \
                 reports, or quarantined)",
                inbox.display(),
                out::describe(&e),
                run_list(ids)
            );
            exit::AFTER_COMMIT
        }
    }
}
