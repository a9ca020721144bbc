//! Known tenants: `tenant add`, `tenant list`, and every command refusing a
//! tenant nobody added, before it reads a file or the ledger's rows.

use crate::common;

use common::{Inbox, PAYROLL, TestDb, sample};
use std::io::Write;
use std::process::{Command, Stdio};

on_both_backends!(
    a_mistyped_tenant_is_refused_in_every_ingest_mode_before_any_file_is_read,
    reads_of_an_unknown_tenant_are_refused_too,
    tenant_add_is_idempotent_and_validates_the_name,
    an_added_tenant_ingests_and_lists
);

const REFUSED: &str = "clearledger: unknown tenant \"defualt\"; known tenants: default, acme; \
                       add one with `clearledger tenant add NAME`\n";

fn nothing_written(db: &TestDb) {
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 0);
    assert_eq!(db.scalar("SELECT count(*) FROM postings"), 0);
}

fn a_mistyped_tenant_is_refused_in_every_ingest_mode_before_any_file_is_read(db: TestDb) {
    assert_eq!(db.cl(&["tenant", "add", "acme"]).code, 0);
    let t = ["--tenant", "defualt"];
    // Files (with a report: not even created), a dry run.
    let report = db.file("r.csv");
    for extra in [&[][..], &["--dry-run"][..], &["--json"][..]] {
        let mut args = vec![t[0], t[1], "ingest"];
        args.extend_from_slice(extra);
        let p = sample(PAYROLL);
        args.extend(["--report", report.to_str().unwrap(), p.as_str()]);
        let r = db.cl(&args);
        assert_eq!(
            (r.code, r.stderr.as_str(), r.stdout.as_str()),
            (2, REFUSED, ""),
            "{extra:?}"
        );
        assert!(!report.exists(), "{extra:?}: no report written");
    }
    // Standard input: refused before it is read (the bytes stay in the pipe).
    let mut child = Command::new(common::bin())
        .args(["--db", &db.url, "--tenant", "defualt", "ingest", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The process may exit before it reads anything: a closed pipe is what is expected.
    let _ = child.stdin.take().unwrap().write_all(&common::payroll());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr), REFUSED);
    // The inbox: its file stays where it is, no archive or quarantine is made.
    let ib = Inbox::under(db.dir.path());
    let waiting = ib.inbox.join("a.ach");
    std::fs::copy(sample(PAYROLL), &waiting).unwrap();
    let mut args = t.to_vec();
    args.extend(ib.pass(&["--min-age", "0"]));
    let r = db.cl(&args);
    assert_eq!((r.code, r.stderr.as_str()), (2, REFUSED));
    assert!(waiting.exists() && !ib.archive.exists() && !ib.quarantine.exists());
    nothing_written(&db);
}

fn reads_of_an_unknown_tenant_are_refused_too(db: TestDb) {
    assert_eq!(db.cl(&["tenant", "add", "acme"]).code, 0);
    assert_eq!(db.cl(&["ingest", "-q", &sample(PAYROLL)]).code, 0);
    // A typo would otherwise show an empty ledger (or "not found"), which misleads.
    for args in [
        &["runs"][..],
        &["runs", "--json"],
        &["report", "1"],
        &["lookup", "--trace", "121042880000001"],
    ] {
        let mut all = vec!["--tenant", "defualt"];
        all.extend_from_slice(args);
        let r = db.cl(&all);
        assert_eq!(
            (r.code, r.stderr.as_str(), r.stdout.as_str()),
            (2, REFUSED, ""),
            "{args:?}"
        );
    }
    // The right name reads what it holds.
    let r = db.cl(&["--tenant", "default", "report", "1"]);
    assert_eq!((r.code, r.stdout.lines().count()), (0, 5), "{}", r.stderr);
}

fn tenant_add_is_idempotent_and_validates_the_name(db: TestDb) {
    let r = db.cl(&["tenant", "add", "acme"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "tenant \"acme\" added\n"));
    let created = db.rows("SELECT created_at FROM tenants WHERE name = 'acme'")[0][0].clone();
    let r = db.cl(&["tenant", "add", "acme"]);
    assert_eq!(
        (r.code, r.stdout),
        (
            0,
            format!("tenant \"acme\" already exists (created {created}); nothing changed\n")
        )
    );
    let r = db.cl(&["tenant", "add", "acme", "--json"]);
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"name": "acme", "created_at": created, "status": "exists"})
    );
    let r = db.cl(&["tenant", "add", "eu-west_2.prod", "--json"]);
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!((r.code, &v["status"]), (0, &serde_json::json!("added")));
    // 1 to 64 characters of A-Z a-z 0-9 . _ -; refused as a usage error, nothing added.
    let long = "x".repeat(65);
    for (name, why) in [
        ("", "a tenant name cannot be empty"),
        (
            long.as_str(),
            "a tenant name is at most 64 characters; this one has 65",
        ),
        (
            "acme corp",
            "a tenant name is made of A-Z a-z 0-9 . _ - only; found ' ' at character 5",
        ),
        (
            "acme/eu",
            "a tenant name is made of A-Z a-z 0-9 . _ - only; found '/' at character 5",
        ),
    ] {
        let r = db.cl(&["tenant", "add", name]);
        assert_eq!(
            (r.code, r.stderr),
            (
                2,
                format!("clearledger: invalid tenant name {name:?}: {why}\n")
            )
        );
    }
    assert_eq!(db.cl(&["tenant", "add", &"x".repeat(64)]).code, 0);
    assert_eq!(
        db.scalar("SELECT count(*) FROM tenants"),
        4,
        "default, acme, eu-west_2.prod, x…"
    );
}

fn an_added_tenant_ingests_and_lists(db: TestDb) {
    // A new ledger knows `default` alone.
    let r = db.cl(&["tenant", "list", "--json"]);
    let names: Vec<String> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["name"].to_string())
        .collect();
    assert_eq!(names, vec!["\"default\""]);
    assert_eq!(db.cl(&["tenant", "add", "acme"]).code, 0);
    let r = db.cl(&[
        "--tenant",
        "acme",
        "ingest",
        "-q",
        "--json",
        &sample(PAYROLL),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(
        (v["tenant"].as_str(), v["posted"].as_i64()),
        (Some("acme"), Some(4))
    );
    // CLEARLEDGER_TENANT is checked the same way.
    let r = db.cl_env(&["runs"], &[("CLEARLEDGER_TENANT", "acme")]);
    assert_eq!((r.code, r.stdout.lines().count()), (0, 2), "{}", r.stderr);
    let r = db.cl_env(&["runs"], &[("CLEARLEDGER_TENANT", "acne")]);
    assert_eq!(r.code, 2);
    // The text list: oldest first, each with when it was created.
    let rows = db.rows("SELECT name, created_at FROM tenants ORDER BY created_at");
    let r = db.cl(&["tenant", "list"]);
    assert_eq!(
        r.stdout,
        format!(
            "tenant   created\ndefault  {}\nacme     {}\n",
            rows[0][1], rows[1][1]
        )
    );
}
