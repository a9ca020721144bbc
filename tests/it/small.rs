//! Smaller defects, through the command line: a message without transactions,
//! an attribute written twice, a generated NACHA file beyond what NACHA holds.

use crate::common;

use common::{TestDb, run};

on_both_backends!(a_message_without_transactions_is_one_finding_to_check_and_to_ingest);

const PACS: &str = "urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08";

fn a_message_without_transactions_is_one_finding_to_check_and_to_ingest(db: TestDb) {
    let path = db.file("empty.xml");
    std::fs::write(
        &path,
        format!(
            "<?xml version=\"1.0\"?>\n<Document xmlns=\"{PACS}\"><FIToFICstmrCdtTrf><GrpHdr>\
             <MsgId>EMPTY-1</MsgId><NbOfTxs>0</NbOfTxs><CtrlSum>0</CtrlSum></GrpHdr>\
             </FIToFICstmrCdtTrf></Document>\n"
        ),
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let finding = format!(
        "{p}:2: error [no_transactions] byte 22, /Document: expected at least one transaction \
         (FIToFICstmrCdtTrf/CdtTrfTxInf) in a pacs.008 message, found \"none (NbOfTxs 0)\""
    );
    // `check`: invalid (exit 3), with the one finding; no longer "valid".
    let out = run(&["check", p], &[]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout,
        format!("{finding}\n{p}: invalid: 1 documents, 0 transactions; 1 errors, 0 warnings\n")
    );
    // `ingest`: rejected with the same finding, no longer "0 errors, 0 warnings".
    let out = db.cl(&["ingest", p]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains(&finding), "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "{p}: rejected (run 1): 1 errors, 0 warnings; nothing posted"
        )),
        "{}",
        out.stderr
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
    assert_eq!(
        db.rows("SELECT code, field FROM findings ORDER BY seq"),
        [["no_transactions".to_string(), "/Document".to_string()]]
    );
}

#[test]
fn an_attribute_written_twice_is_refused_not_read_first_wins() {
    let db = TestDb::sqlite();
    let sample = std::fs::read_to_string(common::samples().join("pacs008-credit-transfers.xml"))
        .unwrap()
        .replacen(
            "<IntrBkSttlmAmt Ccy=\"EUR\">",
            "<IntrBkSttlmAmt Ccy=\"EUR\" Ccy=\"JPY\">",
            1,
        );
    let path = db.file("twice.xml");
    std::fs::write(&path, &sample).unwrap();
    let p = path.to_str().unwrap();
    let byte = sample.find("Ccy=\"JPY\"").unwrap();
    let line = 1 + sample[..byte].matches('\n').count();
    let finding = format!(
        "{p}:{line}: error [duplicate_attribute] byte {byte}, \
         /Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]/IntrBkSttlmAmt@Ccy: expected one Ccy \
         attribute, found \"Ccy=\\\"JPY\\\" after Ccy=\\\"EUR\\\"\""
    );
    let out = run(&["check", p], &[]);
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(
        out.stdout.starts_with(&format!("{finding}\n")),
        "{}",
        out.stdout
    );
    let out = db.cl(&["ingest", p]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains(&finding), "{}", out.stderr);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
}

#[test]
fn generate_refuses_a_nacha_file_larger_than_nacha_holds() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("big.ach");
    let o = out_path.to_str().unwrap();
    let out = run(
        &[
            "generate",
            "nacha",
            "--entries",
            "10000000",
            "--batches",
            "20",
            "-o",
            o,
        ],
        &[],
    );
    assert_eq!(out.code, 2, "a usage error: {}", out.stderr);
    assert_eq!(
        out.stderr,
        "clearledger: --entries 10000000: a NACHA file holds at most 9999990 records (999,999 \
         blocks of 10: the file control's block count has 6 digits), so at most 9090862 \
         entries with --batches 20 and --addenda-every 10\n"
    );
    assert!(!out_path.exists(), "no file written");
    let out = run(&["generate", "nacha", "--help"], &[]);
    assert!(
        out.stdout.contains("9,999,990 records") && out.stdout.contains("9,090,864 entries"),
        "{}",
        out.stdout
    );
}
