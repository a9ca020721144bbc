//! What operations throw at it (issue #17): totals that cannot overflow, inputs read once.

mod common;

use common::TestDb;

on_both_backends!(
    ten_amounts_of_18_digits_are_refused_not_wrapped,
    amounts_that_overflow_a_run_total_post_nothing,
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
