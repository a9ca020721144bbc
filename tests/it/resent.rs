//! One identity per NACHA file, and a file re-sent under another identity held rather than
//! posted twice, through the binary on both backends.
//!
//! Every variant is written here from `samples/ppd-payroll-credits.ach` by changing
//! header columns: the immediate destination (columns 4-13), the file creation date
//! (24-29) and time (30-33), the file ID modifier (34), the batch's company identification
//! (41-50, and 45-54 of its control) and effective entry date (70-75).

use crate::common;

use common::{TestDb, read_csv, samples};
use std::path::PathBuf;

on_both_backends!(
    a_routing_number_padded_with_a_zero_or_a_blank_is_one_file,
    a_file_regenerated_under_a_new_identity_is_held_naming_each_original,
    accept_resent_posts_a_regenerated_file_knowingly,
    the_window_is_counted_in_days_between_file_creation_dates,
    next_weeks_payroll_with_trace_numbers_restarted_posts,
    another_origin_or_another_amount_is_another_payment,
    two_regenerated_files_at_once_post_one_payroll,
);

const PAYROLL_ID: &str = "nacha:231380104:1210428821:261129:0900:A";
const REGENERATED_ID: &str = "nacha:231380104:1210428821:261129:0915:B";

/// The sample with `edits` applied: `(line index, first column (1-based), new text)`.
fn variant(db: &TestDb, name: &str, edits: &[(usize, usize, &str)]) -> PathBuf {
    let text = std::fs::read_to_string(samples().join("ppd-payroll-credits.ach")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for &(line, col, new) in edits {
        lines[line].replace_range(col - 1..col - 1 + new.len(), new);
    }
    let path = db.file(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// The sample regenerated: creation time 09:15, modifier B; entries unchanged.
fn regenerated(db: &TestDb) -> PathBuf {
    variant(db, "regenerated.ach", &[(0, 30, "0915B")])
}

fn ingest(db: &TestDb, path: &std::path::Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec!["ingest", "-q", "--json", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    let r = db.cl(&args);
    let v = serde_json::from_str(r.stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {} / {}", r.stdout, r.stderr));
    (r.code, v)
}

/// `(posted, duplicates, conflicts, held)`
fn counts(v: &serde_json::Value) -> (i64, i64, i64, i64) {
    let n = |k: &str| v[k].as_i64().unwrap_or(-1);
    (n("posted"), n("duplicates"), n("conflicts"), n("held"))
}

fn a_routing_number_padded_with_a_zero_or_a_blank_is_one_file(db: TestDb) {
    let sample = samples().join("ppd-payroll-credits.ach");
    let (code, v) = ingest(&db, &sample, &[]);
    assert_eq!((code, counts(&v)), (0, (4, 0, 0, 0)));
    assert_eq!(v["file_id"], PAYROLL_ID);
    // ` 231380104` and `0231380104` are one routing number: the same file, all duplicates.
    let zero = variant(&db, "zero-padded.ach", &[(0, 4, "0231380104")]);
    let (code, v) = ingest(&db, &zero, &[]);
    assert_eq!((code, counts(&v)), (0, (0, 4, 0, 0)));
    assert_eq!(v["file_id"], PAYROLL_ID);
    // Left-justified, blank after: the same again.
    let left = variant(&db, "left.ach", &[(0, 4, "231380104 ")]);
    let (code, v) = ingest(&db, &left, &[]);
    assert_eq!((code, counts(&v)), (0, (0, 4, 0, 0)));
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
    assert_eq!(db.scalar("SELECT count(*) FROM files"), 1);
    // An operator may name the file in either spelling.
    for id in [PAYROLL_ID, "nacha:0231380104:1210428821:261129:0900:A"] {
        let r = db.cl(&["lookup", "--file-id", id, "--record-no", "2", "--json"]);
        assert_eq!(r.code, 0, "{id}: {}", r.stderr);
        let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
        let first = if v.is_array() { &v[0] } else { &v };
        assert_eq!(first["posting_key"], format!("{PAYROLL_ID}:2"), "{id}");
    }
}

fn a_file_regenerated_under_a_new_identity_is_held_naming_each_original(db: TestDb) {
    let (code, _) = ingest(&db, &samples().join("ppd-payroll-credits.ach"), &[]);
    assert_eq!(code, 0);
    let file = regenerated(&db);
    let report = db.file("held.csv");
    let (code, v) = ingest(&db, &file, &["--report", report.to_str().unwrap()]);
    assert_eq!(code, 1, "held records need attention");
    assert_eq!(counts(&v), (0, 0, 0, 4));
    assert_eq!(v["file_id"], REGENERATED_ID);
    assert_eq!(v["status"], "needs_attention");
    assert_eq!(
        db.scalar("SELECT count(*) FROM postings"),
        4,
        "nothing posted twice"
    );
    let rows = read_csv(&report);
    let got: Vec<(String, String, String, String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["record_no"].clone(),
                r["outcome"].clone(),
                r["original_file_id"].clone(),
                r["original_record_no"].clone(),
                r["original_run_id"].clone(),
            )
        })
        .collect();
    let want: Vec<(String, String, String, String, String)> = (1..=4)
        .map(|n| {
            (
                n.to_string(),
                "held".to_string(),
                PAYROLL_ID.to_string(),
                n.to_string(),
                "1".to_string(),
            )
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        rows[1]["reason"],
        format!(
            "re-sent: equals record 2 of file {PAYROLL_ID} (run 1): same company, trace number, transaction \
             code, RDFI routing and account, amount and effective entry date, in a file of the same \
             origin created within 10 days; not posted"
        )
    );
    // Sent again as it is: held again (its identity was not kept by a run that posted nothing).
    let (code, v) = ingest(&db, &file, &[]);
    assert_eq!((code, counts(&v)), (1, (0, 0, 0, 4)));
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
}

fn accept_resent_posts_a_regenerated_file_knowingly(db: TestDb) {
    let (code, _) = ingest(&db, &samples().join("ppd-payroll-credits.ach"), &[]);
    assert_eq!(code, 0);
    let file = regenerated(&db);
    let (code, v) = ingest(&db, &file, &[]);
    assert_eq!((code, counts(&v)), (1, (0, 0, 0, 4)));
    // The operator decides it is a second, real payroll run.
    let (code, v) = ingest(&db, &file, &["--accept-resent"]);
    assert_eq!((code, counts(&v)), (0, (4, 0, 0, 0)));
    assert_eq!(v["file_id"], REGENERATED_ID);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 8);
    // And that identity is now a file like any other: again, all duplicates.
    let (code, v) = ingest(&db, &file, &[]);
    assert_eq!((code, counts(&v)), (0, (0, 4, 0, 0)));
}

fn the_window_is_counted_in_days_between_file_creation_dates(db: TestDb) {
    let (code, _) = ingest(&db, &samples().join("ppd-payroll-credits.ach"), &[]);
    assert_eq!(code, 0);
    // Created 2026-11-29 in the sample; the same batch (effective 2026-11-30) created again
    // 10 days later: within the default window.
    let ten = variant(&db, "ten.ach", &[(0, 24, "261209")]);
    let (code, v) = ingest(&db, &ten, &[]);
    assert_eq!((code, counts(&v)), (1, (0, 0, 0, 4)));
    // 11 days later: outside it, posted.
    let eleven = variant(&db, "eleven.ach", &[(0, 24, "261210")]);
    let (code, v) = ingest(&db, &eleven, &["--resend-window-days", "10"]);
    assert_eq!((code, counts(&v)), (0, (4, 0, 0, 0)));
    // A wider window holds the same batch created a month later.
    let later = variant(&db, "later.ach", &[(0, 24, "261229")]);
    let (code, v) = ingest(&db, &later, &["--resend-window-days", "30"]);
    assert_eq!((code, counts(&v)), (1, (0, 0, 0, 4)));
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 8);
}

/// Many generators restart trace numbers at 1 in every file: next week's payroll of the
/// same salaries has every field of this week's but the dates, and is a new payment.
fn next_weeks_payroll_with_trace_numbers_restarted_posts(db: TestDb) {
    let (code, _) = ingest(&db, &samples().join("ppd-payroll-credits.ach"), &[]);
    assert_eq!(code, 0);
    let next = variant(&db, "next.ach", &[(0, 24, "261206"), (1, 70, "261207")]);
    let (code, v) = ingest(&db, &next, &[]);
    assert_eq!((code, counts(&v)), (0, (4, 0, 0, 0)));
    // Regenerated the same day as it (new time and modifier): held.
    let again = variant(
        &db,
        "next-again.ach",
        &[(0, 24, "2612061130B"), (1, 70, "261207")],
    );
    let (code, v) = ingest(&db, &again, &[]);
    assert_eq!((code, counts(&v)), (1, (0, 0, 0, 4)));
    let held_against: Vec<String> = db
        .rows("SELECT DISTINCT p.run_id FROM journal j JOIN postings p ON p.tenant = j.tenant AND p.posting_id = j.original_posting_id WHERE j.run_id = 3")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(
        held_against,
        vec!["2"],
        "held against next week's run, not this week's"
    );
}

fn another_origin_or_another_amount_is_another_payment(db: TestDb) {
    let (code, _) = ingest(&db, &samples().join("ppd-payroll-credits.ach"), &[]);
    assert_eq!(code, 0);
    // Another immediate origin (columns 14-23): not the same sender, not a re-send.
    let other_origin = variant(&db, "origin.ach", &[(0, 14, "9876543210"), (0, 34, "B")]);
    let (code, v) = ingest(&db, &other_origin, &[]);
    assert_eq!((code, counts(&v)), (0, (4, 0, 0, 0)));
    // Same origin, another company (an ODFI sending for several originators): not a re-send.
    let other_company = variant(
        &db,
        "company.ach",
        &[(0, 34, "D"), (1, 41, "1234567891"), (7, 45, "1234567891")],
    );
    let (code, v) = ingest(&db, &other_company, &[]);
    assert_eq!((code, counts(&v)), (0, (4, 0, 0, 0)));
    // Same origin, one amount changed (entry 2, with its batch and file totals): that entry
    // is another payment and posts; the other three are held.
    let amended = samples().join("ppd-payroll-credits-amended.ach");
    let text = std::fs::read_to_string(&amended).unwrap();
    let path = db.file("amended-regenerated.ach");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[0].replace_range(33..34, "C");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let (code, v) = ingest(&db, &path, &[]);
    assert_eq!((code, counts(&v)), (1, (1, 0, 0, 3)));
    assert_eq!(
        db.rows(
            "SELECT j.record_no, j.outcome FROM journal j WHERE j.run_id = 4 ORDER BY j.record_no"
        ),
        vec![
            vec!["1".to_string(), "held".to_string()],
            vec!["3".to_string(), "held".to_string()],
            vec!["4".to_string(), "held".to_string()],
        ]
    ); // That file keeps its identity (it posted an entry): sent again, even with
    // --accept-resent, its held entries stay held, now because the identity was seen; they
    // wait for an operator's decision.
    let (code, v) = ingest(&db, &path, &["--accept-resent"]);
    assert_eq!((code, counts(&v)), (1, (0, 1, 0, 3)));
    assert_eq!(
        db.rows("SELECT DISTINCT reason FROM journal WHERE run_id = 5 AND outcome = 'held'"),
        vec![vec![
            "file identity already ingested by run 4, which did not post this record; not posted"
                .to_string()
        ]]
    );
}

/// Two variants of one payroll (two identities, one origin) ingested at the same moment by
/// two processes: the origin's runs take turns, so one posts and the other is held.
fn two_regenerated_files_at_once_post_one_payroll(db: TestDb) {
    let a = variant(&db, "a.ach", &[(0, 30, "0915B")]);
    let b = variant(&db, "b.ach", &[(0, 30, "0916C")]);
    for round in 0..3 {
        let tenant = format!("t{round}");
        assert_eq!(db.cl(&["tenant", "add", &tenant]).code, 0);
        let spawn = |p: &PathBuf| {
            std::process::Command::new(common::bin())
                .args([
                    "--db",
                    &db.url,
                    "--tenant",
                    &format!("t{round}"),
                    "ingest",
                    "-q",
                ])
                .arg(p)
                .output()
                .unwrap()
        };
        let (ta, tb) = std::thread::scope(|s| {
            let ta = s.spawn(|| spawn(&a));
            let tb = s.spawn(|| spawn(&b));
            (ta.join().unwrap(), tb.join().unwrap())
        });
        let mut codes = [ta.status.code(), tb.status.code()];
        codes.sort();
        assert_eq!(
            codes,
            [Some(0), Some(1)],
            "round {round}: one posts, one is held"
        );
        let posted = db.scalar(&format!(
            "SELECT count(*) FROM postings WHERE tenant = 't{round}'"
        ));
        assert_eq!(posted, 4, "round {round}");
    }
}
