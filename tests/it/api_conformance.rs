//! The OpenAPI document against the server it describes: schemathesis (PyPI;
//! `scripts/tools.sh` installs it) generates requests from `/v1/openapi.json` for every
//! route and checks every answer — no 5xx, every status and content type documented, every
//! body as its schema says, authentication enforced — against a real server on loopback,
//! both backends, on a ledger with runs, conflicts, statements and a webhook provider in
//! it (a reconciliation and a posting's status change too). Bounded examples
//! (`tests/schemathesis/schemathesis.toml`): about ten seconds a backend.

use crate::common;
use crate::common::server;

use common::{TestDb, sample};
use server::{Server, api_key};
use std::path::PathBuf;
use std::process::Command;

on_both_backends!(schemathesis_finds_no_failure);

fn tools() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/schemathesis")
}

fn schemathesis() -> PathBuf {
    let bin = std::env::var_os("CLEARLEDGER_SCHEMATHESIS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/tools/venv/bin/schemathesis"),
        PathBuf::from,
    );
    assert!(
        bin.exists(),
        "schemathesis is not at {}: run scripts/tools.sh (scripts/test.sh does), or set \
         CLEARLEDGER_SCHEMATHESIS",
        bin.display()
    );
    bin
}

const SECRET: &str = "whsec_c2VjcmV0LW9mLXRoZS1iYW5rLWZvci10ZXN0cw==";

/// A ledger with something behind every route: runs of each outcome, a statement, a
/// reconciliation, a webhook provider.
fn seed(db: &TestDb) {
    for f in [
        "ppd-payroll-credits.ach",
        "ppd-payroll-credits-amended.ach",
        "statement-mt940.sta",
        "pacs008-credit-transfers.xml",
    ] {
        let r = db.cl(&["ingest", "--quiet", &sample(f)]);
        assert!(r.code <= 1, "{f}: {}", r.stderr);
    }
    let month = db.dir.path().join("month");
    let m = month.to_str().unwrap();
    let g = db.cl(&["generate", "recon", "--payments", "200", "--out-dir", m]);
    assert_eq!(g.code, 0, "{}", g.stderr);
    let files = [
        "ours-pacs008.xml",
        "ours-pain001.xml",
        "ours-pacs004.xml",
        "bank-camt053.xml",
    ];
    let paths: Vec<String> = files.iter().map(|f| format!("{m}/{f}")).collect();
    let mut args = vec!["ingest", "--quiet"];
    args.extend(paths.iter().map(String::as_str));
    assert!(db.cl(&args).code <= 1);
    let account = "DE89370400440532013000";
    let ledger = format!("acct:{account}");
    let mapped = db.cl(&[
        "account",
        "map",
        "--bank-account",
        account,
        "--ledger-account",
        &ledger,
    ]);
    assert_eq!(mapped.code, 0, "{}", mapped.stderr);
    let rules = format!("{m}/rules.toml");
    let r = db.cl(&[
        "reconcile",
        "--bank-account",
        account,
        "--rules",
        &rules,
        "--json",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        db.cl(&["webhook", "add", "bank", "--secret", SECRET]).code,
        0
    );
}

/// One status change of posting 1, so that its events are not an empty list.
fn settle_posting_one(db: &TestDb, s: &Server) {
    let key = db.rows("SELECT posting_key FROM postings WHERE posting_id = 1")[0][0].clone();
    let body =
        serde_json::json!({"type": "payment.settled", "data": {"posting_key": key}}).to_string();
    let ts = chrono::Utc::now().timestamp().to_string();
    let sig = clearledger::serve::webhooks::sign(SECRET, "evt_1", &ts, body.as_bytes());
    let r = server::runtime().block_on(server::send(
        reqwest::Client::new()
            .post(s.url("/v1/webhooks/bank"))
            .header("webhook-id", "evt_1")
            .header("webhook-timestamp", ts)
            .header("webhook-signature", sig)
            .body(body),
    ));
    assert_eq!(r.status, 202, "{}", r.text());
    let t0 = std::time::Instant::now();
    while db.scalar("SELECT count(*) FROM posting_status_changes") == 0 {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(20),
            "not applied"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn schemathesis_finds_no_failure(db: TestDb) {
    let bin = schemathesis();
    seed(&db);
    let key = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    settle_posting_one(&db, &s);
    let mut child = Command::new(bin)
        // Its caches (.schemathesis/, .hypothesis/) in the test's directory, not the checkout.
        .current_dir(db.dir.path())
        .arg("--config-file")
        .arg(tools().join("schemathesis.toml"))
        .args(["run", &s.url("/v1/openapi.json")])
        .args(["--checks", "all", "--workers", "1", "--seed", "20261206"])
        .env("CLEARLEDGER_API_KEY", &key)
        .env("SCHEMATHESIS_HOOKS", "hooks")
        .env("PYTHONPATH", tools())
        .env("NO_COLOR", "1")
        // To files, not pipes: a long report must not block the run while it is waited for.
        .stdout(std::fs::File::create(db.file("st.out")).unwrap())
        .stderr(std::fs::File::create(db.file("st.err")).unwrap())
        .spawn()
        .expect("schemathesis runs");
    // A run that hangs fails the test rather than the suite's time.
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > std::time::Duration::from_secs(300) {
            let _ = child.kill();
            panic!("schemathesis ran for more than 300 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let status = child.wait().unwrap();
    let text = std::fs::read_to_string(db.file("st.out")).unwrap();
    let err = std::fs::read_to_string(db.file("st.err")).unwrap();
    assert_eq!(status.code(), Some(0), "{text}\n{err}");
    // It ran: every operation tested (all but the document itself, which schemathesis
    // reads rather than tests), and none failed.
    assert!(text.contains("Tested: 13"), "{text}");
    assert!(!text.contains(" failed"), "{text}");
}
