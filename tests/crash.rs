//! The crash matrix: `clearledger ingest` killed with SIGKILL at random moments and at
//! named fault points, on both backends, then rerun until it succeeds. After every trial:
//! exactly one posting per entry, the ledger's total equals the file's control totals, the
//! final report accounts for every record, and no run is left half-done.
//!
//! Default: a few trials per backend (minutes in CI). `CLEARLEDGER_CRASH_TRIALS=N` runs N
//! random kills per file size and backend; `CLEARLEDGER_CRASH_SEED=S` picks the seed.

mod common;

use common::TestDb;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

on_both_backends!(random_kills_and_fault_points_never_lose_or_double_a_record);

use clearledger::rng::SplitMix64 as Rng;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct FileFacts {
    file_id: String,
    entries: i64,
    total_minor: i64,
}

fn facts(path: &std::path::Path) -> FileFacts {
    let out = common::run(&["check", "--json", path.to_str().unwrap()], &[]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    let d: i64 = v["total_debit_minor"].as_str().unwrap().parse().unwrap();
    let c: i64 = v["total_credit_minor"].as_str().unwrap().parse().unwrap();
    FileFacts {
        file_id: v["file_id"].as_str().unwrap().to_string(),
        entries: v["entries"].as_i64().unwrap(),
        total_minor: d + c,
    }
}

/// Reruns the ingest until it exits 0 or 1; returns the report rows of the final run.
fn rerun_until_done(
    db: &TestDb,
    path: &std::path::Path,
    report: &std::path::Path,
) -> Vec<std::collections::HashMap<String, String>> {
    for _ in 0..5 {
        let out = db.cl(&[
            "ingest",
            "-q",
            path.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ]);
        if out.code == 0 {
            return common::read_csv(report);
        }
        eprintln!("rerun failed ({}), again: {}", out.code, out.stderr);
    }
    panic!("the rerun never completed");
}

fn verify(
    db: &TestDb,
    f: &FileFacts,
    rows: &[std::collections::HashMap<String, String>],
    what: &str,
) {
    let id = &f.file_id;
    assert_eq!(
        db.scalar(&format!(
            "SELECT count(*) FROM postings WHERE file_id = '{id}'"
        )),
        f.entries,
        "{what}: postings"
    );
    assert_eq!(
        db.scalar(&format!(
            "SELECT count(DISTINCT record_no) FROM postings WHERE file_id = '{id}'"
        )),
        f.entries,
        "{what}"
    );
    assert_eq!(
        db.scalar(&format!("SELECT CAST(coalesce(sum(amount_minor), 0) AS BIGINT) FROM postings WHERE file_id = '{id}'")),
        f.total_minor,
        "{what}: ledger total vs control totals"
    );
    assert_eq!(
        db.scalar("SELECT count(*) FROM runs WHERE status = 'running'"),
        0,
        "{what}: a run left in progress"
    );
    assert_eq!(rows.len() as i64, f.entries, "{what}: report rows");
    // The final run either posted everything (the killed ones left nothing) or found
    // everything posted (a killed run had committed before it died).
    let posted = rows.iter().filter(|r| r["outcome"] == "posted").count() as i64;
    let dups = rows.iter().filter(|r| r["outcome"] == "duplicate").count() as i64;
    assert!(
        posted == f.entries || dups == f.entries,
        "{what}: posted {posted}, duplicates {dups} of {}",
        f.entries
    );
}

fn random_kills_and_fault_points_never_lose_or_double_a_record(db: TestDb) {
    assert_eq!(db.cl(&["db", "migrate"]).code, 0);
    let trials = env_u64("CLEARLEDGER_CRASH_TRIALS", 3);
    let mut rng = Rng(env_u64("CLEARLEDGER_CRASH_SEED", 20261129));
    let report = db.file("report.csv");
    let (mut kills_mid_run, mut finished_before_kill, mut faults) = (0, 0, 0);
    let mut seed = 1000;
    for entries in [2_000u64, 10_000] {
        // How long a clean run of this size takes here, to aim the kills inside it.
        seed += 1;
        let probe = db.file(&format!("probe-{entries}.ach"));
        assert_eq!(
            db.cl(&[
                "generate",
                "nacha",
                "--entries",
                &entries.to_string(),
                "--batches",
                "4",
                "--seed",
                &seed.to_string(),
                "-o",
                probe.to_str().unwrap()
            ])
            .code,
            0
        );
        let t0 = Instant::now();
        assert_eq!(db.cl(&["ingest", "-q", probe.to_str().unwrap()]).code, 0);
        let span_ms = (t0.elapsed().as_millis() as u64).max(20);
        for trial in 0..trials {
            seed += 1;
            let path = db.file(&format!("f-{entries}-{trial}.ach"));
            assert_eq!(
                db.cl(&[
                    "generate",
                    "nacha",
                    "--entries",
                    &entries.to_string(),
                    "--batches",
                    "4",
                    "--seed",
                    &seed.to_string(),
                    "-o",
                    path.to_str().unwrap()
                ])
                .code,
                0
            );
            let f = facts(&path);
            let delay = Duration::from_millis(rng.next_u64() % (span_ms * 5 / 4));
            let mut child = Command::new(common::bin())
                .args(["--db", &db.url, "ingest", "-q", path.to_str().unwrap()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(delay);
            let done_before = child.try_wait().unwrap().is_some();
            let _ = child.kill(); // SIGKILL
            let status = child.wait().unwrap();
            if done_before || status.code().is_some() {
                finished_before_kill += 1;
            } else {
                kills_mid_run += 1;
            }
            let rows = rerun_until_done(&db, &path, &report);
            verify(
                &db,
                &f,
                &rows,
                &format!("{entries} entries, kill after {delay:?}"),
            );
        }
        for point in ["after_parse_start", "before_commit", "after_commit"] {
            seed += 1;
            let path = db.file(&format!("fault-{entries}-{point}.ach"));
            assert_eq!(
                db.cl(&[
                    "generate",
                    "nacha",
                    "--entries",
                    &entries.to_string(),
                    "--batches",
                    "4",
                    "--seed",
                    &seed.to_string(),
                    "-o",
                    path.to_str().unwrap()
                ])
                .code,
                0
            );
            let f = facts(&path);
            let out = db.cl_env(
                &["ingest", "-q", path.to_str().unwrap()],
                &[("CLEARLEDGER_FAULT", point)],
            );
            assert!(
                out.code != 0 && out.stderr.contains("fault point"),
                "{point}: {}",
                out.stderr
            );
            let committed = db.scalar(&format!(
                "SELECT count(*) FROM postings WHERE file_id = '{}'",
                f.file_id
            ));
            assert_eq!(
                committed,
                if point == "after_commit" {
                    f.entries
                } else {
                    0
                },
                "{point}"
            );
            faults += 1;
            let rows = rerun_until_done(&db, &path, &report);
            verify(&db, &f, &rows, point);
        }
    }
    eprintln!(
        "crash matrix ({}): {} trials: {kills_mid_run} SIGKILLs landed mid-run, {finished_before_kill} runs had finished first, {faults} fault points; every trial: one posting per entry, totals equal the control totals",
        db.url.split(':').next().unwrap(),
        kills_mid_run + finished_before_kill + faults
    );
}
