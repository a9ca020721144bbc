//! ISO 20022 files through the same `ingest`, on both backends, and the corpus files with
//! the outcomes their MANIFEST states.

use crate::common;

use clearledger::findings::FindingCode;
use clearledger::formats::iso20022::{self, IsoEvent};
use common::{TestDb, read_csv, samples};
use std::path::Path;

on_both_backends!(
    keys_from_uetr_end_to_end_id_and_notprovided,
    a_return_posts_once_and_links_to_its_payment,
    a_changed_amount_under_the_same_uetr_is_a_conflict,
    within_file_duplicates_are_reported_as_such,
    an_invalid_message_is_rejected_with_its_element_path,
    a_currency_that_is_no_currency_rejects_the_file_and_is_no_database_error,
    a_payment_chain_posts_once_per_leg_and_its_return_leg_once,
    agents_by_clearing_member_id_scope_files_keys_and_accounts,
    a_return_with_rtr_chain_posts_between_the_real_parties,
    a_return_with_only_its_end_to_end_id_links_to_its_payment,
    the_rtp_envelope_and_other_encodings_are_read,
    a_leg_resent_with_its_bics_spelled_otherwise_is_a_duplicate,
    a_uetr_leg_naming_one_agent_only_is_keyed_by_its_half_leg,
    a_generated_file_posts_every_transaction_once,
    a_pain001_posting_keeps_its_payment_information_id,
    a_lookup_by_trace_number_finds_every_posting_whichever_index_holds_it,
);

fn ingest(db: &TestDb, name: &str) -> (i32, Vec<std::collections::HashMap<String, String>>) {
    ingest_path(db, &samples().join(name))
}

fn ingest_fixture(
    db: &TestDb,
    name: &str,
) -> (i32, Vec<std::collections::HashMap<String, String>>) {
    ingest_path(db, &fixtures().join(name))
}

fn ingest_path(db: &TestDb, path: &Path) -> (i32, Vec<std::collections::HashMap<String, String>>) {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let rep = db.file(&format!(
        "{name}.{}.csv",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let out = db.cl(&[
        "ingest",
        path.to_str().unwrap(),
        "--report",
        rep.to_str().unwrap(),
    ]);
    assert!(matches!(out.code, 0 | 1), "{name}: {}", out.stderr);
    (out.code, read_csv(&rep))
}

fn outcomes(rows: &[std::collections::HashMap<String, String>]) -> Vec<String> {
    rows.iter().map(|r| r["outcome"].clone()).collect()
}

const U1: &str = "eb6305c9-1f7f-49de-aed0-16487c27b42d";
/// The leg of the samples' pacs.008 (and, reversed, of their return).
const LEG1: &str = "COBADEFF>INGBNL2A";

fn keys_from_uetr_end_to_end_id_and_notprovided(db: TestDb) {
    let (_, first) = ingest(&db, "pacs008-credit-transfers.xml");
    assert_eq!(outcomes(&first), ["posted", "posted", "posted"]);
    // Keyed by leg: the group header's instructing and instructed agent.
    assert_eq!(first[0]["posting_key"], format!("uetr:{U1}:{LEG1}"));
    assert_eq!(
        first[1]["posting_key"],
        format!("e2e:BNPAFRPP/FR7630006000011234567890189:INV-2024-001:{LEG1}")
    );
    assert_eq!(
        first[2]["posting_key"], "iso:pacs.008:COBADEFF:COBA-20261129-0001:3",
        "NOTPROVIDED identifies nothing"
    );
    assert_eq!(
        first[0]["file_id"],
        "iso:pacs.008:COBADEFF:COBA-20261129-0001"
    );
    assert_eq!(first[0]["amount_minor"], "125000");
    assert_eq!(first[0]["debit_account"], "acct:DE89370400440532013000");
    // The same file again: nothing new.
    let (_, again) = ingest(&db, "pacs008-credit-transfers.xml");
    assert_eq!(outcomes(&again), ["duplicate", "duplicate", "duplicate"]);
    // Another file (another MsgId): the same UETR is a duplicate naming the first file; the
    // same EndToEndId from another originator and another NOTPROVIDED both post.
    let (_, second) = ingest(&db, "pacs008-second-file.xml");
    assert_eq!(outcomes(&second), ["duplicate", "posted", "posted"]);
    assert_eq!(
        second[0]["original_file_id"],
        "iso:pacs.008:COBADEFF:COBA-20261129-0001"
    );
    assert_eq!(second[0]["original_record_no"], "1");
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 5);
    assert_eq!(
        db.scalar("SELECT count(*) FROM postings WHERE trace_number = 'INV-2024-001'"),
        2
    );
    // lookup by EndToEndId finds both originators' payments.
    let out = db.cl(&["lookup", "--json", "--end-to-end-id", "INV-2024-001"]);
    assert_eq!(out.stdout.lines().count(), 2, "{}", out.stdout);
}

fn a_return_posts_once_and_links_to_its_payment(db: TestDb) {
    ingest(&db, "pacs008-credit-transfers.xml");
    let (_, r1) = ingest(&db, "pacs004-return.xml");
    assert_eq!(outcomes(&r1), ["posted"]);
    assert_eq!(r1[0]["posting_key"], format!("uetr:{U1}:{LEG1}:return"));
    // The return moves the money back: the original creditor is debited.
    assert_eq!(r1[0]["debit_account"], "acct:NL91ABNA0417164300");
    assert_eq!(r1[0]["credit_account"], "acct:DE89370400440532013000");
    let (_, r2) = ingest(&db, "pacs004-return.xml");
    assert_eq!(outcomes(&r2), ["duplicate"]);
    // lookup by UETR: the payment and its return.
    let out = db.cl(&["lookup", "--json", "--uetr", U1]);
    let ops: Vec<String> = out
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["operation"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ops, ["pacs.008", "pacs.004"]);
}

fn a_changed_amount_under_the_same_uetr_is_a_conflict(db: TestDb) {
    ingest(&db, "pacs008-credit-transfers.xml");
    let (code, rows) = ingest(&db, "pacs008-amended.xml");
    assert_eq!(code, 1);
    assert_eq!(outcomes(&rows), ["conflict"]);
    assert_eq!(rows[0]["differences"], "amount: 125000 != 125100");
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 3);
}

fn within_file_duplicates_are_reported_as_such(db: TestDb) {
    // The same transaction (same UETR, same content) twice in one message.
    let text = std::fs::read_to_string(samples().join("pacs008-credit-transfers.xml")).unwrap();
    let start = text.find("        <CdtTrfTxInf>").unwrap();
    let end = text.find("        </CdtTrfTxInf>").unwrap() + "        </CdtTrfTxInf>\n".len();
    let tx = &text[start..end];
    let doubled = text
        .replacen("<NbOfTxs>3</NbOfTxs>", "<NbOfTxs>4</NbOfTxs>", 1)
        .replacen(
            "<CtrlSum>1660.49</CtrlSum>",
            "<CtrlSum>2910.49</CtrlSum>",
            1,
        )
        .replacen(
            "Ccy=\"EUR\">1660.49</TtlIntrBkSttlmAmt>",
            "Ccy=\"EUR\">2910.49</TtlIntrBkSttlmAmt>",
            1,
        )
        .replacen(
            "    </FIToFICstmrCdtTrf>",
            &format!("{tx}    </FIToFICstmrCdtTrf>"),
            1,
        );
    let path = db.file("doubled.xml");
    std::fs::write(&path, doubled).unwrap();
    let rep = db.file("doubled.csv");
    let out = db.cl(&[
        "ingest",
        path.to_str().unwrap(),
        "--report",
        rep.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows = read_csv(&rep);
    assert_eq!(outcomes(&rows), ["posted", "posted", "posted", "duplicate"]);
    assert_eq!(rows[3]["original_record_no"], "1");
    assert_eq!(rows[3]["original_run_id"], rows[0]["run_id"]);
    assert_eq!(rows[3]["reason"], "repeated within this file");
}

fn an_invalid_message_is_rejected_with_its_element_path(db: TestDb) {
    let out = db.cl(&[
        "ingest",
        samples().join("pacs008-invalid.xml").to_str().unwrap(),
    ]);
    assert_eq!(out.code, 3);
    assert!(out.stderr.contains(
        "pacs008-invalid.xml:8: error [ctrl_sum_mismatch] byte 289, /Document/FIToFICstmrCdtTrf/GrpHdr/CtrlSum: expected 500 (sum of the transactions' amounts), found \"1000.00\""
    ), "{}", out.stderr);
    assert!(out.stderr.contains("pacs008-invalid.xml:25: error [iban_format] byte 1105, /Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]/DbtrAcct/Id/IBAN: expected an IBAN with valid mod-97 check digits, found \"DE00370400440532013000\""), "{}", out.stderr);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
    let f = db.rows("SELECT code, field FROM findings ORDER BY seq");
    assert_eq!(
        f[0],
        vec![
            "iban_format".to_string(),
            "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]/DbtrAcct/Id/IBAN".into()
        ]
    );
    assert_eq!(db.rows("SELECT format FROM runs")[0][0], "iso20022");
}

/// A currency that is not three characters (none, `EURO`) is the file's error, as an
/// unknown one is: the ledger's column does not take it, and it is not the ledger that may
/// refuse it (that was an infrastructure failure, "safe to retry", and over HTTP a 503).
fn a_currency_that_is_no_currency_rejects_the_file_and_is_no_database_error(db: TestDb) {
    use common::server::{Server, api_key, runtime, upload};
    let cases = [
        ("", 273, "\"\""),
        ("EURO", 281, "\"EURO\""),
        ("XYZ", 279, "\"XYZ\""),
    ];
    for (ccy, byte, found) in cases {
        let path = db.file(&format!("ccy-{ccy}.xml"));
        std::fs::write(&path, one_payment(ccy, "10.00", "D")).unwrap();
        for dry in [&["--dry-run"][..], &[]] {
            let out = db.cl(&[&["ingest"], dry, &[path.to_str().unwrap()]].concat());
            assert_eq!(out.code, 3, "{ccy:?} {dry:?}: {}", out.stderr);
            let finding = format!(
                "ccy-{ccy}.xml:1: error [currency_code] byte {byte}, /Document/FIToFICstmrCdtTrf/\
                 CdtTrfTxInf[1]/IntrBkSttlmAmt: expected an active ISO 4217 currency code with \
                 minor units in @Ccy, found {found}"
            );
            assert!(out.stderr.contains(&finding), "{}", out.stderr);
        }
    }
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
    let key = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    let r = runtime().block_on(async {
        let body = one_payment("EURO", "10.00", "D").into_bytes();
        upload(&reqwest::Client::new(), &s.base, &key, Some("euro"), body).await
    });
    assert_eq!(r.status, 422, "{}", r.text());
    assert_eq!(r.json()["code"], "file_rejected");
    assert_eq!(r.json()["findings"][0]["code"], "currency_code");
    assert_eq!(s.stop(), 0);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
}

#[test]
fn pain001_with_a_prefix_and_a_bom_posts_two_identical_salaries() {
    let db = TestDb::sqlite();
    let (_, rows) = ingest(&db, "pain001-initiation.xml");
    assert_eq!(outcomes(&rows), ["posted", "posted"]);
    assert_eq!(
        rows[0]["file_id"],
        "iso:pain.001:DE123456789:ACME-PAY-2026-11-29"
    );
    assert_eq!(
        rows[0]["posting_key"],
        "e2e:COBADEFF/DE89370400440532013000:SAL-2026-11-0001"
    );
    assert_eq!(rows[1]["amount_minor"], "210000");
}

fn read(path: &std::path::Path) -> iso20022::IsoSummary {
    iso20022::read_file(std::fs::File::open(path).unwrap(), &mut |_| {}).unwrap()
}

fn codes(s: &iso20022::IsoSummary) -> Vec<(FindingCode, String)> {
    s.findings
        .iter()
        .map(|f| (f.code, f.position.path().unwrap_or_default().to_string()))
        .collect()
}

#[test]
fn corpus_files_with_their_traps() {
    let corpus = common::corpus();
    let iso = corpus.join("iso20022");
    // pacs.008 in an AppHdr envelope: CtrlSum 10000 over one transaction of 5000.
    let s = read(&iso.join("pacs008/prowide-pacs.008.001.07-with-AppHdr.xml"));
    assert_eq!(s.transactions, 1);
    assert_eq!(
        codes(&s),
        [
            (
                FindingCode::CtrlSumMismatch,
                "/message/Document/FIToFICstmrCdtTrf/GrpHdr/CtrlSum".to_string()
            ),
            (
                FindingCode::CtrlSumMismatch,
                "/message/Document/FIToFICstmrCdtTrf/GrpHdr/TtlIntrBkSttlmAmt".to_string()
            ),
        ]
    );
    // pain.001: NbOfTxs says 2 over six transactions (and its sample IBAN fails mod-97).
    let s = read(&iso.join("pain001/bsp-pain.001.001.03.xml"));
    assert_eq!(s.transactions, 6);
    assert!(codes(&s).contains(&(
        FindingCode::NbOfTxsMismatch,
        "/Document/CstmrCdtTrfInitn/GrpHdr/NbOfTxs".to_string()
    )));
    let f = s
        .findings
        .iter()
        .find(|f| f.position.path() == Some("/Document/CstmrCdtTrfInitn/GrpHdr/NbOfTxs"))
        .unwrap();
    assert_eq!(
        (f.expected.as_str(), f.found.as_str()),
        ("6 (transactions in the message)", "2")
    );
    // The Lithuanian samples (BOM, pain.001.001.03) read fine, but carry placeholder IBANs
    // (check digits 00) that no bank accepts: rejected here, said why.
    for name in [
        "lt-sepa_payment_naujas_1.xml",
        "lt-International_payment_USD_naujas_1.xml",
    ] {
        let s = read(&iso.join("pain001").join(name));
        assert_eq!(s.transactions, 1, "{name}");
        assert!(
            s.findings.iter().all(|f| f.code == FindingCode::IbanFormat),
            "{name}: {:?}",
            codes(&s)
        );
    }
    // No namespace: refused, saying what was found and what is supported.
    let s = read(&iso.join("invalid/moov-invalid_pain_v11.xml"));
    assert_eq!(s.findings[0].code, FindingCode::UnsupportedMessage);
    assert_eq!(s.findings[0].found, "a Document without namespace");
    // camt.053/054 are not payment messages this version ingests: a clear refusal.
    let s = read(&iso.join("camt053/genkgo-camt053.v2.minimal.xml"));
    assert_eq!(s.findings[0].code, FindingCode::UnsupportedMessage);
    assert_eq!(
        s.findings[0].found,
        "urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"
    );
}

#[test]
fn namespace_wins_over_schema_location_and_the_version_is_detected() {
    let xml = r#"<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.02" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.09 x.xsd"><FIToFICstmrCdtTrf><GrpHdr><MsgId>M1</MsgId><NbOfTxs>1</NbOfTxs><InstgAgt><FinInstnId><BIC>COBADEFFXXX</BIC></FinInstnId></InstgAgt></GrpHdr><CdtTrfTxInf><PmtId><EndToEndId>E1</EndToEndId></PmtId><IntrBkSttlmAmt Ccy="JPY">1250</IntrBkSttlmAmt></CdtTrfTxInf></FIToFICstmrCdtTrf></Document>"#;
    let mut header = None;
    let mut amount = 0;
    let s = iso20022::read_file(xml.as_bytes(), &mut |ev| match ev {
        IsoEvent::Header(h) => header = Some(h),
        IsoEvent::Transaction(t) => amount = t.amount_minor,
    })
    .unwrap();
    assert!(s.findings.is_empty(), "{:?}", s.findings);
    let h = header.unwrap();
    assert_eq!(
        (
            h.kind.as_str(),
            h.version,
            h.sender.as_str(),
            h.msg_id.as_str()
        ),
        ("pacs.008", 2, "COBADEFF", "M1")
    );
    assert_eq!(amount, 1250, "JPY has no minor unit");
}

#[test]
fn several_documents_in_one_envelope_are_all_read() {
    let one = std::fs::read_to_string(samples().join("pacs008-credit-transfers.xml")).unwrap();
    let doc = &one[one.find("<Document").unwrap()..];
    let second = doc.replace("COBA-20261129-0001", "COBA-20261129-0005");
    let xml = format!(
        "<?xml version=\"1.0\"?>\r\n<Envelope><AppHdr><BizMsgIdr>B1</BizMsgIdr></AppHdr>{doc}{second}</Envelope>"
    );
    let mut msg_ids = Vec::new();
    let mut header = None;
    let s = iso20022::read_file(xml.as_bytes(), &mut |ev| match ev {
        IsoEvent::Header(h) => header = Some(h.msg_id),
        IsoEvent::Transaction(t) => msg_ids.push((t.record_no, t.msg_id)),
    })
    .unwrap();
    assert!(s.findings.is_empty(), "{:?}", s.findings);
    assert_eq!((s.documents, s.transactions), (2, 6));
    assert_eq!(
        header.as_deref(),
        Some("COBA-20261129-0001"),
        "the first Document names the file"
    );
    assert_eq!(msg_ids[3], (4, "COBA-20261129-0005".to_string()));
}

#[test]
fn a_file_mixing_message_kinds_is_classified_per_operation() {
    // A pacs.008 and a pacs.004 in one envelope: the second upload must find both kinds'
    // postings (each under its own operation), not hold the returns as unknown.
    let db = TestDb::sqlite();
    let pay = std::fs::read_to_string(samples().join("pacs008-credit-transfers.xml")).unwrap();
    let ret = std::fs::read_to_string(samples().join("pacs004-return.xml")).unwrap();
    let doc = |s: &str| s[s.find("<Document").unwrap()..].to_string();
    let xml = format!("<Envelope>{}{}</Envelope>", doc(&pay), doc(&ret));
    let path = db.file("mixed.xml");
    std::fs::write(&path, xml).unwrap();
    for (round, want) in [(1, "posted"), (2, "duplicate")] {
        let rep = db.file(&format!("mixed-{round}.csv"));
        let out = db.cl(&[
            "ingest",
            path.to_str().unwrap(),
            "--report",
            rep.to_str().unwrap(),
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(outcomes(&read_csv(&rep)), vec![want; 4], "round {round}");
    }
    assert_eq!(
        db.scalar("SELECT count(*) FROM postings WHERE operation = 'pacs.004'"),
        1
    );
}

/// A pacs.008 of one payment of `amount` in `ccy` (text as written in the XML).
fn one_payment(ccy: &str, amount: &str, debtor_name: &str) -> String {
    format!(
        r#"<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"><FIToFICstmrCdtTrf><GrpHdr><MsgId>CCY-{ccy}-{amount}</MsgId><NbOfTxs>1</NbOfTxs><InstgAgt><FinInstnId><BICFI>COBADEFFXXX</BICFI></FinInstnId></InstgAgt></GrpHdr><CdtTrfTxInf><PmtId><EndToEndId>E-{ccy}</EndToEndId></PmtId><IntrBkSttlmAmt Ccy="{ccy}">{amount}</IntrBkSttlmAmt><Dbtr><Nm>{debtor_name}</Nm></Dbtr></CdtTrfTxInf></FIToFICstmrCdtTrf></Document>"#
    )
}

/// Amount in minor units and findings of a one-payment message.
fn read_payment(ccy: &str, amount: &str) -> (i64, Vec<clearledger::findings::Finding>) {
    let mut minor = None;
    let s = iso20022::read_file(one_payment(ccy, amount, "D").as_bytes(), &mut |ev| {
        if let IsoEvent::Transaction(t) = ev {
            minor = Some(t.amount_minor);
        }
    })
    .unwrap();
    (minor.expect("a transaction"), s.findings)
}

#[test]
fn amounts_take_the_exponent_of_their_currency_from_the_one_table() {
    for (ccy, text, minor) in [
        ("JPY", "1250", 1250),
        ("BHD", "1.234", 1234),
        ("CLF", "1.2345", 12345),
        ("PYG", "1000", 1000),
        ("EUR", "12.34", 1234),
        ("EUR", "12.3", 1230),
    ] {
        let (got, findings) = read_payment(ccy, text);
        assert!(findings.is_empty(), "{ccy} {text}: {findings:?}");
        assert_eq!(got, minor, "{ccy} {text}");
    }
    let amt = "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]/IntrBkSttlmAmt";
    // PYG has no minor unit, so 1000.50 is no guaraní amount. The code is a valid
    // ISO 4217 code: what is wrong is the amount's form for it, so amount_format.
    let (_, f) = read_payment("PYG", "1000.50");
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].code, FindingCode::AmountFormat);
    assert_eq!(f[0].position.path(), Some(amt));
    assert_eq!(f[0].expected, "at most 0 fraction digits for PYG");
    assert_eq!(f[0].found, "1000.50");
    // Unknown, withdrawn and unit-less codes: currency_code, at the amount's element.
    for (ccy, found) in [
        ("XXY", "XXY"),
        ("HRK", "HRK (an ISO 4217 code withdrawn, superseded by EUR)"),
        (
            "XAU",
            "XAU (an ISO 4217 code without minor units (metal, XDR, XXX or XTS), not a currency to post)",
        ),
    ] {
        let (_, f) = read_payment(ccy, "10");
        assert_eq!(f.len(), 1, "{ccy}: {f:?}");
        assert_eq!(f[0].code, FindingCode::CurrencyCode, "{ccy}");
        assert_eq!(f[0].position.path(), Some(amt));
        assert_eq!(f[0].found, found);
    }
    // A bad currency does not hide a bad amount.
    let (_, f) = read_payment("XXY", "1,5");
    let got: Vec<_> = f.iter().map(|f| f.code).collect();
    assert_eq!(got, [FindingCode::CurrencyCode, FindingCode::AmountFormat]);
}

#[test]
fn pyg_1000_posts_1000_minor_units_and_pyg_1000_50_is_refused() {
    let db = TestDb::sqlite();
    let bad = db.file("pyg-cents.xml");
    std::fs::write(&bad, one_payment("PYG", "1000.50", "D")).unwrap();
    let out = db.cl(&["ingest", bad.to_str().unwrap()]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("error [amount_format] byte 281, /Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]/IntrBkSttlmAmt: expected at most 0 fraction digits for PYG, found \"1000.50\""),
        "{}",
        out.stderr
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
    let unknown = db.file("xxy.xml");
    std::fs::write(&unknown, one_payment("XXY", "10", "D")).unwrap();
    let out = db.cl(&["ingest", unknown.to_str().unwrap()]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("error [currency_code]") && out.stderr.contains("found \"XXY\""),
        "{}",
        out.stderr
    );
    let good = db.file("pyg.xml");
    std::fs::write(&good, one_payment("PYG", "1000", "D")).unwrap();
    let out = db.cl(&["ingest", good.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        db.rows("SELECT amount_minor, currency FROM postings"),
        [["1000".to_string(), "PYG".to_string()]]
    );
    // And it shows as 1000 guaraníes, not 10.00.
    let out = db.cl(&["lookup", "--end-to-end-id", "E-PYG"]);
    assert!(out.stdout.contains(": 1000 PYG debit"), "{}", out.stdout);
}

#[test]
fn entities_and_character_references_come_out_as_their_text() {
    // quick-xml (0.38 on) hands `&amp;` and `&#x43;` over as their own events: the text
    // must still read as one value, in the parsed transaction and in the stored detail.
    let xml = one_payment("EUR", "10.00", "A &amp; B &#x43;");
    let mut names = Vec::new();
    let s = iso20022::read_file(xml.as_bytes(), &mut |ev| {
        if let IsoEvent::Transaction(t) = ev {
            names.push(t.debtor_name);
        }
    })
    .unwrap();
    assert!(s.findings.is_empty(), "{:?}", s.findings);
    assert_eq!(names, ["A & B C"]);
    let db = TestDb::sqlite();
    let path = db.file("entities.xml");
    std::fs::write(&path, &xml).unwrap();
    let out = db.cl(&["ingest", path.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows = db.rows("SELECT detail, debit_account FROM postings");
    let detail: serde_json::Value = serde_json::from_str(&rows[0][0]).unwrap();
    assert_eq!(detail["debtor_name"], "A & B C");
    assert_eq!(rows[0][1], "party:A & B C");
}

/// Every ISO 20022 transaction of `file`: (record_no, posting record).
fn postings_of(file: &std::path::Path) -> Vec<clearledger::keys::PostingRecord> {
    use clearledger::keys::{iso_identity, iso_posting};
    let mut id = None;
    let mut out = Vec::new();
    iso20022::read_file(std::fs::File::open(file).unwrap(), &mut |ev| match ev {
        IsoEvent::Header(h) => id = Some(iso_identity(&h)),
        IsoEvent::Transaction(t) => out.push(iso_posting(id.as_ref().unwrap(), t, true)),
    })
    .unwrap();
    out
}

fn fixtures() -> std::path::PathBuf {
    common::fixtures("iso")
}

#[test]
fn legacy_keys_and_fingerprints_are_what_the_v1_rule_gave() {
    // tests/golden/iso-v1-keys.tsv was written by the v1 rule's code (before keys by leg)
    // for every ISO sample, every fixture under tests/fixtures/iso and the corpus's
    // pacs.008/pain.001 files: file, record_no, posting key, fingerprint.
    let golden = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/iso-v1-keys.tsv"),
    )
    .unwrap();
    let corpus = common::corpus().join("iso20022");
    let mut checked = 0;
    let mut seen_files = std::collections::BTreeSet::new();
    for line in golden.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        let [name, no, key, fp] = cols[..] else {
            panic!("{line}")
        };
        let path = [
            samples().join(name),
            fixtures().join(name),
            corpus.join("pacs008").join(name),
            corpus.join("pain001").join(name),
        ]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name}: in none of the samples, fixtures and corpus"));
        seen_files.insert(name.to_string());
        let records = postings_of(&path);
        let r = records
            .iter()
            .find(|r| r.record_no.to_string() == no)
            .unwrap_or_else(|| panic!("{name}: no record {no}"));
        let legacy = r.legacy.as_ref().expect("an ISO record has a legacy key");
        assert_eq!(
            (legacy.posting_key.as_str(), legacy.fingerprint.as_str()),
            (key, fp),
            "{name} #{no}"
        );
        checked += 1;
    }
    // Every line was checked: the corpus is there too (common::corpus fails without it).
    assert_eq!(checked, golden.lines().count());
    for dir in [samples(), fixtures()] {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if name.ends_with(".xml")
                && !postings_of(&p).is_empty()
                && !name.starts_with("latin1")
                && !name.starts_with("rtp-")
            {
                assert!(
                    seen_files.contains(&name),
                    "{name} is missing from the golden keys"
                );
            }
        }
    }
    // Literals, one of each kind, as the v1 rule computed them.
    let legacy = |dir: std::path::PathBuf, name: &str, no: usize| {
        let l = postings_of(&dir.join(name))[no - 1].legacy.clone().unwrap();
        (l.posting_key, l.fingerprint)
    };
    assert_eq!(
        legacy(samples(), "pacs008-credit-transfers.xml", 1),
        (
            "uetr:eb6305c9-1f7f-49de-aed0-16487c27b42d".to_string(),
            "d22daf8c31e94390c9c9377671564d91593e679cca0d2aa0d8cb20ca4e0317f3".to_string()
        )
    );
    assert_eq!(
        legacy(samples(), "pain001-initiation.xml", 1),
        (
            "e2e:COBADEFFXXX/DE89370400440532013000:SAL-2026-11-0001".to_string(),
            "d7a78e4e8c9818efd846e3e955c407e35867c4a47bb2ee14a874087dc304cad7".to_string()
        )
    );
    assert_eq!(
        legacy(samples(), "pacs004-return.xml", 1),
        (
            "uetr:eb6305c9-1f7f-49de-aed0-16487c27b42d:return".to_string(),
            "b6162aacdb7829ffd717e760eac8c027ccbdc240a9fbc55ca1bc59730caaac74".to_string()
        )
    );
    assert_eq!(
        legacy(fixtures(), "chain-return.xml", 1),
        (
            "uetr:3f1a9c2e-7b4d-4e8a-9c1f-2d5e6a7b8c9d:return".to_string(),
            "d81f8baa83eed3e9230ad55fc0bf8b4911deaa5f09717c06d1867c4f146ec99e".to_string()
        )
    );
    assert_eq!(
        legacy(fixtures(), "aba-notprovided.xml", 1),
        (
            "iso:pacs.008::NWTR-20261130-0003:1".to_string(),
            "7f11648848a6e25e0b7665fa1eff1d42ff33d4808e13a76783d194f9f292ed49".to_string()
        )
    );
    assert_eq!(
        legacy(fixtures(), "aba-return-e2e-only.xml", 1),
        (
            "e2e:/5647772655:ORD-5521:return".to_string(),
            "5bc38228bd462f42673824d71eab2dac1d977b3beab7cf5b152e5c37053c977a".to_string()
        )
    );
}

const CHAIN: &str = "3f1a9c2e-7b4d-4e8a-9c1f-2d5e6a7b8c9d";

/// `lookup --json` rows as (operation, posting_key).
fn looked_up(db: &TestDb, args: &[&str]) -> Vec<(String, String)> {
    let mut a = vec!["lookup", "--json"];
    a.extend_from_slice(args);
    let out = db.cl(&a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["operation"].as_str().unwrap().to_string(),
                v["posting_key"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn a_payment_chain_posts_once_per_leg_and_its_return_leg_once(db: TestDb) {
    // A→B, B→C, C→D: one UETR, one EndToEndId, each leg its own MsgId, agents and amount
    // after charges. Leg 2 names its agents in the group header only.
    let mut keys = Vec::new();
    for (leg, amount) in [
        ("chain-leg1.xml", "1000000"),
        ("chain-leg2.xml", "997500"),
        ("chain-leg3.xml", "995000"),
    ] {
        let (code, rows) = ingest_fixture(&db, leg);
        assert_eq!(
            (code, outcomes(&rows)),
            (0, vec!["posted".to_string()]),
            "{leg}"
        );
        assert_eq!(rows[0]["amount_minor"], amount);
        keys.push(rows[0]["posting_key"].clone());
    }
    assert_eq!(
        keys,
        [
            format!("uetr:{CHAIN}:DEUTDEFF>CHASUS33"),
            format!("uetr:{CHAIN}:CHASUS33>IRVTUS3N"),
            format!("uetr:{CHAIN}:IRVTUS3N>BOFAUS3N"),
        ]
    );
    // Leg 2 sent again in another message (another MsgId): one duplicate of leg 2.
    let (code, rows) = ingest_fixture(&db, "chain-leg2-resent.xml");
    assert_eq!((code, outcomes(&rows)), (0, vec!["duplicate".to_string()]));
    assert_eq!(rows[0]["posting_key"], keys[1]);
    assert_eq!(
        rows[0]["original_file_id"],
        "iso:pacs.008:CHASUS33:CHAS-20261130-0042"
    );
    // D returns the last leg to C: the return of leg 3, once.
    let (_, rows) = ingest_fixture(&db, "chain-return.xml");
    assert_eq!(outcomes(&rows), ["posted"]);
    assert_eq!(rows[0]["posting_key"], format!("{}:return", keys[2]));
    let (_, rows) = ingest_fixture(&db, "chain-return.xml");
    assert_eq!(outcomes(&rows), ["duplicate"]);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 4);
    // (e) lookup by the UETR in upper case: the whole chain and its return.
    let all = vec![
        ("pacs.008".to_string(), keys[0].clone()),
        ("pacs.008".to_string(), keys[1].clone()),
        ("pacs.008".to_string(), keys[2].clone()),
        ("pacs.004".to_string(), format!("{}:return", keys[2])),
    ];
    assert_eq!(
        looked_up(&db, &["--uetr", &CHAIN.to_ascii_uppercase()]),
        all
    );
    assert_eq!(looked_up(&db, &["--uetr", CHAIN]), all);
}

fn agents_by_clearing_member_id_scope_files_keys_and_accounts(db: TestDb) {
    // Every agent by ABA routing number (ClrSysMmbId with ClrSysId/Cd USABA), no BIC.
    let (code, rows) = ingest_fixture(&db, "aba-payment.xml");
    assert_eq!((code, outcomes(&rows)), (0, vec!["posted".to_string()]));
    assert_eq!(
        rows[0]["file_id"],
        "iso:pacs.008:USABA:021000021:NWTR-20261130-0001"
    );
    assert_eq!(
        rows[0]["posting_key"],
        "e2e:USABA:021000021/5647772655:ORD-5521:USABA:021000021>USABA:026009593"
    );
    // The same account number at two banks: two accounts.
    assert_eq!(rows[0]["debit_account"], "acct:USABA:021000021/5647772655");
    assert_eq!(rows[0]["credit_account"], "acct:USABA:026009593/5647772655");
    // The same payment sent to another receiving bank: another leg, it posts.
    let (code, rows) = ingest_fixture(&db, "aba-payment-other-bank.xml");
    assert_eq!((code, outcomes(&rows)), (0, vec!["posted".to_string()]));
    assert_eq!(
        rows[0]["posting_key"],
        "e2e:USABA:021000021/5647772655:ORD-5521:USABA:021000021>USABA:011000138"
    );
    assert_eq!(rows[0]["credit_account"], "acct:USABA:011000138/5647772655");
    // NOTPROVIDED: the file and record, the file scoped by its sender's member id.
    let (_, rows) = ingest_fixture(&db, "aba-notprovided.xml");
    assert_eq!(
        rows[0]["posting_key"],
        "iso:pacs.008:USABA:021000021:NWTR-20261130-0003:1"
    );
    // An IBAN stays itself, whatever its agent.
    let (_, rows) = ingest_fixture(&db, "chain-leg1.xml");
    assert_eq!(rows[0]["debit_account"], "acct:DE89370400440532013000");
    assert_eq!(rows[0]["credit_account"], "acct:BOFAUS3N/5647772655");
}

fn a_return_with_rtr_chain_posts_between_the_real_parties(db: TestDb) {
    let (_, rows) = ingest_fixture(&db, "chain-return.xml");
    assert_eq!(outcomes(&rows), ["posted"]);
    // Back from the creditor's account at its bank to the debtor's IBAN, not between
    // `party:` names nor the agents of the return leg.
    assert_eq!(rows[0]["debit_account"], "acct:BOFAUS3N/5647772655");
    assert_eq!(rows[0]["credit_account"], "acct:DE89370400440532013000");
    let detail: serde_json::Value =
        serde_json::from_str(&db.rows("SELECT detail FROM postings")[0][0]).unwrap();
    assert_eq!(detail["debtor_name"], "MUELLER MASCHINENBAU GMBH");
    assert_eq!(detail["creditor_name"], "ACME TOOLS INC");
    assert_eq!(detail["instructing_agent"], "BOFAUS3N");
    assert_eq!(detail["instructed_agent"], "IRVTUS3N");
    // A return that names no debtor anywhere (no RtrChain or OrgnlTxRef debtor, no agent)
    // is refused at the element that should say it.
    let text = std::fs::read_to_string(fixtures().join("chain-return.xml")).unwrap();
    let start = text.find("        <Dbtr>").unwrap();
    let end = text.find("        <CdtrAgt>").unwrap();
    let bare = text[..start].to_string() + &text[end..];
    let bare = bare.replace(
        "      <InstdAgt><FinInstnId><BICFI>IRVTUS3NXXX</BICFI></FinInstnId></InstdAgt>\n",
        "",
    );
    let path = db.file("return-without-debtor.xml");
    std::fs::write(&path, bare).unwrap();
    let out = db.cl(&["ingest", path.to_str().unwrap()]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("error [missing_element] byte 315, /Document/PmtRtr/TxInf[1]/RtrChain/Dbtr: expected the original debtor (RtrChain/Dbtr, DbtrAcct or DbtrAgt, or the return's InstdAgt), found \"none\""),
        "{}",
        out.stderr
    );
}

fn a_return_with_only_its_end_to_end_id_links_to_its_payment(db: TestDb) {
    let (_, pay) = ingest_fixture(&db, "aba-payment.xml");
    // No OrgnlUETR, no OrgnlTxId: the original's key is rebuilt from OrgnlEndToEndId, the
    // original debtor's account and agent (OrgnlTxRef) and the return's leg reversed.
    let (code, rows) = ingest_fixture(&db, "aba-return-e2e-only.xml");
    assert_eq!((code, outcomes(&rows)), (0, vec!["posted".to_string()]));
    assert_eq!(
        rows[0]["posting_key"],
        format!("{}:return", pay[0]["posting_key"])
    );
    assert_eq!(rows[0]["debit_account"], "acct:USABA:026009593/5647772655");
    assert_eq!(rows[0]["credit_account"], "acct:USABA:021000021/5647772655");
    assert_eq!(
        looked_up(&db, &["--end-to-end-id", "ORD-5521"]),
        [
            ("pacs.008".to_string(), pay[0]["posting_key"].clone()),
            ("pacs.004".to_string(), rows[0]["posting_key"].clone()),
        ]
    );
    let (_, again) = ingest_fixture(&db, "aba-return-e2e-only.xml");
    assert_eq!(outcomes(&again), ["duplicate"]);
    // Naming its original by OrgnlTxId alone: keyed by its own RtrId and the agent that
    // assigned it, so the same return in another message (another MsgId) is a duplicate.
    let text = std::fs::read_to_string(fixtures().join("aba-return-e2e-only.xml")).unwrap();
    let by_tx_id = text.replace(
        "<OrgnlEndToEndId>ORD-5521</OrgnlEndToEndId>",
        "<OrgnlTxId>ORD-5521-TX</OrgnlTxId>",
    );
    for (name, msg_id) in [
        ("rtn-a.xml", "BOFA-RTN-20261201-4"),
        ("rtn-b.xml", "BOFA-RTN-20261201-5"),
    ] {
        let path = db.file(name);
        std::fs::write(&path, by_tx_id.replace("BOFA-RTN-20261201-3", msg_id)).unwrap();
        let (code, rows) = ingest_path(&db, &path);
        let want = if name == "rtn-a.xml" {
            "posted"
        } else {
            "duplicate"
        };
        assert_eq!(
            (code, outcomes(&rows)),
            (0, vec![want.to_string()]),
            "{name}"
        );
        assert_eq!(rows[0]["posting_key"], "rtr:USABA:026009593:RTN-3-0001");
    }
}

fn the_rtp_envelope_and_other_encodings_are_read(db: TestDb) {
    // TCH RTP: <Message xmlns="urn:tch"> with AppHdr and CreditTransfer, no Document.
    let (code, rows) = ingest_fixture(&db, "rtp-credit-transfer.xml");
    assert_eq!((code, outcomes(&rows)), (0, vec!["posted".to_string()]));
    assert_eq!(
        rows[0]["file_id"],
        "iso:pacs.008:091000019:M20261130091000019T1BLTZ00000000101"
    );
    assert_eq!(
        rows[0]["posting_key"],
        "e2e:091000019/99120034:RENT-2026-12:091000019>121000248"
    );
    assert_eq!(rows[0]["amount_minor"], "74218");
    assert_eq!(rows[0]["credit_account"], "acct:121000248/4410029917");
    // Another kind inside the envelope: refused, named.
    let path = fixtures().join("rtp-request-for-payment.xml");
    let out = db.cl(&["ingest", path.to_str().unwrap()]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("error [unsupported_message] byte 355, /Message/PaymentRequest/CdtrPmtActvtnReq: expected a Document namespace of pain.001.001.03 to .12, pacs.008.001.02 to .13, pacs.004.001.02 to .13, found \"urn:iso:std:iso:20022:tech:xsd:pain.013.001.07\""),
        "{}",
        out.stderr
    );
    // ISO-8859-1, as declared: the names decoded.
    let (code, rows) = ingest_fixture(&db, "latin1-payment.xml");
    assert_eq!((code, outcomes(&rows)), (0, vec!["posted".to_string()]));
    let detail: serde_json::Value = serde_json::from_str(
        &db.rows("SELECT detail FROM postings WHERE posting_key LIKE 'e2e:GENODEF1S04/%'")[0][0],
    )
    .unwrap();
    assert_eq!(detail["debtor_name"], "Jürgen Größe");
    assert_eq!(detail["creditor_name"], "Bäckerei Müller");
    assert_eq!(detail["remittance"], "Rechnung 4471 § 3");
    // UTF-16 (LE and BE) with a byte-order mark: the same payment, so a duplicate.
    let latin1 = std::fs::read(fixtures().join("latin1-payment.xml")).unwrap();
    let text: String = latin1.iter().map(|&b| char::from(b)).collect();
    let text = text.replace("encoding=\"ISO-8859-1\"", "encoding=\"UTF-16\"");
    for (name, le) in [("utf16le.xml", true), ("utf16be.xml", false)] {
        let mut bytes = if le {
            vec![0xFF, 0xFE]
        } else {
            vec![0xFE, 0xFF]
        };
        for u in text.encode_utf16() {
            bytes.extend_from_slice(&if le { u.to_le_bytes() } else { u.to_be_bytes() });
        }
        let path = db.file(name);
        std::fs::write(&path, bytes).unwrap();
        let (code, rows) = ingest_path(&db, &path);
        assert_eq!(
            (code, outcomes(&rows)),
            (0, vec!["duplicate".to_string()]),
            "{name}"
        );
    }
    // An encoding not read: one finding naming it.
    let ebcdic = text.replace("encoding=\"UTF-16\"", "encoding=\"IBM037\"");
    let path = db.file("ebcdic.xml");
    std::fs::write(&path, ebcdic).unwrap();
    let out = db.cl(&["ingest", path.to_str().unwrap()]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    let errors: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains(": error ["))
        .collect();
    assert_eq!(errors.len(), 1, "{}", out.stderr);
    assert!(
        errors[0].ends_with("error [unsupported_format] byte 0, /: expected XML in UTF-8 (or US-ASCII), UTF-16 with a byte-order mark, ISO-8859-1 or windows-1252, found \"XML declaring encoding=\\\"IBM037\\\"\""),
        "{}",
        errors[0]
    );
}

/// `chain-leg1.xml` with `edits` (text replacements) applied, under a new MsgId.
fn leg1_variant(db: &TestDb, name: &str, edits: &[(&str, &str)]) -> std::path::PathBuf {
    let mut xml = std::fs::read_to_string(fixtures().join("chain-leg1.xml")).unwrap();
    xml = xml.replace("DEUT-20261130-0001", "DEUT-20261130-0099");
    for (from, to) in edits {
        assert!(xml.contains(from), "{from} in chain-leg1.xml");
        xml = xml.replace(from, to);
    }
    let path = db.file(name);
    std::fs::write(&path, xml).unwrap();
    path
}

/// One bank, two spellings: `DEUTDEFFXXX` (its primary office's BIC11) and `DEUTDEFF`.
fn a_leg_resent_with_its_bics_spelled_otherwise_is_a_duplicate(db: TestDb) {
    let (code, rows) = ingest_fixture(&db, "chain-leg1.xml");
    assert_eq!((code, outcomes(&rows)), (0, vec!["posted".to_string()]));
    let bic8 = leg1_variant(
        &db,
        "leg1-bic8.xml",
        &[("DEUTDEFFXXX", "DEUTDEFF"), ("CHASUS33XXX", "CHASUS33")],
    );
    let (code, rows) = ingest_path(&db, &bic8);
    assert_eq!((code, outcomes(&rows)), (0, vec!["duplicate".to_string()]));
    assert_eq!(
        rows[0]["posting_key"],
        "uetr:3f1a9c2e-7b4d-4e8a-9c1f-2d5e6a7b8c9d:DEUTDEFF>CHASUS33"
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 1);
}

/// A UETR payment whose leg names its instructing agent only (our own generator writes
/// such files, as many senders do: the group header's instructing agent, no instructed
/// agent) is keyed by the half leg it has, and its re-send is its duplicate.
fn a_uetr_leg_naming_one_agent_only_is_keyed_by_its_half_leg(db: TestDb) {
    let partial = leg1_variant(
        &db,
        "leg1-no-instd.xml",
        &[(
            "<InstdAgt><FinInstnId><BICFI>CHASUS33XXX</BICFI></FinInstnId></InstdAgt>",
            "",
        )],
    );
    let (code, rows) = ingest_path(&db, &partial);
    assert_eq!((code, outcomes(&rows)), (0, vec!["posted".to_string()]));
    assert_eq!(
        rows[0]["posting_key"],
        "uetr:3f1a9c2e-7b4d-4e8a-9c1f-2d5e6a7b8c9d:DEUTDEFF>"
    );
    let again = db.file("leg1-no-instd-again.xml");
    let bytes = std::fs::read(&partial).unwrap();
    std::fs::write(&again, [bytes, b"\n".to_vec()].concat()).unwrap();
    let (code, rows) = ingest_path(&db, &again);
    assert_eq!((code, outcomes(&rows)), (0, vec!["duplicate".to_string()]));
}

/// Debtor names and findings of `bytes`, read through the library.
fn names_and_findings(bytes: &[u8]) -> (Vec<String>, Vec<clearledger::findings::Finding>) {
    let mut names = Vec::new();
    let s = iso20022::read_file(bytes, &mut |ev| {
        if let IsoEvent::Transaction(t) = ev {
            names.push(t.debtor_name.clone());
        }
    })
    .unwrap();
    (names, s.findings)
}

#[test]
fn a_byte_order_mark_wins_over_a_declaration_that_contradicts_it() {
    use clearledger::findings::Severity;
    let decl = |label: &str| format!("<?xml version=\"1.0\" encoding=\"{label}\"?>\n");
    let doc = |label: &str| decl(label) + &one_payment("EUR", "1.00", "Jürgen Größe");
    // A UTF-8 byte-order mark, then a declaration of ISO-8859-1: read as UTF-8, once.
    let utf8 = [&b"\xEF\xBB\xBF"[..], doc("ISO-8859-1").as_bytes()].concat();
    // UTF-16 with its mark, declaring ISO-8859-1 or UTF-8.
    let utf16 = |le: bool, label: &str| {
        let mut v = if le {
            vec![0xFF, 0xFE]
        } else {
            vec![0xFE, 0xFF]
        };
        for u in doc(label).encode_utf16() {
            v.extend_from_slice(&if le { u.to_le_bytes() } else { u.to_be_bytes() });
        }
        v
    };
    for (bytes, mark, label) in [
        (utf8, "UTF-8", "ISO-8859-1"),
        (utf16(true, "ISO-8859-1"), "UTF-16LE", "ISO-8859-1"),
        (utf16(false, "UTF-8"), "UTF-16BE", "UTF-8"),
    ] {
        let (names, findings) = names_and_findings(&bytes);
        assert_eq!(names, ["Jürgen Größe"], "{mark} {label}");
        assert_eq!(findings.len(), 1, "{findings:?}");
        let f = &findings[0];
        assert_eq!(
            (f.severity, f.code, f.code.as_str()),
            (
                Severity::Warning,
                FindingCode::EncodingMismatch,
                "encoding_mismatch"
            )
        );
        assert_eq!(
            (
                f.position.line(),
                f.position.byte_offset(),
                f.position.path()
            ),
            (1, 0, Some("/"))
        );
        assert_eq!(
            f.expected,
            format!("an XML declaration agreeing with the {mark} byte-order mark")
        );
        assert_eq!(
            f.found,
            format!(
                "encoding=\"{label}\" after a {mark} byte-order mark (read as {mark}, as the mark says)"
            )
        );
    }
    // A mark and a declaration that agree: no finding.
    let agreeing = [&b"\xEF\xBB\xBF"[..], doc("UTF-8").as_bytes()].concat();
    let (names, findings) = names_and_findings(&agreeing);
    assert_eq!(
        (names, findings),
        (vec!["Jürgen Größe".to_string()], vec![])
    );
    let (names, findings) = names_and_findings(&utf16(true, "UTF-16"));
    assert_eq!(
        (names, findings),
        (vec!["Jürgen Größe".to_string()], vec![])
    );
}

/// What the performance runs ingest: `generate pacs008` output posts every transaction,
/// and posts nothing again.
fn a_generated_file_posts_every_transaction_once(db: TestDb) {
    let file = db.file("gen.xml");
    let r = db.cl(&[
        "generate",
        "pacs008",
        "--tx",
        "50",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (code, rows) = ingest_path(&db, &file);
    assert_eq!(code, 0);
    assert_eq!(outcomes(&rows), vec!["posted".to_string(); 50]);
    let again = db.file("gen-again.xml");
    std::fs::write(
        &again,
        [std::fs::read(&file).unwrap(), b"\n".to_vec()].concat(),
    )
    .unwrap();
    let (code, rows) = ingest_path(&db, &again);
    assert_eq!(code, 0);
    assert_eq!(outcomes(&rows), vec!["duplicate".to_string(); 50]);
}

/// A pain.001 posting's detail carries its `PmtInfId` (what a bank's batch entry
/// names), neither fingerprinted nor compared: the same file again is all duplicates, and
/// a conflict names only the fields that differ.
fn a_pain001_posting_keeps_its_payment_information_id(db: TestDb) {
    let (_, rows) = ingest(&db, "pain001-initiation.xml");
    assert_eq!(outcomes(&rows), ["posted", "posted"]);
    let details = db.rows("SELECT detail FROM postings ORDER BY record_no");
    assert_eq!(details.len(), 2);
    for d in &details {
        let v: serde_json::Value = serde_json::from_str(&d[0]).unwrap();
        assert_eq!(v["pmt_inf_id"], "SALARIES-2026-11", "{}", d[0]);
        assert_eq!(v["message"], "pain.001");
        // The fingerprinted fields (21) and the one key beside them.
        assert_eq!(v.as_object().unwrap().len(), 22, "{}", d[0]);
    }
    assert!(
        details[0][0].contains(
            r#""original_uetr":"","pmt_inf_id":"SALARIES-2026-11","remittance":"SALARY NOVEMBER""#
        ),
        "keys sorted: {}",
        details[0][0]
    );
    // The same bytes (the exact re-upload), then other bytes, then another PmtInfId: all
    // duplicates.
    let (code, rows) = ingest(&db, "pain001-initiation.xml");
    assert_eq!(
        (code, outcomes(&rows)),
        (0, vec!["duplicate".to_string(); 2])
    );
    let original = std::fs::read_to_string(samples().join("pain001-initiation.xml")).unwrap();
    for (name, text) in [
        ("resent.xml", format!("{original}\n<!-- sent again -->\n")),
        (
            "renamed-batch.xml",
            original.replace("SALARIES-2026-11<", "SALARIES-2026-11-B<"),
        ),
    ] {
        let path = db.file(name);
        std::fs::write(&path, text).unwrap();
        let (code, rows) = ingest_path(&db, &path);
        assert_eq!(
            (code, outcomes(&rows)),
            (0, vec!["duplicate".to_string(); 2]),
            "{name}"
        );
    }
    // Another amount: a conflict naming the amount alone.
    let amended = original
        .replacen("2100.00</p:InstdAmt>", "2101.00</p:InstdAmt>", 1)
        .replace("4200.00", "4201.00");
    let path = db.file("amended.xml");
    std::fs::write(&path, amended).unwrap();
    let (code, rows) = ingest_path(&db, &path);
    assert_eq!(code, 1);
    assert_eq!(outcomes(&rows), ["conflict", "duplicate"]);
    assert_eq!(rows[0]["differences"], "amount: 210000 != 210100");
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 2);
}

/// `check --json` of a generated pacs.008 file and of the same file with one transaction
/// broken is the same whether its transactions are read by workers or by the walk in order
/// (`CLEARLEDGER_XML_WORKERS=1`).
#[test]
fn check_reads_alike_on_every_core_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.xml");
    let r = common::run(
        &[
            "generate",
            "pacs008",
            "--tx",
            "3000",
            "--seed",
            "5",
            "-o",
            good.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(&good).unwrap();
    let at = text.match_indices("<CdtTrfTxInf>").nth(1700).unwrap().0;
    let broken = dir.path().join("broken.xml");
    std::fs::write(
        &broken,
        format!(
            "{}<CdtTrfTxInf><X>&bad;</X>{}",
            &text[..at],
            &text[at + 13..]
        ),
    )
    .unwrap();
    for (file, code) in [(&good, 0), (&broken, 3)] {
        let f = file.to_str().unwrap();
        let cut = common::run(&["check", "--json", f], &[("CLEARLEDGER_XML_WORKERS", "2")]);
        let in_order = common::run(&["check", "--json", f], &[("CLEARLEDGER_XML_WORKERS", "1")]);
        assert_eq!(cut.code, code, "{}", cut.stderr);
        assert_eq!(cut.stdout, in_order.stdout);
        assert_eq!(cut.code, in_order.code);
    }
    let r = common::run(&["check", "--json", broken.to_str().unwrap()], &[]);
    assert!(r.stdout.contains("&bad;"), "{}", r.stdout);
}

/// Migration 0014 leaves out of the trace-number index the postings keyed `uetr:` + their own
/// trace number; `lookup --trace` reads those by the natural key. Every trace number in a
/// ledger of payments, returns, chains, EndToEndId-keyed payments and NACHA entries, looked
/// up, gives exactly the postings that carry it, as the table itself says.
fn a_lookup_by_trace_number_finds_every_posting_whichever_index_holds_it(db: TestDb) {
    for f in [
        "pacs008-credit-transfers.xml",
        "pacs004-return.xml",
        "pacs008-second-file.xml",
        "pain001-initiation.xml",
        "ppd-payroll-credits.ach",
    ] {
        ingest(&db, f);
    }
    for f in [
        "chain-leg1.xml",
        "chain-leg2.xml",
        "chain-return.xml",
        "aba-return-e2e-only.xml",
    ] {
        ingest_fixture(&db, f);
    }
    let uetr_keyed = "substr(posting_key, 1, length(trace_number) + 5) = 'uetr:' || trace_number";
    // Both kinds are in the ledger: rows the index leaves out, and ISO rows it holds.
    assert_eq!(
        db.scalar(&format!("SELECT count(*) FROM postings WHERE {uetr_keyed}")),
        5
    );
    assert_eq!(
        db.scalar(&format!(
            "SELECT count(*) FROM postings WHERE operation <> 'ach.entry' AND NOT ({uetr_keyed})"
        )),
        5
    );
    let traces = db.rows(
        "SELECT DISTINCT trace_number FROM postings WHERE trace_number IS NOT NULL ORDER BY 1",
    );
    assert_eq!(traces.len(), 10, "{traces:?}");
    for t in traces.iter().map(|r| r[0].as_str()) {
        let want: Vec<(String, String)> = db
            .rows(&format!(
                "SELECT operation, posting_key FROM postings WHERE trace_number = '{t}' ORDER BY posting_id"
            ))
            .into_iter()
            .map(|r| (r[0].clone(), r[1].clone()))
            .collect();
        assert_eq!(looked_up(&db, &["--trace", t]), want, "trace number {t}");
    }
    // A trace number that is a UETR's first characters names nothing.
    let some = db.rows(&format!(
        "SELECT trace_number FROM postings WHERE {uetr_keyed} LIMIT 1"
    ));
    let none = db.cl(&["lookup", "--json", "--trace", &some[0][0][..8]]);
    assert_eq!(
        (none.code, none.stdout.as_str()),
        (5, ""),
        "{}",
        none.stderr
    );
}
