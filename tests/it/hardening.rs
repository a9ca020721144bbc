//! What operations throw at it: totals that cannot overflow, inputs read once.

use crate::common;

use common::TestDb;

on_both_backends!(
    ten_amounts_of_18_digits_are_refused_not_wrapped,
    amounts_that_overflow_a_run_total_post_nothing,
    pipes_and_fifos_are_read_once,
    a_stalled_stdin_does_not_block_other_writers,
);

/// One pacs.008 Document: `n` transactions of `amount` JPY, with `ctrl_sum` as written.
fn jpy_document(msg_id: &str, n: usize, amount: &str, ctrl_sum: &str) -> String {
    let mut txs = String::new();
    for i in 1..=n {
        txs.push_str(&format!(
            "<CdtTrfTxInf><PmtId><EndToEndId>{msg_id}-{i}</EndToEndId></PmtId>\
             <IntrBkSttlmAmt Ccy=\"JPY\">{amount}</IntrBkSttlmAmt>\
             <Dbtr><Nm>D</Nm></Dbtr><DbtrAgt><FinInstnId><BICFI>BOTKJPJT</BICFI></FinInstnId></DbtrAgt>\
             <Cdtr><Nm>C</Nm></Cdtr><CdtrAgt><FinInstnId><BICFI>MHCBJPJT</BICFI></FinInstnId></CdtrAgt>\
             </CdtTrfTxInf>"
        ));
    }
    format!(
        "<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08\"><FIToFICstmrCdtTrf>\
         <GrpHdr><MsgId>{msg_id}</MsgId><NbOfTxs>{n}</NbOfTxs><CtrlSum>{ctrl_sum}</CtrlSum>\
         <InstgAgt><FinInstnId><BICFI>BOTKJPJT</BICFI></FinInstnId></InstgAgt>\
         <InstdAgt><FinInstnId><BICFI>MHCBJPJT</BICFI></FinInstnId></InstdAgt></GrpHdr>{txs}\
         </FIToFICstmrCdtTrf></Document>"
    )
}

fn ten_amounts_of_18_digits_are_refused_not_wrapped(db: TestDb) {
    let path = db.file("jpy.xml");
    let doc = jpy_document("JPY-1", 10, "999999999999999999", "9999999999999999990");
    std::fs::write(&path, doc).unwrap();
    let r = db.cl(&["ingest", "-q", "--json", path.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v["status"], "rejected");
    let findings: Vec<(String, String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["field"]
                    .as_str()
                    .or(f["path"].as_str())
                    .unwrap_or("")
                    .to_string(),
                f["found"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        findings,
        vec![
            (
                "amount_format".to_string(),
                "/Document/FIToFICstmrCdtTrf/GrpHdr/CtrlSum".to_string(),
                "9999999999999999990".to_string()
            ),
            (
                "amount_format".to_string(),
                "/Document/FIToFICstmrCdtTrf/GrpHdr/CtrlSum".to_string(),
                "a total of 9999999999999999990 (19 digits)".to_string()
            ),
        ]
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
}

/// Ten Documents in one file, each with one amount of 18 digits: every Document is valid,
/// but the run's total would pass `i64::MAX`. Refused whole (exit 3), nothing posted.
fn amounts_that_overflow_a_run_total_post_nothing(db: TestDb) {
    let path = db.file("jpy-many.xml");
    let docs: String = (1..=10)
        .map(|i| {
            jpy_document(
                &format!("JPY-D{i}"),
                1,
                "999999999999999999",
                "999999999999999999",
            )
        })
        .collect();
    std::fs::write(&path, format!("<Envelope>{docs}</Envelope>")).unwrap();
    let r = db.cl(&["ingest", "-q", "--json", path.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{} / {}", r.stdout, r.stderr);
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v["status"], "rejected");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("add up to more than 9,223,372,036,854,775,807"),
        "{v}"
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
    assert_eq!(
        db.scalar("SELECT count(*) FROM runs WHERE status = 'completed'"),
        0
    );
}

/// A writer holding SQLite's write lock (an ingest in progress) does not stop `runs`,
/// `report` or `lookup`: an up-to-date database is opened without taking the lock.
#[test]
fn sqlite_readers_do_not_wait_for_a_writer() {
    let db = TestDb::sqlite();
    let sample = common::samples().join("ppd-payroll-credits.ach");
    assert_eq!(db.cl(&["ingest", "-q", sample.to_str().unwrap()]).code, 0);
    let path = db.url.strip_prefix("sqlite://").unwrap().to_string();
    let writer = rusqlite::Connection::open(&path).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    for args in [
        vec!["--lock-timeout", "1", "runs"],
        vec!["--lock-timeout", "1", "report", "1"],
        vec![
            "--lock-timeout",
            "1",
            "lookup",
            "--trace",
            "121042880000001",
        ],
    ] {
        // Waiting for the lock would end in exit 4 after --lock-timeout.
        let r = db.cl(&args);
        assert_eq!(
            r.code, 0,
            "{args:?} while a writer holds the lock: {}",
            r.stderr
        );
    }
    writer.execute_batch("ROLLBACK").unwrap();
}

/// `ingest <(cat FILE)` and a FIFO are read once: every entry posts (they were rejected as
/// an empty file, or hung, when the input was read twice).
fn pipes_and_fifos_are_read_once(db: TestDb) {
    let sample = common::samples().join("ppd-payroll-credits.ach");
    let script = format!(
        "{} --db '{}' ingest -q --json <(cat '{}')",
        common::bin(),
        db.url,
        sample.display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["posted"].as_i64(), v["status"].as_str()),
        (Some(4), Some("completed"))
    );
    // A FIFO: the writer blocks until the ingest opens it, then the ingest reads it once.
    let fifo = db.file("in.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let writer = {
        let (fifo, sample) = (fifo.clone(), sample.clone());
        std::thread::spawn(move || {
            let bytes = std::fs::read(sample).unwrap();
            std::fs::write(fifo, bytes).unwrap();
        })
    };
    let r = db.cl(&["ingest", "-q", "--json", fifo.to_str().unwrap()]);
    writer.join().unwrap();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    // The same bytes again: the exact re-upload fast path, like a file on disk.
    assert_eq!(
        (v["duplicates"].as_i64(), v["fast_path"].as_bool()),
        (Some(4), Some(true))
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
}

/// An ingest whose stdin stalls (nothing written, not closed) holds no lock: another
/// ingest of another file commits meanwhile; the first finishes once its input ends.
fn a_stalled_stdin_does_not_block_other_writers(db: TestDb) {
    use std::io::Write;
    // Migrated first: what is measured is a run's wait, not a first migration's (seconds
    // on Citus, longer than the lock timeout).
    assert_eq!(db.cl(&["db", "migrate"]).code, 0);
    let mut stalled = std::process::Command::new(common::bin())
        .args([
            "--db",
            &db.url,
            "--lock-timeout",
            "2",
            "ingest",
            "-q",
            "--json",
            "-",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = stalled.stdin.take().unwrap();
    let generated = db.file("gen.ach");
    let g = db.cl(&[
        "generate",
        "nacha",
        "--entries",
        "2000",
        "-o",
        generated.to_str().unwrap(),
    ]);
    assert_eq!(g.code, 0, "{}", g.stderr);
    let file = std::fs::read(&generated).unwrap();
    // Well past the header and the first entries (past the bytes format detection reads:
    // when the run used to begin and take the write lock), then nothing for a while.
    let (head, rest) = file.split_at(64 * 1024);
    stdin.write_all(head).unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let other = common::samples().join("ccd-vendor-debits.ach");
    let r = db.cl(&[
        "--lock-timeout",
        "2",
        "ingest",
        "-q",
        other.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "another writer while stdin stalls: {}", r.stderr);
    stdin.write_all(rest).unwrap();
    drop(stdin);
    let out = stalled.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["posted"].as_i64(), Some(2000));
}

/// A bulk run refreshes the planner's statistics after its commit, so that the report
/// query is not planned against a `postings` the planner believes empty (stale statistics
/// after a killed run and an autovacuum made a 40,000-entry report take minutes). A small
/// run does not pay for it.
#[test]
fn postgres_statistics_are_fresh_after_a_bulk_run() {
    let db = TestDb::postgres();
    let analyzed = || {
        db.scalar(
            "SELECT count(*) FROM pg_stat_user_tables \
             WHERE relname IN ('postings', 'journal') AND last_analyze IS NOT NULL",
        )
    };
    let small = common::samples().join("ppd-payroll-credits.ach");
    assert_eq!(db.cl(&["ingest", "-q", small.to_str().unwrap()]).code, 0);
    assert_eq!(analyzed(), 0, "4 records: no ANALYZE");
    let big = db.file("big.ach");
    let g = db.cl(&[
        "generate",
        "nacha",
        "--entries",
        "10000",
        "-o",
        big.to_str().unwrap(),
    ]);
    assert_eq!(g.code, 0, "{}", g.stderr);
    assert_eq!(db.cl(&["ingest", "-q", big.to_str().unwrap()]).code, 0);
    assert_eq!(
        analyzed(),
        2,
        "10,000 records: postings and journal analyzed"
    );
}

/// SQLite maps the WAL index (`-shm`) into memory; truncated under a running
/// ingest, the next access raised SIGBUS and the process died with no word (exit 135).
/// Now: exit 4 with a message saying what happened and that a rerun is safe; the ledger is
/// whole (SQLite reads the index header before it writes the first frame of a COMMIT, so
/// nothing of the run committed), and the rerun posts every entry once.
#[test]
fn a_wal_index_truncated_under_a_run_is_exit_4_not_sigbus() {
    let db = TestDb::sqlite();
    assert_eq!(db.cl(&["db", "migrate"]).code, 0);
    let f = db.file("s.ach");
    let g = db.cl(&[
        "generate",
        "nacha",
        "--entries",
        "2000",
        "-o",
        f.to_str().unwrap(),
    ]);
    assert_eq!(g.code, 0, "{}", g.stderr);
    let child = std::process::Command::new(common::bin())
        .args(["--db", &db.url, "ingest", f.to_str().unwrap()])
        .env("CLEARLEDGER_FAULT", "stop:before_commit")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_until_stopped(child.id());
    let shm = db.file("ledger.db-shm");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&shm)
        .and_then(|f| f.set_len(0))
        .unwrap();
    common::resume(child.id());
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(4),
        "killed by a signal? {:?} {stderr}",
        o.status
    );
    assert!(stderr.contains("(SIGBUS); it stopped at once"), "{stderr}");
    assert!(stderr.contains("a rerun is safe"), "{stderr}");
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 0);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
    let r = db.cl(&["ingest", "--json", f.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        (v["posted"].as_i64(), v["duplicates"].as_i64()),
        (Some(2000), Some(0))
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 2000);
}
