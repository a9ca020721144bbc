//! The crash matrix: `clearledger ingest` of NACHA and ISO 20022 files killed with SIGKILL
//! at random moments inside its run, inside its COMMIT (held just before it, let go, killed
//! a random few hundred microseconds later) and at named fault points, on both backends,
//! then rerun until it succeeds. After every trial: exactly one posting per record, the
//! ledger's total equals the file's control totals, the final report accounts for every
//! record, and no run is left half-done.
//!
//! Default: a few trials per backend (minutes in CI). `CLEARLEDGER_CRASH_TRIALS=N` asks for
//! N kills landed mid-run per file and N aimed inside its commit (1 by default);
//! `CLEARLEDGER_CRASH_SIZES=1,2000,…` the NACHA sizes (default 1 and 2,000; the ISO 20022
//! ones are those up to 10,000; a size of 100,000 or more gets a tenth of the trials, of
//! 1,000,000 or more a fiftieth; the fault points run on the size 2,000);
//! `CLEARLEDGER_CRASH_SEED=S` picks the seed. docs/reliability.md has the long run's command.

use crate::common;

use common::TestDb;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

on_both_backends!(
    random_kills_and_fault_points_never_lose_or_double_a_record,
    reconcile_killed_anywhere_posts_each_correction_once
);

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
    let minor = |v: &serde_json::Value| -> i64 {
        match v {
            serde_json::Value::String(s) => s.parse().unwrap(),
            v => v.as_i64().unwrap(),
        }
    };
    let (entries, total_minor) = if v["format"] == "nacha" {
        let total = minor(&v["total_debit_minor"]) + minor(&v["total_credit_minor"]);
        (v["entries"].as_i64().unwrap(), total)
    } else {
        let by_currency = v["total_minor_by_currency"].as_object().unwrap();
        (
            v["transactions"].as_i64().unwrap(),
            by_currency.values().map(minor).sum(),
        )
    };
    FileFacts {
        file_id: v["file_id"].as_str().unwrap().to_string(),
        entries,
        total_minor,
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

/// The formats of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Nacha,
    Iso20022,
}

/// A file of `entries` records of `format` for `seed` at `db.file(name + extension)`.
fn generate(
    db: &TestDb,
    format: Format,
    entries: u64,
    seed: u64,
    name: &str,
) -> std::path::PathBuf {
    let (path, n, seed) = (db.file(name), entries.to_string(), seed.to_string());
    let p = path.to_str().unwrap();
    let args: Vec<&str> = match format {
        Format::Nacha => vec![
            "generate",
            "nacha",
            "--entries",
            &n,
            "--batches",
            "4",
            "--seed",
            &seed,
            "-o",
            p,
        ],
        Format::Iso20022 => vec!["generate", "pacs008", "--tx", &n, "--seed", &seed, "-o", p],
    };
    let out = db.cl(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    path
}

/// How long `ingest -q` of `path` takes here, start to exit, in milliseconds.
fn timed_ingest_ms(db: &TestDb, path: &std::path::Path) -> u64 {
    let t0 = Instant::now();
    let out = db.cl(&["ingest", "-q", path.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    t0.elapsed().as_millis() as u64
}

/// The quickest of three first ingests of `entries`-record files (each of its own seed: a
/// file ingested again takes the replay's shorter path).
fn quickest_first_run_ms(db: &TestDb, format: Format, entries: u64, seed: &mut u64) -> u64 {
    (0..3)
        .map(|i| {
            *seed += 1;
            let path = generate(
                db,
                format,
                entries,
                *seed,
                &format!("timing-{entries}-{i}-{seed}"),
            );
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
    /// Inside the COMMIT, which did not take effect: nothing of the file committed.
    InCommitRolledBack,
    /// Inside the COMMIT, which took effect: the whole file committed.
    InCommitCommitted,
    /// After the run's commit, before the process exited.
    AfterCommit,
    /// The process had exited on its own first.
    Finished,
}

fn spawn_ingest(db: &TestDb, path: &std::path::Path, fault: Option<&str>) -> std::process::Child {
    let mut cmd = Command::new(common::bin());
    cmd.args(["--db", &db.url, "ingest", "-q", path.to_str().unwrap()])
        .env_remove("CLEARLEDGER_FAULT")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(f) = fault {
        cmd.env("CLEARLEDGER_FAULT", f);
    }
    cmd.spawn().unwrap()
}

fn committed(db: &TestDb, f: &FileFacts) -> i64 {
    db.scalar(&format!(
        "SELECT count(*) FROM postings WHERE file_id = '{}'",
        f.file_id
    ))
}

/// Starts `ingest -q path`, SIGKILLs it after `delay`, and says where the kill landed.
fn kill_after(
    db: &TestDb,
    f: &FileFacts,
    path: &std::path::Path,
    delay: Duration,
    startup: Duration,
) -> Landing {
    let mut child = spawn_ingest(db, path, None);
    std::thread::sleep(delay);
    let done_before = child.try_wait().unwrap().is_some();
    let _ = child.kill(); // SIGKILL
    let status = child.wait().unwrap();
    if done_before || status.code().is_some() {
        return Landing::Finished;
    }
    match committed(db, f) {
        0 if delay < startup => Landing::AtStartUp,
        0 => Landing::MidRun,
        n if n == f.entries => Landing::AfterCommit,
        n => panic!(
            "{n} of {} entries committed: a run committed in part",
            f.entries
        ),
    }
}

/// Holds `ingest -q path` just before its COMMIT, lets it go, SIGKILLs it `delay` later:
/// inside the COMMIT or about it. Says which way the COMMIT went.
fn kill_in_commit(db: &TestDb, f: &FileFacts, path: &std::path::Path, delay: Duration) -> Landing {
    let mut child = spawn_ingest(db, path, Some("stop:before_commit"));
    let t0 = Instant::now();
    while !common::is_stopped(child.id()) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the ingest ended before its commit"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(600),
            "never reached its commit"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    common::resume(child.id());
    std::thread::sleep(delay);
    let _ = child.kill(); // SIGKILL
    let status = child.wait().unwrap();
    if status.code().is_some() {
        return Landing::Finished;
    }
    match committed(db, f) {
        0 => Landing::InCommitRolledBack,
        n if n == f.entries => Landing::InCommitCommitted,
        n => panic!(
            "{n} of {} entries committed: a run committed in part",
            f.entries
        ),
    }
}

/// One file, one kill, reruns and the checks.
struct Trial<'a> {
    db: &'a TestDb,
    format: Format,
    entries: u64,
}

impl Trial<'_> {
    fn run(
        &self,
        seed: u64,
        kill: impl FnOnce(&FileFacts, &std::path::Path) -> Landing,
    ) -> Landing {
        let name = format!("f-{:?}-{}-{seed}", self.format, self.entries);
        let path = generate(self.db, self.format, self.entries, seed, &name);
        let f = facts(&path);
        let landing = kill(&f, &path);
        let rows = rerun_until_done(self.db, &path, &self.db.file("report.csv"));
        let what = format!(
            "{:?} of {} records, seed {seed} ({landing:?})",
            self.format, self.entries
        );
        verify(self.db, &f, &rows, &what);
        std::fs::remove_file(&path).unwrap();
        landing
    }
}

/// SIGKILLs at random moments inside runs until `trials` of them have landed mid-run,
/// each followed by reruns and the checks; returns the landings.
///
/// The matrix claims kills during a run, so each requested trial must be one that landed
/// mid-run: kills that landed at start-up or after the run are verified all the same but
/// do not count. The attempts are capped (8 per requested trial), so a machine where the
/// kills never land inside a run fails here instead of passing without testing it.
fn random_kills(t: &Trial, rng: &mut Rng, trials: u64, seed: &mut u64) -> Vec<Landing> {
    // How long a one-record run takes, before which a kill finds the process starting up,
    // and how long a clean run of this size takes: each the quickest of three first runs,
    // so that one slow start on a busy machine does not put every kill before the run.
    let startup = Duration::from_millis(quickest_first_run_ms(t.db, t.format, 1, seed));
    let span_ms = quickest_first_run_ms(t.db, t.format, t.entries, seed).max(20);
    let mut aim = Aim::new(startup, span_ms);
    let mut landings = Vec::new();
    while landings.iter().filter(|l| **l == Landing::MidRun).count() < trials as usize {
        assert!(
            (landings.len() as u64) < trials * 8,
            "{:?} of {} records: {} SIGKILLs, fewer than {trials} landed mid-run ({landings:?}; \
             a clean run {span_ms} ms, start-up {startup:?}, aimed last within {aim:?}): the \
             kills missed the runs",
            t.format,
            t.entries,
            landings.len()
        );
        *seed += 1;
        let delay = aim.delay(rng);
        let landing = t.run(*seed, |f, path| kill_after(t.db, f, path, delay, startup));
        aim.learn(landing);
        landings.push(landing);
    }
    landings
}

/// Where random kills are aimed: past the start-up, before the run's end as the kills
/// find it. The end is learnt rather than measured once: a run of a hundred records is a
/// few milliseconds past a start-up of tens, and on a shared machine (or a ledger grown by
/// gigabytes) one measurement puts most kills after the exit. Each kill that finds the run
/// over pulls the end in, each that finds it running pushes it out, so that about half land
/// mid-run, spread over the whole run. One kill in ten still goes anywhere from the start.
#[derive(Debug)]
struct Aim {
    startup_ms: f64,
    end_ms: f64,
}

impl Aim {
    fn new(startup: Duration, span_ms: u64) -> Aim {
        let startup_ms = startup.as_secs_f64() * 1000.0;
        // The kills spread over the run past its start-up, however the two measured.
        let end_ms = (span_ms as f64 * 1.25).max(startup_ms * 2.0);
        Aim { startup_ms, end_ms }
    }

    fn delay(&self, rng: &mut Rng) -> Duration {
        let from = if rng.next_u64().is_multiple_of(10) {
            0.0
        } else {
            self.startup_ms
        };
        let unit = (rng.next_u64() % 1_000_000) as f64 / 1_000_000.0;
        Duration::from_secs_f64((from + unit * (self.end_ms - from)) / 1000.0)
    }

    fn learn(&mut self, landing: Landing) {
        let width = self.end_ms - self.startup_ms;
        let width = match landing {
            Landing::MidRun => width * 1.1,
            Landing::Finished | Landing::AfterCommit => width * 0.9,
            _ => width,
        };
        self.end_ms = self.startup_ms + width.max(1.0);
    }
}

/// `trials` kills aimed inside the COMMIT, 0 to 2 ms after it was let go.
fn commit_kills(t: &Trial, rng: &mut Rng, trials: u64, seed: &mut u64) -> Vec<Landing> {
    (0..trials)
        .map(|_| {
            *seed += 1;
            let delay = Duration::from_micros(rng.next_u64() % 2_000);
            t.run(*seed, |f, path| kill_in_commit(t.db, f, path, delay))
        })
        .collect()
}

/// Each named fault point once, then reruns and the checks.
fn fault_points(t: &Trial, seed: &mut u64) -> u64 {
    let mut faults = 0;
    for point in ["after_parse_start", "before_commit", "after_commit"] {
        *seed += 1;
        t.run(*seed, |f, path| {
            let out = t.db.cl_env(
                &["ingest", "-q", path.to_str().unwrap()],
                &[("CLEARLEDGER_FAULT", point)],
            );
            assert!(
                out.code != 0 && out.stderr.contains("fault point"),
                "{point}: {}",
                out.stderr
            );
            let expected = if point == "after_commit" {
                f.entries
            } else {
                0
            };
            assert_eq!(committed(t.db, f), expected, "{point}");
            faults += 1;
            Landing::Finished
        });
    }
    faults
}

fn sizes() -> Vec<u64> {
    std::env::var("CLEARLEDGER_CRASH_SIZES")
        .ok()
        .map(|v| v.split(',').map(|n| n.trim().parse().unwrap()).collect())
        .unwrap_or_else(|| vec![1, 2_000])
}

fn random_kills_and_fault_points_never_lose_or_double_a_record(db: TestDb) {
    assert_eq!(db.cl(&["db", "migrate"]).code, 0);
    let trials = env_u64("CLEARLEDGER_CRASH_TRIALS", 1);
    let mut rng = Rng(env_u64("CLEARLEDGER_CRASH_SEED", 20261129));
    let (mut landings, mut faults, mut aimed_at_commit) = (Vec::new(), 0, 0);
    let mut seed = 1000;
    let t0 = Instant::now();
    for format in [Format::Nacha, Format::Iso20022] {
        for entries in sizes() {
            if format == Format::Iso20022 && entries > 10_000 {
                continue;
            }
            let t = Trial {
                db: &db,
                format,
                entries,
            };
            // Each trial posts a new file: the large ones get fewer, or the ledger grows by
            // gigabytes.
            let n = match entries {
                0..100_000 => trials,
                100_000..1_000_000 => trials.div_ceil(10),
                _ => trials.div_ceil(50),
            };
            // A run of one record is over before a random kill could find it mid-run: it
            // is killed inside its commit only.
            if entries > 1 {
                landings.extend(random_kills(&t, &mut rng, n, &mut seed));
            }
            let aimed = commit_kills(&t, &mut rng, n, &mut seed);
            aimed_at_commit += aimed.len();
            landings.extend(aimed);
            // The fault points once per format, on a file of a few thousand records.
            if entries == 2_000 {
                faults += fault_points(&t, &mut seed);
            }
        }
    }
    summarise(&db, &landings, faults, t0.elapsed());
    // A kill aimed inside the commit nearly always finds the process there (one in ten may
    // miss, and one more); a one-record run may commit and exit within the 2 ms, now and
    // then (3 in 100 on PostgreSQL, release build).
    let in_commit = landings
        .iter()
        .filter(|l| matches!(l, Landing::InCommitRolledBack | Landing::InCommitCommitted))
        .count();
    assert!(
        aimed_at_commit - in_commit <= aimed_at_commit / 10 + 1,
        "{in_commit} of {aimed_at_commit} kills aimed at the commit landed inside it"
    );
}

fn summarise(db: &TestDb, landings: &[Landing], faults: u64, took: Duration) {
    let count = |what: Landing| landings.iter().filter(|l| **l == what).count();
    let in_commit = count(Landing::InCommitRolledBack) + count(Landing::InCommitCommitted);
    eprintln!(
        "crash matrix ({}): {} trials in {took:.0?}: {} SIGKILLs landed mid-run, {in_commit} inside the commit ({} rolled back, {} committed), {} after the commit, {} at start-up, {} runs had finished first, {faults} fault points; every trial: one posting per record, totals equal the control totals",
        db.url.split(':').next().unwrap(),
        landings.len() as u64 + faults,
        count(Landing::MidRun),
        count(Landing::InCommitRolledBack),
        count(Landing::InCommitCommitted),
        count(Landing::AfterCommit),
        count(Landing::AtStartUp),
        count(Landing::Finished),
    );
}

const RECON_IBAN: &str = "DE89370400440532013000";

/// A generated reconciliation scenario in a fresh ledger of `db`'s backend: our payments
/// and the bank's statement ingested, the account mapped. Returns the ledger and the rules.
fn recon_ledger(like: &TestDb, scenario: &std::path::Path) -> (TestDb, std::path::PathBuf) {
    let db = match like.backend {
        common::Backend::Sqlite => TestDb::sqlite(),
        common::Backend::Postgres => TestDb::postgres(),
    };
    for f in [
        "ours-pacs008.xml",
        "ours-pain001.xml",
        "ours-pacs004.xml",
        "bank-camt053.xml",
    ] {
        let r = db.cl(&["ingest", "-q", scenario.join(f).to_str().unwrap()]);
        assert_eq!(r.code, 0, "ingest {f}: {}", r.stderr);
    }
    let ledger = format!("acct:{RECON_IBAN}");
    let r = db.cl(&[
        "account",
        "map",
        "--bank-account",
        RECON_IBAN,
        "--ledger-account",
        &ledger,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    (db, scenario.join("rules.toml"))
}

fn reconcile_args(rules: &std::path::Path) -> Vec<String> {
    [
        "reconcile",
        "--bank-account",
        RECON_IBAN,
        "--from",
        "2026-11-01",
        "--to",
        "2026-11-30",
    ]
    .into_iter()
    .map(String::from)
    .chain([
        "--rules".into(),
        rules.display().to_string(),
        "--post-corrections".into(),
        "--json".into(),
    ])
    .collect()
}

/// The corrections in the ledger, each by its key and amount, in order.
fn corrections(db: &TestDb) -> Vec<Vec<String>> {
    db.rows(
        "SELECT posting_key, CAST(amount_minor AS TEXT) FROM postings \
         WHERE operation = 'correction' ORDER BY posting_key",
    )
}

/// `reconcile --post-corrections` killed before its read was done, held after its read, inside
/// its COMMIT, and at random moments (`CLEARLEDGER_CRASH_TRIALS` of those), each in a fresh
/// ledger: after the kill either no correction or all of them; after a rerun exactly the
/// corrections of a run never killed, each once; a second rerun posts none.
fn reconcile_killed_anywhere_posts_each_correction_once(db: TestDb) {
    let scenario = crate::reconcile_generated::scenario(&db, 7);
    // The control: a run never killed.
    let (control, rules) = recon_ledger(&db, &scenario);
    let args = reconcile_args(&rules);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let t0 = Instant::now();
    let r = control.cl(&args);
    let clean = t0.elapsed();
    assert_eq!(r.code, 1, "{}", r.stderr);
    let expected = corrections(&control);
    assert!(expected.len() >= 3, "{expected:?}");
    let trials = env_u64("CLEARLEDGER_CRASH_TRIALS", 1);
    let mut rng = Rng(env_u64("CLEARLEDGER_CRASH_SEED", 20261207));
    let mut kills: Vec<(String, usize)> = Vec::new();
    let aimed = ["stop:reconcile_after_read", "stop:before_commit"];
    for trial in 0..aimed.len() as u64 + trials {
        let (db, _) = recon_ledger(&db, &scenario);
        let mut cmd = Command::new(common::bin());
        cmd.args(["--db", &db.url])
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let how = match aimed.get(trial as usize) {
            Some(fault) => {
                let mut child = cmd.env("CLEARLEDGER_FAULT", fault).spawn().unwrap();
                common::wait_until_stopped(child.id());
                common::resume(child.id());
                std::thread::sleep(Duration::from_micros(rng.next_u64() % 2_000));
                child.kill().unwrap();
                child.wait().unwrap();
                format!("{fault}, then 0-2 ms")
            }
            None => {
                let mut child = cmd.env_remove("CLEARLEDGER_FAULT").spawn().unwrap();
                let delay = Duration::from_millis(
                    rng.next_u64() % (clean.as_millis() as u64 * 5 / 4).max(1),
                );
                std::thread::sleep(delay);
                let _ = child.kill();
                child.wait().unwrap();
                format!("after {delay:?}")
            }
        };
        let after_kill = corrections(&db);
        assert!(
            after_kill.is_empty() || after_kill == expected,
            "{how}: {} corrections of {}",
            after_kill.len(),
            expected.len()
        );
        kills.push((how.clone(), after_kill.len()));
        let rerun = db.cl(&args);
        assert!(
            rerun.code == 0 || rerun.code == 1,
            "{how}: rerun {}",
            rerun.stderr
        );
        assert_eq!(corrections(&db), expected, "{how}: after the rerun");
        let again = db.cl(&args);
        let v: serde_json::Value = serde_json::from_str(again.stdout.trim()).unwrap();
        assert_eq!(v["corrections_posted"], 0, "{how}: a second rerun");
        assert_eq!(corrections(&db), expected);
    }
    eprintln!(
        "reconcile killed ({:?}): {} corrections each; {kills:?} (how, corrections left by the kill)",
        db.backend,
        expected.len()
    );
}
