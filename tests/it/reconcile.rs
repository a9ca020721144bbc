//! `clearledger reconcile` on both backends, with files written here: our
//! payments (pacs.008, pain.001, pacs.004) and the bank's camt.053 of the same account,
//! each outcome planted once and its explanation asserted exactly; the run's identity
//! (the same inputs again create nothing), what a new input changes, corrections posted
//! once and folded in by the next run, and `report RUN` printing the run again.

use crate::common;

use common::{TestDb, read_csv};
use std::collections::HashMap;

on_both_backends!(
    every_outcome_with_its_explanation,
    the_same_inputs_are_the_same_run_and_new_ones_say_what_changed,
    corrections_are_postings_keyed_by_their_item_and_fold_in,
    usage_errors_name_what_to_fix,
    nacha_trace_numbers_and_a_batch_settle_against_a_bai2_statement,
    corrections_stay_with_their_bank_account_and_post_where_they_are_read,
    a_return_weeks_after_its_payment_is_returned,
    an_mt940_account_with_its_currency_and_wrapped_text_reconciles,
    an_ingest_cannot_commit_between_what_a_recorded_run_read_and_what_it_corrects,
);

const OUR_IBAN: &str = "DE89370400440532013000";
const LEDGER: &str = "acct:DE89370400440532013000";

/// One credit transfer from our account.
struct Tx<'a> {
    e2e: &'a str,
    uetr: Option<&'a str>,
    amount: &'a str,
    creditor: &'a str,
}

fn pacs008(msg_id: &str, date: &str, txs: &[Tx]) -> String {
    let mut body = String::new();
    for (i, t) in txs.iter().enumerate() {
        let uetr = t
            .uetr
            .map(|u| format!("<UETR>{u}</UETR>"))
            .unwrap_or_default();
        body.push_str(&format!(
            "<CdtTrfTxInf><PmtId><InstrId>{msg_id}-{i}</InstrId><EndToEndId>{e2e}</EndToEndId><TxId>{msg_id}-T{i}</TxId>{uetr}</PmtId>\
             <IntrBkSttlmAmt Ccy=\"EUR\">{amount}</IntrBkSttlmAmt><ChrgBr>SLEV</ChrgBr>\
             <Dbtr><Nm>ACME GMBH</Nm></Dbtr><DbtrAcct><Id><IBAN>{OUR_IBAN}</IBAN></Id></DbtrAcct>\
             <DbtrAgt><FinInstnId><BICFI>COBADEFFXXX</BICFI></FinInstnId></DbtrAgt>\
             <CdtrAgt><FinInstnId><BICFI>INGBNL2AXXX</BICFI></FinInstnId></CdtrAgt>\
             <Cdtr><Nm>{creditor}</Nm></Cdtr><CdtrAcct><Id><IBAN>NL91ABNA0417164300</IBAN></Id></CdtrAcct>\
             </CdtTrfTxInf>",
            e2e = t.e2e,
            amount = t.amount,
            creditor = t.creditor,
        ));
    }
    let sum: rust_decimal::Decimal = txs
        .iter()
        .map(|t| t.amount.parse::<rust_decimal::Decimal>().unwrap())
        .sum();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
         <Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08\"><FIToFICstmrCdtTrf><GrpHdr>\
         <MsgId>{msg_id}</MsgId><CreDtTm>{date}T09:00:00Z</CreDtTm><NbOfTxs>{n}</NbOfTxs><CtrlSum>{sum}</CtrlSum>\
         <TtlIntrBkSttlmAmt Ccy=\"EUR\">{sum}</TtlIntrBkSttlmAmt><IntrBkSttlmDt>{date}</IntrBkSttlmDt>\
         <SttlmInf><SttlmMtd>CLRG</SttlmMtd></SttlmInf>\
         <InstgAgt><FinInstnId><BICFI>COBADEFFXXX</BICFI></FinInstnId></InstgAgt>\
         <InstdAgt><FinInstnId><BICFI>INGBNL2AXXX</BICFI></FinInstnId></InstdAgt></GrpHdr>{body}\
         </FIToFICstmrCdtTrf></Document>",
        n = txs.len()
    )
}

/// Our salaries: one pain.001 payment information of three transfers.
fn pain001() -> String {
    let mut body = String::new();
    for (i, a) in ["10.00", "20.00", "30.00"].iter().enumerate() {
        body.push_str(&format!(
            "<CdtTrfTxInf><PmtId><EndToEndId>SAL-{i}</EndToEndId></PmtId><Amt><InstdAmt Ccy=\"EUR\">{a}</InstdAmt></Amt>\
             <Cdtr><Nm>EMPLOYEE {i}</Nm></Cdtr><CdtrAcct><Id><IBAN>DE44500105175407324931</IBAN></Id></CdtrAcct>\
             </CdtTrfTxInf>"
        ));
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
         <Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:pain.001.001.03\"><CstmrCdtTrfInitn><GrpHdr>\
         <MsgId>ACME-SAL-11</MsgId><CreDtTm>2026-11-05T07:00:00</CreDtTm><NbOfTxs>3</NbOfTxs><CtrlSum>60.00</CtrlSum>\
         <InitgPty><Nm>ACME GMBH</Nm></InitgPty></GrpHdr><PmtInf><PmtInfId>PMT-SAL-11</PmtInfId><PmtMtd>TRF</PmtMtd>\
         <NbOfTxs>3</NbOfTxs><CtrlSum>60.00</CtrlSum><ReqdExctnDt>2026-11-05</ReqdExctnDt><Dbtr><Nm>ACME GMBH</Nm></Dbtr>\
         <DbtrAcct><Id><IBAN>{OUR_IBAN}</IBAN></Id></DbtrAcct><DbtrAgt><FinInstnId><BIC>COBADEFFXXX</BIC></FinInstnId></DbtrAgt>\
         {body}</PmtInf></CstmrCdtTrfInitn></Document>"
    )
}

/// The return of our transfer `u-1` (E-1, 100.00), as we recorded it.
fn pacs004() -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
         <Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:pacs.004.001.09\"><PmtRtr><GrpHdr>\
         <MsgId>INGB-RTR-1</MsgId><CreDtTm>2026-11-09T08:00:00Z</CreDtTm><NbOfTxs>1</NbOfTxs>\
         <TtlRtrdIntrBkSttlmAmt Ccy=\"EUR\">100.00</TtlRtrdIntrBkSttlmAmt><IntrBkSttlmDt>2026-11-09</IntrBkSttlmDt>\
         <SttlmInf><SttlmMtd>CLRG</SttlmMtd></SttlmInf>\
         <InstgAgt><FinInstnId><BICFI>INGBNL2AXXX</BICFI></FinInstnId></InstgAgt>\
         <InstdAgt><FinInstnId><BICFI>COBADEFFXXX</BICFI></FinInstnId></InstdAgt></GrpHdr>\
         <TxInf><RtrId>RTR-1</RtrId><OrgnlEndToEndId>E-1</OrgnlEndToEndId><OrgnlUETR>00000000-0000-4000-8000-000000000001</OrgnlUETR>\
         <RtrdIntrBkSttlmAmt Ccy=\"EUR\">100.00</RtrdIntrBkSttlmAmt><RtrRsnInf><Rsn><Cd>AC04</Cd></Rsn></RtrRsnInf>\
         <OrgnlTxRef><Dbtr><Pty><Nm>ACME GMBH</Nm></Pty></Dbtr><DbtrAcct><Id><IBAN>{OUR_IBAN}</IBAN></Id></DbtrAcct>\
         <DbtrAgt><FinInstnId><BICFI>COBADEFFXXX</BICFI></FinInstnId></DbtrAgt>\
         <CdtrAgt><FinInstnId><BICFI>INGBNL2AXXX</BICFI></FinInstnId></CdtrAgt>\
         <Cdtr><Pty><Nm>GLOBEX BV</Nm></Pty></Cdtr><CdtrAcct><Id><IBAN>NL91ABNA0417164300</IBAN></Id></CdtrAcct>\
         </OrgnlTxRef></TxInf></PmtRtr></Document>"
    )
}

/// One camt.053 entry.
#[derive(Default)]
struct Ntry<'a> {
    amount: &'a str,
    ccy: &'a str,
    credit: bool,
    pending: bool,
    date: &'a str,
    bank_ref: &'a str,
    text: &'a str,
    /// (EndToEndId, UETR, amount, return reason) per TxDtls.
    details: Vec<(&'a str, &'a str, &'a str, &'a str)>,
    batch: &'a str,
}

fn camt053(id: &str, from: &str, to: &str, entries: &[Ntry]) -> String {
    let mut body = String::new();
    let mut closing = rust_decimal::Decimal::new(1_000_000, 2);
    let opening = closing;
    for e in entries {
        let a: rust_decimal::Decimal = e.amount.parse().unwrap();
        if !e.pending && e.ccy == "EUR" {
            closing += if e.credit { a } else { -a };
        }
        let mut dtls = String::new();
        if !e.batch.is_empty() {
            dtls.push_str(&format!("<Btch><PmtInfId>{}</PmtInfId></Btch>", e.batch));
        }
        for (e2e, uetr, amt, rsn) in &e.details {
            let mut refs = String::new();
            if !e2e.is_empty() {
                refs.push_str(&format!("<EndToEndId>{e2e}</EndToEndId>"));
            }
            if !uetr.is_empty() {
                refs.push_str(&format!("<UETR>{uetr}</UETR>"));
            }
            let amt = if amt.is_empty() {
                String::new()
            } else {
                format!(
                    "<AmtDtls><TxAmt><Amt Ccy=\"{}\">{amt}</Amt></TxAmt></AmtDtls>",
                    e.ccy
                )
            };
            let rtr = if rsn.is_empty() {
                String::new()
            } else {
                format!("<RtrInf><Rsn><Cd>{rsn}</Cd></Rsn></RtrInf>")
            };
            dtls.push_str(&format!("<TxDtls><Refs>{refs}</Refs>{amt}{rtr}</TxDtls>"));
        }
        let dtls = if dtls.is_empty() {
            String::new()
        } else {
            format!("<NtryDtls>{dtls}</NtryDtls>")
        };
        let bank_ref = if e.bank_ref.is_empty() {
            String::new()
        } else {
            format!("<AcctSvcrRef>{}</AcctSvcrRef>", e.bank_ref)
        };
        let text = if e.text.is_empty() {
            String::new()
        } else {
            format!("<AddtlNtryInf>{}</AddtlNtryInf>", e.text)
        };
        body.push_str(&format!(
            "<Ntry><Amt Ccy=\"{ccy}\">{amount}</Amt><CdtDbtInd>{cd}</CdtDbtInd><Sts>{sts}</Sts>\
             <BookgDt><Dt>{date}</Dt></BookgDt><ValDt><Dt>{date}</Dt></ValDt>{bank_ref}\
             <BkTxCd><Prtry><Cd>NTRF</Cd></Prtry></BkTxCd>{dtls}{text}</Ntry>",
            ccy = e.ccy,
            amount = e.amount,
            cd = if e.credit { "CRDT" } else { "DBIT" },
            sts = if e.pending { "PDNG" } else { "BOOK" },
            date = e.date,
        ));
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
         <Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.02\"><BkToCstmrStmt><GrpHdr>\
         <MsgId>STMT-{id}</MsgId><CreDtTm>{to}T20:00:00Z</CreDtTm></GrpHdr><Stmt><Id>{id}</Id>\
         <CreDtTm>{to}T20:00:00Z</CreDtTm><FrToDt><FrDtTm>{from}T00:00:00</FrDtTm><ToDtTm>{to}T23:59:59</ToDtTm></FrToDt>\
         <Acct><Id><IBAN>{OUR_IBAN}</IBAN></Id><Ccy>EUR</Ccy></Acct>\
         <Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">{opening}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>{from}</Dt></Dt></Bal>\
         <Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">{closing}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>{to}</Dt></Dt></Bal>\
         {body}</Stmt></BkToCstmrStmt></Document>"
    )
}

fn n<'a>(amount: &'a str, date: &'a str) -> Ntry<'a> {
    Ntry {
        amount,
        ccy: "EUR",
        date,
        ..Default::default()
    }
}

fn with_e2e<'a>(mut e: Ntry<'a>, e2e: &'a str) -> Ntry<'a> {
    e.details = vec![(e2e, "", "", "")];
    e
}

fn write(db: &TestDb, name: &str, text: &str) -> String {
    let p = db.file(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn ingest(db: &TestDb, path: &str) {
    let r = db.cl(&["ingest", path]);
    assert!(
        r.code == 0 || r.code == 1,
        "ingest {path}: {} {}",
        r.stdout,
        r.stderr
    );
}

const U1: &str = "00000000-0000-4000-8000-000000000001";
const U9: &str = "00000000-0000-4000-8000-000000000009";

/// Our side of November.
fn our_files(db: &TestDb) {
    let early = pacs008(
        "ACME-1102",
        "2026-11-02",
        &[
            Tx {
                e2e: "E-1",
                uetr: Some(U1),
                amount: "100.00",
                creditor: "GLOBEX BV",
            },
            Tx {
                e2e: "E-2",
                uetr: None,
                amount: "200.00",
                creditor: "GLOBEX BV",
            },
            Tx {
                e2e: "E-3",
                uetr: None,
                amount: "300.00",
                creditor: "GLOBEX BV",
            },
            Tx {
                e2e: "E-4",
                uetr: None,
                amount: "400.00",
                creditor: "GLOBEX BV",
            },
            Tx {
                e2e: "E-5",
                uetr: None,
                amount: "500.00",
                creditor: "GLOBEX BV",
            },
            Tx {
                e2e: "E-6",
                uetr: None,
                amount: "600.00",
                creditor: "GLOBEX BV",
            },
            Tx {
                e2e: "E-7",
                uetr: None,
                amount: "700.00",
                creditor: "GLOBEX BV",
            },
            Tx {
                e2e: "E-9",
                uetr: Some(U9),
                amount: "90.00",
                creditor: "GLOBEX BV",
            },
            Tx {
                e2e: "E-10",
                uetr: None,
                amount: "110.00",
                creditor: "GLOBEX BV",
            },
            Tx {
                e2e: "E-11",
                uetr: None,
                amount: "50.00",
                creditor: "GLOBEX BV",
            },
            Tx {
                e2e: "E-12",
                uetr: None,
                amount: "100.00",
                creditor: "GLOBEX BV",
            },
            Tx {
                e2e: "NOTPROVIDED",
                uetr: None,
                amount: "55.00",
                creditor: "INITECH",
            },
            Tx {
                e2e: "NOTPROVIDED",
                uetr: None,
                amount: "55.00",
                creditor: "INITECH",
            },
            Tx {
                e2e: "NOTPROVIDED",
                uetr: None,
                amount: "66.00",
                creditor: "HOOLI",
            },
        ],
    );
    let late = pacs008(
        "ACME-1129",
        "2026-11-29",
        &[Tx {
            e2e: "E-8",
            uetr: None,
            amount: "800.00",
            creditor: "GLOBEX BV",
        }],
    );
    for (name, text) in [
        ("early.xml", early),
        ("late.xml", late),
        ("salaries.xml", pain001()),
        ("return.xml", pacs004()),
    ] {
        let p = write(db, name, &text);
        ingest(db, &p);
    }
}

/// The bank's November.
fn bank_entries() -> Vec<Ntry<'static>> {
    let mut v = Vec::new();
    let mut e = n("100.00", "2026-11-02");
    e.details = vec![("E-1", U1, "", "")];
    v.push(e);
    v.push(with_e2e(n("200.00", "2026-11-03"), "E-2"));
    v.push(with_e2e(n("302.50", "2026-11-03"), "E-3"));
    v.push(with_e2e(n("450.00", "2026-11-02"), "E-4"));
    v.push(with_e2e(n("500.00", "2026-11-12"), "E-5"));
    let mut usd = with_e2e(n("600.00", "2026-11-02"), "E-6");
    usd.ccy = "USD";
    v.push(usd);
    for d in ["2026-11-02", "2026-11-04"] {
        let mut e = n("90.00", d);
        e.details = vec![("E-9", U9, "", "")];
        v.push(e);
    }
    v.push(with_e2e(n("110.00", "2026-11-02"), "E-10"));
    // The bank returns E-10 (we posted no return) and U1 (we did: pacs.004).
    let mut r = n("110.00", "2026-11-06");
    r.credit = true;
    r.details = vec![("E-10", "", "", "AC01")];
    v.push(r);
    let mut r = n("100.00", "2026-11-09");
    r.credit = true;
    r.details = vec![("E-1", U1, "", "AC04")];
    v.push(r);
    let mut fee = n("12.34", "2026-11-15");
    fee.text = "ACCOUNT FEE NOVEMBER";
    v.push(fee);
    v.push(n("55.00", "2026-11-02"));
    v.push(n("55.00", "2026-11-03"));
    let mut h = n("66.00", "2026-11-03");
    h.text = "TRANSFER HOOLI";
    v.push(h);
    let mut b = n("60.00", "2026-11-05");
    b.batch = "PMT-SAL-11";
    v.push(b);
    let mut split = n("150.00", "2026-11-02");
    split.details = vec![("E-11", "", "50.00", ""), ("E-12", "", "100.00", "")];
    v.push(split);
    let mut p = n("77.00", "2026-11-30");
    p.pending = true;
    v.push(p);
    v
}

fn setup(db: &TestDb) {
    our_files(db);
    let camt = write(
        db,
        "nov.xml",
        &camt053("NOV", "2026-11-01", "2026-11-30", &bank_entries()),
    );
    ingest(db, &camt);
    let r = db.cl(&[
        "account",
        "map",
        "--bank-account",
        OUR_IBAN,
        "--ledger-account",
        LEDGER,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

fn rules(db: &TestDb) -> String {
    write(
        db,
        "rules.toml",
        "# the bank takes up to 2.50 of fees on an outgoing transfer\n\
         [[tolerance]]\nname = \"sepa-fee\"\npriority = 1\ncurrency = \"EUR\"\nbelow_minor = 250\n",
    )
}

/// `reconcile` of our account for November, as JSON, with `extra`.
fn reconcile_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "reconcile",
        "--bank-account",
        OUR_IBAN,
        "--from",
        "2026-11-01",
        "--to",
        "2026-11-30",
        "--json",
    ];
    args.extend_from_slice(extra);
    args
}

fn reconcile(db: &TestDb, extra: &[&str]) -> (i32, serde_json::Value, String) {
    let r = db.cl(&reconcile_args(extra));
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {} / {}", r.stdout, r.stderr));
    (r.code, v, r.stderr)
}

/// (outcome, matched_by, our keys, their keys, explanation) per report row.
fn rows(path: &std::path::Path) -> Vec<(String, String, String, String, String)> {
    read_csv(path)
        .into_iter()
        .map(|r: HashMap<String, String>| {
            (
                r["outcome"].clone(),
                r["matched_by"].clone(),
                r["our_keys"].clone(),
                r["their_keys"].clone(),
                r["explanation"].clone(),
            )
        })
        .collect()
}

fn every_outcome_with_its_explanation(db: TestDb) {
    setup(&db);
    let rules = rules(&db);
    let report = db.file("items.csv");
    let (code, s, err) = reconcile(
        &db,
        &["--rules", &rules, "--report", report.to_str().unwrap()],
    );
    assert_eq!(code, 1, "{err}");
    let got: Vec<(String, String)> = rows(&report)
        .into_iter()
        .map(|(o, by, _, _, why)| (o, format!("{by}|{why}")))
        .collect();
    let expected: Vec<(&str, &str)> = vec![
        (
            "missing_ours",
            "|no posting for this entry; amount -12.34 EUR, booked 2026-11-15",
        ),
        (
            "amount_mismatch",
            "end_to_end_id|by end_to_end_id=E-4; amount ours -400.00 theirs -450.00 Δ -50.00; days Δ 0 in -1..+3",
        ),
        (
            "currency_mismatch",
            "end_to_end_id|by end_to_end_id=E-6; currency ours EUR theirs USD; days Δ 0 in -1..+3",
        ),
        (
            "date_mismatch",
            "end_to_end_id|by end_to_end_id=E-5; amount ours -500.00 theirs -500.00 Δ 0.00; days Δ +10 outside -1..+3",
        ),
        (
            "duplicate_theirs",
            "|repeats entry ENTRY9A by uetr=00000000-0000-4000-8000-000000000009 (posting POST9); amount -90.00 EUR",
        ),
        (
            "returned",
            "|returns posting POST10 by end_to_end_id=E-10; no return of it is posted; amount +110.00 EUR",
        ),
        (
            "ambiguous",
            "|2 postings and 2 entries of -55.00 EUR within the window: postings P55A, P55B and entries T55A, T55B fit more than one way; an operator decides",
        ),
        (
            "missing_theirs",
            "|no bank entry by 2026-11-30 (due 2026-11-05); amount -700.00 EUR",
        ),
        (
            "expected",
            "|no bank entry yet; not due before 2026-12-02; amount -800.00 EUR",
        ),
        (
            "provisional",
            "|provisional entry, not final until booked; amount -77.00 EUR",
        ),
        (
            "many_to_one",
            "batch|by batch pmtinf:PMT-SAL-11 quoted as PMT-SAL-11; members ours 3 theirs 1; amount ours -60.00 theirs -60.00 Δ 0.00; days Δ 0 in -1..+3",
        ),
        (
            "one_to_many",
            "details|by 2 of 2 details; members ours 2 theirs 1; amount ours -150.00 theirs -150.00 Δ 0.00; days Δ 0 in -1..+3",
        ),
        (
            "matched_within_tolerance",
            "end_to_end_id|by end_to_end_id=E-3; amount ours -300.00 theirs -302.50 Δ -2.50; within tolerance sepa-fee; days Δ +1 in -1..+3",
        ),
    ];
    // Keys are the ledger's: resolve the placeholders from the report itself.
    let all = rows(&report);
    let key_of = |outcome: &str| -> (String, String) {
        let r = all.iter().find(|r| r.0 == outcome).unwrap();
        (r.2.clone(), r.3.clone())
    };
    let (_, dup_t) = key_of("duplicate_theirs");
    let (_, ret_t) = key_of("returned");
    let (amb_o, amb_t) = key_of("ambiguous");
    let amb_o: Vec<String> = serde_json::from_str(&amb_o).unwrap();
    let amb_t: Vec<String> = serde_json::from_str(&amb_t).unwrap();
    assert_eq!(amb_o.len(), 2);
    assert_eq!(amb_t.len(), 2);
    let _ = (dup_t, ret_t);
    let pacs = |e2e_or_uetr: &str| -> String {
        // The detail as JSON (`Db::rows` reads the compact form so).
        let quoted = format!("\"{e2e_or_uetr}\"");
        db.rows("SELECT operation || ':' || posting_key, detail FROM postings ORDER BY posting_id")
            .into_iter()
            .find(|r| r[1].contains(&quoted))
            .map(|r| r[0].clone())
            .unwrap()
    };
    let first_u9 = db.rows(&format!(
        "SELECT entry_key FROM statement_entries WHERE refs LIKE '%{U9}%' ORDER BY booking_date LIMIT 1"
    ))[0][0]
        .clone();
    let fill = |s: &str| -> String {
        s.replace("ENTRY9A", &first_u9)
            .replace("POST9", &pacs(U9))
            .replace("POST10", &pacs("E-10"))
            .replace("P55A, P55B", &amb_o.join(", "))
            .replace("T55A, T55B", &amb_t.join(", "))
    };
    let head: Vec<(String, String)> = got.iter().take(expected.len()).cloned().collect();
    let want: Vec<(String, String)> = expected
        .iter()
        .map(|(o, w)| (o.to_string(), fill(w)))
        .collect();
    assert_eq!(head, want);
    // Then the matched items, by their entry's date, then item key (a hash: a fixed
    // order): E-10, U9, the HOOLI line (amount and date: one posting and one entry of
    // -66.00, so the counterparty is not needed), U1 (by UETR, though the entry also quotes
    // E-1), E-2, and the bank's return of U1 against our pacs.004.
    let tail: Vec<(String, String)> = got[expected.len()..].to_vec();
    let m = |by: &str, why: &str| ("matched".to_string(), format!("{by}|{why}"));
    assert_eq!(
        tail,
        vec![
            m(
                "end_to_end_id",
                "by end_to_end_id=E-10; amount ours -110.00 theirs -110.00 Δ 0.00; days Δ 0 in -1..+3"
            ),
            m(
                "uetr",
                "by uetr=00000000-0000-4000-8000-000000000009; amount ours -90.00 theirs -90.00 Δ 0.00; days Δ 0 in -1..+3"
            ),
            m(
                "amount_date",
                "by amount and date; amount ours -66.00 theirs -66.00 Δ 0.00; days Δ +1 in -1..+3"
            ),
            m(
                "end_to_end_id",
                "by end_to_end_id=E-2; amount ours -200.00 theirs -200.00 Δ 0.00; days Δ +1 in -1..+3"
            ),
            m(
                "uetr",
                "by uetr=00000000-0000-4000-8000-000000000001; amount ours -100.00 theirs -100.00 Δ 0.00; days Δ 0 in -1..+3"
            ),
            m(
                "original_uetr",
                "by original_uetr=00000000-0000-4000-8000-000000000001; amount ours +100.00 theirs +100.00 Δ 0.00; days Δ 0 in -1..+3"
            ),
        ]
    );
    // The summary: counts and amounts per outcome, every outcome named.
    assert_eq!(s["items"], 19);
    assert_eq!(s["needs_attention"], 8);
    assert_eq!(s["status"], "needs_attention");
    assert_eq!(s["outcomes"]["matched"]["items"], 6);
    assert_eq!(s["outcomes"]["missing_ours"]["their_amount_minor"], -1234);
    assert_eq!(
        s["outcomes"]["matched_within_tolerance"]["delta_minor"],
        -250
    );
    assert_eq!(s["outcomes"]["one_to_many"]["items"], 1);
    assert_eq!(s["outcomes"].as_object().unwrap().len(), 14);
    // Every posting read and every entry read is in exactly one item.
    let run = s["run_id"].as_i64().unwrap();
    assert_eq!(
        db.scalar(&format!(
            "SELECT count(*) FROM recon_members WHERE run_id = {run} AND side = 'ours'"
        )),
        s["postings_read"].as_i64().unwrap()
    );
    assert_eq!(
        db.scalar(&format!(
            "SELECT count(*) FROM recon_members WHERE run_id = {run} AND side = 'theirs'"
        )),
        s["entries_read"].as_i64().unwrap()
    );
    // The balance: the statement's closing (10 000.00 + the booked EUR lines) against the
    // ledger's movements of the account.
    let b = &s["balances"][0];
    assert_eq!(b["currency"], "EUR");
    assert_eq!(b["statement_date"], "2026-11-30");
    let ledger = b["ledger_balance_minor"].as_i64().unwrap();
    let closing = b["statement_closing_minor"].as_i64().unwrap();
    assert_eq!(b["drift_minor"].as_i64().unwrap(), closing - ledger);
    // Ours: -(100+200+300+400+500+600+700+90+110+50+100+55+55+66+800+10+20+30) + 100 (the return).
    assert_eq!(ledger, -418_600 + 10_000);
    // Theirs: 10 000.00 − the booked EUR debits + the credits.
    // Debits 100 + 200 + 302.50 + 450 + 500 + 90 + 90 + 110 + 12.34 + 55 + 55 + 66 + 60 + 150
    // (the USD line and the pending one are not in it); credits 110 + 100.
    assert_eq!(closing, 1_000_000 - 224_084 + 21_000);
    // The run is a run of its own kind.
    assert_eq!(
        db.rows(&format!(
            "SELECT kind, status, records FROM runs WHERE run_id = {run}"
        )),
        vec![vec![
            "reconcile".to_string(),
            "completed".to_string(),
            "19".to_string()
        ]]
    );
    // `report RUN` prints the same rows again.
    let again = db.file("again.csv");
    let r = db.cl(&[
        "report",
        &run.to_string(),
        "--output",
        again.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(&again).unwrap(),
        std::fs::read_to_string(&report).unwrap()
    );
}

fn the_same_inputs_are_the_same_run_and_new_ones_say_what_changed(db: TestDb) {
    setup(&db);
    let (code, first, _) = reconcile(&db, &[]);
    assert_eq!(code, 1);
    let run = first["run_id"].as_i64().unwrap();
    let runs_before = db.scalar("SELECT count(*) FROM runs");
    let (code, again, err) = reconcile(&db, &[]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(again["run_id"], run);
    assert_eq!(again["repeat_of_run_id"], run);
    assert_eq!(again["identity"], first["identity"]);
    assert_eq!(again["outcomes"], first["outcomes"]);
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), runs_before);
    // Other rules are another run.
    let rules = rules(&db);
    let (_, tol, _) = reconcile(&db, &["--rules", &rules]);
    assert_ne!(tol["run_id"], run);
    assert_ne!(tol["rules_hash"], first["rules_hash"]);
    assert_eq!(tol["outcomes"]["matched_within_tolerance"]["items"], 1);
    assert_eq!(first["outcomes"]["amount_mismatch"]["items"], 2);
    // We post the bank's fee line: a new input, a new run that says what changed.
    let fee = pacs008(
        "ACME-FEE",
        "2026-11-15",
        &[Tx {
            e2e: "FEE-11",
            uetr: None,
            amount: "12.34",
            creditor: "THE BANK",
        }],
    );
    let p = write(&db, "fee.xml", &fee);
    ingest(&db, &p);
    let (_, next, _) = reconcile(&db, &["--rules", &rules]);
    assert_eq!(next["changes"]["previous_run_id"], tol["run_id"]);
    // The missing_ours item is gone; a matched one (amount and date) is new.
    assert_eq!(next["changes"]["new_items"], 1);
    assert_eq!(next["changes"]["gone_items"], 1);
    assert_eq!(next["changes"]["changed_outcomes"], 0);
    assert_eq!(next["outcomes"]["missing_ours"]["items"], 0);
    // A dry run records nothing.
    let before = db.scalar("SELECT count(*) FROM runs");
    let (_, dry, _) = reconcile(&db, &["--dry-run"]);
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["run_id"], serde_json::Value::Null);
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), before);
}

fn corrections_are_postings_keyed_by_their_item_and_fold_in(db: TestDb) {
    setup(&db);
    let rules = rules(&db);
    let report = db.file("first.csv");
    let (_, first, _) = reconcile(
        &db,
        &["--rules", &rules, "--report", report.to_str().unwrap()],
    );
    let all = read_csv(&report);
    let fee_item = all.iter().find(|r| r["outcome"] == "missing_ours").unwrap();
    let key = fee_item["item_key"].clone();
    // Only the fee line's item: one correction of −12.34 from the account to suspense.
    let out = db.file("corrected.csv");
    let (code, s, err) = reconcile(
        &db,
        &[
            "--rules",
            &rules,
            "--correct",
            &key,
            "--report",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(s["corrections_posted"], 1);
    assert_eq!(s["corrections_amount_minor"], 1234);
    let posted = db.rows(
        "SELECT operation, posting_key, debit_account, credit_account, amount_minor, currency, effective_date \
         FROM postings WHERE operation = 'correction'",
    );
    assert_eq!(
        posted,
        vec![vec![
            "correction".to_string(),
            format!("{OUR_IBAN}:{key}:1"),
            LEDGER.to_string(),
            format!("suspense:{OUR_IBAN}"),
            "1234".to_string(),
            "EUR".to_string(),
            "2026-11-15".to_string(),
        ]]
    );
    let row = read_csv(&out)
        .into_iter()
        .find(|r| r["item_key"] == key)
        .unwrap();
    assert_eq!(
        row["correction_key"],
        format!("correction:{OUR_IBAN}:{key}:1")
    );
    // The next run folds it in: the item is matched by its correction.
    let next_report = db.file("next.csv");
    let (_, next, _) = reconcile(
        &db,
        &["--rules", &rules, "--report", next_report.to_str().unwrap()],
    );
    assert_eq!(next["outcomes"]["missing_ours"]["items"], 0);
    let folded = read_csv(&next_report)
        .into_iter()
        .find(|r| r["item_key"] == key)
        .unwrap();
    assert_eq!(folded["outcome"], "matched");
    assert_eq!(folded["matched_by"], "correction");
    assert_eq!(folded["previous_outcome"], "missing_ours");
    assert_eq!(
        folded["explanation"],
        format!(
            "no posting for this entry; amount -12.34 EUR, booked 2026-11-15; corrected by correction:{OUR_IBAN}:{key}:1 (-12.34); was missing_ours"
        )
    );
    assert_eq!(next["changes"]["changed_outcomes"], 1);
    // Asking for that item's correction again posts nothing: its Δ is 0 now.
    let (_, again, _) = reconcile(&db, &["--rules", &rules, "--correct", &key]);
    assert_eq!(again["corrections_posted"], 0);
    assert_eq!(
        db.scalar("SELECT count(*) FROM postings WHERE operation = 'correction'"),
        1
    );
    // A correction is its own kind in the posting report.
    let cr_run = s["run_id"].as_i64().unwrap();
    let _ = first;
    assert_eq!(
        db.scalar(&format!(
            "SELECT count(*) FROM postings WHERE run_id = {cr_run}"
        )),
        1
    );
    let postings = db.file("postings.csv");
    let r = db.cl(&[
        "report",
        &cr_run.to_string(),
        "--postings",
        "-o",
        postings.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = read_csv(&postings);
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (
            rows[0]["outcome"].as_str(),
            rows[0]["kind"].as_str(),
            rows[0]["posting_key"].clone()
        ),
        ("posted", "correction", format!("{OUR_IBAN}:{key}:1"))
    );
    assert_eq!(rows[0]["file_id"], format!("reconcile:{cr_run}"));
}

fn usage_errors_name_what_to_fix(db: TestDb) {
    let r = db.cl(&["reconcile", "--bank-account", OUR_IBAN]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "clearledger: no ledger account is mapped to bank account \"{OUR_IBAN}\" for tenant \"default\"; map one with \
             `clearledger account map --bank-account {OUR_IBAN} --ledger-account ACCOUNT`\n"
        )
    );
    let bad = write(
        &db,
        "bad.toml",
        "[[tolerance]]\nname = \"x\"\nbelow_minor = -5\n",
    );
    let r = db.cl(&["reconcile", "--bank-account", OUR_IBAN, "--rules", &bad]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "clearledger: invalid rules: {bad}: tolerance[1] (\"x\").below_minor: expected 0 or more, found -5\n"
        )
    );
    let r = db.cl(&[
        "reconcile",
        "--bank-account",
        OUR_IBAN,
        "--from",
        "2026-12-01",
        "--to",
        "2026-11-01",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("--from 2026-12-01 is after --to 2026-11-01"),
        "{}",
        r.stderr
    );
    let r = db.cl(&[
        "reconcile",
        "--bank-account",
        OUR_IBAN,
        "--from",
        "2026-13-01",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("expected a date YYYY-MM-DD, found \"2026-13-01\""),
        "{}",
        r.stderr
    );
}

/// A NACHA payroll (samples/ppd-payroll-credits.ach: four credits of company 1234567890,
/// effective 2026-11-30, from the offset account `odfi:12104288:1234567890`) against the
/// company's BAI2 statement: two entries quote their trace numbers, one settles the rest of
/// the batch as one line quoting the company id.
fn nacha_trace_numbers_and_a_batch_settle_against_a_bai2_statement(db: TestDb) {
    let ach = common::samples().join("ppd-payroll-credits.ach");
    ingest(&db, ach.to_str().unwrap());
    let bai2 = "01,BANKID,ACME,261130,2000,1,,,2/\n\
                02,ACME,BANKID,1,261130,2359,USD,2/\n\
                03,ACME-OPER,USD,010,1000000,,,015,212451,,/\n\
                16,455,187550,,B1,121042880000002,ACH DEBIT/\n\
                16,455,250000,,B2,121042880000003,ACH DEBIT/\n\
                16,455,349999,,B3,1234567890,ACME PAYROLL/\n\
                49,2000000,5/\n\
                98,2000000,1,7/\n\
                99,2000000,1,9/\n";
    let p = write(&db, "acme.bai2", bai2);
    ingest(&db, &p);
    let m = db.cl(&[
        "account",
        "map",
        "--bank-account",
        "ACME-OPER",
        "--ledger-account",
        "odfi:12104288:1234567890",
    ]);
    assert_eq!(m.code, 0, "{}", m.stderr);
    let report = db.file("acme.csv");
    let r = db.cl(&[
        "reconcile",
        "--bank-account",
        "ACME-OPER",
        "--json",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got: Vec<(String, String, String)> = rows(&report)
        .into_iter()
        .map(|(o, by, _, theirs, why)| (o, format!("{by} {theirs}"), why))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "many_to_one".to_string(),
                "batch [\"ref:B3\"]".to_string(),
                "by batch nacha:1234567890:2026-11-30:0000001 quoted as 1234567890; members ours 2 theirs 1; \
                 amount ours -3499.99 theirs -3499.99 Δ 0.00; days Δ 0 in -1..+3"
                    .to_string()
            ),
            (
                "matched".to_string(),
                "trace_number [\"ref:B1\"]".to_string(),
                "by trace_number=121042880000002; amount ours -1875.50 theirs -1875.50 Δ 0.00; days Δ 0 in -1..+3".to_string()
            ),
            (
                "matched".to_string(),
                "trace_number [\"ref:B2\"]".to_string(),
                "by trace_number=121042880000003; amount ours -2500.00 theirs -2500.00 Δ 0.00; days Δ 0 in -1..+3".to_string()
            ),
        ]
    );
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v["postings_read"], 4);
    assert_eq!(v["status"], "reconciled");
    // The ledger moved −7 875.49 on the offset account; the bank 10 000.00 → 2 124.51.
    assert_eq!(v["balances"][0]["ledger_balance_minor"], -787_549);
    assert_eq!(v["balances"][0]["statement_closing_minor"], 212_451);
    assert_eq!(v["balances"][0]["drift_minor"], 1_000_000);
}

/// A ledger account mapped to two bank accounts: one account's correction is never read by
/// the other's reconciliation; corrections that would post where no run reads them are
/// refused before anything is written.
fn corrections_stay_with_their_bank_account_and_post_where_they_are_read(db: TestDb) {
    setup(&db);
    let rules = rules(&db);
    let (_, s, err) = reconcile(&db, &["--rules", &rules, "--post-corrections"]);
    assert!(s["corrections_posted"].as_u64().unwrap() > 0, "{err}");
    let m = db.cl(&[
        "account",
        "map",
        "--bank-account",
        "OTHER-ACCT",
        "--ledger-account",
        LEDGER,
    ]);
    assert_eq!(m.code, 0, "{}", m.stderr);
    let report = db.file("other.csv");
    let r = db.cl(&[
        "reconcile",
        "--bank-account",
        "OTHER-ACCT",
        "--from",
        "2026-11-01",
        "--to",
        "2026-11-30",
        "--json",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let corrections_seen = read_csv(&report)
        .iter()
        .filter(|row| row["our_keys"].contains("correction:") || row["corrections"] != "[]")
        .count();
    assert_eq!(corrections_seen, 0);
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    let ours_total = db.scalar("SELECT count(*) FROM postings WHERE operation <> 'correction'");
    assert_eq!(v["postings_read"].as_i64().unwrap(), ours_total);
    // A ledger account not mapped for the corrections: refused, nothing posted.
    let bad = write(
        &db,
        "bad-corr.toml",
        "[corrections]\nledger_account = \"acct:ELSEWHERE\"\n",
    );
    let before = db.scalar("SELECT count(*) FROM postings");
    let r = db.cl(&[
        "reconcile",
        "--bank-account",
        OUR_IBAN,
        "--rules",
        &bad,
        "--post-corrections",
    ]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "clearledger: corrections not posted: [corrections] ledger_account \"acct:ELSEWHERE\" is not mapped to \
             bank account \"{OUR_IBAN}\" (mapped: {LEDGER}): its corrections would never be read back\n"
        )
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), before);
}

/// October's payment returned in November, long after the day window: its original is found
/// by the identifier the return quotes, on any date.
fn a_return_weeks_after_its_payment_is_returned(db: TestDb) {
    let oct = pacs008(
        "ACME-1005",
        "2026-10-05",
        &[Tx {
            e2e: "E-OLD",
            uetr: None,
            amount: "75.00",
            creditor: "GLOBEX BV",
        }],
    );
    let p = write(&db, "oct.xml", &oct);
    ingest(&db, &p);
    let mut r = n("75.00", "2026-11-20");
    r.credit = true;
    r.bank_ref = "RET-1";
    r.details = vec![("E-OLD", "", "", "AC04")];
    let camt = write(
        &db,
        "nov.xml",
        &camt053("NOV", "2026-11-01", "2026-11-30", &[r]),
    );
    ingest(&db, &camt);
    let m = db.cl(&[
        "account",
        "map",
        "--bank-account",
        OUR_IBAN,
        "--ledger-account",
        LEDGER,
    ]);
    assert_eq!(m.code, 0, "{}", m.stderr);
    let report = db.file("late.csv");
    let (code, s, err) = reconcile(&db, &["--report", report.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(s["postings_read"], 0);
    let key = db.rows("SELECT operation || ':' || posting_key FROM postings")[0][0].clone();
    let rows = read_csv(&report);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["outcome"], "returned");
    assert_eq!(rows[0]["refers_to"], key);
    assert_eq!(
        rows[0]["explanation"],
        format!(
            "returns posting {key} by end_to_end_id=E-OLD (dated 2026-10-05, before the period read); no return of \
             it is posted; amount +75.00 EUR"
        )
    );
}

/// A bank writes the account with its currency (`:25:IBAN EUR`) and wraps a counterparty's
/// name onto a line that begins like a tag (`:26:37 …`, the end of a timestamp): the
/// statement is the account's under its IBAN, and the name narrows three equal payments.
fn an_mt940_account_with_its_currency_and_wrapped_text_reconciles(db: TestDb) {
    let tx = |e2e, creditor| Tx {
        e2e,
        uetr: None,
        amount: "100.00",
        creditor,
    };
    let ours = pacs008(
        "MT-1",
        "2026-11-10",
        &[
            tx("E-ALPHA", "ALPHA TRADING"),
            tx("E-BETA", "BETA SUPPLIES"),
            tx("E-GAMMA", "GAMMA LOGISTICS"),
        ],
    );
    ingest(&db, &write(&db, "ours.xml", &ours));
    let mt940 = format!(
        ":20:NOV10\r\n:25:{OUR_IBAN} EUR\r\n:28C:1/1\r\n:60F:C261110EUR1000,00\r\n\
         :61:2611101110D100,00NTRFNONREF//B-1\r\n:86:SEPA TRANSFER 2026-11-10T09:1\r\n\
         :26:37 ALPHA TRADING INVOICE 7\r\n\
         :61:2611101110D100,00NTRFNONREF//B-2\r\n:86:SEPA TRANSFER BETA SUPPLIES\r\n\
         :62F:C261110EUR800,00\r\n-\r\n"
    );
    ingest(&db, &write(&db, "bank.sta", &mt940));
    // Either spelling finds the account: the statements', the mapping's, the reconciliation's.
    let spelled = format!("{OUR_IBAN} EUR");
    let l = db.cl(&["statements", "--account", &spelled, "--json"]);
    assert_eq!(l.code, 0, "{}", l.stderr);
    let st: serde_json::Value = serde_json::from_str(l.stdout.trim()).unwrap();
    assert_eq!(
        (st["account"].as_str(), st["currency"].as_str()),
        (Some(OUR_IBAN), Some("EUR"))
    );
    let m = db.cl(&[
        "account",
        "map",
        "--bank-account",
        &spelled,
        "--ledger-account",
        LEDGER,
    ]);
    assert_eq!(m.code, 0, "{}", m.stderr);
    let list = db.cl(&["account", "list", "--bank-account", OUR_IBAN, "--json"]);
    assert_eq!(list.stdout.lines().count(), 1, "{}", list.stdout);
    let report = db.file("mt.csv");
    let (code, v, err) = reconcile(&db, &["--report", report.to_str().unwrap()]);
    assert_eq!(
        (v["postings_read"].as_u64(), v["entries_read"].as_u64()),
        (Some(3), Some(2)),
        "{v} {err}"
    );
    let got: Vec<(String, String, String)> = rows(&report)
        .into_iter()
        .map(|(o, _, ours, theirs, _)| (o, ours, theirs))
        .collect();
    let key = |e2e: &str| format!("[\"pacs.008:e2e:COBADEFF/{OUR_IBAN}:{e2e}:COBADEFF>INGBNL2A\"]");
    let row = |o: &str, ours: &str, theirs: &str| (o.to_string(), key(ours), theirs.to_string());
    assert_eq!(
        got,
        vec![
            (
                "missing_theirs".to_string(),
                key("E-GAMMA"),
                "[]".to_string()
            ),
            row("matched", "E-ALPHA", "[\"ref:B-1\"]"),
            row("matched", "E-BETA", "[\"ref:B-2\"]"),
        ]
    );
    assert_eq!(code, 1, "{err}");
}

/// A recorded reconciliation reads its inputs inside the transaction that records it, the
/// tables closed to writers: held just after its read, an ingest cannot commit (it waits,
/// here past its 2-second --lock-timeout, and posts nothing), so no posting can arrive
/// between what the run saw and the corrections it posts from that. Once the run has
/// committed, the same ingest goes through.
fn an_ingest_cannot_commit_between_what_a_recorded_run_read_and_what_it_corrects(db: TestDb) {
    setup(&db);
    let rules = rules(&db);
    let late = write(
        &db,
        "late.xml",
        &pacs008(
            "LATE-1",
            "2026-11-20",
            &[Tx {
                e2e: "E2E-LATE",
                uetr: None,
                amount: "10.00",
                creditor: "INITECH BV",
            }],
        ),
    );
    let held = std::process::Command::new(common::bin())
        .args(["--db", db.url.as_str()])
        .args(reconcile_args(&["--rules", &rules, "--post-corrections"]))
        .env("CLEARLEDGER_FAULT", "stop:reconcile_after_read")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_until_stopped(held.id());
    let postings = db.scalar("SELECT count(*) FROM postings");
    let meanwhile = db.cl(&["--lock-timeout", "2", "ingest", &late]);
    assert_eq!(
        meanwhile.code, 4,
        "{}{}",
        meanwhile.stdout, meanwhile.stderr
    );
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), postings);
    common::resume(held.id());
    let out = held.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let corrected = summary["corrections_posted"].as_i64().unwrap();
    assert!(corrected > 0, "{summary}");
    let after = db.cl(&["ingest", &late]);
    assert_eq!(after.code, 0, "{}", after.stderr);
    assert_eq!(
        db.scalar("SELECT count(*) FROM postings"),
        postings + corrected + 1
    );
}
