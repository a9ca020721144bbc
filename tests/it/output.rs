//! Standard output and error that fail: a full disk (`/dev/full`) or a closed pipe (the reader
//! gone, as with `| head -1`). No panic (exit 101) anywhere; a failure before any commit is
//! exit 4 (or, for a closed pipe, the command's own code, quietly); a failure after a commit
//! is exit 6 naming the run, never the "nothing committed, safe to retry" of exit 4; the inbox
//! archives a file whose run committed whatever failed after.

use crate::common;

use common::{Inbox, Run, TestDb, age, sample, samples};
use std::fs;
use std::process::{Command, Stdio};

on_both_backends!(
    runs_lookup_and_report_to_a_full_or_closed_stdout_do_not_panic,
    ingest_json_to_a_full_stdout_commits_and_exits_6_naming_the_run,
    ingest_to_a_closed_stdout_commits_and_exits_6_naming_the_run,
    a_report_that_cannot_be_written_after_the_commit_exits_6_naming_the_run,
    a_full_stderr_does_not_panic,
    the_inbox_archives_a_committed_file_when_its_output_fails,
);

/// Where a stream of the child goes.
#[derive(Clone, Copy)]
enum Sink {
    /// `/dev/full`: every write fails with ENOSPC.
    Full,
    /// A pipe whose read end is closed before the child starts: every write fails with EPIPE.
    Closed,
    /// Captured, as `common::run` does.
    Capture,
}

fn stdio(s: Sink) -> Stdio {
    match s {
        Sink::Full => fs::File::options()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full")
            .into(),
        Sink::Closed => {
            let (reader, writer) = std::io::pipe().expect("pipe");
            drop(reader);
            writer.into()
        }
        Sink::Capture => Stdio::piped(),
    }
}

/// `clearledger --db URL ARGS...` with stdout and stderr sent where asked.
fn cl_to(db: &TestDb, args: &[&str], stdout: Sink, stderr: Sink) -> Run {
    let out = Command::new(common::bin())
        .arg("--db")
        .arg(&db.url)
        .args(args)
        .env_remove("CLEARLEDGER_DB")
        .env_remove("DATABASE_URL")
        .env_remove("CLEARLEDGER_FAULT")
        .stdin(Stdio::null())
        .stdout(stdio(stdout))
        .stderr(stdio(stderr))
        .output()
        .expect("run clearledger");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn no_panic(what: &str, out: &Run) {
    assert!(
        out.code != 101 && !out.stderr.contains("panicked"),
        "{what}: exit {}, a panic: {}",
        out.code,
        out.stderr
    );
}

fn runs(db: &TestDb) -> i64 {
    db.scalar("SELECT count(*) FROM runs")
}

/// The newest run's id (PostgreSQL's sequence may leave gaps: never assumed 1, 2, ...).
fn last_run(db: &TestDb) -> i64 {
    db.scalar("SELECT max(run_id) FROM runs")
}

/// The message of a failure after the commit of run `id`.
fn committed(id: i64) -> String {
    format!("committed as run {id}; the report can be printed again with `clearledger report {id}`")
}

fn runs_lookup_and_report_to_a_full_or_closed_stdout_do_not_panic(db: TestDb) {
    assert_eq!(
        db.cl(&["ingest", &sample("ppd-payroll-credits.ach")]).code,
        0
    );
    let id = last_run(&db).to_string();
    let commands: [&[&str]; 5] = [
        &["runs"],
        &["runs", "--json"],
        &["report", &id],
        &[
            "lookup",
            "--file-id",
            "nacha:231380104:1210428821:261129:0900:A",
            "--record-no",
            "1",
        ],
        &["db", "migrate"],
    ];
    for args in commands {
        let what = args.join(" ");
        // A full disk: said on stderr, exit 4 (nothing was committed: safe to retry).
        let out = cl_to(&db, args, Sink::Full, Sink::Capture);
        no_panic(&what, &out);
        assert_eq!(out.code, 4, "{what} > /dev/full: {}", out.stderr);
        assert!(
            out.stderr.contains("cannot write"),
            "{what} > /dev/full: {}",
            out.stderr
        );
        // The reader gone (`| head -c1`): quietly, the command's own code.
        let out = cl_to(&db, args, Sink::Closed, Sink::Capture);
        no_panic(&what, &out);
        assert_eq!(out.code, 0, "{what} | (closed): {}", out.stderr);
        assert_eq!(out.stderr, "", "{what} | (closed): quiet");
    }
    assert_eq!(runs(&db), 1, "nothing was committed by the readers");
    // A report larger than a pipe's buffer meets the closed pipe while writing its rows
    // (through the CSV writer), not at the end: quietly too (`report RUN | head`).
    let big = db.file("big.ach");
    let g = db.cl(&[
        "generate",
        "nacha",
        "--entries",
        "5000",
        "-o",
        big.to_str().unwrap(),
    ]);
    assert_eq!(g.code, 0, "{}", g.stderr);
    assert_eq!(db.cl(&["ingest", "-q", big.to_str().unwrap()]).code, 0);
    let id = last_run(&db).to_string();
    for format in ["csv", "jsonl"] {
        let args = ["report", &id, "--format", format];
        let out = cl_to(&db, &args, Sink::Closed, Sink::Capture);
        no_panic("report (big)", &out);
        assert_eq!(
            (out.code, out.stderr.as_str()),
            (0, ""),
            "report {id} --format {format} | (closed)"
        );
    }
}

fn ingest_json_to_a_full_stdout_commits_and_exits_6_naming_the_run(db: TestDb) {
    let out = cl_to(
        &db,
        &["ingest", "--json", &sample("ppd-payroll-credits.ach")],
        Sink::Full,
        Sink::Capture,
    );
    no_panic("ingest --json > /dev/full", &out);
    assert_eq!(out.code, 6, "{}", out.stderr);
    let id = last_run(&db);
    assert!(out.stderr.contains(&committed(id)), "{}", out.stderr);
    assert!(!out.stderr.contains("safe to retry"), "{}", out.stderr);
    assert_eq!(
        db.rows("SELECT run_id, status, posted FROM runs"),
        vec![vec![id.to_string(), "completed".into(), "4".into()]]
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
    // Several files: the command stops at the failure, the run of the first file named.
    let out = cl_to(
        &db,
        &[
            "ingest",
            "--json",
            &sample("ccd-vendor-debits.ach"),
            &sample("web-returns.ach"),
        ],
        Sink::Full,
        Sink::Capture,
    );
    no_panic("ingest --json A B > /dev/full", &out);
    assert_eq!(out.code, 6, "{}", out.stderr);
    assert_eq!(runs(&db), 2, "stopped after the first file");
    assert!(
        out.stderr.contains(&committed(last_run(&db))),
        "{}",
        out.stderr
    );
}

fn ingest_to_a_closed_stdout_commits_and_exits_6_naming_the_run(db: TestDb) {
    for (i, args) in [
        vec!["ingest", "--json"],
        vec!["ingest"], // the text summary
    ]
    .into_iter()
    .enumerate()
    {
        let file = [
            sample("ppd-payroll-credits.ach"),
            sample("ccd-vendor-debits.ach"),
        ];
        let mut args = args;
        args.push(&file[i]);
        let out = cl_to(&db, &args, Sink::Closed, Sink::Capture);
        no_panic("ingest | (closed)", &out);
        assert_eq!(out.code, 6, "{}", out.stderr);
        assert_eq!(runs(&db), i as i64 + 1);
        assert!(
            out.stderr.contains(&format!(
                "standard output closed; {}",
                committed(last_run(&db))
            )),
            "{}",
            out.stderr
        );
    }
    // A dry run commits nothing: the closed pipe ends quietly with its own code.
    let out = cl_to(
        &db,
        &["ingest", "--dry-run", &sample("ppd-payroll-credits.ach")],
        Sink::Closed,
        Sink::Capture,
    );
    no_panic("ingest --dry-run | (closed)", &out);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(runs(&db), 2);
}

fn a_report_that_cannot_be_written_after_the_commit_exits_6_naming_the_run(db: TestDb) {
    let out = db.cl(&[
        "ingest",
        "--report",
        "/dev/full",
        &sample("ppd-payroll-credits.ach"),
    ]);
    no_panic("ingest --report /dev/full", &out);
    assert_eq!(out.code, 6, "{}", out.stderr);
    let id = last_run(&db);
    assert!(
        out.stderr.contains("the report could not be written")
            && out.stderr.contains(&committed(id)),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("safe to retry"), "{}", out.stderr);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
    // The JSON summary still comes, saying what failed.
    let out = db.cl(&[
        "ingest",
        "--json",
        "--report",
        "/dev/full",
        &sample("ccd-vendor-debits.ach"),
    ]);
    assert_eq!(out.code, 6, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).expect("one JSON object");
    assert_eq!(v["run_id"], last_run(&db));
    assert!(v["report_error"].as_str().is_some(), "{v}");
    // As the message says, the report can be printed again.
    let again = db.cl(&["report", &id.to_string()]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout.lines().count(), 1 + 4, "{}", again.stdout);
}

fn a_full_stderr_does_not_panic(db: TestDb) {
    // A rejected file prints its findings on stderr.
    let out = cl_to(
        &db,
        &["ingest", &sample("invalid-batch-total.ach")],
        Sink::Capture,
        Sink::Full,
    );
    assert!(out.code != 101, "a panic, exit {}", out.code);
    assert_eq!(out.code, 3);
    // A committed run's line on stderr cannot be written: the summary still comes on stdout.
    let out = cl_to(
        &db,
        &["ingest", &sample("ppd-payroll-credits.ach")],
        Sink::Capture,
        Sink::Full,
    );
    assert_eq!(out.code, 0);
    assert!(
        out.stdout
            .contains(&format!("run {} completed", last_run(&db))),
        "{}",
        out.stdout
    );
    // Both full.
    let out = cl_to(&db, &["runs"], Sink::Full, Sink::Full);
    assert_eq!(out.code, 4);
}

fn the_inbox_archives_a_committed_file_when_its_output_fails(db: TestDb) {
    let ib = Inbox::under(db.dir.path());
    let (inbox, archive, quarantine) = (&ib.inbox, &ib.archive, &ib.quarantine);
    let put = |f: &str| {
        let to = inbox.join(f);
        fs::copy(samples().join(f), &to).unwrap();
        age(&to);
    };
    let pass = |stdout: Sink| cl_to(&db, &ib.pass(&["--json"]), stdout, Sink::Capture);
    let names = |dir: &std::path::Path| {
        let mut v: Vec<String> = fs::read_dir(dir)
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    // The file commits, its JSON line cannot be written: archived all the same, with its
    // report, and the run named.
    put("ppd-payroll-credits.ach");
    let out = pass(Sink::Full);
    no_panic("inbox --json > /dev/full", &out);
    assert_eq!(out.code, 6, "{}", out.stderr);
    assert!(
        out.stderr.contains(&committed(last_run(&db))),
        "{}",
        out.stderr
    );
    assert_eq!(names(inbox), Vec::<String>::new(), "{}", out.stderr);
    assert_eq!(
        names(archive),
        vec![
            "ppd-payroll-credits.ach",
            "ppd-payroll-credits.ach.report.csv"
        ]
    );
    assert_eq!(
        common::read_csv(&archive.join("ppd-payroll-credits.ach.report.csv")).len(),
        4
    );
    // The next pass finds nothing: no new run.
    let out = pass(Sink::Capture);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("\"taken\":0"), "{}", out.stdout);
    assert_eq!(runs(&db), 1);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
    // A rejected file (journaled: a commit) whose JSON line meets a closed pipe is
    // quarantined all the same.
    put("invalid-batch-total.ach");
    let out = pass(Sink::Closed);
    no_panic("inbox --json | (closed)", &out);
    assert_eq!(out.code, 6, "{}", out.stderr);
    assert!(
        out.stderr
            .contains(&format!("journaled as run {}", last_run(&db))),
        "{}",
        out.stderr
    );
    assert_eq!(
        names(quarantine),
        vec![
            "invalid-batch-total.ach",
            "invalid-batch-total.ach.error.txt"
        ]
    );
    assert_eq!(names(inbox), Vec::<String>::new());
    let out = pass(Sink::Capture);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(runs(&db), 2);
}

/// `clearledger ARGS...` without a database, stdout sent where asked.
fn cl_nodb(args: &[&str], stdout: Sink) -> Run {
    let out = Command::new(common::bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdio(stdout))
        .stderr(Stdio::piped())
        .output()
        .expect("run clearledger");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn check_and_generate_to_a_full_or_closed_stdout_do_not_panic() {
    let valid = sample("ppd-payroll-credits.ach");
    let invalid = sample("invalid-batch-total.ach");
    let commands: [(&[&str], i32); 4] = [
        (&["check", &valid], 0),
        (&["check", "--json", &valid], 0),
        (&["check", &invalid], 3),
        (&["generate", "nacha", "--entries", "2000"], 0),
    ];
    for (args, code) in commands {
        let what = args.join(" ");
        let out = cl_nodb(args, Sink::Full);
        no_panic(&what, &out);
        assert_eq!(out.code, 4, "{what} > /dev/full: {}", out.stderr);
        assert!(
            out.stderr.contains("cannot write"),
            "{what}: {}",
            out.stderr
        );
        let out = cl_nodb(args, Sink::Closed);
        no_panic(&what, &out);
        assert_eq!(out.code, code, "{what} | (closed): {}", out.stderr);
        assert_eq!(out.stderr, "", "{what} | (closed): quiet");
    }
}
