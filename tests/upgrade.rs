//! A ledger written by the previous release (the journal before migration 0003) is
//! upgraded in place by this one, and reports exactly what the previous release reported.
//!
//! The fixtures under tests/fixtures/v1/ were made by clearledger at commit 100e825:
//! `ingest samples/ppd-payroll-credits.ach` (run 1: 4 posted), the same file again (run 2:
//! 4 duplicates, exact re-upload), `ingest samples/ppd-payroll-credits-amended.ach` (run 3:
//! 3 duplicates, record 2 a conflict); then `report 1|2|3` (report-N.csv) and the database dumped
//! (`sqlite3 .dump`, `pg_dump --inserts --no-owner --no-privileges`, its psql-only `\restrict` lines removed); the PostgreSQL reports
//! are report-N.pg.csv (their times differ).

mod common;
use common::{Backend, TestDb, samples};
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1")
}

fn restore(db: &TestDb) {
    let dump = match db.backend {
        Backend::Sqlite => "ledger.sqlite.sql",
        Backend::Postgres => "ledger.pg.sql",
    };
    let sql = std::fs::read_to_string(fixtures().join(dump)).expect("fixture dump");
    db.exec_script(&sql);
}

fn a_previous_release_ledger_upgrades_and_reports_the_same(db: TestDb) {
    restore(&db);
    for run in ["1", "2", "3"] {
        let out = db.file(&format!("report-{run}.csv"));
        let r = db.cl(&["report", run, "-o", out.to_str().unwrap()]);
        assert_eq!(r.code, 0, "report {run}: {}", r.stderr);
        let want = match db.backend {
            Backend::Sqlite => format!("report-{run}.csv"),
            Backend::Postgres => format!("report-{run}.pg.csv"),
        };
        let want = std::fs::read_to_string(fixtures().join(want)).unwrap();
        let got = std::fs::read_to_string(&out).unwrap();
        assert_eq!(got, want, "report of run {run} after the upgrade");
    }
    assert_eq!(
        db.scalar("SELECT count(*) FROM journal WHERE original_posting_id IS NOT NULL"),
        8,
        "every old repeat (run 2: 4, run 3: 4) keeps the posting it matched"
    );
    // The upgraded ledger goes on working: the amended file again is 3 duplicates and the
    // same conflict, now journaled the slim way; lookups count every repeat.
    let amended = samples().join("ppd-payroll-credits-amended.ach");
    let r = db.cl(&["ingest", "-q", amended.to_str().unwrap(), "--json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        db.rows("SELECT record_no, outcome, CASE WHEN posting_key IS NULL THEN 1 ELSE 0 END, differences FROM journal WHERE run_id = 4 ORDER BY record_no"),
        vec![
            vec!["1", "duplicate", "1", "NULL"],
            vec!["2", "conflict", "0", "amount: 187550 != 187551"],
            vec!["3", "duplicate", "1", "NULL"],
            vec!["4", "duplicate", "1", "NULL"],
        ]
        .into_iter()
        .map(|r| r.into_iter().map(String::from).collect::<Vec<_>>())
        .collect::<Vec<_>>()
    );
    assert_eq!(
        db.scalar("SELECT count(*) FROM journal j JOIN postings p ON p.posting_id = j.original_posting_id WHERE p.record_no = 3"),
        3,
        "posting 3 was seen again by runs 2, 3 and 4"
    );
}

on_both_backends!(a_previous_release_ledger_upgrades_and_reports_the_same);
