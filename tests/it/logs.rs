//! Cron-grade logs: under `--log-format json` standard error carries one JSON
//! object per line and nothing else, and every file an ingest takes ends in one event.
//! The unattended run is the documented cron line, read from docs/scheduling.md.

use crate::common;

use common::{Backend, TestDb, age, samples};
use serde_json::{Value, json};
use std::path::Path;

on_both_backends!(
    the_documented_cron_line_logs_one_json_event_per_file,
    the_documented_cron_line_against_an_unreachable_database_logs_json,
    plain_ingest_logs_every_file_as_json_with_or_without_quiet,
    every_message_on_stderr_is_json_in_json_mode
);

/// The documented cron example (docs/scheduling.md): the command of its `*/5 * * * *` line
/// (after the schedule and the user), with its paths and database URL. A page that stops
/// showing JSON logs, or changes the paths, fails here.
fn documented_cron_command() -> String {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scheduling.md"))
            .expect("docs/scheduling.md");
    let block = page
        .split("```cron\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```cron block in docs/scheduling.md");
    let line = block
        .lines()
        .find(|l| l.starts_with("*/5 * * * * "))
        .expect("the cron line");
    // Five schedule fields, the user, then the command.
    let command = line.splitn(7, ' ').nth(6).expect("a command").to_string();
    for part in [
        "/usr/local/bin/clearledger ",
        "--db postgres://ledger@db/ledger ",
        "--inbox /srv/ach/inbox ",
        "--archive /srv/ach/archive ",
        "--quarantine /srv/ach/quarantine ",
        "--quiet",
        "--log-format json",
        ">> /var/log/clearledger.jsonl 2>&1",
    ] {
        assert!(
            command.contains(part),
            "the documented cron line: {command}"
        );
    }
    command
}

/// Runs the documented cron command through `sh`, on this database and these directories;
/// returns the exit code and the log file the line appends to.
fn run_cron(db: &TestDb, url: &str) -> (i32, String) {
    let dir = db.dir.path();
    let log = dir.join("clearledger.jsonl");
    let _ = std::fs::remove_file(&log);
    let command = documented_cron_command()
        .replace("/usr/local/bin/clearledger", common::bin())
        .replace("postgres://ledger@db/ledger", url)
        .replace("/srv/ach/", &format!("{}/", dir.display()))
        .replace("/var/log/clearledger.jsonl", log.to_str().unwrap());
    let out = std::process::Command::new("sh")
        .args(["-c", &command])
        .env_remove("CLEARLEDGER_DB")
        .env_remove("DATABASE_URL")
        .env_remove("RUST_LOG")
        .output()
        .expect("sh");
    assert_eq!(
        (out.stdout.as_slice(), out.stderr.as_slice()),
        (&b""[..], &b""[..]),
        "all output goes to the log"
    );
    (
        out.status.code().unwrap_or(-1),
        std::fs::read_to_string(&log).unwrap_or_default(),
    )
}

/// Every line of `stderr` as a JSON event: an object with a timestamp (RFC 3339 UTC), a
/// level, a message and the target; the timestamp and `seconds` are taken out (they vary).
fn events(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .map(|l| {
            let mut v: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}"));
            let o = v
                .as_object_mut()
                .unwrap_or_else(|| panic!("not an object: {l}"));
            let ts = o
                .remove("timestamp")
                .unwrap_or_else(|| panic!("no timestamp: {l}"));
            assert!(
                ts.as_str()
                    .is_some_and(|t| t.len() > 20 && t.ends_with('Z')),
                "{l}"
            );
            assert!(o["level"].is_string() && o["message"].is_string(), "{l}");
            assert_eq!(o["target"], "clearledger::output", "{l}");
            if let Some(s) = o.remove("seconds") {
                assert!(s.as_f64().is_some_and(|s| s >= 0.0), "{l}");
            }
            v
        })
        .collect()
}

/// The rejected sample's one finding, as text and as the event's fields.
fn bad_finding(file: &str) -> (String, Value) {
    let text = format!(
        "{file}:4: error [total_debit_mismatch] record 3, byte 285, \
         batch_control.total_debit_entry_dollar_amount (columns 21-32): expected 000001250000, \
         found \"000001250001\""
    );
    let event = json!({
        "level": "ERROR", "message": text, "event": "finding", "file": file,
        "severity": "error", "code": "total_debit_mismatch", "line": 4, "record_index": 3,
        "byte_offset": 285, "field": "batch_control.total_debit_entry_dollar_amount",
        "columns": "21-32", "expected": "000001250000", "found": "000001250001",
        "target": "clearledger::output",
    });
    (text, event)
}

fn rejected_run(db: &TestDb) -> i64 {
    db.scalar("SELECT max(run_id) FROM runs WHERE status = 'rejected'")
}

fn the_documented_cron_line_logs_one_json_event_per_file(db: TestDb) {
    let dir = db.dir.path();
    let (inbox, archive, quarantine) = (
        dir.join("inbox"),
        dir.join("archive"),
        dir.join("quarantine"),
    );
    std::fs::create_dir_all(&inbox).unwrap();
    let (good, bad) = (inbox.join("a.ach"), inbox.join("b.ach"));
    std::fs::copy(samples().join("ppd-payroll-credits.ach"), &good).unwrap();
    std::fs::copy(samples().join("invalid-batch-total.ach"), &bad).unwrap();
    age(&good);
    age(&bad);
    let (code, log) = run_cron(&db, &db.url);
    assert_eq!(code, 3, "a file quarantined: {log}");
    let (good, bad) = (good.display().to_string(), bad.display().to_string());
    let (finding, finding_event) = bad_finding(&bad);
    let run = rejected_run(&db);
    let reason = format!("1 errors, 0 warnings; the first: {finding}");
    let to = |d: &Path, n: &str| d.join(n).display().to_string();
    let want = vec![
        json!({
            "level": "INFO", "event": "archived", "file": good, "status": "completed",
            "run_id": 1, "records": 4, "posted": 4, "duplicates": 0, "conflicts": 0, "held": 0,
            "errors": 0, "warnings": 0, "to": to(&archive, "a.ach"),
            "message": format!(
                "{good}: run 1 completed: 4 records: 4 posted, 0 duplicates, 0 conflicts, 0 held; \
                 archived as {}", to(&archive, "a.ach")
            ),
            "target": "clearledger::output",
        }),
        finding_event,
        json!({
            "level": "ERROR", "target": "clearledger::output",
            "message": format!("{bad}: rejected (run {run}): 1 errors, 0 warnings; nothing posted"),
        }),
        json!({
            "level": "ERROR", "event": "quarantined", "file": bad, "status": "rejected",
            "run_id": run, "records": 1, "posted": 0, "duplicates": 0, "conflicts": 0, "held": 0,
            "errors": 1, "warnings": 0, "reason": reason, "to": to(&quarantine, "b.ach"),
            "message": format!(
                "{bad}: rejected (run {run}), quarantined as {}: {reason}; nothing posted",
                to(&quarantine, "b.ach")
            ),
            "target": "clearledger::output",
        }),
        json!({
            "level": "INFO", "event": "inbox_pass", "inbox": inbox.display().to_string(),
            "taken": 2, "archived": 1, "needs_attention": 0, "quarantined": 1,
            "incomplete_skipped": 0, "target": "clearledger::output",
            "message": format!(
                "inbox {}: 2 files taken: 1 archived (0 need attention), 1 quarantined; \
                 0 incomplete files left for later", inbox.display()
            ),
        }),
    ];
    assert_eq!(events(&log), want, "{log}");
    // The next pass finds nothing, and says so in one line.
    let (code, log) = run_cron(&db, &db.url);
    assert_eq!(code, 0, "{log}");
    let got = events(&log);
    assert_eq!(got.len(), 1, "{log}");
    assert_eq!(
        (&got[0]["event"], &got[0]["taken"]),
        (&json!("inbox_pass"), &json!(0))
    );
}

fn the_documented_cron_line_against_an_unreachable_database_logs_json(db: TestDb) {
    let dir = db.dir.path();
    let inbox = dir.join("inbox");
    std::fs::create_dir_all(&inbox).unwrap();
    let waiting = inbox.join("a.ach");
    std::fs::copy(samples().join("ppd-payroll-credits.ach"), &waiting).unwrap();
    age(&waiting);
    let unreachable = match db.backend {
        // No server listens on port 1.
        Backend::Postgres => "postgres://ledger@127.0.0.1:1/ledger".to_string(),
        Backend::Sqlite => format!("sqlite://{}/no/such/dir/ledger.db", dir.display()),
    };
    let (code, log) = run_cron(&db, &unreachable);
    // A server that is down is worth a retry (4); a SQLite path in a directory that does
    // not exist is a configuration mistake no retry fixes (7).
    let (want_code, want_start) = match db.backend {
        Backend::Postgres => (
            4,
            "infrastructure failure (safe to retry): database error while ",
        ),
        Backend::Sqlite => (
            7,
            "configuration error (not retryable): database error while ",
        ),
    };
    assert_eq!(code, want_code, "{log}");
    let got = events(&log);
    assert_eq!(got.len(), 1, "{log}");
    assert_eq!(got[0]["level"], "ERROR");
    let msg = got[0]["message"].as_str().unwrap();
    assert!(msg.starts_with(want_start), "{msg}");
    assert!(waiting.exists(), "the file waits for the next pass");
}

fn plain_ingest_logs_every_file_as_json_with_or_without_quiet(db: TestDb) {
    let good = samples()
        .join("ppd-payroll-credits.ach")
        .display()
        .to_string();
    let bad = samples()
        .join("invalid-batch-total.ach")
        .display()
        .to_string();
    let amended = samples()
        .join("ppd-payroll-credits-amended.ach")
        .display()
        .to_string();
    let (_, finding_event) = bad_finding(&bad);
    // --quiet: no "committed" line, but every file still has its event.
    let r = db.cl(&["--quiet", "--log-format", "json", "ingest", &good, &bad]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let run = rejected_run(&db);
    let got = events(&r.stderr);
    assert_eq!(got.len(), 4, "{}", r.stderr);
    assert_eq!(
        got[0],
        json!({
            "level": "INFO", "event": "ingested", "file": good, "status": "completed",
            "run_id": 1, "records": 4, "posted": 4, "duplicates": 0, "conflicts": 0, "held": 0,
            "errors": 0, "warnings": 0, "target": "clearledger::output",
            "message": format!("{good}: run 1 completed: 4 records: 4 posted, 0 duplicates, 0 conflicts, 0 held"),
        })
    );
    assert_eq!(got[1], finding_event);
    assert_eq!(got[2]["level"], "ERROR");
    assert_eq!(
        (
            &got[3]["event"],
            &got[3]["status"],
            &got[3]["run_id"],
            &got[3]["errors"]
        ),
        (
            &json!("rejected"),
            &json!("rejected"),
            &json!(run),
            &json!(1)
        )
    );
    // Without --quiet: the committed line too; a run with a conflict is a warning.
    let r = db.cl(&["--log-format", "json", "ingest", &amended]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let got = events(&r.stderr);
    let id = db.scalar("SELECT max(run_id) FROM runs");
    assert_eq!(
        got,
        vec![
            json!({"level": "INFO", "target": "clearledger::output",
                   "message": format!("{amended}: committed as run {id}")}),
            json!({
                "level": "WARN", "event": "ingested", "file": amended, "status": "needs_attention",
                "run_id": id, "records": 4, "posted": 0, "duplicates": 3, "conflicts": 1,
                "held": 0, "errors": 0, "warnings": 0, "target": "clearledger::output",
                "message": format!("{amended}: run {id} needs_attention: 4 records: 0 posted, 3 duplicates, 1 conflicts, 0 held"),
            }),
        ]
    );
    // A dry run has its event, without a run.
    let r = db.cl(&[
        "-q",
        "--log-format",
        "json",
        "ingest",
        "--dry-run",
        &amended,
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        events(&r.stderr),
        vec![json!({
            "level": "INFO", "event": "dry_run", "file": amended, "status": "dry_run",
            "records": 4, "posted": 0, "would_post": 0, "duplicates": 3, "conflicts": 1,
            "held": 0, "errors": 0, "warnings": 0, "target": "clearledger::output",
            "message": format!("{amended}: dry run, nothing posted: 4 records: 0 would post, 3 duplicates, 1 conflicts, 0 held"),
        })]
    );
    // An unreadable file: rejected, with the reason.
    let missing = db.file("missing.ach").display().to_string();
    let r = db.cl(&["-q", "--log-format", "json", "ingest", &missing]);
    assert_eq!(r.code, 3);
    let got = events(&r.stderr);
    let last = got.last().unwrap();
    assert_eq!(
        (&last["event"], &last["file"], &last["reason"]),
        (
            &json!("rejected"),
            &json!(missing),
            &json!("cannot read: No such file or directory (os error 2)")
        ),
        "{}",
        r.stderr
    );
}

fn every_message_on_stderr_is_json_in_json_mode(db: TestDb) {
    // A command line clap refuses.
    let r = db.cl(&["--log-format", "json", "ingest", "--no-such-flag", "x"]);
    assert_eq!(r.code, 2);
    let got = events(&r.stderr);
    assert_eq!(got.len(), 1, "{}", r.stderr);
    assert!(
        got[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("error: unexpected argument '--no-such-flag' found"),
        "{}",
        r.stderr
    );
    // An unknown tenant, a run not found, a file that cannot be reported.
    for (args, code, message) in [
        (
            &["--tenant", "defualt", "runs"][..],
            2,
            "unknown tenant \"defualt\"; known tenants: default; add one with `clearledger tenant add NAME`",
        ),
        (&["report", "99"][..], 5, "no run 99 for tenant \"default\""),
        (
            &["lookup", "--trace", "1"][..],
            5,
            "no posting found for tenant \"default\"",
        ),
    ] {
        let mut all = vec!["--log-format", "json"];
        all.extend_from_slice(args);
        let r = db.cl(&all);
        assert_eq!(r.code, code, "{args:?}: {}", r.stderr);
        assert_eq!(
            events(&r.stderr),
            vec![json!({"level": "ERROR", "message": message, "target": "clearledger::output"})],
            "{args:?}"
        );
    }
    // The same in text mode: as it always was.
    let r = db.cl(&["report", "99"]);
    assert_eq!(r.stderr, "clearledger: no run 99 for tenant \"default\"\n");
}
