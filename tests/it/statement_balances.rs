//! A statement whose balances do not add up is recorded, marked, for an operator — its
//! entries kept and reconciled, the run needing attention — unless `--strict-balances`
//! refuses it as before.

use crate::common::TestDb;

on_both_backends!(
    an_unbalanced_statement_is_recorded_marked_and_needs_attention,
    strict_balances_refuse_the_file_and_record_nothing,
    a_break_in_the_chain_is_recorded_on_the_statement_that_breaks_it,
    reconciliation_reads_the_entries_and_leads_with_the_break,
    a_corrected_statement_names_its_conflicting_entry,
);

const ACCOUNT: &str = "NL91ABNA0417164300";

/// One MT940 statement: opening 1,000.00, one credit of 250.00, closing `closing`.
fn mt940(id: &str, day: &str, opening: &str, closing: &str) -> String {
    format!(
        ":20:{id}\r\n:25:{ACCOUNT}\r\n:28C:1/1\r\n:60F:C{day}EUR{opening}\r\n\
         :61:{day}{}C250,00NTRFREF-{id}//BANK-{id}\r\n:86:invoice {id}\r\n\
         :62F:C{day}EUR{closing}\r\n-\r\n",
        &day[2..]
    )
}

fn write(db: &TestDb, name: &str, text: &str) -> String {
    let p = db.file(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn json(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn an_unbalanced_statement_is_recorded_marked_and_needs_attention(db: TestDb) {
    // 1,000.00 + 250.00 is 1,250.00; the bank says 1,300.00.
    let f = write(&db, "off.sta", &mt940("S1", "261201", "1000,00", "1300,00"));
    let c = db.cl(&["check", "--json", &f]);
    assert_eq!(c.code, 1, "{}", c.stderr);
    let v = &json(&c.stdout)[0];
    assert_eq!(v["unbalanced"], 1, "{v}");
    assert_eq!(v["findings"][0]["code"], "balance_mismatch");
    assert_eq!(v["findings"][0]["severity"], "warning");
    // A dry run says so too, recording nothing.
    let d = db.cl(&["ingest", "--dry-run", "--json", &f]);
    assert_eq!(d.code, 1, "{}", d.stderr);
    assert_eq!(db.scalar("SELECT count(*) FROM statements"), 0);
    let r = db.cl(&["ingest", "--json", &f]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = &json(&r.stdout)[0];
    assert_eq!(
        (v["status"].as_str(), v["statements"]["unbalanced"].as_u64()),
        (Some("needs_attention"), Some(1)),
        "{v}"
    );
    assert_eq!(v["recorded"], 1, "{v}");
    assert_eq!(db.scalar("SELECT count(*) FROM statement_entries"), 1);
    // The run itself says so, whoever reads it later (`runs`, the HTTP service, webhooks).
    let runs = db.cl(&["runs", "--json"]);
    let run = &json(&runs.stdout)[0];
    assert_eq!(
        (run["status"].as_str(), run["unbalanced"].as_i64()),
        (Some("needs_attention"), Some(1)),
        "{run}"
    );
    let s = db.cl(&["statements", "--json"]);
    assert_eq!(s.code, 1, "{}", s.stderr);
    let st = &json(&s.stdout)[0];
    assert_eq!(st["balance_break"], "closing", "{st}");
    assert_eq!(
        (
            st["balance_expected_minor"].as_i64(),
            st["balance_found_minor"].as_i64(),
            st["balance_difference_minor"].as_i64()
        ),
        (Some(125_000), Some(130_000), Some(5_000))
    );
    let t = db.cl(&["statements"]);
    assert!(
        t.stdout.contains(
            "; UNBALANCED (closing): expected 1250.00 EUR, found 1300.00 EUR, difference 50.00 EUR"
        ),
        "{}",
        t.stdout
    );
    // The same file again: nothing new; the statement stays marked.
    let again = db.cl(&["ingest", "--json", &f]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(json(&again.stdout)[0]["statements"]["duplicate"], 1);
    assert_eq!(
        db.scalar("SELECT count(*) FROM statements WHERE balance_break IS NOT NULL"),
        1
    );
}

fn strict_balances_refuse_the_file_and_record_nothing(db: TestDb) {
    let f = write(&db, "off.sta", &mt940("S1", "261201", "1000,00", "1300,00"));
    let c = db.cl(&["check", "--strict-balances", "--json", &f]);
    assert_eq!(c.code, 3, "{}", c.stderr);
    assert_eq!(json(&c.stdout)[0]["findings"][0]["severity"], "error");
    let r = db.cl(&["ingest", "--strict-balances", "--json", &f]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert_eq!(json(&r.stdout)[0]["status"], "rejected");
    assert_eq!(db.scalar("SELECT count(*) FROM statements"), 0);
    assert_eq!(db.scalar("SELECT count(*) FROM statement_entries"), 0);
    // A statement that adds up is recorded either way, needing nothing.
    let ok = write(&db, "ok.sta", &mt940("S2", "261202", "1000,00", "1250,00"));
    let r = db.cl(&["ingest", "--strict-balances", "--json", &ok]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(json(&r.stdout)[0]["status"], "completed");
}

fn a_break_in_the_chain_is_recorded_on_the_statement_that_breaks_it(db: TestDb) {
    // The second statement adds up on its own (1,300.00 + 250.00 = 1,550.00) but opens at
    // 1,300.00 where the first closed at 1,250.00.
    let text =
        mt940("S1", "261201", "1000,00", "1250,00") + &mt940("S2", "261202", "1300,00", "1550,00");
    let f = write(&db, "chain.sta", &text);
    let r = db.cl(&["ingest", "--json", &f]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(json(&r.stdout)[0]["statements"]["unbalanced"], 1);
    let s = db.cl(&["statements", "--json"]);
    let rows = json(&s.stdout);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["balance_break"], serde_json::Value::Null);
    assert_eq!(
        (
            rows[1]["stmt_id"].as_str(),
            rows[1]["balance_break"].as_str(),
            rows[1]["balance_expected_minor"].as_i64(),
            rows[1]["balance_found_minor"].as_i64()
        ),
        (Some("S2"), Some("chain"), Some(125_000), Some(130_000))
    );
}

fn reconciliation_reads_the_entries_and_leads_with_the_break(db: TestDb) {
    let f = write(&db, "off.sta", &mt940("S1", "261201", "1000,00", "1300,00"));
    assert_eq!(db.cl(&["ingest", "-q", &f]).code, 1);
    let m = db.cl(&[
        "account",
        "map",
        "--bank-account",
        ACCOUNT,
        "--ledger-account",
        "1000-bank",
    ]);
    assert_eq!(m.code, 0, "{}", m.stderr);
    let args = [
        "reconcile",
        "--bank-account",
        ACCOUNT,
        "--from",
        "2026-12-01",
        "--to",
        "2026-12-31",
        "--dry-run",
    ];
    let r = db.cl(&[&args[..], &["--json"]].concat());
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = &json(&r.stdout)[0];
    assert_eq!(
        (v["status"].as_str(), v["entries_read"].as_u64()),
        (Some("needs_attention"), Some(1)),
        "{v}"
    );
    assert_eq!(v["balance_breaks"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["balance_breaks"][0]["difference_minor"], 5_000);
    let t = db.cl(&args);
    let second = t.stdout.lines().nth(1).unwrap_or_default();
    assert_eq!(
        second,
        "  UNBALANCED statement S1 seq 1/1 of 2026-12-01 (closing): expected 1250.00 EUR, found 1300.00 EUR, difference 50.00 EUR",
        "{}",
        t.stdout
    );
    // Amounts in text by their currency's exponent, never minor units beside a currency:
    // the outcome totals too.
    let missing = t.stdout.lines().find(|l| l.starts_with("  missing_ours"));
    let words: Vec<&str> = missing
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    assert_eq!(
        words,
        [
            "missing_ours",
            "1",
            "items",
            "ours",
            "0.00",
            "EUR",
            "theirs",
            "250.00",
            "EUR",
            "Δ",
            "250.00",
            "EUR"
        ],
        "{}",
        t.stdout
    );
    assert!(
        t.stdout.lines().any(|l| l
            == "  balance EUR: ledger 0.00 EUR, statement 1300.00 EUR (2026-12-01), drift 1300.00 EUR"),
        "{}",
        t.stdout
    );
}

/// The sample statement sent again with one amount (and its closing balance) corrected: the
/// summary line is followed by the entry in conflict and the field that differs, as a
/// payment file's conflicts are.
fn a_corrected_statement_names_its_conflicting_entry(db: TestDb) {
    let sample = crate::common::sample("statement-mt940.sta");
    assert_eq!(db.cl(&["ingest", "-q", &sample]).code, 0);
    let corrected = std::fs::read_to_string(&sample)
        .unwrap()
        .replace("C2400,00NTRFINV", "C2400,10NTRFINV")
        .replace("EUR15100,26", "EUR15100,36");
    let f = write(&db, "corrected.sta", &corrected);
    let out = db.cl(&["ingest", &f]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let said: Vec<&str> = out.stdout.lines().skip(1).collect();
    assert_eq!(
        said,
        ["  entry 1: conflict: amount_minor: 240000 != 240010"],
        "{}",
        out.stdout
    );
}
