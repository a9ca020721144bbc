//! The OpenAPI document against the server it describes: schemathesis (PyPI;
//! `scripts/tools.sh` installs it) generates requests from `/v1/openapi.json` for every
//! route and checks every answer — no 5xx, every status and content type documented, every
//! body as its schema says, authentication enforced — against a real server on loopback,
//! both backends, on a ledger with runs, conflicts, statements and a webhook provider in
//! it. Bounded examples (`tests/schemathesis/schemathesis.toml`): about ten seconds a
//! backend.

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

fn schemathesis_finds_no_failure(db: TestDb) {
    let bin = schemathesis();
    for f in [
        "ppd-payroll-credits.ach",
        "ppd-payroll-credits-amended.ach",
        "statement-mt940.sta",
        "pacs008-credit-transfers.xml",
    ] {
        let r = db.cl(&["ingest", "--quiet", &sample(f)]);
        assert!(r.code <= 1, "{f}: {}", r.stderr);
    }
    let secret = "whsec_c2VjcmV0LW9mLXRoZS1iYW5rLWZvci10ZXN0cw==";
    assert_eq!(
        db.cl(&["webhook", "add", "bank", "--secret", secret]).code,
        0
    );
    let key = api_key(&db, "default");
    let s = Server::start(&db.url, db.dir.path(), &[]);
    let out = Command::new(bin)
        .arg("--config-file")
        .arg(tools().join("schemathesis.toml"))
        .args([
            "run",
            &s.url("/v1/openapi.json"),
            "--checks",
            "all",
            "--workers",
            "1",
        ])
        .args(["--seed", "20261206"])
        .env("CLEARLEDGER_API_KEY", &key)
        .env("SCHEMATHESIS_HOOKS", "hooks")
        .env("PYTHONPATH", tools())
        .env("NO_COLOR", "1")
        .output()
        .expect("schemathesis runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // It ran: every operation tested (all but the document itself, which schemathesis
    // reads rather than tests), and none failed.
    assert!(text.contains("Tested: 13"), "{text}");
    assert!(!text.contains(" failed"), "{text}");
}
