//! What an operator reads about runs: a dry run's report names no run, `runs`
//! and `report` say `needs_attention` as the ingest does, `lookup` counts repeats by what
//! they were.

use crate::common;

use common::{TestDb, read_csv, sample};

on_both_backends!(
    a_dry_run_report_carries_no_run_id,
    runs_and_report_say_needs_attention_as_the_ingest_summary_does,
    lookup_counts_repeats_by_outcome
);

fn json_of(r: &common::Run) -> serde_json::Value {
    serde_json::from_str(r.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

fn a_dry_run_report_carries_no_run_id(db: TestDb) {
    let (csv, jsonl) = (db.file("dry.csv"), db.file("dry.jsonl"));
    for report in [&csv, &jsonl] {
        let r = db.cl(&[
            "ingest",
            "-q",
            "--dry-run",
            "--report",
            report.to_str().unwrap(),
            &sample("ppd-payroll-credits.ach"),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let rows = read_csv(&csv);
    assert_eq!(rows.len(), 4);
    for row in &rows {
        assert_eq!(
            (row["run_id"].as_str(), row["outcome"].as_str()),
            ("", "would_post")
        );
    }
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert!(lines.iter().all(|v| v["run_id"].is_null()), "{lines:?}");
    // The real run has its id, on its rows.
    let real = db.file("real.csv");
    let r = db.cl(&[
        "ingest",
        "-q",
        "--json",
        "--report",
        real.to_str().unwrap(),
        &sample("ppd-payroll-credits.ach"),
    ]);
    let id = json_of(&r)["run_id"].as_i64().unwrap().to_string();
    let rows = read_csv(&real);
    assert!(rows.iter().all(|row| row["run_id"] == id), "{rows:?}");
    // A dry run after it names that run as the original, and still no run of its own.
    let r = db.cl(&[
        "ingest",
        "-q",
        "--dry-run",
        "--report",
        csv.to_str().unwrap(),
        &sample("ppd-payroll-credits-amended.ach"),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let got: Vec<(String, String, String)> = read_csv(&csv)
        .iter()
        .map(|row| {
            (
                row["run_id"].clone(),
                row["outcome"].clone(),
                row["original_run_id"].clone(),
            )
        })
        .collect();
    let want: Vec<(String, String, String)> = ["duplicate", "conflict", "duplicate", "duplicate"]
        .iter()
        .map(|o| (String::new(), o.to_string(), id.clone()))
        .collect();
    assert_eq!(got, want);
}

fn runs_and_report_say_needs_attention_as_the_ingest_summary_does(db: TestDb) {
    let r = db.cl(&["ingest", "-q", "--json", &sample("ppd-payroll-credits.ach")]);
    let first = json_of(&r);
    let r = db.cl(&[
        "ingest",
        "-q",
        "--json",
        &sample("ppd-payroll-credits-amended.ach"),
    ]);
    assert_eq!(r.code, 1);
    let second = json_of(&r);
    assert_eq!(
        (first["status"].as_str(), second["status"].as_str()),
        (Some("completed"), Some("needs_attention"))
    );
    let (a, b) = (
        first["run_id"].as_i64().unwrap(),
        second["run_id"].as_i64().unwrap(),
    );
    // runs --json: the same words, newest first.
    let r = db.cl(&["runs", "--json"]);
    let statuses: Vec<(i64, String)> = r
        .stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["run_id"].as_i64().unwrap(),
                v["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        vec![
            (b, "needs_attention".to_string()),
            (a, "completed".to_string())
        ]
    );
    // runs: the status column.
    let r = db.cl(&["runs"]);
    let words: Vec<(String, String)> = r
        .stdout
        .lines()
        .skip(1)
        .map(|l| {
            let mut f = l.split_whitespace();
            (f.next().unwrap().to_string(), f.next().unwrap().to_string())
        })
        .collect();
    assert_eq!(
        words,
        vec![
            (b.to_string(), "needs_attention".to_string()),
            (a.to_string(), "completed".to_string())
        ]
    );
    // report: the run that needs attention says so before its rows; the other says nothing.
    let r = db.cl(&["report", &b.to_string()]);
    assert_eq!(
        (r.code, r.stderr),
        (
            0,
            format!("run {b} needs_attention: 1 conflicts, 0 held; their rows say why\n")
        )
    );
    let r = db.cl(&["report", &a.to_string()]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(db.cl(&["-q", "report", &b.to_string()]).stderr, "");
}

fn lookup_counts_repeats_by_outcome(db: TestDb) {
    for (file, code) in [
        ("ppd-payroll-credits.ach", 0),
        ("ppd-payroll-credits.ach", 0),
        ("ppd-payroll-credits-amended.ach", 1),
        ("ppd-payroll-credits-amended.ach", 1),
    ] {
        assert_eq!(db.cl(&["ingest", "-q", &sample(file)]).code, code, "{file}");
    }
    // Record 2 (the amended amount): a duplicate once, then two conflicts.
    let r = db.cl(&["lookup", "--trace", "121042880000002"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .ends_with("; seen again 3 times: 1 duplicate, 2 conflicts\n"),
        "{}",
        r.stdout
    );
    let r = db.cl(&["lookup", "--trace", "121042880000002", "--json"]);
    let v = json_of(&r);
    assert_eq!(
        (&v["repeats"], &v["repeats_by_outcome"]),
        (
            &serde_json::json!(3),
            &serde_json::json!({"duplicate": 1, "conflict": 2, "held": 0})
        )
    );
    let r = db.cl(&["lookup", "--trace", "121042880000001"]);
    assert!(
        r.stdout.ends_with("; seen again 3 times: 3 duplicates\n"),
        "{}",
        r.stdout
    );
}
