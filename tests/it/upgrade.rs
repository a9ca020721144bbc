//! A ledger written by the previous release (the journal before migration 0003) is
//! upgraded in place by this one, and reports exactly what the previous release reported.
//!
//! The fixtures under tests/fixtures/v1/ were made by the previous release, commit 100e825
//! (check it out to make them again):
//! `ingest samples/ppd-payroll-credits.ach` (run 1: 4 posted), the same file again (run 2:
//! 4 duplicates, exact re-upload), `ingest samples/ppd-payroll-credits-amended.ach` (run 3:
//! 3 duplicates, record 2 a conflict); then `report 1|2|3` (report-N.csv) and the database dumped
//! (`sqlite3 .dump`, `pg_dump --inserts --no-owner --no-privileges`, its psql-only `\restrict` lines removed); the PostgreSQL reports
//! are report-N.pg.csv (their times differ).

use crate::common;
use common::{Backend, TestDb, samples};
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    common::fixtures("v1")
}

fn restore(db: &TestDb) {
    restore_from(db, "v1")
}

fn restore_from(db: &TestDb, release: &str) {
    let dump = match db.backend {
        Backend::Sqlite => "ledger.sqlite.sql",
        Backend::Postgres => "ledger.pg.sql",
    };
    let sql = std::fs::read_to_string(common::fixtures(release).join(dump)).expect("fixture dump");
    db.exec_script(&sql);
}

/// A report of an earlier release as this one writes it: the same columns, then `kind`
/// (`record`: no earlier release could compensate) and `decision` (none: none could
/// decide), appended later. Every other byte is unchanged.
fn with_operator_columns(report: &str) -> String {
    let mut lines = report.lines();
    let mut out = format!("{},kind,decision\n", lines.next().unwrap_or_default());
    for l in lines {
        out.push_str(l);
        out.push_str(",record,\n");
    }
    out
}

/// The reports of runs `1..=runs` equal the ones the release wrote before its upgrade.
fn reports_unchanged(db: &TestDb, release: &str, runs: u32) {
    for run in 1..=runs {
        let out = db.file(&format!("report-{run}.csv"));
        let r = db.cl(&["report", &run.to_string(), "-o", out.to_str().unwrap()]);
        assert_eq!(r.code, 0, "report {run}: {}", r.stderr);
        let want = match db.backend {
            Backend::Sqlite => format!("report-{run}.csv"),
            Backend::Postgres => format!("report-{run}.pg.csv"),
        };
        let want = std::fs::read_to_string(common::fixtures(release).join(want)).unwrap();
        let want = with_operator_columns(&want);
        let got = std::fs::read_to_string(&out).unwrap();
        assert_eq!(got, want, "report of run {run} after the upgrade");
    }
}

/// `(posted, duplicates, conflicts, held, file_id)` of an ingest's JSON summary.
fn summary(r: &common::Run) -> (i64, i64, i64, i64, String) {
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).expect("ingest --json");
    let n = |k: &str| v[k].as_i64().unwrap_or(-1);
    (
        n("posted"),
        n("duplicates"),
        n("conflicts"),
        n("held"),
        v["file_id"].as_str().unwrap_or("").to_string(),
    )
}

/// The same file with other bytes (a trailing XML comment): not the exact re-upload fast
/// path, every record keyed again.
fn resent_xml(db: &TestDb, sample: &str) -> PathBuf {
    let mut bytes = std::fs::read(samples().join(sample)).unwrap();
    bytes.extend_from_slice(b"\n<!-- sent again -->\n");
    let path = db.file(sample);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A ledger written before the v2 rules changed two keying rules (NACHA
/// identities normalise a routing number's spelling; ISO 20022 transactions are keyed by
/// leg): tests/fixtures/v2/ holds its dump and reports, made by that release from
/// `ingest tests/fixtures/v2/ppd-payroll-credits-zero-padded.ach` (run 1, immediate
/// destination `0231380104`), `samples/pacs008-credit-transfers.xml` (run 2),
/// `samples/pain001-initiation.xml` (run 3), `samples/pacs004-return.xml` (run 4),
/// `tests/fixtures/iso/chain-leg1.xml` (run 5: leg 1 of a chain, keyed `uetr:U` then) and
/// `tests/fixtures/iso/aba-payment.xml` (run 6: agents by ABA number only, which that
/// release could not see). After the upgrade its files are still found: nothing posts twice;
/// what it could not tell apart is held, not guessed.
fn a_ledger_from_before_the_key_rule_changes_still_finds_its_files(db: TestDb) {
    restore_from(&db, "v2");
    reports_unchanged(&db, "v2", 6);
    // The migration marked where the earlier ISO keys end: postings 5..=12 are ISO.
    assert_eq!(
        db.scalar("SELECT value FROM ledger_meta WHERE name = 'iso_v1_keys_below'"),
        13
    );
    // The same NACHA file, its destination padded with a blank: found under the spelling
    // it was posted with.
    let blank_padded = samples().join("ppd-payroll-credits.ach");
    let r = db.cl(&["ingest", "-q", "--json", blank_padded.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        summary(&r),
        (
            0,
            4,
            0,
            0,
            "nacha:0231380104:1210428821:261129:0900:A".to_string()
        )
    );
    // The ISO files again, under other bytes: every transaction a duplicate of its posting.
    for (sample, n, run) in [
        ("pacs008-credit-transfers.xml", 3, 2),
        ("pain001-initiation.xml", 2, 3),
        ("pacs004-return.xml", 1, 4),
    ] {
        let path = resent_xml(&db, sample);
        let r = db.cl(&["ingest", "-q", "--json", path.to_str().unwrap()]);
        assert_eq!(r.code, 0, "{sample}: {}", r.stderr);
        let (posted, duplicates, conflicts, held, _) = summary(&r);
        assert_eq!(
            (posted, duplicates, conflicts, held),
            (0, n, 0, 0),
            "{sample}"
        );
        assert_eq!(
            db.scalar(&format!(
                "SELECT count(*) FROM journal j JOIN postings p ON p.tenant = j.tenant AND p.posting_id = j.original_posting_id \
                 WHERE j.run_id = (SELECT max(run_id) FROM runs) AND j.outcome = 'duplicate' AND p.run_id = {run}"
            )),
            n,
            "{sample}: each a duplicate of what run {run} posted"
        );
    }
    // Other content under an old key is still a conflict, naming the field that differs.
    let amended = samples().join("pacs008-amended.xml");
    let r = db.cl(&["ingest", "-q", "--json", amended.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let (posted, duplicates, conflicts, held, _) = summary(&r);
    assert_eq!((posted, duplicates, conflicts, held), (0, 0, 1, 0));
    assert_eq!(
        db.rows(
            "SELECT j.record_no, j.outcome, j.differences, p.run_id FROM journal j \
             JOIN postings p ON p.tenant = j.tenant AND p.posting_id = j.original_posting_id \
             WHERE j.run_id = (SELECT max(run_id) FROM runs)"
        ),
        vec![vec!["1", "conflict", "amount: 125000 != 125100", "2"]]
    );
    // A chain: leg 1 was posted under `uetr:U`; leg 2 (same UETR, sent by the next agent)
    // is another leg, not a conflict with it; leg 1 sent again is still its duplicate.
    let leg2 = common::fixtures("iso").join("chain-leg2.xml");
    let r = db.cl(&["ingest", "-q", "--json", leg2.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(summary(&r).0, 1, "leg 2 posts");
    let leg1 = std::fs::read(common::fixtures("iso").join("chain-leg1.xml")).unwrap();
    let leg1_again = db.file("chain-leg1-again.xml");
    std::fs::write(&leg1_again, [leg1, b"\n<!-- again -->\n".to_vec()].concat()).unwrap();
    let r = db.cl(&["ingest", "-q", "--json", leg1_again.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (posted, duplicates, conflicts, held, _) = summary(&r);
    assert_eq!(
        (posted, duplicates, conflicts, held),
        (0, 1, 0, 0),
        "leg 1 again"
    );
    // Agents by ABA number: the old posting knew neither bank. The same payment to another
    // bank, and the same file again, cannot be told from it: held, never a duplicate.
    for name in ["aba-payment-other-bank.xml", "aba-payment.xml"] {
        let bytes = std::fs::read(common::fixtures("iso").join(name)).unwrap();
        let path = db.file(name);
        std::fs::write(&path, [bytes, b"\n<!-- again -->\n".to_vec()].concat()).unwrap();
        let r = db.cl(&["ingest", "-q", "--json", path.to_str().unwrap()]);
        assert_eq!(r.code, 1, "{name}: {}", r.stderr);
        let (posted, duplicates, conflicts, held, _) = summary(&r);
        assert_eq!(
            (posted, duplicates, conflicts, held),
            (0, 0, 0, 1),
            "{name}"
        );
    }
    // What posts after the upgrade is keyed by the new rule, and found by it again: the
    // second file repeats one transaction of run 2 (a duplicate) and adds two.
    let r = db.cl(&[
        "ingest",
        "-q",
        "--json",
        samples().join("pacs008-second-file.xml").to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (posted, duplicates, conflicts, held, _) = summary(&r);
    assert_eq!((posted, duplicates, conflicts, held), (2, 1, 0, 0));
    let second = resent_xml(&db, "pacs008-second-file.xml");
    let r = db.cl(&["ingest", "-q", "--json", second.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (posted, duplicates, conflicts, held, _) = summary(&r);
    assert_eq!((posted, duplicates, conflicts, held), (0, 3, 0, 0));
}

on_both_backends!(
    a_previous_release_ledger_upgrades_and_reports_the_same,
    a_ledger_from_before_the_key_rule_changes_still_finds_its_files,
    an_upgraded_ledger_knows_every_tenant_it_holds
);

/// Migration 0006 registers every tenant the ledger already holds runs for (created when
/// its first run started) and `default`: an upgraded ledger goes on working under each of
/// its tenants, and only a name it never held is refused.
fn an_upgraded_ledger_knows_every_tenant_it_holds(db: TestDb) {
    restore(&db);
    // The release before tenants were known took any name: two more tenants' runs.
    db.exec_script(
        "INSERT INTO runs (tenant, file_id, sha256, format, source_name, started_at, finished_at, status) VALUES \
         ('acme', NULL, '', 'nacha', 'a.ach', '2026-11-30T09:00:00.000000Z', '2026-11-30T09:00:01.000000Z', 'completed'), \
         ('acme', NULL, '', 'nacha', 'b.ach', '2026-11-30T08:00:00.000000Z', '2026-11-30T08:00:01.000000Z', 'completed'), \
         ('Nordbank_1', NULL, '', 'nacha', 'c.ach', '2026-11-28T07:00:00.000000Z', '2026-11-28T07:00:01.000000Z', 'completed');",
    );
    let r = db.cl(&["tenant", "list", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let default_created = match db.backend {
        Backend::Sqlite => "2026-11-29T22:20:19.870699Z",
        Backend::Postgres => "2026-11-29T22:20:24.427253Z",
    };
    let want = [
        ("Nordbank_1", "2026-11-28T07:00:00.000000Z"),
        ("default", default_created),
        ("acme", "2026-11-30T08:00:00.000000Z"),
    ]
    .map(|(n, c)| format!("{{\"name\":\"{n}\",\"created_at\":\"{c}\"}}"))
    .join("\n");
    assert_eq!(r.stdout.trim(), want, "oldest first");
    // Each goes on working: its runs are read, and it ingests.
    let r = db.cl(&["--tenant", "acme", "runs", "--json"]);
    assert_eq!((r.code, r.stdout.lines().count()), (0, 2), "{}", r.stderr);
    let payroll = samples().join("ppd-payroll-credits.ach");
    let r = db.cl(&[
        "--tenant",
        "acme",
        "ingest",
        "-q",
        "--json",
        payroll.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(summary(&r).0, 4, "acme's own ledger: the payroll posts");
    let r = db.cl(&["ingest", "-q", "--json", payroll.to_str().unwrap()]);
    assert_eq!(
        summary(&r).1,
        4,
        "default's: every entry a duplicate of run 1"
    );
    // A name it never held is refused, naming those it knows.
    let r = db.cl(&[
        "--tenant",
        "acmee",
        "ingest",
        "-q",
        payroll.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "clearledger: unknown tenant \"acmee\"; known tenants: Nordbank_1, default, acme; \
         add one with `clearledger tenant add NAME`\n"
    );
}

fn a_previous_release_ledger_upgrades_and_reports_the_same(db: TestDb) {
    restore(&db);
    // Migration 0013 rewrites each posting's JSON detail in the compact form
    // (src/model/detail.rs): it must read back as the very same text.
    let details = "SELECT posting_id, detail FROM postings ORDER BY posting_id";
    let before = db.rows(details);
    assert_eq!(before.len(), 4);
    assert!(
        before.iter().all(|r| r[1].starts_with("{\"account\":")),
        "{before:?}"
    );
    for run in ["1", "2", "3"] {
        let out = db.file(&format!("report-{run}.csv"));
        let r = db.cl(&["report", run, "-o", out.to_str().unwrap()]);
        assert_eq!(r.code, 0, "report {run}: {}", r.stderr);
        let want = match db.backend {
            Backend::Sqlite => format!("report-{run}.csv"),
            Backend::Postgres => format!("report-{run}.pg.csv"),
        };
        let want = std::fs::read_to_string(fixtures().join(want)).unwrap();
        let want = with_operator_columns(&want);
        let got = std::fs::read_to_string(&out).unwrap();
        assert_eq!(got, want, "report of run {run} after the upgrade");
    }
    assert_eq!(
        db.rows(details),
        before,
        "the compact details read back as the JSON"
    );
    let first_byte = match db.backend {
        Backend::Sqlite => "SELECT DISTINCT hex(substr(detail, 1, 1)) FROM postings",
        Backend::Postgres => {
            "SELECT DISTINCT encode(substring(detail from 1 for 1), 'hex') FROM postings"
        }
    };
    assert_eq!(
        db.rows(first_byte),
        vec![vec!["01".to_string()]],
        "every posting compacted"
    );
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
        db.scalar("SELECT count(*) FROM journal j JOIN postings p ON p.tenant = j.tenant AND p.posting_id = j.original_posting_id WHERE p.record_no = 3"),
        3,
        "posting 3 was seen again by runs 2, 3 and 4"
    );
}

/// `db backup` copies a ledger as it is: one written by an earlier release is backed up
/// with its own migrations, not upgraded first (back up, then upgrade).
#[test]
fn a_ledger_is_backed_up_before_it_is_upgraded() {
    let db = TestDb::sqlite();
    restore_from(&db, "v2");
    let before = db.scalar("SELECT count(*) FROM schema_migrations");
    assert_eq!(before, 3, "the v2 fixture holds migrations 1-3");
    let copy = db.file("pre-upgrade.db");
    let r = db.cl(&["db", "backup", copy.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(db.scalar("SELECT count(*) FROM schema_migrations"), before);
    let c = rusqlite::Connection::open(&copy).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM schema_migrations", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, before);
    let runs: i64 = c
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(runs, 6);
}
