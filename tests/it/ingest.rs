//! The ledger's promises, driven through the binary against a real SQLite file.

use crate::common;

use common::{TestDb, read_csv, sample, samples};

on_both_backends!(
    first_ingest_posts_every_entry_and_a_reupload_posts_nothing,
    same_header_with_one_amount_changed_is_one_conflict_naming_amount,
    new_records_under_an_identity_seen_with_other_content_are_held,
    an_invalid_file_is_rejected_whole_and_its_findings_journaled,
    dry_run_classifies_and_posts_nothing,
    a_crash_before_commit_leaves_nothing_and_the_rerun_posts_once,
    a_crash_after_commit_keeps_everything_and_the_report_can_be_produced_again,
    two_concurrent_processes_on_the_same_file_post_each_entry_once,
    tenants_are_isolated,
    report_reproduces_the_ingest_report_byte_for_byte,
    lookup_finds_postings_by_trace_source_and_key,
    trace_numbers_are_not_keys_the_100k_reference_file_posts_every_entry,
    stdin_input_and_multiple_files_in_one_command,
    unreadable_inputs_are_rejected_with_their_path,
);

const PAYROLL_ID: &str = "nacha:231380104:1210428821:261129:0900:A";

fn first_ingest_posts_every_entry_and_a_reupload_posts_nothing(db: TestDb) {
    let r1 = db.file("r1.csv");
    let out = db.cl(&[
        "ingest",
        &sample("ppd-payroll-credits.ach"),
        "--report",
        r1.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
    // Records 1 and 3 are two identical payments (same payee, same amount): two intents, both post.
    assert_eq!(
        db.scalar("SELECT count(*) FROM postings WHERE amount_minor = 250000"),
        2
    );
    let rows = read_csv(&r1);
    assert_eq!(rows.len(), 4);
    assert!(
        rows.iter()
            .all(|r| r["outcome"] == "posted" && r["run_id"] == "1")
    );
    // The same bytes from stdin: spooled and hashed before the run (read once), so they
    // take the exact re-upload fast path like the file, with the same outcome.
    let mut child = std::process::Command::new(common::bin())
        .args(["--db", &db.url, "ingest", "--json", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&common::payroll())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (s["duplicates"].as_i64(), s["fast_path"].as_bool()),
        (Some(4), Some(true))
    );
    assert_eq!(rows[1]["posting_key"], format!("{PAYROLL_ID}:2"));
    assert_eq!(rows[1]["amount_minor"], "187550");
    // A credit entry: the originator is debited, the receiver credited.
    assert_eq!(rows[1]["debit_account"], "odfi:12104288:1234567890");
    assert_eq!(rows[1]["credit_account"], "rdfi:076401251:99001122");

    let r2 = db.file("r2.csv");
    let out = db.cl(&[
        "ingest",
        &sample("ppd-payroll-credits.ach"),
        "--report",
        r2.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let summary: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(summary["posted"], 0);
    assert_eq!(summary["duplicates"], 4);
    assert_eq!(summary["conflicts"], 0);
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["file_id"], PAYROLL_ID);
    assert_eq!(summary["run_id"], 3);
    assert_eq!(
        summary["fast_path"], true,
        "the same bytes again: replayed from run 1"
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
    let rows = read_csv(&r2);
    assert_eq!(rows.len(), 4);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["outcome"], "duplicate");
        assert_eq!(r["record_no"], (i + 1).to_string());
        assert_eq!(r["original_file_id"], PAYROLL_ID);
        assert_eq!(r["original_record_no"], (i + 1).to_string());
        assert_eq!(r["original_run_id"], "1");
        assert!(!r["original_posted_at"].is_empty());
    }
    // Every repeat is journaled.
    assert_eq!(
        db.scalar("SELECT count(*) FROM journal WHERE run_id = 3 AND outcome = 'duplicate'"),
        4
    );
}

fn same_header_with_one_amount_changed_is_one_conflict_naming_amount(db: TestDb) {
    assert_eq!(
        db.cl(&["ingest", &sample("ppd-payroll-credits.ach")]).code,
        0
    );
    let rep = db.file("r.jsonl");
    let out = db.cl(&[
        "ingest",
        &sample("ppd-payroll-credits-amended.ach"),
        "--report",
        rep.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 1, "conflicts need attention: {}", out.stderr);
    // The summary line names what differs without a report being asked for.
    let said: Vec<&str> = out.stdout.lines().skip(1).collect();
    assert_eq!(said, ["  record 2: conflict: amount: 187550 != 187551"]);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
    assert_eq!(
        db.scalar("SELECT CAST(sum(amount_minor) AS BIGINT) FROM postings"),
        787549
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&rep)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outcomes: Vec<&str> = lines
        .iter()
        .map(|l| l["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        ["duplicate", "conflict", "duplicate", "duplicate"]
    );
    assert_eq!(lines[1]["differences"], "amount: 187550 != 187551");
    assert_eq!(lines[1]["original_record_no"], 2);
    assert_eq!(lines[1]["amount_minor"], 187551);
}

fn new_records_under_an_identity_seen_with_other_content_are_held(db: TestDb) {
    let (a, b) = (db.file("a.ach"), db.file("b.ach"));
    // Same seed: same header identity and the same first 10 entries; b has an 11th.
    for (p, n) in [(&a, "10"), (&b, "11")] {
        let out = db.cl(&[
            "generate",
            "nacha",
            "--entries",
            n,
            "--seed",
            "5",
            "-o",
            p.to_str().unwrap(),
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    assert_eq!(db.cl(&["ingest", a.to_str().unwrap()]).code, 0);
    let out = db.cl(&["ingest", b.to_str().unwrap(), "--json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let s: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(
        (
            s["posted"].as_i64(),
            s["duplicates"].as_i64(),
            s["held"].as_i64()
        ),
        (Some(0), Some(10), Some(1))
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 10);
    let held = db.rows("SELECT record_no, reason FROM journal WHERE outcome = 'held'");
    assert_eq!(held.len(), 1);
    assert_eq!(held[0][0], "11");
    assert!(
        held[0][1].contains("already ingested by run 1"),
        "{}",
        held[0][1]
    );
}

fn an_invalid_file_is_rejected_whole_and_its_findings_journaled(db: TestDb) {
    let out = db.cl(&["ingest", &sample("invalid-batch-total.ach")]);
    assert_eq!(out.code, 3);
    assert!(
        out.stderr.contains(
            "invalid-batch-total.ach:4: error [total_debit_mismatch] record 3, byte 285, \
             batch_control.total_debit_entry_dollar_amount (columns 21-32): expected 000001250000, found \"000001250001\""
        ),
        "{}",
        out.stderr
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
    assert_eq!(db.scalar("SELECT count(*) FROM files"), 0);
    let runs = db.rows("SELECT status, errors, file_id FROM runs");
    assert_eq!(
        runs,
        vec![vec![
            "rejected".to_string(),
            "1".into(),
            "nacha:231380104:9876543210:261129:1500:B".into()
        ]]
    );
    let f =
        db.rows("SELECT code, line, byte_offset, field, columns, expected, found FROM findings");
    assert_eq!(
        f,
        vec![vec![
            "total_debit_mismatch".to_string(),
            "4".into(),
            "285".into(),
            "batch_control.total_debit_entry_dollar_amount".into(),
            "21-32".into(),
            "000001250000".into(),
            "000001250001".into()
        ]]
    );
}

fn dry_run_classifies_and_posts_nothing(db: TestDb) {
    let rep = db.file("dry.csv");
    let out = db.cl(&[
        "ingest",
        "--dry-run",
        &sample("ppd-payroll-credits.ach"),
        "--report",
        rep.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("dry run, nothing posted: 4 records: 4 would post"),
        "{}",
        out.stdout
    );
    assert!(read_csv(&rep).iter().all(|r| r["outcome"] == "would_post"));
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 0);
    assert_eq!(db.scalar("SELECT count(*) FROM files"), 0);

    assert_eq!(
        db.cl(&["ingest", &sample("ppd-payroll-credits.ach")]).code,
        0
    );
    let out = db.cl(&[
        "ingest",
        "--dry-run",
        "--json",
        &sample("ppd-payroll-credits-amended.ach"),
        "--report",
        rep.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 1);
    let s: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(
        (
            s["would_post"].as_i64(),
            s["duplicates"].as_i64(),
            s["conflicts"].as_i64()
        ),
        (Some(0), Some(3), Some(1))
    );
    let rows = read_csv(&rep);
    assert_eq!(rows[1]["outcome"], "conflict");
    assert_eq!(rows[1]["differences"], "amount: 187550 != 187551");
    assert_eq!(
        db.scalar("SELECT count(*) FROM journal"),
        0,
        "a dry run journals nothing"
    );
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 1);
}

fn a_crash_before_commit_leaves_nothing_and_the_rerun_posts_once(db: TestDb) {
    let f = db.file("g.ach");
    assert_eq!(
        db.cl(&[
            "generate",
            "nacha",
            "--entries",
            "5000",
            "--batches",
            "3",
            "-o",
            f.to_str().unwrap()
        ])
        .code,
        0
    );
    for point in ["after_parse_start", "before_commit"] {
        let out = db.cl_env(
            &["ingest", f.to_str().unwrap()],
            &[("CLEARLEDGER_FAULT", point)],
        );
        assert_ne!(out.code, 0, "{point}: the process must die");
        assert!(
            out.stderr.contains(&format!("fault point {point} reached")),
            "{}",
            out.stderr
        );
        assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0, "{point}");
        assert_eq!(db.scalar("SELECT count(*) FROM runs"), 0, "{point}");
        assert_eq!(db.scalar("SELECT count(*) FROM files"), 0, "{point}");
    }
    let out = db.cl(&["ingest", f.to_str().unwrap(), "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 5000);
    assert_eq!(
        db.scalar("SELECT count(DISTINCT record_no) FROM postings"),
        5000
    );
}

fn a_crash_after_commit_keeps_everything_and_the_report_can_be_produced_again(db: TestDb) {
    let rep = db.file("lost.csv");
    let out = db.cl_env(
        &[
            "ingest",
            &sample("ppd-payroll-credits.ach"),
            "--report",
            rep.to_str().unwrap(),
        ],
        &[("CLEARLEDGER_FAULT", "after_commit")],
    );
    assert_ne!(out.code, 0);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
    assert_eq!(
        db.scalar("SELECT count(*) FROM runs WHERE status = 'completed'"),
        1
    );
    // The report of the committed run is in the database.
    let again = db.file("again.csv");
    let out = db.cl(&["report", "1", "-o", again.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        read_csv(&again)
            .iter()
            .filter(|r| r["outcome"] == "posted")
            .count(),
        4
    );
    // The operator's retry: all duplicates, nothing new.
    let out = db.cl(&["ingest", &sample("ppd-payroll-credits.ach"), "--json"]);
    assert_eq!(out.code, 0);
    let s: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(
        (s["posted"].as_i64(), s["duplicates"].as_i64()),
        (Some(0), Some(4))
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
}

fn two_concurrent_processes_on_the_same_file_post_each_entry_once(db: TestDb) {
    let f = db.file("g.ach");
    let n = 20_000;
    assert_eq!(
        db.cl(&[
            "generate",
            "nacha",
            "--entries",
            &n.to_string(),
            "--batches",
            "4",
            "-o",
            f.to_str().unwrap()
        ])
        .code,
        0
    );
    let spawn = || {
        std::process::Command::new(common::bin())
            .args(["--db", &db.url, "ingest", "--json", f.to_str().unwrap()])
            .env_remove("CLEARLEDGER_FAULT")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
    let mut posted = Vec::new();
    for o in &outs {
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        posted.push((
            s["posted"].as_i64().unwrap(),
            s["duplicates"].as_i64().unwrap(),
        ));
    }
    posted.sort();
    assert_eq!(posted, vec![(0, n), (n, 0)]);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), n);
    assert_eq!(
        db.scalar("SELECT count(*) FROM journal WHERE outcome = 'duplicate'"),
        n
    );
}

fn tenants_are_isolated(db: TestDb) {
    let payroll = sample("ppd-payroll-credits.ach");
    for t in ["alpha", "beta"] {
        assert_eq!(db.cl(&["tenant", "add", t]).code, 0);
    }
    assert_eq!(db.cl(&["--tenant", "alpha", "ingest", &payroll]).code, 0);
    let out = db.cl(&["--tenant", "beta", "ingest", &payroll, "--json"]);
    assert_eq!(out.code, 0);
    let s: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(
        s["posted"], 4,
        "the same file under another tenant is another file"
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 8);
    // Beta sees neither alpha's run nor its postings.
    assert_eq!(db.cl(&["--tenant", "beta", "report", "1"]).code, 5);
    assert_eq!(db.cl(&["--tenant", "alpha", "report", "1"]).code, 0);
    let out = db.cl(&[
        "--tenant",
        "beta",
        "lookup",
        "--json",
        "--key",
        &format!("{PAYROLL_ID}:1"),
    ]);
    let p: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(
        (p["tenant"].as_str(), p["run_id"].as_i64()),
        (Some("beta"), Some(2))
    );
    // A tenant nobody added is refused, reads included; once added it is empty.
    let out = db.cl(&["--tenant", "gamma", "runs", "--json"]);
    assert_eq!((out.code, out.stdout.as_str()), (2, ""), "{}", out.stderr);
    assert_eq!(db.cl(&["tenant", "add", "gamma"]).code, 0);
    let out = db.cl(&["--tenant", "gamma", "runs", "--json"]);
    assert_eq!((out.code, out.stdout.trim()), (0, ""), "{}", out.stderr);
}

fn report_reproduces_the_ingest_report_byte_for_byte(db: TestDb) {
    assert_eq!(
        db.cl(&["ingest", &sample("ppd-payroll-credits.ach")]).code,
        0
    );
    let first = db.file("first.csv");
    let out = db.cl(&[
        "ingest",
        &sample("ppd-payroll-credits-amended.ach"),
        "--report",
        first.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 1);
    let again = db.file("again.csv");
    assert_eq!(
        db.cl(&["report", "2", "-o", again.to_str().unwrap()]).code,
        0
    );
    assert_eq!(
        std::fs::read(&first).unwrap(),
        std::fs::read(&again).unwrap()
    );
    // By file_id: every run of the file, oldest first.
    let out = db.cl(&["report", PAYROLL_ID, "--format", "jsonl"]);
    assert_eq!(out.code, 0);
    let runs: Vec<i64> = out
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["run_id"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(runs, vec![1, 1, 1, 1, 2, 2, 2, 2]);
    assert_eq!(db.cl(&["report", "99"]).code, 5);
}

fn lookup_finds_postings_by_trace_source_and_key(db: TestDb) {
    assert_eq!(
        db.cl(&["ingest", &sample("ppd-payroll-credits.ach")]).code,
        0
    );
    assert_eq!(
        db.cl(&["ingest", &sample("ppd-payroll-credits.ach")]).code,
        0
    );
    let one = |args: &[&str]| -> serde_json::Value {
        let mut a = vec!["lookup", "--json"];
        a.extend_from_slice(args);
        let out = db.cl(&a);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(out.stdout.lines().count(), 1);
        serde_json::from_str(out.stdout.trim()).unwrap()
    };
    let p = one(&["--trace", "121042880000002"]);
    assert_eq!(
        (
            p["record_no"].as_i64(),
            p["amount_minor"].as_i64(),
            p["repeats"].as_i64()
        ),
        (Some(2), Some(187550), Some(1))
    );
    let p = one(&["--file-id", PAYROLL_ID, "--record-no", "4"]);
    assert_eq!(p["trace_number"], "121042880000004");
    let p = one(&["--key", &format!("{PAYROLL_ID}:3")]);
    assert_eq!(p["effective_date"], "2026-11-30");
    let out = db.cl(&["lookup", "--trace", "000000000000000"]);
    assert_eq!(out.code, 5);
}

fn trace_numbers_are_not_keys_the_100k_reference_file_posts_every_entry(db: TestDb) {
    let corpus = common::corpus();
    let path = db.file("bench.ach");
    let gz = std::fs::File::open(corpus.join("ach/bench/PPD-200-batches-100000-entries.ach.gz"))
        .unwrap();
    std::io::copy(
        &mut flate2::read::GzDecoder::new(gz),
        &mut std::fs::File::create(&path).unwrap(),
    )
    .unwrap();
    let out = db.cl(&["ingest", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 100_199);
    assert_eq!(
        db.scalar("SELECT count(*) FROM (SELECT trace_number FROM postings GROUP BY trace_number HAVING count(*) > 1) AS t"),
        3_556
    );
}

fn stdin_input_and_multiple_files_in_one_command(db: TestDb) {
    let mut child = std::process::Command::new(common::bin())
        .args(["--db", &db.url, "ingest", "--json", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read(samples().join("ctx-remittance.ach")).unwrap())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (s["file"].as_str(), s["posted"].as_i64()),
        (Some("-"), Some(1))
    );
    // The CTX entry's three addenda are part of its fingerprint and detail.
    let detail = db.rows("SELECT detail FROM postings")[0][0].clone();
    assert!(detail.contains("RMR*IV*INV-2026-001**1500.00~"), "{detail}");

    let out = db.cl(&[
        "ingest",
        "--json",
        &sample("ccd-vendor-debits.ach"),
        &sample("web-returns.ach"),
        &sample("invalid-batch-total.ach"),
    ]);
    assert_eq!(out.code, 3, "the worst outcome wins");
    let statuses: Vec<String> = out
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["status"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(statuses, ["completed", "completed", "rejected"]);
    // A debit entry swaps the sides: the receiver is debited.
    let rows = db.rows("SELECT debit_account, credit_account FROM postings WHERE trace_number = '121042880000001' AND amount_minor = 1250000");
    assert_eq!(
        rows,
        vec![vec![
            "rdfi:231380104:55500011".to_string(),
            "odfi:12104288:9876543210".into()
        ]]
    );
}

fn unreadable_inputs_are_rejected_with_their_path(db: TestDb) {
    let missing = db.file("no such file.ach");
    let out = db.cl(&["ingest", missing.to_str().unwrap()]);
    assert_eq!(out.code, 3);
    assert!(
        out.stderr
            .contains("no such file.ach: rejected: cannot read"),
        "{}",
        out.stderr
    );
    let out = db.cl(&["ingest", db.dir.path().to_str().unwrap()]);
    assert_eq!(out.code, 3);
    assert!(out.stderr.contains("is a directory"), "{}", out.stderr);
    let xml = db.file("pacs.xml");
    std::fs::write(&xml, "<?xml version=\"1.0\"?><Document/>").unwrap();
    let out = db.cl(&["ingest", xml.to_str().unwrap()]);
    assert_eq!(out.code, 3);
    assert!(
        out.stderr.contains("[unsupported_message]"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("found \"a Document without namespace\""),
        "{}",
        out.stderr
    );
    let empty = db.file("empty.ach");
    std::fs::write(&empty, "").unwrap();
    let out = db.cl(&["ingest", empty.to_str().unwrap()]);
    assert_eq!(out.code, 3);
    assert!(out.stderr.contains("[empty_file]"), "{}", out.stderr);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
}

#[test]
fn an_unreachable_or_locked_sqlite_database_is_an_infrastructure_failure() {
    let db = TestDb::sqlite();
    let out = common::run(
        &[
            "--db",
            "sqlite:///nonexistent-dir/x/ledger.db",
            "ingest",
            &sample("ppd-payroll-credits.ach"),
        ],
        &[],
    );
    // A directory that does not exist is a configuration error (tests/it/config.rs), not
    // something a retry fixes.
    assert_eq!(out.code, 7);
    assert!(
        out.stderr.contains("configuration error (not retryable)"),
        "{}",
        out.stderr
    );

    assert_eq!(db.cl(&["db", "migrate"]).code, 0);
    // Another process holds the write lock for longer than our lock timeout.
    let holder = rusqlite::Connection::open(db.url.strip_prefix("sqlite://").unwrap()).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let out = db.cl(&[
        "--lock-timeout",
        "1",
        "ingest",
        &sample("ppd-payroll-credits.ach"),
    ]);
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(out.stderr.contains("database is locked"), "{}", out.stderr);
    holder.execute_batch("ROLLBACK").unwrap();
    // Retry once the lock is gone: it goes through.
    assert_eq!(
        db.cl(&["ingest", &sample("ppd-payroll-credits.ach")]).code,
        0
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
}

#[test]
fn check_validates_without_a_database() {
    let out = common::run(&["check", &sample("ppd-payroll-credits.ach")], &[]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.contains(
            "valid: 1 batches, 4 entries, 1 addenda, debits 0.00 USD credits 7875.49 USD;"
        ),
        "{}",
        out.stdout
    );
    let out = common::run(
        &["check", "--json", &sample("invalid-batch-total.ach")],
        &[],
    );
    assert_eq!(out.code, 3);
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(v["status"], "invalid");
    assert_eq!(v["findings"][0]["code"], "total_debit_mismatch");
    assert_eq!(v["findings"][0]["columns"], "21-32");
    assert_eq!(v["findings"][0]["line"], 4);
}

#[test]
fn help_documents_exit_codes() {
    let out = common::run(&["--help"], &[]);
    assert_eq!(out.code, 0);
    for line in [
        "3  file rejected",
        "4  infrastructure failure",
        "1  processed with conflicts",
    ] {
        assert!(out.stdout.contains(line), "{line}: {}", out.stdout);
    }
}

/// A command's own options come first under "Options:"; the ones every command takes
/// under "Global options:", not mixed in.
#[test]
fn global_options_have_their_own_heading() {
    for command in ["ingest", "reconcile", "serve", "runs"] {
        let out = common::run(&[command, "--help"], &[]);
        assert_eq!(out.code, 0, "{command}");
        let (own, global) = out
            .stdout
            .split_once("\nGlobal options:\n")
            .unwrap_or_else(|| panic!("{command}: no Global options heading: {}", out.stdout));
        assert!(own.contains("\nOptions:\n"), "{command}");
        for flag in [
            "--db",
            "--tenant",
            "--lock-timeout",
            "--log-format",
            "--quiet",
        ] {
            assert!(
                global.contains(flag),
                "{command}: {flag} not global: {global}"
            );
            assert!(
                !own.contains(&format!(" {flag} ")),
                "{command}: {flag} among its own"
            );
        }
    }
}

/// Long variant (`#[ignore]`d; CLEARLEDGER_LONG_TESTS=1): a 1 M-entry file, first ingest
/// and re-upload.
fn long_one_million_entries_post_once_and_reupload_posts_nothing(db: TestDb) {
    let f = db.file("big.ach");
    let n: i64 = 1_000_000;
    assert_eq!(
        db.cl(&[
            "generate",
            "nacha",
            "--entries",
            &n.to_string(),
            "--batches",
            "10",
            "-o",
            f.to_str().unwrap()
        ])
        .code,
        0
    );
    let out = db.cl(&["ingest", "--json", f.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let s: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(s["posted"].as_i64(), Some(n));
    let rep = db.file("r.csv");
    let out = db.cl(&[
        "ingest",
        "--json",
        f.to_str().unwrap(),
        "--report",
        rep.to_str().unwrap(),
    ]);
    let s: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(
        (s["posted"].as_i64(), s["duplicates"].as_i64()),
        (Some(0), Some(n))
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), n);
    let lines = std::fs::read_to_string(&rep).unwrap().lines().count() as i64;
    assert_eq!(lines, n + 1);
}

long_on_both_backends!(long_one_million_entries_post_once_and_reupload_posts_nothing);

/// A new SQLite ledger is made of 16 KiB pages (a fresh insert of 1 M posting
/// rows 12.0 s with SQLite's default 4 KiB, 8.1 s with 16 KiB); a ledger that exists keeps
/// the page size it was made with.
#[test]
fn a_new_sqlite_ledger_has_16_kib_pages_and_an_old_one_keeps_its_own() {
    let db = TestDb::sqlite();
    let out = db.cl(&["ingest", "-q", &sample("ppd-payroll-credits.ach")]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(db.scalar("PRAGMA page_size"), 16384);

    let old = TestDb::sqlite();
    old.exec_script("PRAGMA page_size = 4096; CREATE TABLE t (x);");
    let out = old.cl(&["ingest", "-q", &sample("ppd-payroll-credits.ach")]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(old.scalar("PRAGMA page_size"), 4096);
    assert_eq!(old.scalar("SELECT count(*) FROM postings"), 4);
}
