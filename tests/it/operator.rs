//! Operator actions: `held`, `resolve`, `reverse`, on both backends.

use crate::common;

use common::TestDb;
use serde_json::Value;

on_both_backends!(
    held_records_are_listed_and_resolved_once,
    a_decision_and_its_posting_commit_together_and_contradictions_are_refused,
    a_run_is_reversed_once_and_again_is_all_duplicates,
    one_posting_is_reversed_by_key,
    totals_are_given_per_currency,
    two_opposite_decisions_at_once_leave_one,
    a_rejected_record_never_posts,
);

/// The payroll sample, and the same file regenerated with file ID modifier `B` (same
/// origin, same entries): every entry of the second is held as re-sent.
fn payroll_and_its_resend(db: &TestDb) -> (String, String) {
    let a = common::samples().join("ppd-payroll-credits.ach");
    let text = std::fs::read_to_string(&a).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[0].replace_range(33..34, "B");
    let b = db.file("payroll-B.ach");
    std::fs::write(&b, lines.join("\n") + "\n").unwrap();
    (
        a.to_str().unwrap().to_string(),
        b.to_str().unwrap().to_string(),
    )
}

fn json(r: &common::Run) -> Value {
    serde_json::from_str(r.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

/// Ingests the payroll and its re-send: run 1 posts 4, run 2 holds 4.
fn setup(db: &TestDb) {
    let (a, b) = payroll_and_its_resend(db);
    assert_eq!(db.cl(&["ingest", "-q", &a]).code, 0);
    let r = db.cl(&["ingest", "-q", "--json", &b]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(json(&r)["held"], 4);
}

fn held_records_are_listed_and_resolved_once(db: TestDb) {
    setup(&db);
    let held = db.cl(&["held", "--json"]);
    assert_eq!(held.code, 0, "{}", held.stderr);
    let rows = common::json_lines(&held.stdout);
    assert_eq!(rows.len(), 4);
    let first = &rows[0];
    assert_eq!(
        (first["run_id"].as_i64(), first["record_no"].as_i64()),
        (Some(2), Some(1))
    );
    assert_eq!(first["amount_minor"], 250000);
    assert_eq!(first["currency"], "USD");
    assert_eq!(first["open"], true);
    assert_eq!(
        first["posting_key"],
        "nacha:231380104:1210428821:261129:0900:B:1"
    );
    assert_eq!(first["resembles"]["run_id"], 1);
    assert_eq!(first["resembles"]["record_no"], 1);
    assert!(
        first["reason"]
            .as_str()
            .unwrap()
            .starts_with("re-sent: equals record 1"),
        "{first}"
    );
    let text = db.cl(&["held"]);
    assert!(
        text.stdout.starts_with(
            "run 2 record 1: 2500.00 USD key nacha:231380104:1210428821:261129:0900:B:1"
        ),
        "{}",
        text.stdout
    );

    // Post record 1, reject record 2.
    let r = db.cl(&[
        "resolve",
        "2",
        "1",
        "--post",
        "--reason",
        "confirmed with the originator",
        "--by",
        "alice",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json(&r);
    assert_eq!(v["status"], "resolved");
    assert_eq!(v["run_id"], 3);
    assert_eq!(v["decision"]["decision"], "post");
    assert_eq!(v["decision"]["decided_by"], "alice");
    assert_eq!(v["decision"]["reason"], "confirmed with the originator");
    let posting_id = v["decision"]["posting_id"].as_i64().unwrap();
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 5);
    assert_eq!(
        db.scalar(&format!(
            "SELECT count(*) FROM postings WHERE posting_id = {posting_id} AND run_id = 3 \
             AND posting_key = 'nacha:231380104:1210428821:261129:0900:B:1' AND amount_minor = 250000 \
             AND effective_date = '2026-11-30'"
        )),
        1
    );
    let r = db.cl(&[
        "resolve",
        "2",
        "2",
        "--reject",
        "--reason",
        "a re-send",
        "--by",
        "bob",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout.trim(),
        "run 2 record 2: rejected, never to post (run 4)"
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 5);

    // Two open remain; --all shows the decided ones with their decision.
    let open = common::json_lines(&db.cl(&["held", "--json"]).stdout);
    let open: Vec<i64> = open
        .iter()
        .map(|v| v["record_no"].as_i64().unwrap())
        .collect();
    assert_eq!(open, vec![3, 4]);
    let all = common::json_lines(&db.cl(&["held", "--json", "--all"]).stdout);
    assert_eq!(all.len(), 4);
    assert_eq!(all[1]["decision"]["decision"], "reject");
    assert_eq!(all[1]["open"], false);

    // `lookup` finds a held record by its file and record number, with its decision.
    let l = db.cl(&[
        "lookup",
        "--file-id",
        "nacha:231380104:1210428821:261129:0900:B",
        "--record-no",
        "2",
    ]);
    assert_eq!(l.code, 0, "{}", l.stderr);
    assert!(
        l.stdout.starts_with(
            "held: run 2 record 2 key nacha:231380104:1210428821:261129:0900:B:2: 1875.50 USD: re-sent"
        ) && l.stdout.contains("; decided: reject by bob at "),
        "{}",
        l.stdout
    );
    let l = db.cl(&[
        "lookup",
        "--json",
        "--file-id",
        "nacha:231380104:1210428821:261129:0900:B",
        "--record-no",
        "4",
    ]);
    let v = json(&l);
    assert_eq!(
        (v["outcome"].as_str(), v["open"].as_bool()),
        (Some("held"), Some(true))
    );
    // The held run's report shows each decision; the decision's run reports its posting.
    let rep = db.file("r2.csv");
    assert_eq!(db.cl(&["report", "2", "-o", rep.to_str().unwrap()]).code, 0);
    let rows = common::read_csv(&rep);
    assert_eq!(rows.len(), 4);
    assert!(
        rows[0]["decision"].starts_with("post by alice at ")
            && rows[0]["decision"].ends_with(" (run 3): confirmed with the originator"),
        "{:?}",
        rows[0]
    );
    assert!(
        rows[1]["decision"].starts_with("reject by bob at "),
        "{:?}",
        rows[1]
    );
    assert_eq!(rows[2]["decision"], "");
    let rep3 = db.file("r3.csv");
    assert_eq!(
        db.cl(&["report", "3", "-o", rep3.to_str().unwrap()]).code,
        0
    );
    let rows = common::read_csv(&rep3);
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (
            rows[0]["outcome"].as_str(),
            rows[0]["record_no"].as_str(),
            rows[0]["kind"].as_str()
        ),
        ("posted", "1", "record")
    );
    // The runs list names the actions.
    let runs = common::json_lines(&db.cl(&["runs", "--json"]).stdout);
    assert_eq!(runs[0]["kind"], "resolve");
    assert_eq!(runs[0]["source_name"], "resolve run 2 record 2: reject");
    assert_eq!(runs[1]["kind"], "resolve");
    assert_eq!(runs[3]["kind"], "ingest");
}

fn a_decision_and_its_posting_commit_together_and_contradictions_are_refused(db: TestDb) {
    setup(&db);
    let post = [
        "resolve", "2", "3", "--post", "--reason", "ok", "--by", "alice",
    ];
    // Killed just before its commit: neither the decision nor the posting exists.
    let r = db.cl_env(&post, &[("CLEARLEDGER_FAULT", "before_commit")]);
    assert_ne!(r.code, 0);
    assert_eq!(db.scalar("SELECT count(*) FROM decisions"), 0);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
    assert_eq!(db.cl(&post).code, 0);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 5);
    // The same decision again: exit 0, "already resolved", nothing new.
    let again = db.cl(&[
        "resolve", "2", "3", "--post", "--reason", "sure", "--by", "carol",
    ]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again
            .stdout
            .starts_with("run 2 record 3: already resolved: post by alice at "),
        "{}",
        again.stdout
    );
    // The opposite: refused, exit 1, naming the earlier decision.
    let no = db.cl(&[
        "resolve", "2", "3", "--reject", "--reason", "no", "--by", "carol",
    ]);
    assert_eq!(no.code, 1, "{}", no.stderr);
    assert!(
        no.stderr
            .contains("refused: it was decided otherwise before: post by alice at "),
        "{}",
        no.stderr
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 5);
    assert_eq!(db.scalar("SELECT count(*) FROM decisions"), 1);
    assert_eq!(
        db.scalar("SELECT count(*) FROM runs WHERE kind = 'resolve'"),
        1
    );
    // Not a held record; no such record; no reason.
    let posted = db.cl(&["resolve", "1", "2", "--post", "--reason", "x"]);
    assert_eq!(posted.code, 2, "{}", posted.stderr);
    assert!(
        posted
            .stderr
            .contains("is a posted record, not a held record")
    );
    assert_eq!(
        db.cl(&["resolve", "2", "9", "--post", "--reason", "x"])
            .code,
        5
    );
    assert_eq!(
        db.cl(&["resolve", "2", "4", "--post", "--reason", " "])
            .code,
        2
    );
    // The held file sent again after the decision: the posted record is a duplicate of
    // its decided posting (the file's claim was released, its every record held).
    let (_, b) = payroll_and_its_resend(&db);
    let r = db.cl(&["ingest", "-q", "--json", &b]);
    let v = json(&r);
    assert_eq!(
        (
            v["posted"].as_i64(),
            v["duplicates"].as_i64(),
            v["held"].as_i64()
        ),
        (Some(0), Some(1), Some(3))
    );
}

fn a_run_is_reversed_once_and_again_is_all_duplicates(db: TestDb) {
    setup(&db);
    let r = db.cl(&[
        "reverse",
        "1",
        "--reason",
        "posted in error",
        "--by",
        "carol",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json(&r);
    assert_eq!(
        (
            v["run_id"].as_i64(),
            v["posted"].as_i64(),
            v["duplicates"].as_i64()
        ),
        (Some(3), Some(4), Some(0))
    );
    assert_eq!(v["totals"][0]["currency"], "USD");
    assert_eq!(v["totals"][0]["amount_minor"], 787549);
    // Accounts swapped, key derived, the original named; ledger balance per account zero.
    let swapped = db.scalar(
        "SELECT count(*) FROM postings c JOIN postings o ON o.tenant = c.tenant AND o.posting_id = c.compensates \
         WHERE c.run_id = 3 AND c.debit_account = o.credit_account AND c.credit_account = o.debit_account \
         AND c.amount_minor = o.amount_minor AND c.posting_key = o.posting_key || ':compensate' \
         AND c.file_id = 'compensate:' || o.file_id AND c.record_no = o.record_no",
    );
    assert_eq!(swapped, 4);
    let net = db.scalar(
        "SELECT count(*) FROM (SELECT acct, sum(amt) AS s FROM ( \
           SELECT debit_account AS acct, amount_minor AS amt FROM postings \
           UNION ALL SELECT credit_account, -amount_minor FROM postings) x GROUP BY acct) y WHERE s <> 0",
    );
    assert_eq!(net, 0, "every account nets to zero after the reversal");
    let rep = db.file("r3.csv");
    assert_eq!(db.cl(&["report", "3", "-o", rep.to_str().unwrap()]).code, 0);
    let rows = common::read_csv(&rep);
    assert_eq!(rows.len(), 4);
    assert!(
        rows.iter()
            .all(|r| r["outcome"] == "posted" && r["kind"] == "compensation")
    );
    assert_eq!(rows[0]["original_run_id"], "1");
    assert_eq!(rows[0]["original_record_no"], "1");
    // Again: nothing posted, every record a duplicate of its compensation.
    let r = db.cl(&["reverse", "1", "--reason", "again", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json(&r);
    assert_eq!(
        (
            v["run_id"].as_i64(),
            v["posted"].as_i64(),
            v["duplicates"].as_i64()
        ),
        (Some(4), Some(0), Some(4))
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 8);
    assert_eq!(db.cl(&["report", "4", "-o", rep.to_str().unwrap()]).code, 0);
    let rows = common::read_csv(&rep);
    assert!(
        rows.iter().all(|r| r["outcome"] == "duplicate"
            && r["original_run_id"] == "3"
            && r["kind"] == "compensation"),
        "{rows:?}"
    );
    // A run that posted nothing (the held one), and one that does not exist.
    assert_eq!(db.cl(&["reverse", "2", "--reason", "x"]).code, 5);
    assert_eq!(db.cl(&["reverse", "99", "--reason", "x"]).code, 5);
    let runs = common::json_lines(&db.cl(&["runs", "--json"]).stdout);
    assert_eq!(
        (
            runs[0]["kind"].as_str(),
            runs[0]["reason"].as_str(),
            runs[1]["actor"].as_str()
        ),
        (Some("reverse"), Some("again"), Some("carol"))
    );
}

fn one_posting_is_reversed_by_key(db: TestDb) {
    setup(&db);
    let key = "nacha:231380104:1210428821:261129:0900:A:2";
    let r = db.cl(&[
        "reverse",
        "--key",
        key,
        "--reason",
        "one entry in error",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json(&r);
    assert_eq!(
        (v["posted"].as_i64(), v["duplicates"].as_i64()),
        (Some(1), Some(0))
    );
    assert_eq!(
        db.scalar(&format!(
            "SELECT count(*) FROM postings WHERE posting_key = '{key}:compensate' AND amount_minor = 187550"
        )),
        1
    );
    // Reversing the whole run then compensates the other three, and names the fourth's.
    let r = db.cl(&["reverse", "1", "--reason", "the rest", "--json"]);
    let v = json(&r);
    assert_eq!(
        (v["posted"].as_i64(), v["duplicates"].as_i64()),
        (Some(3), Some(1))
    );
    assert_eq!(
        db.cl(&["reverse", "--key", "no-such-key", "--reason", "x"])
            .code,
        5
    );
}

fn totals_are_given_per_currency(db: TestDb) {
    let (a, _) = payroll_and_its_resend(&db);
    let r = db.cl(&["ingest", "-q", "--json", &a]);
    let v = json(&r);
    assert_eq!(
        v["totals"],
        serde_json::json!([{"currency": "USD", "posted": 4, "amount_minor": 787549}])
    );
    let runs = common::json_lines(&db.cl(&["runs", "--json"]).stdout);
    assert_eq!(runs[0]["totals"], v["totals"]);
    let text = db.cl(&["ingest", &a]);
    assert!(text.stdout.contains("records/s"), "{}", text.stdout);
}

fn two_opposite_decisions_at_once_leave_one(db: TestDb) {
    setup(&db);
    let spawn = |decision: &str, fault: Option<&str>| {
        let mut c = std::process::Command::new(common::bin());
        c.args([
            "--db", &db.url, "resolve", "2", "1", decision, "--reason", "race", "--json",
        ])
        .env_remove("CLEARLEDGER_FAULT")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
        if let Some(f) = fault {
            c.env("CLEARLEDGER_FAULT", f);
        }
        c.spawn().unwrap()
    };
    // The first holds its decision uncommitted (stopped just before COMMIT); the second
    // starts meanwhile, finds no decision yet, and meets the first's in the unique index
    // (PostgreSQL) or behind its write lock (SQLite) once the first commits.
    let first = spawn("--post", Some("stop:before_commit"));
    common::wait_until_stopped(first.id());
    let second = spawn("--reject", None);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    common::resume(first.id());
    let (p, r) = (
        first.wait_with_output().unwrap(),
        second.wait_with_output().unwrap(),
    );
    assert_eq!(
        p.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&p.stderr)
    );
    assert_eq!(
        r.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v["status"], "refused");
    assert_eq!(v["decision"]["decision"], "post");
    assert_eq!(db.scalar("SELECT count(*) FROM decisions"), 1);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 5);
    assert_eq!(
        db.scalar("SELECT count(*) FROM runs WHERE kind = 'resolve'"),
        1
    );
}

/// A rejected record never posts: not when its file is sent again with --accept-resent.
fn a_rejected_record_never_posts(db: TestDb) {
    setup(&db);
    let r = db.cl(&["resolve", "2", "1", "--reject", "--reason", "a re-send"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (_, b) = payroll_and_its_resend(&db);
    let r = db.cl(&["ingest", "-q", "--json", "--accept-resent", &b]);
    let v = json(&r);
    assert_eq!(
        (v["posted"].as_i64(), v["held"].as_i64()),
        (Some(3), Some(1)),
        "{v}"
    );
    assert_eq!(
        db.scalar("SELECT count(*) FROM postings WHERE posting_key = 'nacha:231380104:1210428821:261129:0900:B:1'"),
        0
    );
    // A posted key is not rejected afterwards; it is reversed.
    let r = db.cl(&["resolve", "2", "2", "--reject", "--reason", "too late"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("a posting is not rejected, it is reversed"),
        "{}",
        r.stderr
    );
    // A compensation is not reversed.
    let rev = db.cl(&["reverse", "1", "--reason", "x", "--json"]);
    let run = json(&rev)["run_id"].as_i64().unwrap();
    let r = db.cl(&["reverse", &run.to_string(), "--reason", "undo the undo"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("is a compensation"), "{}", r.stderr);
}
