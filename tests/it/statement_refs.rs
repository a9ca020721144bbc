//! Reconciliation inputs (migration 0009): a statement entry's identifiers
//! beyond its columns are stored as JSON (`statement_entries.refs`), exactly; `runs.kind`
//! also takes `reconcile` and still refuses what is no kind; and an old ledger, upgraded
//! through the rebuild of `runs` (SQLite), keeps every foreign key whole and enforced.

use crate::common;

use clearledger::ledger::{self, DbOptions};
use common::{Backend, TestDb};

on_both_backends!(
    entries_keep_their_identifiers_as_exact_json,
    runs_take_the_reconcile_kind_and_refuse_an_unknown_one,
);

const UETR: &str = "EB6305C9-1F7F-49DE-AED0-16487C27B42D";

/// A camt.053 of one statement: (i) an entry of one transaction with UETR, InstrId and
/// EndToEndId; (ii) a batch (`Btch/PmtInfId`) of three transactions with their amounts;
/// (iii) a returned payment (`RtrInf/Rsn/Cd`); (iv) a plain entry.
fn camt053() -> String {
    let ntry = |amount: &str, ind: &str, bank_ref: &str, details: &str| {
        format!(
            "<Ntry><Amt Ccy=\"EUR\">{amount}</Amt><CdtDbtInd>{ind}</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>\
             <BookgDt><Dt>2026-11-30</Dt></BookgDt><ValDt><Dt>2026-11-30</Dt></ValDt>\
             <AcctSvcrRef>{bank_ref}</AcctSvcrRef>{details}</Ntry>\n"
        )
    };
    let tx = |amount: &str, refs: &str, more: &str| {
        format!("<TxDtls><Refs>{refs}</Refs><Amt Ccy=\"EUR\">{amount}</Amt>{more}</TxDtls>")
    };
    let entries = [
        ntry(
            "12.50",
            "CRDT",
            "BANK-1",
            &format!(
                "<NtryDtls>{}</NtryDtls>",
                tx(
                    "12.50",
                    &format!(
                        "<InstrId>INSTR-1</InstrId><EndToEndId>E2E-1</EndToEndId><UETR>{UETR}</UETR>"
                    ),
                    ""
                )
            ),
        ),
        ntry(
            "60.00",
            "CRDT",
            "BANK-2",
            &format!(
                "<NtryDtls><Btch><PmtInfId>SALARIES-2026-11</PmtInfId><NbOfTxs>3</NbOfTxs>\
                 <TtlAmt Ccy=\"EUR\">60.00</TtlAmt></Btch>{}{}{}</NtryDtls>",
                tx("10.00", "<EndToEndId>E-1</EndToEndId>", ""),
                tx(
                    "20.00",
                    "<InstrId>I-2</InstrId><EndToEndId>E-2</EndToEndId>",
                    ""
                ),
                tx(
                    "30.00",
                    "<AcctSvcrRef>TX-3</AcctSvcrRef><EndToEndId>E-3</EndToEndId>",
                    ""
                ),
            ),
        ),
        ntry(
            "7.00",
            "CRDT",
            "BANK-3",
            &format!(
                "<NtryDtls>{}</NtryDtls>",
                tx(
                    "7.00",
                    "<EndToEndId>E2E-RET</EndToEndId>",
                    "<RtrInf><Rsn><Cd>AC04</Cd></Rsn></RtrInf>"
                )
            ),
        ),
        ntry("1.00", "DBIT", "BANK-4", ""),
    ]
    .concat();
    format!(
        "<?xml version=\"1.0\"?>\n<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.08\">\
         <BkToCstmrStmt><GrpHdr><MsgId>M-1</MsgId><CreDtTm>2026-11-30T18:00:00Z</CreDtTm></GrpHdr>\n\
         <Stmt><Id>S-1</Id><ElctrncSeqNb>1</ElctrncSeqNb><CreDtTm>2026-11-30T18:00:00Z</CreDtTm>\
         <Acct><Id><IBAN>NL26VAYB8060476890</IBAN></Id><Ccy>EUR</Ccy></Acct>\n\
         <Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">100.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-11-29</Dt></Dt></Bal>\n\
         <Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">178.50</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-11-30</Dt></Dt></Bal>\n\
         {entries}</Stmt></BkToCstmrStmt></Document>\n"
    )
}

fn ingest_json(db: &TestDb, path: &std::path::Path) -> serde_json::Value {
    let r = db.cl(&["ingest", "-q", "--json", path.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    serde_json::from_str(r.stdout.trim()).unwrap()
}

fn entries_keep_their_identifiers_as_exact_json(db: TestDb) {
    let path = db.file("stmt.xml");
    std::fs::write(&path, camt053()).unwrap();
    let c = db.cl(&["check", "--json", path.to_str().unwrap()]);
    assert_eq!(c.code, 0, "no findings: {}", c.stdout);
    let v = ingest_json(&db, &path);
    assert_eq!(
        (v["entries"].as_i64(), v["recorded"].as_i64()),
        (Some(4), Some(4)),
        "{v}"
    );
    let rows = db.rows(
        "SELECT entry_no, bank_ref, end_to_end_id, refs FROM statement_entries ORDER BY entry_no",
    );
    let got: Vec<Vec<&str>> = rows
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(
        got,
        [
            vec![
                "1",
                "BANK-1",
                "E2E-1",
                r#"{"instr_id":"INSTR-1","uetr":"eb6305c9-1f7f-49de-aed0-16487c27b42d"}"#,
            ],
            vec![
                "2",
                "BANK-2",
                "NULL",
                r#"{"batch_ref":"SALARIES-2026-11","details":[{"amount_minor":1000,"currency":"EUR","end_to_end_id":"E-1"},{"amount_minor":2000,"currency":"EUR","end_to_end_id":"E-2","instr_id":"I-2"},{"account_servicer_ref":"TX-3","amount_minor":3000,"currency":"EUR","end_to_end_id":"E-3"}]}"#,
            ],
            vec!["3", "BANK-3", "E2E-RET", r#"{"return_reason":"AC04"}"#],
            vec!["4", "BANK-4", "NULL", "NULL"],
        ]
    );
    // Other bytes, the same statement: all duplicates (the identifiers are not part of the
    // fingerprint), the stored identifiers unchanged.
    let again = db.file("again.xml");
    std::fs::write(&again, format!("{}<!-- again -->\n", camt053())).unwrap();
    let v = ingest_json(&db, &again);
    assert_eq!(
        (
            v["entries"].as_i64(),
            v["recorded"].as_i64(),
            v["duplicates"].as_i64()
        ),
        (Some(4), Some(0), Some(4)),
        "{v}"
    );
    assert_eq!(db.rows("SELECT entry_no, bank_ref, end_to_end_id, refs FROM statement_entries ORDER BY entry_no"), rows);
}

/// Runs a statement directly against the database, its error as text.
fn try_exec(db: &TestDb, sql: &str) -> Result<(), String> {
    match db.backend {
        Backend::Sqlite => {
            let path = db.url.strip_prefix("sqlite://").unwrap();
            let c = rusqlite::Connection::open(path).map_err(|e| e.to_string())?;
            c.execute_batch(sql).map_err(|e| e.to_string())
        }
        Backend::Postgres => common::block_on(async {
            use sqlx::Connection;
            let mut c = sqlx::PgConnection::connect(&db.url)
                .await
                .map_err(|e| e.to_string())?;
            sqlx::raw_sql(sql)
                .execute(&mut c)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        }),
    }
}

fn insert_run(kind: &str) -> String {
    format!(
        "INSERT INTO runs (tenant, sha256, format, source_name, started_at, finished_at, status, kind) \
         VALUES ('default', '', 'none', 'test', '2026-11-30T18:00:00.000000Z', \
         '2026-11-30T18:00:01.000000Z', 'completed', '{kind}')"
    )
}

fn runs_take_the_reconcile_kind_and_refuse_an_unknown_one(db: TestDb) {
    // A ledger made and migrated by the CLI, one ingest in it.
    let path = db.file("stmt.xml");
    std::fs::write(&path, camt053()).unwrap();
    ingest_json(&db, &path);
    let err = try_exec(&db, &insert_run("bogus")).expect_err("an unknown kind is refused");
    assert!(err.to_lowercase().contains("check constraint"), "{err}");
    for kind in ["reconcile", "ingest", "resolve", "reverse"] {
        try_exec(&db, &insert_run(kind)).unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
    // (PostgreSQL's identity consumed a value for the refused row: ids are not compared.)
    assert_eq!(
        db.rows("SELECT kind FROM runs ORDER BY run_id"),
        ["ingest", "reconcile", "ingest", "resolve", "reverse"].map(|k| vec![k.to_string()])
    );
    // The ledger reads a reconciliation run back.
    let r = db.cl(&["runs", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let kinds: Vec<String> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"].to_string())
        .collect();
    assert_eq!(
        kinds,
        [
            "\"reverse\"",
            "\"resolve\"",
            "\"ingest\"",
            "\"reconcile\"",
            "\"ingest\""
        ]
    );
}

fn opts() -> DbOptions {
    DbOptions {
        lock_timeout: std::time::Duration::from_secs(10),
        statement_timeout: std::time::Duration::from_secs(60),
        connect_timeout: std::time::Duration::from_secs(10),
    }
}

fn restore_v2(db: &TestDb) {
    let dump = common::fixtures("v2").join("ledger.sqlite.sql");
    db.exec_script(&std::fs::read_to_string(dump).unwrap());
}

/// The v2 ledger (migrations 1–3, six runs) upgraded through 0009's rebuild of `runs`: no
/// foreign key broken, foreign keys enforced again on the ledger's connection, the run ids
/// going on where they were.
#[test]
fn an_old_sqlite_ledger_upgrades_with_its_foreign_keys_whole_and_enforced() {
    let db = TestDb::sqlite();
    restore_v2(&db);
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 6);
    let url = db.url.clone();
    let enforced = common::block_on(async move {
        let mut l = ledger::open(&url, &opts()).await.unwrap();
        let on = l.foreign_keys_enforced().await.unwrap();
        l.close().await;
        on
    });
    assert!(
        enforced,
        "PRAGMA foreign_keys is 1 on the ledger's connection"
    );
    // Every migration applied: the newest is the highest-numbered file.
    let newest = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.get(..4)?.parse::<i64>().ok())
        .max()
        .unwrap();
    assert_eq!(
        db.scalar("SELECT max(version) FROM schema_migrations"),
        newest
    );
    // Migration 0016: the journal's outcome check without a list.
    assert_eq!(
        db.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'journal' AND sql LIKE '%CHECK (outcome = ''duplicate'' OR outcome = ''conflict'' OR outcome = ''held'')%'"),
        1
    );
    assert_eq!(
        db.scalar(
            "SELECT count(*) FROM sqlite_master WHERE tbl_name = 'journal' AND type = 'index'"
        ),
        3
    );
    // Migrations 0014 and 0015: the trace-number index is the partial one, its operations
    // compared one by one.
    assert_eq!(
        db.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'postings_trace' AND sql LIKE '%WHERE ((operation <> ''pacs.008'' AND %'"),
        1
    );
    assert_eq!(
        db.rows("PRAGMA foreign_key_check"),
        Vec::<Vec<String>>::new()
    );
    assert_eq!(
        db.rows("SELECT name, seq FROM sqlite_sequence WHERE name LIKE 'runs%'"),
        [["runs", "6"].map(str::to_string).to_vec()]
    );
    assert_eq!(
        db.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runs' AND name = 'runs_tenant_file'"),
        1
    );
    // The next run is run 7, and the upgraded ledger reports as before.
    let path = db.file("stmt.xml");
    std::fs::write(&path, camt053()).unwrap();
    ingest_json(&db, &path);
    assert_eq!(db.scalar("SELECT max(run_id) FROM runs"), 7);
    assert_eq!(
        db.scalar("SELECT count(*) FROM files WHERE first_run_id <= 6"),
        6
    );
    let r = db.cl(&["report", "3"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// A row that references a missing run stops the upgrade before it commits, naming its
/// table: nothing migrated, and the ledger not left with foreign keys off.
#[test]
fn a_broken_foreign_key_stops_the_upgrade_and_names_its_table() {
    let db = TestDb::sqlite();
    restore_v2(&db);
    db.exec_script(
        "PRAGMA foreign_keys = OFF; INSERT INTO files (tenant, file_id, format, sha256, \
         first_run_id, first_seen_at) VALUES ('default', 'orphan', 'nacha', NULL, 99, 'x');",
    );
    let r = db.cl(&["runs"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains(
            "1 row(s) of table files referencing missing rows (PRAGMA foreign_key_check)"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(db.scalar("SELECT max(version) FROM schema_migrations"), 3);
    assert_eq!(
        db.scalar("SELECT count(*) FROM pragma_table_info('statement_entries')"),
        0,
        "migration 7 rolled back with the rest"
    );
    let url = db.url.clone();
    let err = common::block_on(async move {
        match ledger::open(&url, &opts()).await {
            Ok(_) => panic!("the upgrade must fail"),
            Err(e) => e,
        }
    });
    assert!(
        matches!(&err, ledger::LedgerError::ForeignKeyViolation { table, rows: 1 } if table == "files"),
        "{err:?}"
    );
}
