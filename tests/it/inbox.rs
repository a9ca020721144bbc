//! Unattended ingestion: `ingest --inbox --archive --quarantine`.

use crate::common;

use common::{Inbox, PAYROLL, TestDb, age, samples};
use std::fs;
use std::path::Path;

on_both_backends!(an_inbox_pass_archives_committed_files_and_quarantines_rejected_ones);

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// One pass over `ib` with `--json`.
fn pass(db: &TestDb, ib: &Inbox, env: &[(&str, &str)]) -> common::Run {
    db.cl_env(&ib.pass(&["--json"]), env)
}

fn an_inbox_pass_archives_committed_files_and_quarantines_rejected_ones(db: TestDb) {
    // Migrated first: the young file below must still be young when the pass lists it
    // (on Citus a first migration takes seconds).
    assert_eq!(db.cl(&["db", "migrate"]).code, 0);
    let ib = Inbox::under(db.dir.path());
    let (inbox, archive, quarantine) = (&ib.inbox, &ib.archive, &ib.quarantine);
    for f in [
        "ppd-payroll-credits.ach",
        "ccd-vendor-debits.ach",
        "invalid-batch-total.ach",
    ] {
        fs::copy(samples().join(f), inbox.join(f)).unwrap();
        age(&inbox.join(f));
    }
    // Still being written: a .part file, and a file modified just now.
    fs::write(inbox.join("upload.ach.part"), b"101 ").unwrap();
    fs::copy(
        samples().join("web-returns.ach"),
        inbox.join("zz-young.ach"),
    )
    .unwrap();
    let out = pass(&db, &ib, &[]);
    assert_eq!(
        out.code, 3,
        "a rejected file makes the pass exit 3: {}",
        out.stderr
    );
    let last: serde_json::Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["archived"], 2);
    assert_eq!(last["quarantined"], 1);
    assert_eq!(last["incomplete_skipped"], 2);
    assert_eq!(
        names(inbox),
        [".clearledger.lock", "upload.ach.part", "zz-young.ach"]
    );
    assert_eq!(
        names(archive),
        [
            "ccd-vendor-debits.ach",
            "ccd-vendor-debits.ach.report.csv",
            "ppd-payroll-credits.ach",
            "ppd-payroll-credits.ach.report.csv"
        ]
    );
    assert_eq!(
        names(quarantine),
        [
            "invalid-batch-total.ach",
            "invalid-batch-total.ach.error.txt"
        ]
    );
    let err = fs::read_to_string(quarantine.join("invalid-batch-total.ach.error.txt")).unwrap();
    assert!(
        err.contains("[total_debit_mismatch] record 3, byte 285"),
        "{err}"
    );
    assert!(err.contains("nothing posted"), "{err}");
    let rep = common::read_csv(&archive.join("ppd-payroll-credits.ach.report.csv"));
    assert_eq!(rep.len(), 4);
    assert!(rep.iter().all(|r| r["outcome"] == "posted"));
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 6);

    // The same file dropped again later: all duplicates, archived under a free name.
    fs::copy(
        samples().join(PAYROLL),
        inbox.join("ppd-payroll-credits.ach"),
    )
    .unwrap();
    age(&inbox.join("ppd-payroll-credits.ach"));
    age(&inbox.join("zz-young.ach"));
    let out = pass(&db, &ib, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(archive.join("ppd-payroll-credits.ach.1").exists());
    let rep = common::read_csv(&archive.join("ppd-payroll-credits.ach.1.report.csv"));
    let first_run = db.scalar("SELECT min(run_id) FROM postings WHERE file_id = 'nacha:231380104:1210428821:261129:0900:A'");
    assert!(
        rep.iter()
            .all(|r| r["outcome"] == "duplicate" && r["original_run_id"] == first_run.to_string())
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 8);
}

#[test]
fn a_second_pass_while_one_holds_the_inbox_does_nothing() {
    let db = TestDb::sqlite();
    let ib = Inbox::under(db.dir.path());
    let (inbox, archive) = (&ib.inbox, &ib.archive);
    fs::copy(samples().join(PAYROLL), inbox.join("a.ach")).unwrap();
    age(&inbox.join("a.ach"));
    let lock = fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(inbox.join(".clearledger.lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let out = pass(&db, &ib, &[]);
    assert_eq!(out.code, 0);
    assert!(
        out.stderr.contains("another clearledger pass holds"),
        "{}",
        out.stderr
    );
    assert!(inbox.join("a.ach").exists());
    drop(lock);
    let out = pass(&db, &ib, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(archive.join("a.ach").exists());
}

#[test]
fn a_crash_between_commit_and_move_is_finished_by_the_next_pass() {
    let db = TestDb::sqlite();
    let ib = Inbox::under(db.dir.path());
    let (inbox, archive) = (&ib.inbox, &ib.archive);
    fs::copy(samples().join(PAYROLL), inbox.join("a.ach")).unwrap();
    age(&inbox.join("a.ach"));
    let out = pass(&db, &ib, &[("CLEARLEDGER_FAULT", "after_commit")]);
    assert_ne!(out.code, 0);
    assert!(
        inbox.join("a.ach").exists(),
        "not moved: the crash came first"
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
    let out = pass(&db, &ib, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(archive.join("a.ach").exists());
    let rep = common::read_csv(&archive.join("a.ach.report.csv"));
    assert!(rep.iter().all(|r| r["outcome"] == "duplicate"));
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
}

#[test]
fn an_unreachable_database_leaves_the_files_in_the_inbox() {
    let db = TestDb::sqlite();
    let ib = Inbox::under(db.dir.path());
    let inbox = &ib.inbox;
    fs::copy(samples().join(PAYROLL), inbox.join("a.ach")).unwrap();
    age(&inbox.join("a.ach"));
    let mut args = vec!["--db", "sqlite:///nonexistent-dir/x.db"];
    args.extend(ib.pass(&[]));
    let out = common::run(&args, &[]);
    // A missing directory: exit 7, a configuration error (tests/it/config.rs); the file waits.
    assert_eq!(out.code, 7, "{}", out.stderr);
    assert!(inbox.join("a.ach").exists());
}
