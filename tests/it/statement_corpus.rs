//! Every bank statement file of the test corpus (`common::corpus`; MANIFEST.md "Statement
//! files"), ingested in one ledger in this order, on both backends: each file's outcome is
//! pinned — rejected (with the reader's error findings: the readers' own corpus tests name
//! them, src/formats/{bai2,camt,mt940}), or recorded with its entries counted, and each
//! entry recorded (amount, sign, currency, dates, references, account) pinned in
//! `statement_corpus_entries.tsv` — and every file recorded clean is, sent again, all
//! duplicates.
//!
//! What the order shows (MANIFEST traps): the genkgo camt files are one statement (same
//! `Stmt/Id`, `ElctrncSeqNb`) in several schema versions: the camt.052 v2 is a duplicate of
//! v1, v4 and v8 differ (another currency's balance, another entry), so their entries are
//! held or conflicts. Statements whose balances do not add up (citi, the genkgo "five
//! decimals", knab, postfinance, sepa_snippet, several MT940 test files) are recorded and
//! need attention. Rejections: moov-sample4 (every 49/98/99 total wrong), BAI2 without its
//! `01`, MT942 files whose `:90D:` contradicts their entries, an MT940 without a closing
//! balance, empty and unrecognised files. The bank dialects (30 February, DEM, long
//! references, closings without a currency …) are read: `special-february_30` is recorded,
//! so `special-unknown_tag`, the same statement with another entry, is held.

use crate::common;

use common::TestDb;

on_both_backends!(every_corpus_statement_file_has_its_outcome);

/// (file under the corpus, status, entries, recorded + provisional + confirmed,
/// duplicates, conflicts, held)
const OUTCOMES: &[(&str, &str, u64, u64, u64, u64, u64)] = &[
    (
        "bai2/account_trailer_amount_blank_example.bai2",
        "completed",
        0,
        0,
        0,
        0,
        0,
    ),
    ("bai2/citi_example.bai2", "needs_attention", 1, 1, 0, 0, 0),
    (
        "bai2/moov-sample-parseError.bai2",
        "rejected",
        0,
        0,
        0,
        0,
        0,
    ),
    ("bai2/moov-sample1.bai2", "completed", 17, 17, 0, 0, 0),
    ("bai2/moov-sample2.bai2", "completed", 4, 4, 0, 0, 0),
    ("bai2/moov-sample3.bai2", "completed", 26, 26, 0, 0, 0),
    (
        "bai2/moov-sample4-continuations-newline-delimited.bai2",
        "rejected",
        17,
        0,
        0,
        0,
        0,
    ),
    ("bai2/nwb_example.bai2", "completed", 5, 5, 0, 0, 0),
    ("bai2/svb_us_example.bai2", "completed", 2, 2, 0, 0, 0),
    (
        "mt940/betterplace-sepa_snippet.sta",
        "needs_attention",
        11,
        11,
        0,
        0,
        0,
    ),
    (
        "mt940/danske-MT940_DK_Example.sta",
        "completed",
        89,
        89,
        0,
        0,
        0,
    ),
    ("mt940/invalid_statement.sta", "rejected", 0, 0, 0, 0, 0),
    ("mt940/jejik-knab.sta", "needs_attention", 3, 3, 0, 0, 0),
    (
        "mt940/jejik-postfinance.sta",
        "needs_attention",
        4,
        4,
        0,
        0,
        0,
    ),
    ("mt940/jejik-rabobank-iban.sta", "completed", 4, 4, 0, 0, 0),
    ("mt940/jejik-sns.sta", "completed", 2, 2, 0, 0, 0),
    ("mt940/mBank-mt940.sta", "completed", 3, 3, 0, 0, 0),
    ("mt940/raphaelm.sta", "completed", 9, 9, 0, 0, 0),
    ("mt940/sparkassen.sta", "rejected", 0, 0, 0, 0, 0),
    // 30 February read as the 29th (a bank dialect): recorded.
    ("mt940/special-february_30.sta", "completed", 1, 1, 0, 0, 0),
    (
        "mt940/special-incomplete_tag_61.sta",
        "needs_attention",
        1,
        1,
        0,
        0,
        0,
    ),
    (
        "mt940/special-invalid_utf8.sta",
        "needs_attention",
        7,
        7,
        0,
        0,
        0,
    ),
    (
        "mt940/special-overly_long_details.sta",
        "needs_attention",
        1,
        0,
        0,
        0,
        1,
    ),
    // The same statement as february_30 (account, :20:, :28C:, date) with another value
    // date on its one entry: held for an operator.
    (
        "mt940/special-unknown_tag.sta",
        "needs_attention",
        1,
        0,
        0,
        0,
        1,
    ),
    ("mt942/cmxl-mt942_1-empty.sta", "rejected", 0, 0, 0, 0, 0),
    // DEM read in its historic 2 decimals (a bank dialect); the balances hold.
    ("mt942/mBank-mt942.sta", "completed", 11, 11, 0, 0, 0),
    ("mt942/special-mt942.sta", "rejected", 1, 0, 0, 0, 0),
    (
        "iso20022/camt052/genkgo-camt052.v1.xml",
        "completed",
        1,
        1,
        0,
        0,
        0,
    ),
    (
        "iso20022/camt052/genkgo-camt052.v2.xml",
        "completed",
        1,
        0,
        1,
        0,
        0,
    ),
    (
        "iso20022/camt052/genkgo-camt052.v4.xml",
        "needs_attention",
        1,
        0,
        0,
        0,
        1,
    ),
    (
        "iso20022/camt052/genkgo-camt052.v8.xml",
        "needs_attention",
        1,
        0,
        0,
        1,
        0,
    ),
    (
        "iso20022/camt053/bsp-camt.053.001.02.xml",
        "completed",
        3,
        3,
        0,
        0,
        0,
    ),
    (
        "iso20022/camt053/bsp-camt053_duplicate_same_day.xml",
        "completed",
        2,
        2,
        0,
        0,
        0,
    ),
    (
        "iso20022/camt053/bsp-camt053_multicurrency.xml",
        "completed",
        3,
        3,
        0,
        0,
        0,
    ),
    (
        "iso20022/camt053/bsp-camt053_no_namespace.xml",
        "completed",
        1,
        1,
        0,
        0,
        0,
    ),
    (
        "iso20022/camt053/genkgo-camt053.v2.five.decimals.xml",
        "needs_attention",
        1,
        1,
        0,
        0,
        0,
    ),
    (
        "iso20022/camt053/genkgo-camt053.v2.minimal.xml",
        "completed",
        1,
        1,
        0,
        0,
        0,
    ),
    (
        "iso20022/camt053/genkgo-camt053.v2.multi.statement.xml",
        "needs_attention",
        2,
        1,
        0,
        0,
        1,
    ),
    (
        "iso20022/camt053/genkgo-camt053.v3.xml",
        "needs_attention",
        1,
        0,
        0,
        0,
        1,
    ),
    (
        "iso20022/camt053/genkgo-camt053.v4.xml",
        "completed",
        1,
        1,
        0,
        0,
        0,
    ),
    (
        "iso20022/camt053/genkgo-camt053.v8.xml",
        "needs_attention",
        1,
        0,
        0,
        1,
        0,
    ),
    (
        "iso20022/camt053/genkgo-camt53.only-Dt-with-DtTm.xml",
        "completed",
        0,
        0,
        0,
        0,
        0,
    ),
    (
        "iso20022/camt053/prowide-camt.053.001.07-with-AppHdr.xml",
        "completed",
        0,
        0,
        0,
        0,
        0,
    ),
    (
        "iso20022/camt054/ch-camt054-returns.xml",
        "completed",
        1,
        1,
        0,
        0,
        0,
    ),
    (
        "iso20022/camt054/fi-camt_054_sample.xml",
        "completed",
        6,
        6,
        0,
        0,
        0,
    ),
    (
        "iso20022/camt054/genkgo-camt054.v2.with-account-name.xml",
        "completed",
        1,
        1,
        0,
        0,
        0,
    ),
    (
        "iso20022/camt054/genkgo-camt054.v2.xml",
        "completed",
        1,
        1,
        0,
        0,
        0,
    ),
    (
        "iso20022/camt054/genkgo-camt054.v4.xml",
        "needs_attention",
        1,
        0,
        0,
        0,
        1,
    ),
    (
        "iso20022/camt054/genkgo-camt054.v8-with-UETR.xml",
        "needs_attention",
        1,
        0,
        0,
        0,
        1,
    ),
];

fn every_corpus_statement_file_has_its_outcome(db: TestDb) {
    let corpus = common::corpus();
    let n = |v: &serde_json::Value, k: &str| v[k].as_u64().unwrap_or(0);
    let mut entries_seen = String::new();
    for (file, status, entries, recorded, duplicates, conflicts, held) in OUTCOMES {
        let path = corpus.join(file);
        let r = db.cl(&["ingest", "-q", "--json", path.to_str().unwrap()]);
        let v: serde_json::Value = serde_json::from_str(r.stdout.trim())
            .unwrap_or_else(|e| panic!("{file}: {e}: {} {}", r.stdout, r.stderr));
        let got = (
            v["status"].as_str().unwrap_or("").to_string(),
            n(
                &v,
                if *status == "rejected" {
                    "records"
                } else {
                    "entries"
                },
            ),
            n(&v, "recorded") + n(&v, "provisional") + n(&v, "confirmed"),
            n(&v, "duplicates"),
            n(&v, "conflicts"),
            n(&v, "held"),
        );
        let want = (
            status.to_string(),
            *entries,
            *recorded,
            *duplicates,
            *conflicts,
            *held,
        );
        assert_eq!(got, want, "{file}: {v}");
        let code = match *status {
            "completed" => 0,
            "needs_attention" => 1,
            _ => 3,
        };
        assert_eq!(r.code, code, "{file}: {}", r.stderr);
        recorded_entries(&db, file, &v, &mut entries_seen);
        if *status == "completed" && *entries > 0 && *recorded == *entries {
            let again = db.cl(&["ingest", "-q", "--json", path.to_str().unwrap()]);
            let v: serde_json::Value = serde_json::from_str(again.stdout.trim()).unwrap();
            assert_eq!(
                (n(&v, "recorded"), n(&v, "duplicates"), n(&v, "conflicts")),
                (0, *entries, 0),
                "{file} sent again: {v}"
            );
        }
    }
    assert_eq!(OUTCOMES.len(), 49, "statement files in the corpus");
    reconcile_every_account(&db);
    assert_eq!(
        db.scalar("SELECT count(*) FROM statement_entries") as u64,
        OUTCOMES.iter().map(|o| o.3).sum::<u64>()
    );
    entries_match(&entries_seen);
}

/// Every account of the corpus statements through `reconcile`, against a
/// mapped ledger account with no postings: no error, every booked entry `missing_ours`,
/// every provisional one `provisional`, each read once.
fn reconcile_every_account(db: &TestDb) {
    let accounts = db.rows("SELECT DISTINCT account FROM statement_entries ORDER BY account");
    assert!(accounts.len() >= 10, "{accounts:?}");
    let mut read = 0;
    for a in &accounts {
        let account = &a[0];
        if common::TestDb::account_name_ok(account) {
            let m = db.cl(&[
                "account",
                "map",
                "--bank-account",
                account,
                "--ledger-account",
                "acct:nothing-posted",
            ]);
            assert_eq!(m.code, 0, "{account}: {}", m.stderr);
        } else {
            continue;
        }
        let r = db.cl(&["reconcile", "--bank-account", account, "--json"]);
        let v: serde_json::Value = serde_json::from_str(r.stdout.trim())
            .unwrap_or_else(|e| panic!("{account}: {e}: {} {}", r.stdout, r.stderr));
        let entries = v["entries_read"].as_u64().unwrap();
        let missing = v["outcomes"]["missing_ours"]["items"].as_u64().unwrap();
        let provisional = v["outcomes"]["provisional"]["items"].as_u64().unwrap();
        assert_eq!(
            (v["items"].as_u64().unwrap(), missing + provisional),
            (entries, entries),
            "{account}: {v}"
        );
        assert_eq!(v["postings_read"], 0, "{account}");
        assert_eq!(
            r.code,
            if missing > 0 { 1 } else { 0 },
            "{account}: {}",
            r.stderr
        );
        read += entries;
    }
    let mappable: i64 = accounts
        .iter()
        .filter(|a| common::TestDb::account_name_ok(&a[0]))
        .map(|a| {
            db.scalar(&format!(
                "SELECT count(*) FROM statement_entries WHERE account = '{}' AND status IN ('booked', 'provisional')",
                a[0].replace('\'', "''")
            ))
        })
        .sum();
    assert_eq!(read as i64, mappable);
    assert!(read > 100, "{read}");
}

/// The entries a file's run recorded, one line each, in the order recorded: what the
/// ledger holds of it, the same on both backends.
fn recorded_entries(db: &TestDb, file: &str, v: &serde_json::Value, out: &mut String) {
    let Some(run) = v["run_id"].as_i64().filter(|_| v["status"] != "rejected") else {
        return;
    };
    let rows = db.rows(&format!(
        "SELECT e.entry_no, e.amount_minor, e.credit, e.currency, e.booking_date, e.value_date, \
         e.bank_ref, e.customer_ref, e.end_to_end_id, s.account FROM statement_entries e \
         JOIN statements s ON s.tenant = e.tenant AND s.statement_id = e.statement_id WHERE e.run_id = {run} \
         ORDER BY e.entry_id"
    ));
    for r in rows {
        out.push_str(&format!("{file}\t{}\n", r.join("\t")));
    }
}

/// `recorded_entries` of every file against `statement_corpus_entries.tsv` beside this file
/// (`CLEARLEDGER_BLESS=1` writes it anew, to be read and committed).
fn entries_match(seen: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/statement_corpus_entries.tsv");
    let header = "# file\tentry_no\tamount_minor\tcredit\tcurrency\tbooking_date\tvalue_date\tbank_ref\tcustomer_ref\tend_to_end_id\taccount\n";
    let seen = format!("{header}{seen}");
    if std::env::var("CLEARLEDGER_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, &seen).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    let diff: Vec<(usize, &str, &str)> = want
        .lines()
        .zip(seen.lines())
        .enumerate()
        .filter(|(_, (w, s))| w != s)
        .map(|(i, (w, s))| (i + 1, w, s))
        .take(5)
        .collect();
    assert!(
        want == seen,
        "recorded entries differ from {} ({} lines pinned, {} seen); first differences \
         (line, pinned, seen): {diff:#?}",
        path.display(),
        want.lines().count(),
        seen.lines().count()
    );
}
