//! Bank statements in the ledger, on both backends, through the library:
//! statements as a reader emits them (`formats::statement`), keyed (`model`), recorded
//! (`Ledger::record_statements`). The readers' own tests read the corpus files.

use crate::common;

use chrono::NaiveDate;
use clearledger::findings::{FilePosition, Position};
use clearledger::formats::statement::{
    Balance, BalanceKind, Entry, EntryStatus, Statement, StatementKind,
};
use clearledger::keys::statement_record;
use clearledger::ledger::{self, DbOptions};
use clearledger::statements::{StatementRun, StatementStart};
use common::TestDb;

on_both_backends!(
    a_statement_sent_again_is_all_duplicates,
    intraday_then_end_of_day_counts_each_entry_once,
    a_corrected_statement_is_conflicts_naming_the_fields,
    two_identical_lines_without_reference_are_two_entries,
    statements_lists_balances_and_breaks_in_the_chain,
    generated_statement_files_are_recorded_once,
    the_inbox_archives_statement_files_and_quarantines_rejected_ones,
    a_dry_run_of_a_statement_file_records_nothing,
);

fn pos() -> Position {
    FilePosition::default().into()
}

fn day(d: u32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(2026, 11, d)
}

fn entry(no: u64, amount: u64, credit: bool, bank_ref: Option<&str>, text: &str) -> Entry {
    Entry {
        entry_no: no,
        amount_minor: amount,
        currency: "EUR".into(),
        credit,
        reversal: false,
        status: EntryStatus::Booked,
        booking_date: day(30),
        value_date: day(30),
        bank_ref: bank_ref.map(str::to_string),
        customer_ref: None,
        end_to_end_id: None,
        bank_tx_code: Some("PMNT/RCDT/ESCT".into()),
        remittance: Some(text.into()),
        batch_ref: None,
        details: Vec::new(),
        position: pos(),
    }
}

fn statement(kind: StatementKind, id: &str, entries: Vec<Entry>, closing: i64) -> Statement {
    let bal = |kind, code: &str, amount| Balance {
        kind,
        code: code.into(),
        amount_minor: amount,
        currency: "EUR".into(),
        date: day(30),
        position: pos(),
    };
    Statement {
        format: if kind == StatementKind::Intraday {
            "camt.052"
        } else {
            "camt.053"
        },
        kind,
        account: "NL26VAYB8060476890".into(),
        currency: Some("EUR".into()),
        servicer: None,
        id: id.into(),
        sequence: Some("1".into()),
        date: day(30),
        from_date: None,
        to_date: None,
        copy: false,
        balances: vec![
            bal(BalanceKind::OpeningBooked, "OPBD", 100_000),
            bal(BalanceKind::ClosingBooked, "CLBD", closing),
        ],
        entries,
        position: pos(),
        balance_breaks: Vec::new(),
    }
}

fn record(db: &TestDb, statements: Vec<Statement>) -> StatementRun {
    let records: Vec<_> = statements.into_iter().map(statement_record).collect();
    let url = db.url.clone();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async move {
            let opts = DbOptions {
                lock_timeout: std::time::Duration::from_secs(10),
                statement_timeout: std::time::Duration::from_secs(60),
                connect_timeout: std::time::Duration::from_secs(10),
            };
            let mut l = ledger::open(&url, &opts).await.unwrap();
            let start = StatementStart {
                tenant: "default",
                format: "camt.053",
                sha256: "0",
                source_name: "test",
                started_at: chrono::Utc::now(),
                findings: &[],
            };
            let r = l.record_statements(&start, &records).await.unwrap();
            l.close().await;
            r
        })
}

/// (recorded, provisional, confirmed, duplicates, conflicts, held)
fn counts(r: &StatementRun) -> (u64, u64, u64, u64, u64, u64) {
    (
        r.recorded,
        r.provisional,
        r.confirmed,
        r.duplicates,
        r.conflicts,
        r.held,
    )
}

fn day_statement() -> Statement {
    statement(
        StatementKind::Final,
        "S-2026-11-30",
        vec![
            entry(1, 25_000, true, Some("REF-1"), "invoice 1"),
            entry(2, 5_000, false, None, "card"),
        ],
        120_000,
    )
}

fn a_statement_sent_again_is_all_duplicates(db: TestDb) {
    let first = record(&db, vec![day_statement()]);
    assert_eq!(counts(&first), (2, 0, 0, 0, 0, 0));
    assert_eq!(first.statements_new, 1);
    let again = record(&db, vec![day_statement()]);
    assert_eq!(counts(&again), (0, 0, 0, 2, 0, 0));
    assert_eq!(again.statements_duplicate, 1);
    assert_eq!(db.scalar("SELECT count(*) FROM statement_entries"), 2);
    assert_eq!(db.scalar("SELECT count(*) FROM statements"), 1);
    // The run's report: each entry, keyed, and what it matched.
    let rep = db.file("r.csv");
    let r = db.cl(&[
        "report",
        &again.run.run_id.to_string(),
        "-o",
        rep.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = common::read_csv(&rep);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["outcome"], "duplicate");
    assert_eq!(rows[0]["posting_key"], "ref:REF-1");
    assert_eq!(rows[0]["credit_account"], "NL26VAYB8060476890");
    assert_eq!(rows[0]["original_run_id"], first.run.run_id.to_string());
    assert_eq!(rows[1]["debit_account"], "NL26VAYB8060476890");
    assert!(rows[1]["posting_key"].starts_with("fp:") && rows[1]["posting_key"].ends_with(":1"));
    assert!(rows.iter().all(|r| r["kind"] == "statement_entry"));
}

fn intraday_then_end_of_day_counts_each_entry_once(db: TestDb) {
    let mut intraday = day_statement();
    intraday.kind = StatementKind::Intraday;
    intraday.format = "camt.052";
    intraday.entries.truncate(1);
    let r = record(&db, vec![intraday]);
    assert_eq!(counts(&r), (0, 1, 0, 0, 0, 0));
    assert_eq!(
        db.scalar("SELECT count(*) FROM statement_entries WHERE status = 'provisional'"),
        1
    );
    // The end-of-day statement books the provisional entry and records the other.
    let r = record(&db, vec![day_statement()]);
    assert_eq!(counts(&r), (1, 0, 1, 0, 0, 0));
    assert_eq!(db.scalar("SELECT count(*) FROM statement_entries"), 2);
    assert_eq!(
        db.scalar("SELECT count(*) FROM statement_entries WHERE status = 'booked'"),
        2
    );
}

fn a_corrected_statement_is_conflicts_naming_the_fields(db: TestDb) {
    record(&db, vec![day_statement()]);
    let mut corrected = day_statement();
    corrected.entries[0].amount_minor = 25_100;
    corrected
        .entries
        .push(entry(3, 700, true, Some("REF-3"), "late"));
    corrected.balances[1].amount_minor = 120_800;
    let r = record(&db, vec![corrected]);
    assert_eq!(counts(&r), (0, 0, 0, 1, 1, 1));
    assert_eq!(r.statements_conflict, 1);
    let diff = db.rows(&format!(
        "SELECT differences, reason FROM statement_journal WHERE run_id = {} AND outcome = 'conflict'",
        r.run.run_id
    ));
    assert_eq!(diff[0][0], "amount_minor: 25000 != 25100");
    assert_eq!(
        db.scalar("SELECT count(*) FROM statement_entries"),
        2,
        "the corrected statement's new entry is held, not recorded"
    );
}

fn two_identical_lines_without_reference_are_two_entries(db: TestDb) {
    let s = statement(
        StatementKind::Final,
        "S-card",
        vec![
            entry(1, 999, false, None, "coffee"),
            entry(2, 999, false, None, "coffee"),
        ],
        98_002,
    );
    let r = record(&db, vec![s.clone()]);
    assert_eq!(counts(&r), (2, 0, 0, 0, 0, 0));
    let keys = db.rows("SELECT entry_key FROM statement_entries ORDER BY entry_no");
    assert!(
        keys[0][0].ends_with(":1") && keys[1][0].ends_with(":2"),
        "{keys:?}"
    );
    assert_eq!(
        keys[0][0].trim_end_matches(":1"),
        keys[1][0].trim_end_matches(":2")
    );
    let again = record(&db, vec![s]);
    assert_eq!(counts(&again), (0, 0, 0, 2, 0, 0));
}

fn statements_lists_balances_and_breaks_in_the_chain(db: TestDb) {
    record(&db, vec![day_statement()]);
    // The next day's statement opens at 120,000 (the closing above): continuous.
    let mut next = day_statement();
    next.id = "S-2026-12-01".into();
    next.date = NaiveDate::from_ymd_opt(2026, 12, 1);
    next.balances[0].amount_minor = 120_000;
    next.balances[1].amount_minor = 140_000;
    next.entries = vec![entry(1, 20_000, true, Some("REF-9"), "invoice 9")];
    record(&db, vec![next.clone()]);
    let r = db.cl(&["statements", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["closing_minor"], 120000);
    assert_eq!(rows[1]["opening_minor"], 120000);
    assert!(rows.iter().all(|r| r["continuity"] == "ok"));
    // A third that opens elsewhere breaks the chain: said, exit 1.
    let mut gap = next;
    gap.id = "S-2026-12-02".into();
    gap.date = NaiveDate::from_ymd_opt(2026, 12, 2);
    gap.balances[0].amount_minor = 150_000;
    gap.balances[1].amount_minor = 150_000;
    gap.entries = Vec::new();
    record(&db, vec![gap]);
    let r = db.cl(&["statements", "--account", "NL26VAYB8060476890"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let last = r.stdout.lines().last().unwrap();
    assert!(
        last.contains("; continuity: opening balance 150000 != the previous statement's closing balance 140000"),
        "{last}"
    );
    // An entry found by the bank's reference.
    let l = db.cl(&["lookup", "--bank-ref", "REF-9", "--json"]);
    assert_eq!(l.code, 0, "{}", l.stderr);
    let v: serde_json::Value = serde_json::from_str(l.stdout.trim()).unwrap();
    assert_eq!(
        (v["amount_minor"].as_i64(), v["credit"].as_bool()),
        (Some(20000), Some(true))
    );
    assert_eq!(db.cl(&["lookup", "--account-servicer-ref", "NOPE"]).code, 5);
}

fn generated_statement_files_are_recorded_once(db: TestDb) {
    let camt = db.file("g.xml");
    let bai2 = db.file("g.bai2");
    let g = db.cl(&[
        "generate",
        "camt053",
        "--entries",
        "2500",
        "-o",
        camt.to_str().unwrap(),
    ]);
    assert_eq!(g.code, 0, "{}", g.stderr);
    let g = db.cl(&[
        "generate",
        "bai2",
        "--accounts",
        "3",
        "--entries-per-account",
        "400",
        "-o",
        bai2.to_str().unwrap(),
    ]);
    assert_eq!(g.code, 0, "{}", g.stderr);
    for (file, statements, entries) in [(&camt, 3, 2500), (&bai2, 3, 1200)] {
        let p = file.to_str().unwrap();
        let c = db.cl(&["check", "--json", p]);
        assert_eq!(c.code, 0, "{}", c.stdout);
        let r = db.cl(&["ingest", "-q", "--json", p]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
        assert_eq!(v["kind"], "statement");
        assert_eq!(
            (
                v["statements"]["new"].as_i64(),
                v["entries"].as_i64(),
                v["recorded"].as_i64()
            ),
            (Some(statements), Some(entries), Some(entries)),
            "{p}: {v}"
        );
        let again = db.cl(&["ingest", "-q", "--json", p]);
        let v: serde_json::Value = serde_json::from_str(again.stdout.trim()).unwrap();
        assert_eq!(
            (
                v["statements"]["duplicate"].as_i64(),
                v["duplicates"].as_i64(),
                v["recorded"].as_i64()
            ),
            (Some(statements), Some(entries), Some(0)),
            "{p} again: {v}"
        );
    }
    let s = db.cl(&["statements"]);
    assert_eq!(s.code, 0, "{}", s.stdout);
    assert_eq!(s.stdout.lines().count(), 6);
}

fn the_inbox_archives_statement_files_and_quarantines_rejected_ones(db: TestDb) {
    let ib = common::Inbox::under(db.dir.path());
    let (inbox, archive, quarantine) = (&ib.inbox, &ib.archive, &ib.quarantine);
    let corpus = common::corpus();
    std::fs::copy(
        corpus.join("mt940/jejik-rabobank-iban.sta"),
        inbox.join("rabo.sta"),
    )
    .unwrap();
    std::fs::copy(
        corpus.join("bai2/citi_example.bai2"),
        inbox.join("citi.bai2"),
    )
    .unwrap();
    // Citi's statement does not add up: refused under --strict-balances.
    let args = ib.pass(&["--min-age", "0", "--strict-balances"]);
    let r = db.cl(&args);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(archive.join("rabo.sta").exists() && archive.join("rabo.sta.report.csv").exists());
    let rows = common::read_csv(&archive.join("rabo.sta.report.csv"));
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r["outcome"] == "recorded"));
    let note = std::fs::read_to_string(quarantine.join("citi.bai2.error.txt")).unwrap();
    assert!(note.contains("[balance_mismatch]"), "{note}");
    assert_eq!(db.scalar("SELECT count(*) FROM statement_entries"), 4);
    // The next pass finds nothing to take.
    let r = db.cl(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

fn a_dry_run_of_a_statement_file_records_nothing(db: TestDb) {
    let f = common::corpus().join("mt940/jejik-rabobank-iban.sta");
    let p = f.to_str().unwrap();
    let rep = db.file("dry.csv");
    let r = db.cl(&[
        "ingest",
        "--dry-run",
        "--json",
        p,
        "--report",
        rep.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(
        (
            v["status"].as_str(),
            v["would_post"].as_i64(),
            v["records"].as_i64()
        ),
        (Some("dry_run"), Some(4), Some(4)),
        "{v}"
    );
    assert_eq!(
        v["sha256"],
        "0a4df92b0c8b43d9cd1d57b9116fc60911176885b53d5ca8f3869a492478ba33"
    );
    let rows = common::read_csv(&rep);
    assert_eq!(rows.len(), 4);
    assert!(
        rows.iter()
            .all(|r| r["outcome"] == "would_record" && r["run_id"].is_empty()),
        "{rows:?}"
    );
    assert_eq!(db.scalar("SELECT count(*) FROM statement_entries"), 0);
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 0);
    // Recorded for real, then a dry run again: every entry a duplicate.
    assert_eq!(db.cl(&["ingest", "-q", p]).code, 0);
    let r = db.cl(&["ingest", "--dry-run", "--json", p]);
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(
        (v["would_post"].as_i64(), v["duplicates"].as_i64()),
        (Some(0), Some(4)),
        "{v}"
    );
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 1);
}

/// `check --json` of a statement whose one amount is not read (a decimal too many): the
/// entry is counted apart (`amounts_unread`), never summed as a 0 of no currency (`{"":
/// 0}`), and the one finding is the amount's (no balance mismatch follows from it).
#[test]
fn check_counts_an_amount_not_read_apart() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("one-bad-amount.sta");
    std::fs::write(
        &p,
        ":20:S\n:25:A1\n:28C:1\n:60F:C250101EUR10,00\n:61:2501010101C1,234NTRFR1\n\
         :61:2501010101D2,00NTRFR2\n:62F:C250101EUR11,23\n-\n",
    )
    .unwrap();
    let out = common::run(&["check", "--json", p.to_str().unwrap()], &[]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(
        (
            &v["entries"],
            &v["amounts_unread"],
            &v["booked_credits_minor_by_currency"],
            &v["booked_debits_minor_by_currency"],
        ),
        (
            &serde_json::json!(2),
            &serde_json::json!(1),
            &serde_json::json!({}),
            &serde_json::json!({"EUR": 200}),
        )
    );
    let codes: Vec<_> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["code"].as_str().unwrap(), f["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(codes, vec![("amount_format", 5)]);
}
