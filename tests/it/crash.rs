//! The crash matrix: `clearledger ingest` killed with SIGKILL at random moments and at
//! named fault points, on both backends, then rerun until it succeeds. After every trial:
//! exactly one posting per entry, the ledger's total equals the file's control totals, the
//! final report accounts for every record, and no run is left half-done.
//!
//! Default: a few trials per backend (minutes in CI). `CLEARLEDGER_CRASH_TRIALS=N` asks for
//! N random kills landed mid-run per file size and backend (3 by default);
//! `CLEARLEDGER_CRASH_SEED=S` picks the seed.

use crate::common;

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

/// `generate nacha` of `entries` entries in four batches into `path`.
fn generate(db: &TestDb, entries: u64, seed: u64, path: &std::path::Path) {
    let out = db.cl(&[
        "generate",
        "nacha",
        "--entries",
        &entries.to_string(),
        "--batches",
        "4",
        "--seed",
        &seed.to_string(),
        "-o",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// How long `ingest -q` of `path` takes here, start to exit, in milliseconds.
fn timed_ingest_ms(db: &TestDb, path: &std::path::Path) -> u64 {
    let t0 = Instant::now();
    let out = db.cl(&["ingest", "-q", path.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    t0.elapsed().as_millis() as u64
}

/// The quickest of three first ingests of `entries`-entry files (each of its own seed: a
/// file ingested again takes the replay's shorter path).
fn quickest_first_run_ms(db: &TestDb, entries: u64, seed: &mut u64) -> u64 {
    (0..3)
        .map(|i| {
            *seed += 1;
            let path = db.file(&format!("timing-{entries}-{i}-{seed}.ach"));
            generate(db, entries, *seed, &path);
            timed_ingest_ms(db, &path)
        })
        .min()
        .unwrap_or_default()
}

/// Where a SIGKILL landed in the run it was aimed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Landing {
    /// Before the process could have been past its start-up (sooner than a one-entry
    /// ingest takes, start to exit), with nothing committed.
    AtStartUp,
    /// While the run was in progress: the process still running, past its start-up,
    /// nothing of the file committed yet.
    MidRun,
    /// After the run's commit, before the process exited.
    AfterCommit,
    /// The process had exited on its own first.
    Finished,
}

/// Starts `ingest -q path`, SIGKILLs it after `delay`, and says where the kill landed.
fn kill_after(
    db: &TestDb,
    f: &FileFacts,
    path: &std::path::Path,
    delay: Duration,
    startup: Duration,
) -> Landing {
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
        return Landing::Finished;
    }
    let committed = db.scalar(&format!(
        "SELECT count(*) FROM postings WHERE file_id = '{}'",
        f.file_id
    ));
    match committed {
        0 if delay < startup => Landing::AtStartUp,
        0 => Landing::MidRun,
        n if n == f.entries => Landing::AfterCommit,
        n => panic!(
            "{n} of {} entries committed: a run committed in part",
            f.entries
        ),
    }
}

/// SIGKILLs at random moments inside a run of `entries` entries until `trials` of them
/// have landed mid-run, each followed by reruns and the checks; returns the landings.
///
/// The matrix claims kills during a run, so each requested trial must be one that landed
/// mid-run: kills that landed at start-up or after the run are verified all the same but
/// do not count. The attempts are capped (8 per requested trial: at the delays drawn,
/// spread over 1.25 times a clean run, about half land mid-run), so a machine where the
/// kills never land inside a run fails here instead of passing without testing it.
fn random_kills(
    db: &TestDb,
    rng: &mut Rng,
    entries: u64,
    trials: u64,
    seed: &mut u64,
) -> Vec<Landing> {
    let report = db.file("report.csv");
    // How long a clean run of this size takes here, to aim the kills inside it, and how
    // long a one-entry run takes, before which a kill finds the process starting up: each
    // the quickest of three first runs, so that one slow start on a busy machine does not
    // put every kill before the run.
    let startup = Duration::from_millis(quickest_first_run_ms(db, 1, seed));
    let span_ms = quickest_first_run_ms(db, entries, seed).max(20);
    // The kills spread over the run past its start-up, however the two measured.
    let span_ms = span_ms.max(startup.as_millis() as u64 * 2);
    let mut landings = Vec::new();
    while landings.iter().filter(|l| **l == Landing::MidRun).count() < trials as usize {
        assert!(
            (landings.len() as u64) < trials * 8,
            "{entries} entries: {} SIGKILLs, fewer than {trials} landed mid-run ({landings:?}; \
             a clean run {span_ms} ms, start-up {startup:?}): the kills missed the runs",
            landings.len()
        );
        *seed += 1;
        let path = db.file(&format!("f-{entries}-{}.ach", landings.len()));
        generate(db, entries, *seed, &path);
        let f = facts(&path);
        let delay = Duration::from_millis(rng.next_u64() % (span_ms * 5 / 4));
        let landing = kill_after(db, &f, &path, delay, startup);
        let rows = rerun_until_done(db, &path, &report);
        verify(
            db,
            &f,
            &rows,
            &format!("{entries} entries, kill after {delay:?} ({landing:?})"),
        );
        landings.push(landing);
    }
    landings
}

/// Each named fault point once on a file of `entries` entries, then reruns and the checks.
fn fault_points(db: &TestDb, entries: u64, seed: &mut u64) -> u64 {
    let report = db.file("report.csv");
    let mut faults = 0;
    for point in ["after_parse_start", "before_commit", "after_commit"] {
        *seed += 1;
        let path = db.file(&format!("fault-{entries}-{point}.ach"));
        generate(db, entries, *seed, &path);
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
        let expected = if point == "after_commit" {
            f.entries
        } else {
            0
        };
        assert_eq!(committed, expected, "{point}");
        faults += 1;
        let rows = rerun_until_done(db, &path, &report);
        verify(db, &f, &rows, point);
    }
    faults
}

fn random_kills_and_fault_points_never_lose_or_double_a_record(db: TestDb) {
    assert_eq!(db.cl(&["db", "migrate"]).code, 0);
    let trials = env_u64("CLEARLEDGER_CRASH_TRIALS", 3);
    let mut rng = Rng(env_u64("CLEARLEDGER_CRASH_SEED", 20261129));
    let (mut landings, mut faults) = (Vec::new(), 0);
    let mut seed = 1000;
    for entries in [2_000u64, 10_000] {
        landings.extend(random_kills(&db, &mut rng, entries, trials, &mut seed));
        faults += fault_points(&db, entries, &mut seed);
    }
    let count = |what: Landing| landings.iter().filter(|l| **l == what).count();
    eprintln!(
        "crash matrix ({}): {} trials: {} SIGKILLs landed mid-run, {} after the commit, {} at start-up, {} runs had finished first, {faults} fault points; every trial: one posting per entry, totals equal the control totals",
        db.url.split(':').next().unwrap(),
        landings.len() as u64 + faults,
        count(Landing::MidRun),
        count(Landing::AfterCommit),
        count(Landing::AtStartUp),
        count(Landing::Finished),
    );
}
